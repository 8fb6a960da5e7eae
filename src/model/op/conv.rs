//! `conv2d`, `conv_transpose` and `fc` (a convolution whose kernel covers the whole
//! input): parsing, the golden model (the array's passes in the order the hardware
//! accumulates them: input-channel tiles of `rows` channels outermost, then kernel row,
//! then kernel column, each pass one column of the array, `Datapath::column`, accumulated
//! with `Datapath::accumulate`, the first initialising the sum; then the vector unit's
//! `Datapath::post` of each output pixel's row), and its lowering: a weighted window.

use super::geometry::{geometry, pad_value, Geometry};
use super::{Args, Form, Op, Operator, Parsed, CONV_POST};
use crate::model::data::{bias, Ctx};
use crate::model::lower::{window_macs, Lowered, Post, Stencil, Taps};
use crate::model::quant::{choose, encode_weights};
use crate::model::{Layer, ModelError, Requant, Tensor};
use crate::numeric::int::leaky_multiplier;
use crate::numeric::{Format, IntType, PostOps, Precision};

/// A convolution (fully-connected layers are convolutions whose kernel covers the input).
/// Transposed (`conv_transpose`): every input pixel (iy, ix) adds its products to output
/// (iy * stride - pad + ky, ix * stride - pad + kx); groups = 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conv {
    pub transposed: bool,
    pub kh: usize,
    pub kw: usize,
    pub stride: usize,
    pub pad: usize,
    /// The input element the padding pixels read (an input zero point; 0 for most
    /// layers).
    pub pad_value: i64,
    pub groups: usize,
    pub cout: usize,
    /// Weight codes, [kh][kw][cin/groups][cout].
    pub weights: Vec<i64>,
    /// MX: the scale of tap (ky, kx), input-channel block b and output channel co is
    /// `weight_scales[((ky * kw + kx) * (cin / block) + b) * cout + co]`; empty otherwise.
    pub weight_scales: Vec<u8>,
    pub bias: Vec<i64>,
    /// One bias per output pixel and channel, [oh][ow][cout] (the codec-avatar
    /// decoder's untied bias); empty when the bias is per channel.
    pub untied_bias: Vec<i64>,
    pub requant: Requant,
    /// Per-channel requantization: output channel o's (multiplier, shift), replacing
    /// requant's (whose zero point all share); empty when it is per tensor.
    pub channel_requant: Vec<(u64, u32)>,
    /// Leaky ReLU: the requantization multiplier of negative values
    /// (`numeric::int::leaky_multiplier` of requant's multiplier and the slope).
    pub negative_multiplier: Option<u64>,
    pub relu: bool,
    /// ReLU6: the upper clamp, as a quantized output value.
    pub clamp: Option<i64>,
    /// `output_type = "accumulator"`: the output is `acc + bias` saturated to the
    /// accumulator type (requant is the identity, no activation); no layer reads it.
    pub raw: bool,
}

const CONV_KEYS: &[&str] = &[
    "out_channels",
    "kernel",
    "stride",
    "padding",
    "pad_value",
    "groups",
    "weights",
];

pub(super) const FORMS: &[Form] = &[
    Form {
        name: "conv2d",
        parse,
        keys: CONV_KEYS,
        shared: CONV_POST,
        real: true,
        auto: true,
        leaky: true,
    },
    Form {
        name: "conv_transpose",
        parse,
        keys: &["out_channels", "kernel", "stride", "padding", "weights"],
        shared: CONV_POST,
        real: true,
        auto: false,
        leaky: true,
    },
    Form {
        name: "fc",
        parse,
        keys: &["out_channels", "weights"],
        shared: CONV_POST,
        real: true,
        auto: true,
        leaky: true,
    },
];

