//! Operators against ONNX Runtime on integer-valued data (rtl-tests/ref/onnx_reference.py,
//! test-only): the golden model of a layer, from a model file with `.npy` data, equals
//! ONNX Runtime's float result requantized by the README's rule. The data are small enough
//! (|x| <= 20, |w| <= 12, sums far below 2^24) that every float32 product and sum is exact,
//! so ONNX Runtime's float kernels give the same values on every CPU, whatever their order
//! of summation or use of FMA. The golden model itself is checked against the interpreter
//! and the RTL by rtl_cases.

mod common;

use common::*;
use hwgen::model::npy::write_i64;

fn have_onnxruntime() -> bool {
    have_python_modules(&["onnxruntime", "onnx", "numpy"])
}

/// A convolution layer with small random integer data.
struct ConvCase {
    seed: u64,
    shape: [usize; 3],
    k: usize,
    stride: usize,
    pad: usize,
    cout: usize,
    /// requant multiplier, shift, zero point
    requant: (u64, u32, i64),
    /// leaky ReLU slope as (multiplier, shift)
    slope: Option<(u64, u32)>,
    /// a bias per output pixel and channel (untied_bias) instead of per channel
    untied: bool,
    /// conv_transpose instead of conv2d
    transposed: bool,
    /// groups of a conv2d (cin: depthwise)
    groups: usize,
}

/// The golden model's output of the layer and ONNX Runtime's, element by element (HWC).
fn both(c: &ConvCase) -> (Vec<i64>, Vec<i64>) {
    let mut rng = Rng::new(c.seed);
    let dir = tempfile::tempdir().unwrap();
    let [h, w, cin] = c.shape;
    let mut ints =
        |n: usize, lo: i64, hi: i64| -> Vec<i64> { (0..n).map(|_| rng.range(lo, hi)).collect() };
    let x = ints(h * w * cin, -20, 20);
    let wt = ints(c.k * c.k * cin / c.groups * c.cout, -12, 12);
    let b = ints(c.cout, -300, 300);
    write_i64(&dir.path().join("x.npy"), &c.shape, &x).unwrap();
    write_i64(
        &dir.path().join("w.npy"),
        &[c.k, c.k, cin / c.groups, c.cout],
        &wt,
    )
    .unwrap();
    let size = |i: usize| {
        if c.transposed {
            (i - 1) * c.stride + c.k - 2 * c.pad
        } else {
            (i + 2 * c.pad - c.k) / c.stride + 1
        }
    };
    let out = [size(h), size(w)];
    let ub = ints(out[0] * out[1] * c.cout, -400, 400);
    write_i64(&dir.path().join("ub.npy"), &[out[0], out[1], c.cout], &ub).unwrap();
    // With an untied bias, the per-channel bias is all zeros (a layer has one or the other).
    let b = if c.untied { vec![0; c.cout] } else { b };
    write_i64(&dir.path().join("b.npy"), &[c.cout], &b).unwrap();
    let bias_key = if c.untied {
        "untied_bias = \"ub.npy\""
    } else {
        "bias = \"b.npy\""
    };
    let (m, s, zp) = c.requant;
    let activation = match c.slope {
        Some((sm, ss)) => format!(
            "activation = \"leaky_relu\"\nnegative_slope = {{ multiplier = {sm}, shift = {ss} }}\n"
        ),
        None => String::new(),
    };
    let toml = format!(
        "name = \"ref\"\n[input]\nshape = [{h}, {w}, {cin}]\ndata = \"x.npy\"\n\
         [[layer]]\nname = \"conv\"\nop = \"{op}\"\nkernel = {k}\nstride = {st}\n\
         padding = {p}\n{g}out_channels = {co}\nweights = \"w.npy\"\n{bias_key}\n\
         requant = {{ multiplier = {m}, shift = {s}, zero_point = {zp} }}\n{activation}",
        op = if c.transposed {
            "conv_transpose"
        } else {
            "conv2d"
        },
        k = c.k,
        st = c.stride,
        p = c.pad,
        co = c.cout,
        g = if c.transposed {
            String::new()
        } else {
            format!("groups = {}\n", c.groups)
        }
    );
    let path = dir.path().join("model.toml");
    std::fs::write(&path, toml).unwrap();
    let model = hwgen::model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let golden = hwgen::golden::run(&model, 16);
    let got = golden["conv"].data.clone();
    // alpha = the slope the hardware applies: negative_multiplier / multiplier.
    let alpha = c.slope.map(|(sm, ss)| {
        let neg = hwgen::numeric::int::leaky_multiplier(
            m,
            hwgen::numeric::Slope {
                multiplier: sm,
                shift: ss,
            },
        );
        neg as f64 / m as f64
    });
    let params = serde_json::json!({
        "op": if c.transposed { "conv_transpose" } else { "conv" }, "group": c.groups, "stride": c.stride, "pad": c.pad, "alpha": alpha, "untied": c.untied,
        "multiplier": m, "shift": s, "zero_point": zp, "out_bits": 8, "out_signed": true,
    });
    let out = run_reference(
        "onnx_reference.py",
        &[&dir.path().to_string_lossy(), &params.to_string()],
        "",
    );
    let want = out.lines().map(|l| l.parse().unwrap()).collect();
    (got, want)
}

