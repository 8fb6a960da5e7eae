//! Differential test at the instruction level: seeded random programs (strided loads,
//! weight preloads with bank swaps, accumulating matmuls, vector ops with bias, ReLU, add
//! and in-place max-pool, strided stores, all synchronised by semaphores) run on the ISA
//! interpreter and on the 8x8 RTL in Verilator under random memory back-pressure; the
//! stored memory must be identical bit for bit. Half the programs preload the next tile's
//! weights in the matmul that streams the current one, as compiled programs do, so a bank is
//! refilled right behind short matmuls (1 to 32 rows, the array's latency is 15 cycles).
//! Window programs run random depthwise and max-pool windows (every kernel up to 3x3,
//! steps 1 to 3, padding, accumulation) in the window unit, with matmuls in between, so
//! the compute queue hands over between the array and the window unit both ways, over
//! input blocks loaded with random padding (zero rows the load unit writes without reading
//! memory).

mod common;

use common::*;
use hwgen::interp::{Engine, Memory};
use hwgen::isa::{semaphore_index, Buffer, Instr, Matmul, Op, Queue, Transfer, Vector, Window};
use hwgen::sim::verilator::run;

fn sem(p: Queue, c: Queue) -> u32 {
    1 << semaphore_index(p, c).unwrap()
}

/// An instruction with its semaphores.
fn ins(op: Op, wait: u32, signal: u32) -> Instr {
    Instr { wait, signal, op }
}

const STORE_BASE: u64 = 8192;
const ITER_SPAN: u64 = 256;

