#!/usr/bin/env bash
# Tessel against XNNPACK (CNNs) and llama.cpp (TinyLlama-shaped decode and prefill) on Arm core models
# (cortex-a55, cortex-a76 on llvm-mca's Cortex-A57 model, neoverse-v1), by the lab's estimate: each
# side's aarch64 build runs under qemu-aarch64 with lab's block-counting plugin and llvm-mca
# prices the blocks (docs/arm_lab.md). Estimated cycles, not measurements.
#
#   benchmarks/arm/run.sh --quick     MobileNetV2 fp32 and the Q4_0 decode step (< 10 min on 2 cores, built)
#   benchmarks/arm/run.sh             ResNet-18 and MobileNetV2 fp32 + INT8, Q4_0 and Q8_0 decode + prefill
#   benchmarks/arm/run.sh --cores neoverse-v1 [--out DIR] [--jobs N] [--what cnn|llm] [--precisions int8]
#
# Builds first (the aarch64 build compiles most of the tree once: 15+ minutes on 2 cores), and llama.cpp
# for each core into ~/.cache/tessel-llama.cpp-aarch64. Runs are kept in out/arm and reused while their
# binaries and inputs are older. Prints a table per workload and core; the last line is JSON.
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build --jobs=2 //lab:all //tools/frontend:models >&2
# //cli:tessel is tagged host_only (its cli_test is); the aarch64 build wants it all the same.
bazel build --jobs=2 --config=aarch64 --build_tag_filters= //cli:tessel >&2
exec /usr/bin/python3 benchmarks/arm/arm_lab.py "$@"
