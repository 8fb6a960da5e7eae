//! The command line: emit, check, isa, help, and that a failed emit writes nothing.

mod common;

use std::process::Command;

fn hwgen() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hwgen"))
}

#[test]
fn emit_writes_rtl_filelist_and_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let out = hwgen()
        .args(["emit", "--config", "configs/8x8_int8.toml", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let filelist = std::fs::read_to_string(dir.path().join("hwgen.f")).unwrap();
    // Dependency order: leaves first, the top last.
    let v: Vec<&str> = filelist.lines().filter(|l| l.ends_with(".v")).collect();
    assert_eq!(v.first(), Some(&"rtl/hwgen_delay.v"));
    assert_eq!(v.last(), Some(&"rtl/hwgen_top.v"));
    for f in &v {
        assert!(dir.path().join(f).is_file(), "{f} listed but not written");
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("manifest.json")).unwrap())
            .unwrap();
    let design = hwgen::config::load(std::path::Path::new("configs/8x8_int8.toml")).unwrap();
    assert_eq!(manifest["design_hash"], format!("{:016x}", design.hash()));
    assert_eq!(manifest["design"]["branches"][0]["units"][0]["cpf"], 8);
    assert_eq!(manifest["isa"]["instruction_bits"], 256);
    // The hash is also the CSR block's ID, a localparam: no parameter of the top sets it.
    let csr = std::fs::read_to_string(dir.path().join("rtl/hwgen_csr.v")).unwrap();
    assert!(csr.contains(&format!(
        "localparam [63:0] DESIGN_ID = 64'h{:016x};",
        design.hash()
    )));
    let top = std::fs::read_to_string(dir.path().join("rtl/hwgen_top.v")).unwrap();
    assert!(!top.contains("DESIGN_ID"));
}

#[test]
fn failed_emit_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out");
    let out = hwgen()
        .args([
            "emit",
            "--config",
            "tests/bad_configs/rows_not_pow2.toml",
            "-o",
        ])
        .arg(&target)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tests/bad_configs/rows_not_pow2.toml:2:8: array.rows = 48"),
        "{err}"
    );
    assert!(
        !target.exists(),
        "a failed emit created {}",
        target.display()
    );
}

#[test]
fn emit_over_previous_output_replaces_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    for cfg in ["configs/elastic_3unit_int8.toml", "configs/8x8_int8.toml"] {
        let out = hwgen()
            .args(["emit", "-c", cfg, "-o"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    let top = std::fs::read_to_string(dir.path().join("rtl/hwgen_top.v")).unwrap();
    assert!(top.contains("acc_8x8_int8"));
}

#[test]
fn check_and_isa() {
    let out = hwgen()
        .args(["check", "-c", "configs/32x32_int8.toml"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("1024 PEs"));
    let out = hwgen()
        .args(["isa", "-c", "configs/32x32_int8.toml"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), hwgen::isa::markdown());
}

#[test]
fn every_subcommand_has_help() {
    for (sub, option) in [
        ("emit", "--config"),
        ("check", "--config"),
        ("isa", "--config"),
        ("compile", "--config"),
        ("sim", "--config"),
        ("run", "--interp"),
        ("import", "--out"),
    ] {
        let out = hwgen().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success(), "{sub} --help");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(option),
            "{sub}"
        );
    }
}

#[test]
fn compile_writes_the_program_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = hwgen()
        .args([
            "compile",
            "-c",
            "configs/8x8_int8.toml",
            "-m",
            "rtl-tests/cases/conv_relu.toml",
            "-o",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        "imem0.hex",
        "dmem.hex",
        "expected.hex",
        "listing.asm",
        "report.json",
    ] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    let design = hwgen::config::load(std::path::Path::new("configs/8x8_int8.toml")).unwrap();
    let imem = std::fs::read_to_string(dir.path().join("imem0.hex")).unwrap();
    assert!(imem.starts_with(&format!(
        "// hwgen program of engine 0 for design {:016x}",
        design.hash()
    )));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    // conv_relu: 8x8 output pixels x 16 output channels x 3x3 taps x 16 input channels.
    assert_eq!(report["macs"], 8 * 8 * 16 * 9 * 16);
}

/// `hwgen sim --json` of the residual block on 8x8 int8, with `extra` arguments: the report,
/// after checking that the run succeeded bit-exact.
fn sim_residual_block_json(extra: &[&str]) -> serde_json::Value {
    let cache = common::sim_cache();
    let out = hwgen()
        .args([
            "sim",
            "-c",
            "configs/8x8_int8.toml",
            "-m",
            "rtl-tests/cases/residual_block.toml",
            "--json",
            "--cache",
        ])
        .arg(&cache)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["match"], true);
    v
}

#[test]
fn sim_json_reports_a_bit_exact_run() {
    if !common::have_tool("verilator", "sim_json_reports_a_bit_exact_run") {
        return;
    }
    let v = sim_residual_block_json(&[]);
    let cycles = v["cycles"].as_u64().unwrap();
    let ideal = v["ideal_cycles"].as_u64().unwrap();
    // Two 3x3 convolutions of 8x8x8 on 64 PEs: 2 * 8*8*8*9*8 / 64 = 1152 ideal cycles.
    assert_eq!(ideal, 1152);
    assert!(cycles > ideal);
    let util = v["mac_utilization"].as_f64().unwrap();
    assert!((util - ideal as f64 / cycles as f64).abs() < 1e-9);
    assert!(v["estimated_cycles"].as_u64().unwrap() > 0);
}