/// A random, correctly synchronised program of `iters` tiles for an 8x8 int8 engine with
/// 128 input, 128 weight, 2x64 accumulator and 64 output rows. `fused`: each tile's matmul
/// also preloads the next tile's weights (one preload-only matmul before the first tile);
/// otherwise a preload-only matmul precedes every tile.
fn random_program(rng: &mut Rng, iters: u64, fused: bool) -> Vec<Instr> {
    use Queue as Q;
    let mut p = vec![
        // Define every scratchpad row first.
        ins(Op::Load(rows(Buffer::Input, 0, 0, 128, 1)), 0, 0),
        ins(Op::Load(rows(Buffer::Output, 0, 128, 64, 1)), 0, 0),
        // No signal: the load queue is in order, so the first weight load's token also
        // vouches for these.
        ins(Op::Load(rows(Buffer::Accumulator, 0, 256, 128, 4)), 0, 0),
    ];
    let mut bias_loaded = false;
    // Weights of tile t, from a strided region; the load waits until the weights it may
    // overwrite have been preloaded. Fused programs alternate between the buffer's halves.
    let load_weights = |p: &mut Vec<Instr>, rng: &mut Rng, t: u64, wait: u32| {
        let wa = if fused {
            (t % 2) * 64 + rng.range(0, 56) as u64
        } else {
            rng.range(0, 120) as u64
        };
        let ws = rng.range(1, 2) as u64;
        let weights = rows(Buffer::Weight, wa, 1024 + 32 * t, 8, ws);
        p.push(ins(Op::Load(weights), wait, sem(Q::Load, Q::Compute)));
        wa
    };
    let mut next_wa = 0;
    if fused {
        let wa = load_weights(&mut p, rng, 0, 0);
        let preload = Matmul {
            preload: true,
            weight_addr: wa,
            count1: 1,
            ..Matmul::default()
        };
        p.push(ins(
            Op::Matmul(preload),
            sem(Q::Load, Q::Compute),
            sem(Q::Compute, Q::Load),
        ));
    }
    for t in 0..iters {
        let first = t == 0;
        // Fused: the preload two tiles back read the half this load writes; otherwise the
        // previous tile's preload read the weights.
        let wait = if first { 0 } else { sem(Q::Compute, Q::Load) };
        let wa = if fused {
            next_wa = load_weights(&mut p, rng, t + 1, wait);
            next_wa
        } else {
            load_weights(&mut p, rng, t, wait)
        };
        // Sometimes a fresh bias row.
        let new_bias = rng.range(0, 1) == 1;
        if new_bias {
            let bias = rows(Buffer::Accumulator, 120 + t, 2048 + 4 * t, 1, 4);
            p.push(ins(Op::Load(bias), 0, sem(Q::Load, Q::Vector)));
        }
        // Weight preload (waits for the weights; on the first tile also the initial loads).
        if !fused {
            let preload = Matmul {
                preload: true,
                weight_addr: wa,
                count1: 1,
                ..Matmul::default()
            };
            p.push(ins(Op::Matmul(preload), sem(Q::Load, Q::Compute), 0));
        }
        let c0 = rng.range(1, 8) as u64;
        let c1 = rng.range(1, 4) as u64;
        let n = c0 * c1;
        // Fused tiles alternate between two accumulator regions, so a matmul need not wait
        // for the previous tile's vector op and streams right behind the previous matmul.
        let acc_addr = if fused {
            (t % 2) * 50 + rng.range(0, (50 - n) as i64) as u64
        } else {
            rng.range(0, (100 - n) as i64) as u64
        };
        let accumulate = rng.range(0, 1) == 1;
        let m = Matmul {
            swap: true,
            input_addr: rng.range(0, 127) as u64,
            stride0: rng.range(0, 5) as u64,
            stride1: rng.range(0, 40) as u64,
            count0: c0,
            count1: c1,
            acc_addr,
            accumulate,
            preload: fused,
            weight_addr: if fused { next_wa } else { 0 },
            ..Matmul::default()
        };
        let mut wait = if first { 0 } else { sem(Q::Vector, Q::Compute) };
        if fused {
            // The vector op two tiles back freed this tile's accumulator region.
            wait = sem(Q::Load, Q::Compute);
            if t >= 2 {
                wait |= sem(Q::Vector, Q::Compute);
            }
        }
        let signal = sem(Q::Compute, Q::Vector) | sem(Q::Compute, Q::Load);
        p.push(ins(Op::Matmul(m), wait, signal));
        // Post-processing.
        let out_addr = rng.range(0, (32 - n.min(32)) as i64) as u64;
        let kind = rng.range(0, 2);
        let (add, pool, opnd) = match kind {
            0 => (false, false, 0),
            1 => (
                true,
                false,
                40 + rng.range(0, 64 - 40 - n.min(24) as i64) as u64,
            ),
            _ => (false, true, out_addr),
        };
        // Scale so that most results land inside int8 and rounding matters: |x| < 2^18.
        let mult = rng.range(1, 65535) as u64;
        let shift =
            (18 + (64 - mult.leading_zeros() as i64) - 7 + rng.range(-3, 1)).clamp(0, 63) as u64;
        let use_bias = new_bias || (bias_loaded && rng.range(0, 1) == 1);
        let mut wait = sem(Q::Compute, Q::Vector);
        if new_bias {
            wait |= sem(Q::Load, Q::Vector);
        }
        if !first {
            wait |= sem(Q::Store, Q::Vector);
        }
        // The add's combination: the plain sum, or random weights (a product half of the
        // time), shift and zero points; half of the adds read one operand row (bcast).
        let zero_point = rng.range(-20, 20);
        let plain = Vector {
            add_weight: 1,
            opnd_weight: 1,
            add_zero: zero_point,
            ..Vector::default()
        };
        let combine = match rng.range(0, 2) {
            0 => plain,
            1 => Vector {
                add_weight: rng.range(-300, 300),
                opnd_weight: rng.range(-300, 300),
                add_shift: rng.range(8, 10) as u64,
                opnd_zero: rng.range(0, 255) as u64,
                add_zero: rng.range(-20, 20),
                ..Vector::default()
            },
            _ => Vector {
                mul: true,
                add_weight: rng.range(1, 60),
                add_shift: rng.range(9, 12) as u64,
                opnd_zero: rng.range(0, 255) as u64,
                add_zero: rng.range(-20, 20),
                ..Vector::default()
            },
        };
        let v = Vector {
            acc_addr,
            out_addr,
            opnd_addr: opnd,
            count: n,
            add,
            pool,
            bcast: add && rng.range(0, 1) == 1,
            relu: rng.range(0, 1) == 1,
            bias: use_bias,
            load_bias: new_bias,
            bias_addr: 120 + t,
            multiplier: mult,
            shift,
            zero_point,
            ..combine
        };
        let signal = sem(Q::Vector, Q::Store) | sem(Q::Vector, Q::Compute);
        p.push(ins(Op::Vector(v), wait, signal));
        bias_loaded |= new_bias;
        // Store the rows, strided, into this tile's region.
        let s0 = rng.range(1, 2) as u64;
        let store = Transfer {
            count1: c1,
            stride1: c0 * s0 + rng.range(0, 2) as u64,
            ..rows(Buffer::Output, out_addr, STORE_BASE + ITER_SPAN * t, c0, s0)
        };
        p.push(ins(
            Op::Store(store),
            sem(Q::Vector, Q::Store),
            sem(Q::Store, Q::Vector),
        ));
    }
    p.push(Instr::end());
    p
}

