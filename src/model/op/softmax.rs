//! `softmax` along the channels (the last axis) of every pixel, on the row unit: three
//! passes over the input held on chip, the maximum, the sum of exponentials, the
//! normalized exponentials.

use super::rowops::{self, RowQuant};
use super::{Args, Form, Operator, Parsed};
use crate::model::data::Ctx;
use crate::model::lower::{Lowered, RowWork};
use crate::model::{Layer, ModelError, Tensor};
use crate::numeric::rows::{Finish, Func, Lane, Pass, Reduce, Stages};

/// y_i = e^(x_i - max x) / sum_j e^(x_j - max x) over a pixel's channels, x the dequantized
/// input (times the logit scale, plus the mask), written at the output scale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Softmax {
    /// The input's scale is the given one times `logit_scale` (one FP32 rounding).
    pub quant: RowQuant,
    /// Equal groups of channels normalized each on its own (attention's heads).
    pub heads: usize,
    /// The additive mask of each head's channels (FP32 bit patterns), or empty.
    pub mask: Vec<u32>,
}

pub(super) const FORMS: &[Form] = &[Form {
    name: "softmax",
    parse,
    keys: &["scales", "zero_points", "heads", "logit_scale", "mask"],
    shared: &[],
    real: true,
    auto: false,
    leaky: false,
}];

impl Softmax {
    /// The row program (README, "softmax"): with x = (q - z_in) * s_in rounded once and
    /// m the channel's mask (0 without one),
    ///   1. a = max (m + x);
    ///   2. b = 1 / sum e^((m + x) - a);
    ///   3. y = e^(((c + m) + x) - a) * b, written as round(y) + z_out,
    ///
    /// where c = -ln(s_out) rounded to FP32 carries the output scale into the exponent (the
    /// last pass's multiplier is b, not the output scale). The mask rides in the lanes'
    /// shift rows (passes 1 and 2 add it before the operand: v = 0 * 1 + m; then + x).
    pub fn passes(&self, channels: usize) -> Vec<Pass> {
        let c = self.quant.consts();
        let read = Stages {
            src_zero: true,
            opnd: true,
            ..Stages::default()
        };
        let pass = |stages: Stages, lanes: Vec<Lane>| Pass {
            stages,
            consts: c,
            lanes,
            zero: self.quant.out_zero,
        };
        let shift = (-self.quant.output_scale().ln() as f32).to_bits();
        let per_head = channels / self.heads.max(1);
        let m = |ch: usize| self.mask.get(ch % per_head.max(1)).copied().unwrap_or(0);
        let masked = !self.mask.is_empty();
        let plain: Vec<Lane> = (0..channels)
            .map(|ch| Lane {
                shift: m(ch),
                ..Lane::default()
            })
            .collect();
        let log_scale: Vec<Lane> = (0..channels)
            .map(|ch| Lane {
                shift: match masked {
                    true => crate::numeric::fp32::add(shift, m(ch)),
                    false => shift,
                },
                ..Lane::default()
            })
            .collect();
        vec![
            pass(
                Stages {
                    scale: masked,
                    reduce: Reduce::MaxA,
                    ..read
                },
                plain.clone(),
            ),
            pass(
                Stages {
                    scale: masked,
                    centre: true,
                    func: Func::Exp,
                    reduce: Reduce::SumB,
                    finish: Finish::RecipB,
                    ..read
                },
                plain,
            ),
            pass(
                Stages {
                    scale: true,
                    centre: true,
                    func: Func::Exp,
                    write: true,
                    out_b: true,
                    ..read
                },
                log_scale,
            ),
        ]
    }
}

impl Softmax {
    /// Its row program: the passes per head.
    fn work(&self, layer: &Layer) -> RowWork {
        RowWork {
            passes: self.passes(layer.out[2]),
            groups: self.heads,
        }
    }
}

impl Operator for Softmax {
    fn name(&self) -> &'static str {
        "softmax"
    }

    fn golden(&self, layer: &Layer, inputs: &[&Tensor], rows: usize) -> Tensor {
        rowops::golden(&self.work(layer), layer, inputs[0], rows)
    }

    fn lower(&self, layer: &Layer) -> Lowered {
        Lowered::Rows(self.work(layer))
    }

    /// Probabilities are not negative: at an output zero point not negative, neither are
    /// the codes.
    fn non_negative(&self, _inputs: &[bool]) -> bool {
        self.quant.out_zero >= 0
    }
}

/// `softmax`: `scales` and `zero_points` of the input and output, `heads` (default 1:
/// the channels split into that many equal groups, each normalized on its own),
/// `logit_scale` (default 1: the input's scale is multiplied by it, in double precision,
/// then rounded to FP32 once) and `mask` (`"random"` or a float32 `.npy` of one head's
/// channels, finite, added to every head's inputs).
fn parse(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let mut quant = rowops::quant(ctx, a, a.prec.ops().output())?;
    let heads = ctx.positive("heads", a.rl.heads, Some(1), 4096)?;
    if let Some(f) = a.rl.logit_scale {
        let s = f64::from(f32::from_bits(quant.in_scale)) * f;
        let ok = f.is_finite() && f > 0.0 && (s as f32).is_normal();
        if !ok {
            return Err(ctx.err(
                &format!("logit_scale = {f}"),
                "logit_scale multiplies the input's scale: a positive number whose product with it FP32 holds as a normal number",
                "use attention's 1/sqrt(head size), such as logit_scale = 0.125",
            ));
        }
        quant.in_scale = (s as f32).to_bits();
    }
    if !a.shape[2].is_multiple_of(heads) {
        return Err(ctx.err(
            &format!("heads = {heads}"),
            format!(
                "the {} channels must split into {heads} heads of equal size",
                a.shape[2]
            ),
            "use a number of heads that divides the channels",
        ));
    }
    let mask = match a.rl.mask.as_deref() {
        None => Vec::new(),
        Some(spec) => {
            let n = a.shape[2] / heads;
            let v = rowops::channel_reals(ctx, "mask", Some(spec), n, 0.0)?;
            v.into_iter().map(crate::numeric::fp32::flush).collect()
        }
    };
    Ok(Parsed {
        op: Softmax { quant, heads, mask }.into(),
        out: a.shape,
        inputs: vec![a.src.to_string()],
        prec: a.prec,
    })
}
