"""Test-only reference for hwgen's posit8 conversions, from PyPI's softposit (SoftPosit, by
Cerlane Leong; not a runtime dependency of hwgen): posit8_t for es = 0 and the posit_2_t
type (es = 2, any width) for es = 2.

    python3 posit_reference.py decode ES          -> one line per code 0..255: f64 bits (hex) or "nar"
    python3 posit_reference.py ties ES            -> for codes c = 1..126, the value halfway
                                                     between codes c and c+1 on the bit string
                                                     (the 9-bit posit (c << 1) | 1): f64 bits (hex)
    python3 posit_reference.py encode ES < bits   -> one code (hex) per input f32 bit pattern
"""
import struct
import sys

import softposit as sp


def f64_hex(v):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", v))[0]


def decode(es, code):
    """The value of an 8-bit code, or None for NaR."""
    if code == 0x80:
        return None
    if es == 0:
        p = sp.posit8_t()
        p.v = code
        return sp.convertP8ToDouble(p)
    p = sp.posit_2_t()
    p.v = code << 24
    return sp.convertPX2ToDouble(p)


def tie(es, code):
    """The 9-bit posit (code << 1) | 1, as a value (trailing zeros do not change a posit)."""
    if es == 0:
        # With es = 0 every bit after the regime is a fraction bit, so the 9-bit midpoint is
        # the arithmetic mean of the two neighbours (posit8_t has no 9-bit type).
        return (decode(0, code) + decode(0, code + 1)) / 2
    p = sp.posit_2_t()
    p.v = ((code << 1) | 1) << 23
    return sp.convertPX2ToDouble(p)


def encode(es, x):
    if es == 0:
        return sp.convertDoubleToP8(x).v & 0xFF
    return (sp.convertDoubleToPX2(x, 8).v >> 24) & 0xFF


def main():
    mode, es = sys.argv[1], int(sys.argv[2])
    out = []
    if mode == "decode":
        for code in range(256):
            v = decode(es, code)
            out.append("nar" if v is None else f64_hex(v))
    elif mode == "ties":
        out = [f64_hex(tie(es, c)) for c in range(1, 127)]
    else:
        for word in sys.stdin.read().split():
            x = struct.unpack("<f", struct.pack("<I", int(word, 16)))[0]
            out.append("%x" % encode(es, x))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
