//! The host's data-movement operators: Flatten, Reshape, Squeeze, Unsqueeze, Transpose,
//! Concat, Cast, CastLike, Shape, Gather, Expand, ConstantOfShape, Dropout (inference:
//! the identity), Pad, Slice, Split, ArgMax and ArgMin. They keep every value exactly.

use super::{need, quant, HostVal};
use crate::onnx::proto::{dtype, Node};

/// An axis of a rank-`rank` tensor (negative counts from the end; `extra` allows rank +
/// extra positions, for Unsqueeze's and Flatten's).
pub(super) fn axis(a: i64, rank: usize, extra: usize) -> Result<usize, String> {
    let n = (rank + extra) as i64;
    let v = if a < 0 { a + n } else { a };
    usize::try_from(v)
        .ok()
        .filter(|&v| (v as i64) < n.max(1))
        .ok_or_else(|| format!("axis {a} of a rank-{rank} tensor"))
}

/// As [`axis`], of a tensor that has the axis: a rank-0 tensor has none.
pub(super) fn axis_of(a: i64, rank: usize) -> Result<usize, String> {
    match rank {
        0 => Err(format!("axis {a} of a rank-0 tensor")),
        _ => axis(a, rank, 0),
    }
}

/// The axes a node takes from its `axes` attribute or (opset 13 and later) its second input.
fn axes(n: &Node, ins: &[Option<HostVal>]) -> Option<Vec<i64>> {
    match ins.get(1).and_then(|v| v.as_ref()) {
        Some(v) => Some(v.data.iter().map(|&a| a as i64).collect()),
        None => n.attr_ints("axes"),
    }
}

pub fn eval_shape(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    let r = match n.op_type.as_str() {
        "Flatten" => (|| {
            // An axis in -rank..=rank; a negative one counts from the end.
            let rank = x.dims.len() as i64;
            let a = n.attr_int("axis", 1);
            let a = usize::try_from(if a < 0 { a + rank } else { a })
                .ok()
                .filter(|&a| a <= x.dims.len())
                .ok_or_else(|| format!("axis {a} of a rank-{rank} tensor"))?;
            let dims = vec![x.dims[..a].iter().product(), x.dims[a..].iter().product()];
            Ok(HostVal { dims, ..x.clone() })
        })(),
        "Reshape" => (|| reshape(x, need(ins, 1)?, n.attr_int("allowzero", 0) != 0))(),
        "Squeeze" => (|| {
            let dims = match axes(n, ins) {
                Some(a) => {
                    let a: Vec<usize> = a
                        .iter()
                        .map(|&a| axis(a, x.dims.len(), 0))
                        .collect::<Result<_, _>>()?;
                    if let Some(&k) = a.iter().find(|&&k| x.dims[k] != 1) {
                        return Err(format!("squeezes axis {k} of {:?}", x.dims));
                    }
                    (0..x.dims.len())
                        .filter(|k| !a.contains(k))
                        .map(|k| x.dims[k])
                        .collect()
                }
                None => x.dims.iter().copied().filter(|&d| d != 1).collect(),
            };
            Ok(HostVal { dims, ..x.clone() })
        })(),
        "Unsqueeze" => (|| {
            let a = axes(n, ins).ok_or("Unsqueeze without axes")?;
            let rank = x.dims.len() + a.len();
            let mut at: Vec<usize> = a
                .iter()
                .map(|&v| axis(v, x.dims.len(), a.len()))
                .collect::<Result<_, _>>()?;
            at.sort_unstable();
            at.dedup();
            if at.len() != a.len() {
                return Err("repeated axes".into());
            }
            let mut rest = x.dims.iter();
            let dims = (0..rank)
                .map(|k| {
                    if at.contains(&k) {
                        1
                    } else {
                        *rest.next().expect("rank adds up")
                    }
                })
                .collect();
            Ok(HostVal { dims, ..x.clone() })
        })(),
        "Transpose" => transpose(n, x),
        "ArgMax" | "ArgMin" => arg(n, x),
        "Pad" => pad(n, x, ins),
        "Slice" => slice(n, x, ins),
        "Concat" => concat(n, ins),
        "Cast" => cast(n, x, n.attr_int("to", 0) as i32),
        "CastLike" => (|| cast(n, x, need(ins, 1)?.elem))(),
        "Shape" => {
            let rank = x.dims.len() as i64;
            let clampi = |v: i64| (if v < 0 { v + rank } else { v }).clamp(0, rank) as usize;
            let (a, b) = (
                clampi(n.attr_int("start", 0)),
                clampi(n.attr_int("end", rank)),
            );
            let data: Vec<f64> = x.dims[a..b.max(a)].iter().map(|&d| d as f64).collect();
            Ok(HostVal {
                dims: vec![data.len()],
                data,
                elem: dtype::INT64,
            })
        }
        "Gather" => (|| gather(n, x, need(ins, 1)?))(),
        "Expand" => (|| {
            let shape: Vec<usize> = need(ins, 1)?.data.iter().map(|&v| v as usize).collect();
            let dims = super::broadcast(&x.dims, &shape)
                .ok_or_else(|| format!("{:?} does not broadcast to {shape:?}", x.dims))?;
            let count = super::elements(&dims)?;
            let data = (0..count)
                .map(|k| x.data[super::source(k, &dims, &x.dims)])
                .collect();
            Ok(HostVal {
                dims,
                data,
                elem: x.elem,
            })
        })(),
        "ConstantOfShape" => (|| {
            let dims: Vec<usize> = x.data.iter().map(|&v| v as usize).collect();
            let (v, elem) = match n.attr("value") {
                Some(crate::onnx::proto::AttrValue::Tensor(t)) => {
                    (t.values.first().copied().unwrap_or(0.0), t.data_type)
                }
                _ => (0.0, dtype::FLOAT),
            };
            let count = super::elements(&dims)?;
            Ok(HostVal {
                dims,
                data: vec![v; count],
                elem,
            })
        })(),
        "Dropout" => dropout(x, ins).map(|mut v| v.remove(0)),
        _ => return None,
    };
    Some(r)
}

