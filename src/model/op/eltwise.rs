//! `add` and `mul`: the input combined element-wise with a second tensor (the residual:
//! of the input's shape, or one pixel broadcast over the map), plainly or in the quantized
//! form's fixed point; lowered to a window of one tap whose post-processing combines.

use super::{shape_of, Args, Form, Operator, Parsed};
use crate::model::data::Ctx;
use crate::model::lower::{Lowered, Post, Stencil, Taps};
use crate::model::{Combine, Layer, ModelError, Requant, Tensor};
use crate::numeric::{int, IntType, Precision};

/// y = saturate(requant(a) + b), or in the quantized form (`eltwise`, the layers `add`
/// with `scale` and `zero_points`, and `mul`) the combination of a and b it defines; b
/// may be one pixel, broadcast over the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Add {
    pub requant: Requant,
    pub relu: bool,
    pub clamp: Option<i64>,
    pub eltwise: Option<Eltwise>,
}

/// The quantized form of `add` and `mul` (ONNX's quantized Add and Mul, with the ratios of
/// the scales in fixed point): y = `combine.apply(x, input_zero, b)`, the weighted sum or
/// the product of `x - input_zero` and `b - combine.operand_zero`, shifted, rounded (the
/// model's `rounding`) and offset by `combine.output_zero`, where ReLU then clamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eltwise {
    pub combine: Combine,
    pub input_zero: i64,
}

const KEYS: &[&str] = &[
    "residual",
    "requant",
    "scale",
    "zero_points",
    "activation",
    "relu6_max",
];

pub(super) const FORMS: &[Form] = &[
    Form {
        name: "add",
        parse,
        keys: KEYS,
        shared: &[],
        real: true,
        auto: false,
        leaky: false,
    },
    Form {
        name: "mul",
        parse,
        keys: &[
            "residual",
            "scale",
            "zero_points",
            "activation",
            "relu6_max",
        ],
        shared: &[],
        real: false,
        auto: false,
        leaky: false,
    },
];

impl Operator for Add {
    fn name(&self) -> &'static str {
        match self.eltwise {
            Some(e) if e.combine.product => "mul",
            _ => "add",
        }
    }

    fn golden(&self, layer: &Layer, inputs: &[&Tensor], _rows: usize) -> Tensor {
        self.combine(inputs[0], inputs[1], layer)
    }

    /// A window of one tap (the identity pass) whose post-processing combines the
    /// requantized value with the residual. The quantized form run on its own has the
    /// bias `-input zero point` and a requantization with zero point z, which turn the
    /// identity pass's x back into x, whose zero point z the combination then takes.
    fn lower(&self, layer: &Layer) -> Lowered {
        let c = layer.out[2];
        let (requant, bias, combine) = match self.eltwise {
            Some(e) => (
                Requant {
                    zero_point: e.input_zero,
                    half_even: self.requant.half_even,
                    ..Requant::IDENTITY
                },
                match e.input_zero {
                    0 => Vec::new(),
                    z => vec![-z; c],
                },
                Some(e.combine),
            ),
            None => (self.requant, Vec::new(), None),
        };
        Lowered::Stencil(Stencil {
            transposed: false,
            kh: 1,
            kw: 1,
            stride: 1,
            pad: 0,
            pad_value: 0,
            cout: c,
            taps: Taps::Sum,
            post: Post {
                bias,
                relu: self.relu,
                clamp: self.clamp,
                combine,
                ..Post::requant(requant)
            },
        })
    }

    /// ReLU (the maximum with the output zero point) at a zero point not negative.
    fn non_negative(&self, _inputs: &[bool]) -> bool {
        let zero = self
            .eltwise
            .map_or(self.requant.zero_point, |e| e.combine.output_zero);
        self.relu && zero >= 0
    }

    fn round_half_even(&mut self) {
        self.requant.half_even = true;
    }
}

