//! Number formats and the arithmetic of every datapath, defined once.
//!
//! A tensor's elements have a [`Format`] (how a code is stored and what it means); a layer
//! computes in a [`Precision`] (the formats it reads and writes, and how products are summed
//! and accumulated). Each family implements the one datapath interface, [`Datapath`], in
//! its own file: `int`, `mx`, `minifloat` (FP8, BF16) and `posit`; `fp32` is the FP32
//! contract the float-like families accumulate in, and `format` the table of names that the
//! parameter file and the model format both parse. The golden model, the ISA interpreter,
//! the compiler and the RTL views are written over `Datapath`, never per family.

pub mod format;
pub mod fp32;
pub mod int;
pub mod minifloat;
pub mod mx;
pub mod posit;
pub mod rows;
pub mod spline;

pub use int::{IntPrecision, IntType, Requant, Slope};
pub use minifloat::{MiniFloat, Specials, BF16, E2M1, E4M3, E4M3FNUZ, E5M2, E5M2FNUZ, FP16};
pub use mx::{MxFormat, MxInt, MXINT4, MXINT8};
pub use posit::Posit;

use serde::Serialize;

/// The element format of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Int(IntType),
    Mx(MxFormat),
    Float(MiniFloat),
    Posit(Posit),
}

impl Format {
    /// The name the format table knows it by (`int8`, `mxint8`, `fp8_e4m3`, `posit8`).
    pub fn name(&self) -> String {
        match self {
            Format::Int(t) => t.to_string(),
            Format::Mx(m) => m.elem.name.to_string(),
            Format::Float(f) => f.name.to_string(),
            Format::Posit(p) => p.name(),
        }
    }
    /// The name with the parameters that distinguish it (`mxint8 (blocks of 16)`,
    /// `posit8 (es = 0)`), for messages.
    pub fn describe(&self) -> String {
        match self {
            Format::Mx(m) => format!("{} (blocks of {})", m.elem.name, m.block_size),
            Format::Posit(p) => format!("{} (es = {})", p.name(), p.es),
            _ => self.name(),
        }
    }
    /// How one element code is stored in a row: an integer of some width and signedness.
    pub fn code_type(&self) -> IntType {
        match self {
            Format::Int(t) => *t,
            Format::Mx(m) => m.elem.code_type(),
            Format::Float(f) => f.code_type(),
            Format::Posit(p) => p.code_type(),
        }
    }
    /// Rows of this format carry one E8M0 block scale after their elements.
    pub fn block_scaled(&self) -> bool {
        matches!(self, Format::Mx(_))
    }
    /// Elements per block scale (MX), else `None`.
    pub fn block_size(&self) -> Option<u32> {
        match self {
            Format::Mx(m) => Some(m.block_size),
            _ => None,
        }
    }
    /// True when the model gives this format's data as real numbers that hwgen encodes
    /// (everything but integers, whose data is given as codes).
    pub fn from_reals(&self) -> bool {
        !matches!(self, Format::Int(_))
    }
    /// Real values encoded to codes: MX blocks of consecutive values (the length must be a
    /// whole number of blocks), or one code per value; `None` for integer formats. Returns
    /// the codes and (MX) one scale per block.
    pub fn encode_reals(&self, x: &[f32]) -> Option<(Vec<i64>, Vec<u8>)> {
        match self {
            Format::Int(_) => None,
            Format::Mx(m) => {
                let mut codes = Vec::with_capacity(x.len());
                let mut scales = Vec::with_capacity(x.len() / m.block_size as usize);
                for block in x.chunks(m.block_size as usize) {
                    let (s, q) = mx::quantize_block(block, m.elem);
                    scales.push(s);
                    codes.extend(q.iter().map(|v| i64::from(*v)));
                }
                Some((codes, scales))
            }
            Format::Float(f) => Some((x.iter().map(|v| i64::from(f.encode(*v))).collect(), vec![])),
            Format::Posit(p) => Some((
                x.iter()
                    .map(|v| i64::from(p.encode(f64::from(*v))))
                    .collect(),
                vec![],
            )),
        }
    }
}