/// Dropout at inference (training_mode false), or in training with ratio 0: the input
/// unchanged and a mask of every element kept (bool true). Training with a ratio above 0
/// drops at random and is refused.
pub(super) fn dropout(x: &HostVal, ins: &[Option<HostVal>]) -> Result<Vec<HostVal>, String> {
    let first = |i: usize| {
        ins.get(i)
            .and_then(|v| v.as_ref())
            .and_then(|t| t.data.first().copied())
    };
    let training = first(2).is_some_and(|v| v != 0.0);
    let ratio = first(1).unwrap_or(0.5);
    if training && ratio != 0.0 {
        return Err(format!(
            "training_mode true with ratio {ratio} drops at random; the host runs Dropout at inference (or with ratio 0)"
        ));
    }
    let mask = HostVal {
        dims: x.dims.clone(),
        data: vec![1.0; x.data.len()],
        elem: dtype::BOOL,
    };
    Ok(vec![x.clone(), mask])
}

/// Reshape (0 keeps the dimension, or with `allowzero` is an empty one; -1 takes the rest).
fn reshape(x: &HostVal, shape: &HostVal, allowzero: bool) -> Result<HostVal, String> {
    let total = x.data.len();
    let mut dims: Vec<i64> = shape
        .data
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if v == 0.0 && !allowzero {
                x.dims.get(i).copied().unwrap_or(1) as i64
            } else {
                v as i64
            }
        })
        .collect();
    let bad = || format!("cannot reshape {:?} to {:?}", x.dims, shape.data);
    if allowzero && dims.contains(&0) && dims.contains(&-1) {
        return Err(format!(
            "{}: with allowzero, a 0 (an empty dimension) and a -1 cannot both be given",
            bad()
        ));
    }
    let known = dims
        .iter()
        .filter(|&&d| d > 0)
        .try_fold(1i64, |a, &d| a.checked_mul(d))
        .ok_or_else(bad)?;
    if dims.iter().filter(|&&d| d < 0).count() > 1 || dims.iter().any(|&d| d < -1) {
        return Err(bad());
    }
    for d in dims.iter_mut().filter(|d| **d < 0) {
        *d = total as i64 / known.max(1);
    }
    let dims: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    if dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) != Some(total) {
        return Err(bad());
    }
    Ok(HostVal { dims, ..x.clone() })
}

