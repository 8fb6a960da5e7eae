//! The compiler: a model onto a Design, one program per engine. The pipeline is typed and
//! listed once (`pipeline`): each pass under `passes/` is a function from one IR to the
//! next,
//!
//! ```text
//! Model -legalize-> Graph -fuse-> Graph -map-> Mapped -allocate-> Placed
//!   -tile-> Tiling (per stage) -schedule-> Share (per replica) -frames-> Framed
//!   -sync-> Synced (per engine) -encode-> Program
//! ```
//!
//! with the mapping onto engines one pass of it (a single-engine Design is one stage of one
//! replica, one band and one frame). The cost model (`cost`) is an analysis below the
//! passes: the tiler and the scheduler ask it what an instruction takes, the pipeline
//! times each replica's schedule with it for the reports, `fuse` gets its costs through the
//! pipeline, and the estimate of an elastic run (`estimate`, which `dse` queries through a
//! [`Memo`](estimate::Memo)) runs the pipeline up to the schedule and times it.
//!
//! The expected output of a program is not the compiler's business: it comes from the
//! golden model, beside the compiler (`crate::verify`).

pub mod cost;
pub mod estimate;
mod par;
pub mod passes;
pub mod pipeline;
pub mod rowprog;
pub mod step;

pub use estimate::{estimate, Estimate, Memo};
pub use passes::frames::frame_model;
pub use pipeline::{compile, compile_frames, compile_rounds, is_elastic};

use crate::design::Design;
use crate::interp::Memory;
use crate::isa::Instr;
use crate::numeric::Format;
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

impl CompileError {
    /// The message with the files it concerns named first (`model.toml for config.toml`).
    pub fn in_files(&self, model: &std::path::Path, config: &std::path::Path) -> String {
        self.message(&format!("{} for {}: ", model.display(), config.display()))
    }

    fn message(&self, files: &str) -> String {
        let what = match &self.layer {
            Some(l) => format!("cannot compile layer {l}"),
            None => "cannot compile the model".to_string(),
        };
        crate::refusal::Refusal::new(format!("{files}{what}"), &self.rule, &self.fix).to_string()
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(""))
    }
}

impl std::error::Error for CompileError {}

/// Where a tensor lives in external memory.
///
/// Rows of `tile` channels of one pixel, `beats` beats each. Stored tile by tile (every
/// pixel of channel tile 0, then of tile 1, ...) on one unit or units of one array size;
/// pixel by pixel (every tile of pixel 0, then of pixel 1, ...) when units of different
/// sizes share tensors, so that a row of 2t channels is two consecutive rows of t channels
/// and every unit reads the same bytes as rows of its own width ([`TensorLayout::view`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorLayout {
    pub name: String,
    pub h: usize,
    pub w: usize,
    pub c: usize,
    /// The element format of its rows.
    pub format: Format,
    /// Zero border kept around the tensor (the largest padding of its consumers).
    pub pad: usize,
    /// Channel tiles of `tile` channels each.
    pub tiles: usize,
    pub tile: usize,
    /// First beat, and beats per pixel row of one channel tile (the elements, then for a
    /// block-scaled format one beat with the scale).
    pub base: u64,
    pub beats: u64,
    /// Beats from a pixel's row to the next pixel's row of the same tile, and from a
    /// tile's row to the next tile's row of the same pixel.
    pub pixel_stride: u64,
    pub tile_stride: u64,
    /// A tensor of accumulator values (a layer with `output_type = "accumulator"`) is
    /// stored as `planes` slices of `format`'s width, low bits first: slice p of channel
    /// tile ct is stored as channel tile `p * tiles / planes + ct` (`tiles` counts every
    /// slice's). 1 for every other tensor.
    pub planes: usize,
}

