"""Test-only reference for the host's conversion to float8e8m0 (ONNX Cast's round_mode and
saturate), from ONNX's own onnx.numpy_helper.to_float8e8m0 (not a runtime dependency of
hwgen).

    python3 e8m0_reference.py MODE SATURATE < bits   -> one code (hex) per f32 bit pattern

MODE is up, down or nearest; SATURATE 0 or 1.
"""
import sys

import numpy as np
from onnx import numpy_helper


def main():
    mode, saturate = sys.argv[1], sys.argv[2] == "1"
    bits = np.array([int(l, 16) for l in sys.stdin.read().split()], dtype=np.uint32)
    codes = numpy_helper.to_float8e8m0(bits.view(np.float32), saturate, mode).view(np.uint8)
    sys.stdout.write("\n".join("%x" % int(c) for c in codes) + "\n")


if __name__ == "__main__":
    main()
