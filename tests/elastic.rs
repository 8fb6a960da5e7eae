//! Elastic multi-engine programs on the ISA interpreter: every engine of every stage runs
//! its share, the stream links carry the hand-off tokens, and every frame's output equals
//! the golden model's, bit for bit.

use hwgen::compiler::passes::encode::read_tensor;
use hwgen::compiler::Program;
use hwgen::isa::Op;
use std::path::Path;

/// Compile for an elastic config and run every engine on the interpreter; the output of
/// every frame must be the golden model's (for that frame's input).
fn check(config: &str, model_src: &str) -> Program {
    let design = hwgen::config::load(Path::new(config)).unwrap();
    let model = hwgen::model::parse_str(model_src, "test.toml", Path::new("."))
        .unwrap_or_else(|e| panic!("{e}"));
    let program = hwgen::compiler::compile(&design, &model).unwrap_or_else(|e| panic!("{e}"));
    let expected = hwgen::verify::expected(&design, &model, &program);
    let mem = hwgen::verify::interpret(&design, &program).unwrap_or_else(|e| panic!("{e}"));
    let c = hwgen::verify::compare(&program, &expected, &mem);
    assert!(c.matched(), "{} {} differ", c.differing, c.unit);
    // Guard against a degenerate case: the outputs must vary (not saturated or all zero).
    for out in program.outputs() {
        let want = read_tensor(&expected, out);
        let distinct: std::collections::BTreeSet<i64> = want.data.iter().copied().collect();
        assert!(
            distinct.len() >= 10,
            "the output takes only {} values",
            distinct.len()
        );
    }
    program
}

const CHAIN: &str = include_str!("../rtl-tests/cases/elastic_chain.toml");

#[test]
fn two_stages_two_replicas_two_frames() {
    let p = check("rtl-tests/configs/elastic_2stage_h2_int8.toml", CHAIN);
    let e = p.elastic.as_ref().expect("elastic");
    // Every engine has work: more than its end instruction.
    for (i, prog) in e.programs.iter().enumerate() {
        assert!(prog.len() > 1, "engine {i} runs an empty program");
    }
    assert_eq!(e.stages.len(), 2);
    assert_eq!(e.outputs.len(), 2);
}

/// The hand-off tokens are what orders the stages: with the downstream engines' token loads
/// turned into ordinary loads (same semaphores, nothing waited for), the interpreter runs
/// the stages concurrently and the result is wrong. This shows the interpreter models the
/// engines as concurrent, so the equality above is not an accident of a sequential order.
#[test]
fn without_the_hand_off_the_result_is_wrong() {
    let design =
        hwgen::config::load(Path::new("rtl-tests/configs/elastic_2stage_int8.toml")).unwrap();
    let model = hwgen::model::parse_str(CHAIN, "test.toml", Path::new(".")).unwrap();
    let mut program = hwgen::compiler::compile(&design, &model).unwrap();
    let expected = hwgen::verify::expected(&design, &model, &program);
    let e = program.elastic.as_mut().unwrap();
    let mut turned = 0;
    for prog in &mut e.programs {
        for i in prog.iter_mut() {
            if let Op::Load(t) = &mut i.op {
                if t.stream {
                    t.stream = false;
                    turned += 1;
                }
            }
        }
    }
    assert_eq!(turned, 2, "one token load per frame on the second stage");
    let mem = hwgen::verify::interpret(&design, &program).unwrap();
    let c = hwgen::verify::compare(&program, &expected, &mem);
    assert!(!c.matched(), "the stages ran unordered and still matched");
}
