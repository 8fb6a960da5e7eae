//! The minifloat family: FP8 E4M3 (OCP "fn"), FP8 E5M2 and BF16 elements, converted from and
//! to f32 with round-to-nearest-even, and their datapath; and formats only the host's ONNX
//! runtime uses: IEEE binary16 (`FP16`), ONNX's float8e4m3fnuz and float8e5m2fnuz
//! (`E4M3FNUZ`, `E5M2FNUZ`: the one NaN is 0x80, there is no -0 and no infinity) and
//! float4e2m1 (`E2M1`: no NaN, no infinity).
//!
//! Overflow rule (a decision; the OCP spec allows either): finite values beyond the largest
//! finite value saturate to it. E4M3 has no infinity, so +-inf also saturate; E5M2 and BF16
//! keep infinities. NaN stays NaN (E4M3: S.1111.111; E5M2: S.11111.11; BF16: S.11111111.1111111;
//! hwgen writes the positive one, 0x7F, 0x7F and 0x7FFF). Subnormals of the source are
//! converted exactly like any other value (no flushing).
//!
//! The datapath: each processing element forms the exact product of its two codes as FP32
//! (`mul`) and adds it to the partial sum in FP32, so a column sums its rows top to bottom
//! from +0; the accumulator adds the column sums in FP32; the vector unit applies ReLU and
//! converts back (`output`).

use super::int::IntType;
use super::{fp32, FloatElement, Format};
use serde::Serialize;

/// A small binary floating-point format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MiniFloat {
    pub name: &'static str,
    pub exp_bits: u32,
    pub man_bits: u32,
    pub bias: i32,
    pub specials: Specials,
}

/// Serialized (in the manifest, and so in the design hash) as it was before the host-only
/// formats came: the accelerator's formats by `ieee_specials`; the others add `specials`.
impl Serialize for MiniFloat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let host_only = matches!(self.specials, Specials::Fnuz | Specials::Finite);
        let mut m = s.serialize_struct("MiniFloat", 5 + usize::from(host_only))?;
        m.serialize_field("name", self.name)?;
        m.serialize_field("exp_bits", &self.exp_bits)?;
        m.serialize_field("man_bits", &self.man_bits)?;
        m.serialize_field("bias", &self.bias)?;
        m.serialize_field("ieee_specials", &self.ieee_specials())?;
        if host_only {
            m.serialize_field("specials", &self.specials)?;
        }
        m.end()
    }
}

/// Which codes of a minifloat are not finite numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Specials {
    /// IEEE: the all-ones exponent holds infinity (fraction 0) and NaNs.
    Ieee,
    /// OCP "fn" (E4M3): only S.1..1.1..1 is NaN; the rest of the all-ones exponent holds
    /// finite values; no infinity.
    Fn,
    /// ONNX "fnuz": the code 1.0..0 (negative zero's) is the one NaN; every other code is
    /// finite, and zero has no sign.
    Fnuz,
    /// No NaN and no infinity (E2M1).
    Finite,
}

pub const E4M3: MiniFloat = MiniFloat {
    name: "fp8_e4m3",
    exp_bits: 4,
    man_bits: 3,
    bias: 7,
    specials: Specials::Fn,
};
pub const E5M2: MiniFloat = MiniFloat {
    name: "fp8_e5m2",
    exp_bits: 5,
    man_bits: 2,
    bias: 15,
    specials: Specials::Ieee,
};
pub const BF16: MiniFloat = MiniFloat {
    name: "bf16",
    exp_bits: 8,
    man_bits: 7,
    bias: 127,
    specials: Specials::Ieee,
};
/// IEEE 754 binary16. Not an accelerator element: the host runs ONNX's float16 tensors
/// in it (`round_ieee`).
pub const FP16: MiniFloat = MiniFloat {
    name: "fp16",
    exp_bits: 5,
    man_bits: 10,
    bias: 15,
    specials: Specials::Ieee,
};

