//! What the row unit's operators (softmax, the norms, the spline functions) share: the
//! real-valued quantization of their integer input and output, read from the layer's
//! `scales` and `zero_points`, and their golden model, `numeric::rows::run` over the
//! array's lanes.

use super::Args;
use crate::model::data::Ctx;
use crate::model::lower::RowWork;
use crate::model::{Layer, ModelError, Tensor};
use crate::numeric::rows::{self, Consts, Pass};
use crate::numeric::{Format, Precision};

/// The input's real value is `in_scale * (q - in_zero)`; an output y is written as
/// `round(y * out_scale) + out_zero`, saturated. The scales are FP32 bit patterns:
/// `in_scale` the given input scale rounded to FP32, `out_scale` the reciprocal of the
/// given output scale computed in double precision and rounded to FP32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowQuant {
    pub in_scale: u32,
    pub in_zero: i64,
    pub out_scale: u32,
    pub out_zero: i64,
    /// The given output scale, in double precision (softmax folds its logarithm in).
    pub out_scale_real: u64,
}

impl RowQuant {
    /// The constants of a pass that reads the input as its operand: its scale and zero
    /// point, and the output scale (1/n and epsilon as the operator sets them).
    pub fn consts(&self) -> Consts {
        Consts {
            opnd_scale: self.in_scale,
            opnd_zero: (self.in_zero as f32).to_bits(),
            out_scale: self.out_scale,
            ..Consts::default()
        }
    }

    pub fn output_scale(&self) -> f64 {
        f64::from_bits(self.out_scale_real)
    }
}

/// `scales = { input, output }` (required; positive, and FP32-representable as normal
/// numbers with a normal reciprocal) and `zero_points = { input, output }` (default 0; each
/// within its tensor's integer type).
///
/// A float layer (FP8, BF16), a posit layer or an MX layer has no scales or zero points: its
/// elements (an MX block's with its scale) are the values.
pub(super) fn quant(ctx: &Ctx, a: &Args, out: Format) -> Result<RowQuant, ModelError> {
    let op = &a.rl.op;
    match a.prec {
        Precision::Int(_) => {}
        Precision::Float(_) | Precision::Mx(_) | Precision::Posit(_)
            if rows::Elem::of(out).is_some() =>
        {
            return float_quant(ctx, a)
        }
        _ => {
            return Err(ctx.err(
                &format!("op = {op}"),
                format!(
                    "{op} runs on the row unit, which reads and writes integer, FP8 (E4M3, E5M2), BF16, posit and MX integer tensors, not {}",
                    a.prec.name()
                ),
                "give the layer an integer, fp8, bf16, posit8 or mxint8 type",
            ))
        }
    }
    let Some(s) = &a.rl.scales else {
        return Err(ctx.err(
            "scales",
            format!("{op} needs scales = {{ input = S, output = S }}: the real value of an integer q is S * (q - zero point)"),
            "add scales = { input = 0.05, output = 0.0039 } with your tensors' scales",
        ));
    };
    let normal = |v: f64| {
        let f = v as f32;
        f.is_normal() && f > 0.0 && (1.0 / v as f32).is_normal()
    };
    let scale = |k: &str, v: Option<f64>| -> Result<f64, ModelError> {
        match v {
            Some(v) if normal(v) => Ok(v),
            Some(v) => Err(ctx.err(
                &format!("scales.{k} = {v}"),
                "a scale is a positive number that FP32 holds as a normal number, and so does its reciprocal (about 1e-38 to 1e38)",
                "use the tensor's quantization scale",
            )),
            None => Err(ctx.err(
                &format!("scales.{k}"),
                format!("{op} needs both scales.input and scales.output"),
                format!("add scales.{k}"),
            )),
        }
    };
    let (si, so) = (scale("input", s.input)?, scale("output", s.output)?);
    super::zero_point_keys(ctx, a.rl, op, &["input", "output"])?;
    let z = a.rl.zero_points.as_ref();
    let zero = |k: &str, v: Option<i64>, t: crate::numeric::IntType| match v.unwrap_or(0) {
        v if t.holds(v) => Ok(v),
        v => Err(ctx.err(
            &format!("zero_points.{k} = {v}"),
            format!("the {k} zero point is a value of {t}"),
            format!("use a value from {} to {}", t.min(), t.max()),
        )),
    };
    let in_type = a.prec.ops().input().code_type();
    Ok(RowQuant {
        in_scale: (si as f32).to_bits(),
        in_zero: zero("input", z.and_then(|z| z.input), in_type)?,
        out_scale: ((1.0 / so) as f32).to_bits(),
        out_zero: zero("output", z.and_then(|z| z.output), out.code_type())?,
        out_scale_real: so.to_bits(),
    })
}

