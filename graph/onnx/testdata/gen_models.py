"""Exports small PyTorch models to ONNX (opsets 11, 13, 17; one with external data) for
//graph/onnx:onnx_importer_test, and beside each model what the onnx package reads back from it: inputs,
outputs with PyTorch's output shapes, node count, and every initializer and Constant value. The
importer is checked against these, an independent decoder of the same files."""
import argparse
import os

import numpy as np
import onnx
from onnx import numpy_helper
import torch


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.conv2 = torch.nn.Conv2d(4, 8, 3, stride=2)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv1(x)))
        x = torch.nn.functional.max_pool2d(x, 2)
        x = torch.relu(self.conv2(x))
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.softmax(self.fc(x), dim=-1)


class AxesOps(torch.nn.Module):
    """Operators whose axes or sizes were attributes in older opsets."""

    def forward(self, x):
        m = x.mean(dim=2)
        a, b = torch.split(m, [2, 4], dim=1)
        u = a.unsqueeze(0)
        s = x.sum(dim=1)
        return u.squeeze(0), b, s, torch.softmax(x, dim=1)


def values_text(a):
    flat = a.flatten()
    if a.dtype.kind == "f":
        return " ".join(repr(float(v)) for v in flat)
    return " ".join(str(int(v)) for v in flat)


def write_expected(model_path, output_dims, out_path):
    model = onnx.load(model_path)  # reads external data too
    g = model.graph
    lines = []
    inits = {t.name for t in g.initializer}
    for i in g.input:
        if i.name in inits:
            continue
        tt = i.type.tensor_type
        dims = [d.dim_param if d.HasField("dim_param") else str(d.dim_value) for d in tt.shape.dim]
        lines.append("\t".join(["input", i.name, str(tt.elem_type), ",".join(dims)]))
    for o, dims in zip(g.output, output_dims):
        lines.append("\t".join(["output", o.name, ",".join(dims)]))
    lines.append("\t".join(["nodes", str(sum(1 for n in g.node if n.op_type != "Constant"))]))
    for t in g.initializer:
        a = numpy_helper.to_array(t, base_dir=os.path.dirname(model_path))
        lines.append("\t".join(["value", t.name, ",".join(map(str, a.shape)), values_text(a)]))
    for n in g.node:
        if n.op_type == "Constant":
            a = numpy_helper.to_array(n.attribute[0].t)
            lines.append("\t".join(["value", n.output[0], ",".join(map(str, a.shape)), values_text(a)]))
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")


def export(model, args, path, opset, input_names, output_names, dynamic_axes):
    torch.onnx.export(model, args, path, opset_version=opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)

    cnn = SmallCnn().eval()
    with torch.no_grad():
        cnn.bn.running_mean.uniform_(-0.5, 0.5)
        cnn.bn.running_var.uniform_(0.5, 2.0)
        cnn.bn.weight.uniform_(0.5, 1.5)
        cnn.bn.bias.uniform_(-0.2, 0.2)
    image = torch.randn(2, 3, 16, 16)
    cnn_dims = [["batch", str(cnn(image).shape[1])]]
    dyn = {"image": {0: "batch"}, "probs": {0: "batch"}}
    for opset in (11, 13, 17):
        path = os.path.join(out, f"cnn_opset{opset}.onnx")
        export(cnn, (image,), path, opset, ["image"], ["probs"], dyn)
        write_expected(path, cnn_dims, path[:-len(".onnx")] + ".expected.txt")

    # The opset-13 CNN again with every initializer in one side file.
    ext_dir = os.path.join(out, "cnn_external")
    os.makedirs(ext_dir, exist_ok=True)
    model = onnx.load(os.path.join(out, "cnn_opset13.onnx"))
    ext_path = os.path.join(ext_dir, "model.onnx")
    onnx.save_model(model, ext_path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    write_expected(ext_path, cnn_dims, os.path.join(ext_dir, "model.expected.txt"))

    ops = AxesOps().eval()
    x = torch.randn(2, 6, 4)
    ops_dims = [[str(d) for d in t.shape] for t in ops(x)]
    for opset in (11, 13, 17):
        path = os.path.join(out, f"axes_opset{opset}.onnx")
        export(ops, (x,), path, opset, ["x"], ["squeezed", "second", "summed", "softmax"], None)
        write_expected(path, ops_dims, path[:-len(".onnx")] + ".expected.txt")


if __name__ == "__main__":
    main()
