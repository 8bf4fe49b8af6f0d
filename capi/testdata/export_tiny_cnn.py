"""Exports a tiny seeded CNN (no training) to ONNX with an input image and PyTorch's output: the model the
C API, its example and the Python bindings are checked on.

/usr/bin/python3 capi/testdata/export_tiny_cnn.py --out DIR writes
  DIR/tiny_cnn.onnx      input "input" f32[1,3,16,16] -> output "logits" f32[1,10]
  DIR/image.ppm          a 16x16 RGB image (binary PPM)
  DIR/input.npy          that image as the model's input: NCHW, pixels / 255
  DIR/torch_output.npy   PyTorch's logits for input.npy (eval mode, float32)
  DIR/labels.txt         ten class names
  DIR/expected_top1.txt  the label PyTorch ranks first
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn


class TinyCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(16, 10))

    def forward(self, x):
        return self.body(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(37)
    model = TinyCnn().eval()
    bn = model.body[1]
    gen = torch.Generator().manual_seed(38)
    bn.running_mean.copy_(torch.randn(8, generator=gen) * 0.1)
    bn.running_var.copy_(torch.rand(8, generator=gen) * 0.5 + 0.75)
    rng = np.random.default_rng(39)
    # A smooth gradient plus noise, so that the classes' logits differ clearly.
    yy, xx = np.mgrid[0:16, 0:16]
    image = np.stack([xx * 16, yy * 16, (xx + yy) * 8], axis=-1) + rng.integers(0, 32, size=(16, 16, 3))
    image = np.clip(image, 0, 255).astype(np.uint8)
    with open(os.path.join(args.out, "image.ppm"), "wb") as f:
        f.write(b"P6\n16 16\n255\n" + image.tobytes())
    x = torch.from_numpy(image.astype(np.float32).transpose(2, 0, 1)[None] / 255.0)
    with torch.no_grad():
        y = model(x)
    np.save(os.path.join(args.out, "input.npy"), x.numpy())
    np.save(os.path.join(args.out, "torch_output.npy"), y.numpy())
    labels = ["ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen", "ibis", "jay"]
    with open(os.path.join(args.out, "labels.txt"), "w") as f:
        f.write("\n".join(labels) + "\n")
    with open(os.path.join(args.out, "expected_top1.txt"), "w") as f:
        f.write(labels[int(y.argmax())] + "\n")
    torch.onnx.export(model, x, os.path.join(args.out, "tiny_cnn.onnx"), input_names=["input"],
                      output_names=["logits"], opset_version=13)


if __name__ == "__main__":
    main()
