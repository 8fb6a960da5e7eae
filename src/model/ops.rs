//! One `[[layer]]` of the model file: its name and input, its precision, and the operator's
//! own keys, parsed by one function per operator (the `OPS` table).

use super::data::{bias, Ctx};
use super::quant::{choose, encode_weights};
use super::raw::{Kernel, RawLayer};
use super::types::{layer_precision, ModelTypes};
use super::{Layer, ModelError, Op, Requant, Tensor};
use crate::numeric::int::leaky_multiplier;
use crate::numeric::{Format, IntType, Precision, Slope};

mod eltwise;
mod geometry;
use eltwise::add;
use geometry::{geometry, pad_value, Geometry};

/// What an operator's parser is given.
struct Args<'a> {
    rl: &'a RawLayer,
    prec: Precision,
    auto: bool,
    /// Name and shape of the input tensor.
    src: &'a str,
    shape: [usize; 3],
    /// The model inputs and the earlier layers.
    model_inputs: &'a [(String, Tensor)],
    layers: &'a [Layer],
    /// The model's MX precision, the other choice of an automatic layer.
    mx: Option<Precision>,
    exponent: Option<i32>,
    relu: bool,
    clamp: Option<i64>,
    /// Leaky ReLU's slope on negative values.
    slope: Option<Slope>,
}

/// What it gives back: the operator, the output shape, the inputs (the first is streamed
/// through the array, a second is added) and, for an automatic layer, the precision it got.
struct Parsed {
    op: Op,
    out: [usize; 3],
    inputs: Vec<String>,
    prec: Precision,
}

type OpParser = fn(&mut Ctx, &Args) -> Result<Parsed, ModelError>;

/// The post-processing keys of the convolution-like operators.
const CONV_POST: &[&str] = &[
    "bias",
    "untied_bias",
    "requant",
    "activation",
    "relu6_max",
    "negative_slope",
    "output_type",
];

/// The operators of the model format: name, parser, and the operator-specific keys it
/// takes, its own and shared ones (every layer also takes name, op, input, type and
/// output_exponent). Any other key is an error, so a key that does nothing is never
/// silently accepted.
type OpKeys = (&'static [&'static str], &'static [&'static str]);
const OPS: &[(&str, OpParser, OpKeys)] = &[
    (
        "conv2d",
        conv,
        (
            &[
                "out_channels",
                "kernel",
                "stride",
                "padding",
                "pad_value",
                "groups",
                "weights",
            ],
            CONV_POST,
        ),
    ),
    (
        "conv_transpose",
        conv,
        (
            &["out_channels", "kernel", "stride", "padding", "weights"],
            CONV_POST,
        ),
    ),
    ("fc", conv, (&["out_channels", "weights"], CONV_POST)),
    ("maxpool", pool, (&["kernel", "stride", "padding"], &[])),
    (
        "avgpool",
        pool,
        (
            &["kernel", "stride", "padding", "requant", "zero_points"],
            &[],
        ),
    ),
    (
        "add",
        add,
        (
            &[
                "residual",
                "requant",
                "scale",
                "zero_points",
                "activation",
                "relu6_max",
            ],
            &[],
        ),
    ),
    (
        "mul",
        add,
        (
            &[
                "residual",
                "scale",
                "zero_points",
                "activation",
                "relu6_max",
            ],
            &[],
        ),
    ),
    ("upsample", upsample, (&["factor"], &[])),
    ("concat", concat, (&["inputs"], &[])),
];

