"""Trains Tessel's built-in default CNN on scikit-learn's digits (1797 real 8x8 handwritten digits that
Debian ships) and exports it to ONNX.

  /usr/bin/python3 cnn/digits/train_digits.py --out DIR

Writes DIR/digits_cnn.onnx (input "image" f32[batch,1,8,8], pixel values 0..1), DIR/labels.txt, the
seeded splits as .npy (train 1000, calibration 297, test 500: images and labels), DIR/test_accuracy.txt
(PyTorch's fp32 top-1 on the test split) and a few test digits as PNG files (ink bright on black,
64x64) for `tessel classify`.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.conv3 = nn.Conv2d(32, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.conv3(x) + x)  # a residual, as in ResNets
        return self.fc(torch.flatten(x, 1))


def split_indices(n):
    """The seeded train (1000) / calibration (297) / test (the rest) split of the n digits."""
    perm = np.random.default_rng(0).permutation(n)
    return {"train": perm[:1000], "calibration": perm[1000:1297], "test": perm[1297:]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--epochs", type=int, default=40)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    splits = split_indices(len(x))
    for name, idx in splits.items():
        np.save(os.path.join(args.out, "%s_images.npy" % name), x[idx])
        np.save(os.path.join(args.out, "%s_labels.npy" % name), y[idx])

    model = DigitsCNN()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    xt, yt = torch.from_numpy(x[splits["train"]]), torch.from_numpy(y[splits["train"]])
    start = time.time()
    for epoch in range(args.epochs):
        model.train()
        order = torch.randperm(len(xt))
        for i in range(0, len(xt), 64):
            b = order[i:i + 64]
            loss = F.cross_entropy(model(xt[b]), yt[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(x[splits["test"]])).argmax(1).numpy()
    acc = float((pred == y[splits["test"]]).mean())
    with open(os.path.join(args.out, "test_accuracy.txt"), "w") as f:
        f.write("%.4f\n" % acc)
    with open(os.path.join(args.out, "labels.txt"), "w") as f:
        f.write("".join("digit %d\n" % d for d in range(10)))
    torch.onnx.export(model, torch.from_numpy(x[:1]), os.path.join(args.out, "digits_cnn.onnx"), opset_version=13,
                      input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                      training=torch.onnx.TrainingMode.PRESERVE)
    from PIL import Image
    for k in range(3):
        i = splits["test"][k]
        img = Image.fromarray((x[i, 0] * 255).astype(np.uint8)).resize((64, 64), Image.NEAREST)
        img.save(os.path.join(args.out, "digit_%d_%d.png" % (k, y[i])))
    print("trained digits CNN in %.1fs: test top-1 %.2f%% (%d images)" % (time.time() - start, 100 * acc,
                                                                           len(splits["test"])))


if __name__ == "__main__":
    main()
