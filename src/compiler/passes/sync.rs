//! sync: semaphores from buffer dependencies. An instruction depends on every earlier
//! instruction of another queue whose accesses conflict with its own (read after write,
//! write after read, write after write). For each producer→consumer queue pair, a consumer
//! waits once for the latest producer it needs, unless an earlier instruction of its queue
//! already waited for that one or a later one (queues run in order); the producer signals.
//! Because the waits of a pair are in increasing producer order, the k-th wait consumes the
//! k-th signal, which is exactly the producer it needs. Dependencies only point backwards
//! in program order, so with in-order fetch the program cannot deadlock.
//!
//! The latest conflicting instruction of each queue is looked up in an index of the address
//! segments earlier instructions touched (`AccessIndex`), so the pass takes time in
//! proportion to the program's length times the segments an instruction touches, not to the
//! square of the program's length.
//!
//! Semaphore counters are 4 bits: at most 15 signals may be outstanding, on every pair.
//! Waiting for the exact producer it needs lets a consumer wait for a different producer
//! instruction each time, and a fast producer runs 16 and more signals ahead (the window
//! loads of a layer waiting for the previous layer's stores one by one; a project layer's
//! stores waiting for the depthwise layer's loads of the memory they reuse). So, per pair:
//!
//! Bound (proof sketch). Number a pair's waits in program order: consumer c_k waits for
//! producer p_k, p_1 < p_2 < ... (a wait for an earlier producer is already satisfied),
//! and the k-th wait takes the k-th signal. When p_m signals, m signals have been released
//! and the waits taken are those of consumer instructions that have started. Two ways to
//! know that a consumer instruction has started:
//! - (A) p_m has been dispatched, so every consumer instruction before p_m in program order
//!   is in the consumer's queue or has started: at most Q (the queue depth) have not. With
//!   A_m = #{k <= m : c_k > p_m}, at most A_m + Q signals are outstanding.
//! - (R) p_m starts only after the instructions it, the earlier instructions of its queue,
//!   and (transitively) those they waited for, waited for have completed: a vector clock
//!   `known[p_m]` names the latest consumer instruction x_m among them. With
//!   R_m = #{k <= m : c_k > x_m}, at most R_m signals are outstanding.
//!
//! A_m and R_m are fixed when wait m is added (later waits have k > m).
//!
//! Rule. A consumer waits for the exact producer it needs while A <= 14 - Q or R <= 14;
//! otherwise it waits for the latest instruction p' of the producer queue before it (which
//! covers the one it needs). The earlier waits placed after p' (or after x') waited for
//! producers before p', and the last of them, k*, was exact (a latest wait at c_k* would
//! have chosen p' or later): if it was exact by A, the waits after p' number at most
//! A_k* <= 14 - Q, so A <= 15 - Q; if by R, then x' >= x_k* (clocks only grow along a
//! queue) and R <= R_k* + 1 <= 15. Either way at most 15 signals are outstanding, for every
//! pair and queue depth. The first window loads of a layer thus still wait only for the
//! rows they read, and a pair whose producer keeps waiting on its consumer (vector and
//! compute around the accumulator banks) never needs a covering wait.
//! `max_outstanding` checks the bound on a finished program.

use crate::compiler::step::{Res, Step};
use crate::isa::{semaphore_index, Buffer, Instr, Queue};
use std::collections::BTreeMap;

pub struct Synced {
    pub steps: Vec<Step>,
    pub instrs: Vec<Instr>,
}

/// Every engine's program synced (None stays None: an idle engine).
pub fn engines(engines: Vec<Option<Vec<Step>>>, queue_depth: u32) -> Vec<Option<Synced>> {
    engines
        .into_iter()
        .map(|s| s.map(|s| run(s, queue_depth)))
        .collect()
}

