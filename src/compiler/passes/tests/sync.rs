use super::*;
use crate::compiler::passes::schedule::{Res, Step};
use crate::compiler::passes::sync::AccessIndex;
use crate::isa::{Buffer, Instr, Op, Queue, Transfer};

/// The definition the index must agree with: per queue, the latest earlier instruction that
/// wrote what `steps[c]` reads or writes, or read what it writes (by comparing with all).
fn latest_by_scan(steps: &[Step], c: usize) -> [Option<usize>; 4] {
    let mut latest = [None; 4];
    for p in 0..c {
        if steps[p].conflicts(&steps[c]) {
            let q = Queue::ALL.iter().position(|&q| q == steps[p].queue());
            latest[q.unwrap()] = Some(p);
        }
    }
    latest
}

/// `Step::conflicts`, the definition the index test compares with, by hand: a load that
/// fills input rows 4..8 from memory 0..4 against steps touching those rows or that memory.
/// Two reads never conflict; a write conflicts with a read or a write of a shared address,
/// either way round; ranges that only touch at an end, empty ranges, and the same numbers
/// in another buffer or in memory share nothing.
#[test]
fn steps_conflict_when_one_writes_what_the_other_touches() {
    let load = |reads: Vec<Res>, writes: Vec<Res>| Step {
        instr: Instr::new(Op::Load(Transfer::default())),
        reads,
        writes,
        node: 0,
    };
    let (rows, mem) = (Res::Spad(Buffer::Input, 4, 8), Res::Dram(0, 4));
    let a = load(vec![mem], vec![rows]);
    let cases = [
        (vec![Res::Spad(Buffer::Input, 7, 9)], vec![], true),
        (vec![], vec![Res::Spad(Buffer::Input, 0, 5)], true),
        (vec![], vec![Res::Dram(3, 4)], true),
        (vec![Res::Dram(0, 4)], vec![], false),
        (
            vec![Res::Spad(Buffer::Input, 8, 12)],
            vec![Res::Dram(4, 9)],
            false,
        ),
        (vec![Res::Spad(Buffer::Input, 5, 5)], vec![], false),
        (
            vec![Res::Spad(Buffer::Weight, 4, 8)],
            vec![Res::Dram(8, 12)],
            false,
        ),
        (
            vec![Res::Dram(4, 8)],
            vec![Res::Spad(Buffer::Output, 0, 4)],
            false,
        ),
    ];
    for (reads, writes, want) in cases {
        let b = load(reads.clone(), writes.clone());
        assert_eq!(a.conflicts(&b), want, "reads {reads:?} writes {writes:?}");
        assert_eq!(b.conflicts(&a), want, "the other way round");
    }
}

