//! Smaller ONNX operators on the host, each as ONNX's reference computes it: the window
//! functions (HannWindow, HammingWindow, BlackmanWindow), Compress, NonZero,
//! CenterCropPad, ReverseSequence, Det, LRN, Einsum and BitCast.

use super::shape::{axis_of as axis, strides};
use super::{need, HostVal};
use crate::onnx::proto::{dtype, Node};

/// One of these operators; None for others.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    Some(match n.op_type.as_str() {
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => window(n, x),
        "Compress" => compress(n, x, need(ins, 1)),
        "NonZero" => Ok(non_zero(x)),
        "CenterCropPad" => center_crop_pad(n, x, need(ins, 1)),
        "ReverseSequence" => reverse_sequence(n, x, need(ins, 1)),
        "Det" => det(x),
        "LRN" => lrn(n, x),
        "Einsum" => einsum(n, ins),
        "BitCast" => bitcast(x, n.attr_int("to", 0) as i32),
        _ => return None,
    })
}

/// NonZero: the indices of the elements that are not zero (NaN is not), `[rank, count]`
/// int64 in row-major order, as numpy's nonzero (a scalar as a one-element vector).
fn non_zero(x: &HostVal) -> HostVal {
    let dims = if x.dims.is_empty() {
        vec![1]
    } else {
        x.dims.clone()
    };
    let hits: Vec<usize> = (0..x.data.len()).filter(|&i| x.data[i] != 0.0).collect();
    let mut data = Vec::with_capacity(dims.len() * hits.len());
    for (&s, &d) in strides(&dims).iter().zip(&dims) {
        data.extend(hits.iter().map(|&h| (h / s % d) as f64));
    }
    HostVal {
        dims: vec![dims.len(), hits.len()],
        data,
        elem: dtype::INT64,
    }
}

/// The width and bit pattern of value `v` of type `elem` (None for a type the host does not
/// hold).
fn bits_of(elem: i32, v: f64) -> Option<(u32, u64)> {
    if let Some(f) = dtype::narrow_float(elem) {
        return Some((16, u64::from(f.encode(v as f32))));
    }
    Some(match elem {
        dtype::FLOAT => (32, u64::from((v as f32).to_bits())),
        dtype::DOUBLE => (64, v.to_bits()),
        dtype::INT8 | dtype::UINT8 | dtype::BOOL => (8, u64::from(v as i64 as u8)),
        dtype::INT16 | dtype::UINT16 => (16, u64::from(v as i64 as u16)),
        dtype::INT32 | dtype::UINT32 => (32, u64::from(v as i64 as u32)),
        dtype::INT64 => (64, v as i64 as u64),
        dtype::UINT64 => (64, v as u64),
        _ => return None,
    })
}

/// The value of type `elem` with bit pattern `b` (of `elem`'s width); None for a 64-bit
/// integer of more than 53 significant bits, which the host does not hold exactly.
fn of_bits(elem: i32, b: u64) -> Option<f64> {
    if let Some(f) = dtype::narrow_float(elem) {
        return Some(f.decode(b as u32));
    }
    match elem {
        dtype::FLOAT => Some(f64::from(f32::from_bits(b as u32))),
        dtype::DOUBLE => Some(f64::from_bits(b)),
        dtype::INT8 => Some(f64::from(b as u8 as i8)),
        dtype::UINT8 => Some(f64::from(b as u8)),
        dtype::BOOL => Some(f64::from(u8::from(b != 0))),
        dtype::INT16 => Some(f64::from(b as u16 as i16)),
        dtype::UINT16 => Some(f64::from(b as u16)),
        dtype::INT32 => Some(f64::from(b as u32 as i32)),
        dtype::UINT32 => Some(f64::from(b as u32)),
        dtype::INT64 => Some(b as i64 as f64).filter(|&v| v as i64 == b as i64),
        _ => Some(b as f64).filter(|&v| v as u64 == b),
    }
}

