#!/bin/bash
# Runs Tessel's tests: host (x86_64), then aarch64 (cross-compiled, run under qemu-aarch64).
#   ./test.sh            both, and the out-of-tree examples (what CI runs)
#   ./test.sh host       host only
#   ./test.sh aarch64    aarch64 only: the kernels, artifact loading, the LLM runtime and the emitted C
#                        (tests marked arch_neutral or host_only run on the host only)
#   ./test.sh asan       host tests under AddressSanitizer + UBSan
#   ./test.sh quick      the inner loop: host tests that need no trained model (no PyTorch training) and
#                        not the model zoo
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
  # -c fastbuild: what this checks (public targets, an out-of-tree pass) does not need an optimized
  # build, and the example's own compile of Tessel's graph and passes took 110 s at -O2, 87 s without
  # (2 cores, Zen 5, 2026-11-28).
  if (cd examples/custom_pipeline && bazel run -c fastbuild //:custom_pipeline && bazel shutdown); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); status=1
  fi
  phases+=("example $(( $(date +%s) - start ))s")
}

c_api_example() {
  # examples/c_api: a plain Makefile against tessel.h and the built library only. Host: libtessel.so;
  # aarch64: libtessel_static.a, an artifact compiled by the host CLI for aarch64-neon, run under qemu.
  # Checks the image's top-1 class (PyTorch's) and the greedy text (PyTorch's continuation).
  local arch="$1"
  echo "== examples/c_api ($arch: classify an image, stream text)"
  local start ok=1 host_bin lib_bin bin cnn llama tmp top1 text run=()
  start=$(date +%s)
  tmp=$(mktemp -d)
  bazel build //cli:tessel //capi/testdata:tiny_cnn_artifact //llm/testdata:tiny_llama || ok=0
  host_bin=$(bazel info bazel-bin 2>/dev/null)
  cnn="$host_bin/capi/testdata"
  llama="$host_bin/llm/testdata/tiny_llama"
  if [ "$arch" = host ]; then
    bazel build //capi:libtessel.so || ok=0
    make -s -C examples/c_api LIBDIR="$host_bin/capi" || ok=0
    cp "$cnn/tiny_cnn.tsl" "$tmp/model.tsl"
    bin=examples/c_api/build
  else
    # (The aarch64 tessel, which the Arm lab and `tessel bench --estimate` run under qemu, is tagged
    # host_only like its test; benchmarks/arm/run.sh builds it with the tag filter cleared.)
    bazel build --config=aarch64 //capi:libtessel_static || ok=0
    lib_bin=$(bazel info --config=aarch64 bazel-bin 2>/dev/null)
    make -s -C examples/c_api ARCH=aarch64 LIBDIR="$lib_bin/capi" || ok=0
    "$host_bin/cli/tessel" compile "$cnn/tiny_cnn/tiny_cnn.onnx" -o "$tmp/model.tsl" --target aarch64-neon > /dev/null 2>&1 || ok=0
    bin=examples/c_api/build-aarch64
    run=(env QEMU_LD_PREFIX=/usr/aarch64-linux-gnu qemu-aarch64)
  fi
  if [ "$ok" = 1 ]; then
    top1=$("${run[@]}" "$bin/classify" "$tmp/model.tsl" "$cnn/tiny_cnn/image.ppm" "$cnn/tiny_cnn/labels.txt" | head -1 | cut -d' ' -f1)
    if [ "$top1" != "$(cat "$cnn/tiny_cnn/expected_top1.txt")" ]; then
      echo "examples/c_api: classify ranked '$top1' first; PyTorch ranks '$(cat "$cnn/tiny_cnn/expected_top1.txt")'"; ok=0
    fi
    "${run[@]}" "$bin/generate" "$llama/model-f32.gguf" "$llama/prompt.txt" 16 0 > "$tmp/text.txt" 2> "$tmp/err.txt" || ok=0
    text=$(cat "$tmp/text.txt")
    case "$(cat "$llama/greedy_text.txt")" in
      "$text"*) [ -n "$text" ] || ok=0 ;;
      *) echo "examples/c_api: generate wrote '$text', not a prefix of PyTorch's greedy text"; cat "$tmp/err.txt"; ok=0 ;;
    esac
  fi
  rm -rf "$tmp"
  if [ "$ok" = 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi
  phases+=("c_api-$arch $(( $(date +%s) - start ))s")
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
if [ "$which" = all ] || [ "$which" = host ]; then run host //...; example; c_api_example host; fi
if [ "$which" = all ] || [ "$which" = aarch64 ]; then run aarch64 --config=aarch64 //...; c_api_example aarch64; fi
if [ "$which" = asan ]; then run asan --config=asan //...; fi
if [ "$which" = quick ]; then
  # Every test except those that depend on a model trained by PyTorch (tag trains_model) and their data,
  # and the model zoo (tag zoo: PyTorch exports and a few minutes of runs).
  targets=$(bazel query --noshow_progress \
    'tests(//...) except rdeps(//..., attr(tags, "\btrains_model\b", //...)) except attr(tags, "\bzoo\b", //...)' 2>/dev/null)
  if [ -z "$targets" ]; then echo "test.sh: bazel query found no tests" >&2; exit 1; fi
  # shellcheck disable=SC2086
  run quick --build_tests_only $targets
fi
if [ "$status" != 0 ] && [ "$failed" = 0 ]; then failed=1; fi
echo "phases: ${phases[*]}"
echo "tests: $passed passed, $failed failed"
exit "$status"
