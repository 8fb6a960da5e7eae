//! The cost model: an analysis, not a pass. What an instruction takes on a unit (a
//! matmul's rows or the preload it hides, a window instruction's pixels, a vector
//! instruction's rows and pipeline, a transfer's beats), which the tiler and the scheduler
//! ask when they choose tiles and move loads; and a timeline of a synced program
//! (`timeline`): the four queues run in order, waits take the signals the sync pass gave
//! them, instructions are issued once the prefetch brought them, loads, stores and the
//! prefetch share the memory port, and the vector unit's accumulator reads wait while the
//! array reads the same bank. An elastic Design's rounds come from a timeline of every
//! engine at once (`system`: the ports they share, the tokens their links hold). The
//! pipeline times each replica's schedule with it for the reports; the estimate of an
//! elastic run and the design-space search query it through the pipeline.

mod port;
mod system;
pub(crate) mod timeline;

use crate::compiler::passes::allocate::Alloc;
use crate::compiler::passes::legalize::Graph;
use crate::compiler::step::{Res, Step};
use crate::compiler::LayerReport;
use crate::design::{Design, Unit};
use crate::isa::{Buffer, Op};
pub use system::Streams;
use timeline::{AccUse, Cost, Timeline};

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

/// Cycles from a row-unit instruction's accumulator read of a row to that row's output
/// written and its statistics combined (`hwgen_row_unit`'s PIPE: the lane's 19 stages, the
/// reduction tree's log2(kpf) levels, the combine), and a finish's pipeline (FINISH_LAT).
pub fn rows_pipe(kpf: u32) -> u64 {
    20 + u64::from(kpf.max(1).ilog2())
}
pub const ROWS_FINISH: u64 = 54;

/// Cycles a `rows` instruction keeps the vector queue busy (`hwgen_row_unit`, which
/// returns to idle only when its last result is written): the issue, the constants (and
/// spline table) read, every tile's parameter rows and pixel rows one per cycle with a
/// cycle to turn between them, the pipeline's drain, and with a finish one cycle per pixel
/// and the finish pipeline's drain.
pub fn rows_cycles(r: &crate::isa::Rows, kpf: u32) -> u64 {
    let setup = crate::interp::const_rows(kpf as usize)
        + match r.func {
            2 => crate::interp::table_rows(kpf as usize),
            _ => 0,
        };
    let params = crate::interp::param_rows(r);
    let tiles = r.count1;
    let finish = match r.finish {
        0 => 0,
        _ => r.count0 + 1 + ROWS_FINISH,
    };
    1 + setup + 1 + tiles * (params + 1 + r.count0 + 1) + rows_pipe(kpf) + finish
}

/// Cycles a `per_channel` vector instruction adds before its rows: the scale row's read and
/// its data (`hwgen_vector_unit`'s PHASE_SCALE and PHASE_SCALE_D).
pub const SCALE_READ: u64 = 2;

/// Cycles a vector instruction takes before its rows besides its pipeline.
fn vector_setup(v: &crate::isa::Vector) -> u64 {
    if v.per_channel {
        SCALE_READ
    } else {
        0
    }
}

/// Cycles from the array's last busy cycle (its last input row read) to its last
/// accumulator write: the row enters the array the cycle after, leaves it cpf + kpf - 1
/// cycles later and is written the cycle after (`hwgen_compute_unit`, `hwgen_core`).
pub fn array_last_write(cpf: u32, kpf: u32) -> u64 {
    u64::from(cpf + kpf) + 1
}

/// `hwgen_core`'s ARRAY_DRAIN: the count its window/array interlock starts from in the
/// cycle after the array's last busy cycle (one more than `array_last_write`).
pub fn array_drain(cpf: u32, kpf: u32) -> u64 {
    array_last_write(cpf, kpf) + 1
}

/// Cycles from a window instruction's start to its first accumulator access
/// (`hwgen_window_unit`'s lead_o): its weights (none for a maximum), the pixels before its
/// first kernel window completes, and three pipeline cycles.
pub fn window_lead(w: &crate::isa::Window) -> u64 {
    let weights = if w.max { 0 } else { w.kh * w.kw };
    weights + w.kh.saturating_sub(1) * w.count0 + w.kw + 3
}

/// Cycles after the array's last busy cycle from which a window instruction may start:
/// `hwgen_core` starts it once the drain count (ARRAY_DRAIN in the cycle after the last
/// busy one, counting down) is below its lead.
pub fn window_after_array(w: &crate::isa::Window, cpf: u32, kpf: u32) -> u64 {
    (array_drain(cpf, kpf) + 1).saturating_sub(window_lead(w))
}

