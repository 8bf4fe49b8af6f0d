#!/usr/bin/env bash
# Tessel vs ONNX Runtime on ResNet-18 and MobileNetV2 (batch 1, 1 and 2 threads), without Bazel in the
# loop: uses an already built `tessel` and the exported models, making the models with Debian's
# PyTorch (tools/frontend/export_models.py) into ~/.cache/tessel/models when they are missing.
# With --zoo, the model zoo instead (tools/zoo: the zoo test's exports, made when missing; 1 thread,
# -O3, each model's newest opset), with the ops left on reference kernels and their share of the time.
#
#   benchmarks/cnn/run.sh [--rounds R] [--iterations K] [--threads 1,2] [--json OUT.json]
#   benchmarks/cnn/run.sh --zoo [--names resnet50,raft_small] [--rounds 5] [--iterations auto] [--json OUT.json]
#   TESSEL=/path/to/tessel MODELS=/dir/with/onnx benchmarks/cnn/run.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

tessel="${TESSEL:-$root/bazel-out/k8-opt/bin/cli/tessel}"
if [ ! -x "$tessel" ]; then
  echo "run.sh: no tessel binary at $tessel; build it once with 'bazel build //cli:tessel' or set TESSEL=" >&2
  exit 1
fi
if [ ! -d third_party/npm/node_modules/onnxruntime-node ]; then
  echo "run.sh: onnxruntime-node is missing; run ./setup.sh --no-demo (it installs the npm peers)" >&2
  exit 1
fi
if [ "${1:-}" = "--zoo" ]; then
  shift
  # The zoo test's cache (tools/zoo/zoo_test.py: per PyTorch version and exporter hash); its last line
  # of output is the folder.
  names="$(PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tools/zoo/export_zoo.py --out - --list | cut -d' ' -f1 | paste -sd,)"
  args=("$@")
  for ((i = 0; i + 1 < ${#args[@]}; i++)); do
    if [ "${args[i]}" = "--names" ]; then names="${args[i + 1]}"; fi
  done
  zoo="$(cd tools/zoo && PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=1 /usr/bin/python3 -c \
    'import sys, zoo_test; print(zoo_test.ensure_exports(sys.argv[1].split(",")))' "$names" | tail -n 1)"
  exec node benchmarks/cnn/compare.js --tessel "$tessel" --zoo "$zoo" --names "$names" "$@"
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
exec node benchmarks/cnn/compare.js --tessel "$tessel" --models "$models" "$@"
