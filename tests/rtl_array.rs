//! The systolic array alone, in Verilator, against a Rust reference: random matrices of
//! several shapes and datatypes, two weight tiles with the second preloaded into the idle
//! bank while the first computes, pseudo-random bubbles, bit-exact int32 results.

mod common;

use common::*;
use hwgen::sim::verilator::{run, Model};

struct Shape {
    rows: usize,
    cols: usize,
    input_bits: u32,
    input_signed: bool,
    weight_bits: u32,
    weight_signed: bool,
    /// Columns 2p and 2p+1 share one multiplier (`[array] pack_macs`).
    packed: bool,
}

fn range(bits: u32, signed: bool) -> (i64, i64) {
    if signed {
        (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    } else {
        (0, (1 << bits) - 1)
    }
}

fn check_shape(s: &Shape, seeds: &[u64]) {
    check_shape_gap(s, seeds, 0);
}

/// As `check_shape`; a `gap` other than 0 sends the second tile's first vector exactly
/// `gap` cycles after its last weight row (the testbench's `+gap`).
fn check_shape_gap(s: &Shape, seeds: &[u64], gap: u32) {
    let name = format!(
        "array_{}x{}_{}{}x{}{}{}",
        s.rows,
        s.cols,
        if s.input_signed { "i" } else { "u" },
        s.input_bits,
        if s.weight_signed { "i" } else { "u" },
        s.weight_bits,
        if s.packed { "_packed" } else { "" }
    );
    if !have_tool("verilator", &name) {
        return;
    }
    let model = Model {
        top: "tb".into(),
        sources: match s.packed {
            false => vec![
                rtl_file("hwgen_delay.v"),
                rtl_file("hwgen_mac_int.v"),
                rtl_file("hwgen_pe_row.v"),
                rtl_file("hwgen_systolic_array.v"),
                testbench("tb_systolic_array.v"),
            ],
            true => vec![
                packed_rtl_file("hwgen_delay.v"),
                packed_rtl_file("hwgen_mac_int_pair.v"),
                packed_rtl_file("hwgen_pe_row.v"),
                packed_rtl_file("hwgen_systolic_array.v"),
                testbench("tb_systolic_array.v"),
            ],
        },
        include_dirs: vec![],
        harness: testbench("sim_main.cpp"),
        params: vec![
            ("CPF".into(), s.rows.to_string()),
            ("KPF".into(), s.cols.to_string()),
            ("INPUT_W".into(), s.input_bits.to_string()),
            ("WEIGHT_W".into(), s.weight_bits.to_string()),
            ("INPUT_SIGNED".into(), u8::from(s.input_signed).to_string()),
            (
                "WEIGHT_SIGNED".into(),
                u8::from(s.weight_signed).to_string(),
            ),
        ],
        trace: false,
        defines: vec![],
    };
    // The array adds in the datapath's column width (`Datapath::column_bits`): the exact
    // width of a sum of `rows` products, or the 32-bit accumulator's where that is narrower.
    let col_w = column_bits(s);
    let mut model = model;
    model.params.push(("PSUM_W".into(), col_w.to_string()));
    let exe = model
        .build(&sim_cache())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    for &seed in seeds {
        let mut rng = Rng::new(seed);
        let (ilo, ihi) = range(s.input_bits, s.input_signed);
        let (wlo, whi) = range(s.weight_bits, s.weight_signed);
        // Extreme values first so saturation-prone corners are always covered.
        let n0 = 30 + rng.range(0, 40) as usize;
        let n1 = 30 + rng.range(0, 40) as usize;
        let mut weights: Vec<Vec<Vec<i64>>> = (0..2)
            .map(|_| {
                (0..s.rows)
                    .map(|_| (0..s.cols).map(|_| rng.range(wlo, whi)).collect())
                    .collect()
            })
            .collect();
        let mut acts: Vec<Vec<i64>> = (0..n0 + n1)
            .map(|_| (0..s.rows).map(|_| rng.range(ilo, ihi)).collect())
            .collect();
        acts[0] = vec![ilo; s.rows];
        acts[1] = vec![ihi; s.rows];
        // Columns of extreme weights, so that the first vectors reach the largest and the
        // smallest sums the column width must hold.
        for row in weights[0].iter_mut() {
            row[0] = wlo;
            row[s.cols - 1] = whi;
        }

        let dir = tempfile::tempdir().unwrap();
        let wfile = dir.path().join("weights.hex");
        let afile = dir.path().join("acts.hex");
        let ofile = dir.path().join("out.txt");
        let wtext: String = weights
            .iter()
            .flatten()
            .map(|row| pack_hex(row, s.weight_bits) + "\n")
            .collect();
        let atext: String = acts
            .iter()
            .map(|row| pack_hex(row, s.input_bits) + "\n")
            .collect();
        std::fs::write(&wfile, wtext).unwrap();
        std::fs::write(&afile, atext).unwrap();
        run(
            &exe,
            &[
                format!("+weights={}", wfile.display()),
                format!("+acts={}", afile.display()),
                format!("+out={}", ofile.display()),
                format!("+n0={n0}"),
                format!("+n1={n1}"),
                format!("+seed={seed}"),
                format!("+gap={gap}"),
            ],
        )
        .unwrap_or_else(|e| panic!("{name} seed {seed} gap {gap}: {e}"));

        let out = std::fs::read_to_string(&ofile).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), n0 + n1, "{name} seed {seed}: result count");
        for (j, line) in lines.iter().enumerate() {
            let (tag, hex) = line.split_once(' ').unwrap();
            assert_eq!(
                tag.parse::<usize>().unwrap(),
                j,
                "{name}: results out of order"
            );
            let got = unpack_hex(hex, s.cols, col_w);
            let tile = usize::from(j >= n0);
            for c in 0..s.cols {
                let sum: i64 = (0..s.rows).map(|r| acts[j][r] * weights[tile][r][c]).sum();
                // Exact in col_w bits, or (a column wider than the accumulator) modulo 2^32.
                let want = (sum as u64) & ((1u64 << col_w) - 1);
                if col_w < 32 {
                    assert!(
                        (-(1i64 << (col_w - 1))..1i64 << (col_w - 1)).contains(&sum),
                        "{name}: the sum {sum} does not fit the {col_w}-bit column"
                    );
                }
                assert_eq!(
                    got[c], want,
                    "{name} seed {seed} gap {gap}: vector {j} (tile {tile}) column {c}"
                );
            }
        }
    }
}

