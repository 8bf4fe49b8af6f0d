#!/usr/bin/python3
"""Writes kernels/registry/lab_costs_aarch64.inc, the aarch64 kernel cost table, from the Arm lab.

The aarch64 build of lab/kernel_cases runs every GEMM, GEMV, vector, f32 convolution, fused depthwise +
pointwise, u8 QConv / QGemm and QuantizeLinear / DequantizeLinear kernel this CPU has on fixed cases
under qemu-aarch64 (per core model's ISA) with the block-counting plugin; llvm-mca prices each case on
the core. Within each group of interchangeable kernels (the same registry op and dtypes, for
convolutions also the layer class: depthwise, dense, pointwise) the table holds each kernel's estimated
cycles relative to the group's anchor on the same cases (the geometric mean of the per-case ratios):
XNNPACK's convolution for f32 convolutions, Tessel's fused kernel for the fused depthwise + pointwise
op, Tessel's NEON dotprod kernel for int8 QConv / QGemm (the kernels legal wherever their rivals are,
fused residuals and expansions included, and present on every modeled core), the portable kernel for the
int8 boundary ops (convert/*), the reference kernel otherwise. On aarch64 the registries' Select then
costs a listed kernel as anchor cost x ratio (op_kernel.cc, registry.cc), so the choice between kernels
follows the lab instead of guessed rates. Each operator group (conv/*, dwpw, qconv/*, qgemm, convert/*)
also gets a row for kernel "*": the anchor's estimated seconds at the modeled core's clock over its own
cost model, which scales every cost of the group, so that groups compare in the core's seconds (the int8
compiler's choice between an int8 layer and its f32 form).

  bazel build --config=aarch64 --build_tag_filters= //lab:kernel_cases
  bazel build //lab:all
  lab/make_cost_table.py            # rewrites kernels/registry/lab_costs_aarch64.inc

--cases SUBSTRING[,SUBSTRING...] runs only the kernel cases whose names contain one of the substrings
and replaces the table's rows of the groups they cover, keeping every other row (for adding a group
without rerunning the rest).
"""

import argparse
import collections
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lab"))
import estimate  # noqa: E402

CORES = ["cortex-a55", "cortex-a76", "neoverse-v1"]
# The kernel name of a group's seconds-scale row (kLabSecondsScale in kernels/registry/lab_costs.h).
SECONDS_SCALE = "*"
OUT = os.path.join(ROOT, "kernels", "registry", "lab_costs_aarch64.inc")


def profile_cases(qemu_cpu, work, cases_filter=""):
    exe = os.path.join(ROOT, "bazel-out", "aarch64-opt", "bin", "lab", "kernel_cases")
    plugin = os.path.join(ROOT, "bazel-out", "k8-opt", "bin", "lab", "libtb_profile.so")
    tag = qemu_cpu.split(",")[0] + ("_sve" if "sve=on" in qemu_cpu else "")
    if cases_filter:
        tag += "_" + re.sub(r"[^A-Za-z0-9]+", "_", cases_filter)
    out = os.path.join(work, "kernel_cases_%s.tsv" % tag)
    listing = os.path.join(work, "kernel_cases_%s.jsonl" % tag)
    if not (os.path.exists(out) and os.path.getmtime(out) > os.path.getmtime(exe)):
        env = dict(os.environ, QEMU_LD_PREFIX="/usr/aarch64-linux-gnu", TESSEL_LAB_MARKS="1")
        cmd = [exe, "--reps", "1"] + (["--filter", cases_filter] if cases_filter else [])
        p = subprocess.run(["qemu-aarch64", "-cpu", qemu_cpu, "-plugin", plugin + ",out=" + out + ".tmp"] + cmd, env=env,
                           capture_output=True, text=True, check=True)
        with open(listing, "w") as f:
            f.write(p.stdout)
        os.replace(out + ".tmp", out)
    cases = [json.loads(l) for l in open(listing) if l.startswith("{")]
    return out, cases


def group_of(case):
    """(group, anchor kernel) of a case; kernels in one group compete in one Select."""
    k = case["kernel"]
    if case["op"] == "conv":
        return "conv/" + case["layer"], "xnn_f32_conv2d_nhwc__xnnpack"
    if case["op"] == "dwpw":
        return "dwpw", "tessel_f32_dwconv2d_3x3_pwconv2d_nhwc__fused"
    if case["op"] == "qconv" and case["layer"] == "depthwise":
        return "qconv/depthwise", "tessel_qu8_dwconv2d_nhwc__neon"
    if case["op"] == "qconv":
        return "qconv/" + case["layer"], "tessel_qu8_conv2d_nhwc__neondot"
    if case["op"] == "qgemm":
        return "qgemm", "tessel_qu8_fully_connected__neondot"
    if case["op"] in ("quantize", "dequantize"):
        return "convert/" + case["op"], k.rsplit("__", 1)[0] + "__portable"
    if case["op"] == "gemm":
        return "gemm", "tessel_f32_gemm__reference"
    if case["op"] == "gemv":
        fmt = k.split("_gemv")[0].replace("tessel_", "")
        return "gemv/" + fmt, "tessel_%s_gemv__reference" % fmt
    return "vector/" + case["op"], k.rsplit("__", 1)[0] + "__reference"


