"""A float64 reference of MXINT8 attention, layer by layer (test-only; numpy and gfloat's
OCP MX block quantization).

Usage: mx_attention_reference.py DIR HEADS LOGIT_SCALE. DIR holds float32 .npy files
written by tests/transformer_reference.rs, each [T, 1, C] and each exactly the values
hwgen holds (MXINT8 in blocks of 16 channels): the inputs q, k, v, and hwgen's outputs s
(scores, q k^T per head), p (the per-head softmax of LOGIT_SCALE * s) and o (p v per
head). Each layer is computed in float64 from hwgen's own inputs to it and its output
quantized to MXINT8 in blocks of 16 (gfloat: OCP MX v1.0, ties to even), so each line
measures one layer: for s, p and o, "identical max_steps max_abs": the share of hwgen's
outputs equal to the reference's, the largest difference in steps of the reference
block's last place (2^(scale - 127 - 6)), and the largest absolute difference. For o,
hwgen re-blocks v down the keys as it loads it (README, "MXINT8 attention"): the third
line (against exact products) measures MX blocking along the keys, and a fourth line
compares o with p times v quantized to MXINT8 along the keys by gfloat (blocks of 16 keys
per channel, the OCP MX blocking of p v's reduction), which the re-blocking must equal.
"""
import sys

import numpy as np
from mx_block import mx


def main():
    d, heads, logit_scale = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    t = {n: np.load(f"{d}/{n}.npy").astype(np.float64) for n in "qkvspo"}
    t = {n: a.reshape(a.shape[0], -1) for n, a in t.items()}
    q, k, v = t["q"], t["k"], t["v"]
    dh, tk = q.shape[1] // heads, k.shape[0]
    s = np.concatenate([q[:, g * dh:(g + 1) * dh] @ k[:, g * dh:(g + 1) * dh].T
                        for g in range(heads)], axis=1)
    x = logit_scale * t["s"]
    parts = []
    for g in range(heads):
        h = x[:, g * tk:(g + 1) * tk]
        e = np.exp(h - h.max(axis=1, keepdims=True))
        parts.append(e / e.sum(axis=1, keepdims=True))
    p = np.concatenate(parts, axis=1)
    dv = v.shape[1] // heads
    o = np.concatenate([t["p"][:, g * tk:(g + 1) * tk] @ v[:, g * dv:(g + 1) * dv]
                        for g in range(heads)], axis=1)
    # v quantized to MXINT8 along the keys as OCP MX prescribes for p v's reduction
    # (gfloat, per channel, blocks of 16 keys), then exact: the standard to re-block to.
    vk = mx(v.T)[0].T
    ok = np.concatenate([t["p"][:, g * tk:(g + 1) * tk] @ vk[:, g * dv:(g + 1) * dv]
                         for g in range(heads)], axis=1)
    for name, exact in [("s", s), ("p", p), ("o", o), ("o", ok)]:
        ref, step = mx(exact)
        diff = np.abs(t[name] - ref)
        print(f"{np.mean(diff == 0)} {np.max(diff / step)} {np.max(diff)}")


main()
