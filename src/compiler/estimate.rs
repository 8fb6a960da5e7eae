//! The estimate of an elastic run (`compile --estimate`, and the design-space search's
//! cycle model): the same mapping and per-stage schedule `compile` emits, without
//! programs. A [`Memo`] keeps every legalized graph and stage estimate it has made, so a
//! search that estimates many Designs of one model schedules each distinct stage once.

use super::cost::{self, EngineProgram, Streams};
use super::passes::allocate::{self, Alloc};
use super::passes::frames::{self, branch_frames};
use super::passes::legalize::{self, Graph};
use super::passes::map::links::token_beats;
use super::passes::map::{self, engine_of, unit_of, unit_shape, Mapping, Stage};
use super::passes::schedule::Scheduled;
use super::passes::sync::{self, Synced};
use super::pipeline::{self, add_layer_costs, layer_reports, Keep, LayerCost};
use super::{CompileError, LayerReport, StageReport};
use crate::design::Design;
use crate::model::Model;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

/// The estimate of an elastic run in steady state, per *round*: every branch runs its
/// `batch` of frames (a branch others fork from as many as the largest of theirs), from the
/// same mapping and schedule `compile` emits (no program is built, so it also covers
/// models whose programs would not fit the instruction memory).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Estimate {
    pub stages: Vec<StageReport>,
    pub layers: Vec<LayerReport>,
    /// MACs of one frame of every branch.
    pub macs_per_frame: u64,
    /// Per branch (`Design::branches` order): frames per round (0 without layers), and
    /// frames per second.
    pub branch_frames: Vec<usize>,
    pub branch_fps: Vec<f64>,
    /// The slowest stage's cycles for its branch's frames of a round (each engine alone
    /// with the memory port).
    pub compute_cycles: u64,
    /// Beats every engine together moves per round, and the cycles the busiest memory port
    /// needs for its engines' at `memory.bytes_per_cycle` (engine e uses port e mod ports).
    pub beats: u64,
    pub port_beats: Vec<u64>,
    pub memory_cycles: u64,
    /// The larger of the two: the round interval as the search reckons it.
    pub bound_cycles_per_round: u64,
    /// The round interval in steady state: from a timeline of every engine at once over
    /// one and two rounds (`one_round_cycles`: the first) where the programs could be built,
    /// else the bound.
    pub cycles_per_round: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_round_cycles: Option<u64>,
    /// The round over the largest batch: the interval between frames of the branches with
    /// the most frames per round, whose frames per second `frames_per_second` is.
    pub cycles_per_frame: u64,
    pub frames_per_second: f64,
    /// MACs done per cycle over the MACs per cycle of every PE, and the MACs of a round.
    pub efficiency: f64,
    pub pes: u64,
    pub macs_per_round: u64,
}

impl Estimate {
    /// With a round of `round` cycles: the frame rates and the efficiency that follow.
    fn with_round(mut self, design: &Design, round: u64) -> Self {
        let round = round.max(1);
        let clock = f64::from(design.control.clock_mhz) * 1e6;
        let most = self.branch_frames.iter().copied().max().unwrap_or(1).max(1) as u64;
        self.branch_fps = self
            .branch_frames
            .iter()
            .map(|&f| f as f64 * clock / round as f64)
            .collect();
        self.cycles_per_round = round;
        self.cycles_per_frame = round.div_ceil(most);
        self.frames_per_second = most as f64 * clock / round as f64;
        self.efficiency = self.macs_per_round as f64 / (round * self.pes) as f64;
        self
    }
}

/// Estimate the elastic run of `model` on `design` (see [`Estimate`]): the search's bound,
/// and the round from a timeline of every engine's program (where the programs of two
/// rounds fit the external memory's addresses; else the bound stands).
pub fn estimate(design: &Design, model: &Model) -> Result<Estimate, CompileError> {
    let (p, costs) = pipeline::schedule(design, model, Keep::Both)?;
    let (g, stages) = (&p.placed.mapped.g, &p.placed.mapped.map.stages);
    let e = summarize(design, g, stages, costs.reports, costs.layers);
    Ok(match system_round(design, &p) {
        Ok((one, steady)) => Estimate {
            one_round_cycles: Some(one),
            ..e.with_round(design, steady)
        },
        Err(_) => e,
    })
}

