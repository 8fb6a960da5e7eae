//! Transposed convolutions lowered to stride-phase convolutions (the DPU compiler's
//! technique: no multiplication by an inserted zero). Along each dimension, output o of a
//! transposed convolution with kernel k, stride s and padding p sums x[q - m] * w[r + s m]
//! over m, where r = (o + p) mod s is its phase and q = (o + p - r) / s. So the outputs of
//! one phase pair (ry, rx) are an ordinary stride-1 convolution of the input with the taps
//! r + s m of the kernel, flipped; each phase writes its pixels, every s-th one from its
//! first, into the transposed convolution's output tensor (`Place`).

use super::{Node, Place};
use crate::model::lower::{Lowered, Post, Stencil, Taps};

/// One phase along one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Phase {
    r: usize,
    /// Taps: r, r + s, ..., r + s (taps - 1).
    taps: usize,
    /// First output of the phase, and how many.
    first: usize,
    count: usize,
    /// Input rows before the first one that the phase's first output reads with its first
    /// tap (negative: it starts inside the input).
    pad_before: isize,
    /// Zero rows needed after the input.
    pad_after: usize,
}

/// The phases along a dimension of input size `n` and output size `out` that have outputs.
fn phases(n: usize, out: usize, k: usize, s: usize, p: usize) -> Vec<Phase> {
    (0..s)
        .filter_map(|r| {
            let taps = (k - r).div_ceil(s);
            // q ranges over ceil((p - r) / s) ..= floor((out - 1 + p - r) / s).
            let q_lo = if p >= r { (p - r).div_ceil(s) } else { 0 };
            let q_hi = (out - 1 + p).checked_sub(r)? / s;
            if q_hi < q_lo || taps == 0 {
                return None;
            }
            let count = q_hi - q_lo + 1;
            let pad_before = taps as isize - 1 - q_lo as isize;
            let last = (count - 1 + taps - 1) as isize - pad_before;
            Some(Phase {
                r,
                taps,
                first: s * q_lo + r - p,
                count,
                pad_before,
                pad_after: (last - (n as isize - 1)).max(0) as usize,
            })
        })
        .collect()
}

