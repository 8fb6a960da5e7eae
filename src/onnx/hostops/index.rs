//! Index and layout operators on the host, as ONNX's reference implementation computes
//! them: TopK, Tile, DepthToSpace, SpaceToDepth, OneHot, EyeLike, ScatterElements and
//! ScatterND.

use super::shape::axis_of;
use super::shape::{gather_by, strides};
use super::{elements, need, HostVal};
use crate::onnx::proto::{dtype, AttrValue, Node};

/// The coordinates of flat index `k` in `dims`.
fn coords(mut k: usize, dims: &[usize]) -> Vec<usize> {
    let mut c = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        c[d] = k % dims[d].max(1);
        k /= dims[d].max(1);
    }
    c
}

/// TopK: the k largest (or smallest) elements along `axis`, sorted, ties to the smaller
/// index; the values and their int64 indices.
pub(super) fn top_k(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Result<Vec<HostVal>, String> {
    let k = need(ins, 1)?.data.first().copied().ok_or("k is empty")? as i64;
    let a = axis_of(n.attr_int("axis", -1), x.dims.len())?;
    let len = x.dims[a];
    let k = usize::try_from(k)
        .ok()
        .filter(|&k| k <= len)
        .ok_or_else(|| format!("k = {k} along an axis of {len}"))?;
    let largest = n.attr_int("largest", 1) != 0;
    let mut dims = x.dims.clone();
    dims[a] = k;
    let count = elements(&dims)?;
    let (xs, ys) = (strides(&x.dims), strides(&dims));
    let (mut values, mut indices) = (vec![0.0; count], vec![0.0; count]);
    let lines = count / k.max(1);
    for line in 0..lines {
        // The first element of the line in the output, and in the input.
        let mut c = coords(line, &[&dims[..a], &dims[a + 1..]].concat());
        c.insert(a, 0);
        let base_x: usize = c.iter().zip(&xs).map(|(c, s)| c * s).sum();
        let base_y: usize = c.iter().zip(&ys).map(|(c, s)| c * s).sum();
        let mut order: Vec<usize> = (0..len).collect();
        order.sort_by(|&i, &j| {
            let (u, v) = (x.data[base_x + i * xs[a]], x.data[base_x + j * xs[a]]);
            let by_value = if largest {
                v.partial_cmp(&u)
            } else {
                u.partial_cmp(&v)
            };
            by_value
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(i.cmp(&j))
        });
        for (r, &i) in order.iter().take(k).enumerate() {
            values[base_y + r * ys[a]] = x.data[base_x + i * xs[a]];
            indices[base_y + r * ys[a]] = i as f64;
        }
    }
    Ok(vec![
        HostVal {
            dims: dims.clone(),
            data: values,
            elem: x.elem,
        },
        HostVal {
            dims,
            data: indices,
            elem: dtype::INT64,
        },
    ])
}

/// Tile: the input repeated `repeats[d]` times along each axis d.
pub(super) fn tile(x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let reps = &need(ins, 1)?.data;
    if reps.len() != x.dims.len() || reps.iter().any(|&r| r < 0.0) {
        return Err(format!(
            "repeats {reps:?} for a tensor of shape {:?}",
            x.dims
        ));
    }
    let dims: Vec<usize> = x
        .dims
        .iter()
        .zip(reps)
        .map(|(&d, &r)| d.checked_mul(r as usize))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            format!(
                "repeats {reps:?} of shape {:?}: more than 2^27 elements",
                x.dims
            )
        })?;
    gather_by(x, dims, |a, k| Some(k % x.dims[a]), 0.0)
}

