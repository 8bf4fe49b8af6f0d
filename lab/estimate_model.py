#!/usr/bin/python3
"""Estimated time per op of an aarch64 artifact on an Arm core model, without the board: the aarch64
tessel runs one inference under qemu-aarch64 with the block-counting plugin (tb_profile.c), the
executor marks each op (TESSEL_LAB_MARKS=1), and llvm-mca prices each op's blocks on the core.
What `tessel bench --estimate CORE MODEL.tsl` runs.

  estimate_model.py --core cortex-a76 --runner bazel-out/aarch64-opt/bin/cli/tessel MODEL.tsl

The last line is JSON: {"model", "core", "estimate": true, "total_ms", "compute_ms", "memory_ms",
"roofline_ms", "ops": [{"index", "name", "kernel", "cycles", "ms", "top"}]}.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import estimate  # noqa: E402

ARM_CORES = [c for c, v in estimate.CORES.items() if v["triple"] == "aarch64"]


def tensor_bytes(spec):
    m = re.match(r"(\w+)\[([\d,]*)\]", spec)
    if not m:
        return 0
    n = {"f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i8": 1, "u8": 1, "i64": 8}.get(m.group(1), 4)
    for d in filter(None, m.group(2).split(",")):
        n *= int(d)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="an aarch64 artifact (.tsl) compiled by an aarch64 tessel")
    ap.add_argument("--core", required=True, choices=ARM_CORES)
    ap.add_argument("--runner", required=True, help="the aarch64 build of tessel")
    ap.add_argument("--plugin", default=os.path.join(HERE, "libtb_profile.so"))
    ap.add_argument("--ghz", type=float)
    ap.add_argument("--dram-gbps", type=float)
    args = ap.parse_args()
    core = estimate.CORES[args.core]
    for what, path in (("runner", args.runner), ("plugin", args.plugin), ("model", args.model)):
        if not os.path.exists(path):
            sys.exit("tessel bench --estimate: no %s at %s" % (what, path))
    env = dict(os.environ, QEMU_LD_PREFIX=os.environ.get("QEMU_LD_PREFIX", "/usr/aarch64-linux-gnu"))
    qemu = ["qemu-aarch64", "-cpu", core["qemu_cpu"]]
    inspect = subprocess.run(qemu + [args.runner, "inspect", args.model, "--no-ir"], env=env, capture_output=True,
                             text=True)
    if inspect.returncode != 0:
        sys.exit("tessel bench --estimate: the aarch64 tessel cannot read %s: %s" % (args.model, inspect.stderr.strip()))
    ops = {}
    for line in inspect.stdout.splitlines():
        m = re.match(r"\s+(\d+) (\S+)\s+(\S+)\s+(\w+\[[\d,]*\])", line)
        if m:
            ops[m.group(1)] = (m.group(2), m.group(3), tensor_bytes(m.group(4)))
    m = re.search(r"weights ([\d.]+) MB", inspect.stdout)
    weights = float(m.group(1)) * 1e6 if m else 0.0
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "profile.tsv")
        p = subprocess.run(qemu + ["-plugin", "%s,out=%s" % (args.plugin, profile), args.runner, "bench", args.model,
                                   "--iterations", "1", "--warmup", "0"], env=dict(env, TESSEL_LAB_MARKS="1"),
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("tessel bench --estimate: the run under qemu failed: %s" % p.stderr.strip()[-2000:])
        r = estimate.estimate([(1.0, profile)], core, phase_filter=lambda label: label in ops)
    # Weights stream from DRAM once per inference (they exceed the modeled caches); so do activations
    # larger than half the last-level cache, written once and read once.
    dram = weights + sum(2 * b for _, _, b in ops.values() if b > core["llc_bytes"] / 2)
    estimate.add_memory_term(r, core, dram, args.ghz, args.dram_gbps)
    ghz = r["ghz"]
    rows = []
    for label, (name, kernel, _) in sorted(ops.items(), key=lambda x: int(x[0])):
        ph = r["phases"].get(label, {"cycles": 0.0, "top": []})
        rows.append({"index": int(label), "name": name, "kernel": kernel, "cycles": ph["cycles"],
                     "ms": ph["cycles"] / (ghz * 1e6), "top": ph["top"][0][0] if ph["top"] else ""})
    total = sum(x["cycles"] for x in rows) or 1.0
    print("ESTIMATE for %s at %.2f GHz (llvm-mca %s model, one thread): not a measurement" % (
        core["label"], ghz, core["mcpu"]))
    print("modeled SoC: %s" % core["source"])
    print("%4s %-44s %-44s %12s %9s %6s  %s" % ("op", "name", "kernel", "est. cycles", "est. ms", "share", "hottest code"))
    for x in rows:
        print("%4d %-44s %-44s %12.4g %9.3f %5.1f%%  %s" % (x["index"], x["name"][-44:], x["kernel"][:44], x["cycles"],
                                                            x["ms"], 100 * x["cycles"] / total, x["top"][:60]))
    print("total: compute %.3f ms; memory %.3f ms (%.1f MB from DRAM at %.1f GB/s); estimate %.3f ms (%s-bound)" % (
        r["compute_ms"], r["memory_ms"], dram / 1e6, r["dram_gbps"], r["roofline_ms"], r["bound"]))
    print("threads: one; the per-op compute divides across threads where an op splits its work, the memory "
          "term does not (the DRAM bandwidth is shared)")
    print(json.dumps({"model": args.model, "core": args.core, "estimate": True, "ghz": ghz,
                      "compute_ms": r["compute_ms"], "memory_ms": r["memory_ms"], "roofline_ms": r["roofline_ms"],
                      "ops": rows}))


if __name__ == "__main__":
    main()
