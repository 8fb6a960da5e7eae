"""Integer results of one quantized layer computed by ONNX Runtime (test-only reference).

Usage: onnx_reference.py DIR PARAMS_JSON
DIR holds x.npy (H, W, C), w.npy (KH, KW, C, COUT) and b.npy (COUT), integer-valued, in
hwgen's layouts (w.npy is (KH, KW, C / group, COUT) for a grouped convolution, "group" in
PARAMS_JSON, default 1), and with "untied": true also ub.npy (OH, OW, COUT), a bias per output
pixel and channel added to the convolution (ONNX Add of an NCHW tensor). PARAMS_JSON: {"op": "conv" or "conv_transpose", "stride": s, "pad": p, "alpha": a or null,
"multiplier": m, "shift": k, "zero_point": z, "out_bits": 8, "out_signed": true}.

ONNX Runtime runs Conv (+ bias) and, when alpha is given, LeakyRelu(alpha) in float32 on
the NCHW transposes; the data are small enough that every value is exact. The output is
then requantized as hwgen's README states it, q = floor(y * m / 2^k + 1/2) + z, saturated,
and printed in HWC order, one integer per line.
"""

import json
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def main():
    d, params = sys.argv[1], json.loads(sys.argv[2])
    x = np.load(f"{d}/x.npy").astype(np.float32)
    w = np.load(f"{d}/w.npy").astype(np.float32)
    b = np.load(f"{d}/b.npy").astype(np.float32)
    nchw = x.transpose(2, 0, 1)[None]
    transposed = params["op"] == "conv_transpose"
    # ONNX weights: Conv [COUT, C, KH, KW]; ConvTranspose [C, COUT, KH, KW].
    oihw = w.transpose(2, 3, 0, 1) if transposed else w.transpose(3, 2, 0, 1)
    s, p = params["stride"], params["pad"]
    inits = [
        helper.make_tensor("w", TensorProto.FLOAT, oihw.shape, oihw.flatten().tolist()),
        helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.flatten().tolist()),
    ]
    nodes = [
        helper.make_node(
            "ConvTranspose" if transposed else "Conv",
            ["x", "w", "b"],
            ["acc"],
            strides=[s, s],
            pads=[p, p, p, p],
            **({} if transposed else {"group": params.get("group", 1)}),
        )
    ]
    last = "acc"
    if params.get("untied"):
        ub = np.load(f"{d}/ub.npy").astype(np.float32).transpose(2, 0, 1)[None]
        inits.append(
            helper.make_tensor("ub", TensorProto.FLOAT, ub.shape, ub.flatten().tolist())
        )
        nodes.append(helper.make_node("Add", ["acc", "ub"], ["acc_ub"]))
        last = "acc_ub"
    if params["alpha"] is not None:
        nodes.append(helper.make_node("LeakyRelu", [last], ["y"], alpha=params["alpha"]))
        last = "y"
    graph = helper.make_graph(
        nodes,
        "layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, nchw.shape)],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (y,) = session.run(None, {"x": nchw})
    y = y[0].transpose(1, 2, 0).astype(np.float64)
    m, k, z = params["multiplier"], params["shift"], params["zero_point"]
    q = np.floor(y * m / 2.0**k + 0.5) + z
    bits, signed = params["out_bits"], params["out_signed"]
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    q = np.clip(q, lo, hi).astype(np.int64)
    sys.stdout.write("".join(f"{v}\n" for v in q.flatten()))


if __name__ == "__main__":
    main()
