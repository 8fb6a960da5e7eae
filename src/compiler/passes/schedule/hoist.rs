//! Group prologues ahead of the group before: the loads that open a group (its biases, its
//! first input window, its first weights) follow the previous group's post-processing in
//! program order, behind the previous group's last matmuls and its residual-operand loads.
//! Instructions are issued in order and a queue holds `queue_depth`, so those loads could
//! only start once the last matmuls were in the compute queue, and then waited behind the
//! operand loads in the load queue: the array idled at every group boundary (16x16 ResNet
//! layers with a residual add: 130 cycles per 56-row tile). This pass moves each such run of
//! loads up, as a block, past the previous group's vector, store and operand-load steps and
//! its last matmuls, until the matmuls passed stream as many cycles as the block moves beats.
//!
//! At a layer's first group the block also passes the layer before's tail (its operand
//! loads, vectors and stores, which chain through the output quarters after its last
//! matmul), so the layer's first matmuls overlap that tail; never that layer's matmuls.
//!
//! Moving a step past another is only done when the two touch no common address (neither
//! writes what the other reads or writes), so the program computes the same values and the
//! sync pass, which derives every wait from program order, orders what still conflicts. The
//! block never passes a load of weights or input windows (the previous group's own, which
//! must keep their place in the load queue), nor, within a layer, a residual-operand load
//! (overtaking those measured worse where memory is the bottleneck).

use super::{Res, Step};
use crate::compiler::cost;
use crate::isa::{Buffer, Op};

/// Memory beats a step moves (`cost::step_beats` in the compiler).
pub(super) type Beats<'a> = &'a dyn Fn(&Step) -> u64;

/// Moves every group prologue up (see the module comment), on an array of cpf x kpf. In
/// place: a step moves by rotating the steps it passes, which are few.
pub(super) fn prologues(steps: &mut [Step], (cpf, kpf): (u32, u32), beats: Beats) {
    operands_early(steps, cpf, beats);
    let drain = cost::array_drain(cpf, kpf);
    let mut i = 0;
    while i < steps.len() {
        // A prologue: loads right after a vector or store step, up to the next matmul.
        let follows_finish = i > 0 && matches!(steps[i - 1].instr.op, Op::Vector(_) | Op::Store(_));
        if !(follows_finish && matches!(steps[i].instr.op, Op::Load(_))) {
            i += 1;
            continue;
        }
        let end = (i..steps.len())
            .find(|&j| !matches!(steps[j].instr.op, Op::Load(_)))
            .unwrap_or(steps.len());
        if !steps
            .get(end)
            .is_some_and(|s| matches!(s.instr.op, Op::Matmul(_)))
        {
            i = end;
            continue;
        }
        // The loads the group's matmuls need (its input window and weights) move; its
        // bias and untied-bias loads, which wait for the vector unit to be done with the
        // rows they fill, stay where they are, behind the group before's.
        steps[i..end].sort_by_key(|s| !into(s, &[Buffer::Input, Buffer::Weight]));
        let n = steps[i..end]
            .iter()
            .take_while(|s| into(s, &[Buffer::Input, Buffer::Weight]))
            .count();
        if n > 0 {
            let at = place(steps, i..i + n, cpf, drain, beats);
            steps[at..i + n].rotate_right(n);
        }
        i = end;
    }
}

