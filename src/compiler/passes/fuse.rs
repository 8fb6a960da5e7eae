//! fuse: a convolution whose only consumer is an `add` (with identity requantization) gets
//! the add folded into its vector instruction: y = saturate(requant(acc) + residual); ReLU
//! moves with it. A convolution (without residual) whose only consumer is a max-pool gets
//! the pool folded in when the pooled map has enough pixels to hide a weight preload
//! (`estimate::preload_rows`, cpf + 2): the convolution runs
//! once per pool tap at the pooled positions and the vector unit keeps the running maximum.
//! Activations were fused by the model format. Only integer layers are fused (the other
//! datapaths' vector path has no add or pool). A 1x1 convolution (a MobileNetV2 expand)
//! whose only consumer is a depthwise convolution in the window unit keeps its output on
//! chip: the window node schedules both per output tile, the expand writing its rows into
//! the input buffer for the window (`schedule/window.rs`), so the expanded tensor never
//! crosses the memory port.

use super::allocate::window;
use super::legalize::{Graph, Node};
use crate::compiler::{Compilation, CompileError};
use crate::design::Design;
use crate::model::{Op, Requant};
use crate::numeric::Precision;

pub fn pass(c: &mut Compilation) -> Result<(), CompileError> {
    let mut g = run(c.graph.take().expect("pass order: legalize must run first"));
    shortcuts_late(&mut g);
    keep_on_chip(&mut g, c.design);
    g.rebuild_dag();
    c.graph = Some(g);
    Ok(())
}

/// The node computes on the integer path.
fn integer(g: &Graph, n: &Node) -> bool {
    matches!(g.unit.datatype.precisions[n.prec], Precision::Int(_))
}