fn check(c: &ConvCase) {
    let (got, want) = both(c);
    assert_eq!(got.len(), want.len(), "seed {}: element count", c.seed);
    let negative = want.iter().filter(|&&q| q < c.requant.2).count();
    assert!(negative > 0, "seed {}: no negative outputs to test", c.seed);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "seed {}: element {i} (HWC order)", c.seed);
    }
}

/// Leaky ReLU with slopes whose product with the multiplier is exact (13/64 of 64 is 13,
/// 1/4 of 256 is 64, 3/8 of 40 is 15), so ONNX Runtime's
/// LeakyRelu with alpha = negative_multiplier / multiplier is the same function.
#[test]
fn leaky_relu_conv_matches_onnx_runtime() {
    if !have_onnxruntime() {
        return;
    }
    let cases = [
        ((64, 9, -3), (13, 6)),
        ((256, 12, 5), (1, 2)),
        ((40, 7, 0), (3, 3)),
    ];
    for (seed, (requant, slope)) in cases.into_iter().enumerate() {
        for (shape, k, stride, pad) in [([9, 11, 6], 3, 2, 1), ([5, 4, 3], 1, 1, 0)] {
            check(&ConvCase {
                seed: 40 + seed as u64,
                shape,
                k,
                stride,
                pad,
                cout: 7,
                requant,
                slope: Some(slope),
                untied: false,
                transposed: false,
                groups: 1,
            });
        }
    }
}

/// Untied bias (one per output pixel and channel) against ONNX Runtime's Conv + Add, alone
/// and with leaky ReLU after it.
#[test]
fn untied_bias_conv_matches_onnx_runtime() {
    if !have_onnxruntime() {
        return;
    }
    for (seed, slope) in [(60, None), (61, Some((13, 6)))] {
        for (shape, k, stride, pad) in [([8, 6, 5], 3, 1, 1), ([9, 9, 4], 4, 2, 1)] {
            check(&ConvCase {
                seed,
                shape,
                k,
                stride,
                pad,
                cout: 9,
                requant: (64, 8, 1),
                slope,
                untied: true,
                transposed: false,
                groups: 1,
            });
        }
    }
}

/// Transposed convolution (the decoder's 4x4 stride-2 padding-1 up-convolution, and other
/// kernels, strides and paddings) against ONNX Runtime's ConvTranspose, with a per-channel
/// or an untied bias and leaky ReLU.
#[test]
fn conv_transpose_matches_onnx_runtime() {
    if !have_onnxruntime() {
        return;
    }
    let geometries = [
        ([5, 6, 4], 4, 2, 1),
        ([3, 4, 5], 3, 2, 0),
        ([4, 3, 3], 5, 3, 2),
        ([6, 5, 4], 2, 2, 0),
        ([4, 4, 3], 3, 1, 1),
    ];
    for (i, (shape, k, stride, pad)) in geometries.into_iter().enumerate() {
        for untied in [false, true] {
            check(&ConvCase {
                seed: 80 + i as u64,
                shape,
                k,
                stride,
                pad,
                cout: 6,
                requant: (64, 8, -2),
                slope: Some((13, 6)),
                untied,
                transposed: true,
                groups: 1,
            });
        }
    }
}

