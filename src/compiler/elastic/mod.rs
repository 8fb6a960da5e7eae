//! Elastic compilation (F-CAD's construction step): a model onto every unit of an elastic
//! Design, one program per engine.
//!
//! - **Mapping** (`map.rs`): outputs to branches, layers to branches (a shared layer to the
//!   branch with the most compute of its own, reached by the others through the fork link),
//!   each branch's layers cut into one contiguous stage per unit, balancing the stages.
//! - **Replicas.** The `h` engines of a unit split every output by height into `h` bands;
//!   replica r of every stage computes the rows its band needs, back through the kernels'
//!   windows (halo rows are computed by both neighbours, so replica chain r never waits for
//!   another chain: the overlapping rows are bit-identical writes).
//! - **Hand-offs.** Tensors move through external memory; every activation keeps its own
//!   region (no reuse: stages run concurrently) and every frame its own copy of them.
//!   After the last store of a frame, an engine sends one row down its stream link(s) as a
//!   token; the engine downstream loads it before the frame's first load. The store queue
//!   is in order and a beat leaves only after the previous write was accepted, so the token
//!   follows the frame's data (for a memory that commits a write when it accepts it, as the
//!   testbench's does), and the FIFO's depth bounds how many frames a stage runs ahead.
//! - **Row bands** (`tokens.rs`, `rows::bands`). A unit with `bands = B` computes each
//!   frame in B row bands and sends a token after each, so the unit downstream starts on
//!   the first rows its windows need (fine-grained pipelining); before each band an engine
//!   takes the tokens that cover what the band reads, and all of a frame's before its last.
//! - **Frames.** Each branch runs its `batch` of frames back to back (a branch others fork
//!   from as many as the largest of theirs); each engine's program is its stage's share of
//!   every frame, so stage s works on frame f + 1 while stage s + 1 works on frame f.
//! - **Estimate** (`estimate`): the search's bound from the same plan without programs (the
//!   slowest stage, each replica's timeline alone with its port, and the beats every engine
//!   moves through the busiest port), and the round from a timeline of every engine's
//!   program over one and two rounds (`programs::system_round`).

use super::passes::allocate::{self, Alloc};
use super::passes::legalize::{self, Graph};
use super::passes::schedule::{self, Step};
use super::passes::{encode, estimate, fuse, tile};
use super::{CompileError, LayerReport, OutputRegion, Program};
use crate::design::{Branch, Design, Unit};
use crate::isa::Instr;
use crate::model::{Model, Tensor};
use std::ops::Range;

mod cost;
mod map;
mod par;
mod programs;
mod rows;
mod tokens;

pub use cost::{estimate, Estimate, Memo};

use programs::{Programs, Reloc};
use tokens::Share;

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
    /// Row bands each replica computes a frame in, handing each on when it is done.
    pub bands: usize,
    /// With more than one band: per replica, per band, the output rows each layer computes
    /// in it (first, end).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub band_rows: Vec<Vec<Vec<(String, usize, usize)>>>,
    /// Estimated cycles of one frame on the slowest replica.
    pub estimated_cycles: u64,
    /// Beats its replicas move through the memory port per frame (data and instructions),
    /// and each replica's.
    pub beats: u64,
    pub replica_beats: Vec<u64>,
}

impl StageReport {
    /// ", in N row bands" for a stage that hands its frames on in bands, else nothing.
    pub fn in_bands(&self) -> String {
        match self.bands {
            0 | 1 => String::new(),
            n => format!(", in {n} row bands"),
        }
    }
}

/// The multi-engine part of an elastic program.
#[derive(Debug, Clone)]
pub struct Elastic {
    /// Every engine's program, as `Design::cores` orders the engines.
    pub programs: Vec<Vec<Instr>>,
    /// Frames each branch runs (`Design::branches` order; 0 for a branch without layers).
    pub frames: Vec<usize>,
    pub stages: Vec<StageReport>,
}

impl Elastic {
    /// The slowest stage's estimated cycles for the frames its branch runs (each engine as
    /// if alone with its memory port): the compute bound of the run.
    pub fn compute_cycles(&self, design: &Design) -> u64 {
        self.stages
            .iter()
            .map(|s| {
                let b = design.branches.iter().position(|b| b.name == s.branch);
                b.map_or(1, |b| self.frames[b] as u64) * s.estimated_cycles
            })
            .max()
            .unwrap_or(0)
    }
}

