//! The FP32 arithmetic blocks of the MX/FP datapath in Verilator, bit for bit against the
//! FP32 contract of `hwgen::numeric::fp32` (which is the host CPU's IEEE arithmetic plus the
//! flush rules): `hwgen_fp32_add` on every pair of special values and ~200k random and
//! adversarial pairs, `hwgen_mx_dequant` on every scale pair around the range limits and
//! random partial sums for MXINT8 and MXINT4 blocks. Both modules are also linted with
//! `verilator --lint-only -Wall`.

mod common;

use common::*;
use hwgen::numeric::mx::{self, MxInt, MXINT4, MXINT8};
use hwgen::numeric::posit::{self, Posit, POSIT8_ES0, POSIT8_ES2};
use hwgen::numeric::{fp32, int, minifloat, IntType, PostOps, Requant};
use hwgen::sim::verilator::{run, Model};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The arithmetic blocks rendered with the 8x8 config's banner, once per test process.
fn arith_rtl() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("arith-rtl-{}", std::process::id()));
        let design = hwgen::config::load(&repo().join("configs/8x8_int8.toml")).unwrap();
        hwgen::rtl::arithmetic_blocks(&design)
            .write_atomic(&dir)
            .unwrap();
        dir
    })
}

fn block(name: &str) -> PathBuf {
    arith_rtl().join("rtl").join(name)
}

/// Values where adders go wrong: zeros, subnormals, the normal range's ends, infinities,
/// NaNs, and neighbours of powers of two.
fn special_values() -> Vec<u32> {
    let mut v = vec![
        0x0000_0000,
        0x0000_0001,
        0x007f_ffff,
        0x0080_0000,
        0x0080_0001,
        0x00ff_ffff,
        0x3f80_0000,
        0x3f80_0001,
        0x3f7f_ffff,
        0x3fc0_0000,
        0x4000_0000,
        0x4b80_0000,
        0x4b80_0001,
        0x3300_0000,
        0x3380_0000,
        0x7f7f_ffff,
        0x7f7f_fffe,
        0x7f00_0000,
        0x7f80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0x7fff_ffff,
    ];
    let negated: Vec<u32> = v.iter().map(|x| x | 0x8000_0000).collect();
    v.extend(negated);
    v
}

fn add_vectors(rng: &mut Rng) -> Vec<(u32, u32)> {
    let specials = special_values();
    let mut v = Vec::new();
    for &a in &specials {
        for &b in &specials {
            v.push((a, b));
        }
    }
    while v.len() < 200_000 {
        let a = rng.next() as u32;
        let b = match rng.range(0, 5) {
            // unrelated bit patterns
            0 => rng.next() as u32,
            // the same exponent give or take 0..=30, either sign: alignment and rounding
            1 | 2 => {
                let exp = (a >> 23) & 0xff;
                let delta = rng.range(-30, 30);
                let e = (i64::from(exp) + delta).clamp(1, 254) as u32;
                ((rng.next() as u32) & 0x8000_0000) | (e << 23) | ((rng.next() as u32) & 0x7f_ffff)
            }
            // -a give or take a few ulps: massive cancellation
            3 | 4 => (a ^ 0x8000_0000).wrapping_add(rng.range(-3, 3) as u32),
            // opposite signs near the bottom of the normal range: results that flush
            _ => {
                let small = |rng: &mut Rng| {
                    ((rng.range(1, 3) as u32) << 23) | ((rng.next() as u32) & 0x7f_ffff)
                };
                let a = (a & 0x8000_0000) | small(rng);
                v.push((a, (a & 0x8000_0000) ^ 0x8000_0000 | small(rng)));
                continue;
            }
        };
        v.push((a, b));
    }
    v
}

fn dequant_vectors(t: MxInt, psum_w: u32, rng: &mut Rng) -> Vec<(i64, u8, u8)> {
    let block = 1i64 << (psum_w - 2 * t.bits);
    let max_mag = block << (2 * (t.bits - 1));
    let mut psums = vec![
        0,
        1,
        -1,
        2,
        -2,
        3,
        -3,
        max_mag,
        -max_mag,
        max_mag - 1,
        1 - max_mag,
    ];
    for k in 0..(psum_w - 1) {
        psums.push(1 << k);
        psums.push(-(1 << k));
        psums.push((1 << k) + 1);
    }
    let mut v = Vec::new();
    // Every scale pair around where the result leaves the normal range, on a few sums.
    for &p in &psums {
        for sa in (0..=255u8).step_by(3) {
            v.push((p, sa, (rng.range(0, 255)) as u8));
            v.push((p, sa, 0xff - sa));
        }
    }
    while v.len() < 60_000 {
        let p = rng.range(-max_mag, max_mag);
        v.push((p, rng.range(0, 255) as u8, rng.range(0, 255) as u8));
    }
    v
}

