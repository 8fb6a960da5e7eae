//! Hand-off tokens: the rows an engine sends down its stream links after each band of its
//! share of a frame, and how many of its feeders' tokens it takes before each of its bands.

use crate::compiler::passes::legalize::Graph;
use crate::compiler::passes::map::rows;
use crate::compiler::passes::schedule::Share;
use crate::compiler::step::{Res, Step};
use crate::design::Design;
use crate::isa::{Buffer, Instr, Op as IsaOp, Transfer};

/// Per band of share `sh`, the tokens of the engines that feed it (`feeds`, the replicas
/// of one unit, whose tokens arrive joined) it must have received before the band starts:
/// enough that every row the band reads of their tensors is done, and all of a frame's
/// before its last band. A tensor of a stage further up is complete once the feeding
/// unit's last token of the frame arrives (every engine takes all of a frame's tokens
/// before its last band), so a band reading one waits for all of them.
pub(super) fn band_needs(
    g: &Graph,
    shares: &[Vec<Share>],
    share_of: &[Option<(usize, usize)>],
    sh: &Share,
    feeds: &[usize],
) -> Vec<usize> {
    let Some(&(from, _)) = feeds.first().and_then(|&q| share_of[q].as_ref()) else {
        return vec![0; sh.bands.len()];
    };
    let all = shares[from][0].ends.len();
    // Whether a replica of stage k computes rows of node i.
    let runs = |k: usize, i: usize| shares[k].iter().any(|s| !s.rows[i].is_empty());
    let (own, _) = share_of[sh.engine].expect("a share's engine is active");
    let mut needs = Vec::with_capacity(sh.bands.len());
    let mut need = 0;
    for k in 0..sh.bands.len() {
        if k + 1 == sh.bands.len() {
            need = all;
        }
        for (j, r) in sh.band_rows(k).into_iter().enumerate() {
            for (t, want) in rows::reads(g, &g.nodes[j], r) {
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
                    let p = &shares[kq][rq];
                    for &i in &writers {
                        let end = rows::node_end(&g.nodes[i], want.end);
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

/// A frame token is a few output rows leaving an engine and as many beats arriving as
/// input rows: per engine, the rows it sends (one store reaches every engine it feeds)
/// and the rows it receives (an engine has one link in).
pub(super) fn token_rows(
    design: &Design,
    links: &[crate::design::Link],
    active: &[bool],
) -> (Vec<u64>, Vec<u64>) {
    let mem_w = design.memory.data_width_bits;
    let cores = design.cores();
    let out_beats = |e: usize| out_row_beats(design, e);
    let in_beats = |e: usize| u64::from(cores[e].1.input_elem_bits().div_ceil(mem_w));
    let mut send = vec![1u64; cores.len()];
    let mut receive = vec![1u64; cores.len()];
    // Row widths are powers of two beats: a wider input row takes several output rows.
    for l in links.iter().filter(|l| active[l.from]) {
        send[l.from] = send[l.from].max(in_beats(l.to).div_ceil(out_beats(l.from)));
    }
    for l in links.iter().filter(|l| active[l.from]) {
        receive[l.to] = (send[l.from] * out_beats(l.from)).div_ceil(in_beats(l.to));
    }
    (send, receive)
}

/// Beats of one output row of engine e (a whole number of memory beats).
fn out_row_beats(design: &Design, e: usize) -> u64 {
    let mem_w = design.memory.data_width_bits;
    u64::from(design.cores()[e].1.output_elem_bits().div_ceil(mem_w))
}

/// Per engine, the beats of the token it sends down its links (`token_rows`' rows).
pub(crate) fn token_beats(
    design: &Design,
    links: &[crate::design::Link],
    active: &[bool],
) -> Vec<u64> {
    let (send, _) = token_rows(design, links, active);
    send.iter()
        .enumerate()
        .map(|(e, rows)| rows * out_row_beats(design, e))
        .collect()
}

/// The hand-off token of `rows` rows: a store from output rows 0.. down the stream, or a
/// load from the stream into input rows 0.. (overwritten by the frame's loads before
/// anything reads them).
pub(super) fn token(node: usize, store: bool, rows: u64) -> Step {
    let (buffer, region) = if store {
        (Buffer::Output, Res::Spad(Buffer::Output, 0, rows))
    } else {
        (Buffer::Input, Res::Spad(Buffer::Input, 0, rows))
    };
    let t = Transfer {
        buffer,
        spad_addr: 0,
        ext_addr: 0,
        count0: rows,
        stride0: 0,
        count1: 1,
        stride1: 0,
        prec: 0,
        stream: true,
        ..Transfer::default()
    };
    let (op, reads, writes) = if store {
        (IsaOp::Store(t), vec![region], vec![])
    } else {
        (IsaOp::Load(t), vec![], vec![region])
    };
    Step {
        instr: Instr::new(op),
        reads,
        writes,
        node,
    }
}