/// A random, correctly synchronised program of `iters` tiles, each a window instruction
/// (three in four) or a matmul, with its weights, a vector op and a store.
fn random_window_program(rng: &mut Rng, iters: u64) -> Vec<Instr> {
    use Queue as Q;
    let mut p = vec![
        ins(Op::Load(rows(Buffer::Input, 0, 0, 128, 1)), 0, 0),
        ins(Op::Load(rows(Buffer::Output, 0, 128, 64, 1)), 0, 0),
        ins(Op::Load(rows(Buffer::Accumulator, 0, 256, 128, 4)), 0, 0),
    ];
    for t in 0..iters {
        let first = t == 0;
        let window = rng.range(0, 2) > 0;
        // Weights alternate between the buffer's halves: a load waits for the compute
        // instruction two tiles back, which read the half it overwrites.
        let wa = (t % 2) * 64 + rng.range(0, 50) as u64;
        let nw = if window { 9 } else { 8 };
        let wait = if t >= 2 { sem(Q::Compute, Q::Load) } else { 0 };
        // The tile's inputs: an 8x8 block into its half of the input buffer, with random
        // padding (rows of a random pad value that read no memory) on every side.
        let half = (t % 2) * 64;
        let block = Transfer {
            count1: 8,
            stride1: 8 * 2 + rng.range(0, 5) as u64,
            pad_top: rng.range(0, 3) as u64,
            pad_bottom: rng.range(0, 2) as u64,
            pad_left: rng.range(0, 3) as u64,
            pad_right: rng.range(0, 2) as u64,
            pad_value: rng.range(0, 255) as u64,
            ..rows(Buffer::Input, half, rng.range(0, 800) as u64, 8, 2)
        };
        p.push(ins(Op::Load(block), wait, 0));
        let weights = rows(Buffer::Weight, wa, 1024 + 16 * t, nw, 1);
        p.push(ins(Op::Load(weights), 0, sem(Q::Load, Q::Compute)));
        // Tiles alternate between two accumulator regions, so a compute instruction waits
        // only for the vector op two tiles back and may start right behind the previous
        // one: a window right behind a matmul whose results are still in the array.
        let region = (t % 2) * 50 + rng.range(0, 50 - 24) as u64;
        let mut wait = sem(Q::Load, Q::Compute);
        if t >= 2 {
            wait |= sem(Q::Vector, Q::Compute);
        }
        let signal = sem(Q::Compute, Q::Vector) | sem(Q::Compute, Q::Load);
        let (n, max) = if window {
            let (kh, kw, step) = (
                rng.range(1, 3) as u64,
                rng.range(1, 3) as u64,
                rng.range(1, 3) as u64,
            );
            // A window over the tile's 8x8 block (or a part of it).
            let ow = rng.range(1, ((8 - kw) / step + 1) as i64) as u64;
            let oh = rng.range(1, ((8 - kh) / step + 1).min(24 / ow) as i64) as u64;
            let count0 = ((ow - 1) * step + kw + rng.range(0, step as i64 - 1) as u64).min(8);
            let count1 = ((oh - 1) * step + kh + rng.range(0, step as i64 - 1) as u64).min(8);
            let (x0, y0) = (
                rng.range(0, (8 - count0) as i64) as u64,
                rng.range(0, (8 - count1) as i64) as u64,
            );
            let stride0 = 1;
            let max = rng.range(0, 1) == 1;
            let w = Window {
                max,
                accumulate: rng.range(0, 1) == 1,
                weight_addr: wa,
                input_addr: half + 8 * y0 + x0,
                acc_addr: region,
                count0,
                stride0,
                count1,
                stride1: 8,
                kh,
                kw,
                step,
                pad_top: rng.range(0, 2) as u64,
                pad_bottom: rng.range(0, 2) as u64,
                pad_left: rng.range(0, 2) as u64,
                pad_right: rng.range(0, 2) as u64,
                prec: 0,
                pad_value: rng.range(0, 255) as u64,
            };
            p.push(ins(Op::Window(w), wait, signal));
            (
                ((count1 - kh) / step + 1) * ((count0 - kw) / step + 1),
                Some(w.acc_addr),
            )
        } else {
            let preload = Matmul {
                preload: true,
                weight_addr: wa,
                count1: 1,
                ..Matmul::default()
            };
            p.push(ins(Op::Matmul(preload), sem(Q::Load, Q::Compute), 0));
            let (c0, c1) = (rng.range(1, 8) as u64, rng.range(1, 3) as u64);
            let m = Matmul {
                swap: true,
                input_addr: half + rng.range(0, 16) as u64,
                stride0: rng.range(0, 2) as u64,
                stride1: rng.range(0, 16) as u64,
                count0: c0,
                count1: c1,
                acc_addr: region,
                accumulate: rng.range(0, 1) == 1,
                ..Matmul::default()
            };
            let wait = if t >= 2 {
                sem(Q::Vector, Q::Compute)
            } else {
                0
            };
            p.push(ins(Op::Matmul(m), wait, signal));
            (c0 * c1, None)
        };
        let acc_addr = match (max, &p.last().unwrap().op) {
            (Some(a), _) => a,
            (None, Op::Matmul(m)) => m.acc_addr,
            _ => unreachable!(),
        };
        // A maximum is an input element: take it as it is; sums are scaled into int8.
        let exact = matches!(p.last().unwrap().op, Op::Window(w) if w.max);
        let (mult, shift) = if exact {
            (1, 0)
        } else {
            let mult = rng.range(1, 65535) as u64;
            let shift = (17 + (64 - mult.leading_zeros() as i64) - 7 + rng.range(-3, 1))
                .clamp(0, 63) as u64;
            (mult, shift)
        };
        let out_addr = rng.range(0, 32 - n as i64) as u64;
        let mut wait = sem(Q::Compute, Q::Vector);
        if !first {
            wait |= sem(Q::Store, Q::Vector);
        }
        let v = Vector {
            acc_addr,
            out_addr,
            count: n,
            relu: rng.range(0, 1) == 1,
            multiplier: mult,
            shift,
            zero_point: if exact { 0 } else { rng.range(-20, 20) },
            ..Vector::default()
        };
        let signal = sem(Q::Vector, Q::Store) | sem(Q::Vector, Q::Compute);
        p.push(ins(Op::Vector(v), wait, signal));
        let store = rows(Buffer::Output, out_addr, STORE_BASE + ITER_SPAN * t, n, 1);
        p.push(ins(
            Op::Store(store),
            sem(Q::Vector, Q::Store),
            sem(Q::Store, Q::Vector),
        ));
    }
    p.push(Instr::end());
    p
}

