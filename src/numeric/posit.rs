//! The posit family: 8-bit posits with `es` exponent bits (0 as in SoftPosit's `posit8_t`,
//! 2 as in the 2022 posit standard), and their datapath.
//!
//! * Decoding a code: 0 is zero and 0x80 is NaR (not a real). Otherwise the sign is the top
//!   bit and a negative code is negated (two's complement) first; the regime is the run of
//!   equal bits after the sign (m ones give k = m - 1, m zeros give k = -m), ended by the
//!   opposite bit or the end of the code; then up to `es` exponent bits e (bits cut off by
//!   the end of the code are 0) and the fraction f of the remaining nf bits. The value is
//!   2^(k * 2^es + e) * (1 + f / 2^nf): maxpos 2^(6 * 2^es) (code 0x7F), minpos its inverse
//!   (code 0x01). Every posit8 value is exact in FP32.
//! * Encoding a real x (round to nearest, ties to even on the encoding): 0 gives 0; NaN and
//!   infinities give NaR; |x| >= maxpos gives maxpos and 0 < |x| <= minpos gives minpos
//!   (posits never round to zero or to NaR); otherwise the regime, exponent and fraction
//!   bits of |x| are written as an unbounded bit string after the sign and rounded to 7
//!   bits, ties to the string with a zero last bit, then negated for negative x. Where the
//!   exponent is cut off this midpoint is a geometric one: with es = 2, 2^22 lies halfway
//!   between 2^20 (0x7E) and 2^24 (0x7F) and rounds to 0x7E.
//! * The datapath is the FP8 one: each processing element forms the exact product of two
//!   codes as FP32 (`mul`: NaR gives the canonical NaN; a zero operand is +0, so the zero
//!   product takes the sign of the product), a column sums its rows from +0 in FP32, the
//!   accumulator adds in FP32, and the vector unit applies ReLU (negative values, -0 and
//!   -infinity become +0, NaN stays NaN) and encodes the FP32 value after the contract's
//!   flush (a subnormal reads as zero, so it becomes 0; NaN and infinities become NaR).

use super::int::IntType;
use super::{fp32, FloatElement, Format};
use serde::Serialize;

/// A posit format: `bits`-bit codes with `es` exponent bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Posit {
    pub bits: u32,
    pub es: u32,
}

/// The posit8 formats hwgen implements.
pub const POSIT8_ES0: Posit = Posit { bits: 8, es: 0 };
pub const POSIT8_ES2: Posit = Posit { bits: 8, es: 2 };

/// A decoded non-zero real posit: value = (-1)^sign * 2^scale * (1 + fraction / 2^frac_bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    pub sign: bool,
    pub scale: i32,
    pub fraction: u32,
    pub frac_bits: u32,
}

impl Posit {
    pub fn name(&self) -> String {
        format!("posit{}", self.bits)
    }
    /// How a code is stored: an unsigned integer of `bits`.
    pub fn code_type(&self) -> IntType {
        IntType::new(false, self.bits)
    }
    fn mask(&self) -> u32 {
        (1u32 << self.bits) - 1
    }
    /// NaR, the code of "not a real": only the sign bit set.
    pub fn nar(&self) -> u32 {
        1 << (self.bits - 1)
    }
    /// The largest positive code (maxpos).
    pub fn maxpos(&self) -> u32 {
        self.nar() - 1
    }
    /// The largest regime value: maxpos = 2^(max_k * 2^es).
    fn max_k(&self) -> i32 {
        self.bits as i32 - 2
    }
    /// The most fraction bits a code can have (after the sign, the shortest regime of two
    /// bits, and the exponent).
    pub fn max_frac_bits(&self) -> u32 {
        self.bits - 3 - self.es
    }

    /// The fields of a code; `None` for zero and NaR.
    pub fn unpack(&self, code: u32) -> Option<Decoded> {
        let code = code & self.mask();
        if code == 0 || code == self.nar() {
            return None;
        }
        let sign = code >> (self.bits - 1) == 1;
        let v = if sign {
            code.wrapping_neg() & self.mask()
        } else {
            code
        };
        // The bits after the sign, most significant first.
        let n = self.bits - 1;
        let bit = |i: u32| (v >> (n - 1 - i)) & 1;
        let r = bit(0);
        let run = (0..n).take_while(|&i| bit(i) == r).count() as u32;
        let k = if r == 1 {
            run as i32 - 1
        } else {
            -(run as i32)
        };
        // After the run and its terminating bit (when the code has room for one).
        let mut rest: Vec<u32> = (run + 1..n).map(bit).collect();
        let take = (self.es as usize).min(rest.len());
        let e_bits: u32 = rest.drain(..take).fold(0, |e, b| (e << 1) | b);
        let e = e_bits << (self.es as usize - take);
        let frac_bits = rest.len() as u32;
        let fraction = rest.iter().fold(0, |f, b| (f << 1) | b);
        Some(Decoded {
            sign,
            scale: k * (1 << self.es) + e as i32,
            fraction,
            frac_bits,
        })
    }