pub(super) fn layer(
    ctx: &mut Ctx,
    rl: &RawLayer,
    types: &ModelTypes,
    inputs: &[(String, Tensor)],
    layers: &[Layer],
) -> Result<Layer, ModelError> {
    if inputs.iter().any(|(n, _)| *n == rl.name) || layers.iter().any(|l| l.name == rl.name) {
        return Err(ctx.err(
            "name",
            format!("tensor name {} is already used", rl.name),
            "give every layer its own name",
        ));
    }
    let prev = layers
        .last()
        .map_or(inputs[0].0.as_str(), |l| l.name.as_str());
    // concat names its inputs in `inputs`.
    let first = rl.inputs.as_ref().and_then(|v| v.first());
    let src = rl
        .input
        .as_deref()
        .or(first.map(String::as_str))
        .unwrap_or(prev);
    let shape = shape_of(inputs, layers, src).ok_or_else(|| {
        ctx.err(
            &format!("input = {src}"),
            "the input must name the model input or an earlier layer",
            "use the name of an earlier layer",
        )
    })?;
    check_keys(ctx, rl)?;
    let parse = OPS
        .iter()
        .find(|(name, _, _)| *name == rl.op)
        .map(|(_, p, _)| *p)
        .expect("check_keys accepted the operator");
    let (prec, auto) = layer_precision(ctx, rl, types)?;
    let (relu, clamp, slope) = activation(ctx, rl, prec)?;
    let exponent = match rl.output_exponent {
        None => None,
        Some(e) if (-100..=100).contains(&e) => Some(e as i32),
        Some(e) => {
            return Err(ctx.err(
                &format!("output_exponent = {e}"),
                "output_exponent is between -100 and 100 (the integer output q stands for q * 2^output_exponent)",
                "use an exponent from -100 to 100",
            ))
        }
    };
    let conv_op = matches!(rl.op.as_str(), "conv2d" | "fc" | "conv_transpose");
    if !conv_op && !matches!(prec, Precision::Int(_)) {
        return Err(ctx.err(
            &format!("op = {}", rl.op),
            format!(
                "{} models support conv2d and fc layers (with activation none or relu) so far",
                prec.family()
            ),
            "use type = \"int8\" for networks with pooling, add or upsample layers",
        ));
    }
    let args = Args {
        rl,
        prec,
        auto,
        src,
        shape,
        model_inputs: inputs,
        layers,
        mx: types.mx(),
        exponent,
        relu,
        clamp,
        slope,
    };
    let p = parse(ctx, &args)?;
    ctx.count(&format!("output {:?}", p.out), &p.out)?;
    check_readable(ctx, &p.inputs, layers)?;
    let out_format = match p.op {
        Op::Conv { raw: true, .. } => Format::Int(p.prec.ops().acc_type()),
        _ => p.prec.ops().output(),
    };
    Ok(Layer {
        name: rl.name.clone(),
        inputs: p.inputs,
        op: p.op,
        out: p.out,
        prec: p.prec,
        out_format,
        exponent,
        auto,
    })
}

/// The layer's operator exists and it sets only keys the operator takes.
pub(super) fn check_keys(ctx: &Ctx, rl: &RawLayer) -> Result<(), ModelError> {
    let layer = Some(rl.name.as_str());
    let Some((_, _, (own, shared))) = OPS.iter().find(|(name, _, _)| *name == rl.op) else {
        let names: Vec<&str> = OPS.iter().map(|(n, _, _)| *n).collect();
        return Err(ctx.err_in(
            layer,
            &format!("op = {}", rl.op),
            format!("supported operators: {}", names.join(", ")),
            "use one of those (flatten is implicit: fc takes the HWC flattening of its input)",
        ));
    };
    let stray: Vec<&str> = rl
        .op_keys()
        .into_iter()
        .filter(|k| !own.contains(k) && !shared.contains(k))
        .collect();
    if stray.is_empty() {
        return Ok(());
    }
    Err(ctx.err_in(
        layer,
        stray[0],
        format!(
            "{} {} not apply to op = \"{}\", which takes {} (and name, op, input, type, output_exponent)",
            stray.join(", "),
            if stray.len() == 1 { "does" } else { "do" },
            rl.op,
            own.iter().chain(shared.iter()).copied().collect::<Vec<_>>().join(", ")
        ),
        format!("remove {}", stray.join(", ")),
    ))
}

/// The shape of the model input or of an earlier layer's output.
fn shape_of(inputs: &[(String, Tensor)], layers: &[Layer], name: &str) -> Option<[usize; 3]> {
    if let Some((_, t)) = inputs.iter().find(|(n, _)| n == name) {
        return Some(t.shape());
    }
    layers.iter().find(|l| l.name == name).map(|l| l.out)
}

