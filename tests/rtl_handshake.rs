//! The elastic FIFO and the counting semaphore in Verilator under random stalls, checked
//! against reference models in the testbenches (rtl-tests/tb/tb_fifo.v, tb_semaphore.v).

mod common;

use common::*;
use hwgen::sim::verilator::{run, Model};

fn fifo_model(depth: u32) -> Option<std::path::PathBuf> {
    if !have_tool("verilator", &format!("fifo_depth{depth}")) {
        return None;
    }
    let model = Model {
        top: "tb".into(),
        sources: vec![
            rtl_file("hwgen_hold_check.v"),
            rtl_file("hwgen_fifo.v"),
            testbench("tb_fifo.v"),
        ],
        include_dirs: vec![],
        harness: testbench("sim_main.cpp"),
        params: vec![
            ("DEPTH".into(), depth.to_string()),
            ("PTR_W".into(), depth.trailing_zeros().to_string()),
        ],
        trace: false,
        defines: vec![],
    };
    Some(model.build(&sim_cache()).unwrap_or_else(|e| panic!("{e}")))
}

fn pass_count(out: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.starts_with("PASS"))
        .unwrap_or_else(|| panic!("no PASS line in:\n{out}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn fifo_keeps_order_under_random_stalls() {
    for depth in [2u32, 4, 16] {
        let Some(exe) = fifo_model(depth) else { return };
        // (valid %, ready %): balanced, consumer-starved (fills up), producer-starved.
        for (seed, (valid, ready)) in [(50, 50), (90, 20), (20, 90), (100, 100)]
            .iter()
            .enumerate()
        {
            let out = run(
                &exe,
                &[
                    "+n=2000".into(),
                    format!("+valid_pct={valid}"),
                    format!("+ready_pct={ready}"),
                    format!("+seed={}", seed + 1),
                ],
            )
            .unwrap_or_else(|e| panic!("depth {depth} valid {valid} ready {ready}: {e}"));
            assert_eq!(pass_count(&out), 2000, "depth {depth}: {out}");
            if *valid == 90 {
                // A slow consumer must fill the FIFO to its depth and no further.
                let pass = out.lines().find(|l| l.starts_with("PASS")).unwrap();
                let max: u32 = pass.split_whitespace().last().unwrap().parse().unwrap();
                assert_eq!(
                    max, depth,
                    "depth {depth}: occupancy never reached the depth"
                );
            }
        }
    }
}

#[test]
fn semaphore_counts_and_flags_overflow() {
    for count_w in [2u32, 4] {
        if !have_tool("verilator", "semaphore") {
            return;
        }
        let model = Model {
            top: "tb".into(),
            sources: vec![rtl_file("hwgen_semaphore.v"), testbench("tb_semaphore.v")],
            include_dirs: vec![],
            harness: testbench("sim_main.cpp"),
            params: vec![("COUNT_W".into(), count_w.to_string())],
            trace: false,
            defines: vec![],
        };
        let exe = model.build(&sim_cache()).unwrap_or_else(|e| panic!("{e}"));
        for seed in 1..=3 {
            let out = run(&exe, &["+cycles=6000".into(), format!("+seed={seed}")])
                .unwrap_or_else(|e| panic!("count_w {count_w} seed {seed}: {e}"));
            assert_eq!(pass_count(&out), 6000, "{out}");
        }
    }
}