#[test]
fn sim_layers_splits_the_run_by_layer() {
    if !common::have_tool("verilator", "sim_layers_splits_the_run_by_layer") {
        return;
    }
    let v = sim_residual_block_json(&["--layers"]);
    let layers = v["layers"].as_array().unwrap();
    let names: Vec<&str> = layers.iter().map(|l| l["name"].as_str().unwrap()).collect();
    // The residual add is fused into the second convolution.
    assert_eq!(names, ["a", "sum"]);
    let mut sum = 0;
    for l in layers {
        // A 3x3 convolution of 8x8x8 to 8 channels on 64 PEs: 8*8*8*9*8 / 64 = 576 cycles
        // at the very least.
        assert_eq!(l["ideal_cycles"], 576);
        let c = l["cycles"].as_u64().unwrap();
        assert!(c >= 576, "{l}: faster than the PEs can be");
        sum += c;
    }
    // Outside every layer are only the program's first fetch (one round trip of the memory,
    // latency 20 in this config) and the done flag.
    let cycles = v["cycles"].as_u64().unwrap();
    assert!(
        sum <= cycles && cycles - sum < 40,
        "layers {sum} of {cycles}"
    );
}

#[test]
fn sim_layers_refuses_an_elastic_design() {
    let dir = tempfile::tempdir().unwrap();
    let out = hwgen()
        .args([
            "sim",
            "-c",
            "rtl-tests/configs/elastic_2stage_int8.toml",
            "-m",
            "rtl-tests/cases/elastic_chain.toml",
            "--layers",
            "--cache",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("elastic_2stage_int8.toml") && err.contains("single-engine"),
        "{err}"
    );
    assert!(err.contains("fix:") && err.contains("--timeline"), "{err}");
    // Refused before anything was built.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn sim_trace_writes_an_fst_waveform() {
    if !common::have_tool("verilator", "sim_trace_writes_an_fst_waveform") {
        return;
    }
    let cache = common::sim_cache();
    let dir = tempfile::tempdir().unwrap();
    let fst = dir.path().join("run.fst");
    let out = hwgen()
        .args([
            "sim",
            "-c",
            "configs/8x8_int8.toml",
            "-m",
            "rtl-tests/cases/avgpool.toml",
            "--json",
            "--cache",
        ])
        .arg(&cache)
        .arg("--trace")
        .arg(&fst)
        .output()
        .unwrap();
    // avgpool.toml has 20 channels: fine on the 8x8 engine as well.
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&fst).unwrap();
    assert!(bytes.len() > 1000, "the waveform is empty");
}

/// `hwgen sim --json` on an elastic design (two stages, batch 2): every frame bit-exact,
/// the steady-state round from the second round of a two-round run (at most a round
/// alone, which also fills and drains the pipeline), and each branch's frames per second
/// its frames per round over that round at the config's clock.
#[test]
fn sim_reports_rounds_on_an_elastic_design() {
    if !common::have_tool("verilator", "elastic sim") {
        return;
    }
    let out = hwgen()
        .args([
            "sim",
            "--json",
            "-c",
            "rtl-tests/configs/elastic_2stage_int8.toml",
        ])
        .args(["-m", "rtl-tests/cases/elastic_chain.toml", "--cache"])
        .arg(common::sim_cache())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["match"], true);
    assert_eq!(v["steady_state_measured"], true);
    let round = v["steady_cycles_per_round"].as_f64().unwrap();
    let alone = v["one_round_cycles"].as_f64().unwrap();
    assert!(round > 0.0 && round <= alone, "{round} vs {alone}");
    // The compiler's round (a timeline of both engines over one and two rounds) against the
    // RTL's: issue 14's bound on the cycle model's error.
    let error = v["estimate_error_percent"].as_f64().unwrap();
    assert!(error.abs() < 3.0, "estimate off by {error:.1}%");
    let clock = v["clock_mhz"].as_f64().unwrap() * 1e6;
    let b = &v["branches"][0];
    assert_eq!(b["frames"], 2);
    let fps = b["frames_per_second"].as_f64().unwrap();
    assert!((fps - 2.0 * clock / round).abs() < 1e-6 * fps, "{fps}");
}

/// A command line clap refuses has the shape of every refusal (what, rule, fix) and exits
/// 2; arguments checked after parsing (dse's --max-units, synth's --param) are refusals too.
#[test]
fn bad_command_lines_name_the_rule_and_the_fix() {
    let cases: [(&[&str], i32, &str); 5] = [
        (
            &["sim", "-c", "x.toml", "-m", "y.toml", "--stall-pct", "100"],
            2,
            "100 is not in 0..100",
        ),
        (&["sim", "-c", "x.toml"], 2, "--model <MODEL>"),
        (&["emitt"], 2, "unrecognized subcommand 'emitt'"),
        (
            &[
                "synth",
                "-c",
                "configs/8x8_int8.toml",
                "--top",
                "hwgen_systolic_array",
                "--param",
                "NOPE=4",
            ],
            1,
            "has no parameter NOPE; its parameters are CPF, KPF",
        ),
        (
            &[
                "synth",
                "-c",
                "configs/8x8_int8.toml",
                "--top",
                "hwgen_systolic_array",
                "--param",
                "CPF=0",
            ],
            1,
            "CPF is a size: at least 1",
        ),
    ];
    for (args, code, says) in cases {
        let o = hwgen().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(
            err.contains(says) && err.contains("  rule: ") && err.contains("  fix:  "),
            "{args:?}: {err}"
        );
    }
}
