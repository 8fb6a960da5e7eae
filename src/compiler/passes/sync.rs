//! sync: semaphores from buffer dependencies. An instruction depends on every earlier
//! instruction of another queue whose accesses conflict with its own (read after write,
//! write after read, write after write). For each producer→consumer queue pair, a consumer
//! waits once for the latest producer it needs, unless an earlier instruction of its queue
//! already waited for that one or a later one (queues run in order); the producer signals.
//! Because the waits of a pair are in increasing producer order, the k-th wait consumes the
//! k-th signal, which is exactly the producer it needs. Dependencies only point backwards
//! in program order, so with in-order fetch the program cannot deadlock.
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

use super::schedule::Step;
use crate::compiler::{Compilation, CompileError};
use crate::isa::{semaphore_index, Instr, Queue};

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
    for c in 0..n {
        let qc = steps[c].queue();
        let mut need: Vec<(usize, usize)> = Vec::new(); // (semaphore, producer)
        for p in (0..c).rev() {
            let qp = steps[p].queue();
            if qp == qc {
                continue;
            }
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
            if !conflict {
                continue;
            }
            let sem =
                semaphore_index(qp, qc).unwrap_or_else(|| panic!("no semaphore {qp:?} -> {qc:?}"));
            if !need.iter().any(|(s, _)| *s == sem) {
                need.push((sem, p)); // scanning backwards: the first found is the latest
            }
        }
        let store_to_load = semaphore_index(Queue::Store, Queue::Load);
        for (sem, p) in need {
            let exact = Some(sem) != store_to_load || precise_left > 0;
            let p = if exact {
                p
            } else {
                (p..c)
                    .rev()
                    .find(|&q| steps[q].queue() == Queue::Store)
                    .expect("p is a store")
            };
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
