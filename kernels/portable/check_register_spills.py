"""Fails if a hot intrinsics kernel keeps vector registers on the stack.

  check_register_spills.py [--expect-spills] --function REGEX [--function REGEX ...] FILE ...

Disassembles each FILE (objects, archives, shared objects or executables) with objdump and, in every
function whose demangled name matches one of the regexes, counts the instructions that move a zmm or
ymm register to or from the stack (an operand addressed through %rsp or %rbp). A streaming GEMV keeps
its accumulators in registers; when GCC does not unroll the loop over streams it keeps them in a stack
array instead, with a store and a reload around every FMA: the F16 decode kernel read 10% slower that
way, with results unchanged. Every regex must match at least one function. Exit status 1 if a matched
function touches the stack with a vector register, or, with --expect-spills, if none does (the
counter-example in testdata/ checks that the checker can fail).
"""
import argparse
import re
import subprocess
import sys

FUNCTION = re.compile(r"^[0-9a-f]+ <(?P<name>.*)>:$")
STACK_VECTOR = re.compile(r"%[yz]mm\d+.*\(%r[sb]p\)|\(%r[sb]p\).*%[yz]mm\d+")


def functions(path):
    """{demangled name: [instruction lines]} of every function in `path`."""
    try:
        out = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", path], check=True, capture_output=True,
                             text=True).stdout
    except FileNotFoundError:
        sys.exit("check_register_spills: objdump not found (Debian package binutils)")
    except subprocess.CalledProcessError as e:
        sys.exit("check_register_spills: objdump failed on %s: %s" % (path, e.stderr.strip()[-500:]))
    result = {}
    current = None
    for line in out.splitlines():
        m = FUNCTION.match(line)
        if m:
            current = result.setdefault(m.group("name"), [])
        elif current is not None and line.startswith(" "):
            current.append(line.strip())
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--function", action="append", required=True, help="regex over demangled names")
    parser.add_argument("--expect-spills", action="store_true")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    patterns = [re.compile(p) for p in args.function]
    matched = {p.pattern: 0 for p in patterns}
    spilling = []
    for path in args.files:
        for name, insns in functions(path).items():
            hits = [p for p in patterns if p.search(name)]
            if not hits:
                continue
            for p in hits:
                matched[p.pattern] += 1
            stack = [i for i in insns if STACK_VECTOR.search(i)]
            print("%-4d vector stack accesses  %s" % (len(stack), name))
            if stack:
                spilling.append((name, stack))
    missing = [p for p, n in matched.items() if n == 0]
    if missing:
        print("no function matches: " + ", ".join(missing), file=sys.stderr)
        return 1
    if args.expect_spills:
        if not spilling:
            print("expected vector stack accesses, found none", file=sys.stderr)
            return 1
        return 0
    for name, stack in spilling:
        print("%s keeps vector registers on the stack, e.g.:\n  %s" % (name, "\n  ".join(stack[:4])),
              file=sys.stderr)
    return 1 if spilling else 0


if __name__ == "__main__":
    sys.exit(main())
