"""A float64 reference of MXINT8 transformer layers without attention (test-only; numpy
and gfloat's OCP MX block quantization).

Usage: mx_layers_reference.py DIR. DIR holds float32 .npy files written by
tests/transformer_reference.rs: x [S, 1, D] (MXINT8 values: exactly what hwgen reads);
w1 [1, 1, D, F], w2 [1, 1, F, D] (MXINT8-representable in blocks of 16 along the input
channels) and their FP32 biases b1, b2; g1, be1 the layer norm's gamma and beta; g2 the
RMS norm's gamma; and hwgen's outputs n (the RMS norm) and p (the softmax), each decoded
to its values. The reference computes every layer in float64 and quantizes its output to
MXINT8 in blocks of 16 channels (gfloat: OCP MX v1.0, ties to even), as the README's
contract quantizes each layer's output; inside a layer it is exact, where hwgen computes in
FP32 with splines. Prints, for n then p, "identical max_steps max_abs": the share of
hwgen's outputs equal to the reference's, the largest difference in steps of the reference
block's last place (2^(scale - 127 - 6)), and the largest absolute difference.
"""
import math
import sys

import numpy as np
from mx_block import mx

EPS = 1e-5


def load(d, name):
    return np.load(f"{d}/{name}.npy").astype(np.float64)


def linear(x, w, b):
    return mx(x @ w.reshape(w.shape[-2], w.shape[-1]) + b)[0]


def main():
    d = sys.argv[1]
    p = {n: load(d, n) for n in ["x", "w1", "b1", "w2", "b2", "g1", "be1", "g2", "n", "p"]}
    x = p["x"].reshape(p["x"].shape[0], -1)
    m = x.mean(axis=1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=1, keepdims=True)
    ln1 = mx((x - m) / np.sqrt(v + EPS) * p["g1"] + p["be1"])[0]
    f1 = linear(ln1, p["w1"], p["b1"])
    erf = np.vectorize(math.erf)
    g = mx(0.5 * f1 * (1.0 + erf(f1 / math.sqrt(2.0))))[0]
    f2 = linear(g, p["w2"], p["b2"])
    r = mx(f2 + ln1)[0]
    n, n_step = mx(r / np.sqrt((r ** 2).mean(axis=1, keepdims=True) + EPS) * p["g2"])
    e = np.exp(n - n.max(axis=1, keepdims=True))
    sm, sm_step = mx(e / e.sum(axis=1, keepdims=True))
    for ref, step, name in [(n, n_step, "n"), (sm, sm_step, "p")]:
        out = p[name].reshape(ref.shape)
        diff = np.abs(out - ref)
        print(f"{np.mean(diff == 0)} {np.max(diff / step)} {np.max(diff)}")


main()
