//! The integer family: two's-complement or unsigned element codes of 4 to 16 bits, products
//! summed modulo 2^acc_bits in a signed accumulator, and the vector unit's integer lane
//! (README, "Numeric rules of the integer path"):
//!
//! * `x = acc + bias` exactly (the bias fits the accumulator type);
//! * `q = saturate(floor((x * multiplier + 2^(shift-1)) / 2^shift) + zero_point)`, rounding
//!   half up (toward +infinity), with an unsigned 16-bit multiplier and a shift of 0..=63;
//!   leaky ReLU replaces the multiplier by `leaky_multiplier` when `x < 0`;
//! * `raw` (an accumulator-type output, written in slices): `q` = bits `shift ..
//!   shift + out_bits` of `x * multiplier` saturated to the accumulator type;
//! * `add` ([`Combine`]): `t = w (q - zero_point) + w_b (b - z_b)` or the product `t = w (q -
//!   zero_point)(b - z_b)` with the operand `b`, `q = saturate(round(t / 2^s) + z_y)`
//!   (`saturate(q + b)` for the plain residual add); ReLU: `q = max(q, z)` with `z` the
//!   output zero point (`z_y` with add, else zero_point); ReLU6: then `q = min(q,
//!   clamp_max)`; max-pool: `q = max(q, operand)`.

use super::{Datapath, Format, Leaves, PostOps, Row};
use serde::Serialize;
use std::fmt;

/// A fixed-point integer element type (`int8`, `uint4`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct IntType {
    pub signed: bool,
    pub bits: u32,
}

impl IntType {
    pub const fn new(signed: bool, bits: u32) -> Self {
        IntType { signed, bits }
    }
    pub fn min(&self) -> i64 {
        if self.signed {
            -(1i64 << (self.bits - 1))
        } else {
            0
        }
    }
    pub fn max(&self) -> i64 {
        if self.signed {
            (1i64 << (self.bits - 1)) - 1
        } else {
            (1i64 << self.bits) - 1
        }
    }
    /// True when `v` is a value of the type.
    pub fn holds(&self, v: i64) -> bool {
        (self.min()..=self.max()).contains(&v)
    }
    /// `v` clamped to the range of the type.
    pub fn saturate(&self, v: i128) -> i64 {
        v.clamp(i128::from(self.min()), i128::from(self.max())) as i64
    }
    /// `v` modulo 2^bits, read back as a value of the type (two's complement when signed).
    pub fn wrap(&self, v: i128) -> i64 {
        let m = v.rem_euclid(1i128 << self.bits);
        if self.signed && m >= 1i128 << (self.bits - 1) {
            (m - (1i128 << self.bits)) as i64
        } else {
            m as i64
        }
    }
}

impl fmt::Display for IntType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}int{}", if self.signed { "" } else { "u" }, self.bits)
    }
}

/// The accumulator of every FP32 datapath as the scratchpads hold it: the bit pattern,
/// read as a signed 32-bit integer.
pub const FP32_BITS: IntType = IntType::new(true, 32);

/// Requantization as the vector unit does it (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requant {
    pub multiplier: u64,
    pub shift: u32,
    pub zero_point: i64,
    /// Round exact ties to even (ONNX's rounding) instead of up.
    pub half_even: bool,
}

impl Requant {
    pub const IDENTITY: Requant = Requant {
        multiplier: 1,
        shift: 0,
        zero_point: 0,
        half_even: false,
    };
}

/// The slope of leaky ReLU on negative values, a quantized fraction in [0, 1):
/// multiplier / 2^shift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slope {
    pub multiplier: u64,
    pub shift: u32,
}

/// Leaky ReLU folds its slope into requantization: a negative value (after the bias) is
/// requantized with this multiplier instead of `multiplier`:
/// floor((multiplier * slope.multiplier + 2^(slope.shift-1)) / 2^slope.shift), rounding half
/// up (no rounding for slope.shift = 0). The effective slope is the ratio of the two.
pub fn leaky_multiplier(multiplier: u64, slope: Slope) -> u64 {
    let p = u128::from(multiplier) * u128::from(slope.multiplier);
    let m = if slope.shift == 0 {
        p
    } else {
        (p + (1u128 << (slope.shift - 1))) >> slope.shift
    };
    u64::try_from(m).expect("a slope below 1 keeps the multiplier's width")
}

