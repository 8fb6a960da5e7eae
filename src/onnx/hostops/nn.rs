//! The host's products and windows: MatMul (N-D, numpy's broadcasting of the batch
//! dimensions), Gemm, 2-D convolution and pooling. Sums are taken in f64, exact for the
//! integer operators' products (`quant`), and rounded to float32 for float outputs.

use super::{broadcast, need, source, HostVal};
use crate::onnx::proto::{dtype, AttrValue, Node};

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

/// A float result of `x`'s type: float32 (each element rounded), or float64 as it is.
fn float_like(x: &HostVal, dims: Vec<usize>, data: Vec<f64>) -> HostVal {
    match x.elem {
        dtype::DOUBLE => HostVal {
            dims,
            data,
            elem: dtype::DOUBLE,
        },
        _ => HostVal::float(dims, data),
    }
}

/// Float MatMul, and Gemm of 2-D tensors (transA, transB, alpha, beta, a broadcast C); in
/// float32 (sums in double precision, rounded once), or float64.
pub fn matmul(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let w = need(ins, 1)?;
    if n.op_type == "MatMul" {
        let (dims, data) = matmul_values(x, w)?;
        return Ok(float_like(x, dims, data));
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
    Ok(float_like(x, dims, data))
}

/// The window geometry of a 2-D convolution or pooling: (kernel, strides, pads [top, left,
/// bottom, right], dilations), ONNX's defaults filled in and auto_pad resolved for an input
/// of `size` (height, width).
type Window = ([usize; 2], [usize; 2], [usize; 4], [usize; 2]);

fn window(n: &Node, kernel: [usize; 2], size: [usize; 2]) -> Result<Window, String> {
    let get = |k: &str, d: Vec<i64>| n.attr_ints_or(k, &d);
    let k = get("kernel_shape", kernel.iter().map(|&v| v as i64).collect());
    let (s, mut p, d) = (
        get("strides", vec![1, 1]),
        get("pads", vec![0; 4]),
        get("dilations", vec![1, 1]),
    );
    if k.len() != 2 || s.len() != 2 || p.len() != 4 || d.len() != 2 {
        return Err("only 2-D windows run on the host".into());
    }
    if [&k, &s, &p, &d]
        .iter()
        .any(|v| v.iter().any(|&e| !(0..=1 << 16).contains(&e)))
    {
        return Err(format!(
            "kernel {k:?}, strides {s:?}, pads {p:?}, dilations {d:?}: each must be in 0..=65536"
        ));
    }
    let u = |v: &[i64], i: usize| v[i] as usize;
    let (k, s, d) = (
        [u(&k, 0), u(&k, 1)],
        [u(&s, 0).max(1), u(&s, 1).max(1)],
        [u(&d, 0).max(1), u(&d, 1).max(1)],
    );
    match n.attr("auto_pad") {
        Some(AttrValue::Text(t)) if t == "SAME_UPPER" || t == "SAME_LOWER" => {
            // Output size ceil(size / stride); the padding that needs, the odd one at the
            // end (SAME_UPPER) or the beginning (SAME_LOWER).
            for a in 0..2 {
                let out = size[a].div_ceil(s[a]);
                let reach = (out - 1) * s[a] + (k[a].max(1) - 1) * d[a] + 1;
                let total = reach.saturating_sub(size[a]);
                let small = total / 2;
                let (begin, end) = if t == "SAME_UPPER" {
                    (small, total - small)
                } else {
                    (total - small, small)
                };
                p[a] = begin as i64;
                p[a + 2] = end as i64;
            }
        }
        Some(AttrValue::Text(t)) if t == "VALID" => p = vec![0; 4],
        Some(AttrValue::Text(t)) if t != "NOTSET" => {
            return Err(format!("auto_pad {t}"));
        }
        _ => {}
    }
    Ok((k, s, [u(&p, 0), u(&p, 1), u(&p, 2), u(&p, 3)], d))
}

/// A 2-D convolution, NCHW, any group count, of f64 elements (exact for integers); the
/// caller rounds.
pub fn conv_values(
    n: &Node,
    x: &HostVal,
    w: &HostVal,
    b: Option<&HostVal>,
) -> Result<(Vec<usize>, Vec<f64>), String> {
    let ([nb, c, h, wd], [co, cig, kh, kw]) = (dims4(&x.dims)?, dims4(&w.dims)?);
    let groups = n.attr_int("group", 1).max(1) as usize;
    let (_, s, p, d) = window(n, [kh, kw], [h, wd])?;
    if cig * groups != c || co % groups != 0 || b.is_some_and(|b| b.data.len() != co) {
        return Err("its groups, weights and bias do not match the channels".into());
    }
    let reach = |k: usize, d: usize| d * (k.max(1) - 1) + 1;
    if h + p[0] + p[2] < reach(kh, d[0]) || wd + p[1] + p[3] < reach(kw, d[1]) || kh == 0 || kw == 0
    {
        return Err("a kernel larger than the padded input".into());
    }
    let oh = (h + p[0] + p[2] - reach(kh, d[0])) / s[0] + 1;
    let ow = (wd + p[1] + p[3] - reach(kw, d[1])) / s[1] + 1;
    let mut out = vec![0f64; super::elements(&[nb, co, oh, ow])?];
    for bi in 0..nb {
        for o in 0..co {
            let g = o / (co / groups);
            for oy in 0..oh {
                for ox in 0..ow {
                    let mut acc = b.map_or(0.0, |b| b.data[o]);
                    for ci in 0..cig {
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let iy = (oy * s[0] + ky * d[0]) as i64 - p[0] as i64;
                                let ix = (ox * s[1] + kx * d[1]) as i64 - p[1] as i64;
                                if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < wd {
                                    let xi = ((bi * c + g * cig + ci) * h + iy as usize) * wd
                                        + ix as usize;
                                    acc +=
                                        x.data[xi] * w.data[((o * cig + ci) * kh + ky) * kw + kx];
                                }
                            }
                        }
                    }
                    out[((bi * co + o) * oh + oy) * ow + ox] = acc;
                }
            }
        }
    }
    Ok((vec![nb, co, oh, ow], out))
}

