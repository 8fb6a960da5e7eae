//! Normalizations and index operators on the host: LayerNormalization,
//! RMSNormalization, InstanceNormalization, GroupNormalization (float32; sums in double precision, each output
//! rounded once), MeanVarianceNormalization (its ONNX function, step by step), Hardmax, CumSum, Trilu, Range, GatherElements and the two losses,
//! NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, as ONNX defines them.

use super::shape::axis_of;
use super::{broadcast, elements, index, source, HostVal};
use crate::onnx::proto::{dtype, Node};

/// The axis attribute `name` (default `d`) of a rank-`rank` tensor, in range.
fn axis(n: &Node, name: &str, d: i64, rank: usize) -> Result<usize, String> {
    axis_of(n.attr_int(name, d), rank)
}

/// Optional input `i`.
fn input(ins: &[Option<HostVal>], i: usize) -> Option<&HostVal> {
    ins.get(i).and_then(Option::as_ref)
}

fn float_only(n: &Node, x: &HostVal) -> Result<(), String> {
    match x.elem {
        dtype::FLOAT => Ok(()),
        e => Err(format!(
            "{} of {} tensors (float32 only)",
            n.op_type,
            dtype::name(e)
        )),
    }
}

/// The operators of this module and of `index` (every output they have); None for
/// others.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<Vec<HostVal>, String>> {
    let one = |r: Result<HostVal, String>| r.map(|v| vec![v]);
    Some(match n.op_type.as_str() {
        "LayerNormalization" | "RMSNormalization" => normalize(n, x, ins),
        "InstanceNormalization" => one(instance_norm(n, x, ins)),
        "MeanVarianceNormalization" => one(mean_variance(n, x)),
        "GroupNormalization" => one(group_norm(
            n,
            x,
            ins,
            usize::try_from(n.attr_int("num_groups", 0)).unwrap_or(0),
        )),
        "Hardmax" => one(hardmax(n, x)),
        "CumSum" => one(cumulative(n, x, ins, false)),
        "CumProd" => one(cumulative(n, x, ins, true)),
        "Shrink" => one(shrink(n, x)),
        "LpNormalization" => one(lp_normalize(n, x)),
        "GatherND" => one(index::gather_nd(n, x, ins)),
        "Trilu" => one(trilu(n, x, ins)),
        "Range" => one(range(x, ins)),
        "GatherElements" => one(gather_elements(n, x, ins)),
        "NegativeLogLikelihoodLoss" | "SoftmaxCrossEntropyLoss" => loss(n, x, ins),
        "TopK" => index::top_k(n, x, ins),
        "Tile" => one(index::tile(x, ins)),
        "DepthToSpace" | "SpaceToDepth" => one(index::depth_space(n, x)),
        "OneHot" => one(index::one_hot(n, x, ins)),
        "EyeLike" => one(index::eye_like(n, x)),
        "ScatterElements" | "ScatterND" | "Scatter" => one(index::scatter(n, x, ins)),
        "Unique" => index::unique(n, x),
        "MaxUnpool" => one(index::max_unpool(n, x, ins)),
        "TensorScatter" => one(index::tensor_scatter(n, x, ins)),
        _ => return None,
    })
}