fn transpose(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    let rank = x.dims.len();
    let perm: Vec<usize> = match n.attr_ints("perm") {
        Some(p) => p
            .iter()
            .map(|&a| axis(a, rank, 0))
            .collect::<Result<_, _>>()?,
        None => (0..rank).rev().collect(),
    };
    let mut seen = perm.clone();
    seen.sort_unstable();
    if seen != (0..rank).collect::<Vec<_>>() {
        return Err(format!("perm {perm:?} for a rank-{rank} tensor"));
    }
    let dims: Vec<usize> = perm.iter().map(|&p| x.dims[p]).collect();
    let mut strides = vec![1usize; rank];
    for k in (0..rank.saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * x.dims[k + 1];
    }
    let data = (0..x.data.len())
        .map(|mut i| {
            let mut at = 0;
            for k in (0..rank).rev() {
                at += (i % dims[k]) * strides[perm[k]];
                i /= dims[k];
            }
            x.data[at]
        })
        .collect();
    Ok(HostVal {
        dims,
        data,
        elem: x.elem,
    })
}

pub(super) fn concat(n: &Node, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let parts: Vec<&HostVal> = ins.iter().flatten().collect();
    let first = parts[0];
    let a = axis(n.attr_int("axis", 0), first.dims.len(), 0)?;
    let same = |p: &HostVal| {
        p.elem == first.elem
            && p.dims.len() == first.dims.len()
            && (0..p.dims.len()).all(|k| k == a || p.dims[k] == first.dims[k])
    };
    if !parts.iter().all(|p| same(p)) {
        return Err("inputs whose types or shapes (but along the axis) differ".into());
    }
    let outer: usize = first.dims[..a].iter().product();
    let mut dims = first.dims.clone();
    dims[a] = parts.iter().map(|p| p.dims[a]).sum();
    let mut data = Vec::with_capacity(dims.iter().product());
    for o in 0..outer {
        for p in &parts {
            let chunk = p.data.len() / outer.max(1);
            data.extend_from_slice(&p.data[o * chunk..(o + 1) * chunk]);
        }
    }
    Ok(HostVal {
        dims,
        data,
        elem: first.elem,
    })
}

/// Gather along `axis` (negative indices count from the end).
fn gather(n: &Node, x: &HostVal, idx: &HostVal) -> Result<HostVal, String> {
    let a = axis(n.attr_int("axis", 0), x.dims.len(), 0)?;
    let d = x.dims[a] as i64;
    let picks: Vec<usize> = idx
        .data
        .iter()
        .map(|&v| {
            let i = v as i64;
            let i = if i < 0 { i + d } else { i };
            usize::try_from(i)
                .ok()
                .filter(|&i| (i as i64) < d)
                .ok_or_else(|| format!("index {v} of an axis of {d}"))
        })
        .collect::<Result<_, _>>()?;
    let (outer, inner): (usize, usize) = (
        x.dims[..a].iter().product(),
        x.dims[a + 1..].iter().product(),
    );
    let mut data = Vec::with_capacity(outer * picks.len() * inner);
    for o in 0..outer {
        for &p in &picks {
            let at = (o * x.dims[a] + p) * inner;
            data.extend_from_slice(&x.data[at..at + inner]);
        }
    }
    let dims = [&x.dims[..a], &idx.dims[..], &x.dims[a + 1..]].concat();
    Ok(HostVal {
        dims,
        data,
        elem: x.elem,
    })
}

/// `v` as float8 (or float4) format `f`: saturated to its largest finite value (infinities
/// too) then rounded to nearest even, or without `saturate` rounded, overflowing to
/// infinity (E5M2) or NaN (fn, fnuz; E2M1 always saturates), as ONNX's Cast and
/// QuantizeLinear define it.
pub(super) fn to_float8(v: f64, f: crate::numeric::MiniFloat, saturate: bool) -> f64 {
    let max = f.max_value();
    f.round_ieee(if saturate && !v.is_nan() {
        v.clamp(-max, max)
    } else {
        v
    })
}

/// Cast (or CastLike) node `n` of `x` to `to`, with its `saturate` (default 1) for float8
/// targets and `round_mode` (default "up") for float8e8m0. Float to integer truncates
/// toward zero (saturating; to the 4- and 2-bit types wrapping, as ml_dtypes does),
/// integer to integer wraps around.
fn cast(n: &Node, x: &HostVal, to: i32) -> Result<HostVal, String> {
    use crate::numeric::mx::E8m0Round;
    use crate::onnx::proto::AttrValue;
    let saturate = n.attr_int("saturate", 1) != 0;
    let round = match n.attr("round_mode") {
        None => E8m0Round::Up,
        Some(AttrValue::Text(m)) if m == "up" => E8m0Round::Up,
        Some(AttrValue::Text(m)) if m == "down" => E8m0Round::Down,
        Some(AttrValue::Text(m)) if m == "nearest" => E8m0Round::Nearest,
        Some(_) => return Err("a round_mode other than up, down or nearest".into()),
    };
    cast_to(x, to, saturate, round)
}

