//! The compile pipeline, listed once. Each pass is a function from one IR to the next:
//!
//! ```text
//! legalize  Model            -> Graph       check the model against the Design, lower it
//! fuse      Graph            -> Graph       fuse layers by graph patterns (costs: `cycles`)
//! map       Graph            -> Mapped      stages, replicas and row bands (F-CAD)
//! allocate  Mapped           -> Placed      tensors, weights and biases in external memory
//! tile      Placed, a stage  -> Tiling      tiles that fit the stage's unit
//! schedule  Tiling, replica  -> Share       the replica's instructions, band by band
//! frames    Scheduled, run   -> Framed      every engine's program for the run's frames
//! sync      Framed           -> Synced      semaphores from buffer dependencies
//! encode    Synced           -> Program     instructions checked, memory image, reports
//! ```
//!
//! A single-engine Design runs the same pipeline: `map` gives it one stage of one replica
//! and one band, `frames` one frame without hand-offs. The stages are tiled and scheduled
//! independently of one another, on the machine's cores.
//!
//! The cost model (`cost`) is an analysis the pipeline queries, not a pass: each replica's
//! schedule is timed alone with its memory port for the stage reports of an elastic Design
//! (`stage`), a single engine's report is the timeline of its program, and `fuse` compares
//! the costs of candidate groups that `cycles` gives it. The estimate of an elastic run
//! (`estimate`) runs the pipeline up to the schedule and times what it gets.

use super::cost;
use super::par;
use super::passes::allocate::{self, Alloc};
use super::passes::frames::{self, branch_frames};
use super::passes::legalize::{self, Graph};
use super::passes::map::{self, engine_of, in_unit, same_shape, Part, Stage};
use super::passes::schedule::{self, Scheduled, Share};
use super::passes::{encode, fuse, sync, tile};
use super::step::Step;
use super::{CompileError, LayerReport, Program, StageReport};
use crate::design::Design;
use crate::isa::Instr;
use crate::model::Model;
use std::ops::Range;

pub use map::is_elastic;

/// Compile `model` for every engine of `design`, each branch for its `batch` frames (a
/// branch others fork from for as many as the largest of theirs): one round. A single
/// engine runs one frame.
pub fn compile(design: &Design, model: &Model) -> Result<Program, CompileError> {
    compile_runs(design, model, &branch_frames(design, 0, 1))
}

/// As [`compile`], every branch for `frames` frames.
pub fn compile_frames(
    design: &Design,
    model: &Model,
    frames: usize,
) -> Result<Program, CompileError> {
    compile_runs(design, model, &branch_frames(design, frames, 1))
}

/// As [`compile`], for `rounds` rounds: every branch for `rounds` times its batch.
pub fn compile_rounds(
    design: &Design,
    model: &Model,
    rounds: usize,
) -> Result<Program, CompileError> {
    compile_runs(design, model, &branch_frames(design, 0, rounds))
}

/// Every branch for `per_branch[b]` frames.
fn compile_runs(
    design: &Design,
    model: &Model,
    per_branch: &[usize],
) -> Result<Program, CompileError> {
    compile_graph(design, model, graph(design, model)?, per_branch)
}

