//! Operators that older exports spell out node by node, found in the graph before it is
//! walked: LayerNormalization decomposed (opsets before 17) as
//! `ReduceMean, Sub, Pow 2, ReduceMean, Add epsilon, Sqrt, Div` and optionally `Mul gamma,
//! Add beta`, with or without quantize_static's QuantizeLinear/DequantizeLinear pairs
//! between them. The nodes of a match are skipped as they come, and its last node stands
//! for the whole normalization (`Decomposed`).

use crate::onnx::proto::{Graph, Node};
use std::collections::{HashMap, HashSet};

/// A decomposed LayerNormalization: its input tensor, the tensors holding epsilon, gamma and
/// beta (constants, checked when it is mapped), and the node standing for it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Decomposed {
    pub x: String,
    pub epsilon: String,
    /// The Pow's exponent (2, checked when it is mapped); None for a Mul of the deviation
    /// by itself.
    pub exponent: Option<String>,
    pub gamma: Option<String>,
    pub beta: Option<String>,
    /// The ReduceMean nodes (their axes are checked when it is mapped).
    pub means: [usize; 2],
}

/// The decomposed layer norms of `g`: node index of the last node -> the match, and the
/// indices of the other nodes each absorbs.
pub(super) fn layer_norms(g: &Graph) -> (HashMap<usize, Decomposed>, HashSet<usize>) {
    let producer: HashMap<&str, usize> = g
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.outputs.iter().map(move |o| (o.as_str(), i)))
        .collect();
    let mut readers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        for t in &n.inputs {
            readers.entry(t.as_str()).or_default().push(i);
        }
    }
    let outputs: HashSet<&str> = g.outputs.iter().map(|o| o.name.as_str()).collect();
    let walk = Walk { g, producer };
    let mut found = HashMap::new();
    let mut absorbed = HashSet::new();
    for (last, n) in g.nodes.iter().enumerate() {
        let mut used = vec![];
        let Some(m) = walk.layer_norm(n, &mut used) else {
            continue;
        };
        // Only the match reads what its nodes compute (else they must run as they are).
        let inside = |i: &usize| *i == last || used.contains(i);
        let private = used.iter().all(|&u| {
            g.nodes[u].outputs.iter().all(|o| {
                !outputs.contains(o.as_str())
                    && readers.get(o.as_str()).is_none_or(|r| r.iter().all(inside))
            })
        });
        if !private
            || used
                .iter()
                .any(|u| absorbed.contains(u) || found.contains_key(u))
        {
            continue;
        }
        absorbed.extend(used);
        found.insert(last, m);
    }
    (found, absorbed)
}

/// The graph, walked backwards from a node.
struct Walk<'g> {
    g: &'g Graph,
    producer: HashMap<&'g str, usize>,
}

impl<'g> Walk<'g> {
    fn producer(&self, t: &str) -> Option<(usize, &'g Node)> {
        self.producer.get(t).map(|&i| (i, &self.g.nodes[i]))
    }

    /// The float tensor that a DequantizeLinear(QuantizeLinear(t)) pair requantizes (the
    /// pair's nodes into `used`); else `t`.
    fn through(&self, t: &str, used: &mut Vec<usize>) -> String {
        let dq = self
            .producer(t)
            .filter(|(_, n)| n.op_type == "DequantizeLinear");
        if let Some((d, dq)) = dq {
            let q = self
                .producer(&dq.inputs[0])
                .filter(|(_, n)| n.op_type == "QuantizeLinear");
            if let Some((q, qn)) = q {
                used.extend([d, q]);
                return qn.inputs[0].clone();
            }
        }
        t.to_string()
    }

    /// The node of one of the types `ops` producing tensor `t` (through a quantization
    /// pair), into `used`.
    fn step(&self, t: Option<&String>, ops: &[&str], used: &mut Vec<usize>) -> Option<&'g Node> {
        let t = self.through(t?, used);
        let (i, n) = self
            .producer(&t)
            .filter(|(_, n)| ops.contains(&n.op_type.as_str()))?;
        used.push(i);
        Some(n)
    }

    /// The decomposed layer norm whose last node is `n` (an Add of beta, a Mul by gamma,
    /// or the Div), the other nodes into `used`.
    fn layer_norm(&self, n: &'g Node, used: &mut Vec<usize>) -> Option<Decomposed> {
        let (mut at, mut gamma, mut beta) = (n, None, None);
        if at.op_type == "Add" {
            beta = Some(at.inputs.get(1)?.clone());
            at = self.step(at.inputs.first(), &["Mul", "Div"], used)?;
        }
        if at.op_type == "Mul" {
            gamma = Some(at.inputs.get(1)?.clone());
            at = self.step(at.inputs.first(), &["Div"], used)?;
        }
        if at.op_type != "Div" {
            return None;
        }
        let deviation = self.through(at.inputs.first()?, used);
        let sqrt = self.step(at.inputs.get(1), &["Sqrt"], used)?;
        let add = self.step(sqrt.inputs.first(), &["Add"], used)?;
        let mean2 = self.step(add.inputs.first(), &["ReduceMean"], used)?;
        let square = self.step(mean2.inputs.first(), &["Pow", "Mul"], used)?;
        let sub = self.step(square.inputs.first(), &["Sub"], used)?;
        let mean1 = self.step(sub.inputs.get(1), &["ReduceMean"], used)?;
        let same = |a: Option<&String>, used: &mut Vec<usize>| {
            a.map(|t| self.through(t, used)) == sub.outputs.first().cloned()
        };
        let squared = square.op_type == "Pow" || same(square.inputs.get(1), used);
        if !squared || deviation != sub.outputs[0] || mean1.inputs.first() != sub.inputs.first() {
            return None;
        }
        let index = |m: &Node| self.g.nodes.iter().position(|k| std::ptr::eq(k, m));
        Some(Decomposed {
            x: sub.inputs.first()?.clone(),
            epsilon: add.inputs.get(1)?.clone(),
            exponent: (square.op_type == "Pow").then(|| square.inputs[1].clone()),
            gamma,
            beta,
            means: [index(mean1)?, index(mean2)?],
        })
    }
}
