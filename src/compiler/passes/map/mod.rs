//! map: where every layer runs (F-CAD's construction step, `stages`) and which rows each
//! engine computes (`rows`).
//!
//! - **Stages.** Every output to its branch and every layer to the branch that needs it,
//!   each branch's layers cut into one contiguous stage per unit (`stages`).
//! - **Replicas.** The `h` engines of a unit split every output by height into `h` bands;
//!   replica r of every stage of a chain computes the rows its band needs, back through the
//!   kernels' windows (`rows::replica_rows`).
//! - **Row bands.** A unit with `bands = B` computes each frame in B row bands, handing
//!   each on when it is done (`rows::bands`).
//!
//! A single-engine Design is the mapping of one stage (its one unit runs every layer), one
//! replica (every row) and one band.

pub mod links;
pub(crate) mod rows;
mod stages;

pub use stages::{node_cost, Stage};

use super::legalize::Graph;
use crate::compiler::CompileError;
use crate::design::{Branch, Design, Unit};
use std::ops::Range;

/// The layer graph and where its layers run.
pub struct Mapped {
    pub g: Graph,
    pub map: Mapping,
}

/// Where a graph's layers run.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// One per unit that runs layers, branch by branch, each branch's in unit order.
    pub stages: Vec<Stage>,
    /// Units of different array sizes run stages: tensors are stored pixel by pixel, and
    /// each stage sees them as rows of its own width (`allocate`).
    pub mixed: bool,
    /// Per node, per replica of its stage's unit: the output rows that replica computes.
    pub replicas: Vec<Vec<Range<usize>>>,
    /// Per stage, per replica, per band, per node: the end of the node's rows done once the
    /// band is done.
    pub band_ends: Vec<Vec<Vec<Vec<usize>>>>,
    /// The Design has one engine: its program runs one frame, hands nothing on, and may
    /// reuse a dead tensor's memory.
    pub single: bool,
}

impl Mapping {
    /// The unit stage `k` runs on.
    pub fn unit<'d>(&self, design: &'d Design, k: usize) -> &'d Unit {
        unit_of(design, &self.stages[k])
    }
}

/// One replica's part of a frame: its engine, the rows of every node it computes (empty
/// outside its stage), and per band, per node, the end of the rows done once the band is
/// done (`rows::bands`).
#[derive(Debug, Clone)]
pub struct Part {
    pub engine: usize,
    pub rows: Vec<Range<usize>>,
    pub ends: Vec<Vec<usize>>,
}

impl Part {
    /// Bands it computes a frame in.
    pub fn bands(&self) -> usize {
        self.ends.len()
    }

    /// Per node, the rows band k computes.
    pub fn band_rows(&self, k: usize) -> Vec<Range<usize>> {
        let start = |i: usize| match k {
            0 => self.rows[i].start,
            _ => self.ends[k - 1][i],
        };
        (0..self.rows.len())
            .map(|i| start(i)..self.ends[k][i])
            .collect()
    }

    /// The first band after which rows `..end` of node i are done (None: it computes none
    /// of them).
    pub fn band_done(&self, i: usize, end: usize) -> Option<usize> {
        let r = &self.rows[i];
        if end <= r.start {
            return None;
        }
        let end = end.min(r.end);
        self.ends.iter().position(|e| e[i] >= end)
    }
}

impl Mapping {
    /// Every replica's part of a frame, per stage.
    pub fn parts(&self, design: &Design, g: &Graph) -> Vec<Vec<Part>> {
        (0..self.stages.len())
            .map(|k| {
                let st = &self.stages[k];
                let mut in_stage = vec![false; g.nodes.len()];
                for &i in &st.nodes {
                    in_stage[i] = true;
                }
                self.band_ends[k]
                    .iter()
                    .enumerate()
                    .map(|(r, ends)| Part {
                        engine: engine_of(design, st.branch, st.unit, r),
                        rows: (0..g.nodes.len())
                            .map(|i| match in_stage[i] {
                                true => self.replicas[i].get(r).cloned().unwrap_or(0..0),
                                false => 0..0,
                            })
                            .collect(),
                        ends: ends.clone(),
                    })
                    .collect()
            })
            .collect()
    }
}

/// Whether `design` is compiled per engine: more than one engine.
pub fn is_elastic(design: &Design) -> bool {
    design.cores().len() > 1
}

/// The mapping of `g` onto `design`'s engines, with the graph.
pub fn run(design: &Design, g: Graph) -> Result<Mapped, CompileError> {
    Ok(Mapped {
        map: mapping(design, &g)?,
        g,
    })
}

/// The mapping of `g` onto `design`'s engines.
pub fn mapping(design: &Design, g: &Graph) -> Result<Mapping, CompileError> {
    if !is_elastic(design) {
        return Ok(single(g));
    }
    let stages = stages::stages(design, g)?;
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
        single: false,
    })
}

/// One engine: one stage of every node, one replica of every row, one band.
fn single(g: &Graph) -> Mapping {
    let ends: Vec<usize> = g.nodes.iter().map(|n| n.out[0]).collect();
    Mapping {
        stages: vec![Stage {
            branch: 0,
            unit: 0,
            nodes: (0..g.nodes.len()).collect(),
        }],
        mixed: false,
        replicas: ends
            .iter()
            .map(|&e| std::iter::once(0..e).collect())
            .collect(),
        band_ends: vec![vec![vec![ends]]],
        single: true,
    }
}

pub fn unit_of<'d>(design: &'d Design, st: &Stage) -> &'d Unit {
    &design.branches[st.branch].units[st.unit]
}

/// Engine index of replica `r` of unit `u` of branch `b`.
pub fn engine_of(design: &Design, b: usize, u: usize, r: usize) -> usize {
    let (bn, un) = (&design.branches[b].name, &design.branches[b].units[u].name);
    design.core_index(bn, un, r as u32).expect("engine exists")
}

/// Whether the passes see units `a` and `b` as the same: they do not read a unit's name,
/// replicas or bands, so a stage whose unit has the graph's shape runs on the graph as it
/// is, and one of another shape on a copy with its unit.
pub fn same_shape(a: &Unit, b: &Unit) -> bool {
    unit_shape(a) == unit_shape(b)
}

/// Unit `u` as the passes see it (no name, one replica, one band).
pub fn unit_shape(u: &Unit) -> Unit {
    Unit {
        name: String::new(),
        h: 1,
        bands: 1,
        ..u.clone()
    }
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

/// `e` said of unit `branch.u`.
pub fn in_unit(mut e: CompileError, branch: &str, u: &Unit) -> CompileError {
    e.rule = format!("on unit {branch}.{}: {}", u.name, e.rule);
    e
}
