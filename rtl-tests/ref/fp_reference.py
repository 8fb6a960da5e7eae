"""Test-only reference for hwgen's FP8/BF16 conversions, from ml_dtypes (not a runtime
dependency of hwgen).

    python3 fp_reference.py decode FORMAT          -> one line per code: f64 bits (hex) or "nan"
    python3 fp_reference.py encode FORMAT < bits   -> one code (hex) per input f32 bit pattern
    python3 fp_reference.py round FORMAT < bits    -> the same, by the plain cast

Encoding saturates like hwgen's accelerator does: finite values (and, for E4M3, infinities)
are clipped to the largest finite value before the round-to-nearest-even cast. `round` is
the plain cast (numpy's float16, ml_dtypes' bfloat16), which overflows to infinity: the
host's rounding of ONNX float16 and bfloat16 tensors.
"""
import sys

import ml_dtypes
import numpy as np

FORMATS = {
    "fp8_e4m3": (ml_dtypes.float8_e4m3fn, np.uint8, 256, False),
    "fp8_e5m2": (ml_dtypes.float8_e5m2, np.uint8, 256, True),
    "bf16": (ml_dtypes.bfloat16, np.uint16, 65536, True),
    "fp16": (np.float16, np.uint16, 65536, True),
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
