//! DFT and STFT on the host, as ONNX's reference computes them (numpy's FFT, each result
//! rounded once to float32): signals `[..., n, 1]` (real) or `[..., n, 2]` (complex), the
//! spectrum always complex, an inverse one-sided transform real; and MelWeightMatrix.

use super::HostVal;
use crate::onnx::proto::Node;
use std::f64::consts::PI;

/// One of these operators; None for others.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    Some(match n.op_type.as_str() {
        "DFT" => dft_node(n, x, ins),
        "STFT" => stft(n, x, ins),
        "MelWeightMatrix" => mel_weight_matrix(n, x, ins),
        _ => return None,
    })
}

fn scalar_input(ins: &[Option<HostVal>], i: usize) -> Option<f64> {
    ins.get(i)
        .and_then(Option::as_ref)
        .and_then(|v| v.data.first().copied())
}

/// MelWeightMatrix (inputs num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
/// upper_edge_hertz): `[dft_length / 2 + 1, num_mel_bins]` triangular filters, as ONNX's
/// reference computes them: the band edges in mel (`2595 log10(1 + f / 700)`) in float32,
/// num_mel_bins + 2 points spaced by `(high - low) / (num_mel_bins + 2)` from the low edge,
/// back to hertz and to the bin `floor((dft_length + 1) f / sample_rate)` in double
/// precision; filter i rises linearly from bin i to bin i + 1 (1 there) and falls to
/// bin i + 2.
fn mel_weight_matrix(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let arg = |i: usize| -> Result<f64, String> {
        let v = if i == 0 {
            Some(x)
        } else {
            ins.get(i).and_then(Option::as_ref)
        };
        v.and_then(|v| v.data.first().copied())
            .ok_or(format!("input {i} is missing"))
    };
    let (mels, len, rate) = (arg(0)?, arg(1)?, arg(2)?);
    if !(1.0..=4096.0).contains(&mels) || !(1.0..=1048576.0).contains(&len) || rate < 1.0 {
        return Err(format!(
            "num_mel_bins {mels}, dft_length {len}, sample_rate {rate}: 1..=4096, 1..=2^20 and at least 1"
        ));
    }
    let mel = |hz: f64| 2595f32 * ((hz as f32) / 700.0).ln_1p() / std::f32::consts::LN_10;
    let (low, high) = (mel(arg(3)?), mel(arg(4)?));
    let (mels, spectrum) = (mels as usize, len as usize / 2 + 1);
    let step = (high - low) / (mels + 2) as f32;
    let bins = (0..mels + 2)
        .map(|k| {
            let m = k as f64 * f64::from(step) + f64::from(low);
            let hz = 700.0 * (m / 2595.0 * std::f64::consts::LN_10).exp_m1();
            // numpy's floor division of doubles (from fmod, not a rounded quotient).
            let a = (len + 1.0) * hz;
            let d = (a - a % rate) / rate;
            let b = if d - d.floor() > 0.5 {
                d.floor() + 1.0
            } else {
                d.floor()
            };
            match b >= 0.0 && b < spectrum as f64 {
                true => Ok(b as usize),
                false => Err(format!("a mel band edge in bin {b}, outside 0..{spectrum}")),
            }
        })
        .collect::<Result<Vec<usize>, String>>()?;
    let mut w = vec![0.0; super::elements(&[spectrum, mels])?];
    for i in 0..mels {
        let (lo, mid, hi) = (bins[i], bins[i + 1], bins[i + 2]);
        if mid == lo {
            w[mid * mels + i] = 1.0;
        } else {
            for j in lo..=mid {
                w[j * mels + i] = (j - lo) as f64 / (mid - lo) as f64;
            }
        }
        for j in mid..hi {
            w[j * mels + i] = (hi - j) as f64 / (hi - mid) as f64;
        }
    }
    let w = HostVal {
        dims: vec![spectrum, mels],
        data: w,
        elem: crate::onnx::proto::dtype::DOUBLE,
    };
    let to = n.attr_int("output_datatype", 1) as i32;
    super::shape::cast_to(&w, to, true, crate::numeric::mx::E8m0Round::Up)
}

