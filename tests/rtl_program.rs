//! Differential test at the instruction level: seeded random programs (strided loads,
//! weight preloads with bank swaps, accumulating matmuls, vector ops with bias, ReLU, add
//! and in-place max-pool, strided stores, all synchronised by semaphores) run on the ISA
//! interpreter and on the 8x8 RTL in Verilator under random memory back-pressure; the
//! stored memory must be identical bit for bit.

mod common;

use common::*;
use hwgen::interp::{Engine, Memory};
use hwgen::isa::{semaphore_index, Instr, Opcode, Queue};
use hwgen::sim::verilator::run;

fn sem(p: Queue, c: Queue) -> u64 {
    1 << semaphore_index(p, c).unwrap()
}

fn ins(op: Opcode, fields: &[(&str, u64)]) -> Instr {
    let mut i = Instr::new(op);
    for (k, v) in fields {
        i = i.set(k, *v).unwrap_or_else(|e| panic!("{e}"));
    }
    i
}

const STORE_BASE: u64 = 8192;
const ITER_SPAN: u64 = 256;

/// A random, correctly synchronised program of `iters` tiles for an 8x8 int8 engine with
/// 128 input, 128 weight, 2x64 accumulator and 64 output rows.
fn random_program(rng: &mut Rng, iters: u64) -> Vec<Instr> {
    use Opcode::{Load, Matmul, Store, Vector};
    use Queue as Q;
    let mut p = vec![
        // Define every scratchpad row first.
        ins(
            Load,
            &[
                ("buffer", 0),
                ("ext_addr", 0),
                ("count0", 128),
                ("stride0", 1),
                ("count1", 1),
            ],
        ),
        ins(
            Load,
            &[
                ("buffer", 3),
                ("ext_addr", 128),
                ("count0", 64),
                ("stride0", 1),
                ("count1", 1),
            ],
        ),
        // No signal: the load queue is in order, so the first weight load's token also
        // vouches for these.
        ins(
            Load,
            &[
                ("buffer", 2),
                ("ext_addr", 256),
                ("count0", 128),
                ("stride0", 4),
                ("count1", 1),
            ],
        ),
    ];
    let mut bias_loaded = false;
    for t in 0..iters {
        let first = t == 0;
        // Weights, from a strided region.
        let wa = rng.range(0, 120) as u64;
        let ws = rng.range(1, 2) as u64;
        p.push(ins(
            Load,
            &[
                ("buffer", 1),
                ("spad_addr", wa),
                ("ext_addr", 1024 + 32 * t),
                ("count0", 8),
                ("stride0", ws),
                ("count1", 1),
                ("wait", if first { 0 } else { sem(Q::Compute, Q::Load) }),
                ("signal", sem(Q::Load, Q::Compute)),
            ],
        ));
        // Sometimes a fresh bias row.
        let new_bias = rng.range(0, 1) == 1;
        if new_bias {
            p.push(ins(
                Load,
                &[
                    ("buffer", 2),
                    ("spad_addr", 120 + t),
                    ("ext_addr", 2048 + 4 * t),
                    ("count0", 1),
                    ("stride0", 4),
                    ("count1", 1),
                    ("signal", sem(Q::Load, Q::Vector)),
                ],
            ));
        }
        // Weight preload (waits for the weights; on the first tile also the initial loads).
        p.push(ins(
            Matmul,
            &[
                ("preload", 1),
                ("weight_addr", wa),
                ("count0", 0),
                ("count1", 1),
                ("wait", sem(Q::Load, Q::Compute)),
            ],
        ));
        let c0 = rng.range(1, 8) as u64;
        let c1 = rng.range(1, 4) as u64;
        let n = c0 * c1;
        let acc_addr = rng.range(0, (100 - n) as i64) as u64;
        let accumulate = rng.range(0, 1) as u64;
        p.push(ins(
            Matmul,
            &[
                ("swap", 1),
                ("input_addr", rng.range(0, 127) as u64),
                ("stride0", rng.range(0, 5) as u64),
                ("stride1", rng.range(0, 40) as u64),
                ("count0", c0),
                ("count1", c1),
                ("acc_addr", acc_addr),
                ("accumulate", accumulate),
                ("wait", if first { 0 } else { sem(Q::Vector, Q::Compute) }),
                (
                    "signal",
                    sem(Q::Compute, Q::Vector) | sem(Q::Compute, Q::Load),
                ),
            ],
        ));
        // Post-processing.
        let out_addr = rng.range(0, (32 - n.min(32)) as i64) as u64;
        let kind = rng.range(0, 2);
        let (add, pool, opnd) = match kind {
            0 => (0, 0, 0),
            1 => (1, 0, 40 + rng.range(0, 64 - 40 - n.min(24) as i64) as u64),
            _ => (0, 1, out_addr),
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
        p.push(ins(
            Vector,
            &[
                ("acc_addr", acc_addr),
                ("out_addr", out_addr),
                ("opnd_addr", opnd),
                ("count", n),
                ("add", add),
                ("pool", pool),
                ("relu", rng.range(0, 1) as u64),
                ("bias", u64::from(use_bias)),
                ("load_bias", u64::from(new_bias)),
                ("bias_addr", 120 + t),
                ("multiplier", mult),
                ("shift", shift),
                ("zero_point", (rng.range(-20, 20) as u64) & 0xffff),
                ("wait", wait),
                (
                    "signal",
                    sem(Q::Vector, Q::Store) | sem(Q::Vector, Q::Compute),
                ),
            ],
        ));
        bias_loaded |= new_bias;
        // Store the rows, strided, into this tile's region.
        let s0 = rng.range(1, 2) as u64;
        p.push(ins(
            Store,
            &[
                ("buffer", 3),
                ("spad_addr", out_addr),
                ("ext_addr", STORE_BASE + ITER_SPAN * t),
                ("count0", c0),
                ("stride0", s0),
                ("count1", c1),
                ("stride1", c0 * s0 + rng.range(0, 2) as u64),
                ("wait", sem(Q::Vector, Q::Store)),
                ("signal", sem(Q::Store, Q::Vector)),
            ],
        ));
    }
    p.push(Instr::new(Opcode::End));
    p
}

#[test]
fn random_programs_match_the_interpreter() {
    if !have_tool("verilator", "random_programs_match_the_interpreter") {
        return;
    }
    let design = hwgen::config::load(&repo().join("configs/8x8_int8.toml")).unwrap();
    let exe = model_exe();

    for seed in 1..=16u64 {
        let mut rng = Rng::new(seed * 7919);
        let iters = 2 + seed % 3;
        let program = random_program(&mut rng, iters);
        check_program(&exe, &design, &program, &mut rng, seed, iters);
    }
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
        let image: Vec<String> = (0..mem.beats()).map(|b| mem.beat_hex(b)).collect();

        let mut engine = Engine::new(design, &unit);
        let mut expect = mem.clone();
        let mut iprog = program.to_vec();
        if let Ok(m) = std::env::var("MUT_INTERP") {
            for spec in m.split(',') {
                let parts: Vec<&str> = spec.split(':').collect();
                let k: usize = parts[0].parse().unwrap();
                iprog[k] = iprog[k]
                    .clone()
                    .set(parts[1], parts[2].parse().unwrap())
                    .unwrap();
            }
        }
        engine
            .run(&iprog, &mut expect)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));

        let dir = tempfile::tempdir().unwrap();
        let imem: String = program.iter().map(|i| i.encode().to_hex() + "\n").collect();
        std::fs::write(dir.path().join("imem.hex"), imem).unwrap();
        std::fs::write(dir.path().join("dmem.hex"), image.join("\n") + "\n").unwrap();
        let count = ITER_SPAN * iters;
        let out = run(
            exe,
            &[
                format!("+imem={}", dir.path().join("imem.hex").display()),
                format!("+dmem={}", dir.path().join("dmem.hex").display()),
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