/// `add`: y = saturate(requant(x) + residual), ReLU after; with `scale` or `zero_points`
/// (and always for `mul`) the quantized form (`Eltwise`). The residual has the input's shape
/// or is one pixel of its channels, broadcast over the map.
fn parse(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
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
    match a.prec {
        Precision::Int(_) => {}
        Precision::Float(_) => float_add(ctx, a)?,
        Precision::Mx(_) if a.rl.op == "add" => float_add(ctx, a)?,
        _ => {
            return Err(ctx.err(
                &format!("op = {}", a.rl.op),
                format!(
                    "{} is an integer, FP8 or BF16 layer{}, not {}",
                    a.rl.op,
                    if a.rl.op == "add" { " (or MX)" } else { "" },
                    a.prec.name()
                ),
                "give the layer an integer, fp8 or bf16 type",
            ))
        }
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
    let op = Add {
        requant: ctx.requant(a.rl.requant.as_ref(), Requant::IDENTITY)?,
        relu: a.relu,
        clamp: a.clamp,
        eltwise,
    };
    Ok(Parsed {
        op: op.into(),
        out: a.shape,
        inputs: vec![a.src.to_string(), other],
        prec: a.prec,
    })
}

/// The rules of a small float layer's `add` (FP8, BF16) and an MX layer's: y = x +
/// residual in FP32, ReLU after, rounded once to the format (an MX row quantized as a
/// block); no requantization, scales, zero points or ReLU6 (`mul` is an integer form). A
/// float add runs in the vector unit of the convolution that computes x (the compiler fuses
/// them, `fuse::rules`); an MX add runs on its own (x through the array's identity pass is
/// its value in FP32, to which the vector unit adds the residual's).
fn float_add(ctx: &Ctx, a: &Args) -> Result<(), ModelError> {
    if crate::numeric::rows::Elem::of(a.prec.ops().output()).is_none() {
        return Err(ctx.err(
            "op = add",
            format!(
                "a float add reads FP8 or BF16 elements, not {}",
                a.prec.name()
            ),
            "give the layer an integer, fp8 or bf16 type",
        ));
    }
    let given = [
        ("requant", a.rl.requant.is_some()),
        ("scale", a.rl.scale.is_some()),
        ("zero_points", a.rl.zero_points.is_some()),
        ("relu6_max", a.clamp.is_some()),
    ];
    if let Some((k, _)) = given.iter().find(|(_, g)| *g) {
        return Err(ctx.err(
            k,
            format!(
                "a {} add sums the values themselves (x + residual in FP32, rounded once): it has no {k}",
                a.prec.name()
            ),
            format!("remove {k}"),
        ));
    }
    Ok(())
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
    super::zero_point_keys(ctx, a.rl, &a.rl.op, &["input", "residual", "output"])?;
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

/// y = saturate(requant(a) + b), or the quantized form's combination of a and b (`b` of
/// one pixel read at every pixel), then ReLU (at the output zero point) and the ReLU6 clamp.
impl Add {
    fn combine(&self, a: &Tensor, b: &Tensor, layer: &Layer) -> Tensor {
        let Add {
            requant,
            relu,
            clamp,
            eltwise,
        } = self;
        match layer.prec {
            Precision::Float(f) => return float_sum(a, b, *relu, f),
            Precision::Mx(f) => return mx_sum(a, b, *relu, f),
            _ => {}
        }
        let t = layer.out_format.code_type();
        let mut y = Tensor::zeros(a.h, a.w, a.c, layer.out_format);
        let zero = eltwise.map_or(requant.zero_point, |e| e.combine.output_zero);
        for (i, v) in y.data.iter_mut().enumerate() {
            let bv = b.data[if b.h * b.w == 1 { i % a.c } else { i }];
            let s = match eltwise {
                Some(e) => e
                    .combine
                    .apply(a.data[i], e.input_zero, bv, requant.half_even, t),
                None => {
                    let q = int::requantize(i128::from(a.data[i]), *requant, t);
                    t.saturate(i128::from(q) + i128::from(bv))
                }
            };
            *v = if *relu {
                int::activate(s, zero, *clamp, t)
            } else {
                s
            };
        }
        y
    }
}

/// An MX add: each element's value plus the residual's (`b` of one pixel read at every
/// pixel), both `mx::element_fp32`, in FP32 (one rounding), ReLU, each block of the row
/// quantized (`mx::quantize_fp32_row`).
fn mx_sum(a: &Tensor, b: &Tensor, relu: bool, f: crate::numeric::MxFormat) -> Tensor {
    use crate::numeric::{fp32, mx};
    let mut y = a.clone();
    let bs = f.block_size as usize;
    let blocks = a.c / bs;
    for p in 0..a.h * a.w {
        let bp = if b.h * b.w == 1 { 0 } else { p };
        for k in 0..blocks {
            let vals: Vec<u32> = (0..bs)
                .map(|l| {
                    let ch = k * bs + l;
                    let x =
                        mx::element_fp32(a.data[p * a.c + ch], a.scales[p * blocks + k], f.elem);
                    let r =
                        mx::element_fp32(b.data[bp * b.c + ch], b.scales[bp * blocks + k], f.elem);
                    fp32::add(x, r)
                })
                .collect();
            let (scale, codes) = mx::quantize_fp32_row(&vals, relu, f.elem);
            y.scales[p * blocks + k] = scale;
            for (l, q) in codes.into_iter().enumerate() {
                y.data[p * a.c + k * bs + l] = i64::from(q);
            }
        }
    }
    y
}

/// A float add: each element's value plus the residual's (`b` of one pixel read at every
/// pixel) in FP32, ReLU, rounded to the format.
fn float_sum(a: &Tensor, b: &Tensor, relu: bool, f: crate::numeric::MiniFloat) -> Tensor {
    use crate::numeric::{fp32, FloatElement};
    let mut y = a.clone();
    for (i, v) in y.data.iter_mut().enumerate() {
        let bv = b.data[if b.h * b.w == 1 { i % a.c } else { i }];
        let s = fp32::add(f.value_fp32(*v as u32), f.value_fp32(bv as u32));
        let s = if relu { fp32::relu(s) } else { s };
        *v = i64::from(f.encode_fp32(s));
    }
    y
}
