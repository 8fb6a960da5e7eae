"""OCP MXINT8 block quantization for the test-only references (gfloat): rtl-tests/ref/
mx_layers_reference.py and mx_attention_reference.py import it."""
import numpy as np
from gfloat import block, formats

BLOCK = 16


def mx(a):
    """Each row's blocks of BLOCK channels quantized to MXINT8 (OCP MX v1.0, ties to even)
    and read back, and each element's step (its block's last place)."""
    fi = formats.format_info_mxint8
    out = np.zeros_like(a)
    step = np.zeros_like(a)
    for i in range(a.shape[0]):
        for b in range(0, a.shape[1], BLOCK):
            vals = a[i, b:b + BLOCK]
            scale = block.compute_scale_amax(fi.etype.emax, vals)
            codes = list(block.encode_block(fi, scale, vals / scale))
            s = codes[0]
            elems = np.array([c - 256 if c >= 128 else c for c in codes[1:]], dtype=np.float64)
            unit = 2.0 ** (s - 127 - 6)
            out[i, b:b + BLOCK] = elems * unit
            step[i, b:b + BLOCK] = unit
    return out, step