pub fn run(steps: Vec<Step>, queue_depth: u32) -> Synced {
    // A wait may be exact while A <= exact_limit or R <= 14 (the module's proof sketch).
    let exact_limit = 14usize.saturating_sub(queue_depth as usize);
    let n = steps.len();
    let mut wait = vec![0u32; n];
    let mut signal = vec![0u32; n];
    // satisfied[pair] = latest producer position already waited for.
    let mut satisfied: Vec<Option<usize>> = vec![None; 16];
    // Per pair, the positions of its waits, in program order.
    let mut waits: Vec<Vec<usize>> = vec![Vec::new(); 16];
    let mut index = AccessIndex::for_steps(&steps);
    // The latest instruction of each queue before the current one.
    let mut last: [Option<usize>; 4] = [None; 4];
    // known[i][q]: the latest instruction of queue q that has completed whenever
    // instruction i starts (through the waits of i, of the instructions of its queue before
    // it, and of the instructions they waited for).
    let mut known: Vec<Clock> = Vec::with_capacity(n);
    for c in 0..n {
        let qc = steps[c].queue();
        let kc = qc.index();
        // (semaphore, queue, producer), at most one per other queue.
        let mut need = [(0usize, 0usize, 0usize); 4];
        let mut needs = 0;
        for (k, (qp, latest)) in Queue::ALL
            .into_iter()
            .zip(index.latest_conflicts(&steps[c]))
            .enumerate()
        {
            let Some(p) = latest.filter(|_| qp != qc) else {
                continue;
            };
            let sem =
                semaphore_index(qp, qc).unwrap_or_else(|| panic!("no semaphore {qp:?} -> {qc:?}"));
            need[needs] = (sem, k, p);
            needs += 1;
        }
        index.record(c, &steps[c]);
        let mut know = last[kc].map_or([None; 4], |l| known[l]);
        for &(sem, k, p) in &need[..needs] {
            if satisfied[sem].is_some_and(|q| q >= p) {
                continue;
            }
            // The pair's earlier waits placed after instruction x.
            let after = |x: Option<usize>| {
                let w = &waits[sem];
                w.len() - x.map_or(0, |x| w.partition_point(|&at| at <= x))
            };
            // A: this wait and those after its producer; R: this wait and those after the
            // last consumer instruction known complete when the producer starts.
            let safe = |p: usize| {
                after(Some(p)) < exact_limit || after(known[p][kc].map(|x| x as usize)) < 14
            };
            let p = if safe(p) {
                p
            } else {
                last[k].expect("the producer queue has an instruction before c")
            };
            satisfied[sem] = Some(p);
            waits[sem].push(c);
            wait[c] |= 1 << sem;
            debug_assert_eq!(
                signal[p] & (1 << sem),
                0,
                "a producer signals once per semaphore"
            );
            signal[p] |= 1 << sem;
            know[k] = know[k].max(Some(p as u32));
            for q in 0..4 {
                know[q] = know[q].max(known[p][q]);
            }
        }
        known.push(know);
        last[kc] = Some(c);
    }
    // Room for the `end` that `encode` appends, which would otherwise copy the program.
    let mut instrs = Vec::with_capacity(n + 1);
    instrs.extend(steps.iter().enumerate().map(|(i, s)| Instr {
        wait: wait[i],
        signal: signal[i],
        ..s.instr
    }));
    Synced { steps, instrs }
}