/// What a layer computes in: one datapath of one family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    Int(IntPrecision),
    Mx(MxFormat),
    Float(MiniFloat),
    Posit(Posit),
}

impl Precision {
    /// The precision that reads, weighs and writes `format` throughout (integers accumulate
    /// in `accumulator`, the other families in FP32).
    pub fn of(format: Format, accumulator: IntType) -> Precision {
        match format {
            Format::Int(t) => Precision::Int(IntPrecision {
                input: t,
                weight: t,
                accumulator,
                output: t,
            }),
            Format::Mx(m) => Precision::Mx(m),
            Format::Float(f) => Precision::Float(f),
            Format::Posit(p) => Precision::Posit(p),
        }
    }
    /// The datapath interface of this precision.
    pub fn ops(&self) -> &dyn Datapath {
        match self {
            Precision::Int(p) => p,
            Precision::Mx(p) => p,
            Precision::Float(p) => p,
            Precision::Posit(p) => p,
        }
    }
    pub fn name(&self) -> String {
        self.ops().name()
    }
    /// The family with its article, for messages ("an MX design").
    pub fn a_family(&self) -> String {
        let f = self.family();
        let article = if matches!(f, "integer" | "MX") {
            "an"
        } else {
            "a"
        };
        format!("{article} {f}")
    }
    /// The family, for messages and the choice of RTL leaves.
    pub fn family(&self) -> &'static str {
        match self {
            Precision::Int(_) => "integer",
            Precision::Mx(_) => "MX",
            Precision::Float(_) => "floating-point",
            Precision::Posit(_) => "posit",
        }
    }
}

/// The controls the vector unit applies to an accumulator row besides the conversion: the
/// integer lanes' bias, requantization, add, ReLU, ReLU6 clamp and max-pool (the float-like
/// families use only `relu`), and the fixed scale of a row crossing between an integer and
/// an MX layer.
#[derive(Debug, Clone, Copy)]
pub struct PostOps<'a> {
    /// The bias row (added before requantization), when the instruction adds it.
    pub bias: Option<&'a [i64]>,
    pub requant: Requant,
    /// Per-channel requantization: lane i's (multiplier, shift), replacing requant's (the
    /// zero point stays requant's). Integer lanes only, and not with leaky ReLU.
    pub per_lane: Option<&'a [(u64, u32)]>,
    /// Leaky ReLU: the requantization multiplier of a negative value
    /// (`int::leaky_multiplier`).
    pub negative_multiplier: Option<u64>,
    pub relu: bool,
    /// ReLU6: the upper clamp, an output value.
    pub clamp: Option<i64>,
    /// Combine with the operand row element-wise (integer lanes: `int::Combine`), or take
    /// the maximum with it.
    pub add: Option<int::Combine>,
    pub pool: bool,
    pub operand: Option<&'a [i64]>,
    /// E8M0 code of integer elements q read or written as MX elements (q * 2^(code - 127 -
    /// frac)).
    pub fixed_scale: u8,
    /// Integer lanes: instead of requantizing, take `x * multiplier` saturated to this type
    /// (the accumulator's) and write its bits from `shift` up, as many as the output
    /// element has (`int::raw_slice`): one slice of an accumulator-type output.
    pub raw: Option<int::IntType>,
}

impl Default for PostOps<'_> {
    fn default() -> Self {
        PostOps {
            bias: None,
            requant: Requant::IDENTITY,
            per_lane: None,
            negative_multiplier: None,
            relu: false,
            clamp: None,
            add: None,
            pool: false,
            operand: None,
            fixed_scale: 0,
            raw: None,
        }
    }
}

/// A row of output elements: the codes and, for MX outputs, one scale per block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    pub codes: Vec<i64>,
    pub scales: Vec<u8>,
}