/// DepthToSpace (mode DCR, the default, or CRD) and SpaceToDepth of an [N, C, H, W]
/// tensor by `blocksize`.
pub(super) fn depth_space(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    let [b, c, h, w] = x.dims[..] else {
        return Err(format!(
            "a tensor of shape {:?} where NCHW is needed",
            x.dims
        ));
    };
    let s = usize::try_from(n.attr_int("blocksize", 0))
        .ok()
        .filter(|&s| (1..=1 << 16).contains(&s))
        .ok_or("blocksize must be 1 to 2^16")?;
    let to_space = n.op_type == "DepthToSpace";
    let crd = matches!(n.attr("mode"), Some(AttrValue::Text(m)) if m == "CRD");
    let dims = if to_space {
        if c % (s * s) != 0 {
            return Err(format!("{c} channels are not a multiple of blocksize^2"));
        }
        vec![b, c / (s * s), h * s, w * s]
    } else {
        if h % s != 0 || w % s != 0 {
            return Err(format!("{h}x{w} is not a multiple of the blocksize {s}"));
        }
        vec![b, c * s * s, h / s, w / s]
    };
    let count = elements(&dims)?;
    let mut data = vec![0.0; count];
    // Walk the space-side tensor [b, c', h', w'] (c' = depth-side channels / s^2): its
    // element (n, q, y, x) is depth-side channel (dy, dx, q) (DCR) or (q, dy, dx) (CRD) at
    // (y / s, x / s), with dy = y % s and dx = x % s.
    let (cq, hs, ws) = if to_space {
        (dims[1], dims[2], dims[3])
    } else {
        (c, h, w)
    };
    let depth_c = cq * s * s;
    for nb in 0..b {
        for q in 0..cq {
            for y in 0..hs {
                for xx in 0..ws {
                    let (dy, dx) = (y % s, xx % s);
                    let ch = if crd {
                        (q * s + dy) * s + dx
                    } else {
                        (dy * s + dx) * cq + q
                    };
                    let space = ((nb * cq + q) * hs + y) * ws + xx;
                    let depth = ((nb * depth_c + ch) * (hs / s) + y / s) * (ws / s) + xx / s;
                    if to_space {
                        data[space] = x.data[depth];
                    } else {
                        data[depth] = x.data[space];
                    }
                }
            }
        }
    }
    Ok(HostVal {
        dims,
        data,
        elem: x.elem,
    })
}

/// OneHot(indices, depth, values = [off, on]): a new axis of `depth` (at `axis`, default
/// -1) holding `on` at the index (a negative one counts from the end) and `off` elsewhere;
/// an index outside -depth..depth gives all `off`. The values' type.
pub(super) fn one_hot(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let depth = need(ins, 1)?
        .data
        .first()
        .copied()
        .ok_or("depth is empty")?;
    let values = need(ins, 2)?;
    let [off, on] = values.data[..] else {
        return Err("values must be [off, on]".into());
    };
    let depth = depth.trunc() as i64;
    if depth <= 0 {
        return Err(format!("depth {depth}"));
    }
    let rank = x.dims.len() + 1;
    let a = axis_of(n.attr_int("axis", -1), rank)?;
    let mut dims = x.dims.clone();
    dims.insert(a, depth as usize);
    let count = elements(&dims)?;
    let data = (0..count)
        .map(|k| {
            let mut c = coords(k, &dims);
            let d = c.remove(a) as i64;
            let at = c
                .iter()
                .zip(strides(&x.dims))
                .map(|(c, s)| c * s)
                .sum::<usize>();
            let i = x.data[at].trunc() as i64;
            let i = if i < 0 { i + depth } else { i };
            if i == d {
                on
            } else {
                off
            }
        })
        .collect();
    Ok(HostVal {
        dims,
        data,
        elem: values.elem,
    })
}

/// EyeLike: a 2-D tensor of the input's shape with ones on diagonal `k`; its type is
/// `dtype`, or the input's.
pub(super) fn eye_like(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    let [r, c] = x.dims[..] else {
        return Err(format!("EyeLike of a tensor of shape {:?}", x.dims));
    };
    let k = n.attr_int("k", 0);
    let elem = match n.attr("dtype") {
        Some(AttrValue::Int(t)) => *t as i32,
        _ => x.elem,
    };
    let float = matches!(
        elem,
        dtype::FLOAT | dtype::DOUBLE | dtype::FLOAT16 | dtype::BFLOAT16
    );
    if !float && super::quant::int_range(elem).is_none() && elem != dtype::BOOL {
        return Err(format!("EyeLike of type {}", dtype::name(elem)));
    }
    let data = (0..r * c)
        .map(|i| f64::from(u8::from((i % c) as i64 - (i / c) as i64 == k)))
        .collect();
    Ok(HostVal {
        dims: vec![r, c],
        data,
        elem,
    })
}