/// `x` cast to `to` (see `cast`).
pub(super) fn cast_to(
    x: &HostVal,
    to: i32,
    saturate: bool,
    round: crate::numeric::mx::E8m0Round,
) -> Result<HostVal, String> {
    use crate::numeric::mx::{e8m0_code, e8m0_value};
    let from_float = matches!(x.elem, dtype::FLOAT | dtype::DOUBLE | dtype::FLOAT8E8M0)
        || dtype::mini_float(x.elem).is_some();
    let small: Option<Box<dyn Fn(f64) -> f64>> = match (dtype::mini_float(to), to) {
        (Some(f), _) => Some(Box::new(move |v| to_float8(v, f, saturate))),
        (None, dtype::FLOAT8E8M0) => {
            Some(Box::new(move |v| e8m0_value(e8m0_code(v, round, saturate))))
        }
        // numpy's (ml_dtypes') astype to int4, uint4, int2 and uint2: toward zero, then the
        // low bits; NaN and infinities 0.
        _ if dtype::small_int(to).is_some() => Some(Box::new(move |v: f64| match v.is_finite() {
            true => dtype::small_value(to, v.trunc() as i64 as u32),
            false => 0.0,
        })),
        _ => None,
    };
    if let Some(g) = small {
        return Ok(HostVal {
            dims: x.dims.clone(),
            data: x.data.iter().map(|&v| g(v)).collect(),
            elem: to,
        });
    }
    let data = match (to, quant::int_range(to)) {
        (dtype::FLOAT, _) => x.data.iter().map(|&v| f64::from(v as f32)).collect(),
        // Every float32 and every integer up to 2^53 is a double exactly.
        (dtype::DOUBLE, _) => x.data.clone(),
        (dtype::FLOAT16 | dtype::BFLOAT16, _) => return Ok(super::narrow::round_to(x.clone(), to)),
        // Anything but zero (NaN too) is true.
        (dtype::BOOL, _) => x
            .data
            .iter()
            .map(|&v| f64::from(u8::from(v != 0.0)))
            .collect(),
        (_, Some((lo, hi))) if from_float => x
            .data
            .iter()
            .map(|&v| {
                if v.is_nan() {
                    0.0
                } else {
                    v.trunc().clamp(lo, hi)
                }
            })
            .collect(),
        (_, Some(_)) => x.data.iter().map(|&v| super::wrap(v as i128, to)).collect(),
        _ => return Err(format!("a cast to {}", dtype::name(to))),
    };
    Ok(HostVal {
        dims: x.dims.clone(),
        data,
        elem: to,
    })
}

/// Advance multi-index `idx` over `dims` in row-major order (the last axis fastest),
/// wrapping to all zeros after the last element.
pub(super) fn next_index(idx: &mut [usize], dims: &[usize]) {
    for a in (0..dims.len()).rev() {
        idx[a] += 1;
        if idx[a] < dims[a] {
            return;
        }
        idx[a] = 0;
    }
}

/// Strides of a row-major tensor of `dims`.
pub(super) fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1];
    }
    s
}

/// The source element of every output element, for an output of `dims` whose coordinate
/// k along each axis reads input coordinate `at(axis, k)` (None: the constant).
pub(super) fn gather_by(
    x: &HostVal,
    dims: Vec<usize>,
    at: impl Fn(usize, usize) -> Option<usize>,
    fill: f64,
) -> Result<HostVal, String> {
    let count = super::elements(&dims)?;
    let (os, is) = (strides(&dims), strides(&x.dims));
    let data = (0..count)
        .map(|i| {
            let mut src = 0;
            for a in 0..dims.len() {
                match at(a, i / os[a] % dims[a]) {
                    Some(j) => src += j * is[a],
                    None => return fill,
                }
            }
            x.data[src]
        })
        .collect();
    Ok(HostVal {
        dims,
        data,
        elem: x.elem,
    })
}

