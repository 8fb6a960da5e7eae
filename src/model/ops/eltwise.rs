//! `add` and `mul`: the residual's shape (the input's, or one pixel broadcast) and the
//! quantized form's scale and zero points; and an average pool's input zero point.

use super::{shape_of, Args, Parsed};
use crate::model::data::Ctx;
use crate::model::{Combine, Eltwise, ModelError, Op, Requant};
use crate::numeric::{IntType, Precision};

/// `add`: y = saturate(requant(x) + residual), ReLU after; with `scale` or `zero_points`
/// (and always for `mul`) the quantized form (`Eltwise`). The residual has the input's shape
/// or is one pixel of its channels, broadcast over the map.
pub(super) fn add(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let other = a.rl.residual.clone().ok_or_else(|| {
        ctx.err(
            "residual",
            format!("{} needs residual = <tensor>", a.rl.op),
            "name the tensor to combine with the input",
        )
    })?;
    let Some(os) = shape_of(a.model_inputs, a.layers, &other) else {
        return Err(ctx.err(
            &format!("residual = {other}"),
            "residual must name an earlier tensor",
            "use the name of an earlier layer",
        ));
    };
    if os != a.shape && os != [1, 1, a.shape[2]] {
        return Err(ctx.err(
            "residual",
            format!("shapes differ: {:?} and {:?}", a.shape, os),
            format!(
                "combine tensors of the same shape, or a residual of one pixel [1, 1, {}] (broadcast over the map)",
                a.shape[2]
            ),
        ));
    }
    let quantized = a.rl.op == "mul" || a.rl.scale.is_some() || a.rl.zero_points.is_some();
    let eltwise = if quantized {
        if a.rl.requant.is_some() {
            return Err(ctx.err(
                "requant",
                "the quantized add takes scale and zero_points instead of requant",
                "move the zero point to zero_points.output and the scale to scale",
            ));
        }
        Some(eltwise(ctx, a)?)
    } else {
        None
    };
    let op = Op::Add {
        requant: ctx.requant(a.rl.requant.as_ref(), Requant::IDENTITY)?,
        relu: a.relu,
        clamp: a.clamp,
        eltwise,
    };
    Ok(Parsed {
        op,
        out: a.shape,
        inputs: vec![a.src.to_string(), other],
        prec: a.prec,
    })
}

/// The quantized form of `add` and `mul`: `scale = { input, residual, shift }` (add; default
/// 1, 1, 0) or `{ multiplier, shift }` (mul; default 1, 0), and `zero_points = { input,
/// residual, output }` (default 0), each within what the vector instruction holds.
fn eltwise(ctx: &Ctx, a: &Args) -> Result<Eltwise, ModelError> {
    let product = a.rl.op == "mul";
    let Precision::Int(p) = a.prec else {
        return Err(ctx.err(
            &format!("op = {}", a.rl.op),
            "the quantized add and mul are integer layers",
            "give the layer an integer type",
        ));
    };
    let s = a.rl.scale.as_ref();
    let z = a.rl.zero_points.as_ref();
    let (own, other) = if product {
        ("multiplier", ["input", "residual"])
    } else {
        ("input", ["multiplier", "multiplier"])
    };
    let given = |k: &str| match k {
        "input" => s.and_then(|s| s.input),
        "residual" => s.and_then(|s| s.residual),
        _ => s.and_then(|s| s.multiplier),
    };
    if let Some(k) = other.iter().find(|k| given(k).is_some()) {
        return Err(ctx.err(
            &format!("scale.{k}"),
            match product {
                true => "mul's scale is { multiplier, shift }",
                false => "add's scale is { input, residual, shift }",
            },
            format!("remove scale.{k}"),
        ));
    }
    let (max_w, max_s) = crate::isa::combine_limits();
    let weight = |k: &str| -> Result<i64, ModelError> {
        let v = given(k).unwrap_or(1);
        if (-max_w - 1..=max_w).contains(&v) {
            Ok(v)
        } else {
            Err(ctx.err(
                &format!("scale.{k} = {v}"),
                format!(
                    "a weight is a signed integer from {} to {max_w}",
                    -max_w - 1
                ),
                "use a smaller weight and a smaller shift",
            ))
        }
    };
    let shift = s.and_then(|s| s.shift).unwrap_or(0);
    if !(0..=max_s).contains(&shift) {
        return Err(ctx.err(
            &format!("scale.shift = {shift}"),
            format!("shift is 0..={max_s}"),
            format!("use 0..={max_s}"),
        ));
    }
    let zero = |k: &str, v: Option<i64>, t: IntType| -> Result<i64, ModelError> {
        let v = v.unwrap_or(0);
        if !t.holds(v) {
            return Err(ctx.err(
                &format!("zero_points.{k} = {v}"),
                format!("a zero point of {t} is {} to {}", t.min(), t.max()),
                format!("use a zero point from {} to {}", t.min(), t.max()),
            ));
        }
        Ok(v)
    };
    let operand_zero = zero("residual", z.and_then(|z| z.residual), p.output)?;
    if crate::isa::pad_pattern(operand_zero, p.output.bits, p.output.signed).is_none() {
        let fits = IntType::new(p.output.signed, crate::isa::PAD_VALUE_BITS);
        return Err(ctx.err(
            &format!("zero_points.residual = {operand_zero}"),
            format!(
                "the vector instruction holds the residual's zero point in {} bits",
                crate::isa::PAD_VALUE_BITS
            ),
            format!(
                "use a zero point from {} to {} ({fits}), or requantize the residual to zero point 0",
                fits.min(),
                fits.max()
            ),
        ));
    }
    Ok(Eltwise {
        combine: Combine {
            product,
            weight: weight(own)?,
            operand_weight: if product { 0 } else { weight("residual")? },
            shift: shift as u32,
            operand_zero,
            output_zero: zero("output", z.and_then(|z| z.output), p.output)?,
        },
        input_zero: zero("input", z.and_then(|z| z.input), p.input)?,
    })
}

/// An average pool's `zero_points = { input = z }` (default 0): the input's zero point,
/// subtracted from every tap (padding reads it); the output's is the requantization's.
pub(super) fn avgpool_zero(ctx: &Ctx, a: &Args) -> Result<i64, ModelError> {
    let Some(z) = a.rl.zero_points.as_ref() else {
        return Ok(0);
    };
    if let Some((k, _)) = [("residual", z.residual), ("output", z.output)]
        .into_iter()
        .find(|(_, v)| v.is_some())
    {
        return Err(ctx.err(
            &format!("zero_points.{k}"),
            "an average pool's zero_points has only input (the output's is requant.zero_point)",
            format!("remove zero_points.{k}"),
        ));
    }
    let Precision::Int(p) = a.prec else {
        return Err(ctx.err(
            "zero_points",
            "an input zero point is for integer layers",
            "remove zero_points",
        ));
    };
    let v = z.input.unwrap_or(0);
    if !p.input.holds(v) {
        return Err(ctx.err(
            &format!("zero_points.input = {v}"),
            format!(
                "a zero point of {} is {} to {}",
                p.input,
                p.input.min(),
                p.input.max()
            ),
            format!(
                "use a zero point from {} to {}",
                p.input.min(),
                p.input.max()
            ),
        ));
    }
    Ok(v)
}
