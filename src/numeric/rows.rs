//! The row unit's arithmetic, defined once: an element pipeline of FP32 stages, the
//! reduction of a row's lanes into a pixel's statistics, the statistics' finish and the
//! rounding to an output element. The interpreter runs the `rows` instruction with these
//! functions, and the transformer operators' golden models run their row programs
//! ([`Pass`]) with them in the hardware's order (channel tiles of `lanes` channels, lanes
//! summed in a pairwise tree); the RTL implements the same operations under the same FP32
//! contract (`fp32`).

use super::fp32;
use super::int::IntType;
use super::minifloat::{self, MiniFloat};
use super::mx::{self, MxInt};
use super::posit::Posit;
use super::spline::{self, Spline};
use super::{FloatElement, Format};

/// The elements the row unit reads as its operand and writes: integers (with a zero point),
/// the codes of a small floating-point format (FP8, BF16) or of a posit, or MX integer
/// blocks of one row of lanes (the Design's block is its array's width) with the row's
/// E8M0 scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    Int(IntType),
    Float(MiniFloat),
    Posit(Posit),
    Mx(MxInt),
}

impl Elem {
    /// The row unit's elements in a design whose output format is `f`, if it has them.
    pub fn of(f: Format) -> Option<Elem> {
        match f {
            Format::Int(t) => Some(Elem::Int(t)),
            Format::Float(m) if m.ieee_specials() || m.specials == minifloat::Specials::Fn => {
                Some(Elem::Float(m))
            }
            Format::Posit(p) => Some(Elem::Posit(p)),
            Format::Mx(m) => Some(Elem::Mx(m.elem)),
            _ => None,
        }
    }

    /// An element as FP32: an integer (an MX element's code too) converted exactly (to the
    /// nearest FP32 beyond 2^24), a float code's value under the FP32 contract (a value
    /// below FP32's normal range, a BF16 subnormal, is a zero of its sign; a NaN the
    /// canonical NaN), a posit's value (exact: every posit8 value is a normal FP32; NaR
    /// the canonical NaN).
    pub fn value(self, code: i64) -> u32 {
        match self {
            Elem::Int(_) | Elem::Mx(_) => fp32::from_int(code),
            Elem::Float(m) => m.value_fp32(code as u32),
            Elem::Posit(p) => p.value_fp32(code as u32),
        }
    }

    /// The constants of a pass for an operand row whose block scale is `scale`: an MX
    /// row's operand scale is `opnd_scale` times the block's scale (`mx::scale_fp32`), so
    /// that (code - 0) * it is the element's value times `opnd_scale`; the other elements
    /// have no scale.
    pub fn row_consts(self, c: &Consts, scale: u8) -> Consts {
        match self {
            Elem::Mx(t) => Consts {
                opnd_scale: mx::scale_fp32(c.opnd_scale, scale, t),
                ..*c
            },
            _ => *c,
        }
    }

    /// A row's values `vals` (one per lane, the first `valid` holding channels) written as
    /// elements, each `v * mult` (the output multiplier):
    /// * integers: rounded plus `zero` ([`quantize`]);
    /// * float formats: `minifloat::to_code` (nearest, ties to even, saturating);
    /// * posits: `posit::to_code` (the vector unit's conversion: nearest on the bit string,
    ///   saturating to maxpos and minpos, NaN and infinities to NaR);
    /// * MX: the products (the lanes past `valid` +0) quantized as one block
    ///   (`mx::quantize_fp32_row`), with the block's scale.
    ///
    /// Lanes past `valid` are 0; the scale is `None` for the formats without one.
    pub fn write_row(
        self,
        vals: &[u32],
        valid: usize,
        mult: u32,
        zero: i64,
    ) -> (Vec<i64>, Option<u8>) {
        let per_lane = |f: &dyn Fn(u32) -> i64| -> Vec<i64> {
            let live = vals.iter().take(valid).map(|&v| f(v));
            live.chain(std::iter::repeat(0)).take(vals.len()).collect()
        };
        match self {
            Elem::Int(t) => (per_lane(&|v| quantize(v, mult, zero, t)), None),
            Elem::Float(m) => (
                per_lane(&|v| i64::from(minifloat::to_code(fp32::mul(v, mult), m))),
                None,
            ),
            Elem::Posit(p) => (
                per_lane(&|v| i64::from(p.encode_fp32(fp32::mul(v, mult)))),
                None,
            ),
            Elem::Mx(t) => {
                let products = per_lane(&|v| i64::from(fp32::mul(v, mult)));
                let bits: Vec<u32> = products.iter().map(|&p| p as u32).collect();
                let (scale, codes) = mx::quantize_fp32_row(&bits, false, t);
                (codes.into_iter().map(i64::from).collect(), Some(scale))
            }
        }
    }
}

