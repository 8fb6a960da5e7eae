//! The golden model: every operator as the hardware computes it, written directly from the
//! numeric rules in the README (integer products, accumulation modulo 2^acc_bits, bias added
//! exactly, requantization rounding half up, saturation), independently of the compiler and
//! of the ISA interpreter.

use crate::design::{IntType, MxFormat};
use crate::model::{Layer, Model, Op, Requant, Tensor};
use crate::numeric::{fp32, mx};
use std::collections::HashMap;

/// Saturate to the range of `t`.
pub fn saturate(v: i128, t: IntType) -> i64 {
    v.clamp(i128::from(t.min()), i128::from(t.max())) as i64
}

/// Two's-complement wrap of `v` to `bits` bits.
pub fn wrap(v: i128, bits: u32) -> i64 {
    let m = v.rem_euclid(1i128 << bits);
    if m >= 1i128 << (bits - 1) {
        (m - (1i128 << bits)) as i64
    } else {
        m as i64
    }
}

/// q = saturate(floor((x * multiplier + 2^(shift-1)) / 2^shift) + zero_point)
pub fn requantize(x: i128, r: Requant, t: IntType) -> i64 {
    let p = x * i128::from(r.multiplier);
    let rounded = if r.shift == 0 {
        p
    } else {
        (p + (1i128 << (r.shift - 1))).div_euclid(1i128 << r.shift)
    };
    saturate(rounded + i128::from(r.zero_point), t)
}

/// ReLU in the quantized domain (max with the zero point), then the ReLU6 clamp if any.
fn activate(q: i64, r: Requant, clamp: Option<i64>, t: IntType) -> i64 {
    let q = q.max(saturate(i128::from(r.zero_point), t));
    match clamp {
        Some(hi) => q.min(hi),
        None => q,
    }
}

/// The input pixel kernel tap `tap` of output pixel `out` reads, or `None` in the zero
/// padding.
fn input_pixel(
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

pub fn conv(x: &Tensor, layer: &Layer, acc: IntType, out_t: IntType) -> Tensor {
    let Op::Conv {
        kh,
        kw,
        stride,
        pad,
        groups,
        cout,
        weights,
        bias,
        requant,
        relu: act,
        clamp,
    } = &layer.op
    else {
        unreachable!("conv called on {}", layer.op.name())
    };
    let [oh, ow, _] = layer.out;
    let cin_g = x.c / groups;
    let cout_g = cout / groups;
    let mut y = Tensor::zeros(oh, ow, *cout);
    for oy in 0..oh {
        for ox in 0..ow {
            for co in 0..*cout {
                let g = co / cout_g;
                let mut sum: i128 = 0;
                for ky in 0..*kh {
                    for kx in 0..*kw {
                        let Some((iy, ix)) =
                            input_pixel((oy, ox), (ky, kx), *stride, *pad, (x.h, x.w))
                        else {
                            continue; // zero padding
                        };
                        for ci in 0..cin_g {
                            let a = x.at(iy, ix, g * cin_g + ci);
                            let w = weights[((ky * kw + kx) * cin_g + ci) * cout + co];
                            sum += i128::from(a) * i128::from(w);
                        }
                    }
                }
                let accumulated = wrap(sum, acc.bits);
                let q = requantize(
                    i128::from(accumulated) + i128::from(bias[co]),
                    *requant,
                    out_t,
                );
                y.set(
                    oy,
                    ox,
                    co,
                    if *act {
                        activate(q, *requant, *clamp, out_t)
                    } else {
                        q
                    },
                );
            }
        }
    }
    y
}

pub fn pool(x: &Tensor, layer: &Layer, out_t: IntType) -> Tensor {
    let [oh, ow, c] = layer.out;
    let mut y = Tensor::zeros(oh, ow, c);
    for oy in 0..oh {
        for ox in 0..ow {
            for ch in 0..c {
                let v = match &layer.op {
                    Op::MaxPool { k, stride } => (0..*k)
                        .flat_map(|ky| (0..*k).map(move |kx| (ky, kx)))
                        .map(|(ky, kx)| x.at(oy * stride + ky, ox * stride + kx, ch))
                        .max()
                        .expect("window"),
                    Op::AvgPool { k, stride, requant } => {
                        let sum: i128 = (0..*k)
                            .flat_map(|ky| (0..*k).map(move |kx| (ky, kx)))
                            .map(|(ky, kx)| {
                                i128::from(x.at(oy * stride + ky, ox * stride + kx, ch))
                            })
                            .sum();
                        requantize(sum, *requant, out_t)
                    }
                    _ => unreachable!(),
                };
                y.set(oy, ox, ch, v);
            }
        }
    }
    y
}

pub fn add(a: &Tensor, b: &Tensor, layer: &Layer, out_t: IntType) -> Tensor {
    let Op::Add {
        requant,
        relu: act,
        clamp,
    } = &layer.op
    else {
        unreachable!()
    };
    let mut y = a.clone();
    for (i, v) in y.data.iter_mut().enumerate() {
        let q = saturate(
            i128::from(requantize(i128::from(a.data[i]), *requant, out_t)) + i128::from(b.data[i]),
            out_t,
        );
        *v = if *act {
            activate(q, *requant, *clamp, out_t)
        } else {
            q
        };
    }
    y
}

pub fn upsample(x: &Tensor, factor: usize) -> Tensor {
    let mut y = Tensor::zeros(x.h * factor, x.w * factor, x.c);
    for oy in 0..y.h {
        for ox in 0..y.w {
            for ch in 0..x.c {
                y.set(oy, ox, ch, x.at(oy / factor, ox / factor, ch));
            }
        }
    }
    y
}

/// An MX tensor: element codes (HWC) and one E8M0 scale per pixel and channel block,
/// `scales[(y * w + x) * (c / block) + b]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MxTensor {
    pub t: Tensor,
    pub scales: Vec<u8>,
}

