//! The instruction timeline of an RTL run (`hwgen sim --timeline`) on a two-stage elastic
//! pipeline: every instruction of every engine appears exactly once, a queue's slices follow
//! its program order without overlapping, and the two stages' engines work at the same time
//! (the pipeline overlaps frames), which is what the timeline is for.

mod common;

use common::*;
use hwgen::sim::run::{Instrument, RunOptions};

#[test]
fn timeline_of_a_two_stage_pipeline() {
    if !have_tool("verilator", "timeline") {
        return;
    }
    let design =
        hwgen::config::load(&repo().join("rtl-tests/configs/elastic_2stage_int8.toml")).unwrap();
    let model = hwgen::model::load(&repo().join("rtl-tests/cases/elastic_chain.toml")).unwrap();
    let program = hwgen::compiler::compile(&design, &model).unwrap();
    let expected = hwgen::verify::expected(&design, &model, &program);
    let with = Instrument {
        timeline: true,
        ..Instrument::default()
    };
    let exe = hwgen::sim::run::build_with(&design, &sim_cache(), with).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("timeline.log");
    let opts = RunOptions {
        timeline: Some(&log),
        ..RunOptions::default()
    };
    let r = hwgen::sim::run::run_with(&design, &exe, &program, &expected, &opts).unwrap();
    assert!(r.matched);
    let slices = hwgen::sim::timeline::slices(&program, &std::fs::read_to_string(&log).unwrap());
    for (e, instrs) in program.programs().iter().enumerate() {
        let mut pcs: Vec<usize> = slices
            .iter()
            .filter(|s| s.engine == e)
            .map(|s| s.pc)
            .collect();
        pcs.sort();
        let want: Vec<usize> = (0..instrs.len() - 1).collect();
        assert_eq!(pcs, want, "engine {e}: every instruction but end, once");
        for q in 0..4 {
            let on: Vec<_> = slices
                .iter()
                .filter(|s| s.engine == e && s.queue == q)
                .collect();
            for w in on.windows(2) {
                assert!(w[0].pc < w[1].pc, "engine {e} queue {q}: program order");
                assert!(
                    w[0].end <= w[1].start,
                    "engine {e} queue {q}: overlapping slices"
                );
            }
        }
    }
    // The stages overlap: some compute slice of engine 0 runs while one of engine 1 does.
    let compute = |e: usize| slices.iter().filter(move |s| s.engine == e && s.queue == 1);
    let overlap = compute(0).any(|a| compute(1).any(|b| a.start < b.end && b.start < a.end));
    assert!(overlap, "the two stages never computed at the same time");
    let json = hwgen::sim::timeline::chrome_trace(&design, &program, &slices);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    assert_eq!(
        events.iter().filter(|e| e["ph"] == "X").count(),
        slices.len()
    );
}
