//! Elastic compilation (F-CAD's construction step): a model onto every unit of an elastic
//! Design, one program per engine.
//!
//! - **Stages.** The layers, in order, are cut into one contiguous stage per unit of the
//!   branch (the phases of a transposed convolution stay together), minimising the largest
//!   stage's cost (ideal cycles: MACs over the unit's PEs and replicas, or one cycle per
//!   output row of a channel tile for layers without MACs).
//! - **Replicas.** The `h` engines of a unit split the branch's output by height into `h`
//!   bands; replica r of every stage computes the rows that band needs, back through the
//!   kernels' windows (halo rows are computed by both neighbours, so replica chain r never
//!   waits for another chain: the overlapping rows are bit-identical writes).
//! - **Hand-offs.** Tensors move through external memory; every activation keeps its own
//!   region (no reuse: stages run concurrently) and every frame its own copy of them.
//!   After the last store of a frame, a stage sends one row down its stream link as a
//!   token; the next stage's replica loads that token before the frame's first load. The
//!   store queue is in order and a beat leaves only after the previous write was accepted,
//!   so the token follows the frame's data (for a memory that commits a write when it
//!   accepts it, as the testbench's does), and the FIFO's depth bounds how many frames a
//!   stage runs ahead.
//! - **Frames.** The branch's `batch` frames run back to back; each engine's program is
//!   its stage's share of every frame, so stage s works on frame f + 1 while stage s + 1
//!   works on frame f.

use super::passes::allocate::{self, window};
use super::passes::legalize::{self, Graph, Node};
use super::passes::schedule::{self, Res, Step};
use super::passes::{encode, estimate, fuse, sync, tile};
use super::{CompileError, LayerReport, Program, TensorLayout};
use crate::design::{Design, Unit};
use crate::interp::Link;
use crate::isa::{Buffer, Instr, Op as IsaOp, Transfer};
use crate::model::{Model, Op, Tensor};
use std::ops::Range;

/// One pipeline stage: the layers a unit runs and the rows each replica computes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StageReport {
    pub branch: String,
    pub unit: String,
    /// Engine indices of the unit's replicas.
    pub engines: Vec<usize>,
    pub layers: Vec<String>,
    /// Per replica, per layer: the output rows it computes (first, end).
    pub rows: Vec<Vec<(String, usize, usize)>>,
    /// Estimated cycles of one frame on the slowest replica.
    pub estimated_cycles: u64,
}

/// The multi-engine part of an elastic program.
#[derive(Debug, Clone)]
pub struct Elastic {
    /// Every engine's program, as `Design::cores` orders the engines.
    pub programs: Vec<Vec<Instr>>,
    pub links: Vec<Link>,
    pub stages: Vec<StageReport>,
    /// The output of every frame (frame 0's is `Program::output`).
    pub outputs: Vec<TensorLayout>,
}

/// Whether `design` is compiled per engine: more than one engine.
pub fn is_elastic(design: &Design) -> bool {
    design.cores().len() > 1
}

/// The input of frame `f`: the model's input rolled by `f` pixels (frame 0 is the input
/// itself), so that every frame computes something different.
pub fn frame_input(model: &Model, f: usize) -> Tensor {
    let x = &model.input;
    let pixels = x.h * x.w;
    let mut y = x.clone();
    let shift = f % pixels.max(1);
    y.data.rotate_right(shift * x.c);
    let per = y.scales.len() / pixels.max(1);
    y.scales.rotate_right(shift * per);
    y
}

/// The stream links of a Design: replica r of each unit feeds replica r of the next unit
/// of its branch (as the RTL's top level wires them).
pub fn links(design: &Design) -> Vec<Link> {
    let cores = design.cores();
    let index = |b: &str, u: &str, r: u32| {
        cores
            .iter()
            .position(|(cb, cu, cr)| cb.name == b && cu.name == u && *cr == r)
            .expect("engine exists")
    };
    let mut out = Vec::new();
    for b in &design.branches {
        for pair in b.units.windows(2) {
            for r in 0..pair[0].h.min(pair[1].h) {
                out.push(Link {
                    from: index(&b.name, &pair[0].name, r),
                    to: index(&b.name, &pair[1].name, r),
                    depth: b.fifo_depth as usize,
                });
            }
        }
    }
    out
}

