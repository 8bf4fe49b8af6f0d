"""ResNet-18 and MobileNetV2 with seeded weights whose logits depend on the image, for INT8 top-1 tests.

Run with Debian's PyTorch: /usr/bin/python3 tools/frontend/export_photo_models.py --out DIR
Writes DIR/M_photo.onnx (opset 13, symbolic batch "batch", BatchNorm folded by the exporter) for
M in resnet18, mobilenet_v2, and DIR/M_photo.margins.txt (top-1 margin statistics on the evaluation set).

Why: torchvision's random initialization (export_models.py's seeded weights) gives logits that hardly
depend on the input. On crops of real photos, seeded ResNet-18 picks one of 2 classes for every image
and seeded MobileNetV2's logits vary by ~1e-7 across images (one class always), so "top-1 agreement
with fp32" would be 100% whatever the int8 error. Without trained weights (no downloads here) we keep
the seeded convolution weights of export_models.py and, as a trained network's statistics would:
  1. re-estimate every BatchNorm's running mean/variance on photo crops (BN recalibration; the random
     affine gamma/beta of export_models.py stay), so activations keep unit scale through the depth;
  2. replace the classifier by a seeded Gaussian one over standardized pooled features (mean and std
     per feature from the same crops folded into its weights and bias), logits of std ~`--logit-std`.
The statistics images are crops of the calibration half of the photos (make_photo_calibration.py,
another seed), so the evaluation half stays unseen.
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models  # noqa: E402
import make_photo_calibration  # noqa: E402

SEEDS = {"resnet18": 0, "mobilenet_v2": 10}  # export_models.MODELS' seeds


def classifier_of(model):
    return (model, "fc") if hasattr(model, "fc") else (model.classifier, "1")


@torch.no_grad()
def photo_model(name, stats, logit_std, seed):
    model, _ = export_models.build_cnn(name, SEEDS[name])
    # 1. BatchNorm recalibration: cumulative averages of the batch statistics on the photo crops.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    for i in range(0, len(stats), 64):
        model(stats[i:i + 64])
    model.eval()
    # 2. A seeded classifier over standardized features.
    parent, attr = classifier_of(model)
    old = getattr(parent, attr)
    feats = []
    hook = old.register_forward_hook(lambda mod, inp, out: feats.append(inp[0]))
    for i in range(0, len(stats), 64):
        model(stats[i:i + 64])
    hook.remove()
    f = torch.cat(feats)
    mu, sigma = f.mean(0), f.std(0).clamp_min(1e-6)
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(old.out_features, old.in_features, generator=gen) * (logit_std / old.in_features ** 0.5)
    fc = nn.Linear(old.in_features, old.out_features)
    fc.weight.copy_(w / sigma)
    fc.bias.copy_(-(w / sigma) @ mu)
    setattr(parent, attr, fc)
    return model.eval()


def margins(model, images):
    with torch.no_grad():
        y = torch.cat([model(images[i:i + 50]) for i in range(0, len(images), 50)]).numpy()
    s = np.sort(y, 1)
    gap = s[:, -1] - s[:, -2]
    top = y.argmax(1)
    return ("top-1 classes: %d distinct over %d images (most common %.1f%%); logit std per image %.2f; "
            "top-1 - top-2 margin quantiles 1/5/25/50%%: %s (in units of the per-image logit std: %s)\n"
            % (len(set(top.tolist())), len(top), 100.0 * np.bincount(top).max() / len(top), y.std(1).mean(),
               np.percentile(gap, [1, 5, 25, 50]).round(3).tolist(),
               np.percentile(gap / y.std(1), [1, 5, 25, 50]).round(3).tolist()))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--models", default="resnet18,mobilenet_v2")
    parser.add_argument("--stats-images", type=int, default=256)
    parser.add_argument("--logit-std", type=float, default=4.0)
    parser.add_argument("--evaluation", help="an [N,3,224,224] .npy to report top-1 margins on")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)  # Bazel runs the test-data builds side by side on few cores
    photos = make_photo_calibration.photos()
    width = photos[0].shape[1]
    stats = torch.from_numpy(make_photo_calibration.make_set(photos, slice(0, width // 2), args.stats_images, seed=4242))
    for k, name in enumerate(args.models.split(",")):
        model = photo_model(name, stats, args.logit_std, seed=100 + k)
        x = stats[:1]
        path = os.path.join(args.out, name + "_photo.onnx")
        torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.EVAL)
        np.save(os.path.join(args.out, name + "_photo.input.npy"), x.numpy())
        with torch.no_grad():
            np.save(os.path.join(args.out, name + "_photo.output.npy"), model(x).numpy())
        line = "exported %s\n" % path
        if args.evaluation:
            line += name + ": " + margins(model, torch.from_numpy(np.load(args.evaluation, mmap_mode="r")[:]))
            with open(os.path.join(args.out, name + "_photo.margins.txt"), "w") as f:
                f.write(line)
        print(line, end="", flush=True)


if __name__ == "__main__":
    main()