/// The element function of the pipeline. (A pass holds one; the table inline keeps
/// `Stages` a plain value.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(clippy::large_enum_variant)]
pub enum Func {
    #[default]
    None,
    /// e^x (`spline::exp` with the unit's exp2 table).
    Exp,
    /// A piecewise quadratic whose table rides in parameter rows.
    Spline(Spline),
}

/// What a pass reduces its values into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reduce {
    #[default]
    None,
    /// The maximum into statistic a.
    MaxA,
    /// The sum into a.
    SumA,
    /// The sum into b.
    SumB,
}

/// What happens to a pixel's statistics after the last tile of a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Finish {
    #[default]
    None,
    /// b = 1 / b.
    RecipB,
    /// a = a * (1/n).
    MeanA,
    /// b = 1 / sqrt(b * (1/n) + epsilon).
    RstdB,
}

/// The stages a pass runs, in pipeline order (the `rows` instruction's flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stages {
    /// Add the tile's integer bias row (integer sources).
    pub bias: bool,
    /// The source elements are FP32 (else integers).
    pub src_float: bool,
    /// The source value is +0 (the accumulator element is ignored).
    pub src_zero: bool,
    /// Multiply by the scale row and add the shift row.
    pub scale: bool,
    /// Add (b - operand zero point) * operand scale.
    pub opnd: bool,
    /// Subtract statistic a; multiply by statistic b.
    pub centre: bool,
    pub norm: bool,
    /// Multiply by gamma, add beta.
    pub affine: bool,
    pub func: Func,
    /// Reduce the squares of the values.
    pub square: bool,
    pub reduce: Reduce,
    pub finish: Finish,
    /// Write the values as output elements.
    pub write: bool,
    /// The output multiplier is the pixel's statistic b instead of the output scale.
    pub out_b: bool,
}

impl Stages {
    /// What a written value is multiplied by before rounding: the output scale, or with
    /// `out_b` the pixel's statistic b.
    pub fn out_multiplier(&self, c: &Consts, stat: Stat) -> u32 {
        match self.out_b {
            true => stat.1,
            false => c.out_scale,
        }
    }
}

/// FP32 words of the constants ([`Consts::words`]).
pub const CONST_WORDS: usize = 5;

/// The FP32 constants of a pass (the constants rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Consts {
    pub opnd_scale: u32,
    /// The operand's zero point, as FP32.
    pub opnd_zero: u32,
    /// 1 / n, n the channels a reduction covers.
    pub inv_n: u32,
    pub eps: u32,
    pub out_scale: u32,
}

impl Consts {
    /// The constants as the first lanes of the constants row.
    pub fn words(&self) -> [u32; 5] {
        [
            self.opnd_scale,
            self.opnd_zero,
            self.inv_n,
            self.eps,
            self.out_scale,
        ]
    }

    pub fn from_words(w: &[u32]) -> Consts {
        let at = |i: usize| w.get(i).copied().unwrap_or(0);
        Consts {
            opnd_scale: at(0),
            opnd_zero: at(1),
            inv_n: at(2),
            eps: at(3),
            out_scale: at(4),
        }
    }
}

impl Default for Consts {
    fn default() -> Self {
        let one = 1f32.to_bits();
        Consts {
            opnd_scale: one,
            opnd_zero: 0,
            inv_n: one,
            eps: 0,
            out_scale: one,
        }
    }
}

