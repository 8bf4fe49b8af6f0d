#!/bin/bash
# The main job on the built-in default model: export ResNet-18 from PyTorch to ONNX, inspect it,
# run it with Tessel and compare with PyTorch's output.
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/demo
mkdir -p "$out"
echo "[demo] building tessel"
bazel build //tools:tessel
tessel=bazel-bin/tools/tessel
echo "[demo] exporting torchvision ResNet-18 (seeded weights) to ONNX with PyTorch"
/usr/bin/python3 tools/frontend/export_models.py --out "$out" --models resnet18 --opsets 17 2>&1 | grep -v -i warn || true
echo "[demo] tessel inspect (summary)"
"$tessel" inspect "$out/resnet18_op17.onnx" --no-ir --dot "$out/resnet18.dot"
echo "[demo] tessel run"
"$tessel" run "$out/resnet18_op17.onnx" --input "input=$out/resnet18.input.npy" --output-dir "$out/result"
/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
out = sys.argv[1]
got = np.load(out + "/result/output.npy"); want = np.load(out + "/resnet18.output.npy")
err = np.abs(got - want).max(); ref = np.abs(want).max()
print("[demo] Tessel vs PyTorch: max |err| %.3g (%.2g of max |output|), top-1 %d vs %d"
      % (err, err / ref, got.argmax(), want.argmax()))
sys.exit(0 if err <= 1e-4 * ref else 1)
PY