/// A float 2-D convolution.
pub fn conv(n: &Node, x: &HostVal, w: &HostVal, b: Option<&HostVal>) -> Result<HostVal, String> {
    let (dims, data) = conv_values(n, x, w, b)?;
    Ok(HostVal::float(dims, data))
}

pub fn dims4(d: &[usize]) -> Result<[usize; 4], String> {
    d.try_into()
        .map_err(|_| format!("a tensor of shape {d:?} where NCHW is needed"))
}

/// Max, average and Lp pooling (padding never counts for the max; for the average only
/// with count_include_pad; for Lp, (sum |x|^p)^(1/p), it adds nothing), and the global
/// ones.
pub fn pool(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    pool_with_indices(n, x).map(|(v, _)| v)
}

/// As [`pool`], with a max-pool's Indices output: each maximum's position (the first of
/// equal ones) in the input flattened, row-major (storage_order 0) or with the two spatial
/// dimensions column-major (storage_order 1), the batch and channel included.
pub fn pool_with_indices(n: &Node, x: &HostVal) -> Result<(HostVal, HostVal), String> {
    let [nb, c, h, w] = dims4(&x.dims)?;
    let global = n.op_type.starts_with("Global");
    let (k, s, p, d) = if global {
        ([h, w], [1, 1], [0; 4], [1, 1])
    } else {
        window(n, [1, 1], [h, w])?
    };
    let ceil = n.attr_int("ceil_mode", 0) != 0;
    // The window's reach with dilation.
    let r = [(k[0].max(1) - 1) * d[0] + 1, (k[1].max(1) - 1) * d[1] + 1];
    if k[0] == 0 || k[1] == 0 || h + p[0] + p[2] < r[0] || w + p[1] + p[3] < r[1] {
        return Err("a window larger than the padded input".into());
    }
    let max = n.op_type.contains("Max");
    let lp = n
        .op_type
        .contains("LpPool")
        .then(|| n.attr_int("p", 2) as f64);
    let include = n.attr_int("count_include_pad", 0) != 0;
    // Output size: floor, or with ceil_mode ceil as long as the last window starts inside
    // the input or its leading padding.
    let size = |inp: usize, (pb, pe): (usize, usize), r: usize, s: usize| {
        let span = inp + pb + pe - r;
        match ceil {
            true if span.div_ceil(s) * s >= inp + pb => span.div_ceil(s),
            true => span.div_ceil(s) + 1,
            false => span / s + 1,
        }
    };
    let oh = size(h, (p[0], p[2]), r[0], s[0]);
    let ow = size(w, (p[1], p[3]), r[1], s[1]);
    let mut out = vec![0f64; super::elements(&[nb, c, oh, ow])?];
    let mut indices = vec![0f64; out.len()];
    let column_major = n.attr_int("storage_order", 0) != 0;
    for plane in 0..nb * c {
        for oy in 0..oh {
            for ox in 0..ow {
                let (mut best, mut sum, mut count, mut padded) = (f64::MIN, 0f64, 0usize, 0usize);
                let mut best_at = 0usize;
                let mut powers = 0f64;
                for ky in 0..k[0] {
                    for kx in 0..k[1] {
                        let (iy, ix) = (
                            (oy * s[0] + ky * d[0]) as i64 - p[0] as i64,
                            (ox * s[1] + kx * d[1]) as i64 - p[1] as i64,
                        );
                        // (Positions past the padding, which only ceil_mode reaches, never
                        // count.)
                        let (hi_y, hi_x) = ((h + p[2]) as i64, (w + p[3]) as i64);
                        if iy < hi_y && ix < hi_x {
                            padded += 1;
                        }
                        if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < w {
                            let v = x.data[(plane * h + iy as usize) * w + ix as usize];
                            if v > best || count == 0 {
                                best_at = match column_major {
                                    false => (plane * h + iy as usize) * w + ix as usize,
                                    true => plane * h * w + ix as usize * h + iy as usize,
                                };
                            }
                            best = best.max(v);
                            sum += v;
                            if let Some(p) = lp {
                                powers += v.abs().powf(p);
                            }
                            count += 1;
                        }
                    }
                }
                let div = if include { padded } else { count.max(1) };
                indices[(plane * oh + oy) * ow + ox] = best_at as f64;
                out[(plane * oh + oy) * ow + ox] = match lp {
                    Some(p) => powers.powf(1.0 / p),
                    None if max => best,
                    None => sum / div as f64,
                };
            }
        }
    }
    let indices = HostVal {
        dims: vec![nb, c, oh, ow],
        data: indices,
        elem: dtype::INT64,
    };
    if max {
        // A max keeps its input's type (an integer max-pool is exact).
        let v = HostVal {
            dims: vec![nb, c, oh, ow],
            data: out,
            elem: x.elem,
        };
        return Ok((v, indices));
    }
    Ok((HostVal::float(vec![nb, c, oh, ow], out), indices))
}

