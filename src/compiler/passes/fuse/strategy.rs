//! The fusion strategy (DNNVM): every match of every rule's pattern in the layer graph (VF2
//! subgraph isomorphism, petgraph's), each match whose guard holds a candidate group of
//! consecutive layers; then the cheapest cover of the layer sequence by single layers and
//! candidate groups, a shortest path over positions 0..=n where layer i is an edge i -> i +
//! 1 and a group of layers i..j an edge i -> j. An edge's cost is the estimated cycles of
//! its layers compiled alone, fused or not (the cost the pipeline gives: `pipeline::cycles`,
//! the timeline of the program of a graph of just those layers). Overlapping candidates (a layer
//! two patterns want) exclude each other on a path, and a group that the estimate says is
//! slower than its layers apart loses to them. Ties go to fewer layers.

use super::super::legalize::{Graph, Node, Source};
use super::rules::{Role, Rule};
use petgraph::algo::subgraph_isomorphisms_iter;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::{BTreeMap, HashMap};

/// A candidate: the rule (index into the rules) and its layers, in pattern order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub rule: usize,
    pub nodes: Vec<usize>,
}

/// The layer graph as patterns see it: a node per layer (its index), one edge per
/// (producer, consumer) pair with the consumer's role for it.
fn view(g: &Graph) -> DiGraph<usize, Role> {
    let mut v = DiGraph::new();
    let idx: Vec<NodeIndex> = (0..g.nodes.len()).map(|i| v.add_node(i)).collect();
    let mut producer: HashMap<&str, usize> = HashMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        producer.insert(n.tensor(), i);
    }
    let mut roles: BTreeMap<(usize, usize), Role> = BTreeMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        let reads = [
            (Some(&n.input), Role::Input),
            (n.residual.as_ref(), Role::Residual),
        ];
        for (t, role) in reads {
            let Some(&p) = t.and_then(|t| producer.get(t.as_str())) else {
                continue;
            };
            // A tensor two nodes write (the phases of a transposed convolution) is read
            // as a whole: no pattern edge.
            let shared = g
                .nodes
                .iter()
                .filter(|m| m.tensor() == g.nodes[p].tensor())
                .count()
                > 1;
            let role = if shared { Role::Other } else { role };
            roles
                .entry((p, i))
                .and_modify(|r| *r = Role::Other)
                .or_insert(role);
        }
        // Through an in-place concat: its operands' producers.
        for c in g.concats.iter().filter(|c| c.name == n.input) {
            for part in &c.inputs {
                if let Some(&p) = producer.get(part.as_str()) {
                    roles.insert((p, i), Role::Other);
                }
            }
        }
    }
    for ((p, i), r) in roles {
        v.add_edge(idx[p], idx[i], r);
    }
    v
}

/// Every match of `rules` whose guard holds, over consecutive layers.
pub fn candidates(g: &Graph, rules: &[&Rule]) -> Vec<Candidate> {
    let v = view(g);
    let mut out = Vec::new();
    for (ri, rule) in rules.iter().enumerate() {
        let mut pat: DiGraph<super::rules::Kind, Role> = DiGraph::new();
        let pn: Vec<NodeIndex> = rule.kinds.iter().map(|&k| pat.add_node(k)).collect();
        for &(a, b, r) in rule.edges {
            pat.add_edge(pn[a], pn[b], r);
        }
        let mut node_match = |k: &super::rules::Kind, i: &usize| k.matches(g, &g.nodes[*i]);
        let mut edge_match = |a: &Role, b: &Role| a == b;
        let (pr, vr) = (&pat, &v);
        let Some(matches) = subgraph_isomorphisms_iter(&pr, &vr, &mut node_match, &mut edge_match)
        else {
            continue;
        };
        for m in matches {
            let nodes: Vec<usize> = m.iter().map(|&k| v[NodeIndex::new(k)]).collect();
            let consecutive = nodes.windows(2).all(|w| w[1] == w[0] + 1);
            if consecutive && (rule.guard)(g, &nodes) {
                out.push(Candidate { rule: ri, nodes });
            }
        }
    }
    out.sort_by_key(|c| (c.nodes[0], c.nodes.len(), c.rule));
    out
}