/// Cycles of a window instruction: its weight rows (a sum; a maximum has none), one cycle
/// per input pixel, and the pipeline.
pub fn window_cycles(w: &crate::isa::Window) -> u64 {
    let weights = if w.max { 0 } else { w.kh * w.kw };
    weights + w.count0 * w.count1 + WINDOW_PIPE
}

/// Memory beats of one row of `buf` in precision `prec`: an activation row's elements, and
/// its scale beat when the precision is block-scaled; a weight or accumulator row's beats.
pub fn row_beats(u: &crate::design::Unit, alloc: &Alloc, buf: Buffer, prec: usize) -> u64 {
    // Beats of the elements of an activation row, without the scale beat.
    let act_elems = alloc.act_beats - u64::from(u.scale_bits() > 0);
    match buf {
        Buffer::Input | Buffer::Output => {
            act_elems + u64::from(u.datatype.get(prec).input().block_scaled())
        }
        Buffer::Weight => alloc.weight_beats,
        Buffer::Accumulator => alloc.acc_beats,
    }
}

/// Memory beats a load or store step moves (0 for other steps): its rows outside the
/// padding, each the beats of a row of the scratchpad it fills or empties (`row_beats`).
pub fn step_beats(u: &crate::design::Unit, alloc: &Alloc, s: &Step) -> u64 {
    let (Op::Load(t) | Op::Store(t)) = &s.instr.op else {
        return 0;
    };
    let buf = match (&s.instr.op, s.writes.first()) {
        (Op::Load(_), Some(Res::Spad(b, ..))) => *b,
        _ => Buffer::Output,
    };
    let per_row = match t.row_beats {
        0 => row_beats(u, alloc, buf, t.prec as usize),
        short => short,
    };
    t.moved_rows() * per_row
}

/// Beats a step moves through the memory port: `step_beats`, but none for a transfer with
/// the on-chip hand-off buffers.
pub fn port_beats(u: &crate::design::Unit, alloc: &Alloc, s: &Step) -> u64 {
    match &s.instr.op {
        Op::Load(t) | Op::Store(t) if t.handoff => 0,
        _ => step_beats(u, alloc, s),
    }
}

/// Beats a step moves through the on-chip hand-off buffers.
pub fn handoff_beats(u: &crate::design::Unit, alloc: &Alloc, s: &Step) -> u64 {
    match &s.instr.op {
        Op::Load(t) | Op::Store(t) if t.handoff => step_beats(u, alloc, s),
        _ => 0,
    }
}

/// Each layer's report for a program given in parts (an elastic engine's row bands), in
/// order: its instructions and memory beats in all of them, their program counters, and
/// `cycles[i]` as layer i's estimated cycles (from a timeline).
pub fn layer_reports(
    g: &Graph,
    alloc: &Alloc,
    parts: &[&[Step]],
    cycles: &[u64],
) -> Vec<LayerReport> {
    let u = &g.unit;
    // A step's index is its instruction's program index (encode appends only the end).
    let mut by_node: Vec<Vec<(usize, &Step)>> = vec![Vec::new(); g.nodes.len()];
    for (pc, s) in parts.iter().flat_map(|p| p.iter()).enumerate() {
        if let Some(v) = by_node.get_mut(s.node) {
            v.push((pc, s));
        }
    }
    g.nodes
        .iter()
        .zip(by_node)
        .zip(cycles)
        .map(|((n, steps), &cycles)| LayerReport {
            name: n.name.clone(),
            op: n.op.to_string(),
            datatype: u.datatype.get(n.prec).name(),
            macs: n.macs,
            instructions: steps.len(),
            beats: steps.iter().map(|&(_, s)| port_beats(u, alloc, s)).sum(),
            handoff_beats: steps.iter().map(|&(_, s)| handoff_beats(u, alloc, s)).sum(),
            estimated_cycles: cycles,
            pcs: steps.iter().map(|&(pc, _)| pc).collect(),
        })
        .collect()
}