/// A round's frames per branch, "geometry 1, texture 2, warp 2" (branches without
/// layers, 0 frames, left out).
pub fn round_label(design: &Design, frames: &[usize]) -> String {
    design
        .branches
        .iter()
        .zip(frames)
        .filter(|(_, &f)| f > 0)
        .map(|(b, f)| format!("{} {f}", b.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `design` is compiled per engine: more than one engine.
pub fn is_elastic(design: &Design) -> bool {
    design.cores().len() > 1
}

/// The model as frame `f` runs it: every input rolled by `f` pixels (frame 0 is the model
/// itself), so that every frame computes something different.
pub fn frame_model(model: &Model, f: usize) -> Model {
    let mut m = model.clone();
    for (_, x) in &mut m.inputs {
        *x = rolled(x, f);
    }
    m
}

/// `x` rolled by `f` pixels (with their block scales).
fn rolled(x: &Tensor, f: usize) -> Tensor {
    let pixels = x.h * x.w;
    let mut y = x.clone();
    let shift = f % pixels.max(1);
    y.data.rotate_right(shift * x.c);
    let per = y.scales.len() / pixels.max(1);
    y.scales.rotate_right(shift * per);
    y
}

/// The mapping of a model onto an elastic Design and every engine's share of one frame,
/// before frames, tokens and encoding.
struct Plan {
    g: Graph,
    alloc: Alloc,
    /// Per stage, the placement as its unit sees it, when units of different sizes run
    /// stages (empty otherwise: every stage sees `alloc`).
    allocs: Vec<Alloc>,
    stages: Vec<map::Stage>,
    /// Per stage, per replica: the engine's share of one frame.
    shares: Vec<Vec<Share>>,
    reports: Vec<StageReport>,
    /// Per node: the estimate of its slowest replica.
    layers: Vec<LayerReport>,
}

/// Engine index of replica `r` of unit `u` of branch `b`.
fn engine_of(design: &Design, b: usize, u: usize, r: usize) -> usize {
    let (bn, un) = (&design.branches[b].name, &design.branches[b].units[u].name);
    design.core_index(bn, un, r as u32).expect("engine exists")
}

fn plan(design: &Design, model: &Model) -> Result<Plan, CompileError> {
    let g = fuse::run(design, legalize::run(design, model)?, false);
    let m = mapping(design, &g)?;
    let (alloc, allocs) = allocs(design, &g, &m);
    let mut reports = Vec::new();
    let mut shares = Vec::new();
    let mut layers = layer_reports(&g);
    // The stages are scheduled independently of one another: on the machine's cores.
    let indices: Vec<usize> = (0..m.stages.len()).collect();
    let planned = par::map(&indices, par::cores(), |&si| {
        let alloc = allocs.get(si).unwrap_or(&alloc);
        plan_stage(
            design,
            &g,
            &m.stages[si],
            alloc,
            &m.replicas,
            &m.band_ends[si],
            true,
        )
    });
    for p in planned {
        let (report, sh, costs) = p?;
        add_layer_costs(&mut layers, &costs);
        reports.push(report);
        shares.push(sh);
    }
    Ok(Plan {
        g,
        alloc,
        allocs,
        stages: m.stages,
        shares,
        reports,
        layers,
    })
}

/// Where a model's layers run on an elastic Design: the stages, the rows each replica
/// computes (per node, per replica) and, per stage and replica, the ends of its bands.
struct Mapping {
    stages: Vec<map::Stage>,
    mixed: bool,
    replicas: Vec<Vec<Range<usize>>>,
    band_ends: Vec<Vec<Vec<Vec<usize>>>>,
}

fn mapping(design: &Design, g: &Graph) -> Result<Mapping, CompileError> {
    let stages = map::stages(design, g)?;
    // Units of different sizes share tensors stored pixel by pixel; each stage sees them
    // as rows of its own width, with its own layers' parameters.
    let mixed = stages
        .iter()
        .any(|st| unit_of(design, st).cpf != g.unit.cpf);
    let replicas = rows::replica_rows(design, g, &stages);
    let counts: Vec<usize> = stages
        .iter()
        .map(|st| unit_of(design, st).bands as usize)
        .collect();
    let band_ends = rows::bands(design, g, &stages, &replicas, &counts);
    Ok(Mapping {
        stages,
        mixed,
        replicas,
        band_ends,
    })
}

fn unit_of<'d>(design: &'d Design, st: &map::Stage) -> &'d Unit {
    &design.branches[st.branch].units[st.unit]
}

/// The placement of every tensor, and per stage the placement as its unit sees it when
/// units of different sizes run stages (empty otherwise: every stage sees the first).
fn allocs(design: &Design, g: &Graph, m: &Mapping) -> (Alloc, Vec<Alloc>) {
    if !m.mixed {
        return (allocate::run_with(design, g, false), Vec::new());
    }
    let mut units = vec![g.unit.clone(); g.nodes.len()];
    for st in &m.stages {
        for &i in &st.nodes {
            units[i] = unit_of(design, st).clone();
        }
    }
    let alloc = allocate::run_units(design, g, &units);
    let allocs = m
        .stages
        .iter()
        .map(|st| alloc.for_unit(design, unit_of(design, st), &st.nodes))
        .collect();
    (alloc, allocs)
}

fn layer_reports(g: &Graph) -> Vec<LayerReport> {
    g.nodes
        .iter()
        .map(|n| LayerReport {
            name: n.name.clone(),
            op: n.op.to_string(),
            datatype: g.unit.datatype.precisions[n.prec].name(),
            macs: n.macs,
            instructions: 0,
            beats: 0,
            estimated_cycles: 0,
            pcs: Vec::new(),
        })
        .collect()
}

/// A stage's part of one node's estimate: (node, cycles of its slowest replica, the
/// instructions and beats of all its replicas).
type LayerCost = (usize, u64, usize, u64);

fn add_layer_costs(layers: &mut [LayerReport], costs: &[LayerCost]) {
    for &(i, cycles, instructions, beats) in costs {
        let l = &mut layers[i];
        l.estimated_cycles = l.estimated_cycles.max(cycles);
        l.instructions += instructions;
        l.beats += beats;
    }
}

/// Whether the passes see units `a` and `b` as the same: they do not read a unit's name,
/// replicas or bands, so a stage whose unit has the graph's shape runs on the graph as it
/// is, and one of another shape on a copy with its unit.
pub(super) fn same_shape(a: &Unit, b: &Unit) -> bool {
    unit_shape(a) == unit_shape(b)
}

/// Unit `u` as the passes see it (no name, one replica, one band).
pub(super) fn unit_shape(u: &Unit) -> Unit {
    Unit {
        name: String::new(),
        h: 1,
        bands: 1,
        ..u.clone()
    }
}

/// One stage's replicas' shares of a frame, scheduled band by band, and its estimate
/// (`g`: the graph, of the stage's unit's shape or not). The shares keep their scheduled
/// steps when `keep_steps` (compile); an estimate drops each replica's once counted.
fn plan_stage(
    design: &Design,
    g: &Graph,
    st: &map::Stage,
    alloc: &Alloc,
    replicas: &[Vec<Range<usize>>],
    band_ends: &[Vec<Vec<usize>>],
    keep_steps: bool,
) -> Result<(StageReport, Vec<Share>, Vec<LayerCost>), CompileError> {
    let ibeats = crate::isa::instr_beats(design.memory.data_width_bits);
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
    let tiling = tile::run_for(design, gs, alloc, |i| st.nodes.contains(&i))
        .map_err(|e| in_unit(e, &branch.name, unit))?;
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
    };
    let mut costs: Vec<LayerCost> = st.nodes.iter().map(|&i| (i, 0, 0, 0)).collect();
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
        let rows: Vec<Range<usize>> = (0..g.nodes.len())
            .map(|i| match st.nodes.contains(&i) {
                true => replicas[i].get(r).cloned().unwrap_or(0..0),
                false => 0..0,
            })
            .collect();
        let mut share = Share {
            engine: e,
            rows,
            ends: ends.clone(),
            bands: Vec::new(),
        };
        // The replica's bands, one after another (moved, not copied: a stage of large
        // layers on a small array schedules millions of steps).
        let mut steps: Vec<Step> = Vec::new();
        let mut lens = Vec::new();
        for k in 0..share.ends.len() {
            let band = schedule::run_rows(design, gs, alloc, &tiling, &share.band_rows(k));
            lens.push(band.len());
            match steps.is_empty() {
                true => steps = band,
                false => steps.extend(band),
            }
        }
        // Each layer's cycles from the replica's timeline alone with its memory port.
        let (cycles, mut steps) = estimate::engine_timeline(design, gs, alloc, steps);
        let est = estimate::layer_reports(gs, alloc, &[&steps], &cycles);
        // An estimate needs no program: each replica's steps go once counted.
        if keep_steps {
            for &n in lens.iter().rev() {
                share.bands.push(steps.split_off(steps.len() - n));
            }
            share.bands.reverse();
        }
        for c in &mut costs {
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
        report.engines.push(e);
        report.rows.push(named(&share.rows));
        report.bands = share.ends.len();
        if report.bands > 1 {
            report.band_rows.push(
                (0..report.bands)
                    .map(|k| named(&share.band_rows(k)))
                    .collect(),
            );
        }
        shares.push(share);
    }
    Ok((report, shares, costs))
}

