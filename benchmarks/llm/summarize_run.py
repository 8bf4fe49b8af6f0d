"""Summarizes benchmarks/llm/run.sh's raw lines into its table (medians of the interleaved runs).

  summarize_run.py RESULTS DECODE_TOKENS NODE_PEER

Lines: "probe - FLAVOUR THREADS read_GBs=...", "tessel MODEL FLAVOUR THREADS <generate summary> <decode
reads line>", "llama.cpp MODEL FLAVOUR THREADS <llama-bench jsonl objects>" and, with NODE_PEER=1, "node MODEL
FLAVOUR THREADS <llama_cpp_bench.mjs json>".
"""

import json
import os
import re
import statistics
import sys
from collections import defaultdict


def med(v):
    return statistics.median(v) if v else float("nan")


def ratio(a, b):
    return a / b if b and b == b and a == a else float("nan")


def main():
    path, decode_tokens, node_peer = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
    probes = defaultdict(list)  # (flavour, threads) -> GB/s of every probe taken before a Tessel run
    last_probe = {}
    runs = defaultdict(lambda: defaultdict(list))
    mb_per_token = {}
    for line in open(path):
        parts = line.rstrip("\n").split(" ", 4)
        if len(parts) < 4:
            continue
        who, model, flavour, threads = parts[:4]
        rest = parts[4] if len(parts) > 4 else ""
        if who == "probe":
            m = re.search(r"read_GBs=([\d.]+)", rest)
            if m:
                probes[(flavour, threads)].append(float(m.group(1)))
                last_probe[(flavour, threads)] = float(m.group(1))
            continue
        key = (os.path.basename(model).replace(".gguf", ""), flavour, int(threads))
        r = runs[key]
        if who == "tessel":
            m = re.search(r"prefill: (\d+) tokens, [\d.]+ s, ([\d.]+) tokens/s \| decode: (\d+) tokens, [\d.]+ s, ([\d.]+)",
                          rest)
            w = re.search(r"decode reads ([\d.]+) MB of weights per token", rest)
            if not m:
                print("tessel failed on %s (%s): %s" % (model, flavour, rest.strip()[-300:]), file=sys.stderr)
                continue
            if int(m.group(3)) < decode_tokens:  # stopped early (end of text, context full)
                print("tessel decoded %s of %d tokens on %s: run left out" % (m.group(3), decode_tokens, model),
                      file=sys.stderr)
                continue
            r["tessel_prefill"].append(float(m.group(2)))
            r["tessel_decode"].append(float(m.group(4)))
            if w:
                mb_per_token[key[0]] = float(w.group(1))
                if (flavour, threads) in last_probe:
                    r["fraction"].append(float(w.group(1)) * float(m.group(4)) / 1e3 / last_probe[(flavour, threads)])
        elif who == "llama.cpp":
            pp = tg = None
            for obj in re.findall(r"\{.*?\}(?=\s*\{|\s*$)", rest.strip()):
                try:
                    t = json.loads(obj)
                except ValueError:
                    continue
                if t.get("n_prompt", 0) > 0 and t.get("n_gen", 0) == 0:
                    pp = t["avg_ts"]
                elif t.get("n_gen", 0) > 0 and t.get("n_prompt", 0) == 0:
                    tg = t["avg_ts"]
            if pp is None or tg is None:
                print("llama.cpp failed on %s (%s): %s" % (model, flavour, rest.strip()[-300:]), file=sys.stderr)
                continue
            r["llama_prefill"].append(pp)
            r["llama_decode"].append(tg)
        elif who == "node":
            try:
                j = json.loads(rest)
            except ValueError:
                print("node-llama-cpp failed on %s: %s" % (model, rest.strip()[-300:]), file=sys.stderr)
                continue
            r["node_prefill"].append(j["prefill_tok_s"])
            r["node_decode"].append(j["decode_tok_s"])

    bw = {k: med(v) for k, v in probes.items()}
    # The avx2 rows run AVX2 code on this machine's cores, caches and memory: on a newer host they stand
    # for the ISA level, not for an AVX2-only CPU.
    with open("/proc/cpuinfo") as f:
        avx512_host = " avx512f " in " " + f.read().replace("\n", " ") + " "
    avx2_label = "AVX2 level on an AVX-512 host" if avx512_host else "AVX2"
    print("read bandwidth (streaming sum, probed before each Tessel run; median [min-max]): " +
          ", ".join("%s %s thread(s) %.1f GB/s [%.1f-%.1f]" % (f, t, bw[(f, t)], min(v), max(v))
                    for (f, t), v in sorted(probes.items())))
    print()
    node_cols = " | node prefill | node decode" if node_peer else ""
    print("| model | ISA | threads | prefill tok/s Tessel | llama.cpp | ratio | decode tok/s Tessel | llama.cpp | ratio "
          "| MB/token | Tessel decode GB/s | %% of read BW | per-run %%%s |" % node_cols)
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if node_peer else ""))
    for (model, flavour, t), r in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        tp, lp = med(r["tessel_prefill"]), med(r["llama_prefill"])
        td, ld = med(r["tessel_decode"]), med(r["llama_decode"])
        mb = mb_per_token.get(model, float("nan"))
        gbs = mb * td / 1e3
        probe = bw.get((flavour, str(t)), float("nan"))
        label = avx2_label if flavour == "avx2" else "native"
        node = ""
        if node_peer:
            node = " | %.1f | %.2f" % (med(r["node_prefill"]), med(r["node_decode"]))
        print("| %s | %s | %d | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.0f%% | %.0f%%%s |" %
              (model, label, t, tp, lp, ratio(tp, lp), td, ld, ratio(td, ld), mb, gbs, 100 * gbs / probe,
               100 * med(r["fraction"]), node))
    print()
    print("medians of %d interleaved runs; %% of read BW: the median decode rate over the median probe; per-run %%: "
          "the median of each run's rate over the probe taken just before it. llama.cpp: llama-bench pp / tg "
          "(tg from an empty context; Tessel decodes after the prompt). The tessel-i4g128 row's llama.cpp "
          "columns are llama.cpp on the llama-quantize Q4_0 file." %
          (max((len(r["tessel_decode"]) for r in runs.values()), default=0)))


if __name__ == "__main__":
    main()