    /// Value of a code (NaN for NaR; f64 holds every value exactly).
    pub fn decode(&self, code: u32) -> f64 {
        let code = code & self.mask();
        if code == self.nar() {
            return f64::NAN;
        }
        match self.unpack(code) {
            None => 0.0,
            Some(d) => {
                let m = 1.0 + f64::from(d.fraction) / f64::from(1u32 << d.frac_bits);
                let v = m * 2f64.powi(d.scale);
                if d.sign {
                    -v
                } else {
                    v
                }
            }
        }
    }

    /// Round `x` to a code (see the module docs).
    pub fn encode(&self, x: f64) -> u32 {
        if x.is_nan() || x.is_infinite() {
            return self.nar();
        }
        if x == 0.0 {
            return 0;
        }
        let a = x.abs();
        let useed = 1i32 << self.es;
        let max_scale = self.max_k() * useed;
        let body = if a >= 2f64.powi(max_scale) {
            self.maxpos()
        } else if a <= 2f64.powi(-max_scale) {
            1
        } else {
            self.round_body(a)
        };
        if x < 0.0 {
            body.wrapping_neg() & self.mask()
        } else {
            body
        }
    }

    /// The `bits - 1` bits after the sign of a magnitude strictly between minpos and maxpos,
    /// rounded to nearest, ties to even, on the bit string.
    fn round_body(&self, a: f64) -> u32 {
        let useed = 1i32 << self.es;
        let bits = a.to_bits();
        let scale = ((bits >> 52) & 0x7ff) as i32 - 1023; // f64 normal: |x| >= 2^-1022
        let frac52 = bits & ((1u64 << 52) - 1);
        let k = scale.div_euclid(useed);
        let e = scale.rem_euclid(useed) as u64;
        // The string after the sign, most significant first: regime, terminator,
        // exponent, fraction.
        let mut s: Vec<u64> = Vec::with_capacity(128);
        if k >= 0 {
            s.extend(std::iter::repeat_n(1, k as usize + 1));
            s.push(0);
        } else {
            s.extend(std::iter::repeat_n(0, (-k) as usize));
            s.push(1);
        }
        s.extend((0..self.es).rev().map(|i| (e >> i) & 1));
        s.extend((0..52).rev().map(|i| (frac52 >> i) & 1));
        let n = (self.bits - 1) as usize;
        let kept = s[..n].iter().fold(0u32, |v, b| (v << 1) | *b as u32);
        let guard = s[n] == 1;
        let sticky = s[n + 1..].contains(&1);
        let up = guard && (sticky || kept & 1 == 1);
        // Strictly inside (minpos, maxpos), rounding never leaves the range.
        kept + u32::from(up)
    }
}

/// The exact product of two codes as FP32 under the contract (see the module docs).
pub fn mul(a: u32, b: u32, p: Posit) -> u32 {
    let (x, y) = (p.decode(a), p.decode(b));
    if x.is_nan() || y.is_nan() {
        return fp32::CANONICAL_NAN;
    }
    // At most 6-bit significands and |scale| <= 48: exact in f64 and in FP32.
    fp32::flush(((x * y) as f32).to_bits())
}

/// An FP32 value (bit pattern) to a code: the contract's flush first, then `encode`.
pub fn to_code(bits: u32, p: Posit) -> u32 {
    p.encode(f64::from(f32::from_bits(fp32::flush(bits))))
}

