//! The whole 8x8 accelerator in Verilator: a hand-written program loads weights, inputs and
//! a bias row, preloads the weights, runs a matmul, requantizes with bias and ReLU, and
//! stores the result; the memory image after the run must equal the reference computed
//! here by hand-derived integer arithmetic. (Compiled programs and the golden model come
//! with the compiler; this proves the engine's queues, semaphores and datapath together.)

mod common;

use common::*;
use hwgen::isa::{semaphore_index, Buffer, Instr, Matmul, Op, Queue, Vector};
use hwgen::sim::verilator::run;

fn sem(p: Queue, c: Queue) -> u32 {
    1 << semaphore_index(p, c).unwrap()
}

fn instr(op: Op, wait: u32, signal: u32) -> Instr {
    let i = Instr { wait, signal, op };
    i.check_masks().unwrap();
    i
}

struct Case {
    rows: usize,
    multiplier: u64,
    shift: u64,
    zero_point: i64,
    relu: bool,
    stall_pct: u32,
    seed: u64,
}

const WEIGHT_BASE: u64 = 0;
const INPUT_BASE: u64 = 64;
const BIAS_BASE: u64 = 1024;
const OUT_BASE: u64 = 2048;
const BIAS_ROW: u64 = 127;

fn program(c: &Case) -> Vec<Instr> {
    use Queue as Q;
    let n = c.rows as u64;
    let matmul = Matmul {
        swap: true,
        count0: n,
        stride0: 1,
        count1: 1,
        ..Matmul::default()
    };
    let preload = Matmul {
        preload: true,
        count1: 1,
        ..Matmul::default()
    };
    let vector = Vector {
        load_bias: true,
        bias: true,
        bias_addr: BIAS_ROW,
        relu: c.relu,
        count: n,
        multiplier: c.multiplier,
        shift: c.shift,
        zero_point: c.zero_point,
        ..Vector::default()
    };
    vec![
        instr(
            Op::Load(rows(Buffer::Weight, 0, WEIGHT_BASE, 8, 1)),
            0,
            sem(Q::Load, Q::Compute),
        ),
        instr(
            Op::Load(rows(Buffer::Input, 0, INPUT_BASE, n, 1)),
            0,
            sem(Q::Load, Q::Compute),
        ),
        instr(
            Op::Load(rows(Buffer::Accumulator, BIAS_ROW, BIAS_BASE, 1, 4)),
            0,
            sem(Q::Load, Q::Vector),
        ),
        instr(Op::Matmul(preload), sem(Q::Load, Q::Compute), 0),
        instr(
            Op::Matmul(matmul),
            sem(Q::Load, Q::Compute),
            sem(Q::Compute, Q::Vector),
        ),
        instr(
            Op::Vector(vector),
            sem(Q::Compute, Q::Vector) | sem(Q::Load, Q::Vector),
            sem(Q::Vector, Q::Store),
        ),
        instr(
            Op::Store(rows(Buffer::Output, 0, OUT_BASE, n, 1)),
            sem(Q::Vector, Q::Store),
            0,
        ),
        Instr::end(),
    ]
}

/// Requantization as the README specifies it: round half up, then saturate to int8.
fn requant(x: i64, m: u64, s: u64, zp: i64, relu: bool) -> i64 {
    let p = x * m as i64;
    let r = if s == 0 { p } else { (p + (1 << (s - 1))) >> s };
    let q = (r + zp).clamp(-128, 127);
    if relu {
        q.max(zp.clamp(-128, 127))
    } else {
        q
    }
}

fn run_case(exe: &std::path::Path, c: &Case) {
    let mut rng = Rng::new(c.seed);
    let w: Vec<Vec<i64>> = (0..8)
        .map(|_| (0..8).map(|_| rng.range(-128, 127)).collect())
        .collect();
    let a: Vec<Vec<i64>> = (0..c.rows)
        .map(|_| (0..8).map(|_| rng.range(-128, 127)).collect())
        .collect();
    let bias: Vec<i64> = (0..8).map(|_| rng.range(-40000, 40000)).collect();

    let mut dmem = vec!["0".to_string(); (OUT_BASE + c.rows as u64) as usize];
    for (r, row) in w.iter().enumerate() {
        dmem[WEIGHT_BASE as usize + r] = pack_hex(row, 8);
    }
    for (j, row) in a.iter().enumerate() {
        dmem[INPUT_BASE as usize + j] = pack_hex(row, 8);
    }
    // An accumulator row is 8 x int32 = 4 beats, least significant beat first.
    let bias_hex = pack_hex(&bias, 32);
    for b in 0..4 {
        let lo = bias_hex.len() - 16 * (b + 1);
        dmem[BIAS_BASE as usize + b] = bias_hex[lo..lo + 16].to_string();
    }
    // Poison the output region so a missing store is caught.
    for j in 0..c.rows {
        dmem[OUT_BASE as usize + j] = "dead".repeat(4);
    }
    let dir = tempfile::tempdir().unwrap();
    let mut data = hwgen::interp::Memory::new(64, dmem.len());
    for (b, hex) in dmem.iter().enumerate() {
        data.set_beat_hex(b, hex);
    }
    let [prog, dmem] = program_images(dir.path(), &data, &program(c));
    let out = run(
        exe,
        &[
            prog,
            dmem,
            format!("+dump={}", dir.path().join("dump.hex").display()),
            format!("+dump_base={OUT_BASE}"),
            format!("+dump_count={}", c.rows),
            format!("+stall_pct={}", c.stall_pct),
            format!("+seed={}", c.seed),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let dump = std::fs::read_to_string(dir.path().join("dump.hex")).unwrap();
    assert_eq!(dump.lines().count(), c.rows, "dumped rows\n{out}");
    eprintln!(
        "case seed {}: {}",
        c.seed,
        out.lines()
            .filter(|l| l.starts_with("CYCLES"))
            .collect::<String>()
    );
    for (j, line) in dump.lines().enumerate() {
        let got = unpack_hex(line, 8, 8);
        for col in 0..8 {
            let x: i64 = (0..8).map(|r| a[j][r] * w[r][col]).sum::<i64>() + bias[col];
            let want = requant(x, c.multiplier, c.shift, c.zero_point, c.relu);
            assert_eq!(
                got[col] as u8 as i8 as i64, want,
                "row {j} col {col}: x = {x}\n{out}"
            );
        }
    }
    let cycles = cycles_of(&out);
    // Lower bound from the design: the input rows alone take `rows` cycles in the array,
    // plus the 20-cycle memory latency before the first weight arrives.
    assert!(
        cycles >= c.rows as u64 + 20,
        "{cycles} cycles is impossibly fast"
    );
    let mac: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("PERF 0 8 "))
        .expect("mac counter")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        mac, c.rows as u64,
        "MAC-active cycles must equal the rows streamed\n{out}"
    );
}

