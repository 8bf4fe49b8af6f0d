"""Writes the single-operator cases for elementwise and tensor-manipulation operators (see optest_lib.py
for the format). Expected outputs come from numpy and PyTorch, never from Tessel.

Tolerances: atol = rtol = 1e-5 throughout. The float reference kernels evaluate in double and round once,
while numpy/PyTorch evaluate in float32 (erf, tanh, exp, pow within a few ulp), so 1e-5 leaves a wide
margin; integer and data-movement cases are exact in practice.

Usage: /usr/bin/python3 gen_elementwise_cases.py --out DIR
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from onnx import TensorProto, numpy_helper  # noqa: E402

from optest_lib import CaseWriter  # noqa: E402

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


class Gen:
    def __init__(self, out_dir):
        self.w = CaseWriter(out_dir)
        self.rng = np.random.default_rng(20240611)

    def add(self, name, op_type, inputs, outputs, **kw):
        """CaseWriter.add with every array made C-ordered (transposes and slices give views that np.save
        would write in Fortran order or copy oddly); np.asarray keeps 0-d arrays 0-d."""
        inputs = [None if i is None else (i[0], np.asarray(i[1], order="C"), i[2]) for i in inputs]
        outputs = [(o[0], np.asarray(o[1], order="C")) for o in outputs]
        self.w.add(name, op_type, inputs, outputs, **kw)

    def f32(self, *shape, lo=-3.0, hi=3.0):
        return self.rng.uniform(lo, hi, size=shape).astype(np.float32)

    def i64(self, *shape, lo=-50, hi=50):
        return self.rng.integers(lo, hi, size=shape, dtype=np.int64)

    def i32(self, *shape, lo=-50, hi=50):
        return self.rng.integers(lo, hi, size=shape, dtype=np.int32)

    def unary(self, name, op, x, y, attrs=None, opset=13):
        self.add(name, op, [("x", x, False)], [("y", y)], attrs=attrs, opset=opset)

    def binary(self, name, op, a, b, y, opset=13):
        self.add(name, op, [("a", a, False), ("b", b, False)], [("y", y)], opset=opset)


def torch_f32(fn, x, **kw):
    return fn(torch.from_numpy(x), **kw).numpy().astype(np.float32)


def activations(g):
    x = g.f32(2, 3, 4)
    g.unary("relu_f32", "Relu", x, np.maximum(x, 0))
    xi = g.i64(7)
    g.unary("relu_i64", "Relu", xi, np.maximum(xi, 0), opset=14)
    x = g.f32(3, 5, lo=-8, hi=8)
    g.unary("sigmoid", "Sigmoid", x, torch_f32(torch.sigmoid, x))
    g.unary("tanh", "Tanh", x, np.tanh(x))
    # ONNX HardSigmoid defaults (alpha 0.2, beta 0.5) differ from PyTorch's (1/6, 0.5): numpy.
    g.unary("hardsigmoid_default", "HardSigmoid", x, np.clip(np.float32(0.2) * x + np.float32(0.5), 0, 1))
    g.unary("hardsigmoid_attrs", "HardSigmoid", x, np.clip(np.float32(0.3) * x - np.float32(0.1), 0, 1),
            attrs={"alpha": 0.3, "beta": -0.1})
    g.unary("hardswish", "HardSwish", x, torch_f32(F.hardswish, x), opset=14)
    g.unary("erf", "Erf", x, torch_f32(torch.erf, x))
    # Gelu is an opset-20 operator; opset 18 is the newest Tessel imports, where the IR takes the same form.
    g.unary("gelu_exact", "Gelu", x, torch_f32(F.gelu, x), opset=18)
    g.unary("gelu_tanh", "Gelu", x, torch_f32(F.gelu, x, approximate="tanh"), attrs={"approximate": "tanh"},
            opset=18)


def unary_math(g):
    x = g.f32(4, 6, lo=0.0, hi=9.0)
    g.unary("sqrt", "Sqrt", x, np.sqrt(x))
    x = g.f32(2, 8, lo=0.25, hi=4.0) * np.where(g.rng.random((2, 8)) < 0.5, -1, 1).astype(np.float32)
    g.unary("reciprocal", "Reciprocal", x, np.float32(1) / x)
    x = g.f32(3, 4)
    g.unary("neg_f32", "Neg", x, -x)
    xi = g.i64(9)
    g.unary("neg_i64", "Neg", xi, -xi)
    x = g.f32(5, 5, lo=-6, hi=6)
    g.unary("exp", "Exp", x, np.exp(x))


def more_unary_math(g):
    """The ONNX math functions and parameterized activations, against numpy and PyTorch in float32."""
    x = g.f32(3, 5, lo=-4, hi=4)
    for name, op, fn in (("abs", "Abs", np.abs), ("floor", "Floor", np.floor), ("ceil", "Ceil", np.ceil),
                         ("sign", "Sign", np.sign), ("sin", "Sin", np.sin), ("cos", "Cos", np.cos),
                         ("atan", "Atan", np.arctan), ("sinh", "Sinh", np.sinh), ("cosh", "Cosh", np.cosh),
                         ("asinh", "Asinh", np.arcsinh), ("softsign", "Softsign", lambda v: v / (1 + np.abs(v)))):
        g.unary(name, op, x, fn(x).astype(np.float32))
    g.unary("round", "Round", np.array([0.5, 1.5, 2.5, -0.5, -1.6, 3.2], np.float32),
            np.round(np.array([0.5, 1.5, 2.5, -0.5, -1.6, 3.2], np.float32)), opset=11)
    g.unary("softplus", "Softplus", x, torch_f32(F.softplus, x))
    t = g.f32(2, 4, lo=-1.2, hi=1.2)
    g.unary("tan", "Tan", t, np.tan(t))
    u = g.f32(2, 6, lo=-0.99, hi=0.99)
    g.unary("asin", "Asin", u, np.arcsin(u))
    g.unary("acos", "Acos", u, np.arccos(u))
    g.unary("atanh", "Atanh", u, np.arctanh(u))
    p = g.f32(2, 6, lo=0.1, hi=9.0)
    g.unary("log", "Log", p, np.log(p))
    g.unary("acosh", "Acosh", p + 1, np.arccosh(p + 1))
    g.unary("elu", "Elu", x, torch_f32(F.elu, x, alpha=0.7), attrs={"alpha": 0.7})
    g.unary("celu", "Celu", x, torch_f32(F.celu, x, alpha=1.5), attrs={"alpha": 1.5}, opset=12)
    g.unary("selu", "Selu", x, torch_f32(F.selu, x))
    g.unary("leakyrelu", "LeakyRelu", x, torch_f32(F.leaky_relu, x, negative_slope=0.2), attrs={"alpha": 0.2})
    g.unary("thresholdedrelu", "ThresholdedRelu", x, np.where(x > 1.5, x, 0).astype(np.float32),
            attrs={"alpha": 1.5}, opset=10)


def variadic(g):
    """Max, Min, Sum and Mean over inputs that broadcast together, against numpy."""
    a, b, c = g.f32(2, 3, 4), g.f32(3, 1), g.f32(4)
    ins = [("a", a, False), ("b", b, False), ("c", c, False)]
    g.add("max_3_bcast", "Max", ins, [("y", np.maximum(np.maximum(a, b), c))])
    g.add("min_3_bcast", "Min", ins, [("y", np.minimum(np.minimum(a, b), c))])
    g.add("sum_3_bcast", "Sum", ins, [("y", (a + b + c).astype(np.float32))])
    g.add("mean_3_bcast", "Mean", ins, [("y", ((a + b + c) / np.float32(3)).astype(np.float32))])
    g.add("max_one", "Max", [("a", a, False)], [("y", a.copy())])
    ai, bi = g.i64(5), g.i64(1)
    g.add("max_i64", "Max", [("a", ai, False), ("b", bi, False)], [("y", np.maximum(ai, bi))])
    g.add("min_i32", "Min", [("a", ai.astype(np.int32), False), ("b", bi.astype(np.int32), False)],
          [("y", np.minimum(ai, bi).astype(np.int32))])


def clip(g):
    x = g.f32(3, 7, lo=-4, hi=4)
    lo, hi = np.float32(-1.5), np.float32(2.0)
    g.add("clip_min_max", "Clip", [("x", x, False), ("min", np.array(lo), True), ("max", np.array(hi), True)],
            [("y", np.clip(x, lo, hi))])
    g.add("clip_min_only", "Clip", [("x", x, False), ("min", np.array(lo), True)], [("y", np.maximum(x, lo))])
    g.add("clip_max_only", "Clip", [("x", x, False), None, ("max", np.array(hi), True)],
            [("y", np.minimum(x, hi))])
    g.add("clip_none", "Clip", [("x", x, False)], [("y", x.copy())])
    g.add("clip_bounds_as_inputs", "Clip",
            [("x", x, False), ("min", np.array(lo), False), ("max", np.array(hi), False)],
            [("y", np.clip(x, lo, hi))])
    # min > max: every element becomes max (numpy.clip applies max last, as ONNX specifies).
    g.add("clip_min_above_max", "Clip",
            [("x", x, False), ("min", np.array(np.float32(1)), True), ("max", np.array(np.float32(-1)), True)],
            [("y", np.full_like(x, -1))])
    xi = g.i64(12)
    g.add("clip_i64", "Clip",
            [("x", xi, False), ("min", np.array(-10, dtype=np.int64), True), ("max", np.array(20, dtype=np.int64), True)],
            [("y", np.clip(xi, -10, 20))])


def trunc_div(a, b):
    """Integer division truncating toward zero (C, ONNX Runtime and the ONNX reference), unlike numpy's //."""
    q = np.abs(a) // np.abs(b)
    return (np.sign(a) * np.sign(b) * q).astype(a.dtype)


