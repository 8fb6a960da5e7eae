"""Concat along the channels computed by ONNX Runtime (test-only reference).

Usage: onnx_concat.py DIR N
DIR holds x0.npy ... x{N-1}.npy, int8 tensors (H, W, C_i) in hwgen's HWC layout. ONNX
Runtime concatenates their NCHW transposes along axis 1 (int8, exact) and the result is
printed in HWC order, one integer per line.
"""

import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def main():
    d, n = sys.argv[1], int(sys.argv[2])
    xs = [np.load(f"{d}/x{i}.npy").astype(np.int8).transpose(2, 0, 1)[None] for i in range(n)]
    names = [f"x{i}" for i in range(n)]
    graph = helper.make_graph(
        [helper.make_node("Concat", names, ["y"], axis=1)],
        "concat",
        [helper.make_tensor_value_info(nm, TensorProto.INT8, x.shape) for nm, x in zip(names, xs)],
        [helper.make_tensor_value_info("y", TensorProto.INT8, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, dict(zip(names, xs)))
    y = y[0].transpose(1, 2, 0).astype(np.int64)
    sys.stdout.write("".join(f"{v}\n" for v in y.flatten()))


if __name__ == "__main__":
    main()
