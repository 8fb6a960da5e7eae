//! estimate: every layer's cycles for the report. On one engine, from a timeline of the
//! finished program (`timeline`): the four queues run in order, waits take the signals the
//! sync pass gave them, and loads and stores share the memory port. On an elastic Design,
//! per stage, from each layer's instructions (`run`): the longest of the array's streaming,
//! the vector unit's rows and the memory port's beats, plus the fill of the array and the
//! memory latency.

use super::schedule::{Res, Step};
use crate::compiler::{Compilation, CompileError, LayerReport};
use crate::design::Design;
use crate::isa::{Buffer, Op};

pub fn pass(c: &mut Compilation) -> Result<(), CompileError> {
    let steps = &c
        .synced
        .as_ref()
        .expect("pass order: sync must run first")
        .steps;
    let mut layers = run(c.design, c.graph(), c.alloc(), steps);
    let instrs = &c
        .program
        .as_ref()
        .expect("pass order: encode must run first")
        .instrs;
    // One engine: each layer's cycles from the program's timeline (the per-layer maximum of
    // `run` misses the hand-overs between the queues inside a layer).
    for (l, cycles) in
        layers
            .iter_mut()
            .zip(timeline(c.design, c.graph(), c.alloc(), steps, instrs))
    {
        l.estimated_cycles = cycles;
    }
    let program = c
        .program
        .as_mut()
        .expect("pass order: encode must run first");
    program.macs = layers.iter().map(|l| l.macs).sum();
    program.macs_run = program.macs;
    program.layers = layers;
    Ok(())
}

/// Input rows a matmul must stream to hide the preload of the next weights: the array fills
/// the idle bank on the activations' wavefront as soon as the matmul starts, one row per
/// cycle over cpf cycles (read in the cpf cycles after the start, arriving a cycle later),
/// and the matmul finishes with its last input row only once the last weight row arrived.
pub fn preload_rows(cpf: u32) -> u64 {
    u64::from(cpf) + 2
}

/// Cycles of a matmul streaming `rows` input rows on an array of `cpf` rows: its rows (the
/// next matmul starts in the cycle of its last read, so the array takes a row every
/// cycle), or the preload of the next weights if it is longer (`preload_rows`). (The
/// tiler's cost model too.)
pub fn matmul_cycles(rows: u64, cpf: u32, preload: bool) -> u64 {
    if rows == 0 {
        return 0;
    }
    let refill = if preload { preload_rows(cpf) } else { 0 };
    rows.max(refill)
}

/// Cycles the window unit takes between an instruction's start and its last accumulator
/// write (when the next may start), beyond reading its weights and its input pixels
/// (`hwgen_window_unit`).
pub const WINDOW_PIPE: u64 = 4;

/// Cycles from a vector instruction's start to its last output row written, beyond one per
/// row: issue, the accumulator read, the lanes' pipeline (`hwgen_vector_unit`'s
/// LANE_LATENCY) and the write.
pub const VECTOR_PIPE: u64 = 7;

/// Cycles of a window instruction: its weight rows (a sum; a maximum has none), one cycle
/// per input pixel, and the pipeline.
pub fn window_cycles(w: &crate::isa::Window) -> u64 {
    let weights = if w.max { 0 } else { w.kh * w.kw };
    weights + w.count0 * w.count1 + WINDOW_PIPE
}

/// Memory beats a load or store (step `s`, transfer `t`) moves: its rows outside the
/// padding, each of the beats of a row of the scratchpad it fills or empties (an activation
/// row's elements, and its scale beat when the precision is block-scaled).
fn transfer_beats(
    u: &crate::design::Unit,
    alloc: &super::allocate::Alloc,
    s: &Step,
    t: &crate::isa::Transfer,
) -> u64 {
    let buf = match (&s.instr.op, s.writes.first()) {
        (Op::Load(_), Some(Res::Spad(b, ..))) => *b,
        _ => Buffer::Output,
    };
    // Beats of the elements of an activation row, without the scale beat.
    let act_elems = alloc.act_beats - u64::from(u.scale_bits() > 0);
    let row = match buf {
        Buffer::Input | Buffer::Output => {
            act_elems + u64::from(u.datatype.get(t.prec as usize).input().block_scaled())
        }
        Buffer::Weight => alloc.weight_beats,
        Buffer::Accumulator => alloc.acc_beats,
    };
    t.moved_rows() * row
}