/// BitCast: each element's bit pattern read as type `to`, of the same width.
fn bitcast(x: &HostVal, to: i32) -> Result<HostVal, String> {
    let width = |t: i32| bits_of(t, 0.0).map(|(w, _)| w);
    let (Some(wx), Some(wt)) = (width(x.elem), width(to)) else {
        return Err(format!(
            "a BitCast from {} to {}",
            dtype::name(x.elem),
            dtype::name(to)
        ));
    };
    if wx != wt {
        return Err(format!(
            "a BitCast from {} ({wx} bits) to {} ({wt} bits): the widths must be equal",
            dtype::name(x.elem),
            dtype::name(to)
        ));
    }
    let data = x
        .data
        .iter()
        .map(|&v| {
            let (_, b) = bits_of(x.elem, v).expect("a known type");
            of_bits(to, b).ok_or_else(|| {
                format!(
                    "the bit pattern {b:#018x} as {} has more than 53 significant bits, more than the host holds exactly",
                    dtype::name(to)
                )
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(HostVal {
        dims: x.dims.clone(),
        data,
        elem: to,
    })
}

/// The window of `x` (a scalar size) samples: periodic (default) over size, symmetric
/// over size - 1; in double precision, as output_datatype (float by default) says.
fn window(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    let size = x.data.first().copied().ok_or("the size is empty")?;
    if !(0.0..=f64::from(1u32 << 24)).contains(&size) {
        return Err(format!("a window of {size} samples"));
    }
    let size = size as usize;
    let denom = match n.attr_int("periodic", 1) {
        0 => size.saturating_sub(1),
        _ => size,
    } as f64;
    let pi = std::f64::consts::PI;
    let data: Vec<f64> = (0..size)
        .map(|i| {
            let t = i as f64 / denom;
            match n.op_type.as_str() {
                "HannWindow" => (t * pi).sin().powi(2),
                "HammingWindow" => 25.0 / 46.0 - (t * 2.0 * pi).cos() * (21.0 / 46.0),
                _ => 0.42 - 0.5 * (t * 2.0 * pi).cos() + 0.08 * (t * 4.0 * pi).cos(),
            }
        })
        .collect();
    match n.attr_int("output_datatype", i64::from(dtype::FLOAT)) as i32 {
        dtype::FLOAT => Ok(HostVal::float(vec![size], data)),
        dtype::DOUBLE => Ok(HostVal {
            dims: vec![size],
            data,
            elem: dtype::DOUBLE,
        }),
        t => Err(format!(
            "output_datatype {} (float or double only)",
            dtype::name(t)
        )),
    }
}

/// The slices of `x` along `axis` (flattened without one) whose condition is true (a
/// condition shorter than the axis selects among its first elements).
fn compress(n: &Node, x: &HostVal, cond: Result<&HostVal, String>) -> Result<HostVal, String> {
    let cond = cond?;
    let (dims, a) = match n.attr("axis") {
        Some(_) => (x.dims.clone(), axis(n.attr_int("axis", 0), x.dims.len())?),
        None => (vec![x.data.len()], 0),
    };
    let len = dims[a];
    if cond.data.len() > len {
        return Err(format!(
            "a condition of {} elements for an axis of {len}",
            cond.data.len()
        ));
    }
    let keep: Vec<usize> = (0..cond.data.len())
        .filter(|&i| cond.data[i] != 0.0)
        .collect();
    let inner: usize = dims[a + 1..].iter().product();
    let outer: usize = dims[..a].iter().product();
    let mut data = Vec::with_capacity(outer * keep.len() * inner);
    for o in 0..outer {
        for &i in &keep {
            let at = (o * len + i) * inner;
            data.extend_from_slice(&x.data[at..at + inner]);
        }
    }
    let mut out = dims;
    out[a] = keep.len();
    Ok(HostVal {
        dims: out,
        data,
        elem: x.elem,
    })
}

/// Each axis of `axes` (all by default) cropped or zero-padded to its entry of `shape`,
/// centred (an odd difference leaves the extra element at the end).
fn center_crop_pad(
    n: &Node,
    x: &HostVal,
    shape: Result<&HostVal, String>,
) -> Result<HostVal, String> {
    let shape = shape?;
    let rank = x.dims.len();
    let axes: Vec<usize> = match n.attr_ints("axes") {
        Some(a) => a.iter().map(|&a| axis(a, rank)).collect::<Result<_, _>>()?,
        None => (0..rank).collect(),
    };
    if shape.data.len() != axes.len() || shape.data.iter().any(|&s| s < 0.0) {
        return Err(format!("shape {:?} for axes {axes:?}", shape.data));
    }
    let mut out = x.dims.clone();
    // Per axis: where the input's kept part starts in the input, and in the output.
    let (mut crop, mut pad) = (vec![0usize; rank], vec![0usize; rank]);
    for (&a, &s) in axes.iter().zip(&shape.data) {
        let (dim, s) = (x.dims[a], s as usize);
        out[a] = s;
        match s < dim {
            true => crop[a] = (dim - s) / 2,
            false => pad[a] = (s - dim) / 2,
        }
    }
    let total = super::elements(&out)?;
    let (os, is) = (strides(&out), strides(&x.dims));
    let mut data = vec![0.0; total];
    for (k, v) in data.iter_mut().enumerate() {
        let mut at = 0;
        let mut inside = true;
        for d in 0..rank {
            let o = k / os[d] % out[d];
            let i = (o + crop[d]).checked_sub(pad[d]);
            match i {
                Some(i) if i < x.dims[d] && o >= pad[d] => at += i * is[d],
                _ => inside = false,
            }
        }
        if inside {
            *v = x.data[at];
        }
    }
    Ok(HostVal {
        dims: out,
        data,
        elem: x.elem,
    })
}

/// Each batch entry's first `sequence_lens` steps along time_axis reversed.
fn reverse_sequence(
    n: &Node,
    x: &HostVal,
    lens: Result<&HostVal, String>,
) -> Result<HostVal, String> {
    let lens = lens?;
    let rank = x.dims.len();
    let (b, t) = (
        axis(n.attr_int("batch_axis", 1), rank)?,
        axis(n.attr_int("time_axis", 0), rank)?,
    );
    if b == t || lens.data.len() != x.dims[b] {
        return Err(format!(
            "batch_axis {b}, time_axis {t} and {} sequence lengths for {:?}",
            lens.data.len(),
            x.dims
        ));
    }
    if lens.data.iter().any(|&l| l < 0.0 || l as usize > x.dims[t]) {
        return Err(format!(
            "sequence_lens {:?} outside 0..={}",
            lens.data, x.dims[t]
        ));
    }
    let s = strides(&x.dims);
    let data = (0..x.data.len())
        .map(|k| {
            let (bi, ti) = (k / s[b] % x.dims[b], k / s[t] % x.dims[t]);
            let len = lens.data[bi] as usize;
            match ti < len {
                true => x.data[k - ti * s[t] + (len - 1 - ti) * s[t]],
                false => x.data[k],
            }
        })
        .collect();
    Ok(HostVal {
        dims: x.dims.clone(),
        data,
        elem: x.elem,
    })
}

/// The determinant of each matrix in the last two dimensions: LU with partial pivoting in
/// double precision, rounded to float32.
fn det(x: &HostVal) -> Result<HostVal, String> {
    let r = x.dims.len();
    if r < 2 || x.dims[r - 1] != x.dims[r - 2] {
        return Err(format!(
            "Det of a tensor of shape {:?} (square matrices last)",
            x.dims
        ));
    }
    let m = x.dims[r - 1];
    let count = x.data.len() / (m * m).max(1);
    let data = (0..count)
        .map(|k| {
            let mut a = x.data[k * m * m..(k + 1) * m * m].to_vec();
            let mut d = 1.0;
            for c in 0..m {
                let p = (c..m)
                    .max_by(|&i, &j| a[i * m + c].abs().total_cmp(&a[j * m + c].abs()))
                    .unwrap_or(c);
                if a[p * m + c] == 0.0 {
                    return 0.0;
                }
                if p != c {
                    for j in 0..m {
                        a.swap(p * m + j, c * m + j);
                    }
                    d = -d;
                }
                d *= a[c * m + c];
                for i in c + 1..m {
                    let f = a[i * m + c] / a[c * m + c];
                    for j in c..m {
                        a[i * m + j] -= f * a[c * m + j];
                    }
                }
            }
            d
        })
        .collect();
    Ok(HostVal::float(x.dims[..r - 2].to_vec(), data))
}

/// Local response normalization across channels (axis 1): x / (bias + alpha / size x the
/// sum of squares over channels c - floor((size - 1) / 2) ..= c + ceil((size - 1) / 2))^beta.
fn lrn(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    if x.dims.len() < 3 {
        return Err(format!("LRN of a tensor of shape {:?} (N, C, ...)", x.dims));
    }
    let size = n.attr_int("size", 0);
    if size < 1 {
        return Err("size must be at least 1".into());
    }
    let size = size as usize;
    let (alpha, beta, bias) = (
        f64::from(n.attr_float("alpha", 1e-4)),
        f64::from(n.attr_float("beta", 0.75)),
        f64::from(n.attr_float("bias", 1.0)),
    );
    let c = x.dims[1];
    let inner: usize = x.dims[2..].iter().product();
    let (lo, hi) = ((size - 1) / 2, (size - 1).div_ceil(2));
    let data = (0..x.data.len())
        .map(|k| {
            let (ch, base) = (k / inner % c, k - (k / inner % c) * inner);
            let sum: f64 = (ch.saturating_sub(lo)..=(ch + hi).min(c - 1))
                .map(|cc| x.data[base + cc * inner].powi(2))
                .sum();
            x.data[k] / (bias + alpha / size as f64 * sum).powf(beta)
        })
        .collect();
    Ok(HostVal::float(x.dims.clone(), data))
}

/// An Einsum term's labels for an operand of rank `rank` (None: the output's): a letter's
/// code, or 1000 + k for the k-th broadcast dimension from the right.
fn einsum_term(eq: &str, t: &str, rank: Option<usize>) -> Result<Vec<u32>, String> {
    let (before, after, dots) = match t.split_once("...") {
        Some((b, a)) => (b, a, true),
        None => (t, "", false),
    };
    let letters = |s: &str| -> Result<Vec<u32>, String> {
        s.chars()
            .map(|c| match c.is_ascii_alphabetic() {
                true => Ok(c as u32),
                false => Err(format!("equation {eq:?}: {c:?} is not a subscript")),
            })
            .collect()
    };
    let (b, a) = (letters(before)?, letters(after)?);
    let fixed = b.len() + a.len();
    let broadcast = match (dots, rank) {
        (false, Some(r)) if r != fixed => {
            return Err(format!(
                "equation {eq:?}: term {t:?} for an operand of rank {r}"
            ))
        }
        (true, Some(r)) if r < fixed => {
            return Err(format!(
                "equation {eq:?}: term {t:?} for an operand of rank {r}"
            ))
        }
        (true, Some(r)) => r - fixed,
        (true, None) => usize::MAX,
        (false, _) => 0,
    };
    Ok((b.into_iter())
        .chain((0..broadcast.min(64)).rev().map(|k| 1000 + k as u32))
        .chain(a)
        .collect())
}

/// Einsum: each operand's subscripts (letters, and `...` for the dimensions they leave,
/// broadcast across operands), the output's after `->` or, without it, the broadcast
/// dimensions then the letters used once in alphabetical order; every other letter summed.
/// Sums in double precision, rounded once to the first operand's type.
fn einsum(n: &Node, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let eq = match n.attr("equation") {
        Some(crate::onnx::proto::AttrValue::Text(t)) => t.replace(' ', ""),
        _ => return Err("the equation attribute is missing".into()),
    };
    let ops: Vec<&HostVal> = ins
        .iter()
        .map(|v| v.as_ref().ok_or("an operand is missing"))
        .collect::<Result<_, _>>()?;
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (eq.as_str(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ops.len() {
        return Err(format!(
            "equation {eq:?} has {} operands, the node {}",
            terms.len(),
            ops.len()
        ));
    }
    let mut size: std::collections::BTreeMap<u32, usize> = Default::default();
    let mut labels = Vec::new();
    for (t, v) in terms.iter().zip(&ops) {
        let l = einsum_term(&eq, t, Some(v.dims.len()))?;
        for (&lab, &d) in l.iter().zip(&v.dims) {
            let e = size.entry(lab).or_insert(d);
            match (*e, d) {
                (a, b) if a == b || b == 1 => {}
                (1, b) if lab >= 1000 => *e = b,
                (a, b) => {
                    return Err(format!(
                        "equation {eq:?}: subscript sizes {a} and {b} disagree"
                    ))
                }
            }
        }
        labels.push(l);
    }
    let broadcast: Vec<u32> = size.keys().copied().filter(|&l| l >= 1000).rev().collect();
    let out: Vec<u32> = match rhs {
        Some(r) => {
            let l = einsum_term(&eq, r, None)?;
            let mut o = Vec::new();
            let mut dots = false;
            for lab in l {
                match lab {
                    // `...` in the output: every broadcast dimension, outermost first.
                    l if l >= 1000 => {
                        if !dots {
                            o.extend(&broadcast);
                            dots = true;
                        }
                    }
                    l if size.contains_key(&l) => o.push(l),
                    l => {
                        return Err(format!(
                            "equation {eq:?}: output subscript {:?} is in no operand",
                            char::from_u32(l).unwrap_or('?')
                        ))
                    }
                }
            }
            o
        }
        None => {
            let once: Vec<u32> = size
                .keys()
                .copied()
                .filter(|&l| l < 1000 && labels.iter().flatten().filter(|&&x| x == l).count() == 1)
                .collect();
            broadcast.iter().copied().chain(once).collect()
        }
    };
    let summed: Vec<u32> = size.keys().copied().filter(|l| !out.contains(l)).collect();
    let all: Vec<u32> = out.iter().chain(&summed).copied().collect();
    let dims: Vec<usize> = all.iter().map(|l| size[l]).collect();
    let out_dims: Vec<usize> = out.iter().map(|l| size[l]).collect();
    let total = super::elements(&dims)?;
    let out_len = super::elements(&out_dims)?;
    let inner: usize = summed.iter().map(|l| size[l]).product();
    // Per operand, the stride of each label of `all` in it (0 where absent or broadcast).
    let strides_of: Vec<Vec<usize>> = labels
        .iter()
        .zip(&ops)
        .map(|(l, v)| {
            let s = strides(&v.dims);
            all.iter()
                .map(|lab| {
                    l.iter()
                        .enumerate()
                        .filter(|&(k, x)| x == lab && v.dims[k] > 1)
                        .map(|(k, _)| s[k])
                        .sum()
                })
                .collect()
        })
        .collect();
    let mut data = vec![0.0f64; out_len];
    let mut idx = vec![0usize; all.len()];
    for k in 0..total {
        let mut rem = k;
        for d in (0..all.len()).rev() {
            idx[d] = rem % dims[d];
            rem /= dims[d];
        }
        let mut p = 1.0;
        for (v, st) in ops.iter().zip(&strides_of) {
            let at: usize = idx.iter().zip(st).map(|(i, s)| i * s).sum();
            p *= v.data[at];
        }
        data[k / inner.max(1)] += p;
    }
    Ok(match ops[0].elem {
        dtype::FLOAT => HostVal::float(out_dims, data),
        e => HostVal {
            dims: out_dims,
            data,
            elem: e,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(dims: &[usize], data: &[f64]) -> HostVal {
        HostVal {
            dims: dims.to_vec(),
            data: data.to_vec(),
            elem: dtype::FLOAT,
        }
    }

    /// By hand: NonZero of [[1, 0], [NaN, 2]] is at (0, 0), (1, 0) and (1, 1): rows
    /// [0, 1, 1] and columns [0, 0, 1]; of a zero scalar, none ([1, 0]). Sign of
    /// [-2, 0, 3, NaN] is [-1, 0, 1, NaN].
    #[test]
    fn non_zero_and_sign_by_hand() {
        let nz = non_zero(&v(&[2, 2], &[1.0, 0.0, f64::NAN, 2.0]));
        assert_eq!(
            (nz.dims, nz.data),
            (vec![2, 3], vec![0.0, 1.0, 1.0, 0.0, 0.0, 1.0])
        );
        assert_eq!(non_zero(&v(&[], &[0.0])).dims, vec![1, 0]);
        let x = v(&[4], &[-2.0, 0.0, 3.0, f64::NAN]);
        let s = super::super::eval(&Node::new("Sign", vec![]), &[Some(x)]).unwrap();
        assert_eq!(s[0].data[..3], [-1.0, 0.0, 1.0]);
        assert!(s[0].data[3].is_nan());
    }

    /// By hand: det [[1, 2], [3, 4]] = -2 and det [[0, 1], [1, 0]] = -1 (a pivot swap);
    /// crop [1, 2, 3, 4] to 2 centred: [2, 3]; pad [1, 2] to 5: [0, 1, 2, 0, 0]; reverse
    /// the first 2 of 3 steps of one batch column: [2, 1, 3].
    #[test]
    fn small_cases_by_hand() {
        let d = det(&v(&[2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 1.0, 0.0])).unwrap();
        assert_eq!(d.data, vec![-2.0, -1.0]);
        let n = Node::default();
        let crop =
            center_crop_pad(&n, &v(&[4], &[1.0, 2.0, 3.0, 4.0]), Ok(&v(&[1], &[2.0]))).unwrap();
        assert_eq!(crop.data, vec![2.0, 3.0]);
        let pad = center_crop_pad(&n, &v(&[2], &[1.0, 2.0]), Ok(&v(&[1], &[5.0]))).unwrap();
        assert_eq!(pad.data, vec![0.0, 1.0, 2.0, 0.0, 0.0]);
        let r = reverse_sequence(&n, &v(&[3, 1], &[1.0, 2.0, 3.0]), Ok(&v(&[1], &[2.0]))).unwrap();
        assert_eq!(r.data, vec![2.0, 1.0, 3.0]);
        let e =
            reverse_sequence(&n, &v(&[3, 1], &[1.0, 2.0, 3.0]), Ok(&v(&[1], &[4.0]))).unwrap_err();
        assert!(e.contains("outside 0..=3"), "{e}");
    }

    /// By hand: float32 1.0 is 0x3f800000 = 1065353216; int8 -1 is the byte 255; float16
    /// -2.0 is 0xc000 = -16384 as int16; bfloat16 1.0 is 0x3f80 = 16256 as uint16; float32
    /// and int64 differ in width.
    #[test]
    fn bitcast_reads_the_bits() {
        let of = |elem, data: &[f64]| HostVal {
            dims: vec![data.len()],
            data: data.to_vec(),
            elem,
        };
        let cast = |x: HostVal, to| bitcast(&x, to).map(|v| (v.data, v.elem));
        assert_eq!(
            cast(of(dtype::FLOAT, &[1.0]), dtype::INT32),
            Ok((vec![1065353216.0], dtype::INT32))
        );
        assert_eq!(
            cast(of(dtype::INT8, &[-1.0]), dtype::UINT8).unwrap().0,
            vec![255.0]
        );
        assert_eq!(
            cast(of(dtype::FLOAT16, &[-2.0]), dtype::INT16).unwrap().0,
            vec![-16384.0]
        );
        assert_eq!(
            cast(of(dtype::BFLOAT16, &[1.0]), dtype::UINT16).unwrap().0,
            vec![16256.0]
        );
        let e = cast(of(dtype::FLOAT, &[1.0]), dtype::INT64).unwrap_err();
        assert!(e.contains("(32 bits) to int64 (64 bits)"), "{e}");
    }

    /// By hand: [[1, 2], [3, 4]] times [[5, 6], [7, 8]] is [[19, 22], [43, 50]] (explicit
    /// and implicit output); its diagonal [1, 4]; the trace of each of a batch, 5 and 13;
    /// the sum of all, 10.
    #[test]
    fn einsum_by_hand() {
        let run = |eq: &str, ops: &[HostVal]| {
            let n = Node {
                attributes: vec![crate::onnx::proto::Attribute {
                    name: "equation".into(),
                    value: crate::onnx::proto::AttrValue::Text(eq.into()),
                }],
                ..Node::default()
            };
            let ins: Vec<Option<HostVal>> = ops.iter().cloned().map(Some).collect();
            einsum(&n, &ins).map(|v| (v.dims, v.data))
        };
        let a = v(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let b = v(&[2, 2], &[5.0, 6.0, 7.0, 8.0]);
        let product = (vec![2, 2], vec![19.0, 22.0, 43.0, 50.0]);
        assert_eq!(run("ij,jk->ik", &[a.clone(), b.clone()]).unwrap(), product);
        assert_eq!(run("ij,jk", &[a.clone(), b]).unwrap(), product);
        assert_eq!(
            run("ii->i", std::slice::from_ref(&a)).unwrap(),
            (vec![2], vec![1.0, 4.0])
        );
        let batch = v(&[2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        assert_eq!(
            run("...ii->...", &[batch]).unwrap(),
            (vec![2], vec![5.0, 13.0])
        );
        assert_eq!(
            run("ij->", std::slice::from_ref(&a)).unwrap(),
            (vec![], vec![10.0])
        );
        assert!(run("ijk->i", &[a]).unwrap_err().contains("rank 2"));
    }
}
