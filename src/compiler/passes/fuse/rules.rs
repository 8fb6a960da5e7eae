//! The fusion rules, each a small graph pattern (DNNVM): the kinds of its nodes, the tensor
//! edges between them, a guard that says when the hardware can run the matched layers as
//! one, and the rewrite that makes them one. `strategy` finds the matches (VF2 subgraph
//! isomorphism on the layer graph) and chooses among overlapping ones.

use super::super::allocate::window;
use super::super::legalize::{Graph, Node};
use crate::model::lower::{Lowered, Stencil, Taps};
use crate::model::Requant;
use crate::numeric::Precision;

/// What a pattern node matches, by the work it lowers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer weighted window (a convolution) on the array or in the window unit, or
    /// a small float one (FP8, BF16) on the array (whose vector unit adds a residual).
    Conv,
    /// An integer 1x1 weighted window (stride 1, no padding, one group) on the array.
    Expand,
    /// An integer weighted window in the window unit (a depthwise convolution).
    Depthwise,
    /// A one-tap window of sums that combines its input with a second tensor (add, mul).
    Add,
    /// A window of maxima (a max-pool).
    MaxPool,
    /// An element-wise row program of one pass without per-channel parameters (GELU,
    /// SiLU, sigmoid, tanh).
    Elementwise,
}

impl Kind {
    pub fn matches(self, g: &Graph, n: &Node) -> bool {
        let conv = n.weighted() && integer(g, n) && n.place.is_none();
        match self {
            Kind::Conv => conv || (n.weighted() && mini(g, n) && !n.window && n.place.is_none()),
            Kind::Expand => {
                conv && !n.window
                    && matches!(
                        n.work,
                        Lowered::Stencil(Stencil {
                            transposed: false,
                            kh: 1,
                            kw: 1,
                            stride: 1,
                            pad: 0,
                            taps: Taps::Weighted { groups: 1, .. },
                            ..
                        })
                    )
            }
            Kind::Depthwise => conv && n.window,
            Kind::Add => {
                n.residual.is_some()
                    && matches!(&n.work, Lowered::Stencil(s) if s.taps == Taps::Sum)
            }
            Kind::MaxPool => matches!(&n.work, Lowered::Stencil(s) if s.taps == Taps::Max),
            Kind::Elementwise => n.work.rows().is_some_and(|w| {
                w.elementwise()
                    && w.passes.len() == 1
                    && crate::interp::param_rows(&crate::compiler::rowprog::flags(&w.passes[0]))
                        == 0
            }),
        }
    }
}

/// How a layer reads the tensor of the layer before it on a pattern edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// As the tensor its matmul (or pool, or add) streams.
    Input,
    /// As the residual operand of an add.
    Residual,
    /// Otherwise: as both, or through an in-place concat (no pattern has such an edge).
    Other,
}

/// A fusion rule.
pub struct Rule {
    pub name: &'static str,
    /// The pattern's nodes.
    pub kinds: &'static [Kind],
    /// The pattern's edges: (from, to, role), indices into `kinds`.
    pub edges: &'static [(usize, usize, Role)],
    /// Whether the hardware can run the matched nodes (in pattern order) fused.
    pub guard: fn(&Graph, &[usize]) -> bool,
    /// Fuse them (the graph's nodes before the first matched one are untouched; later
    /// ones may shift).
    pub apply: fn(&mut Graph, &[usize]),
    /// It keeps a tensor on chip, which only a single-engine program can.
    pub on_chip: bool,
}

