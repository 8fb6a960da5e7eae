//! Number formats against independent references, all test-only (scripts/test.sh installs
//! them in a private venv): FP8 (E4M3, E5M2), BF16, FP16 and the host's fnuz float8 and
//! E2M1 against PyPI's ml_dtypes (numpy for FP16)
//! (rtl-tests/ref/fp_reference.py), the host's float8e8m0 conversion against ONNX's
//! (e8m0_reference.py), MXINT8 blocks against gfloat (mx_reference.py), posit8
//! with es = 0 and 2 against SoftPosit (posit_reference.py). Decoding is checked on every
//! code; encoding on specials, powers of two and their f32 neighbours, every tie between
//! neighbouring codes, values around the largest finite value, subnormals, and seeded
//! random f32 bit patterns.

mod common;

use common::*;
use hwgen::numeric::posit::{Posit, POSIT8_ES0, POSIT8_ES2};
use hwgen::numeric::{MiniFloat, BF16, E2M1, E4M3, E4M3FNUZ, E5M2, E5M2FNUZ, FP16};

fn have_reference() -> bool {
    have_python_modules(&["ml_dtypes", "numpy"])
}

fn reference(mode: &str, f: &MiniFloat, input: &str) -> Vec<String> {
    run_reference("fp_reference.py", &[mode, f.name], input)
        .lines()
        .map(str::to_string)
        .collect()
}

fn bits_or_nan(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else {
        format!("{:016x}", v.to_bits())
    }
}

#[test]
fn decode_every_code() {
    if !have_reference() {
        return;
    }
    for f in [E4M3, E5M2, BF16, FP16, E4M3FNUZ, E5M2FNUZ, E2M1] {
        let want = reference("decode", &f, "");
        assert_eq!(want.len(), 1 << f.bits());
        for (code, w) in want.iter().enumerate() {
            assert_eq!(
                &bits_or_nan(f.decode(code as u32)),
                w,
                "{} code {code:#x}",
                f.name
            );
        }
    }
}

/// The f32 specials every conversion is checked on: zeros, infinities, NaN, the smallest
/// normal and subnormal, the largest.
const SPECIALS: [f32; 9] = [
    0.0,
    -0.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    f32::MIN_POSITIVE,
    f32::from_bits(1),
    f32::MAX,
    -f32::MAX,
];

/// The f32 values a conversion to `f` is checked on: specials, powers of two and their
/// neighbours, every tie between neighbouring codes, values around the largest finite value
/// and seeded random bit patterns.
fn probes(f: &MiniFloat) -> Vec<f32> {
    let mut inputs: Vec<f32> = SPECIALS.to_vec();
    for e in -149..=20 {
        let p = 2f32.powi(e);
        for d in [-3i32, -2, -1, 0, 1, 2, 3] {
            let v = f32::from_bits((p.to_bits() as i32 + d) as u32);
            inputs.push(v);
            inputs.push(-v);
        }
    }
    // Every tie and its neighbours between consecutive finite codes.
    let codes = 1u32 << (f.bits() - 1);
    for c in 0..codes - 1 {
        let (a, b) = (f.decode(c), f.decode(c + 1));
        if a.is_finite() && b.is_finite() {
            let mid = ((a + b) / 2.0) as f32;
            for d in [-1i32, 0, 1] {
                let v = f32::from_bits((mid.to_bits() as i32 + d).max(0) as u32);
                inputs.push(v);
                inputs.push(-v);
            }
        }
    }
    // Around the largest finite value.
    let max = f.max_value() as f32;
    for k in 0..64 {
        inputs.push(max * (1.0 + k as f32 / 32.0));
    }
    let mut rng = Rng::new(2026);
    for _ in 0..20000 {
        inputs.push(f32::from_bits(rng.next() as u32));
    }
    inputs
}

/// The reference's codes (`mode` encode or round) for the f32 values `inputs`, one each.
fn reference_codes(mode: &str, f: &MiniFloat, inputs: &[f32]) -> Vec<u32> {
    let text: String = inputs
        .iter()
        .map(|x| format!("{:08x}\n", x.to_bits()))
        .collect();
    let want = reference(mode, f, &text);
    assert_eq!(want.len(), inputs.len());
    want.iter()
        .map(|w| u32::from_str_radix(w, 16).unwrap())
        .collect()
}