/// ArgMax and ArgMin along `axis` (keepdims, select_last_index), as int64.
pub fn arg(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    let a = axis(n.attr_int("axis", 0), x.dims.len(), 0)?;
    let (outer, d, inner) = (
        x.dims[..a].iter().product::<usize>(),
        x.dims[a],
        x.dims[a + 1..].iter().product::<usize>(),
    );
    if d == 0 {
        return Err("an arg-reduction over an empty axis".into());
    }
    let last = n.attr_int("select_last_index", 0) != 0;
    let max = n.op_type == "ArgMax";
    let mut data = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let v = |j: usize| x.data[(o * d + j) * inner + i];
            let better = |c: f64, b: f64| if max { c > b } else { c < b };
            let mut best = 0;
            for j in 1..d {
                if better(v(j), v(best)) || (last && v(j) == v(best)) {
                    best = j;
                }
            }
            data.push(best as f64);
        }
    }
    let mut dims = x.dims.clone();
    if n.attr_int("keepdims", 1) != 0 {
        dims[a] = 1;
    } else {
        dims.remove(a);
    }
    Ok(HostVal {
        dims,
        data,
        elem: dtype::INT64,
    })
}

/// Pad: constant (constant_value), edge, reflect or wrap; negative pads crop, and the
/// other modes then extend what is kept (as ONNX Runtime: crop, then pad); `axes` (opset
/// 18) selects the padded axes.
pub fn pad(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let rank = x.dims.len();
    let given: Vec<i64> = match ins.get(1).and_then(|v| v.as_ref()) {
        Some(p) => p.data.iter().map(|&v| v as i64).collect(),
        None => n.attr_ints("pads").unwrap_or_default(),
    };
    let axes: Vec<usize> = match ins.get(3).and_then(|v| v.as_ref()) {
        Some(a) => a
            .data
            .iter()
            .map(|&v| axis(v as i64, rank, 0))
            .collect::<Result<_, _>>()?,
        None => (0..rank).collect(),
    };
    if given.len() != 2 * axes.len() || given.iter().any(|p| p.abs() > 1 << 20) {
        return Err(format!("pads {given:?} for axes {axes:?}"));
    }
    let mut pads = vec![(0i64, 0i64); rank];
    for (k, &a) in axes.iter().enumerate() {
        pads[a] = (given[k], given[k + axes.len()]);
    }
    let dims: Vec<usize> = (0..rank)
        .map(|a| x.dims[a] as i64 + pads[a].0 + pads[a].1)
        .map(|d| {
            usize::try_from(d).map_err(|_| format!("pads {given:?} crop more than {:?}", x.dims))
        })
        .collect::<Result<_, _>>()?;
    let mode = match n.attr("mode") {
        Some(crate::onnx::proto::AttrValue::Text(m)) => m.as_str(),
        _ => "constant",
    };
    let fill = ins
        .get(2)
        .and_then(|v| v.as_ref())
        .and_then(|v| v.data.first().copied())
        .unwrap_or(0.0);
    if !matches!(mode, "constant" | "edge" | "reflect" | "wrap") {
        return Err(format!("Pad mode {mode}"));
    }
    let at = |a: usize, k: usize| -> Option<usize> {
        // The kept input range lo..lo + n, and k's position relative to it.
        let lo = (-pads[a].0).max(0);
        let n = x.dims[a] as i64 - lo - (-pads[a].1).max(0);
        let i = k as i64 - pads[a].0 - lo;
        let r = match mode {
            _ if (0..n).contains(&i) => i,
            "edge" if n > 0 => i.clamp(0, n - 1),
            "reflect" if n > 1 => {
                let period = 2 * (n - 1);
                let r = i.rem_euclid(period);
                if r < n {
                    r
                } else {
                    period - r
                }
            }
            "reflect" if n == 1 => 0,
            "wrap" if n > 0 => i.rem_euclid(n),
            _ => return None,
        };
        Some((lo + r) as usize)
    };
    gather_by(x, dims, at, fill)
}

