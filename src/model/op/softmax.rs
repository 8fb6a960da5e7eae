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
/// input, written at the output scale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Softmax {
    pub quant: RowQuant,
    /// Equal groups of channels normalized each on its own (attention's heads).
    pub heads: usize,
}

pub(super) const FORMS: &[Form] = &[Form {
    name: "softmax",
    parse,
    keys: &["scales", "zero_points", "heads"],
    shared: &[],
    real: true,
    auto: false,
    leaky: false,
}];

impl Softmax {
    /// The row program (README, "softmax"): with x = (q - z_in) * s_in rounded once,
    ///   1. a = max x;
    ///   2. b = 1 / sum e^(x - a);
    ///   3. y = e^((c + x) - a) * b, written as round(y) + z_out,
    ///
    /// where c = -ln(s_out) rounded to FP32 carries the output scale into the exponent (the
    /// last pass's multiplier is b, not the output scale).
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
        let plain = vec![Lane::default(); channels];
        let shift = (-self.quant.output_scale().ln() as f32).to_bits();
        let log_scale = Lane {
            shift,
            ..Lane::default()
        };
        vec![
            pass(
                Stages {
                    reduce: Reduce::MaxA,
                    ..read
                },
                plain.clone(),
            ),
            pass(
                Stages {
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
                vec![log_scale; channels],
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
/// the channels split into that many equal groups, each normalized on its own).
fn parse(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let quant = rowops::quant(ctx, a, a.prec.ops().output())?;
    let heads = ctx.positive("heads", a.rl.heads, Some(1), 4096)?;
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
    Ok(Parsed {
        op: Softmax { quant, heads }.into(),
        out: a.shape,
        inputs: vec![a.src.to_string()],
        prec: a.prec,
    })
}
