"""Quantized ONNX models made by ONNX Runtime's quantizer (test-only reference for `hwgen import`).

Usage: onnx_quantized.py DIR GRAPH FORMAT ACT SEED [per_channel|per_tensor][_sym][_u8w]
Builds the float graph GRAPH (below) with random weights, quantizes it with ONNX Runtime's
quantize_static (FORMAT "qdq" or "qop", activations ACT "int8" or "uint8", symmetric int8
weights, or with "_u8w" uint8 weights with zero point 128, per tensor, or per channel with
"per_channel"; with "_sym" activations symmetric too, calibrated on random inputs), and writes DIR/model.onnx. Then picks a random
quantized input q and writes DIR/x.npy (q, HWC, int64) and DIR/y.npy: the graph's output
for the float input (q - zero_point) * scale (which QuantizeLinear maps back to q exactly),
the final DequantizeLinear's float output mapped back to its integers (HWC or flat,
int64). For a random float input off the quantization grid it writes DIR/xr.npy and the
graph's float output DIR/yr.npy, and the float model's DIR/float.onnx output for it
DIR/yf.npy.

Every expected value comes from the exact, machine-independent reference
(`onnx_exact.py`: ONNX's reference implementation, its float sums rounded once, and
ONNX Runtime's contrib operators by their definition), never from ONNX Runtime's kernels,
which differ between CPUs. ONNX Runtime's default session's outputs, as users run the
model, are written beside them as DIR/y_ort.npy and DIR/yr_ort.npy: a test compares with
them within the spread that session shows against the exact values on the same machine.
GRAPH with the suffix "_fout" (QDQ only): the graph's last operator keeps its float output
(quantize_static's OpTypesToExcludeOutputQuantization), so the graph ends in a quantized
operator with an unquantized output; DIR/y.npy is then not written.
"""

import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

import onnx_exact