#[test]
fn encode_matches_ml_dtypes() {
    if !have_reference() {
        return;
    }
    for f in [E4M3, E5M2, BF16, FP16, E4M3FNUZ, E5M2FNUZ, E2M1] {
        let inputs = probes(&f);
        let want = reference_codes("encode", &f, &inputs);
        for (x, &w) in inputs.iter().zip(&want) {
            let got = f.encode(*x);
            // (E2M1 has no NaN: its code for one is compared exactly.)
            if x.is_nan() && f.decode(w).is_nan() {
                assert!(
                    f.decode(got).is_nan() && f.decode(w).is_nan(),
                    "{}: NaN",
                    f.name
                );
            } else {
                assert_eq!(
                    got,
                    w,
                    "{}: encode({x:e} = {:#010x}) = {got:#x}, ml_dtypes {w:#x}",
                    f.name,
                    x.to_bits()
                );
            }
        }
    }
}

/// The host's float16, bfloat16, float8 and float4 rounding (`round_ieee`, overflowing to
/// infinity, or NaN for E4M3 and the fnuz formats, saturating for E2M1) is numpy's float16
/// cast and ml_dtypes' bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
/// float8_e5m2fnuz and float4_e2m1fn casts, on every probe.
#[test]
fn ieee_rounding_matches_numpy_and_ml_dtypes() {
    if !have_reference() {
        return;
    }
    for f in [BF16, FP16, E4M3, E5M2, E4M3FNUZ, E5M2FNUZ, E2M1] {
        let inputs = probes(&f);
        let want = reference_codes("round", &f, &inputs);
        for (x, &w) in inputs.iter().zip(&want) {
            let got = f.round_ieee(f64::from(*x));
            let w = f.decode(w);
            assert!(
                got == w && got.is_sign_negative() == w.is_sign_negative()
                    || got.is_nan() && w.is_nan(),
                "{}: round({x:e}) = {got:e}, reference {w:e}",
                f.name
            );
        }
    }
}

/// The host's conversion to float8e8m0 (`e8m0_code`, every round_mode, saturating or not)
/// is ONNX's own `numpy_helper.to_float8e8m0` on every probe of E4M3's list that is a
/// normal float32 (ONNX's reads the float32 exponent bits, so for subnormals, zero and
/// infinity it differs as the README says) and on powers of two across float32's normal
/// range and their neighbours.
#[test]
fn e8m0_conversion_matches_onnx() {
    use hwgen::numeric::mx::{e8m0_code, E8m0Round};
    if !have_python_modules(&["onnx", "numpy"]) {
        return;
    }
    let mut inputs: Vec<f32> = probes(&E4M3)
        .into_iter()
        .filter(|x| x.is_normal())
        .collect();
    for e in -126..=127 {
        let p = 2f32.powi(e);
        for d in [-1i32, 0, 1] {
            inputs.push(f32::from_bits((p.to_bits() as i32 + d) as u32));
        }
        inputs.push(p * 1.5);
        inputs.push(-p * 1.25);
    }
    let inputs: Vec<f32> = inputs.into_iter().filter(|x| x.is_normal()).collect();
    let text: String = inputs
        .iter()
        .map(|x| format!("{:08x}\n", x.to_bits()))
        .collect();
    for (mode, round) in [
        ("up", E8m0Round::Up),
        ("down", E8m0Round::Down),
        ("nearest", E8m0Round::Nearest),
    ] {
        for saturate in [false, true] {
            let flag = if saturate { "1" } else { "0" };
            let want = run_reference("e8m0_reference.py", &[mode, flag], &text);
            let want: Vec<&str> = want.lines().collect();
            assert_eq!(want.len(), inputs.len());
            for (x, w) in inputs.iter().zip(want) {
                let got = e8m0_code(f64::from(*x), round, saturate);
                assert_eq!(
                    format!("{got:x}"),
                    w,
                    "{mode}, saturate {saturate}: {x:e} ({:#010x})",
                    x.to_bits()
                );
            }
        }
    }
}

fn have_gfloat() -> bool {
    have_python_modules(&["gfloat", "numpy"])
}

