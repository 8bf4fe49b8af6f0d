"""Writes the single-operator cases for GridSample, RoiAlign and NonMaxSuppression (see optest_lib.py for
the format). Expected outputs come from PyTorch and torchvision, never from Tessel:
  GridSample         torch.nn.functional.grid_sample, every mode x padding_mode x align_corners
  RoiAlign (avg)     torchvision.ops.roi_align (aligned=True is half_pixel, False output_half_pixel)
  RoiAlign (max)     np_roi_align_max, a numpy transcription of ONNX Runtime's max mode (torchvision has
                     none), itself checked against torchvision in avg mode
  NonMaxSuppression  torchvision.ops.nms per (batch, class), after the score threshold, cut to
                     max_output_boxes_per_class
  If                 the pattern of torchvision's batched NMS (no boxes: an empty result, else NMS) with
                     the condition a graph input, both ways; and elementwise branches (numpy)
  Unique             numpy.unique (indices, inverse, counts) on floats and int64, flattened and along an
                     axis, sorted and in order of first occurrence
  Loop               a trip count from a graph input with a carried sum and a scan output, a condition
                     that stops early, and a carried value that grows by one row per iteration (Mask
                     R-CNN's mask pasting), computed by the same loops in numpy

Tolerances: atol = rtol = 1e-4 for the float cases (PyTorch samples in float32, the reference kernels in
double); NonMaxSuppression's indices are exact.

Usage: /usr/bin/python3 gen_detection_cases.py --out DIR
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest_lib  # noqa: E402

TOL = 1e-4
_rng = np.random.default_rng(20261127)


def rand(*shape, lo=-1.0, hi=1.0):
    return _rng.uniform(lo, hi, size=shape).astype(np.float32)


class Writer:
    """CaseWriter that has onnx.checker (strict shape inference) validate each model with its expected
    output shapes, for the opsets Debian's onnx 1.12 knows (up to 17)."""

    def __init__(self, out_dir):
        self.w = optest_lib.CaseWriter(out_dir)
        self.out_dir = out_dir

    def add(self, name, op_type, inputs, outputs, attrs=None, opset=16, atol=TOL, rtol=TOL, scope=()):
        self.w.add(name, op_type, inputs, outputs, attrs=attrs, opset=opset, atol=atol, rtol=rtol, scope=scope)
        if opset > onnx.defs.onnx_opset_version():
            return
        model = onnx.load(os.path.join(self.out_dir, name + ".onnx"))
        del model.graph.output[:]
        for oname, arr in outputs:
            model.graph.output.append(onnx.helper.make_tensor_value_info(
                oname, optest_lib._NP_TO_ONNX[arr.dtype], list(arr.shape)))
        onnx.checker.check_model(model, full_check=True)


def grid_sample_cases(cw):
    x = rand(2, 3, 5, 7, lo=-2, hi=2)
    # Beyond [-1, 1] so that every padding mode matters.
    grid = rand(2, 4, 6, 2, lo=-1.3, hi=1.3)
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for align in (0, 1):
                want = F.grid_sample(torch.from_numpy(x), torch.from_numpy(grid), mode=mode, padding_mode=padding,
                                     align_corners=bool(align)).numpy()
                cw.add("gridsample_%s_%s_align%d" % (mode, padding, align), "GridSample",
                       [("x", x, False), ("grid", grid, False)], [("y", want)],
                       attrs={"mode": mode, "padding_mode": padding, "align_corners": align})
    # Defaults (bilinear, zeros, align_corners 0) and a constant grid. Opset 20's mode names (linear,
    # cubic) are checked in detection_test.cc and //graph/onnx:new_opsets_test.
    g = rand(1, 3, 2, 2, lo=-1.1, hi=1.1)
    x1 = rand(1, 2, 4, 3)
    cw.add("gridsample_defaults_const_grid", "GridSample", [("x", x1, False), ("grid", g, True)],
           [("y", F.grid_sample(torch.from_numpy(x1), torch.from_numpy(g), align_corners=False).numpy())])


