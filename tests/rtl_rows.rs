//! The row unit's blocks in Verilator, bit for bit against `hwgen::numeric::fp32`,
//! `numeric::spline` and `numeric::rows` (which are the host's IEEE arithmetic plus the
//! contract's flush rules): the FP32 multiplier, maximum, integer conversion, rounding to
//! output integers, the reciprocal and square root pipelines and the statistics' finish
//! on special values and random, near-tie and near-underflow operands; the lane
//! reduction tree; and the element pipeline of one lane under every stage, e^x and a GELU
//! spline, on random elements and parameters (one model, rtl-tests/tb/tb_row_blocks.v).

mod common;

use common::*;
use hwgen::numeric::rows::{self, Consts, Finish, Func, Lane, Reduce, Stages};
use hwgen::numeric::spline::{Spline, Tail};
use hwgen::numeric::{fp32, IntType};
use hwgen::sim::verilator::{run, Model};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The blocks rendered with the 8x8 config's banner, once per test process.
fn blocks() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("row-rtl-{}", std::process::id()));
        let design = hwgen::config::load(&repo().join("configs/8x8_int8.toml")).unwrap();
        hwgen::rtl::arithmetic_blocks(&design)
            .write_atomic(&dir)
            .unwrap();
        dir
    })
}

/// The testbench model, built once per process.
fn exe() -> Option<PathBuf> {
    if !have_tool("verilator", "row unit blocks") {
        return None;
    }
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    Some(
        EXE.get_or_init(|| {
            let rtl = |n: &str| blocks().join("rtl").join(format!("{n}.v"));
            let model = Model {
                top: "tb".into(),
                sources: [
                    "hwgen_fp32_add",
                    "hwgen_fp32_mul",
                    "hwgen_fp32_max",
                    "hwgen_int_to_fp32",
                    "hwgen_row_int_in",
                    "hwgen_fp32_quantize",
                    "hwgen_fp32_recip",
                    "hwgen_fp32_sqrt",
                    "hwgen_spline_select",
                    "hwgen_exp_split",
                    "hwgen_ldexp",
                    "hwgen_row_lane",
                    "hwgen_row_reduce",
                    "hwgen_row_finish",
                ]
                .iter()
                .map(|n| rtl(n))
                .chain([testbench("tb_row_blocks.v")])
                .collect(),
                include_dirs: vec![blocks().join("rtl")],
                harness: testbench("sim_main.cpp"),
                params: vec![],
                trace: false,
                defines: vec![],
            };
            model
                .build(&sim_cache())
                .unwrap_or_else(|e| panic!("tb_row_blocks: {e}"))
        })
        .clone(),
    )
}

/// FP32 values where arithmetic goes wrong: zeros, subnormals, the ends of the normal
/// range, infinities, NaNs, neighbours of one and of powers of two, both signs.
fn specials() -> Vec<u32> {
    let mut v = vec![
        0x0000_0000,
        0x0000_0001,
        0x007f_ffff,
        0x0080_0000,
        0x0080_0001,
        0x3f80_0000,
        0x3f80_0001,
        0x3f7f_ffff,
        0x3fc0_0000,
        0x4000_0000,
        0x3f00_0000,
        0x3eff_ffff,
        0x4b80_0000,
        0x7f7f_ffff,
        0x7f00_0000,
        0x7f80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0x1f80_0000,
        0x2000_0000,
        0x5e80_0000,
        0x5f00_0000,
    ];
    let neg: Vec<u32> = v.iter().map(|x| x | 0x8000_0000).collect();
    v.extend(neg);
    v
}

/// A random FP32 value: mostly of moderate magnitude, sometimes anything.
fn random_fp(rng: &mut Rng) -> u32 {
    match rng.range(0, 3) {
        0 => rng.next() as u32,
        _ => {
            let e = rng.range(100, 154) as u32;
            ((rng.next() as u32) & 0x8000_0000) | (e << 23) | ((rng.next() as u32) & 0x7f_ffff)
        }
    }
}

struct Files {
    dir: tempfile::TempDir,
    args: Vec<String>,
}