/// q = saturate(floor((x * multiplier + 2^(shift-1)) / 2^shift) + zero_point): rounding
/// half up; with `half_even`, an exact tie (x * multiplier an odd multiple of 2^(shift-1))
/// rounds to the even neighbour instead (one less when the half-up result is odd).
pub fn requantize(x: i128, r: Requant, out: IntType) -> i64 {
    let p = x * i128::from(r.multiplier);
    out.saturate(round_shift(p, r.shift, r.half_even) + i128::from(r.zero_point))
}

/// floor((p + 2^(shift-1)) / 2^shift): p / 2^shift rounded half up, or with `half_even` an
/// exact tie to the even neighbour (one less when the half-up result is odd); p for shift 0.
pub fn round_shift(p: i128, shift: u32, half_even: bool) -> i128 {
    if shift == 0 {
        return p;
    }
    let up = (p + (1i128 << (shift - 1))).div_euclid(1i128 << shift);
    let tie = p.rem_euclid(1i128 << shift) == 1i128 << (shift - 1);
    if half_even && tie && up.rem_euclid(2) == 1 {
        up - 1
    } else {
        up
    }
}

/// The vector lane's combination of its requantized value `q` (zero point `zq`, the
/// requantization's) with the operand `b` (the instruction's `add`): `t = weight (q - zq) +
/// operand_weight (b - operand_zero)`, or with `product` `t = weight (q - zq)(b -
/// operand_zero)`; the lane writes `saturate(round(t / 2^shift) + output_zero)`, rounding
/// like the requantization. ReLU then clamps at `output_zero`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Combine {
    pub product: bool,
    pub weight: i64,
    pub operand_weight: i64,
    pub shift: u32,
    pub operand_zero: i64,
    pub output_zero: i64,
}

impl Combine {
    /// The plain residual add, `saturate(q + b)` with ReLU at `zq`: weights 1, no shift,
    /// operand zero point 0, output zero point `zq` (so that `(q - zq) + b + zq = q + b`).
    pub fn sum(zq: i64) -> Combine {
        Combine {
            product: false,
            weight: 1,
            operand_weight: 1,
            shift: 0,
            operand_zero: 0,
            output_zero: zq,
        }
    }

    /// The combined value (see the type), saturated to `out`.
    pub fn apply(&self, q: i64, zq: i64, b: i64, half_even: bool, out: IntType) -> i64 {
        let (dq, db) = (
            i128::from(q) - i128::from(zq),
            i128::from(b) - i128::from(self.operand_zero),
        );
        let t = if self.product {
            i128::from(self.weight) * dq * db
        } else {
            i128::from(self.weight) * dq + i128::from(self.operand_weight) * db
        };
        out.saturate(round_shift(t, self.shift, half_even) + i128::from(self.output_zero))
    }
}

/// One slice of an accumulator-type output (the vector instruction's `raw`): `x` saturated
/// to `acc`, shifted right by `shift` (floor), its low `out.bits` bits read as an `out`
/// element. Slices at shifts 0, b, 2b, ... (b = out.bits) hold the saturated value's bits,
/// low first (`join_slices`).
pub fn raw_slice(x: i128, shift: u32, acc: IntType, out: IntType) -> i64 {
    out.wrap(i128::from(acc.saturate(x)) >> shift)
}

/// The shift of slice `k` of an accumulator-type value written as `out` elements: the
/// slices sit side by side, low bits first.
pub fn slice_shift(k: usize, out: IntType) -> u32 {
    k as u32 * out.bits
}

/// The accumulator-type value whose slices (`raw_slice` at shifts 0, b, 2b, ...) are
/// `slices`: their bit patterns side by side, low first, read as an `acc` value.
pub fn join_slices(slices: &[i64], out: IntType, acc: IntType) -> i64 {
    let bits: i128 = slices
        .iter()
        .enumerate()
        .map(|(k, s)| i128::from(*s).rem_euclid(1i128 << out.bits) << slice_shift(k, out))
        .sum();
    acc.wrap(bits)
}

/// ReLU in the quantized domain (the maximum with the zero point), then the ReLU6 clamp.
pub fn activate(q: i64, zero_point: i64, clamp: Option<i64>, out: IntType) -> i64 {
    let q = q.max(out.saturate(i128::from(zero_point)));
    match clamp {
        Some(hi) => q.min(out.saturate(i128::from(hi))),
        None => q,
    }
}