/// Slice (starts, ends, axes, steps as inputs, or the attributes of opset 1), clamped as
/// numpy's slicing does.
pub fn slice(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let rank = x.dims.len() as i64;
    let list = |i: usize, attr: &str| -> Option<Vec<i64>> {
        match ins.get(i).and_then(|v| v.as_ref()) {
            Some(v) => Some(v.data.iter().map(|&e| e as i64).collect()),
            None => n.attr_ints(attr),
        }
    };
    let (starts, ends) = (
        list(1, "starts").unwrap_or_default(),
        list(2, "ends").unwrap_or_default(),
    );
    let axes = list(3, "axes").unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = list(4, "steps").unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err("starts, ends, axes and steps of different lengths".into());
    }
    // Per axis: (first, step, count).
    let mut sel: Vec<(i64, i64, usize)> = x.dims.iter().map(|&d| (0, 1, d)).collect();
    for k in 0..starts.len() {
        let a = axis(axes[k], rank as usize, 0)?;
        let (d, step) = (x.dims[a] as i64, steps[k]);
        if step == 0 {
            return Err("a slice step of 0".into());
        }
        let norm = |v: i64| if v < 0 { v + d } else { v };
        let (lo, hi) = if step > 0 { (0, d) } else { (-1, d - 1) };
        let (b, e) = (norm(starts[k]).clamp(lo, hi), norm(ends[k]).clamp(lo, hi));
        let count = if step > 0 {
            (e - b).max(0).div_ceil_i(step)
        } else {
            (b - e).max(0).div_ceil_i(-step)
        };
        sel[a] = (b, step, count as usize);
    }
    let dims: Vec<usize> = sel.iter().map(|s| s.2).collect();
    gather_by(
        x,
        dims,
        |a, k| Some((sel[a].0 + k as i64 * sel[a].1) as usize),
        0.0,
    )
}

trait DivCeil {
    fn div_ceil_i(self, d: i64) -> i64;
}

impl DivCeil for i64 {
    /// Ceiling division of a non-negative value by a positive one.
    fn div_ceil_i(self, d: i64) -> i64 {
        (self + d - 1) / d
    }
}

