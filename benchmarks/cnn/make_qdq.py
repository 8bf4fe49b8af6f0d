"""A QDQ (QuantizeLinear / DequantizeLinear) ONNX model quantized with Tessel's calibration ranges.

  /usr/bin/python3 benchmarks/cnn/make_qdq.py MODEL.onnx RANGES [RANGES...] -o MODEL_qdq.onnx

RANGES: tables written by `tessel compile --quantize=int8 --dump-ranges FILE` (one "tensor scale
zero_point u8|i8" a line; the first file that names a tensor wins). The model must have BatchNorm folded
(export_photo_models.py exports it so), so that its Conv weights are the ones Tessel quantizes.

What it writes, as Tessel's quantize-int8 pass lowers the graph:
  - every activation named in the tables gets QuantizeLinear -> DequantizeLinear with its u8 (or i8)
    scale and zero point; a Conv / Add output that feeds only a Relu or Clip(0, x) takes the activation's
    output parameters (zero point 0 for a non-negative range, so the u8 clamp is the ReLU, as Tessel's
    fused clamp);
  - Conv and Gemm weights: symmetric per-output-channel int8 (scale max|w| / 127, values in -127..127),
    biases int32 with scale input_scale * weight_scale[c], both through DequantizeLinear (axis 0);
  - the graph output stays f32 (after the last DequantizeLinear when Tessel quantizes it).
ONNX Runtime fuses these groups into its integer kernels (QLinearConv, QGemm, QLinearAdd, ...).
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def read_ranges(paths):
    table = {}
    for p in paths:
        for line in open(p):
            f = line.split()
            if len(f) == 4 and f[0] not in table:
                table[f[0]] = (float(f[1]), int(f[2]), f[3])
    return table


def fused_conv_ranges(args, model, table):
    """u8 min/max ranges (as ChooseQuantParams) of Conv outputs that feed an Add and are not in the table."""
    import os
    import subprocess
    import tempfile
    g = model.graph
    names = [n.output[0] for n in g.node if n.op_type == "Conv" and n.output[0] not in table and
             any(m.op_type == "Add" and n.output[0] in m.input for m in g.node)]
    if not names:
        return {}
    tmp = tempfile.mkdtemp()
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for i, name in enumerate(names):
        m.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    onnx.save(m, os.path.join(tmp, "extra.onnx"))
    cal = np.load(args.calibration, mmap_mode="r")
    subprocess.run([args.tessel, "compile", os.path.join(tmp, "extra.onnx"), "-o", os.path.join(tmp, "extra.tsl"),
                    "--dim", "batch=%d" % len(cal)], check=True, capture_output=True)
    subprocess.run([args.tessel, "run", os.path.join(tmp, "extra.tsl"), "--input", "input=" + args.calibration,
                    "--output-dir", tmp], check=True, capture_output=True)
    out = {}
    for name in names:
        fname = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
        files = [f for f in os.listdir(tmp) if f.endswith(".npy") and f[:-4] == fname.lstrip("_.")]
        a = np.load(os.path.join(tmp, files[0]))
        lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
        scale = np.float32((hi - lo) / 255.0)
        out[name] = (float(scale), int(min(255, max(0, round(-lo / scale)))), "u8")
        print("  min/max range for %s: [%.3f, %.3f] (from %s)" % (name, lo, hi, files[0]))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("ranges", nargs="+")
    parser.add_argument("-o", required=True)
    parser.add_argument("--tessel", help="with --calibration: min/max ranges for the Conv outputs that Tessel fuses "
                                         "into a following Add (so its table has no entry), from `tessel run` in f32")
    parser.add_argument("--calibration", help="an [N,3,224,224] .npy of calibration images")
    args = parser.parse_args()
    model = onnx.load(args.model)
    g = model.graph
    table = read_ranges(args.ranges)
    if args.tessel and args.calibration:
        table.update(fused_conv_ranges(args, model, table))
    inits = {t.name: t for t in g.initializer}
    consts = {}
    for n in g.node:
        if n.op_type == "Constant":
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}

    def activation_params(name):
        if name in table:
            return table[name]
        # Conv / Add -> Relu or Clip(0, x): the pre-activation tensor takes the activation's parameters.
        users = consumers.get(name, [])
        if len(users) == 1 and users[0].op_type in ("Relu", "Clip") and users[0].output[0] in table:
            u = users[0]
            if u.op_type == "Clip" and (len(u.input) < 2 or float(consts.get(u.input[1], inits.get(u.input[1]) and
                                                                       numpy_helper.to_array(inits[u.input[1]]))) != 0.0):
                return None
            p = table[u.output[0]]
            return p if p[1] == 0 or p[2] == "i8" else None
        return None

    new_nodes, new_inits = [], []
    rename = {}  # tensor -> its dequantized twin, for consumers
    qparams = {}  # tensor -> (scale, zp, dtype) of its QDQ

    def add_qdq(name):
        p = activation_params(name)
        if p is None:
            return
        scale, zp, dt = p
        qparams[name] = p
        s = helper.make_tensor(name + "_qscale", TensorProto.FLOAT, [], [scale])
        z = helper.make_tensor(name + "_qzero", TensorProto.UINT8 if dt == "u8" else TensorProto.INT8, [], [zp])
        new_inits.extend([s, z])
        src = name
        if name in outputs:  # keep the graph output's name on the dequantized value
            src = name + "_f32"
            for n in g.node:
                for k, o in enumerate(n.output):
                    if o == name:
                        n.output[k] = src
        new_nodes.append(helper.make_node("QuantizeLinear", [src, s.name, z.name], [name + "_q"], name=name + "/Q"))
        out = name if name in outputs else name + "_dq"
        new_nodes.append(helper.make_node("DequantizeLinear", [name + "_q", s.name, z.name], [out], name=name + "/DQ"))
        if out != name:
            rename[name] = out

    for i in g.input:
        add_qdq(i.name)
    order = list(g.node)
    for n in order:
        for o in n.output:
            add_qdq(o)

    # Weights and biases of Conv / Gemm whose input is quantized.
    weight_nodes = []
    for n in order:
        if n.op_type not in ("Conv", "Gemm") or n.input[0] not in qparams or n.input[1] not in inits:
            continue
        if n.op_type == "Gemm":
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            if attrs.get("transA", 0) != 0 or attrs.get("transB", 0) != 1:
                continue
        w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
        amax = np.abs(w.reshape(w.shape[0], -1)).max(1)
        ws = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
        bshape = (-1,) + (1,) * (w.ndim - 1)
        wq = np.clip(np.rint(w / ws.reshape(bshape)), -127, 127).astype(np.int8)
        wn = n.input[1]
        new_inits += [numpy_helper.from_array(wq, wn + "_i8"), numpy_helper.from_array(ws, wn + "_wscale"),
                      numpy_helper.from_array(np.zeros(len(ws), np.int8), wn + "_wzero")]
        weight_nodes.append(helper.make_node("DequantizeLinear", [wn + "_i8", wn + "_wscale", wn + "_wzero"], [wn + "_dq"],
                                             name=wn + "/DQ", axis=0))
        n.input[1] = wn + "_dq"
        if len(n.input) > 2 and n.input[2] in inits:
            b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float64)
            bs = (qparams[n.input[0]][0] * ws.astype(np.float64)).astype(np.float32)
            bq = np.clip(np.rint(b / bs), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
            bn = n.input[2]
            new_inits += [numpy_helper.from_array(bq, bn + "_i32"), numpy_helper.from_array(bs, bn + "_bscale"),
                          numpy_helper.from_array(np.zeros(len(bs), np.int32), bn + "_bzero")]
            weight_nodes.append(helper.make_node("DequantizeLinear", [bn + "_i32", bn + "_bscale", bn + "_bzero"],
                                                 [bn + "_dq"], name=bn + "/DQ", axis=0))
            n.input[2] = bn + "_dq"

    for n in order:
        if n.op_type == "QuantizeLinear":
            continue
        for k, i in enumerate(n.input):
            if i in rename:
                n.input[k] = rename[i]
    # Topological order: each Q/DQ pair right after its producer.
    pairs = {}
    for k in range(0, len(new_nodes), 2):
        q, dq = new_nodes[k], new_nodes[k + 1]
        pairs.setdefault(q.input[0], []).extend([q, dq])
    nodes = list(weight_nodes)
    for i in g.input:
        nodes += pairs.pop(i.name, [])
    for n in order:
        nodes.append(n)
        for o in n.output:
            nodes += pairs.pop(o, [])
    assert not pairs, pairs.keys()
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in nodes for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep + [t for t in new_inits if t.name in used])
    onnx.checker.check_model(model)
    onnx.save(model, args.o)
    print("%s: %d activations quantized (QDQ), %d weight/bias DequantizeLinear; %d ranges unused"
          % (args.o, len(qparams), len(weight_nodes), len(set(table) - set(qparams))))
    missing = [n.output[0] for n in order if n.op_type in ("Conv", "Add", "Gemm") and n.output[0] not in qparams]
    if missing:
        print("  f32 outputs (no range): " + ", ".join(missing), file=sys.stderr)


if __name__ == "__main__":
    main()