/// BatchNormalization in inference: `(x - mean) / sqrt(var + epsilon) * scale + B` per
/// channel (axis 1), in float32.
pub fn batch_norm(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let [scale, b, mean, var] = [1, 2, 3, 4].map(|i| need(ins, i));
    let (scale, b, mean, var) = (scale?, b?, mean?, var?);
    if n.attr_int("training_mode", 0) != 0 {
        return Err("training_mode 1 is not supported on the host".into());
    }
    let c = x.dims.get(1).copied().unwrap_or(1);
    if [scale, b, mean, var].iter().any(|p| p.data.len() != c) {
        return Err(format!(
            "parameters that are not one per channel of {:?}",
            x.dims
        ));
    }
    let eps = n.attr_float("epsilon", 1e-5);
    let inner: usize = x.dims.iter().skip(2).product();
    let data = (0..x.data.len())
        .map(|k| {
            let ch = k / inner.max(1) % c;
            let f = |p: &HostVal| p.data[ch] as f32;
            let v = (x.data[k] as f32 - f(mean)) / (f(var) + eps).sqrt() * f(scale) + f(b);
            f64::from(v)
        })
        .collect();
    Ok(HostVal::float(x.dims.clone(), data))
}

/// A float 2-D transposed convolution, NCHW, any group count (no output_shape, no
/// auto_pad): input pixel (iy, ix) adds its products to output (iy * stride - pad + ky *
/// dilation, ...), and output_padding extends the end.
pub fn conv_transpose(
    n: &Node,
    x: &HostVal,
    w: &HostVal,
    b: Option<&HostVal>,
) -> Result<HostVal, String> {
    let ([nb, c, h, wd], [ci, cog, kh, kw]) = (dims4(&x.dims)?, dims4(&w.dims)?);
    if n.attr("output_shape").is_some()
        || matches!(n.attr("auto_pad"), Some(AttrValue::Text(t)) if t != "NOTSET")
    {
        return Err("output_shape and auto_pad are not supported on the host".into());
    }
    let groups = n.attr_int("group", 1).max(1) as usize;
    let co = cog * groups;
    if ci != c || c % groups != 0 || b.is_some_and(|b| b.data.len() != co) {
        return Err("its groups, weights and bias do not match the channels".into());
    }
    let get = |k: &str, d: &[i64]| n.attr_ints_or(k, d);
    let (s, p, d, op) = (
        get("strides", &[1, 1]),
        get("pads", &[0; 4]),
        get("dilations", &[1, 1]),
        get("output_padding", &[0, 0]),
    );
    if s.len() != 2 || p.len() != 4 || d.len() != 2 || op.len() != 2 {
        return Err("only 2-D windows run on the host".into());
    }
    if [&s, &p, &d, &op]
        .iter()
        .any(|v| v.iter().any(|&e| !(0..=1 << 16).contains(&e)))
    {
        return Err(format!(
            "strides {s:?}, pads {p:?}, dilations {d:?}, output_padding {op:?}: each must be in 0..=65536"
        ));
    }
    let size = |i: usize, k: usize, a: usize| {
        ((i as i64 - 1) * s[a] + (k as i64 - 1) * d[a] + 1 + op[a] - p[a] - p[a + 2]).max(0)
            as usize
    };
    let (oh, ow) = (size(h, kh, 0), size(wd, kw, 1));
    let mut out = vec![0f64; super::elements(&[nb, co, oh, ow])?];
    let cig = c / groups;
    for bi in 0..nb {
        for ch in 0..c {
            let g = ch / cig;
            for iy in 0..h {
                for ix in 0..wd {
                    let v = x.data[((bi * c + ch) * h + iy) * wd + ix];
                    for o in 0..cog {
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let y = iy as i64 * s[0] - p[0] + ky as i64 * d[0];
                                let xx = ix as i64 * s[1] - p[1] + kx as i64 * d[1];
                                if y < 0 || xx < 0 || y as usize >= oh || xx as usize >= ow {
                                    continue;
                                }
                                let oc = g * cog + o;
                                out[((bi * co + oc) * oh + y as usize) * ow + xx as usize] +=
                                    v * w.data[((ch * cog + o) * kh + ky) * kw + kx];
                            }
                        }
                    }
                }
            }
        }
    }
    if let Some(b) = b {
        for (k, v) in out.iter_mut().enumerate() {
            *v += b.data[k / (oh * ow) % co];
        }
    }
    Ok(HostVal::float(vec![nb, co, oh, ow], out))
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

