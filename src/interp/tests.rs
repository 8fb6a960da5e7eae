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

/// The window unit by hand on a 4x4 image of one lane (lanes 1-3 zero), input pixel (y, x)
/// = 4y + x - 5:
///
/// ```text
/// -5 -4 -3 -2
/// -1  0  1  2
///  3  4  5  6
///  7  8  9 10
/// ```
///
/// A 2x2 kernel of weights [[1, 2], [3, 4]] at step 2 gives the sums
/// (0, 0): -5 - 8 - 3 + 0 = -16; (0, 2): -3 - 4 + 3 + 8 = 4;
/// (2, 0): 3 + 8 + 21 + 32 = 64; (2, 2): 5 + 12 + 27 + 40 = 84.
/// Then the first row and column are set to 100 and declared padding: a 3x3 maximum at
/// step 1 skips them, and as values grow to the right and down each window's maximum is
/// its bottom-right pixel, 5, 6, 9, 10; accumulated (max) onto rows holding 7 they become
/// 7, 7, 9, 10.
#[test]
fn window_sums_and_maxima_by_hand() {
    let d = crate::config::parse_str(
        "[array]\nrows = 4\ncols = 4\n[memory]\ndata_width_bits = 32\n[window]\nenabled = true\n",
        "t",
        "t",
    )
    .expect("a valid design");
    let mut e = Engine::new(&d, &d.branches[0].units[0]);
    for y in 0..4 {
        for x in 0..4 {
            e.input[4 * y + x] = vec![(4 * y + x) as i64 - 5, 0, 0, 0];
        }
    }
    for (t, w) in [1, 2, 3, 4].iter().enumerate() {
        e.weight[10 + t] = vec![*w, 0, 0, 0];
    }
    let sum = crate::isa::Window {
        weight_addr: 10,
        acc_addr: 20,
        count0: 4,
        stride0: 1,
        count1: 4,
        stride1: 4,
        kh: 2,
        kw: 2,
        step: 2,
        ..Default::default()
    };
    e.execute(
        0,
        &Instr::new(Op::Window(sum)),
        &mut Memory::new(32, 1),
        &mut Default::default(),
    )
    .expect("runs");
    let got: Vec<i64> = (20..24).map(|r| e.acc[r][0]).collect();
    assert_eq!(got, [-16, 4, 64, 84]);
    for r in 30..34 {
        e.acc[r] = vec![7, 7, 7, 7];
    }
    for k in 0..4 {
        e.input[k][0] = 100;
        e.input[4 * k][0] = 100;
    }
    let max = crate::isa::Window {
        max: true,
        accumulate: true,
        acc_addr: 30,
        count0: 4,
        stride0: 1,
        count1: 4,
        stride1: 4,
        kh: 3,
        kw: 3,
        step: 1,
        pad_top: 1,
        pad_left: 1,
        ..Default::default()
    };
    e.execute(
        1,
        &Instr::new(Op::Window(max)),
        &mut Memory::new(32, 1),
        &mut Default::default(),
    )
    .expect("runs");
    let got: Vec<i64> = (30..34).map(|r| e.acc[r][0]).collect();
    assert_eq!(got, [7, 7, 9, 10]);
    // Lanes of zeros: sums of zero, maxima of zero with 7.
    assert_eq!(e.acc[20][1], 0);
    assert_eq!(e.acc[30][1], 7);
    // The first sum again with that padding reading pad_value 251, the int8 -5: (0, 0):
    // -5 - 10 - 15 + 0 = -30; (0, 2): -5 - 10 + 3 + 8 = -4; (2, 0): -5 + 8 - 15 + 32 = 20;
    // (2, 2) has no padding tap: 84. Lane 1 has zero weights: 0.
    let padded = crate::isa::Window {
        acc_addr: 40,
        pad_top: 1,
        pad_left: 1,
        pad_value: 251,
        ..sum
    };
    e.execute(
        2,
        &Instr::new(Op::Window(padded)),
        &mut Memory::new(32, 1),
        &mut Default::default(),
    )
    .expect("runs");
    let got: Vec<i64> = (40..44).map(|r| e.acc[r][0]).collect();
    assert_eq!(got, [-30, -4, 20, 84]);
    assert_eq!(e.acc[40][1], 0);
}

/// A load's padding rows read no memory: in the input buffer each lane holds pad_value's
/// element (251: the int8 -5 here), in the others zero.
#[test]
fn padding_rows_hold_the_pad_value_in_the_input_buffer() {
    let (_, mut e) = engine();
    for (buffer, want) in [(Buffer::Input, -5), (Buffer::Weight, 0)] {
        let t = crate::isa::Transfer {
            buffer,
            spad_addr: 3,
            count0: 2,
            count1: 1,
            pad_left: 1,
            pad_right: 1,
            pad_value: 251,
            ..Default::default()
        };
        e.execute(
            0,
            &Instr::new(Op::Load(t)),
            &mut Memory::new(32, 1),
            &mut Default::default(),
        )
        .expect("runs");
        let rows = match buffer {
            Buffer::Input => &e.input,
            _ => &e.weight,
        };
        for row in &rows[3..5] {
            assert!(row.iter().all(|&v| v == want), "{buffer:?}: {row:?}");
        }
    }
}