/// One lane's per-channel parameters (the tile's parameter rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    pub bias: i64,
    pub scale: u32,
    pub shift: u32,
    pub gamma: u32,
    pub beta: u32,
}

impl Default for Lane {
    fn default() -> Self {
        let one = 1f32.to_bits();
        Lane {
            bias: 0,
            scale: one,
            shift: 0,
            gamma: one,
            beta: 0,
        }
    }
}

/// A pixel's two statistics.
pub type Stat = (u32, u32);

/// The exp2 table every row unit holds (the exponent's fraction).
pub fn exp2() -> &'static Spline {
    static T: std::sync::OnceLock<Spline> = std::sync::OnceLock::new();
    T.get_or_init(spline::exp2_table)
}

/// One element through the stages before the reduction: `x` the accumulator element
/// (integer, or FP32 bits with `src_float`), `b` the operand element as FP32
/// ([`Elem::value`]), `stat` the pixel's statistics. Every FP32 operation is rounded once.
pub fn element(st: &Stages, c: &Consts, lane: &Lane, x: i64, b: u32, stat: Stat) -> u32 {
    let mut v = if st.src_zero {
        0
    } else if st.src_float {
        fp32::flush(x as u32)
    } else {
        let x = if st.bias { x + lane.bias } else { x };
        fp32::from_int(x)
    };
    if st.scale {
        v = fp32::add(fp32::mul(v, lane.scale), lane.shift);
    }
    if st.opnd {
        let d = fp32::sub(b, c.opnd_zero);
        v = fp32::add(v, fp32::mul(d, c.opnd_scale));
    }
    if st.centre {
        v = fp32::sub(v, stat.0);
    }
    if st.norm {
        v = fp32::mul(v, stat.1);
    }
    if st.affine {
        v = fp32::add(fp32::mul(v, lane.gamma), lane.beta);
    }
    match &st.func {
        Func::None => v,
        Func::Exp => spline::exp(v, exp2()),
        Func::Spline(s) => s.eval(v),
    }
}

/// The reduction of the first `valid` of a row's values (`square`: of their squares): the
/// lanes in a pairwise tree (lane 2j with lane 2j + 1, level by level, over the row's
/// lanes, the lanes past `valid` reading -infinity for a maximum and +0 for a sum).
pub fn reduce_row(kind: Reduce, square: bool, vals: &[u32], valid: usize) -> u32 {
    let idle = match kind {
        Reduce::MaxA => 0xff80_0000,
        _ => 0,
    };
    let mut level: Vec<u32> = vals
        .iter()
        .enumerate()
        .map(|(i, &v)| match (i < valid, square) {
            (false, _) => idle,
            (true, true) => fp32::mul(v, v),
            (true, false) => v,
        })
        .collect();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|p| match (kind, p) {
                (_, [x]) => *x,
                (Reduce::MaxA, [x, y]) => fp32::max(*x, *y),
                (_, [x, y]) => fp32::add(*x, *y),
                _ => unreachable!("chunks of two"),
            })
            .collect();
    }
    level.first().copied().unwrap_or(idle)
}

/// A pixel's statistics after a row's reduction `r`: replaced (`first`) or combined.
pub fn combine(kind: Reduce, first: bool, stat: Stat, r: u32) -> Stat {
    let join = |old: u32| match (first, kind) {
        (true, _) => r,
        (false, Reduce::MaxA) => fp32::max(old, r),
        (false, _) => fp32::add(old, r),
    };
    match kind {
        Reduce::None => stat,
        Reduce::MaxA | Reduce::SumA => (join(stat.0), stat.1),
        Reduce::SumB => (stat.0, join(stat.1)),
    }
}

/// A pixel's statistics after its last tile.
pub fn finish(kind: Finish, c: &Consts, (a, b): Stat) -> Stat {
    match kind {
        Finish::None => (a, b),
        Finish::RecipB => (a, fp32::recip(b)),
        Finish::MeanA => (fp32::mul(a, c.inv_n), b),
        Finish::RstdB => (a, fp32::rsqrt(fp32::add(fp32::mul(b, c.inv_n), c.eps))),
    }
}