impl Files {
    fn new() -> Files {
        Files {
            dir: tempfile::tempdir().unwrap(),
            args: Vec::new(),
        }
    }
    /// Vectors of block `name`, one hex line each.
    fn add(&mut self, name: &str, lines: &[String]) {
        let p = |f: String| self.dir.path().join(f);
        std::fs::write(p(format!("{name}.hex")), lines.concat()).unwrap();
        self.args
            .push(format!("+{name}={}", p(format!("{name}.hex")).display()));
        self.args.push(format!(
            "+{name}_out={}",
            p(format!("{name}_out.hex")).display()
        ));
        self.args.push(format!("+n_{name}={}", lines.len()));
    }
    fn output(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join(format!("{name}_out.hex")))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

fn hex32(s: &str) -> u32 {
    u32::from_str_radix(s, 16).unwrap()
}

/// Every pair of special values, then random and adversarial pairs: `n` in all.
fn pairs(rng: &mut Rng, n: usize) -> Vec<(u32, u32)> {
    let s = specials();
    let mut v: Vec<(u32, u32)> = s
        .iter()
        .flat_map(|a| s.iter().map(move |b| (*a, *b)))
        .collect();
    while v.len() < n {
        let a = random_fp(rng);
        let b = match rng.range(0, 3) {
            0 => random_fp(rng),
            // products near the bottom of the normal range
            1 => {
                let ea = (a >> 23) & 0xff;
                let e = (253i64 - i64::from(ea) + rng.range(-2, 2)).clamp(1, 254) as u32;
                (e << 23) | ((rng.next() as u32) & 0x807f_ffff)
            }
            // equal magnitudes
            _ => a ^ ((rng.range(0, 1) as u32) << 31),
        };
        v.push((a, b));
    }
    v
}

/// The arithmetic blocks, each against the contract on its vectors.
#[test]
fn row_unit_arithmetic_matches_the_contract() {
    let Some(exe) = exe() else { return };
    let mut rng = Rng::new(7);
    let mut f = Files::new();
    let muls = pairs(&mut rng, 60_000);
    f.add(
        "mul",
        &muls
            .iter()
            .map(|(a, b)| format!("{a:08x}{b:08x}\n"))
            .collect::<Vec<_>>(),
    );
    let maxes = pairs(&mut rng, 20_000);
    f.add(
        "max",
        &maxes
            .iter()
            .map(|(a, b)| format!("{a:08x}{b:08x}\n"))
            .collect::<Vec<_>>(),
    );
    // Integers of 33 bits: small ones, around 2^24 (the first rounding), the extremes.
    let mut ints: Vec<i64> = vec![0, 1, -1, (1 << 24) + 1, (1 << 24) + 3, -(1 << 24) - 1];
    ints.extend([(1 << 32) - 1, -(1 << 32), (1 << 25) + 2, (1 << 25) + 6]);
    while ints.len() < 20_000 {
        ints.push(rng.range(-(1 << 32), (1 << 32) - 1) >> rng.range(0, 31));
    }
    f.add(
        "int",
        &ints
            .iter()
            .map(|v| format!("{:016x}\n", (*v as u64) & ((1 << 33) - 1)))
            .collect::<Vec<_>>(),
    );
    // Rounding to integers: every half-integer tie, neighbours, large and special values.
    let mut quants: Vec<(u32, i64)> = Vec::new();
    for k in -300..300 {
        let x = k as f32 * 0.5;
        for v in [
            x.to_bits(),
            x.to_bits().wrapping_add(1),
            x.to_bits().wrapping_sub(1),
        ] {
            quants.push((v, rng.range(-200, 200)));
        }
    }
    for s in specials() {
        quants.push((s, rng.range(-32768, 32767)));
    }
    while quants.len() < 20_000 {
        quants.push((random_fp(&mut rng), rng.range(-32768, 32767)));
    }
    f.add(
        "quant",
        &quants
            .iter()
            .map(|(v, z)| format!("{v:08x}{:04x}\n", (*z as u64) & 0xffff))
            .collect::<Vec<_>>(),
    );
    let mut unary: Vec<u32> = specials();
    while unary.len() < 30_000 {
        unary.push(random_fp(&mut rng));
    }
    // Reciprocals near the flush: 2^126 give or take.
    for d in -3i64..3 {
        unary.push((0x7e80_0000i64 + d) as u32);
    }
    let lines = |v: &[u32]| v.iter().map(|x| format!("{x:08x}\n")).collect::<Vec<_>>();
    f.add("recip", &lines(&unary));
    f.add("sqrt", &lines(&unary));
    run(&exe, &f.args).unwrap_or_else(|e| panic!("{e}"));

    let check =
        |name: &str, got: Vec<String>, want: Vec<String>, what: &dyn Fn(usize) -> String| {
            assert_eq!(got.len(), want.len(), "{name}: result count");
            let wrong: Vec<String> = (0..got.len())
                .filter(|&i| got[i] != want[i])
                .take(6)
                .map(|i| format!("{}: rtl {} contract {}", what(i), got[i], want[i]))
                .collect();
            assert!(wrong.is_empty(), "{name}: {wrong:#?}");
        };
    check(
        "mul",
        f.output("mul"),
        muls.iter()
            .map(|(a, b)| format!("{:08x}", fp32::mul(*a, *b)))
            .collect(),
        &|i| format!("{:08x} * {:08x}", muls[i].0, muls[i].1),
    );
    check(
        "max",
        f.output("max"),
        maxes
            .iter()
            .map(|(a, b)| format!("{:08x}", fp32::max(*a, *b)))
            .collect(),
        &|i| format!("max({:08x}, {:08x})", maxes[i].0, maxes[i].1),
    );
    check(
        "int",
        f.output("int"),
        ints.iter()
            .map(|v| format!("{:08x}", fp32::from_int(*v)))
            .collect(),
        &|i| format!("{}", ints[i]),
    );
    let (s8, u8t) = (IntType::new(true, 8), IntType::new(false, 8));
    let one = 1f32.to_bits();
    check(
        "quant",
        f.output("quant"),
        quants
            .iter()
            .map(|(v, z)| {
                let s = rows::quantize(*v, one, *z, s8) as u8;
                let u = rows::quantize(*v, one, *z, u8t) as u8;
                format!("{s:02x}{u:02x}")
            })
            .collect(),
        &|i| format!("{:08x} + {}", quants[i].0, quants[i].1),
    );
    check(
        "recip",
        f.output("recip"),
        unary
            .iter()
            .map(|x| format!("{:08x}", fp32::recip(*x)))
            .collect(),
        &|i| format!("1 / {:08x}", unary[i]),
    );
    check(
        "sqrt",
        f.output("sqrt"),
        unary
            .iter()
            .map(|x| format!("{:08x}", fp32::sqrt(*x)))
            .collect(),
        &|i| format!("sqrt {:08x}", unary[i]),
    );
}

/// The reduction tree and the statistics' finish.
#[test]
fn row_unit_reduction_and_finish_match_the_contract() {
    let Some(exe) = exe() else { return };
    let mut rng = Rng::new(11);
    let mut f = Files::new();
    let mut reds: Vec<(bool, u8, Vec<u32>)> = Vec::new();
    while reds.len() < 5000 {
        let vals: Vec<u32> = (0..8)
            .map(|_| match rng.range(0, 9) {
                0 => specials()[rng.range(0, 43) as usize],
                _ => random_fp(&mut rng),
            })
            .collect();
        let mask = match rng.range(0, 2) {
            0 => 0xff,
            _ => ((1u16 << rng.range(1, 7)) - 1) as u8,
        };
        reds.push((rng.range(0, 1) == 1, mask, vals));
    }
    f.add(
        "reduce",
        &reds
            .iter()
            .map(|(max, mask, v)| {
                let body: String = v.iter().rev().map(|x| format!("{x:08x}")).collect();
                format!("{:x}{mask:02x}{body}\n", u8::from(*max))
            })
            .collect::<Vec<_>>(),
    );
    let mut fins: Vec<(u32, u32, u32, u32, u32)> = Vec::new();
    while fins.len() < 5000 {
        let pick = |rng: &mut Rng| match rng.range(0, 5) {
            0 => specials()[rng.range(0, 43) as usize],
            _ => random_fp(rng) & 0x7fff_ffff,
        };
        fins.push((
            rng.range(0, 3) as u32,
            pick(&mut rng),
            pick(&mut rng),
            (1.0f32 / rng.range(1, 4096) as f32).to_bits(),
            [0, 0x3727_c5ac, 0x3089_705f][rng.range(0, 2) as usize],
        ));
    }
    f.add(
        "finish",
        &fins
            .iter()
            .map(|(m, a, b, n, e)| format!("{m:x}{a:08x}{b:08x}{n:08x}{e:08x}\n"))
            .collect::<Vec<_>>(),
    );
    run(&exe, &f.args).unwrap_or_else(|e| panic!("{e}"));
    let got = f.output("reduce");
    assert_eq!(got.len(), reds.len());
    for (i, (max, mask, vals)) in reds.iter().enumerate() {
        let kind = if *max { Reduce::MaxA } else { Reduce::SumA };
        // The tree reads the masked lanes as idle: the mask is a prefix here, as `valid`.
        let valid = mask.count_ones() as usize;
        let want = rows::reduce_row(kind, false, vals, valid);
        assert_eq!(
            hex32(&got[i]),
            want,
            "reduce {i}: {max} {mask:02x} {vals:08x?}"
        );
    }
    let got = f.output("finish");
    assert_eq!(got.len(), fins.len());
    for (i, &(m, a, b, n, e)) in fins.iter().enumerate() {
        let kind = [Finish::None, Finish::RecipB, Finish::MeanA, Finish::RstdB][m as usize];
        let c = Consts {
            inv_n: n,
            eps: e,
            ..Consts::default()
        };
        let (wa, wb) = rows::finish(kind, &c, (a, b));
        assert_eq!(
            got[i],
            format!("{wa:08x}{wb:08x}"),
            "finish {i}: {kind:?} {a:08x} {b:08x}"
        );
    }
}

/// One lane of the element pipeline under each stage (and the e^x and GELU-spline
/// functions, and the square for a reduction), against `rows::element` and
/// `rows::quantize` on random elements, operands and parameters.
#[test]
fn row_lane_matches_numeric_rows() {
    let Some(exe) = exe() else { return };
    let erf_gelu = |x: f64| 0.5 * x * (1.0 + hwgen::numeric::spline::erf(x / 2f64.sqrt()));
    let gelu = Spline::fit(&erf_gelu, (-4.0, 4.0), Tail::Constant(0.0), Tail::Identity);
    // (flags, function) as the testbench's flag bits: 0 src_float, 1 bias, 2 scale, 3 opnd,
    // 4 centre, 5 norm, 6 affine, 7 exp, 8 spline, 9 square, 10 src_zero, 11 out_b.
    let configs: [(u32, Func); 8] = [
        (0b0000_0000_0110, Func::None),
        (0b0000_0011_1101, Func::None),
        (0b0010_0100_0000, Func::None),
        (0b0000_1001_0100, Func::Exp),
        (0b0001_0000_0110, Func::Spline(gelu)),
        (0b0000_1000_0001, Func::Exp),
        (0b0100_0011_1000, Func::None),
        (0b1000_1001_0100, Func::Exp),
    ];
    let mut rng = Rng::new(5);
    for (k, (flags, func)) in configs.into_iter().enumerate() {
        let st = Stages {
            src_float: flags & 1 != 0,
            bias: flags & 2 != 0,
            scale: flags & 4 != 0,
            opnd: flags & 8 != 0,
            centre: flags & 16 != 0,
            norm: flags & 32 != 0,
            affine: flags & 64 != 0,
            func,
            square: flags & 512 != 0,
            src_zero: flags & 1024 != 0,
            out_b: flags & 2048 != 0,
            ..Stages::default()
        };
        let small = |rng: &mut Rng| (rng.range(-2000, 2000) as f32 / 256.0).to_bits();
        let c = Consts {
            opnd_scale: (0.05f32).to_bits(),
            opnd_zero: (-3.0f32).to_bits(),
            out_scale: (1.0f32 / 0.04).to_bits(),
            ..Consts::default()
        };
        let zero = rng.range(-20, 20);
        let mut vecs = Vec::new();
        for _ in 0..4000 {
            let acc = if st.src_float {
                i64::from(small(&mut rng) as i32)
            } else {
                rng.range(-100_000, 100_000)
            };
            let lane = Lane {
                bias: rng.range(-5000, 5000),
                scale: (rng.range(1, 400) as f32 / 4096.0).to_bits(),
                shift: small(&mut rng),
                gamma: small(&mut rng),
                beta: small(&mut rng),
            };
            let b = rng.range(-128, 127);
            let stat = (small(&mut rng), small(&mut rng));
            vecs.push((acc, b, lane, stat));
        }
        let mut f = Files::new();
        f.add(
            "lane",
            &vecs
                .iter()
                .map(|(acc, b, l, (sa, sb))| {
                    format!(
                        "{:08x}{:02x}{:08x}{:08x}{:08x}{sa:08x}{sb:08x}{:08x}{:08x}{:08x}\n",
                        *acc as u32, *b as u8, l.bias as u32, l.scale, l.shift, l.gamma, l.beta, 0
                    )
                })
                .collect::<Vec<_>>(),
        );
        let table = match func {
            Func::Spline(s) => s.words(),
            _ => rows::exp2().words(),
        };
        let tpath = f.dir.path().join("table.hex");
        std::fs::write(
            &tpath,
            table[..hwgen::numeric::spline::USED]
                .iter()
                .map(|w| format!("{w:08x}\n"))
                .collect::<String>(),
        )
        .unwrap();
        let mut args = f.args.clone();
        args.extend([
            format!("+table={}", tpath.display()),
            format!("+lane_flags={flags:x}"),
            format!("+opnd_scale={:08x}", c.opnd_scale),
            format!("+opnd_zero={:08x}", c.opnd_zero),
            format!("+out_scale={:08x}", c.out_scale),
            format!("+zero_point={:04x}", (zero as u64) & 0xffff),
        ]);
        run(&exe, &args).unwrap_or_else(|e| panic!("{e}"));
        let got = f.output("lane");
        assert_eq!(got.len(), vecs.len(), "config {k}");
        let t = IntType::new(true, 8);
        for (i, (acc, b, lane, stat)) in vecs.iter().enumerate() {
            let v = rows::element(&st, &c, lane, *acc, fp32::from_int(*b), *stat);
            let red = if st.square { fp32::mul(v, v) } else { v };
            let code = rows::quantize(v, st.out_multiplier(&c, *stat), zero, t) as u8;
            assert_eq!(
                got[i],
                format!("{red:08x}{code:02x}"),
                "config {k} ({flags:b}), vector {i}: acc {acc} operand {b} {lane:?} {stat:08x?}"
            );
        }
    }
}

// ---- the row unit in the whole accelerator -------------------------------------------------

use hwgen::interp::{Engine, Memory};
use hwgen::isa::{semaphore_index, Buffer, Instr, Op, Queue, Rows, Transfer};

/// The whole-accelerator testbench over rtl-tests/configs/8x8_int8_rows.toml, built once.
fn rows_accelerator() -> Option<(hwgen::design::Design, PathBuf)> {
    if !have_tool("verilator", "row unit in the accelerator") {
        return None;
    }
    static EXE: OnceLock<(hwgen::design::Design, PathBuf)> = OnceLock::new();
    Some(
        EXE.get_or_init(|| {
            let design =
                hwgen::config::load(&repo().join("rtl-tests/configs/8x8_int8_rows.toml")).unwrap();
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("rows-top-{}", std::process::id()));
            hwgen::rtl::emit(&design).write_atomic(&dir).unwrap();
            let mut sources: Vec<PathBuf> = std::fs::read_to_string(dir.join("hwgen.f"))
                .unwrap()
                .lines()
                .filter(|l| l.ends_with(".v"))
                .map(|l| dir.join(l))
                .collect();
            sources.push(testbench("tb_top.v"));
            let model = Model {
                top: "tb".into(),
                sources,
                include_dirs: vec![dir.join("rtl")],
                harness: testbench("sim_main.cpp"),
                params: vec![("LATENCY".into(), "20".into())],
                trace: false,
                defines: vec![],
            };
            let exe = model.build(&sim_cache()).unwrap_or_else(|e| panic!("{e}"));
            (design, exe)
        })
        .clone(),
    )
}

