//! `layernorm` and `rmsnorm` over the channels of every pixel, on the row unit: the
//! statistics in one pass each (the mean, then the variance about it; or the mean square),
//! then the normalized, scaled and shifted values; and `scale`, the per-channel scale and
//! shift alone (MobileBERT's NoNorm), one element-wise pass.

use super::rowops::{self, RowQuant};
use super::{Args, Form, Operator, Parsed};
use crate::model::data::Ctx;
use crate::model::lower::{Lowered, RowWork};
use crate::model::{Layer, ModelError, Tensor};
use crate::numeric::rows::{Finish, Lane, Pass, Reduce, Stages};

/// layernorm: y = (x - mean) / sqrt(var + epsilon) * gamma + beta, var the mean of the
/// squared deviations; rmsnorm: y = x / sqrt(mean(x^2) + epsilon) * gamma (+ beta, 0 by
/// default); scale: y = x * gamma + beta. x is the dequantized input; per-channel gamma
/// and beta are FP32.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Norm {
    pub kind: NormKind,
    pub quant: RowQuant,
    /// epsilon as FP32.
    pub epsilon: u32,
    pub gamma: Vec<u32>,
    pub beta: Vec<u32>,
}

/// Which normalization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormKind {
    Layer,
    Rms,
    /// No statistics: the scale and shift alone.
    Scale,
}

const KEYS: &[&str] = &["scales", "zero_points", "epsilon", "gamma", "beta"];

pub(super) const FORMS: &[Form] = &[
    Form {
        name: "layernorm",
        parse,
        keys: KEYS,
        shared: &[],
        real: true,
        auto: false,
        leaky: false,
    },
    Form {
        name: "rmsnorm",
        parse,
        keys: KEYS,
        shared: &[],
        real: true,
        auto: false,
        leaky: false,
    },
    Form {
        name: "scale",
        parse,
        keys: &["scales", "zero_points", "gamma", "beta"],
        shared: &[],
        real: true,
        auto: false,
        leaky: false,
    },
];

impl Norm {
    /// The row program (README, "layernorm and rmsnorm"), x = (q - z_in) * s_in rounded
    /// once, n the channels and 1/n rounded to FP32:
    /// layernorm: 1. a = (sum x) * (1/n); 2. b = 1 / sqrt((sum (x - a)^2) * (1/n) + eps);
    /// 3. y = ((x - a) * b) * gamma + beta. rmsnorm: 1. b = 1 / sqrt((sum x^2) * (1/n) +
    /// eps); 2. y = (x * b) * gamma + beta. Sums run in the row unit's order (lanes in a
    /// pairwise tree, tiles in turn).
    pub fn passes(&self, channels: usize) -> Vec<Pass> {
        let c = crate::numeric::rows::Consts {
            inv_n: ((1.0 / channels as f64) as f32).to_bits(),
            eps: self.epsilon,
            ..self.quant.consts()
        };
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
        let affine: Vec<Lane> = (0..channels)
            .map(|k| Lane {
                gamma: self.gamma[k],
                beta: self.beta[k],
                ..Lane::default()
            })
            .collect();
        let variance = Stages {
            square: true,
            reduce: Reduce::SumB,
            finish: Finish::RstdB,
            ..read
        };
        let out = Stages {
            norm: true,
            affine: true,
            write: true,
            ..read
        };
        match self.kind {
            NormKind::Rms => return vec![pass(variance, plain), pass(out, affine)],
            NormKind::Scale => {
                let scale = Stages {
                    affine: true,
                    write: true,
                    ..read
                };
                return vec![pass(scale, affine)];
            }
            NormKind::Layer => {}
        }
        vec![
            pass(
                Stages {
                    reduce: Reduce::SumA,
                    finish: Finish::MeanA,
                    ..read
                },
                plain.clone(),
            ),
            pass(
                Stages {
                    centre: true,
                    ..variance
                },
                plain,
            ),
            pass(
                Stages {
                    centre: true,
                    ..out
                },
                affine,
            ),
        ]
    }
}

impl Norm {
    /// Its row program.
    fn work(&self, layer: &Layer) -> RowWork {
        RowWork {
            passes: self.passes(layer.out[2]),
            groups: 1,
        }
    }
}

impl Operator for Norm {
    fn name(&self) -> &'static str {
        match self.kind {
            NormKind::Layer => "layernorm",
            NormKind::Rms => "rmsnorm",
            NormKind::Scale => "scale",
        }
    }

    fn golden(&self, layer: &Layer, inputs: &[&Tensor], rows: usize) -> Tensor {
        rowops::golden(&self.work(layer), layer, inputs[0], rows)
    }

    fn lower(&self, layer: &Layer) -> Lowered {
        Lowered::Rows(self.work(layer))
    }
}

/// `layernorm`, `rmsnorm`, `scale`: `scales`, `zero_points`, `epsilon` (default 1e-5;
/// positive and finite; not for scale), `gamma` (default ones) and `beta` (default zeros):
/// `"random"` or a `.npy` of [channels] float32 values.
fn parse(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let quant = rowops::quant(ctx, a, a.prec.ops().output())?;
    let eps = a.rl.epsilon.unwrap_or(1e-5);
    if !(eps > 0.0 && (eps as f32).is_normal()) {
        return Err(ctx.err(
            &format!("epsilon = {eps}"),
            "epsilon is a positive number that FP32 holds as a normal number",
            "use the model's epsilon, for example 1e-5 or 1e-12",
        ));
    }
    let c = a.shape[2];
    let gamma = rowops::channel_reals(ctx, "gamma", a.rl.gamma.as_deref(), c, 1.0)?;
    let beta = rowops::channel_reals(ctx, "beta", a.rl.beta.as_deref(), c, 0.0)?;
    let op = Norm {
        kind: match a.rl.op.as_str() {
            "rmsnorm" => NormKind::Rms,
            "scale" => NormKind::Scale,
            _ => NormKind::Layer,
        },
        quant,
        epsilon: (eps as f32).to_bits(),
        gamma,
        beta,
    };
    Ok(Parsed {
        op: op.into(),
        out: a.shape,
        inputs: vec![a.src.to_string()],
        prec: a.prec,
    })
}
