"""Build ResNet-18, ResNet-50 and MobileNetV2 as float ONNX graphs with random weights (the
onnx helper API; batch norm folded into the convolutions, as an exported inference model
has it), quantize each with ONNX Runtime's quantize_static (QDQ, per-channel int8 weights,
int8 or uint8 activations, calibrated on random inputs), and write for each DIR/NAME.onnx, a random
float input DIR/NAME.x.npy, the graph's output for it from the exact, machine-independent
reference (rtl-tests/ref/onnx_exact.py) DIR/NAME.y.npy, and ONNX Runtime's default
session's output DIR/NAME.y_ort.npy (its integer kernels depend on the CPU).

Usage: onnx_networks.py DIR ACT [NAME ...]   (ACT: int8 or uint8 activations; names:
resnet18 resnet50 mobilenetv2)
Nothing is downloaded. Test-only packages: onnx, onnxruntime, numpy.
"""

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "rtl-tests", "ref"))
import onnx_exact  # noqa: E402


class Net:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.k = [], [], 0

    def name(self, p):
        self.k += 1
        return f"{p}{self.k}"

    def conv(self, x, cin, cout, k, s=1, group=1, act="relu"):
        n = self.name("conv")
        fan = cin // group * k * k
        w = self.rng.normal(0, np.sqrt(2.0 / fan), (cout, cin // group, k, k)).astype(np.float32)
        b = self.rng.normal(0, 0.05, (cout,)).astype(np.float32)
        self.inits += [numpy_helper.from_array(w, n + "_w"), numpy_helper.from_array(b, n + "_b")]
        self.nodes.append(
            helper.make_node("Conv", [x, n + "_w", n + "_b"], [n], kernel_shape=[k, k], strides=[s, s],
                             pads=[k // 2] * 4, group=group)
        )
        if act == "relu":
            self.nodes.append(helper.make_node("Relu", [n], [n + "_r"]))
            return n + "_r"
        if act == "relu6":
            if not any(i.name == "zero" for i in self.inits):
                self.inits += [numpy_helper.from_array(np.array(0, np.float32), "zero"),
                               numpy_helper.from_array(np.array(6, np.float32), "six")]
            self.nodes.append(helper.make_node("Clip", [n, "zero", "six"], [n + "_r"]))
            return n + "_r"
        return n

    def add(self, a, b, relu):
        n = self.name("add")
        self.nodes.append(helper.make_node("Add", [a, b], [n]))
        if relu:
            self.nodes.append(helper.make_node("Relu", [n], [n + "_r"]))
            return n + "_r"
        return n

    def head(self, x, c, classes=1000):
        g, f, n = self.name("gap"), self.name("flat"), "logits"
        w = self.rng.normal(0, np.sqrt(1.0 / c), (classes, c)).astype(np.float32)
        b = self.rng.normal(0, 0.05, (classes,)).astype(np.float32)
        self.inits += [numpy_helper.from_array(w, "fc_w"), numpy_helper.from_array(b, "fc_b")]
        self.nodes += [helper.make_node("GlobalAveragePool", [x], [g]),
                       helper.make_node("Flatten", [g], [f], axis=1),
                       helper.make_node("Gemm", [f, "fc_w", "fc_b"], [n], transB=1)]
        return n


def resnet(depth, seed):
    net = Net(seed)
    x = net.conv("x", 3, 64, 7, 2)
    p = net.name("pool")
    net.nodes.append(helper.make_node("MaxPool", [x], [p], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
    x, cin = p, 64
    blocks = {18: [2, 2, 2, 2], 50: [3, 4, 6, 3]}[depth]
    for stage, count in enumerate(blocks):
        width = 64 << stage
        for i in range(count):
            s = 2 if stage > 0 and i == 0 else 1
            if depth == 18:
                cout = width
                y = net.conv(x, cin, width, 3, s)
                y = net.conv(y, width, width, 3, 1, act=None)
            else:
                cout = width * 4
                y = net.conv(x, cin, width, 1, 1)
                y = net.conv(y, width, width, 3, s)
                y = net.conv(y, width, cout, 1, 1, act=None)
            short = net.conv(x, cin, cout, 1, s, act=None) if (s != 1 or cin != cout) else x
            x, cin = net.add(y, short, relu=True), cout
    return net, net.head(x, cin)


def mobilenetv2(seed):
    net = Net(seed)
    x, cin = net.conv("x", 3, 32, 3, 2, act="relu6"), 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                       (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = net.conv(x, cin, hidden, 1, act="relu6") if t != 1 else x
            y = net.conv(y, hidden, hidden, 3, stride, group=hidden, act="relu6")
            y = net.conv(y, hidden, c, 1, act=None)
            x = net.add(y, x, relu=False) if stride == 1 and cin == c else y
            cin = c
    x = net.conv(x, cin, 1280, 1, act="relu6")
    return net, net.head(x, 1280)


class Reader(CalibrationDataReader):
    def __init__(self, rng, n):
        self.data = iter([{"x": rng.normal(0, 1, (1, 3, 224, 224)).astype(np.float32)} for _ in range(n)])

    def get_next(self):
        return next(self.data, None)


def build(d, name, seed, act):
    net, out = {"resnet18": lambda: resnet(18, seed), "resnet50": lambda: resnet(50, seed),
                "mobilenetv2": lambda: mobilenetv2(seed)}[name]()
    g = helper.make_graph(net.nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 224, 224])],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], initializer=net.inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save_model(model, f"{d}/{name}.float.onnx")
    rng = np.random.default_rng(seed + 1)
    quantize_static(f"{d}/{name}.float.onnx", f"{d}/{name}.onnx", Reader(rng, 4), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8 if act == "int8" else QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    x = rng.normal(0, 1, (1, 3, 224, 224)).astype(np.float32)
    session = ort.InferenceSession(f"{d}/{name}.onnx", providers=["CPUExecutionProvider"])
    np.save(f"{d}/{name}.x.npy", x)
    np.save(f"{d}/{name}.y.npy", onnx_exact.run(f"{d}/{name}.onnx", {"x": x})[0])
    np.save(f"{d}/{name}.y_ort.npy", session.run(None, {"x": x})[0])


def main():
    d, act = sys.argv[1], sys.argv[2]
    seeds = {"resnet18": 100, "resnet50": 101, "mobilenetv2": 102}
    for name in sys.argv[3:] or list(seeds):
        build(d, name, seeds[name], act)
        print(f"{d}/{name}.onnx", flush=True)


if __name__ == "__main__":
    main()