/// Every rule.
pub const RULES: &[Rule] = &[
    Rule {
        name: "conv+add",
        kinds: &[Kind::Conv, Kind::Add],
        edges: &[(0, 1, Role::Input)],
        guard: conv_add,
        apply: fold_add,
        on_chip: false,
    },
    Rule {
        name: "conv+maxpool",
        kinds: &[Kind::Conv, Kind::MaxPool],
        edges: &[(0, 1, Role::Input)],
        guard: conv_pool,
        apply: fold_pool,
        on_chip: false,
    },
    Rule {
        name: "conv+rows",
        kinds: &[Kind::Conv, Kind::Elementwise],
        edges: &[(0, 1, Role::Input)],
        guard: conv_rows,
        apply: fold_rows,
        on_chip: false,
    },
    Rule {
        name: "expand+depthwise",
        kinds: &[Kind::Expand, Kind::Depthwise],
        edges: &[(0, 1, Role::Input)],
        guard: expand_depthwise,
        apply: keep,
        on_chip: true,
    },
    Rule {
        name: "expand+depthwise+add",
        kinds: &[Kind::Expand, Kind::Depthwise, Kind::Add],
        edges: &[(0, 1, Role::Input), (1, 2, Role::Input)],
        guard: expand_depthwise_add,
        apply: keep_and_fold_add,
        on_chip: true,
    },
];

/// The node computes on the integer path (the other datapaths' vector path has no add or
/// pool).
pub fn integer(g: &Graph, n: &Node) -> bool {
    matches!(g.unit.datatype.precisions[n.prec], Precision::Int(_))
}

/// Node `n` runs in a small float format (FP8, BF16), whose vector unit adds a bias and a
/// residual but does not pool.
pub fn mini(g: &Graph, n: &Node) -> bool {
    matches!(g.unit.datatype.precisions[n.prec], Precision::Float(_))
}

/// Node `a`'s output is read by node `a + 1` only, as its streamed input, and is not a
/// model output.
fn only_next(g: &Graph, a: usize) -> bool {
    let name = &g.nodes[a].name;
    a + 1 < g.nodes.len()
        && g.nodes[a + 1].input == *name
        && g.consumers(name) == vec![a + 1]
        && !g.is_output(name)
}

/// A convolution followed by an add that reads it (not as its residual) and can take its
/// requantized value as it is: the add folds into the convolution's vector instruction
/// and the add's activation moves with it. A plain add needs identity requantization (y =
/// saturate(requant(acc) + residual)); the quantized form (and mul) needs the convolution's
/// zero point to be its input zero point (the vector unit subtracts the requantization's
/// zero point from q before combining; the add's own pass requantizes with that zero
/// point, `Add::lower`).
fn conv_add(g: &Graph, m: &[usize]) -> bool {
    let (c, a) = (&g.nodes[m[0]], &g.nodes[m[1]]);
    let (cp, ap) = (c.post(), a.post());
    m[1] == m[0] + 1
        && only_next(g, m[0])
        && !cp.relu
        && cp.clamp.is_none()
        && cp.negative_multiplier.is_none()
        && c.residual.is_none()
        && c.pool.is_none()
        && c.then.is_none()
        && a.residual.as_deref() != Some(c.name.as_str())
        && match ap.combine {
            None => ap.requant == Requant::IDENTITY,
            Some(_) => !cp.raw && cp.requant.zero_point == ap.requant.zero_point,
        }
}

fn fold_add(g: &mut Graph, m: &[usize]) {
    let add = g.nodes.remove(m[1]);
    let (relu, clamp) = (add.post().relu, add.post().clamp);
    let conv = &mut g.nodes[m[0]];
    let post = &mut conv.stencil_mut().post;
    post.relu = relu;
    post.clamp = clamp;
    conv.residual = add.residual;
    conv.combine = add.combine;
    conv.broadcast = add.broadcast;
    conv.name = add.name;
    conv.out_format = add.out_format;
    conv.fixed_scale = add.fixed_scale;
}

/// A convolution (on the array) followed by a max-pool without padding that only it
/// feeds: the convolution runs once per pool tap at the pooled positions and the vector
/// unit keeps the running maximum.
fn conv_pool(g: &Graph, m: &[usize]) -> bool {
    let (c, p) = (&g.nodes[m[0]], &g.nodes[m[1]]);
    let (k, stride, pad) = (p.stencil().kh, p.stencil().stride, p.stencil().pad);
    if pad != 0 || !integer(g, c) {
        return false;
    }
    let (kh, kw, _, _) = window(c);
    m[1] == m[0] + 1
        && only_next(g, m[0])
        && !c.window
        // A pool the window unit runs reads each input once; fused, a pool whose windows
        // overlap would run the convolution at every tap.
        && !(p.window && k > stride)
        // Each pool tap would need its own pixels' bias.
        && c.post().untied_bias.is_empty()
        && c.residual.is_none()
        && c.pool.is_none()
        // Each pool tap becomes a matmul over the pooled pixels; with fewer pixels than it
        // takes to hide the next weights' preload, the preload would dominate.
        && (p.out[0] * p.out[1]) as u64 >= crate::compiler::cost::preload_rows(g.unit.cpf)
        // A 1x1 convolution (a stem whose taps are packed into channels) reads each pool
        // tap's pixels as separate strided windows: measured on ResNet-18's stem on 16x16,
        // 1571150 cycles fused, 634942 apart.
        && kh * kw > 1
}

