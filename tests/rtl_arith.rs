//! The FP32 arithmetic blocks of the MX/FP datapath in Verilator, bit for bit against the
//! FP32 contract of `hwgen::numeric::fp32` (which is the host CPU's IEEE arithmetic plus the
//! flush rules): `hwgen_fp32_add` on every pair of special values and ~200k random and
//! adversarial pairs, `hwgen_mx_dequant` on every scale pair around the range limits and
//! random partial sums for MXINT8 and MXINT4 blocks. Both modules are also linted with
//! `verilator --lint-only -Wall`.

mod common;

use common::*;
use hwgen::numeric::fp32;
use hwgen::numeric::mx::{MxInt, MXINT4, MXINT8};
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

fn psum_width(t: MxInt, block_size: u32) -> u32 {
    2 * t.bits + block_size.trailing_zeros()
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
    let psum_w = psum_width(t, block_size);
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
        let want = fp32::mx_dequant(p, sa, sb, t);
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
    for (top, params) in [
        ("hwgen_fp32_add", vec![]),
        ("hwgen_mx_dequant", vec!["-GPSUM_W=21", "-GFRAC=6"]),
        ("hwgen_mx_dequant", vec!["-GPSUM_W=13", "-GFRAC=2"]),
        ("hwgen_mx_dequant", vec!["-GPSUM_W=23", "-GFRAC=6"]),
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
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    // Two unconnected top modules are expected here; any other message is not.
    let messages: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        out.status.success() && messages.is_empty(),
        "iverilog -g2005 -Wall:\n{text}"
    );
}