/// Each layer's cycles from a timeline of the synced program: every queue runs its
/// instructions in order, an instruction starts once its queue is free and the k-th wait on
/// a semaphore has the k-th signal, and loads and stores share the memory port round robin
/// (`Port`), as `hwgen_mem_arbiter` grants it. A layer ends when its last instruction does;
/// its cycles run from the previous layer's end (as `hwgen sim --layers` splits the RTL run).
pub fn timeline(
    design: &Design,
    g: &Graph,
    alloc: &Alloc,
    steps: &[Step],
    instrs: &[crate::isa::Instr],
) -> Vec<u64> {
    let done = engine(design, &g.unit, alloc, steps, instrs).run_to_fixpoint();
    let mut ends = vec![0u64; g.nodes.len()];
    for (s, d) in steps.iter().zip(done) {
        ends[s.node] = ends[s.node].max(d);
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

/// One engine's program for [`system`]: its unit, the placement it sees, its synced steps
/// and their instructions, and its memory port.
pub struct EngineProgram<'a> {
    pub unit: &'a Unit,
    pub alloc: &'a Alloc,
    pub steps: &'a [Step],
    pub instrs: &'a [crate::isa::Instr],
    pub port: usize,
}

/// Every engine's last cycle on a timeline of all of them at once: each as [`timeline`]
/// runs one, the engines on one port sharing it round robin (each engine's load and store
/// units in turn within its share), and hand-off tokens taken once sent, sent once every
/// link they go down has room (`streams`).
pub fn system(design: &Design, engines: &[EngineProgram], streams: Streams) -> Vec<u64> {
    let timelines = engines
        .iter()
        .map(|p| engine(design, p.unit, p.alloc, p.steps, p.instrs))
        .collect();
    let ports = engines.iter().map(|p| p.port).collect();
    system::System::new(timelines, ports, streams)
        .run_to_fixpoint()
        .into_iter()
        .map(|done| done.into_iter().max().unwrap_or(0))
        .collect()
}

/// The timeline of one engine's synced program.
fn engine<'a>(
    design: &Design,
    u: &Unit,
    alloc: &Alloc,
    steps: &[Step],
    instrs: &'a [crate::isa::Instr],
) -> Timeline<'a> {
    let bytes_per_beat = u64::from(design.memory.data_width_bits / 8);
    let bw = u64::from(design.memory.bytes_per_cycle).max(1);
    // From a matmul's last row read to its result written.
    let array = array_last_write(u.cpf, u.kpf);
    let costs = steps
        .iter()
        .map(|s| match &s.instr.op {
            Op::Matmul(m) => {
                // A matmul without rows still takes a cycle, or its preload's.
                let c = matmul_cycles((m.count0 * m.count1).max(1), u.cpf, m.preload);
                Cost::fixed(c, c + array)
            }
            Op::Window(w) => Cost::Fixed {
                busy: window_cycles(w),
                done: window_cycles(w),
                input_rows: 0,
                after_array: window_after_array(w, u.cpf, u.kpf),
            },
            Op::Rows(r) => Cost::Fixed {
                busy: rows_cycles(r, u.kpf),
                done: rows_cycles(r, u.kpf),
                input_rows: if r.to_input && r.write {
                    r.count0 * r.count1
                } else {
                    0
                },
                after_array: 0,
            },
            Op::Vector(v) => Cost::Fixed {
                busy: v.count + 1 + vector_setup(v),
                done: v.count + VECTOR_PIPE + vector_setup(v),
                input_rows: if v.to_input { v.count } else { 0 },
                after_array: 0,
            },
            // The hand-off buffers take a beat a cycle, and a cycle to read.
            Op::Load(t) | Op::Store(t) if t.handoff => {
                let pad = t.count0 * t.count1 - t.moved_rows();
                Cost::Local {
                    cycles: step_beats(u, alloc, s) + pad + 1,
                }
            }
            // A token moves a beat a cycle through its link.
            Op::Load(t) | Op::Store(t) if t.stream => Cost::Stream {
                send: matches!(s.instr.op, Op::Store(_)),
                beats: step_beats(u, alloc, s),
            },
            // The port's cycles for the beats, and a cycle per padding row (the load unit
            // skips one per cycle without a request).
            Op::Load(t) | Op::Store(t) => {
                let beats = step_beats(u, alloc, s);
                let pad = t.count0 * t.count1 - t.moved_rows();
                Cost::Transfer {
                    work: (beats * bytes_per_beat).div_ceil(bw),
                    pad,
                    into_input: matches!(s.writes.first(), Some(Res::Spad(Buffer::Input, ..))),
                }
            }
            Op::End => Cost::fixed(0, 0),
        })
        .collect();
    let queues: Vec<usize> = steps.iter().map(|s| s.queue().index()).collect();
    let acc = instrs.iter().map(|i| AccUse::of(u, i)).collect();
    let latency = u64::from(design.memory.latency_cycles);
    let fifo = u64::from(crate::rtl::rsp_depth(design));
    let depth = design.control.queue_depth as usize;
    let ibeats = crate::isa::instr_beats(design.memory.data_width_bits);
    Timeline::new(instrs, queues, costs, latency, fifo, depth, acc).with_fetch(
        (ibeats * bytes_per_beat).div_ceil(bw),
        design.control.imem_depth as usize,
    )
}
