//! The FP32 arithmetic contract of the MX and floating-point datapaths, as bit patterns.
//!
//! * Values are IEEE-754 binary32. Every operation rounds to nearest, ties to even.
//! * Subnormals are flushed: a subnormal operand is read as a zero of the same sign, and a
//!   result that IEEE arithmetic would make subnormal becomes a zero of the same sign
//!   (FTZ/DAZ, as most accelerators do; it keeps the hardware free of denormal shifters).
//! * Overflow gives the infinity of the result's sign (IEEE behaviour under ties-to-even).
//! * Every NaN result is the canonical quiet NaN 0x7FC0_0000.
//!
//! The functions here use the host's IEEE arithmetic and apply the flush rules around it, so
//! the RTL blocks (`hwgen_fp32_add`, `hwgen_mx_dequant`, `hwgen_fp_mul`,
//! `hwgen_fp32_to_mini`) are checked against arithmetic that was not written here.

use super::mx::{MxInt, E8M0_NAN};

pub const CANONICAL_NAN: u32 = 0x7fc0_0000;

fn is_subnormal(bits: u32) -> bool {
    bits & 0x7f80_0000 == 0 && bits & 0x007f_ffff != 0
}

/// The flush rule applied to a value: subnormals become a zero of the same sign, NaNs the
/// canonical NaN; everything else is unchanged.
pub fn flush(bits: u32) -> u32 {
    if is_subnormal(bits) {
        bits & 0x8000_0000
    } else if f32::from_bits(bits).is_nan() {
        CANONICAL_NAN
    } else {
        bits
    }
}

/// a + b under the contract.
pub fn add(a: u32, b: u32) -> u32 {
    let sum = f32::from_bits(flush(a)) + f32::from_bits(flush(b));
    flush(sum.to_bits())
}

/// Dequantize the integer partial sum of one MX block pair: psum * 2^(sa + sb - 254) / 2^(2
/// frac), rounded to FP32 under the contract. NaN when either scale is the NaN code.
pub fn mx_dequant(psum: i64, scale_a: u8, scale_b: u8, t: MxInt) -> u32 {
    if scale_a == E8M0_NAN || scale_b == E8M0_NAN {
        return CANONICAL_NAN;
    }
    let exp = i32::from(scale_a) + i32::from(scale_b) - 254 - 2 * t.frac as i32;
    // |psum| < 2^53 and 2^exp >= 2^-266: the product is exact in f64, and the f64 -> f32
    // conversion rounds to nearest even.
    let exact = psum as f64 * 2f64.powi(exp);
    flush((exact as f32).to_bits())
}

/// The exact product of two small-float codes as FP32 under the contract (both operands of
/// format `f`; NaN, infinity x zero give the canonical NaN).
pub fn mini_mul(a: u32, b: u32, f: super::MiniFloat) -> u32 {
    // Significands of at most 8 bits: the product is exact in f64, and the f64 -> f32
    // conversion rounds (only at the ends of the range) to nearest even.
    let p = f.decode(a) * f.decode(b);
    flush((p as f32).to_bits())
}

/// An FP32 value (bit pattern) to a small-float code: the contract's flush first, then
/// `MiniFloat::encode` (round to nearest even, saturating as documented there).
pub fn to_mini(bits: u32, f: super::MiniFloat) -> u32 {
    f.encode(f32::from_bits(flush(bits)))
}

/// An FP32 value (bit pattern) to a fixed-scale integer of a multi-precision design: the
/// result q stands for 2^(scale - 127) * q / 2^frac, like an MX element with scale code
/// `scale`, so q = x * 2^(127 + frac - scale) rounded to nearest, ties to even, and
/// saturated to [lo, hi]. The contract's flush first (a subnormal is zero); NaN gives 0, an
/// infinity the bound of its sign. With `relu`, a negative result becomes 0.
pub fn to_fixed(bits: u32, scale: u8, frac: u32, lo: i64, hi: i64, relu: bool) -> i64 {
    let x = f32::from_bits(flush(bits));
    if x.is_nan() {
        return 0;
    }
    let q = if x.is_infinite() {
        if x > 0.0 {
            hi
        } else {
            lo
        }
    } else {
        // |x| < 2^128 and the factor is at most 2^(127 + frac): the product is exact in f64.
        let exp = 127 + frac as i32 - i32::from(scale);
        let y = (f64::from(x) * 2f64.powi(exp)).round_ties_even();
        y.clamp(lo as f64, hi as f64) as i64
    };
    if relu {
        q.max(0)
    } else {
        q
    }
}