/// The quantization of a float, posit or MX layer: none (scales 1, zero points 0); `scales` and
/// `zero_points` are refused.
fn float_quant(ctx: &Ctx, a: &Args) -> Result<RowQuant, ModelError> {
    let op = &a.rl.op;
    let given = [
        ("scales", a.rl.scales.is_some()),
        ("zero_points", a.rl.zero_points.is_some()),
    ];
    if let Some((k, _)) = given.iter().find(|(_, g)| *g) {
        return Err(ctx.err(
            k,
            format!(
                "a {} {op} reads and writes the values themselves: it has no {k}",
                a.prec.name()
            ),
            format!("remove {k}"),
        ));
    }
    let one = 1f32.to_bits();
    Ok(RowQuant {
        in_scale: one,
        in_zero: 0,
        out_scale: one,
        out_zero: 0,
        out_scale_real: 1f64.to_bits(),
    })
}

/// A per-channel vector of real parameters (`gamma`, `beta`): `default` for every channel
/// when the key is absent, else `"random"` (seeded normal values) or a `.npy` of float32
/// values of shape [channels], each rounded to FP32 and finite.
pub(super) fn channel_reals(
    ctx: &mut Ctx,
    key: &str,
    spec: Option<&str>,
    channels: usize,
    default: f32,
) -> Result<Vec<u32>, ModelError> {
    let Some(spec) = spec else {
        return Ok(vec![default.to_bits(); channels]);
    };
    let v = ctx.reals(&format!("{key} = {spec}"), Some(spec), &[channels])?;
    if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
        return Err(ctx.err(
            &format!("{key} = {spec}"),
            format!("{spec} holds {bad}; the parameters are finite"),
            "export finite values",
        ));
    }
    Ok(v.iter().map(|x| x.to_bits()).collect())
}

/// The golden model of a row operator: its row program (what it lowers to) over `x` (the
/// operand; the source +0) on `lanes` lanes (an MX tensor's block: the Design's array
/// width), `numeric::rows::run` on each of the program's equal groups of channels, into a
/// tensor of the layer's output format.
pub(super) fn golden(work: &RowWork, layer: &Layer, x: &Tensor, lanes: usize) -> Tensor {
    let (passes, groups) = (&work.passes, work.groups);
    let mut y = Tensor::zeros(x.h, x.w, x.c, layer.out_format);
    let e = rows::Elem::of(layer.out_format).expect("a row layer's format is checked at parse");
    let lanes = layer
        .out_format
        .block_size()
        .map_or(lanes, |b| b as usize)
        .max(1);
    let (pixels, cg) = (x.h * x.w, x.c / groups);
    // Blocks (channel tiles) of the whole tensor and of a group.
    let (blocks, tg) = (x.c.div_ceil(lanes), cg.div_ceil(lanes));
    for g in 0..groups {
        let part: Vec<Pass> = passes
            .iter()
            .map(|p| Pass {
                lanes: p.lanes[g * cg..(g + 1) * cg].to_vec(),
                ..p.clone()
            })
            .collect();
        let operand: Vec<i64> = (0..pixels)
            .flat_map(|p| x.data[p * x.c + g * cg..p * x.c + (g + 1) * cg].to_vec())
            .collect();
        let scales: Vec<u8> = match x.scales.is_empty() {
            true => Vec::new(),
            false => (0..pixels)
                .flat_map(|p| x.scales[p * blocks + g * tg..p * blocks + (g + 1) * tg].to_vec())
                .collect(),
        };
        let src = vec![0; operand.len()];
        let (out, out_scales) = rows::run(&part, &src, (&operand, &scales), (pixels, cg, lanes), e);
        for p in 0..pixels {
            y.data[p * x.c + g * cg..p * x.c + (g + 1) * cg]
                .copy_from_slice(&out[p * cg..(p + 1) * cg]);
            if !out_scales.is_empty() {
                y.scales[p * blocks + g * tg..p * blocks + (g + 1) * tg]
                    .copy_from_slice(&out_scales[p * tg..(p + 1) * tg]);
            }
        }
    }
    y
}