#[test]
fn matmul_bias_requant_relu_end_to_end() {
    if !have_tool("verilator", "matmul_bias_requant_relu_end_to_end") {
        return;
    }
    let exe = top_model()
        .build(&sim_cache())
        .unwrap_or_else(|e| panic!("{e}"));
    let cases = [
        Case {
            rows: 20,
            multiplier: 1,
            shift: 8,
            zero_point: 0,
            relu: false,
            stall_pct: 0,
            seed: 1,
        },
        Case {
            rows: 37,
            multiplier: 300,
            shift: 16,
            zero_point: -5,
            relu: true,
            stall_pct: 30,
            seed: 2,
        },
        Case {
            rows: 64,
            multiplier: 1,
            shift: 0,
            zero_point: 3,
            relu: false,
            stall_pct: 60,
            seed: 3,
        },
    ];
    for c in &cases {
        run_case(&exe, c);
    }
}

/// A program of only `end`: the engine is done almost at once, but its prefetcher has asked
/// for the instructions after `end` before `end` arrived. Done must wait for those reads
/// (the testbench refuses "done with a memory read in flight"), or a second start would
/// take them as its first instructions.
#[test]
fn done_waits_for_prefetch_reads_past_end() {
    if !have_tool("verilator", "done_waits_for_prefetch_reads_past_end") {
        return;
    }
    let exe = top_model()
        .build(&sim_cache())
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let data = hwgen::interp::Memory::new(64, 16);
    let [prog, dmem] = program_images(dir.path(), &data, &[Instr::end()]);
    let out = run(
        &exe,
        &[
            prog,
            dmem,
            format!("+dump={}", dir.path().join("dump.hex").display()),
            "+dump_base=0".to_string(),
            "+dump_count=1".to_string(),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("CYCLES"), "{out}");
}

/// The store unit reads output-buffer rows ahead of sending them, so rows of one beat leave
/// back to back: 128 rows loaded into the output buffer and stored elsewhere come back
/// unchanged, and the whole run takes at most one cycle per beat each way (2 x 128), plus
/// three memory latencies (the instruction fetch, the load's first beat, the fetch past
/// `end`) and 32 cycles of queue hand-offs. (A store that read, waited for the row and then
/// sent it took three cycles a row: 128 + 3 x 128 cycles and more.)
#[test]
fn stores_send_a_row_every_cycle() {
    if !have_tool("verilator", "stores_send_a_row_every_cycle") {
        return;
    }
    use Queue as Q;
    const N: u64 = 128;
    const LATENCY: u64 = 20; // top_model's memory latency
    const DST: u64 = 256;
    let exe = top_model()
        .build(&sim_cache())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut rng = Rng::new(7);
    let expect: Vec<Vec<i64>> = (0..N)
        .map(|_| (0..8).map(|_| rng.range(-128, 127)).collect())
        .collect();
    let mut data = hwgen::interp::Memory::new(64, (DST + N) as usize);
    for (j, row) in expect.iter().enumerate() {
        data.set_beat_hex(j, &pack_hex(row, 8));
    }
    let program = [
        instr(
            Op::Load(rows(Buffer::Output, 0, 0, N, 1)),
            0,
            sem(Q::Load, Q::Store),
        ),
        instr(
            Op::Store(rows(Buffer::Output, 0, DST, N, 1)),
            sem(Q::Load, Q::Store),
            0,
        ),
        Instr::end(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let [prog, dmem] = program_images(dir.path(), &data, &program);
    let out = run(
        &exe,
        &[
            prog,
            dmem,
            format!("+dump={}", dir.path().join("dump.hex").display()),
            format!("+dump_base={DST}"),
            format!("+dump_count={N}"),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let dump = std::fs::read_to_string(dir.path().join("dump.hex")).unwrap();
    for (j, line) in dump.lines().enumerate() {
        let got: Vec<i64> = unpack_hex(line, 8, 8)
            .iter()
            .map(|&v| v as u8 as i8 as i64)
            .collect();
        assert_eq!(got, expect[j], "row {j}");
    }
    assert_eq!(dump.lines().count(), N as usize);
    let cycles = cycles_of(&out);
    assert!(
        cycles <= 2 * N + 3 * LATENCY + 32,
        "{cycles} cycles to load and store {N} one-beat rows\n{out}"
    );
}

/// The cycle count the testbench prints (`CYCLES n`).
fn cycles_of(out: &str) -> u64 {
    out.lines()
        .find_map(|l| l.strip_prefix("CYCLES "))
        .expect("cycle count")
        .trim()
        .parse()
        .unwrap()
}