pub fn run(
    design: &Design,
    g: &super::legalize::Graph,
    alloc: &super::allocate::Alloc,
    steps: &[Step],
) -> Vec<LayerReport> {
    let u = &g.unit;
    let mem_w = design.memory.data_width_bits;
    let bytes_per_beat = u64::from(mem_w / 8);
    let bw = u64::from(design.memory.bytes_per_cycle).max(1);
    let fill = u64::from(u.cpf + u.kpf) + u64::from(design.memory.latency_cycles);
    let mut layers = Vec::new();
    // A step's index is its instruction's program index (encode appends only the end).
    let mut by_node: Vec<Vec<(usize, &Step)>> = vec![Vec::new(); g.nodes.len()];
    for (pc, s) in steps.iter().enumerate() {
        if let Some(v) = by_node.get_mut(s.node) {
            v.push((pc, s));
        }
    }
    for (ni, n) in g.nodes.iter().enumerate() {
        let (mut compute, mut vector, mut beats, mut count) = (0u64, 0u64, 0u64, 0usize);
        for &(_, s) in &by_node[ni] {
            count += 1;
            match &s.instr.op {
                Op::Matmul(m) => {
                    compute += matmul_cycles(m.count0 * m.count1, u.cpf, m.preload);
                }
                Op::Window(w) => compute += window_cycles(w),
                Op::Vector(v) => vector += v.count + VECTOR_PIPE,
                Op::Load(t) | Op::Store(t) => beats += transfer_beats(u, alloc, s, t),
                Op::End => {}
            }
        }
        let memory = beats * bytes_per_beat / bw;
        layers.push(LayerReport {
            name: n.name.clone(),
            op: n.op.name().to_string(),
            datatype: u.datatype.get(n.prec).name(),
            macs: n.macs,
            instructions: count,
            beats,
            estimated_cycles: compute.max(memory).max(vector) + fill,
            pcs: by_node[ni].iter().map(|&(pc, _)| pc).collect(),
        });
    }
    layers
}

/// Each layer's cycles from a timeline of the synced program: every queue runs its
/// instructions in order, an instruction starts once its queue is free and the k-th wait on
/// a semaphore has the k-th signal, and load and store share the memory port first come
/// first served (`Port`). A layer ends when its last instruction does; its cycles run from the previous
/// layer's end (as `hwgen sim --layers` splits the RTL run).
pub fn timeline(
    design: &Design,
    g: &super::legalize::Graph,
    alloc: &super::allocate::Alloc,
    steps: &[Step],
    instrs: &[crate::isa::Instr],
) -> Vec<u64> {
    use crate::isa::SEMAPHORES;
    let u = &g.unit;
    let bytes_per_beat = u64::from(design.memory.data_width_bits / 8);
    let bw = u64::from(design.memory.bytes_per_cycle).max(1);
    let latency = u64::from(design.memory.latency_cycles);
    // From a matmul's last row read to its result written: into the array, through it
    // (cpf + kpf - 1) and the write-back (`hwgen_compute_unit`).
    let array = u64::from(u.cpf + u.kpf) + 1;
    let mut free = [0u64; 4];
    let mut port = Port::default();
    let mut signals: Vec<Vec<u64>> = vec![Vec::new(); SEMAPHORES.len()];
    let mut taken = vec![0usize; SEMAPHORES.len()];
    let mut ends = vec![0u64; g.nodes.len()];
    for (s, i) in steps.iter().zip(instrs) {
        let q = s.queue().index();
        let mut start = free[q];
        for (k, list) in signals.iter().enumerate() {
            if i.wait & (1 << k) != 0 {
                // A program the sync pass made never waits for a signal not yet given.
                start = start.max(list.get(taken[k]).copied().unwrap_or(0));
                taken[k] += 1;
            }
        }
        // (cycles the queue is busy, cycles until the semaphores are released)
        let (busy, done) = match &s.instr.op {
            Op::Matmul(m) => {
                // A matmul without rows still takes a cycle, or its preload's.
                let c = matmul_cycles((m.count0 * m.count1).max(1), u.cpf, m.preload);
                (c, c + array)
            }
            Op::Window(w) => (window_cycles(w), window_cycles(w)),
            Op::Vector(v) => (v.count + 1, v.count + VECTOR_PIPE),
            Op::Load(t) | Op::Store(t) => {
                let beats = transfer_beats(u, alloc, s, t);
                let pad = t.count0 * t.count1 - t.moved_rows();
                let c = (beats * bytes_per_beat).div_ceil(bw) + pad;
                let (first, end) = port.place(start, c);
                start = first;
                (end - first, end - first + latency)
            }
            Op::End => (0, 0),
        };
        free[q] = start + busy;
        for (k, list) in signals.iter_mut().enumerate() {
            if i.signal & (1 << k) != 0 {
                list.push(start + done);
            }
        }
        ends[s.node] = ends[s.node].max(start + done);
    }
    let mut prev = 0;
    ends.iter()
        .map(|&e| {
            let c = e.saturating_sub(prev);
            prev = prev.max(e);
            c
        })
        .collect()
}

