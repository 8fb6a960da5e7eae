//! The compiler: model → program for one engine of a Design. Passes, one per file under
//! `passes/`, each a function from one representation to the next:
//!
//! | pass | does |
//! |---|---|
//! | legalize | checks the model against the Design and builds the layer graph |
//! | fuse | folds a residual add into the convolution that feeds it |
//! | allocate | places tensors, weights and biases in external memory |
//! | tile | splits each layer into tiles that fit the scratchpads |
//! | schedule | emits load/matmul/vector/store instructions with their buffer accesses |
//! | sync | turns buffer dependencies between queues into semaphore waits and signals |
//! | encode | checks and encodes the instructions, builds the memory images |

pub mod passes;

use crate::design::Design;
use crate::interp::Memory;
use crate::isa::Instr;
use crate::model::Model;
use std::fmt;

/// A compile error: the layer, the rule and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    pub layer: Option<String>,
    pub rule: String,
    pub fix: String,
}

impl CompileError {
    pub fn new(layer: Option<&str>, rule: impl Into<String>, fix: impl Into<String>) -> Self {
        CompileError {
            layer: layer.map(str::to_string),
            rule: rule.into(),
            fix: fix.into(),
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.layer {
            Some(l) => writeln!(f, "error: cannot compile layer {l}")?,
            None => writeln!(f, "error: cannot compile the model")?,
        }
        writeln!(f, "  rule: {}", self.rule)?;
        write!(f, "  fix:  {}", self.fix)
    }
}

impl std::error::Error for CompileError {}

/// Where a tensor lives in external memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorLayout {
    pub name: String,
    pub h: usize,
    pub w: usize,
    pub c: usize,
    /// Zero border kept around the tensor (the largest padding of its consumers).
    pub pad: usize,
    /// Channel tiles of `tile` channels each.
    pub tiles: usize,
    pub tile: usize,
    /// First beat and beats per pixel row of one channel tile.
    pub base: u64,
    pub beats: u64,
}

impl TensorLayout {
    pub fn hp(&self) -> usize {
        self.h + 2 * self.pad
    }
    pub fn wp(&self) -> usize {
        self.w + 2 * self.pad
    }
    /// Beat address of pixel (y, x) of channel tile `ct`, in padded coordinates.
    pub fn addr(&self, ct: usize, y: usize, x: usize) -> u64 {
        self.base + (((ct * self.hp() + y) * self.wp() + x) as u64) * self.beats
    }
    pub fn size_beats(&self) -> u64 {
        (self.tiles * self.hp() * self.wp()) as u64 * self.beats
    }
}

/// Estimated cycles of one layer (see `passes::tile`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LayerReport {
    pub name: String,
    pub op: String,
    /// The datatype the layer runs in (per-layer and automatic choices included).
    pub datatype: String,
    pub macs: u64,
    pub instructions: usize,
    pub estimated_cycles: u64,
}

/// A compiled program and everything needed to run and check it.
#[derive(Debug, Clone)]
pub struct Program {
    pub design_hash: u64,
    pub instrs: Vec<Instr>,
    /// External memory before the run: weights, biases, the input.
    pub dmem: Memory,
    /// The output tensor's layout and its expected contents (the golden model's).
    pub output: TensorLayout,
    pub expected: Memory,
    pub layers: Vec<LayerReport>,
    /// Ideal cycles of the whole network: MACs / PEs.
    pub macs: u64,
}

impl Program {
    pub fn estimated_cycles(&self) -> u64 {
        self.layers.iter().map(|l| l.estimated_cycles).sum()
    }

    /// The beats of the output region, as the hardware leaves them.
    pub fn output_range(&self) -> std::ops::Range<u64> {
        self.output.base..self.output.base + self.output.size_beats()
    }
}

/// Compile `model` for the single engine of `design`.
pub fn compile(design: &Design, model: &Model) -> Result<Program, CompileError> {
    let graph = passes::legalize::run(design, model)?;
    let graph = passes::fuse::run(graph);
    let alloc = passes::allocate::run(design, &graph);
    let tiled = passes::tile::run(design, &graph, &alloc)?;
    let scheduled = passes::schedule::run(design, &graph, &alloc, &tiled);
    let synced = passes::sync::run(scheduled, design.control.queue_depth);
    passes::encode::run(design, model, &graph, &alloc, &tiled, synced)
}
