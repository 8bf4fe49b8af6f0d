#!/usr/bin/python3
"""Validates the lab's method where the truth is known: the x86-64 build, estimated under qemu-x86_64
with the host core's llvm-mca model, against the same code timed natively on this host (CPU time:
kernel cases per call, whole models as the difference of a long and a short run).

qemu-x86_64 (7.2) emulates AVX2 but no AVX-512, so the native side runs without AVX-512 too
(TESSEL_MAX_ISA=avx2 for Tessel's kernels, LD_PRELOAD of libcpuinfo_avx2_only.so for XNNPACK's): both
sides then execute the same instructions. Rows: every kernel case of lab/kernel_cases (GEMM,
GEMV and vector kernels from the registries benchmarks/kernels measures), ResNet-18 and MobileNetV2
(batch 1, 1 thread) and one TinyLlama-shaped Q4_0 decode step (2 layers, the real widths). Estimated
cycles become time at the clock measured on this host (a chain of dependent multiplies).

  lab/validate_x86.py [--core sapphirerapids] [--out out/lab-x86] [--quick]

Needs: bazel build //cli:tessel //lab:all //tools/frontend:models.
Prints a table (estimate / measured per case, and the roofline against copy bandwidths measured here,
since llvm-mca prices every load as an L1 hit: L2 for the kernel cases, DRAM for the decode step's
weights) and the Spearman rank correlation; the last line is JSON.
"""

import argparse
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lab"))
import estimate  # noqa: E402

BIN = os.path.join(ROOT, "bazel-out", "k8-opt", "bin")  # bazel-bin follows the last configuration built


def run(cmd, env=None, **kw):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, env=e, capture_output=True, text=True, check=True, **kw).stdout