/// The RTL leaf modules that realise a datapath (each `templates/rtl/<name>.v`, with fixed
/// ports): the multiply-add of a processing element, the accumulation of a column result
/// into an accumulator row, the vector unit's row post-processing, and, for the float-like
/// families, the element decoder the multiply-add uses and the encoder the post-processing
/// uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leaves {
    pub mac: &'static str,
    pub acc: &'static str,
    pub post: &'static str,
    pub decode: Option<&'static str>,
    pub encode: Option<&'static str>,
    /// The row unit's reading of an operand element as FP32 and its writing of an output
    /// element (fixed ports: `code_i`/`fp_o`, and `value_i`/`zero_point_i`/`code_o`).
    pub row_in: &'static str,
    pub row_out: &'static str,
}

/// The row unit's element leaves of integer elements (and of the datapaths whose elements
/// it does not read, where a design with `[rows]` is refused).
pub const ROW_INT: (&str, &str) = ("hwgen_row_int_in", "hwgen_fp32_quantize");

/// What a float-like element format (FP8, BF16, posits) supplies; the rest of its datapath
/// is shared (the impl of [`Datapath`] below): each processing element forms the exact
/// product of two codes as FP32, a column sums its rows top to bottom from +0 in FP32
/// (`fp32::column_sum`), the accumulator adds in FP32, and the vector unit applies ReLU
/// (`fp32::relu`) and encodes.
pub trait FloatElement: Copy {
    /// The element format.
    fn format(self) -> Format;
    /// The exact product of two codes as FP32 bits, under the FP32 contract.
    fn product(self, a: u32, b: u32) -> u32;
    /// An FP32 value (bits) to a code, after the contract's flush.
    fn encode_fp32(self, bits: u32) -> u32;
    /// A code's value as FP32 under the contract (the vector unit's operand; the row
    /// unit's for the minifloats, `rows::Elem::value`).
    fn value_fp32(self, code: u32) -> u32;
    /// The RTL decoder of a code (the multiply-add's input) and encoder (the row
    /// post-processor's output).
    fn decoder(self) -> &'static str;
    fn encoder(self) -> &'static str;
    /// The row post-processor (`hwgen_post_float`: ReLU and the encoder) and the row
    /// unit's element leaves (`ROW_INT` where the row unit does not read the format).
    fn post_leaf(self) -> &'static str {
        "hwgen_post_float"
    }
    fn row_leaves(self) -> (&'static str, &'static str) {
        ROW_INT
    }
}

impl<T: FloatElement> Datapath for T {
    fn name(&self) -> String {
        self.format().name()
    }
    fn input(&self) -> Format {
        self.format()
    }
    fn weight(&self) -> Format {
        self.format()
    }
    fn output(&self) -> Format {
        self.format()
    }
    fn acc_type(&self) -> IntType {
        int::FP32_BITS
    }
    fn psum_bits(&self, _rows: u32) -> u32 {
        32
    }
    fn column(&self, a: &[i64], w: &[i64], _scales: (u8, u8)) -> i64 {
        fp32::column_sum(a, w, |x, y| self.product(x, y))
    }
    fn accumulate(&self, acc: i64, v: i64) -> i64 {
        fp32::accumulate(acc, v)
    }
    /// Lane i: the accumulator value plus the bias row's FP32 word (`bias`); with `add`,
    /// that rounded to the format (as the convolution apart writes it) plus the operand's
    /// value (the add's weights and zero points are the integer form's and do not apply);
    /// each sum rounded once under the FP32 contract; ReLU; the encoder.
    fn post(&self, acc: &[i64], ops: &PostOps, _out: Format) -> Row {
        let relu = |v: u32| if ops.relu { fp32::relu(v) } else { v };
        let lane = |i: usize, v: i64| {
            let mut v = v as u32;
            if let Some(b) = ops.bias {
                v = fp32::add(v, b[i] as u32);
            }
            if let (Some(_), Some(o)) = (ops.add, ops.operand) {
                let own = self.value_fp32(self.encode_fp32(v));
                v = fp32::add(own, self.value_fp32(o[i] as u32));
            }
            i64::from(self.encode_fp32(relu(v)))
        };
        Row {
            codes: acc.iter().enumerate().map(|(i, v)| lane(i, *v)).collect(),
            scales: Vec::new(),
        }
    }
    fn leaves(&self) -> Leaves {
        Leaves {
            mac: "hwgen_mac_float",
            acc: "hwgen_acc_float",
            post: self.post_leaf(),
            decode: Some(self.decoder()),
            encode: Some(self.encoder()),
            row_in: self.row_leaves().0,
            row_out: self.row_leaves().1,
        }
    }
}