/// `activation`: none, relu, relu6 with `relu6_max` (an output value of an integer layer),
/// or leaky_relu with `negative_slope` (conv2d and fc).
fn activation(
    ctx: &Ctx,
    rl: &RawLayer,
    prec: Precision,
) -> Result<(bool, Option<i64>, Option<Slope>), ModelError> {
    let out = prec.ops().output().code_type();
    match rl.activation.as_deref() {
        None | Some("none") => Ok((false, None, None)),
        Some("relu") => Ok((true, None, None)),
        Some("leaky_relu") => Ok((false, None, Some(slope(ctx, rl)?))),
        Some("relu6") => match rl.relu6_max {
            Some(m) if out.holds(m) => Ok((true, Some(m), None)),
            Some(m) => Err(ctx.err(
                &format!("relu6_max = {m}"),
                format!("relu6_max is the quantized value of 6.0 and must be a {out} value"),
                format!("use a value from {} to {}", out.min(), out.max()),
            )),
            None => Err(ctx.err(
                "relu6_max",
                "activation = \"relu6\" needs relu6_max, the quantized value of 6.0 (zero_point + round(6 / scale))",
                "add relu6_max = <value>",
            )),
        },
        Some(other) => Err(ctx.err(
            &format!("activation = {other}"),
            "supported activations: none, relu, relu6, leaky_relu (the piecewise-quadratic unit for GeLU, sigmoid and tanh is not implemented yet)",
            "use \"relu\", \"relu6\" or \"leaky_relu\", or remove the key",
        )),
    }
}

/// `negative_slope = { multiplier = M, shift = S }` of a leaky-ReLU layer: the slope
/// M / 2^S, in [0, 1).
fn slope(ctx: &Ctx, rl: &RawLayer) -> Result<Slope, ModelError> {
    if !matches!(rl.op.as_str(), "conv2d" | "fc" | "conv_transpose") {
        return Err(ctx.err(
            "activation = leaky_relu",
            format!(
                "leaky_relu is applied by conv2d and fc layers, not by {}",
                rl.op
            ),
            "move the activation to the convolution before, or use relu",
        ));
    }
    let Some(s) = &rl.negative_slope else {
        return Err(ctx.err(
            "negative_slope",
            "activation = \"leaky_relu\" needs negative_slope, its slope on negative values as multiplier / 2^shift",
            "add negative_slope = { multiplier = 13, shift = 6 } (0.203), or the slope you need",
        ));
    };
    if !(0..=16).contains(&s.shift) || !(0..1i64 << s.shift.clamp(0, 16)).contains(&s.multiplier) {
        return Err(ctx.err(
            &format!(
                "negative_slope = {{ multiplier = {}, shift = {} }}",
                s.multiplier, s.shift
            ),
            "the slope multiplier / 2^shift is in [0, 1): shift is 0..=16 and multiplier 0..2^shift",
            "for a slope a, use shift = 16 and multiplier = round(a * 65536)",
        ));
    }
    Ok(Slope {
        multiplier: s.multiplier as u64,
        shift: s.shift as u32,
    })
}

