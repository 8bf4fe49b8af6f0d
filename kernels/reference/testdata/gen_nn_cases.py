"""Writes the single-operator test cases for the neural-network operators (Conv, ConvTranspose,
BatchNormalization, MaxPool, AveragePool, GlobalAveragePool, MatMul, Gemm, Softmax, LayerNormalization,
ReduceMean, ReduceSum, Pad, Resize, TopK, CumSum, InstanceNormalization, GroupNormalization,
Einsum) and PyTorch's LSTM, GRU and RNN exports. Expected outputs come from PyTorch (torch.nn.functional)
or numpy, never from Tessel. Resize modes PyTorch lacks use a direct numpy transcription of the ONNX
formulas, which the script first checks against PyTorch on the modes both have.

Usage: /usr/bin/python3 gen_nn_cases.py --out DIR
"""
import argparse
import io
import math
import os
import sys
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optest_lib  # noqa: E402

ATOL = 1e-4
RTOL = 1e-4

_rng = np.random.default_rng(20240611)


def rand(*shape, scale=1.0):
    return (_rng.standard_normal(shape) * scale).astype(np.float32)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def n(x):
    return x.detach().numpy().astype(np.float32)


class Writer:
    """CaseWriter that also has onnx.checker validate each model and ONNX's own shape inference
    confirm the expected output shapes (for opsets the installed onnx knows)."""

    def __init__(self, out_dir):
        self.w = optest_lib.CaseWriter(out_dir)
        self.out_dir = out_dir

    def add(self, name, op_type, inputs, outputs, attrs=None, opset=13, atol=ATOL, rtol=RTOL, shape_check=True):
        self.w.add(name, op_type, inputs, outputs, attrs=attrs, opset=opset, atol=atol, rtol=rtol)
        if opset > onnx.defs.onnx_opset_version():
            return  # Debian's onnx 1.12 knows opsets up to 17 and cannot check newer forms.
        model = onnx.load(os.path.join(self.out_dir, name + ".onnx"))
        # The case files leave output shapes open; the checked copy declares the expected ones, so that
        # strict shape inference rejects a disagreement.
        del model.graph.output[:]
        for oname, arr in outputs:
            arr = np.asarray(arr)
            model.graph.output.append(
                onnx.helper.make_tensor_value_info(oname, optest_lib._NP_TO_ONNX[arr.dtype], list(arr.shape)))
        onnx.checker.check_model(model, full_check=shape_check)

    def add_model(self, name, model, feeds, outputs, atol=ATOL, rtol=RTOL):
        """A whole exported model (several nodes) as one case: graph inputs `feeds` in order."""
        assert name not in self.w.names, name
        self.w.names.add(name)
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(self.out_dir, name + ".onnx"))
        for k, arr in enumerate(feeds):
            np.save(os.path.join(self.out_dir, "%s.in.%d.npy" % (name, k)), arr)
        for k, arr in enumerate(outputs):
            np.save(os.path.join(self.out_dir, "%s.out.%d.npy" % (name, k)), arr)
        self.w.lines.append("%s %d %d %g %g" % (name, len(feeds), len(outputs), atol, rtol))

    def finish(self):
        self.w.finish()


# ONNX pads [b1..bk, e1..ek] for spatial dims -> F.pad's (last-dim begin, last-dim end, ...).
def torch_pad_order(pads):
    k = len(pads) // 2
    out = []
    for i in reversed(range(k)):
        out += [pads[i], pads[i + k]]
    return out


def same_pads(in_sizes, kernel, strides, dilations, upper):
    """ONNX auto_pad SAME_*: output = ceil(in / stride); the odd pad goes to the end (UPPER) or begin."""
    begins, ends = [], []
    for size, k, s, d in zip(in_sizes, kernel, strides, dilations):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small = total // 2
        b = small if upper else total - small
        begins.append(b)
        ends.append(total - b)
    return begins + ends


def conv_ref(x, w, b, strides, pads, dilations, group):
    nd = x.ndim - 2
    xt = F.pad(t(x), torch_pad_order(pads)) if any(pads) else t(x)
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    return n(fn(xt.double(), t(w).double(), None if b is None else t(b).double(), stride=strides,
                dilation=dilations, groups=group))


def add_conv(cw, name, x_shape, w_shape, bias=True, strides=None, pads=None, dilations=None, group=1,
             auto_pad=None, kernel_shape_attr=False):
    nd = len(x_shape) - 2
    x = rand(*x_shape)
    w = rand(*w_shape, scale=0.5)
    b = rand(w_shape[0]) if bias else None
    s = strides or [1] * nd
    d = dilations or [1] * nd
    attrs = {}
    if strides:
        attrs["strides"] = strides
    if dilations:
        attrs["dilations"] = dilations
    if group != 1:
        attrs["group"] = group
    if kernel_shape_attr:
        attrs["kernel_shape"] = list(w_shape[2:])
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        p = same_pads(x_shape[2:], w_shape[2:], s, d, auto_pad == "SAME_UPPER")
        attrs["auto_pad"] = auto_pad
    elif auto_pad == "VALID":
        p = [0] * (2 * nd)
        attrs["auto_pad"] = auto_pad
    else:
        p = pads or [0] * (2 * nd)
        if pads:
            attrs["pads"] = pads
    y = conv_ref(x, w, b, s, p, d, group)
    inputs = [("x", x, False), ("w", w, True)] + ([("b", b, True)] if bias else [])
    cw.add(name, "Conv", inputs, [("y", y)], attrs)


