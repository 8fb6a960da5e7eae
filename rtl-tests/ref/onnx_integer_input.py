"""Variants of a quantized ONNX model's input (test-only reference).

Usage: onnx_integer_input.py DIR
Reads DIR/model.onnx (made by onnx_quantized.py) and DIR/x.npy (its quantized input, HWC,
int64), drops the QuantizeLinear of the float graph input and makes its output the graph
input (int8 or uint8, as deployment graphs take images), and writes DIR/int_input.onnx,
DIR/xq.npy (the input, NCHW, in its type) and DIR/yq.npy (the graph's output for it).
Also writes DIR/normalize.onnx, the model with a float normalization in front of it
((x - mean) / std per channel: Sub and Div, which the host runs), and DIR/yn.npy, the
graph's output for DIR/xr.npy. Both outputs come from the exact, machine-independent
reference (onnx_exact.py), not from ONNX Runtime's CPU-dependent kernels.
"""

import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

import onnx_exact


def main():
    d = sys.argv[1]
    m = onnx.load(f"{d}/model.onnx")
    g = m.graph
    x = g.input[0]
    q = next(n for n in g.node if n.op_type == "QuantizeLinear" and n.input[0] == x.name)
    zp = next(t for t in g.initializer if t.name == q.input[2])
    shape = [d.dim_value for d in x.type.tensor_type.shape.dim]
    g.node.remove(q)
    g.input.remove(x)
    g.input.insert(0, helper.make_tensor_value_info(q.output[0], zp.data_type, shape))
    onnx.save(m, f"{d}/int_input.onnx")
    dt = np.int8 if zp.data_type == onnx.TensorProto.INT8 else np.uint8
    xq = np.load(f"{d}/x.npy").transpose(2, 0, 1)[None].astype(dt)
    np.save(f"{d}/xq.npy", xq)
    np.save(f"{d}/yq.npy", onnx_exact.run(f"{d}/int_input.onnx", {q.output[0]: xq})[0])
    normalize(d)


def normalize(d):
    m = onnx.load(f"{d}/model.onnx")
    g = m.graph
    x = g.input[0]
    shape = [v.dim_value for v in x.type.tensor_type.shape.dim]
    c = shape[1]
    mean = (np.arange(c) * 0.1).astype(np.float32).reshape(1, c, 1, 1)
    std = (1 + np.arange(c) * 0.5).astype(np.float32).reshape(1, c, 1, 1)
    g.initializer.extend([numpy_helper.from_array(mean, "mean"), numpy_helper.from_array(std, "std")])
    g.node.insert(0, helper.make_node("Div", ["x_centred", "std"], [x.name]))
    g.node.insert(0, helper.make_node("Sub", ["x_raw", "mean"], ["x_centred"]))
    g.input.remove(x)
    g.input.insert(0, helper.make_tensor_value_info("x_raw", onnx.TensorProto.FLOAT, shape))
    onnx.save(m, f"{d}/normalize.onnx")
    np.save(f"{d}/yn.npy", onnx_exact.run(f"{d}/normalize.onnx", {"x_raw": np.load(f"{d}/xr.npy")})[0])


if __name__ == "__main__":
    main()
