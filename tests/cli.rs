//! The command line: emit, check, isa, help, and that a failed emit writes nothing.

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
    assert_eq!(manifest["isa"]["instruction_bits"], 160);
    // The hash is also in the top's ID parameter.
    let top = std::fs::read_to_string(dir.path().join("rtl/hwgen_top.v")).unwrap();
    assert!(top.contains(&format!("64'h{:016x}", design.hash())));
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
    for sub in ["emit", "check", "isa"] {
        let out = hwgen().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success(), "{sub} --help");
        assert!(String::from_utf8_lossy(&out.stdout).contains("--config"));
    }
}
