#!/usr/bin/python3
"""Tessel against its peers on Arm core models, by the lab's estimate (lab): each side's aarch64
build runs under qemu-aarch64 with the block-counting plugin, and llvm-mca prices the counted blocks on
the core model. Called by benchmarks/arm/run.sh, which builds what it needs first.

Workloads (batch 1, one thread):
  - ResNet-18 and MobileNetV2 (//tools/frontend:models), fp32 and INT8, per image: Tessel's artifact
    against the same graph on XNNPACK alone (Debian's arm64 build): compiled with
    TESSEL_FORCE_BACKEND=xnnpack,portable and O3 less fuse-expansion (PEER_PIPELINE). Only the ops are
    counted (the executor's per-op marks), not loading or packing.
  - TinyLlama-1.1B-shaped Q4_0 and Q8_0 (make_bench_gguf.py's random weights): one decode step and
    the prefill of a 64-token prompt (per token), Tessel's tessel against llama.cpp built for the
    core (benchmarks/arm/build_llama_cpp.sh). Runs of 1 and 2 layers are differenced: a decode step is
    run(2 tokens) - run(1 token), a 64-token prefill is run(65-token prompt) - run(1-token prompt), and
    22 layers are L1 + 21 x (L2 - L1), block by block, so loading and the repack at load cancel.
    `--llm-types i4g128` adds Tessel's group-wise INT4 (`tessel quantize --method rtn --bits 4 --group 128`
    of make_bench_gguf.py's F16 file, Q4_0 head), whose peer is Tessel's own Q4_0 file.

Core models: cortex-a55 and cortex-a76 run under qemu's cortex-a76 CPU (same ISA: NEON, dotprod, no SVE),
neoverse-v1 under qemu's max CPU with 256-bit SVE. Tessel is one build (kernels chosen at run time from
HWCAP); llama.cpp's CPU backend is built per core with -mcpu=CORE.

Prints a table per workload and core (with each side's hottest symbols and, for the CNNs, its cycles by
operator kernel, which points at the layers where Tessel loses), then one JSON line: {"rows": [{workload,
core, tessel_cycles, peer, peer_cycles, ratio, ...}]}.
"""

import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "lab"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "llm"))
import estimate  # noqa: E402
import make_bench_gguf as gguf  # noqa: E402

A64 = os.path.join(ROOT, "bazel-out", "aarch64-opt", "bin")
HOST = os.path.join(ROOT, "bazel-out", "k8-opt", "bin")  # bazel-bin follows the last configuration built
SYSROOT_LIBC = "/usr/aarch64-linux-gnu"
ALL_CORES = ["cortex-a55", "cortex-a76", "neoverse-v1"]
PREFILL = 64
# XNNPACK alone: every compute op on XNNPACK's operators, the layout transposes and copies on Tessel's
# portable kernels (XNNPACK has none for them), and O3 without the fusions only Tessel's kernels run:
# fuse-expansion, and fuse-conv-add (XNNPACK's int8 convolution takes no residual; its add runs apart).
PEER_FORCE = "xnnpack,portable"
PEER_PIPELINE = ("fold-shape-ops,fold-constants,simplify,dce,cse,fold-batchnorm,fuse-conv-activation,"
                 "fuse-depthwise-pointwise,transformer,layout,dce")