/// The width the Design's datapath gives the array's column sums for this shape, with the
/// 32-bit accumulator the tests' reference wraps in.
fn column_bits(s: &Shape) -> u32 {
    use hwgen::numeric::{Datapath, IntPrecision, IntType};
    let input = IntType::new(s.input_signed, s.input_bits);
    let weight = IntType::new(s.weight_signed, s.weight_bits);
    IntPrecision {
        input,
        weight,
        accumulator: IntType::new(true, 32),
        output: input,
    }
    .column_bits(s.rows as u32)
}

/// The column widths the datapath gives, derived by hand: |sum| <= rows * max|a| * max|w|,
/// plus a sign bit.
#[test]
fn column_widths_by_hand() {
    let shape = |rows, bits, input_signed, weight_signed| Shape {
        rows,
        cols: 4,
        input_bits: bits,
        input_signed,
        weight_bits: bits,
        weight_signed,
        packed: false,
    };
    // 16 * 128 * 128 = 2^18: 19 magnitude bits and a sign.
    assert_eq!(column_bits(&shape(16, 8, true, true)), 20);
    // 8 * 128 * 128 = 2^17.
    assert_eq!(column_bits(&shape(8, 8, true, true)), 19);
    // 16 * 255 * 128 = 522240 < 2^19.
    assert_eq!(column_bits(&shape(16, 8, false, true)), 20);
    // 8 * 255 * 255 = 520200 < 2^19.
    assert_eq!(column_bits(&shape(8, 8, false, false)), 20);
    // 4 * 8 * 8 = 2^8.
    assert_eq!(column_bits(&shape(4, 4, true, true)), 10);
    // 8 * 2^15 * 2^15 = 2^33: wider than the accumulator, which then sets the width.
    assert_eq!(column_bits(&shape(8, 16, true, true)), 32);
}

/// A 4x4 array of int8 by int8.
const INT8_4X4: Shape = Shape {
    rows: 4,
    cols: 4,
    input_bits: 8,
    input_signed: true,
    weight_bits: 8,
    weight_signed: true,
    packed: false,
};

#[test]
fn array_4x4_int8() {
    check_shape(&INT8_4X4, &[1, 2]);
}

#[test]
fn array_8x8_uint8() {
    check_shape(
        &Shape {
            rows: 8,
            cols: 8,
            input_bits: 8,
            input_signed: false,
            weight_bits: 8,
            weight_signed: false,
            packed: false,
        },
        &[3, 4],
    );
}

#[test]
fn array_4x8_int4() {
    check_shape(
        &Shape {
            rows: 4,
            cols: 8,
            input_bits: 4,
            input_signed: true,
            weight_bits: 4,
            weight_signed: true,
            packed: false,
        },
        &[5, 6],
    );
}

#[test]
fn array_8x4_int16() {
    // int16 x int16 sums exceed 32 bits: the accumulator wraps modulo 2^32.
    check_shape(
        &Shape {
            rows: 8,
            cols: 4,
            input_bits: 16,
            input_signed: true,
            weight_bits: 16,
            weight_signed: true,
            packed: false,
        },
        &[7, 8],
    );
}

#[test]
fn array_16x16_uint8_by_int8() {
    check_shape(
        &Shape {
            rows: 16,
            cols: 16,
            input_bits: 8,
            input_signed: false,
            weight_bits: 8,
            weight_signed: true,
            packed: false,
        },
        &[9],
    );
}

/// Packed multipliers, every mix of signed and unsigned 8-bit operands and a narrower type:
/// the same results (the reference is the plain sum of products), with the second tile
/// shifted in while the first computes, and with its first vector two cycles after its
/// last weight row, the least the packed array allows (it reads the odd column's weight a
/// cycle early: with one cycle, the 4x4 int8 case fails).
#[test]
fn array_packed_every_signedness() {
    for (rows, cols, bits, (input_signed, weight_signed), seed) in [
        (4, 4, 8, (true, true), 11),
        (8, 8, 8, (false, false), 13),
        (8, 4, 8, (false, true), 15),
        (4, 8, 8, (true, false), 17),
        (4, 8, 4, (true, true), 19),
    ] {
        let shape = Shape {
            rows,
            cols,
            input_bits: bits,
            input_signed,
            weight_bits: bits,
            weight_signed,
            packed: true,
        };
        check_shape(&shape, &[seed]);
        check_shape_gap(&shape, &[seed + 1], 2);
    }
}

/// The unpacked array takes a tile's first vector the cycle after its last weight row.
#[test]
fn array_tile_follows_its_weights_at_once() {
    check_shape_gap(&INT8_4X4, &[21, 22], 1);
}
