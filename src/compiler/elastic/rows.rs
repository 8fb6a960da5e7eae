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

use super::map::Stage;
use crate::compiler::passes::allocate::window;
use crate::compiler::passes::legalize::{Graph, Node};
use crate::design::Design;
use crate::model::Op;
use std::collections::HashMap;
use std::ops::Range;

/// Rows of tensor (name) wanted from replica r of its producer.
type Need = HashMap<(String, usize), Range<usize>>;

/// Per node, per replica of its stage's unit: the output rows that replica computes.
pub(super) fn replica_rows(design: &Design, g: &Graph, stages: &[Stage]) -> Vec<Vec<Range<usize>>> {
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
    let parts = |t: &str| match g.concats.iter().find(|c| c.name == t) {
        Some(c) => c.inputs.clone(),
        None => vec![t.to_string()],
    };
    // Rows `rows` of tensor t, read by replica r of stage `reader` (None: a model output).
    let request =
        |need: &mut Need, reader: Option<usize>, r: usize, t: &str, rows: &Range<usize>| {
            for u in parts(t) {
                let Some(p) = producer(&u) else {
                    continue;
                };
                if reader.is_some_and(|s| chain[s] == chain[p]) {
                    merge(need, &u, r, rows.clone());
                } else {
                    let n = g.shape_of(&u)[0];
                    for q in 0..hs[p] {
                        let b = band(n, q, hs[p]);
                        merge(need, &u, q, rows.start.max(b.start)..rows.end.min(b.end));
                    }
                }
            }
        };
    let mut need = Need::new();
    for o in &g.outputs {
        request(&mut need, None, 0, o, &(0..g.shape_of(o)[0]));
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
            let in_h = g.shape_of(&n.input)[0];
            request(
                &mut need,
                Some(s),
                r,
                &n.input,
                &input_rows(n, mine.clone(), in_h),
            );
            // A broadcast residual is its one row, read for every row.
            if let Some(res) = &n.residual {
                let res_rows = if n.broadcast { 0..1 } else { mine.clone() };
                request(&mut need, Some(s), r, res, &res_rows);
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
    if let Op::Upsample { factor } = n.op {
        return rows.start / factor..rows.end.div_ceil(factor).min(in_h);
    }
    let (kh, _, s, pad) = window(n);
    let (k, ps) = n.pool.unwrap_or((1, 1));
    let (kh_e, s_e) = (kh + (k - 1) * s, s * ps);
    let lo = (rows.start * s_e + n.shift.0) as isize - pad as isize;
    let hi = ((rows.end - 1) * s_e + n.shift.0 + kh_e) as isize - pad as isize;
    (lo.max(0) as usize).min(in_h)..(hi.max(0) as usize).min(in_h)
}