/// The cycles of one round alone and of a round in steady state (a run of two rounds less
/// one of one, as `hwgen sim` measures it in RTL), from a timeline of every engine at once
/// (`cost::system`): the engines' programs as `compile` emits them, the memory ports
/// they share, and the tokens their stream links hold.
fn system_round(design: &Design, plan: &Scheduled) -> Result<(u64, u64), CompileError> {
    let cores = design.cores();
    let links = design.links();
    let mut stage_of = vec![None; cores.len()];
    for (k, share) in plan.shares.iter().enumerate() {
        for sh in share {
            stage_of[sh.part.engine] = Some(k);
        }
    }
    let active: Vec<bool> = stage_of.iter().map(Option::is_some).collect();
    let beats = token_beats(design, &links, &active);
    // A link holds its depth in beats of its sender's tokens.
    let streams = || {
        Streams::new(
            cores.len(),
            links
                .iter()
                .map(|l| (l.from, l.to, (u64::from(l.depth) / beats[l.from]) as usize)),
        )
    };
    let ports = design.memory.ports.max(1) as usize;
    // The cycles of `rounds` rounds.
    let cycles = |rounds: usize| -> Result<u64, CompileError> {
        let run = frames::run(design, plan, &branch_frames(design, 0, rounds))?;
        let synced = sync::engines(run.engines, design.control.queue_depth);
        let none = Synced {
            steps: Vec::new(),
            instrs: Vec::new(),
        };
        let engines: Vec<EngineProgram> = synced
            .iter()
            .enumerate()
            .map(|(e, s)| {
                let s = s.as_ref().unwrap_or(&none);
                let (unit, alloc) = match stage_of[e] {
                    Some(k) => (
                        plan.placed.mapped.map.unit(design, k),
                        plan.placed.alloc_of(k),
                    ),
                    None => (cores[e].1, &plan.placed.alloc),
                };
                EngineProgram {
                    unit,
                    alloc,
                    steps: &s.steps,
                    instrs: &s.instrs,
                    port: e % ports,
                }
            })
            .collect();
        Ok(cost::system(design, &engines, streams())
            .into_iter()
            .max()
            .unwrap_or(0))
    };
    // One round and two, on two threads where the machine has them.
    let [one, two] = super::par::map(&[1, 2], super::par::cores(), |&r| cycles(r))
        .try_into()
        .expect("two timelines");
    let (one, two) = (one?, two?);
    Ok((one, two.saturating_sub(one)))
}

/// Legalized graphs and stage estimates already made, for Designs of one model that differ
/// only in their branches' units (a Design with other memory, vector or control
/// parameters gets entries of its own: the keys hold them; models are told apart by name
/// and layer names only, so use one memo per model).
#[derive(Default)]
pub struct Memo {
    /// Per widest unit's shape, the graph; per stage unit of another shape, the graph with
    /// it.
    graphs: HashMap<String, Arc<Graph>>,
    shaped: HashMap<String, Arc<Graph>>,
    /// Per stage key, its estimate or the compiler's refusal.
    stages: HashMap<String, Planned>,
    /// Stages scheduled that no estimate has looked up yet (a stage is a miss when it is
    /// scheduled, by `prepare` or by the estimate that needs it, and a hit at every later
    /// look-up).
    fresh: HashSet<String>,
    /// Stages scheduled, and stages found.
    pub misses: usize,
    pub hits: usize,
}

/// A stage's estimate (its report and its part of each layer's), or why it cannot run.
type Planned = Result<(StageReport, Vec<LayerCost>), CompileError>;

/// A stage not yet scheduled: its key and everything `pipeline::stage` reads.
struct Job {
    key: String,
    design: Design,
    g: Arc<Graph>,
    stage: Stage,
    alloc: Alloc,
    replicas: Vec<Vec<Range<usize>>>,
    band_ends: Vec<Vec<Vec<usize>>>,
}

impl Job {
    fn plan(&self) -> Planned {
        let (report, _, costs) = pipeline::stage(
            &self.design,
            &self.g,
            &self.stage,
            &self.alloc,
            &self.replicas,
            &self.band_ends,
            Keep::Costs,
        )?;
        Ok((report, costs))
    }
}