/// Compile `model` for every engine of the elastic `design`, for the first branch's
/// `batch` frames.
pub fn compile(design: &Design, model: &Model) -> Result<Program, CompileError> {
    compile_frames(design, model, design.branches[0].batch.max(1) as usize)
}

/// As [`compile`], for `frames` frames.
pub fn compile_frames(
    design: &Design,
    model: &Model,
    frames: usize,
) -> Result<Program, CompileError> {
    let frames = frames.max(1);
    let g = fuse::run(legalize::run(design, model)?);
    let branch = &design.branches[0];
    let units = &branch.units;
    for u in units {
        check_unit(&g.unit, u)?;
    }
    let alloc = allocate::run_with(design, &g, false);
    let groups = layer_groups(&g);
    let cost = |u: &Unit, grp: &Range<usize>| -> u64 {
        grp.clone().map(|i| node_cost(&g, &g.nodes[i], u)).sum()
    };
    let stages = partition(&groups, units, cost);
    let h = units[0].h as usize;
    let chains: Vec<Vec<Range<usize>>> = (0..h).map(|r| chain_rows(&g, r, h)).collect();
    let act_size = alloc.tensors[&g.input].size_beats() + (alloc.end - alloc.activations);
    let end = alloc.end + (frames as u64 - 1) * act_size;
    let addressable = 1u64 << crate::isa::EXT_ADDR_BITS;
    if end > addressable {
        return Err(CompileError::new(
            None,
            format!("{frames} frames of the model's tensors, with the weights, need {end} beats of external memory; the ISA's addresses reach {addressable}"),
            "lower the branch's batch, or compile a smaller model",
        ));
    }
    let reloc = Reloc {
        input_end: alloc.tensors[&g.input].size_beats(),
        activations: alloc.activations,
        end: alloc.end,
        act_size,
    };
    let cores = design.cores();
    let links = links(design);
    let mut programs = vec![vec![Instr::end()]; cores.len()];
    let mut reports = Vec::new();
    let mut layer_cycles = vec![0u64; g.nodes.len()];
    for (s, (ui, grp)) in stages.iter().enumerate() {
        let unit = &units[*ui];
        let gs = Graph {
            unit: unit.clone(),
            ..g.clone()
        };
        let tiling = tile::run(design, &gs, &alloc).map_err(|e| in_unit(e, &branch.name, unit))?;
        let mut report = StageReport {
            branch: branch.name.clone(),
            unit: unit.name.clone(),
            engines: Vec::new(),
            layers: grp.clone().map(|i| g.nodes[i].name.clone()).collect(),
            rows: Vec::new(),
            estimated_cycles: 0,
        };
        for (r, chain) in chains.iter().enumerate() {
            let e = cores
                .iter()
                .position(|(b, u, cr)| {
                    b.name == branch.name && u.name == unit.name && *cr as usize == r
                })
                .expect("engine exists");
            let rows: Vec<Range<usize>> = (0..g.nodes.len())
                .map(|i| {
                    if grp.contains(&i) {
                        chain[i].clone()
                    } else {
                        0..0
                    }
                })
                .collect();
            let steps = schedule::run_rows(design, &gs, &alloc, &tiling, &rows);
            let est = estimate::run(design, &gs, &alloc, &steps);
            for (i, l) in est.iter().enumerate() {
                layer_cycles[i] = layer_cycles[i].max(l.estimated_cycles);
            }
            let cycles: u64 = est.iter().map(|l| l.estimated_cycles).sum();
            report.estimated_cycles = report.estimated_cycles.max(cycles);
            report.engines.push(e);
            report.rows.push(
                grp.clone()
                    .filter(|&i| !rows[i].is_empty())
                    .map(|i| (g.nodes[i].name.clone(), rows[i].start, rows[i].end))
                    .collect(),
            );
            let first = grp.start;
            let mut all = Vec::new();
            for f in 0..frames {
                if s > 0 {
                    all.push(token(first, false));
                }
                all.extend(steps.iter().map(|st| reloc.step(st, f)));
                if s + 1 < stages.len() {
                    all.push(token(first, true));
                }
            }
            encode::fits_imem(design, all.len() + 1).map_err(|e| in_unit(e, &branch.name, unit))?;
            let synced = sync::run(all, design.control.queue_depth);
            programs[e] = encode::run(design, synced.instrs)?;
        }
        reports.push(report);
    }
    token_beats(design, &stages, units)?;
    let mut dmem = encode::memory_image(design, model, &g, &alloc);
    let mut grown = crate::interp::Memory::new(design.memory.data_width_bits, end as usize);
    for b in 0..dmem.beats() {
        grown.set_beat_hex(b, &dmem.beat_hex(b));
    }
    dmem = grown;
    let input = &alloc.tensors[&g.input];
    for f in 1..frames {
        encode::write_tensor(&mut dmem, &reloc.layout(input, f), &frame_input(model, f));
    }
    let output = alloc.tensors[&g.output].clone();
    let outputs = (0..frames).map(|f| reloc.layout(&output, f)).collect();
    let layers = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| LayerReport {
            name: n.name.clone(),
            op: n.op.name().to_string(),
            datatype: g.unit.datatype.precisions[n.prec].name(),
            macs: n.macs,
            instructions: 0,
            estimated_cycles: layer_cycles[i],
        })
        .collect::<Vec<_>>();
    Ok(Program {
        design_hash: design.hash(),
        instrs: programs[0].clone(),
        dmem,
        output,
        macs: layers.iter().map(|l| l.macs).sum(),
        layers,
        elastic: Some(Elastic {
            programs,
            links,
            stages: reports,
            outputs,
        }),
    })
}

