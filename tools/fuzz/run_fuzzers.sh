#!/bin/bash
# Builds every libFuzzer target (tag "fuzz") with clang-14 + ASan/UBSan and runs each for a bounded
# time from its seed, as many at once as the machine has cores (TESSEL_FUZZ_JOBS overrides).
# Usage: tools/fuzz/run_fuzzers.sh [SECONDS_PER_TARGET (default 60)]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
targets=$(bazel query 'attr(tags, "\bfuzz\b", //...)' 2>/dev/null)
if [ -z "$targets" ]; then echo "no fuzz targets"; exit 0; fi
bazel build --config=fuzz $targets
corpus_root=$(mktemp -d)
logs=$(mktemp -d)
# Two fuzzers at a time (each libFuzzer process is single-threaded; CI machines have 2 cores).
jobs="${TESSEL_FUZZ_JOBS:-$(nproc)}"
pids=()
names=()
for t in $targets; do
  bin="bazel-bin/$(echo "${t#//}" | tr ':' '/')"
  name=$(basename "$bin")
  mkdir -p "$corpus_root/$name"
  # Seeds: generated ones (a package's seed rule) and the files kept in the package's fuzz_seeds/
  # (hand-made inputs and the crashers fuzzing found, kept as regression seeds).
  pkg=$(echo "${t#//}" | cut -d: -f1)
  for seed in bazel-bin/"$pkg"/*seed* "$pkg"/fuzz_seeds/*; do [ -f "$seed" ] && cp "$seed" "$corpus_root/$name/"; done
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 "$corpus_root/$name" \
    > "$logs/$name.log" 2>&1 &
  pids+=($!)
  names+=("$t")
done
failed=0
for i in "${!pids[@]}"; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  name=$(basename "$(echo "${names[$i]#//}" | tr ':' '/')")
  echo "== ${names[$i]} for ${seconds}s (exit $rc)"
  if [ "$rc" != 0 ]; then failed=1; cat "$logs/$name.log"; else tail -5 "$logs/$name.log"; fi
done
rm -rf "$corpus_root" "$logs"
exit "$failed"