#[test]
fn mxint8_blocks_match_gfloat() {
    use hwgen::numeric::mx::{quantize_block, MXINT8};
    if !have_gfloat() {
        return;
    }
    let mut rng = Rng::new(99);
    let mut blocks: Vec<Vec<f32>> = Vec::new();
    for b in 0..3000 {
        // Magnitudes across the whole f32 range, including subnormal blocks, exact powers
        // of two, values a few ulps below them, zeros and ties.
        let exp = (b % 300) - 160;
        let block: Vec<f32> = (0..32)
            .map(|k| {
                let r = rng.next();
                match (b + k) % 7 {
                    0 => 0.0,
                    1 => 2f32.powi((exp + (r % 8) as i32).clamp(-149, 127)),
                    2 => f32::from_bits(2f32.powi(exp.clamp(-126, 127)).to_bits() - (r % 4) as u32),
                    3 => -(((r % 255) as f32 + 0.5) * 2f32.powi((exp - 6).clamp(-149, 100))),
                    _ => {
                        let m = f32::from_bits(0x3f80_0000 | (r as u32 & 0x7f_ffff));
                        let s = if r >> 40 & 1 == 1 { -1.0 } else { 1.0 };
                        s * m * 2f32.powi((exp + (r >> 50) as i32 % 4).clamp(-149, 127))
                    }
                }
            })
            .filter(|v: &f32| v.is_finite())
            .collect();
        blocks.push(block);
    }
    blocks.push(vec![0.0; 32]);
    let input: String = blocks
        .iter()
        .map(|b| {
            b.iter()
                .map(|v| format!("{:08x}", v.to_bits()))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect();
    let text = run_reference("mx_reference.py", &[], &input);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), blocks.len());
    for (b, line) in blocks.iter().zip(lines) {
        let want: Vec<i32> = line
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        let (scale, q) = quantize_block(b, MXINT8);
        assert_eq!(i32::from(scale), want[0], "scale of {b:?}");
        assert_eq!(q, want[1..].to_vec(), "elements of {b:?}");
    }
}

fn have_softposit() -> bool {
    have_python_modules(&["softposit"])
}

fn posit_reference(mode: &str, p: &Posit, input: &str) -> Vec<String> {
    run_reference("posit_reference.py", &[mode, &p.es.to_string()], input)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Every code of posit8 with es = 0 and es = 2 decodes to SoftPosit's value (NaR: NaN).
#[test]
fn posit8_decodes_every_code_like_softposit() {
    if !have_softposit() {
        return;
    }
    for p in [POSIT8_ES0, POSIT8_ES2] {
        let want = posit_reference("decode", &p, "");
        assert_eq!(want.len(), 256);
        for (code, w) in want.iter().enumerate() {
            let got = p.decode(code as u32);
            let got = if got.is_nan() {
                "nar".to_string()
            } else {
                format!("{:016x}", got.to_bits())
            };
            assert_eq!(&got, w, "posit8 es={} code {code:#04x}", p.es);
        }
    }
}

/// Encoding agrees with SoftPosit on specials, both ends of the range, every power of two
/// from 2^-60 to 2^60 and its f32 neighbours, every rounding tie on the bit string (from
/// SoftPosit's 9-bit decode) and one ulp either side, and seeded random f32 bit patterns.
#[test]
fn posit8_encodes_like_softposit() {
    if !have_softposit() {
        return;
    }
    for p in [POSIT8_ES0, POSIT8_ES2] {
        let mut inputs: Vec<f32> = SPECIALS.to_vec();
        let nudge = |v: f32, d: i32| f32::from_bits((v.to_bits() as i32 + d).max(0) as u32);
        for e in -60..=60 {
            for d in [-2, -1, 0, 1, 2] {
                let v = nudge(2f32.powi(e), d);
                inputs.extend([v, -v]);
            }
        }
        let ties = posit_reference("ties", &p, "");
        assert_eq!(ties.len(), 126);
        for (i, t) in ties.iter().enumerate() {
            let c = i as u32 + 1;
            let tie = f64::from_bits(u64::from_str_radix(t, 16).unwrap());
            assert!(p.decode(c) < tie && tie < p.decode(c + 1), "tie {c:#x}");
            for d in [-1, 0, 1] {
                let v = nudge(tie as f32, d);
                inputs.extend([v, -v]);
            }
        }
        let mut rng = Rng::new(8);
        for _ in 0..20000 {
            inputs.push(f32::from_bits(rng.next() as u32));
        }
        let text: String = inputs
            .iter()
            .map(|x| format!("{:08x}\n", x.to_bits()))
            .collect();
        let want = posit_reference("encode", &p, &text);
        assert_eq!(want.len(), inputs.len());
        for (x, w) in inputs.iter().zip(&want) {
            let got = p.encode(f64::from(*x));
            let w = u32::from_str_radix(w, 16).unwrap();
            assert_eq!(
                got,
                w,
                "posit8 es={}: encode({x:e} = {:#010x}) = {got:#04x}, SoftPosit {w:#04x}",
                p.es,
                x.to_bits()
            );
        }
    }
}