pub fn run(mut g: Graph) -> Graph {
    let mut i = 0;
    while i < g.nodes.len() {
        let fusable = match &g.nodes[i].op {
            Op::Conv { relu: false, .. } if integer(&g, &g.nodes[i]) => {
                let name = g.nodes[i].name.clone();
                let consumers = g.consumers(&name);
                match consumers.as_slice() {
                    [c] if *c == i + 1
                        && g.nodes[*c].input == name
                        && g.nodes[*c].residual.as_deref() != Some(name.as_str())
                        && !g.is_output(&name)
                        && matches!(g.nodes[*c].op, Op::Add { requant, .. } if requant == Requant::IDENTITY) =>
                    {
                        Some(*c)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(c) = fusable {
            let add = g.nodes.remove(c);
            let Op::Add {
                relu: add_relu,
                clamp: add_clamp,
                ..
            } = add.op
            else {
                unreachable!()
            };
            let conv = &mut g.nodes[i];
            if let Op::Conv { relu, clamp, .. } = &mut conv.op {
                *relu = add_relu;
                *clamp = add_clamp;
            }
            conv.residual = add.residual;
            conv.name = add.name;
            conv.out_format = add.out_format;
            conv.fixed_scale = add.fixed_scale;
        }
        i += 1;
    }
    // conv + max-pool
    let mut i = 0;
    while i + 1 < g.nodes.len() {
        let name = g.nodes[i].name.clone();
        let pool = match (&g.nodes[i].op, &g.nodes[i + 1].op) {
            (Op::Conv { untied_bias, .. }, Op::MaxPool { k, stride, pad: 0 })
                if integer(&g, &g.nodes[i])
                    && !g.nodes[i].window
                    // A pool the window unit runs reads each input once; fused, a pool
                    // whose windows overlap would run the convolution at every tap.
                    && !(g.nodes[i + 1].window && k > stride)
                    // Each pool tap would need its own pixels' bias.
                    && untied_bias.is_empty()
                    && g.nodes[i].residual.is_none()
                    && g.nodes[i].pool.is_none()
                    && g.nodes[i + 1].input == name
                    && !g.is_output(&name)
                    && g.consumers(&name) == vec![i + 1]
                    // Each pool tap becomes a matmul over the pooled pixels; with fewer pixels
                    // than it takes to hide the next weights' preload, the preload would
                    // dominate, so keep them apart.
                    && (g.nodes[i + 1].out[0] * g.nodes[i + 1].out[1]) as u64
                        >= super::estimate::preload_rows(g.unit.cpf)
                    // A 1x1 convolution (a stem whose taps are packed into channels) reads
                    // each pool tap's pixels as separate strided windows: measured on
                    // ResNet-18's stem on 16x16, 1571150 cycles fused, 634942 apart.
                    && window(&g.nodes[i]).0 * window(&g.nodes[i]).1 > 1 =>
            {
                Some((*k, *stride))
            }
            _ => None,
        };
        if let Some(p) = pool {
            let pooled = g.nodes.remove(i + 1);
            let conv = &mut g.nodes[i];
            conv.pool = Some(p);
            conv.out = pooled.out;
            conv.name = pooled.name;
            conv.out_format = pooled.out_format;
            conv.fixed_scale = pooled.fixed_scale;
        }
        i += 1;
    }
    g.rebuild_dag();
    g
}

/// A layer whose output is only a residual operand (a ResNet block's downsample shortcut)
/// moves to just before its first consumer. Its output is read only when the consumer
/// post-processes, so the consumer's first windows and weights need not wait for its last
/// stores, and it no longer sits between the block's input and the block's first
/// convolution, which reads the same input: measured on ResNet-18 on 32x32, that 3x3
/// stride-2 convolution waited about 760 cycles after the downsample for the memory port,
/// which the downsample's loads and stores had kept busy. Plain layers only (no in-place
/// concat operand, no tensor shared with other producers, not a model output).
pub fn shortcuts_late(g: &mut Graph) {
    let mut i = 0;
    while i < g.nodes.len() {
        let n = &g.nodes[i];
        let consumers = g.consumers(&n.name);
        let plain = n.place.is_none()
            && !g.is_output(&n.name)
            && !g.concats.iter().any(|c| c.inputs.contains(&n.name))
            && !consumers.is_empty()
            && consumers.iter().all(|&c| g.nodes[c].input != n.name);
        match consumers.first() {
            Some(&first) if plain && first > i + 1 => {
                let node = g.nodes.remove(i);
                g.nodes.insert(first - 1, node);
            }
            _ => i += 1,
        }
    }
}

/// Whether node i (an expand) and i + 1 (its depthwise convolution) take fewer estimated
/// cycles with the expand's output on chip.
fn faster(g: &Graph, design: &Design, i: usize) -> bool {
    let bud = super::tile::budget(design, g);
    let act = super::allocate::act_beats(design, &g.unit);
    let apart = super::tile::window_plan(design, &bud, g, act, &g.nodes[i + 1])
        .map(|(c, _)| c + super::tile::expand_cost(design, g, act, &g.nodes[i]));
    let together = super::tile::fused_plan(design, &bud, g, act, i + 1).map(|(c, _)| c);
    matches!((together, apart), (Some(t), Some(a)) if t < a)
}

/// The smallest fused tile (one output pixel) fits the buffers: the window of every input
/// tile of the expand in a quarter of the input buffer, the window's rows, one output row
/// and two bias rows in an accumulator bank (`tile::fused_tiling` picks the best tile).
fn on_chip_fits(g: &Graph, e: &Node, d: &Node) -> bool {
    let b = &g.unit.buffers;
    let (kh, kw, _, _) = window(d);
    let icts = g.shape_of(&e.input)[2].div_ceil(g.unit.cpf as usize);
    icts * kh * kw <= (b.input_depth / 4) as usize && kh * kw + 3 <= b.accumulator_depth as usize
}

/// Mark every integer 1x1 convolution (stride 1, no padding, groups 1, no untied bias,
/// residual or pool) whose only consumer is the next node, a depthwise convolution in the
/// window unit reading it, and which is not a model output, when the two take fewer
/// estimated cycles together (`tile::fused_plan`) than apart (`tile::expand_cost` and
/// `tile::window_plan`): its output stays on chip. The unit's output rows must be its input
/// rows (cpf = kpf and one element type). Single-engine designs only (an elastic design
/// keeps every tensor in memory).
pub fn keep_on_chip(g: &mut Graph, design: &Design) {
    let u = &g.unit;
    let rows_match = u.cpf == u.kpf && u.datatype.input_type() == u.datatype.output_type();
    if !rows_match {
        return;
    }
    let mut fused = Vec::new();
    for i in 0..g.nodes.len().saturating_sub(1) {
        let (e, d) = (&g.nodes[i], &g.nodes[i + 1]);
        let expand = matches!(
            &e.op,
            Op::Conv {
                transposed: false,
                kh: 1,
                kw: 1,
                stride: 1,
                pad: 0,
                groups: 1,
                untied_bias,
                ..
            } if untied_bias.is_empty()
        );
        // The pair keeps one bias row each at the bank's end: per-tensor requantization.
        let fits = expand
            && !e.per_channel()
            && !d.per_channel()
            && integer(g, e)
            && !e.window
            && e.residual.is_none()
            && e.pool.is_none()
            && e.place.is_none()
            && e.shift == (0, 0)
            && !g.is_output(&e.name)
            && d.window
            && matches!(d.op, Op::Conv { .. })
            && d.input == e.name
            && d.residual.as_deref() != Some(e.name.as_str())
            && g.consumers(&e.name) == vec![i + 1]
            && g.view_of(&e.name, u.cpf as usize).is_none()
            && e.out_format == g.format_of(&e.input)
            && on_chip_fits(g, e, d);
        if fits && faster(g, design, i) {
            fused.push(i);
        }
    }
    for i in fused {
        g.nodes[i].fused_into_next = true;
    }
}