# The int8 peer: quant/int8's pipeline without fuse-conv-add, so that residual adds stay QAdd nodes and
# every convolution is one XNNPACK takes (Tessel's fused QConv with a residual falls back to the reference).
PEER_INT8_PIPELINE = "fold-shape-ops,fold-constants,simplify,cse,fold-batchnorm,fuse-conv-activation,layout,dce"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Runner:
    """Runs programs under qemu-aarch64 with the plugin, in parallel, skipping profiles already made
    by the same binaries (a profile is kept while it is newer than every input it names)."""

    def __init__(self, work, jobs):
        self.work = work
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
        self.plugin = os.path.join(HOST, "lab/libtb_profile.so")

    def profile(self, name, qemu_cpu, cmd, inputs, env=None):
        out = os.path.join(self.work, name + ".tsv")

        def job():
            if os.path.exists(out) and all(os.path.getmtime(out) > os.path.getmtime(i) for i in inputs):
                return out
            e = dict(os.environ, QEMU_LD_PREFIX=SYSROOT_LIBC, TESSEL_LAB_MARKS="1")
            e.update(env or {})
            log("  qemu %s: %s" % (qemu_cpu, " ".join(os.path.basename(c) if c.startswith("/") else c for c in cmd)))
            p = subprocess.run(["qemu-aarch64", "-cpu", qemu_cpu, "-plugin", self.plugin + ",out=" + out + ".tmp"] + cmd,
                               env=e, capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr[-1500:]))
            os.replace(out + ".tmp", out)
            return out
        return self.pool.submit(job)

    def run(self, qemu_cpu, cmd, env=None, out=None, inputs=()):
        """A plain run under qemu (compiling an artifact): skipped when `out` is newer than its inputs and
        was made by the same command."""
        how = json.dumps([qemu_cpu, cmd, sorted((env or {}).items())])

        def job():
            if (out and os.path.exists(out) and all(os.path.getmtime(out) > os.path.getmtime(i) for i in inputs)
                    and os.path.exists(out + ".how") and open(out + ".how").read() == how):
                return out
            e = dict(os.environ, QEMU_LD_PREFIX=SYSROOT_LIBC)
            e.update(env or {})
            log("  qemu %s: %s" % (qemu_cpu, " ".join(os.path.basename(c) if c.startswith("/") else c for c in cmd)))
            p = subprocess.run(["qemu-aarch64", "-cpu", qemu_cpu] + cmd, env=e, capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr[-1500:]))
            if out:
                with open(out + ".how", "w") as f:
                    f.write(how)
            return p.stdout
        return self.pool.submit(job)


def isa_groups(cores):
    """qemu CPU -> the core models that share its runs (same ISA, same Tessel instructions)."""
    groups = collections.OrderedDict()
    for c in cores:
        groups.setdefault(estimate.CORES[c]["qemu_cpu"], []).append(c)
    return groups


def target_of(qemu_cpu):
    return "aarch64-sve" if "sve=on" in qemu_cpu else "aarch64-neon"


def top_symbols(r, n=3):
    total = r["cycles"] or 1.0
    return [{"symbol": s, "share": c / total} for s, _, c in r["symbols"][:n]]


# ---- CNNs ------------------------------------------------------------------------------------------

def tensor_bytes(spec):
    """Bytes of 'f32[1,112,112,32]' (tessel inspect's notation)."""
    m = re.match(r"(\w+)\[([\d,]*)\]", spec)
    if not m:
        return 0
    size = {"f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i8": 1, "u8": 1, "i64": 8}.get(m.group(1), 4)
    n = 1
    for d in filter(None, m.group(2).split(",")):
        n *= int(d)
    return n * size


def dram_bytes_per_image(inspect_text, llc_bytes):
    """Weights once per image (every model here is larger than the modeled caches) plus, for each op
    output larger than half the last-level cache, one write and one read."""
    weights = 0.0
    m = re.search(r"weights ([\d.]+) MB", inspect_text)
    if m:
        weights = float(m.group(1)) * 1e6
    acts = 0.0
    for line in inspect_text.splitlines():
        m = re.match(r"\s+\d+ \S+\s+\S+\s+(\w+\[[\d,]*\])", line)
        if m:
            b = tensor_bytes(m.group(1))
            if b > llc_bytes / 2:
                acts += 2 * b
    return weights + acts


