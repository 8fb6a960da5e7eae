//! The geometry of a convolution or pool: kernel, stride, padding (and the value the
//! padding reads), groups, and the output shape.

use super::Args;
use crate::model::data::Ctx;
use crate::model::raw::Kernel;
use crate::model::ModelError;
use crate::numeric::Precision;

/// The largest kernel side and stride a convolution or pool takes (ViT's 16x16 patches at
/// stride 16; larger ones too, up to 32).
const MAX_KERNEL: i64 = 32;

fn kernel(ctx: &Ctx, k: &Option<Kernel>) -> Result<(usize, usize), ModelError> {
    match k {
        Some(Kernel::Square(k)) => {
            let k = ctx.positive("kernel", Some(*k), None, MAX_KERNEL)?;
            Ok((k, k))
        }
        Some(Kernel::Rect(v)) if v.len() == 2 => Ok((
            ctx.positive("kernel", Some(v[0]), None, MAX_KERNEL)?,
            ctx.positive("kernel", Some(v[1]), None, MAX_KERNEL)?,
        )),
        _ => Err(ctx.err(
            "kernel",
            "conv2d needs kernel = K or [KH, KW]",
            "add kernel = 3",
        )),
    }
}

/// The geometry of a convolution: kernel, stride, padding, groups, output channels, and
/// the output shape.
pub(super) struct Geometry {
    pub kh: usize,
    pub kw: usize,
    pub stride: usize,
    pub pad: usize,
    pub groups: usize,
    pub cout: usize,
    pub out: [usize; 3],
}

pub(super) fn geometry(ctx: &Ctx, a: &Args) -> Result<Geometry, ModelError> {
    let rl = a.rl;
    let [h, w, c] = a.shape;
    let fc = rl.op == "fc";
    let cout = ctx.positive("out_channels", rl.out_channels, None, 65536)?;
    let (kh, kw) = if fc { (h, w) } else { kernel(ctx, &rl.kernel)? };
    let stride = if fc {
        1
    } else {
        ctx.positive("stride", rl.stride, Some(1), MAX_KERNEL)?
    };
    if !fc && rl.padding.is_some_and(|p| !(0..=16).contains(&p)) {
        return Err(ctx.err("padding", "padding is 0..=16", "use a padding from 0 to 16"));
    }
    let pad = if fc {
        0
    } else {
        rl.padding.unwrap_or(0) as usize
    };
    let groups = if fc {
        1
    } else {
        ctx.positive("groups", rl.groups, Some(1), 65536)?
    };
    if c % groups != 0 || cout % groups != 0 {
        return Err(ctx.err(
            &format!("groups = {groups}"),
            format!("groups must divide the input channels ({c}) and out_channels ({cout})"),
            "use a divisor of both (groups = channels is a depthwise convolution)",
        ));
    }
    if rl.op != "conv_transpose" && (h + 2 * pad < kh || w + 2 * pad < kw) {
        return Err(ctx.err(
            "kernel",
            format!("the {kh}x{kw} kernel is larger than the padded {h}x{w} input"),
            "use a smaller kernel or more padding",
        ));
    }
    let out = if rl.op == "conv_transpose" {
        transposed_out(ctx, [h, w], (kh, kw), stride, pad)?
    } else {
        [
            (h + 2 * pad - kh) / stride + 1,
            (w + 2 * pad - kw) / stride + 1,
        ]
    };
    let out = [out[0], out[1], cout];
    Ok(Geometry {
        kh,
        kw,
        stride,
        pad,
        groups,
        cout,
        out,
    })
}

/// The output size of a transposed convolution, (in - 1) * stride - 2 * pad + kernel, when
/// the geometry is one the stride-phase lowering runs: kernel >= stride (every output
/// phase has a tap) and pad < kernel.
fn transposed_out(
    ctx: &Ctx,
    [h, w]: [usize; 2],
    (kh, kw): (usize, usize),
    stride: usize,
    pad: usize,
) -> Result<[usize; 2], ModelError> {
    if kh < stride || kw < stride {
        return Err(ctx.err(
            "kernel",
            format!("a conv_transpose kernel ({kh}x{kw}) must be at least the stride ({stride}), so that every output pixel has a tap"),
            format!("use kernel >= {stride}"),
        ));
    }
    if pad >= kh.min(kw) {
        return Err(ctx.err(
            &format!("padding = {pad}"),
            "a conv_transpose padding crops the output and must be less than the kernel",
            format!("use a padding below {}", kh.min(kw)),
        ));
    }
    let size = |i: usize, k: usize| {
        ((i - 1) * stride + k)
            .checked_sub(2 * pad)
            .filter(|&o| o > 0)
    };
    match (size(h, kh), size(w, kw)) {
        (Some(oh), Some(ow)) => Ok([oh, ow]),
        _ => Err(ctx.err(
            &format!("padding = {pad}"),
            format!("the padding crops the whole {h}x{w} input's output"),
            "use a smaller padding",
        )),
    }
}

/// A `conv2d`'s `pad_value`: the input element its padding pixels read (0 without the
/// key), on an integer layer with padding, in the range of its input type.
pub(super) fn pad_value(
    ctx: &Ctx,
    a: &Args,
    prec: Precision,
    pad: usize,
) -> Result<i64, ModelError> {
    let Some(v) = a.rl.pad_value else {
        return Ok(0);
    };
    let what = format!("pad_value = {v}");
    let t = match prec {
        Precision::Int(p) if !a.auto => p.input,
        _ => {
            return Err(ctx.err(
                &what,
                "pad_value applies to integer layers (an input zero point)",
                "remove pad_value",
            ))
        }
    };
    if pad == 0 {
        return Err(ctx.err(
            &what,
            "pad_value is the value of the padding pixels, and the layer has no padding",
            "remove pad_value, or add padding",
        ));
    }
    if v < t.min() || v > t.max() {
        return Err(ctx.err(
            &what,
            format!(
                "pad_value is an input element: {} to {} for {t}",
                t.min(),
                t.max()
            ),
            format!("use a pad_value from {} to {}", t.min(), t.max()),
        ));
    }
    Ok(v)
}