def ratios_for(core, cases, profile):
    r = estimate.estimate([(1.0, profile)], estimate.CORES[core])
    cycles = {}
    for c in cases:
        ph = r["phases"].get(str(c["index"]))
        if ph:
            cycles[c["case"]] = ph["cycles"] / c["calls"]
    shape_of = lambda c: c["case"].split("/", 1)[1]
    anchor_cycles = {}
    for c in cases:
        group, anchor = group_of(c)
        if c["kernel"] == anchor and c["case"] in cycles:
            anchor_cycles[(group, shape_of(c))] = cycles[c["case"]]
    logs = collections.defaultdict(list)
    for c in cases:
        group, anchor = group_of(c)
        a = anchor_cycles.get((group, shape_of(c)))
        if a and c["case"] in cycles and cycles[c["case"]] > 0:
            logs[(group, anchor, c["kernel"])].append(math.log(cycles[c["case"]] / a))
    ratios = {key: (math.exp(sum(v) / len(v)), len(v)) for key, v in logs.items()}
    # Operator groups: the anchor's lab seconds (cycles at the modeled clock) over its own cost model,
    # so that the registry can put every group in the core's seconds (LabSecondsScale).
    scales = collections.defaultdict(list)
    ghz = estimate.CORES[core]["ghz"]
    for c in cases:
        group, anchor = group_of(c)
        if c["kernel"] == anchor and c.get("model_s", 0) > 0 and c["case"] in cycles and ghz:
            scales[(group, anchor)].append(math.log(cycles[c["case"]] / (ghz * 1e9) / c["model_s"]))
    for (group, anchor), v in scales.items():
        ratios[(group, anchor, SECONDS_SCALE)] = (math.exp(sum(v) / len(v)), len(v))
    return ratios, cycles


ROW = re.compile(r'^\{"([^"]*)", "([^"]*)", "([^"]*)", "([^"]*)", ([0-9.eE+-]+), (\d+)\},$')


def read_rows(path):
    """The rows of an existing table, as written below."""
    rows = []
    if os.path.exists(path):
        for line in open(path):
            m = ROW.match(line.strip())
            if m:
                rows.append((m.group(1), m.group(2), m.group(3), m.group(4), float(m.group(5)), int(m.group(6))))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "lab-costs"))
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--cases", default="", help="run only the cases whose names contain one of these "
                    "comma-separated substrings; replace the rows of their groups, keep the others")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    by_qemu = collections.OrderedDict()
    for core in CORES:
        by_qemu.setdefault(estimate.CORES[core]["qemu_cpu"], []).append(core)
    rows, case_cycles = [], []
    for qemu_cpu, cores in by_qemu.items():
        profile, cases = profile_cases(qemu_cpu, args.work, args.cases)
        for core in cores:
            ratios, cycles = ratios_for(core, cases, profile)
            for (group, anchor, kernel), (ratio, n) in sorted(ratios.items()):
                rows.append((core, group, anchor, kernel, ratio, n))
            case_cycles += [(core, case, c) for case, c in sorted(cycles.items())]
    if args.cases:
        redone = {(r[0], r[1]) for r in rows}
        rows = sorted([r for r in read_rows(args.out) if (r[0], r[1]) not in redone] + rows)
    with open(args.out, "w") as f:
        f.write("// Generated by lab/make_cost_table.py from the Arm lab's estimates; do not edit.\n")
        f.write("// Regenerate (after building //lab:kernel_cases for aarch64 and //lab:all):\n")
        f.write("//   lab/make_cost_table.py\n")
        f.write("// {core model, group, anchor, kernel, estimated cycles relative to the anchor on the same cases\n")
        f.write("//  (geometric mean), cases}. Anchors: XNNPACK's convolution (conv/*), Tessel's fused kernel\n")
        f.write("//  (dwpw), Tessel's NEON dotprod kernel (qconv/*, qgemm), the portable kernel (convert/*),\n")
        f.write("//  the reference kernel (gemm, gemv/*, vector/*). cortex-a76 is llvm-16's Cortex-A57 model.\n")
        f.write("//  Kernel \"*\": the operator group's seconds scale, the anchor's estimated seconds at the\n")
        f.write("//  core's clock over its own cost model.\n")
        for core, group, anchor, kernel, ratio, n in rows:
            f.write('{"%s", "%s", "%s", "%s", %.4f, %d},\n' % (core, group, anchor, kernel, ratio, n))
    print("wrote %s: %d rows" % (os.path.relpath(args.out, ROOT), len(rows)))
    for core, group, anchor, kernel, ratio, n in rows:
        print("  %-12s %-18s %-52s %8.4f  (%d cases)" % (core, group, kernel, ratio, n))
    for core, case, cycles in case_cycles:
        print("  %-12s %-70s %10.4g cycles a call" % (core, case, cycles))


if __name__ == "__main__":
    main()
