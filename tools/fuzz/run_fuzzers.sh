#!/bin/bash
# Builds every libFuzzer target (tag "fuzz") with clang-14 + ASan/UBSan and runs each for a bounded
# time from its seed. Usage: tools/fuzz/run_fuzzers.sh [SECONDS_PER_TARGET (default 60)]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
targets=$(bazel query 'attr(tags, "\bfuzz\b", //...)' 2>/dev/null)
if [ -z "$targets" ]; then echo "no fuzz targets"; exit 0; fi
bazel build --config=fuzz $targets
corpus_root=$(mktemp -d)
for t in $targets; do
  bin="bazel-bin/$(echo "${t#//}" | tr ':' '/')"
  name=$(basename "$bin")
  mkdir -p "$corpus_root/$name"
  # Seeds: generated ones (a package's seed rule) and the files kept in the package's fuzz_seeds/
  # (hand-made inputs and the crashers fuzzing found, kept as regression seeds).
  pkg=$(echo "${t#//}" | cut -d: -f1)
  for seed in bazel-bin/"$pkg"/*seed* "$pkg"/fuzz_seeds/*; do [ -f "$seed" ] && cp "$seed" "$corpus_root/$name/"; done
  echo "== $t for ${seconds}s"
  "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 "$corpus_root/$name" 2>&1 | tail -5
done
rm -rf "$corpus_root"