/// An MX convolution as the MX datapath computes it (README, "Number formats"): for every
/// output, the block sums over input-channel blocks b and kernel taps (ky, kx) are taken in
/// the order b outermost, then ky, then kx; each is dequantized to FP32 with the input
/// pixel's scale and the weight block's scale (a padding pixel has zero elements and scale
/// code 0) and accumulated in FP32, the first block initialising the sum. The FP32 row of
/// each pixel's block of output channels is then passed through ReLU (if any) and quantized
/// to an MX block.
pub fn mx_conv(x: &MxTensor, layer: &Layer, weight_scales: &[u8], f: MxFormat) -> MxTensor {
    let Op::Conv { cout, relu, .. } = &layer.op else {
        unreachable!("mx_conv called on {}", layer.op.name())
    };
    let bs = f.block_size as usize;
    let [oh, ow, _] = layer.out;
    let out_blocks = cout / bs;
    let acc = mx_conv_accumulate(x, layer, weight_scales, f);
    let mut y = MxTensor {
        t: Tensor::zeros(oh, ow, *cout),
        scales: vec![0; oh * ow * out_blocks],
    };
    for (p, row) in acc.chunks(*cout).enumerate() {
        let (oy, ox) = (p / ow, p % ow);
        for ob in 0..out_blocks {
            let (scale, q) =
                mx::quantize_fp32_row(&row[ob * bs..(ob + 1) * bs], *relu, f.numeric());
            y.scales[p * out_blocks + ob] = scale;
            for (k, v) in q.iter().enumerate() {
                y.t.set(oy, ox, ob * bs + k, i64::from(*v));
            }
        }
    }
    y
}

/// The FP32 sums of an MX convolution before ReLU and quantization (HWC, bit patterns), in
/// the accumulation order of `mx_conv`.
pub fn mx_conv_accumulate(
    x: &MxTensor,
    layer: &Layer,
    weight_scales: &[u8],
    f: MxFormat,
) -> Vec<u32> {
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
        unreachable!("mx_conv called on {}", layer.op.name())
    };
    let bs = f.block_size as usize;
    let [oh, ow, _] = layer.out;
    let (cin, in_blocks) = (x.t.c, x.t.c / bs);
    let mut out = Vec::with_capacity(oh * ow * cout);
    for oy in 0..oh {
        for ox in 0..ow {
            for co in 0..*cout {
                let mut acc: Option<u32> = None;
                for b in 0..in_blocks {
                    for ky in 0..*kh {
                        for kx in 0..*kw {
                            let pixel =
                                input_pixel((oy, ox), (ky, kx), *stride, *pad, (x.t.h, x.t.w));
                            let (psum, scale_a) = if let Some((iy, ix)) = pixel {
                                let psum: i64 = (0..bs)
                                    .map(|k| {
                                        let ci = b * bs + k;
                                        x.t.at(iy, ix, ci)
                                            * weights[((ky * kw + kx) * cin + ci) * cout + co]
                                    })
                                    .sum();
                                (psum, x.scales[(iy * x.t.w + ix) * in_blocks + b])
                            } else {
                                (0, 0)
                            };
                            let scale_b =
                                weight_scales[((ky * kw + kx) * in_blocks + b) * cout + co];
                            let term = fp32::mx_dequant(psum, scale_a, scale_b, f.numeric());
                            acc = Some(acc.map_or(term, |s| fp32::add(s, term)));
                        }
                    }
                }
                out.push(acc.expect("a convolution has at least one tap"));
            }
        }
    }
    out
}

