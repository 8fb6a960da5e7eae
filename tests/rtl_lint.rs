//! Every shipped config emits RTL that is lint-clean under `verilator --lint-only -Wall`,
//! compiles with Icarus in Verilog-2005 mode, and (8x8) synthesises with Yosys without
//! inferring a latch. The RTL tests' row-unit configs (rtl-tests/configs/*rows*.toml: the
//! only Designs whose row unit writes MX blocks or posits) and hand-off configs
//! (*handoff*.toml: the only ones with hand-off buffers) are linted too.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn configs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("configs"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    assert!(v.len() >= 5, "expected the shipped configs in configs/");
    v
}

/// The shipped configs and the RTL tests' row-unit and hand-off configs.
fn lint_configs() -> Vec<PathBuf> {
    let mut v = configs();
    let mut rows: Vec<PathBuf> = std::fs::read_dir(repo().join("rtl-tests/configs"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "toml")
                && p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n.contains("rows") || n.contains("handoff")
                })
        })
        .collect();
    rows.sort();
    assert!(
        rows.len() >= 4,
        "expected the row-unit configs in rtl-tests/configs/"
    );
    v.extend(rows);
    v
}

fn emit_to(config: &Path, dir: &Path) {
    let design = hwgen::config::load(config).unwrap_or_else(|e| panic!("{e}"));
    hwgen::rtl::emit(&design).write_atomic(dir).unwrap();
}

fn verilog_sources(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("hwgen.f"))
        .unwrap()
        .lines()
        .filter(|l| l.ends_with(".v"))
        .map(str::to_string)
        .collect()
}

#[test]
fn verilator_lint_all_configs() {
    if !have_tool("verilator", "verilator_lint_all_configs") {
        return;
    }
    for config in lint_configs() {
        let dir = tempfile::tempdir().unwrap();
        emit_to(&config, dir.path());
        let out = Command::new("verilator")
            .args([
                "--lint-only",
                "-Wall",
                "-f",
                "hwgen.f",
                "--top-module",
                "hwgen_top",
            ])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !text.contains("%Warning"),
            "{}: verilator -Wall is not clean:\n{text}",
            config.display()
        );
    }
}

#[test]
fn icarus_compiles_all_configs_as_verilog_2005() {
    if !have_tool("iverilog", "icarus_compiles_all_configs_as_verilog_2005") {
        return;
    }
    for config in configs() {
        let dir = tempfile::tempdir().unwrap();
        emit_to(&config, dir.path());
        let out = Command::new("iverilog")
            .args([
                "-g2005",
                "-Wall",
                "-o",
                "top.vvp",
                "-c",
                "hwgen.f",
                "-s",
                "hwgen_top",
            ])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // Icarus notes that it cannot check $readmem-free memories' sizes etc. with
        // "sorry" or warns about timescales; neither appears for clean Verilog-2005.
        assert!(
            out.status.success() && text.trim().is_empty(),
            "{}: iverilog -g2005 reported:\n{text}",
            config.display()
        );
    }
}

/// Every shipped config's processes elaborate without a latch (Yosys `proc`; the full
/// synthesis below runs on the smallest).
#[test]
fn yosys_infers_no_latch_in_any_config() {
    if !have_tool("yosys", "yosys_infers_no_latch_in_any_config") {
        return;
    }
    for config in configs() {
        let dir = tempfile::tempdir().unwrap();
        emit_to(&config, dir.path());
        let script = format!(
            "read_verilog -Irtl {}\nhierarchy -top hwgen_top\nproc\nselect -assert-none t:$dlatch t:$adlatch t:$_DLATCH_*\n",
            verilog_sources(dir.path()).join(" ")
        );
        std::fs::write(dir.path().join("proc.ys"), script).unwrap();
        let out = Command::new("yosys")
            .args(["-q", "-l", "proc.log", "proc.ys"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let log = std::fs::read_to_string(dir.path().join("proc.log")).unwrap_or_default();
        let latches: Vec<&str> = log
            .lines()
            .filter(|l| l.starts_with("Latch inferred"))
            .collect();
        assert!(
            out.status.success() && latches.is_empty(),
            "{}: yosys proc failed or inferred latches:\n{}\n{}",
            config.display(),
            latches.join("\n"),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn yosys_synthesises_8x8_without_latches() {
    if !have_tool("yosys", "yosys_synthesises_8x8_without_latches") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    emit_to(&repo().join("configs/8x8_int8.toml"), dir.path());
    let script = format!(
        "read_verilog -Irtl {}\nsynth -top hwgen_top\nselect -assert-none t:$dlatch t:$adlatch t:$_DLATCH_*\nstat\n",
        verilog_sources(dir.path()).join(" ")
    );
    std::fs::write(dir.path().join("synth.ys"), script).unwrap();
    let out = Command::new("yosys")
        .args(["-q", "-l", "synth.log", "synth.ys"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let log = std::fs::read_to_string(dir.path().join("synth.log")).unwrap_or_default();
    assert!(
        out.status.success(),
        "yosys synth failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        log.lines().rev().take(30).collect::<Vec<_>>().join("\n")
    );
    let latches: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("Latch inferred"))
        .collect();
    assert!(
        latches.is_empty(),
        "yosys inferred latches:\n{}",
        latches.join("\n")
    );
    assert!(
        log.contains("Number of cells"),
        "no statistics in the yosys log"
    );
}