/// LayerNormalization (Y, Mean, InvStdDev) and RMSNormalization (Y) over the axes from
/// `axis` on: `(x - mean) / sqrt(var + epsilon) * scale + bias`, or `x / sqrt(mean(x^2) +
/// epsilon) * scale`, scale and bias broadcast to the normalized shape.
fn normalize(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<Vec<HostVal>, String> {
    float_only(n, x)?;
    let rms = n.op_type == "RMSNormalization";
    let a = axis(n, "axis", -1, x.dims.len())?;
    let inner: usize = x.dims[a..].iter().product();
    let outer = x.data.len() / inner.max(1);
    let eps = f64::from(n.attr_float("epsilon", 1e-5));
    let scale = input(ins, 1).ok_or("input 1 (scale) is missing")?;
    let norm_dims = x.dims[a..].to_vec();
    let at = |v: Option<&HostVal>, k: usize| -> Result<f64, String> {
        match v {
            None => Ok(0.0),
            Some(v) if broadcast(&norm_dims, &v.dims).as_ref() == Some(&norm_dims) => {
                Ok(v.data[source(k, &norm_dims, &v.dims)])
            }
            Some(v) => Err(format!(
                "a scale or bias of shape {:?} for {norm_dims:?}",
                v.dims
            )),
        }
    };
    let bias = if rms { None } else { input(ins, 2) };
    let (mut y, mut means, mut invs) = (vec![0.0; x.data.len()], vec![], vec![]);
    for o in 0..outer {
        let row = &x.data[o * inner..(o + 1) * inner];
        let mean = if rms {
            0.0
        } else {
            row.iter().sum::<f64>() / inner as f64
        };
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / inner as f64;
        let inv = 1.0 / (var + eps).sqrt();
        for (k, v) in row.iter().enumerate() {
            y[o * inner + k] = (v - mean) * inv * at(Some(scale), k)? + at(bias, k)?;
        }
        means.push(mean);
        invs.push(inv);
    }
    let stat_dims: Vec<usize> = (0..x.dims.len())
        .map(|k| if k < a { x.dims[k] } else { 1 })
        .collect();
    let mut out = vec![HostVal::float(x.dims.clone(), y)];
    if !rms {
        out.push(HostVal::float(stat_dims.clone(), means));
        out.push(HostVal::float(stat_dims, invs));
    }
    Ok(out)
}

/// InstanceNormalization: each channel of each batch element normalized over its spatial
/// elements, then scaled and shifted per channel.
fn instance_norm(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let c = *x.dims.get(1).ok_or("a tensor of rank below 2")?;
    group_norm(n, x, ins, c)
}

/// MeanVarianceNormalization over `axes` (default [0, 2, 3]): ONNX's function body, each
/// step the host's float32 operator: `(x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)`.
fn mean_variance(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    use crate::onnx::proto::AttrValue;
    float_only(n, x)?;
    let axes = n.attr_ints_or("axes", &[0, 2, 3]);
    let op = |op: &str, ins: &[&HostVal]| -> Result<HostVal, String> {
        let attrs = match op {
            "ReduceMean" => vec![("axes", AttrValue::Ints(axes.clone()))],
            _ => vec![],
        };
        let ins: Vec<Option<HostVal>> = ins.iter().map(|&v| Some(v.clone())).collect();
        super::eval(&Node::new(op, attrs), &ins).map(|mut v| v.remove(0))
    };
    let scalar = |v: f64| HostVal::float(vec![], vec![v]);
    let mean = op("ReduceMean", &[x])?;
    let mean_sq = op("Pow", &[&mean, &scalar(2.0)])?;
    let sq_mean = op("ReduceMean", &[&op("Pow", &[x, &scalar(2.0)])?])?;
    let std = op("Sqrt", &[&op("Sub", &[&sq_mean, &mean_sq])?])?;
    let eps = scalar(f64::from(1e-9f32));
    op(
        "Div",
        &[&op("Sub", &[x, &mean])?, &op("Add", &[&std, &eps])?],
    )
}

/// `groups` groups of consecutive channels of each batch element, each normalized over its
/// elements, `(x - mean) / sqrt(var + epsilon)` (in double precision, rounded once), then
/// scaled and shifted per channel (a scale and bias of C elements) or, as opset 18's
/// GroupNormalization has them, per group.
fn group_norm(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
    groups: usize,
) -> Result<HostVal, String> {
    float_only(n, x)?;
    let (Some(scale), Some(bias)) = (input(ins, 1), input(ins, 2)) else {
        return Err("scale and bias are inputs".into());
    };
    let c = *x.dims.get(1).ok_or("a tensor of rank below 2")?;
    if groups == 0 || c % groups != 0 {
        return Err(format!("{groups} groups of {c} channels"));
    }
    let per_channel = scale.data.len() == c;
    let params = if per_channel { c } else { groups };
    if scale.data.len() != params || bias.data.len() != params {
        return Err(format!(
            "{c} channels in {groups} groups, a scale of {} and a bias of {}",
            scale.data.len(),
            bias.data.len()
        ));
    }
    let plane: usize = x.dims[2..].iter().product();
    let block = c / groups * plane;
    let eps = f64::from(n.attr_float("epsilon", 1e-5));
    let mut y = vec![0.0; x.data.len()];
    for (p, chunk) in x.data.chunks(block.max(1)).enumerate() {
        let mean = chunk.iter().sum::<f64>() / block as f64;
        let var = chunk.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / block as f64;
        let g = p % groups;
        for (k, v) in chunk.iter().enumerate() {
            let at = if per_channel {
                g * (c / groups) + k / plane.max(1)
            } else {
                g
            };
            y[p * block + k] = (v - mean) / (var + eps).sqrt() * scale.data[at] + bias.data[at];
        }
    }
    Ok(HostVal::float(x.dims.clone(), y))
}

/// Visit every line of `dims` along axis `a`: (first element, stride, length).
fn lines(dims: &[usize], a: usize) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let inner: usize = dims[a + 1..].iter().product();
    let len = dims[a];
    let outer: usize = dims[..a].iter().product();
    (0..outer).flat_map(move |o| (0..inner).map(move |i| (o * len * inner + i, inner, len)))
}

