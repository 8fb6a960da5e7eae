"""Compare two outputs of a quantized model whose output is dequantized (hwgen's and a
reference's): the share of identical elements and the differences in units of the output's
quantization step (its last DequantizeLinear's scale).

Usage: compare_npy.py MODEL.onnx GOT.npy WANT.npy
"""

import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    model, got, want = onnx.load(sys.argv[1]), np.load(sys.argv[2]), np.load(sys.argv[3])
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    deq = next(n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.output[0] == model.graph.output[0].name)
    scale = float(init[deq.input[1]])
    steps = np.rint((got.astype(np.float64) - want.astype(np.float64)) / scale).astype(int)
    values, counts = np.unique(steps, return_counts=True)
    hist = ", ".join(f"{v:+d}: {c}" for v, c in zip(values, counts))
    print(f"{(got == want).mean() * 100:.1f}% identical, max difference {abs(steps).max()} steps ({hist})")


if __name__ == "__main__":
    main()
