"""A float64 reference of posit8 (es = 0) row operators (test-only; numpy and SoftPosit,
whose posit8_t is posit8 with es = 0).

Usage: posit_layers_reference.py DIR. DIR holds float32 .npy files written by
tests/transformer_reference.rs: x [S, 1, D] (posit8 values: exactly what hwgen reads),
w [1, 1, D, D] (posit8 values), g1, be1 the layer norm's gamma and beta, g2 the RMS norm's
gamma; and hwgen's outputs n (the RMS norm) and p (the softmax), decoded to their values.
The reference computes every layer in float64 and rounds its output to posit8 (SoftPosit:
round to nearest even), as the README's contract rounds each layer's output; inside a
layer it is exact, where hwgen computes in FP32 with splines. Prints, for n then p,
"identical max_steps max_abs": the share of hwgen's outputs equal to the reference's, the
largest difference in posit8 steps (codes apart), and the largest absolute difference.
"""
import math
import sys

import numpy as np
import softposit as sp

EPS = 1e-5


def p8(a):
    return np.vectorize(lambda v: float(sp.posit8(float(v))))(a)


def code(v):
    """The posit8 code of a posit8 value as a signed integer (codes order the values)."""
    c = sp.posit8(float(v)).v.v
    return c - 256 if c >= 128 else c


def load(d, name):
    return np.load(f"{d}/{name}.npy").astype(np.float64)


def main():
    d = sys.argv[1]
    p = {n: load(d, n) for n in ["x", "w", "g1", "be1", "g2", "n", "p"]}
    x = p["x"].reshape(p["x"].shape[0], -1)
    f = p8(x @ p["w"].reshape(x.shape[1], -1))
    act = p8(f / (1.0 + np.exp(-f)))
    m = act.mean(axis=1, keepdims=True)
    v = ((act - m) ** 2).mean(axis=1, keepdims=True)
    ln1 = p8((act - m) / np.sqrt(v + EPS) * p["g1"] + p["be1"])
    erf = np.vectorize(math.erf)
    g = p8(0.5 * ln1 * (1.0 + erf(ln1 / math.sqrt(2.0))))
    n = p8(g / np.sqrt((g ** 2).mean(axis=1, keepdims=True) + EPS) * p["g2"])
    e = np.exp(n - n.max(axis=1, keepdims=True))
    sm = p8(e / e.sum(axis=1, keepdims=True))
    for ref, name in [(n, "n"), (sm, "p")]:
        out = p[name].reshape(ref.shape)
        steps = np.abs(np.vectorize(code)(out) - np.vectorize(code)(ref))
        print(f"{np.mean(out == ref)} {np.max(steps)} {np.max(np.abs(out - ref))}")


main()