impl Operator for Conv {
    fn name(&self) -> &'static str {
        if self.transposed {
            "conv_transpose"
        } else {
            "conv2d"
        }
    }

    fn golden(&self, layer: &Layer, inputs: &[&Tensor], rows: usize) -> Tensor {
        golden_conv(inputs[0], layer, rows)
    }

    fn lower(&self, _layer: &Layer) -> Lowered {
        Lowered::Stencil(Stencil {
            transposed: self.transposed,
            kh: self.kh,
            kw: self.kw,
            stride: self.stride,
            pad: self.pad,
            pad_value: self.pad_value,
            cout: self.cout,
            taps: Taps::Weighted {
                groups: self.groups,
                weights: self.weights.clone(),
                weight_scales: self.weight_scales.clone(),
            },
            post: Post {
                bias: self.bias.clone(),
                untied_bias: self.untied_bias.clone(),
                requant: self.requant,
                channel_requant: self.channel_requant.clone(),
                negative_multiplier: self.negative_multiplier,
                relu: self.relu,
                clamp: self.clamp,
                raw: self.raw,
                combine: None,
            },
        })
    }

    fn macs(&self, layer: &Layer, cin: usize) -> u64 {
        window_macs(layer.out, self.kh, self.kw, cin / self.groups)
    }

    /// ReLU (or ReLU6) at a zero point that is not negative, without a leaky slope: the
    /// maximum with the zero point.
    fn non_negative(&self, _inputs: &[bool]) -> bool {
        self.relu && self.requant.zero_point >= 0 && self.negative_multiplier.is_none()
    }

    fn round_half_even(&mut self) {
        self.requant.half_even = true;
    }

    fn writes_accumulator(&self) -> bool {
        self.raw
    }

    /// At an integer-to-MX boundary the integer output is symmetric (MX elements have no
    /// zero point) and has no ReLU6.
    fn converts(&self, layer: &Layer) -> Result<(), [String; 3]> {
        let int_producer = matches!(layer.prec, Precision::Int(_));
        if int_producer && self.requant.zero_point != 0 {
            return Err([
                format!("requant.zero_point = {}", self.requant.zero_point),
                "an integer layer whose output becomes MX elements is symmetric: MX elements have no zero point".into(),
                "use zero_point = 0".into(),
            ]);
        }
        if int_producer && self.clamp.is_some() {
            return Err([
                "activation".into(),
                "relu6 is not supported at an integer-to-MX boundary".into(),
                "use activation = \"relu\"".into(),
            ]);
        }
        Ok(())
    }
}

/// The convolution of a layer this module's golden model runs on.
fn conv_of(layer: &Layer) -> &Conv {
    match &layer.op {
        Op::Conv(c) => c,
        other => unreachable!("a convolution's golden model called on {}", other.name()),
    }
}