/// The one datapath interface every precision implements.
pub trait Datapath {
    /// The name reports use (`int8`, `mxint8`, `fp8_e4m3`, `posit8`).
    fn name(&self) -> String;
    /// Formats of the activations read, the weights and the activations written.
    fn input(&self) -> Format;
    fn weight(&self) -> Format;
    fn output(&self) -> Format;
    /// Accumulator values as the accumulator rows hold them (FP32 as int32 bit patterns).
    fn acc_type(&self) -> IntType;
    /// Width of a column result leaving the array of `rows` rows, as the accumulation leaf
    /// takes it.
    fn psum_bits(&self, rows: u32) -> u32;
    /// Width in which the array's processing elements add a column of `rows` products
    /// (at most `psum_bits`): where it is narrower, every such sum is exact in it and the
    /// compute unit sign-extends it to `psum_bits` (integer products); else `psum_bits`.
    fn column_bits(&self, rows: u32) -> u32 {
        self.psum_bits(rows)
    }
    /// One pass of a column of the array, in the accumulator's domain: `a` the codes of one
    /// input row (one per array row; zero codes past the last channel), `w` the column's
    /// weight codes, `scales` the input row's and the weight column's block scales (MX).
    fn column(&self, a: &[i64], w: &[i64], scales: (u8, u8)) -> i64;
    /// An accumulator value plus a column result.
    fn accumulate(&self, acc: i64, v: i64) -> i64;
    /// An accumulator row to an output row of format `out` (the precision's own output,
    /// or at a boundary between precisions the other's).
    fn post(&self, acc: &[i64], ops: &PostOps, out: Format) -> Row;
    /// Rows of column scales after a weight tile's element rows.
    fn weight_scale_rows(&self) -> u32 {
        0
    }
    /// The column scales of a weight tile as its `weight_scale_rows()` rows of weight codes.
    fn pack_weight_scales(&self, _scales: &[u8]) -> Vec<Vec<i64>> {
        Vec::new()
    }
    /// The inverse of `pack_weight_scales`: the column scales of `columns` columns (all 0
    /// for a precision without block scales).
    fn unpack_weight_scales(&self, _rows: &[&[i64]], columns: usize) -> Vec<u8> {
        vec![0; columns]
    }
    fn leaves(&self) -> Leaves;
    /// The array can take operand zero points out of its column sums (`matmul`'s
    /// `zero_input`/`zero_weight`): exact integer sums only.
    fn zero_points(&self) -> bool {
        false
    }
}

/// Width of the array's column results for a datapath that runs `precisions`: a single
/// precision's own; for a multi-precision pair the MX precision's block sum, in which the
/// integer layers' column sums (the same element width, as many rows as a block) are exact.
pub fn psum_bits(precisions: &[Precision], rows: u32) -> u32 {
    array_precision(precisions).map_or(0, |p| p.ops().psum_bits(rows))
}

/// Width in which the array's elements add a column ([`Datapath::column_bits`]) for a
/// datapath that runs `precisions`, chosen as `psum_bits` chooses.
pub fn column_bits(precisions: &[Precision], rows: u32) -> u32 {
    array_precision(precisions).map_or(0, |p| p.ops().column_bits(rows))
}

/// The precision whose column sums set the array's widths: the only one, or a
/// multi-precision pair's MX one.
fn array_precision(precisions: &[Precision]) -> Option<&Precision> {
    precisions
        .iter()
        .find(|p| p.ops().input().block_scaled() || precisions.len() == 1)
}