def np_roi_align_max(x, rois, idx, oh, ow, scale, ratio, half_pixel):
    """ONNX Runtime's RoiAlign max mode in numpy: per sample, the largest of the four weighted corners;
    per bin, the largest sample. With max replaced by sums and a mean it is torchvision's avg mode."""
    return _np_roi_align(x, rois, idx, oh, ow, scale, ratio, half_pixel, True)


def _np_roi_align(x, rois, idx, oh, ow, scale, ratio, half_pixel, use_max):
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c, oh, ow), np.float64)
    off = 0.5 if half_pixel else 0.0
    for r, (box, b) in enumerate(zip(rois.astype(np.float64), idx)):
        x1, y1, x2, y2 = box * scale - off
        rw, rh = x2 - x1, y2 - y1
        if not half_pixel:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = ratio if ratio > 0 else math.ceil(rh / oh)
        gw = ratio if ratio > 0 else math.ceil(rw / ow)
        for ph in range(oh):
            for pw in range(ow):
                vals = []
                for iy in range(gh):
                    yy = y1 + ph * rh / oh + (iy + 0.5) * rh / oh / gh
                    for ix in range(gw):
                        xx = x1 + pw * rw / ow + (ix + 0.5) * rw / ow / gw
                        if yy < -1 or yy > h or xx < -1 or xx > w:
                            vals.append(np.zeros(c))
                            continue
                        yy0, xx0 = max(yy, 0.0), max(xx, 0.0)
                        ylo, xlo = int(yy0), int(xx0)
                        if ylo >= h - 1:
                            ylo = yhi = h - 1
                            yy0 = float(ylo)
                        else:
                            yhi = ylo + 1
                        if xlo >= w - 1:
                            xlo = xhi = w - 1
                            xx0 = float(xlo)
                        else:
                            xhi = xlo + 1
                        ly, lx = yy0 - ylo, xx0 - xlo
                        corners = np.stack([(1 - ly) * (1 - lx) * x[b, :, ylo, xlo], (1 - ly) * lx * x[b, :, ylo, xhi],
                                            ly * (1 - lx) * x[b, :, yhi, xlo], ly * lx * x[b, :, yhi, xhi]])
                        vals.append(corners.max(axis=0) if use_max else corners.sum(axis=0))
                if not vals:  # a zero-extent region has no samples: 0, as in torchvision
                    continue
                vals = np.stack(vals)
                out[r, :, ph, pw] = vals.max(axis=0) if use_max else vals.sum(axis=0) / max(gh * gw, 1)
    return out.astype(np.float32)


def roi_align_cases(cw):
    x = rand(2, 3, 10, 12, lo=-2, hi=2)
    # Regions inside, across the border, degenerate (zero width) and flipped-free; in image pixels.
    rois = np.array([[0.5, 1.0, 7.5, 8.0], [3.2, 0.0, 11.9, 4.4], [-2.0, -1.5, 5.0, 3.0], [6.0, 6.0, 6.0, 9.5],
                     [1.1, 2.2, 23.0, 19.0]], np.float32)
    idx = np.array([0, 1, 1, 0, 1], np.int64)
    tv_boxes = torch.cat([torch.from_numpy(idx).float()[:, None], torch.from_numpy(rois)], dim=1)
    for aligned in (False, True):
        for oh, ow, scale, ratio in ((3, 4, 1.0, 2), (2, 2, 0.5, 0), (5, 3, 0.75, 1)):
            want = torchvision.ops.roi_align(torch.from_numpy(x), tv_boxes, (oh, ow), spatial_scale=scale,
                                             sampling_ratio=ratio, aligned=aligned).numpy()
            np.testing.assert_allclose(
                _np_roi_align(x, rois, idx, oh, ow, scale, ratio, aligned, False), want, rtol=1e-5, atol=1e-5)
            mode = "half_pixel" if aligned else "output_half_pixel"
            cw.add("roialign_avg_%s_%dx%d_s%d_r%d" % (mode, oh, ow, scale * 100, ratio), "RoiAlign",
                   [("x", x, False), ("rois", rois, False), ("batch_indices", idx, False)], [("y", want)],
                   attrs={"output_height": oh, "output_width": ow, "spatial_scale": scale, "sampling_ratio": ratio,
                          "coordinate_transformation_mode": mode})
            want_max = np_roi_align_max(x, rois, idx, oh, ow, scale, ratio, aligned)
            cw.add("roialign_max_%s_%dx%d_s%d_r%d" % (mode, oh, ow, scale * 100, ratio), "RoiAlign",
                   [("x", x, False), ("rois", rois, False), ("batch_indices", idx, False)], [("y", want_max)],
                   attrs={"output_height": oh, "output_width": ow, "spatial_scale": scale, "sampling_ratio": ratio,
                          "coordinate_transformation_mode": mode, "mode": "max"})
    # Opset 10 has no coordinate_transformation_mode and samples as output_half_pixel; defaults 1x1.
    want = torchvision.ops.roi_align(torch.from_numpy(x), tv_boxes, (1, 1), aligned=False).numpy()
    cw.add("roialign_opset10_defaults", "RoiAlign",
           [("x", x, False), ("rois", rois, True), ("batch_indices", idx, True)], [("y", want)], opset=10)