fn sem(p: Queue, c: Queue) -> u32 {
    1 << semaphore_index(p, c).unwrap()
}

/// Memory beats (64 bits) of the program's regions: accumulator rows (4 beats each: 8 lanes
/// of 32 bits) from ACC_MEM, output-buffer rows (1 beat) from OUT_MEM, the stored output
/// rows at STORE_MEM.
const ACC_MEM: u64 = 0;
const ACC_ROWS: u64 = 96;
const OUT_MEM: u64 = 512;
const OUT_ROWS: u64 = 32;
const STORE_MEM: u64 = 1024;
const STORE_ROWS: u64 = 64;

/// A random row-unit program: load 96 accumulator rows (pixel data in rows 0..48 as
/// integers, then FP32 parameter rows from 48, constants at 80, a GELU table at 81..85) and
/// 32 operand rows; define the statistics of 12 pixels (a maximum into a, a sum of squares
/// into b, both replacing); then random passes with random stages, functions, reductions,
/// finishes and lane counts, each writing its own output rows; store every output row.
fn random_rows_program(rng: &mut Rng) -> Vec<Instr> {
    let ld = |buffer, spad_addr, ext_addr, count0, stride0| Transfer {
        buffer,
        spad_addr,
        ext_addr,
        count0,
        stride0,
        count1: 1,
        ..Transfer::default()
    };
    let mut p = vec![
        Instr::new(Op::Load(ld(Buffer::Accumulator, 0, ACC_MEM, ACC_ROWS, 4))),
        Instr {
            signal: sem(Queue::Load, Queue::Vector),
            ..Instr::new(Op::Load(ld(Buffer::Output, 0, OUT_MEM, OUT_ROWS, 1)))
        },
    ];
    let pixels = 12u64;
    let base = Rows {
        acc_addr: 0,
        acc_stride: pixels,
        count0: pixels,
        count1: 2,
        out_stride: pixels,
        const_addr: 80,
        param_addr: 48,
        ..Rows::default()
    };
    p.push(Instr {
        wait: sem(Queue::Load, Queue::Vector),
        ..Instr::new(Op::Rows(Rows {
            reduce: 1,
            init: true,
            ..base
        }))
    });
    p.push(Instr::new(Op::Rows(Rows {
        square: true,
        reduce: 3,
        init: true,
        finish: 3,
        ..base
    })));
    // Output rows 32.. are written, each pass its own 12 * tiles rows.
    let mut out = 32u64;
    while out + 3 * pixels <= 32 + STORE_ROWS {
        let tiles = rng.range(1, 2) as u64;
        let count0 = rng.range(1, pixels as i64) as u64;
        let reduce = rng.range(0, 3) as u64;
        let func = rng.range(0, 2) as u64;
        let mut r = Rows {
            acc_addr: rng.range(0, 48 - (tiles * count0) as i64) as u64,
            acc_stride: count0,
            count0,
            count1: tiles,
            out_addr: out,
            out_stride: count0,
            opnd_addr: rng.range(0, (OUT_ROWS - tiles * count0) as i64) as u64,
            param_addr: 48 + rng.range(0, 8) as u64,
            const_addr: 80,
            stat_addr: rng.range(0, (pixels - count0) as i64) as u64,
            valid: rng.range(0, 8) as u64,
            bias: rng.range(0, 1) == 1,
            src_zero: rng.range(0, 3) == 0,
            out_b: rng.range(0, 3) == 0,
            scale: rng.range(0, 2) > 0,
            opnd: rng.range(0, 1) == 1,
            centre: rng.range(0, 1) == 1,
            norm: rng.range(0, 1) == 1,
            affine: rng.range(0, 1) == 1,
            func,
            square: rng.range(0, 1) == 1,
            reduce,
            init: rng.range(0, 2) > 0,
            finish: rng.range(0, 3) as u64,
            write: true,
            zero_point: rng.range(-20, 20),
            ..Rows::default()
        };
        // A pass does not centre or scale by the statistic it reduces into.
        if matches!(r.reduce, 1 | 2) {
            r.centre = false;
        }
        if r.reduce == 3 {
            r.norm = false;
            r.out_b = false;
        }
        p.push(Instr::new(Op::Rows(r)));
        out += tiles * count0;
    }
    if let Some(last) = p.last_mut() {
        last.signal = sem(Queue::Vector, Queue::Store);
    }
    p.push(Instr {
        wait: sem(Queue::Vector, Queue::Store),
        ..Instr::new(Op::Store(Transfer {
            buffer: Buffer::Output,
            spad_addr: 32,
            ext_addr: STORE_MEM,
            count0: STORE_ROWS,
            stride0: 1,
            count1: 1,
            ..Transfer::default()
        }))
    });
    p.push(Instr::end());
    p
}

