#!/usr/bin/env bash
# Tessel against llama.cpp (node-llama-cpp's prebuilt CPU binaries) on the same GGUF files, in one run:
# prefill tokens/s (a PROMPT-token prompt) and decode tokens/s (DECODE greedy tokens) at 1 and 2
# threads, REPEATS interleaved repetitions (Tessel, llama.cpp, Tessel, ...), medians and the ratio
# Tessel / llama.cpp; also Tessel's bytes of weights read per decode token and the rate that makes,
# against a streaming-read bandwidth probed right before each Tessel run (median of the probes).
#
#   benchmarks/llm/run.sh [MODEL.gguf ...]
#
# With no arguments: the random-weight TinyLlama-1.1B files (Q4_0, Q8_0, Q4_K_M, IQ4_XS) that make_bench_gguf.py
# writes to ~/.cache/tessel/bench (generated on first use), then the trained tiny test model
# (//llm/testdata:tiny_llama, Q4_0 and Q8_0). Environment: REPEATS (5), PROMPT (128), DECODE (64),
# THREADS ("1 2").
set -euo pipefail
cd "$(dirname "$0")/../.."

REPEATS=${REPEATS:-5}
PROMPT=${PROMPT:-128}
DECODE=${DECODE:-64}
THREADS=${THREADS:-"1 2"}
BENCH_DIR=${BENCH_DIR:-$HOME/.cache/tessel/bench}
# Context (and llama.cpp batch) size on both sides: the prompt, the decode tokens and a margin, at
# least 512.
CTX=$(( PROMPT + DECODE + 16 > 512 ? PROMPT + DECODE + 16 : 512 ))

bazel build //cli:tessel //benchmarks/llm:read_bandwidth //llm/testdata:tiny_llama >&2
BIN=bazel-out/k8-opt/bin
TESSEL=$BIN/cli/tessel