/// The most signals any semaphore of a finished program can hold, by the bounds of the
/// module's proof sketch, whatever the timing: when producer instruction i signals, every
/// consumer instruction before it but the last `queue_depth` has started and taken its
/// wait (A), and so has every consumer instruction known complete when i starts (R; the
/// k-th wait on a semaphore takes its k-th signal). Returns (semaphore, instruction,
/// signals) of the worst case, or `None` for a program without signals.
pub fn max_outstanding(instrs: &[Instr], queue_depth: u32) -> Option<(usize, usize, u64)> {
    let sems = crate::isa::SEMAPHORES.len();
    // Per semaphore: the instructions that signal it so far, and the waits taken by the
    // consumer queue's instructions up to each one (cumulative, from 0).
    let mut signals: Vec<Vec<usize>> = vec![Vec::new(); sems];
    let mut cum: Vec<Vec<u64>> = vec![vec![0]; sems];
    let mut waited = vec![0usize; sems];
    // Per queue, its instructions' positions; per instruction, what it knows complete.
    let mut at: [Vec<usize>; 4] = Default::default();
    let mut known: Vec<Clock> = Vec::with_capacity(instrs.len());
    let mut worst: Option<(usize, usize, u64)> = None;
    for (pc, i) in instrs.iter().enumerate() {
        let Some(q) = i.queue().map(Queue::index) else {
            known.push([None; 4]);
            continue;
        };
        let mut know = at[q].last().map_or([None; 4], |&l| known[l]);
        for (s, sem) in crate::isa::SEMAPHORES.iter().enumerate() {
            if i.wait & (1 << s) != 0 {
                if let Some(&j) = signals[s].get(waited[s]).filter(|&&j| j < pc) {
                    let kp = sem.producer.index();
                    know[kp] = know[kp].max(Some(j as u32));
                    for x in 0..4 {
                        know[x] = know[x].max(known[j][x]);
                    }
                }
                waited[s] += 1;
            }
        }
        known.push(know);
        at[q].push(pc);
        for (s, sem) in crate::isa::SEMAPHORES.iter().enumerate() {
            if i.signal & (1 << s) != 0 {
                signals[s].push(pc);
                let kc = sem.consumer.index();
                let started_a = (cum[s].len() - 1).saturating_sub(queue_depth as usize);
                let started_r =
                    know[kc].map_or(0, |x| at[kc].partition_point(|&p| p <= x as usize));
                let held = signals[s].len() as u64 - cum[s][started_a.max(started_r)];
                if worst.is_none_or(|(_, _, w)| held > w) {
                    worst = Some((s, pc, held));
                }
            }
            if i.queue() == Some(sem.consumer) {
                let before = *cum[s].last().expect("starts with 0");
                cum[s].push(before + u64::from(i.wait & (1 << s) != 0));
            }
        }
    }
    worst
}

/// Per queue, the latest instruction known complete (a vector clock; program positions fit
/// 32 bits, `frames::fits_program_space`).
type Clock = [Option<u32>; 4];

/// For every address of every memory (each scratchpad and external memory), the latest
/// instruction of each queue that wrote it and that read it, kept as disjoint segments of
/// addresses accessed alike. It answers "the latest instruction of queue q that conflicts
/// with this one" by visiting only the segments the instruction touches, where comparing with
/// every earlier instruction made the pass quadratic in the program's length.
#[derive(Default)]
pub(crate) struct AccessIndex {
    /// Per space (the scratchpads in `Buffer` order, then external memory, `DRAM`).
    spaces: [BTreeMap<u64, Segment>; DRAM + 1],
    /// The untouched gaps of the access being recorded (kept to reuse its allocation).
    gaps: Vec<(u64, u64)>,
    /// When known: the external-memory ranges some instruction writes, sorted and merged. A
    /// read of memory outside them (weights, biases, the model's inputs) conflicts with
    /// nothing, before or after, so it is neither looked up nor recorded: most of a
    /// program's loads, which otherwise grew the index by a segment each.
    dram_written: Option<Vec<(u64, u64)>>,
}

/// Addresses start..end (start is the map key) and who touched them last, per queue.
#[derive(Clone, Copy)]
struct Segment {
    end: u64,
    write: [Option<usize>; 4],
    read: [Option<usize>; 4],
}

/// External memory's space in `AccessIndex::spaces`, after every scratchpad's.
const DRAM: usize = Buffer::ALL.len();

/// The index of the space an access is in (`AccessIndex::spaces`), and its addresses.
fn space(r: &Res) -> (usize, u64, u64) {
    match *r {
        Res::Spad(b, lo, hi) => (b as usize, lo, hi),
        Res::Dram(lo, hi) => (DRAM, lo, hi),
    }
}

