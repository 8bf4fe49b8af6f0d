#!/usr/bin/env bash
# Tessel against llama.cpp on the GGUF files people download: a random-weight TinyLlama-1.1B F16 file
# (make_bench_gguf.py) quantized by llama.cpp's own llama-quantize to Q4_0, Q4_K_M, Q5_K_M, Q6_K, Q8_0 and
# IQ4_XS (its default per-tensor mixes: Q6_K heads, Q6_K / Q5_0 tensors in the K_M mixes), plus
# `tessel quantize` RTN INT4 g128 of the same F16 file. The peer is llama.cpp built from the source
# node-llama-cpp carries (build_llama_cpp.sh, cached in ~/.cache/tessel-llama.cpp) and run through its
# llama-bench: prefill tokens/s of a PROMPT-token prompt, decode tokens/s of DECODE tokens, at 1 and 2
# threads, REPEATS interleaved repetitions (Tessel, llama.cpp, Tessel, ...), medians and the ratio
# Tessel / llama.cpp. Also Tessel's bytes of weights per decode token and the rate that makes against a
# streaming-read bandwidth probed right before each Tessel run.
#
# Two ISA levels (FLAVOURS):
#   native  this CPU's full ISA on both sides (llama.cpp -DGGML_NATIVE=ON)
#   avx2    Tessel under TESSEL_MAX_ISA=avx2 against llama.cpp built for AVX2 + FMA + F16C without
#           AVX-512 or AVX-VNNI: what an AVX2-only CPU (Zen 2/3) runs. On an AVX-512 host these rows are
#           the AVX2 level on an AVX-512 host, not an AVX2 CPU: same caches and memory, fewer instructions.
#
#   benchmarks/llm/run.sh [MODEL.gguf ...]
#
# With no arguments, the seven files above (made on first use in BENCH_DIR). The Tessel INT4 file has no
# llama.cpp side (llama.cpp does not read Tessel's group types); its row shows llama.cpp on the Q4_0 file
# for scale. Environment: TESSEL (another tessel binary, e.g. one built before a change), REPEATS (3),
# PROMPT (128), DECODE (64), THREADS ("1 2"), FLAVOURS ("native avx2"), TYPES (the llama-quantize
# types), NODE_PEER=1 adds node-llama-cpp's prebuilt binaries as a second llama.cpp column (native rows
# only), OUT_DIR=DIR keeps each Tessel run's stderr there (with
# `tessel generate --verbose`'s kernels and decode share per weight type), RAW=FILE keeps the raw lines
# (summarize_run.py reads them again).
set -euo pipefail
cd "$(dirname "$0")/../.."

REPEATS=${REPEATS:-3}
PROMPT=${PROMPT:-128}
DECODE=${DECODE:-64}
THREADS=${THREADS:-"1 2"}
FLAVOURS=${FLAVOURS:-"native avx2"}
TYPES=${TYPES:-"Q4_0 Q4_K_M Q5_K_M Q6_K Q8_0 IQ4_XS"}
NODE_PEER=${NODE_PEER:-0}
BENCH_DIR=${BENCH_DIR:-$HOME/.cache/tessel/bench}
# Context (and llama.cpp batch) size on both sides: the prompt, the decode tokens and a margin, at
# least 512.
CTX=$(( PROMPT + DECODE + 16 > 512 ? PROMPT + DECODE + 16 : 512 ))
log() { echo "[run.sh] $*" >&2; }

log "building tessel and the read-bandwidth probe"
bazel build --jobs=2 //cli:tessel //benchmarks/llm:read_bandwidth >&2
BIN=bazel-out/k8-opt/bin
TESSEL=${TESSEL:-$BIN/cli/tessel}  # TESSEL=PATH compares another build (e.g. before a change)
declare -A LLAMA_BIN
for flavour in $FLAVOURS; do
  log "llama.cpp ($flavour): building or reusing the cached build"
  LLAMA_BIN[$flavour]=$(benchmarks/llm/build_llama_cpp.sh "$flavour" | tail -1)
done
QUANTIZE=${LLAMA_BIN[native]:-${LLAMA_BIN[avx2]}}/llama-quantize