/// A design without the window unit refuses window instructions.
#[test]
fn window_needs_the_window_unit() {
    let (_, mut e) = engine();
    let w = crate::isa::Window {
        count0: 1,
        count1: 1,
        kh: 1,
        kw: 1,
        step: 1,
        ..Default::default()
    };
    let err = e
        .execute(
            0,
            &Instr::new(Op::Window(w)),
            &mut Memory::new(32, 1),
            &mut Default::default(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("window unit"), "{err}");
}

/// Per-channel requantization by hand: the scale row after the bias row gives lane 0
/// multiplier 3, shift 1 and lane 1 multiplier 5, shift 2; an accumulator of 10 in both
/// lanes becomes floor((30 + 1) / 2) = 15 and floor((50 + 2) / 4) = 13. Without load_bias,
/// or on an accumulator too narrow for a multiplier and a shift, it is illegal.
#[test]
fn per_channel_scales_by_hand_and_its_limits() {
    let (_, mut e) = engine();
    e.acc[0] = vec![10, 10, 0, 0];
    e.acc[5] = vec![0; 4];
    e.acc[6] = [(3, 1), (5, 2), (0, 0), (0, 0)]
        .iter()
        .map(|&(m, s)| crate::isa::scale_word(m, s) as i64)
        .collect();
    let v = Vector {
        count: 1,
        bias: true,
        load_bias: true,
        bias_addr: 5,
        per_channel: true,
        multiplier: 999,
        shift: 0,
        ..Default::default()
    };
    let run = |e: &mut Engine, v: Vector| {
        e.execute(
            0,
            &Instr::new(Op::Vector(v)),
            &mut Memory::new(32, 1),
            &mut Default::default(),
        )
    };
    run(&mut e, v).unwrap();
    assert_eq!(e.output[0][..2], [15, 13]);
    let err = run(
        &mut e,
        Vector {
            load_bias: false,
            ..v
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("load_bias"), "{err}");
    let d = crate::config::parse_str(
        "[array]\nrows = 4\ncols = 4\n[datatype]\naccumulator = \"int16\"\n[memory]\ndata_width_bits = 32\n",
        "t",
        "t",
    )
    .expect("a valid design");
    let mut narrow = Engine::new(&d, &d.branches[0].units[0]);
    let err = run(&mut narrow, v).unwrap_err();
    assert!(err.to_string().contains("accumulator"), "{err}");
}

/// A load of short accumulator rows (row_beats): on the 4-lane int32 accumulator of a
/// 32-bit memory a row is 4 beats; row_beats = 1 moves lane 0 of each row from one beat
/// and writes the other lanes zero (the rows held 5 before); with widen, the beat holds
/// two int16 or four int8 lanes. Stores, other buffers, a row_beats of a whole row or
/// more, widen without row_beats and an unknown widen are refused.
#[test]
fn short_accumulator_rows_by_hand() {
    let (_, mut e) = engine();
    let mut mem = Memory::new(32, 8);
    let i32t = IntType::new(true, 32);
    mem.write_row(0, 1, &[7], i32t);
    mem.write_row(1, 1, &[-9], i32t);
    for r in e.rows_mut(Buffer::Accumulator).iter_mut().take(2) {
        r.iter_mut().for_each(|v| *v = 5);
    }
    let load = Transfer {
        buffer: Buffer::Accumulator,
        count0: 2,
        stride0: 1,
        count1: 1,
        row_beats: 1,
        ..Transfer::default()
    };
    let program = vec![Instr::new(Op::Load(load)), Instr::end()];
    e.run(&program, &mut mem).expect("the program runs");
    assert_eq!(e.rows_mut(Buffer::Accumulator)[0], vec![7, 0, 0, 0]);
    assert_eq!(e.rows_mut(Buffer::Accumulator)[1], vec![-9, 0, 0, 0]);
    // Widened: beat 2 holds two int16 lanes, beat 3 four int8 lanes, each sign-extended.
    mem.write_row(2, 1, &[-3, 300], IntType::new(true, 16));
    mem.write_row(3, 1, &[-1, 2, -128, 127], IntType::new(true, 8));
    let widened = |widen, ext_addr| Transfer {
        ext_addr,
        count0: 1,
        widen,
        ..load
    };
    let program = vec![
        Instr::new(Op::Load(widened(1, 2))),
        Instr::new(Op::Load(Transfer {
            spad_addr: 1,
            ..widened(2, 3)
        })),
        Instr::end(),
    ];
    e.run(&program, &mut mem).expect("the program runs");
    assert_eq!(e.rows_mut(Buffer::Accumulator)[0], vec![-3, 300, 0, 0]);
    assert_eq!(e.rows_mut(Buffer::Accumulator)[1], vec![-1, 2, -128, 127]);
    let refused = |op: Op| {
        let (_, mut e) = engine();
        let err = e
            .run(&[Instr::new(op), Instr::end()], &mut Memory::new(32, 8))
            .expect_err("refused")
            .to_string();
        assert!(err.contains("row_beats"), "{err}");
    };
    refused(Op::Load(Transfer {
        row_beats: 4,
        ..load
    }));
    refused(Op::Load(Transfer {
        buffer: Buffer::Input,
        ..load
    }));
    refused(Op::Store(Transfer {
        buffer: Buffer::Output,
        ..load
    }));
    refused(Op::Load(Transfer {
        row_beats: 0,
        widen: 1,
        ..load
    }));
    refused(Op::Load(Transfer { widen: 3, ..load }));
}

/// A layer norm on the row unit by hand (4x4 array, two lanes of channels valid in the
/// second tile... here one pixel of six channels in two tiles of four lanes, the second
/// with two valid): x = [1, 2, 3, 4, 5, 6] in the accumulator; pass 1 sums into a and
/// finishes a = 21 / 6 = 3.5; pass 2 sums the centred squares (6.25 + 2.25 + 0.25 +
/// 0.25 + 2.25 + 6.25 = 17.5) into b and finishes b = 1 / sqrt(17.5 / 6 + 0) =
/// 1 / sqrt(2.9166667); pass 3 writes (x - 3.5) * b * 10 rounded: -2.5 * 5.8554 = -14.64
/// -> -15, -8.78 -> -9, -2.93 -> -3, 3, 9, 15; the lanes past the valid two write 0.
#[test]
fn a_layer_norm_on_the_row_unit_by_hand() {
    let d = crate::config::parse_str(
        "[array]\nrows = 4\ncols = 4\n[memory]\ndata_width_bits = 32\n[rows]\nenabled = true\nstats = 16\n",
        "t",
        "t",
    )
    .expect("a valid design");
    let mut e = Engine::new(&d, &d.branches[0].units[0]);
    let f = |x: f32| i64::from(x.to_bits() as i32);
    e.acc[0] = vec![1, 2, 3, 4];
    e.acc[1] = vec![5, 6, 0, 0];
    // The constants: operand scale 1, zero 0, 1/n = 1/6, epsilon 0, output scale 10.
    e.acc[8] = vec![f(1.0), 0, f(1.0 / 6.0), 0];
    e.acc[9] = vec![f(10.0), 0, 0, 0];
    let base = crate::isa::Rows {
        acc_addr: 0,
        acc_stride: 1,
        count0: 1,
        count1: 2,
        out_stride: 1,
        const_addr: 8,
        valid: 2,
        ..Default::default()
    };
    let passes = [
        crate::isa::Rows {
            reduce: 2,
            init: true,
            finish: 2,
            ..base
        },
        crate::isa::Rows {
            centre: true,
            square: true,
            reduce: 3,
            init: true,
            finish: 3,
            ..base
        },
        crate::isa::Rows {
            centre: true,
            norm: true,
            write: true,
            ..base
        },
    ];
    // The output scale is the constants row's lane 4: on four lanes, row 9's lane 0.
    let consts = |e: &Engine| {
        crate::numeric::rows::Consts::from_words(
            &e.acc[8]
                .iter()
                .chain(&e.acc[9])
                .map(|v| *v as u32)
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(consts(&e).out_scale, 10f32.to_bits());
    for (pc, r) in passes.iter().enumerate() {
        e.execute(
            pc,
            &Instr::new(Op::Rows(*r)),
            &mut Memory::new(32, 1),
            &mut Default::default(),
        )
        .unwrap_or_else(|err| panic!("{err}"));
    }
    assert_eq!(e.output[0][..4], [-15, -9, -3, 3]);
    assert_eq!(e.output[1][..4], [9, 15, 0, 0]);
    // Without the row unit, refused.
    let (_, mut plain) = engine();
    let err = plain
        .execute(
            0,
            &Instr::new(Op::Rows(passes[0])),
            &mut Memory::new(32, 1),
            &mut Default::default(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("row unit"), "{err}");
}

/// A hand-off buffer of 4 beats holds beat a in slot a mod 4: the last 4 beats written are
/// there, an older one has been overwritten by the beat 4 after it, and one not yet written
/// is refused.
#[test]
fn a_hand_off_buffer_is_a_ring_of_its_depth() {
    let mut ring = Ring::new(4);
    for a in 0..7u64 {
        ring.write(a, format!("{a:02x}"));
    }
    for a in 3..7u64 {
        assert_eq!(ring.read(a), Ok(format!("{a:02x}").as_str()));
    }
    let err = ring.read(2).unwrap_err();
    assert!(err.contains("beat 2 was overwritten by beat 6"), "{err}");
    assert!(err.contains("holds 4 beats"), "{err}");
    assert_eq!(
        ring.read(7).unwrap_err(),
        "hand-off beat 7 read before it was written"
    );
    let fresh = Ring::new(4);
    assert_eq!(
        fresh.read(1).unwrap_err(),
        "hand-off beat 1 read before it was written"
    );
}
