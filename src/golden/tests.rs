//! The golden model against hand-derived values.

use crate::model::op::{int_conv_accumulate, pass_conv_accumulate};
use crate::model::{conv_accumulate, Add, AvgPool, Conv, Layer, MaxPool, Op, Requant, Tensor};
use crate::numeric::{Format, IntPrecision, IntType, Precision};

const I8: IntType = IntType::new(true, 8);
const I16: IntType = IntType::new(true, 16);
const I32: IntType = IntType::new(true, 32);

fn int(output: IntType) -> Precision {
    Precision::Int(IntPrecision {
        input: I8,
        weight: I8,
        accumulator: I32,
        output,
    })
}

fn layer(op: impl Into<Op>, out: [usize; 3], output: IntType) -> Layer {
    Layer {
        name: "l".into(),
        inputs: vec!["x".into()],
        op: op.into(),
        out,
        prec: int(output),
        out_format: Format::Int(output),
        exponent: None,
        auto: false,
    }
}

fn tensor(h: usize, w: usize, c: usize, data: Vec<i64>) -> Tensor {
    Tensor {
        h,
        w,
        c,
        format: Format::Int(I8),
        data,
        scales: vec![],
    }
}

/// The golden model of `l` on `inputs`.
fn run(l: &Layer, inputs: &[&Tensor], rows: usize) -> Tensor {
    l.op.get().golden(l, inputs, rows)
}

fn conv_op(k: usize, stride: usize, pad: usize, weights: Vec<i64>, bias: Vec<i64>) -> Conv {
    Conv {
        transposed: false,
        kh: k,
        kw: k,
        stride,
        pad,
        pad_value: 0,
        groups: 1,
        cout: bias.len(),
        weights,
        weight_scales: vec![],
        bias,
        untied_bias: vec![],
        requant: Requant::IDENTITY,
        channel_requant: Vec::new(),
        negative_multiplier: None,
        relu: false,
        clamp: None,
        raw: false,
    }
}

#[test]
fn conv_3x3_padding_stride_by_hand() {
    // 3x3 input of 1..9, one channel; 3x3 kernel of ones; padding 1, stride 2:
    // outputs at (0,0), (0,2), (2,0), (2,2) are the sums of the clipped windows:
    // (0,0): 1+2+4+5 = 12; (0,1): 2+3+5+6 = 16; (1,0): 4+5+7+8 = 24; (1,1): 5+6+8+9 = 28.
    let x = tensor(3, 3, 1, (1..=9).collect());
    let l = layer(conv_op(3, 2, 1, vec![1; 9], vec![100]), [2, 2, 1], I16);
    for rows in [1, 8] {
        assert_eq!(run(&l, &[&x], rows).data, vec![112, 116, 124, 128]);
    }
}

#[test]
fn relu6_clamps_above() {
    // acc 1, 50, 200 with requant identity, zero point 0, ReLU6 at 64: 1, 50, 64.
    let x = tensor(1, 3, 1, vec![1, 50, 200]);
    let op = Conv {
        relu: true,
        clamp: Some(64),
        ..conv_op(1, 1, 0, vec![1], vec![0])
    };
    let y = run(&layer(op, [1, 3, 1], I16), &[&x], 4);
    assert_eq!(y.data, vec![1, 50, 64]);
}

#[test]
fn depthwise_keeps_channels_apart() {
    // Two channels, 1x1 depthwise kernel [2, -3]: channel 0 doubles, channel 1 * -3.
    let x = tensor(1, 2, 2, vec![1, 2, 3, 4]);
    let op = Conv {
        groups: 2,
        relu: true,
        ..conv_op(1, 1, 0, vec![2, -3], vec![0, 0])
    };
    let y = run(&layer(op, [1, 2, 2], I8), &[&x], 8);
    assert_eq!(y.data, vec![2, 0, 6, 0]); // ReLU clamps -6 and -12 to 0
}

#[test]
fn accumulation_wraps_modulo_the_accumulator() {
    // 127 * 127 * 4 = 64516 in a 16-bit accumulator: 64516 - 65536 = -1020.
    let x = tensor(1, 1, 4, vec![127; 4]);
    let op = conv_op(1, 1, 0, vec![127; 4], vec![0]);
    let mut l = layer(op, [1, 1, 1], I16);
    l.prec = Precision::Int(IntPrecision {
        input: I8,
        weight: I8,
        accumulator: I16,
        output: I16,
    });
    assert_eq!(conv_accumulate(&x, &l, 2), vec![-1020]);
}

