"""Test-only reference for hwgen's minifloat conversions (FP8, BF16, FP16, and the host's
float8 fnuz and FP4 E2M1), from ml_dtypes (not a runtime
dependency of hwgen).

    python3 fp_reference.py decode FORMAT          -> one line per code: f64 bits (hex) or "nan"
    python3 fp_reference.py encode FORMAT < bits   -> one code (hex) per input f32 bit pattern
    python3 fp_reference.py round FORMAT < bits    -> the same, by the plain cast

Encoding saturates like hwgen's accelerator does: finite values (and, for E4M3, infinities)
are clipped to the largest finite value before the round-to-nearest-even cast. `round` is
the plain cast (numpy's float16, ml_dtypes' others), which overflows to infinity (NaN
without one; E2M1 saturates): the host's rounding of ONNX's narrow float tensors.
"""
import sys

import ml_dtypes
import numpy as np

FORMATS = {
    "fp8_e4m3": (ml_dtypes.float8_e4m3fn, np.uint8, 256, False),
    "fp8_e5m2": (ml_dtypes.float8_e5m2, np.uint8, 256, True),
    "bf16": (ml_dtypes.bfloat16, np.uint16, 65536, True),
    "fp16": (np.float16, np.uint16, 65536, True),
    "fp8_e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, np.uint8, 256, False),
    "fp8_e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, np.uint8, 256, False),
    "fp4_e2m1": (ml_dtypes.float4_e2m1fn, np.uint8, 16, False),
}


def main():
    mode, name = sys.argv[1], sys.argv[2]
    dtype, view, count, has_inf = FORMATS[name]
    out = []
    if mode == "decode":
        codes = np.arange(count, dtype=np.uint32).astype(view)
        for v in codes.view(dtype).astype(np.float64):
            out.append("nan" if np.isnan(v) else "%016x" % int(np.float64(v).view(np.uint64)))
    else:
        bits = np.array([int(l, 16) for l in sys.stdin.read().split()], dtype=np.uint32)
        x = bits.view(np.float32).astype(np.float64)
        if mode == "encode":
            big = float(ml_dtypes.finfo(dtype).max)
            clip = np.isfinite(x) if has_inf else ~np.isnan(x)
            x = np.where(clip, np.clip(x, -big, big), x)
        # Round once, from the exact f32 value (f64 holds it exactly).
        codes = x.astype(np.float32).astype(dtype).view(view)
        out = ["%x" % int(c) for c in codes]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