def binary(g):
    # Broadcasting of different ranks and size-1 dims.
    shapes = [
        ("same", (2, 3, 4), (2, 3, 4)),
        ("rank3_rank1", (2, 3, 4), (4,)),
        ("size1_dims", (2, 1, 4), (3, 1)),
        ("both_size1", (1, 3, 1), (2, 1, 5)),
        ("scalar_rhs", (3, 4), ()),
        ("scalar_lhs", (), (2, 3)),
        ("scalars", (), ()),
        ("rank4_rank3", (2, 1, 3, 1), (4, 1, 5)),
    ]
    for tag, sa, sb in shapes:
        a, b = g.f32(*sa), g.f32(*sb)
        g.binary("add_" + tag, "Add", a, b, np.add(a, b))
    a, b = g.f32(2, 3, 1), g.f32(4)
    g.binary("sub_broadcast", "Sub", a, b, np.subtract(a, b))
    a, b = g.f32(3, 1, 2), g.f32(1, 4, 1)
    g.binary("mul_broadcast", "Mul", a, b, np.multiply(a, b))
    a = g.f32(2, 5)
    b = g.f32(5, lo=0.5, hi=3.0) * np.array([1, -1, 1, -1, 1], dtype=np.float32)
    g.binary("div_broadcast", "Div", a, b, np.divide(a, b))

    # Integer arithmetic as in shape computations (i64) and i32.
    a, b = g.i64(3, 4, lo=-1000, hi=1000), g.i64(4, lo=-1000, hi=1000)
    g.binary("add_i64", "Add", a, b, a + b)
    g.binary("sub_i64", "Sub", a, b, a - b)
    g.binary("mul_i64", "Mul", a, b, a * b)
    big = np.array([1 << 40, -(1 << 41), 3, 7], dtype=np.int64)
    g.binary("mul_i64_large", "Mul", big, np.array(1000, dtype=np.int64), big * 1000)
    num = g.i64(3, 4, lo=-100, hi=100)
    den = g.i64(4, lo=1, hi=9) * np.array([1, -1, 1, -1], dtype=np.int64)
    g.binary("div_i64_truncates", "Div", num, den, trunc_div(num, den))
    a32, b32 = g.i32(2, 3), g.i32(3)
    g.binary("add_i32", "Add", a32, b32, a32 + b32)
    g.binary("mul_i32", "Mul", a32, b32, a32 * b32)
    den32 = g.i32(1, 3, lo=1, hi=7) * np.array([[-1, 1, 1]], dtype=np.int32)
    g.binary("div_i32", "Div", a32, den32, trunc_div(a32, den32))
    # Shape arithmetic: a shape vector times a scalar.
    shape = np.array([1, 8, 64], dtype=np.int64)
    g.binary("mul_i64_shape_scalar", "Mul", shape, np.array(2, dtype=np.int64), shape * 2)


def pow_cases(g):
    base = g.f32(3, 4, lo=0.1, hi=3.0)
    expo = g.f32(3, 4, lo=-2.0, hi=2.0)
    g.binary("pow_f32", "Pow", base, expo, np.power(base, expo))
    x = g.f32(2, 5)
    g.binary("pow_scalar_exponent", "Pow", x, np.array(2.0, dtype=np.float32), np.square(x))
    e = np.array([0, 1, 2, 3, 2], dtype=np.int64)
    g.binary("pow_i64_exponent", "Pow", x, e, np.power(x, e.astype(np.float32)).astype(np.float32))


