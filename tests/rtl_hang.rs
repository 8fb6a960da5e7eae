//! A planted deadlock on the RTL is reported within a few thousand cycles, naming the stuck
//! queue, its head instruction and the semaphore it waits on (issue 10).

mod common;

use common::{accelerator, have_tool};
use hwgen::isa::{semaphore_index, Opcode, Queue};
use std::path::Path;

/// The cycle at which the testbench reported the hang.
fn reported_cycle(err: &str) -> u64 {
    err.split("stopped at cycle ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|c| c.parse().ok())
        .expect("the cycle")
}

#[test]
fn planted_deadlock_names_queue_instruction_and_semaphore() {
    if !have_tool("verilator", "planted_deadlock") {
        return;
    }
    let design = hwgen::config::load(Path::new("configs/8x8_int8.toml")).unwrap();
    let src = "seed = 5\n[input]\nshape = [6, 6, 8]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 3\npadding = 1\nout_channels = 8\n";
    let model = hwgen::model::parse_str(src, "hang.toml", Path::new(".")).unwrap();
    let mut program = hwgen::compiler::compile(&design, &model).unwrap();
    let expected = hwgen::verify::expected(&design, &model, &program);
    // Plant: no load signals the compute queue any more, so the first matmul, which waits
    // for its operands, can never start.
    let l2c = 1u32 << semaphore_index(Queue::Load, Queue::Compute).unwrap();
    for i in program
        .instrs
        .iter_mut()
        .filter(|i| i.queue() == Some(Queue::Load))
    {
        i.signal &= !l2c;
    }
    let (pc, first) = program
        .instrs
        .iter()
        .enumerate()
        .find(|(_, i)| i.opcode() == Opcode::Matmul)
        .unwrap();
    assert!(
        first.wait & l2c != 0,
        "the first matmul waits for its loads"
    );
    let listing = first.to_asm();
    // The interpreter finds the deadlock statically.
    let err = hwgen::verify::interpret(&design, &program)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("compute queue: instruction {pc}: {listing}")),
        "{err}"
    );
    // The testbench stops long before the cycle limit and says where it is stuck.
    let exe = accelerator(&design);
    let opts = hwgen::sim::run::RunOptions::default();
    let err = match hwgen::sim::run::run_with(&design, &exe, &program, &expected, &opts) {
        Ok(_) => panic!("the planted deadlock ran to its end"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("the accelerator hangs"), "{err}");
    assert!(
        err.contains(&format!("compute  queue: 0 started, executor idle, head is instruction {pc}: {listing}; waits on load_to_compute (count 0)")),
        "{err}"
    );
    assert!(
        err.contains("memory port: no request; 0 reads in flight"),
        "{err}"
    );
    let limit = hwgen::sim::stall::limit(&design, 0);
    let cycle = reported_cycle(&err);
    // Loading the program and the loads themselves take a few hundred cycles; the hang is
    // reported one stall bound after the last progress.
    assert!(
        cycle < 3000 + limit,
        "reported at cycle {cycle} (bound {limit})\n{err}"
    );
}

/// On a multi-engine design the watchdog watches every engine (issue 11): with engine 0's
/// program emptied, engine 1 waits forever for engine 0's frame token on the stream; no
/// engine makes progress, and the testbench stops one stall bound later instead of running
/// to the cycle limit.
#[test]
fn an_elastic_deadlock_stops_the_run() {
    if !have_tool("verilator", "an_elastic_deadlock_stops_the_run") {
        return;
    }
    let design =
        hwgen::config::load(Path::new("rtl-tests/configs/elastic_2stage_int8.toml")).unwrap();
    let model = hwgen::model::load(Path::new("rtl-tests/cases/elastic_chain.toml")).unwrap();
    let mut program = hwgen::compiler::compile(&design, &model).unwrap();
    let expected = hwgen::verify::expected(&design, &model, &program);
    let e = program.elastic.as_mut().unwrap();
    e.programs[0] = vec![hwgen::isa::Instr::end()];
    program.instrs = e.programs[0].clone();
    let exe = accelerator(&design);
    let opts = hwgen::sim::run::RunOptions::default();
    let err = match hwgen::sim::run::run_with(&design, &exe, &program, &expected, &opts) {
        Ok(_) => panic!("engine 1 ran without its token"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("the accelerator hangs"), "{err}");
    let limit = hwgen::sim::stall::limit(&design, 0);
    let cycle = reported_cycle(&err);
    assert!(
        cycle < 3000 + limit,
        "reported at cycle {cycle} (bound {limit})\n{err}"
    );
}
