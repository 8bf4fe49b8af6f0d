#!/bin/bash
# check_register_spills_test.sh REGEX FILE...: no function matching REGEX in FILE... keeps a vector
# register on the stack, and the checker flags the counter-example in testdata/ (so it can fail).
set -euo pipefail
check="/usr/bin/python3 kernels/portable/check_register_spills.py"
regex="$1"
shift
obj="${TEST_TMPDIR:-/tmp}/spilling_streams.o"
gcc -O2 -mavx512f -c kernels/portable/testdata/spilling_streams.c -o "$obj"
$check --expect-spills --function '^spilling_streams$' "$obj"
$check --function "$regex" "$@"
echo PASS