def where_cases(g):
    cond = g.rng.random((2, 1, 4)) < 0.5
    x, y = g.f32(3, 1), g.f32(4)
    g.add("where_broadcast3", "Where", [("c", cond, False), ("x", x, False), ("y", y, False)],
            [("z", np.where(cond, x, y))])
    cond = g.rng.random((3, 5)) < 0.5
    x = g.i64(3, 5)
    g.add("where_i64_scalar_y", "Where",
            [("c", cond, False), ("x", x, False), ("y", np.array(-1, dtype=np.int64), True)],
            [("z", np.where(cond, x, np.int64(-1)))])
    cond = np.array([True, False, True])
    x, y = g.f32(2, 3), g.f32(2, 1)
    g.add("where_f32", "Where", [("c", cond, False), ("x", x, False), ("y", y, False)],
            [("z", np.where(cond, x, y))])


def compare_cases(g):
    a, b = g.f32(2, 3, 4), g.f32(3, 1)
    b[0, 0] = a[0, 0, 0]  # at least one equal pair
    g.binary("equal_f32_broadcast", "Equal", a, b, np.equal(a, b))
    g.binary("less_f32_broadcast", "Less", a, b, np.less(a, b))
    g.binary("greater_f32_broadcast", "Greater", a, b, np.greater(a, b))
    x, y = g.i64(4, 5, lo=-3, hi=3), g.i64(5, lo=-3, hi=3)
    g.binary("equal_i64", "Equal", x, y, np.equal(x, y))
    g.binary("less_i64", "Less", x, y, np.less(x, y))
    g.binary("greater_i64_scalar", "Greater", x, np.array(0, dtype=np.int64), np.greater(x, 0))
    g.binary("less_or_equal_f32_broadcast", "LessOrEqual", a, b, np.less_equal(a, b), opset=16)
    g.binary("greater_or_equal_i64", "GreaterOrEqual", x, y, np.greater_equal(x, y), opset=16)


def logical_cases(g):
    """And, Or, Xor, Not on bool; IsNaN, IsInf; Mod with both sign conventions (numpy)."""
    p, q = g.rng.random((3, 4)) < 0.5, g.rng.random((4,)) < 0.5
    g.binary("and_bcast", "And", p, q, np.logical_and(p, q), opset=7)
    g.binary("or_bcast", "Or", p, q, np.logical_or(p, q), opset=7)
    g.binary("xor_bcast", "Xor", p, q, np.logical_xor(p, q), opset=7)
    g.unary("not", "Not", p, np.logical_not(p), opset=1)
    x = np.array([1.0, np.nan, np.inf, -np.inf, -2.0, 0.0], dtype=np.float32)
    g.unary("isnan", "IsNaN", x, np.isnan(x))
    g.unary("isinf", "IsInf", x, np.isinf(x), opset=10)
    g.unary("isinf_positive_only", "IsInf", x, np.isposinf(x), attrs={"detect_negative": 0}, opset=10)
    a, d = g.i64(12, lo=-20, hi=20), g.i64(12, lo=1, hi=7) * np.where(g.rng.random(12) < 0.5, -1, 1)
    g.binary("mod_i64_divisor_sign", "Mod", a, d, np.mod(a, d))
    g.add("mod_i64_fmod", "Mod", [("a", a, False), ("b", d, False)], [("y", np.fmod(a, d))], attrs={"fmod": 1})
    fa, fd = g.f32(3, 4, lo=-9, hi=9), g.f32(4, lo=0.5, hi=3)
    g.add("mod_f32_fmod_bcast", "Mod", [("a", fa, False), ("b", fd, False)], [("y", np.fmod(fa, fd))],
          attrs={"fmod": 1})


def cast_cases(g):
    # Values chosen so that every conversion is well defined (numpy's astype is implementation-defined
    # out of range): truncation toward zero, and halves that test it.
    x = np.array([[-2.75, -1.5, -0.5, 0.0, 0.5, 1.5], [2.25, 7.0, 100.9, -100.9, 3.0, -0.0]], dtype=np.float32)
    xu = np.abs(x)
    targets = [
        ("float16", TensorProto.FLOAT16, np.float16, x),
        ("int32", TensorProto.INT32, np.int32, x),
        ("int64", TensorProto.INT64, np.int64, x),
        ("int8", TensorProto.INT8, np.int8, x),
        ("uint8", TensorProto.UINT8, np.uint8, xu),
        ("bool", TensorProto.BOOL, np.bool_, x),
        ("float", TensorProto.FLOAT, np.float32, x),
    ]
    for tag, to, dt, src in targets:
        g.unary("cast_f32_to_" + tag, "Cast", src, src.astype(dt), attrs={"to": to})
    xf = g.f32(3, 4, lo=-1000, hi=1000)
    g.unary("cast_f32_to_float16_rounding", "Cast", xf, xf.astype(np.float16), attrs={"to": TensorProto.FLOAT16})
    xi = g.i64(2, 5, lo=-100000, hi=100000)
    g.unary("cast_i64_to_f32", "Cast", xi, xi.astype(np.float32), attrs={"to": TensorProto.FLOAT})
    g.unary("cast_i64_to_i32", "Cast", xi, xi.astype(np.int32), attrs={"to": TensorProto.INT32})
    xi32 = g.i32(6)
    g.unary("cast_i32_to_i64", "Cast", xi32, xi32.astype(np.int64), attrs={"to": TensorProto.INT64})
    xb = g.rng.random((2, 3)) < 0.5
    g.unary("cast_bool_to_f32", "Cast", xb, xb.astype(np.float32), attrs={"to": TensorProto.FLOAT})
    g.unary("cast_bool_to_i64", "Cast", xb, xb.astype(np.int64), attrs={"to": TensorProto.INT64})
    xh = g.f32(4, 3).astype(np.float16)
    g.unary("cast_f16_to_f32", "Cast", xh, xh.astype(np.float32), attrs={"to": TensorProto.FLOAT})
    xu8 = g.rng.integers(0, 256, size=(8,), dtype=np.uint8)
    g.unary("cast_u8_to_f32", "Cast", xu8, xu8.astype(np.float32), attrs={"to": TensorProto.FLOAT})
    xi8 = g.rng.integers(-128, 128, size=(8,), dtype=np.int8)
    g.unary("cast_i8_to_i32", "Cast", xi8, xi8.astype(np.int32), attrs={"to": TensorProto.INT32})
    # Double: to and from f32 (rounded to nearest), f16 and int64 (truncated), and the same type.
    xd = xf.astype(np.float64) * (1 + 1e-9)  # no new draws: later cases keep their random data
    g.unary("cast_f64_to_f32", "Cast", xd, xd.astype(np.float32), attrs={"to": TensorProto.FLOAT})
    g.unary("cast_f64_to_f16", "Cast", xd, xd.astype(np.float16), attrs={"to": TensorProto.FLOAT16})
    g.unary("cast_f64_to_i64", "Cast", xd, xd.astype(np.int64), attrs={"to": TensorProto.INT64})
    g.unary("cast_f64_to_f64", "Cast", xd, xd, attrs={"to": TensorProto.DOUBLE})
    g.unary("cast_f32_to_f64", "Cast", x, x.astype(np.float64), attrs={"to": TensorProto.DOUBLE})
    g.unary("cast_i64_to_f64", "Cast", xi, xi.astype(np.float64), attrs={"to": TensorProto.DOUBLE})