/// Shrink: `x - bias` where `x > lambd`, `x + bias` where `x < -lambd`, 0 between
/// (defaults bias 0, lambd 0.5); float32 rounded once, integers exact.
fn shrink(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    let (bias, lambd) = (
        f64::from(n.attr_float("bias", 0.0)),
        f64::from(n.attr_float("lambd", 0.5)),
    );
    let data = x.data.iter().map(|&v| {
        let y = if v > lambd {
            v - bias
        } else if v < -lambd {
            v + bias
        } else {
            0.0
        };
        match x.elem {
            dtype::FLOAT => f64::from(y as f32),
            _ => y,
        }
    });
    Ok(HostVal {
        data: data.collect(),
        ..x.clone()
    })
}

/// LpNormalization: each line along `axis` (default -1) divided by its L1 or L2 norm (`p`,
/// default 2; a line of zeros stays zero), in double precision, rounded once to float32.
fn lp_normalize(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    float_only(n, x)?;
    let a = axis(n, "axis", -1, x.dims.len())?;
    let p = n.attr_int("p", 2);
    if !matches!(p, 1 | 2) {
        return Err(format!("p = {p} (1 or 2)"));
    }
    let mut y = x.data.clone();
    for (first, stride, len) in lines(&x.dims, a) {
        let at = |j: usize| first + j * stride;
        let norm = match p {
            1 => (0..len).map(|j| x.data[at(j)].abs()).sum::<f64>(),
            _ => (0..len).map(|j| x.data[at(j)].powi(2)).sum::<f64>().sqrt(),
        };
        // A line of zeros stays zero (ONNX's expected outputs), not 0 / 0.
        for j in 0..len {
            y[at(j)] = match norm {
                0.0 => 0.0,
                _ => f64::from((x.data[at(j)] / norm) as f32),
            };
        }
    }
    Ok(HostVal {
        data: y,
        ..x.clone()
    })
}

/// Hardmax: 1 at the first largest element along `axis` (default -1), 0 elsewhere.
fn hardmax(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    let a = axis(n, "axis", -1, x.dims.len())?;
    let mut y = vec![0.0; x.data.len()];
    for (first, stride, len) in lines(&x.dims, a) {
        let best = (0..len).fold(0, |b, j| {
            if x.data[first + j * stride] > x.data[first + b * stride] {
                j
            } else {
                b
            }
        });
        if len > 0 {
            y[first + best * stride] = 1.0;
        }
    }
    Ok(HostVal {
        data: y,
        ..x.clone()
    })
}