/// A Design's graph and mapping, and its stages' keys.
struct Planning {
    /// What its stages' estimates depend on besides its units (`base_key`).
    base: String,
    g: Arc<Graph>,
    m: Mapping,
    keys: Vec<String>,
    handoffs: allocate::Handoffs,
}

impl Memo {
    /// As [`estimate`], from what this memo already holds where it can.
    pub fn estimate(&mut self, design: &Design, model: &Model) -> Result<Estimate, CompileError> {
        let planning = self.planning(design, model)?;
        let jobs = self.jobs(design, &planning);
        self.run(jobs, 1);
        let mut layers = layer_reports(&planning.g);
        let mut reports = Vec::new();
        for (st, key) in planning.m.stages.iter().zip(&planning.keys) {
            let (report, costs) = self.stages[key].as_ref().map_err(Clone::clone)?;
            // A stage just scheduled is a miss at its first look-up, not a hit.
            if !self.fresh.remove(key) {
                self.hits += 1;
            }
            let mut r = renamed(design, st, report);
            r.handoffs = planning.handoffs.notes(design, &planning.m, reports.len());
            reports.push(r);
            add_layer_costs(&mut layers, costs);
        }
        Ok(summarize(
            design,
            &planning.g,
            &planning.m.stages,
            reports,
            layers,
        ))
    }

    /// Schedules every stage of `designs` this memo does not hold, on up to `threads`
    /// threads, so that their [`estimate`](Memo::estimate)s find them all. Each stage's
    /// estimate depends on its key alone, so they are the same in any order and on any
    /// number of threads. (A Design the compiler refuses is left to its estimate.)
    pub fn prepare(&mut self, designs: &[Design], model: &Model, threads: usize) {
        let mut jobs: Vec<Job> = Vec::new();
        for d in designs {
            if let Ok(p) = self.planning(d, model) {
                for j in self.jobs(d, &p) {
                    if !jobs.iter().any(|k| k.key == j.key) {
                        jobs.push(j);
                    }
                }
            }
        }
        self.run(jobs, threads);
    }

    /// `design`'s graph, mapping and stage keys.
    fn planning(&mut self, design: &Design, model: &Model) -> Result<Planning, CompileError> {
        let base = base_key(design, model);
        let g = self.graph(design, model, &base)?;
        let m = map::mapping(design, &g)?;
        let handoffs = allocate::handoffs(design, &g, &m);
        let keys = m
            .stages
            .iter()
            .enumerate()
            .map(|(si, st)| {
                let unit = unit_of(design, st);
                let rows: Vec<_> = st.nodes.iter().map(|&i| &m.replicas[i]).collect();
                // The graph by its unit's shape (not its name: units of different sizes
                // may share one), the stage's unit by everything the passes read, its
                // replicas and bands, and the rows each replica computes.
                // The hand-offs it takes part in change its loads and stores.
                format!(
                    "{base}|{:?}|{:?}|{}|{:?}|{}|{}|{:?}|{:?}|{}",
                    unit_shape(&g.unit),
                    st.nodes,
                    m.mixed,
                    unit_shape(unit),
                    unit.h,
                    unit.bands,
                    rows,
                    m.band_ends[si],
                    handoffs.key(si)
                )
            })
            .collect();
        Ok(Planning {
            base,
            g,
            m,
            keys,
            handoffs,
        })
    }

    /// The stages of `design` (planned as `p`) this memo does not hold.
    fn jobs(&mut self, design: &Design, p: &Planning) -> Vec<Job> {
        let (g, m) = (&p.g, &p.m);
        let mut jobs: Vec<Job> = Vec::new();
        let mut allocs_made = None;
        for (si, (st, key)) in m.stages.iter().zip(&p.keys).enumerate() {
            if self.stages.contains_key(key) || jobs.iter().any(|j| &j.key == key) {
                continue;
            }
            let unit = unit_of(design, st);
            let (alloc, per_stage) =
                allocs_made.get_or_insert_with(|| allocate::placements(design, g, m));
            let alloc = per_stage.get(si).unwrap_or(alloc).clone();
            let gs = match map::same_shape(unit, &g.unit) {
                true => g.clone(),
                false => self
                    .shaped
                    .entry(format!(
                        "{}|{:?}|{:?}",
                        p.base,
                        unit_shape(&g.unit),
                        unit_shape(unit)
                    ))
                    .or_insert_with(|| {
                        Arc::new(Graph {
                            unit: unit.clone(),
                            ..(**g).clone()
                        })
                    })
                    .clone(),
            };
            jobs.push(Job {
                key: key.clone(),
                design: design.clone(),
                g: gs,
                stage: st.clone(),
                alloc,
                replicas: m.replicas.clone(),
                band_ends: m.band_ends[si].clone(),
            });
        }
        jobs
    }