def cast_like_cases(g):
    """CastLike against numpy's astype to the target input's dtype (the target's values and shape do not
    matter: an empty constant, a scalar or a runtime tensor of another shape)."""
    x = np.array([[-2.75, -1.5, -0.5, 0.0], [0.5, 2.25, 100.9, -100.9]], dtype=np.float32)
    g.add("castlike_f32_to_i32_empty_target", "CastLike",
          [("x", x, False), ("like", np.zeros((0,), np.int32), True)], [("y", x.astype(np.int32))], opset=15)
    g.add("castlike_f32_to_f16_runtime_target", "CastLike",
          [("x", x, False), ("like", np.ones((3, 1), np.float16), False)], [("y", x.astype(np.float16))], opset=15)
    xi = g.i64(3, 2, lo=-100000, hi=100000)
    g.add("castlike_i64_to_f32_scalar_target", "CastLike",
          [("x", xi, False), ("like", np.float32(0), True)], [("y", xi.astype(np.float32))], opset=15)
    g.add("castlike_f32_to_bool", "CastLike", [("x", x, False), ("like", np.array([True]), True)],
          [("y", x.astype(np.bool_))], opset=15)


def identity_dropout(g):
    x = g.f32(2, 3)
    g.unary("identity_f32", "Identity", x, x.copy())
    xi = g.i64(4)
    g.unary("identity_i64", "Identity", xi, xi.copy())
    x = g.f32(3, 4)
    g.add("dropout_plain", "Dropout", [("x", x, False)], [("y", x.copy())])
    g.add("dropout_ratio_mask", "Dropout",
            [("x", x, False), ("ratio", np.array(0.3, dtype=np.float32), True),
             ("training_mode", np.array(False), True)],
            [("y", x.copy()), ("mask", np.ones(x.shape, dtype=np.bool_))])


def flatten_reshape(g):
    x = g.f32(2, 3, 4, 5)
    for axis in [0, 1, 2, 4, -1]:
        n = axis if axis >= 0 else axis + 4
        want = x.reshape(int(np.prod(x.shape[:n])), -1) if n < 4 else x.reshape(-1, 1)
        g.unary("flatten_axis_%s" % str(axis).replace("-", "m"), "Flatten", x, want, attrs={"axis": axis})
    g.unary("flatten_default", "Flatten", x, x.reshape(2, 60))

    x = g.f32(2, 3, 4)
    cases = [
        ("reshape_zero_minus1", [0, -1], (2, 12)),
        ("reshape_minus1_only", [-1], (24,)),
        ("reshape_zero_copies", [0, 0, 2, 2], (2, 3, 2, 2)),
        ("reshape_minus1_middle", [4, -1, 2], (4, 3, 2)),
        ("reshape_add_ones", [1, 2, 1, 12, 1], (1, 2, 1, 12, 1)),
    ]
    for name, shape, want in cases:
        g.add(name, "Reshape", [("x", x, False), ("shape", np.array(shape, dtype=np.int64), True)],
                [("y", x.reshape(want))])
    g.add("reshape_allowzero", "Reshape",
            [("x", x, False), ("shape", np.array([4, 6], dtype=np.int64), True)], [("y", x.reshape(4, 6))],
            attrs={"allowzero": 1}, opset=14)
    empty = np.zeros((0, 3), dtype=np.float32)
    g.add("reshape_allowzero_empty", "Reshape",
            [("x", empty, False), ("shape", np.array([3, 0], dtype=np.int64), True)], [("y", empty.reshape(3, 0))],
            attrs={"allowzero": 1}, opset=14)
    # Shape known only at run time: inference gives unknown extents, execution resolves them.
    g.add("reshape_runtime_shape", "Reshape",
            [("x", x, False), ("shape", np.array([6, -1], dtype=np.int64), False)], [("y", x.reshape(6, 4))])
    xi = g.i64(2, 3)
    g.add("reshape_i64", "Reshape", [("x", xi, False), ("shape", np.array([-1], dtype=np.int64), True)],
            [("y", xi.reshape(-1))])


def transpose_concat(g):
    x = g.f32(2, 3, 4)
    g.unary("transpose_default_perm", "Transpose", x, np.transpose(x))
    x4 = g.f32(2, 3, 4, 5)
    g.unary("transpose_nchw_to_nhwc", "Transpose", x4, np.transpose(x4, (0, 2, 3, 1)), attrs={"perm": [0, 2, 3, 1]})
    g.unary("transpose_2d", "Transpose", x[0], np.transpose(x[0]), attrs={"perm": [1, 0]})
    xi = g.i64(3, 2)
    g.unary("transpose_i64", "Transpose", xi, xi.T.copy())

    a, b = g.f32(1, 3, 4), g.f32(2, 3, 4)
    g.add("concat_axis0", "Concat", [("a", a, False), ("b", b, False)], [("y", np.concatenate([a, b], 0))],
            attrs={"axis": 0})
    a, b, c = g.f32(2, 3, 1), g.f32(2, 3, 4), g.f32(2, 3, 2)
    g.add("concat_axis_m1_three", "Concat", [("a", a, False), ("b", b, False), ("c", c, False)],
            [("y", np.concatenate([a, b, c], -1))], attrs={"axis": -1})
    s1, s2 = np.array([1, 8], dtype=np.int64), np.array([-1], dtype=np.int64)
    g.add("concat_i64_shape", "Concat", [("a", s1, False), ("b", s2, True)], [("y", np.concatenate([s1, s2]))],
            attrs={"axis": 0})


