//! The tokens engines hand on down their stream links: how many rows one is on each side,
//! and how many of a link's tokens its FIFO holds.

use crate::design::Design;

/// A frame token is a few output rows leaving an engine and as many beats arriving as
/// input rows: per engine, the rows it sends (one store reaches every engine it feeds)
/// and the rows it receives (an engine has one link in).
pub fn token_rows(
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
pub fn token_beats(design: &Design, links: &[crate::design::Link], active: &[bool]) -> Vec<u64> {
    let (send, _) = token_rows(design, links, active);
    send.iter()
        .enumerate()
        .map(|(e, rows)| rows * out_row_beats(design, e))
        .collect()
}

/// Tokens each link's FIFO holds (`Design::links` order): its depth over the beats of its
/// sender's token.
pub fn token_capacity(design: &Design, links: &[crate::design::Link], active: &[bool]) -> Vec<u64> {
    let beats = token_beats(design, links, active);
    links
        .iter()
        .map(|l| u64::from(l.depth) / beats[l.from].max(1))
        .collect()
}
