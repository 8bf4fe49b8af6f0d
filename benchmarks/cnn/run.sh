#!/usr/bin/env bash
# Tessel vs ONNX Runtime on ResNet-18 and MobileNetV2 (batch 1, 1 and 2 threads), without Bazel in the
# loop: uses an already built `tessel` and the exported models, making the models with Debian's
# PyTorch (tools/frontend/export_models.py) into ~/.cache/tessel/models when they are missing.
#
#   benchmarks/cnn/run.sh [--rounds R] [--iterations K] [--threads 1,2] [--json OUT.json]
#   TESSEL=/path/to/tessel MODELS=/dir/with/onnx benchmarks/cnn/run.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

tessel="${TESSEL:-$root/bazel-out/k8-opt/bin/cli/tessel}"
if [ ! -x "$tessel" ]; then
  echo "run.sh: no tessel binary at $tessel; build it once with 'bazel build //cli:tessel' or set TESSEL=" >&2
  exit 1
fi
models="${MODELS:-}"
if [ -z "$models" ]; then
  if [ -f "$root/bazel-out/k8-opt/bin/tools/frontend/models/resnet18_op17.onnx" ]; then
    models="$root/bazel-out/k8-opt/bin/tools/frontend/models"
  else
    models="$HOME/.cache/tessel/models"
    if [ ! -f "$models/mobilenet_v2_op17.onnx" ] || [ ! -f "$models/resnet18_op17.onnx" ]; then
      echo "run.sh: exporting ResNet-18 and MobileNetV2 with PyTorch into $models" >&2
      mkdir -p "$models"
      PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$root" /usr/bin/python3 tools/frontend/export_models.py \
        --out "$models" --models resnet18,mobilenet_v2 --opsets 17
    fi
  fi
fi
if [ ! -d third_party/npm/node_modules/onnxruntime-node ]; then
  echo "run.sh: onnxruntime-node is missing; run ./setup.sh --no-demo (it installs the npm peers)" >&2
  exit 1
fi
exec node benchmarks/cnn/compare.js --tessel "$tessel" --models "$models" "$@"