/// ONNX's float8e4m3fnuz. Host only.
pub const E4M3FNUZ: MiniFloat = MiniFloat {
    name: "fp8_e4m3fnuz",
    exp_bits: 4,
    man_bits: 3,
    bias: 8,
    specials: Specials::Fnuz,
};
/// ONNX's float8e5m2fnuz. Host only.
pub const E5M2FNUZ: MiniFloat = MiniFloat {
    name: "fp8_e5m2fnuz",
    exp_bits: 5,
    man_bits: 2,
    bias: 16,
    specials: Specials::Fnuz,
};
/// OCP's FP4 E2M1 (ONNX's float4e2m1): values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
/// negatives. Host only.
pub const E2M1: MiniFloat = MiniFloat {
    name: "fp4_e2m1",
    exp_bits: 2,
    man_bits: 1,
    bias: 1,
    specials: Specials::Finite,
};

impl MiniFloat {
    /// Whether the format has IEEE infinities and NaNs (the datapath's `IEEE` parameter).
    pub fn ieee_specials(&self) -> bool {
        self.specials == Specials::Ieee
    }
    fn sign_bit(&self) -> u32 {
        1 << (self.exp_bits + self.man_bits)
    }
    pub fn bits(&self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }
    /// How a code is stored: an unsigned integer of `bits()`.
    pub fn code_type(&self) -> IntType {
        IntType::new(false, self.bits())
    }
    fn exp_max_field(&self) -> u32 {
        (1 << self.exp_bits) - 1
    }
    /// Code of the largest finite positive value.
    pub fn max_code(&self) -> u32 {
        let all_ones = self.sign_bit() - 1;
        match self.specials {
            Specials::Ieee => all_ones - (1 << self.man_bits),
            // All-ones exponent, all-ones mantissa is NaN: the largest finite has mantissa
            // all ones but the last bit.
            Specials::Fn => all_ones - 1,
            Specials::Fnuz | Specials::Finite => all_ones,
        }
    }
    /// The positive NaN the datapath writes (IEEE and "fn": S.1..1.1..1; "fnuz": its one
    /// NaN). A format without NaN has none: E2M1 gives the code a NaN converts to (see
    /// `quiet_nan_code`).
    pub fn nan_code(&self) -> u32 {
        match self.specials {
            Specials::Ieee | Specials::Fn => self.sign_bit() - 1,
            Specials::Fnuz | Specials::Finite => self.sign_bit(),
        }
    }
    /// The code numpy and ml_dtypes write for a NaN with the sign of `negative`: IEEE's
    /// quiet NaN (the top fraction bit set), "fn"'s S.1..1.1..1, "fnuz"'s one NaN; E2M1
    /// has no NaN, and ml_dtypes (so ONNX's reference) converts one to the zero of the
    /// opposite sign (0x8 for the usual positive NaN). The host's files hold it, the
    /// accelerator's datapath keeps `nan_code`.
    pub fn quiet_nan_code(&self, negative: bool) -> u32 {
        let sign = u32::from(negative) * self.sign_bit();
        match self.specials {
            Specials::Ieee => {
                sign | (self.exp_max_field() << self.man_bits) | (1 << (self.man_bits - 1))
            }
            Specials::Fn => sign | self.nan_code(),
            Specials::Fnuz => self.nan_code(),
            Specials::Finite => sign ^ self.sign_bit(),
        }
    }
    pub fn inf_code(&self) -> Option<u32> {
        self.ieee_specials()
            .then(|| self.exp_max_field() << self.man_bits)
    }
    pub fn max_value(&self) -> f64 {
        self.decode(self.max_code())
    }
    /// The smallest normal exponent.
    fn emin(&self) -> i32 {
        1 - self.bias
    }

    /// Value of `code` (f64 holds every value of these formats exactly).
    pub fn decode(&self, code: u32) -> f64 {
        let sign = if (code >> (self.exp_bits + self.man_bits)) & 1 == 1 {
            -1.0
        } else {
            1.0
        };
        let e = (code >> self.man_bits) & self.exp_max_field();
        let m = code & ((1 << self.man_bits) - 1);
        match self.specials {
            Specials::Ieee if e == self.exp_max_field() => {
                return if m == 0 {
                    sign * f64::INFINITY
                } else {
                    f64::NAN
                };
            }
            Specials::Fn if code & (self.sign_bit() - 1) == self.nan_code() => return f64::NAN,
            Specials::Fnuz if code & (2 * self.sign_bit() - 1) == self.nan_code() => {
                return f64::NAN
            }
            _ => {}
        }
        if e == 0 {
            sign * f64::from(m) * pow2(self.emin() - self.man_bits as i32)
        } else {
            sign * f64::from((1 << self.man_bits) | m)
                * pow2(e as i32 - self.bias - self.man_bits as i32)
        }
    }