/// CumSum (or with `product` CumProd) along the axis given as input 1, `exclusive` and
/// `reverse` as attributes; float32 sums and products rounded at each step, float64 ones
/// in double precision, integer ones exact (products wrapped to the type).
fn cumulative(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
    product: bool,
) -> Result<HostVal, String> {
    let given = input(ins, 1)
        .and_then(|v| v.data.first().copied())
        .ok_or("the axis input is missing")?;
    let a = axis_of(given as i64, x.dims.len())?;
    let (exclusive, reverse) = (
        n.attr_int("exclusive", 0) != 0,
        n.attr_int("reverse", 0) != 0,
    );
    let float = x.elem == dtype::FLOAT;
    let mut y = vec![0.0; x.data.len()];
    let fold = |acc: f64, v: f64| match (product, float) {
        (false, true) => f64::from(acc as f32 + v as f32),
        (false, false) => acc + v,
        (true, true) => f64::from(acc as f32 * v as f32),
        (true, false) if x.elem == dtype::DOUBLE => acc * v,
        (true, false) => super::wrap(acc as i128 * v as i128, x.elem),
    };
    for (first, stride, len) in lines(&x.dims, a) {
        let mut sum = if product { 1.0 } else { 0.0 };
        for step in 0..len {
            let j = if reverse { len - 1 - step } else { step };
            let at = first + j * stride;
            if exclusive {
                y[at] = sum;
            }
            sum = fold(sum, x.data[at]);
            if !exclusive {
                y[at] = sum;
            }
        }
    }
    Ok(HostVal {
        data: y,
        ..x.clone()
    })
}

/// Trilu: the upper (default) or lower triangle of each matrix of the last two axes,
/// from diagonal k (input 1, default 0), the rest zero.
fn trilu(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let r = x.dims.len();
    if r < 2 {
        return Err("Trilu of a tensor of rank below 2".into());
    }
    let k = input(ins, 1)
        .and_then(|v| v.data.first().copied())
        .unwrap_or(0.0) as i64;
    let upper = n.attr_int("upper", 1) != 0;
    let (rows, cols) = (x.dims[r - 2], x.dims[r - 1]);
    let data = x
        .data
        .iter()
        .enumerate()
        .map(|(idx, &v)| {
            let (i, j) = (
                (idx / cols % rows.max(1)) as i64,
                (idx % cols.max(1)) as i64,
            );
            let keep = if upper { j - i >= k } else { j - i <= k };
            if keep {
                v
            } else {
                0.0
            }
        })
        .collect();
    Ok(HostVal { data, ..x.clone() })
}

/// Range(start, limit, delta): max(ceil((limit - start) / delta), 0) elements start + i
/// delta, in start's type (float32 accumulating as ONNX's reference does).
fn range(start: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let scalar = |i: usize| {
        input(ins, i)
            .and_then(|v| v.data.first().copied())
            .ok_or(format!("input {i} is missing"))
    };
    let (s, l, d) = (scalar(0)?, scalar(1)?, scalar(2)?);
    if d == 0.0 {
        return Err("a Range with delta 0".into());
    }
    let count = ((l - s) / d).ceil().max(0.0) as usize;
    elements(&[count])?;
    let data: Vec<f64> = (0..count).map(|i| s + i as f64 * d).collect();
    Ok(match start.elem {
        dtype::FLOAT => HostVal::float(vec![count], data),
        elem => HostVal {
            dims: vec![count],
            data,
            elem,
        },
    })
}

/// GatherElements: output[idx] = data[idx with the axis coordinate replaced by
/// indices[idx]] (negative indices count from the end); the output has the indices' shape.
fn gather_elements(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let idx = input(ins, 1).ok_or("the indices are missing")?;
    let r = x.dims.len();
    if idx.dims.len() != r || r == 0 {
        return Err(format!(
            "indices of rank {} for data of rank {r} (at least 1)",
            idx.dims.len()
        ));
    }
    let a = axis(n, "axis", 0, r)?;
    let mut data = Vec::with_capacity(idx.data.len());
    for (k, &v) in idx.data.iter().enumerate() {
        // The coordinates of k in the indices' shape, then the axis one replaced.
        let mut rem = k;
        let mut coord = vec![0usize; r];
        for d in (0..r).rev() {
            coord[d] = rem % idx.dims[d].max(1);
            rem /= idx.dims[d].max(1);
        }
        let len = x.dims[a] as i64;
        let j = if v < 0.0 { v as i64 + len } else { v as i64 };
        let outside = (0..r).any(|d| d != a && coord[d] >= x.dims[d]);
        if !(0..len).contains(&j) || outside {
            return Err(format!(
                "index {v} out of range along axis {a} of {:?}",
                x.dims
            ));
        }
        coord[a] = j as usize;
        let flat = coord.iter().zip(&x.dims).fold(0, |f, (c, d)| f * d + c);
        data.push(x.data[flat]);
    }
    Ok(HostVal {
        dims: idx.dims.clone(),
        data,
        elem: x.elem,
    })
}