fn fold_pool(g: &mut Graph, m: &[usize]) {
    let pooled = g.nodes.remove(m[1]);
    let (k, stride) = (pooled.stencil().kh, pooled.stencil().stride);
    let conv = &mut g.nodes[m[0]];
    conv.pool = Some((k, stride));
    conv.out = pooled.out;
    conv.name = pooled.name;
    conv.out_format = pooled.out_format;
    conv.fixed_scale = pooled.fixed_scale;
}

/// A convolution on the array whose output only an element-wise row program (one pass,
/// no per-channel parameters) reads: the program runs on each output tile's rows in the
/// output buffer after the vector unit wrote them, before they are stored, so the
/// convolution's own output never goes to memory. The same values as apart.
fn conv_rows(g: &Graph, m: &[usize]) -> bool {
    let c = &g.nodes[m[0]];
    m[1] == m[0] + 1
        && only_next(g, m[0])
        && !c.window
        && !c.fused_into_next
        && c.then.is_none()
        && c.place.is_none()
        && c.planes == 1
        && c.pool.is_none()
        && g.unit.rows.is_some()
}

fn fold_rows(g: &mut Graph, m: &[usize]) {
    let rows = g.nodes.remove(m[1]);
    let conv = &mut g.nodes[m[0]];
    conv.then = rows.work.rows().cloned();
    conv.name = rows.name;
    conv.out_format = rows.out_format;
}

/// A 1x1 convolution (no untied bias, residual or pool) whose output only the next node
/// reads, a depthwise convolution in the window unit: its output
/// stays on chip, and the window node schedules both per output tile (`schedule/fused.rs`).
/// The unit's output rows must be its input rows (cpf = kpf and one element type), and the
/// smallest fused tile must fit the buffers.
fn expand_depthwise(g: &Graph, m: &[usize]) -> bool {
    let (e, d) = (&g.nodes[m[0]], &g.nodes[m[1]]);
    let u = &g.unit;
    let b = &u.buffers;
    let (kh, kw, _, _) = window(d);
    let icts = g.shape_of(&e.input)[2].div_ceil(u.cpf as usize);
    // One output pixel: the window of every input tile of the expand in a quarter of the
    // input buffer; the window's rows, one output row and both layers' bias rows (with
    // per-channel requantization a scale row each too) in a bank.
    let fits = icts * kh * kw <= (b.input_depth / 4) as usize
        && kh * kw + 1 + e.bias_rows() + d.bias_rows() <= b.accumulator_depth as usize;
    m[1] == m[0] + 1
        && only_next(g, m[0])
        && u.cpf == u.kpf
        && u.datatype.input_type() == u.datatype.output_type()
        && e.post().untied_bias.is_empty()
        && e.residual.is_none()
        && e.pool.is_none()
        && e.shift == (0, 0)
        && d.residual.as_deref() != Some(e.name.as_str())
        && g.view_of(&e.name, u.cpf as usize).is_none()
        && e.out_format == g.format_of(&e.input)
        && fits
}

fn keep(g: &mut Graph, m: &[usize]) {
    g.nodes[m[0]].fused_into_next = true;
}

/// Both: the expand stays on chip, and the add folds into the depthwise convolution.
fn expand_depthwise_add(g: &Graph, m: &[usize]) -> bool {
    expand_depthwise(g, &m[..2]) && conv_add(g, &m[1..])
}

fn keep_and_fold_add(g: &mut Graph, m: &[usize]) {
    fold_add(g, &m[1..]);
    keep(g, &m[..2]);
}