    /// A floor under `design`'s round as [`estimate`](Memo::estimate) gives it, from the
    /// stages this memo holds: the slowest of them for its branch's frames (the round is
    /// at least every stage's); 0 when it holds none or the compiler refuses the Design.
    pub fn floor(&mut self, design: &Design, model: &Model) -> u64 {
        let Ok(p) = self.planning(design, model) else {
            return 0;
        };
        let per_branch = branch_frames(design, 0, 1);
        p.m.stages
            .iter()
            .zip(&p.keys)
            .filter_map(|(st, key)| match self.stages.get(key) {
                Some(Ok((r, _))) => Some(per_branch[st.branch] as u64 * r.estimated_cycles),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Schedules `jobs` on up to `threads` threads and keeps their estimates.
    fn run(&mut self, jobs: Vec<Job>, threads: usize) {
        let planned = super::par::map(&jobs, threads, Job::plan);
        for (j, p) in jobs.into_iter().zip(planned) {
            self.misses += 1;
            self.fresh.insert(j.key.clone());
            self.stages.insert(j.key, p);
        }
    }

    /// The legalized, fused graph of `model` for `design` (it depends on the widest unit).
    fn graph(
        &mut self,
        design: &Design,
        model: &Model,
        base: &str,
    ) -> Result<Arc<Graph>, CompileError> {
        // By the widest unit's shape: its name and replicas do not change the graph, and
        // a search meets every one of them.
        let widest = legalize::graph_unit(design)?;
        let key = format!("{base}|{:?}", unit_shape(&widest));
        if let Some(g) = self.graphs.get(&key) {
            return Ok(g.clone());
        }
        let g = Arc::new(pipeline::graph(design, model)?);
        self.graphs.insert(key, g.clone());
        Ok(g)
    }
}

/// What a Design's stage estimates depend on besides its units: the model, and the
/// Design's memory (but its ports), control and vector parameters and branch structure.
fn base_key(design: &Design, model: &Model) -> String {
    let branches: Vec<_> = design
        .branches
        .iter()
        .map(|b| (&b.name, b.batch, b.priority, b.fifo_depth, &b.from))
        .collect();
    // Not the memory ports: a stage's estimate is its engines' alone with a port; the
    // ports count only in the round (`summarize`).
    let m = &design.memory;
    let layers: Vec<&str> = model.layers.iter().map(|l| l.name.as_str()).collect();
    format!(
        "{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        model.name,
        layers,
        (m.data_width_bits, m.latency_cycles, m.bytes_per_cycle),
        design.control,
        design.vector,
        design.dataflow,
        branches
    )
}

/// A memoized stage report with this Design's names and engine indices.
fn renamed(design: &Design, st: &Stage, r: &StageReport) -> StageReport {
    let branch = &design.branches[st.branch];
    StageReport {
        branch: branch.name.clone(),
        unit: branch.units[st.unit].name.clone(),
        engines: (0..r.replica_beats.len())
            .map(|k| engine_of(design, st.branch, st.unit, k))
            .collect(),
        ..r.clone()
    }
}

/// The round of every branch's frames from the stages' estimates.
fn summarize(
    design: &Design,
    g: &Graph,
    stages: &[Stage],
    reports: Vec<StageReport>,
    layers: Vec<LayerReport>,
) -> Estimate {
    let per_branch = branch_frames(design, 0, 1);
    let frames_of = |s: &Stage| per_branch[s.branch] as u64;
    let compute = stages
        .iter()
        .zip(&reports)
        .map(|(st, r)| frames_of(st) * r.estimated_cycles)
        .max()
        .unwrap_or(0);
    let beats: u64 = stages
        .iter()
        .zip(&reports)
        .map(|(st, r)| frames_of(st) * r.beats)
        .sum();
    let ports = design.memory.ports.max(1) as usize;
    let mut port_beats = vec![0u64; ports];
    for (st, r) in stages.iter().zip(&reports) {
        for (&e, &b) in r.engines.iter().zip(&r.replica_beats) {
            port_beats[e % ports] += frames_of(st) * b;
        }
    }
    let bytes = u64::from(design.memory.data_width_bits / 8);
    let busiest = port_beats.iter().copied().max().unwrap_or(0);
    let memory = (busiest * bytes).div_ceil(u64::from(design.memory.bytes_per_cycle.max(1)));
    let round = compute.max(memory).max(1);
    let macs: u64 = layers.iter().map(|l| l.macs).sum();
    let macs_run: u64 = stages
        .iter()
        .map(|st| frames_of(st) * st.nodes.iter().map(|&i| g.nodes[i].macs).sum::<u64>())
        .sum();
    let pes: u64 = design
        .cores()
        .iter()
        .map(|(_, u, _)| u64::from(u.cpf * u.kpf))
        .sum();
    let branch_frames: Vec<usize> = (0..design.branches.len())
        .map(|b| match stages.iter().any(|s| s.branch == b) {
            true => per_branch[b],
            false => 0,
        })
        .collect();
    Estimate {
        stages: reports,
        layers,
        macs_per_frame: macs,
        branch_fps: Vec::new(),
        branch_frames,
        compute_cycles: compute,
        beats,
        port_beats,
        memory_cycles: memory,
        bound_cycles_per_round: round,
        cycles_per_round: round,
        one_round_cycles: None,
        cycles_per_frame: round,
        frames_per_second: 0.0,
        efficiency: 0.0,
        pes,
        macs_per_round: macs_run,
    }
    .with_round(design, round)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search meets the same units with other replica counts: the memo keeps one graph
    /// for them (it kept one per count and name, which a long search could not hold in
    /// memory), and its estimates stay the fresh ones.
    #[test]
    fn one_graph_per_unit_shape() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let d = crate::config::load(&root.join("configs/codec_avatar_small.toml")).unwrap();
        let model =
            crate::model::load(&root.join("models/codec_avatar/decoder_small.toml")).unwrap();
        let mut memo = Memo::default();
        for h in [2, 3, 1] {
            let mut v = d.clone();
            for u in v.branches.iter_mut().flat_map(|b| &mut b.units) {
                u.h = h;
            }
            let fresh = estimate(&v, &model).unwrap();
            let memoized = memo.estimate(&v, &model).unwrap();
            assert_eq!(
                memoized.cycles_per_round, fresh.bound_cycles_per_round,
                "h = {h}"
            );
        }
        assert_eq!(memo.graphs.len(), 1);
    }

    /// The floor is the slowest stage the memo holds: a Design estimated has its compute
    /// cycles (every stage held) as its floor; another with one unit changed has a floor
    /// from its other stages, at most its round (and nothing is scheduled for it).
    #[test]
    fn the_floor_is_under_the_round() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let d = crate::config::load(&root.join("configs/codec_avatar_small.toml")).unwrap();
        let model =
            crate::model::load(&root.join("models/codec_avatar/decoder_small.toml")).unwrap();
        let mut memo = Memo::default();
        assert_eq!(memo.floor(&d, &model), 0);
        let e = memo.estimate(&d, &model).unwrap();
        assert_eq!(memo.floor(&d, &model), e.compute_cycles);
        for unit in 0..d.branches[1].units.len() {
            let mut v = d.clone();
            v.branches[1].units[unit].h += 1;
            let scheduled = memo.misses;
            let floor = memo.floor(&v, &model);
            assert_eq!(memo.misses, scheduled, "the floor schedules nothing");
            let round = memo.estimate(&v, &model).unwrap().cycles_per_round;
            assert!(
                floor > 0 && floor <= round,
                "unit {unit}: {floor} > {round}"
            );
        }
    }
}