def file_digest(path):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def cnn_workloads(runner, cores, models, precisions, calibration):
    """Each core compiles its own artifacts, fp32 and INT8 (its column of the lab's cost table,
    TESSEL_COST_CORE, steers both). Identical artifacts on the same qemu CPU share one profiled run."""
    tessel = os.path.join(A64, "cli/tessel")
    compiled = []
    for core in cores:
        qcpu = estimate.CORES[core]["qemu_cpu"]
        tgt = target_of(qcpu)
        for model in models:
            onnx = os.path.join(HOST, "tools/frontend/models/%s_op13.onnx" % model)
            for prec in precisions:
                for side, force in (("tessel", None), ("xnnpack", PEER_FORCE)):
                    tsl = os.path.join(runner.work, "%s_%s_%s_%s.tsl" % (model, prec, core, side))
                    cmd = [tessel, "compile", onnx, "-o", tsl, "--dim", "batch=1", "--target", tgt]
                    if force:
                        cmd += ["--pipeline", PEER_INT8_PIPELINE if prec == "int8" else PEER_PIPELINE]
                    inputs = [tessel, onnx]
                    if prec == "int8":
                        cmd += ["--quantize=int8", "--calibration", calibration, "--calibration-batch", "2"]
                        # The peer is XNNPACK's int8 operators throughout: no layer falls back to f32.
                        if force:
                            cmd += ["--int8-fallback", "none"]
                        inputs.append(calibration)
                    env = {"TESSEL_COST_CORE": core}
                    if force:
                        env["TESSEL_FORCE_BACKEND"] = force
                    compiled.append((core, qcpu, model, prec, side, tsl, env, runner.run(qcpu, cmd, env, tsl, inputs)))
    runs = {}
    per_case = {}
    for core, qcpu, model, prec, side, tsl, env, fut in compiled:
        fut.result()
        key = (file_digest(tsl), qcpu)
        if key not in runs:
            name = "cnn_%s_%s" % (key[0], qcpu.split(",")[0] + ("_sve" if "sve=on" in qcpu else ""))
            runs[key] = (runner.run(qcpu, [tessel, "inspect", tsl, "--no-ir"]),
                         runner.profile(name, qcpu, [tessel, "bench", tsl, "--iterations", "1", "--warmup", "0"], [tsl],
                                        {"TESSEL_COST_CORE": core}))
        per_case[(core, model, prec, side)] = runs[key]
    ops_only = lambda label: label not in ("init", "-1")
    results = {}
    for (core, model, prec, side), (inspect, prof) in per_case.items():
        text = inspect.result()
        c = estimate.CORES[core]
        r = estimate.estimate([(1.0, prof.result())], c, phase_filter=ops_only)
        estimate.add_memory_term(r, c, dram_bytes_per_image(text, c["llc_bytes"]))
        kernels = collections.Counter()
        kernel_of_op = {}
        for line in text.splitlines():
            m = re.match(r"\s+(\d+) \S+\s+(\S+)\s+\w+\[", line)
            if m:
                kernels[m.group(2)] += 1
                kernel_of_op[m.group(1)] = m.group(2)
        r["kernels"] = dict(kernels)
        # Cycles per kernel, from the per-op phases (each op of the inference is a phase).
        by_kernel = collections.Counter()
        for label, ph in r["phases"].items():
            if ops_only(label):
                by_kernel[kernel_of_op.get(label, "op " + label)] += ph["cycles"]
        r["kernel_cycles"] = dict(by_kernel)
        results[(core, model, prec, side)] = r
    rows = []
    for model in models:
        for prec in precisions:
            for core in cores:
                t, p = results[(core, model, prec, "tessel")], results[(core, model, prec, "xnnpack")]
                rows.append(row("%s %s (per image)" % (model, prec), core, t, "xnnpack", p))
    return rows


# ---- LLM -------------------------------------------------------------------------------------------

# Tessel's own group-wise INT4 (`tessel quantize --method rtn --bits 4 --group 128` of the F16 file, head
# Q4_0): no llama.cpp peer loads it, so its rows compare with Tessel's Q4_0 rows of the same run.
TESSEL_INT4 = "i4g128"