/// The integer multiply-add leaf (integer and MX elements): the only one whose products
/// can share a multiplier in pairs (`[array] pack_macs`).
pub const MAC_INT: &str = "hwgen_mac_int";

/// Whether the multiply-add leaf `mac` leaves a partial sum unchanged when the activation
/// code is zero, whatever the weight: true of the integer leaf (its product is exactly zero
/// and sums wrap modulo 2^PSUM_W), not of the float one (-0 + +0 is +0; 0 x inf is NaN).
/// The array then zeroes invalid activations rather than multiplexing each partial sum.
pub fn zero_act_adds_nothing(mac: &str) -> bool {
    mac == MAC_INT
}

/// The leaves of a datapath that runs `precisions` (one, or a multi-precision pair that
/// shares the array's multipliers), or why there are none.
pub fn leaves_of(precisions: &[Precision]) -> Result<Leaves, String> {
    match precisions {
        [p] => Ok(p.ops().leaves()),
        [Precision::Int(i), Precision::Mx(m)]
            if i.input.signed
                && i.input.bits == m.elem.bits
                && i.input == i.weight
                && i.input == i.output
                && i.accumulator == int::FP32_BITS =>
        {
            Ok(Leaves {
                mac: MAC_INT,
                acc: "hwgen_acc_int_mx",
                post: "hwgen_post_int_mx",
                decode: None,
                encode: None,
                row_in: ROW_INT.0,
                row_out: ROW_INT.1,
            })
        }
        _ => Err(format!(
            "a multi-precision datapath pairs a signed integer type with the MX type of the same width (both run on the array's integer multipliers), not {}",
            precisions
                .iter()
                .map(Precision::name)
                .collect::<Vec<_>>()
                .join(" and ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::passes::tests::Rng;

    /// The array zeroes invalid activations where `zero_act_adds_nothing` says so; the golden
    /// column sums agree: for every integer and MX format, a row with activation code 0
    /// inserted anywhere in a column leaves its sum unchanged, whatever the row's weight
    /// code; for every float-like format some weight code (NaN, NaR or infinity) changes it.
    #[test]
    fn a_zero_activation_adds_nothing_exactly_where_the_array_gates() {
        let mut formats: Vec<Format> = format::TABLE.iter().map(|e| e.format).collect();
        for bits in format::INT_BITS {
            formats.push(Format::Int(IntType::new(true, bits)));
            formats.push(Format::Int(IntType::new(false, bits)));
        }
        let mut rng = Rng::new(7);
        // A code of type t.
        let pick =
            |rng: &mut Rng, t: IntType| t.min() + rng.range(0, (t.max() - t.min()) as usize) as i64;
        for f in formats {
            let p = Precision::of(f, IntType::new(true, 32));
            let ops = p.ops();
            let (ti, tw) = (ops.input().code_type(), ops.weight().code_type());
            let gates = zero_act_adds_nothing(ops.leaves().mac);
            let mut changed = false;
            for _ in 0..6 {
                let n = rng.range(1, 12);
                let a: Vec<i64> = (0..n).map(|_| pick(&mut rng, ti)).collect();
                let w: Vec<i64> = (0..n).map(|_| pick(&mut rng, tw)).collect();
                let scales = (rng.range(0, 254) as u8, rng.range(0, 254) as u8);
                let at = rng.range(0, n);
                let base = ops.column(&a, &w, scales);
                for x in tw.min()..=tw.max() {
                    let (mut a2, mut w2) = (a.clone(), w.clone());
                    a2.insert(at, 0);
                    w2.insert(at, x);
                    let sum = ops.column(&a2, &w2, scales);
                    if gates {
                        assert_eq!(sum, base, "{}: weight code {x} at row {at}", p.name());
                    }
                    changed |= sum != base;
                }
            }
            assert!(
                gates || changed,
                "{}: no weight code changed a sum",
                p.name()
            );
        }
    }
}
