#!/usr/bin/python3
"""The lab end to end on one small kernel: qemu-aarch64 with the plugin, then the llvm-mca step.

References are independent of the lab's code: the kernel's loops have a known instruction count and
trip count (testdata/fmla_loops.c), and the cycles are checked against llvm-mca run directly on the
same loop body written out by hand.
"""
import os
import subprocess
import sys
import tempfile

plugin, kernel, estimator = sys.argv[1:4]
sys.path.insert(0, os.path.dirname(os.path.abspath(estimator)))
import estimate  # noqa: E402

N = 20000
BODY = 10  # 8 FMLAs, subs, b.ne
failures = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failures.append(what)


work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
os.environ["TESSEL_LAB_CACHE"] = os.path.join(work, "cache")  # a cold cache: llvm-mca really runs
profile = os.path.join(work, "profile.tsv")
subprocess.run(["qemu-aarch64", "-cpu", estimate.CORES["cortex-a55"]["qemu_cpu"], "-plugin",
                os.path.abspath(plugin) + ",out=" + profile, kernel, str(N)], check=True)

# The plugin: each loop's first iteration shares a block with the code before it, so the loop-body
# block runs N - 1 times, and it holds exactly the body.
target, blocks, executions, phases = estimate.read_profile(profile)
check(target == "aarch64", "target is aarch64 (%s)" % target)
loops = [k for k in executions if blocks[k].instructions == BODY and executions[k] == N - 1]
check(len(loops) == 2, "two %d-instruction blocks ran %d times (found %d)" % (BODY, N - 1, len(loops)))
for label in ("0", "1"):
    hot = [k for k, e in phases.get(label, {}).items() if e == N - 1 and blocks[k].instructions == BODY]
    check(len(hot) == 1, "phase %s holds its loop's block" % label)
total = sum(executions[k] * blocks[k].instructions for k in executions)
check(2 * N * BODY <= total < 2 * N * BODY + 200000, "total instructions %d include both loops' %d" % (total, 2 * N * BODY))

# The llvm-mca step against llvm-mca on the hand-written body.
core = estimate.CORES["cortex-a55"]


def mca(body):
    text = "\n".join(body + ["subs x0, x0, #1", "b.ne #-36"]) + "\n"
    out = subprocess.run(["llvm-mca-16", "-mtriple=aarch64", "-mcpu=cortex-a55"], input=text, capture_output=True,
                         text=True, check=True).stdout
    cycles = int(next(l.split()[-1] for l in out.splitlines() if l.startswith("Total Cycles:")))
    iterations = int(next(l.split()[-1] for l in out.splitlines() if l.startswith("Iterations:")))
    return cycles / iterations


dependent = mca(["fmla v0.4s, v8.4s, v9.4s"] * 8)
independent = mca(["fmla v%d.4s, v8.4s, v9.4s" % r for r in range(8)])
check(dependent >= 2 * independent, "a chain of 8 FMLAs (%.1f cycles) costs well over 8 independent ones (%.1f)"
      % (dependent, independent))
r = estimate.estimate([(1.0, profile)], core)
phase = r["phases"]
for label, per_iteration in (("0", dependent), ("1", independent)):
    want = (N - 1) * per_iteration
    got = phase[label]["cycles"]
    check(abs(got - want) <= 0.01 * want + 200, "phase %s: %.0f cycles, hand-written body x %d = %.0f"
          % (label, got, N - 1, want))
check(r["symbols"][0][0] == "main", "the loops are attributed to main (%s)" % r["symbols"][0][0])
check(r["cycles"] >= phase["0"]["cycles"] + phase["1"]["cycles"], "total covers both phases")

# Cached: a second estimate reads llvm-mca's results back and agrees exactly.
again = estimate.estimate([(1.0, profile)], core)
check(again["cycles"] == r["cycles"], "cached estimate equals the first (%.0f vs %.0f)" % (again["cycles"], r["cycles"]))

# Profiles combine linearly: twice the profile minus itself is the profile.
combined = estimate.estimate([(2.0, profile), (-1.0, profile)], core)
check(abs(combined["cycles"] - r["cycles"]) <= 1e-6 * r["cycles"], "2P - P == P")

# Straight-line runs that qemu cut (a page boundary, its block size limit) are joined before pricing:
# hand-built blocks, little-endian A64 words. ADD x0, x0, #1 = 0x91000400; B . + 8 = 0x14000002;
# CBNZ x0, . - 8 = 0xb5ffffc0.
def word(w):
    return w.to_bytes(4, "little").hex()


ADD, B, CBNZ = word(0x91000400), word(0x14000002), word(0xb5ffffc0)


def blocks_of(specs):
    """specs: (vaddr, hexbytes, executions) -> (blocks, executions, phases) as read_profile gives."""
    bl, ex = {}, {}
    for vaddr, hexbytes, n in specs:
        key = ("f", vaddr, hexbytes)
        bl[key] = estimate.Block(key, vaddr, len(hexbytes) // 8, vaddr, "f", hexbytes)
        ex[key] = n
    return bl, ex, {"0": dict(ex)}


# a (2 adds) runs on into b (add, cbnz), which runs on into c (2 adds), all 100 times: one block of 6.
bl, ex, ph = blocks_of([(0x1000, ADD * 2, 100), (0x1008, ADD + CBNZ, 100), (0x1010, ADD * 2, 100)])
check(estimate.merge_fallthrough(bl, ex, ph) == 2, "a chain of three pieces joins into one")
check(sorted(bl[k].instructions for k in ex) == [6] and list(ph["0"].values()) == [100],
      "the joined block holds all 6 instructions and keeps its count in the phase")
# A loop whose first pass is a block of its own: entry (1 time) and body (99 times) both run on into
# the tail (100 times); each gets its own copy of the tail.
bl, ex, ph = blocks_of([(0x0ffc, ADD * 3, 1), (0x1000, ADD * 2, 99), (0x1008, ADD + CBNZ, 100)])
estimate.merge_fallthrough(bl, ex, ph)
check(sorted((bl[k].instructions, ex[k]) for k in ex) == [(4, 99), (5, 1)],
      "a tail entered from two blocks is copied into each (%s)" % sorted((bl[k].instructions, ex[k]) for k in ex))
# Not joined: a different count (b is also entered from elsewhere), a block ending in B, a gap.
for specs, what in (([(0x1000, ADD * 2, 100), (0x1008, ADD * 2, 150)], "different counts"),
                    ([(0x1000, ADD + B, 100), (0x1008, ADD * 2, 100)], "an unconditional branch"),
                    ([(0x1000, ADD * 2, 100), (0x100c, ADD * 2, 100)], "a gap")):
    bl, ex, ph = blocks_of(specs)
    check(estimate.merge_fallthrough(bl, ex, ph) == 0 and len(ex) == 2, "not joined across %s" % what)

sys.exit(1 if failures else 0)