impl AccessIndex {
    /// An index for the instructions `steps` (knowing which external memory they write).
    pub(crate) fn for_steps(steps: &[Step]) -> AccessIndex {
        let mut written: Vec<(u64, u64)> = steps
            .iter()
            .flat_map(|s| &s.writes)
            .filter_map(|w| match *w {
                Res::Dram(lo, hi) if lo < hi => Some((lo, hi)),
                _ => None,
            })
            .collect();
        written.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(written.len());
        for (lo, hi) in written {
            match merged.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        AccessIndex {
            dram_written: Some(merged),
            ..AccessIndex::default()
        }
    }

    /// The accesses of `s` that can conflict with another instruction's (with whether
    /// each writes): all but reads of external memory no instruction writes.
    fn accesses<'s>(
        written: &'s Option<Vec<(u64, u64)>>,
        s: &'s Step,
    ) -> impl Iterator<Item = (&'s Res, bool)> + 's {
        let reads = s.reads.iter().map(|r| (r, false));
        reads
            .chain(s.writes.iter().map(|w| (w, true)))
            .filter(move |&(r, writes)| match (r, written) {
                (&Res::Dram(lo, hi), Some(written)) if !writes => {
                    // The first written range ending after lo must start before hi.
                    let i = written.partition_point(|&(_, end)| end <= lo);
                    written.get(i).is_some_and(|&(start, _)| start < hi)
                }
                _ => true,
            })
    }

    /// Per queue (in `Queue::ALL` order), the latest recorded instruction that wrote what
    /// `s` reads or writes, or read what `s` writes.
    pub(crate) fn latest_conflicts(&self, s: &Step) -> [Option<usize>; 4] {
        let mut latest = [None; 4];
        for (r, writes) in Self::accesses(&self.dram_written, s) {
            let (sp, lo, hi) = space(r);
            for seg in overlapping(&self.spaces[sp], lo, hi) {
                for (q, latest) in latest.iter_mut().enumerate() {
                    // None < Some(_), so max keeps the latest instruction.
                    *latest = (*latest).max(seg.write[q]);
                    if writes {
                        *latest = (*latest).max(seg.read[q]);
                    }
                }
            }
        }
        latest
    }

    /// Records that instruction `c` made the accesses of `s`.
    pub(crate) fn record(&mut self, c: usize, s: &Step) {
        let q = s.queue().index();
        for (r, writes) in Self::accesses(&self.dram_written, s) {
            let (sp, lo, hi) = space(r);
            if lo >= hi {
                continue;
            }
            let map = &mut self.spaces[sp];
            split_at(map, lo);
            split_at(map, hi);
            // Mark every segment in lo..hi, noting the gaps between them, then fill the
            // gaps with segments marked alike.
            let mut at = lo;
            self.gaps.clear();
            for (&start, seg) in map.range_mut(lo..hi) {
                if start > at {
                    self.gaps.push((at, start));
                }
                at = seg.end;
                if writes {
                    seg.write[q] = Some(c);
                } else {
                    seg.read[q] = Some(c);
                }
            }
            if at < hi {
                self.gaps.push((at, hi));
            }
            for &(start, end) in &self.gaps {
                let mut fresh = Segment {
                    end,
                    write: [None; 4],
                    read: [None; 4],
                };
                if writes {
                    fresh.write[q] = Some(c);
                } else {
                    fresh.read[q] = Some(c);
                }
                map.insert(start, fresh);
            }
        }
    }
}

/// The segments of `map` that overlap lo..hi (none when the range is empty).
fn overlapping(map: &BTreeMap<u64, Segment>, lo: u64, hi: u64) -> impl Iterator<Item = &Segment> {
    let hi = hi.max(lo);
    let before = map.range(..lo).next_back().map(|(_, s)| s);
    let reaching_in = before.filter(move |s| s.end > lo && lo < hi);
    reaching_in
        .into_iter()
        .chain(map.range(lo..hi).map(|(_, s)| s))
}

/// Splits the segment containing `at` (if any) so that a segment starts at `at`.
fn split_at(map: &mut BTreeMap<u64, Segment>, at: u64) {
    let Some((&start, seg)) = map.range_mut(..at).next_back() else {
        return;
    };
    if seg.end > at {
        let tail = Segment {
            end: seg.end,
            ..*seg
        };
        seg.end = at;
        debug_assert!(start < at);
        map.insert(at, tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::passes::schedule::Res;
    use crate::isa::{Buffer, Op, Transfer};

    fn step(op: fn(Transfer) -> Op, reads: Vec<Res>, writes: Vec<Res>) -> Step {
        Step {
            instr: Instr::new(op(Transfer::default())),
            reads,
            writes,
            node: 0,
        }
    }

    /// Twenty loads of what twenty vector instructions' output rows will overwrite, then
    /// those twenty stores: each store waits for the load that read its memory. Exact
    /// waits on every one would leave 20 load -> store signals outstanding (the MobileNetV2
    /// block of issue 12). The loads know nothing of the stores (R counts every earlier
    /// wait), so the first 14 stores wait exactly and the 15th for the last load: 15
    /// signals, all of which can be outstanding before the first store starts.
    #[test]
    fn every_pair_is_bounded_not_only_store_to_load() {
        let mut steps = Vec::new();
        for i in 0..20u64 {
            let dst = Res::Spad(Buffer::Input, i, i + 1);
            steps.push(step(Op::Load, vec![Res::Dram(i, i + 1)], vec![dst]));
        }
        for i in 0..20u64 {
            let out = Res::Spad(Buffer::Output, 100 + i, 101 + i);
            steps.push(step(Op::Store, vec![out], vec![Res::Dram(i, i + 1)]));
        }
        for q in [1, 4, 8] {
            let synced = run(steps.clone(), q);
            let mut instrs = synced.instrs.clone();
            instrs.push(Instr::end());
            let (_, _, held) = max_outstanding(&instrs, q).expect("signals");
            assert!(held <= 15, "queue depth {q}: {held} signals");
            assert_eq!(held, 15, "queue depth {q}");
            let sem = semaphore_index(Queue::Load, Queue::Store).unwrap();
            let signals: Vec<usize> = (0..20)
                .filter(|&i| synced.instrs[i].signal & (1 << sem) != 0)
                .collect();
            assert_eq!(signals, (0..14).chain([19]).collect::<Vec<_>>());
        }
        // Every store waiting for its own load: 20 signals before the first store starts.
        let mut exact = steps.iter().map(|s| s.instr).collect::<Vec<_>>();
        let sem = semaphore_index(Queue::Load, Queue::Store).unwrap();
        for i in 0..20 {
            exact[i].signal = 1 << sem;
            exact[20 + i].wait = 1 << sem;
        }
        assert_eq!(max_outstanding(&exact, 8), Some((sem, 19, 20)));
    }

    /// Twenty stores, then twenty loads each reading what one store wrote: the first 14
    /// loads wait for their own store, the 15th for the last store (which covers the rest),
    /// so 15 stores signal, not 20.
    #[test]
    fn store_to_load_waits_are_exact_while_fifteen_signals_fit() {
        let mut steps = Vec::new();
        for i in 0..20u64 {
            let out = Res::Spad(Buffer::Output, i, i + 1);
            steps.push(step(Op::Store, vec![out], vec![Res::Dram(i, i + 1)]));
        }
        for i in 0..20u64 {
            let dst = Res::Spad(Buffer::Input, i, i + 1);
            steps.push(step(Op::Load, vec![Res::Dram(i, i + 1)], vec![dst]));
        }
        let synced = run(steps, 8);
        let sem = semaphore_index(Queue::Store, Queue::Load).unwrap();
        let signals: Vec<usize> = (0..20)
            .filter(|&i| synced.instrs[i].signal & (1 << sem) != 0)
            .collect();
        assert_eq!(signals, (0..14).chain([19]).collect::<Vec<_>>());
        let waits: Vec<usize> = (20..40)
            .filter(|&i| synced.instrs[i].wait & (1 << sem) != 0)
            .collect();
        assert_eq!(waits, (20..35).collect::<Vec<_>>());
    }
}
