"""Calibration and evaluation images for ImageNet-style CNNs, made from real photos.

Run with Debian's Python: /usr/bin/python3 tools/frontend/make_photo_calibration.py --out DIR
Writes DIR/calibration.npy ([N, 3, 224, 224] f32) and DIR/evaluation.npy ([M, 3, 224, 224] f32), the
format `tessel compile --calibration FILE.npy` takes (a stack of samples for the single model input).

Source: scikit-learn's two sample photos (china.jpg, flower.jpg, 427x640, shipped with scikit-learn,
no download). Every image is a random square crop (side 96..320 pixels), an optional horizontal flip,
color jitter (brightness, contrast, saturation), a bilinear resize to 224x224 and ImageNet
normalization (mean 0.485/0.456/0.406, std 0.229/0.224/0.225), NCHW.

The two sets are pixel-disjoint: calibration crops come from the left 320 columns of each photo,
evaluation crops from the right 320 columns, with different seeds.
"""
import argparse
import os

import numpy as np
from PIL import Image

MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


def photos():
    from sklearn.datasets import load_sample_images
    return [np.asarray(im, np.uint8) for im in load_sample_images().images]


def augment(region, rng, size=224):
    """One augmented, normalized [3, size, size] f32 image from an HxWx3 u8 region."""
    h, w, _ = region.shape
    side = int(rng.integers(96, min(h, w) + 1))
    y = int(rng.integers(0, h - side + 1))
    x = int(rng.integers(0, w - side + 1))
    crop = Image.fromarray(region[y:y + side, x:x + side]).resize((size, size), Image.BILINEAR)
    img = np.asarray(crop, np.float32) / 255.0
    if rng.random() < 0.5:
        img = img[:, ::-1]
    # Color jitter, as torchvision's ColorJitter(0.3, 0.3, 0.3): brightness, contrast, saturation.
    img = img * rng.uniform(0.7, 1.3)
    gray = img @ np.array([0.299, 0.587, 0.114], np.float32)
    img = (img - gray.mean()) * rng.uniform(0.7, 1.3) + gray.mean()
    gray = (img @ np.array([0.299, 0.587, 0.114], np.float32))[..., None]
    img = (img - gray) * rng.uniform(0.7, 1.3) + gray
    img = np.clip(img, 0.0, 1.0)
    img = (img - MEAN) / STD
    return np.ascontiguousarray(img.transpose(2, 0, 1), dtype=np.float32)


def make_set(images, columns, count, seed):
    rng = np.random.default_rng(seed)
    regions = [im[:, columns] for im in images]
    out = np.empty((count, 3, 224, 224), np.float32)
    for i in range(count):
        out[i] = augment(regions[i % len(regions)], rng)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--calibration", type=int, default=300, help="calibration images")
    parser.add_argument("--evaluation", type=int, default=500, help="evaluation images")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    images = photos()
    width = images[0].shape[1]
    split = width // 2
    cal = make_set(images, slice(0, split), args.calibration, seed=1234)
    ev = make_set(images, slice(split, width), args.evaluation, seed=5678)
    np.save(os.path.join(args.out, "calibration.npy"), cal)
    np.save(os.path.join(args.out, "evaluation.npy"), ev)
    print("wrote %s/calibration.npy %s and evaluation.npy %s (mean %.3f, std %.3f)"
          % (args.out, cal.shape, ev.shape, float(cal.mean()), float(cal.std())))


if __name__ == "__main__":
    main()