def weight_bytes_per_token(kind, layers=gguf.LAYERS):
    """Bytes of every matrix a decode step reads: all but the embedding table (one row of it is read)."""
    total = 0
    for name, ne in gguf.tensor_list(layers):
        if len(ne) == 2 and name != "token_embd.weight":
            if kind == TESSEL_INT4 and name != "output.weight":
                total += ne[0] * ne[1] // 2 + ne[0] * ne[1] // 128 * 2  # nibbles and an f16 scale per group
                continue
            gtype = gguf.tensor_type("q4_0" if kind == TESSEL_INT4 else kind, name)
            total += gguf.tensor_bytes(gtype, ne)
        elif len(ne) == 1:
            total += 4 * ne[0]
    return total


def prompt_text(tokens):
    """tokens - 1 single-letter words after BOS: one token each in make_bench_gguf.py's vocabulary."""
    return " ".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(tokens - 1))


def llm_workloads(runner, cores, kinds, with_prefill, bench_dir, peer_only=()):
    """peer_only: kinds run only as another row's peer (Tessel's Q4_0 for the INT4 rows), without rows or
    llama.cpp runs of their own."""
    tessel = os.path.join(A64, "cli/tessel")
    llama_kinds = [k for k in kinds if k != TESSEL_INT4 and k not in peer_only]
    files = {}
    for kind in kinds:
        for layers in (1, 2):
            files[(kind, layers)] = os.path.join(bench_dir, "tinyllama-1.1b-random-L%d-%s.gguf" % (layers, kind))
    # (prompt tokens, tokens generated): decode = (1, 2) - (1, 1); prefill = (65, 1) - (1, 1).
    shapes = [(1, 1), (1, 2)] + ([(PREFILL + 1, 1)] if with_prefill else [])
    llama = {}
    for core in cores if llama_kinds else []:
        llama[core] = subprocess.run([os.path.join(ROOT, "benchmarks/arm/build_llama_cpp.sh"), core], check=True,
                                     capture_output=True, text=True).stdout.strip().splitlines()[-1]
    prof = {}
    for kind in kinds:
        for layers in (1, 2):
            f = files[(kind, layers)]
            for p, n in shapes:
                for qcpu in isa_groups(cores):
                    cmd = [tessel, "generate", "--model", f, "--prompt", prompt_text(p), "-n", str(n), "--temp", "0",
                           "--threads", "1", "--ctx", "128", "--seed", "1"]
                    name = "llm_%s_L%d_p%d_n%d_%s_tessel" % (kind, layers, p, n, target_of(qcpu))
                    prof[("tessel", qcpu, kind, layers, p, n)] = runner.profile(name, qcpu, cmd, [tessel, f])
                for core in cores:
                    if kind not in llama_kinds:
                        continue
                    qcpu = estimate.CORES[core]["qemu_cpu"]
                    # llama_steps decodes D steps after the prompt; tessel's -n counts the token the
                    # prompt's logits give, so D = n - 1 is the same work.
                    cmd = [llama[core], f, str(p), str(n - 1)]
                    name = "llm_%s_L%d_p%d_n%d_%s_llamacpp" % (kind, layers, p, n, core)
                    prof[("llama.cpp", core, kind, layers, p, n)] = runner.profile(name, qcpu, cmd, [llama[core], f])
    rows = []
    for kind in kinds:
        if kind in peer_only:
            continue
        for core in cores:
            c = estimate.CORES[core]
            qcpu = c["qemu_cpu"]
            per_token = weight_bytes_per_token(kind)
            work = [("decode step", (1, 2), 1.0, per_token)]
            if with_prefill:
                work.append(("%d-token prefill (per token)" % PREFILL, (PREFILL + 1, 1), 1.0 / PREFILL, per_token / PREFILL))
            res = {}
            for what, (p, n), scale, dram in work:
                # The peer: llama.cpp on the same file, or for Tessel's INT4 Tessel's own Q4_0 file.
                sides = (("tessel", qcpu, kind), ("llama.cpp", core, kind))
                if kind == TESSEL_INT4:
                    sides = (("tessel", qcpu, kind), ("tessel", qcpu, "q4_0"))
                for side, key, k in sides:
                    g = lambda L, pp, nn: prof[(side, key, k, L, pp, nn)].result()
                    # 22 layers = 22 x (L2 difference) - 21 x (L1 difference).
                    terms = [(22 * scale, g(2, p, n)), (-22 * scale, g(2, 1, 1)),
                             (-21 * scale, g(1, p, n)), (21 * scale, g(1, 1, 1))]
                    r = estimate.estimate(terms, c)
                    estimate.add_memory_term(r, c, dram)
                    res[side if k == kind else "q4_0"] = r
                if kind == TESSEL_INT4:
                    rows.append(row("TinyLlama %s %s" % (kind.upper(), what), core, res["tessel"], "tessel q4_0",
                                    res["q4_0"]))
                else:
                    rows.append(row("TinyLlama %s %s" % (kind.upper(), what), core, res["tessel"], "llama.cpp",
                                    res["llama.cpp"]))
    return rows