/// Compile `model` for every engine of the elastic `design`, each branch for its `batch`
/// frames (a branch others fork from for as many as the largest of theirs): one round.
pub fn compile(design: &Design, model: &Model) -> Result<Program, CompileError> {
    compile_frames(design, model, 0)
}

/// As [`compile`], every branch for `frames` frames (0: each its batch).
pub fn compile_frames(
    design: &Design,
    model: &Model,
    frames: usize,
) -> Result<Program, CompileError> {
    compile_runs(design, model, branch_frames(design, frames, 1))
}

/// As [`compile`], for `rounds` rounds: every branch for `rounds` times its batch.
pub fn compile_rounds(
    design: &Design,
    model: &Model,
    rounds: usize,
) -> Result<Program, CompileError> {
    compile_runs(design, model, branch_frames(design, 0, rounds))
}

/// Every branch for `per_branch[b]` frames.
fn compile_runs(
    design: &Design,
    model: &Model,
    per_branch: Vec<usize>,
) -> Result<Program, CompileError> {
    let plan = plan(design, model)?;
    let Programs {
        synced,
        reloc,
        frames,
        end,
    } = programs::assemble(design, &plan, &per_branch)?;
    let programs = synced
        .into_iter()
        .map(|s| match s {
            Some(s) => encode::run(design, s.instrs),
            None => Ok(vec![Instr::end()]),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let Plan {
        g,
        alloc,
        allocs,
        stages,
        reports,
        layers,
        ..
    } = plan;
    let dmem = frame_memory(
        design,
        model,
        (&g, &alloc),
        (&stages, &allocs),
        (reloc, frames, end),
    );
    let output = alloc.tensors[&g.outputs[0]].clone();
    let (outputs, macs_run) = frame_outputs(&g, &alloc, &stages, &per_branch, reloc);
    Ok(Program {
        design_hash: design.hash(),
        instrs: programs[0].clone(),
        dmem,
        output,
        outputs,
        macs: layers.iter().map(|l| l.macs).sum(),
        macs_run,
        layers,
        fused: g.fused.clone(),
        elastic: Some(Elastic {
            frames: (0..design.branches.len())
                .map(|b| {
                    if stages.iter().any(|s| s.branch == b) {
                        per_branch[b]
                    } else {
                        0
                    }
                })
                .collect(),
            programs,
            stages: reports,
        }),
    })
}

/// Frames per branch: `rounds` times its batch (or `frames` for all), raised to the frames
/// of every branch that forks from it (its shared layers must exist for each of theirs).
/// Forks come from earlier branches, so one backward sweep covers chains of forks.
fn branch_frames(design: &Design, frames: usize, rounds: usize) -> Vec<usize> {
    let mut per_branch: Vec<usize> = design
        .branches
        .iter()
        .map(|b| match frames {
            0 => b.batch.max(1) as usize * rounds,
            f => f,
        })
        .collect();
    for b in (0..design.branches.len()).rev() {
        if let Some((a, _)) = &design.branches[b].from {
            let a = design
                .branches
                .iter()
                .position(|x| x.name == *a)
                .expect("validated fork source");
            per_branch[a] = per_branch[a].max(per_branch[b]);
        }
    }
    per_branch
}

/// External memory before the run: the single-frame image, then every later frame's inputs
/// in that frame's copy of the activations.
fn frame_memory(
    design: &Design,
    model: &Model,
    (g, alloc): (&Graph, &Alloc),
    (stages, allocs): (&[map::Stage], &[Alloc]),
    (reloc, frames, end): (Reloc, usize, u64),
) -> crate::interp::Memory {
    let mut dmem = crate::interp::Memory::new(design.memory.data_width_bits, end as usize);
    encode::write_inputs(&mut dmem, model, g, alloc, |l| l.clone());
    if allocs.is_empty() {
        encode::write_params(&mut dmem, g, alloc);
    }
    for (st, a) in stages.iter().zip(allocs) {
        let gs = Graph {
            unit: design.branches[st.branch].units[st.unit].clone(),
            ..g.clone()
        };
        encode::write_params(&mut dmem, &gs, a);
    }
    for f in 1..frames {
        let m = frame_model(model, f);
        encode::write_inputs(&mut dmem, &m, g, alloc, |l| reloc.layout(l, f));
    }
    dmem
}

/// Every output, for each frame of the branch that computes it, and the MACs of the whole
/// run.
fn frame_outputs(
    g: &Graph,
    alloc: &Alloc,
    stages: &[map::Stage],
    per_branch: &[usize],
    reloc: Reloc,
) -> (Vec<OutputRegion>, u64) {
    let stage_of = |t: &str| {
        stages
            .iter()
            .find(|s| s.nodes.iter().any(|&i| g.nodes[i].tensor() == t))
            .expect("an output is computed")
    };
    let frames = per_branch.iter().copied().max().unwrap_or(1);
    let mut outputs = Vec::new();
    for f in 0..frames {
        for o in &g.outputs {
            if f < per_branch[stage_of(o).branch] {
                outputs.push(OutputRegion {
                    name: o.clone(),
                    frame: f,
                    layout: reloc.layout(&alloc.tensors[o], f),
                });
            }
        }
    }
    let macs_run = stages
        .iter()
        .map(|st| {
            let macs: u64 = st.nodes.iter().map(|&i| g.nodes[i].macs).sum();
            macs * per_branch[st.branch] as u64
        })
        .sum();
    (outputs, macs_run)
}

/// Whether unit `u` can run layers beside `widest`, the graph's unit (the largest array,
/// whose cpf is the channel tile of tensors in memory): a square array of the same
/// datatype; a smaller array only where the accumulation is exact (the
/// integer path: a sum over rows of 8 channels equals one over rows of 16). The config
/// already makes every unit's rows whole memory beats, so a smaller unit reads each
/// stored row as several of its own.
pub(super) fn check_unit(widest: &Unit, u: &Unit, b: &Branch) -> Result<(), CompileError> {
    let integer = u
        .datatype
        .precisions
        .iter()
        .all(|p| matches!(p, crate::numeric::Precision::Int(_)));
    let (rule, fix) = if u.cpf != u.kpf {
        (
            format!("unit {}.{} is {}x{} (cpf x kpf); activations are stored in tiles of cpf channels and written in tiles of kpf channels, so the compiler needs cpf = kpf", b.name, u.name, u.cpf, u.kpf),
            "give the unit cpf = kpf".to_string(),
        )
    } else if u.datatype != widest.datatype {
        (
            format!(
                "unit {}.{} computes in another datatype than unit {}; the stages hand tensors over in one format",
                b.name, u.name, widest.name
            ),
            "give every unit that runs layers the same datatype".to_string(),
        )
    } else if u.cpf != widest.cpf && !integer {
        (
            format!(
                "unit {}.{} is {}x{} but unit {} is {}x{}; the {} sums of a layer depend on the channel tile they are accumulated in, so units of different sizes need an integer datatype",
                b.name, u.name, u.cpf, u.kpf, widest.name, widest.cpf, widest.kpf,
                u.datatype.precisions.iter().find(|p| !matches!(p, crate::numeric::Precision::Int(_))).map_or("", |p| p.family())
            ),
            "give every unit that runs layers the same cpf = kpf, or use an integer datatype".to_string(),
        )
    } else {
        return Ok(());
    };
    Err(CompileError::new(None, rule, fix))
}

fn in_unit(mut e: CompileError, branch: &str, u: &Unit) -> CompileError {
    e.rule = format!("on unit {branch}.{}: {}", u.name, e.rule);
    e
}