/// A random program of `iters` tiles that keeps a layer's output on chip: each tile loads
/// a 4x8 input block with random padding, runs a matmul over it, post-processes the result
/// into the input buffer (`to_input`), runs a window over those rows with random padding
/// (which never counts, whatever the rows hold) and stores the window's post-processed
/// result. The next tile's input load overlaps the vector unit's writes into the input
/// buffer, which take its write port first.
fn random_forward_program(rng: &mut Rng, iters: u64) -> Vec<Instr> {
    use Queue as Q;
    let mut p = vec![
        ins(Op::Load(rows(Buffer::Output, 0, 128, 64, 1)), 0, 0),
        ins(Op::Load(rows(Buffer::Accumulator, 0, 256, 128, 4)), 0, 0),
    ];
    let scale = |rng: &mut Rng, bits: i64| -> (u64, u64) {
        let mult = rng.range(1, 65535) as u64;
        let shift =
            (bits + (64 - mult.leading_zeros() as i64) - 7 + rng.range(-2, 1)).clamp(0, 63) as u64;
        (mult, shift)
    };
    for t in 0..iters {
        let (a, b) = ((t % 2) * 32, 64 + (t % 2) * 32);
        let (r, q) = ((t % 2) * 32, 64 + (t % 2) * 24);
        let w = (t % 2) * 32;
        // Loads: the block (after the window two tiles back, the last reader of this
        // tile's input, weight and accumulator regions), then both weights.
        let block = Transfer {
            count1: 4,
            stride1: 16 + rng.range(0, 3) as u64,
            pad_top: rng.range(0, 1) as u64,
            pad_bottom: rng.range(0, 1) as u64,
            pad_left: rng.range(0, 2) as u64,
            pad_right: rng.range(0, 2) as u64,
            pad_value: rng.range(0, 255) as u64,
            ..rows(Buffer::Input, a, rng.range(0, 800) as u64, 8, 2)
        };
        let wait = if t >= 2 { sem(Q::Compute, Q::Load) } else { 0 };
        p.push(ins(Op::Load(block), wait, 0));
        let weights = rows(Buffer::Weight, w, 1024 + 32 * t, 25, 1);
        p.push(ins(Op::Load(weights), 0, sem(Q::Load, Q::Compute)));
        let preload = Matmul {
            preload: true,
            weight_addr: w,
            count1: 1,
            ..Matmul::default()
        };
        p.push(ins(Op::Matmul(preload), sem(Q::Load, Q::Compute), 0));
        let m = Matmul {
            swap: true,
            input_addr: a,
            count0: 8,
            stride0: 1,
            count1: 4,
            stride1: 8,
            acc_addr: r,
            ..Matmul::default()
        };
        let wait = if t >= 1 {
            sem(Q::Vector, Q::Compute)
        } else {
            0
        };
        p.push(ins(Op::Matmul(m), wait, sem(Q::Compute, Q::Vector)));
        let (mult, shift) = scale(rng, 18);
        let forward = Vector {
            acc_addr: r,
            out_addr: b,
            count: 32,
            relu: rng.range(0, 1) == 1,
            multiplier: mult,
            shift,
            zero_point: rng.range(-10, 10),
            to_input: true,
            ..Vector::default()
        };
        p.push(ins(
            Op::Vector(forward),
            sem(Q::Compute, Q::Vector),
            sem(Q::Vector, Q::Compute),
        ));
        let (kh, kw, step) = (
            rng.range(1, 3) as u64,
            rng.range(1, 3) as u64,
            rng.range(1, 2) as u64,
        );
        let win = Window {
            weight_addr: w + 16,
            input_addr: b,
            acc_addr: q,
            count0: 8,
            stride0: 1,
            count1: 4,
            stride1: 8,
            kh,
            kw,
            step,
            pad_top: rng.range(0, 1) as u64,
            pad_bottom: rng.range(0, 1) as u64,
            pad_left: rng.range(0, 2) as u64,
            pad_right: rng.range(0, 2) as u64,
            pad_value: rng.range(0, 255) as u64,
            ..Window::default()
        };
        let n = ((4 - kh) / step + 1) * ((8 - kw) / step + 1);
        p.push(ins(
            Op::Window(win),
            sem(Q::Vector, Q::Compute),
            sem(Q::Compute, Q::Vector) | sem(Q::Compute, Q::Load),
        ));
        let (mult, shift) = scale(rng, 14);
        let out = Vector {
            acc_addr: q,
            out_addr: 0,
            count: n,
            multiplier: mult,
            shift,
            zero_point: rng.range(-10, 10),
            ..Vector::default()
        };
        let mut wait = sem(Q::Compute, Q::Vector);
        if t >= 1 {
            wait |= sem(Q::Store, Q::Vector);
        }
        p.push(ins(
            Op::Vector(out),
            wait,
            sem(Q::Vector, Q::Store) | sem(Q::Vector, Q::Compute),
        ));
        let store = rows(Buffer::Output, 0, STORE_BASE + ITER_SPAN * t, n, 1);
        p.push(ins(
            Op::Store(store),
            sem(Q::Vector, Q::Store),
            sem(Q::Store, Q::Vector),
        ));
    }
    p.push(Instr::end());
    p
}