/// The MX dot product of two vectors split into blocks of equal length: the integer partial
/// sum of block k is dequantized and accumulated in FP32 in increasing k, the first block
/// initialising the sum (no addition to a zero).
pub fn mx_dot(a: &[(u8, Vec<i32>)], b: &[(u8, Vec<i32>)], t: MxInt) -> u32 {
    assert_eq!(a.len(), b.len(), "blocks of both operands");
    let mut acc: Option<u32> = None;
    for ((sa, qa), (sb, qb)) in a.iter().zip(b) {
        assert_eq!(qa.len(), qb.len(), "block sizes");
        let psum: i64 = qa.iter().zip(qb).map(|(x, y)| i64::from(x * y)).sum();
        let term = mx_dequant(psum, *sa, *sb, t);
        acc = Some(match acc {
            None => term,
            Some(s) => add(s, term),
        });
    }
    acc.expect("at least one block")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::mx::{MXINT4, MXINT8};

    fn f(x: f32) -> u32 {
        x.to_bits()
    }

    #[test]
    fn add_by_hand() {
        assert_eq!(add(f(1.0), f(2.0)), f(3.0));
        // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even is 1.
        assert_eq!(add(f(1.0), f(2f32.powi(-24))), f(1.0));
        // 1 + 3 * 2^-24 = 1 + 1.5 ulp: rounds to 1 + 2 ulp.
        assert_eq!(
            add(f(1.0), f(3.0 * 2f32.powi(-24))),
            f(1.0 + 2.0 * 2f32.powi(-23))
        );
        // x + -x is +0; -0 + -0 is -0.
        assert_eq!(add(f(5.5), f(-5.5)), 0);
        assert_eq!(add(0x8000_0000, 0x8000_0000), 0x8000_0000);
        // A subnormal operand counts as zero: 1.5 * 2^-126 - 2^-126 (exact 2^-127) flushes.
        assert_eq!(add(f(1.5 * 2f32.powi(-126)), f(-(2f32.powi(-126)))), 0);
        assert_eq!(add(f(2f32.powi(-126)), 0x0000_0001), f(2f32.powi(-126)));
        // Overflow, infinities, NaN.
        assert_eq!(add(f(f32::MAX), f(f32::MAX)), f(f32::INFINITY));
        assert_eq!(add(f(f32::INFINITY), f(f32::NEG_INFINITY)), CANONICAL_NAN);
        assert_eq!(add(0x7f80_0001, f(1.0)), CANONICAL_NAN);
    }

    #[test]
    fn dequant_by_hand() {
        // MXINT8: psum 64*64 = 4096 with both scales 2^0 is 1.0 * 1.0.
        assert_eq!(mx_dequant(4096, 127, 127, MXINT8), f(1.0));
        // psum -3 with scales 2^3 and 2^-1: -3 * 2^2 / 2^12.
        assert_eq!(mx_dequant(-3, 130, 126, MXINT8), f(-3.0 / 1024.0));
        // MXINT4: q/4 elements, psum 16 is 1.0.
        assert_eq!(mx_dequant(16, 127, 127, MXINT4), f(1.0));
        // The smallest normal survives; half of it flushes; beyond the range is infinity.
        assert_eq!(mx_dequant(4096, 1, 127, MXINT8), f(2f32.powi(-126)));
        assert_eq!(mx_dequant(2048, 1, 127, MXINT8), 0);
        assert_eq!(mx_dequant(-2048, 1, 127, MXINT8), 0x8000_0000);
        assert_eq!(mx_dequant(4096, 254, 128, MXINT8), f(f32::INFINITY));
        assert_eq!(mx_dequant(0, 200, 200, MXINT8), 0);
        assert_eq!(mx_dequant(1, 0xff, 127, MXINT8), CANONICAL_NAN);
    }

    #[test]
    fn to_fixed_by_hand() {
        // Scale code 127 + 6 - 6 = 127 with frac 6: q = x * 64.
        assert_eq!(to_fixed(f(1.0), 127, 6, -128, 127, false), 64);
        assert_eq!(to_fixed(f(-0.5), 127, 6, -128, 127, false), -32);
        // Code 133: q = x (an int8 tensor with exponent 0). Ties go to even.
        assert_eq!(to_fixed(f(2.5), 133, 6, -128, 127, false), 2);
        assert_eq!(to_fixed(f(3.5), 133, 6, -128, 127, false), 4);
        assert_eq!(to_fixed(f(-2.5), 133, 6, -128, 127, false), -2);
        assert_eq!(to_fixed(f(2.5000002), 133, 6, -128, 127, false), 3);
        // Code 135: q = x / 4. 0.5 * 4 = 2.0 -> 0.5 ties to 0; 6.0 -> 1.5 ties to 2.
        assert_eq!(to_fixed(f(2.0), 135, 6, -128, 127, false), 0);
        assert_eq!(to_fixed(f(6.0), 135, 6, -128, 127, false), 2);
        // Saturation, infinities, NaN, subnormals, ReLU.
        assert_eq!(to_fixed(f(1000.0), 133, 6, -128, 127, false), 127);
        assert_eq!(to_fixed(f(-1000.0), 133, 6, -128, 127, false), -128);
        assert_eq!(
            to_fixed(f(f32::NEG_INFINITY), 133, 6, -128, 127, false),
            -128
        );
        assert_eq!(to_fixed(0x7fc0_0000, 133, 6, -128, 127, false), 0);
        assert_eq!(to_fixed(0x0000_0001, 0, 6, -128, 127, false), 0);
        assert_eq!(to_fixed(f(-7.0), 133, 6, -128, 127, true), 0);
        assert_eq!(to_fixed(f(7.0), 133, 6, -8, 7, true), 7);
    }

    #[test]
    fn dot_accumulates_in_block_order() {
        // Every b block is (2^0, [1.0, 1.0]). Block 0 of a: psum 2 * 64 * 64 = 2^13, value
        // 2^13 * 2^(150 - 127) / 2^12 = 2^24. Blocks 1 and 2: psum 64 * 64, value 1.0.
        // 2^24 + 1 is a tie that stays 2^24, twice; adding 1 + 1 first would give 2^24 + 2.
        let b = vec![(127u8, vec![64, 64]); 3];
        let a = vec![
            (150u8, vec![64, 64]),
            (127, vec![64, 0]),
            (127, vec![0, 64]),
        ];
        assert_eq!(mx_dot(&a, &b, MXINT8), f(2f32.powi(24)));
        assert_eq!(
            add(add(f(1.0), f(1.0)), f(2f32.powi(24))),
            f(2f32.powi(24) + 2.0)
        );
    }
}
