"""Test-only reference for hwgen's MXINT8 block quantization, from gfloat (OCP MX v1.0,
round ties to even, saturating). Not a runtime dependency of hwgen.

    python3 mx_reference.py < blocks
Each input line holds one block as f32 bit patterns (hex); each output line holds the E8M0
scale code followed by the element codes as signed integers.
"""
import sys

import numpy as np
from gfloat import block, formats


def main():
    fi = formats.format_info_mxint8
    for line in sys.stdin.read().splitlines():
        bits = np.array([int(w, 16) for w in line.split()], dtype=np.uint32)
        vals = bits.view(np.float32).astype(np.float64)
        scale = block.compute_scale_amax(fi.etype.emax, vals)
        codes = list(block.encode_block(fi, scale, vals / scale))
        elems = [c - 256 if c >= 128 else c for c in codes[1:]]
        print(" ".join(str(c) for c in [codes[0]] + elems))


if __name__ == "__main__":
    main()
