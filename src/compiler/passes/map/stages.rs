//! The stages of an elastic Design (F-CAD's construction step): every output to its
//! branch, every layer to the branch that needs it (a layer several branches need goes to
//! the one with the most compute of its own, and its result reaches the others through the
//! fork link), and every branch's layers cut into one contiguous stage per unit, balancing
//! the stages' cost.

use super::super::legalize::{Graph, Node};
use crate::compiler::CompileError;
use crate::design::{Design, Unit};
use std::collections::BTreeSet;

/// One pipeline stage: a unit of a branch and the nodes it runs, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    pub branch: usize,
    pub unit: usize,
    pub nodes: Vec<usize>,
}

/// The stages of every branch, branch by branch, each branch's in unit order.
pub fn stages(design: &Design, g: &Graph) -> Result<Vec<Stage>, CompileError> {
    let branches = &design.branches;
    let owner = owners(design, g)?;
    let mut out = Vec::new();
    // A fork constrains the branch it comes from: the layers another branch reads must be
    // done by the `from` unit, whose frame token is the other branch's start signal.
    let mut must: Vec<Option<(usize, usize)>> = vec![None; branches.len()];
    for (b, br) in branches.iter().enumerate() {
        let readers = reads_from(g, &owner, b);
        let Some(&a) = readers.iter().next() else {
            continue;
        };
        let Some((fb, fu)) = &br.from else {
            return Err(CompileError::new(
                None,
                format!(
                    "branch {} reads {} computed on branch {}, but has no fork link from it",
                    br.name,
                    shared_tensors(g, &owner, b, a).join(", "),
                    branches[a].name
                ),
                format!(
                    "add from = \"{}.<unit>\" to branch {} in the config",
                    branches[a].name, br.name
                ),
            ));
        };
        if readers.len() > 1 || branches[a].name != *fb {
            let names: Vec<&str> = readers.iter().map(|&x| branches[x].name.as_str()).collect();
            return Err(CompileError::new(
                None,
                format!(
                    "branch {} reads tensors computed on branch(es) {}, but its fork link comes from {fb}.{fu}",
                    br.name,
                    names.join(", ")
                ),
                "map the outputs so that the branch shares layers with the branch it forks from only (outputs are taken by branches in order), or change from",
            ));
        }
        let u = branches[a]
            .units
            .iter()
            .position(|x| x.name == *fu)
            .expect("validated");
        let last = owned(&owner, a)
            .into_iter()
            .rposition(|i| read_by(g, &owner, b, i))
            .expect("a shared node");
        must[a] = Some(match must[a] {
            Some((ou, ol)) => (ou.min(u), ol.max(last)),
            None => (u, last),
        });
    }
    for (b, br) in branches.iter().enumerate() {
        let nodes = owned(&owner, b);
        if nodes.is_empty() {
            continue;
        }
        for u in &br.units {
            super::check_unit(&g.unit, u, br)?;
        }
        let groups = layer_groups(g, &nodes);
        // The constraint in groups: the first `p` groups end on units up to `u`.
        let limit = must[b].map(|(u, last)| {
            let p = groups
                .iter()
                .position(|gr| gr.contains(&nodes[last]))
                .expect("grouped")
                + 1;
            (u, p)
        });
        let cost = |u: &Unit, grp: &[usize]| -> u64 {
            grp.iter().map(|&i| node_cost(&g.nodes[i], u)).sum()
        };
        let cut = partition(&groups, &br.units, cost, limit).ok_or_else(|| {
            let (u, p) = limit.expect("only a constrained cut can fail");
            CompileError::new(
                None,
                format!(
                    "the layers branch {} shares with other branches need {p} layer group(s) up to its fork unit {} (unit {u}), and every unit up to it must run at least one",
                    br.name, br.units[u].name
                ),
                "set the forking branches' from to an earlier unit of this branch",
            )
        })?;
        for (unit, grp) in cut {
            out.push(Stage {
                branch: b,
                unit,
                nodes: grp,
            });
        }
    }
    Ok(out)
}