impl FloatElement for Posit {
    fn format(self) -> Format {
        Format::Posit(self)
    }
    fn product(self, a: u32, b: u32) -> u32 {
        mul(a, b, self)
    }
    fn encode_fp32(self, bits: u32) -> u32 {
        to_code(bits, self)
    }
    fn value_fp32(self, code: u32) -> u32 {
        fp32::flush((self.decode(code) as f32).to_bits())
    }
    fn decoder(self) -> &'static str {
        "hwgen_unpack_posit"
    }
    fn encoder(self) -> &'static str {
        "hwgen_fp32_to_posit"
    }
    fn row_leaves(self) -> (&'static str, &'static str) {
        ("hwgen_row_posit_in", "hwgen_row_float_out")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::Datapath;

    #[test]
    fn decode_by_hand_es0() {
        let p = POSIT8_ES0;
        // 0x40 = 0|10|00000: k = 0, value 1. 0x60 = 0|110|0000: k = 1, 2. 0x50 = 0|10|10000:
        // 1.5. 0x01: minpos 2^-6; 0x7F: maxpos 2^6. 0xC0 = -(0x40) = -1.
        assert_eq!(p.decode(0x40), 1.0);
        assert_eq!(p.decode(0x60), 2.0);
        assert_eq!(p.decode(0x50), 1.5);
        assert_eq!(p.decode(0x01), 2f64.powi(-6));
        assert_eq!(p.decode(0x7f), 64.0);
        assert_eq!(p.decode(0xc0), -1.0);
        assert_eq!(p.decode(0x00), 0.0);
        assert!(p.decode(0x80).is_nan());
        // 0x3F = 0|01|11111: k = -1, 0.5 * (1 + 31/32).
        assert_eq!(p.decode(0x3f), 0.5 * (1.0 + 31.0 / 32.0));
    }

    #[test]
    fn decode_by_hand_es2() {
        let p = POSIT8_ES2;
        // 0x40 = 0|10|00|000: 1. 0x48 = 0|10|01|000: 2. 0x44 = 0|10|00|100: 1.5.
        // 0x60 = 0|110|00|00: k = 1, 16. 0x7E = 0|111111|0: k = 5, 2^20, no exponent bits.
        // 0x7D = 0|11111|01: k = 4 and the exponent's top bits 01 -> e = 2^1: 2^18.
        assert_eq!(p.decode(0x40), 1.0);
        assert_eq!(p.decode(0x48), 2.0);
        assert_eq!(p.decode(0x44), 1.5);
        assert_eq!(p.decode(0x60), 16.0);
        assert_eq!(p.decode(0x7e), 2f64.powi(20));
        assert_eq!(p.decode(0x7d), 2f64.powi(18));
        assert_eq!(p.decode(0x7f), 2f64.powi(24));
        assert_eq!(p.decode(0x01), 2f64.powi(-24));
        assert_eq!(p.max_frac_bits(), 3);
    }

    #[test]
    fn encode_rounds_on_the_bit_string() {
        let p = POSIT8_ES2;
        // The geometric midpoint of 2^20 and 2^24 ties to the even code 0x7E.
        assert_eq!(p.encode(2f64.powi(22)), 0x7e);
        assert_eq!(p.encode(2f64.powi(22) * 1.0001), 0x7f);
        // Saturation at both ends; NaN and infinity are NaR; never zero.
        assert_eq!(p.encode(1e30), 0x7f);
        assert_eq!(p.encode(-1e30), 0x81);
        assert_eq!(p.encode(1e-30), 0x01);
        assert_eq!(p.encode(-1e-30), 0xff);
        assert_eq!(p.encode(f64::INFINITY), 0x80);
        assert_eq!(p.encode(f64::NAN), 0x80);
        assert_eq!(p.encode(-0.0), 0x00);
        // es = 0 around 1: neighbours 1 (0x40) and 1 + 1/32 (0x41): 1 + 1/64 ties to even.
        let q = POSIT8_ES0;
        assert_eq!(q.encode(1.0 + 1.0 / 64.0), 0x40);
        assert_eq!(q.encode(1.0 + 3.0 / 64.0), 0x42);
        assert_eq!(q.encode(-1.5), 0xb0);
        // Every code survives a round trip.
        for f in [POSIT8_ES0, POSIT8_ES2] {
            for c in (0..256u32).filter(|&c| c != 0x80) {
                assert_eq!(f.encode(f.decode(c)), c, "code {c:#x}");
            }
        }
    }

    #[test]
    fn products_are_exact() {
        let p = POSIT8_ES2;
        // maxpos * maxpos = 2^48; minpos * minpos = 2^-48; NaR gives NaN.
        assert_eq!(mul(0x7f, 0x7f, p), 2f32.powi(48).to_bits());
        assert_eq!(mul(0x01, 0x01, p), 2f32.powi(-48).to_bits());
        assert_eq!(mul(0x80, 0x40, p), fp32::CANONICAL_NAN);
        // 1.5 * -1.5 = -2.25; zero times a negative value is -0.
        assert_eq!(mul(0x44, 0xbc, p), (-2.25f32).to_bits());
        assert_eq!(mul(0x00, 0xc0, p), 0x8000_0000);
        // The output path applies ReLU, flushes, encodes.
        let post = |v: u32, relu: bool| {
            let ops = crate::numeric::PostOps {
                relu,
                ..Default::default()
            };
            p.post(&[i64::from(v)], &ops, p.format()).codes[0]
        };
        assert_eq!(post((-3.0f32).to_bits(), true), 0);
        assert_eq!(post(0x0000_0001, false), 0);
        assert_eq!(post(f32::INFINITY.to_bits(), false), 0x80);
    }
}