/// An FP32 value as an output integer: `v * out_scale` (the output multiplier) rounded to the nearest integer
/// (ties to even), plus `zero`, saturated to `t`; NaN gives the zero point (saturated).
pub fn quantize(v: u32, out_scale: u32, zero: i64, t: IntType) -> i64 {
    let y = f32::from_bits(fp32::mul(v, out_scale));
    if y.is_nan() {
        return t.saturate(i128::from(zero));
    }
    let r = f64::from(y).round_ties_even().clamp(-1e12, 1e12) as i128;
    t.saturate(r + i128::from(zero))
}

/// One pass of a row program over a tensor: its stages and constants, and the per-channel
/// parameters (one [`Lane`] per channel).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    pub stages: Stages,
    pub consts: Consts,
    pub lanes: Vec<Lane>,
    /// Output zero point (with `write`).
    pub zero: i64,
}

/// A tensor of `pixels` rows of `channels` source elements (integers, or FP32 bits), run
/// through `passes` in order on tiles of `lanes` channels as the hardware runs them: each
/// pass over every tile and pixel, the statistics carried from pass to pass (starting at
/// (+0, +0)), `operand` the operand's elements (same shape; with `opnd`) and, for MX
/// elements, its block scales (one per pixel and tile, `[pixel * tiles + tile]`). Returns
/// the output elements of the writing passes (`e` the operand's and the output's elements),
/// the last one's last, and for MX their block scales.
pub fn run(
    passes: &[Pass],
    src: &[i64],
    (operand, operand_scales): (&[i64], &[u8]),
    (pixels, channels, lanes): (usize, usize, usize),
    e: Elem,
) -> (Vec<i64>, Vec<u8>) {
    let mut stats = vec![(0u32, 0u32); pixels];
    let mut out = vec![0i64; pixels * channels];
    let tiles = channels.div_ceil(lanes);
    let mut scales = match e {
        Elem::Mx(_) => vec![0u8; pixels * tiles],
        _ => Vec::new(),
    };
    for p in passes {
        for tile in 0..tiles {
            let valid = (channels - tile * lanes).min(lanes);
            for (px, stat) in stats.iter_mut().enumerate() {
                let scale = operand_scales.get(px * tiles + tile).copied().unwrap_or(0);
                let consts = e.row_consts(&p.consts, scale);
                let vals: Vec<u32> = (0..lanes)
                    .map(|l| {
                        let ch = tile * lanes + l;
                        match ch < channels {
                            true => {
                                let at = px * channels + ch;
                                let b = e.value(operand.get(at).copied().unwrap_or(0));
                                element(&p.stages, &consts, &p.lanes[ch], src[at], b, *stat)
                            }
                            false => 0,
                        }
                    })
                    .collect();
                let mult = p.stages.out_multiplier(&p.consts, *stat);
                if p.stages.reduce != Reduce::None {
                    let r = reduce_row(p.stages.reduce, p.stages.square, &vals, valid);
                    *stat = combine(p.stages.reduce, tile == 0, *stat, r);
                }
                if p.stages.write {
                    let (codes, scale) = e.write_row(&vals, valid, mult, p.zero);
                    let at = px * channels + tile * lanes;
                    out[at..at + valid].copy_from_slice(&codes[..valid]);
                    if let Some(s) = scale {
                        scales[px * tiles + tile] = s;
                    }
                }
            }
        }
        for stat in stats.iter_mut() {
            *stat = finish(p.stages.finish, &p.consts, *stat);
        }
    }
    (out, scales)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f32) -> u32 {
        x.to_bits()
    }

    /// The pairwise tree by hand: 1 + 2^-24 + 2^-24 + 2^-24 over four lanes is the sum of
    /// (1 + 2^-24) and (2^-24 + 2^-24), 1 + 2^-23 (the first sum ties to even, 1), where a
    /// sequential sum would give 1; the max ignores lanes past `valid`.
    #[test]
    fn reductions_by_hand() {
        let e = f(2f32.powi(-24));
        let vals = [f(1.0), e, e, e];
        assert_eq!(
            reduce_row(Reduce::SumA, false, &vals, 4),
            f(1.0 + 2f32.powi(-23))
        );
        let vals = [f(1.0), f(5.0), f(-2.0), f(9.0)];
        assert_eq!(reduce_row(Reduce::MaxA, false, &vals, 3), f(5.0));
        assert_eq!(reduce_row(Reduce::SumB, true, &vals, 2), f(26.0));
        assert_eq!(
            combine(Reduce::MaxA, false, (f(7.0), 0), f(5.0)),
            (f(7.0), 0)
        );
        assert_eq!(
            combine(Reduce::SumB, true, (1, f(7.0)), f(5.0)),
            (1, f(5.0))
        );
    }

    /// A layer norm of [1, 2, 3, 4] on two tiles of two lanes, by hand: mean 2.5; the
    /// centred squares 2.25 + 0.25 + 0.25 + 2.25 = 5, variance 1.25, rstd 1/sqrt(1.25);
    /// outputs (x - 2.5) / sqrt(1.25) * 10, rounded: -13, -4, 4, 13.
    #[test]
    fn a_layer_norm_by_hand() {
        let consts = Consts {
            inv_n: f(0.25),
            out_scale: f(10.0),
            ..Consts::default()
        };
        let lanes = vec![Lane::default(); 4];
        let pass = |stages: Stages| Pass {
            stages,
            consts,
            lanes: lanes.clone(),
            zero: 0,
        };
        let passes = [
            pass(Stages {
                reduce: Reduce::SumA,
                finish: Finish::MeanA,
                ..Stages::default()
            }),
            pass(Stages {
                centre: true,
                square: true,
                reduce: Reduce::SumB,
                finish: Finish::RstdB,
                ..Stages::default()
            }),
            pass(Stages {
                centre: true,
                norm: true,
                write: true,
                ..Stages::default()
            }),
        ];
        let t = Elem::Int(IntType::new(true, 8));
        let (y, _) = run(&passes, &[1, 2, 3, 4], (&[], &[]), (1, 4, 2), t);
        assert_eq!(y, vec![-13, -4, 4, 13]);
    }

    /// MX rows by hand: the operand scale of a row with block scale 130 is 2^(130 - 127 - 6)
    /// = 1/8 (MXINT8's six fraction bits); 0xFF is NaN; scale 0 is 2^-133, below FP32's
    /// normal range: +0. A row [1.5, -0.25] on four lanes (two valid, the third's value
    /// ignored) is one block: amax 1.5, shared exponent 0 (code 127), elements 1.5 * 64 =
    /// 96 and -0.25 * 64 = -16, the rest 0.
    #[test]
    fn mx_rows_by_hand() {
        let e = Elem::Mx(super::mx::MXINT8);
        let c = Consts::default();
        assert_eq!(e.row_consts(&c, 130).opnd_scale, f(0.125));
        assert_eq!(e.row_consts(&c, 0xff).opnd_scale, fp32::CANONICAL_NAN);
        assert_eq!(e.row_consts(&c, 0).opnd_scale, 0);
        assert_eq!(e.value(-100), f(-100.0));
        let vals = [f(1.5), f(-0.25), f(3.0), 0];
        assert_eq!(
            e.write_row(&vals, 2, f(1.0), 0),
            (vec![96, -16, 0, 0], Some(127))
        );
    }

    /// Quantization: ties to even, the zero point after rounding, saturation, NaN.
    #[test]
    fn quantize_by_hand() {
        let t = IntType::new(true, 8);
        let one = f(1.0);
        assert_eq!(quantize(f(2.5), one, 0, t), 2);
        assert_eq!(quantize(f(3.5), one, 0, t), 4);
        assert_eq!(quantize(f(-2.5), one, 10, t), 8);
        assert_eq!(quantize(f(130.0), one, -10, t), 120);
        assert_eq!(quantize(f(1e30), one, 0, t), 127);
        assert_eq!(quantize(fp32::CANONICAL_NAN, one, 5, t), 5);
    }
}