def nms_reference(boxes, scores, max_per_class, iou, score_threshold, center):
    """torchvision.ops.nms per (batch, class) on the candidates above score_threshold, first
    max_per_class kept, as (batch, class, box) rows."""
    rows = []
    corners = boxes.copy()
    if center:
        xc, yc, w, h = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
        corners = np.stack([xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2], axis=-1)
    else:
        corners = boxes[..., [1, 0, 3, 2]]  # ONNX [y1, x1, y2, x2] -> torchvision [x1, y1, x2, y2]
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            cand = np.arange(scores.shape[2])
            if score_threshold is not None:
                cand = cand[scores[b, c] > score_threshold]
            keep = torchvision.ops.nms(torch.from_numpy(corners[b, cand]), torch.from_numpy(scores[b, c, cand]), iou)
            rows += [[b, c, int(cand[k])] for k in keep.numpy()[:max_per_class]]
    return np.array(rows, np.int64).reshape(-1, 3)


def random_boxes(b, s):
    y1, x1 = rand(b, s, lo=0, hi=10), rand(b, s, lo=0, hi=10)
    h, w = rand(b, s, lo=0.5, hi=4), rand(b, s, lo=0.5, hi=4)
    return np.stack([y1, x1, y1 + h, x1 + w], axis=-1).astype(np.float32)


def nms_cases(cw):
    boxes = random_boxes(2, 40)
    # Distinct scores: torchvision's order among equal scores is unspecified.
    scores = _rng.permutation(2 * 3 * 40).reshape(2, 3, 40).astype(np.float32) / 240
    for name, max_out, iou, st in (("nms_iou05_max5", 5, 0.5, None), ("nms_iou03_score", 100, 0.3, 0.4),
                                   ("nms_iou0_max3", 3, 0.0, 0.2), ("nms_iou07_all", 40, 0.7, None)):
        inputs = [("boxes", boxes, False), ("scores", scores, False),
                  ("max_output_boxes_per_class", np.array([max_out], np.int64), True),
                  ("iou_threshold", np.array([iou], np.float32), True)]
        if st is not None:
            inputs.append(("score_threshold", np.array([st], np.float32), True))
        cw.add(name, "NonMaxSuppression", inputs,
               [("selected_indices", nms_reference(boxes, scores, max_out, iou, st, False))], opset=11, atol=0,
               rtol=0)
    # Center-point boxes, constant inputs (the count is then known at import), and the default
    # max_output_boxes_per_class of 0, which selects nothing.
    c = np.concatenate([rand(1, 25, 2, lo=0, hi=8), rand(1, 25, 2, lo=1, hi=4)], axis=-1).astype(np.float32)
    sc = (_rng.permutation(25).reshape(1, 1, 25) / 25).astype(np.float32)
    cw.add("nms_center_point_const", "NonMaxSuppression",
           [("boxes", c, True), ("scores", sc, True), ("max_output_boxes_per_class", np.array(10, np.int64), True),
            ("iou_threshold", np.array(0.4, np.float32), True)],
           [("selected_indices", nms_reference(c, sc, 10, 0.4, None, True))], attrs={"center_point_box": 1},
           opset=11, atol=0, rtol=0)
    cw.add("nms_default_max_output", "NonMaxSuppression", [("boxes", boxes, False), ("scores", scores, False)],
           [("selected_indices", np.zeros((0, 3), np.int64))], opset=11, atol=0, rtol=0)


