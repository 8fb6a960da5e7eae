"""Host operators on edge shapes (test-only; `hwgen run` must refuse or run each, never crash).

Usage: onnx_edge_shapes.py DIR
Writes DIR/NAME.onnx and DIR/NAME_x.npy for every operator the host runtime added for
ONNX's operator tests (elementwise math, comparisons and logic, normalizations, losses,
index and layout operators) on inputs of shape [], [0], [2, 0, 3], [1, 1, 1, 1] and [2, 3],
and prints "NAME OUTPUTS" per model.
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D = sys.argv[1]
SHAPES = [[], [0], [2, 0, 3], [1, 1, 1, 1], [2, 3]]
F = TensorProto.FLOAT


def model(name, nodes, inits, xdtype, xval, outs=1):
    """Write the one-input graph of `nodes` and its input; print its name and outputs."""
    x = helper.make_tensor_value_info("x", xdtype, list(xval.shape))
    ys = [helper.make_tensor_value_info(f"y{k}", TensorProto.UNDEFINED, None) for k in range(outs)]
    g = helper.make_graph(nodes, "g", [x], ys, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    onnx.save(m, f"{D}/{name}.onnx")
    np.save(f"{D}/{name}_x.npy", xval)
    print(name, outs)

for si, s in enumerate(SHAPES):
    xf = np.ones(s, dtype=np.float32)
    xb = np.ones(s, dtype=bool)
    xi = np.zeros(s, dtype=np.int64)
    t = lambda a, n: numpy_helper.from_array(np.asarray(a), n)
    last = s[-1] if s else 1
    c = s[1] if len(s) > 1 else 1
    cases = []
    for op in ["Sin","Erf","Gelu","Round","Softplus","Mish","Selu","ReduceL2","ReduceLogSumExp","ReduceSumSquare","IsNaN","IsInf","Size","Hardmax","Trilu","EyeLike"]:
        cases.append((op, [helper.make_node(op, ["x"], ["y0"])], [], F, xf, 1))
    for op in ["Pow","Mod","Equal","Less","GreaterOrEqual"]:
        attrs = {"fmod":1} if op=="Mod" else {}
        cases.append((op, [helper.make_node(op, ["x","x"], ["y0"], **attrs)], [], F, xf, 1))
    # An explicit axis 0, which a rank-0 input does not have.
    cases.append(("HardmaxAxis0", [helper.make_node("Hardmax", ["x"], ["y0"], axis=0)], [], F, xf, 1))
    cases.append(("BitShift", [helper.make_node("BitShift", ["x","x"], ["y0"], direction="LEFT")], [], TensorProto.INT64, xi, 1))
    for op in ["And","Xor"]:
        cases.append((op, [helper.make_node(op, ["x","x"], ["y0"])], [], TensorProto.BOOL, xb, 1))
    cases.append(("Not", [helper.make_node("Not", ["x"], ["y0"])], [], TensorProto.BOOL, xb, 1))
    cases.append(("Where", [helper.make_node("Where", ["x","a","a"], ["y0"])], [t(np.float32(1),"a")], TensorProto.BOOL, xb, 1))
    cases.append(("LayerNorm", [helper.make_node("LayerNormalization", ["x","sc","b"], ["y0","y1","y2"])], [t(np.ones([last],np.float32),"sc"), t(np.ones([last],np.float32),"b")], F, xf, 3))
    cases.append(("RMSNorm", [helper.make_node("RMSNormalization", ["x","sc"], ["y0"])], [t(np.ones([last],np.float32),"sc")], F, xf, 1))
    cases.append(("InstNorm", [helper.make_node("InstanceNormalization", ["x","sc","b"], ["y0"])], [t(np.ones([c],np.float32),"sc"), t(np.ones([c],np.float32),"b")], F, xf, 1))
    cases.append(("CumSum", [helper.make_node("CumSum", ["x","ax"], ["y0"])], [t(np.int64(0),"ax")], F, xf, 1))
    cases.append(("Range", [helper.make_node("Range", ["x","l","d"], ["y0"])], [t(np.float32(3),"l"), t(np.float32(0.5),"d")], F, np.float32(0) if s==[] else xf, 1))
    cases.append(("GatherEl", [helper.make_node("GatherElements", ["x","i"], ["y0"])], [t(np.zeros(s,np.int64),"i")], F, xf, 1))
    cases.append(("NLL", [helper.make_node("NegativeLogLikelihoodLoss", ["x","tg"], ["y0"])], [t(np.zeros([s[0]] + s[2:] if len(s)>1 else [1], np.int64),"tg")], F, xf, 1))
    cases.append(("SCE", [helper.make_node("SoftmaxCrossEntropyLoss", ["x","tg"], ["y0","y1"])], [t(np.zeros([s[0]] + s[2:] if len(s)>1 else [1], np.int64),"tg")], F, xf, 2))
    cases.append(("TopK", [helper.make_node("TopK", ["x","k"], ["y0","y1"])], [t(np.array([1],np.int64),"k")], F, xf, 2))
    cases.append(("Tile", [helper.make_node("Tile", ["x","r"], ["y0"])], [t(np.full([len(s)],2,np.int64),"r")], F, xf, 1))
    cases.append(("D2S", [helper.make_node("DepthToSpace", ["x"], ["y0"], blocksize=1)], [], F, xf, 1))
    cases.append(("S2D", [helper.make_node("SpaceToDepth", ["x"], ["y0"], blocksize=2)], [], F, xf, 1))
    cases.append(("OneHot", [helper.make_node("OneHot", ["x","dp","v"], ["y0"])], [t(np.int64(3),"dp"), t(np.array([0,1],np.float32),"v")], TensorProto.INT64, xi, 1))
    cases.append(("ScatEl", [helper.make_node("ScatterElements", ["x","i","u"], ["y0"])], [t(np.zeros(s,np.int64),"i"), t(np.ones(s,np.float32),"u")], F, xf, 1))
    cases.append(("ScatND", [helper.make_node("ScatterND", ["x","i","u"], ["y0"])], [t(np.zeros([1, max(len(s),1)],np.int64),"i"), t(np.ones([1],np.float32),"u")], F, xf, 1))
    # Resize in its interpolating modes: linear upscale, cubic antialiased downscale with
    # exclude_outside, tf_crop_and_resize with a roi half outside (one scale per axis).
    r = len(s)
    cases.append(("ResizeLin", [helper.make_node("Resize", ["x","","sc"], ["y0"], mode="linear")], [t(np.full([r],2.0,np.float32),"sc")], F, xf, 1))
    cases.append(("ResizeCubAA", [helper.make_node("Resize", ["x","","sc"], ["y0"], mode="cubic", antialias=1, exclude_outside=1)], [t(np.full([r],0.5,np.float32),"sc")], F, xf, 1))
    cases.append(("ResizeCrop", [helper.make_node("Resize", ["x","roi","sc"], ["y0"], mode="linear", coordinate_transformation_mode="tf_crop_and_resize")], [t(np.array([0.5]*r + [1.5]*r,np.float32),"roi"), t(np.full([r],1.0,np.float32),"sc")], F, xf, 1))
    for (name, nodes, inits, dt, xv, outs) in cases:
        model(f"{name}_{si}", nodes, inits, dt, np.asarray(xv), outs)
