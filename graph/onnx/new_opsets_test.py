#!/usr/bin/python3
"""Models of opsets 19, 20 and 21, built with the onnx helper, through `tessel run` against numpy; and
the operators, attributes and element types of those opsets that Tessel refuses, named in the error.

Debian's python3-onnx (1.12) knows opsets up to 17, so the models are written without its checker and
the float8/int4 element types are given by number. Usage: new_opsets_test.py (TESSEL_CLI names the
tessel command)."""
import math
import os
import subprocess
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TESSEL = os.environ.get("TESSEL_CLI", "bazel-bin/cli/tessel")
FLOAT8E4M3FN, INT4 = 17, 22  # onnx.TensorProto.DataType values newer than onnx 1.12


def make_model(opset, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model


def f32_info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def run_tessel(model, feeds):
    """(returncode, stderr, {output name: array})."""
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "model.onnx")
        onnx.save(model, path)
        args = [TESSEL, "run", path, "--output-dir", os.path.join(work, "out")]
        for name, value in feeds.items():
            np.save(os.path.join(work, name + ".npy"), value)
            args += ["--input", "%s=%s" % (name, os.path.join(work, name + ".npy"))]
        r = subprocess.run(args, capture_output=True, text=True)
        outs = {}
        if r.returncode == 0:
            for o in model.graph.output:
                outs[o.name] = np.load(os.path.join(work, "out", o.name + ".npy"))
        return r.returncode, r.stderr, outs


def bilinear_grid_sample(x, grid):
    """GridSample linear, zeros padding, align_corners=0, for X [N, C, H, W]."""
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape
    y = np.zeros((n, c, ho, wo), np.float64)
    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                gx = ((grid[b, i, j, 0] + 1) * w - 1) / 2
                gy = ((grid[b, i, j, 1] + 1) * h - 1) / 2
                x0, y0 = math.floor(gx), math.floor(gy)
                for yy, wy in ((y0, 1 - (gy - y0)), (y0 + 1, gy - y0)):
                    for xx, wx in ((x0, 1 - (gx - x0)), (x0 + 1, gx - x0)):
                        if 0 <= yy < h and 0 <= xx < w:
                            y[b, :, i, j] += wy * wx * x[b, :, yy, xx]
    return y


class NewOpsetsTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(19)

    def assert_runs(self, model, feeds, want, atol=1e-5):
        rc, err, outs = run_tessel(model, feeds)
        self.assertEqual(rc, 0, err)
        for name, value in want.items():
            got = outs[name]
            self.assertEqual(got.shape, value.shape, name)
            self.assertEqual(got.dtype, value.dtype, name)
            np.testing.assert_allclose(got.astype(np.float64), value.astype(np.float64), rtol=0, atol=atol,
                                       err_msg=name)

    def assert_refused(self, model, feeds, *fragments):
        rc, err, _ = run_tessel(model, feeds)
        self.assertNotEqual(rc, 0)
        for f in fragments:
            self.assertIn(f, err)

    # Opset 19: Cast `saturate`, AveragePool `dilations`, Pad and Resize of opset 18/19.
    def test_opset19_cast_saturate_and_dilated_average_pool(self):
        x = self.rng.standard_normal((1, 2, 7, 7)).astype(np.float32)
        nodes = [
            helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16, saturate=1),
            helper.make_node("Cast", ["h"], ["xf"], to=TensorProto.FLOAT, saturate=0),
            helper.make_node("AveragePool", ["xf"], ["y"], kernel_shape=[2, 2], dilations=[2, 2]),
        ]
        model = make_model(19, nodes, [f32_info("x", [1, 2, 7, 7])], [f32_info("y", None), f32_info("xf", None)])
        xf = x.astype(np.float16).astype(np.float32)
        want = np.zeros((1, 2, 5, 5), np.float32)
        for i in range(5):
            for j in range(5):
                want[:, :, i, j] = xf[:, :, i:i + 3:2, j:j + 3:2].mean(axis=(2, 3))
        self.assert_runs(model, {"x": x}, {"y": want, "xf": xf})

    def test_opset19_pad_with_axes_and_resize_sizes(self):
        x = self.rng.standard_normal((1, 1, 4, 5)).astype(np.float32)
        pads = numpy_helper.from_array(np.array([1, 2, 1, 0], np.int64), "pads")
        axes = numpy_helper.from_array(np.array([2, 3], np.int64), "axes")
        sizes = numpy_helper.from_array(np.array([1, 1, 12, 14], np.int64), "sizes")
        nodes = [
            helper.make_node("Pad", ["x", "pads", "", "axes"], ["p"], mode="reflect"),
            helper.make_node("Resize", ["p", "", "", "sizes"], ["y"], mode="nearest", antialias=0,
                             keep_aspect_ratio_policy="stretch", coordinate_transformation_mode="asymmetric",
                             nearest_mode="floor"),
        ]
        model = make_model(19, nodes, [f32_info("x", [1, 1, 4, 5])], [f32_info("y", None), f32_info("p", None)],
                           [pads, axes, sizes])
        p = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 0)), mode="reflect")
        rows = np.floor(np.arange(12) * (6 / 12)).astype(int)
        cols = np.floor(np.arange(14) * (7 / 14)).astype(int)
        self.assert_runs(model, {"x": x}, {"p": p, "y": p[:, :, rows][:, :, :, cols]})

    def test_opset19_refusals_name_node_and_what(self):
        x = np.zeros((1, 1, 2, 2), np.float32)
        inputs, outputs = [f32_info("x", [1, 1, 2, 2])], [f32_info("y", None)]
        cast8 = make_model(19, [helper.make_node("Cast", ["x"], ["y"], name="to_f8", to=FLOAT8E4M3FN)], inputs, outputs)
        self.assert_refused(cast8, {"x": x}, "to_f8", "FLOAT8E4M3FN")
        pads = numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")
        wrap = make_model(19, [helper.make_node("Pad", ["x", "pads"], ["y"], name="wrap_pad", mode="wrap")], inputs,
                          outputs, [pads])
        self.assert_refused(wrap, {"x": x}, "wrap_pad", "'wrap'")
        scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
        sym = make_model(19, [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="sym", mode="linear",
                                               coordinate_transformation_mode="half_pixel_symmetric")],
                         inputs, outputs, [scales])
        self.assert_refused(sym, {"x": x}, "sym", "half_pixel_symmetric")
        deform = make_model(19, [helper.make_node("DeformConv", ["x", "x", "x"], ["y"], name="dc")], inputs, outputs)
        self.assert_refused(deform, {"x": x}, "DeformConv (first at node 'dc')", "opset 19")

    # Opset 20: Gelu, GridSample's `linear` name, ConstantOfShape of a Shape.
    def test_opset20_gelu_grid_sample_constant_of_shape(self):
        x = self.rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
        grid = self.rng.uniform(-1.1, 1.1, (1, 2, 3, 2)).astype(np.float32)
        nodes = [
            helper.make_node("Gelu", ["x"], ["g"]),
            helper.make_node("Gelu", ["x"], ["gt"], approximate="tanh"),
            helper.make_node("GridSample", ["x", "grid"], ["s"], mode="linear", padding_mode="zeros", align_corners=0),
            helper.make_node("Shape", ["grid"], ["shape"], start=1, end=3),
            helper.make_node("ConstantOfShape", ["shape"], ["c"],
                             value=numpy_helper.from_array(np.array([2.5], np.float32))),
        ]
        model = make_model(20, nodes, [f32_info("x", [1, 2, 3, 4]), f32_info("grid", [1, 2, 3, 2])],
                           [f32_info(n, None) for n in ("g", "gt", "s", "c")])
        xd = x.astype(np.float64)
        erf = np.vectorize(math.erf)
        want = {
            "g": (0.5 * xd * (1 + erf(xd / math.sqrt(2)))).astype(np.float32),
            "gt": (0.5 * xd * (1 + np.tanh(math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3)))).astype(np.float32),
            "s": bilinear_grid_sample(xd, grid.astype(np.float64)).astype(np.float32),
            "c": np.full((2, 3), 2.5, np.float32),
        }
        self.assert_runs(model, {"x": x, "grid": grid}, want)

    def test_shape_arithmetic_folds_at_import(self):
        # The pattern of torchvision's SSD anchor generator: Expand to ConstantOfShape(Shape(Concat(...)))
        # of a shape computed from Shape; the Expand's rank is known only once that arithmetic folds.
        x = self.rng.standard_normal((2, 3)).astype(np.float32)
        inits = [numpy_helper.from_array(np.array(0, np.int64), "i0"),
                 numpy_helper.from_array(np.array(1, np.int64), "i1"),
                 numpy_helper.from_array(np.array([0], np.int64), "ax0"),
                 numpy_helper.from_array(np.array([1], np.int64), "one")]
        nodes = [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "i0"], ["d0"], axis=0),
            helper.make_node("Gather", ["s", "i1"], ["d1"], axis=0),
            helper.make_node("Mul", ["d0", "d1"], ["n"]),
            helper.make_node("Unsqueeze", ["n", "ax0"], ["nu"]),
            helper.make_node("Concat", ["nu", "one"], ["target"], axis=0),
            helper.make_node("Shape", ["target"], ["ts"]),
            helper.make_node("ConstantOfShape", ["ts"], ["ones"],
                             value=numpy_helper.from_array(np.array([1], np.int64))),
            helper.make_node("Expand", ["x", "ones"], ["e"]),
            helper.make_node("Reshape", ["e", "target"], ["y"]),
        ]
        for opset in (17, 21):
            model = make_model(opset, nodes, [f32_info("x", [2, 3])], [f32_info("y", None)], inits)
            self.assert_runs(model, {"x": x}, {"y": x.reshape(6, 1)})

    def test_opset20_new_operators_are_named_with_the_opset(self):
        x = np.zeros((1, 4, 2), np.float32)
        nodes = [helper.make_node("DFT", ["x"], ["y"], name="fft"),
                 helper.make_node("AffineGrid", ["x", "x"], ["z"], name="ag")]
        model = make_model(20, nodes, [f32_info("x", [1, 4, 2])], [f32_info("y", None), f32_info("z", None)])
        self.assert_refused(model, {"x": x}, "DFT (first at node 'fft')", "AffineGrid (first at node 'ag')",
                            "opset 20")

    # Opset 21: per-channel GroupNormalization, QuantizeLinear `output_dtype`, the shape operators.
    def test_opset21_group_norm_quantize_and_shape_ops(self):
        x = self.rng.standard_normal((2, 4, 3)).astype(np.float32)
        scale = self.rng.uniform(0.5, 1.5, 4).astype(np.float32)
        bias = self.rng.standard_normal(4).astype(np.float32)
        inits = [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias"),
                 numpy_helper.from_array(np.array(0.05, np.float32), "qs"),
                 numpy_helper.from_array(np.array([0, 2], np.int64), "axes")]
        nodes = [
            helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["gn"], num_groups=2, epsilon=1e-5),
            helper.make_node("QuantizeLinear", ["gn", "qs"], ["q"], output_dtype=TensorProto.INT8),
            helper.make_node("DequantizeLinear", ["q", "qs"], ["dq"]),
            helper.make_node("Transpose", ["dq"], ["t"], perm=[2, 0, 1]),
            helper.make_node("Unsqueeze", ["t", "axes"], ["u"]),
            helper.make_node("Flatten", ["u"], ["f"], axis=2),
        ]
        model = make_model(21, nodes, [f32_info("x", [2, 4, 3])],
                           [f32_info("gn", None), helper.make_tensor_value_info("q", TensorProto.INT8, None),
                            f32_info("f", None)], inits)
        groups = x.reshape(2, 2, 6).astype(np.float64)
        normed = ((groups - groups.mean(-1, keepdims=True)) / np.sqrt(groups.var(-1, keepdims=True) + 1e-5))
        gn = (normed.reshape(2, 4, 3) * scale[:, None] + bias[:, None]).astype(np.float32)
        q = np.clip(np.round(gn / np.float32(0.05)), -128, 127).astype(np.int8)
        t = (q.astype(np.float32) * np.float32(0.05)).transpose(2, 0, 1)
        want = {"gn": gn, "q": q, "f": t[None, :, None].reshape(3, 8)}
        self.assert_runs(model, {"x": x}, want, atol=1e-4)

    def test_opset21_refusals(self):
        x = np.zeros((4,), np.float32)
        inputs = [f32_info("x", [4])]
        qs = numpy_helper.from_array(np.array([0.1, 0.2], np.float32), "qs")
        blocked = make_model(21, [helper.make_node("QuantizeLinear", ["x", "qs"], ["y"], name="bq", block_size=2)],
                             inputs, [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], [qs])
        self.assert_refused(blocked, {"x": x}, "bq", "block_size")
        cast4 = make_model(21, [helper.make_node("Cast", ["x"], ["y"], name="to_i4", to=INT4)], inputs,
                           [f32_info("y", None)])
        self.assert_refused(cast4, {"x": x}, "to_i4", "INT4")
        relu22 = make_model(22, [helper.make_node("Relu", ["x"], ["y"])], inputs, [f32_info("y", None)])
        self.assert_refused(relu22, {"x": x}, "default-domain opset 22 is not supported", " to 21 (")


if __name__ == "__main__":
    unittest.main()