def conv_cases(cw):
    add_conv(cw, "conv2d_basic", [2, 3, 7, 8], [4, 3, 3, 3], pads=[1, 1, 1, 1])
    add_conv(cw, "conv2d_nobias_stride2", [1, 3, 9, 10], [5, 3, 3, 3], bias=False, strides=[2, 2])
    add_conv(cw, "conv2d_group2", [1, 4, 6, 6], [6, 2, 3, 3], pads=[1, 1, 1, 1], group=2)
    add_conv(cw, "conv2d_depthwise_stride2", [2, 8, 7, 7], [8, 1, 3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
             group=8)
    add_conv(cw, "conv2d_depthwise_multiplier", [1, 3, 6, 5], [6, 1, 3, 3], pads=[1, 1, 1, 1], group=3)
    add_conv(cw, "conv2d_dilation2", [1, 2, 9, 9], [3, 2, 3, 3], pads=[2, 2, 2, 2], dilations=[2, 2])
    add_conv(cw, "conv2d_dilation_stride_mixed", [1, 2, 11, 10], [3, 2, 3, 2], strides=[2, 3],
             dilations=[1, 2], pads=[1, 0, 2, 1])
    add_conv(cw, "conv2d_asymmetric_pads", [1, 3, 6, 7], [2, 3, 3, 3], pads=[0, 1, 2, 0])
    add_conv(cw, "conv2d_same_upper_stride2", [1, 3, 7, 8], [4, 3, 4, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    add_conv(cw, "conv2d_same_lower_stride2", [1, 3, 7, 8], [4, 3, 4, 3], strides=[2, 2], auto_pad="SAME_LOWER")
    add_conv(cw, "conv2d_same_upper_even_kernel", [1, 2, 5, 6], [3, 2, 2, 4], auto_pad="SAME_UPPER")
    add_conv(cw, "conv2d_same_lower_even_kernel", [1, 2, 5, 6], [3, 2, 2, 4], auto_pad="SAME_LOWER")
    add_conv(cw, "conv2d_valid", [1, 3, 8, 9], [2, 3, 3, 2], strides=[2, 1], auto_pad="VALID")
    add_conv(cw, "conv2d_pointwise", [2, 16, 5, 5], [8, 16, 1, 1])
    add_conv(cw, "conv2d_rect_kernel", [1, 3, 6, 12], [4, 3, 1, 5], strides=[1, 2], pads=[0, 2, 0, 2],
             kernel_shape_attr=True)
    add_conv(cw, "conv2d_resnet_stem", [1, 3, 32, 32], [8, 3, 7, 7], strides=[2, 2], pads=[3, 3, 3, 3])
    add_conv(cw, "conv1d_stride2_pads", [2, 3, 11], [4, 3, 3], strides=[2], pads=[1, 2])
    add_conv(cw, "conv1d_dilated_group", [1, 4, 12], [4, 2, 3], dilations=[3], group=2, bias=False)
    add_conv(cw, "conv1d_same_upper", [1, 2, 9], [3, 2, 4], strides=[2], auto_pad="SAME_UPPER")
    add_conv(cw, "conv3d_small", [1, 2, 4, 5, 5], [3, 2, 2, 3, 3], pads=[1, 1, 1, 0, 1, 1])


def conv_transpose_ref(x, w, b, strides, pads, dilations, group, output_padding):
    """torch's conv_transpose without padding, then the ONNX pads cropped (torch pads only symmetrically)."""
    nd = x.ndim - 2
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[nd]
    full = fn(t(x).double(), t(w).double(), None if b is None else t(b).double(), stride=strides,
              output_padding=output_padding, groups=group, dilation=dilations)
    crop = (slice(None), slice(None)) + tuple(slice(pads[i], full.shape[2 + i] - pads[nd + i]) for i in range(nd))
    return n(full[crop])


def add_conv_transpose(cw, name, x_shape, w_shape, bias=True, strides=None, pads=None, dilations=None, group=1,
                       output_padding=None, output_shape=None, auto_pad=None):
    nd = len(x_shape) - 2
    x = rand(*x_shape)
    w = rand(*w_shape, scale=0.5)
    b = rand(w_shape[1] * group) if bias else None
    s = strides or [1] * nd
    d = dilations or [1] * nd
    op = output_padding or [0] * nd
    attrs = {"strides": s, "dilations": d}
    if group != 1:
        attrs["group"] = group
    if output_padding:
        attrs["output_padding"] = output_padding
    p = pads or [0] * (2 * nd)
    if pads:
        attrs["pads"] = pads
    if output_shape or auto_pad:
        # ONNX: total padding = full extent - wanted extent; the odd element goes to the end for SAME_UPPER,
        # to the beginning otherwise.
        want = output_shape or [x_shape[2 + i] * s[i] for i in range(nd)]
        total = [s[i] * (x_shape[2 + i] - 1) + op[i] + (w_shape[2 + i] - 1) * d[i] + 1 - want[i] for i in range(nd)]
        upper = auto_pad == "SAME_UPPER"
        p = [tt // 2 if upper else tt - tt // 2 for tt in total] + [tt - tt // 2 if upper else tt // 2 for tt in total]
        if output_shape:
            attrs["output_shape"] = output_shape
        if auto_pad:
            attrs["auto_pad"] = auto_pad
    y = conv_transpose_ref(x, w, b, s, p, d, group, op)
    inputs = [("x", x, False), ("w", w, True)] + ([("b", b, True)] if bias else [])
    cw.add(name, "ConvTranspose", inputs, [("y", y)], attrs)
    return x, w, b, y


def conv_transpose_cases(cw):
    # Symmetric padding also straight through torch's own padding, to check the crop above.
    x, w, b, y = add_conv_transpose(cw, "convtranspose2d_s2_p1", [2, 4, 5, 6], [4, 3, 3, 3], strides=[2, 2],
                                    pads=[1, 1, 1, 1])
    np.testing.assert_allclose(y, n(F.conv_transpose2d(t(x), t(w), t(b), stride=2, padding=1)), atol=1e-5)
    add_conv_transpose(cw, "convtranspose2d_asymmetric_pads", [1, 2, 4, 5], [2, 3, 3, 2], pads=[0, 1, 2, 0])
    add_conv_transpose(cw, "convtranspose2d_group_dilation", [1, 6, 5, 4], [6, 2, 3, 3], group=3,
                       dilations=[2, 1], strides=[1, 2], bias=False)
    add_conv_transpose(cw, "convtranspose2d_output_padding", [1, 3, 4, 4], [3, 2, 3, 3], strides=[3, 2],
                       output_padding=[2, 1], pads=[1, 0, 1, 0])
    add_conv_transpose(cw, "convtranspose2d_output_shape", [1, 3, 4, 5], [3, 2, 3, 3], strides=[3, 2],
                       output_shape=[12, 10])
    # An output_shape past the full extent: the extra rows and columns hold the bias, as output_padding gives.
    x, w, b = rand(1, 2, 3, 3), rand(2, 2, 3, 3), rand(2)
    cw.add("convtranspose2d_output_shape_past_full", "ConvTranspose", [("x", x, False), ("w", w, True), ("b", b, True)],
           [("y", conv_transpose_ref(x, w, b, [3, 2], [0, 0, 0, 0], [1, 1], 1, [1, 1]))],
           {"strides": [3, 2], "output_shape": [10, 8]})
    add_conv_transpose(cw, "convtranspose2d_same_upper", [1, 2, 3, 4], [2, 2, 4, 3], strides=[2, 2],
                       auto_pad="SAME_UPPER")
    add_conv_transpose(cw, "convtranspose2d_same_lower", [1, 2, 3, 4], [2, 2, 4, 3], strides=[2, 2],
                       auto_pad="SAME_LOWER")
    add_conv_transpose(cw, "convtranspose1d", [2, 3, 7], [3, 4, 5], strides=[2], pads=[2, 1])
    add_conv_transpose(cw, "convtranspose1d_group_output_padding", [1, 4, 6], [4, 1, 3], group=4, strides=[2],
                       output_padding=[1], bias=False)
    add_conv_transpose(cw, "convtranspose3d", [1, 2, 3, 4, 3], [2, 2, 2, 3, 2], strides=[2, 1, 2],
                       pads=[1, 0, 0, 0, 1, 1])


def rnn_cases(cw):
    """torch.nn.LSTM / GRU / RNN exported to ONNX by PyTorch itself (its gate reordering, its GRU with
    linear_before_reset=1, its layout-0 nodes between transposes), against the module's own outputs."""
    class Flat(torch.nn.Module):
        """The module with its initial states as separate arguments and its outputs as one flat tuple."""

        def __init__(self, rnn):
            super().__init__()
            self.rnn = rnn

        def forward(self, x, *state):
            if isinstance(self.rnn, torch.nn.LSTM):
                y, (h, c) = self.rnn(x, (state[0], state[1])) if state else self.rnn(x)
                return y, h, c
            return self.rnn(x, state[0]) if state else self.rnn(x)

    def export(name, rnn, feeds, input_names, output_names):
        module = Flat(rnn).eval()
        with torch.no_grad():
            flat = module(*[t(f) for f in feeds])
        buf = io.BytesIO()
        with warnings.catch_warnings():  # the exporter's batch-size and shape-inference notes
            warnings.simplefilter("ignore")
            torch.onnx.export(module, tuple(t(f) for f in feeds), buf, opset_version=14, input_names=input_names,
                              output_names=output_names)
        cw.add_model(name, onnx.load_from_string(buf.getvalue()), feeds, [n(w) for w in flat])

    torch.manual_seed(7)
    seq, batch, feat, hidden = 5, 3, 4, 6
    x = rand(seq, batch, feat)
    h0 = rand(2, batch, hidden)
    c0 = rand(2, batch, hidden)
    export("lstm_bidirectional_initial_state", torch.nn.LSTM(feat, hidden, bidirectional=True), [x, h0, c0],
           ["x", "h0", "c0"], ["y", "y_h", "y_c"])
    export("lstm_two_layers", torch.nn.LSTM(feat, hidden, num_layers=2), [x], ["x"], ["y", "y_h", "y_c"])
    export("gru_forward_initial_state", torch.nn.GRU(feat, hidden), [x, h0[:1]], ["x", "h0"], ["y", "y_h"])
    export("gru_bidirectional_batch_first", torch.nn.GRU(feat, hidden, bidirectional=True, batch_first=True),
           [rand(batch, seq, feat)], ["x"], ["y", "y_h"])
    export("rnn_tanh_bidirectional", torch.nn.RNN(feat, hidden, bidirectional=True), [x, h0], ["x", "h0"],
           ["y", "y_h"])
    export("rnn_relu", torch.nn.RNN(feat, hidden, nonlinearity="relu", bias=False), [x], ["x"], ["y", "y_h"])


def bn_cases(cw):
    for name, shape, eps in [("batchnorm_4d", [2, 3, 4, 5], 1e-3), ("batchnorm_2d", [4, 3], None),
                             ("batchnorm_3d", [2, 3, 7], 1e-5)]:
        c = shape[1]
        x = rand(*shape)
        scale, bias, mean = rand(c), rand(c), rand(c)
        var = (_rng.random(c) + 0.5).astype(np.float32)
        y = n(F.batch_norm(t(x).double(), t(mean).double(), t(var).double(), t(scale).double(), t(bias).double(),
                           training=False, eps=1e-5 if eps is None else eps))
        attrs = {} if eps is None else {"epsilon": eps}
        cw.add(name, "BatchNormalization",
               [("x", x, False), ("scale", scale, True), ("bias", bias, True), ("mean", mean, True),
                ("var", var, True)], [("y", y)], attrs, opset=15)


def pool_fn(nd, kind):
    if kind == "max":
        return {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nd]
    return {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[nd]


def pool_ref(x, kind, kernel, strides, pads, dilations, ceil_mode, count_include_pad):
    """Explicit (possibly asymmetric) pads: pad first, then pool without padding. Max pads with -inf;
    average divides the zero-padded window sum by the window count of real (or padded) elements."""
    nd = x.ndim - 2
    fn = pool_fn(nd, kind)
    order = torch_pad_order(pads)
    xt = t(x).double()
    if kind == "max":
        xp = F.pad(xt, order, value=-math.inf)
        return n(fn(xp, kernel, stride=strides, dilation=dilations, ceil_mode=ceil_mode))
    assert all(d == 1 for d in dilations)
    xp = F.pad(xt, order)
    # avg_pool over padded tensors (padding=0) averages what it covers; ratios of two such averages
    # over the same windows give sum / count.
    if count_include_pad:
        ones = F.pad(torch.ones_like(xt), order, value=1.0)
    else:
        ones = F.pad(torch.ones_like(xt), order, value=0.0)
    num = fn(xp, kernel, stride=strides, ceil_mode=ceil_mode)
    den = fn(ones, kernel, stride=strides, ceil_mode=ceil_mode)
    return n(num / den)


def add_pool(cw, name, kind, x_shape, kernel, strides=None, pads=None, dilations=None, ceil_mode=False,
             count_include_pad=None, auto_pad=None, torch_direct=False, shape_check=True):
    nd = len(x_shape) - 2
    x = rand(*x_shape)
    s = strides or [1] * nd
    d = dilations or [1] * nd
    attrs = {"kernel_shape": kernel}
    if strides:
        attrs["strides"] = strides
    if dilations:
        attrs["dilations"] = dilations
    if ceil_mode:
        attrs["ceil_mode"] = 1
    if count_include_pad is not None:
        attrs["count_include_pad"] = int(count_include_pad)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        p = same_pads(x_shape[2:], kernel, s, d, auto_pad == "SAME_UPPER")
        attrs["auto_pad"] = auto_pad
    else:
        p = pads or [0] * (2 * nd)
        if pads:
            attrs["pads"] = pads
    if torch_direct:
        # Symmetric pads handed to PyTorch itself (its own ceil_mode and count_include_pad rules).
        assert p[:nd] == p[nd:]
        fn = pool_fn(nd, kind)
        if kind == "max":
            y = n(fn(t(x).double(), kernel, stride=s, padding=p[:nd], dilation=d, ceil_mode=ceil_mode))
        else:
            y = n(fn(t(x).double(), kernel, stride=s, padding=p[:nd], ceil_mode=ceil_mode,
                     count_include_pad=bool(count_include_pad)))
    else:
        y = pool_ref(x, kind, kernel, s, p, d, ceil_mode, bool(count_include_pad))
    cw.add(name, "MaxPool" if kind == "max" else "AveragePool", [("x", x, False)], [("y", y)], attrs,
           shape_check=shape_check)


def pool_cases(cw):
    add_pool(cw, "maxpool2d_k3s2p1", "max", [1, 2, 9, 9], [3, 3], [2, 2], [1, 1, 1, 1], torch_direct=True)
    add_pool(cw, "maxpool2d_k2s2", "max", [2, 3, 8, 6], [2, 2], [2, 2], torch_direct=True)
    add_pool(cw, "maxpool2d_ceil", "max", [1, 2, 8, 8], [3, 3], [2, 2], ceil_mode=True, torch_direct=True)
    # The last ceil_mode window would start in the end padding and is dropped (PyTorch's rule, in the
    # ONNX spec since onnx PR 5741; the onnx 1.12 shape inference here predates it).
    add_pool(cw, "maxpool2d_ceil_drops_pad_window", "max", [1, 1, 9, 9], [2, 2], [2, 2], [1, 1, 1, 1],
             ceil_mode=True, torch_direct=True, shape_check=False)
    add_pool(cw, "maxpool2d_dilation2", "max", [1, 2, 9, 8], [3, 2], [1, 2], dilations=[2, 3], torch_direct=True)
    add_pool(cw, "maxpool2d_asymmetric_pads", "max", [1, 2, 7, 7], [3, 3], [2, 2], [1, 0, 0, 2])
    add_pool(cw, "maxpool2d_same_upper", "max", [1, 2, 7, 8], [3, 2], [2, 2], auto_pad="SAME_UPPER")
    add_pool(cw, "maxpool2d_same_lower", "max", [1, 2, 7, 8], [3, 2], [2, 2], auto_pad="SAME_LOWER")
    add_pool(cw, "maxpool1d", "max", [2, 3, 10], [3], [2], torch_direct=True)
    add_pool(cw, "maxpool3d", "max", [1, 2, 5, 6, 6], [2, 3, 3], [1, 2, 2], [0, 1, 1, 0, 1, 1], torch_direct=True)
    add_pool(cw, "avgpool2d_k2s2", "avg", [2, 3, 8, 6], [2, 2], [2, 2], torch_direct=True)
    add_pool(cw, "avgpool2d_pad_include", "avg", [1, 2, 9, 9], [3, 3], [2, 2], [1, 1, 1, 1],
             count_include_pad=True, torch_direct=True)
    add_pool(cw, "avgpool2d_pad_exclude", "avg", [1, 2, 9, 9], [3, 3], [2, 2], [1, 1, 1, 1],
             count_include_pad=False, torch_direct=True)
    add_pool(cw, "avgpool2d_ceil_include", "avg", [1, 2, 8, 8], [3, 3], [2, 2], [1, 1, 1, 1], ceil_mode=True,
             count_include_pad=True, torch_direct=True)
    add_pool(cw, "avgpool2d_ceil_exclude", "avg", [1, 2, 8, 8], [3, 3], [2, 2], [1, 1, 1, 1], ceil_mode=True,
             count_include_pad=False, torch_direct=True)
    add_pool(cw, "avgpool2d_ceil_nopad", "avg", [1, 2, 7, 7], [2, 2], [2, 2], ceil_mode=True, torch_direct=True)
    add_pool(cw, "avgpool2d_asymmetric_include", "avg", [1, 2, 7, 6], [3, 3], [2, 2], [0, 1, 2, 0],
             count_include_pad=True)
    add_pool(cw, "avgpool2d_asymmetric_exclude", "avg", [1, 2, 7, 6], [3, 3], [2, 2], [0, 1, 2, 0],
             count_include_pad=False)
    add_pool(cw, "avgpool2d_same_upper_exclude", "avg", [1, 2, 7, 8], [3, 4], [2, 2], auto_pad="SAME_UPPER")
    add_pool(cw, "avgpool2d_same_lower_include", "avg", [1, 2, 7, 8], [3, 4], [2, 2], auto_pad="SAME_LOWER",
             count_include_pad=True)
    add_pool(cw, "avgpool1d_pad_exclude", "avg", [2, 3, 10], [4], [3], [2, 2], count_include_pad=False,
             torch_direct=True)

    # MaxPool's Indices (PyTorch's return_indices counts within each plane; ONNX's flat index into X adds
    # the plane's offset), row-major, and with storage_order 1 (spatial axes column-major: h + w * H).
    x = np.random.default_rng(7).standard_normal((2, 3, 7, 6)).astype(np.float32)
    y, idx = F.max_pool2d(torch.from_numpy(x), 3, 2, 1, return_indices=True)
    plane = 7 * 6
    flat = idx.numpy() + (np.arange(2 * 3).reshape(2, 3, 1, 1) * plane)
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    cw.add("maxpool2d_indices", "MaxPool", [("x", x, False)], [("y", y.numpy()), ("indices", flat.astype(np.int64))],
           attrs, opset=12, atol=0, rtol=0)
    h, w = idx.numpy() // 6, idx.numpy() % 6
    column = h + w * 7 + (np.arange(2 * 3).reshape(2, 3, 1, 1) * plane)
    cw.add("maxpool2d_indices_column_major", "MaxPool", [("x", x, False)],
           [("y", y.numpy()), ("indices", column.astype(np.int64))], dict(attrs, storage_order=1), opset=12,
           atol=0, rtol=0)

    # MaxUnpool of a 7x7 pooling (PyTorch's max_unpool2d), with the extents from kernel, strides and pads,
    # and with an output_shape one row larger (PyTorch's output_size).
    x7 = np.random.default_rng(8).standard_normal((2, 3, 7, 7)).astype(np.float32)
    y7, idx7 = F.max_pool2d(torch.from_numpy(x7), 3, 2, 1, return_indices=True)
    planes = np.arange(6).reshape(2, 3, 1, 1)
    up = F.max_unpool2d(y7, idx7, 3, 2, 1)
    cw.add("maxunpool2d", "MaxUnpool", [("y", y7.numpy(), False), ("i", (idx7.numpy() + planes * 49).astype(np.int64), False)],
           [("x", up.numpy())], attrs, opset=11, atol=0, rtol=0)
    # ONNX reads the indices in the original 7x7 extents and places those coordinates in output_shape:
    # with the width kept, that is PyTorch's output_size.
    up = F.max_unpool2d(y7, idx7, 3, 2, 1, output_size=[8, 7])
    cw.add("maxunpool2d_output_shape", "MaxUnpool",
           [("y", y7.numpy(), False), ("i", (idx7.numpy() + planes * 49).astype(np.int64), False),
            ("shape", np.array([2, 3, 8, 7], np.int64), True)],
           [("x", up.numpy())], attrs, opset=11, atol=0, rtol=0)

    # Det (numpy.linalg.det in float64): one matrix, a batch of them, a singular one.
    a = np.random.default_rng(9).standard_normal((2, 3, 4, 4)).astype(np.float32)
    a[1, 2, 3] = a[1, 2, 0]  # two equal rows
    cw.add("det_batched", "Det", [("a", a, False)], [("d", np.linalg.det(a.astype(np.float64)).astype(np.float32))],
           opset=11, atol=1e-5, rtol=1e-5)
    m = np.random.default_rng(10).standard_normal((5, 5)).astype(np.float32)
    cw.add("det_single", "Det", [("a", m, False)], [("d", np.array(np.linalg.det(m.astype(np.float64)), np.float32))],
           opset=11, atol=1e-5, rtol=1e-5)

    for name, shape in [("globalavgpool_2d", [2, 3, 5, 6]), ("globalavgpool_1d", [2, 3, 7]),
                        ("globalavgpool_3d", [1, 2, 3, 4, 5])]:
        x = rand(*shape)
        axes = tuple(range(2, len(shape)))
        y = n(t(x).double().mean(dim=axes, keepdim=True))
        cw.add(name, "GlobalAveragePool", [("x", x, False)], [("y", y)])


def matmul_ref(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)


def matmul_cases(cw):
    for name, ashape, bshape, b_const in [
        ("matmul_2d", [3, 4], [4, 5], False),
        ("matmul_1d_2d", [4], [4, 5], False),
        ("matmul_2d_1d", [3, 4], [4], False),
        ("matmul_1d_1d", [6], [6], False),
        ("matmul_3d_2d_weight", [2, 3, 4], [4, 5], True),
        ("matmul_2d_3d", [3, 4], [2, 4, 5], False),
        ("matmul_batch_broadcast", [2, 1, 3, 4], [5, 4, 6], False),
        ("matmul_4d_1d", [2, 3, 4, 5], [5], False),
        ("matmul_1d_3d", [4], [2, 4, 3], False),
        ("matmul_long_k", [2, 257], [257, 3], False),
    ]:
        a = rand(*ashape)
        b = rand(*bshape)
        cw.add(name, "MatMul", [("a", a, False), ("b", b, b_const)], [("y", matmul_ref(a, b))])


def gemm_cases(cw):
    m, k, nn = 3, 4, 5
    for name, trans_a, trans_b, alpha, beta, c_shape, b_const in [
        ("gemm_basic_bias_row", 0, 0, None, None, [nn], False),
        ("gemm_transA", 1, 0, None, None, [m, nn], False),
        ("gemm_transB_linear", 0, 1, None, None, [nn], True),
        ("gemm_transA_transB", 1, 1, None, None, [1, nn], False),
        ("gemm_alpha_beta", 0, 0, 0.5, 2.0, [m, 1], False),
        ("gemm_scalar_c", 0, 1, 1.5, -1.0, [], False),
        ("gemm_c_1", 0, 0, None, 0.25, [1], False),
        ("gemm_no_c", 1, 0, 2.0, None, None, False),
    ]:
        a = rand(*([k, m] if trans_a else [m, k]))
        b = rand(*([nn, k] if trans_b else [k, nn]))
        a2 = a.T if trans_a else a
        b2 = b.T if trans_b else b
        y = (1.0 if alpha is None else alpha) * (a2.astype(np.float64) @ b2.astype(np.float64))
        inputs = [("a", a, False), ("b", b, b_const)]
        if c_shape is not None:
            c = rand(*c_shape)
            y = y + (1.0 if beta is None else beta) * c.astype(np.float64)
            inputs.append(("c", c, b_const))
        attrs = {}
        if trans_a:
            attrs["transA"] = 1
        if trans_b:
            attrs["transB"] = 1
        if alpha is not None:
            attrs["alpha"] = alpha
        if beta is not None:
            attrs["beta"] = beta
        cw.add(name, "Gemm", inputs, [("y", y.astype(np.float32))], attrs)


def softmax_cases(cw):
    for name, shape, axis, scale in [("softmax_axis0", [3, 4, 5], 0, 1.0), ("softmax_axis1", [3, 4, 5], 1, 1.0),
                                     ("softmax_axis_neg1", [3, 4, 5], -1, 1.0),
                                     ("softmax_default_axis", [2, 7], None, 1.0),
                                     ("softmax_large_values", [4, 6], 1, 60.0),
                                     ("softmax_1d", [9], 0, 3.0)]:
        x = rand(*shape, scale=scale)
        y = n(torch.softmax(t(x).double(), dim=-1 if axis is None else axis))
        cw.add(name, "Softmax", [("x", x, False)], [("y", y)], {} if axis is None else {"axis": axis})


def softmax_family_cases(cw):
    """LogSoftmax (PyTorch, in double), Hardmax (one at the first maximum; numpy) and ArgMax/ArgMin."""
    for name, shape, axis in [("logsoftmax_axis1", [3, 4, 5], 1), ("logsoftmax_default_axis", [2, 7], None)]:
        x = rand(*shape, scale=3.0)
        y = n(torch.log_softmax(t(x).double(), dim=-1 if axis is None else axis))
        cw.add(name, "LogSoftmax", [("x", x, False)], [("y", y)], {} if axis is None else {"axis": axis})
    x = rand(3, 4, 5)
    x[0, 1, :] = x[0, 2, :]  # a tie along axis 1: the first of them gets the one
    idx = np.argmax(x, axis=1)
    y = np.zeros_like(x)
    np.put_along_axis(y, np.expand_dims(idx, 1), 1.0, axis=1)
    cw.add("hardmax_axis1", "Hardmax", [("x", x, False)], [("y", y)], {"axis": 1})
    xi = np.array([[3, 1, 3, 0], [2, 2, -1, 5]], dtype=np.int64)
    for op, fn in [("ArgMax", np.argmax), ("ArgMin", np.argmin)]:
        cw.add("%s_axis1_keepdims" % op.lower(), op, [("x", x, False)],
               [("y", np.expand_dims(fn(x, axis=1), 1).astype(np.int64))], {"axis": 1})
        cw.add("%s_axis0_nokeepdims_i64" % op.lower(), op, [("x", xi, False)],
               [("y", fn(xi, axis=0).astype(np.int64))], {"axis": 0, "keepdims": 0})
        # select_last_index: the last of equal extremes (numpy gives the first; flip, then map back).
        last = xi.shape[1] - 1 - fn(xi[:, ::-1], axis=1)
        cw.add("%s_last_index" % op.lower(), op, [("x", xi, False)],
               [("y", np.expand_dims(last, 1).astype(np.int64))], {"axis": 1, "select_last_index": 1})


def layernorm_cases(cw):
    for name, shape, axis, bias, eps, scale_shape in [
        ("layernorm_last_axis", [2, 3, 8], -1, True, None, None),
        ("layernorm_axis1", [2, 3, 4, 5], 1, True, 1e-3, None),
        ("layernorm_no_bias", [2, 4, 5], -2, False, None, None),
        ("layernorm_scale_broadcast", [3, 4, 5], 1, True, None, [1, 5]),
    ]:
        x = rand(*shape, scale=2.0)
        ax = axis % len(shape)
        norm_shape = shape[ax:]
        scale = rand(*(scale_shape or norm_shape))
        b = rand(*norm_shape) if bias else None
        normed = F.layer_norm(t(x).double(), norm_shape, eps=1e-5 if eps is None else eps)
        y = normed * t(scale).double()
        if bias:
            y = y + t(b).double()
        inputs = [("x", x, False), ("scale", scale, True)] + ([("b", b, True)] if bias else [])
        attrs = {"axis": axis}
        if eps is not None:
            attrs["epsilon"] = eps
        cw.add(name, "LayerNormalization", inputs, [("y", n(y))], attrs, opset=17)


def layernorm_stats_cases(cw):
    """LayerNormalization's optional Mean and InvStdDev outputs (normalized axes kept as 1), in numpy double."""
    x = rand(2, 3, 4, scale=2.0)
    scale, b = rand(3, 4), rand(3, 4)
    xd = x.astype(np.float64)
    mean = xd.mean(axis=(1, 2), keepdims=True)
    inv_std = 1.0 / np.sqrt(((xd - mean) ** 2).mean(axis=(1, 2), keepdims=True) + 1e-5)
    y = (xd - mean) * inv_std * scale + b
    cw.add("layernorm_mean_invstddev", "LayerNormalization", [("x", x, False), ("scale", scale, True), ("b", b, True)],
           [("y", y.astype(np.float32)), ("mean", mean.astype(np.float32)), ("inv_std", inv_std.astype(np.float32))],
           {"axis": 1}, opset=17)


def reduce_cases(cw):
    x3 = rand(2, 3, 4)
    x4 = rand(2, 3, 5, 6)
    cases = [
        ("axes1_keepdims", x3, [1], 1, 0),
        ("axes02_nokeepdims", x3, [0, 2], 0, 0),
        ("negative_axis", x3, [-1], 1, 0),
        ("negative_axes_nokeepdims", x4, [-2, -1], 0, 0),
        ("spatial_keepdims", x4, [2, 3], 1, 0),
        ("all_nokeepdims", x3, None, 0, 0),
        ("all_keepdims", x3, None, 1, 0),
        ("empty_axes_reduces_all", x3, [], 1, 0),
        ("noop_with_empty_axes", x3, None, 1, 1),
    ]
    for op, fn in [("ReduceMean", np.mean), ("ReduceSum", np.sum)]:
        for suffix, x, axes, keepdims, noop in cases:
            name = "%s_%s" % (op.lower().replace("reduce", "reduce_"), suffix)
            if axes is None and noop:
                y = x
            else:
                ax = None if not axes else tuple(axes)
                y = fn(x.astype(np.float64), axis=ax, keepdims=bool(keepdims)).astype(np.float32)
            inputs = [("x", x, False)]
            if axes is not None:
                inputs.append(("axes", np.array(axes, dtype=np.int64), True))
            attrs = {"keepdims": keepdims}
            if noop:
                attrs["noop_with_empty_axes"] = 1
            # ReduceSum takes axes as an input since opset 13, ReduceMean since 18.
            cw.add(name, op, inputs, [("y", np.asarray(y, dtype=np.float32))], attrs,
                   opset=18 if op == "ReduceMean" else 13)
    # The other reductions (opset 18: axes as an input), against numpy in double.
    positive = np.abs(x3) + 0.1
    for op, fn, x in [("ReduceMax", np.max, x3), ("ReduceMin", np.min, x3), ("ReduceProd", np.prod, x3),
                      ("ReduceL1", lambda v, **k: np.sum(np.abs(v), **k), x3),
                      ("ReduceL2", lambda v, **k: np.sqrt(np.sum(v * v, **k)), x3),
                      ("ReduceSumSquare", lambda v, **k: np.sum(v * v, **k), x3),
                      ("ReduceLogSum", lambda v, **k: np.log(np.sum(v, **k)), positive),
                      ("ReduceLogSumExp", lambda v, **k: np.log(np.sum(np.exp(v), **k)), x3)]:
        for suffix, axes, keepdims in [("axes1_keepdims", [1], 1), ("axes02_nokeepdims", [0, 2], 0),
                                       ("all_keepdims", None, 1)]:
            y = fn(x.astype(np.float64), axis=None if axes is None else tuple(axes), keepdims=bool(keepdims))
            inputs = [("x", x, False)] + ([] if axes is None else [("axes", np.array(axes, dtype=np.int64), True)])
            cw.add("%s_%s" % (op.lower(), suffix), op, inputs, [("y", np.asarray(y, dtype=np.float32))],
                   {"keepdims": keepdims}, opset=18)
    # Integer tensors (shape and box-count arithmetic in detection models), exact: beyond 2^53, where a
    # double accumulator would round, and i32.
    big = np.array([[2**60 + 3, -7, 2**55 + 1], [5, 2**61 - 1, -(2**62)]], np.int64)
    for op, fn in [("ReduceMin", np.min), ("ReduceMax", np.max), ("ReduceSum", np.sum)]:
        cw.add("%s_i64_axes1" % op.lower(), op, [("x", big, False), ("axes", np.array([1], np.int64), True)],
               [("y", fn(big, axis=1, keepdims=True))], {"keepdims": 1}, opset=18, atol=0, rtol=0)
    # Double in, double out, within 1e-13 (an f32 path would miss by ~1e-7).
    xd = x3.astype(np.float64) / 3.0
    for op, fn in [("ReduceLogSumExp", lambda v, **k: np.log(np.sum(np.exp(v), **k))), ("ReduceSum", np.sum)]:
        cw.add("%s_f64_axes1" % op.lower(), op, [("x", xd, False), ("axes", np.array([1], np.int64), True)],
               [("y", fn(xd, axis=1, keepdims=True))], {"keepdims": 1}, opset=18, atol=1e-13, rtol=1e-13)
    small = np.array([[3, -2, 4], [1, 5, -6]], np.int32)
    cw.add("reduceprod_i32_all", "ReduceProd", [("x", small, False)],
           [("y", np.prod(small, keepdims=False).astype(np.int32))], {"keepdims": 0}, opset=18, atol=0, rtol=0)
    # Axes known only at run time (keepdims=1 keeps the output rank known at compile time).
    y = np.mean(x4.astype(np.float64), axis=(1, 3), keepdims=True).astype(np.float32)
    cw.add("reduce_mean_runtime_axes", "ReduceMean",
           [("x", x4, False), ("axes", np.array([1, -1], dtype=np.int64), False)], [("y", y)], {"keepdims": 1},
           opset=18)
    # The opset-13 ReduceMean form (axes attribute), which the importer upgrades to an input.
    y = np.mean(x3.astype(np.float64), axis=1, keepdims=False).astype(np.float32)
    cw.add("reduce_mean_opset13_axes_attribute", "ReduceMean", [("x", x3, False)], [("y", y)],
           {"axes": [1], "keepdims": 0}, opset=13)


def np_pad(x, pads, mode, value=0):
    """ONNX pads [b0..bk, e0..ek] with numpy (negative pads crop)."""
    k = x.ndim
    begins, ends = pads[:k], pads[k:]
    crop = tuple(slice(max(-b, 0), x.shape[i] - max(-e, 0)) for i, (b, e) in enumerate(zip(begins, ends)))
    x = x[crop]
    width = [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends)]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    return np.pad(x, width, mode={"reflect": "reflect", "edge": "edge"}[mode])


def pad_cases(cw):
    x3 = rand(2, 3, 4)
    x4 = rand(1, 2, 5, 6)
    i64 = np.int64
    for name, x, pads, mode, value, opset in [
        ("pad_constant_value", x3, [0, 1, 2, 1, 0, 3], "constant", 1.5, 13),
        ("pad_constant_default_zero", x4, [0, 0, 1, 2, 0, 0, 3, 1], None, None, 13),
        ("pad_reflect", x4, [0, 0, 2, 3, 0, 0, 1, 2], "reflect", None, 13),
        ("pad_edge", x4, [0, 1, 2, 0, 0, 0, 1, 4], "edge", None, 13),
        ("pad_negative_crops", x3, [0, -1, 1, 0, 2, -2], "constant", -2.0, 13),
        ("pad_reflect_opset18", x3, [1, 1, 2, 0, 1, 3], "reflect", None, 18),
    ]:
        y = np_pad(x, pads, mode or "constant", 0 if value is None else value)
        inputs = [("x", x, False), ("pads", np.array(pads, dtype=i64), True)]
        if value is not None:
            inputs.append(("value", np.array(value, dtype=np.float32), True))
        cw.add(name, "Pad", inputs, [("y", y)], {} if mode is None else {"mode": mode}, opset=opset)

    # Opset 18 axes input: pads for axes [-1, 1] only.
    full = [0, 0, 1, 0, 2, 0]  # axis 1 gets (0, 2), axis 2 gets (1, 0)
    y = np_pad(x3, full, "edge")
    cw.add("pad_axes_input_edge", "Pad",
           [("x", x3, False), ("pads", np.array([1, 0, 0, 2], dtype=i64), True), None,
            ("axes", np.array([-1, 1], dtype=i64), True)], [("y", y)], {"mode": "edge"}, opset=18)
    # Pads known only at run time.
    pads = [1, 0, 0, 0, 0, 2, 0, 1]
    cw.add("pad_runtime_pads", "Pad", [("x", x4, False), ("pads", np.array(pads, dtype=i64), False)],
           [("y", np_pad(x4, pads, "constant"))], {"mode": "constant"}, opset=13)
    # Integer data (Pad moves elements of any dtype).
    xi = _rng.integers(-100, 100, size=(3, 4)).astype(np.int64)
    pads = [1, 2, 0, 1]
    cw.add("pad_constant_int64", "Pad",
           [("x", xi, False), ("pads", np.array(pads, dtype=i64), True), ("value", np.array(7, dtype=np.int64), True)],
           [("y", np_pad(xi, pads, "constant", 7))], {"mode": "constant"}, opset=13)


# ---- Resize: ONNX formulas in numpy, checked against PyTorch where PyTorch has the same mode. ----

def src_coord(mode, o, in_size, out_size, scale):
    if mode == "half_pixel":
        return (o + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (o + 0.5) / scale - 0.5 if out_size > 1 else 0.0
    if mode == "align_corners":
        return 0.0 if out_size == 1 else o * (in_size - 1) / (out_size - 1)
    if mode == "asymmetric":
        return o / scale
    raise ValueError(mode)


def nearest_index(nearest_mode, x, in_size):
    f = math.floor(x)
    if nearest_mode == "round_prefer_floor":
        r = f if x - f <= 0.5 else f + 1
    elif nearest_mode == "round_prefer_ceil":
        r = f if x - f < 0.5 else f + 1
    elif nearest_mode == "floor":
        r = f
    else:
        r = math.ceil(x)
    return min(max(int(r), 0), in_size - 1)


def np_resize(x, out_shape, scales, mode, coord, nearest_mode="round_prefer_floor"):
    y = x.astype(np.float64)
    for axis in range(x.ndim):
        in_size, out_size = y.shape[axis], out_shape[axis]
        coords = [src_coord(coord, o, in_size, out_size, scales[axis]) for o in range(out_size)]
        if mode == "nearest":
            idx = [nearest_index(nearest_mode, c, in_size) for c in coords]
            y = np.take(y, idx, axis=axis)
            continue
        c = np.clip(np.array(coords), 0, in_size - 1)
        i0 = np.floor(c).astype(np.int64)
        i1 = np.minimum(i0 + 1, in_size - 1)
        w = c - i0
        shape = [1] * y.ndim
        shape[axis] = out_size
        w = w.reshape(shape)
        y = np.take(y, i0, axis=axis) * (1 - w) + np.take(y, i1, axis=axis) * w
    return y.astype(np.float32)


def check_np_resize_against_torch():
    x = rand(1, 2, 5, 7)
    for size in [(9, 13), (3, 4), (10, 14), (5, 7), (1, 3)]:
        sc = [1.0, 1.0, size[0] / 5, size[1] / 7]
        out = [1, 2, size[0], size[1]]
        pairs = [
            (np_resize(x, out, sc, "linear", "half_pixel"),
             F.interpolate(t(x).double(), size=size, mode="bilinear", align_corners=False)),
            (np_resize(x, out, sc, "linear", "align_corners"),
             F.interpolate(t(x).double(), size=size, mode="bilinear", align_corners=True)),
            (np_resize(x, out, sc, "nearest", "asymmetric", "floor"),
             F.interpolate(t(x).double(), size=size, mode="nearest")),
            (np_resize(x, out, sc, "nearest", "half_pixel", "round_prefer_ceil"),
             F.interpolate(t(x).double(), size=size, mode="nearest-exact")),
        ]
        if min(size) > 1:
            # pytorch_half_pixel is the mapping older PyTorch used; it differs only for an extent of 1.
            pairs.append((np_resize(x, out, sc, "linear", "pytorch_half_pixel"),
                          F.interpolate(t(x).double(), size=size, mode="bilinear", align_corners=False)))
        for mine, ref in pairs:
            np.testing.assert_allclose(mine, n(ref), atol=1e-5, rtol=1e-5)


def resize_cases(cw):
    check_np_resize_against_torch()
    empty_roi = ("roi", np.zeros([0], dtype=np.float32), True)
    x = rand(1, 2, 3, 4)

    def add_scales(name, x, scales, mode, coord, nearest=None, opset=13, torch_ref=None):
        scales = np.array(scales, dtype=np.float32)
        out = [int(math.floor(np.float32(d) * s)) for d, s in zip(x.shape, scales)]
        y = np_resize(x, out, [float(s) for s in scales], mode, coord, nearest or "round_prefer_floor")
        if torch_ref is not None:
            np.testing.assert_allclose(y, n(torch_ref), atol=1e-5, rtol=1e-5)
        attrs = {"mode": mode, "coordinate_transformation_mode": coord}
        if nearest:
            attrs["nearest_mode"] = nearest
        cw.add(name, "Resize", [("x", x, False), empty_roi, ("scales", scales, True)], [("y", y)], attrs,
               opset=opset)

    def add_sizes(name, x, sizes, mode, coord, nearest=None, opset=13, runtime=False, torch_ref=None):
        scales = [o / i for o, i in zip(sizes, x.shape)]
        y = np_resize(x, sizes, scales, mode, coord, nearest or "round_prefer_floor")
        if torch_ref is not None:
            np.testing.assert_allclose(y, n(torch_ref), atol=1e-5, rtol=1e-5)
        attrs = {"mode": mode, "coordinate_transformation_mode": coord}
        if nearest:
            attrs["nearest_mode"] = nearest
        cw.add(name, "Resize",
               [("x", x, False), None, None, ("sizes", np.array(sizes, dtype=np.int64), not runtime)], [("y", y)],
               attrs, opset=opset)

    tx = t(x).double()
    add_scales("resize_nearest_default_modes_x2", x, [1, 1, 2, 2], "nearest", "half_pixel")
    add_scales("resize_nearest_asymmetric_floor_x3", x, [1, 1, 3, 3], "nearest", "asymmetric", "floor",
               torch_ref=F.interpolate(tx, scale_factor=(3.0, 3.0), mode="nearest"))
    add_scales("resize_nearest_asymmetric_floor_half", rand(1, 2, 6, 8), [1, 1, 0.5, 0.5], "nearest",
               "asymmetric", "floor")
    add_scales("resize_nearest_half_pixel_ceil_x1_5", x, [1, 1, 1.5, 2.5], "nearest", "half_pixel",
               "round_prefer_ceil")
    add_scales("resize_nearest_align_corners_ceil", x, [1, 1, 2, 1.5], "nearest", "align_corners", "ceil")
    add_scales("resize_nearest_pytorch_half_pixel_floor", x, [1, 1, 2.5, 1.75], "nearest", "pytorch_half_pixel",
               "round_prefer_floor")
    add_scales("resize_linear_half_pixel_x2", x, [1, 1, 2, 2], "linear", "half_pixel",
               torch_ref=F.interpolate(tx, scale_factor=(2.0, 2.0), mode="bilinear", align_corners=False))
    add_scales("resize_linear_half_pixel_down", rand(1, 2, 8, 6), [1, 1, 0.5, 0.75], "linear", "half_pixel")
    add_scales("resize_linear_asymmetric", x, [1, 1, 2, 1.5], "linear", "asymmetric")
    add_scales("resize_linear_align_corners_scales", x, [1, 1, 2, 3], "linear", "align_corners")
    add_scales("resize_linear_3d_half_pixel", rand(1, 1, 2, 3, 4), [1, 1, 2, 1.5, 2], "linear", "half_pixel")
    add_sizes("resize_nearest_sizes_round_prefer_ceil", x, [1, 2, 7, 5], "nearest", "half_pixel",
              "round_prefer_ceil", torch_ref=F.interpolate(tx, size=(7, 5), mode="nearest-exact"))
    add_sizes("resize_linear_align_corners_sizes", x, [1, 2, 5, 7], "linear", "align_corners",
              torch_ref=F.interpolate(tx, size=(5, 7), mode="bilinear", align_corners=True))
    add_sizes("resize_linear_pytorch_half_pixel_size1", x, [1, 2, 1, 6], "linear", "pytorch_half_pixel")
    add_sizes("resize_linear_half_pixel_sizes_down", rand(1, 3, 9, 7), [1, 3, 4, 3], "linear", "half_pixel")
    add_sizes("resize_nearest_runtime_sizes", x, [1, 2, 6, 9], "nearest", "asymmetric", "floor", runtime=True)

    # Opset 11 writes roi and an empty scales tensor beside sizes.
    sizes = [1, 2, 5, 6]
    y = np_resize(x, sizes, [o / i for o, i in zip(sizes, x.shape)], "nearest", "half_pixel",
                  "round_prefer_floor")
    cw.add("resize_nearest_opset11_empty_scales", "Resize",
           [("x", x, False), empty_roi, ("scales", np.zeros([0], dtype=np.float32), True),
            ("sizes", np.array(sizes, dtype=np.int64), True)], [("y", y)],
           {"mode": "nearest", "coordinate_transformation_mode": "half_pixel"}, opset=11)

    # Opset 18: axes attribute and keep_aspect_ratio_policy.
    scales = np.array([2.0, 1.5], dtype=np.float32)
    y = np_resize(x, [1, 2, 6, 6], [1, 1, 2.0, 1.5], "linear", "half_pixel")
    cw.add("resize_linear_axes_attribute", "Resize", [("x", x, False), None, ("scales", scales, True)],
           [("y", y)], {"mode": "linear", "axes": [2, 3]}, opset=18)
    # not_larger: one scale min(8/3, 8/4) = 2 for both axes -> [6, 8].
    y = np_resize(x, [1, 2, 6, 8], [1, 1, 2.0, 2.0], "nearest", "asymmetric", "floor")
    cw.add("resize_nearest_keep_aspect_not_larger", "Resize",
           [("x", x, False), None, None, ("sizes", np.array([8, 8], dtype=np.int64), True)], [("y", y)],
           {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor",
            "axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"}, opset=18)
    # tf_crop_and_resize against ONNX's own reference (onnx.backend.test.case.node.resize): a crop whose
    # end passes the input (those outputs take extrapolation_value), linear and nearest.
    from onnx.backend.test.case.node import resize as onnx_resize
    roi = np.array([0, 0, 0.2, 0.1, 1, 1, 0.9, 1.3], dtype=np.float32)
    sizes = [1, 2, 4, 5]
    for mode, coeffs in [("linear", onnx_resize.linear_coeffs), ("nearest", onnx_resize.nearest_coeffs)]:
        y = onnx_resize.interpolate_nd(x, coeffs, output_size=sizes, roi=roi,
                                       coordinate_transformation_mode="tf_crop_and_resize",
                                       extrapolation_value=7.0).astype(np.float32)
        cw.add("resize_tf_crop_and_resize_%s" % mode, "Resize",
               [("x", x, False), ("roi", roi, True), None, ("sizes", np.array(sizes, dtype=np.int64), True)],
               [("y", y)], {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize",
                            "extrapolation_value": 7.0}, opset=13)


def topk_cases(cw):
    """TopK against torch.topk on distinct values; ties (which torch leaves unordered) against numpy's stable
    argsort, the ONNX rule that equal values come lower index first. Exact (values are copied)."""
    def add(name, x, k, axis=-1, largest=True, attrs=None, k_const=True, opset=11):
        values, indices = torch.topk(t(x), k, dim=axis, largest=largest, sorted=True)
        cw.add(name, "TopK", [("x", x, False), ("k", np.array([k], dtype=np.int64), k_const)],
               [("values", values.numpy()), ("indices", indices.numpy())], attrs, opset=opset, atol=0, rtol=0)

    x = _rng.permutation(60).astype(np.float32).reshape(3, 4, 5) - 30
    add("topk_last_axis", x, 3)
    add("topk_axis1_smallest", x, 2, axis=1, largest=False, attrs={"axis": 1, "largest": 0})
    add("topk_negative_axis", x, 2, axis=-2, attrs={"axis": -2})
    add("topk_k_all", x, 5, attrs={"sorted": 1})
    add("topk_k_zero", x, 0)
    add("topk_runtime_k", x, 2, axis=0, attrs={"axis": 0}, k_const=False)
    xi = _rng.permutation(24).astype(np.int64).reshape(4, 6)
    add("topk_i64", xi, 2)

    def add_ties(name, x, k, largest):
        key = -x if largest else x
        idx = np.argsort(key, axis=-1, kind="stable")[..., :k]
        cw.add(name, "TopK", [("x", x, False), ("k", np.array([k], dtype=np.int64), True)],
               [("values", np.take_along_axis(x, idx, -1)), ("indices", idx.astype(np.int64))],
               {"largest": int(largest)}, opset=11, atol=0, rtol=0)

    ties = _rng.integers(0, 3, size=(4, 9)).astype(np.float32)
    add_ties("topk_ties_largest", ties, 5, True)
    add_ties("topk_ties_smallest", ties, 5, False)


def cumsum_cases(cw):
    """CumSum against torch.cumsum; exclusive and reverse composed from it with flips and a shift."""
    def ref(x, axis, exclusive, reverse):
        y = t(x)
        if reverse:
            y = torch.flip(y, [axis])
        c = torch.cumsum(y.double() if x.dtype == np.float32 else y, dim=axis)
        if exclusive:
            c = c - (y.double() if x.dtype == np.float32 else y)
        if reverse:
            c = torch.flip(c, [axis])
        return c.numpy().astype(x.dtype)

    def add(name, x, axis, exclusive=0, reverse=0, axis_dtype=np.int64, axis_const=True):
        attrs = {"exclusive": exclusive, "reverse": reverse}
        cw.add(name, "CumSum", [("x", x, False), ("axis", np.array(axis, dtype=axis_dtype), axis_const)],
               [("y", ref(x, axis, exclusive, reverse))], attrs, opset=14)

    x = rand(3, 4, 5)
    add("cumsum_axis0", x, 0)
    add("cumsum_axis2", x, 2)
    add("cumsum_negative_axis_i32", x, -2, axis_dtype=np.int32)
    add("cumsum_exclusive", x, 1, exclusive=1)
    add("cumsum_reverse", x, 1, reverse=1)
    add("cumsum_reverse_exclusive", x, 2, exclusive=1, reverse=1)
    add("cumsum_runtime_axis", x, 1, axis_const=False)
    add("cumsum_i64", _rng.integers(-100, 100, size=(4, 6)).astype(np.int64), 1, exclusive=1)
    add("cumsum_i32_reverse", _rng.integers(-100, 100, size=(7,)).astype(np.int32), 0, reverse=1)
    add("cumsum_f64_exclusive", x.astype(np.float64) / 3.0, 2, exclusive=1)


def np_group_norm(x, groups, scale, bias, eps):
    """The ONNX GroupNormalization definition in numpy double: statistics over each (n, group); scale and
    bias per group (opset 18) or per channel (opset 21, when they have C entries)."""
    n, c = x.shape[:2]
    xg = x.astype(np.float64).reshape(n, groups, -1)
    mean = xg.mean(axis=2, keepdims=True)
    var = ((xg - mean) ** 2).mean(axis=2, keepdims=True)
    y = ((xg - mean) / np.sqrt(var + eps)).reshape(x.shape)
    if scale.shape[0] != c:
        scale, bias = np.repeat(scale, c // groups), np.repeat(bias, c // groups)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    return y * scale.reshape(bshape) + bias.reshape(bshape)


def norm_cases(cw):
    """InstanceNormalization against F.instance_norm in double; GroupNormalization (opset 18, one scale per
    group) against np_group_norm, itself checked against F.group_norm with the per-group scale repeated
    per channel. Tolerance: ATOL/RTOL (1e-4)."""
    for name, shape, eps in [("instancenorm_4d", [2, 3, 4, 5], None), ("instancenorm_3d_eps", [3, 2, 7], 1e-2),
                             ("instancenorm_5d", [1, 4, 1, 1, 3], None)]:
        x = rand(*shape, scale=2.0) + 1.5
        scale, b = rand(shape[1]), rand(shape[1])
        y = F.instance_norm(t(x).double(), weight=t(scale).double(), bias=t(b).double(),
                            eps=1e-5 if eps is None else eps)
        attrs = {} if eps is None else {"epsilon": eps}
        cw.add(name, "InstanceNormalization", [("x", x, False), ("scale", scale, True), ("b", b, True)],
               [("y", n(y))], attrs)
    x = rand(2, 3, 2, 2)
    cw.add("instancenorm_runtime_scale", "InstanceNormalization",
           [("x", x, False), ("scale", np.full(3, 2.0, np.float32), False), ("b", np.zeros(3, np.float32), False)],
           [("y", n(2 * F.instance_norm(t(x).double())))])
    for name, shape, groups, eps in [("groupnorm_4d", [2, 6, 3, 4], 3, None), ("groupnorm_3d_eps", [3, 8, 5], 2, 1e-3),
                                     ("groupnorm_one_group", [2, 5, 3], 1, None),
                                     ("groupnorm_group_per_channel", [2, 4, 3, 3], 4, None)]:
        x = rand(*shape, scale=2.0) - 0.5
        scale, b = rand(groups), rand(groups)
        e = 1e-5 if eps is None else eps
        want = np_group_norm(x, groups, scale, b, e)
        per = shape[1] // groups
        torch_want = F.group_norm(t(x).double(), groups, t(np.repeat(scale, per)).double(),
                                  t(np.repeat(b, per)).double(), eps=e)
        np.testing.assert_allclose(want, torch_want.numpy(), rtol=1e-10, atol=1e-10)
        attrs = {"num_groups": groups}
        if eps is not None:
            attrs["epsilon"] = eps
        cw.add(name, "GroupNormalization", [("x", x, False), ("scale", scale, True), ("b", b, False)],
               [("y", want.astype(np.float32))], attrs, opset=18)


def einsum_cases(cw):
    """Einsum against numpy's einsum in double, each equation also checked against torch.einsum (1e-10).
    Tolerance: ATOL/RTOL (1e-4); the int64 case is exact."""
    cases = [
        ("einsum_matmul", "ij,jk->ik", [(3, 5), (5, 4)]),
        ("einsum_batch_matmul", "bij,bjk->bik", [(2, 3, 5), (2, 5, 4)]),
        ("einsum_attention_scores", "bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
        ("einsum_transpose", "ij->ji", [(3, 7)]),
        ("einsum_row_sum", "ij->i", [(4, 6)]),
        ("einsum_full_sum", "ij->", [(4, 6)]),
        ("einsum_outer_product", "i,j->ij", [(3,), (5,)]),
        ("einsum_implicit_matmul", "ij,jk", [(2, 3), (3, 4)]),
        ("einsum_implicit_sorted", "kj,ji", [(2, 3), (3, 4)]),
        ("einsum_ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
        ("einsum_batch_diagonal", "bii->bi", [(2, 4, 4)]),
        ("einsum_trace_implicit", "ii", [(5, 5)]),
        ("einsum_chain_three", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("einsum_size1_stretch", "ij,ij->ij", [(2, 1), (2, 3)]),
        ("einsum_upper_case", "Ab,bc -> cA", [(3, 4), (4, 2)]),
        ("einsum_ellipsis_middle", "b...d,d->b...", [(2, 3, 1, 4), (4,)]),
    ]
    for name, eq, shapes in cases:
        xs = [rand(*sh) for sh in shapes]
        want = np.einsum(eq.replace(" ", ""), *[x.astype(np.float64) for x in xs])
        got = torch.einsum(eq.replace(" ", ""), *[t(x).double() for x in xs]).numpy()
        np.testing.assert_allclose(want, got, rtol=1e-10, atol=1e-10)
        inputs = [("x%d" % i, x, False) for i, x in enumerate(xs)]
        # np.array, not np.ascontiguousarray, which would make a 0-d sum 1-d.
        y = np.array(want, dtype=np.float32, order="C")
        # onnx 1.12's shape inference rejects '...' of different ranks, which numpy broadcasts.
        cw.add(name, "Einsum", inputs, [("y", y)], {"equation": eq}, opset=12,
               shape_check=name != "einsum_ellipsis_broadcast")
    a = _rng.integers(-20, 20, size=(3, 4)).astype(np.int64)
    v = _rng.integers(-20, 20, size=(4,)).astype(np.int64)
    cw.add("einsum_i64_matvec_const", "Einsum", [("a", a, False), ("v", v, True)],
           [("y", np.einsum("ij,j->i", a, v))], {"equation": "ij,j->i"}, opset=12, atol=0, rtol=0)
    # Double, computed in double: a tolerance no f32 path would meet.
    ad, vd = a.astype(np.float64) / 3.0, v.astype(np.float64) / 7.0
    cw.add("einsum_f64_matvec", "Einsum", [("a", ad, False), ("v", vd, False)],
           [("y", np.einsum("ij,j->i", ad, vd))], {"equation": "ij,j->i"}, opset=12, atol=1e-13, rtol=1e-13)


def more_cnn_cases(cw):
    """PRelu, GlobalMaxPool, LRN, DepthToSpace / SpaceToDepth and MatMulInteger (added later: generated
    last, so that the cases above keep their random data)."""
    x = rand(2, 4, 3, 5)
    w = rand(4, scale=0.5)
    cw.add("prelu_per_channel", "PRelu", [("x", x, False), ("slope", w.reshape(4, 1, 1), True)],
           [("y", n(F.prelu(t(x), t(w))))], opset=16)
    cw.add("prelu_scalar", "PRelu", [("x", x, False), ("slope", np.array([0.25], np.float32), True)],
           [("y", n(F.prelu(t(x), t(np.array([0.25], np.float32)))))], opset=16)
    cw.add("globalmaxpool_2d", "GlobalMaxPool", [("x", x, False)], [("y", n(t(x).amax(dim=(2, 3), keepdim=True)))])
    # PyTorch's window for an odd size is ONNX's: [c - size // 2, c + size // 2].
    y = n(F.local_response_norm(t(x).double(), 3, alpha=0.3, beta=0.6, k=1.5))
    cw.add("lrn_size3", "LRN", [("x", x, False)], [("y", y)], attrs={"size": 3, "alpha": 0.3, "beta": 0.6, "bias": 1.5})
    d = rand(1, 8, 2, 3)
    cw.add("depthtospace_crd", "DepthToSpace", [("x", d, False)], [("y", n(F.pixel_shuffle(t(d), 2)))],
           attrs={"blocksize": 2, "mode": "CRD"})
    # DCR as the ONNX definition writes it: reshape, transpose, reshape.
    b, c, h, w_ = d.shape
    dcr = d.reshape(b, 2, 2, c // 4, h, w_).transpose(0, 3, 4, 1, 5, 2).reshape(b, c // 4, h * 2, w_ * 2)
    cw.add("depthtospace_dcr", "DepthToSpace", [("x", d, False)], [("y", dcr)], attrs={"blocksize": 2})
    s = rand(1, 3, 4, 6)
    b, c, h, w_ = s.shape
    s2d = s.reshape(b, c, h // 2, 2, w_ // 2, 2).transpose(0, 3, 5, 1, 2, 4).reshape(b, c * 4, h // 2, w_ // 2)
    cw.add("spacetodepth", "SpaceToDepth", [("x", s, False)], [("y", s2d)], attrs={"blocksize": 2})
    a = _rng.integers(0, 256, size=(2, 3, 5), dtype=np.uint8)
    bm = _rng.integers(-128, 128, size=(5, 4), dtype=np.int8)
    azp = np.array(7, np.uint8)
    bzp = _rng.integers(-5, 5, size=(4,), dtype=np.int8)
    y = np.matmul(a.astype(np.int64) - 7, bm.astype(np.int64) - bzp.astype(np.int64)).astype(np.int32)
    cw.add("matmulinteger_zero_points", "MatMulInteger",
           [("a", a, False), ("b", bm, True), ("azp", azp, True), ("bzp", bzp, True)], [("y", y)], atol=0, rtol=0)

    # MeanVarianceNormalization per ONNX's function body (epsilon 1e-9 added to the standard deviation),
    # from PyTorch's mean and biased variance in float64.
    mv = rand(2, 3, 4, 5)
    xt = t(mv).double()
    mean = xt.mean(dim=(0, 2, 3), keepdim=True)
    sd = xt.var(dim=(0, 2, 3), keepdim=True, unbiased=False).sqrt()
    cw.add("mvn_default_axes", "MeanVarianceNormalization", [("x", mv, False)], [("y", n((xt - mean) / (sd + 1e-9)))])
    mean = xt.mean(dim=(1,), keepdim=True)
    sd = xt.var(dim=(1,), keepdim=True, unbiased=False).sqrt()
    cw.add("mvn_axis1", "MeanVarianceNormalization", [("x", mv, False)], [("y", n((xt - mean) / (sd + 1e-9)))],
           attrs={"axes": [1]})
    # ConvInteger / QLinearConv: PyTorch's conv2d in float64 on the zero-point-free integers (exact), then,
    # for QLinearConv, ONNX's requantization: the f32 factor x_scale * w_scale / y_scale, round half to even.
    x8 = _rng.integers(0, 256, size=(1, 4, 5, 6), dtype=np.uint8)
    w8 = _rng.integers(-128, 128, size=(6, 2, 3, 3), dtype=np.int8)
    xzp = np.array(128, np.uint8)
    wzp = np.array(0, np.int8)
    acc = F.conv2d(t(x8.astype(np.float64) - 128), t(w8.astype(np.float64)), stride=1, padding=1, groups=2).numpy()
    cw.add("convinteger_grouped", "ConvInteger", [("x", x8, False), ("w", w8, True), ("xzp", xzp, True),
                                                  ("wzp", wzp, True)],
           [("y", acc.astype(np.int32))], attrs={"group": 2, "pads": [1, 1, 1, 1]}, opset=10, atol=0, rtol=0)
    bias = _rng.integers(-2000, 2000, size=(6,), dtype=np.int32)
    xs, ys = np.float32(0.02), np.float32(0.5)
    ws = (_rng.uniform(0.001, 0.01, size=(6,))).astype(np.float32)
    factor = (xs * ws / ys).astype(np.float32).astype(np.float64)
    yzp = np.array(10, np.uint8)
    q = np.clip(np.rint((acc + bias.reshape(1, 6, 1, 1)) * factor.reshape(1, 6, 1, 1)) + 10, 0, 255).astype(np.uint8)
    cw.add("qlinearconv_per_channel", "QLinearConv",
           [("x", x8, False), ("xs", np.array(xs), True), ("xzp", xzp, True), ("w", w8, True), ("ws", ws, True),
            ("wzp", np.zeros(6, np.int8), True), ("ys", np.array(ys), True), ("yzp", yzp, True), ("b", bias, True)],
           [("y", q)], attrs={"group": 2, "pads": [1, 1, 1, 1]}, opset=10, atol=0, rtol=0)
    a8 = _rng.integers(0, 256, size=(3, 7), dtype=np.uint8)
    b8 = _rng.integers(0, 256, size=(7, 4), dtype=np.uint8)
    accm = (a8.astype(np.int64) - 100) @ (b8.astype(np.int64) - 120)
    fm = np.float64(np.float32(np.float32(0.05) * np.float32(0.03)) / np.float32(0.4))
    ym = np.clip(np.rint(accm * fm) + 5, -128, 127).astype(np.int8)
    cw.add("qlinearmatmul_i8_out", "QLinearMatMul",
           [("a", a8, False), ("as", np.array(0.05, np.float32), True), ("azp", np.array(100, np.uint8), True),
            ("b", b8, True), ("bs", np.array(0.03, np.float32), True), ("bzp", np.array(120, np.uint8), True),
            ("ys", np.array(0.4, np.float32), True), ("yzp", np.array(5, np.int8), True)],
           [("y", ym)], opset=10, atol=0, rtol=0)


def spectral_cases(cw):
    """DFT and STFT (opset 17) against numpy's FFT; complex tensors as [..., 2] (real, imaginary)."""
    def ri(z, dtype=np.float32):
        return np.stack([z.real, z.imag], axis=-1).astype(dtype)

    x = rand(2, 8, 3, 1)
    cw.add("dft_axis1_real", "DFT", [("x", x, False)], [("y", ri(np.fft.fft(x[..., 0].astype(np.float64), axis=1)))],
           {"axis": 1}, opset=17)
    z = rand(2, 3, 6, 2)
    zc = z[..., 0].astype(np.float64) + 1j * z[..., 1]
    cw.add("dft_inverse_complex_axis2", "DFT", [("x", z, False)], [("y", ri(np.fft.ifft(zc, axis=2)))],
           {"axis": 2, "inverse": 1}, opset=17)
    r = rand(1, 10, 1)
    cw.add("dft_onesided_padded_length", "DFT", [("x", r, False), ("dft_length", np.array(16, np.int64), True)],
           [("y", ri(np.fft.rfft(r[..., 0].astype(np.float64), n=16, axis=1)))], {"axis": 1, "onesided": 1},
           opset=17)
    r64 = r.astype(np.float64) / 3.0
    cw.add("dft_f64_negative_axis", "DFT", [("x", r64, False)],
           [("y", ri(np.fft.fft(r64[..., 0], axis=1), np.float64))], {"axis": -2}, opset=17, atol=1e-12, rtol=1e-12)
    signal = rand(2, 64, 1)
    n, step = 16, 8
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32)
    frames = (64 - n) // step + 1
    seg = np.stack([signal[:, f * step:f * step + n, 0] for f in range(frames)], axis=1).astype(np.float64)
    cw.add("stft_window_onesided", "STFT",
           [("signal", signal, False), ("frame_step", np.array(step, np.int64), True), ("window", window, True)],
           [("y", ri(np.fft.rfft(seg * window, axis=2)))], {}, opset=17,
           shape_check=False)  # onnx 1.12's STFT inference gives frame_length bins even when onesided
    cw.add("stft_frame_length_twosided", "STFT",
           [("signal", signal, False), ("frame_step", np.array(step, np.int64), True), None,
            ("frame_length", np.array(n, np.int64), True)],
           [("y", ri(np.fft.fft(seg, axis=2)))], {"onesided": 0}, opset=17)


def np_mel_weight_matrix(mels, dft_length, rate, lower, upper):
    """ONNX's MelWeightMatrix reference (onnx/backend/test/case/node/melweightmatrix.py) in numpy."""
    points = np.arange(0, mels + 2)
    low_mel, high_mel = 2595 * np.log10(1 + lower / 700), 2595 * np.log10(1 + upper / 700)
    hz = 700 * (np.power(10, (points * (high_mel - low_mel) / (mels + 2) + low_mel) / 2595) - 1)
    points = (((dft_length + 1) * hz) // rate).astype(int)
    out = np.zeros((dft_length // 2 + 1, mels))
    for i in range(mels):
        lo, center, hi = points[i], points[i + 1], points[i + 2]
        if center == lo:
            out[center, i] = 1
        else:
            for j in range(lo, center + 1):
                out[j, i] = (j - lo) / (center - lo)
        for j in range(center, hi):
            out[j, i] = (hi - j) / (hi - center)
    return out


def mel_cases(cw):
    for name, args in [("melweightmatrix_16k", (10, 64, 16000, 20.0, 8000.0)),
                       ("melweightmatrix_narrow", (8, 16, 8192, 0.0, 4096.0))]:
        mels, dft_length, rate, lower, upper = args
        inputs = [("num_mel_bins", np.array(mels, np.int64), True), ("dft_length", np.array(dft_length, np.int64), True),
                  ("sample_rate", np.array(rate, np.int64), True), ("lower_edge_hertz", np.array(lower, np.float32), True),
                  ("upper_edge_hertz", np.array(upper, np.float32), True)]
        cw.add(name, "MelWeightMatrix", inputs,
               [("y", np_mel_weight_matrix(mels, dft_length, rate, lower, upper).astype(np.float32))], {}, opset=17)


def loss_cases(cw):
    """NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against PyTorch's nll_loss and cross_entropy (in
    double): each reduction, class weights, ignore_index (also negative), i32 targets, f64 scores and
    SoftmaxCrossEntropyLoss's log_prob output."""
    rng = np.random.default_rng(31)
    for name, shape, reduction, weighted, ignore, tdtype, dtype in [
        ("nc_mean", [4, 5], "mean", False, None, np.int64, np.float32),
        ("nc_none", [4, 5], "none", False, None, np.int64, np.float32),
        ("ncd1d2_sum_weight", [2, 3, 4, 5], "sum", True, None, np.int64, np.float32),
        ("ncd1d2_mean_weight_ii", [2, 3, 4, 5], "mean", True, 1, np.int64, np.float32),
        ("ncd1_mean_ii_negative", [3, 4, 6], "mean", False, -1, np.int32, np.float32),
        ("ncd1_none_weight_ii_f64", [3, 4, 6], "none", True, 2, np.int64, np.float64),
    ]:
        x = rng.standard_normal(shape).astype(dtype)
        target = rng.integers(0, shape[1], [shape[0]] + shape[2:]).astype(tdtype)
        if ignore is not None:
            target.flat[::3] = ignore
        w = rng.uniform(0.2, 2.0, shape[1]).astype(dtype) if weighted else None
        attrs = {"reduction": reduction}
        if ignore is not None:
            attrs["ignore_index"] = ignore
        tw = None if w is None else torch.from_numpy(w).double()
        tt = torch.from_numpy(target.astype(np.int64))
        ii = -100 if ignore is None else ignore
        inputs = [("x", x, False), ("target", target, False)] + ([("w", w, False)] if weighted else [])
        nll = F.nll_loss(torch.from_numpy(x).double(), tt, weight=tw, ignore_index=ii, reduction=reduction)
        cw.add("nllloss_" + name, "NegativeLogLikelihoodLoss", inputs, [("loss", nll.numpy().astype(dtype))], attrs,
               atol=1e-6, rtol=1e-5)
        xs = torch.from_numpy(x).double()
        ce = F.cross_entropy(xs, tt, weight=tw, ignore_index=ii, reduction=reduction)
        log_prob = torch.log_softmax(xs, dim=1)
        cw.add("sce_" + name, "SoftmaxCrossEntropyLoss", inputs,
               [("loss", ce.numpy().astype(dtype)), ("log_prob", log_prob.numpy().astype(dtype))], attrs,
               atol=1e-6, rtol=1e-5)
    x = rng.standard_normal([3, 4]).astype(np.float32)
    target = np.array([0, 3, 1], np.int64)
    cw.add("sce_default_mean_no_log_prob", "SoftmaxCrossEntropyLoss", [("x", x, False), ("target", target, False)],
           [("loss", F.cross_entropy(torch.from_numpy(x).double(), torch.from_numpy(target)).numpy().astype(np.float32))],
           atol=1e-6, rtol=1e-5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    cw = Writer(args.out)
    conv_cases(cw)
    conv_transpose_cases(cw)
    rnn_cases(cw)
    bn_cases(cw)
    pool_cases(cw)
    matmul_cases(cw)
    gemm_cases(cw)
    softmax_cases(cw)
    softmax_family_cases(cw)
    layernorm_cases(cw)
    layernorm_stats_cases(cw)
    reduce_cases(cw)
    pad_cases(cw)
    resize_cases(cw)
    topk_cases(cw)
    cumsum_cases(cw)
    norm_cases(cw)
    einsum_cases(cw)
    more_cnn_cases(cw)
    spectral_cases(cw)
    mel_cases(cw)
    loss_cases(cw)
    cw.finish()


if __name__ == "__main__":
    main()
