#!/bin/bash
# Runs Tessel's tests: host (x86_64), then aarch64 (cross-compiled, run under qemu-aarch64).
#   ./test.sh            both, and the out-of-tree example (what CI runs)
#   ./test.sh host       host only
#   ./test.sh aarch64    aarch64 only: the kernels, artifact loading, the LLM runtime and the emitted C
#                        (tests marked arch_neutral or host_only run on the host only)
#   ./test.sh asan       host tests under AddressSanitizer + UBSan
#   ./test.sh quick      the inner loop: host tests that need no trained model (no PyTorch training)
# Host runs (all, host, quick) first check the folder graph (tools/layering).
# Each phase prints its time; the last line counts the tests.
set -uo pipefail
cd "$(dirname "$0")"
which="${1:-all}"
case "$which" in all|host|aarch64|asan|quick) ;; *) echo "usage: ./test.sh [all|host|aarch64|asan|quick]" >&2; exit 2 ;; esac

passed=0
failed=0
status=0
phases=()
# Runs `bazel test ARGS` and adds its summary to the counts. The last argument is the target pattern.
run() {
  local label="$1"
  shift
  echo "== bazel test $* ($label)"
  local log start
  log=$(mktemp)
  start=$(date +%s)
  bazel test "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  phases+=("$label $(( $(date +%s) - start ))s")
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
  # A separate workspace depending on Tessel through local_repository: only the public targets.
  echo "== examples/custom_pipeline (out-of-tree pass in a Tessel pipeline)"
  local start
  start=$(date +%s)
  if (cd examples/custom_pipeline && bazel run //:custom_pipeline && bazel shutdown); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); status=1
  fi
  phases+=("example $(( $(date +%s) - start ))s")
}

layering() {
  # The folder graph (tools/layering/layers.txt): no package cycle, no dependency against the order.
  echo "== tools/layering/check_layering.py"
  if /usr/bin/python3 tools/layering/check_layering.py --self-test && /usr/bin/python3 tools/layering/check_layering.py; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); status=1
  fi
}

if [ "$which" = all ] || [ "$which" = host ] || [ "$which" = quick ]; then layering; fi
if [ "$which" = all ] || [ "$which" = host ]; then run host //...; example; fi
if [ "$which" = all ] || [ "$which" = aarch64 ]; then run aarch64 --config=aarch64 //...; fi
if [ "$which" = asan ]; then run asan --config=asan //...; fi
if [ "$which" = quick ]; then
  # Every test except those that depend on a model trained by PyTorch (tag trains_model) and their data.
  targets=$(bazel query --noshow_progress \
    'tests(//...) except rdeps(//..., attr(tags, "\btrains_model\b", //...))' 2>/dev/null)
  if [ -z "$targets" ]; then echo "test.sh: bazel query found no tests" >&2; exit 1; fi
  # shellcheck disable=SC2086
  run quick --build_tests_only $targets
fi
if [ "$status" != 0 ] && [ "$failed" = 0 ]; then failed=1; fi
echo "phases: ${phases[*]}"
echo "tests: $passed passed, $failed failed"
exit "$status"
