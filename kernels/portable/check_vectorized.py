"""Compiles C sources with GCC's vectorizer report and fails if a loop marked hot was not vectorized.

  check_vectorized.py [--target x86|avx512|neon|sve ...] [-I DIR ...] [--expect-missed] [--flags F] FILE.c ...

A hot loop is the first `for` after a line holding the comment `tessel:hot` (pragmas may sit between).
GCC reports a vectorized loop at some line of the loop (header or body, depending on how it was
lowered), so a hot loop counts as vectorized when an "optimized: loop vectorized" note falls anywhere
from its `for` to the end of its body. Prints one line per hot loop and target. Exit status 1 if any
hot loop was missed (with GCC's reasons), or, with --expect-missed, if any was vectorized (the naive
counter-examples in testdata/ check that the checker can fail).
"""
import argparse
import os
import re
import subprocess
import sys

# The flags every portable kernel and every emitted model is built with (see kernels/VECTORIZATION.md).
VEC_FLAGS = ["-std=c99", "-O3", "-fopenmp-simd", "-fno-trapping-math", "-ffp-contract=fast"]
TARGETS = {
    "x86": ("gcc", ["-march=x86-64-v3"]),
    "avx512": ("gcc", ["-march=x86-64-v3", "-mavx512f"]),
    "neon": ("aarch64-linux-gnu-gcc", ["-march=armv8.2-a"]),
    "sve": ("aarch64-linux-gnu-gcc", ["-march=armv8.2-a+sve"]),
}
REPORT = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):\d+: (?P<kind>optimized|missed): (?P<msg>.*)$")


def loop_end(text, start):
    """Index just past the loop starting at text[start:] ('for ...'): its header, then a braced body
    or a single statement."""
    i = text.index("(", start)
    depth = 0
    while True:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            break
    while text[i].isspace():
        i += 1
    if text[i] != "{":
        return text.index(";", i) + 1
    depth = 0
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return i


def hot_loops(path):
    """[(first_line, last_line)] of every loop marked hot in `path` (1-based, inclusive)."""
    with open(path) as f:
        text = f.read()
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(offset):
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    loops = []
    for m in re.finditer(r"tessel:hot", text):
        f = re.compile(r"\bfor\s*\(").search(text, m.end())
        if f is None:
            raise SystemExit("%s:%d: tessel:hot marks no loop" % (path, line_of(m.start())))
        end = loop_end(text, f.start())
        body = text[f.end():end]
        if re.search(r"\bfor\s*\(|\bwhile\s*\(", body):
            raise SystemExit("%s:%d: a hot loop must be innermost" % (path, line_of(f.start())))
        loops.append((line_of(f.start()), line_of(end - 1)))
    return loops


def check(path, target, includes, flags):
    cc, arch = TARGETS[target]
    cmd = [cc] + flags + arch + ["-fopt-info-vec-optimized", "-fopt-info-vec-missed", "-c", path, "-o", os.devnull]
    cmd += ["-I" + d for d in includes]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if proc.returncode != 0:
        raise SystemExit("compile failed: %s\n%s" % (" ".join(cmd), proc.stdout))
    notes = []
    for line in proc.stdout.splitlines():
        m = REPORT.match(line)
        if m and os.path.basename(m.group("file")) == os.path.basename(path):
            notes.append((int(m.group("line")), m.group("kind"), m.group("msg")))
    results = []
    for first, last in hot_loops(path):
        inside = [n for n in notes if first <= n[0] <= last]
        done = [msg for _, kind, msg in inside if kind == "optimized" and msg.startswith("loop vectorized")]
        why = sorted({msg for _, kind, msg in inside if kind == "missed" and "not vectorized" in msg})
        results.append((first, done[0] if done else None, why))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", action="append", choices=sorted(TARGETS))
    parser.add_argument("-I", dest="includes", action="append", default=[])
    parser.add_argument("--expect-missed", action="store_true")
    parser.add_argument("--flags", help="replace the house flags (%s), to see what each one does" % " ".join(VEC_FLAGS))
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    bad = 0
    total = 0
    for target in args.target or ["x86", "neon", "sve"]:
        for path in args.files:
            flags = args.flags.split() if args.flags else VEC_FLAGS
            for line, done, why in check(path, target, args.includes, flags):
                total += 1
                name = "%s:%d" % (os.path.basename(path), line)
                if done:
                    print("%-7s %-28s vectorized: %s" % (target, name, done.replace("loop vectorized ", "")))
                else:
                    print("%-7s %-28s MISSED: %s" % (target, name, "; ".join(why) or "no vectorization note"))
                bad += (done is not None) if args.expect_missed else (done is None)
    if total == 0:
        print("no hot loops found")
        return 1
    verdict = "vectorized" if args.expect_missed else "missed"
    print("%d hot loop(s) checked, %d %s" % (total, bad, verdict))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