/// The pipeline from the layer graph `g` of `model` on: every branch for `per_branch[b]`
/// frames.
pub fn compile_graph(
    design: &Design,
    model: &Model,
    g: Graph,
    per_branch: &[usize],
) -> Result<Program, CompileError> {
    let single = !is_elastic(design);
    let keep = match single {
        true => Keep::Program,
        false => Keep::Both,
    };
    let (plan, costs) = schedule_graph(design, g, keep)?;
    let mut framed = frames::run(design, &plan, per_branch)?;
    let depth = design.control.queue_depth;
    let mut synced = sync::engines(std::mem::take(&mut framed.engines), depth);
    let programs = synced
        .iter_mut()
        .map(|s| match s {
            Some(s) => encode::run(design, std::mem::take(&mut s.instrs)),
            None => Ok(vec![Instr::end()]),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let layers = match single {
        // One engine: the timeline of its program.
        true => {
            let (g, alloc) = (&plan.placed.mapped.g, &plan.placed.alloc);
            let steps = &synced[0].as_ref().expect("the engine's program").steps;
            let cycles = cost::timeline(design, g, alloc, steps, &programs[0]);
            cost::layer_reports(g, alloc, &[steps], &cycles)
        }
        false => costs.layers,
    };
    Ok(encode::program(
        design,
        model,
        plan,
        &framed,
        programs,
        per_branch,
        costs.reports,
        layers,
    ))
}

/// The layer graph of `model` on `design`: legalized and fused (on a single engine with
/// the rules that keep a tensor on chip; the strategy's costs from `cycles`).
pub fn graph(design: &Design, model: &Model) -> Result<Graph, CompileError> {
    let g = legalize::run(design, model)?;
    fuse::run(g, !is_elastic(design), |sub| cycles(design, sub))
}

/// Estimated cycles of graph `g` compiled alone on its unit, as one engine: the timeline of
/// its program (None: it does not tile). The fusion strategy's cost.
pub fn cycles(design: &Design, g: &Graph) -> Option<u64> {
    let alloc = allocate::graph(design, g);
    let nodes: Vec<usize> = (0..g.nodes.len()).collect();
    let tiling = tile::run(design, g, &alloc, &nodes).ok()?;
    let rows: Vec<Range<usize>> = g.nodes.iter().map(|n| 0..n.out[0]).collect();
    let steps = schedule::run(design, g, &alloc, &tiling, &rows);
    let synced = sync::run(steps, design.control.queue_depth);
    let t = cost::timeline(design, g, &alloc, &synced.steps, &synced.instrs);
    Some(t.iter().sum())
}

/// What the pipeline keeps of each replica's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// The steps, without timing them (a single engine, whose report is its program's).
    Program,
    /// The steps, and each replica timed alone (an elastic program and its stage reports).
    Both,
    /// Only the timing: an estimate needs no program, so each replica's steps go once
    /// timed (a stage of large layers on a small array schedules millions of them).
    Costs,
}

/// The estimates made of a schedule: per stage its report, per node the estimate of its
/// slowest replica (empty for `Keep::Program`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Costs {
    pub reports: Vec<StageReport>,
    pub layers: Vec<LayerReport>,
}

/// The pipeline up to the schedule: legalize, fuse, map, allocate, and every stage tiled
/// and scheduled (and timed, as `keep` says).
pub(crate) fn schedule(
    design: &Design,
    model: &Model,
    keep: Keep,
) -> Result<(Scheduled, Costs), CompileError> {
    schedule_graph(design, graph(design, model)?, keep)
}

/// As [`schedule`], from the layer graph `g` on.
fn schedule_graph(
    design: &Design,
    g: Graph,
    keep: Keep,
) -> Result<(Scheduled, Costs), CompileError> {
    let mapped = map::run(design, g)?;
    let placed = allocate::run(design, mapped)?;
    let (g, m) = (&placed.mapped.g, &placed.mapped.map);
    let mut costs = Costs {
        reports: Vec::new(),
        layers: layer_reports(g),
    };
    let mut shares = Vec::new();
    // The stages are scheduled independently of one another: on the machine's cores.
    let indices: Vec<usize> = (0..m.stages.len()).collect();
    let planned = par::map(&indices, par::cores(), |&k| {
        stage(
            design,
            g,
            &m.stages[k],
            placed.alloc_of(k),
            &m.replicas,
            &m.band_ends[k],
            keep,
        )
    });
    for p in planned {
        let (report, sh, layer_costs) = p?;
        add_layer_costs(&mut costs.layers, &layer_costs);
        if keep != Keep::Program {
            costs.reports.push(report);
        }
        shares.push(sh);
    }
    if keep != Keep::Program {
        for (k, r) in costs.reports.iter_mut().enumerate() {
            r.handoffs = placed.alloc.handoffs.notes(design, m, k);
        }
    }
    Ok((Scheduled { placed, shares }, costs))
}

/// Each node's report before any stage's part is added.
pub(crate) fn layer_reports(g: &Graph) -> Vec<LayerReport> {
    g.nodes
        .iter()
        .map(|n| LayerReport {
            name: n.name.clone(),
            op: n.op.to_string(),
            datatype: g.unit.datatype.precisions[n.prec].name(),
            macs: n.macs,
            instructions: 0,
            beats: 0,
            handoff_beats: 0,
            estimated_cycles: 0,
            pcs: Vec::new(),
        })
        .collect()
}

/// A stage's part of one node's estimate: (node, cycles of its slowest replica, the
/// instructions and beats of all its replicas).
pub(crate) type LayerCost = (usize, u64, usize, u64);

pub(crate) fn add_layer_costs(layers: &mut [LayerReport], costs: &[LayerCost]) {
    for &(i, cycles, instructions, beats) in costs {
        let l = &mut layers[i];
        l.estimated_cycles = l.estimated_cycles.max(cycles);
        l.instructions += instructions;
        l.beats += beats;
    }
}

