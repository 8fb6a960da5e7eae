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
//! Semaphore counters are 4 bits: at most 15 signals may be outstanding. Waiting for the
//! exact store it needs let every window load of a layer wait for a different store of the
//! previous one, and a fast producer layer ran 16 and more signals ahead. So a load waits for
//! the exact store at most `precise_waits` times in a row; the next time it waits for the
//! latest store before it, which satisfies every earlier store, and the count starts again.
//! Then for every store-to-load wait at most precise_waits + 1 signals sit at stores before
//! it with waits after it, and a store after it can run only once it is fetched, so with a
//! load queue of Q entries at most precise_waits + 1 + Q signals are outstanding:
//! precise_waits = 14 - Q (6 for Q = 8, the deepest queue validation allows). The first
//! window loads of a layer thus still wait only for the rows they read.

use super::schedule::{Res, Step};
use crate::compiler::{Compilation, CompileError};
use crate::isa::{semaphore_index, Buffer, Instr, Queue};
use std::collections::{BTreeMap, HashMap};

pub struct Synced {
    pub steps: Vec<Step>,
    pub instrs: Vec<Instr>,
}

pub fn pass(c: &mut Compilation) -> Result<(), CompileError> {
    let steps = c.steps.take().expect("pass order: schedule must run first");
    super::encode::fits_imem(c.design, steps.len() + 1)?;
    c.synced = Some(run(steps, c.design.control.queue_depth));
    Ok(())
}

pub fn run(steps: Vec<Step>, queue_depth: u32) -> Synced {
    let precise_waits = 14usize.saturating_sub(queue_depth as usize);
    let n = steps.len();
    let mut wait = vec![0u32; n];
    let mut signal = vec![0u32; n];
    // satisfied[pair] = latest producer position already waited for.
    let mut satisfied: Vec<Option<usize>> = vec![None; 16];
    // Exact store-to-load waits left before the next wait for the latest store.
    let mut precise_left = precise_waits;
    let mut index = AccessIndex::default();
    // The latest store before the current instruction.
    let mut last_store = 0;
    let store_to_load = semaphore_index(Queue::Store, Queue::Load);
    for c in 0..n {
        let qc = steps[c].queue();
        let mut need: Vec<(usize, usize)> = Vec::new(); // (semaphore, producer)
        for (qp, latest) in Queue::ALL
            .into_iter()
            .zip(index.latest_conflicts(&steps[c]))
        {
            let Some(p) = latest.filter(|_| qp != qc) else {
                continue;
            };
            let sem =
                semaphore_index(qp, qc).unwrap_or_else(|| panic!("no semaphore {qp:?} -> {qc:?}"));
            need.push((sem, p));
        }
        index.record(c, &steps[c]);
        for (sem, p) in need {
            let exact = Some(sem) != store_to_load || precise_left > 0;
            // Not exact: the latest store before c, which is at or after p (p is a store).
            let p = if exact { p } else { last_store.max(p) };
            if satisfied[sem].is_some_and(|q| q >= p) {
                continue;
            }
            satisfied[sem] = Some(p);
            if Some(sem) == store_to_load {
                precise_left = if exact {
                    precise_left - 1
                } else {
                    precise_waits
                };
            }
            wait[c] |= 1 << sem;
            debug_assert_eq!(
                signal[p] & (1 << sem),
                0,
                "a producer signals once per semaphore"
            );
            signal[p] |= 1 << sem;
        }
        if qc == Queue::Store {
            last_store = c;
        }
    }
    let instrs = steps
        .iter()
        .enumerate()
        .map(|(i, s)| Instr {
            wait: wait[i],
            signal: signal[i],
            ..s.instr
        })
        .collect();
    Synced { steps, instrs }
}

/// For every address of every memory (each scratchpad and external memory), the latest
/// instruction of each queue that wrote it and that read it, kept as disjoint segments of
/// addresses accessed alike. It answers "the latest instruction of queue q that conflicts
/// with this one" by visiting only the segments the instruction touches, where comparing with
/// every earlier instruction made the pass quadratic in the program's length.
#[derive(Default)]
pub(crate) struct AccessIndex {
    spaces: HashMap<Space, BTreeMap<u64, Segment>>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Space {
    Spad(Buffer),
    Dram,
}

/// Addresses start..end (start is the map key) and who touched them last, per queue.
#[derive(Clone, Copy)]
struct Segment {
    end: u64,
    write: [Option<usize>; 4],
    read: [Option<usize>; 4],
}

fn space(r: &Res) -> (Space, u64, u64) {
    match *r {
        Res::Spad(b, lo, hi) => (Space::Spad(b), lo, hi),
        Res::Dram(lo, hi) => (Space::Dram, lo, hi),
    }
}

impl AccessIndex {
    /// Per queue (in `Queue::ALL` order), the latest recorded instruction that wrote what
    /// `s` reads or writes, or read what `s` writes.
    pub(crate) fn latest_conflicts(&self, s: &Step) -> [Option<usize>; 4] {
        let mut latest = [None; 4];
        let accesses = s.reads.iter().map(|r| (r, false));
        for (r, writes) in accesses.chain(s.writes.iter().map(|w| (w, true))) {
            let (sp, lo, hi) = space(r);
            let Some(map) = self.spaces.get(&sp) else {
                continue;
            };
            for seg in overlapping(map, lo, hi) {
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
        let q = Queue::ALL
            .iter()
            .position(|&q| q == s.queue())
            .expect("every queue is in Queue::ALL");
        let accesses = s.reads.iter().map(|r| (r, false));
        for (r, writes) in accesses.chain(s.writes.iter().map(|w| (w, true))) {
            let (sp, lo, hi) = space(r);
            if lo >= hi {
                continue;
            }
            let map = self.spaces.entry(sp).or_default();
            split_at(map, lo);
            split_at(map, hi);
            // Fill the gaps in lo..hi with untouched segments, then mark every segment.
            let mut at = lo;
            let starts: Vec<(u64, u64)> = map.range(lo..hi).map(|(&k, v)| (k, v.end)).collect();
            let mut gaps = Vec::new();
            for (start, end) in starts {
                if start > at {
                    gaps.push((at, start));
                }
                at = end;
            }
            if at < hi {
                gaps.push((at, hi));
            }
            for (start, end) in gaps {
                let untouched = Segment {
                    end,
                    write: [None; 4],
                    read: [None; 4],
                };
                map.insert(start, untouched);
            }
            for (_, seg) in map.range_mut(lo..hi) {
                if writes {
                    seg.write[q] = Some(c);
                } else {
                    seg.read[q] = Some(c);
                }
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

    /// Twenty stores, then twenty loads each reading what one store wrote: with a load
    /// queue of 8, the first 14 - 8 = 6 loads wait for their own store, the seventh for the
    /// last store (which covers the rest), so seven stores signal, not twenty.
    #[test]
    fn store_to_load_waits_are_exact_six_times_then_cover_the_rest() {
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
        assert_eq!(signals, vec![0, 1, 2, 3, 4, 5, 19]);
        let waits: Vec<usize> = (20..40)
            .filter(|&i| synced.instrs[i].wait & (1 << sem) != 0)
            .collect();
        assert_eq!(waits, vec![20, 21, 22, 23, 24, 25, 26]);
    }
}