/// One lane of the vector unit on one accumulator value (see the module docs): bias,
/// requantization (with the leaky-ReLU multiplier for a negative value when the
/// instruction has one; with `raw`, the slice `raw_slice` instead), add, ReLU, the ReLU6 clamp, then max-pool (each as the
/// instruction says; the clamp applies whether or not ReLU does).
pub fn lane(acc: i64, bias: Option<i64>, ops: &PostOps, operand: i64, out: IntType) -> i64 {
    let x = i128::from(acc) + i128::from(bias.unwrap_or(0));
    let requant = match ops.negative_multiplier {
        Some(multiplier) if x < 0 => Requant {
            multiplier,
            ..ops.requant
        },
        _ => ops.requant,
    };
    let mut q = match ops.raw {
        Some(acc) => raw_slice(x * i128::from(requant.multiplier), requant.shift, acc, out),
        None => requantize(x, requant, out),
    };
    let mut zero = ops.requant.zero_point;
    if let Some(c) = ops.add {
        q = c.apply(q, zero, operand, ops.requant.half_even, out);
        zero = c.output_zero;
    }
    if ops.relu {
        q = q.max(out.saturate(i128::from(zero)));
    }
    if let Some(hi) = ops.clamp {
        q = q.min(out.saturate(i128::from(hi)));
    }
    if ops.pool {
        q = q.max(operand);
    }
    q
}

/// The integer precision: element types of the activations read and written, of the
/// weights, and the accumulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct IntPrecision {
    pub input: IntType,
    pub weight: IntType,
    pub accumulator: IntType,
    pub output: IntType,
}