/// GatherND with `batch_dims` b: for every index tuple (the last axis of `indices`, k
/// long) the data slice it names within its batch, `indices.shape[..-1] +
/// data.shape[b + k..]`; negative indices count from the end.
pub(super) fn gather_nd(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let idx = need(ins, 1)?;
    let b = usize::try_from(n.attr_int("batch_dims", 0)).map_err(|_| "a negative batch_dims")?;
    let (r, q) = (x.dims.len(), idx.dims.len());
    let k = *idx.dims.last().ok_or("rank-0 indices")?;
    if k == 0 || b >= q || b + k > r || x.dims[..b] != idx.dims[..b] {
        return Err(format!(
            "data {:?}, indices {:?} and batch_dims {b}",
            x.dims, idx.dims
        ));
    }
    let slice: usize = x.dims[b + k..].iter().product();
    let batch_size: usize = x.dims[b..].iter().product();
    let tuples = idx.data.len() / k.max(1);
    let per_batch = tuples / idx.dims[..b].iter().product::<usize>().max(1);
    let xs = strides(&x.dims);
    super::elements(&[tuples, slice])?;
    let mut data = Vec::with_capacity(tuples * slice);
    for t in 0..tuples {
        let mut at = (t / per_batch.max(1)) * batch_size;
        for j in 0..k {
            let d = x.dims[b + j];
            let i = idx.data[t * k + j] as i64;
            let i = if i < 0 { i + d as i64 } else { i };
            let i = usize::try_from(i)
                .ok()
                .filter(|&i| i < d)
                .ok_or_else(|| format!("index {} out of range 0..{d}", idx.data[t * k + j]))?;
            at += i * xs[b + j];
        }
        data.extend_from_slice(&x.data[at..at + slice]);
    }
    let mut dims = idx.dims[..q - 1].to_vec();
    dims.extend_from_slice(&x.dims[b + k..]);
    Ok(HostVal {
        dims,
        data,
        elem: x.elem,
    })
}