/// Runs the programs `make(rng, seed)` (with the tiles they store) of seeds 1..=`seeds` on
/// the 8x8 int8 design in RTL against the interpreter (`check_program`); the seed's random
/// stream starts at seed x `salt`.
fn run_programs(
    test: &str,
    seeds: u64,
    salt: u64,
    make: impl Fn(&mut Rng, u64) -> (Vec<Instr>, u64),
) {
    if !have_tool("verilator", test) {
        return;
    }
    let design = hwgen::config::load(&repo().join("configs/8x8_int8.toml")).unwrap();
    assert!(design.branches[0].units[0].window.is_some());
    let exe = model_exe();
    for seed in 1..=seeds {
        let mut rng = Rng::new(seed * salt);
        let (program, iters) = make(&mut rng, seed);
        check_program(&exe, &design, &program, &mut rng, seed, iters);
    }
}

#[test]
fn outputs_kept_on_chip_match_the_interpreter() {
    run_programs(
        "outputs_kept_on_chip_match_the_interpreter",
        10,
        7_777,
        |rng, seed| {
            let iters = 3 + seed % 4;
            (random_forward_program(rng, iters), iters)
        },
    );
}

/// A window with the shortest lead (a 1x1 maximum, accumulating) right behind a matmul of
/// 24 rows whose results are still in the array, both writing accumulator rows: the window
/// may start only so that its first accumulator access comes after the array's last.
fn window_behind_matmul_program(rng: &mut Rng, kernel: u64) -> Vec<Instr> {
    use Queue as Q;
    let mut p = preloaded_prologue();
    p.push(rows_matmul(rng, false));
    let w = Window {
        max: kernel == 1,
        accumulate: true,
        weight_addr: 8,
        input_addr: 64,
        acc_addr: 32,
        count0: 8,
        stride0: 1,
        count1: 3 + kernel - 1,
        stride1: 8,
        kh: kernel,
        kw: 1,
        step: 1,
        ..Window::default()
    };
    p.push(ins(Op::Window(w), 0, sem(Q::Compute, Q::Vector)));
    // The matmul's rows at a shift of 12, the window's as they are.
    post_and_store(&mut p, &[(0, 12), (32, 0)]);
    p
}