impl Datapath for IntPrecision {
    fn name(&self) -> String {
        if self.input == self.weight && self.input == self.output {
            self.input.to_string()
        } else {
            format!("{} x {} -> {}", self.input, self.weight, self.output)
        }
    }
    fn input(&self) -> Format {
        Format::Int(self.input)
    }
    fn weight(&self) -> Format {
        Format::Int(self.weight)
    }
    fn output(&self) -> Format {
        Format::Int(self.output)
    }
    fn acc_type(&self) -> IntType {
        self.accumulator
    }
    fn psum_bits(&self, _rows: u32) -> u32 {
        self.accumulator.bits
    }
    /// The fewest bits whose two's complement holds every sum of `rows` products of an
    /// input and a weight code (|sum| <= rows * max|a| * max|w|), or the accumulator's if
    /// that is narrower (the sum then wraps as the accumulator does).
    fn column_bits(&self, rows: u32) -> u32 {
        let largest = |t: IntType| t.max().max(-t.min()) as u128;
        let bound = u128::from(rows) * largest(self.input) * largest(self.weight);
        // Bits of the magnitude, and the sign.
        let exact = (u128::BITS - bound.leading_zeros()) + 1;
        exact.min(self.accumulator.bits)
    }
    /// The products summed modulo 2^acc_bits (the order does not matter).
    fn column(&self, a: &[i64], w: &[i64], _scales: (u8, u8)) -> i64 {
        let dot: i128 = a
            .iter()
            .zip(w)
            .map(|(x, y)| i128::from(*x) * i128::from(*y))
            .sum();
        self.accumulator.wrap(dot)
    }
    fn accumulate(&self, acc: i64, v: i64) -> i64 {
        self.accumulator.wrap(i128::from(acc) + i128::from(v))
    }
    /// The integer lanes. Written as MX elements (`out` an MX format of a multi-precision
    /// design), the row is tagged with the fixed scale: element q then stands for
    /// q * 2^(fixed_scale - 127 - frac), exactly.
    fn post(&self, acc: &[i64], ops: &PostOps, out: Format) -> Row {
        let elem = match out {
            Format::Int(t) => t,
            Format::Mx(f) => f.elem.code_type(),
            other => unreachable!("{} rows cannot become {}", self.name(), other.name()),
        };
        let codes = acc
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let bias = ops.bias.map(|b| b[i]);
                let operand = ops.operand.map_or(0, |o| o[i]);
                match ops.per_lane {
                    Some(p) => {
                        let (multiplier, shift) = p[i];
                        let requant = Requant {
                            multiplier,
                            shift,
                            ..ops.requant
                        };
                        lane(*a, bias, &PostOps { requant, ..*ops }, operand, elem)
                    }
                    None => lane(*a, bias, ops, operand, elem),
                }
            })
            .collect::<Vec<_>>();
        let scales = match out {
            Format::Mx(f) => vec![ops.fixed_scale; acc.len().div_ceil(f.block_size as usize)],
            _ => Vec::new(),
        };
        Row { codes, scales }
    }
    fn zero_points(&self) -> bool {
        true
    }
    fn leaves(&self) -> Leaves {
        Leaves {
            mac: super::MAC_INT,
            acc: "hwgen_acc_int",
            post: "hwgen_post_int",
            decode: None,
            encode: None,
            row_in: super::ROW_INT.0,
            row_out: super::ROW_INT.1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-channel requantization by hand: 10 x 3 / 2 = 15 (30 + 1 = 31, floor(31 / 2)),
    /// 10 x 5 / 4 = 12.5 -> 13 (half up); the instruction's own multiplier is unused, its
    /// zero point is added to both.
    #[test]
    fn per_lane_requantization() {
        let p = IntPrecision {
            input: I8,
            weight: I8,
            accumulator: IntType::new(true, 32),
            output: I8,
        };
        let lanes = [(3, 1), (5, 2)];
        let ops = PostOps {
            requant: Requant {
                multiplier: 1000,
                shift: 0,
                zero_point: 2,
                half_even: false,
            },
            per_lane: Some(&lanes),
            ..PostOps::default()
        };
        assert_eq!(p.post(&[10, 10], &ops, Format::Int(I8)).codes, vec![17, 15]);
    }

    const I8: IntType = IntType::new(true, 8);
    const U8: IntType = IntType::new(false, 8);

    fn r(multiplier: u64, shift: u32, zero_point: i64) -> Requant {
        Requant {
            multiplier,
            shift,
            zero_point,
            half_even: false,
        }
    }

    /// Slices by hand: 0x12345678 = 305419896 is bytes 0x78 0x56 0x34 0x12 = 120 86 52 18;
    /// -1 is four bytes 0xff (-1 as int8, 255 as uint8); 2^31 + 5 saturates to 0x7fffffff
    /// (bytes -1 -1 -1 127), -2^31 - 7 to 0x80000000 (0 0 0 -128); int16 slices of
    /// 0x12345678 are 0x5678 = 22136 and 0x1234 = 4660.
    #[test]
    fn raw_slices_are_the_saturated_accumulators_bits() {
        let acc = IntType::new(true, 32);
        let u8t = IntType::new(false, 8);
        let i16t = IntType::new(true, 16);
        let slices = |x: i128, out: IntType| -> Vec<i64> {
            (0..32 / out.bits)
                .map(|k| raw_slice(x, k * out.bits, acc, out))
                .collect()
        };
        for (x, want) in [
            (305_419_896i128, vec![120, 86, 52, 18]),
            (-1, vec![-1, -1, -1, -1]),
            ((1 << 31) + 5, vec![-1, -1, -1, 127]),
            (-(1 << 31) - 7, vec![0, 0, 0, -128]),
        ] {
            assert_eq!(slices(x, I8), want, "{x} as int8 slices");
            let joined = acc.saturate(x);
            assert_eq!(join_slices(&want, I8, acc), joined, "{x} joined");
            let u = slices(x, u8t);
            assert_eq!(join_slices(&u, u8t, acc), joined, "{x} uint8 joined");
        }
        assert_eq!(slices(-1, u8t), vec![255; 4]);
        assert_eq!(slices(305_419_896, i16t), vec![22136, 4660]);
        // Through the lane: bias added first, multiplier applied before the slice.
        let p = PostOps {
            raw: Some(acc),
            requant: r(1, 8, 99),
            ..PostOps::default()
        };
        assert_eq!(lane(305_419_800, Some(96), &p, 0, I8), 86);
    }

    /// Ties by hand: 5/2 = 2.5 -> 3 up, 2 even; -5/2 = -2.5 -> -2 both (-2 is even); 7/2 =
    /// 3.5 -> 4 both; -7/2 = -3.5 -> -3 up, -4 even; 6/4 = 1.5 -> 2 both; 10/4 = 2.5 -> 3
    /// up, 2 even; 3 * 7 / 8 = 2.625 is no tie: 3 both; a shift of 0 never rounds.
    #[test]
    fn requantize_rounds_ties_to_even_when_asked() {
        let even = |m, s| Requant {
            half_even: true,
            ..r(m, s, 0)
        };
        for (x, m, s, up, ev) in [
            (5, 1, 1, 3, 2),
            (-5, 1, 1, -2, -2),
            (7, 1, 1, 4, 4),
            (-7, 1, 1, -3, -4),
            (6, 1, 2, 2, 2),
            (10, 1, 2, 3, 2),
            (7, 3, 3, 3, 3),
            (9, 1, 0, 9, 9),
        ] {
            assert_eq!(requantize(x, r(m, s, 0), I8), up, "{x} * {m} / 2^{s} up");
            assert_eq!(requantize(x, even(m, s), I8), ev, "{x} * {m} / 2^{s} even");
        }
    }

    #[test]
    fn requantize_rounds_half_up_and_saturates() {
        assert_eq!(requantize(5, r(1, 1, 0), I8), 3); // 2.5 -> 3
        assert_eq!(requantize(-5, r(1, 1, 0), I8), -2); // -2.5 -> -2
        assert_eq!(requantize(-7, r(1, 2, 0), I8), -2); // -1.75 -> -2
        assert_eq!(requantize(7, r(1, 2, 0), I8), 2); // 1.75 -> 2
        assert_eq!(requantize(1024, r(3, 4, -70), I8), 122); // 3072/16 - 70
        assert_eq!(requantize(100_000, r(1, 0, 0), I8), 127);
        assert_eq!(requantize(-(1 << 20), r(1, 0, 0), I8), -128);
        assert_eq!(requantize(-3, r(1, 0, 0), U8), 0);
        assert_eq!(requantize(300, r(1, 0, 0), U8), 255);
        // Shifts past the accumulator width: -1 / 2^52 rounds to 0 (half up), 2^62 / 2^63
        // is exactly one half and rounds up to 1.
        assert_eq!(requantize(-1, r(1, 52, 0), I8), 0);
        assert_eq!(requantize(-(1i128 << 31), r(65535, 63, 0), I8), 0);
        assert_eq!(requantize(1i128 << 62, r(1, 63, 0), I8), 1);
    }

    #[test]
    fn wrap_and_saturate() {
        assert_eq!(IntType::new(true, 32).wrap(1i128 << 31), -(1i64 << 31));
        assert_eq!(IntType::new(false, 4).wrap(-1), 15);
        assert_eq!(IntType::new(true, 4).wrap(8), -8);
        assert_eq!(I8.saturate(1000), 127);
        assert!(U8.holds(255) && !U8.holds(-1));
    }

    #[test]
    fn lane_adds_then_activates_then_pools() {
        let ops = |add: bool, relu, pool, zp| PostOps {
            requant: r(1, 0, zp),
            relu,
            clamp: None,
            add: add.then(|| Combine::sum(zp)),
            pool,
            ..PostOps::default()
        };
        // (1000 + 24) * 3 >> 4 = 192, - 70 = 122.
        let p = PostOps {
            requant: r(3, 4, -70),
            ..PostOps::default()
        };
        assert_eq!(lane(1000, Some(24), &p, 0, I8), 122);
        // q = 100; add 50 saturates at 127.
        assert_eq!(lane(100, None, &ops(true, false, false, 0), 50, I8), 127);
        // q = -10 + 5 = -5; ReLU clamps to the zero point 5.
        assert_eq!(lane(-10, None, &ops(false, true, false, 5), 0, I8), 5);
        // Pool keeps the larger of q = 7 and the operand.
        assert_eq!(lane(7, None, &ops(false, false, true, 0), 9, I8), 9);
        assert_eq!(lane(7, None, &ops(false, false, true, 0), -9, I8), 7);
        // ReLU6 at 64.
        let six = PostOps {
            relu: true,
            clamp: Some(64),
            ..PostOps::default()
        };
        assert_eq!(lane(200, None, &six, 0, I8), 64);
    }

    /// The weighted sum and the product by hand. q = requantize(40) = 40 + 3 = 43 (zero
    /// point 3), operand b = 10 with zero point -6:
    /// sum: t = 5 (43 - 3) - 7 (10 + 6) = 200 - 112 = 88, 88 / 2^4 = 5.5 -> 6 (half up,
    /// and 6 is the even neighbour), + 20 = 26; t / 2^5 = 2.75 -> 3, + 20 = 23;
    /// product: t = 3 (40)(16) = 1920, / 2^8 = 7.5 -> 8 either way, + 20 = 28;
    /// saturation: weight 100 -> t = 4000 - 112, / 2^0 + 20 saturates at 127; ReLU clamps at
    /// the output zero point 20, not at 3.
    #[test]
    fn lane_combines_with_weights_zero_points_and_rounding() {
        let c = |product, weight, operand_weight, shift| Combine {
            product,
            weight,
            operand_weight,
            shift,
            operand_zero: -6,
            output_zero: 20,
        };
        let ops = |add, half_even, relu| PostOps {
            requant: Requant {
                half_even,
                ..r(1, 0, 3)
            },
            add: Some(add),
            relu,
            ..PostOps::default()
        };
        assert_eq!(
            lane(40, None, &ops(c(false, 5, -7, 4), false, false), 10, I8),
            26
        );
        assert_eq!(
            lane(40, None, &ops(c(false, 5, -7, 4), true, false), 10, I8),
            26
        );
        assert_eq!(
            lane(40, None, &ops(c(false, 5, -7, 5), false, false), 10, I8),
            23
        );
        assert_eq!(
            lane(40, None, &ops(c(true, 3, 0, 8), false, false), 10, I8),
            28
        );
        assert_eq!(
            lane(40, None, &ops(c(true, 3, 0, 8), true, false), 10, I8),
            28
        );
        // (q - 3)(b + 6) = 40 x 16 = 640; weight 13: 8320 / 2^8 = 32.5 -> 33 up, 32 even.
        assert_eq!(
            lane(40, None, &ops(c(true, 13, 0, 8), false, false), 10, I8),
            53
        );
        assert_eq!(
            lane(40, None, &ops(c(true, 13, 0, 8), true, false), 10, I8),
            52
        );
        assert_eq!(
            lane(40, None, &ops(c(false, 100, -7, 0), false, false), 10, I8),
            127
        );
        // t = 1 (43 - 3) - 7 (10 + 6) = -72 -> -72 + 20 = -52, ReLU at 20.
        assert_eq!(
            lane(40, None, &ops(c(false, 1, -7, 0), false, true), 10, I8),
            20
        );
        assert_eq!(
            lane(40, None, &ops(c(false, 1, -7, 0), false, false), 10, I8),
            -52
        );
        // The plain sum: q + b saturates; ReLU at the requantization's zero point.
        assert_eq!(
            lane(40, None, &ops(Combine::sum(3), false, false), 100, I8),
            127
        );
        assert_eq!(
            lane(-90, None, &ops(Combine::sum(3), false, true), 10, I8),
            3
        );
    }

    #[test]
    fn leaky_relu_requantizes_negative_values_with_the_slope_folded_in() {
        let slope = Slope {
            multiplier: 13,
            shift: 6,
        };
        // 250 * 13 / 64 = 50.78 rounds to 51; 64 * 13 / 64 = 13 exactly; 5 * 13 / 64 =
        // 1.016 -> 1; 2 * 13 / 64 = 0.406 -> 0; half-way 32 * 1 / 64 = 0.5 -> 1.
        assert_eq!(leaky_multiplier(250, slope), 51);
        assert_eq!(leaky_multiplier(64, slope), 13);
        assert_eq!(leaky_multiplier(5, slope), 1);
        assert_eq!(leaky_multiplier(2, slope), 0);
        let half = Slope {
            multiplier: 1,
            shift: 6,
        };
        assert_eq!(leaky_multiplier(32, half), 1);
        let ops = PostOps {
            requant: r(250, 15, -3),
            negative_multiplier: Some(51),
            ..PostOps::default()
        };
        // x = 1000: 250000 / 32768 = 7.63 -> 8, - 3 = 5 (the positive side is unchanged).
        assert_eq!(lane(1000, None, &ops, 0, I8), 5);
        // x = -1000: -51000 / 32768 = -1.556 -> -2, - 3 = -5 (not -8 - 3 = -11).
        assert_eq!(lane(-1000, None, &ops, 0, I8), -5);
        // The sign is taken after the bias: -1000 + 1200 = 200 is positive:
        // 50000 / 32768 = 1.53 -> 2, - 3 = -1.
        assert_eq!(lane(-1000, Some(1200), &ops, 0, I8), -1);
        // And a zero value is not negative: 0 -> -3 either way.
        assert_eq!(lane(0, None, &ops, 0, I8), -3);
    }
}