def row(workload, core, t, peer, p):
    return {
        "workload": workload,
        "core": core,
        "core_model": estimate.CORES[core]["label"],
        "tessel_cycles": t["cycles"],
        "peer": peer,
        "peer_cycles": p["cycles"],
        "ratio": t["cycles"] / p["cycles"] if p["cycles"] else float("nan"),
        "tessel_ms": t.get("compute_ms"),
        "peer_ms": p.get("compute_ms"),
        "tessel_roofline_ms": t.get("roofline_ms"),
        "peer_roofline_ms": p.get("roofline_ms"),
        "dram_mb": (t.get("dram_bytes") or 0) / 1e6,
        "tessel_hot": top_symbols(t),
        "peer_hot": top_symbols(p),
        "tessel_kernels": t.get("kernels"),
        "peer_kernels": p.get("kernels"),
        "tessel_kernel_cycles": t.get("kernel_cycles"),
        "peer_kernel_cycles": p.get("kernel_cycles"),
    }


def print_table(rows):
    print("Tessel vs peers on Arm core models: ESTIMATED cycles (qemu-aarch64 block counts x llvm-mca), 1 thread.")
    print("ms: compute estimate at the modeled SoC's clock; mem ms: DRAM bytes / its bandwidth (roofline = the larger).")
    print("%-40s %-22s %11s %11s %-9s %6s %8s %8s %7s" % ("workload", "core model", "tessel cyc", "peer cyc", "peer",
                                                        "ratio", "tessel ms", "peer ms", "mem ms"))
    for r in rows:
        slow = [k for k in (r.get("peer_kernels") or {}) if k.startswith("reference/")]
        if slow:
            print("  note: the peer's graph runs reference kernels for %s" % ", ".join(slow))
        c = estimate.CORES[r["core"]]
        mem_ms = r["dram_mb"] * 1e6 / (c["dram_gbps"] * 1e6) if r["dram_mb"] else 0.0
        print("%-40s %-22s %11.4g %11.4g %-9s %6.2f %8.2f %8.2f %7.2f" % (
            r["workload"][:40], r["core_model"], r["tessel_cycles"], r["peer_cycles"], r["peer"], r["ratio"],
            r["tessel_ms"] or 0, r["peer_ms"] or 0, mem_ms))
        for side in ("tessel", "peer"):
            hot = ", ".join("%s %.0f%%" % (h["symbol"][:56], 100 * h["share"]) for h in r[side + "_hot"])
            print("      %-9s hot: %s" % ("tessel" if side == "tessel" else r["peer"], hot))
        for side in ("tessel", "peer"):
            by_kernel = r.get(side + "_kernel_cycles")
            if by_kernel:
                top = sorted(by_kernel.items(), key=lambda kv: -kv[1])[:4]
                print("      %-9s by kernel: %s" % ("tessel" if side == "tessel" else r["peer"],
                                                   ", ".join("%s %.3g" % (k, v) for k, v in top)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="MobileNetV2 fp32 and the Q4_0 decode step only")
    ap.add_argument("--cores", default=",".join(ALL_CORES))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "arm"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--calibration", help="calibration .npy for the INT8 models (made when absent)")
    ap.add_argument("--what", default="cnn,llm", help="workload families to run: cnn, llm or both (default)")
    ap.add_argument("--precisions", help="CNN precisions: fp32, int8 or both (default; --quick fp32)")
    ap.add_argument("--llm-types", help="GGUF types of the LLM rows (make_bench_gguf.py: q4_0, q8_0, q4_k_m, "
                    "q5_k_m, q6_k, iq4_xs, q2_k, q3_k; i4g128: Tessel's group-wise INT4 from `tessel quantize`, "
                    "against Tessel's Q4_0; default q4_0,q8_0, --quick q4_0)")
    args = ap.parse_args()
    what = set(args.what.split(","))
    if not what or not what <= {"cnn", "llm"}:
        sys.exit("arm_lab.py: --what takes cnn, llm or cnn,llm (got %s)" % args.what)
    cores = args.cores.split(",")
    for c in cores:
        if c not in ALL_CORES:
            sys.exit("arm_lab.py: unknown core %s (expected %s)" % (c, ", ".join(ALL_CORES)))
    os.makedirs(args.out, exist_ok=True)
    runner = Runner(args.out, args.jobs)
    bench_dir = os.path.expanduser("~/.cache/tessel/bench-arm")
    kinds = args.llm_types.split(",") if args.llm_types else ["q4_0"] if args.quick else ["q4_0", "q8_0"]
    peer_only = set()
    if TESSEL_INT4 in kinds and "q4_0" not in kinds:
        kinds.insert(0, "q4_0")  # the INT4 rows' peer
        peer_only.add("q4_0")
    if "llm" in what:
        ggml_kinds = [k if k != TESSEL_INT4 else "f16" for k in kinds]
        for layers in (1, 2):
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "benchmarks/llm/make_bench_gguf.py"), "--out",
                            bench_dir, "--types", ",".join(ggml_kinds), "--layers", str(layers)], check=True,
                           stdout=subprocess.DEVNULL)
            if TESSEL_INT4 in kinds:
                stem = os.path.join(bench_dir, "tinyllama-1.1b-random-L%d-" % layers)
                if not (os.path.exists(stem + TESSEL_INT4 + ".gguf") and
                        os.path.getmtime(stem + TESSEL_INT4 + ".gguf") > os.path.getmtime(stem + "f16.gguf")):
                    subprocess.run([os.path.join(HOST, "cli/tessel"), "quantize", "--model", stem + "f16.gguf",
                                    "--method", "rtn", "--bits", "4", "--group", "128", "--output-type", "q4_0",
                                    "-o", stem + TESSEL_INT4 + ".gguf"], check=True, stdout=subprocess.DEVNULL)
    precisions = args.precisions.split(",") if args.precisions else ["fp32"] if args.quick else ["fp32", "int8"]
    if not set(precisions) <= {"fp32", "int8"}:
        sys.exit("arm_lab.py: --precisions takes fp32, int8 or fp32,int8 (got %s)" % args.precisions)
    calibration = args.calibration
    if "int8" in precisions and not calibration and "cnn" in what:
        calibration = os.path.join(args.out, "photos", "calibration.npy")
        if not os.path.exists(calibration):
            # Two real-photo crops: calibration runs under qemu (slowly), and speed does not depend on it.
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools/frontend/make_photo_calibration.py"), "--out",
                            os.path.dirname(calibration), "--calibration", "2", "--evaluation", "1"], check=True,
                           stdout=subprocess.DEVNULL)
    models = ["mobilenet_v2"] if args.quick else ["resnet18", "mobilenet_v2"]
    llm_future = concurrent.futures.ThreadPoolExecutor(1).submit(
        llm_workloads, runner, cores, kinds, not args.quick, bench_dir, peer_only) if "llm" in what else None
    rows = cnn_workloads(runner, cores, models, precisions, calibration) if "cnn" in what else []
    rows += llm_future.result() if llm_future else []
    print_table(rows)
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
