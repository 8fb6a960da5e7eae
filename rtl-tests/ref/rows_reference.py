"""Float64 references for the row unit's operators (test-only; numpy and Python's math).

Reads from stdin blocks written by tests/rows_reference.rs and prints one line per block:

  function NAME            then lines "x y" (FP32 bit patterns in hex: the argument and
                           hwgen's value); prints "NAME max_abs mean_abs max_rel", the
                           errors of y against NAME(x) computed in float64 (max_rel over
                           |f(x)| >= 1e-3).
  operator OP C S_IN Z_IN S_OUT Z_OUT LO HI EPS
                           then one line of C gamma, one of C beta (floats), then lines of
                           C input codes followed by C output codes; prints "OP max_lsb
                           mean_lsb exact": the distance of hwgen's codes from the ideal
                           unrounded code y / S_OUT + Z_OUT (clamped to LO..HI) of the
                           float64 operator on the dequantized input, its mean, and the
                           fraction of codes equal to the ideal code rounded.
                           (softmax_masked: the beta line is the additive mask, and
                           S_IN includes the logit scale.)
  end
"""
import math
import struct
import sys

import numpy as np


def f32(h):
    return struct.unpack("<f", struct.pack("<I", int(h, 16)))[0]


FUNCTIONS = {
    "exp": math.exp,
    "gelu": lambda x: 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0))),
    "gelu_tanh": lambda x: 0.5
    * x
    * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
    "silu": lambda x: x / (1.0 + math.exp(-x)) if x > -700 else 0.0,
    "sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0,
    "tanh": math.tanh,
    "erf": math.erf,
}


def operator(op, x, gamma, beta, eps):
    """The float64 operator on one pixel's dequantized channels."""
    if op == "softmax":
        e = np.exp(x - x.max())
        return e / e.sum()
    if op == "softmax_masked":
        # beta is the additive mask (and the input's scale includes the logit scale).
        m = x + beta
        e = np.exp(m - m.max())
        return e / e.sum()
    if op == "layernorm":
        m = x.mean()
        v = ((x - m) ** 2).mean()
        return (x - m) / np.sqrt(v + eps) * gamma + beta
    if op == "rmsnorm":
        return x / np.sqrt((x**2).mean() + eps) * gamma + beta
    if op == "scale":
        return x * gamma + beta
    return np.array([FUNCTIONS[op](float(v)) for v in x])


def main():
    lines = iter(sys.stdin.read().split("\n"))
    out = []
    for line in lines:
        words = line.split()
        if not words or words[0] == "end":
            continue
        if words[0] == "function":
            name = words[1]
            xs, ys = [], []
            for row in lines:
                if row.strip() == "done":
                    break
                a, b = row.split()
                xs.append(f32(a))
                ys.append(f32(b))
            f = FUNCTIONS[name]
            ref = np.array([f(x) for x in xs])
            y = np.array(ys, dtype=np.float64)
            err = np.abs(y - ref)
            big = np.abs(ref) >= 1e-3
            rel = (err[big] / np.abs(ref[big])).max() if big.any() else 0.0
            out.append(f"{name} {err.max():.6e} {err.mean():.6e} {rel:.6e}")
        elif words[0] == "operator":
            op = words[1]
            c = int(words[2])
            s_in, z_in, s_out, z_out = float(words[3]), int(words[4]), float(words[5]), int(words[6])
            lo, hi, eps = int(words[7]), int(words[8]), float(words[9])
            gamma = np.array([float(v) for v in next(lines).split()])
            beta = np.array([float(v) for v in next(lines).split()])
            dist, exact, n = [], 0, 0
            for row in lines:
                if row.strip() == "done":
                    break
                v = [int(t) for t in row.split()]
                q_in, q_out = np.array(v[:c]), np.array(v[c:])
                x = s_in * (q_in - z_in).astype(np.float64)
                ideal = np.clip(operator(op, x, gamma, beta, eps) / s_out + z_out, lo, hi)
                d = np.abs(q_out - ideal)
                dist.extend(d.tolist())
                exact += int((q_out == np.clip(np.round(ideal), lo, hi)).sum())
                n += c
            out.append(f"{op} {max(dist):.6f} {np.mean(dist):.6f} {exact / n:.6f}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
