//! estimate: every layer's cycles for the report, from its instructions: the longest of the
//! array's streaming, the vector unit's rows and the memory port's beats, plus the fill of
//! the array and the memory latency.

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
    let layers = run(c.design, c.graph(), c.alloc(), steps);
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

/// Cycles of a window instruction: its weight rows (a sum; a maximum has none), one cycle
/// per input pixel, and the pipeline.
pub fn window_cycles(w: &crate::isa::Window) -> u64 {
    let weights = if w.max { 0 } else { w.kh * w.kw };
    weights + w.count0 * w.count1 + WINDOW_PIPE
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
    // Beats of the elements of an activation row, without the scale beat.
    let act_elems = alloc.act_beats - u64::from(u.scale_bits() > 0);
    let row_beats = |b: Buffer, prec: u64| match b {
        Buffer::Input | Buffer::Output => {
            act_elems + u64::from(u.datatype.get(prec as usize).input().block_scaled())
        }
        Buffer::Weight => alloc.weight_beats,
        Buffer::Accumulator => alloc.acc_beats,
    };
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
                Op::Vector(v) => vector += v.count + 7,
                Op::Load(t) | Op::Store(t) => {
                    let buf = match (&s.instr.op, s.writes.first()) {
                        (Op::Load(_), Some(Res::Spad(b, ..))) => *b,
                        _ => Buffer::Output,
                    };
                    beats += t.moved_rows() * row_beats(buf, t.prec);
                }
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
