//! The rows each replica of each stage computes.
//!
//! A unit's `h` replicas split every output by height into `h` near-equal bands. Units of
//! the same `h` linked replica to replica form a *chain* (replica r's frame token reaches
//! replica r downstream only): there replica r computes whatever rows replica r downstream
//! reads, back through every kernel window, so halo rows are computed by both neighbours
//! (bit-identical writes) and the chains never wait for each other. A unit of another `h`
//! waits for every replica of the unit before it (a join of their tokens), so where it
//! reads a tensor, the producer's replicas split the rows it reads by band, and its halo
//! rows come through memory from the neighbouring band.

use super::stages::Stage;
use super::Part;
use crate::compiler::passes::legalize::window;
use crate::compiler::passes::legalize::{Graph, Node};
use crate::design::Design;
use crate::model::lower::Lowered;
use std::collections::HashMap;
use std::ops::Range;

/// Rows of tensor (name) wanted from replica r of its producer.
type Need = HashMap<(String, usize), Range<usize>>;

/// Per node, per replica of its stage's unit: the output rows that replica computes.
pub(crate) fn replica_rows(design: &Design, g: &Graph, stages: &[Stage]) -> Vec<Vec<Range<usize>>> {
    let hs: Vec<usize> = stages
        .iter()
        .map(|st| design.branches[st.branch].units[st.unit].h as usize)
        .collect();
    let chain = chains(design, stages);
    let mut stage_of = vec![None; g.nodes.len()];
    for (k, st) in stages.iter().enumerate() {
        for &i in &st.nodes {
            stage_of[i] = Some(k);
        }
    }
    // The stage that writes tensor t: none for a model input or a concat stored in place
    // (its operands are written instead).
    let producer = |t: &str| {
        g.nodes
            .iter()
            .position(|n| n.tensor() == t)
            .and_then(|i| stage_of[i])
    };
    // Rows `rows` of tensor (or concat operand) u, read by replica r of stage `reader`
    // (None: a model output).
    let request =
        |need: &mut Need, reader: Option<usize>, r: usize, u: &str, rows: &Range<usize>| {
            let Some(p) = producer(u) else {
                return;
            };
            if reader.is_some_and(|s| chain[s] == chain[p]) {
                merge(need, u, r, rows.clone());
            } else {
                let n = g.shape_of(u)[0];
                for q in 0..hs[p] {
                    let b = band(n, q, hs[p]);
                    merge(need, u, q, rows.start.max(b.start)..rows.end.min(b.end));
                }
            }
        };
    let mut need = Need::new();
    for o in &g.outputs {
        for u in parts(g, o) {
            request(&mut need, None, 0, &u, &(0..g.shape_of(o)[0]));
        }
    }
    let mut rows: Vec<Vec<Range<usize>>> = stage_of
        .iter()
        .map(|s| vec![0..0; s.map_or(0, |s| hs[s])])
        .collect();
    for (i, n) in g.nodes.iter().enumerate().rev() {
        let Some(s) = stage_of[i] else {
            continue;
        };
        for (r, out) in rows[i].iter_mut().enumerate() {
            let Some(want) = need.get(&(n.tensor().to_string(), r)).cloned() else {
                continue;
            };
            let mine = own_rows(n, &want);
            if mine.is_empty() {
                continue;
            }
            for (u, rows) in reads(g, n, mine.clone()) {
                request(&mut need, Some(s), r, &u, &rows);
            }
            *out = mine;
        }
    }
    rows
}

/// Add `rows` to the rows wanted of tensor t from replica r (the smallest range covering
/// both).
fn merge(need: &mut Need, t: &str, r: usize, rows: Range<usize>) {
    if rows.is_empty() {
        return;
    }
    let e = need.entry((t.to_string(), r)).or_insert(rows.clone());
    *e = e.start.min(rows.start)..e.end.max(rows.end);
}

/// The rows of node n that make rows `want` of its tensor: a phase of a transposed
/// convolution computes the tensor's rows first + stride * j.
fn own_rows(n: &Node, want: &Range<usize>) -> Range<usize> {
    match &n.place {
        Some(p) => {
            let (first, s) = (p.offset.0, p.stride);
            let lo = want.start.saturating_sub(first).div_ceil(s);
            let hi = want.end.saturating_sub(first).div_ceil(s);
            lo.min(n.out[0])..hi.min(n.out[0])
        }
        None => want.start.min(n.out[0])..want.end.min(n.out[0]),
    }
}