/// Every unit that runs layers computes like the first: tensors in memory are tiles of
/// cpf channels, read and written by every stage.
fn check_unit(first: &Unit, u: &Unit) -> Result<(), CompileError> {
    let rule = if u.cpf != first.cpf || u.kpf != first.kpf {
        format!(
            "unit {} is {}x{} (cpf x kpf) but unit {} is {}x{}; the stages hand tensors over in memory as tiles of cpf channels, so the compiler needs every unit of the branch to have the same cpf = kpf",
            u.name, u.cpf, u.kpf, first.name, first.cpf, first.kpf
        )
    } else if u.datatype != first.datatype {
        format!(
            "unit {} computes in another datatype than unit {}; the stages hand tensors over in one format",
            u.name, first.name
        )
    } else if u.h != first.h {
        format!(
            "unit {} has h = {} but unit {} has h = {}; replica r of a unit feeds replica r of the next, so the compiler needs the same h on every unit of the branch",
            u.name, u.h, first.name, first.h
        )
    } else {
        return Ok(());
    };
    Err(CompileError::new(
        None,
        rule,
        "give every unit of the branch the same cpf, kpf, h and datatype (buffers may differ)",
    ))
}

fn in_unit(mut e: CompileError, branch: &str, u: &Unit) -> CompileError {
    e.rule = format!("on unit {branch}.{}: {}", u.name, e.rule);
    e
}

/// The token rows of a hand-off must be as many beats leaving as arriving.
fn token_beats(
    design: &Design,
    stages: &[(usize, Range<usize>)],
    units: &[Unit],
) -> Result<(), CompileError> {
    let mem_w = design.memory.data_width_bits;
    for pair in stages.windows(2) {
        let (a, b) = (&units[pair[0].0], &units[pair[1].0]);
        let out = a.output_elem_bits().div_ceil(mem_w);
        let inp = b.input_elem_bits().div_ceil(mem_w);
        if out != inp {
            return Err(CompileError::new(
                None,
                format!(
                    "unit {}'s output rows are {out} beats but unit {}'s input rows {inp}; the hand-off token is one row",
                    a.name, b.name
                ),
                "use the same input and output datatype on the units",
            ));
        }
    }
    Ok(())
}