def if_cases(cw):
    """If with a run-time condition (a graph input): each branch reads the enclosing graph's values."""
    from onnx import helper, numpy_helper

    def branch(name, nodes, out, initializers=()):
        return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(out, onnx.TensorProto.UNDEFINED, None)],
                                 initializer=list(initializers))

    x = rand(3, 4)
    then_g = branch("then", [helper.make_node("Add", ["x", "x"], ["twice"])], "twice")
    else_g = branch("else", [helper.make_node("Neg", ["x"], ["negated"])], "negated")
    for cond in (True, False):
        cw.add("if_elementwise_%s" % ("then" if cond else "else"), "If",
               [("cond", np.array(cond), False)], [("y", x + x if cond else -x)],
               attrs={"then_branch": then_g, "else_branch": else_g}, opset=13, atol=0, rtol=0, scope=[("x", x)])
    # torchvision's batched NMS: if there are no boxes, an empty [0, 3]; else NonMaxSuppression. The
    # result's row count differs between the branches and with the data.
    boxes = random_boxes(1, 30)
    scores = rand(1, 2, 30, lo=0, hi=1)
    empty = branch("no_boxes", [helper.make_node("Constant", [], ["none"], value=numpy_helper.from_array(
        np.zeros((0, 3), np.int64)))], "none")
    nms = branch("nms", [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou"], ["selected"])],
                 "selected", [numpy_helper.from_array(np.array([8], np.int64), "max_out"),
                              numpy_helper.from_array(np.array([0.5], np.float32), "iou")])
    for cond in (True, False):
        want = np.zeros((0, 3), np.int64) if cond else nms_reference(boxes, scores, 8, 0.5, None, False)
        cw.add("if_batched_nms_%s" % ("empty" if cond else "selected"), "If",
               [("is_empty", np.array(cond), False)], [("keep", want)],
               attrs={"then_branch": empty, "else_branch": nms}, opset=13, atol=0, rtol=0,
               scope=[("boxes", boxes), ("scores", scores)])


def loop_cases(cw):
    """Loop: body inputs (iteration, cond, carried...), outputs (cond, carried..., scans...); the body reads
    the enclosing x."""
    from onnx import helper, numpy_helper
    T = onnx.TensorProto

    def body(nodes, inputs, outputs, initializers=()):
        return helper.make_graph(nodes, "body", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                                 [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
                                 initializer=list(initializers))

    x = rand(2, 3)
    # acc <- acc + x * i, scanned each iteration; M from a graph input.
    g = body([helper.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
              helper.make_node("Mul", ["x", "fi"], ["xi"]),
              helper.make_node("Add", ["acc", "xi"], ["acc_next"]),
              helper.make_node("Identity", ["cond"], ["cond_out"]),
              helper.make_node("Identity", ["acc_next"], ["scanned"])],
             [("i", T.INT64, []), ("cond", T.BOOL, []), ("acc", T.FLOAT, [2, 3])],
             [("cond_out", T.BOOL), ("acc_next", T.FLOAT), ("scanned", T.FLOAT)])
    for trips in (0, 1, 4):
        acc, scans = np.zeros((2, 3), np.float32), []
        for i in range(trips):
            acc = (acc + x * np.float32(i)).astype(np.float32)
            scans.append(acc)
        stacked = np.stack(scans) if scans else np.zeros((0, 2, 3), np.float32)
        cw.add("loop_sum_%d_trips" % trips, "Loop",
               [("M", np.array(trips, np.int64), False), None, ("acc0", np.zeros((2, 3), np.float32), False)],
               [("acc", acc), ("scans", stacked)], attrs={"body": g}, opset=13, scope=[("x", x)])
    # The body's condition stops the loop: i < 2 holds for iterations 0 and 1, so three run of at most 10.
    g = body([helper.make_node("Less", ["i", "two"], ["cond_out"]),
              helper.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
              helper.make_node("Add", ["acc", "fi"], ["acc_next"])],
             [("i", T.INT64, []), ("cond", T.BOOL, []), ("acc", T.FLOAT, [])],
             [("cond_out", T.BOOL), ("acc_next", T.FLOAT)], [numpy_helper.from_array(np.array(2, np.int64), "two")])
    cw.add("loop_condition_stops", "Loop",
           [("M", np.array(10, np.int64), False), ("cond", np.array(True), False), ("acc0", np.array(0.5, np.float32), False)],
           [("acc", np.array(0.5 + 0 + 1 + 2, np.float32))], attrs={"body": g}, opset=13)
    # A carried value that grows: rows <- Concat(rows, x[0] * i) from an empty [0, 3].
    g = body([helper.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
              helper.make_node("Gather", ["x", "zero"], ["row"], axis=0),
              helper.make_node("Mul", ["row", "fi"], ["scaled"]),
              helper.make_node("Unsqueeze", ["scaled", "axes"], ["row2"]),
              helper.make_node("Concat", ["rows", "row2"], ["rows_next"], axis=0),
              helper.make_node("Identity", ["cond"], ["cond_out"])],
             [("i", T.INT64, []), ("cond", T.BOOL, []), ("rows", T.FLOAT, ["n", 3])],
             [("cond_out", T.BOOL), ("rows_next", T.FLOAT)],
             [numpy_helper.from_array(np.array(0, np.int64), "zero"), numpy_helper.from_array(np.array([0], np.int64), "axes")])
    rows = np.stack([x[0] * np.float32(i) for i in range(5)]).astype(np.float32)
    cw.add("loop_growing_carried", "Loop",
           [("M", np.array(5, np.int64), False), None, ("rows0", np.zeros((0, 3), np.float32), False)],
           [("rows", rows)], attrs={"body": g}, opset=13, scope=[("x", x)])


def unique_cases(cw):
    """Unique against numpy.unique; sorted=0 reorders numpy's sorted groups by first occurrence."""
    def expected(x, axis, sort):
        y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
        inv = inv.reshape(-1)
        if not sort:
            order = np.argsort(idx, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(len(order))
            y = np.take(y, order, axis=0 if axis is None else axis)
            idx, cnt, inv = idx[order], cnt[order], rank[inv]
        return np.ascontiguousarray(y), idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)

    r = np.random.default_rng(11)
    floats = r.integers(0, 5, size=(3, 4)).astype(np.float32) * 0.5
    ints = r.integers(-3, 3, size=(4, 3)).astype(np.int64)
    ints[2] = ints[0]  # a repeated row
    for name, x, axis in [("float_flat", floats, None), ("int_axis0", ints, 0), ("float_axis1", floats, 1)]:
        for sort in (1, 0):
            y, idx, inv, cnt = expected(x, axis, sort)
            attrs = {"sorted": sort}
            if axis is not None:
                attrs["axis"] = axis
            cw.add("unique_%s_%s" % (name, "sorted" if sort else "first"), "Unique", [("x", x, False)],
                   [("y", y), ("indices", idx), ("inverse_indices", inv), ("counts", cnt)], attrs=attrs, opset=11,
                   atol=0, rtol=0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    cw = Writer(args.out)
    grid_sample_cases(cw)
    roi_align_cases(cw)
    nms_cases(cw)
    if_cases(cw)
    loop_cases(cw)
    unique_cases(cw)
    cw.w.finish()


if __name__ == "__main__":
    main()