/// Both ways of building the index (knowing nothing of the program, and knowing which
/// external memory it writes, so that reads of the rest are skipped) agree with the scan.
fn check_index(steps: &[Step], what: &str) {
    for mut index in [AccessIndex::default(), AccessIndex::for_steps(steps)] {
        for (c, s) in steps.iter().enumerate() {
            assert_eq!(
                index.latest_conflicts(s),
                latest_by_scan(steps, c),
                "{what}: instruction {c}"
            );
            index.record(c, s);
        }
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

/// Runs `instrs` in a random legal timing: dispatch in program order into queues of
/// `depth`; a queue's head starts when its executor is idle and its waits are available
/// (taking them); a started instruction completes, releasing its signals, at any later
/// step. Returns the most signals any semaphore held, or `None` on a deadlock.
fn random_timing(instrs: &[Instr], depth: usize, rng: &mut Rng) -> Option<u64> {
    use crate::isa::SEMAPHORES;
    let queue = |i: usize| {
        let q = instrs[i].queue().expect("no end in the program");
        Queue::ALL.iter().position(|&x| x == q).unwrap()
    };
    let mut count = vec![0u64; SEMAPHORES.len()];
    let mut max = 0;
    let mut queues: [std::collections::VecDeque<usize>; 4] = Default::default();
    let mut running: [Option<usize>; 4] = [None; 4];
    let (mut next, mut done) = (0, 0);
    let sems = |mask: u32| (0..SEMAPHORES.len()).filter(move |s| mask & (1 << s) != 0);
    while done < instrs.len() {
        let mut actions = Vec::new();
        if next < instrs.len() && queues[queue(next)].len() < depth {
            actions.push(4);
        }
        for k in 0..4 {
            match (running[k], queues[k].front()) {
                (Some(_), _) => actions.push(5 + k),
                (None, Some(&h)) if sems(instrs[h].wait).all(|s| count[s] > 0) => actions.push(k),
                _ => {}
            }
        }
        if actions.is_empty() {
            return None;
        }
        match rng.pick(&actions) {
            4 => {
                queues[queue(next)].push_back(next);
                next += 1;
            }
            k @ 0..=3 => {
                let h = queues[k].pop_front().unwrap();
                sems(instrs[h].wait).for_each(|s| count[s] -= 1);
                running[k] = Some(h);
            }
            a => {
                let i = running[a - 5].take().unwrap();
                for s in sems(instrs[i].signal) {
                    count[s] += 1;
                    max = max.max(count[s]);
                }
                done += 1;
            }
        }
    }
    Some(max)
}

/// Random accesses by instructions of all four queues, each to what its queue touches:
/// load memory -> input or output buffer, matmul input -> accumulator, vector accumulator
/// (and output) -> output, store output -> memory.
fn random_steps_all_queues(rng: &mut Rng, n: usize) -> Vec<Step> {
    let span = |rng: &mut Rng| {
        let lo = rng.range(0, 30) as u64;
        (lo, lo + rng.range(1, 8) as u64)
    };
    (0..n)
        .map(|_| {
            let (a, b) = span(rng);
            let (c, d) = span(rng);
            let (op, reads, writes) = match rng.range(0, 3) {
                0 => {
                    let buf = rng.pick(&[Buffer::Input, Buffer::Output]);
                    (
                        Op::Load(Transfer::default()),
                        vec![Res::Dram(a, b)],
                        vec![Res::Spad(buf, c, d)],
                    )
                }
                1 => (
                    Op::Matmul(Default::default()),
                    vec![Res::Spad(Buffer::Input, a, b)],
                    vec![Res::Spad(Buffer::Accumulator, c, d)],
                ),
                2 => (
                    Op::Vector(Default::default()),
                    vec![Res::Spad(Buffer::Accumulator, a, b)],
                    vec![Res::Spad(Buffer::Output, c, d)],
                ),
                _ => (
                    Op::Store(Transfer::default()),
                    vec![Res::Spad(Buffer::Output, a, b)],
                    vec![Res::Dram(c, d)],
                ),
            };
            Step {
                instr: Instr::new(op),
                reads,
                writes,
                node: 0,
            }
        })
        .collect()
}

/// No timing overflows a semaphore: on random programs of all four queues and on the
/// schedules of random layers, at every queue depth, many random legal timings never hold
/// more signals than `max_outstanding` says, which is at most 15, and never deadlock.
#[test]
fn no_timing_overflows_a_semaphore() {
    let mut programs: Vec<(Vec<Step>, String)> = Vec::new();
    for seed in 0..60 {
        let mut rng = Rng::new(9100 + seed);
        let n = rng.range(20, 400);
        programs.push((
            random_steps_all_queues(&mut rng, n),
            format!("random {seed}"),
        ));
    }
    for seed in 0..30 {
        let mut rng = Rng::new(3000 + seed);
        let t = rng.pick(&[4u32, 8, 16]);
        let d = design(t, random_depths(&mut rng, t));
        let src = random_model(&mut rng);
        if let Ok(c) = through(&d, &model(&src), "schedule") {
            programs.push((c.steps.unwrap(), src));
        }
    }
    for (steps, what) in &programs {
        for depth in [1usize, 2, 4, 8] {
            let instrs = crate::compiler::passes::sync::run(steps.clone(), depth as u32).instrs;
            let bound = crate::compiler::passes::sync::max_outstanding(&instrs, depth as u32)
                .map_or(0, |(_, _, held)| held);
            assert!(bound <= 15, "{what}, depth {depth}: bound {bound}");
            let mut rng = Rng::new(instrs.len() as u64 + depth as u64);
            for _ in 0..20 {
                let held = random_timing(&instrs, depth, &mut rng)
                    .unwrap_or_else(|| panic!("{what}, depth {depth}: deadlock"));
                assert!(
                    held <= bound,
                    "{what}, depth {depth}: {held} > bound {bound}"
                );
            }
        }
    }
}