/// The branch each node runs on: the branches whose outputs need it (output k is branch
/// k's; a single branch takes every output), and among several the one with the most
/// compute of its own (then the higher priority, then the earlier branch). A node no output
/// needs runs on the first branch.
fn owners(design: &Design, g: &Graph) -> Result<Vec<usize>, CompileError> {
    let nb = design.branches.len();
    if nb > 1 && g.outputs.len() > nb {
        return Err(CompileError::new(
            None,
            format!(
                "the model has {} outputs but the Design {} branches; output k runs on branch k",
                g.outputs.len(),
                nb
            ),
            "add [[branch]] tables, or compile a model with fewer outputs",
        ));
    }
    let mut needed: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); g.nodes.len()];
    for (k, o) in g.outputs.iter().enumerate() {
        let b = k.min(nb - 1);
        let mut stack = vec![o.clone()];
        let mut seen = BTreeSet::new();
        while let Some(t) = stack.pop() {
            if !seen.insert(t.clone()) {
                continue;
            }
            for (i, n) in g.nodes.iter().enumerate() {
                if writes(g, n, &t) {
                    needed[i].insert(b);
                    stack.extend(n.reads().map(str::to_string));
                }
            }
        }
    }
    let own_macs = |b: usize| -> u64 {
        (0..g.nodes.len())
            .filter(|&i| needed[i].len() == 1 && needed[i].contains(&b))
            .map(|i| g.nodes[i].macs)
            .sum()
    };
    Ok(needed
        .iter()
        .map(|set| {
            set.iter()
                .copied()
                .max_by_key(|&b| {
                    (
                        own_macs(b),
                        design.branches[b].priority,
                        std::cmp::Reverse(b),
                    )
                })
                .unwrap_or(0)
        })
        .collect())
}

/// Node `n` writes tensor `t`: its own, or an operand of the concat `t` in place.
fn writes(g: &Graph, n: &Node, t: &str) -> bool {
    n.tensor() == t
        || g.concats
            .iter()
            .any(|c| c.name == t && c.inputs.iter().any(|i| i == n.tensor()))
}

/// The nodes of branch `b`, in order.
fn owned(owner: &[usize], b: usize) -> Vec<usize> {
    (0..owner.len()).filter(|&i| owner[i] == b).collect()
}

/// Node `i` (of another branch) is read by a node of branch `b`.
fn read_by(g: &Graph, owner: &[usize], b: usize, i: usize) -> bool {
    let t = g.nodes[i].tensor();
    g.nodes.iter().enumerate().any(|(j, n)| {
        owner[j] == b
            && n.reads().any(|r| {
                r == t
                    || g.concats
                        .iter()
                        .any(|c| c.name == *r && c.inputs.iter().any(|x| x == t))
            })
    })
}

/// The other branches whose nodes branch `b` reads.
fn reads_from(g: &Graph, owner: &[usize], b: usize) -> BTreeSet<usize> {
    (0..g.nodes.len())
        .filter(|&i| owner[i] != b && read_by(g, owner, b, i))
        .map(|i| owner[i])
        .collect()
}

fn shared_tensors(g: &Graph, owner: &[usize], b: usize, a: usize) -> Vec<String> {
    owned(owner, a)
        .into_iter()
        .filter(|&i| read_by(g, owner, b, i))
        .map(|i| g.nodes[i].tensor().to_string())
        .fold(Vec::new(), |mut v, t| {
            if !v.contains(&t) {
                v.push(t);
            }
            v
        })
}

/// Node groups that stay on one unit: a layer, all phases of a transposed convolution, or
/// a layer whose output stays on chip and the depthwise convolution that reads it.
fn layer_groups(g: &Graph, nodes: &[usize]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for &i in nodes {
        match out.last_mut() {
            Some(last)
                if g.nodes[last[0]].tensor() == g.nodes[i].tensor()
                    || last
                        .last()
                        .is_some_and(|&p| p + 1 == i && g.nodes[p].fused_into_next) =>
            {
                last.push(i)
            }
            _ => out.push(vec![i]),
        }
    }
    out
}

/// Ideal cycles of a node on unit `u` (all its replicas together): MACs over PEs, or one
/// cycle per output row of a channel tile for layers without MACs.
pub fn node_cost(n: &Node, u: &Unit) -> u64 {
    let pes = u64::from(u.cpf * u.kpf);
    let rows = (n.out[0] * n.out[1] * n.out[2].div_ceil(u.kpf as usize)) as u64;
    n.macs.div_ceil(pes).max(rows) / u64::from(u.h.max(1))
}