    /// Round `x` to nearest, ties to even, and encode; saturating (see the module docs).
    /// A NaN is `sign | nan_code` ("fnuz": its NaN; E2M1: `quiet_nan_code`); "fnuz" writes
    /// every zero as +0.
    pub fn encode(&self, x: f32) -> u32 {
        let sign = u32::from(x.is_sign_negative()) * self.sign_bit();
        let zero = match self.specials {
            Specials::Fnuz => 0,
            _ => sign,
        };
        if x.is_nan() {
            return match self.specials {
                Specials::Fnuz | Specials::Finite => self.quiet_nan_code(x.is_sign_negative()),
                _ => sign | self.nan_code(),
            };
        }
        if x.is_infinite() {
            return sign | self.inf_code().unwrap_or_else(|| self.max_code());
        }
        let a = f64::from(x.abs());
        if a == 0.0 {
            return zero;
        }
        // The quantum (distance between neighbours) at this magnitude, then round.
        let e = exponent_of(a).max(self.emin());
        let quantum = pow2(e - self.man_bits as i32);
        let v = (a / quantum).round_ties_even() * quantum;
        if v > self.max_value() {
            return sign | self.max_code();
        }
        if v == 0.0 {
            return zero;
        }
        let ev = exponent_of(v);
        if ev < self.emin() {
            let m = (v / pow2(self.emin() - self.man_bits as i32)) as u32;
            sign | m
        } else {
            let m = (v / pow2(ev - self.man_bits as i32)) as u32 - (1 << self.man_bits);
            sign | (((ev + self.bias) as u32) << self.man_bits) | m
        }
    }

    /// `x` rounded to the nearest value of the format, ties to even, as IEEE 754 converts
    /// (and ONNX's Cast, numpy's float16 and ml_dtypes' bfloat16 and float8 casts): unlike
    /// `encode`, a value at or beyond the largest finite value plus half a unit overflows,
    /// to infinity, or in a format without infinity ("fn", "fnuz") to NaN; E2M1, which has
    /// neither, saturates to its largest value. NaN stays NaN (E2M1: it becomes the zero
    /// `quiet_nan_code` gives); zeros keep their sign, except in "fnuz", whose zero is +0.
    pub fn round_ieee(&self, x: f64) -> f64 {
        let unsigned_zero = self.specials == Specials::Fnuz;
        if x.is_nan() && self.specials == Specials::Finite {
            return if x.is_sign_negative() { 0.0 } else { -0.0 };
        }
        if x.is_nan() || x == 0.0 {
            return if unsigned_zero { x.abs() } else { x };
        }
        let overflow = match self.specials {
            Specials::Ieee => f64::INFINITY,
            Specials::Finite => self.max_value(),
            Specials::Fn | Specials::Fnuz => f64::NAN,
        };
        if x.is_infinite() {
            return overflow.copysign(x);
        }
        let a = x.abs();
        let quantum = pow2(exponent_of(a).max(self.emin()) - self.man_bits as i32);
        let v = (a / quantum).round_ties_even() * quantum;
        let v = if v > self.max_value() { overflow } else { v };
        match unsigned_zero && v == 0.0 {
            true => 0.0,
            false => v.copysign(x),
        }
    }
}

/// floor(log2(a)) for a positive finite f64, from its exponent bits.
pub(super) fn exponent_of(a: f64) -> i32 {
    let bits = a.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 {
        // f64 subnormal (not reachable from f32 inputs)
        -1074 + (63 - (bits & ((1 << 52) - 1)).leading_zeros() as i32)
    } else {
        e - 1023
    }
}

fn pow2(e: i32) -> f64 {
    2f64.powi(e)
}

/// The exact product of two codes as FP32 under the contract (NaN, infinity x zero give the
/// canonical NaN; a zero operand gives a zero with the sign of the product).
pub fn mul(a: u32, b: u32, f: MiniFloat) -> u32 {
    // Significands of at most 8 bits: the product is exact in f64, and the f64 -> f32
    // conversion rounds (only at the ends of the range) to nearest even.
    let p = f.decode(a) * f.decode(b);
    fp32::flush((p as f32).to_bits())
}