/// Split along `axis` into the `split` sizes (input or attribute), or into `outputs` equal
/// parts (the last smaller).
pub fn split(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
    outputs: usize,
) -> Result<Vec<HostVal>, String> {
    let a = axis(n.attr_int("axis", 0), x.dims.len(), 0)?;
    let d = x.dims[a];
    let sizes: Vec<usize> = match ins.get(1).and_then(|v| v.as_ref()) {
        Some(v) => v.data.iter().map(|&e| e as usize).collect(),
        None => match n.attr_ints("split") {
            Some(s) => s.iter().map(|&e| e as usize).collect(),
            None => {
                let part = d.div_ceil(outputs.max(1));
                (0..outputs)
                    .map(|k| part.min(d.saturating_sub(k * part)))
                    .collect()
            }
        },
    };
    let total = sizes.iter().try_fold(0usize, |a, &b| a.checked_add(b));
    if sizes.len() != outputs || total != Some(d) {
        return Err(format!(
            "split {sizes:?} of an axis of {d} into {outputs} outputs"
        ));
    }
    let mut first = 0;
    sizes
        .iter()
        .map(|&s| {
            let mut dims = x.dims.clone();
            dims[a] = s;
            let f = first;
            first += s;
            gather_by(x, dims, |ax, k| Some(if ax == a { f + k } else { k }), 0.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::mx::E8m0Round;

    /// By hand: to float8e4m3fn (largest 448) 500 and infinity saturate to 448, or without
    /// saturate are NaN; to float8e5m2 (largest 57344) 1e6 saturates, or is infinity; to
    /// int4 -9 wraps to 7, 8 to -8, 7.9 truncates to 7, NaN is 0; to uint4 -1 is 15.
    /// By hand, on [1, 2, 3]: wrap 2 before and 1 after is [2, 3, 1, 2, 3, 1]; with 1
    /// cropped before, what is kept ([2, 3]) wraps or reflects: [2, 3, 2, 3]; edge with 1
    /// before and 1 cropped after: [1, 1, 2]. Reshape [0, 3] to [3, 0] with allowzero is
    /// [3, 0]; allowzero with a 0 and a -1 is refused.
    #[test]
    fn pad_modes_and_allowzero_by_hand() {
        use crate::onnx::proto::AttrValue;
        let x = HostVal::float(vec![3], vec![1.0, 2.0, 3.0]);
        let run = |mode: &str, pads: [f64; 2]| {
            let n = Node::new("Pad", vec![("mode", AttrValue::Text(mode.into()))]);
            let p = HostVal {
                dims: vec![2],
                data: pads.to_vec(),
                elem: dtype::INT64,
            };
            pad(&n, &x, &[Some(x.clone()), Some(p)]).unwrap().data
        };
        assert_eq!(run("wrap", [2.0, 1.0]), [2.0, 3.0, 1.0, 2.0, 3.0, 1.0]);
        assert_eq!(run("wrap", [-1.0, 2.0]), [2.0, 3.0, 2.0, 3.0]);
        assert_eq!(run("reflect", [-1.0, 2.0]), [2.0, 3.0, 2.0, 3.0]);
        assert_eq!(run("edge", [1.0, -1.0]), [1.0, 1.0, 2.0]);
        let empty = HostVal::float(vec![0, 3], vec![]);
        let shape = |d: &[f64]| HostVal::float(vec![d.len()], d.to_vec());
        let r = reshape(&empty, &shape(&[3.0, 0.0]), true).unwrap();
        assert_eq!(r.dims, vec![3, 0]);
        assert!(reshape(&empty, &shape(&[0.0, -1.0]), true).is_err());
    }

    #[test]
    fn small_type_casts_by_hand() {
        let x = |d: &[f64]| HostVal::float(vec![d.len()], d.to_vec());
        let to = |v: &HostVal, t, sat| cast_to(v, t, sat, E8m0Round::Up).unwrap().data;
        let big = x(&[500.0, f64::INFINITY]);
        assert_eq!(to(&big, dtype::FLOAT8E4M3FN, true), vec![448.0, 448.0]);
        assert!(to(&big, dtype::FLOAT8E4M3FN, false)
            .iter()
            .all(|v| v.is_nan()));
        assert_eq!(to(&x(&[1e6]), dtype::FLOAT8E5M2, true), vec![57344.0]);
        assert_eq!(
            to(&x(&[1e6]), dtype::FLOAT8E5M2, false),
            vec![f64::INFINITY]
        );
        let ints = x(&[-9.0, 8.0, 7.9, f64::NAN]);
        assert_eq!(to(&ints, dtype::INT4, true), vec![7.0, -8.0, 7.0, 0.0]);
        assert_eq!(to(&x(&[-1.0]), dtype::UINT4, true), vec![15.0]);
    }

    /// By hand, ONNX's other small types: int2 holds -2..1, so -3 wraps to 1 and 2 to -2;
    /// uint2 -1 is 3. float8e4m3fnuz (largest 240) saturates -infinity to -240, or without
    /// saturate makes 1000 NaN, and -0 is +0. float4e2m1 (largest 6) saturates 9 either way.
    /// float8e8m0 by round_mode: 1.9 down is 1, 1.5 nearest is 2, 0.124 up (the default)
    /// is 0.125.
    #[test]
    fn other_small_type_casts_by_hand() {
        use crate::onnx::proto::AttrValue;
        let x = |d: &[f64]| HostVal::float(vec![d.len()], d.to_vec());
        let to = |v: &HostVal, t, sat| cast_to(v, t, sat, E8m0Round::Up).unwrap().data;
        assert_eq!(to(&x(&[-3.0, 2.0]), dtype::INT2, true), vec![1.0, -2.0]);
        assert_eq!(to(&x(&[-1.0]), dtype::UINT2, true), vec![3.0]);
        let f = dtype::FLOAT8E4M3FNUZ;
        assert_eq!(to(&x(&[f64::NEG_INFINITY]), f, true), vec![-240.0]);
        assert!(to(&x(&[1000.0]), f, false)[0].is_nan());
        assert!(to(&x(&[-0.0]), f, true)[0].is_sign_positive());
        assert_eq!(to(&x(&[9.0]), dtype::FLOAT4E2M1, false), vec![6.0]);
        let e8 = |mode: Option<&str>, v: f64| {
            let attrs = mode.map(|m| ("round_mode", AttrValue::Text(m.into())));
            let n = Node::new("Cast", attrs.into_iter().collect());
            cast(&n, &x(&[v]), dtype::FLOAT8E8M0).map(|r| r.data[0])
        };
        assert_eq!(e8(Some("down"), 1.9), Ok(1.0));
        assert_eq!(e8(Some("nearest"), 1.5), Ok(2.0));
        assert_eq!(e8(None, 0.124), Ok(0.125));
        assert!(e8(Some("even"), 1.0).unwrap_err().contains("round_mode"));
    }
}