declare -A PEER_MODEL  # the file llama.cpp runs for a model (itself, except for Tessel's own types)
if [[ $# -gt 0 ]]; then
  MODELS=("$@")
  for m in "${MODELS[@]}"; do PEER_MODEL[$m]=$m; done
else
  mkdir -p "$BENCH_DIR"
  F16=$BENCH_DIR/tinyllama-1.1b-random-f16.gguf
  /usr/bin/python3 benchmarks/llm/make_bench_gguf.py --out "$BENCH_DIR" --types f16 >&2
  MODELS=()
  for type in $TYPES; do
    out=$BENCH_DIR/tinyllama-1.1b-random-lq-$(echo "$type" | tr 'A-Z' 'a-z').gguf
    if [[ ! -s $out ]]; then
      log "llama-quantize $type -> $out"
      "$QUANTIZE" "$F16" "$out.tmp" "$type" 2 > "$out.log" 2>&1 || { tail -5 "$out.log" >&2; exit 1; }
      mv "$out.tmp" "$out"
    fi
    MODELS+=("$out")
    PEER_MODEL[$out]=$out
  done
  out=$BENCH_DIR/tinyllama-1.1b-random-tessel-i4g128.gguf
  if [[ ! -s $out ]]; then
    log "tessel quantize RTN INT4 g128 -> $out"
    "$TESSEL" quantize --model "$F16" --method rtn --bits 4 --group 128 --threads 2 -o "$out.tmp" >&2
    mv "$out.tmp" "$out"
  fi
  MODELS+=("$out")
  PEER_MODEL[$out]=$BENCH_DIR/tinyllama-1.1b-random-lq-q4_0.gguf
fi

# The prompt Tessel runs: PROMPT - 1 single-letter words (one token each in the benchmark vocabulary)
# after BOS; llama-bench's prompt is PROMPT random tokens.
PROMPT_TEXT=$(/usr/bin/python3 -c "print(' '.join('abcdefghijklmnopqrstuvwxyz'[i % 26] for i in range($PROMPT - 1)))")

RESULTS=$(mktemp)
ERR=$(mktemp)
OUT_DIR=${OUT_DIR:-}
trap 'rm -f "$RESULTS" "$ERR"' EXIT
log "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(date -u +%F)"

total=$(( ${#MODELS[@]} * REPEATS * $(echo $FLAVOURS | wc -w) * $(echo $THREADS | wc -w) ))
done_runs=0
for rep in $(seq "$REPEATS"); do
  for model in "${MODELS[@]}"; do
    peer=${PEER_MODEL[$model]}
    for flavour in $FLAVOURS; do
      cap=""
      [[ $flavour == avx2 ]] && cap=avx2
      for t in $THREADS; do
        done_runs=$((done_runs + 1))
        log "[$done_runs/$total] $(basename "$model") $flavour $t thread(s), repetition $rep"
        # The read-bandwidth probe right before each Tessel run: this host's bandwidth moves with its
        # other tenants, so the fraction compares the decode with probes taken under the same load.
        echo "probe - $flavour $t $("$BIN/benchmarks/llm/read_bandwidth" "$t")" >> "$RESULTS"
        # -n DECODE+1: the first token comes from the prompt's logits, then DECODE decode steps.
        summary=$(TESSEL_MAX_ISA=$cap "$TESSEL" generate --model "$model" --prompt "$PROMPT_TEXT" -n $((DECODE + 1)) \
                  --temp 0 --threads "$t" --ctx "$CTX" --verbose 2>"$ERR" | tail -1 || true)
        echo "tessel $model $flavour $t $summary $(grep 'decode reads' "$ERR" || tail -1 "$ERR")" >> "$RESULTS"
        if [[ -n $OUT_DIR ]]; then
          mkdir -p "$OUT_DIR"
          cp "$ERR" "$OUT_DIR/$(basename "$model" .gguf)-$flavour-t$t-r$rep.txt"
        fi
        lc=$("${LLAMA_BIN[$flavour]}/llama-bench" -m "$peer" -p "$PROMPT" -n "$DECODE" -t "$t" -r 1 -o jsonl \
             2>/dev/null | tr '\n' ' ' || true)
        echo "llama.cpp $model $flavour $t $lc" >> "$RESULTS"
        if [[ $NODE_PEER == 1 && $flavour == native ]]; then
          node=$(node benchmarks/llm/llama_cpp_bench.mjs "$peer" "$t" "$PROMPT" "$DECODE" "$CTX" 2>/dev/null | tail -1 || true)
          echo "node $model $flavour $t $node" >> "$RESULTS"
        fi
      done
    done
  done
done
if [[ -n ${RAW:-} ]]; then cp "$RESULTS" "$RAW"; fi
/usr/bin/python3 benchmarks/llm/summarize_run.py "$RESULTS" "$DECODE" "$NODE_PEER"