/// A group's last matmul shifts in the next group's first weights while it streams, in
/// place of the preload-only matmul that opened the next group: without it the array idled
/// for the preload (cpf + 2 cycles) and the refill of the bank behind it (cpf + 1 more) at
/// every group boundary (14 times a layer on 32x32 ResNet-18's 56x56 layers, 0.8%).
///
/// Done where the preload-only matmul is the next compute step, of the same precision, and
/// the load of the weights it reads comes before the last matmul in program order (so the
/// merged matmul reads what the preload would have), with matmuls between them that stream
/// as many cycles as the load moves beats: the last matmul then waits for that load, and
/// where the load was not hoisted that far (behind a residual tail that fills the memory
/// port, 16x16 ResNet-18's 56x56 layers) the array would idle for it before the matmul
/// instead of running the matmul while the load arrives (0.5% slower there, measured).
pub(super) fn carry_preloads(steps: &mut Vec<Step>, cpf: u32, beats: Beats) {
    let mut last: Option<usize> = None;
    let mut dead = vec![false; steps.len()];
    let longest = steps.iter().map(beats).max().unwrap_or(0);
    for i in 0..steps.len() {
        let Op::Matmul(p) = steps[i].instr.op else {
            if matches!(steps[i].instr.op, Op::Window(_)) {
                last = None;
            }
            continue;
        };
        let preload_only = p.preload && !p.swap && p.count0 * p.count1 == 0;
        let carry = last.filter(|&m| {
            let Op::Matmul(mm) = steps[m].instr.op else {
                unreachable!("last is a matmul")
            };
            if !(preload_only && !mm.preload && mm.count0 * mm.count1 > 0 && mm.prec == p.prec) {
                return false;
            }
            // The load of the preloaded weights (the last step before it touches them), and
            // the matmuls between it and the last: they must stream its beats. Once the
            // matmuls up to the last stream as many cycles as the longest step moves beats,
            // whatever is further up passes.
            let mut streamed = 0u64;
            for x in (0..i).rev() {
                if x < m {
                    streamed += matmul_cycles(&steps[x], cpf);
                }
                if steps[x].conflicts(&steps[i]) {
                    return x < m && streamed >= beats(&steps[x]);
                }
                if x < m && streamed >= longest {
                    return true;
                }
            }
            true
        });
        match carry {
            Some(m) => {
                let reads = steps[i].reads.clone();
                let Op::Matmul(mm) = &mut steps[m].instr.op else {
                    unreachable!("last is a matmul")
                };
                mm.preload = true;
                mm.weight_addr = p.weight_addr;
                steps[m].reads.extend(reads);
                dead[i] = true;
                last = None;
            }
            None => last = Some(i),
        }
    }
    let mut k = 0;
    steps.retain(|_| {
        k += 1;
        !dead[k - 1]
    });
}

/// Where the block of loads `block` (right after the steps before it) moves to: up from
/// its place while nothing conflicts, until the matmuls passed stream as many cycles as the
/// block moves beats.
fn place(
    steps: &[Step],
    block: std::ops::Range<usize>,
    cpf: u32,
    drain: u64,
    beats: Beats,
) -> usize {
    let (moving, before) = (&steps[block.clone()], &steps[..block.start]);
    let node = moving[0].node;
    let need: u64 = moving.iter().map(beats).sum();
    let (mut at, mut covered) = (block.start, 0u64);
    let mut blocked_by_conflict = false;
    while at > 0 && covered < need {
        let s = &before[at - 1];
        blocked_by_conflict = moving.iter().any(|b| b.conflicts(s));
        // Within the layer, anything but a load; at the layer's start, the layer before's
        // vector and store steps and its residual-operand loads (its tail, which chains
        // operand load, vector and store through the output quarters), not its matmuls.
        let passable = !blocked_by_conflict
            && match &s.instr.op {
                Op::Load(_) => {
                    into(s, &[Buffer::Output]) && (s.node != node || behind_store(before, at - 1))
                }
                Op::Vector(_) | Op::Store(_) => true,
                _ => s.node == node,
            };
        if !passable {
            break;
        }
        covered += matmul_cycles(s, cpf);
        at -= 1;
    }
    if blocked_by_conflict {
        // Right behind a matmul it must wait for, the block would hold the load queue
        // until that matmul's results have left the array: keep matmuls streaming at
        // least that long (cpf + kpf + 2 cycles) between them.
        let mut between = 0;
        while at < block.start && between < drain {
            between += matmul_cycles(&before[at], cpf);
            at += 1;
        }
    }
    at
}

/// Whether the residual-operand load at `i` waits for a store after its group's last
/// matmul (the member four before it in the same output quarter): it starts only once that
/// member's vector and store are done, so a block behind it would wait as long.
fn behind_store(steps: &[Step], i: usize) -> bool {
    steps[..i]
        .iter()
        .rev()
        .take_while(|p| !matches!(p.instr.op, Op::Matmul(_)))
        .any(|p| matches!(p.instr.op, Op::Store(_)) && steps[i].conflicts(p))
}

/// Residual-operand loads (into the output buffer) move up past the group's vector and
/// store steps and its last matmuls, until those matmuls stream as many cycles as the load
/// moves beats, so that they, and the next group's prologue after them, are issued early;
/// they keep their order among the loads.
fn operands_early(steps: &mut [Step], cpf: u32, beats: Beats) {
    for i in 0..steps.len() {
        let s = &steps[i];
        if !(matches!(s.instr.op, Op::Load(_)) && into(s, &[Buffer::Output])) {
            continue;
        }
        let need = beats(s);
        let (mut at, mut covered) = (i, 0u64);
        while at > 0 && covered < need {
            let p = &steps[at - 1];
            let passable = p.node == s.node
                && matches!(p.instr.op, Op::Matmul(_) | Op::Vector(_) | Op::Store(_))
                && !s.conflicts(p);
            if !passable {
                break;
            }
            covered += matmul_cycles(p, cpf);
            at -= 1;
        }
        steps[at..=i].rotate_right(1);
    }
}

