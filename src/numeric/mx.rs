//! The MX family: OCP Microscaling (MX v1.0) integer blocks, MXINT8 and MXINT4 with an E8M0
//! shared scale, and their datapath.
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
//! * The datapath: the array forms the exact integer sum of a block pair's products; at the
//!   column output it is dequantized to FP32 with the product of the two scales
//!   (`dequant`), and block values are accumulated in FP32 in block order, the first
//!   initialising the sum. The vector unit applies ReLU and quantizes each row of FP32
//!   outputs to one block (`quantize_fp32_row`), or, at a boundary to an integer layer,
//!   rounds each value to an integer at a fixed scale (`to_fixed`).
//! * Rows: an activation row is one block of elements followed by its scale (one more
//!   beat in memory); a weight tile is its element rows followed by the rows of column
//!   scales (`pack_scale_rows`).

use super::int::{IntType, FP32_BITS};
use super::{fp32, Datapath, Format, Leaves, PostOps, Row};
use serde::Serialize;

/// Width of an E8M0 scale.
pub const SCALE_BITS: u32 = 8;

/// An MX integer element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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
    /// How an element code is stored: a two's-complement integer of `bits`.
    pub fn code_type(&self) -> IntType {
        IntType::new(true, self.bits)
    }
}

/// An MX block format: elements of `elem`, one E8M0 scale per block of `block_size`
/// elements along the reduction dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct MxFormat {
    pub elem: MxInt,
    pub block_size: u32,
}

impl MxFormat {
    /// Width of the exact integer partial sum of one block pair.
    pub fn psum_bits(&self) -> u32 {
        self.elem.psum_bits(self.block_size)
    }
    /// Weight rows that hold the column scales of a weight tile (8 bits per column).
    pub fn scale_rows(&self) -> u32 {
        SCALE_BITS / self.elem.bits
    }
    /// The column scales of a weight tile as `scale_rows()` weight rows of `scales.len()`
    /// elements: scale c is byte c, little-endian across the rows (an MXINT4 row holds two
    /// elements per scale, low nibble first). Element values are two's complement.
    pub fn pack_scale_rows(&self, scales: &[u8]) -> Vec<Vec<i64>> {
        let (w, cols) = (self.elem.bits as usize, scales.len());
        let t = self.elem.code_type();
        (0..self.scale_rows() as usize)
            .map(|r| {
                (0..cols)
                    .map(|e| {
                        let bit = (r * cols + e) * w;
                        let v = (scales[bit / 8] >> (bit % 8)) & ((1u16 << w) - 1) as u8;
                        t.wrap(i128::from(v))
                    })
                    .collect()
            })
            .collect()
    }
    /// The inverse of `pack_scale_rows`: `rows` are the scale rows, in order.
    pub fn unpack_scale_rows(&self, rows: &[&[i64]]) -> Vec<u8> {
        let w = self.elem.bits as usize;
        let per = SCALE_BITS as usize / w;
        let cols = rows[0].len();
        (0..cols)
            .map(|c| {
                (0..per).fold(0u8, |b, k| {
                    let e = c * per + k;
                    let v = (rows[e / cols][e % cols] as u8) & ((1u16 << w) - 1) as u8;
                    b | v << (k * w)
                })
            })
            .collect()
    }
}

impl MxFormat {
    /// An MX output row's FP32 values before the quantization: each lane's sum plus one
    /// addend (one rounding): with `add` the operand element's value (`element_fp32`, the
    /// operand row's block scale in its slot after the elements), else the bias (an FP32
    /// word). The vector unit has one adder a lane: an instruction takes a bias or an
    /// operand, not both (the interpreter refuses both).
    fn bias_and_add(&self, bits: &[u32], ops: &PostOps) -> Vec<u32> {
        let opnd_scale = ops
            .operand
            .and_then(|o| o.get(bits.len()))
            .map_or(0, |s| *s as u8);
        bits.iter()
            .enumerate()
            .map(|(i, &v)| match (ops.add, ops.operand, ops.bias) {
                (Some(_), Some(o), _) => fp32::add(v, element_fp32(o[i], opnd_scale, self.elem)),
                (_, _, Some(b)) => fp32::add(v, b[i] as u32),
                _ => v,
            })
            .collect()
    }
}