/// A floating-point convolution as the FP datapath computes it (README, "Number formats"):
/// the input channels are taken in tiles of `tile` (the array's rows; channels past the
/// last are zero); for every output, the passes over input-channel tiles (outermost) and
/// kernel taps (ky, then kx) each sum the tile's exact products in FP32 from +0 in channel
/// order, and the pass sums are accumulated in FP32, the first initialising the sum. ReLU
/// (if any) and the conversion to the element format follow (`interp::fp_output`).
pub fn fp_conv(x: &Tensor, layer: &Layer, f: crate::numeric::MiniFloat, tile: usize) -> Tensor {
    let Op::Conv { cout, relu, .. } = &layer.op else {
        unreachable!("fp_conv called on {}", layer.op.name())
    };
    let [oh, ow, _] = layer.out;
    let acc = fp_conv_accumulate(x, layer, f, tile);
    let mut y = Tensor::zeros(oh, ow, *cout);
    for (k, v) in acc.iter().enumerate() {
        let out = crate::interp::fp_output(*v, *relu, f);
        y.set(k / cout / ow, k / cout % ow, k % cout, i64::from(out));
    }
    y
}

/// The FP32 sums of a floating-point convolution before ReLU and conversion (HWC, bit
/// patterns), in the order of `fp_conv`.
pub fn fp_conv_accumulate(
    x: &Tensor,
    layer: &Layer,
    f: crate::numeric::MiniFloat,
    tile: usize,
) -> Vec<u32> {
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
        unreachable!("fp_conv called on {}", layer.op.name())
    };
    let [oh, ow, _] = layer.out;
    let cin = x.c;
    let mut out = Vec::with_capacity(oh * ow * cout);
    for oy in 0..oh {
        for ox in 0..ow {
            for co in 0..*cout {
                let mut acc: Option<u32> = None;
                for ict in 0..cin.div_ceil(tile) {
                    for ky in 0..*kh {
                        for kx in 0..*kw {
                            let pixel = input_pixel((oy, ox), (ky, kx), *stride, *pad, (x.h, x.w));
                            let column = (0..tile).fold(0u32, |s, r| {
                                let ci = ict * tile + r;
                                let (a, w) = if ci < cin {
                                    (
                                        pixel.map_or(0, |(iy, ix)| x.at(iy, ix, ci) as u32),
                                        weights[((ky * kw + kx) * cin + ci) * cout + co] as u32,
                                    )
                                } else {
                                    (0, 0)
                                };
                                fp32::add(s, fp32::mini_mul(a, w, f))
                            });
                            acc = Some(acc.map_or(column, |s| fp32::add(s, column)));
                        }
                    }
                }
                out.push(acc.expect("at least one tap"));
            }
        }
    }
    out
}

/// Run a floating-point model on an array of `tile` rows; every tensor by name.
pub fn run_fp(model: &Model, tile: usize) -> HashMap<String, Tensor> {
    let f = model.fp.expect("a floating-point model");
    let mut t: HashMap<String, Tensor> = HashMap::new();
    t.insert(model.input_name.clone(), model.input.clone());
    for l in &model.layers {
        let y = fp_conv(&t[&l.inputs[0]], l, f, tile);
        t.insert(l.name.clone(), y);
    }
    t
}

/// Run an MX model; every tensor by name (the input included).
pub fn run_mx(model: &Model) -> HashMap<String, MxTensor> {
    let mx = model.mx.as_ref().expect("an MX model");
    let mut t: HashMap<String, MxTensor> = HashMap::new();
    t.insert(
        model.input_name.clone(),
        MxTensor {
            t: model.input.clone(),
            scales: mx.input_scales.clone(),
        },
    );
    for l in &model.layers {
        let y = mx_conv(&t[&l.inputs[0]], l, &mx.weight_scales[&l.name], mx.format);
        t.insert(l.name.clone(), y);
    }
    t
}

/// A tensor of a mixed model: integer elements, or MX blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Int(Tensor),
    Mx(MxTensor),
}

