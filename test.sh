#!/bin/bash
# Runs Tessel's tests: host (x86_64) and aarch64 (cross-compiled, run under qemu-aarch64).
#   ./test.sh            both
#   ./test.sh host       host only
#   ./test.sh aarch64    aarch64 only
#   ./test.sh asan       host tests under AddressSanitizer + UBSan
set -uo pipefail
cd "$(dirname "$0")"
which="${1:-all}"
case "$which" in all|host|aarch64|asan) ;; *) echo "usage: ./test.sh [all|host|aarch64|asan]" >&2; exit 2 ;; esac

passed=0
failed=0
status=0
run() {
  local label="$1"
  shift
  echo "== bazel test $* //... ($label)"
  local log
  log=$(mktemp)
  bazel test "$@" //... 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  # Bazel's summary: "Executed N out of M tests: K tests pass and F fail ..." or "...: N tests pass."
  local summary
  summary=$(grep -E '^Executed [0-9]+ out of [0-9]+ tests?' "$log" | tail -1)
  local total p
  total=$(echo "$summary" | sed -E 's/^Executed ([0-9]+) out of ([0-9]+).*/\2/')
  p=$(echo "$summary" | grep -oE '([0-9]+) tests? pass' | grep -oE '^[0-9]+')
  if [ -z "$summary" ]; then total=0; p=0; fi
  p=${p:-0}
  passed=$((passed + p))
  failed=$((failed + total - p))
  if [ "$rc" != 0 ]; then status=1; fi
  rm -f "$log"
}

example() {
  # A separate workspace depending on Tessel through local_repository (issue: composability).
  echo "== examples/custom_pipeline (out-of-tree pass in a Tessel pipeline)"
  if (cd examples/custom_pipeline && bazel run //:custom_pipeline && bazel shutdown); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); status=1
  fi
}

if [ "$which" = all ] || [ "$which" = host ]; then run host; example; fi
if [ "$which" = all ] || [ "$which" = aarch64 ]; then run aarch64 --config=aarch64; fi
if [ "$which" = asan ]; then run asan --config=asan; fi
if [ "$status" != 0 ] && [ "$failed" = 0 ]; then failed=1; fi
echo "tests: $passed passed, $failed failed"
exit "$status"
