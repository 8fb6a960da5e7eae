"""Pooling computed by ONNX Runtime (test-only reference).

Usage: onnx_pool.py DIR OP K STRIDE PAD
DIR holds x.npy (H, W, C), integer-valued, in hwgen's HWC layout. OP "max": ONNX
Runtime's MaxPool on the int8 NCHW tensor with pads on every side (padding never counts),
printed as it is. OP "avg": AveragePool with count_include_pad = 1 in float32 (every value
exact: small integers over K * K), times K * K, i.e. the window sums with padding counted
as zeros. Printed in HWC order, one integer per line.
"""

import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def main():
    d, op = sys.argv[1], sys.argv[2]
    k, s, p = (int(v) for v in sys.argv[3:6])
    x = np.load(f"{d}/x.npy").transpose(2, 0, 1)[None]
    if op == "max":
        x, elem = x.astype(np.int8), TensorProto.INT8
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)
    else:
        x, elem = x.astype(np.float32), TensorProto.FLOAT
        node = helper.make_node(
            "AveragePool", ["x"], ["y"], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4, count_include_pad=1
        )
    graph = helper.make_graph(
        [node],
        "pool",
        [helper.make_tensor_value_info("x", elem, x.shape)],
        [helper.make_tensor_value_info("y", elem, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x})
    y = y[0].transpose(1, 2, 0).astype(np.float64)
    if op != "max":
        y = np.rint(y * k * k)
    sys.stdout.write("".join(f"{int(v)}\n" for v in y.flatten()))


if __name__ == "__main__":
    main()