/// Run a mixed model (integer and MX layers; README, "Multi-precision"). Integer layers
/// compute as in `run`, MX layers as in `mx_conv`. At a boundary the values are what the
/// model says they are: an integer tensor feeding MX layers holds q * 2^e (e the producer's
/// output_exponent), which the MX layer reads exactly, as blocks of elements q under the
/// scale code e + 127 + frac (the OCP quantizer would not be exact: a block holding -128
/// gets the next scale up and loses the last bit of its odd elements); an MX layer feeding
/// integer layers rounds its FP32 sums to q = x / 2^e (`fp32::to_fixed`).
pub fn run_mixed(model: &Model, acc: IntType) -> HashMap<String, Value> {
    let mx = model.mx.as_ref().expect("a model with MX layers");
    let f = mx.format;
    let out_t = model.act_type;
    let mut t: HashMap<String, Value> = HashMap::new();
    let input = if model.tensor_is_mx(&model.input_name) {
        Value::Mx(MxTensor {
            t: model.input.clone(),
            scales: mx.input_scales.clone(),
        })
    } else {
        Value::Int(model.input.clone())
    };
    t.insert(model.input_name.clone(), input);
    let fixed_scale_of = |name: &str| {
        model
            .layers
            .iter()
            .find(|l| l.name == name)
            .and_then(|l| l.fixed_scale(f.frac))
            .expect("an integer tensor read by an MX layer has an output_exponent")
    };
    for l in &model.layers {
        let y = if l.mx {
            let x = match &t[&l.inputs[0]] {
                Value::Mx(x) => x.clone(),
                Value::Int(q) => {
                    // The integer elements themselves, under the scale code of 2^e: exact.
                    let code = fixed_scale_of(&l.inputs[0]);
                    MxTensor {
                        t: q.clone(),
                        scales: vec![code; q.data.len() / f.block_size as usize],
                    }
                }
            };
            if l.out_mx {
                Value::Mx(mx_conv(&x, l, &mx.weight_scales[&l.name], f))
            } else {
                let Op::Conv { relu, .. } = &l.op else {
                    unreachable!("MX layers are convolutions")
                };
                let scale = l.fixed_scale(f.frac).expect("a boundary has an exponent");
                let sums = mx_conv_accumulate(&x, l, &mx.weight_scales[&l.name], f);
                let [oh, ow, c] = l.out;
                let mut y = Tensor::zeros(oh, ow, c);
                for (k, v) in sums.iter().enumerate() {
                    y.data[k] = fp32::to_fixed(*v, scale, f.frac, out_t.min(), out_t.max(), *relu);
                }
                Value::Int(y)
            }
        } else {
            let int = |name: &String| match &t[name] {
                Value::Int(x) => x,
                Value::Mx(_) => unreachable!("an integer layer reads integer tensors"),
            };
            let x = int(&l.inputs[0]);
            Value::Int(match &l.op {
                Op::Conv { .. } => conv(x, l, acc, out_t),
                Op::MaxPool { .. } | Op::AvgPool { .. } => pool(x, l, out_t),
                Op::Add { .. } => add(x, int(&l.inputs[1]), l, out_t),
                Op::Upsample { factor } => upsample(x, *factor),
            })
        };
        t.insert(l.name.clone(), y);
    }
    t
}

