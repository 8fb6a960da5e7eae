//! `maxpool` and `avgpool`: a square window over each channel, the largest input that is
//! not padding, or the requantized sum of `x - input zero point` (padding counted as zeros
//! of it); lowered to a window of maxima or sums.

use super::{input_pixel, Args, Form, Op, Operator, Parsed};
use crate::model::data::Ctx;
use crate::model::lower::{Lowered, Post, Stencil, Taps};
use crate::model::raw::Kernel;
use crate::model::{Layer, ModelError, Requant, Tensor};
use crate::numeric::{int, Precision};

/// The largest input of each k x k window; `pad` rows and columns around the input are
/// padding, which never counts (ONNX MaxPool's pads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaxPool {
    pub k: usize,
    pub stride: usize,
    pub pad: usize,
}

/// The requantized sum of `x - input_zero` over each k x k window; padding counts as zeros
/// of it (ONNX AveragePool with count_include_pad = 1 when the multiplier divides by k * k).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvgPool {
    pub k: usize,
    pub stride: usize,
    pub pad: usize,
    pub requant: Requant,
    pub input_zero: i64,
}

pub(super) const MAX_FORMS: &[Form] = &[Form {
    name: "maxpool",
    parse,
    keys: &["kernel", "stride", "padding"],
    shared: &[],
    real: false,
    auto: false,
    leaky: false,
}];

pub(super) const AVG_FORMS: &[Form] = &[Form {
    name: "avgpool",
    parse,
    keys: &["kernel", "stride", "padding", "requant", "zero_points"],
    shared: &[],
    real: false,
    auto: false,
    leaky: false,
}];

impl Operator for MaxPool {
    fn name(&self) -> &'static str {
        "maxpool"
    }

    fn golden(&self, layer: &Layer, inputs: &[&Tensor], _rows: usize) -> Tensor {
        pool(inputs[0], layer, (self.k, self.stride, self.pad), None)
    }

    fn lower(&self, layer: &Layer) -> Lowered {
        Lowered::Stencil(Stencil {
            transposed: false,
            kh: self.k,
            kw: self.k,
            stride: self.stride,
            pad: self.pad,
            pad_value: 0,
            cout: layer.out[2],
            taps: Taps::Max,
            post: Post::requant(Requant::IDENTITY),
        })
    }

    /// The maximum of values that are not negative.
    fn non_negative(&self, inputs: &[bool]) -> bool {
        inputs[0]
    }
}

impl Operator for AvgPool {
    fn name(&self) -> &'static str {
        "avgpool"
    }

    fn golden(&self, layer: &Layer, inputs: &[&Tensor], _rows: usize) -> Tensor {
        let window = (self.k, self.stride, self.pad);
        pool(
            inputs[0],
            layer,
            window,
            Some((self.requant, self.input_zero)),
        )
    }

    /// A window of sums whose padding reads the input zero point, with the bias `-k^2 z`
    /// (the window's sum of `x - z`).
    fn lower(&self, layer: &Layer) -> Lowered {
        let c = layer.out[2];
        let z = self.input_zero;
        let bias = match z {
            0 => Vec::new(),
            _ => vec![-((self.k * self.k) as i64) * z; c],
        };
        Lowered::Stencil(Stencil {
            transposed: false,
            kh: self.k,
            kw: self.k,
            stride: self.stride,
            pad: self.pad,
            pad_value: z,
            cout: c,
            taps: Taps::Sum,
            post: Post {
                bias,
                ..Post::requant(self.requant)
            },
        })
    }

    /// The requantized sum of values that are not negative is at least its zero point.
    fn non_negative(&self, inputs: &[bool]) -> bool {
        self.requant.zero_point >= 0 && self.input_zero == 0 && inputs[0]
    }

    fn round_half_even(&mut self) {
        self.requant.half_even = true;
    }
}