/// The one-row hand-off token: a store from output row 0 down the stream, or a load from
/// the stream into input row 0 (overwritten by the frame's loads before anything reads it).
fn token(node: usize, store: bool) -> Step {
    let (buffer, region) = if store {
        (Buffer::Output, Res::Spad(Buffer::Output, 0, 1))
    } else {
        (Buffer::Input, Res::Spad(Buffer::Input, 0, 1))
    };
    let t = Transfer {
        buffer,
        spad_addr: 0,
        ext_addr: 0,
        count0: 1,
        stride0: 0,
        count1: 1,
        stride1: 0,
        prec: 0,
        stream: true,
    };
    let (op, reads, writes) = if store {
        (IsaOp::Store(t), vec![region], vec![])
    } else {
        (IsaOp::Load(t), vec![], vec![region])
    };
    Step {
        instr: Instr::new(op),
        reads,
        writes,
        node,
    }
}

/// Node ranges that stay on one unit: a layer, or all phases of a transposed convolution.
fn layer_groups(g: &Graph) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (i, n) in g.nodes.iter().enumerate() {
        match out.last_mut() {
            Some(last) if g.nodes[last.start].tensor() == n.tensor() => last.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// Ideal cycles of a node on unit `u` (all its replicas together).
fn node_cost(g: &Graph, n: &Node, u: &Unit) -> u64 {
    let pes = u64::from(u.cpf * u.kpf);
    let rows = (n.out[0] * n.out[1] * n.out[2].div_ceil(u.kpf as usize)) as u64;
    let _ = g;
    (n.macs.div_ceil(pes)).max(rows) / u64::from(u.h.max(1))
}

/// Cut the layer groups, in order, into at most one contiguous stage per unit, minimising
/// the costliest stage (dynamic programming over the cut points). Stages: (unit, nodes).
fn partition(
    groups: &[Range<usize>],
    units: &[Unit],
    cost: impl Fn(&Unit, &Range<usize>) -> u64,
) -> Vec<(usize, Range<usize>)> {
    let (n, k) = (groups.len(), units.len().min(groups.len()));
    let span =
        |u: usize, a: usize, b: usize| -> u64 { (a..b).map(|i| cost(&units[u], &groups[i])).sum() };
    // best[j][i]: the smallest largest cost of the first i groups on the first j units.
    let mut best = vec![vec![u64::MAX; n + 1]; k + 1];
    let mut cut = vec![vec![0usize; n + 1]; k + 1];
    best[0][0] = 0;
    for j in 1..=k {
        for i in j..=n {
            for c in (j - 1)..i {
                if best[j - 1][c] == u64::MAX {
                    continue;
                }
                let v = best[j - 1][c].max(span(j - 1, c, i));
                if v < best[j][i] {
                    best[j][i] = v;
                    cut[j][i] = c;
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut i = n;
    for j in (1..=k).rev() {
        let c = cut[j][i];
        out.push((j - 1, groups[c].start..groups[i - 1].end));
        i = c;
    }
    out.reverse();
    out
}

/// The output rows of every node that replica chain `r` of `h` computes: band r of the
/// model's output, and back through every consumer's window the rows it reads.
fn chain_rows(g: &Graph, r: usize, h: usize) -> Vec<Range<usize>> {
    let mut need: std::collections::HashMap<String, Range<usize>> = Default::default();
    let merge = |need: &mut std::collections::HashMap<String, Range<usize>>,
                 t: &str,
                 rows: Range<usize>| {
        if rows.is_empty() {
            return;
        }
        let e = need.entry(t.to_string()).or_insert(rows.clone());
        *e = e.start.min(rows.start)..e.end.max(rows.end);
    };
    let oh = g.shape_of(&g.output)[0];
    merge(&mut need, &g.output, band(oh, r, h));
    let mut rows = vec![0..0; g.nodes.len()];
    for (i, n) in g.nodes.iter().enumerate().rev() {
        let Some(want) = need.get(n.tensor()).cloned() else {
            continue;
        };
        let mine = match &n.place {
            // A phase computes the tensor's rows first + stride * j.
            Some(p) => {
                let (first, s) = (p.offset.0, p.stride);
                let lo = want.start.saturating_sub(first).div_ceil(s);
                let hi = want.end.saturating_sub(first).div_ceil(s);
                lo.min(n.out[0])..hi.min(n.out[0])
            }
            None => want.start.min(n.out[0])..want.end.min(n.out[0]),
        };
        if mine.is_empty() {
            continue;
        }
        let in_h = g.shape_of(&n.input)[0];
        merge(&mut need, &n.input, input_rows(n, mine.clone(), in_h));
        if let Some(res) = &n.residual {
            merge(&mut need, res, mine.clone());
        }
        rows[i] = mine;
    }
    rows
}

/// Band r of `h` near-equal bands of `n` rows.
fn band(n: usize, r: usize, h: usize) -> Range<usize> {
    (n * r / h)..(n * (r + 1) / h)
}

/// The input rows node `n` reads for its output rows `rows` (the schedule's window: tap 0
/// of output row oy reads row oy * stride + shift - pad), clipped to the input.
fn input_rows(n: &Node, rows: Range<usize>, in_h: usize) -> Range<usize> {
    if let Op::Upsample { factor } = n.op {
        return rows.start / factor..rows.end.div_ceil(factor).min(in_h);
    }
    let (kh, _, s, pad) = window(n);
    let (k, ps) = n.pool.unwrap_or((1, 1));
    let (kh_e, s_e) = (kh + (k - 1) * s, s * ps);
    let lo = (rows.start * s_e + n.shift.0) as isize - pad as isize;
    let hi = ((rows.end - 1) * s_e + n.shift.0 + kh_e) as isize - pad as isize;
    (lo.max(0) as usize).min(in_h)..(hi.max(0) as usize).min(in_h)
}

/// Where frame f's copy of the activations lives: the input (beats 0..input_end) and the
/// other tensors (activations..end) of frame f > 0 follow one another after `end`.
#[derive(Debug, Clone, Copy)]
struct Reloc {
    input_end: u64,
    activations: u64,
    end: u64,
    act_size: u64,
}

impl Reloc {
    /// How far beat `addr` moves for frame `f` (weights do not move).
    fn delta(&self, addr: u64, f: usize) -> i64 {
        if f == 0 {
            return 0;
        }
        let base = self.end + (f as u64 - 1) * self.act_size;
        if addr < self.input_end {
            base as i64
        } else if addr >= self.activations {
            (base + self.input_end) as i64 - self.activations as i64
        } else {
            0
        }
    }

    fn step(&self, s: &Step, f: usize) -> Step {
        let mut s = s.clone();
        let move_res = |r: &mut Res| {
            if let Res::Dram(a, b) = r {
                let d = self.delta(*a, f);
                *a = (*a as i64 + d) as u64;
                *b = (*b as i64 + d) as u64;
            }
        };
        s.reads.iter_mut().for_each(move_res);
        s.writes.iter_mut().for_each(move_res);
        if let IsaOp::Load(t) | IsaOp::Store(t) = &mut s.instr.op {
            if !t.stream {
                t.ext_addr = (t.ext_addr as i64 + self.delta(t.ext_addr, f)) as u64;
            }
        }
        s
    }

    fn layout(&self, l: &TensorLayout, f: usize) -> TensorLayout {
        TensorLayout {
            base: (l.base as i64 + self.delta(l.base, f)) as u64,
            ..l.clone()
        }
    }
}