/// The initial memory: integer pixel data, FP32 parameter rows of moderate values
/// (positive scales), the constants (an operand scale and zero point, 1/n = 1/16, epsilon,
/// an output scale that keeps most results inside int8) and a GELU table, random operand
/// bytes.
fn rows_memory(rng: &mut Rng) -> Memory {
    let mut mem = Memory::new(64, (STORE_MEM + STORE_ROWS) as usize);
    let i32t = IntType::new(true, 32);
    let f = |x: f32| i64::from(x.to_bits() as i32);
    for r in 0..ACC_ROWS {
        let row: Vec<i64> = (0..8)
            .map(|l| match r {
                0..48 => rng.range(-3000, 3000),
                48..80 => match (r - 48) % 5 {
                    0 => rng.range(-200, 200),
                    1 => f(rng.range(1, 64) as f32 / 1024.0),
                    _ => f(rng.range(-64, 64) as f32 / 32.0),
                },
                80 => [f(0.125), f(-2.0), f(1.0 / 16.0), f(1e-3), f(8.0), 0, 0, 0][l],
                _ => 0,
            })
            .collect();
        mem.write_row(ACC_MEM + 4 * r, 4, &row, i32t);
    }
    let gelu = Spline::fit(
        &|x: f64| 0.5 * x * (1.0 + hwgen::numeric::spline::erf(x / 2f64.sqrt())),
        (-4.0, 4.0),
        Tail::Constant(0.0),
        Tail::Identity,
    );
    let words = gelu.words();
    for k in 0..4 {
        let row: Vec<i64> = (0..8).map(|l| i64::from(words[8 * k + l] as i32)).collect();
        mem.write_row(ACC_MEM + 4 * (81 + k as u64), 4, &row, i32t);
    }
    for b in 0..OUT_ROWS {
        mem.set_beat_hex((OUT_MEM + b) as usize, &format!("{:016x}", rng.next()));
    }
    mem
}