/// The phase convolutions of transposed-convolution node `n` (input of `cin` channels and
/// `h` x `w` pixels), each writing its share of `n`'s output tensor.
pub fn lower(n: &Node, [h, w, cin]: [usize; 3]) -> Vec<Node> {
    let Stencil {
        kh,
        kw,
        stride: s,
        pad: p,
        cout,
        taps: Taps::Weighted { weights, .. },
        post,
        ..
    } = n.stencil()
    else {
        unreachable!("the phases of {} need a weighted window", n.name)
    };
    let (s, p, cout) = (*s, *p, *cout);
    let [oh, ow, _] = n.out;
    let mut nodes = Vec::new();
    for py in phases(h, oh, *kh, s, p) {
        for px in phases(w, ow, *kw, s, p) {
            // The zero border the phase reads: the padding of either side.
            let border = [py.pad_before, px.pad_before]
                .into_iter()
                .map(|b| b.max(0) as usize)
                .chain([py.pad_after, px.pad_after])
                .max()
                .unwrap_or(0);
            let mut phase_weights = Vec::with_capacity(py.taps * px.taps * cin * cout);
            for jy in 0..py.taps {
                for jx in 0..px.taps {
                    let ky = py.r + s * (py.taps - 1 - jy);
                    let kx = px.r + s * (px.taps - 1 - jx);
                    let tap = (ky * kw + kx) * cin * cout;
                    phase_weights.extend_from_slice(&weights[tap..tap + cin * cout]);
                }
            }
            let mut phase_untied = Vec::new();
            let untied_bias = &post.untied_bias;
            if !untied_bias.is_empty() {
                for u in 0..py.count {
                    for v in 0..px.count {
                        let (oy, ox) = (py.first + s * u, px.first + s * v);
                        let at = (oy * ow + ox) * cout;
                        phase_untied.extend_from_slice(&untied_bias[at..at + cout]);
                    }
                }
            }
            nodes.push(Node {
                name: format!("{}.phase{}{}", n.name, py.r, px.r),
                op: n.op,
                work: Lowered::Stencil(Stencil {
                    transposed: false,
                    kh: py.taps,
                    kw: px.taps,
                    stride: 1,
                    pad: border,
                    pad_value: 0,
                    cout,
                    taps: Taps::Weighted {
                        groups: 1,
                        weights: phase_weights,
                        weight_scales: Vec::new(),
                    },
                    post: Post {
                        untied_bias: phase_untied,
                        ..post.clone()
                    },
                }),
                out: [py.count, px.count, cout],
                shift: (
                    (border as isize - py.pad_before) as usize,
                    (border as isize - px.pad_before) as usize,
                ),
                zero_tiles: None,
                place: Some(Place {
                    tensor: n.name.clone(),
                    shape: n.out,
                    stride: s,
                    offset: (py.first, px.first),
                }),
                macs: (py.count * px.count * cout * py.taps * px.taps * cin) as u64,
                ..n.clone()
            });
        }
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder's up-convolution, kernel 4, stride 2, padding 1, on 5 pixels (output
    /// 10), derived by hand from o = 2 i + t - 1: phase r = 0 holds the odd outputs 1, 3,
    /// ..., 9 (q = 1..=5), o = 2q - 1 summing x[q] w[0] + x[q - 1] w[2], so its first
    /// output reads x[0] and x[1] and its last x[4] and x[5] (one zero row after the input);
    /// phase r = 1 holds the even outputs 0, ..., 8 (q = 0..=4), o = 2q summing x[q] w[1] +
    /// x[q - 1] w[3] (one zero row before).
    #[test]
    fn kernel_4_stride_2_padding_1() {
        let ph = phases(5, 10, 4, 2, 1);
        assert_eq!(
            ph,
            vec![
                Phase {
                    r: 0,
                    taps: 2,
                    first: 1,
                    count: 5,
                    pad_before: 0,
                    pad_after: 1
                },
                Phase {
                    r: 1,
                    taps: 2,
                    first: 0,
                    count: 5,
                    pad_before: 1,
                    pad_after: 0
                },
            ]
        );
    }

    /// For every small geometry, by the definition o = i s + t - p: the phases cover every
    /// output exactly once, and each phase output's sum over its taps m (input q - m with
    /// tap r + s m) is exactly the set of (input, tap) pairs landing on it, with inputs
    /// outside the image only where the phase has zero rows.
    #[test]
    fn phases_cover_every_output_once_with_exactly_its_taps() {
        for n in 1..7usize {
            for s in 1..4 {
                for k in s..7 {
                    for p in 0..k {
                        let Some(out) = ((n - 1) * s + k).checked_sub(2 * p).filter(|&o| o > 0)
                        else {
                            continue;
                        };
                        let mut seen = vec![0; out];
                        for ph in phases(n, out, k, s, p) {
                            for u in 0..ph.count {
                                let o = ph.first + s * u;
                                seen[o] += 1;
                                // The phase reads input u + j - pad_before with tap
                                // r + s (taps - 1 - j).
                                let mut got: Vec<(isize, usize)> = (0..ph.taps)
                                    .map(|j| {
                                        let i = (u + j) as isize - ph.pad_before;
                                        assert!(
                                            i >= -ph.pad_before.max(0)
                                                && i < (n + ph.pad_after) as isize,
                                            "n {n} k {k} s {s} p {p}: row {i} outside the padding"
                                        );
                                        (i, ph.r + s * (ph.taps - 1 - j))
                                    })
                                    .filter(|&(i, _)| i >= 0 && i < n as isize)
                                    .collect();
                                got.sort();
                                let mut want: Vec<(isize, usize)> = (0..n)
                                    .flat_map(|i| (0..k).map(move |t| (i, t)))
                                    .filter(|&(i, t)| i * s + t == o + p)
                                    .map(|(i, t)| (i as isize, t))
                                    .collect();
                                want.sort();
                                assert_eq!(got, want, "n {n} k {k} s {s} p {p}: output {o}");
                            }
                        }
                        assert!(
                            seen.iter().all(|&c| c == 1),
                            "n {n} k {k} s {s} p {p}: {seen:?}"
                        );
                    }
                }
            }
        }
    }
}
