//! The whole-program cases of rtl-tests/cases.toml: golden model = ISA interpreter = RTL,
//! bit for bit. Each config is verilated once (cached by Design hash) for all its cases.

mod common;

use common::*;
use hwgen::compiler::passes::encode::read_tensor;
use hwgen::interp::Engine;
use serde::Deserialize;

#[derive(Deserialize)]
struct Cases {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    model: String,
    config: String,
    stall_pct: Option<u32>,
}

#[test]
fn rtl_cases() {
    if !have_tool("verilator", "rtl_cases") {
        return;
    }
    let cases: Cases =
        toml::from_str(&std::fs::read_to_string(repo().join("rtl-tests/cases.toml")).unwrap())
            .unwrap();
    assert!(cases.case.len() >= 12);
    for c in &cases.case {
        let design = hwgen::config::load(&repo().join(&c.config)).unwrap();
        let model = hwgen::model::load(&repo().join("rtl-tests").join(&c.model))
            .unwrap_or_else(|e| panic!("{e}"));
        let program = hwgen::compiler::compile(&design, &model)
            .unwrap_or_else(|e| panic!("{}: {e}", c.model));
        let unit = &design.branches[0].units[0];

        // Golden = interpreter.
        let mut mem = program.dmem.clone();
        Engine::new(&design, unit)
            .run(&program.instrs, &mut mem)
            .unwrap_or_else(|e| panic!("{}: {e}", c.model));
        let golden = read_tensor(&program.expected, &program.output, model.act_type);
        if model.tensor_is_mx(&model.layers.last().expect("layers").name) {
            // Every output beat: elements and block scales (MX channels fill whole tiles).
            for beat in program.output_range() {
                assert_eq!(
                    mem.beat_hex(beat as usize),
                    program.expected.beat_hex(beat as usize),
                    "{} on {}: interpreter differs from the golden model at beat {beat}",
                    c.model,
                    c.config
                );
            }
        } else {
            // The real channels (a partial last channel tile holds don't-care values).
            let interp = read_tensor(&mem, &program.output, model.act_type);
            assert_eq!(
                interp, golden,
                "{} on {}: interpreter differs from the golden model",
                c.model, c.config
            );
        }
        assert!(
            golden.data.iter().any(|v| *v != golden.data[0]),
            "{}: constant output",
            c.model
        );

        // Interpreter = RTL.
        let exe = hwgen::sim::run::build(&design, &sim_cache()).unwrap_or_else(|e| panic!("{e}"));
        let r = hwgen::sim::run::run(&design, &exe, &program, c.stall_pct.unwrap_or(0), 1)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", c.model, c.config));
        assert!(
            r.matched,
            "{} on {}: {} values differ from the golden model",
            c.model, c.config, r.mismatches
        );
        let ideal = program.macs.div_ceil(u64::from(unit.cpf * unit.kpf));
        assert!(
            r.cycles >= ideal,
            "{}: {} cycles is below the ideal {}",
            c.model,
            r.cycles,
            ideal
        );
        eprintln!(
            "{:<40} {:<24} cycles {:>7} ideal {:>6} estimated {:>7}",
            c.model,
            c.config,
            r.cycles,
            ideal,
            program.estimated_cycles()
        );
    }
}

#[test]
fn testbench_refuses_a_program_for_another_design() {
    if !have_tool(
        "verilator",
        "testbench_refuses_a_program_for_another_design",
    ) {
        return;
    }
    let design = hwgen::config::load(&repo().join("configs/8x8_int8.toml")).unwrap();
    let model = hwgen::model::load(&repo().join("rtl-tests/cases/conv_relu.toml")).unwrap();
    let mut program = hwgen::compiler::compile(&design, &model).unwrap();
    // A program compiled for the 16x16 design, presented to the 8x8 RTL.
    let other = hwgen::config::load(&repo().join("configs/16x16_int8.toml")).unwrap();
    program.design_hash = other.hash();
    let exe = hwgen::sim::run::build(&design, &sim_cache()).unwrap();
    let err = hwgen::sim::run::run(&design, &exe, &program, 0, 1)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "program compiled for design {:016x}, but this RTL is design {:016x}",
            other.hash(),
            design.hash()
        )),
        "{err}"
    );
}

#[test]
fn lockstep_agrees_and_names_the_first_differing_instruction() {
    if !have_tool(
        "verilator",
        "lockstep_agrees_and_names_the_first_differing_instruction",
    ) {
        return;
    }
    let design = hwgen::config::load(&repo().join("configs/8x8_int8.toml")).unwrap();
    let model = hwgen::model::load(&repo().join("rtl-tests/cases/residual_block.toml")).unwrap();
    let program = hwgen::compiler::compile(&design, &model).unwrap();
    let exe = hwgen::sim::run::build_with(&design, &sim_cache(), false, true).unwrap();
    let (r, div) = hwgen::sim::run::lockstep(&design, &exe, &program, 20, 3).unwrap();
    assert!(r.matched);
    assert_eq!(div, None, "the RTL diverged from the interpreter");

    // Corrupt one matmul result in the RTL's log: the comparator must name that matmul.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("w.log");
    hwgen::sim::run::run_full(&design, &exe, &program, 0, 1, None, Some(&log)).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let mut seen = 0;
    let corrupted: String = text
        .lines()
        .map(|l| {
            let mut l = l.to_string();
            if l.starts_with("C ") {
                seen += 1;
                if seen == 40 {
                    let flip = if l.ends_with('0') { '1' } else { '0' };
                    l.pop();
                    l.push(flip);
                }
            }
            l + "\n"
        })
        .collect();
    let mut engine = hwgen::interp::Engine::new(&design, &design.branches[0].units[0]);
    engine.writes = Some(Vec::new());
    let mut mem = program.dmem.clone();
    engine.run(&program.instrs, &mut mem).unwrap();
    let writes = engine.writes.take().unwrap();
    let culprit = writes
        .iter()
        .filter(|w| program.instrs[w.pc].opcode == hwgen::isa::Opcode::Matmul)
        .nth(39)
        .unwrap()
        .pc;
    let d = hwgen::sim::run::first_divergence(&design, &program, &writes, &corrupted)
        .expect("a divergence");
    assert_eq!(d.pc, culprit);
    assert!(d.listing.starts_with("matmul"), "{}", d.listing);
}

/// On the multi-precision config, every scratchpad row the RTL writes (the tagged int8 rows,
/// FP32 accumulators of MX layers, int32 ones of integer layers, rows rounded back to int8)
/// equals the interpreter's, instruction by instruction, under memory back-pressure.
#[test]
fn lockstep_agrees_on_a_mixed_precision_model() {
    if !have_tool("verilator", "lockstep_agrees_on_a_mixed_precision_model") {
        return;
    }
    let design = hwgen::config::load(&repo().join("configs/16x16_int8_mxint8.toml")).unwrap();
    let model = hwgen::model::load(&repo().join("models/sample_mixed.toml")).unwrap();
    let program = hwgen::compiler::compile(&design, &model).unwrap();
    let exe = hwgen::sim::run::build_with(&design, &sim_cache(), false, true).unwrap();
    let (r, div) = hwgen::sim::run::lockstep(&design, &exe, &program, 20, 5).unwrap();
    assert!(
        r.matched,
        "{} values differ from the golden model",
        r.mismatches
    );
    assert_eq!(div, None, "the RTL diverged from the interpreter");
}
