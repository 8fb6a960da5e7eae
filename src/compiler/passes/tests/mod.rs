//! Unit tests of the passes, one file per pass, over small Designs and models written here
//! (and seeded random ones for the properties).

mod allocate;
mod fuse;
mod legalize;
mod schedule;
mod sync;
mod tile;

use crate::compiler::passes as p;
use crate::compiler::passes::allocate::Alloc;
use crate::compiler::passes::legalize::Graph;
use crate::compiler::passes::tile::Tiling;
use crate::compiler::step::Step;
use crate::compiler::{pipeline, CompileError};
use crate::design::Design;
use crate::model::Model;

/// Scratchpad depths of a test Design: input, weight, accumulator, output.
#[derive(Debug, Clone, Copy)]
pub struct Depths {
    pub input: u32,
    pub weight: u32,
    pub acc: u32,
    pub output: u32,
}

pub const ROOMY: Depths = Depths {
    input: 512,
    weight: 256,
    acc: 256,
    output: 256,
};

/// An int8 `t` x `t` Design with the given depths and every vector operation.
pub fn design(t: u32, d: Depths) -> Design {
    let src = format!(
        r#"name = "passes_test"
[array]
rows = {t}
cols = {t}
[datatype]
input = "int8"
weight = "int8"
accumulator = "int32"
output = "int8"
[buffers]
input_depth = {}
weight_depth = {}
accumulator_depth = {}
output_depth = {}
accumulator_double_buffer = true
[memory]
data_width_bits = 32
[vector]
ops = ["bias", "requantize", "relu", "maxpool", "add"]
"#,
        d.input, d.weight, d.acc, d.output
    );
    crate::config::parse_str(&src, "passes_test.toml", "passes_test")
        .unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// A model from its TOML text.
pub fn model(src: &str) -> Model {
    crate::model::parse_str(src, "passes_test_model.toml", std::path::Path::new("."))
        .unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// What a single-engine Design's pipeline has made after the pass `last` (fuse, allocate,
/// tile or schedule), for the tests to look at.
pub struct Through<'a> {
    pub design: &'a Design,
    graph: Graph,
    alloc: Option<Alloc>,
    tiling: Option<Vec<Tiling>>,
    pub steps: Option<Vec<Step>>,
}

impl Through<'_> {
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
    pub fn alloc(&self) -> &Alloc {
        self.alloc.as_ref().expect("allocate ran")
    }
    pub fn tiling(&self) -> &[Tiling] {
        self.tiling.as_ref().expect("tile ran")
    }
}

/// The single-engine pipeline run up to and including the pass `last`.
pub fn through<'a>(
    design: &'a Design,
    model: &'a Model,
    last: &str,
) -> Result<Through<'a>, CompileError> {
    assert!(
        ["fuse", "allocate", "tile", "schedule"].contains(&last),
        "no pass named {last} to stop after"
    );
    let graph = pipeline::graph(design, model)?;
    let mut t = Through {
        design,
        graph,
        alloc: None,
        tiling: None,
        steps: None,
    };
    if last == "fuse" {
        return Ok(t);
    }
    let placed = p::allocate::run(design, p::map::run(design, t.graph)?)?;
    t.graph = placed.mapped.g;
    t.alloc = Some(placed.alloc);
    if last == "allocate" {
        return Ok(t);
    }
    let nodes: Vec<usize> = (0..t.graph.nodes.len()).collect();
    t.tiling = Some(p::tile::run(design, &t.graph, t.alloc(), &nodes)?);
    if last == "tile" {
        return Ok(t);
    }
    let rows: Vec<_> = t.graph.nodes.iter().map(|n| 0..n.out[0]).collect();
    t.steps = Some(p::schedule::run(
        design,
        &t.graph,
        t.alloc(),
        t.tiling(),
        &rows,
    ));
    Ok(t)
}

/// Run `program` on the interpreter: its output must equal the golden model's; `what`
/// names the case in the failure.
pub fn assert_golden(
    design: &Design,
    model: &Model,
    program: &crate::compiler::Program,
    what: &str,
) {
    let want = crate::verify::expected(design, model, program);
    let got = crate::verify::interpret(design, program).expect("runs");
    let c = crate::verify::compare(program, &want, &got);
    assert!(c.matched(), "{what}: {} {} differ", c.differing, c.unit);
}

/// xorshift64* for seeded random shapes.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Uniform in lo..=hi.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let r = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        lo + (r % (hi - lo + 1) as u64) as usize
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.range(0, xs.len() - 1)]
    }
}

/// A random one- or two-layer convolutional model: a convolution (kernel 1, 3 or 5, stride
/// 1 or 2, some padding, sometimes read as a pad value, optional ReLU), sometimes followed by a fused 2x2 max-pool or a
/// residual add of its own input. Returns the TOML text.
pub fn random_model(rng: &mut Rng) -> String {
    let (h, w, c) = (rng.range(1, 40), rng.range(1, 40), rng.range(1, 50));
    let k = rng.pick(&[1usize, 3, 5]);
    let stride = rng.pick(&[1usize, 2]);
    let pad = rng.range(0, k / 2);
    let (h, w) = (h.max(k), w.max(k));
    let mut src = format!(
        "name = \"random\"\nseed = {}\n[input]\nshape = [{h}, {w}, {c}]\n",
        rng.range(0, 1000)
    );
    let relu = if rng.range(0, 1) == 1 {
        "activation = \"relu\"\n"
    } else {
        ""
    };
    let (oh, ow) = (
        (h + 2 * pad - k) / stride + 1,
        (w + 2 * pad - k) / stride + 1,
    );
    let same = stride == 1 && 2 * pad + 1 == k;
    let cout = if same && rng.range(0, 2) == 0 {
        c
    } else {
        rng.range(1, 70)
    };
    src += &format!(
        "[[layer]]\nname = \"conv\"\nop = \"conv2d\"\nkernel = {k}\nstride = {stride}\npadding = {pad}\nout_channels = {cout}\n{relu}requant = {{ multiplier = 77, shift = 12 }}\n"
    );
    // Some padded convolutions read an input zero point at their padding.
    if pad > 0 && rng.range(0, 1) == 1 {
        src += &format!("pad_value = {}\n", rng.range(0, 255) as i64 - 128);
    }
    match rng.range(0, 2) {
        1 if oh >= 2 && ow >= 2 => {
            src += "[[layer]]\nname = \"pool\"\nop = \"maxpool\"\nkernel = 2\nstride = 2\n";
        }
        2 if same && cout == c => {
            src += "[[layer]]\nname = \"sum\"\nop = \"add\"\nresidual = \"input\"\n";
        }
        _ => {}
    }
    src
}

/// Random scratchpad depths (powers of two) for a `t` x `t` array, from barely one tile
/// upwards.
pub fn random_depths(rng: &mut Rng, t: u32) -> Depths {
    let mut pow2 = |lo: u32, hi: u32| {
        let (a, b) = (lo.trailing_zeros() as usize, hi.trailing_zeros() as usize);
        1u32 << rng.range(a, b)
    };
    Depths {
        input: pow2(2 * t, 1024),
        weight: pow2(2 * t, 512),
        acc: pow2(t, 512),
        output: pow2(4 * t, 512),
    }
}