/// Cut the groups, in order, into one contiguous stage per unit (as many as there are
/// groups, at most the units), minimising the costliest stage (dynamic programming over
/// the cut points). With `limit = (u, p)`, the first `p` groups end on units up to `u`,
/// and unit `u` runs something; `None` when that cannot be.
fn partition(
    groups: &[Vec<usize>],
    units: &[Unit],
    cost: impl Fn(&Unit, &[usize]) -> u64,
    limit: Option<(usize, usize)>,
) -> Option<Vec<(usize, Vec<usize>)>> {
    let (n, k) = (groups.len(), units.len().min(groups.len()));
    if limit.is_some_and(|(u, _)| u >= k) {
        return None;
    }
    let span =
        |u: usize, a: usize, b: usize| -> u64 { (a..b).map(|i| cost(&units[u], &groups[i])).sum() };
    // best[j][i]: the smallest largest cost of the first i groups on the first j units.
    let mut best = vec![vec![u64::MAX; n + 1]; k + 1];
    let mut cut = vec![vec![0usize; n + 1]; k + 1];
    best[0][0] = 0;
    for j in 1..=k {
        for i in j..=n {
            for c in (j - 1)..i {
                if best[j - 1][c] == u64::MAX {
                    continue;
                }
                let v = best[j - 1][c].max(span(j - 1, c, i));
                if v < best[j][i] {
                    best[j][i] = v;
                    cut[j][i] = c;
                }
            }
        }
        if let Some((u, p)) = limit {
            if j == u + 1 {
                for v in best[j].iter_mut().take(p) {
                    *v = u64::MAX;
                }
            }
        }
    }
    if best[k][n] == u64::MAX {
        return None;
    }
    let mut out = Vec::new();
    let mut i = n;
    for j in (1..=k).rev() {
        let c = cut[j][i];
        out.push((j - 1, groups[c..i].concat()));
        i = c;
    }
    out.reverse();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str) -> Unit {
        let d = crate::config::load(std::path::Path::new("configs/8x8_int8.toml")).unwrap();
        Unit {
            name: name.to_string(),
            ..d.branches[0].units[0].clone()
        }
    }

    /// Every way to cut `n` groups into `k` contiguous non-empty stages, as cut points.
    fn cuts(n: usize, k: usize) -> Vec<Vec<usize>> {
        if k == 1 {
            return vec![vec![0]];
        }
        let mut out = Vec::new();
        for first in 1..=n - (k - 1) {
            for rest in cuts(n - first, k - 1) {
                let mut v = vec![0];
                v.extend(rest.iter().map(|c| c + first));
                out.push(v);
            }
        }
        out
    }

    /// The DP's largest stage cost equals the best over every contiguous cut (brute force),
    /// with and without a fork limit, on seeded random costs; every group lands in exactly
    /// one stage, in order.
    #[test]
    fn partition_is_optimal() {
        let mut seed = 12345u64;
        let mut rand = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..300 {
            let n = 1 + rand(7) as usize;
            let units: Vec<Unit> = (0..1 + rand(4)).map(|u| unit(&format!("u{u}"))).collect();
            let costs: Vec<u64> = (0..n).map(|_| 1 + rand(100)).collect();
            let groups: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
            let cost = |_: &Unit, g: &[usize]| -> u64 { g.iter().map(|&i| costs[i]).sum() };
            let k = units.len().min(n);
            let limit =
                (rand(2) == 0).then(|| (rand(k as u64) as usize, 1 + rand(n as u64) as usize));
            let feasible = |c: &Vec<usize>| match limit {
                // The first p groups end on units up to u: the (u+1)-th stage ends at or
                // after group p.
                Some((u, p)) => u < k && (if u + 1 < k { c[u + 1] } else { n }) >= p,
                None => true,
            };
            let span = |c: &Vec<usize>, j: usize| -> u64 {
                let end = if j + 1 < c.len() { c[j + 1] } else { n };
                (c[j]..end).map(|i| costs[i]).sum()
            };
            let best = cuts(n, k)
                .into_iter()
                .filter(feasible)
                .map(|c| (0..k).map(|j| span(&c, j)).max().unwrap())
                .min();
            let got = partition(&groups, &units, cost, limit);
            match (best, got) {
                (None, None) => {}
                (Some(b), Some(stages)) => {
                    let worst = stages
                        .iter()
                        .map(|(_, g)| cost(&units[0], g))
                        .max()
                        .unwrap();
                    assert_eq!(worst, b, "costs {costs:?}, {k} units, limit {limit:?}");
                    let order: Vec<usize> = stages.iter().flat_map(|(_, g)| g.clone()).collect();
                    assert_eq!(order, (0..n).collect::<Vec<_>>());
                    let units_used: Vec<usize> = stages.iter().map(|(u, _)| *u).collect();
                    assert_eq!(units_used, (0..k).collect::<Vec<_>>());
                }
                (b, g) => panic!("feasibility differs: brute force {b:?}, partition {g:?}"),
            }
        }
    }
}