/// Every row of the initial scratchpads defined, the first 16 weight rows loaded and the
/// first 8 preloaded.
fn preloaded_prologue() -> Vec<Instr> {
    use Queue as Q;
    let mut p = vec![
        ins(Op::Load(rows(Buffer::Input, 0, 0, 128, 1)), 0, 0),
        ins(Op::Load(rows(Buffer::Output, 0, 128, 64, 1)), 0, 0),
        ins(Op::Load(rows(Buffer::Accumulator, 0, 256, 128, 4)), 0, 0),
        ins(
            Op::Load(rows(Buffer::Weight, 0, 1024, 16, 1)),
            0,
            sem(Q::Load, Q::Compute),
        ),
    ];
    let preload = Matmul {
        preload: true,
        count1: 1,
        ..Matmul::default()
    };
    p.push(ins(Op::Matmul(preload), sem(Q::Load, Q::Compute), 0));
    p
}

/// A matmul on the preloaded weights (swapping them in) over 24 input rows from a random
/// start into accumulator rows 0..24, signalling the vector unit; with `preload_next` it
/// also preloads weight rows 8..16.
fn rows_matmul(rng: &mut Rng, preload_next: bool) -> Instr {
    let m = Matmul {
        swap: true,
        preload: preload_next,
        weight_addr: if preload_next { 8 } else { 0 },
        accumulate: true,
        input_addr: rng.range(0, 64) as u64,
        count0: 8,
        stride0: 1,
        count1: 3,
        stride1: 8,
        acc_addr: 0,
        ..Matmul::default()
    };
    ins(Op::Matmul(m), 0, sem(Queue::Compute, Queue::Vector))
}

/// Per (accumulator row, shift): a vector instruction over 24 rows from there, waiting for
/// the compute queue's next signal, and the store of its rows to the next ITER_SPAN of
/// external memory; then the end.
fn post_and_store(p: &mut Vec<Instr>, tiles: &[(u64, u64)]) {
    use Queue as Q;
    for (t, &(acc, shift)) in tiles.iter().enumerate() {
        let v = Vector {
            acc_addr: acc,
            out_addr: 0,
            count: 24,
            multiplier: 1,
            shift,
            ..Vector::default()
        };
        let wait = sem(Q::Compute, Q::Vector) | if t > 0 { sem(Q::Store, Q::Vector) } else { 0 };
        p.push(ins(Op::Vector(v), wait, sem(Q::Vector, Q::Store)));
        let store = rows(Buffer::Output, 0, STORE_BASE + ITER_SPAN * t as u64, 24, 1);
        p.push(ins(
            Op::Store(store),
            sem(Q::Vector, Q::Store),
            sem(Q::Store, Q::Vector),
        ));
    }
    p.push(Instr::end());
}

