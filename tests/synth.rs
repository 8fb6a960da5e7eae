//! `hwgen synth`: Yosys on the emitted RTL, resources per unit and per module. The counts
//! are Yosys'; what is checked is how hwgen reads and attributes them: the instance tree
//! adds up to Yosys' own total (checked inside `synth::run`), the instances follow the
//! design's parameters, and every unit gets exactly its replicas' cores.

mod common;

use common::*;
use hwgen::synth::{run, Options, Target};
use std::process::Command;

fn synth(config: &str, target: Target) -> (hwgen::design::Design, hwgen::synth::Report) {
    let design = hwgen::config::load(&repo().join(config)).unwrap();
    let mut steps = 0;
    let r = run(&design, &Options::whole(target), &mut |_, _| steps += 1).unwrap();
    assert!(steps > 10, "only {steps} passes reported as progress");
    (design, r)
}

/// Two engines of 8x8 PEs linked by a stream FIFO, generic gates: each unit is one core
/// of the same parameters (the same cells), each array has 8 rows of PEs, and the link,
/// arbiter and CSRs are the top level's.
#[test]
fn generic_gates_per_unit_and_module() {
    if !have_tool("yosys", "synth generic") {
        return;
    }
    let (design, r) = synth(
        "rtl-tests/configs/elastic_2stage_int8.toml",
        Target::Generic,
    );
    assert_eq!(r.units.len(), 2);
    assert_eq!(
        r.units[0].total, r.units[1].total,
        "two cores of one parameter set"
    );
    let sum = r.units[0].total.cells + r.units[1].total.cells + r.top_overhead.cells;
    assert_eq!(sum, r.total.cells);
    let module = |m: &str| r.modules.iter().find(|x| x.module == m).unwrap();
    let rows: u32 = design.cores().iter().map(|(_, u, _)| u.cpf).sum();
    assert_eq!(module("hwgen_pe_row").instances, u64::from(rows));
    assert_eq!(module("hwgen_core").instances, 2);
    assert_eq!(module("hwgen_top").total, r.total);
    // The stream link's FIFO, the arbiter and the CSRs are outside both cores.
    assert!(r.top_overhead.cells > 0 && r.top_overhead.ffs > 0);
    assert!(r.total.memories > 0, "scratchpads stay whole memories");
    assert_eq!((r.total.dsps, r.total.luts), (0, 0), "no Xilinx primitives");
}

/// A decoder-style unit (int8 4x4, the decoder's vector ops, no window unit) at
/// scratchpad depths the resource model was not fitted on.
const UNIT_4X4: &str = r#"name = "unit_4x4"
[datatype]
input = "int8"
weight = "int8"
accumulator = "int32"
output = "int8"
[buffers]
input_depth = 512
weight_depth = 256
accumulator_depth = 256
output_depth = 128
[memory]
data_width_bits = 32
[vector]
ops = ["requantize", "bias", "relu", "leaky_relu"]
[[branch]]
name = "b"
[[branch.unit]]
name = "u"
cpf = 4
kpf = 4
"#;