/// A graph of layers `nodes` of `g` alone: the tensors they read from outside it become
/// tensors the host writes (with the model's inputs), and the tensors no layer of it reads
/// are its outputs.
pub fn alone(g: &Graph, nodes: &[usize]) -> Graph {
    let mine: Vec<Node> = nodes.iter().map(|&i| g.nodes[i].clone()).collect();
    let made = |t: &str| mine.iter().any(|n| n.tensor() == t);
    let mut inputs = g.inputs.clone();
    for n in &mine {
        for t in n.reads() {
            if !made(t) && !inputs.iter().any(|s| s.name == *t) {
                inputs.push(Source {
                    name: t.to_string(),
                    shape: g.shape_of(t),
                    format: g.format_of(t),
                    joins: Vec::new(),
                    im2col: None,
                });
            }
        }
    }
    let read = |t: &str| mine.iter().any(|n| n.reads().any(|r| r == t));
    let outputs = mine
        .iter()
        .map(|n| n.tensor().to_string())
        .filter(|t| !read(t))
        .collect();
    let mut sub = Graph {
        unit: g.unit.clone(),
        nodes: mine,
        dag: DiGraph::new(),
        inputs,
        concats: Vec::new(),
        outputs,
        fused: Vec::new(),
    };
    sub.rebuild_dag();
    sub
}

/// The candidates to fuse: the cheapest cover of the layers by single layers and
/// candidates, with `cost(nodes, rule)` the cycles of layers `nodes` alone, fused by
/// `rule` or (None) apart. Layers no candidate touches cost nothing: every cover has them.
pub fn choose(
    n: usize,
    cands: &[Candidate],
    mut cost: impl FnMut(&[usize], Option<usize>) -> Option<u64>,
) -> Vec<(Candidate, u64, u64)> {
    let touched: Vec<bool> = (0..n)
        .map(|i| cands.iter().any(|c| c.nodes.contains(&i)))
        .collect();
    // A layer that does not compile alone: a cost no group beats by accident.
    const UNKNOWN: u64 = u64::MAX / 4;
    let single: Vec<u64> = (0..n)
        .map(|i| match touched[i] {
            true => cost(&[i], None).unwrap_or(UNKNOWN),
            false => 0,
        })
        .collect();
    // best[i]: the cheapest cover of layers 0..i, as (cycles, edges), and the edge into it.
    type Reached = Option<((u64, usize), Option<usize>)>;
    let mut best: Vec<Reached> = vec![None; n + 1];
    best[0] = Some(((0, 0), None));
    let group_cost: Vec<Option<u64>> = cands.iter().map(|c| cost(&c.nodes, Some(c.rule))).collect();
    for i in 0..n {
        let Some(((d, e), _)) = best[i] else { continue };
        let mut relax = |j: usize, c: u64, via: Option<usize>| {
            let cand = (d.saturating_add(c), e + 1);
            if best[j].is_none_or(|(b, _)| cand < b) {
                best[j] = Some((cand, via));
            }
        };
        relax(i + 1, single[i], None);
        for (k, c) in cands.iter().enumerate().filter(|(_, c)| c.nodes[0] == i) {
            if let Some(gc) = group_cost[k] {
                relax(i + c.nodes.len(), gc, Some(k));
            }
        }
    }
    let mut chosen = Vec::new();
    let mut j = n;
    while j > 0 {
        let (_, via) = best[j].expect("every position is reached by single layers");
        match via {
            Some(k) => {
                let c = &cands[k];
                let apart = c.nodes.iter().map(|&i| single[i]).sum();
                chosen.push((c.clone(), group_cost[k].expect("costed"), apart));
                j -= c.nodes.len();
            }
            None => j -= 1,
        }
    }
    chosen.reverse();
    chosen
}
