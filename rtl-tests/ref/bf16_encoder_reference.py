"""A float64 reference of the BF16 encoder layer (test-only; numpy and ml_dtypes).

Usage: bf16_encoder_reference.py DIR. DIR holds float32 .npy files written by
tests/transformer_reference.rs: x [S, 1, D]; wq, wk, wv, wo [1, 1, D, D], w1 [1, 1, D, F],
w2 [1, 1, F, D] and their biases bq ... b2; g1, be1, g2, be2 the layer norms' gamma and
beta; and out, hwgen's output (the golden model's, which the interpreter and the RTL
equal bit for bit). The reference computes every layer in float64 and rounds its output
to BF16 (ml_dtypes), as the README's contract rounds each layer's output; inside a layer
it is exact, where hwgen computes in FP32 with splines. Prints "identical max_ulp
max_abs": the share of hwgen's outputs equal to the reference, the largest distance in
units of BF16's last place at the reference value (at least 1/4: the outputs are a layer
norm's, of the order of 1, and near zero a last place is no measure), and the largest
absolute difference.
"""
import math
import sys

import ml_dtypes
import numpy as np

HEADS = 2
LOGIT_SCALE = 0.25
EPS = 1e-5


def bf16(a):
    return np.asarray(a, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)


def load(d, name):
    return np.load(f"{d}/{name}.npy").astype(np.float64)


def linear(x, w, b):
    return bf16(x @ w.reshape(w.shape[-2], w.shape[-1]) + b)


def layernorm(x, g, b):
    m = x.mean(axis=1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=1, keepdims=True)
    return bf16((x - m) / np.sqrt(v + EPS) * g + b)


def softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    d = sys.argv[1]
    p = {n: load(d, n) for n in ["x", "wq", "wk", "wv", "wo", "w1", "w2", "bq", "bk", "bv",
                                 "bo", "b1", "b2", "g1", "be1", "g2", "be2", "out"]}
    x = p["x"].reshape(p["x"].shape[0], -1)
    q, k, v = (linear(x, p["w" + n], p["b" + n]) for n in "qkv")
    dh = q.shape[1] // HEADS
    heads = []
    for h in range(HEADS):
        cols = slice(h * dh, (h + 1) * dh)
        s = bf16(q[:, cols] @ k[:, cols].T)
        pr = bf16(softmax(s * LOGIT_SCALE))
        heads.append(bf16(pr @ v[:, cols]))
    a = np.concatenate(heads, axis=1)
    r1 = bf16(linear(a, p["wo"], p["bo"]) + x)
    ln1 = layernorm(r1, p["g1"], p["be1"])
    f1 = linear(ln1, p["w1"], p["b1"])
    erf = np.vectorize(math.erf)
    g = bf16(0.5 * f1 * (1.0 + erf(f1 / math.sqrt(2.0))))
    r2 = bf16(linear(g, p["w2"], p["b2"]) + ln1)
    ref = layernorm(r2, p["g2"], p["be2"]).reshape(-1)
    out = p["out"].reshape(-1)
    ulp = np.array([2.0 ** (math.frexp(max(abs(r), 0.25))[1] - 8) for r in ref])
    diff = np.abs(out - ref)
    print(f"{np.mean(diff == 0)} {np.max(diff / ulp)} {np.max(diff)}")


main()