/// `maxpool` and `avgpool`: a square window, padding below the kernel.
fn parse(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let [h, w, c] = a.shape;
    let k = match &a.rl.kernel {
        Some(Kernel::Square(k)) => ctx.positive(
            "kernel",
            Some(*k),
            None,
            crate::model::MAX_POOL_KERNEL as i64,
        )?,
        _ => {
            return Err(ctx.err(
                "kernel",
                "pooling needs a square kernel = K",
                "add kernel = 2",
            ))
        }
    };
    let stride = ctx.positive("stride", a.rl.stride, Some(k as i64), 8)?;
    let pad = a.rl.padding.unwrap_or(0);
    if !(0..k as i64).contains(&pad) {
        return Err(ctx.err(
            &format!("padding = {pad}"),
            format!("a pooling padding is 0 up to the kernel - 1 ({}), so every window holds an input pixel", k - 1),
            format!("use a padding from 0 to {}", k - 1),
        ));
    }
    let pad = pad as usize;
    if h + 2 * pad < k || w + 2 * pad < k {
        return Err(ctx.err(
            "kernel",
            format!("the {k}x{k} window is larger than the {h}x{w} input and its padding"),
            "use a smaller window",
        ));
    }
    let out = [
        (h + 2 * pad - k) / stride + 1,
        (w + 2 * pad - k) / stride + 1,
        c,
    ];
    let op: Op = if a.rl.op == "maxpool" {
        MaxPool { k, stride, pad }.into()
    } else {
        // Default: divide by k*k with a 16-bit fixed-point multiplier (a 1x1 window is
        // the identity, whose multiplier 2^16 would not fit).
        let n = (k * k) as u64;
        let default = if n == 1 {
            Requant::IDENTITY
        } else {
            Requant {
                multiplier: ((1u64 << 16) + n / 2) / n,
                shift: 16,
                zero_point: 0,
                half_even: false,
            }
        };
        AvgPool {
            k,
            stride,
            pad,
            requant: ctx.requant(a.rl.requant.as_ref(), default)?,
            input_zero: avgpool_zero(ctx, a)?,
        }
        .into()
    };
    Ok(Parsed {
        op,
        out,
        inputs: vec![a.src.to_string()],
        prec: a.prec,
    })
}

/// An average pool's `zero_points = { input = z }` (default 0): the input's zero point,
/// subtracted from every tap (padding reads it); the output's is the requantization's.
fn avgpool_zero(ctx: &Ctx, a: &Args) -> Result<i64, ModelError> {
    let Some(z) = a.rl.zero_points.as_ref() else {
        return Ok(0);
    };
    super::zero_point_keys(ctx, a.rl, "avgpool", &["input"])?;
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

/// Max-pooling (the largest input of the window that is not padding) and average pooling
/// (the requantized sum of `x - input zero point` over the window, padding counted as
/// zeros of it).
fn pool(
    x: &Tensor,
    layer: &Layer,
    window: (usize, usize, usize),
    avg: Option<(Requant, i64)>,
) -> Tensor {
    let [oh, ow, c] = layer.out;
    let t = layer.out_format.code_type();
    let mut y = Tensor::zeros(oh, ow, c, layer.out_format);
    let (k, stride, pad) = window;
    for oy in 0..oh {
        for ox in 0..ow {
            for ch in 0..c {
                let window = (0..k)
                    .flat_map(|ky| (0..k).map(move |kx| (ky, kx)))
                    .filter_map(|tap| input_pixel((oy, ox), tap, stride, pad, (x.h, x.w)))
                    .map(|(iy, ix)| x.at(iy, ix, ch));
                let v = match avg {
                    Some((requant, input_zero)) => int::requantize(
                        window.map(|v| i128::from(v) - i128::from(input_zero)).sum(),
                        requant,
                        t,
                    ),
                    None => window
                        .max()
                        .expect("a window holds an input pixel (pad < kernel)"),
                };
                y.set(oy, ox, ch, v);
            }
        }
    }
    y
}