/// `conv2d` and `fc` (a convolution whose kernel covers the whole input).
fn conv(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let g = geometry(ctx, a)?;
    let cin = a.shape[2];
    let wshape = [g.kh, g.kw, cin / g.groups, g.cout];
    let mut prec = a.prec;
    let (weights, weight_scales, auto_requant) = match prec {
        Precision::Int(p) if !a.auto => {
            let t = p.weight;
            let w = ctx.ints(
                "weights",
                a.rl.weights.as_deref().unwrap_or("random"),
                &wshape,
                (t.min(), t.max()),
            )?;
            (w, Vec::new(), None)
        }
        Precision::Int(p) => {
            let Some(e_out) = a.exponent else {
                return Err(ctx.err(
                    "output_exponent",
                    "an automatic layer needs the fixed scale of its output, q * 2^output_exponent, whichever type the compiler chooses",
                    "add output_exponent = <e>",
                ));
            };
            let Some(Precision::Mx(f)) = a.mx else {
                unreachable!("automatic layers belong to mixed models")
            };
            check_real_layer(ctx, a, Format::Mx(f), cin, &g)?;
            let w = ctx.reals("weights", a.rl.weights.as_deref(), &wshape)?;
            let taps = g.kh * g.kw;
            let c = choose(
                ctx,
                &w,
                (taps, cin, g.cout),
                f,
                p.weight,
                a.layers,
                a.src,
                e_out,
            )?;
            if c.mx {
                prec = Precision::Mx(f);
            }
            (c.codes, c.scales, c.requant)
        }
        _ => {
            let format = prec.ops().weight();
            check_real_layer(ctx, a, format, cin, &g)?;
            let w = ctx.reals("weights", a.rl.weights.as_deref(), &wshape)?;
            let (codes, scales) = encode_weights(&w, g.kh * g.kw, cin, g.cout, format);
            (codes, scales, None)
        }
    };
    let acc = prec.ops().acc_type();
    let tied = match a.rl.bias.as_deref() {
        None => vec![0; g.cout],
        Some(spec) => bias(ctx, "bias", spec, &[g.cout], acc)?,
    };
    let untied_bias = match a.rl.untied_bias.as_deref() {
        None => Vec::new(),
        Some(_) if a.rl.bias.is_some() => {
            return Err(ctx.err(
                "untied_bias",
                "a layer has either one bias per output channel (bias) or one per output pixel and channel (untied_bias)",
                "remove bias, or add it into untied_bias",
            ))
        }
        Some(spec) => bias(ctx, "untied_bias", spec, &g.out, acc)?,
    };
    let default = Requant {
        multiplier: 1,
        shift: 8,
        zero_point: 0,
        half_even: false,
    };
    let (requant, channel_requant) = match auto_requant {
        Some(r) => (r, Vec::new()),
        None => ctx.conv_requant(a.rl.requant.as_ref(), default, g.cout)?,
    };
    if !channel_requant.is_empty() && (a.slope.is_some() || !matches!(prec, Precision::Int(_))) {
        return Err(ctx.err(
            "requant",
            "per-channel requantization runs on integer layers without leaky ReLU",
            "give one multiplier and shift, or drop the leaky ReLU",
        ));
    }
    let pad_value = pad_value(ctx, a, prec, g.pad)?;
    let raw = raw_output(ctx, a)?;
    // Its accumulator values are written unchanged.
    let requant = if raw { Requant::IDENTITY } else { requant };
    let transposed = a.rl.op == "conv_transpose";
    if transposed && (a.auto || !matches!(prec, Precision::Int(_))) {
        return Err(ctx.err(
            "op = conv_transpose",
            "conv_transpose runs on the integer path so far",
            "use type = \"int8\" for this layer",
        ));
    }
    let op = Op::Conv {
        transposed,
        kh: g.kh,
        kw: g.kw,
        stride: g.stride,
        pad: g.pad,
        pad_value,
        groups: g.groups,
        cout: g.cout,
        weights,
        weight_scales,
        bias: tied,
        untied_bias,
        requant,
        channel_requant,
        negative_multiplier: a.slope.map(|s| leaky_multiplier(requant.multiplier, s)),
        relu: a.relu,
        clamp: a.clamp,
        raw,
    };
    Ok(Parsed {
        op,
        out: g.out,
        inputs: vec![a.src.to_string()],
        prec,
    })
}

/// `output_type = "accumulator"` of a convolution: it writes `acc + bias` saturated to the
/// accumulator type, so it has no requantization or activation, runs on the integer path,
/// and is read by no layer (`check_readable`).
fn raw_output(ctx: &Ctx, a: &Args) -> Result<bool, ModelError> {
    let Some(t) = a.rl.output_type.as_deref() else {
        return Ok(false);
    };
    let key = format!("output_type = {t}");
    if t != "accumulator" {
        return Err(ctx.err(
            &key,
            "a layer's output_type is \"accumulator\": it writes its accumulator values (x = acc + bias, saturated to the accumulator type) instead of requantizing them; the model-level output_type sets the requantized type",
            "use output_type = \"accumulator\", or set output_type at the top of the model",
        ));
    }
    if a.auto || !matches!(a.prec, Precision::Int(_)) {
        return Err(ctx.err(
            &key,
            "only integer layers write their accumulator",
            "remove output_type, or use an integer type for this layer",
        ));
    }
    let post = [
        ("requant", a.rl.requant.is_some()),
        ("activation", a.rl.activation.is_some()),
        ("relu6_max", a.rl.relu6_max.is_some()),
        ("negative_slope", a.rl.negative_slope.is_some()),
        ("output_exponent", a.rl.output_exponent.is_some()),
    ];
    if let Some((k, _)) = post.iter().find(|(_, set)| *set) {
        return Err(ctx.err(
            k,
            format!("a layer with {key} writes its accumulator unchanged, so it takes no {k}"),
            format!("remove {k}, or remove output_type to requantize"),
        ));
    }
    Ok(true)
}

