use super::*;
use crate::compiler::passes::schedule::{Res, Step};
use crate::compiler::passes::sync::AccessIndex;
use crate::isa::{Buffer, Instr, Op, Queue, Transfer};

/// The definition the index must agree with: per queue, the latest earlier instruction that
/// wrote what `steps[c]` reads or writes, or read what it writes (by comparing with all).
fn latest_by_scan(steps: &[Step], c: usize) -> [Option<usize>; 4] {
    let mut latest = [None; 4];
    for p in 0..c {
        let conflict = steps[p].writes.iter().any(|w| {
            steps[c]
                .reads
                .iter()
                .chain(&steps[c].writes)
                .any(|r| w.overlaps(r))
        }) || steps[p]
            .reads
            .iter()
            .any(|r| steps[c].writes.iter().any(|w| r.overlaps(w)));
        if conflict {
            let q = Queue::ALL.iter().position(|&q| q == steps[p].queue());
            latest[q.unwrap()] = Some(p);
        }
    }
    latest
}

fn check_index(steps: &[Step], what: &str) {
    let mut index = AccessIndex::default();
    for (c, s) in steps.iter().enumerate() {
        assert_eq!(
            index.latest_conflicts(s),
            latest_by_scan(steps, c),
            "{what}: instruction {c}"
        );
        index.record(c, s);
    }
}

/// Random accesses over small address ranges (so they overlap, nest, touch at their ends
/// and are sometimes empty) by random queues.
fn random_steps(rng: &mut Rng, n: usize) -> Vec<Step> {
    let ops: [fn(Transfer) -> Op; 2] = [Op::Load, Op::Store];
    let res = |rng: &mut Rng| {
        let lo = rng.range(0, 40) as u64;
        let hi = lo + rng.range(0, 12) as u64;
        match rng.range(0, 2) {
            0 => Res::Dram(lo, hi),
            1 => Res::Spad(Buffer::Input, lo, hi),
            _ => Res::Spad(Buffer::Output, lo, hi),
        }
    };
    (0..n)
        .map(|_| {
            let reads = (0..rng.range(0, 3)).map(|_| res(rng)).collect();
            let writes = (0..rng.range(0, 2)).map(|_| res(rng)).collect();
            Step {
                instr: Instr::new(rng.pick(&ops)(Transfer::default())),
                reads,
                writes,
                node: 0,
            }
        })
        .collect()
}

/// The sync pass finds each instruction's latest conflicting producers through an index
/// of accessed address segments; on random access patterns it agrees with comparing every
/// pair of instructions.
#[test]
fn access_index_agrees_with_comparing_every_pair() {
    for seed in 0..200 {
        let mut rng = Rng::new(7000 + seed);
        let n = rng.range(1, 120);
        check_index(&random_steps(&mut rng, n), &format!("seed {seed}"));
    }
}

/// The same on the schedules of random layers (all four queues, real address patterns).
#[test]
fn access_index_agrees_on_scheduled_layers() {
    let mut checked = 0;
    for seed in 0..80 {
        let mut rng = Rng::new(3000 + seed);
        let t = rng.pick(&[4u32, 8, 16]);
        let d = design(t, random_depths(&mut rng, t));
        let src = random_model(&mut rng);
        let m = model(&src);
        let Ok(c) = through(&d, &m, "schedule") else {
            continue;
        };
        let steps = c.steps.as_ref().unwrap();
        // The comparison with every pair is quadratic: keep to programs it checks quickly.
        if steps.len() > 2000 {
            continue;
        }
        check_index(steps, &format!("seed {seed}\n{src}"));
        checked += 1;
    }
    assert!(
        checked >= 30,
        "only {checked} of 80 random layers were checked"
    );
}
