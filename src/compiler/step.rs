//! A step of a schedule: one instruction with the scratchpad rows and memory beats it reads
//! and writes. Steps are what the schedule emits, what the sync pass turns into semaphores
//! and what the cost model times; they are defined here, below all three.

use crate::isa::{Buffer, Instr, Queue};

/// A range of rows of one scratchpad, or of beats of external memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Res {
    Spad(Buffer, u64, u64),
    Dram(u64, u64),
}

impl Res {
    /// Whether the two accesses share an address (an empty range shares none).
    pub fn overlaps(&self, o: &Res) -> bool {
        let shared = |s0: &u64, e0: &u64, s1: &u64, e1: &u64| s0.max(s1) < e0.min(e1);
        match (self, o) {
            (Res::Spad(a, s0, e0), Res::Spad(b, s1, e1)) => a == b && shared(s0, e0, s1, e1),
            (Res::Dram(s0, e0), Res::Dram(s1, e1)) => shared(s0, e0, s1, e1),
            _ => false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Step {
    pub instr: Instr,
    pub reads: Vec<Res>,
    pub writes: Vec<Res>,
    /// Index of the layer it belongs to.
    pub node: usize,
}

impl Step {
    pub fn queue(&self) -> Queue {
        self.instr.queue().expect("no end in the schedule")
    }

    /// Whether the two steps touch a common address with at least one of them writing it
    /// (so their order in the program decides what each sees).
    pub fn conflicts(&self, o: &Step) -> bool {
        let hits = |xs: &[Res], ys: &[Res]| xs.iter().any(|x| ys.iter().any(|y| x.overlaps(y)));
        hits(&self.writes, &o.reads)
            || hits(&self.writes, &o.writes)
            || hits(&self.reads, &o.writes)
    }
}