if [[ $# -gt 0 ]]; then
  MODELS=("$@")
else
  /usr/bin/python3 benchmarks/llm/make_bench_gguf.py --out "$BENCH_DIR" --types q4_0,q8_0,q4_k_m,iq4_xs >&2
  MODELS=("$BENCH_DIR/tinyllama-1.1b-random-q4_0.gguf" "$BENCH_DIR/tinyllama-1.1b-random-q8_0.gguf"
          "$BENCH_DIR/tinyllama-1.1b-random-q4_k_m.gguf" "$BENCH_DIR/tinyllama-1.1b-random-iq4_xs.gguf"
          "$BIN/llm/testdata/tiny_llama/model-q4_0.gguf" "$BIN/llm/testdata/tiny_llama/model-q8_0.gguf")
fi

# The prompt both sides run: PROMPT - 1 single-letter words (one token each in the benchmark
# vocabulary) after BOS.
PROMPT_TEXT=$(/usr/bin/python3 -c "print(' '.join('abcdefghijklmnopqrstuvwxyz'[i % 26] for i in range($PROMPT - 1)))")

RESULTS=$(mktemp)
ERR=$(mktemp)
trap 'rm -f "$RESULTS" "$ERR"' EXIT

for model in "${MODELS[@]}"; do
  for rep in $(seq "$REPEATS"); do
    for t in $THREADS; do
      # The read-bandwidth probe right before each Tessel run: this host's bandwidth moves with its
      # other tenants, so the fraction compares the decode with probes taken under the same load.
      echo "probe - $t $("$BIN/benchmarks/llm/read_bandwidth" "$t")" >> "$RESULTS"
      # -n DECODE+1: the first token comes from the prompt's logits, then DECODE decode steps.
      summary=$("$TESSEL" generate --model "$model" --prompt "$PROMPT_TEXT" -n $((DECODE + 1)) --temp 0 \
                --threads "$t" --ctx "$CTX" 2>"$ERR" | tail -1 || true)
      echo "tessel $model $t $summary $(grep 'decode reads' "$ERR" || tail -1 "$ERR")" >> "$RESULTS"
      lc=$(node benchmarks/llm/llama_cpp_bench.mjs "$model" "$t" "$PROMPT" "$DECODE" "$CTX" 2>/dev/null | tail -1 || true)
      echo "llama.cpp $model $t $lc" >> "$RESULTS"
    done
  done
done
/usr/bin/python3 - "$RESULTS" "$DECODE" <<'EOF'
import json, os, re, statistics, sys
from collections import defaultdict

probes = defaultdict(list)  # threads -> GB/s of every probe taken before a Tessel run
runs = defaultdict(lambda: defaultdict(list))
mb_per_token = {}
last_probe = {}  # threads -> the probe taken right before the current Tessel run
for line in open(sys.argv[1]):
    parts = line.split(" ", 3)
    if len(parts) < 4:
        continue
    who, model, threads, rest = parts
    if who == "probe":
        m = re.search(r"read_GBs=([\d.]+)", rest)
        if m:
            probes[threads].append(float(m.group(1)))
            last_probe[threads] = float(m.group(1))
        continue
    key = (os.path.basename(model) + " (" + os.path.basename(os.path.dirname(model)) + ")", int(threads))
    if who == "tessel":
        m = re.search(r"prefill: (\d+) tokens, [\d.]+ s, ([\d.]+) tokens/s \| decode: (\d+) tokens, [\d.]+ s, ([\d.]+)", rest)
        w = re.search(r"decode reads ([\d.]+) MB of weights per token", rest)
        if not m:
            print("tessel failed on %s: %s" % (model, rest.strip()[-300:]), file=sys.stderr)
            continue
        if int(m.group(3)) < int(sys.argv[2]):  # stopped early (end of text, context full): not a full run
            print("tessel decoded %s of %s tokens on %s: run left out" % (m.group(3), sys.argv[2], model),
                  file=sys.stderr)
            continue
        runs[key]["tessel_prefill"].append(float(m.group(2)))
        runs[key]["tessel_decode"].append(float(m.group(4)))
        runs[key]["tessel_prompt_tokens"].append(int(m.group(1)))
        if w:
            mb_per_token[key[0]] = float(w.group(1))
            if threads in last_probe:  # this run's rate against its own probe
                runs[key]["fraction"].append(float(w.group(1)) * float(m.group(4)) / 1e3 / last_probe[threads])
    else:
        try:
            r = json.loads(rest)
        except ValueError:
            print("llama.cpp failed on %s: %s" % (model, rest.strip()[-300:]), file=sys.stderr)
            continue
        runs[key]["llama_prefill"].append(r["prefill_tok_s"])
        runs[key]["llama_decode"].append(r["decode_tok_s"])
        runs[key]["llama_prompt_tokens"].append(r["prefill_tokens"])

def med(v):
    return statistics.median(v) if v else float("nan")

bw = {t: statistics.median(v) for t, v in probes.items()}
print("read bandwidth (streaming sum, probed before each Tessel run; median [min-max]): " +
      ", ".join("%s thread(s) %.1f GB/s [%.1f-%.1f]" % (t, bw[t], min(v), max(v)) for t, v in sorted(probes.items())))
print()
print("| model | threads | prefill tok/s Tessel | llama.cpp | ratio | decode tok/s Tessel | llama.cpp | ratio "
      "| MB/token | Tessel decode GB/s | % of read BW | per-run % |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for (model, t), r in sorted(runs.items()):
    tp, lp = med(r["tessel_prefill"]), med(r["llama_prefill"])
    td, ld = med(r["tessel_decode"]), med(r["llama_decode"])
    mb = mb_per_token.get(model, float("nan"))
    gbs = mb * td / 1e3
    frac = 100 * gbs / float(bw[str(t)]) if str(t) in bw else float("nan")
    per_run = 100 * med(r["fraction"])
    print("| %s | %d | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.0f%% | %.0f%% |" %
          (model, t, tp, lp, tp / lp if lp else float("nan"), td, ld, td / ld if ld else float("nan"), mb, gbs, frac,
           per_run))
print()
print("% of read BW: the median decode rate over the median probe; per-run %: the median over runs of each "
      "run's rate over the probe taken just before it")
print()
print("medians of %d interleaved runs; prompt tokens (Tessel / llama.cpp): %s" % (
    max(len(r["tessel_decode"]) for r in runs.values()) if runs else 0,
    ", ".join("%s/%s" % (sorted(set(r["tessel_prompt_tokens"])), sorted(set(r["llama_prompt_tokens"])))
              for r in runs.values())))
EOF
