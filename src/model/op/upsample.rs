//! `upsample`: nearest, by a whole factor; lowered to the upsampling schedule.

use super::{Args, Form, Operator, Parsed};
use crate::model::data::Ctx;
use crate::model::lower::Lowered;
use crate::model::{Layer, ModelError, Tensor};

/// Every pixel repeated `factor` x `factor` times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upsample {
    pub factor: usize,
}

pub(super) const FORMS: &[Form] = &[Form {
    name: "upsample",
    parse,
    keys: &["factor"],
    shared: &[],
    real: false,
    auto: false,
    leaky: false,
}];

impl Operator for Upsample {
    fn name(&self) -> &'static str {
        "upsample"
    }

    fn golden(&self, layer: &Layer, inputs: &[&Tensor], _rows: usize) -> Tensor {
        let (x, f) = (inputs[0], self.factor);
        let mut y = Tensor::zeros(x.h * f, x.w * f, x.c, layer.out_format);
        for oy in 0..y.h {
            for ox in 0..y.w {
                for ch in 0..x.c {
                    y.set(oy, ox, ch, x.at(oy / f, ox / f, ch));
                }
            }
        }
        y
    }

    fn lower(&self, _layer: &Layer) -> Lowered {
        Lowered::Upsample {
            factor: self.factor,
        }
    }

    /// Repeats of values that are not negative.
    fn non_negative(&self, inputs: &[bool]) -> bool {
        inputs[0]
    }
}

/// `upsample`: nearest, by `factor` (default 2).
fn parse(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let [h, w, c] = a.shape;
    let f = ctx.positive("factor", a.rl.factor, Some(2), 8)?;
    Ok(Parsed {
        op: Upsample { factor: f }.into(),
        out: [h * f, w * f, c],
        inputs: vec![a.src.to_string()],
        prec: a.prec,
    })
}