/// One stage: tiled on its unit (`g`: the graph, of the unit's shape or not), each replica's
/// share scheduled band by band, and (but for `Keep::Program`) each replica timed alone
/// with its memory port. The shares keep their steps unless `keep` is `Costs`.
pub(crate) fn stage(
    design: &Design,
    g: &Graph,
    st: &Stage,
    alloc: &Alloc,
    replicas: &[Vec<Range<usize>>],
    band_ends: &[Vec<Vec<usize>>],
    keep: Keep,
) -> Result<(StageReport, Vec<Share>, Vec<LayerCost>), CompileError> {
    let branch = &design.branches[st.branch];
    let unit = &branch.units[st.unit];
    let owned;
    let gs = match same_shape(unit, &g.unit) {
        true => g,
        false => {
            owned = Graph {
                unit: unit.clone(),
                ..g.clone()
            };
            &owned
        }
    };
    let tiling = tile::run(design, gs, alloc, &st.nodes).map_err(|e| match is_elastic(design) {
        true => in_unit(e, &branch.name, unit),
        false => e,
    })?;
    let mut report = StageReport {
        branch: branch.name.clone(),
        unit: unit.name.clone(),
        engines: Vec::new(),
        layers: st.nodes.iter().map(|&i| g.nodes[i].name.clone()).collect(),
        rows: Vec::new(),
        bands: 1,
        band_rows: Vec::new(),
        estimated_cycles: 0,
        beats: 0,
        replica_beats: Vec::new(),
        handoff_beats: 0,
        handoffs: Vec::new(),
    };
    let mut costs: Vec<LayerCost> = Vec::new();
    if keep != Keep::Program {
        costs = st.nodes.iter().map(|&i| (i, 0, 0, 0)).collect();
    }
    let mut shares = Vec::new();
    let named = |rows: &[Range<usize>]| -> Vec<(String, usize, usize)> {
        st.nodes
            .iter()
            .filter(|&&i| !rows[i].is_empty())
            .map(|&i| (g.nodes[i].name.clone(), rows[i].start, rows[i].end))
            .collect()
    };
    for (r, ends) in band_ends.iter().enumerate() {
        let e = engine_of(design, st.branch, st.unit, r);
        let part = Part {
            engine: e,
            rows: (0..g.nodes.len())
                .map(|i| match st.nodes.contains(&i) {
                    true => replicas[i].get(r).cloned().unwrap_or(0..0),
                    false => 0..0,
                })
                .collect(),
            ends: ends.clone(),
        };
        let mut share = schedule::share(design, gs, alloc, &tiling, part);
        if keep != Keep::Program {
            time_replica(design, gs, alloc, &mut share, keep, &mut costs, &mut report);
            report.engines.push(e);
            report.rows.push(named(&share.part.rows));
            report.bands = share.part.bands();
            if report.bands > 1 {
                report.band_rows.push(
                    (0..report.bands)
                        .map(|k| named(&share.part.band_rows(k)))
                        .collect(),
                );
            }
        }
        shares.push(share);
    }
    Ok((report, shares, costs))
}

/// Time one replica's share alone with its memory port (the timeline of the program the
/// sync pass makes of its bands), add its part of every layer's estimate to `costs` and of
/// the stage's to `report`; its steps go unless `keep` keeps them.
fn time_replica(
    design: &Design,
    gs: &Graph,
    alloc: &Alloc,
    share: &mut Share,
    keep: Keep,
    costs: &mut [LayerCost],
    report: &mut StageReport,
) {
    let ibeats = crate::isa::instr_beats(design.memory.data_width_bits);
    // The bands one after another (moved, not copied: a stage of large layers on a small
    // array schedules millions of steps).
    let lens: Vec<usize> = share.bands.iter().map(Vec::len).collect();
    let mut steps: Vec<Step> = Vec::with_capacity(lens.iter().sum());
    for band in share.bands.drain(..) {
        steps.extend(band);
    }
    let synced = sync::run(steps, design.control.queue_depth);
    let cycles = cost::timeline(design, gs, alloc, &synced.steps, &synced.instrs);
    let mut steps = synced.steps;
    let est = cost::layer_reports(gs, alloc, &[&steps], &cycles);
    // (Without them, a band is still a band: its count stays.)
    for &n in lens.iter().rev() {
        share.bands.push(match keep {
            Keep::Both => steps.split_off(steps.len() - n),
            _ => Vec::new(),
        });
    }
    share.bands.reverse();
    for c in costs.iter_mut() {
        let x = &est[c.0];
        c.1 = c.1.max(x.estimated_cycles);
        c.2 += x.instructions;
        c.3 += x.beats;
    }
    report.estimated_cycles = report
        .estimated_cycles
        .max(est.iter().map(|l| l.estimated_cycles).sum());
    // The engine fetches its instructions through the same port.
    let beats: u64 = est
        .iter()
        .map(|l| l.beats + l.instructions as u64 * ibeats)
        .sum();
    report.beats += beats;
    report.replica_beats.push(beats);
    report.handoff_beats += est.iter().map(|l| l.handoff_beats).sum::<u64>();
}