/// An FP32 value (bit pattern) to a code: the contract's flush first, then
/// `MiniFloat::encode` (round to nearest even, saturating as documented there).
pub fn to_code(bits: u32, f: MiniFloat) -> u32 {
    f.encode(f32::from_bits(fp32::flush(bits)))
}

impl FloatElement for MiniFloat {
    fn format(self) -> Format {
        Format::Float(self)
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
        "hwgen_unpack_mini"
    }
    fn encoder(self) -> &'static str {
        "hwgen_fp32_to_mini"
    }
    /// Bias and residual add in FP32 before the encoder (`hwgen_post_mini`); the row unit
    /// reads and writes these codes.
    fn post_leaf(self) -> &'static str {
        "hwgen_post_mini"
    }
    fn row_leaves(self) -> (&'static str, &'static str) {
        ("hwgen_row_mini_in", "hwgen_row_float_out")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_the_spec() {
        assert_eq!(E4M3.max_value(), 448.0);
        assert_eq!(E5M2.max_value(), 57344.0);
        assert_eq!(E4M3.max_code(), 0x7e);
        assert_eq!(E4M3.nan_code(), 0x7f);
        assert_eq!(E5M2.inf_code(), Some(0x7c));
        // Smallest subnormals: 2^-9 and 2^-16.
        assert_eq!(E4M3.decode(1), 2f64.powi(-9));
        assert_eq!(E5M2.decode(1), 2f64.powi(-16));
        assert_eq!(BF16.decode(0x3f80), 1.0);
    }

    #[test]
    fn rounding_by_hand() {
        // E4M3 around 1: neighbours 1.0 and 1.125; 1.0625 is the tie -> even (1.0).
        assert_eq!(E4M3.encode(1.0625), 0x38);
        assert_eq!(E4M3.encode(1.0626), 0x39);
        // 1.1875 is the tie between 1.125 (odd mantissa) and 1.25 -> 1.25.
        assert_eq!(E4M3.encode(1.1875), 0x3a);
        // Overflow saturates; infinity too for E4M3, but not for E5M2.
        assert_eq!(E4M3.encode(1000.0), 0x7e);
        assert_eq!(E4M3.encode(f32::NEG_INFINITY), 0xfe);
        assert_eq!(E5M2.encode(1e6), 0x7b);
        assert_eq!(E5M2.encode(f32::INFINITY), 0x7c);
        // BF16 keeps the upper 16 bits of f32 when the rest is below half an ulp.
        assert_eq!(BF16.encode(f32::from_bits(0x3f80_7fff)), 0x3f80);
        assert_eq!(BF16.encode(f32::from_bits(0x3f80_8000)), 0x3f80); // tie -> even
        assert_eq!(BF16.encode(f32::from_bits(0x3f81_8000)), 0x3f82); // tie -> even
    }

    /// IEEE rounding by hand: binary16 has 10 fraction bits (a unit of 2^-10 at 1) and a
    /// largest finite value of 65504 (units of 32 there); bfloat16 has 7 (2^-7 at 1).
    #[test]
    fn ieee_rounding_by_hand() {
        let u = 2f64.powi(-10);
        assert_eq!(FP16.round_ieee(1.0 + u / 2.0), 1.0); // tie -> even
        assert_eq!(FP16.round_ieee(1.0 + 1.5 * u), 1.0 + 2.0 * u); // tie -> even
        assert_eq!(FP16.round_ieee(1.0 + 0.6 * u), 1.0 + u);
        assert_eq!(FP16.round_ieee(-(1.0 + 0.6 * u)), -(1.0 + u));
        // 65504 + 15.99 rounds down; 65504 + 16 is the tie with 65536: even, so infinity.
        assert_eq!(FP16.round_ieee(65519.99), 65504.0);
        assert_eq!(FP16.round_ieee(65520.0), f64::INFINITY);
        assert_eq!(FP16.round_ieee(-1e6), f64::NEG_INFINITY);
        // Smallest subnormal 2^-24; half of it is a tie with zero (even).
        assert_eq!(FP16.round_ieee(2f64.powi(-25)), 0.0);
        assert_eq!(FP16.round_ieee(1.5 * 2f64.powi(-25)), 2f64.powi(-24));
        assert_eq!(FP16.max_value(), 65504.0);
        let b = 2f64.powi(-7);
        assert_eq!(BF16.round_ieee(1.0 + b / 2.0), 1.0);
        assert_eq!(BF16.round_ieee(1.0 + 1.5 * b), 1.0 + 2.0 * b);
        // float32's largest value is beyond bfloat16's by more than half a unit.
        assert_eq!(BF16.round_ieee(f64::from(f32::MAX)), f64::INFINITY);
        assert!(BF16.round_ieee(f64::NAN).is_nan());
        assert!(FP16.round_ieee(-0.0).is_sign_negative());
        // E4M3 "fn": 448 is the largest value, 480 the next step; 464 is the tie, to even
        // (448); beyond it, and infinity, NaN.
        assert_eq!(E4M3.round_ieee(464.0), 448.0);
        assert!(E4M3.round_ieee(465.0).is_nan());
        assert!(E4M3.round_ieee(f64::INFINITY).is_nan());
    }

    /// ONNX's fnuz float8 (bias 8 and 16, every exponent finite, NaN 0x80, zero unsigned)
    /// and E2M1 (bias 1, no specials), by hand from the format definitions.
    #[test]
    fn fnuz_and_e2m1_by_hand() {
        // E4M3FNUZ: 0x7f = 1.111b * 2^(15 - 8) = 240; 1.0 is exponent field 8 (0x40); the
        // smallest subnormal 2^(1 - 8 - 3).
        assert_eq!(E4M3FNUZ.max_value(), 240.0);
        assert_eq!(E4M3FNUZ.decode(0x40), 1.0);
        assert_eq!(E4M3FNUZ.decode(1), 2f64.powi(-10));
        assert!(E4M3FNUZ.decode(0x80).is_nan());
        assert_eq!(E4M3FNUZ.decode(0xff), -240.0);
        // E5M2FNUZ: 0x7f = 1.11b * 2^(31 - 16) = 57344; 1.0 is 0x40; smallest 2^-17.
        assert_eq!(E5M2FNUZ.max_value(), 57344.0);
        assert_eq!(E5M2FNUZ.decode(0x40), 1.0);
        assert_eq!(E5M2FNUZ.decode(1), 2f64.powi(-17));
        // Saturating encode: no -0, infinities to the largest value with their sign, NaN
        // (either sign) to 0x80.
        assert_eq!(E4M3FNUZ.encode(-0.0), 0);
        assert_eq!(E4M3FNUZ.encode(-1e-9), 0);
        assert_eq!(E4M3FNUZ.encode(f32::NEG_INFINITY), 0xff);
        assert_eq!(E4M3FNUZ.encode(-f32::NAN), 0x80);
        // Plain rounding: 240 is 1.111b * 2^7, the next step 256; 248 is the tie, to even
        // (256), which overflows to NaN; 247 rounds to 240; a negative value rounding to
        // zero is +0.
        assert!(E4M3FNUZ.round_ieee(248.0).is_nan());
        assert_eq!(E4M3FNUZ.round_ieee(247.0), 240.0);
        assert!(E4M3FNUZ.round_ieee(-1e-9).is_sign_positive());
        assert!(E5M2FNUZ.round_ieee(f64::NEG_INFINITY).is_nan());
        // E2M1: codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6.
        let values: Vec<f64> = (0..8).map(|c| E2M1.decode(c)).collect();
        assert_eq!(values, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(E2M1.decode(0xf), -6.0);
        // Ties to even: 5 between 4 (fraction 0) and 6 -> 4; 0.75 between 0.5 (fraction
        // 1) and 1 -> 1; 0.25 between 0 and 0.5 -> 0.
        assert_eq!(E2M1.encode(5.0), 6);
        assert_eq!(E2M1.encode(0.75), 2);
        assert_eq!(E2M1.encode(0.25), 0);
        assert_eq!(E2M1.encode(-100.0), 0xf);
        // No infinity: plain rounding saturates too. No NaN: the zero of the other sign.
        assert_eq!(E2M1.round_ieee(f64::INFINITY), 6.0);
        assert_eq!(E2M1.round_ieee(7.0), 6.0);
        assert!(E2M1.round_ieee(f64::NAN).is_sign_negative());
        assert_eq!(E2M1.encode(f32::NAN), 0x8);
        assert_eq!(E2M1.encode(-f32::NAN), 0x0);
    }
}