/// DFT: along `axis` (an attribute to opset 19, input 2 from opset 20),
/// `dft_length` points (input 1; the axis' length by default, or `2 (m - 1)` for an
/// inverse one-sided transform of m points), `inverse`, `onesided`.
fn dft_node(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let rank = x.dims.len();
    if rank < 2 || !matches!(x.dims[rank - 1], 1 | 2) {
        return Err(format!(
            "a signal of shape {:?}: its last dimension must be 1 (real) or 2 (complex)",
            x.dims
        ));
    }
    // Opsets 17 to 19 have an axis attribute, default 1; from 20 an input, default -2. The
    // node does not say its opset, so one of the two must be given.
    let axis = match (scalar_input(ins, 2), n.attr("axis")) {
        (Some(a), _) => a as i64,
        (None, Some(_)) => n.attr_int("axis", 1),
        (None, None) => {
            return Err("no axis (attribute or input): its default is 1 to opset 19 and -2 from opset 20; give it explicitly".into())
        }
    };
    let a = super::shape::axis_of(axis, rank)?;
    if a == rank - 1 {
        return Err("the axis is the complex dimension".into());
    }
    let (inverse, onesided) = (
        n.attr_int("inverse", 0) != 0,
        n.attr_int("onesided", 0) != 0,
    );
    let len = match scalar_input(ins, 1) {
        Some(l) if l >= 1.0 => l as usize,
        Some(l) => return Err(format!("a dft_length of {l}")),
        None if inverse && onesided => 2 * x.dims[a].saturating_sub(1),
        None => x.dims[a],
    };
    dft(x, a, len, inverse, onesided)
}

/// The transform of `x` along axis `a` with `len` points (truncating or padding with
/// zeros): forward (`onesided`: the first `len / 2 + 1` frequencies), or inverse (scaled
/// by `1 / len`; `onesided`: the real signal of a Hermitian spectrum given by its first
/// half, as numpy's irfft).
fn dft(
    x: &HostVal,
    a: usize,
    len: usize,
    inverse: bool,
    onesided: bool,
) -> Result<HostVal, String> {
    let rank = x.dims.len();
    let c = x.dims[rank - 1];
    let (outer, m) = (x.dims[..a].iter().product::<usize>(), x.dims[a]);
    let inner: usize = x.dims[a + 1..rank - 1].iter().product();
    let at = |o: usize, t: usize, i: usize| {
        let k = ((o * m + t) * inner + i) * c;
        (x.data[k], if c == 2 { x.data[k + 1] } else { 0.0 })
    };
    let (out_len, out_c) = match (inverse, onesided) {
        (false, true) => (len / 2 + 1, 2),
        (true, true) => (len, 1),
        _ => (len, 2),
    };
    let mut dims = x.dims.clone();
    dims[a] = out_len;
    dims[rank - 1] = out_c;
    let mut out = vec![0.0; super::elements(&dims)?];
    let sign = if inverse { 1.0 } else { -1.0 };
    for o in 0..outer {
        for i in 0..inner {
            for f in 0..out_len {
                let (mut re, mut im) = (0.0, 0.0);
                if inverse && onesided {
                    // numpy's irfft: the first len / 2 + 1 points, the rest their
                    // conjugates; the imaginary parts of the first and (even len) the
                    // middle point are dropped.
                    for k in 0..len {
                        let (h, conj) = if k <= len / 2 {
                            (k, false)
                        } else {
                            (len - k, true)
                        };
                        let (xr, mut xi) = if h < m { at(o, h, i) } else { (0.0, 0.0) };
                        if h == 0 || 2 * h == len {
                            xi = 0.0;
                        }
                        if conj {
                            xi = -xi;
                        }
                        let th = 2.0 * PI * (k * f % len) as f64 / len as f64;
                        re += xr * th.cos() - xi * th.sin();
                    }
                } else {
                    for t in 0..m.min(len) {
                        let (xr, xi) = at(o, t, i);
                        let th = sign * 2.0 * PI * (t * f % len) as f64 / len as f64;
                        re += xr * th.cos() - xi * th.sin();
                        im += xr * th.sin() + xi * th.cos();
                    }
                }
                if inverse {
                    re /= len as f64;
                    im /= len as f64;
                }
                let k = ((o * out_len + f) * inner + i) * out_c;
                out[k] = re;
                if out_c == 2 {
                    out[k + 1] = im;
                }
            }
        }
    }
    Ok(HostVal::float_like(x.elem, dims, out))
}