/// Random row-unit programs (softmax-, norm- and GELU-like passes and random ones, over
/// tiles with a partly valid last one, statistics carried between passes) on the ISA
/// interpreter and on the 8x8 RTL with the row unit, under memory back-pressure: the
/// stored rows are identical bit for bit, and not all saturated.
#[test]
fn random_row_programs_match_the_interpreter() {
    let Some((design, exe)) = rows_accelerator() else {
        return;
    };
    let unit = design.branches[0].units[0].clone();
    for seed in 1..=10u64 {
        let mut rng = Rng::new(seed * 4421);
        let program = random_rows_program(&mut rng);
        let mem = rows_memory(&mut rng);
        let mut expect = mem.clone();
        Engine::new(&design, &unit)
            .run(&program, &mut expect)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let dir = tempfile::tempdir().unwrap();
        let [prog, dmem] = program_images(dir.path(), &mem, &program);
        let out = run(
            &exe,
            &[
                prog,
                dmem,
                format!("+dump={}", dir.path().join("dump.hex").display()),
                format!("+dump_base={STORE_MEM}"),
                format!("+dump_count={STORE_ROWS}"),
                format!("+stall_pct={}", (13 * seed) % 60),
                format!("+seed={seed}"),
            ],
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let dump = std::fs::read_to_string(dir.path().join("dump.hex")).unwrap();
        let got: Vec<&str> = dump.lines().collect();
        assert_eq!(got.len() as u64, STORE_ROWS, "seed {seed}");
        let mut inside = 0;
        for (k, line) in got.iter().enumerate() {
            let beat = (STORE_MEM + k as u64) as usize;
            let want = expect.beat_hex(beat);
            assert_eq!(
                *line,
                want,
                "seed {seed}: output row {} differs (RTL vs interpreter)\n{}\n{out}",
                32 + k,
                program
                    .iter()
                    .map(Instr::to_asm)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            inside += unpack_hex(&want, 8, 8)
                .iter()
                .filter(|v| !matches!(**v, 0x7f | 0x80 | 0))
                .count();
        }
        assert!(
            inside > 40,
            "seed {seed}: nearly every result saturated or zero"
        );
    }
}