#[test]
fn pools_add_upsample_by_hand() {
    let x = tensor(2, 2, 1, vec![1, -5, 7, 3]);
    let max = MaxPool {
        k: 2,
        stride: 2,
        pad: 0,
    };
    let y = run(&layer(max, [1, 1, 1], I8), &[&x], 1);
    assert_eq!(y.data, vec![7]);
    // Sum 6 * 16384 / 65536 = 1.5 -> 2 (half up).
    let avg = AvgPool {
        k: 2,
        stride: 2,
        pad: 0,
        requant: Requant {
            multiplier: 16384,
            shift: 16,
            zero_point: 0,
            half_even: false,
        },
        input_zero: 0,
    };
    assert_eq!(
        run(&layer(avg.clone(), [1, 1, 1], I8), &[&x], 1).data,
        vec![2]
    );
    // With the input zero point 3: (1 - 3) + (-5 - 3) + (7 - 3) + (3 - 3) = -6, times 1/4 =
    // -1.5 -> -1 (half up).
    let avg_z = AvgPool {
        input_zero: 3,
        ..avg
    };
    assert_eq!(run(&layer(avg_z, [1, 1, 1], I8), &[&x], 1).data, vec![-1]);
    let b = tensor(2, 2, 1, vec![127, 0, 0, -128]);
    let add_op = Add {
        requant: Requant::IDENTITY,
        relu: false,
        clamp: None,
        eltwise: None,
    };
    let s = run(&layer(add_op, [2, 2, 1], I8), &[&x, &b], 1);
    assert_eq!(s.data, vec![127, -5, 7, -125]);
    // The quantized form with a one-pixel residual b = 4 (zero point 2) read at every
    // pixel, x's zero point -1, output zero point 10, then ReLU at 10:
    // sum 3 (x + 1) - 2 (4 - 2), / 2^1 half up: x = 1: (6 - 4) / 2 = 1 -> 11;
    // x = -5: (-12 - 4) / 2 = -8 -> 2 -> ReLU 10; x = 7: (24 - 4) / 2 = 10 -> 20;
    // x = 3: (12 - 4) / 2 = 4 -> 14.
    // product 5 (x + 1)(4 - 2) / 2^2: x = 1: 20 / 4 = 5 -> 15; x = -5: -40 / 4 = -10 -> 0
    // -> ReLU 10; x = 7: 80 / 4 = 20 -> 30; x = 3: 40 / 4 = 10 -> 20.
    let one = tensor(1, 1, 1, vec![4]);
    let q = |product, weight, shift| Add {
        requant: Requant::IDENTITY,
        relu: true,
        clamp: None,
        eltwise: Some(crate::model::Eltwise {
            combine: crate::model::Combine {
                product,
                weight,
                operand_weight: -2,
                shift,
                operand_zero: 2,
                output_zero: 10,
            },
            input_zero: -1,
        }),
    };
    let s = run(&layer(q(false, 3, 1), [2, 2, 1], I8), &[&x, &one], 1);
    assert_eq!(s.data, vec![11, 10, 20, 14]);
    let s = run(&layer(q(true, 5, 2), [2, 2, 1], I8), &[&x, &one], 1);
    assert_eq!(s.data, vec![15, 10, 30, 20]);
    let up = layer(crate::model::Upsample { factor: 2 }, [2, 4, 1], I8);
    let u = run(&up, &[&tensor(1, 2, 1, vec![4, 9])], 1);
    assert_eq!(u.data, vec![4, 4, 9, 9, 4, 4, 9, 9]);
}

/// The integer convolution by its definition (`int_conv_accumulate`, used for integer
/// layers) equals the pass-by-pass sums in the array's order (`pass_conv_accumulate`) on
/// random shapes, groups, strides, paddings, array heights and accumulator widths (16-bit
/// accumulators wrap).
#[test]
fn integer_convolution_by_definition_equals_pass_order() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    for _ in 0..200 {
        let groups = 1 + rand(3) as usize;
        let (cin_g, cout_g) = (1 + rand(6) as usize, 1 + rand(5) as usize);
        let (cin, cout) = (cin_g * groups, cout_g * groups);
        let k = 1 + rand(3) as usize;
        let (stride, pad) = (1 + rand(2) as usize, rand(k as u64) as usize);
        let (h, w) = (k + rand(5) as usize, k + rand(5) as usize);
        let x = tensor(
            h,
            w,
            cin,
            (0..h * w * cin).map(|_| rand(256) as i64 - 128).collect(),
        );
        let weights = (0..k * k * cin_g * cout)
            .map(|_| rand(256) as i64 - 128)
            .collect();
        let op = Conv {
            groups,
            ..conv_op(k, stride, pad, weights, vec![0; cout])
        };
        let out = [
            (h + 2 * pad - k) / stride + 1,
            (w + 2 * pad - k) / stride + 1,
            cout,
        ];
        let mut l = layer(op, out, I16);
        if rand(2) == 0 {
            l.prec = Precision::Int(IntPrecision {
                input: I8,
                weight: I8,
                accumulator: I16,
                output: I16,
            });
        }
        let rows = [1, 2, 4, 8, 16][rand(5) as usize];
        assert_eq!(
            int_conv_accumulate(&x, &l),
            pass_conv_accumulate(&x, &l, rows)
        );
    }
}

/// Pooling with padding by hand, on the 2x2 input [[-7, -5], [-9, -3]] with a 2x2 window
/// at stride 1 and padding 1 (a 3x3 output): a max-pool's padding never counts, so the
/// corners are the corner pixels themselves even though every input is negative (a zero
/// border would make them 0), and the centre is -3; an average pool counts padding as
/// zeros: the windows' sums are -7, -12, -5 / -16, -24, -8 / -9, -12, -3, requantized
/// by 1/4 half up: -7/4 = -1.75 -> -2, -3, -1.25 -> -1 / -4, -6, -2 / -2.25 -> -2, -3,
/// -0.75 -> -1.
#[test]
fn pooling_with_padding_by_hand() {
    let x = tensor(2, 2, 1, vec![-7, -5, -9, -3]);
    let max = MaxPool {
        k: 2,
        stride: 1,
        pad: 1,
    };
    assert_eq!(
        run(&layer(max, [3, 3, 1], I8), &[&x], 1).data,
        vec![-7, -5, -5, -7, -3, -3, -9, -3, -3]
    );
    let avg = AvgPool {
        k: 2,
        stride: 1,
        pad: 1,
        requant: Requant {
            multiplier: 1,
            shift: 2,
            zero_point: 0,
            half_even: false,
        },
        input_zero: 0,
    };
    assert_eq!(
        run(&layer(avg, [3, 3, 1], I8), &[&x], 1).data,
        vec![-2, -3, -1, -4, -6, -2, -2, -3, -1]
    );
}