/// STFT: frames of `[batch, signal, 1 or 2]` `frame_step` apart (input 1), each the
/// window's length (input 2, ones by default; or `frame_length`, input 3) weighted by the
/// window, transformed with `frame_length` points (`onesided`, the default: the first half
/// of the frequencies): `[batch, frames, frequencies, 2]`.
fn stft(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let &[batch, len, c] = &x.dims[..] else {
        return Err(format!(
            "a signal of shape {:?}, not [batch, length, 1 or 2]",
            x.dims
        ));
    };
    if !matches!(c, 1 | 2) {
        return Err(format!(
            "a signal of shape {:?}, not [batch, length, 1 or 2]",
            x.dims
        ));
    }
    let step = scalar_input(ins, 1)
        .filter(|&s| s >= 1.0)
        .ok_or("a frame_step below 1")? as usize;
    let window = ins.get(2).and_then(Option::as_ref).map(|w| w.data.clone());
    let frame = match (scalar_input(ins, 3), &window) {
        (Some(f), _) => f as usize,
        (None, Some(w)) => w.len(),
        (None, None) => len,
    };
    let window = window.unwrap_or_else(|| vec![1.0; frame]);
    let size = window.len();
    if frame == 0 || size == 0 || frame > len {
        return Err(format!(
            "frames of {frame} samples (window {size}) in a signal of {len}"
        ));
    }
    let frames = 1 + (len - frame) / step;
    let mut data = Vec::with_capacity(batch * frames * size * c);
    for b in 0..batch {
        for f in 0..frames {
            for (t, &wv) in window.iter().enumerate() {
                let s = f * step + t;
                for k in 0..c {
                    let v = if s < len {
                        x.data[(b * len + s) * c + k]
                    } else {
                        0.0
                    };
                    data.push(v * wv);
                }
            }
        }
    }
    let framed = HostVal {
        dims: vec![batch, frames, size, c],
        data,
        elem: x.elem,
    };
    dft(&framed, 2, frame, false, n.attr_int("onesided", 1) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::proto::dtype;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
    }

    /// By hand: upper edge 4900 Hz is 2595 log10(8) mel, so the three band points (low 0)
    /// are 700 (8^(k/3) - 1) = 0, 700 and 2100 Hz; with dft_length 13 (7 bins) and sample
    /// rate 5000 they fall in bins floor(14 f / 5000) = 0, 1 (1.96) and 5 (5.88). The one
    /// filter rises from 0 to 1 at bin 1, then falls by a quarter a bin to 0 at bin 5.
    #[test]
    fn mel_weight_matrix_by_hand() {
        let s = |v: f64, elem| {
            Some(HostVal {
                dims: vec![],
                data: vec![v],
                elem,
            })
        };
        let ins = [
            None,
            s(13.0, dtype::INT64),
            s(5000.0, dtype::INT64),
            s(0.0, dtype::FLOAT),
            s(4900.0, dtype::FLOAT),
        ];
        let one = s(1.0, dtype::INT64).unwrap();
        let w = mel_weight_matrix(&Node::default(), &one, &ins).unwrap();
        assert_eq!(w.dims, vec![7, 1]);
        assert_eq!(w.data, vec![0.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0]);
        assert_eq!(w.elem, dtype::FLOAT);
        let zero = s(0.0, dtype::INT64).unwrap();
        assert!(mel_weight_matrix(&Node::default(), &zero, &ins).is_err());
    }

    /// By hand, n = 4: the impulse at 1, [0, 1, 0, 0], has the spectrum e^(-2 pi i k / 4)
    /// = 1, -i, -1, i (one-sided, the first three); numpy's irfft of those three gives the
    /// impulse back; the inverse of four ones is the impulse at 0. STFT of [1, 2, 3, 4] in
    /// frames of 2, 2 apart: [1 + 2, 1 - 2] and [3 + 4, 3 - 4].
    #[test]
    fn transforms_by_hand() {
        let x = HostVal::float(vec![1, 4, 1], vec![0.0, 1.0, 0.0, 0.0]);
        let full = dft(&x, 1, 4, false, false).unwrap();
        let want = [1.0, 0.0, 0.0, -1.0, -1.0, 0.0, 0.0, 1.0];
        assert!(close(&full.data, &want), "{:?}", full.data);
        let half = dft(&x, 1, 4, false, true).unwrap();
        assert_eq!(half.dims, vec![1, 3, 2]);
        assert!(close(&half.data, &want[..6]));
        let back = dft(&half, 1, 4, true, true).unwrap();
        assert_eq!(back.dims, vec![1, 4, 1]);
        assert!(close(&back.data, &[0.0, 1.0, 0.0, 0.0]), "{:?}", back.data);
        let ones = HostVal::float(vec![1, 4, 2], vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]);
        let inv = dft(&ones, 1, 4, true, false).unwrap();
        assert!(close(&inv.data, &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]));
        let signal = HostVal::float(vec![1, 4, 1], vec![1.0, 2.0, 3.0, 4.0]);
        let step = HostVal {
            dims: vec![],
            data: vec![2.0],
            elem: dtype::INT64,
        };
        let len = HostVal { ..step.clone() };
        let s = stft(
            &Node::default(),
            &signal,
            &[None, Some(step), None, Some(len)],
        )
        .unwrap();
        assert_eq!(s.dims, vec![1, 2, 2, 2]);
        assert!(close(&s.data, &[3.0, 0.0, -1.0, 0.0, 7.0, 0.0, -1.0, 0.0]));
    }
}