impl TensorLayout {
    /// Stored tile by tile.
    #[allow(clippy::too_many_arguments)]
    pub fn tiled(
        name: &str,
        [h, w, c]: [usize; 3],
        format: Format,
        pad: usize,
        tile: usize,
        beats: u64,
        base: u64,
    ) -> TensorLayout {
        let (hp, wp) = (h + 2 * pad, w + 2 * pad);
        TensorLayout {
            name: name.to_string(),
            h,
            w,
            c,
            format,
            pad,
            tiles: c.div_ceil(tile),
            tile,
            base,
            beats,
            pixel_stride: beats,
            tile_stride: (hp * wp) as u64 * beats,
            planes: 1,
        }
    }

    /// The same tensor stored as `planes` slices (`TensorLayout::planes`).
    pub fn sliced(mut self, planes: usize) -> TensorLayout {
        self.tiles = self.c.div_ceil(self.tile) * planes;
        self.planes = planes;
        self
    }

    /// The channel tiles of one slice.
    pub fn slice_tiles(&self) -> usize {
        self.tiles / self.planes
    }

    /// The format of the tensor's values: `format`, or for a sliced tensor the signed
    /// integer of all its slices' bits (the accumulator type).
    pub fn value_format(&self) -> Format {
        match self.format {
            Format::Int(t) if self.planes > 1 => Format::Int(crate::numeric::IntType::new(
                true,
                t.bits * self.planes as u32,
            )),
            f => f,
        }
    }

    /// Stored pixel by pixel, the channels padded to whole tiles of `tile`.
    pub fn interleaved(mut self) -> TensorLayout {
        self.tile_stride = self.beats;
        self.pixel_stride = self.tiles as u64 * self.beats;
        self
    }

    /// The same bytes of a tensor stored pixel by pixel, as rows of `tile` channels of
    /// `beats` beats (a divisor or multiple of the stored tile, in whole beats).
    pub fn view(&self, tile: usize, beats: u64) -> TensorLayout {
        debug_assert_eq!(
            self.tile_stride, self.beats,
            "a view of an interleaved tensor"
        );
        // A slice spans all of its stored channel tiles (the next slice starts after them).
        let per_slice = match self.planes {
            1 => self.c.div_ceil(tile),
            _ => (self.slice_tiles() * self.tile).div_ceil(tile),
        };
        TensorLayout {
            tiles: per_slice * self.planes,
            tile,
            beats,
            tile_stride: beats,
            ..self.clone()
        }
    }

    pub fn hp(&self) -> usize {
        self.h + 2 * self.pad
    }
    pub fn wp(&self) -> usize {
        self.w + 2 * self.pad
    }
    /// Beat address of pixel (y, x) of channel tile `ct`, in padded coordinates.
    pub fn addr(&self, ct: usize, y: usize, x: usize) -> u64 {
        self.base + ct as u64 * self.tile_stride + ((y * self.wp() + x) as u64) * self.pixel_stride
    }
    /// Beats from the first row to the end of the last.
    pub fn size_beats(&self) -> u64 {
        let pixels = (self.hp() * self.wp()) as u64;
        (self.tiles as u64 * self.tile_stride).max(pixels * self.pixel_stride)
    }
    /// Beats of the elements of a row (without the scale beat).
    pub fn elem_beats(&self) -> u64 {
        self.beats - u64::from(self.format.block_scaled())
    }
}

/// Where one output tensor of one frame is left in external memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputRegion {
    pub name: String,
    pub frame: usize,
    pub layout: TensorLayout,
}

/// Estimated cycles of one layer (see `passes::estimate`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LayerReport {
    pub name: String,
    pub op: String,
    /// The datatype the layer runs in (per-layer and automatic choices included).
    pub datatype: String,
    pub macs: u64,
    pub instructions: usize,
    /// Beats it moves through the memory port, and through the on-chip hand-off buffers.
    pub beats: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub handoff_beats: u64,
    pub estimated_cycles: u64,
    /// Program indices of its instructions (engine 0), for per-layer cycles of a run.
    #[serde(skip)]
    pub pcs: Vec<usize>,
}

