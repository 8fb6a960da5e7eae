//! fuse: a convolution whose only consumer is an `add` (with identity requantization) gets
//! the add folded into its vector instruction: y = saturate(requant(acc) + residual). ReLU
//! moves with it. Activations were fused by the model format already.

use super::legalize::Graph;
use crate::model::{Op, Requant};

pub fn run(mut g: Graph) -> Graph {
    let mut i = 0;
    while i < g.nodes.len() {
        let fusable = match &g.nodes[i].op {
            Op::Conv { relu: false, .. } => {
                let name = g.nodes[i].name.clone();
                let consumers = g.consumers(&name);
                match consumers.as_slice() {
                    [c] if *c == i + 1
                        && g.nodes[*c].input == name
                        && g.nodes[*c].residual.as_deref() != Some(name.as_str())
                        && name != g.output
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
        }
        i += 1;
    }
    g.rebuild_dag();
    g
}
