//! The golden model: every operator as the README's numeric rules define it, written over
//! the model's layers (not the compiler's tiles or the ISA), with the element arithmetic of
//! `numeric`. A convolution takes, for every output, the passes of the array in the order
//! the hardware accumulates them (input-channel tiles of `rows` channels outermost, then
//! kernel row, then kernel column; a fully-connected layer is a convolution whose kernel
//! covers the whole input), each pass being one column of the array
//! (`Datapath::column`), accumulated with `Datapath::accumulate`, the first initialising the
//! sum; the vector unit's `Datapath::post` turns each output pixel's row into output codes
//! of the output tensor's format. Pooling, add and upsampling are integer operations.

use crate::model::{Layer, Model, Op, Tensor};
use crate::numeric::{int, Format, IntType, PostOps};
use std::collections::HashMap;

/// Run the whole model on an array of `rows` rows (the height of a column pass, which fixes
/// the order of FP32 sums); every tensor by name, the input included.
pub fn run(model: &Model, rows: usize) -> HashMap<String, Tensor> {
    let mut t: HashMap<String, Tensor> = HashMap::new();
    for (name, x) in &model.inputs {
        t.insert(name.clone(), x.clone());
    }
    for l in &model.layers {
        let x = &t[&l.inputs[0]];
        let y = match &l.op {
            Op::Concat => concat(&l.inputs.iter().map(|i| &t[i]).collect::<Vec<_>>()),
            Op::Conv { .. } => conv(x, l, rows),
            Op::MaxPool { .. } | Op::AvgPool { .. } => pool(x, l),
            Op::Add { .. } => add(x, &t[&l.inputs[1]], l),
            Op::Upsample { factor } => upsample(x, *factor, l.out_format),
        };
        t.insert(l.name.clone(), y);
    }
    t
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

/// The input pixel kernel tap `tap` of output pixel `out` reads, or `None` in the zero
/// padding.
pub(crate) fn input_pixel(
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
pub fn conv(x: &Tensor, layer: &Layer, rows: usize) -> Tensor {
    let Op::Conv {
        cout,
        bias,
        requant,
        channel_requant,
        negative_multiplier,
        untied_bias,
        relu,
        clamp,
        ..
    } = &layer.op
    else {
        unreachable!("conv called on {}", layer.op.name())
    };
    let [oh, ow, _] = layer.out;
    let mut acc = conv_accumulate(x, layer, rows);
    // An untied bias is the accumulator's starting value: the products are summed onto it
    // modulo 2^acc_bits.
    let acc_type = layer.prec.ops().acc_type();
    for (a, b) in acc.iter_mut().zip(untied_bias) {
        *a = acc_type.wrap(i128::from(*a) + i128::from(*b));
    }
    let ops = PostOps {
        bias: untied_bias.is_empty().then_some(bias.as_slice()),
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
    if let Op::Conv {
        transposed: true, ..
    } = layer.op
    {
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
pub fn pass_conv_accumulate(x: &Tensor, layer: &Layer, rows: usize) -> Vec<i64> {
    let Op::Conv {
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
    } = &layer.op
    else {
        unreachable!("conv called on {}", layer.op.name())
    };
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
pub fn int_conv_accumulate(x: &Tensor, layer: &Layer) -> Vec<i64> {
    let Op::Conv {
        kh,
        kw,
        stride,
        pad,
        pad_value,
        groups,
        cout,
        weights,
        ..
    } = &layer.op
    else {
        unreachable!("conv called on {}", layer.op.name())
    };
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
pub fn conv_transpose_accumulate(x: &Tensor, layer: &Layer) -> Vec<i64> {
    let Op::Conv {
        kh,
        kw,
        stride,
        pad,
        cout,
        weights,
        ..
    } = &layer.op
    else {
        unreachable!("conv_transpose called on {}", layer.op.name())
    };
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

fn out_type(layer: &Layer) -> IntType {
    layer.out_format.code_type()
}

/// Max-pooling (the largest input of the window that is not padding) and average pooling
/// (the requantized sum of `x - input zero point` over the window, padding counted as
/// zeros of it).
pub fn pool(x: &Tensor, layer: &Layer) -> Tensor {
    let [oh, ow, c] = layer.out;
    let t = out_type(layer);
    let mut y = Tensor::zeros(oh, ow, c, layer.out_format);
    let (k, stride, pad) = match &layer.op {
        Op::MaxPool { k, stride, pad } | Op::AvgPool { k, stride, pad, .. } => (*k, *stride, *pad),
        _ => unreachable!("pool called on {}", layer.op.name()),
    };
    for oy in 0..oh {
        for ox in 0..ow {
            for ch in 0..c {
                let window = (0..k)
                    .flat_map(|ky| (0..k).map(move |kx| (ky, kx)))
                    .filter_map(|tap| input_pixel((oy, ox), tap, stride, pad, (x.h, x.w)))
                    .map(|(iy, ix)| x.at(iy, ix, ch));
                let v = match &layer.op {
                    Op::AvgPool {
                        requant,
                        input_zero,
                        ..
                    } => int::requantize(
                        window
                            .map(|v| i128::from(v) - i128::from(*input_zero))
                            .sum(),
                        *requant,
                        t,
                    ),
                    _ => window
                        .max()
                        .expect("a window holds an input pixel (pad < kernel)"),
                };
                y.set(oy, ox, ch, v);
            }
        }
    }
    y
}

/// y = saturate(requant(a) + b), or the quantized form's combination of a and b (`b` of
/// one pixel read at every pixel), then ReLU (at the output zero point) and the ReLU6 clamp.
pub fn add(a: &Tensor, b: &Tensor, layer: &Layer) -> Tensor {
    let Op::Add {
        requant,
        relu,
        clamp,
        eltwise,
    } = &layer.op
    else {
        unreachable!("add called on {}", layer.op.name())
    };
    let t = out_type(layer);
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

/// Nearest upsampling: every pixel repeated `factor` x `factor` times.
pub fn upsample(x: &Tensor, factor: usize, format: Format) -> Tensor {
    let mut y = Tensor::zeros(x.h * factor, x.w * factor, x.c, format);
    for oy in 0..y.h {
        for ox in 0..y.w {
            for ch in 0..x.c {
                y.set(oy, ox, ch, x.at(oy / factor, ox / factor, ch));
            }
        }
    }
    y
}

#[cfg(test)]
mod tests;
