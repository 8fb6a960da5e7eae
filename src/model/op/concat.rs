//! `concat`: tensors of the same height, width and format joined along the channels;
//! lowered to nothing (the compiler stores the operands in place as views of one tensor).

use super::{shape_of, Args, Form, Operator, Parsed};
use crate::model::data::Ctx;
use crate::model::lower::Lowered;
use crate::model::{Layer, ModelError, Tensor};

/// The inputs joined along the channels, in order (same height, width and format).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concat;

pub(super) const FORMS: &[Form] = &[Form {
    name: "concat",
    parse,
    keys: &["inputs"],
    shared: &[],
    real: false,
    auto: false,
    leaky: false,
}];

impl Operator for Concat {
    fn name(&self) -> &'static str {
        "concat"
    }

    fn golden(&self, _layer: &Layer, inputs: &[&Tensor], _rows: usize) -> Tensor {
        concat(inputs)
    }

    fn lower(&self, _layer: &Layer) -> Lowered {
        Lowered::Concat
    }

    /// Values that are not negative, joined.
    fn non_negative(&self, inputs: &[bool]) -> bool {
        inputs.iter().all(|n| *n)
    }

    /// Every operand is read as the layer's input.
    fn reads_as_input(&self, _k: usize) -> bool {
        true
    }
}

/// `concat`: `inputs = [a, b, ...]`, two or more model inputs or earlier layers of the same
/// height, width and format, joined along the channels in that order.
fn parse(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    if a.rl.input.is_some() {
        return Err(ctx.err(
            "input",
            "concat names the tensors it joins in inputs = [...], not input",
            "write inputs = [\"a\", \"b\"] and remove input",
        ));
    }
    let names = a.rl.inputs.clone().unwrap_or_default();
    if names.len() < 2 {
        return Err(ctx.err(
            &format!("inputs = {names:?}"),
            "concat joins two or more tensors",
            "list at least two tensors in inputs",
        ));
    }
    let mut c = 0;
    for n in &names {
        let Some(s) = shape_of(a.model_inputs, a.layers, n) else {
            return Err(ctx.err(
                &format!("inputs = {names:?}"),
                format!("{n} is neither a model input nor an earlier layer"),
                "name model inputs or earlier layers",
            ));
        };
        if s[..2] != a.shape[..2] {
            return Err(ctx.err(
                &format!("inputs = {names:?}"),
                format!(
                    "concat joins along the channels, so every input has the same height and width; {} is {}x{}, {n} is {}x{}",
                    names[0], a.shape[0], a.shape[1], s[0], s[1]
                ),
                "concat tensors of the same height and width",
            ));
        }
        c += s[2];
    }
    Ok(Parsed {
        op: Concat.into(),
        out: [a.shape[0], a.shape[1], c],
        inputs: names,
        prec: a.prec,
    })
}

/// Tensors of the same height, width and format joined along the channels, in order (MX
/// block scales move with their blocks).
pub fn concat(xs: &[&Tensor]) -> Tensor {
    let (h, w, format) = (xs[0].h, xs[0].w, xs[0].format);
    let c: usize = xs.iter().map(|x| x.c).sum();
    let mut y = Tensor::zeros(h, w, c, format);
    let blocks = |x: &Tensor| x.scales.len().checked_div(x.h * x.w).unwrap_or(0);
    let mut data = Vec::with_capacity(h * w * c);
    let mut scales = Vec::new();
    for p in 0..h * w {
        for x in xs {
            data.extend_from_slice(&x.data[p * x.c..(p + 1) * x.c]);
            let b = blocks(x);
            scales.extend_from_slice(&x.scales[p * b..(p + 1) * b]);
        }
    }
    y.data = data;
    y.scales = scales;
    y
}
