//! The FP32 arithmetic contract of the MX and floating-point datapaths, as bit patterns.
//!
//! * Values are IEEE-754 binary32. Every operation rounds to nearest, ties to even.
//! * Subnormals are flushed: a subnormal operand is read as a zero of the same sign, and a
//!   result that IEEE arithmetic would make subnormal becomes a zero of the same sign
//!   (FTZ/DAZ, as most accelerators do; it keeps the hardware free of denormal shifters).
//! * Overflow gives the infinity of the result's sign (IEEE behaviour under ties-to-even).
//! * Every NaN result is the canonical quiet NaN 0x7FC0_0000.
//!
//! * ReLU on an FP32 value (`relu`): negative values, -0 and -infinity become +0; NaN stays
//!   NaN.
//! * Products, quotients and square roots (`mul`, `recip`, `sqrt`; the row unit's
//!   element pipeline): the exact result, when it is below the normal range (magnitude
//!   under 2^-126), is a zero of its sign; otherwise it is rounded once, to nearest, ties
//!   to even. (A sum of normal values below 2^-126 is exact, so `add`'s flush is the same
//!   rule.)
//!
//! The functions here and the families' conversions built on them use the host's IEEE
//! arithmetic and apply the flush rules around it, so the RTL blocks (`hwgen_fp32_add`,
//! `hwgen_mx_dequant`, `hwgen_fp_mul`, the encoders) are checked against arithmetic that
//! was not written here.

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

/// a - b under the contract.
pub fn sub(a: u32, b: u32) -> u32 {
    add(a, b ^ 0x8000_0000)
}

/// The smallest normal magnitude, 2^-126.
const MIN_NORMAL: f64 = 1.1754943508222875e-38;

/// An exact (or, for quotients and roots, correctly rounded in f64, which has more than
/// the 2 * 24 + 2 bits that make the second rounding to f32 innocuous) result under the
/// contract: below the normal range a zero of its sign, else rounded once to f32.
fn round_exact(v: f64) -> u32 {
    if v.is_nan() {
        CANONICAL_NAN
    } else if v.abs() < MIN_NORMAL {
        if v.is_sign_negative() {
            0x8000_0000
        } else {
            0
        }
    } else {
        (v as f32).to_bits()
    }
}

fn wide(bits: u32) -> f64 {
    f64::from(f32::from_bits(flush(bits)))
}

/// a * b under the contract (the product of two f32 values is exact in f64).
pub fn mul(a: u32, b: u32) -> u32 {
    round_exact(wide(a) * wide(b))
}

/// 1 / x under the contract: correctly rounded; 1 / +-0 is +-infinity, 1 / +-infinity
/// +-0.
pub fn recip(x: u32) -> u32 {
    round_exact(1.0 / wide(x))
}

/// The square root under the contract: correctly rounded; sqrt(-0) = -0, a negative value
/// gives NaN.
pub fn sqrt(x: u32) -> u32 {
    round_exact(wide(x).sqrt())
}

/// 1 / sqrt(x): the reciprocal of the rounded square root (two roundings).
pub fn rsqrt(x: u32) -> u32 {
    recip(sqrt(x))
}

/// The larger of a and b: NaN if either is NaN; +0 over -0.
pub fn max(a: u32, b: u32) -> u32 {
    let (fa, fb) = (f32::from_bits(flush(a)), f32::from_bits(flush(b)));
    if fa.is_nan() || fb.is_nan() {
        CANONICAL_NAN
    } else if fa > fb || (fa == fb && a >> 31 == 0) {
        flush(a)
    } else {
        flush(b)
    }
}

/// A two's-complement integer (an int32 accumulator value) as FP32: rounded to nearest
/// even (exact up to 2^24).
pub fn from_int(v: i64) -> u32 {
    round_exact(v as f64)
}

/// ReLU: a negative value, -0 or -infinity becomes +0; NaN (of either sign) stays NaN.
pub fn relu(bits: u32) -> u32 {
    if bits >> 31 == 1 && !f32::from_bits(bits).is_nan() {
        0
    } else {
        bits
    }
}

/// The sum of a column of the array from +0, top to bottom, of the FP32 products of its
/// rows (`mul` forms the exact product of two element codes), as an int32 bit pattern.
pub fn column_sum(a: &[i64], w: &[i64], mul: impl Fn(u32, u32) -> u32) -> i64 {
    let sum = a
        .iter()
        .zip(w)
        .fold(0u32, |s, (x, y)| add(s, mul(*x as u32, *y as u32)));
    i64::from(sum as i32)
}

/// FP32 accumulation of values held as int32 bit patterns (the accumulator rows).
pub fn accumulate(acc: i64, v: i64) -> i64 {
    i64::from(add(acc as u32, v as u32) as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn relu_by_hand() {
        assert_eq!(relu(f(-2.0)), 0);
        assert_eq!(relu(0x8000_0000), 0);
        assert_eq!(relu(f(f32::NEG_INFINITY)), 0);
        assert_eq!(relu(0xffc0_0000), 0xffc0_0000);
        assert_eq!(relu(f(3.0)), f(3.0));
    }
}
