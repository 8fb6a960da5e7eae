//! fuse: layers the hardware runs as one, by graph patterns (DNNVM). Each rule of
//! `rules` is a small pattern over the layer graph with a guard and a rewrite:
//!
//! - conv+add: a convolution whose only consumer is an add (or mul) it can hand its
//!   requantized value as it is (a plain add with identity requantization; the quantized
//!   form when the convolution's zero point is its input zero point) gets the add folded
//!   into its vector instruction; ReLU moves with it;
//! - conv+maxpool: a convolution whose only consumer is a max-pool runs once per pool tap
//!   at the pooled positions and the vector unit keeps the running maximum;
//! - conv+rows: a convolution whose only consumer is an element-wise row program (GELU,
//!   SiLU, sigmoid, tanh) runs the program on each output tile in the output buffer before
//!   storing it (the same values; the convolution's own output never crosses the memory
//!   port);
//! - expand+depthwise: a 1x1 convolution (a MobileNetV2 expand) whose only consumer is a
//!   depthwise convolution in the window unit keeps its output on chip: the window node
//!   schedules both per output tile (`schedule/fused.rs`), so the expanded tensor never
//!   crosses the memory port (single-engine programs only);
//! - expand+depthwise+add: both of the last two, the add folded into the depthwise
//!   convolution.
//!
//! `strategy` matches the patterns (VF2) and picks, where matches overlap and where a
//! fusion might not pay, the cover of the layer sequence with the fewest estimated cycles
//! (a shortest path). Activations were fused by the model format (and by the ONNX
//! importer, with the quantize/dequantize pairs around each operator); integer layers are
//! fused, and a small float (FP8, BF16) convolution takes its add (conv+add, which a float
//! add needs: `float_adds_fused`) or a row program (conv+rows); the other datapaths'
//! vector path has no add or pool.

mod rules;
mod strategy;

pub use super::legalize::Fused;
use super::legalize::Graph;
use crate::compiler::CompileError;
pub use rules::{Kind, Role, Rule, RULES};
pub use strategy::{alone, candidates, choose, Candidate};

/// The fused graph of a single-engine Design (`on_chip`: the rules that keep a tensor on
/// chip too, and a layer that only feeds a residual moved late), or of an elastic one,
/// with `cycles` the estimated cycles of a graph compiled alone (None: it does not tile),
/// which the strategy compares.
pub fn run(
    g: Graph,
    on_chip: bool,
    cycles: impl Fn(&Graph) -> Option<u64>,
) -> Result<Graph, CompileError> {
    let mut g = fuse(g, on_chip, cycles);
    if on_chip {
        float_adds_fused(&g)?;
        shortcuts_late(&mut g);
        g.rebuild_dag();
    }
    Ok(g)
}

/// A small float add (FP8, BF16) runs only in the vector unit of the convolution that
/// computes its input (conv+add): the array's one-tap window of sums multiplies integer
/// identity codes.
fn float_adds_fused(g: &Graph) -> Result<(), CompileError> {
    use crate::model::lower::{Lowered, Taps};
    let unfused = g.nodes.iter().find(|n| {
        rules::mini(g, n) && matches!(&n.work, Lowered::Stencil(s) if s.taps == Taps::Sum)
    });
    match unfused {
        None => Ok(()),
        Some(n) => Err(CompileError::new(
            Some(&n.name),
            format!(
                "a float add runs in the vector unit of the convolution that computes its input, and the convolution before \"{}\" cannot take it (its input must be the output of the layer just before it, a convolution or matmul without ReLU that no other layer reads)",
                n.name
            ),
            "compute the add's input with the convolution just before it, or use an integer type",
        )),
    }
}

/// Fuse what the strategy chooses (`on_chip`: the rules that keep a tensor on chip too),
/// and list the groups in `g.fused`.
fn fuse(mut g: Graph, on_chip: bool, cycles: impl Fn(&Graph) -> Option<u64>) -> Graph {
    let rules: Vec<&Rule> = RULES.iter().filter(|r| on_chip || !r.on_chip).collect();
    let cands = candidates(&g, &rules);
    let chosen = choose(g.nodes.len(), &cands, |nodes, rule| {
        let mut sub = alone(&g, nodes);
        if let Some(r) = rule {
            let local: Vec<usize> = (0..nodes.len()).collect();
            (rules[r].apply)(&mut sub, &local);
            sub.rebuild_dag();
        }
        cycles(&sub)
    });
    g.fused = chosen
        .iter()
        .map(|(c, fused, apart)| Fused {
            rule: rules[c.rule].name.to_string(),
            layers: c.nodes.iter().map(|&i| g.nodes[i].name.clone()).collect(),
            estimated_cycles: *fused,
            estimated_cycles_apart: *apart,
        })
        .collect();
    // Later groups first: a rewrite removes nodes after its first.
    for (c, _, _) in chosen.iter().rev() {
        (rules[c.rule].apply)(&mut g, &c.nodes);
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
/// which the downsample's loads and stores had kept busy (never between an expand kept on
/// chip and its depthwise convolution). Plain layers only (no in-place
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
                // Not between an expand kept on chip and its depthwise convolution.
                let mut at = first - 1;
                while at > i && g.nodes[at - 1].fused_into_next {
                    at -= 1;
                }
                g.nodes.insert(at, node);
                if at == i {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
}