/// Run the whole model; returns every tensor by name (the input included).
pub fn run(model: &Model, acc: IntType) -> HashMap<String, Tensor> {
    let out_t = model.act_type;
    let mut t: HashMap<String, Tensor> = HashMap::new();
    t.insert(model.input_name.clone(), model.input.clone());
    for l in &model.layers {
        let x = &t[&l.inputs[0]];
        let y = match &l.op {
            Op::Conv { .. } => conv(x, l, acc, out_t),
            Op::MaxPool { .. } | Op::AvgPool { .. } => pool(x, l, out_t),
            Op::Add { .. } => add(x, &t[&l.inputs[1]], l, out_t),
            Op::Upsample { factor } => upsample(x, *factor),
        };
        t.insert(l.name.clone(), y);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    const I8: IntType = IntType::new(true, 8);
    const I32: IntType = IntType::new(true, 32);

    fn layer(op: Op, out: [usize; 3]) -> Layer {
        Layer {
            name: "l".into(),
            inputs: vec!["x".into()],
            op,
            out,
            mx: false,
            out_mx: false,
            exponent: None,
            auto: false,
        }
    }

    #[test]
    fn requantize_by_hand() {
        let r = |m, s, z| Requant {
            multiplier: m,
            shift: s,
            zero_point: z,
        };
        assert_eq!(requantize(5, r(1, 1, 0), I8), 3); // 2.5 -> 3
        assert_eq!(requantize(-5, r(1, 1, 0), I8), -2); // -2.5 -> -2
        assert_eq!(requantize(-7, r(1, 2, 0), I8), -2); // -1.75 -> -2
        assert_eq!(requantize(1024, r(3, 4, -70), I8), 122); // 3072/16 - 70
        assert_eq!(requantize(100_000, r(1, 0, 0), I8), 127);
        assert_eq!(wrap(1i128 << 31, 32), -(1i64 << 31));
    }

    #[test]
    fn conv_3x3_padding_stride_by_hand() {
        // 3x3 input of 1..9, one channel; 3x3 kernel of ones; padding 1, stride 2:
        // outputs at (0,0), (0,2), (2,0), (2,2) are the sums of the clipped windows:
        // (0,0): 1+2+4+5 = 12; (0,1): 2+3+5+6 = 16; (1,0): 4+5+7+8 = 24; (1,1): 5+6+8+9 = 28.
        let x = Tensor {
            h: 3,
            w: 3,
            c: 1,
            data: (1..=9).collect(),
        };
        let op = Op::Conv {
            kh: 3,
            kw: 3,
            stride: 2,
            pad: 1,
            groups: 1,
            cout: 1,
            weights: vec![1; 9],
            bias: vec![100],
            requant: Requant::IDENTITY,
            relu: false,
            clamp: None,
        };
        let y = conv(&x, &layer(op, [2, 2, 1]), I32, IntType::new(true, 16));
        assert_eq!(y.data, vec![112, 116, 124, 128]);
    }

    #[test]
    fn relu6_clamps_above() {
        // acc 1, 50, 200 with requant identity, zero point 0, ReLU6 at 64: 1, 50, 64.
        let x = Tensor {
            h: 1,
            w: 3,
            c: 1,
            data: vec![1, 50, 200],
        };
        let op = Op::Conv {
            kh: 1,
            kw: 1,
            stride: 1,
            pad: 0,
            groups: 1,
            cout: 1,
            weights: vec![1],
            bias: vec![0],
            requant: Requant::IDENTITY,
            relu: true,
            clamp: Some(64),
        };
        let y = conv(&x, &layer(op, [1, 3, 1]), I32, IntType::new(true, 16));
        assert_eq!(y.data, vec![1, 50, 64]);
    }

    #[test]
    fn depthwise_keeps_channels_apart() {
        // Two channels, 1x1 depthwise kernel [2, -3]: channel 0 doubles, channel 1 * -3.
        let x = Tensor {
            h: 1,
            w: 2,
            c: 2,
            data: vec![1, 2, 3, 4],
        };
        let op = Op::Conv {
            kh: 1,
            kw: 1,
            stride: 1,
            pad: 0,
            groups: 2,
            cout: 2,
            weights: vec![2, -3],
            bias: vec![0, 0],
            requant: Requant::IDENTITY,
            relu: true,
            clamp: None,
        };
        let y = conv(&x, &layer(op, [1, 2, 2]), I32, I8);
        assert_eq!(y.data, vec![2, 0, 6, 0]); // ReLU clamps -6 and -12 to 0
    }

    #[test]
    fn pools_add_upsample_by_hand() {
        let x = Tensor {
            h: 2,
            w: 2,
            c: 1,
            data: vec![1, -5, 7, 3],
        };
        let y = pool(&x, &layer(Op::MaxPool { k: 2, stride: 2 }, [1, 1, 1]), I8);
        assert_eq!(y.data, vec![7]);
        // Sum 6 * 16384 / 65536 = 1.5 -> 2 (half up).
        let avg = Op::AvgPool {
            k: 2,
            stride: 2,
            requant: Requant {
                multiplier: 16384,
                shift: 16,
                zero_point: 0,
            },
        };
        assert_eq!(pool(&x, &layer(avg, [1, 1, 1]), I8).data, vec![2]);
        let b = Tensor {
            h: 2,
            w: 2,
            c: 1,
            data: vec![127, 0, 0, -128],
        };
        let s = add(
            &x,
            &b,
            &layer(
                Op::Add {
                    requant: Requant::IDENTITY,
                    relu: false,
                    clamp: None,
                },
                [2, 2, 1],
            ),
            I8,
        );
        assert_eq!(s.data, vec![127, -5, 7, -125]);
        let u = upsample(
            &Tensor {
                h: 1,
                w: 2,
                c: 1,
                data: vec![4, 9],
            },
            2,
        );
        assert_eq!(u.data, vec![4, 4, 9, 9, 4, 4, 9, 9]);
    }
}
