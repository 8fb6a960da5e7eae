//! fuse: a convolution whose only consumer is an `add` (with identity requantization) gets
//! the add folded into its vector instruction: y = saturate(requant(acc) + residual); ReLU
//! moves with it. A convolution (without residual) whose only consumer is a max-pool gets
//! the pool folded in when the pooled map has enough pixels to hide a weight preload
//! (`estimate::preload_rows`, cpf + 1): the convolution runs
//! once per pool tap at the pooled positions and the vector unit keeps the running maximum.
//! Activations were fused by the model format. Only integer layers are fused (the other
//! datapaths' vector path has no add or pool).

use super::allocate::window;
use super::legalize::{Graph, Node};
use crate::compiler::{Compilation, CompileError};
use crate::model::{Op, Requant};
use crate::numeric::Precision;

pub fn pass(c: &mut Compilation) -> Result<(), CompileError> {
    let g = c.graph.take().expect("pass order: legalize must run first");
    c.graph = Some(run(g));
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