/// FP32 `p` times an MX block's scale `scale` for elements of `t`: p * 2^(scale - 127 -
/// frac), exactly (`spline::ldexp`: below FP32's normal range a zero of p's sign, above it
/// infinity); the NaN scale gives NaN. (`hwgen_mx_scale`.)
pub fn scale_fp32(p: u32, scale: u8, t: MxInt) -> u32 {
    match scale {
        E8M0_NAN => fp32::CANONICAL_NAN,
        s => super::spline::ldexp(p, i32::from(s) - 127 - t.frac as i32),
    }
}

/// The value of an MX element `code` in a block of scale `scale` as FP32: the code (exact
/// in FP32) times the block's scale (`scale_fp32`).
pub fn element_fp32(code: i64, scale: u8, t: MxInt) -> u32 {
    scale_fp32(fp32::from_int(code), scale, t)
}

impl Datapath for MxFormat {
    fn name(&self) -> String {
        self.elem.name.to_string()
    }
    fn input(&self) -> Format {
        Format::Mx(*self)
    }
    fn weight(&self) -> Format {
        Format::Mx(*self)
    }
    fn output(&self) -> Format {
        Format::Mx(*self)
    }
    fn acc_type(&self) -> IntType {
        FP32_BITS
    }
    fn psum_bits(&self, _rows: u32) -> u32 {
        MxFormat::psum_bits(self)
    }
    /// The exact block sum, dequantized with the input block's and the weight column's
    /// scales.
    fn column(&self, a: &[i64], w: &[i64], (sa, sb): (u8, u8)) -> i64 {
        let psum: i64 = a.iter().zip(w).map(|(x, y)| x * y).sum();
        i64::from(dequant(psum, sa, sb, self.elem) as i32)
    }
    fn accumulate(&self, acc: i64, v: i64) -> i64 {
        fp32::accumulate(acc, v)
    }
    /// MX blocks of `block_size` outputs; or, at a boundary to an integer layer, integers
    /// at the fixed scale.
    fn post(&self, acc: &[i64], ops: &PostOps, out: Format) -> Row {
        let bits: Vec<u32> = acc.iter().map(|v| *v as u32).collect();
        match out {
            Format::Mx(f) => {
                let bits = self.bias_and_add(&bits, ops);
                let mut row = Row::default();
                for block in bits.chunks(f.block_size as usize) {
                    let (scale, q) = quantize_fp32_row(block, ops.relu, f.elem);
                    row.scales.push(scale);
                    row.codes.extend(q.iter().map(|v| i64::from(*v)));
                }
                row
            }
            Format::Int(t) => Row {
                codes: bits
                    .iter()
                    .map(|b| to_fixed(*b, ops.fixed_scale, self.elem.frac, t, ops.relu))
                    .collect(),
                scales: Vec::new(),
            },
            other => unreachable!("{} rows cannot become {}", self.elem.name, other.name()),
        }
    }
    fn weight_scale_rows(&self) -> u32 {
        self.scale_rows()
    }
    fn pack_weight_scales(&self, scales: &[u8]) -> Vec<Vec<i64>> {
        self.pack_scale_rows(scales)
    }
    fn unpack_weight_scales(&self, rows: &[&[i64]], _columns: usize) -> Vec<u8> {
        self.unpack_scale_rows(rows)
    }
    fn leaves(&self) -> Leaves {
        Leaves {
            mac: super::MAC_INT,
            acc: "hwgen_acc_mx",
            post: "hwgen_post_mx",
            decode: None,
            encode: None,
            row_in: super::ROW_INT.0,
            row_out: super::ROW_INT.1,
        }
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

/// How a conversion to E8M0 rounds a value that is not a power of two (ONNX Cast's
/// `round_mode`): to the power above, the power below, or the nearer one, measured
/// linearly (1.5 * 2^e and above go up).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum E8m0Round {
    Up,
    Down,
    Nearest,
}

/// The E8M0 code of `x` (the host's conversion, ONNX's Cast to float8e8m0): |x| rounded to
/// a power of two 2^r by `round`; r in -127..=127 is code r + 127. NaN is 0xFF. Beyond the
/// range (zero, and infinity, included) saturates to code 0 or 0xFE, or without `saturate`
/// is NaN. A negative `x` converts as |x| (ONNX leaves it unspecified; its reference does
/// this).
pub fn e8m0_code(x: f64, round: E8m0Round, saturate: bool) -> u8 {
    let a = x.abs();
    let r = if x.is_nan() {
        return E8M0_NAN;
    } else if a == 0.0 {
        i32::MIN
    } else if a.is_infinite() {
        i32::MAX
    } else {
        let e = super::minifloat::exponent_of(a);
        let above = a > 2f64.powi(e);
        match round {
            E8m0Round::Up if above => e + 1,
            E8m0Round::Nearest if a >= 1.5 * 2f64.powi(e) => e + 1,
            _ => e,
        }
    };
    match (r, saturate) {
        (-127..=127, _) => (r + 127) as u8,
        (_, false) => E8M0_NAN,
        (..-127, true) => 0,
        (_, true) => E8M0_NAN - 1,
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
/// subnormals read as zero (the FP32 contract), ReLU when `relu` (`fp32::relu`), then
/// `quantize_block`.
pub fn quantize_fp32_row(acc: &[u32], relu: bool, t: MxInt) -> (u8, Vec<i32>) {
    let x: Vec<f32> = acc
        .iter()
        .map(|&b| {
            let b = fp32::flush(b);
            f32::from_bits(if relu { fp32::relu(b) } else { b })
        })
        .collect();
    quantize_block(&x, t)
}

/// Dequantize the integer partial sum of one block pair: psum * 2^(sa + sb - 254) / 2^(2
/// frac), rounded to FP32 under the contract. NaN when either scale is the NaN code.
pub fn dequant(psum: i64, scale_a: u8, scale_b: u8, t: MxInt) -> u32 {
    if scale_a == E8M0_NAN || scale_b == E8M0_NAN {
        return fp32::CANONICAL_NAN;
    }
    let exp = i32::from(scale_a) + i32::from(scale_b) - 254 - 2 * t.frac as i32;
    // |psum| < 2^53 and 2^exp >= 2^-266: the product is exact in f64, and the f64 -> f32
    // conversion rounds to nearest even.
    let exact = psum as f64 * 2f64.powi(exp);
    fp32::flush((exact as f32).to_bits())
}

/// An FP32 value (bit pattern) to a fixed-scale integer of type `t` (the boundary from an
/// MX layer to an integer layer): the result q stands for 2^(scale - 127) * q / 2^frac,
/// like an MX element with scale code `scale`, so q = x * 2^(127 + frac - scale) rounded to
/// nearest, ties to even, and saturated to `t`. The contract's flush first (a subnormal is
/// zero); NaN gives 0, an infinity the bound of its sign. With `relu`, a negative result
/// becomes 0.
pub fn to_fixed(bits: u32, scale: u8, frac: u32, t: IntType, relu: bool) -> i64 {
    let x = f32::from_bits(fp32::flush(bits));
    if x.is_nan() {
        return 0;
    }
    let q = if x.is_infinite() {
        if x > 0.0 {
            t.max()
        } else {
            t.min()
        }
    } else {
        // |x| < 2^128 and the factor is at most 2^(127 + frac): the product is exact in f64.
        let exp = 127 + frac as i32 - i32::from(scale);
        let y = (f64::from(x) * 2f64.powi(exp)).round_ties_even();
        y.clamp(t.min() as f64, t.max() as f64) as i64
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
pub fn dot(a: &[(u8, Vec<i32>)], b: &[(u8, Vec<i32>)], t: MxInt) -> u32 {
    assert_eq!(a.len(), b.len(), "blocks of both operands");
    let mut acc: Option<u32> = None;
    for ((sa, qa), (sb, qb)) in a.iter().zip(b) {
        assert_eq!(qa.len(), qb.len(), "block sizes");
        let psum: i64 = qa.iter().zip(qb).map(|(x, y)| i64::from(x * y)).sum();
        let term = dequant(psum, *sa, *sb, t);
        acc = Some(match acc {
            None => term,
            Some(s) => fp32::add(s, term),
        });
    }
    acc.expect("at least one block")
}

/// A code shifted right by `k` bits, rounded to nearest with ties to even: q / 2^k as
/// an integer. From `k` = bits on the result is 0 (|q| <= 2^(bits-1), so |q / 2^k| <=
/// 1/2, and the tie goes to 0). (`hwgen_transposer`'s re-blocking lanes.)
pub fn shift_rne(q: i64, k: u32, t: MxInt) -> i64 {
    if k == 0 {
        return q;
    }
    if k >= t.bits {
        return 0;
    }
    let floor = q >> k;
    let rem = q - (floor << k);
    let half = 1i64 << (k - 1);
    match rem.cmp(&half) {
        std::cmp::Ordering::Greater => floor + 1,
        std::cmp::Ordering::Equal => floor + (floor & 1),
        std::cmp::Ordering::Less => floor,
    }
}

/// floor(log2 |q|) of a non-zero code.
fn msb(q: i64) -> i32 {
    63 - q.unsigned_abs().leading_zeros() as i32
}

/// Re-block rows of MX codes, each with its own scale (activation rows, blocked along
/// their elements), into one block per column along the rows (a matmul's stationary
/// operand whose reduction runs over those rows), exactly as `quantize_block` quantizes
/// each column's values v_jd = q_jd * 2^(s_j - 127 - frac), computed on the codes: column
/// d's shared exponent is the largest floor(log2 |v_jd|) = s_j + floor(log2 |q_jd|) - 127 -
/// frac over its non-zero codes, so its scale code S_d = max (s_j + floor(log2 |q_jd|)) -
/// frac, clamped to 0..=254 (0 for a column of zeros); each code becomes q_jd * 2^(s_j -
/// S_d): shifted right by S_d - s_j (`shift_rne`), or left by s_j - S_d, which is exact and
/// stays in range. A NaN row scale makes every column NaN with zero codes. Returns (the
/// column scales, the rows).
pub fn reblock(rows: &[(u8, Vec<i64>)], t: MxInt) -> (Vec<u8>, Vec<Vec<i64>>) {
    let cols = rows.first().map_or(0, |r| r.1.len());
    let nan = rows.iter().any(|(s, _)| *s == E8M0_NAN);
    let scales: Vec<u8> = (0..cols)
        .map(|d| match nan {
            true => E8M0_NAN,
            false => rows
                .iter()
                .filter(|(_, q)| q[d] != 0)
                .map(|(s, q)| i32::from(*s) + msb(q[d]))
                .max()
                .map_or(0, |e| (e - t.frac as i32).clamp(0, 254) as u8),
        })
        .collect();
    let codes = rows
        .iter()
        .map(|(sj, q)| {
            q.iter()
                .zip(&scales)
                .map(|(&v, &sd)| {
                    let k = i32::from(sd) - i32::from(*sj);
                    // (A zero code in a column of zeros, of scale 0, would shift left by
                    // its row's scale: it stays 0.)
                    match (nan || v == 0, k >= 0) {
                        (true, _) => 0,
                        (false, true) => shift_rne(v, k as u32, t),
                        (false, false) => v << -k,
                    }
                })
                .collect()
        })
        .collect();
    (scales, codes)
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

    fn f(x: f32) -> u32 {
        x.to_bits()
    }

    #[test]
    fn dequant_by_hand() {
        // MXINT8: psum 64*64 = 4096 with both scales 2^0 is 1.0 * 1.0.
        assert_eq!(dequant(4096, 127, 127, MXINT8), f(1.0));
        // psum -3 with scales 2^3 and 2^-1: -3 * 2^2 / 2^12.
        assert_eq!(dequant(-3, 130, 126, MXINT8), f(-3.0 / 1024.0));
        // MXINT4: q/4 elements, psum 16 is 1.0.
        assert_eq!(dequant(16, 127, 127, MXINT4), f(1.0));
        // The smallest normal survives; half of it flushes; beyond the range is infinity.
        assert_eq!(dequant(4096, 1, 127, MXINT8), f(2f32.powi(-126)));
        assert_eq!(dequant(2048, 1, 127, MXINT8), 0);
        assert_eq!(dequant(-2048, 1, 127, MXINT8), 0x8000_0000);
        assert_eq!(dequant(4096, 254, 128, MXINT8), f(f32::INFINITY));
        assert_eq!(dequant(0, 200, 200, MXINT8), 0);
        assert_eq!(dequant(1, 0xff, 127, MXINT8), fp32::CANONICAL_NAN);
    }

    #[test]
    fn to_fixed_by_hand() {
        let i8 = IntType::new(true, 8);
        let i4 = IntType::new(true, 4);
        // Scale code 127 + 6 - 6 = 127 with frac 6: q = x * 64.
        assert_eq!(to_fixed(f(1.0), 127, 6, i8, false), 64);
        assert_eq!(to_fixed(f(-0.5), 127, 6, i8, false), -32);
        // Code 133: q = x (an int8 tensor with exponent 0). Ties go to even.
        assert_eq!(to_fixed(f(2.5), 133, 6, i8, false), 2);
        assert_eq!(to_fixed(f(3.5), 133, 6, i8, false), 4);
        assert_eq!(to_fixed(f(-2.5), 133, 6, i8, false), -2);
        assert_eq!(to_fixed(f(2.5000002), 133, 6, i8, false), 3);
        // Code 135: q = x / 4. 0.5 * 4 = 2.0 -> 0.5 ties to 0; 6.0 -> 1.5 ties to 2.
        assert_eq!(to_fixed(f(2.0), 135, 6, i8, false), 0);
        assert_eq!(to_fixed(f(6.0), 135, 6, i8, false), 2);
        // Saturation, infinities, NaN, subnormals, ReLU.
        assert_eq!(to_fixed(f(1000.0), 133, 6, i8, false), 127);
        assert_eq!(to_fixed(f(-1000.0), 133, 6, i8, false), -128);
        assert_eq!(to_fixed(f(f32::NEG_INFINITY), 133, 6, i8, false), -128);
        assert_eq!(to_fixed(0x7fc0_0000, 133, 6, i8, false), 0);
        assert_eq!(to_fixed(0x0000_0001, 0, 6, i8, false), 0);
        assert_eq!(to_fixed(f(-7.0), 133, 6, i8, true), 0);
        assert_eq!(to_fixed(f(7.0), 133, 6, i4, true), 7);
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
        assert_eq!(dot(&a, &b, MXINT8), f(2f32.powi(24)));
        assert_eq!(
            fp32::add(fp32::add(f(1.0), f(1.0)), f(2f32.powi(24))),
            f(2f32.powi(24) + 2.0)
        );
    }

    #[test]
    fn scale_rows_by_hand() {
        let mx4 = MxFormat {
            elem: MXINT4,
            block_size: 32,
        };
        // Four columns: two rows of four 4-bit elements; scale c is byte c, low nibble first.
        let rows = mx4.pack_scale_rows(&[0x12, 0x34, 0xf0, 0x7f]);
        assert_eq!(rows, vec![vec![2, 1, 4, 3], vec![0, -1, -1, 7]]);
        let refs: Vec<&[i64]> = rows.iter().map(Vec::as_slice).collect();
        assert_eq!(mx4.unpack_scale_rows(&refs), vec![0x12, 0x34, 0xf0, 0x7f]);
        let mx8 = MxFormat {
            elem: MXINT8,
            block_size: 32,
        };
        let rows = mx8.pack_scale_rows(&[127, 200]);
        assert_eq!(rows, vec![vec![127, -56]]);
        assert_eq!(mx8.unpack_scale_rows(&[&rows[0]]), vec![127, 200]);
        assert_eq!(
            (mx4.scale_rows(), mx8.scale_rows(), mx8.psum_bits()),
            (2, 1, 21)
        );
    }

    #[test]
    fn shift_rne_by_hand() {
        // q / 2^k rounded to nearest, ties to even.
        let cases = [
            (5, 1, 2),      // 2.5 -> 2
            (7, 1, 4),      // 3.5 -> 4
            (-5, 1, -2),    // -2.5 -> -2
            (-7, 1, -4),    // -3.5 -> -4
            (6, 2, 2),      // 1.5 -> 2
            (-6, 2, -2),    // -1.5 -> -2
            (127, 1, 64),   // 63.5 -> 64
            (-128, 1, -64), // exact
            (127, 7, 1),    // 0.992 -> 1
            (-128, 7, -1),  // exact
            (64, 7, 0),     // 0.5 -> 0
            (-64, 7, 0),    // -0.5 -> 0
            (96, 7, 1),     // 0.75 -> 1
            (-128, 8, 0),   // -0.5 -> 0
            (127, 8, 0),    // 0.496 -> 0
            (-128, 200, 0),
            (-3, 0, -3),
        ];
        for (q, k, want) in cases {
            assert_eq!(shift_rne(q, k, MXINT8), want, "{q} >> {k}");
        }
    }

    #[test]
    fn reblock_by_hand() {
        // Column 0: s + floor(log2 |q|) = 130 + 3, 128 + 3, 131 + 3: S = 134 - 6 = 128;
        // codes 10 << 2, 12 << 0, 8 << 3. Column 1: 130 + 1, 128 + 4, 131 + 0: S = 132 -
        // 6 = 126; codes -3 << 4 = -48, 20 << 2 = 80, 1 << 5 = 32.
        let rows = vec![(130, vec![10, -3]), (128, vec![12, 20]), (131, vec![8, 1])];
        let (s, codes) = reblock(&rows, MXINT8);
        assert_eq!(s, vec![128, 126]);
        assert_eq!(codes, vec![vec![40, -48], vec![12, 80], vec![64, 32]]);
        // Ties to even on the right shifts: -128 at 131 and 3 at 127 in one column: S =
        // 131 + 7 - 6 = 132; -128 >> 1 = -64, 3 >> 5 = 0 (3/32).
        let (s, codes) = reblock(&[(131, vec![-128]), (127, vec![3])], MXINT8);
        assert_eq!((s, codes), (vec![132], vec![vec![-64], vec![0]]));
        // A column of zeros gets scale 0; a NaN scale makes every column NaN.
        let (s, _) = reblock(&[(140, vec![0]), (3, vec![0])], MXINT8);
        assert_eq!(s, vec![0]);
        let (s, codes) = reblock(&[(E8M0_NAN, vec![5]), (3, vec![1])], MXINT8);
        assert_eq!((s, codes), (vec![E8M0_NAN], vec![vec![0], vec![0]]));
    }

    /// `reblock` is `quantize_block` of each column's values (scales in FP32's normal
    /// range, so the values are exact f32).
    #[test]
    fn reblock_is_quantize_block_of_the_columns() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for t in [MXINT8, MXINT4] {
            for _ in 0..2000 {
                let rows: Vec<(u8, Vec<i64>)> = (0..16)
                    .map(|_| {
                        let s = 100 + (next() % 50) as u8;
                        let span = 1u64 << t.bits;
                        let q = (0..4)
                            .map(|_| match next() % 5 {
                                0 => 0,
                                _ => (next() % span) as i64 + i64::from(t.min()),
                            })
                            .collect();
                        (s, q)
                    })
                    .collect();
                let (scales, codes) = reblock(&rows, t);
                for d in 0..4 {
                    let col: Vec<f32> = rows
                        .iter()
                        .map(|(s, q)| {
                            (q[d] as f64 * 2f64.powi(i32::from(*s) - 127 - t.frac as i32)) as f32
                        })
                        .collect();
                    let (sd, qd) = quantize_block(&col, t);
                    assert_eq!(scales[d], sd, "{rows:?} column {d}");
                    let got: Vec<i32> = codes.iter().map(|r| r[d] as i32).collect();
                    assert_eq!(got, qd, "{rows:?} column {d}");
                }
            }
        }
    }

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

    /// E8M0 conversion by hand: 1.1 lies between 2^0 (code 127) and 2^1 (128); 1.5 is the
    /// linear midpoint; 2^127 is the largest code (0xFE), 2^-127 the smallest (0).
    #[test]
    fn e8m0_rounding_by_hand() {
        use E8m0Round::*;
        assert_eq!(e8m0_code(1.1, Up, true), 128);
        assert_eq!(e8m0_code(1.1, Down, true), 127);
        assert_eq!(e8m0_code(1.1, Nearest, true), 127);
        assert_eq!(e8m0_code(1.5, Nearest, true), 128);
        assert_eq!(e8m0_code(-4.0, Up, true), 129);
        assert_eq!(e8m0_code(2f64.powi(127), Up, false), 0xfe);
        assert_eq!(e8m0_code(2f64.powi(127) * 1.01, Up, true), 0xfe);
        assert_eq!(e8m0_code(2f64.powi(127) * 1.01, Up, false), 0xff);
        assert_eq!(e8m0_code(2f64.powi(-127), Down, false), 0);
        assert_eq!(e8m0_code(2f64.powi(-130), Up, true), 0);
        assert_eq!(e8m0_code(2f64.powi(-130), Up, false), 0xff);
        assert_eq!(e8m0_code(0.0, Up, true), 0);
        assert_eq!(e8m0_code(0.0, Nearest, false), 0xff);
        assert_eq!(e8m0_code(f64::INFINITY, Up, true), 0xfe);
        assert_eq!(e8m0_code(f64::NAN, Up, true), 0xff);
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