/// A compiled program and everything needed to run it.
#[derive(Debug, Clone)]
pub struct Program {
    pub design_hash: u64,
    pub instrs: Vec<Instr>,
    /// External memory before the run: weights, biases, the input.
    pub dmem: Memory,
    /// The first output tensor's layout (of frame 0).
    pub output: TensorLayout,
    /// Every output of every frame.
    pub outputs: Vec<OutputRegion>,
    pub layers: Vec<LayerReport>,
    /// The groups of layers the compiler fused (`passes::fuse`).
    pub fused: Vec<passes::fuse::Fused>,
    /// MACs of the whole network (of one frame).
    pub macs: u64,
    /// MACs the whole program does (every frame of every branch).
    pub macs_run: u64,
    /// For an elastic Design: every engine's program, the stage map and every frame's
    /// output (`instrs` is then engine 0's program).
    pub elastic: Option<Elastic>,
}

impl Program {
    pub fn estimated_cycles(&self) -> u64 {
        self.layers.iter().map(|l| l.estimated_cycles).sum()
    }

    /// The beats of the output region, as the hardware leaves them (the hull of every
    /// output of every frame).
    pub fn output_range(&self) -> std::ops::Range<u64> {
        let outs = &self.outputs;
        let lo = outs.iter().map(|o| o.layout.base).min().unwrap_or(0);
        let hi = outs
            .iter()
            .map(|o| o.layout.base + o.layout.size_beats())
            .max()
            .unwrap_or(0);
        lo..hi
    }

    /// Frames the program runs (one for a single engine).
    pub fn frames(&self) -> usize {
        self.outputs.iter().map(|o| o.frame + 1).max().unwrap_or(1)
    }

    /// The fewest cycles the program can take: every frame's MACs over the PEs of every
    /// engine that runs a program.
    pub fn ideal_cycles(&self, design: &Design) -> u64 {
        let pes: u64 = match &self.elastic {
            Some(_) => design
                .cores()
                .iter()
                .map(|(_, u, _)| u64::from(u.cpf * u.kpf))
                .sum(),
            None => {
                let u = design.cores()[0].1;
                u64::from(u.cpf * u.kpf)
            }
        };
        self.macs_run.div_ceil(pes)
    }

    /// External memory as the hardware starts from it: the data image (`dmem`), then
    /// every engine's instructions, engine 0's first, each instruction in
    /// `ceil(INSTR_BITS / memory width)` beats, low bits first; and each engine's first
    /// beat, the value of its `prog_base` CSR. The engines fetch their programs from there.
    pub fn memory_image(&self) -> (crate::interp::Memory, Vec<u64>) {
        self.dmem.with_programs(&self.programs())
    }

    /// Beats of `memory_image`: the data and every engine's instructions.
    pub fn footprint_beats(&self) -> u64 {
        let ibeats = crate::isa::instr_beats(self.dmem.beat_bits);
        let instrs: u64 = self.programs().iter().map(|p| p.len() as u64).sum();
        self.dmem.beats() as u64 + instrs * ibeats
    }

    /// Every engine's program (one for a single engine).
    pub fn programs(&self) -> Vec<&[Instr]> {
        match &self.elastic {
            Some(e) => e.programs.iter().map(Vec::as_slice).collect(),
            None => vec![self.instrs.as_slice()],
        }
    }
}

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
    /// Beats its replicas move through the on-chip hand-off buffers per frame (the rows
    /// they write into the next unit's and read from their own).
    #[serde(skip_serializing_if = "is_zero")]
    pub handoff_beats: u64,
    /// The tensors its unit reads from its hand-off buffers, and those of its input it
    /// reads from memory instead, with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub handoffs: Vec<String>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl StageReport {
    /// ", in N row bands" for a stage that hands its frames on in bands, else nothing.
    pub fn in_bands(&self) -> String {
        match self.bands {
            0 | 1 => String::new(),
            n => format!(", in {n} row bands"),
        }
    }

    /// "N beats of external memory per frame", and the beats through the hand-off buffers
    /// where there are any.
    pub fn traffic(&self) -> String {
        match self.handoff_beats {
            0 => format!("{} beats of external memory per frame", self.beats),
            h => format!(
                "{} beats of external memory and {h} through hand-off buffers per frame",
                self.beats
            ),
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