/// Xilinx UltraScale+: DSP slices and block RAM appear (RAMB36 counted as two 18-Kbit
/// blocks), the array's MACs per DSP are reported, and the resource model predicts the
/// synthesized unit within the error its fit states on held-out designs (DSPs exactly,
/// BRAM18 within 7%, LUTs and FFs within 3%, LUT RAM exactly; here with some margin: 10%,
/// 3% and 5%). Its 128-row output buffer is in LUT RAM, which the model derives.
#[test]
fn xilinx_dsps_block_ram_and_the_resource_model() {
    if !have_tool("yosys", "synth xilinx") {
        return;
    }
    let design = hwgen::config::parse_str(UNIT_4X4, "unit_4x4.toml", "unit_4x4").unwrap();
    let r = run(&design, &Options::whole(Target::Xilinx), &mut |_, _| ()).unwrap();
    let bram18 = r.cells.get("RAMB18E2").copied().unwrap_or(0)
        + 2 * r.cells.get("RAMB36E2").copied().unwrap_or(0);
    assert_eq!(r.total.bram18, bram18);
    assert!(r.total.bram18 > 0 && r.total.dsps > 0 && r.total.luts > 0);
    let u = &r.units[0];
    let per = u.macs_per_dsp.expect("the array maps multipliers to DSPs");
    // At most one DSP per MAC and at most two MACs per DSP (what a DSP48E2 can hold).
    assert!((1.0..=2.0).contains(&per), "{per} MACs per DSP");
    let m = u.model.expect("the unit is in the model's domain");
    let near =
        |model: f64, synth: u64, tol: f64| (model - synth as f64).abs() <= tol * synth as f64;
    assert_eq!(m.dsps.round() as u64, u.total.dsps, "{m:?} {:?}", u.total);
    assert!(near(m.bram18, u.total.bram18, 0.10), "{m:?} {:?}", u.total);
    assert!(near(m.luts, u.total.luts, 0.03), "{m:?} {:?}", u.total);
    assert!(near(m.lutram, u.total.lutram, 0.05), "{m:?} {:?}", u.total);
    assert!(near(m.ffs, u.total.ffs, 0.03), "{m:?} {:?}", u.total);
}

/// A 4x4 int8 systolic array (`--param CPF=4 KPF=4` on the 8x8 config) on an iCE40: 16
/// MACs in 4 PE rows, multipliers in LUTs (no DSP mapping, no memories); placed and routed
/// in its harness on the HX8K, whose flip-flops are its ports' bits by hand: inputs rst_ni
/// 1, in_act_i 4x8, in_bank_i 1, in_tag_i 1, in_valid_i 1, wshift_bank_i 1, wshift_en_i 1,
/// wshift_row_i 4x8 (70); outputs out_psum_o 4x32, out_tag_o 1, out_valid_o 1 (130); and
/// the serial output: 201.
#[test]
fn ice40_places_and_routes_a_small_array() {
    if !have_tool("yosys", "synth ice40") || !have_tool("nextpnr-ice40", "synth ice40") {
        return;
    }
    let design = hwgen::config::load(&repo().join("configs/8x8_int8.toml")).unwrap();
    let opts = Options {
        target: Target::Ice40,
        top: "hwgen_systolic_array".to_string(),
        params: vec![("CPF".to_string(), 4), ("KPF".to_string(), 4)],
    };
    let r = run(&design, &opts, &mut |_, _| {}).unwrap();
    let module = |m: &str| r.modules.iter().find(|x| x.module == m).unwrap();
    assert_eq!(module("hwgen_mac_int").instances, 16);
    assert_eq!(module("hwgen_pe_row").instances, 4);
    assert!(r.total.luts > 0 && r.total.ffs > 0);
    assert_eq!((r.total.dsps, r.total.ram4k, r.total.bram18), (0, 0, 0));
    let p = r.place_and_route.expect("placed and routed");
    assert_eq!(p.harness_ffs, 201);
    assert!(p.error.is_none(), "{:?}", p.error);
    let f = p.fmax_mhz.expect("a routed clock");
    assert!(f > 1.0, "{f} MHz");
}

/// Without Yosys, `hwgen synth` says how to install it.
#[test]
fn missing_yosys_is_named() {
    let out = Command::new(env!("CARGO_BIN_EXE_hwgen"))
        .args(["synth", "--config", "configs/8x8_int8.toml"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: yosys\n")
            && err.contains("not on PATH")
            && err.contains("scripts/setup.sh"),
        "{err}"
    );
}

/// A module the design does not have is refused before Yosys runs, with the list of those
/// it has.
#[test]
fn an_unknown_module_is_named() {
    let out = Command::new(env!("CARGO_BIN_EXE_hwgen"))
        .args([
            "synth",
            "--config",
            "configs/8x8_int8.toml",
            "--top",
            "hwgen_nope; shell",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--top hwgen_nope; shell")
            && err.contains("hwgen_compute_unit")
            && err.contains("fix:"),
        "{err}"
    );
}