#[test]
fn window_right_behind_a_matmul_matches_the_interpreter() {
    run_programs(
        "window_right_behind_a_matmul_matches_the_interpreter",
        6,
        31,
        |rng, seed| (window_behind_matmul_program(rng, 1 + seed % 2), 2),
    );
}

#[test]
fn random_window_programs_match_the_interpreter() {
    run_programs(
        "random_window_programs_match_the_interpreter",
        12,
        104_729,
        |rng, seed| {
            let iters = 3 + seed % 4;
            (random_window_program(rng, iters), iters)
        },
    );
}

/// A matmul that finishes with its last input row (its semaphores travel with that row)
/// right before an empty matmul (no rows, no preload) that finishes at once: both signal
/// the vector unit, whose two vector instructions each wait for one. The empty one's
/// release must not share the row's tag with the first one's (one signal would be lost,
/// and the second vector instruction would wait forever).
fn empty_matmul_behind_program(rng: &mut Rng) -> Vec<Instr> {
    use Queue as Q;
    let mut p = preloaded_prologue();
    p.push(rows_matmul(rng, true));
    p.push(ins(
        Op::Matmul(Matmul::default()),
        0,
        sem(Q::Compute, Q::Vector),
    ));
    post_and_store(&mut p, &[(0, 12), (0, 12)]);
    p
}

#[test]
fn an_empty_matmul_right_behind_one_keeps_both_signals() {
    run_programs(
        "an_empty_matmul_right_behind_one_keeps_both_signals",
        3,
        97,
        |rng, _| (empty_matmul_behind_program(rng), 2),
    );
}

#[test]
fn random_programs_match_the_interpreter() {
    run_programs(
        "random_programs_match_the_interpreter",
        16,
        7919,
        |rng, seed| {
            let iters = 2 + seed % 3;
            (random_program(rng, iters, seed % 2 == 0), iters)
        },
    );
}

fn model_exe() -> std::path::PathBuf {
    top_model()
        .build(&sim_cache())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn check_program(
    exe: &std::path::Path,
    design: &hwgen::design::Design,
    program: &[Instr],
    rng: &mut Rng,
    seed: u64,
    iters: u64,
) {
    let unit = design.branches[0].units[0].clone();
    {
        assert!(
            program.len() <= 256,
            "program does not fit the instruction memory"
        );
        let words = 4096usize;
        let mut mem = Memory::new(64, STORE_BASE as usize + (ITER_SPAN * iters) as usize);
        for b in 0..words {
            // Accumulator and bias rows hold small int32 values; the rest is random bytes.
            let small = (256..768).contains(&b) || (2048..2064).contains(&b);
            let v = if small {
                pack_hex(&[rng.range(-65536, 65535), rng.range(-65536, 65535)], 32)
            } else {
                format!("{:016x}", rng.next())
            };
            mem.set_beat_hex(b, &v);
        }

        let mut engine = Engine::new(design, &unit);
        let mut expect = mem.clone();
        engine
            .run(program, &mut expect)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));

        let dir = tempfile::tempdir().unwrap();
        let [prog, dmem] = program_images(dir.path(), &mem, program);
        let count = ITER_SPAN * iters;
        let out = run(
            exe,
            &[
                prog,
                dmem,
                format!("+dump={}", dir.path().join("dump.hex").display()),
                format!("+dump_base={STORE_BASE}"),
                format!("+dump_count={count}"),
                format!("+stall_pct={}", (10 * seed) % 70),
                format!("+seed={seed}"),
            ],
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let dump = std::fs::read_to_string(dir.path().join("dump.hex")).unwrap();
        let got: Vec<&str> = dump.lines().collect();
        assert_eq!(got.len() as u64, count);
        let mut stored = 0;
        let mut unsaturated = 0;
        for (k, line) in got.iter().enumerate() {
            let beat = STORE_BASE as usize + k;
            let want = expect.beat_hex(beat);
            assert_eq!(
                *line, want,
                "seed {seed}: beat {beat} differs (RTL vs interpreter)\n{out}"
            );
            if want != "0000000000000000" {
                stored += 1;
            }
            unsaturated += unpack_hex(&want, 8, 8)
                .iter()
                .filter(|v| !matches!(**v, 0x7f | 0x80))
                .count();
        }
        assert!(stored > 0, "seed {seed}: the program stored nothing");
        assert!(
            unsaturated > 100,
            "seed {seed}: nearly every result saturated; the test would miss rounding errors"
        );
    }
}
