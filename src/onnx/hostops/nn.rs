//! The host's products: MatMul (N-D, numpy's broadcasting of the batch dimensions) and
//! Gemm; BatchNormalization, the reductions and Softmax. Sums are taken in f64, exact for the
//! integer operators' products (`quant`), and rounded to float32 for float outputs.

use super::{broadcast, need, source, HostVal};
use crate::onnx::proto::Node;

/// The integer product a x b of numpy's matmul (f64 elements, exact for integers below
/// 2^53): 1-D operands are promoted and the promoted dimension dropped again; batch
/// dimensions broadcast.
pub fn matmul_values(a: &HostVal, b: &HostVal) -> Result<(Vec<usize>, Vec<f64>), String> {
    if a.dims.is_empty() || b.dims.is_empty() {
        return Err("a product of a scalar".into());
    }
    let ad = if a.dims.len() == 1 {
        vec![1, a.dims[0]]
    } else {
        a.dims.clone()
    };
    let bd = if b.dims.len() == 1 {
        vec![b.dims[0], 1]
    } else {
        b.dims.clone()
    };
    let (m, k) = (ad[ad.len() - 2], ad[ad.len() - 1]);
    let (kb, n) = (bd[bd.len() - 2], bd[bd.len() - 1]);
    let batch = broadcast(&ad[..ad.len() - 2], &bd[..bd.len() - 2]);
    let (Some(batch), true) = (batch, k == kb) else {
        return Err(format!("a {:?} by {:?} product", a.dims, b.dims));
    };
    let nb: usize = batch.iter().product();
    let mut out = vec![0f64; super::elements(&[nb, m, n])?];
    for bi in 0..nb {
        let (pa, pb) = (
            source(bi, &batch, &ad[..ad.len() - 2]),
            source(bi, &batch, &bd[..bd.len() - 2]),
        );
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0f64;
                for t in 0..k {
                    acc += a.data[(pa * m + i) * k + t] * b.data[(pb * k + t) * n + j];
                }
                out[(bi * m + i) * n + j] = acc;
            }
        }
    }
    let mut dims = batch;
    if a.dims.len() > 1 {
        dims.push(m);
    }
    if b.dims.len() > 1 {
        dims.push(n);
    }
    Ok((dims, out))
}

/// Float MatMul, and Gemm of 2-D tensors (transA, transB, alpha, beta, a broadcast C); in
/// float32 (sums in double precision, rounded once), or float64.
pub fn matmul(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let w = need(ins, 1)?;
    if n.op_type == "MatMul" {
        let (dims, data) = matmul_values(x, w)?;
        return Ok(HostVal::float_like(x.elem, dims, data));
    }
    if x.dims.len() != 2 || w.dims.len() != 2 {
        return Err("Gemm takes 2-D operands".into());
    }
    let t = |v: &HostVal, on: bool| {
        if !on {
            return v.clone();
        }
        let (r, c) = (v.dims[0], v.dims[1]);
        let data = (0..r * c).map(|k| v.data[(k % r) * c + k / r]).collect();
        HostVal {
            dims: vec![c, r],
            data,
            elem: v.elem,
        }
    };
    let a = t(x, n.attr_int("transA", 0) != 0);
    let b = t(w, n.attr_int("transB", 0) != 0);
    let (dims, acc) = matmul_values(&a, &b)?;
    let (alpha, beta) = (
        f64::from(n.attr_float("alpha", 1.0)),
        f64::from(n.attr_float("beta", 1.0)),
    );
    let c = ins.get(2).and_then(|v| v.clone());
    if let Some(c) = &c {
        if broadcast(&dims, &c.dims).as_deref() != Some(&dims[..]) {
            return Err(format!(
                "a bias of shape {:?} for a {dims:?} product",
                c.dims
            ));
        }
    }
    let data = (0..acc.len())
        .map(|k| {
            let bias = c
                .as_ref()
                .map_or(0.0, |c| c.data[source(k, &dims, &c.dims)]);
            alpha * acc[k] + beta * bias
        })
        .collect();
    Ok(HostVal::float_like(x.elem, dims, data))
}

