#!/usr/bin/env bash
# Tessel INT8 vs Tessel f32 vs ONNX Runtime INT8 (a QDQ model carrying Tessel's calibration ranges) vs
# ONNX Runtime f32 on ResNet-18 and MobileNetV2 (photo-statistics seeded weights), batch 1, 1 thread,
# interleaved; medians and ratios. Needs a built tessel (bazel build //cli:tessel) and onnxruntime-node.
#
#   benchmarks/cnn/int8_run.sh [--names resnet18,mobilenet_v2] [--rounds 7] [--iterations 10] [--threads 1]
#   TESSEL=/path/to/tessel WORK=out/int8 CAL_IMAGES=32 benchmarks/cnn/int8_run.sh
#   INT8_FLAGS='--int8-weight-bits 7' benchmarks/cnn/int8_run.sh   # more flags for the int8 compile
#   (artifacts of other flags are compiled again: use another WORK to keep both)
#
# Makes what is missing under WORK: the photo sets and models (int8_agreement.py, which also measures
# top-1 agreement), the QDQ models (make_qdq.py) and the batch-1 f32 artifacts.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
tessel="${TESSEL:-$root/bazel-out/k8-opt/bin/cli/tessel}"
work="${WORK:-$root/out/int8}"
cal="${CAL_IMAGES:-300}"
names=resnet18,mobilenet_v2
args=("$@")
for ((i = 0; i < ${#args[@]}; ++i)); do [ "${args[i]}" = --names ] && names="${args[i + 1]}"; done
[ -x "$tessel" ] || { echo "int8_run.sh: no tessel at $tessel (bazel build //cli:tessel or set TESSEL=)" >&2; exit 1; }
/usr/bin/python3 benchmarks/cnn/int8_agreement.py --tessel "$tessel" --work "$work" --names "$names" --methods mse \
  --calibration-images "$cal" --flags "${INT8_FLAGS:-}"
calfile="$work/calibration.npy"; [ "$cal" -lt 300 ] && calfile="$work/calibration_$cal.npy"
for m in ${names//,/ }; do
  # Recompiled when tessel is newer: an artifact records the kernels its compiler chose.
  if [ ! -f "$work/${m}_f32_b1.tsl" ] || [ "$tessel" -nt "$work/${m}_f32_b1.tsl" ]; then
    "$tessel" compile "$work/${m}_photo.onnx" -o "$work/${m}_f32_b1.tsl" --dim batch=1 >/dev/null
  fi
  [ -f "$work/${m}_qdq.onnx" ] || /usr/bin/python3 benchmarks/cnn/make_qdq.py "$work/${m}_photo.onnx" \
    "$work/${m}_mse_c$cal.ranges" -o "$work/${m}_qdq.onnx" --tessel "$tessel" --calibration "$calfile"
done
exec node benchmarks/cnn/int8_compare.js --tessel "$tessel" --work "$work" "$@"