def conv(name, x, cin, cout, k, stride, pad, rng, group=1):
    w = numpy_helper.from_array(rng.normal(0, 0.3, (cout, cin // group, k, k)).astype(np.float32), f"{name}_w")
    b = numpy_helper.from_array(rng.normal(0, 0.2, (cout,)).astype(np.float32), f"{name}_b")
    node = helper.make_node(
        "Conv", [x, w.name, b.name], [name], kernel_shape=[k, k], strides=[stride] * 2, pads=[pad] * 4, group=group
    )
    return [node], [w, b]


def build(graph, rng):
    """(nodes, initializers, input shape)"""
    if graph == "conv":
        nodes, inits = conv("c1", "x", 3, 8, 3, 1, 1, rng)
        return nodes, inits, [1, 3, 9, 7], "c1"
    if graph == "conv_relu_conv":
        n1, i1 = conv("c1", "x", 4, 8, 3, 1, 1, rng)
        n2, i2 = conv("c2", "r1", 8, 6, 3, 2, 1, rng)
        relu = helper.make_node("Relu", ["c1"], ["r1"])
        return n1 + [relu] + n2, i1 + i2, [1, 4, 8, 8], "c2"
    if graph == "depthwise":
        n1, i1 = conv("c1", "x", 8, 8, 3, 1, 1, rng, group=8)
        relu = helper.make_node("Relu", ["c1"], ["r1"])
        return n1 + [relu], i1, [1, 8, 6, 6], "r1"
    if graph == "pool_fc":
        n1, i1 = conv("c1", "x", 4, 8, 3, 1, 1, rng)
        relu = helper.make_node("Relu", ["c1"], ["r1"])
        pool = helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2])
        flat = helper.make_node("Flatten", ["p1"], ["f1"], axis=1)
        w = numpy_helper.from_array(rng.normal(0, 0.1, (10, 8 * 4 * 4)).astype(np.float32), "fc_w")
        b = numpy_helper.from_array(rng.normal(0, 0.2, (10,)).astype(np.float32), "fc_b")
        gemm = helper.make_node("Gemm", ["f1", "fc_w", "fc_b"], ["fc"], transB=1)
        return n1 + [relu, pool, flat, gemm], i1 + [w, b], [1, 4, 8, 8], "fc"
    if graph == "residual":
        # conv -> relu -> conv, added to the block's input, relu (a ResNet basic block).
        # 16 channels: on 8x8 the Add's 1x1 convolution skips its all-zero weight tiles.
        n1, i1 = conv("c1", "x", 16, 16, 3, 1, 1, rng)
        relu = helper.make_node("Relu", ["c1"], ["r1"])
        n2, i2 = conv("c2", "r1", 16, 16, 3, 1, 1, rng)
        add = helper.make_node("Add", ["c2", "x"], ["s"])
        relu2 = helper.make_node("Relu", ["s"], ["y"])
        return n1 + [relu] + n2 + [add, relu2], i1 + i2, [1, 16, 6, 6], "y"
    if graph == "relu6_gap":
        # conv -> Clip(0, 6) -> global average pool -> flatten -> Gemm (MobileNet's head).
        n1, i1 = conv("c1", "x", 4, 16, 3, 2, 1, rng)
        lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
        hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
        clip = helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"])
        gap = helper.make_node("GlobalAveragePool", ["r1"], ["g"])
        flat = helper.make_node("Flatten", ["g"], ["f"], axis=1)
        w = numpy_helper.from_array(rng.normal(0, 0.3, (5, 16)).astype(np.float32), "fc_w")
        b = numpy_helper.from_array(rng.normal(0, 0.2, (5,)).astype(np.float32), "fc_b")
        gemm = helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["fc"], transB=1)
        return n1 + [clip, gap, flat, gemm], i1 + [lo, hi, w, b], [1, 4, 10, 10], "fc"
    if graph == "inverted_residual":
        # MobileNetV2's block: expand 1x1 + ReLU6, depthwise 3x3 + ReLU6, project 1x1, Add.
        lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
        hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
        n1, i1 = conv("e", "x", 8, 48, 1, 1, 0, rng)
        c1 = helper.make_node("Clip", ["e", "lo", "hi"], ["e6"])
        n2, i2 = conv("d", "e6", 48, 48, 3, 1, 1, rng, group=48)
        c2 = helper.make_node("Clip", ["d", "lo", "hi"], ["d6"])
        n3, i3 = conv("p", "d6", 48, 8, 1, 1, 0, rng)
        add = helper.make_node("Add", ["p", "x"], ["y"])
        return n1 + [c1] + n2 + [c2] + n3 + [add], [lo, hi] + i1 + i2 + i3, [1, 8, 7, 7], "y"
    if graph == "upconv":
        # The codec-avatar decoder's up-convolution: ConvTranspose 4x4, stride 2, padding 1.
        w = numpy_helper.from_array(rng.normal(0, 0.2, (6, 5, 4, 4)).astype(np.float32), "u_w")
        b = numpy_helper.from_array(rng.normal(0, 0.2, (5,)).astype(np.float32), "u_b")
        up = helper.make_node("ConvTranspose", ["x", "u_w", "u_b"], ["u"], kernel_shape=[4, 4], strides=[2, 2],
                              pads=[1] * 4)
        relu = helper.make_node("Relu", ["u"], ["y"])
        return [up, relu], [w, b], [1, 6, 5, 4], "y"
    if graph == "concat":
        n1, i1 = conv("c1", "x", 4, 8, 3, 1, 1, rng)
        n2, i2 = conv("c2", "x", 4, 8, 1, 1, 0, rng)
        cat = helper.make_node("Concat", ["c1", "c2"], ["cat"], axis=1)
        n3, i3 = conv("c3", "cat", 16, 6, 1, 1, 0, rng)
        return n1 + n2 + [cat] + n3, i1 + i2 + i3, [1, 4, 6, 6], "c3"
    if graph == "avgpool":
        # A 3x3 average with its padding counted (PyTorch's export), then a 2x2 stride-2 one
        # (sums of 4 divided by 4: a quarter of the outputs are ties) as the output.
        n1, i1 = conv("c1", "x", 3, 8, 3, 1, 1, rng)
        r1 = helper.make_node("Relu", ["c1"], ["r1"])
        p1 = helper.make_node("AveragePool", ["r1"], ["p1"], kernel_shape=[3, 3], pads=[1] * 4, count_include_pad=1)
        p2 = helper.make_node("AveragePool", ["p1"], ["p2"], kernel_shape=[2, 2], strides=[2, 2])
        return n1 + [r1, p1, p2], i1, [1, 3, 8, 8], "p2"
    if graph == "affine":
        # A batch norm left unfolded: conv, Mul by a per-channel constant, Add of one, ReLU;
        # then a Sub and a Div by scalars (which quantize_static leaves in float: they
        # compose into one layer) before a convolution.
        n1, i1 = conv("c1", "x", 3, 8, 3, 1, 1, rng)
        g = numpy_helper.from_array(rng.uniform(0.5, 2.0, (1, 8, 1, 1)).astype(np.float32), "gamma")
        beta = numpy_helper.from_array(rng.normal(0, 0.5, (1, 8, 1, 1)).astype(np.float32), "beta")
        mul = helper.make_node("Mul", ["c1", "gamma"], ["m"])
        add = helper.make_node("Add", ["beta", "m"], ["a"])
        relu = helper.make_node("Relu", ["a"], ["r"])
        s = numpy_helper.from_array(np.array(0.25, np.float32), "s")
        d = numpy_helper.from_array(np.array(1.5, np.float32), "d")
        sub = helper.make_node("Sub", ["r", "s"], ["rs"])
        div = helper.make_node("Div", ["rs", "d"], ["n"])
        n2, i2 = conv("c2", "n", 8, 6, 3, 1, 1, rng)
        return n1 + [mul, add, relu, sub, div] + n2, i1 + [g, beta, s, d] + i2, [1, 3, 6, 5], "c2"
    if graph == "const_map":
        # A constant of the input's shape added (a positional map), then a scalar Mul
        # (negative). Straight on the input: no convolution's rounding to carry along.
        pos = numpy_helper.from_array(rng.normal(0, 1.0, (1, 8, 5, 6)).astype(np.float32), "pos")
        add = helper.make_node("Add", ["x", "pos"], ["a"])
        k = numpy_helper.from_array(np.array([-0.75], np.float32), "k")
        mul = helper.make_node("Mul", ["k", "a"], ["y"])
        return [add, mul], [pos, k], [1, 8, 5, 6], "y"
    if graph == "batchnorm":
        # Batch norms left in the graph (not folded before quantizing): one after a
        # convolution (negative scales in some channels), one after a ReLU.
        n1, i1 = conv("c1", "x", 3, 8, 3, 1, 1, rng)

        def bn(name, x, c):
            params = [
                numpy_helper.from_array(v.astype(np.float32), f"{name}_{k}")
                for k, v in [
                    ("gamma", rng.uniform(0.5, 1.5, c) * rng.choice([-1, 1], c)),
                    ("beta", rng.normal(0, 0.5, c)),
                    ("mean", rng.normal(0, 0.5, c)),
                    ("var", rng.uniform(0.2, 2.0, c)),
                ]
            ]
            node = helper.make_node("BatchNormalization", [x] + [t.name for t in params], [name], epsilon=1e-3)
            return node, params

        b1, p1 = bn("bn1", "c1", 8)
        relu = helper.make_node("Relu", ["bn1"], ["r1"])
        b2, p2 = bn("bn2", "r1", 8)
        return n1 + [b1, relu, b2], i1 + p1 + p2, [1, 3, 6, 5], "bn2"
    if graph == "two_inputs":
        # Two graph inputs (x and v, as the decoder's latent and view codes), each through a
        # convolution, added; see two_inputs() below for how it is run.
        n1, i1 = conv("c1", "x", 3, 8, 3, 1, 1, rng)
        n2, i2 = conv("c2", "v", 4, 8, 1, 1, 0, rng)
        add = helper.make_node("Add", ["c1", "c2"], ["a"])
        relu = helper.make_node("Relu", ["a"], ["y"])
        return n1 + n2 + [add, relu], i1 + i2, [1, 3, 6, 5], "y"
    if graph == "resize":
        # The decoder's upsampling: conv, nearest Resize by 2 (PyTorch's export:
        # half_pixel coordinates, round_prefer_floor), conv.
        n1, i1 = conv("c1", "x", 3, 8, 3, 1, 1, rng)
        scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "up_scales")
        up = helper.make_node("Resize", ["c1", "", "up_scales"], ["u"], mode="nearest")
        n2, i2 = conv("c2", "u", 8, 6, 3, 1, 1, rng)
        return n1 + [up] + n2, i1 + [scales] + i2, [1, 3, 5, 4], "c2"
    if graph == "sub":
        # The difference of two convolutions of the input, then a convolution.
        n1, i1 = conv("c1", "x", 4, 8, 3, 1, 1, rng)
        n2, i2 = conv("c2", "x", 4, 8, 1, 1, 0, rng)
        diff = helper.make_node("Sub", ["c1", "c2"], ["d"])
        n3, i3 = conv("c3", "d", 8, 6, 1, 1, 0, rng)
        return n1 + n2 + [diff] + n3, i1 + i2 + i3, [1, 4, 6, 5], "c3"
    if graph == "mul":
        # The product of two convolutions of the input, then a convolution.
        n1, i1 = conv("c1", "x", 4, 8, 3, 1, 1, rng)
        n2, i2 = conv("c2", "x", 4, 8, 1, 1, 0, rng)
        mul = helper.make_node("Mul", ["c1", "c2"], ["m"])
        n3, i3 = conv("c3", "m", 8, 6, 1, 1, 0, rng)
        return n1 + n2 + [mul] + n3, i1 + i2 + i3, [1, 4, 6, 5], "c3"
    if graph == "se_gate":
        # Squeeze-and-excitation with a ReLU gate (a sigmoid would run on the host): a
        # convolution, its channel means, a 1x1 convolution and ReLU, the map times the gate
        # ([1, C, 1, 1], broadcast), plus a second 1x1 convolution of the means (broadcast).
        n1, i1 = conv("c1", "x", 4, 16, 3, 1, 1, rng)
        gap = helper.make_node("GlobalAveragePool", ["c1"], ["g"])
        n2, i2 = conv("c2", "g", 16, 16, 1, 1, 0, rng)
        relu = helper.make_node("Relu", ["c2"], ["gate"])
        mul = helper.make_node("Mul", ["c1", "gate"], ["m"])
        n3, i3 = conv("c3", "g", 16, 16, 1, 1, 0, rng)
        add = helper.make_node("Add", ["m", "c3"], ["y"])
        return n1 + [gap] + n2 + [relu, mul] + n3 + [add], i1 + i2 + i3, [1, 4, 6, 6], "y"
    if graph == "conv_softmax_conv":
        # A host operator between two accelerator segments.
        n1, i1 = conv("c1", "x", 3, 8, 1, 1, 0, rng)
        soft = helper.make_node("Softmax", ["c1"], ["s1"], axis=1)
        n2, i2 = conv("c2", "s1", 8, 6, 3, 1, 1, rng)
        return n1 + [soft] + n2, i1 + i2, [1, 3, 6, 6], "c2"
    if graph == "conv_softmax":
        n1, i1 = conv("c1", "x", 3, 4, 1, 1, 0, rng)
        soft = helper.make_node("Softmax", ["c1"], ["s1"], axis=1)
        return n1 + [soft], i1, [1, 3, 4, 4], "s1"
    if graph == "encoder":
        nodes, inits = encoder(rng)
        return nodes, inits, [1, 16, 32], "y"
    if graph == "bert_tiny":
        # The BERT-tiny-style encoder: sequence 128, hidden 128, 2 heads, FFN 512,
        # two layers (scripts/onnx_bert_tiny.sh).
        n1, i1 = encoder(rng, s=128, d=128, heads=2, ff=512, x="x", out="l1")
        n2, i2 = encoder(rng, s=128, d=128, heads=2, ff=512, x="l1", out="y")
        return n1 + n2, i1 + i2, [1, 128, 128], "y"
    if graph == "vit":
        return vit(rng)
    if graph == "layernorm_spelt":
        # A linear layer, then LayerNormalization as exports before opset 17 spell it:
        # ReduceMean, Sub, Pow 2, ReduceMean, Add epsilon, Sqrt, Div, Mul gamma, Add beta.
        d = 32
        c = {
            "w": rng.normal(0, 0.2, (d, d)).astype(np.float32),
            "two": np.float32(2),
            "eps": np.float32(1e-5),
            "gamma": (1 + rng.normal(0, 0.1, d)).astype(np.float32),
            "beta": rng.normal(0, 0.1, d).astype(np.float32),
        }
        steps = [
            ("MatMul", ["x", "w"], "h", {}),
            ("ReduceMean", ["h"], "m", {"axes": [-1]}),
            ("Sub", ["h", "m"], "dev", {}),
            ("Pow", ["dev", "two"], "sq", {}),
            ("ReduceMean", ["sq"], "var", {"axes": [-1]}),
            ("Add", ["var", "eps"], "ve", {}),
            ("Sqrt", ["ve"], "sd", {}),
            ("Div", ["dev", "sd"], "nrm", {}),
            ("Mul", ["nrm", "gamma"], "ng", {}),
            ("Add", ["ng", "beta"], "y", {}),
        ]
        nodes = [helper.make_node(op, ins, [out], **a) for op, ins, out, a in steps]
        return nodes, [numpy_helper.from_array(v, k) for k, v in c.items()], [1, 16, d], "y"
    if graph == "fc_softmax_fc":
        # Gemm, Softmax (on the host), Gemm: the second Gemm is a later accelerator segment
        # reading the host's [1, 12] tensor and writing the graph's [1, 5] output.
        w1 = numpy_helper.from_array(rng.normal(0, 0.3, (12, 8)).astype(np.float32), "w1")
        w2 = numpy_helper.from_array(rng.normal(0, 0.3, (5, 12)).astype(np.float32), "w2")
        b2 = numpy_helper.from_array(rng.normal(0, 0.2, (5,)).astype(np.float32), "b2")
        g1 = helper.make_node("Gemm", ["x", "w1"], ["h1"], transB=1)
        soft = helper.make_node("Softmax", ["h1"], ["p1"], axis=-1)
        g2 = helper.make_node("Gemm", ["p1", "w2", "b2"], ["y"], transB=1)
        return [g1, soft, g2], [w1, w2, b2], [1, 8], "y"
    raise SystemExit(f"unknown graph {graph}")