/// `conv2d` and `fc` (a convolution whose kernel covers the whole input).
fn parse(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
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
    let tied = match (a.rl.bias.as_deref(), prec) {
        (None, _) => vec![0; g.cout],
        (Some(spec), Precision::Float(_) | Precision::Mx(_)) => float_bias(ctx, spec, g.cout)?,
        (Some(spec), _) => bias(ctx, "bias", spec, &[g.cout], acc)?,
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
    let op = Conv {
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
        op: op.into(),
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
    // A small float or MX layer's vector unit adds an FP32 bias (`float_bias`), except at
    // an MX layer's boundary to an integer layer (its integer output path has no FP32 add).
    if let (Format::Mx(_), Some(_), Some(e)) = (format, &a.rl.bias, a.exponent) {
        return Err(ctx.err(
            "bias",
            format!("an MX layer with output_exponent = {e} writes integers at a fixed scale for the integer layer after it, a path with no FP32 bias"),
            "remove bias (or output_exponent, and give the next layer an MX type)",
        ));
    }
    let float_bias = matches!(format, Format::Float(_) | Format::Mx(_));
    for (key, present) in [
        ("bias", a.rl.bias.is_some() && !float_bias),
        ("untied_bias", a.rl.untied_bias.is_some()),
        ("requant", a.rl.requant.is_some()),
        ("relu6_max", a.rl.relu6_max.is_some()),
    ] {
        if present {
            return Err(ctx.err(
                key,
                match float_bias {
                    true => format!("{what}: requantization and ReLU6 are integer-path operations"),
                    false => format!(
                        "{what}: bias, requantization and ReLU6 are integer-path operations"
                    ),
                },
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

/// The bias of a small float or MX layer (FP8, BF16, MXINT8, MXINT4): `"random"` (seeded normal values) or a
/// `.npy` of float32 values of shape [cout], each finite; the vector unit adds it to the
/// FP32 accumulator value, so it is held as FP32 bits (a subnormal flushed to zero).
fn float_bias(ctx: &mut Ctx, spec: &str, cout: usize) -> Result<Vec<i64>, ModelError> {
    let v = ctx.reals("bias", Some(spec), &[cout])?;
    if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
        return Err(ctx.err(
            &format!("bias = {spec}"),
            format!("{spec} holds {bad}; a bias is finite"),
            "export finite values",
        ));
    }
    Ok(v.iter()
        .map(|x| i64::from(crate::numeric::fp32::flush(x.to_bits())))
        .collect())
}

/// The input pixel kernel tap `tap` of output pixel `out` reads, or `None` in the zero
/// padding.
pub fn input_pixel(
    out: (usize, usize),
    tap: (usize, usize),
    stride: usize,
    pad: usize,
    (h, w): (usize, usize),
) -> Option<(usize, usize)> {
    let iy = (out.0 * stride + tap.0).checked_sub(pad)?;
    let ix = (out.1 * stride + tap.1).checked_sub(pad)?;
    (iy < h && ix < w).then_some((iy, ix))
}

/// A convolution: the accumulator value of every output (`conv_accumulate`), then the
/// vector unit's post-processing of each output pixel's row.
fn golden_conv(x: &Tensor, layer: &Layer, rows: usize) -> Tensor {
    let Conv {
        cout,
        bias,
        requant,
        channel_requant,
        negative_multiplier,
        untied_bias,
        relu,
        clamp,
        ..
    } = conv_of(layer);
    let [oh, ow, _] = layer.out;
    let mut acc = conv_accumulate(x, layer, rows);
    // An untied bias is the accumulator's starting value: the products are summed onto it
    // modulo 2^acc_bits.
    let acc_type = layer.prec.ops().acc_type();
    for (a, b) in acc.iter_mut().zip(untied_bias) {
        *a = acc_type.wrap(i128::from(*a) + i128::from(*b));
    }
    let ops = PostOps {
        // (A bias of zeros is not added: the vector unit adds none, and in FP32 adding +0
        // would turn a -0 into +0.)
        bias: (untied_bias.is_empty() && bias.iter().any(|b| *b != 0)).then_some(bias.as_slice()),
        requant: *requant,
        per_lane: (!channel_requant.is_empty()).then_some(channel_requant.as_slice()),
        negative_multiplier: *negative_multiplier,
        relu: *relu,
        clamp: *clamp,
        fixed_scale: layer.fixed_scale(),
        ..PostOps::default()
    };
    let mut y = Tensor::zeros(oh, ow, *cout, layer.out_format);
    y.scales.clear();
    for (p, row) in acc.chunks(*cout).enumerate() {
        let out = layer.prec.ops().post(row, &ops, layer.out_format);
        y.data[p * cout..(p + 1) * cout].copy_from_slice(&out.codes);
        y.scales.extend(out.scales);
    }
    y
}

/// The accumulator values of a convolution (HWC), in the order of the module docs. A
/// padding pixel reads the layer's `pad_value` (an integer layer's input zero point; zero
/// codes and block scale 0 otherwise); channels past the last fill the last
/// tile with zero codes; input-channel tiles that hold no channel of an output's group are
/// not run, and in the others the channels of other groups have zero weights.
pub fn conv_accumulate(x: &Tensor, layer: &Layer, rows: usize) -> Vec<i64> {
    if conv_of(layer).transposed {
        return conv_transpose_accumulate(x, layer);
    }
    // Integer sums are exact modulo 2^acc_bits, so the order of the passes cannot change
    // them: the same sums by the definition, much faster (whole networks).
    if let crate::numeric::Precision::Int(_) = layer.prec {
        return int_conv_accumulate(x, layer);
    }
    pass_conv_accumulate(x, layer, rows)
}

/// `conv_accumulate` pass by pass, in the array's order (any precision).
pub(crate) fn pass_conv_accumulate(x: &Tensor, layer: &Layer, rows: usize) -> Vec<i64> {
    let Conv {
        kh,
        kw,
        stride,
        pad,
        pad_value,
        groups,
        cout,
        weights,
        weight_scales,
        ..
    } = conv_of(layer);
    let p = layer.prec.ops();
    let [oh, ow, _] = layer.out;
    let cin = x.c;
    let (cin_g, cout_g) = (cin / groups, cout / groups);
    let tiles = cin.div_ceil(rows);
    let (mut a, mut w) = (vec![0i64; rows], vec![0i64; rows]);
    let mut out = Vec::with_capacity(oh * ow * cout);
    for oy in 0..oh {
        for ox in 0..ow {
            for co in 0..*cout {
                let group = (co / cout_g) * cin_g..(co / cout_g + 1) * cin_g;
                let mut acc: Option<i64> = None;
                for ict in 0..tiles {
                    let tile = ict * rows..(ict * rows + rows).min(cin);
                    if tile.end <= group.start || group.end <= tile.start {
                        continue;
                    }
                    for ky in 0..*kh {
                        for kx in 0..*kw {
                            let pixel = input_pixel((oy, ox), (ky, kx), *stride, *pad, (x.h, x.w));
                            for r in 0..rows {
                                let ci = ict * rows + r;
                                let live = group.contains(&ci);
                                w[r] = if live {
                                    weights[((ky * kw + kx) * cin_g + ci - group.start) * cout + co]
                                } else {
                                    0
                                };
                                a[r] = match pixel {
                                    Some((iy, ix)) if live => x.at(iy, ix, ci),
                                    None if live => *pad_value,
                                    _ => 0,
                                };
                            }
                            let sa = pixel.map_or(0, |(iy, ix)| x.scale(iy, ix, ict));
                            let sb = if weight_scales.is_empty() {
                                0
                            } else {
                                weight_scales[((ky * kw + kx) * tiles + ict) * cout + co]
                            };
                            let v = p.column(&a, &w, (sa, sb));
                            acc = Some(acc.map_or(v, |s| p.accumulate(s, v)));
                        }
                    }
                }
                out.push(acc.expect("a convolution has at least one tap"));
            }
        }
    }
    out
}

/// The accumulator values of an integer convolution (HWC) by its definition: output
/// (oy, ox, co) sums x[iy][ix][ci] * w[ky][kx][ci - group start][co] over the taps inside
/// the input and the input channels of co's group, and `pad_value` times the weights of
/// the taps outside it, modulo 2^acc_bits.
pub(crate) fn int_conv_accumulate(x: &Tensor, layer: &Layer) -> Vec<i64> {
    let Conv {
        kh,
        kw,
        stride,
        pad,
        pad_value,
        groups,
        cout,
        weights,
        ..
    } = conv_of(layer);
    let [oh, ow, _] = layer.out;
    let acc = layer.prec.ops().acc_type();
    let (cin_g, cout_g) = (x.c / groups, cout / groups);
    // Products of at most 16-bit codes, at most 2^27 of them: no i64 overflow.
    let mut sums = vec![0i64; *cout];
    let mut out = Vec::with_capacity(oh * ow * cout);
    for oy in 0..oh {
        for ox in 0..ow {
            sums.iter_mut().for_each(|s| *s = 0);
            for ky in 0..*kh {
                for kx in 0..*kw {
                    let pixel = input_pixel((oy, ox), (ky, kx), *stride, *pad, (x.h, x.w));
                    if pixel.is_none() && *pad_value == 0 {
                        continue;
                    }
                    for g in 0..*groups {
                        let cos = g * cout_g..(g + 1) * cout_g;
                        for cl in 0..cin_g {
                            let a =
                                pixel.map_or(*pad_value, |(iy, ix)| x.at(iy, ix, g * cin_g + cl));
                            if a == 0 {
                                continue;
                            }
                            let row = ((ky * kw + kx) * cin_g + cl) * cout;
                            for (s, w) in sums[cos.clone()]
                                .iter_mut()
                                .zip(&weights[row + cos.start..row + cos.end])
                            {
                                *s += a * w;
                            }
                        }
                    }
                }
            }
            out.extend(sums.iter().map(|&s| acc.wrap(i128::from(s))));
        }
    }
    out
}

/// The accumulator values of a transposed convolution (HWC, integer path), by its
/// definition: output (oy, ox) sums x[iy][ix][ci] * w[ky][kx][ci][co] over every input pixel
/// and tap with iy * stride - pad + ky = oy and ix * stride - pad + kx = ox, modulo
/// 2^acc_bits.
fn conv_transpose_accumulate(x: &Tensor, layer: &Layer) -> Vec<i64> {
    let Conv {
        kh,
        kw,
        stride,
        pad,
        cout,
        weights,
        ..
    } = conv_of(layer);
    let [oh, ow, _] = layer.out;
    let acc = layer.prec.ops().acc_type();
    let mut sums = vec![0i128; oh * ow * cout];
    for iy in 0..x.h {
        for ix in 0..x.w {
            for ky in 0..*kh {
                for kx in 0..*kw {
                    let oy = (iy * stride + ky).checked_sub(*pad).filter(|&o| o < oh);
                    let ox = (ix * stride + kx).checked_sub(*pad).filter(|&o| o < ow);
                    let (Some(oy), Some(ox)) = (oy, ox) else {
                        continue;
                    };
                    for ci in 0..x.c {
                        let a = i128::from(x.at(iy, ix, ci));
                        for co in 0..*cout {
                            let w = weights[((ky * kw + kx) * x.c + ci) * cout + co];
                            sums[(oy * ow + ox) * cout + co] += a * i128::from(w);
                        }
                    }
                }
            }
        }
    }
    sums.into_iter().map(|s| acc.wrap(s)).collect()
}
