"""INT8 vs f32 top-1 agreement of Tessel on ResNet-18 and MobileNetV2, over photo crops (seeded weights)
or over handwritten digits (the same architectures trained briefly).

  /usr/bin/python3 benchmarks/cnn/int8_agreement.py [--set photo|digits] [--tessel PATH] [--work DIR]
      [--methods mse,entropy,...] [--names resnet18,mobilenet_v2] [--batch 50] [--extra NAME:FLAGS ...]

--set digits (work directory out/int8_digits): the models of tools/frontend/train_digits_models.py
(seeded, then trained a few epochs on scikit-learn's digits at 64x64), calibrated on the 297-image
calibration split, evaluated on the 500-image test split; also prints fp32 and int8 accuracy.

Makes (when missing) the photo calibration / evaluation sets (tools/frontend/make_photo_calibration.py)
and the photo-statistics models (tools/frontend/export_photo_models.py) under --work, compiles each
model f32 and `--quantize=int8` per calibration method (calibration: the 300 calibration crops; ranges
dumped with --dump-ranges), runs the 500 pixel-disjoint evaluation crops through both artifacts with
`tessel run` in batches, and prints per method: top-1 agreement with f32, output SQNR, agreement on
the images whose f32 top-1 margin exceeds the int8 noise, and how often the int8 top-1 is in the f32
top-5. `--extra NAME:FLAGS` adds a variant with more compile flags (e.g. 'fb35:--int8-min-sqnr 35').
Results also go to WORK/int8_agreement.json.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

import numpy as np

# quant/int8/quantize.h kInt8Pipeline
INT8_PIPELINE = "fold-shape-ops,fold-constants,simplify,cse,fold-batchnorm,fuse-conv-add,fuse-conv-activation,layout,dce"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def sh(argv, log=None):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if log:
        with open(log, "w") as f:
            f.write(r.stdout)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(argv), r.stdout[-3000:]))
    return r.stdout


def ensure_inputs(work, names, dataset):
    py = "/usr/bin/python3"
    if dataset == "digits":
        missing = [n for n in names if not os.path.exists(os.path.join(work, n + "_digits.onnx"))]
        if missing:
            print("training %s on digits (tools/frontend/train_digits_models.py, a few minutes)" % ",".join(missing),
                  flush=True)
            sh([py, os.path.join(ROOT, "tools/frontend/train_digits_models.py"), "--out", work, "--models",
                ",".join(missing)], log=os.path.join(work, "train.log"))
        return
    if not (os.path.exists(os.path.join(work, "calibration.npy")) and os.path.exists(os.path.join(work, "evaluation.npy"))):
        sh([py, os.path.join(ROOT, "tools/frontend/make_photo_calibration.py"), "--out", work])
    missing = [n for n in names if not os.path.exists(os.path.join(work, n + "_photo.onnx"))]
    if missing:
        sh([py, os.path.join(ROOT, "tools/frontend/export_photo_models.py"), "--out", work, "--models", ",".join(missing),
            "--evaluation", os.path.join(work, "evaluation.npy")])


def chunks(work, batch):
    d = os.path.join(work, "eval_b%d" % batch)
    ev = np.load(os.path.join(work, "evaluation.npy"), mmap_mode="r")
    n = (len(ev) // batch) * batch
    files = [os.path.join(d, "chunk%03d.npy" % i) for i in range(n // batch)]
    if not all(os.path.exists(f) for f in files):
        os.makedirs(d, exist_ok=True)
        for i, f in enumerate(files):
            np.save(f, np.ascontiguousarray(ev[i * batch:(i + 1) * batch]))
    return files


def run_all(tessel, tsl, files, work):
    outs = []
    out_dir = os.path.join(work, "run_out")
    for f in files:
        sh([tessel, "run", tsl, "--input", "input=" + f, "--output-dir", out_dir])
        outs.append(np.load(os.path.join(out_dir, "output.npy")))
    return np.concatenate(outs)


def sqnr(ref, test):
    return 10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / max(np.sum((ref.astype(np.float64) - test) ** 2), 1e-300))


def compare(f32, q):
    top_f, top_q = f32.argmax(1), q.argmax(1)
    s = np.sort(f32, 1)
    margin = s[:, -1] - s[:, -2]
    noise = np.sqrt(np.mean((f32 - q) ** 2))  # rms logit error
    confident = margin > 2 * noise
    top5 = np.argsort(-f32, 1)[:, :5]
    return {
        "agreement": float(np.mean(top_f == top_q)),
        "sqnr_db": float(sqnr(f32, q)),
        "rms_logit_error": float(noise),
        "confident_share": float(np.mean(confident)),
        "agreement_confident": float(np.mean((top_f == top_q)[confident])) if confident.any() else float("nan"),
        "int8_top1_in_f32_top5": float(np.mean([top_q[i] in top5[i] for i in range(len(top_q))])),
        "disagreeing_margins": sorted(float(m) for m in margin[top_f != top_q]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessel", default=os.environ.get("TESSEL", os.path.join(ROOT, "bazel-out/k8-opt/bin/cli/tessel")))
    parser.add_argument("--set", dest="dataset", choices=["photo", "digits"], default="photo")
    parser.add_argument("--work", help="default out/int8 (photo) or out/int8_digits (digits)")
    parser.add_argument("--names", default="resnet18,mobilenet_v2")
    parser.add_argument("--methods", default="mse,entropy,percentile,minmax")
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--calibration-images", type=int, default=300, help="the first N calibration crops")
    parser.add_argument("--extra", action="append", default=[], help="NAME:FLAGS, an int8 variant with extra flags")
    parser.add_argument("--flags", default="", help="compile flags for every int8 variant (e.g. '--int8-weight-bits 7')")
    args = parser.parse_args()
    names = args.names.split(",")
    if args.work is None:
        args.work = os.path.join(ROOT, "out", "int8" if args.dataset == "photo" else "int8_digits")
    os.makedirs(args.work, exist_ok=True)
    ensure_inputs(args.work, names, args.dataset)
    labels_path = os.path.join(args.work, "evaluation_labels.npy")
    labels = np.load(labels_path) if args.dataset == "digits" else None
    files = chunks(args.work, args.batch)
    results_path = os.path.join(args.work, "int8_agreement.json")
    results = json.load(open(results_path)) if os.path.exists(results_path) else {}
    cal = os.path.join(args.work, "calibration.npy")
    if args.calibration_images < 300:
        cal = os.path.join(args.work, "calibration_%d.npy" % args.calibration_images)
        if not os.path.exists(cal):
            full = np.load(os.path.join(args.work, "calibration.npy"), mmap_mode="r")
            np.save(cal, np.ascontiguousarray(full[:args.calibration_images]))
    for name in names:
        onnx = os.path.join(args.work, name + "_%s.onnx" % args.dataset)
        base = os.path.join(args.work, name)
        ref_path = base + ".f32_logits.npy"
        if not os.path.exists(ref_path):
            sh([args.tessel, "compile", onnx, "-o", base + "_f32_b%d.tsl" % args.batch, "--dim", "batch=%d" % args.batch])
            np.save(ref_path, run_all(args.tessel, base + "_f32_b%d.tsl" % args.batch, files, args.work))
        f32 = np.load(ref_path)
        variants = [(m, ["--calibration-method", m] + shlex.split(args.flags)) for m in args.methods.split(",") if m]
        for e in args.extra:
            label, flags = e.split(":", 1)
            variants.append((label, shlex.split(flags) + shlex.split(args.flags)))
        for label, flags in variants:
            # Calibration runs once per variant (at batch 1, also the benchmark artifact, ranges dumped);
            # the batch-B artifact is compiled from the dumped table (bit-identical lowering, no re-calibration).
            ranges = base + "_%s_c%d.ranges" % (label, args.calibration_images)
            b1 = base + "_int8_%s_b1.tsl" % label
            t0 = time.time()
            # Again when tessel is newer than the batch-1 artifact (the benchmark's): its kernels and its
            # --int8-fallback choices are the compiler's.
            stale = not os.path.exists(b1) or os.path.getmtime(args.tessel) > os.path.getmtime(b1)
            if stale or not os.path.exists(ranges):
                sh([args.tessel, "compile", onnx, "-o", b1, "--dim", "batch=1",
                    "--quantize=int8", "--calibration", cal, "--dump-ranges", ranges] + flags,
                   log=base + "_int8_%s_c%d.log" % (label, args.calibration_images))
            compile_s = time.time() - t0
            keep = [f.split("=", 1)[1] if "=" in f else flags[k + 1] for k, f in enumerate(flags) if f.startswith("--keep-fp32")]
            log = open(base + "_int8_%s_c%d.log" % (label, args.calibration_images)).read()
            fell = [l.split(": ", 1)[1].strip() for l in log.splitlines() if l.startswith("fell back")]
            keep = ",".join(keep + fell)
            # The weight width the batch-1 compile used: --int8-weight-bits 7, or its auto default on a host
            # without VNNI (the compile log says so).
            bits = 7 if ("--int8-weight-bits 7" in " ".join(flags).replace("=", " ") or "(7 bits)" in log) else 8
            opts = "table=" + ranges + (",keep-fp32=" + keep if keep else "") + ",weight-bits=%d" % bits
            tsl = base + "_int8_%s_b%d.tsl" % (label, args.batch)
            sh([args.tessel, "compile", onnx, "-o", tsl, "--dim", "batch=%d" % args.batch,
                "--pipeline", INT8_PIPELINE + ",quantize-int8{" + opts + "},dce"])
            q = run_all(args.tessel, tsl, files, args.work)
            np.save(base + ".int8_%s_logits.npy" % label, q)
            r = compare(f32, q)
            if labels is not None:
                n = len(f32)
                r["f32_accuracy"] = float(np.mean(f32.argmax(1) == labels[:n]))
                r["int8_accuracy"] = float(np.mean(q.argmax(1) == labels[:n]))
            r["compile_s"] = compile_s
            r["flags"] = flags
            results["%s/%s/%s" % (args.dataset, name, label)] = r
            print("%-14s %-12s top-1 agreement %6.2f%%  SQNR %5.1f dB  rms err %.3f  confident %5.1f%% -> %6.2f%%  "
                  "in f32 top-5 %6.2f%%  (compile %.0fs)" % (
                      name, label, 100 * r["agreement"], r["sqnr_db"], r["rms_logit_error"], 100 * r["confident_share"],
                      100 * r["agreement_confident"], 100 * r["int8_top1_in_f32_top5"], compile_s), flush=True)
            if labels is not None:
                print("%-14s %-12s accuracy on %d test digits: f32 %.2f%%, int8 %.2f%%" % (
                    name, label, len(f32), 100 * r["f32_accuracy"], 100 * r["int8_accuracy"]), flush=True)
            with open(results_path, "w") as f:
                json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
