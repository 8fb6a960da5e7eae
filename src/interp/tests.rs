//! The interpreter's queue model on hand-written programs.

use super::*;
use crate::isa::{Matmul, Op, Transfer, Vector};

fn engine() -> (Design, Engine) {
    let d = crate::config::parse_str(
        "[array]\nrows = 4\ncols = 4\n[memory]\ndata_width_bits = 32\n",
        "t",
        "t",
    )
    .expect("a valid design");
    let e = Engine::new(&d, &d.branches[0].units[0]);
    (d, e)
}

#[test]
fn a_wait_nobody_signals_is_a_deadlock() {
    let (_, mut e) = engine();
    let c2v = 1 << isa::semaphore_index(Queue::Compute, Queue::Vector).expect("a semaphore");
    let program = vec![
        Instr {
            wait: c2v,
            ..Instr::new(Op::Vector(Vector::default()))
        },
        Instr::end(),
    ];
    let mut mem = Memory::new(32, 16);
    let err = e.run(&program, &mut mem).unwrap_err();
    assert!(matches!(err, InterpError::Deadlock { .. }));
    // The diagnosis names the queue, the instruction, the semaphore and its count.
    assert!(
        err.to_string()
            .contains("vector queue: instruction 0: vector")
            && err
                .to_string()
                .contains("waits on compute_to_vector (count 0)"),
        "{err}"
    );
    assert!(matches!(e.run(&[], &mut mem), Err(InterpError::NoEnd)));
}

/// `hwgen compile` refuses a program whose semaphores cannot all be satisfied (the check
/// runs in the encode pass on the finished instruction list).
#[test]
fn encode_refuses_a_deadlocking_program() {
    let (d, _) = engine();
    let c2v = 1 << isa::semaphore_index(Queue::Compute, Queue::Vector).expect("a semaphore");
    let program = vec![Instr {
        wait: c2v,
        ..Instr::new(Op::Vector(Vector::default()))
    }];
    let err = crate::compiler::passes::encode::run(&d, program)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("semaphores cannot all be satisfied: deadlock"),
        "{err}"
    );
    assert!(err.contains("compute_to_vector (count 0)"), "{err}");
}

/// Load an identity weight tile and a row of inputs, multiply, requantize, store: by hand,
/// x = [1, -2, 3, 4] through the identity stays x, requantized by 3 / 2 (half up) to
/// [2, -3, 5, 6] (1.5 -> 2, -3 -> -3, 4.5 -> 5, 6 -> 6).
#[test]
fn identity_matmul_and_requantize_by_hand() {
    let (_, mut e) = engine();
    let mut mem = Memory::new(32, 16);
    let i8 = IntType::new(true, 8);
    for r in 0..4 {
        let row: Vec<i64> = (0..4).map(|c| i64::from(r == c)).collect();
        mem.write_row(r as u64, 1, &row, i8);
    }
    mem.write_row(4, 1, &[1, -2, 3, 4], i8);
    let sem = |p, c| 1 << isa::semaphore_index(p, c).expect("a semaphore");
    let load = |buffer, spad_addr, ext_addr, count0| Transfer {
        buffer,
        spad_addr,
        ext_addr,
        count0,
        stride0: 1,
        count1: 1,
        ..Transfer::default()
    };
    let program = vec![
        Instr::new(Op::Load(load(Buffer::Weight, 0, 0, 4))),
        Instr {
            signal: sem(Queue::Load, Queue::Compute),
            ..Instr::new(Op::Load(load(Buffer::Input, 0, 4, 1)))
        },
        Instr {
            wait: sem(Queue::Load, Queue::Compute),
            ..Instr::new(Op::Matmul(Matmul {
                preload: true,
                count1: 1,
                ..Matmul::default()
            }))
        },
        Instr {
            signal: sem(Queue::Compute, Queue::Vector),
            ..Instr::new(Op::Matmul(Matmul {
                swap: true,
                count0: 1,
                count1: 1,
                ..Matmul::default()
            }))
        },
        Instr {
            wait: sem(Queue::Compute, Queue::Vector),
            signal: sem(Queue::Vector, Queue::Store),
            ..Instr::new(Op::Vector(Vector {
                count: 1,
                multiplier: 3,
                shift: 1,
                ..Vector::default()
            }))
        },
        Instr {
            wait: sem(Queue::Vector, Queue::Store),
            ..Instr::new(Op::Store(Transfer {
                buffer: Buffer::Output,
                ..load(Buffer::Output, 0, 8, 1)
            }))
        },
        Instr::end(),
    ];
    e.run(&program, &mut mem).expect("the program runs");
    assert_eq!(mem.read_row(8, 1, 4, i8), vec![2, -3, 5, 6]);
}