/// BatchNormalization: `(x - mean) / sqrt(var + epsilon) * scale + B` per channel, in
/// float32. In inference the given mean and variance; with training_mode 1 (opset 14 and
/// later) the batch's own (the mean and population variance of each channel over the batch
/// and spatial axes, in double precision), and the running statistics `mean * momentum +
/// batch mean * (1 - momentum)` (and likewise the variance) as two more outputs.
pub fn batch_norm(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<Vec<HostVal>, String> {
    let [scale, b, mean, var] = [1, 2, 3, 4].map(|i| need(ins, i));
    let (scale, b, mean, var) = (scale?, b?, mean?, var?);
    let c = x.dims.get(1).copied().unwrap_or(1);
    if [scale, b, mean, var].iter().any(|p| p.data.len() != c) {
        return Err(format!(
            "parameters that are not one per channel of {:?}",
            x.dims
        ));
    }
    let eps = n.attr_float("epsilon", 1e-5);
    let inner: usize = x.dims.iter().skip(2).product();
    let training = n.attr_int("training_mode", 0) != 0;
    let (mut stats, mut running) = ((mean.data.clone(), var.data.clone()), vec![]);
    if training {
        let count = (x.data.len() / c.max(1)).max(1) as f64;
        let per = |f: &dyn Fn(usize, f64) -> f64| -> Vec<f64> {
            let mut acc = vec![0.0; c];
            for (k, &v) in x.data.iter().enumerate() {
                let ch = k / inner.max(1) % c;
                acc[ch] += f(ch, v);
            }
            acc.into_iter()
                .map(|v| f64::from((v / count) as f32))
                .collect()
        };
        let m = per(&|_, v| v);
        let v = per(&|ch, v| (v - m[ch]) * (v - m[ch]));
        let momentum = n.attr_float("momentum", 0.9);
        let blend = |old: &HostVal, new: &[f64]| -> Vec<f64> {
            (0..c)
                .map(|ch| {
                    f64::from(old.data[ch] as f32 * momentum + new[ch] as f32 * (1.0 - momentum))
                })
                .collect()
        };
        running = vec![
            HostVal::float(vec![c], blend(mean, &m)),
            HostVal::float(vec![c], blend(var, &v)),
        ];
        stats = (m, v);
    }
    let data = (0..x.data.len())
        .map(|k| {
            let ch = k / inner.max(1) % c;
            let (m, v) = (stats.0[ch] as f32, stats.1[ch] as f32);
            let f = |p: &HostVal| p.data[ch] as f32;
            f64::from((x.data[k] as f32 - m) / (v + eps).sqrt() * f(scale) + f(b))
        })
        .collect();
    let mut outs = vec![HostVal::float(x.dims.clone(), data)];
    outs.extend(running);
    Ok(outs)
}

/// ReduceMean, ReduceSum, ReduceMax, ReduceMin and ReduceProd over `axes` (the attribute
/// or, from opset 18, the second input; none: every axis, or none with
/// noop_with_empty_axes), keeping the reduced dimensions as 1 with keepdims.
pub fn reduce(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let rank = x.dims.len();
    let given: Option<Vec<i64>> = match ins.get(1).and_then(|v| v.as_ref()) {
        Some(v) => Some(v.data.iter().map(|&a| a as i64).collect()),
        None => n.attr_ints("axes"),
    };
    let axes: Vec<usize> = match given.filter(|a| !a.is_empty()) {
        Some(a) => a
            .iter()
            .map(|&v| {
                let w = if v < 0 { v + rank as i64 } else { v };
                usize::try_from(w)
                    .ok()
                    .filter(|&w| w < rank)
                    .ok_or_else(|| format!("axis {v} of a rank-{rank} tensor"))
            })
            .collect::<Result<_, _>>()?,
        None if n.attr_int("noop_with_empty_axes", 0) != 0 => return Ok(x.clone()),
        None => (0..rank).collect(),
    };
    let kept: Vec<usize> = (0..rank)
        .map(|k| if axes.contains(&k) { 1 } else { x.dims[k] })
        .collect();
    let count: usize = kept.iter().product();
    let (init, f): (f64, fn(f64, f64) -> f64) = match n.op_type.as_str() {
        "ReduceMax" => (f64::NEG_INFINITY, f64::max),
        "ReduceMin" => (f64::INFINITY, f64::min),
        "ReduceProd" => (1.0, |a, b| a * b),
        _ => (0.0, |a, b| a + b),
    };
    let mut acc = vec![init; count];
    for (k, &v) in x.data.iter().enumerate() {
        acc[source(k, &x.dims, &kept)] = f(acc[source(k, &x.dims, &kept)], v);
    }
    if n.op_type == "ReduceMean" {
        let per = (x.data.len() / count.max(1)).max(1) as f64;
        acc.iter_mut().for_each(|v| *v /= per);
    }
    let dims = if n.attr_int("keepdims", 1) != 0 {
        kept
    } else {
        (0..rank)
            .filter(|k| !axes.contains(k))
            .map(|k| x.dims[k])
            .collect()
    };
    Ok(match x.elem {
        crate::onnx::proto::dtype::FLOAT => HostVal::float(dims, acc),
        elem => HostVal {
            dims,
            data: acc,
            elem,
        },
    })
}

/// Softmax along `axis` (the last by default), in double precision, rounded to float32 (or
/// not, for float64).
pub(super) fn softmax(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    let axis = super::shape::axis_of(n.attr_int("axis", -1), x.dims.len())?;
    let inner: usize = x.dims[axis + 1..].iter().product();
    let d = x.dims[axis];
    let mut data = x.data.clone();
    for outer in 0..x.data.len() / (d * inner).max(1) {
        for i in 0..inner {
            let at = |j: usize| outer * d * inner + j * inner + i;
            let m = (0..d).map(|j| x.data[at(j)]).fold(f64::MIN, f64::max);
            let sum: f64 = (0..d).map(|j| (x.data[at(j)] - m).exp()).sum();
            for j in 0..d {
                data[at(j)] = (x.data[at(j)] - m).exp() / sum;
            }
        }
    }
    Ok(HostVal::float_like(x.elem, x.dims.clone(), data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::proto::{AttrValue, Attribute};

    /// By hand, training mode on [1, 3] (N = 2, C = 1), epsilon 0, momentum 1/2: the batch
    /// mean 2 and variance 1 give [-1, 1]; the running mean 0 and variance 3 become
    /// 0/2 + 2/2 = 1 and 3/2 + 1/2 = 2.
    #[test]
    fn batch_norm_training_by_hand() {
        let attr = |name: &str, value| Attribute {
            name: name.into(),
            value,
        };
        let n = Node {
            attributes: vec![
                attr("training_mode", AttrValue::Int(1)),
                attr("epsilon", AttrValue::Float(0.0)),
                attr("momentum", AttrValue::Float(0.5)),
            ],
            ..Node::default()
        };
        let x = HostVal::float(vec![2, 1], vec![1.0, 3.0]);
        let one = |v: f64| Some(HostVal::float(vec![1], vec![v]));
        let r = batch_norm(&n, &x, &[None, one(1.0), one(0.0), one(0.0), one(3.0)]).unwrap();
        let data: Vec<Vec<f64>> = r.iter().map(|v| v.data.clone()).collect();
        assert_eq!(data, vec![vec![-1.0, 1.0], vec![1.0], vec![2.0]]);
    }
}
