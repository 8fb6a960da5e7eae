//! sync: semaphores from buffer dependencies. An instruction depends on every earlier
//! instruction of another queue whose accesses conflict with its own (read after write,
//! write after read, write after write). For each producer→consumer queue pair, a consumer
//! waits once for the latest producer it needs, unless an earlier instruction of its queue
//! already waited for that one or a later one (queues run in order); the producer signals.
//! Because the waits of a pair are in increasing producer order, the k-th wait consumes the
//! k-th signal, which is exactly the producer it needs. Dependencies only point backwards
//! in program order, so with in-order fetch the program cannot deadlock.
//!
//! Semaphore counters are 4 bits: at most 15 signals may be outstanding. A load that needs a
//! store (it reads what an earlier layer stored) waits for the latest store before it in
//! program order rather than the latest one it needs: signals and waits of that pair then
//! alternate in program order, so with queues of at most 14 entries (queue_depth) no more than 15 signals
//! can be outstanding. (Waiting for the exact store let a fast producer layer run up to one
//! signal per window load of the next layer ahead: 16 and more on tiled layers.)

use super::schedule::Step;
use crate::isa::{semaphore_index, Instr, Queue};

pub struct Synced {
    pub steps: Vec<Step>,
    pub instrs: Vec<Instr>,
}

pub fn run(steps: Vec<Step>) -> Synced {
    let n = steps.len();
    let mut wait = vec![0u64; n];
    let mut signal = vec![0u64; n];
    // satisfied[pair] = latest producer position already waited for.
    let mut satisfied: Vec<Option<usize>> = vec![None; 16];
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
            let p = if Some(sem) == store_to_load {
                (p..c)
                    .rev()
                    .find(|&q| steps[q].queue() == Queue::Store)
                    .expect("p is a store")
            } else {
                p
            };
            if satisfied[sem].is_some_and(|q| q >= p) {
                continue;
            }
            satisfied[sem] = Some(p);
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
        .map(|(i, s)| {
            s.instr
                .clone()
                .set("wait", wait[i])
                .and_then(|x| x.set("signal", signal[i]))
                .expect("masks fit")
        })
        .collect();
    Synced { steps, instrs }
}
