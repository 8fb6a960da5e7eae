//! Smaller ONNX operators on the host, each as ONNX's reference computes it: the window
//! functions (HannWindow, HammingWindow, BlackmanWindow), Compress, CenterCropPad,
//! ReverseSequence, Det and LRN.

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
        "CenterCropPad" => center_crop_pad(n, x, need(ins, 1)),
        "ReverseSequence" => reverse_sequence(n, x, need(ins, 1)),
        "Det" => det(x),
        "LRN" => lrn(n, x),
        _ => return None,
    })
}

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1];
    }
    s
}

/// An axis attribute in range for rank `rank`.
fn axis(a: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    match (-r..r).contains(&a) {
        true => Ok(((a + r) % r.max(1)) as usize),
        false => Err(format!("axis {a} is outside a rank-{rank} tensor")),
    }
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
}