/// The memory port's busy cycles, as disjoint intervals (start -> end): the arbiter serves
/// load and store as their requests come, so a transfer takes the free cycles from the time
/// it is ready on.
#[derive(Default)]
struct Port {
    busy: std::collections::BTreeMap<u64, u64>,
}

impl Port {
    /// Takes `c` free cycles from `ready` on; returns the first and one past the last.
    fn place(&mut self, ready: u64, c: u64) -> (u64, u64) {
        if c == 0 {
            return (ready, ready);
        }
        let mut t = ready;
        // An interval that began before `ready` and reaches past it.
        if let Some((_, &e)) = self.busy.range(..=t).next_back() {
            t = t.max(e);
        }
        let mut first = None;
        let mut left = c;
        let mut taken = Vec::new();
        for (&s, &e) in self.busy.range(t..) {
            if s > t {
                let n = left.min(s - t);
                first.get_or_insert(t);
                taken.push((t, t + n));
                left -= n;
                t += n;
                if left == 0 {
                    break;
                }
            }
            t = t.max(e);
        }
        if left > 0 {
            first.get_or_insert(t);
            taken.push((t, t + left));
            t += left;
        }
        for (s, e) in taken {
            self.insert(s, e);
        }
        (first.unwrap_or(ready), t)
    }

    /// Marks s..e busy, merging with the intervals it touches.
    fn insert(&mut self, mut s: u64, mut e: u64) {
        if let Some((&ps, &pe)) = self.busy.range(..=s).next_back() {
            if pe >= s {
                s = ps;
                e = e.max(pe);
                self.busy.remove(&ps);
            }
        }
        while let Some((&ns, &ne)) = self.busy.range(s..).next() {
            if ns > e {
                break;
            }
            e = e.max(ne);
            self.busy.remove(&ns);
        }
        self.busy.insert(s, e);
    }
}

#[cfg(test)]
mod tests {
    use super::Port;

    /// Transfers take the port's free cycles from when they are ready, by hand: one of 10
    /// ready at 10 takes 10..20; one of 8 ready at 5 takes 5..10 and 20..23; one of 4 ready
    /// at 0 takes 0..4; one of 3 ready at 12 waits for 23..26; one of 2 ready at 4 takes the
    /// free cycle 4 and then 26, ending at 27; the port is then busy over 0..27.
    #[test]
    fn the_port_serves_transfers_in_its_free_cycles() {
        let mut p = Port::default();
        assert_eq!(p.place(10, 10), (10, 20));
        assert_eq!(p.place(5, 8), (5, 23));
        assert_eq!(p.place(0, 4), (0, 4));
        assert_eq!(p.place(12, 3), (23, 26));
        assert_eq!(p.place(4, 2), (4, 27));
        assert_eq!(p.place(30, 0), (30, 30));
        let busy: Vec<(u64, u64)> = p.busy.iter().map(|(&s, &e)| (s, e)).collect();
        assert_eq!(busy, vec![(0, 27)]);
    }
}
