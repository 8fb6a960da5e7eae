//! OCP Microscaling (MX v1.0) integer blocks: MXINT8 and MXINT4 with an E8M0 shared scale.
//!
//! * E8M0: codes 0x00..=0xFE are 2^(code-127); 0xFF is NaN and makes its whole block NaN.
//! * Elements are two's complement with an implicit binary point: MXINT8 value = q / 64
//!   (q in -128..=127, so -2.0 is representable), MXINT4 value = q / 4 (q in -8..=7).
//! * Quantizing a block (OCP MX v1.0 section 6.3): amax = max |x|; the shared exponent is
//!   floor(log2(amax)) read from the f32 exponent bits (subnormals by their leading mantissa
//!   bit) minus the element's emax (0 for both), clamped to -127..=127; an all-zero block
//!   gets the smallest scale (code 0x00). Elements are x / 2^shared rounded to nearest, ties
//!   to even, and saturated to the element range. A block holding a NaN or an infinity gets
//!   the NaN scale (0xFF) and zero elements.

/// An MX integer element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MxInt {
    pub name: &'static str,
    pub bits: u32,
    /// Fraction bits of the element (the implicit 2^-frac).
    pub frac: u32,
}

pub const MXINT8: MxInt = MxInt {
    name: "mxint8",
    bits: 8,
    frac: 6,
};
pub const MXINT4: MxInt = MxInt {
    name: "mxint4",
    bits: 4,
    frac: 2,
};

pub const E8M0_NAN: u8 = 0xff;

impl MxInt {
    /// Width of the exact two's-complement sum of `block_size` products of two elements:
    /// |sum| <= block_size * 2^(2 * (bits - 1)).
    pub fn psum_bits(&self, block_size: u32) -> u32 {
        2 * self.bits + block_size.trailing_zeros()
    }
    pub fn min(&self) -> i32 {
        -(1 << (self.bits - 1))
    }
    pub fn max(&self) -> i32 {
        (1 << (self.bits - 1)) - 1
    }
}

/// floor(log2(|x|)) of a finite non-zero f32, from its bits.
pub fn floor_log2(x: f32) -> i32 {
    let bits = x.to_bits() & 0x7fff_ffff;
    let e = (bits >> 23) as i32;
    if e == 0 {
        -149 + (31 - (bits & 0x7f_ffff).leading_zeros() as i32)
    } else {
        e - 127
    }
}

/// Value of an E8M0 scale code (NaN for 0xFF).
pub fn e8m0_value(code: u8) -> f64 {
    if code == E8M0_NAN {
        f64::NAN
    } else {
        2f64.powi(i32::from(code) - 127)
    }
}

/// Quantize one block: (scale code, element codes).
pub fn quantize_block(x: &[f32], t: MxInt) -> (u8, Vec<i32>) {
    if x.iter().any(|v| !v.is_finite()) {
        return (E8M0_NAN, vec![0; x.len()]);
    }
    let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
    let shared = if amax == 0.0 {
        -127
    } else {
        floor_log2(amax).clamp(-127, 127)
    };
    let scale_code = (shared + 127) as u8;
    // x * 2^(frac - shared) is exact in f64; round half to even, then saturate.
    let factor = 2f64.powi(t.frac as i32 - shared);
    let q = x
        .iter()
        .map(|v| {
            ((f64::from(*v) * factor).round_ties_even() as i64)
                .clamp(i64::from(t.min()), i64::from(t.max())) as i32
        })
        .collect();
    (scale_code, q)
}

/// The vector unit's MX output path on one row of FP32 accumulator values (bit patterns):
/// subnormals read as zero (the FP32 contract), ReLU when `relu` (negative values and -0
/// become +0, NaN stays NaN), then `quantize_block`.
pub fn quantize_fp32_row(acc: &[u32], relu: bool, t: MxInt) -> (u8, Vec<i32>) {
    let x: Vec<f32> = acc
        .iter()
        .map(|&b| {
            let b = super::fp32::flush(b);
            let v = f32::from_bits(b);
            if relu && !v.is_nan() && b >> 31 == 1 {
                0.0
            } else {
                v
            }
        })
        .collect();
    quantize_block(&x, t)
}

/// Values of a block.
pub fn dequantize_block(scale_code: u8, q: &[i32], t: MxInt) -> Vec<f64> {
    let s = e8m0_value(scale_code);
    q.iter()
        .map(|v| s * f64::from(*v) / f64::from(1u32 << t.frac))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_by_hand() {
        // amax 3.0 -> floor(log2 3) = 1, scale 2^1 (code 128); 3.0 / 2 * 64 = 96;
        // 0.01 / 2 * 64 = 0.32 -> 0; -2.5 / 2 * 64 = -80; 0.0234375 / 2 * 64 = 0.75 -> 1.
        let (s, q) = quantize_block(&[3.0, 0.01, -2.5, 0.0234375], MXINT8);
        assert_eq!(s, 128);
        assert_eq!(q, vec![96, 0, -80, 1]);
        assert_eq!(
            dequantize_block(s, &q, MXINT8),
            vec![3.0, 0.0, -2.5, 0.03125]
        );
        // Ties to even: 1.5/64 and 2.5/64 with scale 1 (amax 1.0).
        let (s, q) = quantize_block(&[1.0, 1.5 / 64.0, 2.5 / 64.0], MXINT8);
        assert_eq!((s, q), (127, vec![64, 2, 2]));
        // -2.0 relative to the scale is representable; +2.0 cannot occur (it raises amax).
        let (_, q) = quantize_block(&[-1.999, 1.0], MXINT8);
        assert_eq!(q[0], -128);
        // MXINT4: amax 1.0, 0.375 * 4 = 1.5 -> 2 (even), 0.625 * 4 = 2.5 -> 2.
        assert_eq!(
            quantize_block(&[1.0, 0.375, 0.625], MXINT4),
            (127, vec![4, 2, 2])
        );
        // All zero, NaN.
        assert_eq!(quantize_block(&[0.0, -0.0], MXINT8), (0, vec![0, 0]));
        assert_eq!(quantize_block(&[1.0, f32::NAN], MXINT8).0, E8M0_NAN);
        assert!(dequantize_block(E8M0_NAN, &[1], MXINT8)[0].is_nan());
    }

    #[test]
    fn floor_log2_from_bits() {
        assert_eq!(floor_log2(1.0), 0);
        assert_eq!(floor_log2(0.999_999_94), -1);
        assert_eq!(floor_log2(f32::from_bits(1)), -149);
        assert_eq!(floor_log2(f32::from_bits(0x0040_0000)), -127);
        assert_eq!(floor_log2(f32::MAX), 127);
    }
}