/// ScatterElements (`axis`) and ScatterND into a copy of `data`, with `reduction` none
/// (later updates win), add, mul, max or min; negative indices count from the end.
pub(super) fn scatter(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let (idx, upd) = (need(ins, 1)?, need(ins, 2)?);
    if upd.elem != x.elem {
        return Err("updates of another type than the data".into());
    }
    let float = x.elem == dtype::FLOAT;
    let reduce: fn(f64, f64) -> f64 = match n.attr("reduction") {
        None => |_, u| u,
        Some(AttrValue::Text(r)) => match r.as_str() {
            "none" => |_, u| u,
            "add" => |a, u| a + u,
            "mul" => |a, u| a * u,
            "max" => f64::max,
            "min" => f64::min,
            other => return Err(format!("reduction {other}")),
        },
        _ => return Err("reduction is a string".into()),
    };
    let mut out = x.clone();
    let xs = strides(&x.dims);
    let fix = |i: f64, len: usize| -> Result<usize, String> {
        let i = i as i64;
        let j = if i < 0 { i + len as i64 } else { i };
        usize::try_from(j)
            .ok()
            .filter(|&j| j < len)
            .ok_or_else(|| format!("index {i} out of range 0..{len}"))
    };
    let mut apply = |at: usize, u: f64| {
        let v = reduce(out.data[at], u);
        out.data[at] = if float { f64::from(v as f32) } else { v };
    };
    // Scatter (opsets 9 to 10) is ScatterElements under its old name.
    if n.op_type == "ScatterElements" || n.op_type == "Scatter" {
        let a = axis_of(n.attr_int("axis", 0), x.dims.len())?;
        if idx.dims != upd.dims || idx.dims.len() != x.dims.len() {
            return Err("indices and updates of one shape, of the data's rank".into());
        }
        for (k, &i) in idx.data.iter().enumerate() {
            let mut c = coords(k, &idx.dims);
            c[a] = fix(i, x.dims[a])?;
            if c.iter().zip(&x.dims).any(|(c, d)| c >= d) {
                return Err(format!(
                    "indices of shape {:?} for data of shape {:?}",
                    idx.dims, x.dims
                ));
            }
            apply(c.iter().zip(&xs).map(|(c, s)| c * s).sum(), upd.data[k]);
        }
        return Ok(out);
    }
    // ScatterND: indices [..., m] address a slice of data's trailing dims.
    let m = *idx.dims.last().ok_or("indices of rank 0")?;
    if m == 0 || m > x.dims.len() {
        return Err(format!(
            "index tuples of {m} for data of rank {}",
            x.dims.len()
        ));
    }
    let slice: usize = x.dims[m..].iter().product();
    let tuples = idx.data.len() / m;
    if upd.data.len() != tuples * slice {
        return Err(format!(
            "{} updates for {tuples} slices of {slice}",
            upd.data.len()
        ));
    }
    for t in 0..tuples {
        let mut at = 0;
        for (d, (&len, &stride)) in x.dims.iter().zip(&xs).take(m).enumerate() {
            at += fix(idx.data[t * m + d], len)? * stride;
        }
        for e in 0..slice {
            apply(at + e, upd.data[t * slice + e]);
        }
    }
    Ok(out)
}

/// numpy's order for Unique: NaNs equal to each other and after every number; -0 equals 0.
fn unique_order(a: f64, b: f64) -> std::cmp::Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => a.partial_cmp(&b).expect("numbers"),
    }
}

/// Unique: the distinct elements of `x` (flattened), or with `axis` its distinct slices
/// along the axis (compared element by element in order), in ascending order (`sorted`, the
/// default) or in the order they first occur; with the index of each one's first
/// occurrence, each element's (slice's) index in the output, and the counts (int64).
pub(super) fn unique(n: &Node, x: &HostVal) -> Result<Vec<HostVal>, String> {
    let (dims, a) = match n.attr("axis") {
        Some(AttrValue::Int(v)) => (x.dims.clone(), super::shape::axis_of(*v, x.dims.len())?),
        _ => (vec![x.data.len()], 0),
    };
    let (m, inner) = (dims[a], dims[a + 1..].iter().product::<usize>());
    let outer = x.data.len() / (m * inner).max(1);
    let slice = |i: usize| {
        (0..outer).flat_map(move |o| (0..inner).map(move |k| x.data[(o * m + i) * inner + k]))
    };
    let cmp = |i: &usize, j: &usize| {
        slice(*i)
            .zip(slice(*j))
            .map(|(p, q)| unique_order(p, q))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    // A stable sort: each group of equal slices starts with its first occurrence.
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(cmp);
    let mut groups: Vec<(usize, usize)> = vec![]; // (first occurrence, count)
    let mut group_of = vec![0usize; m];
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || cmp(&order[k - 1], &i).is_ne() {
            groups.push((i, 0));
        }
        groups.last_mut().expect("a group").1 += 1;
        group_of[i] = groups.len() - 1;
    }
    let mut rank: Vec<usize> = (0..groups.len()).collect();
    if n.attr_int("sorted", 1) == 0 {
        rank.sort_by_key(|&g| groups[g].0);
    }
    let mut place = vec![0usize; groups.len()];
    for (p, &g) in rank.iter().enumerate() {
        place[g] = p;
    }
    let u = groups.len();
    let mut y = vec![0.0; outer * u * inner];
    for (p, &g) in rank.iter().enumerate() {
        for (j, v) in slice(groups[g].0).enumerate() {
            let (o, k) = (j / inner.max(1), j % inner.max(1));
            y[(o * u + p) * inner + k] = v;
        }
    }
    let mut ydims = dims;
    ydims[a] = u;
    let ints = |data: Vec<usize>| HostVal {
        dims: vec![data.len()],
        data: data.into_iter().map(|v| v as f64).collect(),
        elem: dtype::INT64,
    };
    Ok(vec![
        HostVal {
            dims: ydims,
            data: y,
            elem: x.elem,
        },
        ints(rank.iter().map(|&g| groups[g].0).collect()),
        ints(group_of.iter().map(|&g| place[g]).collect()),
        ints(rank.iter().map(|&g| groups[g].1).collect()),
    ])
}