/// Concat of three int8 tensors of 5, 8 and 3 channels (model inputs, written with `.npy`
/// data) equals ONNX Runtime's Concat along the channels.
#[test]
fn concat_matches_onnx_runtime() {
    if !have_onnxruntime() {
        return;
    }
    let mut rng = Rng::new(77);
    let dir = tempfile::tempdir().unwrap();
    let (h, w) = (3, 4);
    let channels = [5usize, 8, 3];
    let mut toml = String::from("name = \"cat\"\n");
    for (i, c) in channels.iter().enumerate() {
        let x: Vec<i64> = (0..h * w * c).map(|_| rng.range(-128, 127)).collect();
        write_i64(&dir.path().join(format!("x{i}.npy")), &[h, w, *c], &x).unwrap();
        toml.push_str(&format!(
            "[[input]]\nname = \"x{i}\"\nshape = [{h}, {w}, {c}]\ndata = \"x{i}.npy\"\n"
        ));
    }
    toml.push_str(
        "[[layer]]\nname = \"cat\"\nop = \"concat\"\ninputs = [\"x0\", \"x1\", \"x2\"]\n",
    );
    let path = dir.path().join("model.toml");
    std::fs::write(&path, toml).unwrap();
    let model = hwgen::model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let got = hwgen::golden::run(&model, 8)["cat"].data.clone();
    let out = run_reference("onnx_concat.py", &[&dir.path().to_string_lossy(), "3"], "");
    let want: Vec<i64> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(got.len(), h * w * 16);
    assert_eq!(got, want);
}

/// Depthwise convolutions (groups = channels, the window unit's convolutions) against ONNX
/// Runtime's Conv with group = C: 3x3 at stride 1 and 2 with padding 1, 2x2 without, with a
/// bias and leaky ReLU.
#[test]
fn depthwise_conv_matches_onnx_runtime() {
    if !have_onnxruntime() {
        return;
    }
    for (i, (shape, k, stride, pad)) in [
        ([9, 8, 6], 3, 1, 1),
        ([11, 10, 5], 3, 2, 1),
        ([6, 7, 4], 2, 1, 0),
    ]
    .into_iter()
    .enumerate()
    {
        check(&ConvCase {
            seed: 100 + i as u64,
            shape,
            k,
            stride,
            pad,
            cout: shape[2],
            requant: (64, 7, -1),
            slope: Some((13, 6)),
            untied: false,
            transposed: false,
            groups: shape[2],
        });
    }
}

/// Max-pooling (padding never counts) and average pooling (padding counts as zeros: the
/// requantization multiplier 1, shift 0 leaves the window sums) against ONNX Runtime's
/// MaxPool on int8 and AveragePool with count_include_pad = 1, over negative and positive
/// inputs, for the windows the models use (ResNet's 3x3/2 with padding 1) and others.
#[test]
fn pooling_with_padding_matches_onnx_runtime() {
    if !have_onnxruntime() {
        return;
    }
    let mut rng = Rng::new(123);
    for (op, k, stride, pad) in [
        ("max", 3, 2, 1),
        ("max", 2, 2, 1),
        ("max", 3, 1, 2),
        ("avg", 3, 1, 1),
        ("avg", 2, 2, 1),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (h, w, c) = (7, 8, 3);
        // Max: mostly negative, so a zero border would win at the edges; avg: small
        // values, so the window sums stay within int8.
        let (lo, hi) = if op == "max" { (-128, 10) } else { (-12, 11) };
        let x: Vec<i64> = (0..h * w * c).map(|_| rng.range(lo, hi)).collect();
        write_i64(&dir.path().join("x.npy"), &[h, w, c], &x).unwrap();
        let extra = if op == "avg" {
            "requant = { multiplier = 1, shift = 0 }\n"
        } else {
            ""
        };
        let toml = format!(
            "name = \"pool\"\n[input]\nshape = [{h}, {w}, {c}]\ndata = \"x.npy\"\n\
             [[layer]]\nname = \"pool\"\nop = \"{op}pool\"\nkernel = {k}\nstride = {stride}\n\
             padding = {pad}\n{extra}"
        );
        let path = dir.path().join("model.toml");
        std::fs::write(&path, toml).unwrap();
        let model = hwgen::model::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let got = hwgen::golden::run(&model, 8)["pool"].data.clone();
        let out = run_reference(
            "onnx_pool.py",
            &[
                &dir.path().to_string_lossy(),
                op,
                &k.to_string(),
                &stride.to_string(),
                &pad.to_string(),
            ],
            "",
        );
        let want: Vec<i64> = out.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(got, want, "{op}pool {k}x{k}/{stride} padding {pad}");
        // Some border output must differ from a pool over a zero border (max) or be a
        // sum that counts fewer pixels than k * k (avg): otherwise padding was not tested.
        assert!(want.iter().any(|&v| v < 0), "{op}pool: no negative output");
    }
}