def vit(rng, d=32, patch=8, classes=10):
    """A ViT over a [1, 3, 32, 32] image as PyTorch exports it: the patch embedding (a
    convolution of kernel and stride 8), its 16 pixels made tokens (Reshape to [1, d, 16],
    Transpose), the class token concatenated in front and the position embedding added,
    one encoder layer over the 17 tokens, the class token taken (Gather), a
    LayerNormalization and the classifier (Gemm)."""
    nodes, inits = conv("patch", "x", 3, d, patch, patch, 0, rng)
    tokens = 32 // patch * (32 // patch)

    def const(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    nodes += [
        helper.make_node("Reshape", ["patch", const("p_shape", np.array([1, d, tokens], np.int64))], ["p_r"]),
        helper.make_node("Transpose", ["p_r"], ["p_t"], perm=[0, 2, 1]),
        helper.make_node("Concat", [const("cls", rng.normal(0, 0.5, (1, 1, d)).astype(np.float32)), "p_t"], ["p_c"], axis=1),
        helper.make_node("Add", ["p_c", const("pos", rng.normal(0, 0.5, (1, tokens + 1, d)).astype(np.float32))], ["t0"]),
    ]
    enc, enc_inits = encoder(rng, s=tokens + 1, d=d, x="t0", out="t1")
    nodes += enc
    inits += enc_inits
    g = const("head_g", (1 + rng.normal(0, 0.1, d)).astype(np.float32))
    b = const("head_b", rng.normal(0, 0.1, d).astype(np.float32))
    w = const("head_w", rng.normal(0, 1 / np.sqrt(d), (classes, d)).astype(np.float32))
    nodes += [
        helper.make_node("Gather", ["t1", const("cls_index", np.array(0, np.int64))], ["c0"], axis=1),
        helper.make_node("LayerNormalization", ["c0", g, b], ["c1"], axis=-1, epsilon=1e-6),
        helper.make_node("Gemm", ["c1", w], ["y"], transB=1),
    ]
    return nodes, inits, [1, 3, 32, 32], "y"


def encoder(rng, s=16, d=32, heads=2, ff=64, x="x", out="y"):
    """A BERT-style encoder layer over x [1, s, d] as PyTorch exports it: linear layers as
    MatMul + Add, heads split by Reshape and Transpose, scores scaled by a Div, Softmax,
    residual Adds, LayerNormalization, and GELU in its Erf form: (nodes, initializers)."""
    nodes, inits = [], []
    dh = d // heads

    def const(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def linear(name, x, din, dout):
        w = const(f"{name}_w", rng.normal(0, 1 / np.sqrt(din), (din, dout)).astype(np.float32))
        b = const(f"{name}_b", rng.normal(0, 0.1, (dout,)).astype(np.float32))
        return node("Add", [node("MatMul", [x, w], f"{name}_mm"), b], name)

    def split(name, x, perm):
        shape = const(f"{name}_shape", np.array([1, s, heads, dh], np.int64))
        return node("Transpose", [node("Reshape", [x, shape], f"{name}_r")], name, perm=perm)

    def layernorm(name, x):
        g = const(f"{name}_gamma", (1 + rng.normal(0, 0.1, d)).astype(np.float32))
        b = const(f"{name}_beta", rng.normal(0, 0.1, d).astype(np.float32))
        return node("LayerNormalization", [x, g, b], name, axis=-1, epsilon=1e-5)

    def gelu(name, x):
        e = node("Erf", [node("Div", [x, const(f"{name}_c", np.float32(np.sqrt(2)))], f"{name}_d")], f"{name}_e")
        m = node("Mul", [x, node("Add", [e, const(f"{name}_one", np.float32(1))], f"{name}_a")], f"{name}_m")
        return node("Mul", [m, const(f"{name}_half", np.float32(0.5))], name)

    # (The layer's names: as below for the graph "encoder", prefixed in a larger graph.)
    n_ = "" if out == "y" else f"{out}_"
    q, k, v = (linear(f"{n_}{n}", x, d, d) for n in "qkv")
    scores = node("MatMul", [split(f"{n_}qh", q, [0, 2, 1, 3]), split(f"{n_}kh", k, [0, 2, 3, 1])], f"{n_}s")
    scaled = node("Div", [scores, const(f"{n_}s_scale", np.float32(np.sqrt(dh)))], f"{n_}sd")
    p = node("Softmax", [scaled], f"{n_}p", axis=-1)
    a = node("MatMul", [p, split(f"{n_}vh", v, [0, 2, 1, 3])], f"{n_}a")
    at = node("Transpose", [a], f"{n_}at", perm=[0, 2, 1, 3])
    merged = node("Reshape", [at, const(f"{n_}a_shape", np.array([1, s, d], np.int64))], f"{n_}ar")
    n1 = layernorm(f"{n_}n1", node("Add", [linear(f"{n_}o", merged, d, d), x], f"{n_}r1"))
    f2 = linear(f"{n_}f2", gelu(f"{n_}g", linear(f"{n_}f1", n1, d, ff)), ff, d)
    layernorm(out, node("Add", [f2, n1], f"{n_}r2"))
    return nodes, inits


class Reader(CalibrationDataReader):
    def __init__(self, shapes, rng):
        self.data = iter([{k: rng.normal(0, 1, v).astype(np.float32) for k, v in shapes.items()} for _ in range(8)])

    def get_next(self):
        return next(self.data, None)


def initializer(model, name):
    for t in model.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    raise SystemExit(f"no initializer {name}")


def main():
    d, graph, fmt, act, seed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    fout = graph.endswith("_fout")
    graph = graph.removesuffix("_fout")
    u8w = len(sys.argv) > 6 and sys.argv[6].endswith("_u8w")
    rng = np.random.default_rng(seed)
    nodes, inits, shape, out = build(graph, rng)
    # Graph inputs: x, and for "two_inputs" also v.
    shapes = {"x": shape}
    if graph == "two_inputs":
        shapes["v"] = [1, 4, 6, 5]
    g = helper.make_graph(
        nodes,
        graph,
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in shapes.items()],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)],
        initializer=inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save_model(model, f"{d}/float.onnx")
    quantize_static(
        f"{d}/float.onnx",
        f"{d}/model.onnx",
        Reader(shapes, rng),
        quant_format=QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator,
        per_channel=len(sys.argv) > 6 and sys.argv[6].startswith("per_channel"),
        activation_type=QuantType.QInt8 if act == "int8" else QuantType.QUInt8,
        # "_u8w": uint8 weights with zero point 128 (symmetric around it), the other
        # common weight encoding.
        weight_type=QuantType.QUInt8 if u8w else QuantType.QInt8,
        extra_options={"WeightSymmetric": True}
        | ({"OpTypesToExcludeOutputQuantization": [nodes[-1].op_type]} if fout else {})
        # "_sym": activations quantized symmetrically too (zero point 0).
        | ({"ActivationSymmetric": True} if len(sys.argv) > 6 and "_sym" in sys.argv[6] else {}),
    )
    if graph == "two_inputs":
        return two_inputs(d, shapes, rng)
    q = onnx.load(f"{d}/model.onnx")
    quant_in = next(n for n in q.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == "x")
    s_in, z_in = initializer(q, quant_in.input[1]), initializer(q, quant_in.input[2])
    lo, hi = (-128, 127) if act == "int8" else (0, 255)
    xq = rng.integers(lo, hi + 1, shape)
    x = ((xq - z_in.astype(np.int64)) * s_in).astype(np.float32)
    model = f"{d}/model.onnx"
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    # A float input that is not on the quantization grid, and the graph's float output for
    # it (for `hwgen run`, which quantizes and dequantizes on the host).
    # (For "layernorm_spelt", within the calibration's range: beyond it the graph's
    # quantized variance saturates, which hwgen's one layernorm does not.)
    xr = (rng.normal(0, 1.0 if graph == "layernorm_spelt" else 1.5, shape)).astype(np.float32)
    np.save(f"{d}/xr.npy", xr)
    np.save(f"{d}/yr.npy", onnx_exact.run(model, {"x": xr})[0])
    np.save(f"{d}/yr_ort.npy", session.run(None, {"x": xr})[0])
    # The float model's output for it (a graph the host runs whole).
    np.save(f"{d}/yf.npy", onnx_exact.run(f"{d}/float.onnx", {"x": xr})[0])
    np.save(f"{d}/x.npy", (xq[0][:, None, :] if len(shape) == 3 else xq[0].transpose(1, 2, 0) if len(shape) == 4 else xq[0]).astype(np.int64))
    if fout:
        return
    deq = next(n for n in q.graph.node if n.op_type == "DequantizeLinear" and n.output[0] == q.graph.output[0].name)
    s_out, z_out = initializer(q, deq.input[1]), initializer(q, deq.input[2])

    def integers(y):
        yq = np.rint(y.astype(np.float64) / s_out).astype(np.int64) + z_out.astype(np.int64)
        return (yq[0].transpose(1, 2, 0) if yq.ndim == 4 else yq[0][:, None, :] if yq.ndim == 3 else yq[0]).astype(np.int64)

    np.save(f"{d}/y.npy", integers(onnx_exact.run(model, {"x": x})[0]))
    np.save(f"{d}/y_ort.npy", integers(session.run(None, {"x": x})[0]))


def two_inputs(d, shapes, rng):
    """Float inputs DIR/xr.npy and DIR/vr.npy, the graph's output DIR/yr.npy (exact) and
    DIR/yr_ort.npy (ONNX Runtime's default session), for `hwgen run` with two --input."""
    feeds = {k: rng.normal(0, 1.5, v).astype(np.float32) for k, v in shapes.items()}
    for k, v in feeds.items():
        np.save(f"{d}/{k}r.npy", v)
    np.save(f"{d}/yr.npy", onnx_exact.run(f"{d}/model.onnx", feeds)[0])
    session = ort.InferenceSession(f"{d}/model.onnx", providers=["CPUExecutionProvider"])
    np.save(f"{d}/yr_ort.npy", session.run(None, feeds)[0])


if __name__ == "__main__":
    main()
