"""Writes single-operator test cases: an ONNX model, its inputs and the expected outputs computed by an
independent reference (numpy or PyTorch), for op_test.cc. Run with /usr/bin/python3 (Debian's onnx 1.12).

Each case NAME produces in the output directory:
  NAME.onnx                      a one-node model (inputs marked as initializers become constants)
  NAME.in.<k>.npy                value of the k-th graph input (graph inputs in order)
  NAME.out.<k>.npy               expected value of the k-th graph output
and one line in cases.txt:  NAME <num_graph_inputs> <num_outputs> <atol> <rtol>
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

_NP_TO_ONNX = {
    np.dtype(np.float32): onnx.TensorProto.FLOAT,
    np.dtype(np.float64): onnx.TensorProto.DOUBLE,
    np.dtype(np.float16): onnx.TensorProto.FLOAT16,
    np.dtype(np.int8): onnx.TensorProto.INT8,
    np.dtype(np.uint8): onnx.TensorProto.UINT8,
    np.dtype(np.int32): onnx.TensorProto.INT32,
    np.dtype(np.int64): onnx.TensorProto.INT64,
    np.dtype(np.bool_): onnx.TensorProto.BOOL,
}


class CaseWriter:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.lines = []
        self.names = set()

    def add(self, name, op_type, inputs, outputs, attrs=None, opset=13, atol=1e-5, rtol=1e-5, domain="", scope=()):
        """inputs: list of (name, array, is_constant) or None for an omitted optional input.
        outputs: list of (name, expected_array). scope: (name, array) graph inputs that the node does not
        take but its subgraphs read (If's branches)."""
        assert name not in self.names, name
        self.names.add(name)
        attrs = attrs or {}
        graph_inputs, initializers, node_inputs, feeds = [], [], [], []
        for item in inputs:
            if item is None:
                node_inputs.append("")
                continue
            iname, arr, is_const = item
            arr = np.asarray(arr)
            node_inputs.append(iname)
            if is_const:
                initializers.append(numpy_helper.from_array(arr, iname))
            else:
                graph_inputs.append(helper.make_tensor_value_info(iname, _NP_TO_ONNX[arr.dtype], list(arr.shape)))
                feeds.append(arr)
        for iname, arr in scope:
            arr = np.asarray(arr)
            graph_inputs.append(helper.make_tensor_value_info(iname, _NP_TO_ONNX[arr.dtype], list(arr.shape)))
            feeds.append(arr)
        node = helper.make_node(op_type, node_inputs, [o[0] for o in outputs], name=name + "_node", domain=domain,
                                **attrs)
        graph_outputs = [
            helper.make_tensor_value_info(oname, _NP_TO_ONNX[np.asarray(arr).dtype], None) for oname, arr in outputs
        ]
        graph = helper.make_graph([node], name, graph_inputs, graph_outputs, initializer=initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="tessel-optest")
        model.ir_version = 8
        onnx.save(model, os.path.join(self.out_dir, name + ".onnx"))
        for k, arr in enumerate(feeds):
            np.save(os.path.join(self.out_dir, "%s.in.%d.npy" % (name, k)), arr)
        for k, (_, arr) in enumerate(outputs):
            np.save(os.path.join(self.out_dir, "%s.out.%d.npy" % (name, k)), np.asarray(arr))
        self.lines.append("%s %d %d %g %g" % (name, len(feeds), len(outputs), atol, rtol))

    def finish(self, manifest="cases.txt"):
        with open(os.path.join(self.out_dir, manifest), "w") as f:
            f.write("\n".join(self.lines) + "\n")