/// A 1-D convolution or pooling as the 2-D one of height 1: the input [N, C, L] and the
/// weights [M, C/g, k] get a unit height, the window attributes a unit first axis (kernel
/// 1, stride 1, dilation 1, pads 0, output padding 0); None for other nodes.
fn one_d_as_two_d(n: &Node, ins: &[Option<HostVal>]) -> Option<(Node, Vec<Option<HostVal>>)> {
    let windows = [
        "Conv",
        "ConvTranspose",
        "MaxPool",
        "AveragePool",
        "LpPool",
        "GlobalAveragePool",
        "GlobalMaxPool",
        "GlobalLpPool",
    ];
    let x = ins.first()?.as_ref()?;
    if !windows.contains(&n.op_type.as_str()) || x.dims.len() != 3 {
        return None;
    }
    let unit_height = |v: &HostVal| {
        let mut v = v.clone();
        if v.dims.len() == 3 {
            v.dims.insert(2, 1);
        }
        v
    };
    let mut lifted = n.clone();
    for a in &mut lifted.attributes {
        if let AttrValue::Ints(v) = &mut a.value {
            match a.name.as_str() {
                "kernel_shape" | "strides" | "dilations" if v.len() == 1 => v.insert(0, 1),
                "output_padding" if v.len() == 1 => v.insert(0, 0),
                "pads" if v.len() == 2 => *v = vec![0, v[0], 0, v[1]],
                _ => {}
            }
        }
    }
    let ins = ins
        .iter()
        .enumerate()
        .map(|(i, v)| match i {
            // The input and the weights; a bias stays as it is.
            0 | 1 => v.as_ref().map(unit_height),
            _ => v.clone(),
        })
        .collect();
    Some((lifted, ins))
}

/// A 1-D window node run as the 2-D one of height 1 ([`one_d_as_two_d`]), its outputs
/// [N, C, 1, L] back to [N, C, L]; None for other nodes.
pub(super) fn one_d(n: &Node, ins: &[Option<HostVal>]) -> Option<Result<Vec<HostVal>, String>> {
    let (lifted, lifted_ins) = one_d_as_two_d(n, ins)?;
    Some(super::eval(&lifted, &lifted_ins).map(|outs| {
        outs.into_iter()
            .map(|mut v| {
                if v.dims.len() == 4 && v.dims[2] == 1 {
                    v.dims.remove(2);
                }
                v
            })
            .collect()
    }))
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
    Ok(float_like(x, x.dims.clone(), data))
}