def split_cases(g):
    x = g.f32(4, 6)
    parts = np.split(x, 2, axis=1)
    g.add("split_equal", "Split", [("x", x, False)], [("y%d" % i, p) for i, p in enumerate(parts)],
            attrs={"axis": 1})
    x = g.f32(6, 3)
    sizes = [2, 3, 1]
    parts = np.split(x, np.cumsum(sizes)[:-1], axis=0)
    g.add("split_uneven", "Split", [("x", x, False), ("split", np.array(sizes, dtype=np.int64), True)],
            [("y%d" % i, p) for i, p in enumerate(parts)])
    x = g.f32(2, 7)
    # Opset 18 num_outputs: chunks of ceil(7 / 3) = 3, the last one smaller.
    parts = [x[:, 0:3], x[:, 3:6], x[:, 6:7]]
    g.add("split_num_outputs_uneven", "Split", [("x", x, False)], [("y%d" % i, p) for i, p in enumerate(parts)],
            attrs={"axis": -1, "num_outputs": 3}, opset=18)
    x = g.f32(3, 8)
    parts = np.split(x, 4, axis=1)
    g.add("split_num_outputs_even", "Split", [("x", x, False)], [("y%d" % i, p) for i, p in enumerate(parts)],
            attrs={"axis": 1, "num_outputs": 4}, opset=18)


def slice_cases(g):
    x = g.f32(5, 6, 4)

    def add(name, starts, ends, axes=None, steps=None, dtype=np.int64, const=True):
        axes_list = axes if axes is not None else list(range(len(starts)))
        steps_list = steps if steps is not None else [1] * len(starts)
        sl = [slice(None)] * x.ndim
        for s, e, a, st in zip(starts, ends, axes_list, steps_list):
            sl[a] = slice(int(s), int(e), int(st))  # Python slicing clamps exactly as ONNX Slice does
        inputs = [("x", x, False), ("starts", np.array(starts, dtype=dtype), const),
                  ("ends", np.array(ends, dtype=dtype), const)]
        if axes is not None or steps is not None:
            inputs.append(("axes", np.array(axes_list, dtype=dtype), const) if axes is not None else None)
        if steps is not None:
            inputs.append(("steps", np.array(steps, dtype=dtype), const))
        g.add(name, "Slice", inputs, [("y", x[tuple(sl)])])

    add("slice_basic", [1, 0], [4, 3])
    add("slice_negative_starts", [-3, -4], [-1, 6])
    add("slice_negative_step", [4, -1], [0, -7], axes=[0, 1], steps=[-1, -2])
    add("slice_reverse_all", [-1], [INT64_MIN], axes=[2], steps=[-1])
    add("slice_clamp_out_of_range", [-100, 2], [100, INT64_MAX], axes=[0, 1])
    add("slice_axes_subset_negative", [1], [3], axes=[-1])
    add("slice_steps_2", [0, 1], [5, 6], axes=[0, 1], steps=[2, 3])
    add("slice_empty", [4], [2], axes=[1])
    add("slice_no_axes_with_steps", [0, 5], [5, 0], steps=[2, -2])
    add("slice_int32_inputs", [1], [-1], axes=[1], dtype=np.int32)
    add("slice_runtime_starts", [1, 2], [3, 6], axes=[0, 2], const=False)


def gather_cases(g):
    data = g.f32(5, 4)
    idx = np.array([4, -1, 0, -5, 2], dtype=np.int64)
    g.add("gather_axis0_negative", "Gather", [("d", data, False), ("i", idx, True)],
            [("y", np.take(data, idx, axis=0))])
    idx2 = np.array([[3, -4], [0, 1], [-1, 2]], dtype=np.int64)
    g.add("gather_axis1_2d_indices", "Gather", [("d", data, False), ("i", idx2, True)],
            [("y", np.take(data, idx2, axis=1))], attrs={"axis": 1})
    data3 = g.f32(2, 3, 4)
    g.add("gather_scalar_index", "Gather", [("d", data3, False), ("i", np.array(-2, dtype=np.int64), True)],
            [("y", np.take(data3, -2, axis=1))], attrs={"axis": 1})
    idx32 = np.array([[1, 0], [2, 2]], dtype=np.int32)
    g.add("gather_int32_indices_runtime", "Gather", [("d", data3, False), ("i", idx32, False)],
            [("y", np.take(data3, idx32, axis=-1))], attrs={"axis": -1})
    # Shape -> Gather chains pick dims out of an int64 shape vector.
    shape = np.array([1, 197, 768], dtype=np.int64)
    g.add("gather_i64_shape_dim", "Gather", [("d", shape, False), ("i", np.array(1, dtype=np.int64), True)],
            [("y", np.take(shape, 1))])
    # GatherElements (numpy's take_along_axis), negative indices wrapped by hand for numpy.
    data = g.f32(3, 4, 2)
    ge = g.i64(3, 2, 2, lo=-4, hi=4)
    g.add("gather_elements_axis1", "GatherElements", [("d", data, False), ("i", ge, False)],
          [("y", np.take_along_axis(data, np.where(ge < 0, ge + 4, ge), axis=1))], attrs={"axis": 1})
    ge0 = g.i64(2, 4, 2, lo=0, hi=3)
    g.add("gather_elements_axis0", "GatherElements", [("d", data, False), ("i", ge0, True)],
          [("y", np.take_along_axis(data, ge0, axis=0))])