/// Per stage, its chain: stages whose units are linked replica to replica (the same `h`),
/// directly or through other such units, share one.
fn chains(design: &Design, stages: &[Stage]) -> Vec<usize> {
    // A unit is named by its replica 0 (`Design::core_index`); sets are kept by union-find
    // over engine indices.
    let cores = design.cores();
    let unit_of = |e: usize| {
        let (b, u, _) = cores[e];
        design
            .core_index(&b.name, &u.name, 0)
            .expect("replica 0 exists")
    };
    let mut parent: Vec<usize> = (0..cores.len()).collect();
    fn root(parent: &mut [usize], x: usize) -> usize {
        let mut x = x;
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for l in design.links() {
        if cores[l.from].1.h == cores[l.to].1.h {
            let (ra, rb) = (
                root(&mut parent, unit_of(l.from)),
                root(&mut parent, unit_of(l.to)),
            );
            parent[ra] = rb;
        }
    }
    stages
        .iter()
        .map(|st| {
            let (b, u) = (
                &design.branches[st.branch],
                &design.branches[st.branch].units[st.unit],
            );
            let e = design
                .core_index(&b.name, &u.name, 0)
                .expect("a stage's unit exists");
            root(&mut parent, e)
        })
        .collect()
}

/// Band r of `h` near-equal bands of `n` rows.
fn band(n: usize, r: usize, h: usize) -> Range<usize> {
    (n * r / h)..(n * (r + 1) / h)
}

/// The input rows node `n` reads for its output rows `rows` (the schedule's window: tap 0
/// of output row oy reads row oy * stride + shift - pad), clipped to the input.
fn input_rows(n: &Node, rows: Range<usize>, in_h: usize) -> Range<usize> {
    if let Lowered::Upsample { factor } = n.work {
        return rows.start / factor..rows.end.div_ceil(factor).min(in_h);
    }
    let (kh, _, s, pad) = window(n);
    let (k, ps) = n.pool.unwrap_or((1, 1));
    let (kh_e, s_e) = (kh + (k - 1) * s, s * ps);
    let lo = (rows.start * s_e + n.shift.0) as isize - pad as isize;
    let hi = ((rows.end - 1) * s_e + n.shift.0 + kh_e) as isize - pad as isize;
    (lo.max(0) as usize).min(in_h)..(hi.max(0) as usize).min(in_h)
}

/// The tensors a node reads, with the rows of each that its output rows `rows` need: its
/// input (through the window) and its residual operand (the same rows, or the one row of a
/// broadcast operand). A concat stored in place is read as its operands.
pub(crate) fn reads(g: &Graph, n: &Node, rows: Range<usize>) -> Vec<(String, Range<usize>)> {
    if rows.is_empty() {
        return Vec::new();
    }
    let input = input_rows(n, rows.clone(), g.shape_of(&n.input)[0]);
    let mut out: Vec<(String, Range<usize>)> = parts(g, &n.input)
        .into_iter()
        .map(|u| (u, input.clone()))
        .collect();
    // A broadcast residual is its one row, read for every row.
    if let Some(res) = &n.residual {
        let r = if n.broadcast { 0..1 } else { rows };
        out.extend(parts(g, res).into_iter().map(|u| (u, r.clone())));
    }
    out
}

/// The tensors that hold tensor t: a concat stored in place is its operands.
fn parts(g: &Graph, t: &str) -> Vec<String> {
    match g.concats.iter().find(|c| c.name == t) {
        Some(c) => c.inputs.clone(),
        None => vec![t.to_string()],
    }
}

/// Per stage, per replica: its rows cut into the stage's `bands` row bands, which it
/// computes one after the other and hands on one at a time (fine-grained pipelining).
/// Each band is given as, per node, the end of the node's rows done once the band is done.
///
/// Band k of a node ends at fraction (k + 1) / bands of its rows, or further where what
/// reads it needs more: its stage's later nodes' windows over their band k, and the band
/// of a later stage that ends at the same fraction of that stage's frame (so a band
/// downstream waits only for the band upstream that ends where it does, halos included).
/// Stages are cut last to first (a stage reads only earlier ones). Rows are never computed
/// twice: band k computes rows from where band k - 1 ended.
pub(crate) fn bands(
    design: &Design,
    g: &Graph,
    stages: &[Stage],
    replicas: &[Vec<Range<usize>>],
    bands: &[usize],
) -> Vec<Vec<Vec<Vec<usize>>>> {
    let chain = chains(design, stages);
    let mut stage_of = vec![None; g.nodes.len()];
    for (k, st) in stages.iter().enumerate() {
        for &i in &st.nodes {
            stage_of[i] = Some(k);
        }
    }
    let rows_of = |s: usize, r: usize| -> Vec<Range<usize>> {
        (0..g.nodes.len())
            .map(|i| match stage_of[i] == Some(s) {
                true => replicas[i].get(r).cloned().unwrap_or(0..0),
                false => 0..0,
            })
            .collect()
    };
    // Per stage, per replica, per band, per node: the least end that what reads it needs.
    let mut floor: Vec<Vec<Vec<Vec<usize>>>> = stages
        .iter()
        .enumerate()
        .map(|(s, st)| {
            let h = design.branches[st.branch].units[st.unit].h as usize;
            vec![vec![vec![0; g.nodes.len()]; bands[s]]; h]
        })
        .collect();
    let mut out = vec![Vec::new(); stages.len()];
    for s in (0..stages.len()).rev() {
        for r in 0..floor[s].len() {
            let rows = rows_of(s, r);
            let ends = band_ends(g, &stages[s].nodes, &rows, &floor[s][r]);
            for k in 0..ends.len() {
                for &j in &stages[s].nodes {
                    let start = if k == 0 {
                        rows[j].start
                    } else {
                        ends[k - 1][j]
                    };
                    for (t, want) in reads(g, &g.nodes[j], start..ends[k][j]) {
                        for (i, n) in g.nodes.iter().enumerate() {
                            let Some(p) = stage_of[i].filter(|&p| p != s && n.tensor() == t) else {
                                continue;
                            };
                            let kp = ((k + 1) * bands[p]).div_ceil(ends.len()) - 1;
                            let qs = match chain[p] == chain[s] {
                                true => r..r + 1,
                                false => 0..floor[p].len(),
                            };
                            for q in qs {
                                let mine = replicas[i].get(q).cloned().unwrap_or(0..0);
                                let end = node_end(n, want.end);
                                if end > mine.start {
                                    let f = &mut floor[p][q][kp][i];
                                    *f = (*f).max(end.min(mine.end));
                                }
                            }
                        }
                    }
                }
            }
            out[s].push(ends);
        }
    }
    out
}

/// One replica's bands of a stage (`bands`), each at least at `floor`'s ends.
fn band_ends(
    g: &Graph,
    nodes: &[usize],
    rows: &[Range<usize>],
    floor: &[Vec<usize>],
) -> Vec<Vec<usize>> {
    let bands = floor.len();
    let mut ends: Vec<Vec<usize>> = Vec::with_capacity(bands);
    for (k, least) in floor.iter().enumerate() {
        let mut end: Vec<usize> = rows.iter().map(|r| r.start).collect();
        for &i in nodes.iter().rev() {
            let r = &rows[i];
            if r.is_empty() {
                continue;
            }
            let share = r.start + (r.end - r.start) * (k + 1) / bands;
            let n = &g.nodes[i];
            // What the stage's later nodes read of this node's tensor in their band.
            let read = nodes
                .iter()
                .filter(|&&j| j > i)
                .flat_map(|&j| reads(g, &g.nodes[j], rows[j].start..end[j]))
                .filter(|(u, _)| u == n.tensor())
                .map(|(_, want)| own_rows(n, &(0..want.end)).end)
                .max()
                .unwrap_or(0);
            let before = ends.last().map_or(r.start, |e| e[i]);
            end[i] = share.max(read).max(before).max(least[i]).min(r.end);
        }
        ends.push(end);
    }
    ends
}

/// The rows node `n` computes to make rows `0..end` of its tensor (the tensor's rows for
/// a phase of a transposed convolution): the end of the node's own rows.
pub(crate) fn node_end(n: &Node, end: usize) -> usize {
    own_rows(n, &(0..end)).end
}

/// Per band of part `sh`, the tokens of the engines that feed it (`feeds`, the replicas
/// of one unit, whose tokens arrive joined) it must have received before the band starts:
/// enough that every row the band reads of their tensors is done, and all of a frame's
/// before its last band. A tensor of a stage further up is complete once the feeding
/// unit's last token of the frame arrives (every engine takes all of a frame's tokens
/// before its last band), so a band reading one waits for all of them.
pub fn band_needs(
    g: &Graph,
    parts: &[Vec<Part>],
    share_of: &[Option<(usize, usize)>],
    sh: &Part,
    feeds: &[usize],
) -> Vec<usize> {
    let Some(&(from, _)) = feeds.first().and_then(|&q| share_of[q].as_ref()) else {
        return vec![0; sh.bands()];
    };
    let all = parts[from][0].bands();
    // Whether a replica of stage k computes rows of node i.
    let runs = |k: usize, i: usize| parts[k].iter().any(|s| !s.rows[i].is_empty());
    let (own, _) = share_of[sh.engine].expect("a share's engine is active");
    let mut needs = Vec::with_capacity(sh.bands());
    let mut need = 0;
    for k in 0..sh.bands() {
        if k + 1 == sh.bands() {
            need = all;
        }
        for (j, r) in sh.band_rows(k).into_iter().enumerate() {
            for (t, want) in reads(g, &g.nodes[j], r) {
                let writers: Vec<usize> = g
                    .nodes
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| n.tensor() == t)
                    .map(|(i, _)| i)
                    .collect();
                // A model input is in memory, and the stage's own tensors are computed
                // by this engine in program order.
                if writers.is_empty() || writers.iter().any(|&i| runs(own, i)) {
                    continue;
                }
                if !writers.iter().any(|&i| runs(from, i)) {
                    need = all;
                    continue;
                }
                for &q in feeds {
                    let (kq, rq) = share_of[q].expect("a feeding engine is active");
                    let p = &parts[kq][rq];
                    for &i in &writers {
                        let end = node_end(&g.nodes[i], want.end);
                        if let Some(m) = p.band_done(i, end) {
                            need = need.max(m + 1);
                        }
                    }
                }
            }
        }
        needs.push(need);
    }
    needs
}
