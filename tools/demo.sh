#!/bin/bash
# The main job on the built-in default model: train a small CNN on scikit-learn's digits with PyTorch,
# export it to ONNX, compile it to a Tessel artifact and classify a built-in image; then the same path
# for torchvision ResNet-18, checked against PyTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/demo
mkdir -p "$out"
echo "[demo] building tessel"
bazel build //cli:tessel
tessel=bazel-bin/cli/tessel

echo "[demo] training the built-in digits CNN (scikit-learn digits, PyTorch) and exporting ONNX"
/usr/bin/python3 cnn/digits/train_digits.py --out "$out/digits" 2>&1 | grep -v -i warn || true
"$tessel" compile "$out/digits/digits_cnn.onnx" -o "$out/digits.tsl" --dim batch=1
"$tessel" inspect "$out/digits.tsl" | head -8
echo "[demo] classifying the built-in image $out/digits/digit_1_7.png (a handwritten 7)"
"$tessel" classify "$out/digits.tsl" "$out/digits/digit_1_7.png" --labels "$out/digits/labels.txt" --top-k 3

echo "[demo] torchvision ResNet-18 (seeded weights): PyTorch -> ONNX -> tessel compile -> run"
/usr/bin/python3 tools/frontend/export_models.py --out "$out" --models resnet18 --opsets 17 2>&1 | grep -v -i warn || true
"$tessel" compile "$out/resnet18_op17.onnx" -o "$out/resnet18.tsl"
"$tessel" run "$out/resnet18.tsl" --input "input=$out/resnet18.input.npy" --output-dir "$out/result"
/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
out = sys.argv[1]
got = np.load(out + "/result/output.npy"); want = np.load(out + "/resnet18.output.npy")
err = np.abs(got - want).max(); ref = np.abs(want).max()
print("[demo] Tessel vs PyTorch on ResNet-18: max |err| %.3g (%.2g of max |output|), top-1 %d vs %d"
      % (err, err / ref, got.argmax(), want.argmax()))
sys.exit(0 if err <= 1e-4 * ref else 1)
PY
"$tessel" bench "$out/resnet18.tsl" --iterations 5 | tail -1