/// Whether a load fills one of `buffers`.
fn into(s: &Step, buffers: &[Buffer]) -> bool {
    s.writes
        .iter()
        .any(|w| matches!(w, Res::Spad(b, ..) if buffers.contains(b)))
}

/// Cycles a matmul streams (`cost::matmul_cycles`); 0 for other steps.
fn matmul_cycles(s: &Step, cpf: u32) -> u64 {
    match &s.instr.op {
        Op::Matmul(m) => cost::matmul_cycles(m.count0 * m.count1, cpf, m.preload),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::{carry_preloads, prologues};
    use crate::compiler::passes::schedule::{Res, Step};
    use crate::isa::{Buffer, Instr, Matmul, Op, Transfer, Vector};

    fn step(op: Op, reads: Vec<Res>, writes: Vec<Res>) -> Step {
        Step {
            instr: Instr::new(op),
            reads,
            writes,
            node: 0,
        }
    }

    fn spad(b: Buffer, lo: u64, hi: u64) -> Res {
        Res::Spad(b, lo, hi)
    }

    /// A load of `rows` rows from memory at `at` into buffer rows `lo..`.
    fn load(b: Buffer, lo: u64, rows: u64, at: u64) -> Step {
        let t = Transfer {
            count0: rows,
            count1: 1,
            ..Transfer::default()
        };
        let dst = spad(b, lo, lo + rows);
        step(Op::Load(t), vec![Res::Dram(at, at + rows)], vec![dst])
    }

    /// A 40-row matmul reading input rows `input`, writing accumulator rows 0..40.
    fn matmul(input: (u64, u64)) -> Step {
        let m = Matmul {
            count0: 40,
            count1: 1,
            ..Matmul::default()
        };
        let reads = vec![spad(Buffer::Input, input.0, input.1)];
        step(Op::Matmul(m), reads, vec![spad(Buffer::Accumulator, 0, 40)])
    }

    fn kinds(steps: &[Step]) -> String {
        steps
            .iter()
            .map(|s| match (&s.instr.op, s.writes.first()) {
                (Op::Load(_), Some(Res::Spad(Buffer::Input, ..))) => 'I',
                (Op::Load(_), Some(Res::Spad(Buffer::Weight, ..))) => 'W',
                (Op::Load(_), _) => 'L',
                (Op::Matmul(_), _) => 'M',
                (Op::Vector(_), _) => 'V',
                _ => 'S',
            })
            .collect()
    }

    /// Beats by hand: a row of any buffer one beat, an accumulator row four.
    fn beats(s: &Step) -> u64 {
        let (Op::Load(t) | Op::Store(t)) = &s.instr.op else {
            return 0;
        };
        let acc = matches!(s.writes.first(), Some(Res::Spad(Buffer::Accumulator, ..)));
        t.moved_rows() * if acc { 4 } else { 1 }
    }

    /// A group: its weight load, `n` matmuls on input rows 0..50, its residual-operand load
    /// (40 beats), vector and store; then the next group's prologue (`window` and 10 rows
    /// of weights) and first matmul (on input rows 100..150).
    fn two_groups(n: usize, window: Step) -> Vec<Step> {
        let mut steps = vec![load(Buffer::Weight, 0, 10, 1000)];
        steps.extend((0..n).map(|_| matmul((0, 50))));
        steps.extend(member_finish(0));
        steps.extend([
            window,
            load(Buffer::Weight, 10, 10, 1010),
            matmul((100, 150)),
        ]);
        steps
    }

    /// A member's finish: its residual operand (40 beats from memory at 2000 + `at`) loaded
    /// into output rows 0..40, the vector instruction adding it to accumulator rows 0..40
    /// there, and the store of those rows to memory at 3000 + `at`.
    fn member_finish(at: u64) -> [Step; 3] {
        let (acc, out) = (
            spad(Buffer::Accumulator, 0, 40),
            spad(Buffer::Output, 0, 40),
        );
        let store = Op::Store(Transfer::default());
        [
            load(Buffer::Output, 0, 40, 2000 + at),
            step(Op::Vector(Vector::default()), vec![acc], vec![out]),
            step(store, vec![out], vec![Res::Dram(3000 + at, 3040 + at)]),
        ]
    }

    /// Three 40-row matmuls, a window of 50 rows into rows 100..150. By hand: the operand
    /// load moves above the last matmul (40 cycles cover its 40 beats); the prologue's 60
    /// beats then move above the store, the vector and that matmul, and stop at the operand
    /// load (loads keep their order). A window into the rows the matmuls read conflicts with
    /// the last matmul, and would wait for it right behind it, so it stays.
    #[test]
    fn a_group_prologue_moves_above_the_group_before_unless_it_conflicts() {
        let mut moved = two_groups(3, load(Buffer::Input, 100, 50, 0));
        prologues(&mut moved, (16, 16), &beats);
        assert_eq!(kinds(&moved), "WMMLIWMVSM");
        let mut stuck = two_groups(3, load(Buffer::Input, 0, 50, 0));
        prologues(&mut stuck, (16, 16), &beats);
        assert_eq!(kinds(&stuck), "WMMLMVSIWM");
    }

    /// The second group is another layer's first: its prologue also passes the layer
    /// before's tail (operand load, vector, store) but not that layer's matmuls. By hand,
    /// with two matmuls: the operand load moves above the last matmul, and the prologue
    /// above the store and the vector, stopping at that matmul.
    #[test]
    fn a_layer_prologue_passes_the_layer_before_s_tail_not_its_matmuls() {
        let mut steps = two_groups(2, load(Buffer::Input, 100, 50, 0));
        for s in &mut steps[6..] {
            s.node = 1;
        }
        prologues(&mut steps, (16, 16), &beats);
        assert_eq!(kinds(&steps), "WMLMIWVSM");
    }

    /// As `two_groups` with three matmuls, but the group has a second member whose operand
    /// load reuses the first one's output rows: it conflicts with the first member's store,
    /// so it waits for that store, and the next group's prologue (a window into rows
    /// 100..150 and weights) would wait behind it. By hand: the prologue passes the second
    /// member's store and vector, its operand load (behind a store), the first member's
    /// store and vector and the last matmul (40 cycles, not yet its 60 beats), and stops
    /// at the first operand load, which waits for no store.
    #[test]
    fn a_group_prologue_passes_operand_loads_that_wait_for_a_store() {
        let mut steps = two_groups(3, load(Buffer::Input, 100, 50, 0));
        steps.splice(7..7, member_finish(40));
        prologues(&mut steps, (16, 16), &beats);
        assert_eq!(kinds(&steps), "WMMLIWMVSLVSM");
    }

    /// A preload-only matmul (weights in rows 10..20).
    fn preload_only(prec: u64) -> Step {
        let m = Matmul {
            preload: true,
            weight_addr: 10,
            count1: 1,
            prec,
            ..Matmul::default()
        };
        step(Op::Matmul(m), vec![spad(Buffer::Weight, 10, 20)], vec![])
    }

    /// The group's last matmul takes over the next group's preload when the load of the
    /// preload's 10 weight rows comes before the matmul before it (40 cycles cover its 10
    /// beats); not when it comes right before the last matmul (which would wait for it),
    /// nor after it (the merged matmul would shift in rows not yet written), nor across
    /// precisions.
    #[test]
    fn a_group_s_last_matmul_carries_the_next_group_s_first_preload() {
        // `at`: the weight load's place among the group's first steps.
        let group = |at: usize, prec: u64| {
            let mut steps = vec![
                load(Buffer::Weight, 0, 10, 1000),
                matmul((0, 50)),
                matmul((0, 50)),
                step(
                    Op::Vector(Vector::default()),
                    vec![spad(Buffer::Accumulator, 0, 40)],
                    vec![spad(Buffer::Output, 0, 40)],
                ),
            ];
            steps.insert(at, load(Buffer::Weight, 10, 10, 1010));
            steps.extend([preload_only(prec), matmul((100, 150))]);
            steps
        };
        let mut merged = group(1, 0);
        carry_preloads(&mut merged, 16, &beats);
        assert_eq!(kinds(&merged), "WWMMVM");
        let Op::Matmul(m) = merged[3].instr.op else {
            panic!("a matmul")
        };
        assert!(m.preload && m.weight_addr == 10);
        assert!(merged[3].reads.contains(&spad(Buffer::Weight, 10, 20)));
        for (at, prec) in [(2, 0), (3, 0), (1, 1)] {
            let mut kept = group(at, prec);
            let before = kinds(&kept);
            carry_preloads(&mut kept, 16, &beats);
            assert_eq!(kinds(&kept), before, "weights at {at}, precision {prec}");
        }
    }

    /// Random programs shaped like schedules (groups of loads, matmuls and a finish of
    /// operand loads, vectors and stores, layers changing at group boundaries) over small
    /// address ranges, so that steps often conflict. The properties that make the pass
    /// safe, checked against the original order: the same steps come out; every two steps
    /// that conflict (`Step::conflicts`) keep their order; a layer's loads into one buffer
    /// keep their order (a prologue's bias loads go after its window and weights, which
    /// fill other buffers). The pass must also move something in most programs.
    #[test]
    fn hoisting_keeps_every_conflicting_pair_and_each_layer_s_loads_in_order() {
        let mut moved = 0;
        for seed in 0..300 {
            let mut rng = Rng::new(4242 + seed);
            let original = random_schedule(&mut rng);
            let mut steps = original.clone();
            prologues(&mut steps, (8, 8), &beats);
            // Each step carries its original index as a read of memory no step writes.
            let id = |s: &Step| match s.reads.last() {
                Some(&Res::Dram(lo, _)) if lo >= ID_BASE => (lo - ID_BASE) as usize,
                _ => unreachable!("every step carries its index"),
            };
            let order: Vec<usize> = steps.iter().map(id).collect();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..original.len()).collect::<Vec<_>>(),
                "seed {seed}"
            );
            let mut at = vec![0; order.len()];
            for (pos, &i) in order.iter().enumerate() {
                at[i] = pos;
            }
            for j in 0..original.len() {
                for i in 0..j {
                    let (a, b) = (&original[i], &original[j]);
                    let loads = matches!(a.instr.op, Op::Load(_))
                        && matches!(b.instr.op, Op::Load(_))
                        && a.node == b.node
                        && a.writes.first().map(buffer) == b.writes.first().map(buffer);
                    if a.conflicts(b) || loads {
                        assert!(at[i] < at[j], "seed {seed}: steps {i} and {j} swapped");
                    }
                }
            }
            moved += usize::from(order.windows(2).any(|w| w[0] > w[1]));
        }
        assert!(
            moved >= 150,
            "the pass moved steps in only {moved} of 300 programs"
        );
    }

    const ID_BASE: u64 = 1 << 20;

    fn buffer(r: &Res) -> Option<Buffer> {
        match r {
            Res::Spad(b, ..) => Some(*b),
            Res::Dram(..) => None,
        }
    }

    type Rng = crate::compiler::passes::tests::Rng;

    /// A random range of rows of buffer `b`.
    fn rows(rng: &mut Rng, b: Buffer) -> Res {
        let lo = rng.range(0, 24) as u64;
        spad(b, lo, lo + rng.range(1, 12) as u64)
    }

    /// A load of up to `max` rows from memory into a random range of buffer `b`.
    fn random_load(rng: &mut Rng, b: Buffer, max: usize) -> Step {
        let mut l = load(b, 0, rng.range(1, max) as u64, rng.range(0, 30) as u64);
        l.writes = vec![rows(rng, b)];
        l
    }

    fn random_schedule(rng: &mut Rng) -> Vec<Step> {
        let r = rows;
        let mut steps = Vec::new();
        let mut node = 0;
        for _ in 0..rng.range(2, 6) {
            let mut group = Vec::new();
            for _ in 0..rng.range(1, 3) {
                let b = rng.pick(&[Buffer::Input, Buffer::Weight, Buffer::Accumulator]);
                group.push(random_load(rng, b, 40));
            }
            for _ in 0..rng.range(1, 6) {
                if rng.range(0, 3) == 0 {
                    group.push(random_load(rng, Buffer::Weight, 20));
                }
                let mut m = matmul((0, 1));
                if let Op::Matmul(mm) = &mut m.instr.op {
                    mm.count0 = rng.range(1, 40) as u64;
                }
                m.reads = vec![r(rng, Buffer::Input), r(rng, Buffer::Weight)];
                m.writes = vec![r(rng, Buffer::Accumulator)];
                group.push(m);
            }
            for _ in 0..rng.range(1, 3) {
                if rng.range(0, 1) == 0 {
                    group.push(random_load(rng, Buffer::Output, 20));
                }
                let reads = vec![r(rng, Buffer::Accumulator), r(rng, Buffer::Output)];
                group.push(step(
                    Op::Vector(Vector::default()),
                    reads,
                    vec![r(rng, Buffer::Output)],
                ));
                let lo = rng.range(0, 30) as u64;
                let dram = vec![Res::Dram(lo, lo + 8)];
                group.push(step(
                    Op::Store(Transfer::default()),
                    vec![r(rng, Buffer::Output)],
                    dram,
                ));
            }
            if rng.range(0, 2) == 0 {
                node += 1;
            }
            for s in &mut group {
                s.node = node;
            }
            steps.extend(group);
        }
        for (i, s) in steps.iter_mut().enumerate() {
            let at = ID_BASE + i as u64;
            s.reads.push(Res::Dram(at, at + 1));
        }
        steps
    }
}