/// NegativeLogLikelihoodLoss (of log-probabilities x) and SoftmaxCrossEntropyLoss (of
/// scores x, through their log-softmax over axis 1, also the second output): x is [N, C,
/// d...], the targets [N, d...] class indices. Each position's loss is `-w[t] x[n, t, d]`
/// with `w` the optional class weights (1 without, the index clipped into 0..C as ONNX's
/// reference does) and 0 where the target is `ignore_index`; reduction `none` keeps them,
/// `sum` adds them, `mean` (the default) divides the sum by the sum of the weights.
fn loss(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<Vec<HostVal>, String> {
    float_only(n, x)?;
    let t = input(ins, 1).ok_or("the targets are missing")?;
    let (nn, c) = match x.dims[..] {
        [a, b, ..] => (a, b),
        _ => {
            return Err(format!(
                "an input of shape {:?}: [N, C, ...] is needed",
                x.dims
            ))
        }
    };
    let d: usize = x.dims[2..].iter().product();
    if t.data.len() != nn * d {
        return Err(format!(
            "targets of shape {:?} for an input of shape {:?}",
            t.dims, x.dims
        ));
    }
    let weight = input(ins, 2);
    if weight.is_some_and(|w| w.data.len() != c) {
        return Err(format!("{c} classes and a weight of another length"));
    }
    let softmax = n.op_type == "SoftmaxCrossEntropyLoss";
    // The log-probabilities: x itself, or its log-softmax over the classes.
    let mut logp = x.data.clone();
    if softmax {
        for i in 0..nn {
            for p in 0..d {
                let at = |k: usize| (i * c + k) * d + p;
                let m = (0..c).map(|k| x.data[at(k)]).fold(f64::MIN, f64::max);
                let sum: f64 = (0..c).map(|k| (x.data[at(k)] - m).exp()).sum();
                for k in 0..c {
                    logp[at(k)] = x.data[at(k)] - m - sum.ln();
                }
            }
        }
    }
    let ignore = n
        .attributes
        .iter()
        .any(|a| a.name == "ignore_index")
        .then(|| n.attr_int("ignore_index", 0));
    let (mut losses, mut weights) = (Vec::with_capacity(t.data.len()), 0.0);
    for (k, &tv) in t.data.iter().enumerate() {
        let (i, p, target) = (k / d.max(1), k % d.max(1), tv as i64);
        if ignore == Some(target) {
            losses.push(0.0);
            continue;
        }
        let class = usize::try_from(target)
            .ok()
            .filter(|&cl| cl < c)
            .ok_or_else(|| format!("target {target} is not a class of 0..{c}"))?;
        let w = weight.map_or(1.0, |w| w.data[class]);
        losses.push(-w * logp[(i * c + class) * d + p]);
        weights += w;
    }
    let out = match n.attr("reduction") {
        Some(crate::onnx::proto::AttrValue::Text(r)) if r == "none" => {
            HostVal::float(t.dims.clone(), losses)
        }
        Some(crate::onnx::proto::AttrValue::Text(r)) if r == "sum" => {
            HostVal::float(vec![], vec![losses.iter().sum()])
        }
        None => HostVal::float(vec![], vec![losses.iter().sum::<f64>() / weights]),
        Some(crate::onnx::proto::AttrValue::Text(r)) if r == "mean" => {
            HostVal::float(vec![], vec![losses.iter().sum::<f64>() / weights])
        }
        _ => return Err("reduction is none, sum or mean".into()),
    };
    Ok(match softmax {
        true => vec![out, HostVal::float(x.dims.clone(), logp)],
        false => vec![out],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand, over axis 0: [1, 3] has mean 2, mean of squares 5, so variance 1 and
    /// [-1, 1] / (1 + 1e-9), which is [-1, 1] in float32; [[0, 2], [4, 6]] over axes [0, 1]
    /// has mean 3, mean of squares 14, variance 5: (x - 3) / sqrt(5).
    #[test]
    fn mean_variance_by_hand() {
        let axes = |a: Vec<i64>| {
            Node::new(
                "MeanVarianceNormalization",
                vec![("axes", crate::onnx::proto::AttrValue::Ints(a))],
            )
        };
        let x = HostVal::float(vec![2], vec![1.0, 3.0]);
        assert_eq!(mean_variance(&axes(vec![0]), &x).unwrap().data, [-1.0, 1.0]);
        let x = HostVal::float(vec![2, 2], vec![0.0, 2.0, 4.0, 6.0]);
        let y = mean_variance(&axes(vec![0, 1]), &x).unwrap().data;
        let want = [-3.0, -1.0, 1.0, 3.0].map(|v: f64| v / 5f64.sqrt());
        assert!(
            y.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6),
            "{y:?}"
        );
    }

    fn node(op: &str, attrs: &[(&str, i64)]) -> Node {
        Node {
            op_type: op.into(),
            attributes: attrs
                .iter()
                .map(|(k, v)| crate::onnx::proto::Attribute {
                    name: (*k).into(),
                    value: crate::onnx::proto::AttrValue::Int(*v),
                })
                .collect(),
            ..Node::default()
        }
    }

    fn t(dims: Vec<usize>, data: Vec<f64>) -> HostVal {
        HostVal {
            dims,
            data,
            elem: dtype::INT32,
        }
    }

    /// By hand: Shrink (lambd 0.5, bias 1.5) of [-2, -0.3, 0.3, 2] is [-0.5, 0, 0, 0.5];
    /// the L2 normalization of [3, 4] is [0.6, 0.8] and of zeros zeros, L1 of [1, 3] [0.25,
    /// 0.75]; GatherND of [[0, 1], [2, 3]] at [[1, 0], [0, 1]] is [2, 1], and with
    /// batch_dims 1 of [[[0, 1], [2, 3]], [[4, 5], [6, 7]]] at [[1], [0]] [[2, 3], [4, 5]].
    #[test]
    fn shrink_lp_normalization_and_gather_nd_by_hand() {
        let f = |dims: Vec<usize>, data: Vec<f64>| HostVal {
            elem: dtype::FLOAT,
            ..t(dims, data)
        };
        let mut sh = node("Shrink", &[]);
        sh.attributes = vec![
            crate::onnx::proto::Attribute {
                name: "lambd".into(),
                value: crate::onnx::proto::AttrValue::Float(0.5),
            },
            crate::onnx::proto::Attribute {
                name: "bias".into(),
                value: crate::onnx::proto::AttrValue::Float(1.5),
            },
        ];
        let y = shrink(&sh, &f(vec![4], vec![-2.0, -0.3, 0.3, 2.0])).unwrap();
        assert_eq!(y.data, vec![-0.5, 0.0, 0.0, 0.5]);
        let l2 = lp_normalize(
            &node("LpNormalization", &[]),
            &f(vec![2, 2], vec![3.0, 4.0, 0.0, 0.0]),
        )
        .unwrap();
        assert_eq!(
            l2.data,
            vec![f64::from(0.6f32), f64::from(0.8f32), 0.0, 0.0]
        );
        let l1 = lp_normalize(
            &node("LpNormalization", &[("p", 1)]),
            &f(vec![2], vec![1.0, 3.0]),
        )
        .unwrap();
        assert_eq!(l1.data, vec![0.25, 0.75]);
        let data = t(vec![2, 2], vec![0.0, 1.0, 2.0, 3.0]);
        let idx = Some(t(vec![2, 2], vec![1.0, 0.0, 0.0, 1.0]));
        let g = index::gather_nd(&node("GatherND", &[]), &data, &[None, idx]).unwrap();
        assert_eq!((g.dims, g.data), (vec![2], vec![2.0, 1.0]));
        let data = t(vec![2, 2, 2], (0..8).map(f64::from).collect());
        let idx = Some(t(vec![2, 1], vec![1.0, 0.0]));
        let g =
            index::gather_nd(&node("GatherND", &[("batch_dims", 1)]), &data, &[None, idx]).unwrap();
        assert_eq!((g.dims, g.data), (vec![2, 2], vec![2.0, 3.0, 4.0, 5.0]));
    }

    /// By hand on [[1, 2, 3], [4, 5, 6]]: the upper triangle from diagonal 1 keeps 2, 3
    /// and 6; CumSum along axis 1, exclusive and reversed, gives [[5, 3, 0], [11, 6, 0]];
    /// GatherElements along axis 1 with [[-1], [0]] picks 3 and 4.
    #[test]
    fn trilu_cumsum_and_gather_elements_by_hand() {
        let x = t(vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let k = Some(t(vec![], vec![1.0]));
        let up = trilu(&node("Trilu", &[]), &x, &[None, k]).unwrap();
        assert_eq!(up.data, vec![0.0, 2.0, 3.0, 0.0, 0.0, 6.0]);
        let axis1 = Some(t(vec![], vec![1.0]));
        let c = cumulative(
            &node("CumSum", &[("exclusive", 1), ("reverse", 1)]),
            &x,
            &[None, axis1.clone()],
            false,
        )
        .unwrap();
        assert_eq!(c.data, vec![5.0, 3.0, 0.0, 11.0, 6.0, 0.0]);
        // CumProd: [[1, 2, 6], [4, 20, 120]]; exclusive and reversed [[6, 3, 1], [30, 6,
        // 1]]; in int8, 100 x 2 wraps to -56.
        let p = cumulative(&node("CumProd", &[]), &x, &[None, axis1.clone()], true).unwrap();
        assert_eq!(p.data, vec![1.0, 2.0, 6.0, 4.0, 20.0, 120.0]);
        let q = cumulative(
            &node("CumProd", &[("exclusive", 1), ("reverse", 1)]),
            &x,
            &[None, axis1.clone()],
            true,
        )
        .unwrap();
        assert_eq!(q.data, vec![6.0, 3.0, 1.0, 30.0, 6.0, 1.0]);
        let small = HostVal {
            elem: dtype::INT8,
            ..t(vec![1, 2], vec![100.0, 2.0])
        };
        let w = cumulative(&node("CumProd", &[]), &small, &[None, axis1], true).unwrap();
        assert_eq!(w.data, vec![100.0, -56.0]);
        let idx = Some(t(vec![2, 1], vec![-1.0, 0.0]));
        let g = gather_elements(&node("GatherElements", &[("axis", 1)]), &x, &[None, idx]).unwrap();
        assert_eq!((g.dims, g.data), (vec![2, 1], vec![3.0, 4.0]));
        let bad = Some(t(vec![2, 1], vec![3.0, 0.0]));
        assert!(
            gather_elements(&node("GatherElements", &[("axis", 1)]), &x, &[None, bad]).is_err()
        );
    }

    /// By hand, x = [[1, 3], [5, 7]] (C = 2, two elements each), epsilon 0: one group has
    /// mean 4 and variance (9 + 1 + 1 + 9) / 4 = 5; two groups (channels) have means 2 and
    /// 6, variance 1: [-1, 1, -1, 1], then scale [1, 2] and bias [0, 10] per channel:
    /// [-1, 1, 8, 12]; opset 18's per-group scale [3] and bias [1] with one group.
    #[test]
    fn group_norm_by_hand() {
        let mut n = node("GroupNormalization", &[]);
        n.attributes.push(crate::onnx::proto::Attribute {
            name: "epsilon".into(),
            value: crate::onnx::proto::AttrValue::Float(0.0),
        });
        let x = HostVal::float(vec![1, 2, 2], vec![1.0, 3.0, 5.0, 7.0]);
        let v = |d: &[f64]| Some(HostVal::float(vec![d.len()], d.to_vec()));
        let y = group_norm(&n, &x, &[None, v(&[1.0, 2.0]), v(&[0.0, 10.0])], 2).unwrap();
        assert_eq!(y.data, vec![-1.0, 1.0, 8.0, 12.0]);
        let y = group_norm(&n, &x, &[None, v(&[3.0]), v(&[1.0])], 1).unwrap();
        let r5 = 5f64.sqrt();
        let want: Vec<f64> = [-3.0, -1.0, 1.0, 3.0]
            .iter()
            .map(|d| f64::from((3.0 * d / r5 + 1.0) as f32))
            .collect();
        assert_eq!(y.data, want);
        assert!(group_norm(&n, &x, &[None, v(&[1.0]), v(&[1.0])], 3).is_err());
    }
}