/// No layer reads a tensor of accumulator values (`output_type = "accumulator"`): the
/// datapath reads activations only.
fn check_readable(ctx: &Ctx, inputs: &[String], layers: &[Layer]) -> Result<(), ModelError> {
    for i in inputs {
        if layers
            .iter()
            .any(|l| l.name == *i && matches!(l.op, Op::Conv { raw: true, .. }))
        {
            return Err(ctx.err(
                &format!("input = {i}"),
                format!("{i} has output_type = \"accumulator\": its accumulator values are an output of the model, which no layer can read"),
                format!("remove output_type from {i} to requantize it, or read another tensor"),
            ));
        }
    }
    Ok(())
}

/// The layer rules of the real-valued datapaths (MX, floating point, posit): no integer
/// post-processing (bias, requantization, ReLU6), activation ReLU or none, groups = 1, and
/// for MX, channels in whole blocks.
fn check_real_layer(
    ctx: &Ctx,
    a: &Args,
    format: Format,
    cin: usize,
    g: &Geometry,
) -> Result<(), ModelError> {
    let family = Precision::of(format, IntType::new(true, 32)).family();
    let what = if let Format::Mx(_) = format {
        "MX layers accumulate in FP32 and quantize their outputs to MX blocks"
    } else {
        "these layers accumulate in FP32 and convert their outputs to the element format"
    };
    if g.groups != 1 {
        let why = if format.block_scaled() {
            "MX blocks run along the input channels of a convolution; ".to_string()
        } else {
            String::new()
        };
        return Err(ctx.err(
            &format!("groups = {}", g.groups),
            format!(
                "{why}grouped and depthwise convolutions are not supported for {family} layers yet"
            ),
            "use groups = 1, or type = \"int8\"",
        ));
    }
    if let Some(bs) = format.block_size().map(|b| b as usize) {
        if !cin.is_multiple_of(bs) || !g.cout.is_multiple_of(bs) {
            return Err(ctx.err(
                "out_channels",
                format!("an MX layer's input ({cin}) and output ({}) channels must be multiples of the block size {bs}", g.cout),
                format!("use out_channels = {}", g.cout.div_ceil(bs) * bs),
            ));
        }
    }
    for (key, present) in [
        ("bias", a.rl.bias.is_some()),
        ("untied_bias", a.rl.untied_bias.is_some()),
        ("requant", a.rl.requant.is_some()),
        ("relu6_max", a.rl.relu6_max.is_some()),
    ] {
        if present {
            return Err(ctx.err(
                key,
                format!("{what}: bias, requantization and ReLU6 are integer-path operations"),
                format!("remove {key}"),
            ));
        }
    }
    if a.clamp.is_some() || a.slope.is_some() {
        return Err(ctx.err(
            "activation",
            format!("{family} layers support activation = \"relu\" or none"),
            "use activation = \"relu\"",
        ));
    }
    Ok(())
}

/// `maxpool` and `avgpool`: a square window, padding below the kernel.
fn pool(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let [h, w, c] = a.shape;
    let k = match &a.rl.kernel {
        Some(Kernel::Square(k)) => {
            ctx.positive("kernel", Some(*k), None, super::MAX_POOL_KERNEL as i64)?
        }
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
    let op = if a.rl.op == "maxpool" {
        Op::MaxPool { k, stride, pad }
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
        Op::AvgPool {
            k,
            stride,
            pad,
            requant: ctx.requant(a.rl.requant.as_ref(), default)?,
            input_zero: eltwise::avgpool_zero(ctx, a)?,
        }
    };
    Ok(Parsed {
        op,
        out,
        inputs: vec![a.src.to_string()],
        prec: a.prec,
    })
}

/// `upsample`: nearest, by `factor` (default 2).
fn upsample(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let [h, w, c] = a.shape;
    let f = ctx.positive("factor", a.rl.factor, Some(2), 8)?;
    Ok(Parsed {
        op: Op::Upsample { factor: f },
        out: [h * f, w * f, c],
        inputs: vec![a.src.to_string()],
        prec: a.prec,
    })
}

/// `concat`: `inputs = [a, b, ...]`, two or more model inputs or earlier layers of the same
/// height, width and format, joined along the channels in that order.
fn concat(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
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
    if !matches!(a.prec, Precision::Int(_)) {
        return Err(ctx.err(
            "op = concat",
            "concat runs on the integer path",
            "use an integer type for the model",
        ));
    }
    Ok(Parsed {
        op: Op::Concat,
        out: [a.shape[0], a.shape[1], c],
        inputs: names,
        prec: a.prec,
    })
}