fn check(name: &str, t: MxInt, block_size: u32, n_add_max: usize, seed: u64) {
    if !have_tool("verilator", name) {
        return;
    }
    let psum_w = t.psum_bits(block_size);
    let model = Model {
        top: "tb".into(),
        sources: vec![
            block("hwgen_fp32_add.v"),
            block("hwgen_mx_dequant.v"),
            testbench("tb_fp32_blocks.v"),
        ],
        include_dirs: vec![],
        harness: testbench("sim_main.cpp"),
        params: vec![
            ("PSUM_W".into(), psum_w.to_string()),
            ("FRAC".into(), t.frac.to_string()),
        ],
        trace: false,
        defines: vec![],
    };
    let exe = model
        .build(&sim_cache())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut rng = Rng::new(seed);
    let mut adds = add_vectors(&mut rng);
    adds.truncate(n_add_max);
    let dequants = dequant_vectors(t, psum_w, &mut rng);

    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f);
    let add_text: String = adds
        .iter()
        .map(|(a, b)| format!("{a:08x}{b:08x}\n"))
        .collect();
    let dequant_text: String = dequants
        .iter()
        .map(|(p, sa, sb)| format!("{:08x}{sa:02x}{sb:02x}\n", *p as u32))
        .collect();
    std::fs::write(path("add.hex"), add_text).unwrap();
    std::fs::write(path("dequant.hex"), dequant_text).unwrap();
    run(
        &exe,
        &[
            format!("+add={}", path("add.hex").display()),
            format!("+add_out={}", path("add_out.hex").display()),
            format!("+dequant={}", path("dequant.hex").display()),
            format!("+dequant_out={}", path("dequant_out.hex").display()),
            format!("+n_add={}", adds.len()),
            format!("+n_dequant={}", dequants.len()),
        ],
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));

    let read = |f: &str| -> Vec<u32> {
        std::fs::read_to_string(path(f))
            .unwrap()
            .lines()
            .map(|l| u32::from_str_radix(l, 16).unwrap())
            .collect()
    };
    let sums = read("add_out.hex");
    assert_eq!(sums.len(), adds.len(), "{name}: add result count");
    let mut wrong = Vec::new();
    for (&(a, b), &got) in adds.iter().zip(&sums) {
        let want = fp32::add(a, b);
        if got != want {
            wrong.push(format!(
                "{a:08x} + {b:08x}: rtl {got:08x}, contract {want:08x}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{name}: {} of {} sums differ, first: {:?}",
        wrong.len(),
        adds.len(),
        &wrong[..wrong.len().min(8)]
    );
    let values = read("dequant_out.hex");
    assert_eq!(values.len(), dequants.len(), "{name}: dequant result count");
    for (&(p, sa, sb), &got) in dequants.iter().zip(&values) {
        let want = mx::dequant(p, sa, sb, t);
        assert_eq!(
            got, want,
            "{name}: dequant psum {p} scales {sa:#04x} {sb:#04x}: rtl {got:08x}, contract {want:08x}"
        );
    }
}

#[test]
fn fp32_add_and_mxint8_dequant() {
    check("fp32_add_and_mxint8_dequant", MXINT8, 32, usize::MAX, 1);
}

#[test]
fn mxint8_block64_dequant() {
    check("mxint8_block64_dequant", MXINT8, 64, 1000, 2);
}

#[test]
fn mxint4_dequant() {
    check("mxint4_dequant", MXINT4, 32, 1000, 3);
}

#[test]
fn arithmetic_blocks_lint_clean() {
    if !have_tool("verilator", "arithmetic_blocks_lint_clean") {
        return;
    }
    let mini = |e: u32, m: u32, b: u32, i: u32| {
        vec![
            format!("-GEXP_W={e}"),
            format!("-GMAN_W={m}"),
            format!("-GBIAS={b}"),
            format!("-GIEEE={i}"),
        ]
    };
    let strs = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    for (top, params) in [
        ("hwgen_fp32_add", vec![]),
        ("hwgen_mx_dequant", strs(&["-GPSUM_W=21", "-GFRAC=6"])),
        ("hwgen_mx_dequant", strs(&["-GPSUM_W=13", "-GFRAC=2"])),
        ("hwgen_mx_dequant", strs(&["-GPSUM_W=23", "-GFRAC=6"])),
        (
            "hwgen_mx_quantize",
            strs(&["-GKPF=32", "-GOUTPUT_W=8", "-GFRAC=6"]),
        ),
        ("hwgen_fp_mul", strs(&["-GUSIG_W=4", "-GUEXP_W=10"])),
        ("hwgen_fp_mul", strs(&["-GUSIG_W=8", "-GUEXP_W=10"])),
        ("hwgen_unpack_mini", mini(4, 3, 7, 0)),
        ("hwgen_unpack_mini", mini(5, 2, 15, 1)),
        ("hwgen_unpack_mini", mini(8, 7, 127, 1)),
        ("hwgen_fp32_to_mini", mini(4, 3, 7, 0)),
        ("hwgen_fp32_to_mini", mini(5, 2, 15, 1)),
        ("hwgen_fp32_to_mini", mini(8, 7, 127, 1)),
        ("hwgen_mini_to_fp32", mini(4, 3, 7, 0)),
        ("hwgen_mini_to_fp32", mini(5, 2, 15, 1)),
        ("hwgen_mini_to_fp32", mini(8, 7, 127, 1)),
        ("hwgen_unpack_posit", strs(&["-GN=8", "-GES=0"])),
        ("hwgen_unpack_posit", strs(&["-GN=8", "-GES=2"])),
        ("hwgen_fp32_to_posit", strs(&["-GN=8", "-GES=0"])),
        ("hwgen_fp32_to_posit", strs(&["-GN=8", "-GES=2"])),
        ("hwgen_fp32_to_int", strs(&["-GOUTPUT_W=8", "-GFRAC=6"])),
        ("hwgen_fp32_to_int", strs(&["-GOUTPUT_W=4", "-GFRAC=2"])),
        ("hwgen_vector_lane", strs(&["-GACC_W=32", "-GOUTPUT_W=8"])),
        (
            "hwgen_vector_lane",
            strs(&["-GACC_W=16", "-GOUTPUT_W=4", "-GOUTPUT_SIGNED=0"]),
        ),
    ] {
        let file = block(&format!("{top}.v"));
        let out = std::process::Command::new("verilator")
            .args(["--lint-only", "-Wall", "--top-module", top])
            .args(&params)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{top} {params:?} is not lint-clean:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    if !have_tool("iverilog", "arithmetic_blocks_lint_clean") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("iverilog")
        .args(["-g2005", "-Wall", "-o"])
        .arg(dir.path().join("a.out"))
        .arg(block("hwgen_fp32_add.v"))
        .arg(block("hwgen_mx_dequant.v"))
        .arg(block("hwgen_mx_quantize.v"))
        .arg(block("hwgen_fp_mul.v"))
        .arg(block("hwgen_unpack_mini.v"))
        .arg(block("hwgen_fp32_to_mini.v"))
        .arg(block("hwgen_mini_to_fp32.v"))
        .arg(block("hwgen_unpack_posit.v"))
        .arg(block("hwgen_fp32_to_posit.v"))
        .arg(block("hwgen_fp32_to_int.v"))
        .arg(block("hwgen_vector_lane.v"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    // Several unconnected top modules are expected here; any message is not.
    let messages: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        out.status.success() && messages.is_empty(),
        "iverilog -g2005 -Wall:\n{text}"
    );
}

/// A float-like format whose decoder, multiplier and encoder are under test.
#[derive(Clone, Copy)]
enum Under {
    Mini(hwgen::numeric::MiniFloat),
    Posit(Posit),
}

impl Under {
    fn bits(&self) -> u32 {
        match self {
            Under::Mini(f) => f.bits(),
            Under::Posit(p) => p.bits,
        }
    }
    fn decode(&self, code: u32) -> f64 {
        match self {
            Under::Mini(f) => f.decode(code),
            Under::Posit(p) => p.decode(code),
        }
    }
    /// The contract's product and conversion (`numeric`: the host's IEEE arithmetic and
    /// conversions checked against ml_dtypes and SoftPosit).
    fn mul(&self, a: u32, b: u32) -> u32 {
        match self {
            Under::Mini(f) => minifloat::mul(a, b, *f),
            Under::Posit(p) => posit::mul(a, b, *p),
        }
    }
    fn to_code(self, v: u32) -> u32 {
        match self {
            Under::Mini(f) => minifloat::to_code(v, f),
            Under::Posit(p) => posit::to_code(v, p),
        }
    }
    /// The values where rounding turns from one code to the next: the midpoints of
    /// neighbouring minifloats, and for posits the values of the strings one bit longer
    /// that end in 1 (rounding is on the encoding).
    fn ties(&self) -> Vec<f64> {
        let codes = 1u32 << self.bits().min(16);
        match self {
            Under::Mini(f) => (0..codes)
                .filter_map(|c| {
                    let (v, next) = (f.decode(c), f.decode(c + 1));
                    (v.is_finite() && next.is_finite() && next.abs() > v.abs())
                        .then_some((v + next) / 2.0)
                })
                .collect(),
            Under::Posit(p) => {
                let longer = Posit {
                    bits: p.bits + 1,
                    es: p.es,
                };
                (0..codes)
                    .map(|c| longer.decode((c << 1) | 1))
                    .filter(|v| v.is_finite())
                    .collect()
            }
        }
    }
    fn model(&self) -> Model {
        let (params, defines) = match self {
            Under::Mini(f) => (
                vec![
                    ("EXP_W".into(), f.exp_bits.to_string()),
                    ("MAN_W".into(), f.man_bits.to_string()),
                    ("BIAS".into(), f.bias.to_string()),
                    ("IEEE".into(), u8::from(f.ieee_specials()).to_string()),
                ],
                vec![],
            ),
            Under::Posit(p) => (
                vec![
                    ("N".into(), p.bits.to_string()),
                    ("ES".into(), p.es.to_string()),
                ],
                vec!["HWGEN_POSIT".to_string()],
            ),
        };
        let (decode, encode) = match self {
            Under::Mini(_) => ("hwgen_unpack_mini.v", "hwgen_fp32_to_mini.v"),
            Under::Posit(_) => ("hwgen_unpack_posit.v", "hwgen_fp32_to_posit.v"),
        };
        let mut sources = vec![block(decode), block("hwgen_fp_mul.v"), block(encode)];
        if let Under::Mini(_) = self {
            sources.push(block("hwgen_mini_to_fp32.v"));
        }
        sources.push(testbench("tb_float_formats.v"));
        Model {
            top: "tb".into(),
            sources,
            include_dirs: vec![],
            harness: testbench("sim_main.cpp"),
            params,
            trace: false,
            defines,
        }
    }
}

/// A format's decoder with `hwgen_fp_mul`, and its encoder: every pair of codes (8-bit
/// formats; random pairs and every special for BF16) multiplied, and FP32 values around
/// every code, every rounding boundary, the format's limits and random bit patterns
/// converted, against the contract (`numeric`).
fn check_format(name: &str, f: Under, seed: u64) {
    if !have_tool("verilator", name) {
        return;
    }
    let exe = f
        .model()
        .build(&sim_cache())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut rng = Rng::new(seed);
    let codes = 1u32 << f.bits();
    let mut muls: Vec<(u32, u32)> = Vec::new();
    if f.bits() == 8 {
        for a in 0..codes {
            for b in 0..codes {
                muls.push((a, b));
            }
        }
    } else {
        let specials = [
            0u32, 1, 0x7f, 0x80, 0x81, 0x3f80, 0x3f81, 0x7f7f, 0x7f80, 0x7f81, 0x7fc0, 0x0080,
            0x00ff, 0x1f80, 0x6000,
        ];
        for &a in &specials {
            for &b in &specials {
                muls.push((a, b));
                muls.push((a | 0x8000, b));
            }
        }
        while muls.len() < 200_000 {
            muls.push((rng.next() as u32 & 0xffff, rng.next() as u32 & 0xffff));
        }
    }
    let mut convs: Vec<u32> = Vec::new();
    // A value and its FP32 neighbours (negative codes and ties give the negative side).
    let around = |x: f64, convs: &mut Vec<u32>| {
        let bits = (x as f32).to_bits();
        convs.extend([bits, bits.wrapping_add(1), bits.wrapping_sub(1)]);
    };
    for code in 0..codes.min(1 << 16) {
        let v = f.decode(code);
        if v.is_finite() {
            around(v, &mut convs);
        }
    }
    for t in f.ties() {
        around(t, &mut convs);
    }
    convs.extend([
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7f7f_ffff,
        0x0000_0001,
        0x8000_0000,
    ]);
    for _ in 0..50_000 {
        convs.push(rng.next() as u32);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = |x: &str| dir.path().join(x);
    let mul_text: String = muls
        .iter()
        .map(|(a, b)| format!("{a:04x}{b:04x}\n"))
        .collect();
    let conv_text: String = convs.iter().map(|v| format!("{v:08x}\n")).collect();
    std::fs::write(path("mul.hex"), mul_text).unwrap();
    std::fs::write(path("conv.hex"), conv_text).unwrap();
    run(
        &exe,
        &[
            format!("+mul={}", path("mul.hex").display()),
            format!("+mul_out={}", path("mul_out.hex").display()),
            format!("+conv={}", path("conv.hex").display()),
            format!("+conv_out={}", path("conv_out.hex").display()),
            format!("+n_mul={}", muls.len()),
            format!("+n_conv={}", convs.len()),
        ],
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let read = |x: &str| -> Vec<u32> {
        std::fs::read_to_string(path(x))
            .unwrap()
            .lines()
            .map(|l| u32::from_str_radix(l, 16).unwrap())
            .collect()
    };
    // Minifloats: each product line ends with a as FP32 (hwgen_mini_to_fp32), which the
    // row unit and the vector unit's add read (`FloatElement::value_fp32`).
    let lines: Vec<String> = std::fs::read_to_string(path("mul_out.hex"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let hex = |s: &str| u32::from_str_radix(s, 16).unwrap();
    let products: Vec<u32> = lines.iter().map(|l| hex(&l[..8])).collect();
    assert_eq!(products.len(), muls.len());
    if let Under::Mini(m) = f {
        use hwgen::numeric::FloatElement;
        let wrong: Vec<String> = muls
            .iter()
            .zip(&lines)
            .filter(|((a, _), l)| hex(&l[8..]) != m.value_fp32(*a))
            .map(|((a, _), l)| {
                format!("{a:#x}: rtl {}, contract {:08x}", &l[8..], m.value_fp32(*a))
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "{name}: {} codes as FP32 differ: {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(8)]
        );
    }
    let wrong: Vec<String> = muls
        .iter()
        .zip(&products)
        .filter(|((a, b), got)| **got != f.mul(*a, *b))
        .map(|((a, b), got)| {
            format!(
                "{a:#x} x {b:#x}: rtl {got:08x}, contract {:08x}",
                f.mul(*a, *b)
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{name}: {} products differ: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(8)]
    );
    let got_codes = read("conv_out.hex");
    assert_eq!(got_codes.len(), convs.len());
    let wrong: Vec<String> = convs
        .iter()
        .zip(&got_codes)
        .filter(|(v, got)| **got != f.to_code(**v))
        .map(|(v, got)| format!("{v:08x}: rtl {got:#x}, contract {:#x}", f.to_code(*v)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{name}: {} conversions differ: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(8)]
    );
}

#[test]
fn posit8_es0_multiply_and_convert() {
    check_format(
        "posit8_es0_multiply_and_convert",
        Under::Posit(POSIT8_ES0),
        7,
    );
}

#[test]
fn posit8_es2_multiply_and_convert() {
    check_format(
        "posit8_es2_multiply_and_convert",
        Under::Posit(POSIT8_ES2),
        8,
    );
}

#[test]
fn fp8_e4m3_multiply_and_convert() {
    check_format(
        "fp8_e4m3_multiply_and_convert",
        Under::Mini(hwgen::numeric::E4M3),
        4,
    );
}

#[test]
fn fp8_e5m2_multiply_and_convert() {
    check_format(
        "fp8_e5m2_multiply_and_convert",
        Under::Mini(hwgen::numeric::E5M2),
        5,
    );
}

#[test]
fn bf16_multiply_and_convert() {
    check_format(
        "bf16_multiply_and_convert",
        Under::Mini(hwgen::numeric::BF16),
        6,
    );
}

/// `hwgen_fp32_to_int` (the FP32 -> integer conversion of a multi-precision vector unit)
/// against `numeric::mx::to_fixed` (host f64 arithmetic and `round_ties_even`) for one
/// element width: for a spread of scale codes, every integer and every tie between
/// neighbours in and past the range, their f32 neighbours, specials, and random bit
/// patterns with random scales, with and without ReLU.
fn check_fixed(name: &str, out_w: u32, frac: u32, seed: u64) {
    if !have_tool("verilator", name) {
        return;
    }
    let model = Model {
        top: "tb".into(),
        sources: vec![block("hwgen_fp32_to_int.v"), testbench("tb_fp32_to_int.v")],
        include_dirs: vec![],
        harness: testbench("sim_main.cpp"),
        params: vec![
            ("OUTPUT_W".into(), out_w.to_string()),
            ("FRAC".into(), frac.to_string()),
        ],
        trace: false,
        defines: vec![],
    };
    let exe = model
        .build(&sim_cache())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let t = IntType::new(true, out_w);
    let hi = t.max();
    let mut rng = Rng::new(seed);
    let mut vecs: Vec<(u32, u8, bool)> = vec![(0, 127, false)];
    for scale in [
        0u8, 1, 2, 60, 100, 126, 127, 128, 133, 140, 180, 230, 253, 254, 255,
    ] {
        // One unit of q is 2^(scale - 127 - frac).
        let unit = 2f64.powi(i32::from(scale) - 127 - frac as i32);
        for half in -(4 * hi + 6)..=(4 * hi + 6) {
            let x = (half as f64 / 2.0 * unit) as f32;
            if x.is_finite() && x != 0.0 {
                let b = x.to_bits();
                for v in [b, b.wrapping_add(1), b.wrapping_sub(1)] {
                    vecs.push((v, scale, false));
                    vecs.push((v, scale, true));
                }
            }
        }
        for v in special_values() {
            vecs.push((v, scale, false));
            vecs.push((v, scale, true));
        }
    }
    while vecs.len() < 300_000 {
        let r = rng.next();
        vecs.push((r as u32, (r >> 32) as u8, (r >> 40) & 1 == 1));
    }
    let text: String = vecs
        .iter()
        .map(|(v, s, r)| format!("{:x}{s:02x}{v:08x}\n", u8::from(*r)))
        .collect();
    let got: Vec<i64> = run_vectors(&exe, name, &text, vecs.len())
        .iter()
        .map(|l| {
            let u = i64::from_str_radix(l, 16).unwrap();
            if u > hi {
                u - (1 << out_w)
            } else {
                u
            }
        })
        .collect();
    assert_eq!(got.len(), vecs.len());
    let wrong: Vec<String> = vecs
        .iter()
        .zip(&got)
        .filter(|((v, s, r), g)| **g != mx::to_fixed(*v, *s, frac, t, *r))
        .map(|((v, s, r), g)| {
            format!(
                "{v:08x} scale {s} relu {r}: rtl {g}, contract {}",
                mx::to_fixed(*v, *s, frac, t, *r)
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{name}: {} of {} conversions differ: {:?}",
        wrong.len(),
        vecs.len(),
        &wrong[..wrong.len().min(8)]
    );
}

#[test]
fn fp32_to_int8_and_int4_at_fixed_scales() {
    check_fixed("fp32_to_int8_at_fixed_scales", 8, 6, 21);
    check_fixed("fp32_to_int4_at_fixed_scales", 4, 2, 22);
}

/// `hwgen_rne_shift` (the transposer's re-blocking lanes) against `mx::shift_rne` on every
/// code of MXINT8 and MXINT4 and every shift from 0 to 255.
fn check_rne_shift(t: MxInt) {
    let name = format!("rne_shift_{}", t.name);
    if !have_tool("verilator", &name) {
        return;
    }
    let model = Model {
        top: "tb".into(),
        sources: vec![block("hwgen_rne_shift.v"), testbench("tb_rne_shift.v")],
        include_dirs: vec![],
        harness: testbench("sim_main.cpp"),
        params: vec![("W".into(), t.bits.to_string())],
        trace: false,
        defines: vec![],
    };
    let exe = model
        .build(&sim_cache())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let vecs: Vec<(i64, u32)> = (i64::from(t.min())..=i64::from(t.max()))
        .flat_map(|q| (0..256u32).map(move |k| (q, k)))
        .collect();
    let mask = (1i64 << t.bits) - 1;
    let text: String = vecs
        .iter()
        .map(|(q, k)| format!("{k:02x}{:02x}\n", q & mask))
        .collect();
    let got: Vec<i64> = run_vectors(&exe, &name, &text, vecs.len())
        .iter()
        .map(|l| {
            t.code_type()
                .wrap(i128::from(i64::from_str_radix(l, 16).unwrap()))
        })
        .collect();
    assert_eq!(got.len(), vecs.len());
    let wrong: Vec<String> = vecs
        .iter()
        .zip(&got)
        .filter(|((q, k), g)| **g != mx::shift_rne(*q, *k, t))
        .map(|((q, k), g)| format!("{q} >> {k}: rtl {g}, contract {}", mx::shift_rne(*q, *k, t)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{name}: {} of {} shifts differ: {:?}",
        wrong.len(),
        vecs.len(),
        &wrong[..wrong.len().min(8)]
    );
}

#[test]
fn rne_shift_every_code_and_shift() {
    check_rne_shift(MXINT8);
    check_rne_shift(MXINT4);
}

/// `hwgen_vector_lane` against the integer lane of the README (`numeric::int::lane`) on
/// random accumulator values, biases, multipliers, every shift from 0 to 63 (shifts past
/// the product's width must round to 0: the rounding constant once overflowed for shifts
/// from 52 on), zero points, clamps, operands and flags (leaky ReLU with a random negative
/// multiplier among them, and raw slices of the accumulator, flag bit 7), and the
/// combination with the operand (`add`, flag bit 2; its product with flag bit 8) with
/// random weights, shifts and zero points, the widest weights and exact ties, for int8 and
/// uint8 outputs.
fn check_lane(name: &str, out: IntType, seed: u64) {
    if !have_tool("verilator", name) {
        return;
    }
    let model = Model {
        top: "tb".into(),
        sources: vec![block("hwgen_vector_lane.v"), testbench("tb_vector_lane.v")],
        include_dirs: vec![],
        harness: testbench("sim_main.cpp"),
        params: vec![
            ("OUTPUT_W".into(), out.bits.to_string()),
            ("OUTPUT_SIGNED".into(), u8::from(out.signed).to_string()),
        ],
        trace: false,
        defines: vec![],
    };
    let exe = model
        .build(&sim_cache())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut rng = Rng::new(seed);
    // (acc, bias, neg_multiplier << 16 | multiplier, shift, zero_point, clamp_max, operand,
    // flags, add_weight << 16 | opnd_weight (16-bit two's complement each), add_shift,
    // opnd_zero, add_zero)
    let mut vecs: Vec<[i64; 12]> = Vec::new();
    let pair = |a: i64, b: i64| (a & 0xffff) << 16 | (b & 0xffff);
    for shift in 0..64 {
        // The extremes: the largest sums of either sign, with and without the widest bias
        // (flag bit 4), times the largest multiplier and times 1.
        for (acc, bias) in [
            (i64::from(i32::MIN), -(1 << 20)),
            (i64::from(i32::MAX), 1 << 20),
        ] {
            // (With raw, flag bit 7: the saturated accumulator's slices.)
            for flags in [0, 16, 128, 128 | 16] {
                vecs.push([acc, bias, 65535, shift, 0, out.max(), 0, flags, 0, 0, 0, 0]);
                vecs.push([acc, 0, 1, shift, 0, out.max(), 0, flags, 0, 0, 0, 0]);
            }
        }
        // The combination's extremes: the widest weights on the largest differences, and
        // its own shift from 0 to 63 (here equal to the loop's), as sum and product.
        for (w, b) in [(-32768, out.min()), (32767, out.max()), (-32768, out.max())] {
            for flags in [4, 4 | 256, 4 | 256 | 64] {
                let acc = i64::from(if w > 0 { i32::MAX } else { i32::MIN });
                let ws = pair(w, w);
                vecs.push([
                    acc,
                    0,
                    1,
                    0,
                    7,
                    out.max(),
                    b,
                    flags,
                    ws,
                    shift,
                    out.min(),
                    -5,
                ]);
                let other = i64::from(i32::MIN) + i64::from(i32::MAX) - acc;
                vecs.push([
                    other,
                    0,
                    1,
                    0,
                    -7,
                    out.max(),
                    b,
                    flags,
                    ws,
                    shift,
                    out.max(),
                    5,
                ]);
            }
        }
        // Exact ties: odd multiples of 2^(shift-1) (times a multiplier of 1 or 3), rounded
        // up and, with half_even (flag bit 6), to even.
        if (1..=24).contains(&shift) {
            for k in -6i64..6 {
                for (m, flags) in [(1, 0), (1, 64), (3, 64), (3, 64 | 16)] {
                    let acc = (2 * k + 1) << (shift - 1);
                    vecs.push([acc, 0, m, shift, 3, out.max(), 0, flags, 0, 0, 0, 0]);
                }
            }
            // Ties of the combination: t = (2k + 1) 2^(shift - 1), the requantized
            // difference q - 3 = acc = 2k + 1 times add_weight 2^(shift - 1) (sum, with
            // opnd_weight 0) times the operand difference 6 - 5 = 1 (product).
            if shift <= 14 {
                for k in -5i64..5 {
                    let w = pair(1 << (shift - 1), 0);
                    for flags in [4, 4 | 64, 4 | 256, 4 | 256 | 64] {
                        vecs.push([2 * k + 1, 0, 1, 0, 3, out.max(), 6, flags, w, shift, 5, 2]);
                    }
                }
            }
        }
        for _ in 0..300 {
            let wide = rng.range(0, 3) == 0;
            let acc = if wide {
                rng.range(i64::from(i32::MIN), i64::from(i32::MAX))
            } else {
                rng.range(-3000, 3000)
            };
            vecs.push([
                acc,
                rng.range(-(1 << 20), 1 << 20),
                rng.range(0, 65535) << 16 | rng.range(0, 65535),
                shift,
                rng.range(-40, 40),
                rng.range(out.min(), out.max()),
                rng.range(out.min(), out.max()),
                rng.range(0, 511),
                match rng.range(0, 3) {
                    0 => pair(rng.range(-32768, 32767), rng.range(-32768, 32767)),
                    _ => pair(rng.range(-300, 300), rng.range(-300, 300)),
                },
                rng.range(0, 63),
                rng.range(out.min(), out.max()),
                rng.range(-300, 300),
            ]);
        }
    }
    let hex: String = vecs
        .iter()
        .map(|v| {
            v.iter()
                .map(|f| format!("{:08x}", *f as u32))
                .collect::<String>()
                + "\n"
        })
        .collect();
    let got: Vec<i64> = run_vectors(&exe, name, &hex, vecs.len())
        .iter()
        .map(|l| out.wrap(i128::from(i64::from_str_radix(l, 16).unwrap())))
        .collect();
    assert_eq!(got.len(), vecs.len());
    let want = |v: &[i64; 12]| {
        let flag = |bit: u32| (v[7] >> bit) & 1 == 1;
        let ops = PostOps {
            negative_multiplier: flag(5).then_some((v[2] >> 16) as u64),
            requant: Requant {
                multiplier: (v[2] & 0xffff) as u64,
                shift: v[3] as u32,
                zero_point: v[4],
                half_even: flag(6),
            },
            relu: flag(3),
            clamp: flag(0).then_some(v[5]),
            add: flag(2).then_some(int::Combine {
                product: flag(8),
                weight: i64::from((v[8] >> 16) as u16 as i16),
                operand_weight: i64::from(v[8] as u16 as i16),
                shift: v[9] as u32,
                operand_zero: v[10],
                output_zero: v[11],
            }),
            pool: flag(1),
            raw: flag(7).then_some(IntType::new(true, 32)),
            ..PostOps::default()
        };
        int::lane(v[0], flag(4).then_some(v[1]), &ops, v[6], out)
    };
    let wrong: Vec<String> = vecs
        .iter()
        .zip(&got)
        .filter(|(v, g)| **g != want(v))
        .map(|(v, g)| format!("{v:?}: rtl {g}, contract {}", want(v)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{name}: {} of {} lanes differ: {:?}",
        wrong.len(),
        vecs.len(),
        &wrong[..wrong.len().min(8)]
    );
}

#[test]
fn vector_lane_requantizes_every_shift() {
    check_lane("vector_lane_int8", IntType::new(true, 8), 31);
    check_lane("vector_lane_uint8", IntType::new(false, 8), 32);
}

/// Run a one-file vector testbench (`+vec`, `+out`, `+n`: tb_fp32_to_int.v and its
/// kind) on `text`, `n` vectors; the lines it wrote.
fn run_vectors(exe: &Path, name: &str, text: &str, n: usize) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("vec.hex"), text).unwrap();
    run(
        exe,
        &[
            format!("+vec={}", dir.path().join("vec.hex").display()),
            format!("+out={}", dir.path().join("out.hex").display()),
            format!("+n={n}"),
        ],
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    std::fs::read_to_string(dir.path().join("out.hex"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}