def cpu_seconds(cmd, env):
    """User + system CPU seconds of one run of cmd: on a shared host, wall time counts the time other
    processes hold the cores (several times the work itself when the host is busy), CPU time does not."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(cmd, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def marginal_ns(cmd_small, cmd_large, units, env, repeats=3):
    """CPU nanoseconds per unit of work: (run(cmd_large) - run(cmd_small)) / units, loading and set-up
    cancelling; the median and the minimum over interleaved repeats."""
    per = []
    for _ in range(repeats):
        small = cpu_seconds(cmd_small, env)
        large = cpu_seconds(cmd_large, env)
        per.append((large - small) / units * 1e9)
    return statistics.median(per), min(per)


def copy_gbps(nbytes=512 << 10, copies=400, trials=7):
    """GB/s libc's memmove moves (bytes read + bytes written) between two nbytes buffers. At 512 KiB they
    stay in this core's L2 after the first copy: the bandwidth the streaming kernel cases see (their
    64x2048 f32 operands are 512 KiB each, 1-1.5 MiB a call), measured without their code; at 64 MiB
    they come from DRAM. Median of trials."""
    src, dst = ctypes.create_string_buffer(nbytes), ctypes.create_string_buffer(nbytes)
    rates = []
    for _ in range(trials):
        t0 = time.thread_time()
        for _ in range(copies):
            ctypes.memmove(dst, src, nbytes)
        rates.append(2.0 * nbytes * copies / (time.thread_time() - t0) / 1e9)
    return statistics.median(rates)


def qemu_profile(cmd, out, env=None):
    """Runs cmd under qemu-x86_64 with the plugin (cached by the output file being newer than cmd[0])."""
    if os.path.exists(out) and os.path.getmtime(out) > os.path.getmtime(cmd[0]):
        return out
    plugin = os.path.join(BIN, "lab/libtb_profile.so")
    e = {"TESSEL_LAB_MARKS": "1", "TESSEL_MAX_ISA": "avx2"}
    e.update(env or {})
    run(["qemu-x86_64", "-cpu", "max", "-plugin", plugin + ",out=" + out + ".tmp"] + cmd, env=e)
    os.replace(out + ".tmp", out)
    return out


def spearman(xs, ys):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0 + 1
            i = j + 1
        return r
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    var = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / var if var else float("nan")


def kernel_rows(core, ghz_holder, work, quick):
    exe = os.path.join(BIN, "lab/kernel_cases")
    flt = ["--filter", "avx2"] if quick else []
    # The shim keeps XNNPACK's convolution cases on AVX2 natively, as under qemu-x86_64.
    shim = os.path.join(BIN, "lab/libcpuinfo_avx2_only.so")
    native = [json.loads(l) for l in run([exe, "--clock", "--reps", "7"] + flt,
                                         env={"TESSEL_MAX_ISA": "avx2", "LD_PRELOAD": shim}).splitlines()]
    ghz_holder.append(native[0]["clock_ghz"])
    profile = qemu_profile([exe, "--reps", "1"] + flt, os.path.join(work, "kernel_cases%s.tsv" % ("_quick" if quick else "")))
    r = estimate.estimate([(1.0, profile)], core)
    rows = []
    for c in native[1:]:
        phase = r["phases"].get(str(c["index"]))
        if not phase:
            continue
        rows.append({"case": c["case"], "kind": "kernel", "est_cycles": phase["cycles"] / c["calls"],
                     "bytes": c["bytes"], "measured_ns": c["median_ns"], "measured_min_ns": c["min_ns"]})
    return rows


def cnn_rows(core, work, models):
    tessel = os.path.join(BIN, "cli/tessel")
    shim = os.path.join(BIN, "lab/libcpuinfo_avx2_only.so")
    env = {"TESSEL_MAX_ISA": "avx2", "LD_PRELOAD": shim}
    rows = []
    for name in models:
        onnx = os.path.join(BIN, "tools/frontend/models/%s_op13.onnx" % name)
        tsl = os.path.join(work, "%s_avx2.tsl" % name)
        if not os.path.exists(tsl) or os.path.getmtime(tsl) < os.path.getmtime(tessel):
            run([tessel, "compile", onnx, "-o", tsl, "--dim", "batch=1"], env=env)
        median, best = marginal_ns([tessel, "bench", tsl, "--iterations", "1", "--warmup", "1"],
                                   [tessel, "bench", tsl, "--iterations", "21", "--warmup", "1"], 20, env)
        profile = qemu_profile([tessel, "bench", tsl, "--iterations", "1", "--warmup", "0"],
                               os.path.join(work, "%s_avx2.tsv" % name))
        r = estimate.estimate([(1.0, profile)], core)
        cycles = sum(p["cycles"] for label, p in r["phases"].items() if label not in ("init", "-1"))
        rows.append({"case": "%s fp32 (1 inference)" % name, "kind": "cnn", "est_cycles": cycles,
                     "measured_ns": median, "measured_min_ns": best})
    return rows


def llm_rows(core, work):
    sys.path.insert(0, os.path.join(ROOT, "benchmarks", "llm"))
    bench_dir = os.path.expanduser("~/.cache/tessel/bench-arm")
    run(["/usr/bin/python3", os.path.join(ROOT, "benchmarks/llm/make_bench_gguf.py"), "--out", bench_dir,
         "--types", "q4_0", "--layers", "2"])
    model = os.path.join(bench_dir, "tinyllama-1.1b-random-L2-q4_0.gguf")
    exe = os.path.join(BIN, "cli/tessel")
    gen = lambda n: [exe, "generate", "--model", model, "--prompt", "", "-n", str(n), "--temp", "0", "--threads", "1",
                     "--seed", "1"]
    median, best = marginal_ns(gen(1), gen(33), 32, {"TESSEL_MAX_ISA": "avx2"})
    profiles = []
    for n in (1, 2):
        profiles.append(qemu_profile([exe, "generate", "--model", model, "--prompt", "", "-n", str(n), "--temp", "0",
                                      "--threads", "1", "--seed", "1"], os.path.join(work, "tinyllama_L2_q4_0_n%d.tsv" % n)))
    r = estimate.estimate([(1.0, profiles[1]), (-1.0, profiles[0])], core)
    # The lab's memory term for decode: every matrix but the embedding table, read once a token.
    import make_bench_gguf as gguf  # noqa: E402
    weights = sum(gguf.tensor_bytes(gguf.tensor_type("q4_0", name), ne) for name, ne in gguf.tensor_list(2)
                  if len(ne) == 2 and name != "token_embd.weight")
    return [{"case": "TinyLlama Q4_0 decode step (2 layers)", "kind": "llm", "est_cycles": r["cycles"],
             "dram_bytes": weights, "measured_ns": median, "measured_min_ns": best}]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--core", default="sapphirerapids", help="llvm-mca model of this host's core")
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "lab-x86"))
    ap.add_argument("--quick", action="store_true", help="only the AVX2 kernel cases and MobileNetV2")
    args = ap.parse_args()
    core = estimate.CORES[args.core]
    os.makedirs(args.out, exist_ok=True)
    ghz = []
    rows = kernel_rows(core, ghz, args.out, args.quick)
    rows += cnn_rows(core, args.out, ["mobilenet_v2"] if args.quick else ["resnet18", "mobilenet_v2"])
    if not args.quick:
        rows += llm_rows(core, args.out)
    clock = ghz[0]
    l2_gbps, dram_gbps = copy_gbps(), copy_gbps(64 << 20, 3, 3)
    print("x86-64 validation: llvm-mca %s model under qemu-x86_64 vs this host (clock %.2f GHz from a dependent "
          "multiply chain), AVX2 on both sides" % (args.core, clock))
    print("roofline = max(estimate, mem): kernel cases' operand bytes at %.1f GB/s (libc memmove between two "
          "512 KiB buffers, in L2; the lab's DRAM term is zero for them, 1-5 MiB against the LLC), the decode "
          "step's weights at %.1f GB/s (the same at 64 MiB, DRAM)" % (l2_gbps, dram_gbps))
    print("%-52s %12s %12s %12s %7s %10s %9s" % ("case", "est. cycles", "est. us", "measured us", "ratio",
                                                 "mem us", "roofline"))
    for r in rows:
        r["est_ns"] = r["est_cycles"] / clock
        r["ratio"] = r["est_ns"] / r["measured_ns"]
        mem = "%10s %9s" % ("", "")
        if "bytes" in r or "dram_bytes" in r:
            r["mem_ns"] = r["bytes"] / l2_gbps if "bytes" in r else r["dram_bytes"] / dram_gbps
            r["roofline_ratio"] = max(r["est_ns"], r["mem_ns"]) / r["measured_ns"]
            mem = "%10.2f %9.2f" % (r["mem_ns"] / 1e3, r["roofline_ratio"])
        print("%-52s %12.4g %12.2f %12.2f %7.2f %s" % (r["case"][:52], r["est_cycles"], r["est_ns"] / 1e3,
                                                      r["measured_ns"] / 1e3, r["ratio"], mem))
    rho = spearman([r["est_ns"] for r in rows], [r["measured_ns"] for r in rows])
    ratios = [r["ratio"] for r in rows]
    print("cases %d; ratio estimate/measured: median %.2f, range %.2f-%.2f; Spearman rank correlation %.3f"
          % (len(rows), statistics.median(ratios), min(ratios), max(ratios), rho))
    roof = [r.get("roofline_ratio", r["ratio"]) for r in rows]
    rho_roof = spearman([r["measured_ns"] * q for r, q in zip(rows, roof)], [r["measured_ns"] for r in rows])
    print("with the roofline: median %.2f, range %.2f-%.2f; Spearman %.3f"
          % (statistics.median(roof), min(roof), max(roof), rho_roof))
    print(json.dumps({"core": args.core, "clock_ghz": clock, "l2_copy_gbps": l2_gbps, "dram_copy_gbps": dram_gbps,
                      "spearman": rho,
                      "spearman_roofline": rho_roof, "rows": rows}))


if __name__ == "__main__":
    main()