/// MaxUnpool: zeros of the shape a MaxPool of `kernel_shape`, `strides` and `pads` took its
/// input from (`(in - 1) * stride - pads + kernel` per spatial axis), each element of `x`
/// written at its flat index from `indices` (MaxPool's second output); with an
/// `output_shape` input, that tensor in the low corner of zeros of that shape.
pub(super) fn max_unpool(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Result<HostVal, String> {
    let idx = ins
        .get(1)
        .and_then(Option::as_ref)
        .ok_or("the indices are missing")?;
    let kernel = n.attr_ints("kernel_shape").ok_or("no kernel_shape")?;
    let k = kernel.len();
    if x.dims.len() != k + 2 || idx.data.len() != x.data.len() {
        return Err(format!(
            "input {:?} and indices {:?} for a kernel of {k} axes",
            x.dims, idx.dims
        ));
    }
    let strides = n.attr_ints_or("strides", &vec![1; k]);
    let pads = n.attr_ints_or("pads", &vec![0; 2 * k]);
    if strides.len() != k || pads.len() != 2 * k {
        return Err(format!(
            "strides {strides:?} and pads {pads:?} for {k} axes"
        ));
    }
    let mut inferred = x.dims[..2].to_vec();
    for d in 0..k {
        let v = (x.dims[d + 2] as i64 - 1) * strides[d] - (pads[d] + pads[k + d]) + kernel[d];
        inferred.push(usize::try_from(v).map_err(|_| format!("an output extent of {v}"))?);
    }
    let count = super::elements(&inferred)?;
    let mut y = vec![0.0; count];
    for (&i, &v) in idx.data.iter().zip(&x.data) {
        let at = usize::try_from(i as i64)
            .ok()
            .filter(|&a| a < count)
            .ok_or(format!("index {i} outside an output of {count} elements"))?;
        y[at] = v;
    }
    let Some(shape) = ins.get(2).and_then(Option::as_ref) else {
        return Ok(HostVal {
            dims: inferred,
            data: y,
            elem: x.elem,
        });
    };
    let dims: Vec<usize> = shape.data.iter().map(|&d| d as usize).collect();
    if dims.len() != inferred.len() || dims.iter().zip(&inferred).any(|(a, b)| a < b) {
        return Err(format!(
            "an output_shape {dims:?} smaller than {inferred:?}"
        ));
    }
    let mut out = vec![0.0; super::elements(&dims)?];
    let (from, to) = (
        super::shape::strides(&inferred),
        super::shape::strides(&dims),
    );
    for (k, &v) in y.iter().enumerate() {
        let at: usize = (0..dims.len())
            .map(|a| k / from[a] % inferred[a] * to[a])
            .sum();
        out[at] = v;
    }
    Ok(HostVal {
        dims,
        data: out,
        elem: x.elem,
    })
}

/// TensorScatter (a KV cache's update): `update`'s steps along `axis` (default -2, not the
/// batch axis 0) written into a copy of the cache from batch element b's
/// `write_indices[b]` (0 when absent) on; `circular` wraps around the cache's length,
/// `linear` (the default) must fit.
pub(super) fn tensor_scatter(
    n: &Node,
    cache: &HostVal,
    ins: &[Option<HostVal>],
) -> Result<HostVal, String> {
    let update = ins
        .get(1)
        .and_then(Option::as_ref)
        .ok_or("the update is missing")?;
    let rank = cache.dims.len();
    let axis = super::shape::axis_of(n.attr_int("axis", -2), rank)?;
    let bad = (0..rank).any(|a| {
        (a != axis && update.dims.get(a) != Some(&cache.dims[a]))
            || (a == axis && update.dims.get(a).is_none_or(|&u| u > cache.dims[a]))
    });
    if axis == 0 || bad || update.dims.len() != rank {
        return Err(format!(
            "a cache of shape {:?} and an update of shape {:?} along axis {axis} (not 0)",
            cache.dims, update.dims
        ));
    }
    let circular = match n.attr("mode") {
        Some(AttrValue::Text(m)) if m == "circular" => true,
        Some(AttrValue::Text(m)) if m == "linear" => false,
        None => false,
        _ => return Err("a mode other than linear or circular".into()),
    };
    let (max, steps) = (cache.dims[axis], update.dims[axis]);
    let inner: usize = cache.dims[axis + 1..].iter().product();
    let per_batch: usize = cache.dims[1..axis].iter().product();
    let start = |b: usize| -> Result<i64, String> {
        match ins.get(2).and_then(Option::as_ref) {
            Some(w) => w
                .data
                .get(b)
                .map(|&v| v as i64)
                .ok_or(format!("no write index for batch element {b}")),
            None => Ok(0),
        }
    };
    let mut data = cache.data.clone();
    for outer in 0..cache.dims[..axis].iter().product::<usize>() {
        let first = start(outer / per_batch.max(1))?;
        for s in 0..steps {
            let at = first + s as i64;
            let at = if circular {
                at.rem_euclid(max as i64)
            } else {
                at
            };
            let at = usize::try_from(at)
                .ok()
                .filter(|&a| a < max)
                .ok_or(format!(
                    "step {s} written at {at}, outside a cache of {max} (mode linear)"
                ))?;
            data[(outer * max + at) * inner..][..inner]
                .copy_from_slice(&update.data[(outer * steps + s) * inner..][..inner]);
        }
    }
    Ok(HostVal {
        dims: cache.dims.clone(),
        data,
        elem: cache.elem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: [2, 1, 2, 3, 1] sorted gives [1, 2, 3], first at [1, 0, 3], the elements'
    /// places [1, 0, 1, 2, 0], counts [2, 2, 1]; unsorted [2, 1, 3], [0, 1, 3],
    /// [0, 1, 0, 2, 1], [2, 2, 1]. The rows of [[1, 0], [1, 0], [0, 1]] (axis 0), sorted:
    /// [[0, 1], [1, 0]], first at [2, 0], places [1, 1, 0], counts [1, 2].
    #[test]
    fn unique_by_hand() {
        let node = |sorted: i64, axis: Option<i64>| {
            let mut attributes = vec![crate::onnx::proto::Attribute {
                name: "sorted".into(),
                value: AttrValue::Int(sorted),
            }];
            if let Some(a) = axis {
                attributes.push(crate::onnx::proto::Attribute {
                    name: "axis".into(),
                    value: AttrValue::Int(a),
                });
            }
            Node {
                op_type: "Unique".into(),
                attributes,
                ..Node::default()
            }
        };
        let data = |v: &[HostVal]| v.iter().map(|t| t.data.clone()).collect::<Vec<_>>();
        let x = HostVal {
            dims: vec![5],
            data: vec![2.0, 1.0, 2.0, 3.0, 1.0],
            elem: dtype::INT32,
        };
        let s = unique(&node(1, None), &x).unwrap();
        assert_eq!(
            data(&s),
            vec![
                vec![1.0, 2.0, 3.0],
                vec![1.0, 0.0, 3.0],
                vec![1.0, 0.0, 1.0, 2.0, 0.0],
                vec![2.0, 2.0, 1.0]
            ]
        );
        let u = unique(&node(0, None), &x).unwrap();
        assert_eq!(
            data(&u),
            vec![
                vec![2.0, 1.0, 3.0],
                vec![0.0, 1.0, 3.0],
                vec![0.0, 1.0, 0.0, 2.0, 1.0],
                vec![2.0, 2.0, 1.0]
            ]
        );
        let rows = HostVal {
            dims: vec![3, 2],
            data: vec![1.0, 0.0, 1.0, 0.0, 0.0, 1.0],
            elem: dtype::FLOAT,
        };
        let r = unique(&node(1, Some(0)), &rows).unwrap();
        assert_eq!(r[0].dims, vec![2, 2]);
        assert_eq!(
            data(&r),
            vec![
                vec![0.0, 1.0, 1.0, 0.0],
                vec![2.0, 0.0],
                vec![1.0, 1.0, 0.0],
                vec![1.0, 2.0]
            ]
        );
    }

    /// By hand: [5, 7] from a 1 x 2 pool of stride 2 at flat indices 1 and 2 unpool to
    /// [0, 5, 7, 0]; in an output of shape [1, 1, 2, 5], [0, 5, 7, 0, 0] above a row of zeros.
    #[test]
    fn max_unpool_by_hand() {
        let ints = |name: &str, v: Vec<i64>| crate::onnx::proto::Attribute {
            name: name.into(),
            value: AttrValue::Ints(v),
        };
        let n = Node {
            attributes: vec![
                ints("kernel_shape", vec![1, 2]),
                ints("strides", vec![1, 2]),
            ],
            ..Node::default()
        };
        let x = HostVal::float(vec![1, 1, 1, 2], vec![5.0, 7.0]);
        let idx = HostVal {
            dims: vec![1, 1, 1, 2],
            data: vec![1.0, 2.0],
            elem: dtype::INT64,
        };
        let y = max_unpool(&n, &x, &[None, Some(idx.clone())]).unwrap();
        assert_eq!(
            (y.dims, y.data),
            (vec![1, 1, 1, 4], vec![0.0, 5.0, 7.0, 0.0])
        );
        let shape = HostVal {
            dims: vec![4],
            data: vec![1.0, 1.0, 2.0, 5.0],
            elem: dtype::INT64,
        };
        let y = max_unpool(&n, &x, &[None, Some(idx), Some(shape)]).unwrap();
        let mut want = vec![0.0; 10];
        want[1..3].copy_from_slice(&[5.0, 7.0]);
        assert_eq!(y.data, want);
    }

    /// A blocksize whose square overflows is refused.
    #[test]
    fn huge_blocksize_is_refused() {
        let x = HostVal::float(vec![1, 4, 1, 1], vec![0.0; 4]);
        let n = Node::new("DepthToSpace", vec![("blocksize", AttrValue::Int(1 << 62))]);
        assert!(depth_space(&n, &x).unwrap_err().contains("2^16"));
    }

    /// By hand: steps [7, 8] written from index 3 into a cache of 4 zeros: circular wraps
    /// the second to 0, [8, 0, 0, 7]; linear refuses it (index 4 of 4).
    #[test]
    fn tensor_scatter_by_hand() {
        let mode = |m: &str| Node {
            attributes: vec![crate::onnx::proto::Attribute {
                name: "mode".into(),
                value: AttrValue::Text(m.into()),
            }],
            ..Node::default()
        };
        let cache = HostVal::float(vec![1, 4, 1], vec![0.0; 4]);
        let ins = [
            None,
            Some(HostVal::float(vec![1, 2, 1], vec![7.0, 8.0])),
            Some(HostVal {
                dims: vec![1],
                data: vec![3.0],
                elem: dtype::INT64,
            }),
        ];
        let y = tensor_scatter(&mode("circular"), &cache, &ins).unwrap();
        assert_eq!(y.data, vec![8.0, 0.0, 0.0, 7.0]);
        let e = tensor_scatter(&mode("linear"), &cache, &ins).unwrap_err();
        assert!(e.contains("outside a cache of 4"), "{e}");
    }
}