def np_scatter_nd(data, indices, updates, reduction):
    """The ONNX ScatterND definition, transcribed: updates applied in index order."""
    out = data.copy()
    k = indices.shape[-1]
    idx = indices.reshape(-1, k)
    upd = updates.reshape((idx.shape[0],) + data.shape[k:])
    combine = {"none": lambda a, b: b, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
    for i in range(idx.shape[0]):
        at = tuple(int(v) for v in idx[i])
        out[at] = combine[reduction](out[at], upd[i])
    return out


def scatter_cases(g):
    """ScatterND against the transcription above (checked against PyTorch's index_put_ on unique indices) and
    ScatterElements against torch.scatter / scatter_reduce (exact for data movement, 1e-5 for sums)."""
    data = g.f32(4, 5, 3)
    ind = np.array([[[1, 2]], [[3, 0]], [[0, 4]]], dtype=np.int64)  # [3, 1, 2]: slices of data[i, j]
    upd = g.f32(3, 1, 3)
    want = np_scatter_nd(data, ind, upd, "none")
    torch_want = torch.from_numpy(data.copy()).index_put_(tuple(torch.from_numpy(ind.reshape(-1, 2).T)),
                                                          torch.from_numpy(upd.reshape(-1, 3)))
    np.testing.assert_array_equal(want, torch_want.numpy())
    g.add("scatternd_slices", "ScatterND", [("d", data, False), ("i", ind, True), ("u", upd, False)],
          [("y", want)])
    dup = np.array([[0], [2], [0], [3]], dtype=np.int64)  # whole rows, row 0 twice
    upd_rows = g.f32(4, 5, 3)
    for red in ("add", "mul"):
        g.add("scatternd_%s_duplicates" % red, "ScatterND",
              [("d", data, False), ("i", dup, False), ("u", upd_rows, False)],
              [("y", np_scatter_nd(data, dup, upd_rows, red))], attrs={"reduction": red}, opset=16)
    full = np.array([[1, 1, 2], [-1, 0, 0], [2, 3, 1]], dtype=np.int64)  # scalar elements, one negative
    upd_el = g.f32(3)
    g.add("scatternd_elements_negative_index", "ScatterND",
          [("d", data, False), ("i", full, False), ("u", upd_el, False)],
          [("y", np_scatter_nd(data, np.where(full < 0, full + 4, full), upd_el, "none"))])
    di = g.i64(5, 2)
    ii = np.array([[4], [1], [4]], dtype=np.int64)
    ui = g.i64(3, 2)
    for red in ("max", "min"):
        g.add("scatternd_i64_%s" % red, "ScatterND", [("d", di, False), ("i", ii, False), ("u", ui, False)],
              [("y", np_scatter_nd(di, ii, ui, red))], attrs={"reduction": red}, opset=18)

    data = g.f32(3, 4)
    idx = np.array([[2, 0, 1, 1], [0, 2, 2, 0]], dtype=np.int64)
    upd = g.f32(2, 4)
    perm = np.array([[1, 0, 2, 3], [3, 2, 0, 1]], dtype=np.int64)  # unique per row for plain scatter
    g.add("scatter_elements_axis1", "ScatterElements",
          [("d", data, False), ("i", perm, False), ("u", upd, False)],
          [("y", torch.from_numpy(data).scatter(1, torch.from_numpy(perm), torch.from_numpy(upd)).numpy())],
          attrs={"axis": 1})
    g.add("scatter_elements_axis0_negative", "ScatterElements",
          [("d", data, False), ("i", np.array([[-1, 0, 1, -3]], dtype=np.int64), False), ("u", upd[:1], False)],
          [("y", torch.from_numpy(data).scatter(0, torch.tensor([[2, 0, 1, 0]]), torch.from_numpy(upd[:1])).numpy())])
    for red, torch_red in (("add", "sum"), ("mul", "prod"), ("max", "amax"), ("min", "amin")):
        want = torch.from_numpy(data).scatter_reduce(0, torch.from_numpy(idx), torch.from_numpy(upd), torch_red)
        g.add("scatter_elements_%s" % red, "ScatterElements",
              [("d", data, False), ("i", idx, False), ("u", upd, False)], [("y", want.numpy())],
              attrs={"reduction": red}, opset=18)


def tile_cases(g):
    """Tile against numpy's np.tile (exact: elements only move)."""
    x = g.f32(2, 3, 5)
    g.add("tile_const_repeats", "Tile", [("x", x, False), ("r", np.array([2, 1, 3], dtype=np.int64), True)],
          [("y", np.tile(x, (2, 1, 3)))])
    g.add("tile_runtime_repeats", "Tile", [("x", x, False), ("r", np.array([1, 3, 2], dtype=np.int64), False)],
          [("y", np.tile(x, (1, 3, 2)))])
    g.add("tile_zero_repeat", "Tile", [("x", x, False), ("r", np.array([1, 0, 2], dtype=np.int64), True)],
          [("y", np.tile(x, (1, 0, 2)))])
    xi = g.i64(7)
    g.add("tile_i64_1d", "Tile", [("x", xi, False), ("r", np.array([3], dtype=np.int64), True)],
          [("y", np.tile(xi, 3))])
    xb = g.rng.integers(0, 2, size=(3, 1, 2)).astype(np.bool_)
    g.add("tile_bool_size1_axis", "Tile", [("x", xb, False), ("r", np.array([1, 4, 1], dtype=np.int64), True)],
          [("y", np.tile(xb, (1, 4, 1)))])


def np_gather_nd(data, indices, batch_dims):
    """The ONNX GatherND definition, transcribed (negative indices wrap)."""
    b = batch_dims
    batch_shape = data.shape[:b]
    k = indices.shape[-1]
    nb = int(np.prod(batch_shape)) if b else 1
    d = data.reshape((nb,) + data.shape[b:])
    idx = indices.reshape((nb, -1, k))
    rows = []
    for i in range(nb):
        for t in idx[i]:
            at = tuple(int(v) + (data.shape[b + j] if v < 0 else 0) for j, v in enumerate(t))
            rows.append(d[i][at])
    return np.array(rows, dtype=data.dtype).reshape(indices.shape[:-1] + data.shape[b + k:])


def gather_nd_cases(g):
    """GatherND against the transcription above, itself checked against PyTorch advanced indexing (exact)."""
    data = g.f32(4, 5, 3)
    ind = np.array([[[1, 2], [3, -1]], [[0, 4], [2, 0]], [[-4, 1], [3, 3]]], dtype=np.int64)  # [3, 2, 2]
    want = np_gather_nd(data, ind, 0)
    flat = np.where(ind < 0, ind + np.array([4, 5]), ind).reshape(-1, 2)
    torch_want = torch.from_numpy(data)[tuple(torch.from_numpy(flat).T)].numpy().reshape(3, 2, 3)
    np.testing.assert_array_equal(want, torch_want)
    g.add("gathernd_slices_negative", "GatherND", [("d", data, False), ("i", ind, False)], [("y", want)])
    full = np.array([[1, 2, 0], [3, 4, 2]], dtype=np.int64)
    g.add("gathernd_elements_const_indices", "GatherND", [("d", data, False), ("i", full, True)],
          [("y", np_gather_nd(data, full, 0))])
    rows = np.array([[2], [0], [3], [2]], dtype=np.int32)
    g.add("gathernd_rows_i32_indices", "GatherND", [("d", data, False), ("i", rows, False)],
          [("y", np_gather_nd(data, rows, 0))])
    # batch_dims 1: data [2, 3, 4, 5], indices [2, 3, 2] -> [2, 3, 5]; checked per batch with torch.
    bd = g.f32(2, 3, 4, 5)
    bi = np.stack([g.rng.integers(0, 3, size=(3,)), g.rng.integers(-4, 4, size=(3,))], axis=-1)
    bi = np.stack([bi, bi[::-1]]).astype(np.int64)
    want = np_gather_nd(bd, bi, 1)
    for i in range(2):
        idx = np.where(bi[i] < 0, bi[i] + np.array([3, 4]), bi[i])
        np.testing.assert_array_equal(want[i], torch.from_numpy(bd[i])[tuple(torch.from_numpy(idx).T)].numpy())
    g.add("gathernd_batch_dims1", "GatherND", [("d", bd, False), ("i", bi, False)], [("y", want)],
          attrs={"batch_dims": 1})
    # batch_dims 2 with i64 data: data [2, 3, 4], indices [2, 3, 1] -> [2, 3].
    di = g.i64(2, 3, 4)
    ii = g.rng.integers(-4, 4, size=(2, 3, 1)).astype(np.int64)
    g.add("gathernd_batch_dims2_i64", "GatherND", [("d", di, False), ("i", ii, False)],
          [("y", np_gather_nd(di, ii, 2))], attrs={"batch_dims": 2})


def nonzero_cases(g):
    """NonZero against numpy's np.array(np.nonzero(x)) (exact): row-major order, NaN counts as non-zero."""
    x = g.f32(3, 4)
    x[x < 0.5] = 0
    x[1, 2] = np.nan
    g.add("nonzero_f32_nan", "NonZero", [("x", x, False)], [("y", np.array(np.nonzero(x), dtype=np.int64))])
    xi = g.rng.integers(-1, 2, size=(2, 3, 4)).astype(np.int64)
    g.add("nonzero_i64_3d", "NonZero", [("x", xi, False)], [("y", np.array(np.nonzero(xi), dtype=np.int64))])
    xb = g.rng.random(7) < 0.4
    g.add("nonzero_bool_const", "NonZero", [("x", xb, True)], [("y", np.array(np.nonzero(xb), dtype=np.int64))])
    z = np.zeros((2, 5), np.float32)
    g.add("nonzero_all_zero", "NonZero", [("x", z, False)], [("y", np.zeros((2, 0), np.int64))])


def trilu_size_cases(g):
    """Trilu (numpy's triu/tril over the last two axes) and Size."""
    x = g.f32(2, 3, 5)
    g.unary("trilu_upper", "Trilu", x, np.triu(x), opset=14)
    g.add("trilu_upper_k1", "Trilu", [("x", x, False), ("k", np.array(1, dtype=np.int64), True)],
          [("y", np.triu(x, 1))], opset=14)
    g.add("trilu_lower_k_neg1", "Trilu", [("x", x, False), ("k", np.array(-1, dtype=np.int64), False)],
          [("y", np.tril(x, -1))], attrs={"upper": 0}, opset=14)
    xi = g.i64(4, 4)
    g.unary("trilu_lower_i64", "Trilu", xi, np.tril(xi), attrs={"upper": 0}, opset=14)
    g.unary("size", "Size", x, np.array(x.size, dtype=np.int64))


def squeeze_unsqueeze(g):
    x = g.f32(1, 3, 1, 2, 1)
    g.unary("squeeze_all", "Squeeze", x, np.squeeze(x))
    g.add("squeeze_axes", "Squeeze", [("x", x, False), ("axes", np.array([0, -1], dtype=np.int64), True)],
            [("y", np.squeeze(x, axis=(0, 4)))])
    x = g.f32(3, 4)
    g.add("unsqueeze_axes", "Unsqueeze", [("x", x, False), ("axes", np.array([0, 3], dtype=np.int64), True)],
            [("y", x.reshape(1, 3, 4, 1))])
    g.add("unsqueeze_negative", "Unsqueeze", [("x", x, False), ("axes", np.array([-1], dtype=np.int64), True)],
            [("y", x.reshape(3, 4, 1))])
    s = np.array(7, dtype=np.int64)
    g.add("unsqueeze_scalar", "Unsqueeze", [("x", s, False), ("axes", np.array([0], dtype=np.int64), True)],
            [("y", s.reshape(1))])


def expand_cases(g):
    x = g.f32(3, 1)
    g.add("expand_higher_rank", "Expand", [("x", x, False), ("shape", np.array([2, 3, 4], dtype=np.int64), True)],
            [("y", x * np.ones((2, 3, 4), dtype=np.float32))])
    x = g.f32(2, 3, 4)
    # A target shorter than the input and holding 1s: bidirectional broadcasting keeps the input's extents.
    g.add("expand_shorter_shape", "Expand", [("x", x, False), ("shape", np.array([3, 1], dtype=np.int64), True)],
            [("y", x * np.ones((3, 1), dtype=np.float32))])
    xi = g.i64(1, 4)
    g.add("expand_i64", "Expand", [("x", xi, False), ("shape", np.array([3, 1], dtype=np.int64), True)],
            [("y", np.broadcast_to(xi, (3, 4)).copy())])
    g.add("expand_runtime_shape", "Expand", [("x", x, False), ("shape", np.array([2, 2, 3, 4], dtype=np.int64), False)],
            [("y", np.broadcast_to(x, (2, 2, 3, 4)).copy())])


def shape_cases(g):
    x = g.f32(2, 3, 4, 5)
    g.unary("shape_plain", "Shape", x, np.array(x.shape, dtype=np.int64))
    g.unary("shape_start", "Shape", x, np.array(x.shape[1:], dtype=np.int64), attrs={"start": 1}, opset=15)
    g.unary("shape_start_end_negative", "Shape", x, np.array(x.shape[-3:-1], dtype=np.int64),
            attrs={"start": -3, "end": -1}, opset=15)
    g.unary("shape_clamped", "Shape", x, np.array(x.shape[0:4], dtype=np.int64), attrs={"start": -10, "end": 10},
            opset=15)
    g.unary("shape_empty_range", "Shape", x, np.zeros((0,), dtype=np.int64), attrs={"start": 3, "end": 1}, opset=15)


def constant_of_shape_cases(g):
    shape = np.array([2, 3], dtype=np.int64)
    g.unary("constantofshape_default", "ConstantOfShape", shape, np.zeros((2, 3), dtype=np.float32))
    g.unary("constantofshape_f32", "ConstantOfShape", shape, np.full((2, 3), 1.25, dtype=np.float32),
            attrs={"value": numpy_helper.from_array(np.array([1.25], dtype=np.float32), "value")})
    g.unary("constantofshape_i64", "ConstantOfShape", np.array([4], dtype=np.int64), np.full((4,), -7, dtype=np.int64),
            attrs={"value": numpy_helper.from_array(np.array([-7], dtype=np.int64), "value")})
    g.unary("constantofshape_scalar", "ConstantOfShape", np.zeros((0,), dtype=np.int64),
            np.array(3, dtype=np.int32), attrs={"value": numpy_helper.from_array(np.array([3], dtype=np.int32), "value")})


def range_cases(g):
    def add(name, start, limit, delta, dtype, const=True):
        s, l, d = (np.array(v, dtype=dtype) for v in (start, limit, delta))
        g.add(name, "Range", [("start", s, const), ("limit", l, const), ("delta", d, const)],
                [("y", np.arange(s, l, d, dtype=dtype))])

    add("range_f32", 0.5, 3.0, 0.25, np.float32)
    add("range_f32_negative_delta", 2.0, -1.0, -0.75, np.float32)
    add("range_i64", 3, 20, 4, np.int64)
    add("range_i64_negative_delta", 10, -5, -3, np.int64)
    add("range_i32", -4, 4, 1, np.int32)
    add("range_i64_empty", 5, 5, 1, np.int64)
    add("range_i64_runtime", 0, 7, 2, np.int64, const=False)


def more_cases(g):
    """Shrink, EyeLike and OneHot (added later: generated last, so that the cases above keep their data)."""
    x = g.f32(3, 5)
    g.unary("shrink_hard", "Shrink", x, torch_f32(F.hardshrink, x, lambd=0.7), attrs={"lambd": 0.7}, opset=13)
    g.unary("shrink_soft", "Shrink", x, torch_f32(F.softshrink, x, lambd=0.4), attrs={"lambd": 0.4, "bias": 0.4},
            opset=13)
    g.unary("eyelike_k1", "EyeLike", np.zeros((3, 5), np.float32), np.eye(3, 5, k=1, dtype=np.float32),
            attrs={"k": 1})
    g.unary("eyelike_int32", "EyeLike", np.zeros((4, 4), np.float32), np.eye(4, 4, k=-1, dtype=np.int32),
            attrs={"k": -1, "dtype": int(TensorProto.INT32)})
    idx = np.array([[0, 3, -1], [2, 5, -4]], np.int64)
    depth = np.array(4, np.int64)
    values = np.array([-1.0, 2.0], np.float32)
    hot = (idx % 4)[..., None] == np.arange(4)
    hot &= ((idx >= -4) & (idx < 4))[..., None]
    g.add("onehot_last", "OneHot", [("indices", idx, False), ("depth", depth, True), ("values", values, True)],
          [("y", np.where(hot, values[1], values[0]).astype(np.float32))], opset=11)
    g.add("onehot_axis0", "OneHot", [("indices", idx, False), ("depth", depth, True), ("values", values, True)],
          [("y", np.moveaxis(np.where(hot, values[1], values[0]).astype(np.float32), -1, 0))], attrs={"axis": 0},
          opset=11)
    xb = g.rng.integers(0, 256, size=(6,), dtype=np.uint8)
    sb = np.array([0, 1, 3, 7, 2, 5], np.uint8)
    g.add("bitshift_left_u8", "BitShift", [("x", xb, False), ("s", sb, False)],
          [("y", np.left_shift(xb, sb).astype(np.uint8))], attrs={"direction": "LEFT"}, opset=11)
    g.add("bitshift_right_u8", "BitShift", [("x", xb, False), ("s", sb, False)],
          [("y", np.right_shift(xb, sb))], attrs={"direction": "RIGHT"}, opset=11)
    xc = g.f32(3, 4)
    cond = np.array([True, False, True], bool)
    g.add("compress_axis1", "Compress", [("x", xc, False), ("c", cond, False)],
          [("y", np.compress(cond, xc, axis=1))], attrs={"axis": 1}, opset=11)
    g.add("compress_flat", "Compress", [("x", xc, False), ("c", np.array([0, 1, 1, 0, 1], bool), False)],
          [("y", np.compress(np.array([0, 1, 1, 0, 1], bool), xc))], opset=11)
    xr = g.f32(4, 3, 2)
    lens = np.array([4, 0, 2], np.int64)
    yr = xr.copy()
    for b, ln in enumerate(lens):
        yr[:ln, b] = xr[:ln, b][::-1]
    g.add("reversesequence_time_major", "ReverseSequence", [("x", xr, False), ("lens", lens, False)], [("y", yr)],
          opset=10)
    xr2 = np.ascontiguousarray(xr.transpose(1, 0, 2))
    g.add("reversesequence_batch_major", "ReverseSequence", [("x", xr2, False), ("lens", lens, False)],
          [("y", np.ascontiguousarray(yr.transpose(1, 0, 2)))], attrs={"time_axis": 1, "batch_axis": 0}, opset=10)
    # Window functions from PyTorch (ONNX's Hamming is alpha 25/46, beta 21/46).
    size = np.array(10, np.int64)
    for name, op, periodic, ref in [
            ("hannwindow_periodic", "HannWindow", 1, torch.hann_window(10, periodic=True, dtype=torch.float64)),
            ("hammingwindow_symmetric", "HammingWindow", 0,
             torch.hamming_window(10, periodic=False, alpha=25 / 46, beta=21 / 46, dtype=torch.float64)),
            ("blackmanwindow_periodic", "BlackmanWindow", 1, torch.blackman_window(10, periodic=True,
                                                                                 dtype=torch.float64))]:
        g.add(name, op, [("size", size, True)], [("y", ref.numpy().astype(np.float32))], attrs={"periodic": periodic},
              opset=17)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    g = Gen(args.out)
    for section in (activations, unary_math, more_unary_math, variadic, clip, binary, pow_cases, where_cases,
                    compare_cases, logical_cases, cast_cases, cast_like_cases, identity_dropout, flatten_reshape,
                    transpose_concat, split_cases, slice_cases, gather_cases, scatter_cases, tile_cases,
                    gather_nd_cases, nonzero_cases, trilu_size_cases, squeeze_unsqueeze, expand_cases, shape_cases,
                    constant_of_shape_cases, range_cases, more_cases):
        section(g)
    g.w.finish()
    print("wrote %d cases to %s" % (len(g.w.lines), args.out))


if __name__ == "__main__":
    main()
