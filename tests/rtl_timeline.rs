//! The instruction timeline of an RTL run (`hwgen sim --timeline`) on a two-stage elastic
//! pipeline: every instruction of every engine appears exactly once, a queue's slices follow
//! its program order without overlapping, and the two stages' engines work at the same time
//! (the pipeline overlaps frames), which is what the timeline is for.

mod common;

use common::*;
use hwgen::sim::run::{Instrument, RunOptions};

/// The chain on the two-stage design, each unit handing frames on in `bands` row bands
/// (a compile-time choice: the hardware, and so the Verilator model, is the same), run in
/// RTL with the timeline on: the design, the program and its slices.
fn timeline(
    bands: u32,
) -> (
    hwgen::design::Design,
    hwgen::compiler::Program,
    Vec<hwgen::sim::timeline::Slice>,
) {
    let mut design =
        hwgen::config::load(&repo().join("rtl-tests/configs/elastic_2stage_int8.toml")).unwrap();
    for u in &mut design.branches[0].units {
        u.bands = bands;
    }
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
    (design, program, slices)
}

#[test]
fn timeline_of_a_two_stage_pipeline() {
    if !have_tool("verilator", "timeline") {
        return;
    }
    let (design, program, slices) = timeline(1);
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

/// Fine-grained pipelining, seen in the RTL: with whole frames handed on, the second
/// stage's first matmul starts only after the first stage sent frame 0's token (its last
/// store of the frame); with two row bands it starts while the first stage still computes
/// frame 0's second band.
#[test]
fn row_bands_start_the_next_stage_within_a_frame() {
    if !have_tool("verilator", "timeline") {
        return;
    }
    for bands in [1u32, 2] {
        let (_, program, slices) = timeline(bands);
        let progs = program.programs();
        // Engine 0's token of frame 0 is its `bands`-th stream store.
        let frame0_token = progs[0]
            .iter()
            .enumerate()
            .filter(|(_, i)| matches!(&i.op, hwgen::isa::Op::Store(t) if t.stream))
            .nth(bands as usize - 1)
            .map(|(pc, _)| pc)
            .unwrap();
        let at = |e: usize, pc: usize| slices.iter().find(|s| s.engine == e && s.pc == pc).unwrap();
        let token_sent = at(0, frame0_token).start;
        let first_matmul = progs[1]
            .iter()
            .position(|i| matches!(i.op, hwgen::isa::Op::Matmul(_)))
            .unwrap();
        let starts = at(1, first_matmul).start;
        if bands == 1 {
            assert!(
                starts > token_sent,
                "stage 2 started before frame 0 was handed on"
            );
        } else {
            assert!(
                starts < token_sent,
                "with {bands} bands stage 2 still waited for the whole frame ({starts} >= {token_sent})"
            );
        }
    }
}
