//! The simulation cache verifies what it reuses: a damaged executable or RTL is rebuilt or
//! rewritten with a message, and a cache that cannot be used is an error naming the path
//! and a fix (issue 10).

mod common;

use common::{have_tool, rtl_file, sim_cache, testbench};
use hwgen::sim::verilator::{run, Model};
use std::path::Path;

fn semaphore_model() -> Model {
    Model {
        top: "tb".into(),
        sources: vec![rtl_file("hwgen_semaphore.v"), testbench("tb_semaphore.v")],
        include_dirs: vec![],
        harness: testbench("sim_main.cpp"),
        params: vec![("COUNT_W".into(), "3".into())],
        trace: false,
        defines: vec![],
    }
}

/// Regression: a truncated cached Verilator executable was reused forever ("Vtb failed:").
#[test]
fn truncated_executable_is_rebuilt() {
    if !have_tool("verilator", "truncated_executable_is_rebuilt") {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let model = semaphore_model();
    let exe = model.build(cache.path()).unwrap_or_else(|e| panic!("{e}"));
    let len = std::fs::metadata(&exe).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&exe).unwrap();
    f.set_len(len / 3).unwrap();
    drop(f);
    let again = model.build(cache.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, exe);
    assert_eq!(std::fs::metadata(&exe).unwrap().len(), len, "not rebuilt");
    run(&exe, &["+cycles=200".into(), "+seed=1".into()]).unwrap_or_else(|e| panic!("{e}"));
}

/// Regression: truncated cached RTL failed to verilate with no hint; it is compared with
/// the generated RTL on every use and written again, and the verilated model is reused.
#[test]
fn truncated_cached_rtl_is_rewritten() {
    if !have_tool("verilator", "truncated_cached_rtl_is_rewritten") {
        return;
    }
    let design = hwgen::config::load(Path::new("configs/8x8_int8.toml")).unwrap();
    let exe = hwgen::sim::run::build(&design, &sim_cache()).unwrap_or_else(|e| panic!("{e}"));
    let rtl = exe
        .ancestors()
        .find(|p| p.join("rtl-out").is_dir())
        .expect("the cached RTL beside the model")
        .join("rtl-out/rtl/hwgen_top.v");
    let good = std::fs::read_to_string(&rtl).unwrap();
    std::fs::write(&rtl, &good[..good.len() / 2]).unwrap();
    let again = hwgen::sim::run::build(&design, &sim_cache()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, exe, "the verilated model of the same RTL is reused");
    assert_eq!(std::fs::read_to_string(&rtl).unwrap(), good);
}

/// Regression: a cache path that is a file gave "Not a directory (os error 20)" with no path.
#[test]
fn cache_path_that_is_a_file_names_it() {
    if !have_tool("verilator", "cache_path_that_is_a_file_names_it") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cache");
    std::fs::write(&file, "not a directory").unwrap();
    let design = hwgen::config::load(Path::new("configs/8x8_int8.toml")).unwrap();
    let err = hwgen::sim::run::build(&design, &file)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.contains("rule:") && err.contains("fix:"), "{err}");
    let err = semaphore_model().build(&file).unwrap_err().to_string();
    assert!(
        err.contains(&file.display().to_string()) && err.contains("fix:"),
        "{err}"
    );
}

/// A simulation's files live in a private directory beside the verilated model, not in
/// $TMPDIR; the directory of a killed run is removed by the next run.
#[test]
fn killed_runs_leave_nothing_behind() {
    if !have_tool("verilator", "killed_runs_leave_nothing_behind") {
        return;
    }
    let design = hwgen::config::load(Path::new("configs/8x8_int8.toml")).unwrap();
    let exe = common::accelerator(&design);
    let dead = exe.with_file_name(".run-4000000000-abcdef");
    std::fs::create_dir_all(&dead).unwrap();
    let src = "[input]\nshape = [4, 4, 8]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 1\nout_channels = 8\n";
    let model = hwgen::model::parse_str(src, "m.toml", Path::new(".")).unwrap();
    let program = hwgen::compiler::compile(&design, &model).unwrap();
    let expected = hwgen::verify::expected(&design, &model, &program);
    let r = hwgen::sim::run::run(&design, &exe, &program, &expected, 0, 1)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        r.matched,
        "{} {} differ",
        r.comparison.differing, r.comparison.unit
    );
    assert!(!dead.exists(), "the killed run's directory survived");
    let left: Vec<_> = std::fs::read_dir(exe.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".run-"))
        .collect();
    assert!(left.is_empty(), "a finished run left its directory");
}
