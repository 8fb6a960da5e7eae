//! Convolution, transposed convolution and pooling on the host over any number of spatial
//! axes (1-D, 2-D, 3-D, ...), `[N, C, spatial...]`. Sums are taken in f64, exact for the
//! integer operators' products (`quant`); float outputs are rounded to float32 once.

use super::shape::strides;
use super::{elements, HostVal};
use crate::onnx::proto::{dtype, AttrValue, Node};

/// The geometry of a window over `d` spatial axes: kernel, strides, padding at the
/// beginning and at the end, dilations; ONNX's defaults filled in and auto_pad resolved.
pub(super) struct Window {
    pub k: Vec<usize>,
    pub s: Vec<usize>,
    pub begin: Vec<usize>,
    pub end: Vec<usize>,
    pub dil: Vec<usize>,
}

impl Window {
    /// The span of the dilated kernel on axis `a`.
    fn reach(&self, a: usize) -> usize {
        (self.k[a].max(1) - 1) * self.dil[a] + 1
    }
}

/// The window of node `n` (kernel_shape, strides, pads, dilations, auto_pad) for an input
/// of spatial `size`; `kernel` is the kernel's shape when the node does not give it.
pub(super) fn window(n: &Node, kernel: &[usize], size: &[usize]) -> Result<Window, String> {
    let d = size.len();
    let get = |k: &str, v: Vec<i64>| n.attr_ints_or(k, &v);
    let k = get("kernel_shape", kernel.iter().map(|&v| v as i64).collect());
    let (s, mut p, dil) = (
        get("strides", vec![1; d]),
        get("pads", vec![0; 2 * d]),
        get("dilations", vec![1; d]),
    );
    if k.len() != d || s.len() != d || p.len() != 2 * d || dil.len() != d {
        return Err(format!(
            "kernel {k:?}, strides {s:?}, pads {p:?}, dilations {dil:?} for {d} spatial axes"
        ));
    }
    if [&k, &s, &p, &dil]
        .iter()
        .any(|v| v.iter().any(|&e| !(0..=1 << 16).contains(&e)))
    {
        return Err(format!(
            "kernel {k:?}, strides {s:?}, pads {p:?}, dilations {dil:?}: each must be in 0..=65536"
        ));
    }
    let u = |v: &[i64]| v.iter().map(|&e| e as usize).collect::<Vec<_>>();
    let (k, s, dil) = (
        u(&k),
        u(&s).into_iter().map(|v| v.max(1)).collect::<Vec<_>>(),
        u(&dil).into_iter().map(|v| v.max(1)).collect::<Vec<_>>(),
    );
    match n.attr("auto_pad") {
        Some(AttrValue::Text(t)) if t == "SAME_UPPER" || t == "SAME_LOWER" => {
            // Output size ceil(size / stride); the padding that needs, the odd one at the
            // end (SAME_UPPER) or the beginning (SAME_LOWER).
            for a in 0..d {
                let out = size[a].div_ceil(s[a]);
                let reach = (out.max(1) - 1) * s[a] + (k[a].max(1) - 1) * dil[a] + 1;
                let total = reach.saturating_sub(size[a]);
                let small = total / 2;
                let (b, e) = if t == "SAME_UPPER" {
                    (small, total - small)
                } else {
                    (total - small, small)
                };
                p[a] = b as i64;
                p[a + d] = e as i64;
            }
        }
        Some(AttrValue::Text(t)) if t == "VALID" => p = vec![0; 2 * d],
        Some(AttrValue::Text(t)) if t != "NOTSET" => return Err(format!("auto_pad {t}")),
        _ => {}
    }
    let p = u(&p);
    Ok(Window {
        k,
        s,
        begin: p[..d].to_vec(),
        end: p[d..].to_vec(),
        dil,
    })
}

/// For each spatial axis and output coordinate, the (kernel offset, input coordinate)
/// pairs that fall inside the input.
type Taps = Vec<Vec<Vec<(usize, usize)>>>;

fn taps(w: &Window, size: &[usize], out: &[usize]) -> Taps {
    (0..size.len())
        .map(|a| {
            (0..out[a])
                .map(|o| {
                    (0..w.k[a])
                        .filter_map(|k| {
                            let i = (o * w.s[a] + k * w.dil[a]) as i64 - w.begin[a] as i64;
                            usize::try_from(i)
                                .ok()
                                .filter(|&i| i < size[a])
                                .map(|i| (k, i))
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// The (kernel offset, input offset) of every tap of the output at `o` (multi-index), the
/// offsets flattened with `ks` and `xs` (row-major strides of the kernel and the input), in
/// row-major order of the kernel.
fn tap_list(t: &Taps, o: &[usize], ks: &[usize], xs: &[usize]) -> Vec<(usize, usize)> {
    let lists: Vec<&Vec<(usize, usize)>> = (0..o.len()).map(|a| &t[a][o[a]]).collect();
    let mut all = vec![];
    if lists.iter().any(|l| l.is_empty()) {
        return all;
    }
    let mut idx = vec![0usize; o.len()];
    loop {
        let (mut kf, mut xf) = (0, 0);
        for a in 0..o.len() {
            let (k, i) = lists[a][idx[a]];
            kf += k * ks[a];
            xf += i * xs[a];
        }
        all.push((kf, xf));
        // The next tap, the last axis fastest.
        let mut a = o.len();
        loop {
            if a == 0 {
                return all;
            }
            a -= 1;
            idx[a] += 1;
            if idx[a] < lists[a].len() {
                break;
            }
            idx[a] = 0;
        }
    }
}

/// Every multi-index of `dims`, row-major.
fn positions(dims: &[usize]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let count: usize = dims.iter().product();
    let st = strides(dims);
    (0..count).map(move |p| (0..dims.len()).map(|a| p / st[a] % dims[a]).collect())
}

/// `[N, C, spatial...]` split, or an error.
fn split(d: &[usize], what: &str) -> Result<(usize, usize, Vec<usize>), String> {
    match d {
        [n, c, s @ ..] if !s.is_empty() => Ok((*n, *c, s.to_vec())),
        _ => Err(format!("a {what} of shape {d:?}, not [N, C, spatial...]")),
    }
}

/// A convolution of f64 elements (exact for integers), any group count; the caller rounds.
pub fn conv_values(
    n: &Node,
    x: &HostVal,
    w: &HostVal,
    b: Option<&HostVal>,
) -> Result<(Vec<usize>, Vec<f64>), String> {
    let ((nb, c, size), (co, cig, ks)) = (split(&x.dims, "input")?, split(&w.dims, "weight")?);
    if ks.len() != size.len() {
        return Err(format!(
            "a weight of shape {:?} for an input of shape {:?}",
            w.dims, x.dims
        ));
    }
    let groups = n.attr_int("group", 1).max(1) as usize;
    let win = window(n, &ks, &size)?;
    if cig * groups != c || co % groups != 0 || b.is_some_and(|b| b.data.len() != co) || win.k != ks
    {
        return Err("its groups, weights, kernel_shape and bias do not match the channels".into());
    }
    let mut out_sp = vec![];
    for (a, &sz) in size.iter().enumerate() {
        if win.k[a] == 0 || sz + win.begin[a] + win.end[a] < win.reach(a) {
            return Err("a kernel larger than the padded input".into());
        }
        out_sp.push((sz + win.begin[a] + win.end[a] - win.reach(a)) / win.s[a] + 1);
    }
    let mut dims = vec![nb, co];
    dims.extend(&out_sp);
    let mut out = vec![0f64; elements(&dims)?];
    let t = taps(&win, &size, &out_sp);
    let (kstr, xstr) = (strides(&ks), strides(&size));
    let (kvol, xvol): (usize, usize) = (ks.iter().product(), size.iter().product());
    let ovol: usize = out_sp.iter().product();
    for (p, o) in positions(&out_sp).enumerate() {
        let taps = tap_list(&t, &o, &kstr, &xstr);
        for bi in 0..nb {
            for oc in 0..co {
                let g = oc / (co / groups);
                let mut acc = b.map_or(0.0, |b| b.data[oc]);
                for ci in 0..cig {
                    let (xbase, wbase) = (((bi * c) + g * cig + ci) * xvol, (oc * cig + ci) * kvol);
                    for &(kf, xf) in &taps {
                        acc += x.data[xbase + xf] * w.data[wbase + kf];
                    }
                }
                out[(bi * co + oc) * ovol + p] = acc;
            }
        }
    }
    Ok((dims, out))
}

/// A float convolution.
pub fn conv(n: &Node, x: &HostVal, w: &HostVal, b: Option<&HostVal>) -> Result<HostVal, String> {
    let (dims, data) = conv_values(n, x, w, b)?;
    Ok(HostVal::float(dims, data))
}

/// Max, average and Lp pooling (padding never counts for the max; for the average only
/// with count_include_pad; for Lp, (sum |x|^p)^(1/p), it adds nothing), and the global
/// ones.
pub fn pool(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    pool_with_indices(n, x).map(|(v, _)| v)
}

/// As [`pool`], with a max-pool's Indices output: each maximum's position (the first of
/// equal ones) in the input flattened, row-major (storage_order 0) or with the spatial
/// dimensions column-major (storage_order 1), the batch and channel included.
pub fn pool_with_indices(n: &Node, x: &HostVal) -> Result<(HostVal, HostVal), String> {
    let (nb, c, size) = split(&x.dims, "input")?;
    let d = size.len();
    let win = if n.op_type.starts_with("Global") {
        Window {
            k: size.clone(),
            s: vec![1; d],
            begin: vec![0; d],
            end: vec![0; d],
            dil: vec![1; d],
        }
    } else {
        window(n, &vec![1; d], &size)?
    };
    let ceil = n.attr_int("ceil_mode", 0) != 0;
    let mut out_sp = vec![];
    for (a, &sz) in size.iter().enumerate() {
        let (pb, pe) = (win.begin[a], win.end[a]);
        if win.k[a] == 0 || sz + pb + pe < win.reach(a) {
            return Err("a window larger than the padded input".into());
        }
        // Floor, or with ceil_mode ceil as long as the last window starts inside the input
        // or its leading padding.
        let (span, s) = (sz + pb + pe - win.reach(a), win.s[a]);
        out_sp.push(match ceil {
            true if span.div_ceil(s) * s >= sz + pb => span.div_ceil(s),
            true => span.div_ceil(s) + 1,
            false => span / s + 1,
        });
    }
    let max = n.op_type.contains("Max");
    let lp = n
        .op_type
        .contains("LpPool")
        .then(|| n.attr_int("p", 2) as f64);
    let include = n.attr_int("count_include_pad", 0) != 0;
    let t = taps(&win, &size, &out_sp);
    // Per axis and output coordinate: the window positions before the end of the trailing
    // padding (positions past it, which only ceil_mode reaches, never count).
    let padded: Vec<Vec<usize>> = (0..d)
        .map(|a| {
            (0..out_sp[a])
                .map(|o| {
                    (0..win.k[a])
                        .filter(|&k| {
                            o * win.s[a] + k * win.dil[a] < size[a] + win.begin[a] + win.end[a]
                        })
                        .count()
                })
                .collect()
        })
        .collect();
    let xstr = strides(&size);
    // Column-major strides of the spatial dimensions (storage_order 1).
    let fstr: Vec<usize> = (0..d).map(|a| size[..a].iter().product()).collect();
    let column_major = n.attr_int("storage_order", 0) != 0;
    let (xvol, ovol): (usize, usize) = (size.iter().product(), out_sp.iter().product());
    let mut dims = vec![nb, c];
    dims.extend(&out_sp);
    let mut out = vec![0f64; elements(&dims)?];
    let mut indices = vec![0f64; out.len()];
    let kstr = strides(&win.k);
    for (p, o) in positions(&out_sp).enumerate() {
        let taps = tap_list(&t, &o, &kstr, &xstr);
        let pad_count: usize = (0..d).map(|a| padded[a][o[a]]).product();
        for plane in 0..nb * c {
            let base = plane * xvol;
            let (mut best, mut best_at, mut sum, mut powers, mut count) =
                (f64::MIN, 0usize, 0f64, 0f64, 0usize);
            for &(_, xf) in &taps {
                let v = x.data[base + xf];
                if v > best || count == 0 {
                    best_at = xf;
                }
                best = best.max(v);
                sum += v;
                if let Some(p) = lp {
                    powers += v.abs().powf(p);
                }
                count += 1;
            }
            let at = if column_major {
                (0..d).map(|a| best_at / xstr[a] % size[a] * fstr[a]).sum()
            } else {
                best_at
            };
            let div = if include { pad_count } else { count.max(1) };
            indices[plane * ovol + p] = (base + at) as f64;
            out[plane * ovol + p] = match lp {
                Some(p) => powers.powf(1.0 / p),
                None if max => best,
                None => sum / div as f64,
            };
        }
    }
    let indices = HostVal {
        dims: dims.clone(),
        data: indices,
        elem: dtype::INT64,
    };
    if max {
        // A max keeps its input's type (an integer max-pool is exact).
        let v = HostVal {
            dims,
            data: out,
            elem: x.elem,
        };
        return Ok((v, indices));
    }
    Ok((HostVal::float(dims, out), indices))
}

/// A float transposed convolution, any group count: input position i adds its products to
/// output `i * stride - pad + k * dilation`; output_padding extends the end. With
/// `output_shape` (or auto_pad SAME_UPPER/SAME_LOWER, output = input x stride), the pads
/// are what that size needs as ONNX's specification splits them: the larger half at the
/// end for SAME_UPPER, at the beginning otherwise.
pub fn conv_transpose(
    n: &Node,
    x: &HostVal,
    w: &HostVal,
    b: Option<&HostVal>,
) -> Result<HostVal, String> {
    let ((nb, c, size), (ci, cog, ks)) = (split(&x.dims, "input")?, split(&w.dims, "weight")?);
    let d = size.len();
    let groups = n.attr_int("group", 1).max(1) as usize;
    let co = cog * groups;
    if ks.len() != d || ci != c || c % groups != 0 || b.is_some_and(|b| b.data.len() != co) {
        return Err("its groups, weights and bias do not match the channels".into());
    }
    let get = |k: &str, v: Vec<i64>| n.attr_ints_or(k, &v);
    let (s, mut p, dil, op) = (
        get("strides", vec![1; d]),
        get("pads", vec![0; 2 * d]),
        get("dilations", vec![1; d]),
        get("output_padding", vec![0; d]),
    );
    if s.len() != d || p.len() != 2 * d || dil.len() != d || op.len() != d {
        return Err(format!(
            "strides {s:?}, pads {p:?}, dilations {dil:?}, output_padding {op:?} for {d} spatial axes"
        ));
    }
    if [&s, &p, &dil, &op]
        .iter()
        .any(|v| v.iter().any(|&e| !(0..=1 << 16).contains(&e)))
        || s.iter().chain(&dil).any(|&e| e == 0)
    {
        return Err(format!(
            "strides {s:?}, pads {p:?}, dilations {dil:?}, output_padding {op:?}: each must be in 0..=65536"
        ));
    }
    let full = |a: usize| (size[a] as i64 - 1) * s[a] + (ks[a] as i64 - 1) * dil[a] + 1 + op[a];
    let upper = matches!(n.attr("auto_pad"), Some(AttrValue::Text(t)) if t == "SAME_UPPER");
    let wanted: Option<Vec<i64>> = match (n.attr_ints("output_shape"), n.attr("auto_pad")) {
        (Some(o), _) => Some(o[o.len().saturating_sub(d)..].to_vec()),
        (None, Some(AttrValue::Text(t))) if t == "SAME_UPPER" || t == "SAME_LOWER" => {
            Some((0..d).map(|a| size[a] as i64 * s[a]).collect())
        }
        (None, Some(AttrValue::Text(t))) if t == "VALID" => {
            p = vec![0; 2 * d];
            None
        }
        _ => None,
    };
    if let Some(o) = &wanted {
        if o.len() != d {
            return Err(format!("an output_shape {o:?} for {d} spatial axes"));
        }
        // (A negative total pads the end with zeros.)
        for a in 0..d {
            let total = full(a) - o[a];
            let half = total.div_euclid(2);
            (p[a], p[a + d]) = if upper {
                (half, total - half)
            } else {
                (total - half, half)
            };
        }
    }
    let out_sp: Vec<usize> = (0..d)
        .map(|a| (full(a) - p[a] - p[a + d]).max(0) as usize)
        .collect();
    let mut dims = vec![nb, co];
    dims.extend(&out_sp);
    let mut out = vec![0f64; elements(&dims)?];
    let (ostr, kstr) = (strides(&out_sp), strides(&ks));
    let (xvol, ovol, kvol): (usize, usize, usize) = (
        size.iter().product(),
        out_sp.iter().product(),
        ks.iter().product(),
    );
    let cig = c / groups;
    for (xp, i) in positions(&size).enumerate() {
        for kp in 0..kvol {
            let mut at = 0usize;
            let inside = (0..d).all(|a| {
                let k = kp / kstr[a] % ks[a];
                let y = i[a] as i64 * s[a] - p[a] + k as i64 * dil[a];
                let ok = y >= 0 && (y as usize) < out_sp[a];
                if ok {
                    at += y as usize * ostr[a];
                }
                ok
            });
            if !inside {
                continue;
            }
            for bi in 0..nb {
                for ch in 0..c {
                    let (g, v) = (ch / cig, x.data[(bi * c + ch) * xvol + xp]);
                    for o in 0..cog {
                        out[(bi * co + g * cog + o) * ovol + at] +=
                            v * w.data[(ch * cog + o) * kvol + kp];
                    }
                }
            }
        }
    }
    if let Some(b) = b {
        for (k, v) in out.iter_mut().enumerate() {
            *v += b.data[k / ovol.max(1) % co];
        }
    }
    Ok(HostVal::float(dims, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand, the 2 x 2 x 2 cube 1..8 under one 3-D window of 2: max 8 at flat index 7,
    /// average 4.5; the column-major index of the maximum of [[1, 9], [3, 4]] (a 2-D
    /// window of 2) is 2 (x = 1, y = 0: 1 x 2 + 0).
    #[test]
    fn n_d_pooling_by_hand() {
        let cube = HostVal::float(vec![1, 1, 2, 2, 2], (1..=8).map(f64::from).collect());
        let k = |v: Vec<i64>| ("kernel_shape", AttrValue::Ints(v));
        let (m, i) =
            pool_with_indices(&Node::new("MaxPool", vec![k(vec![2, 2, 2])]), &cube).unwrap();
        assert_eq!(
            (m.dims, m.data, i.data),
            (vec![1, 1, 1, 1, 1], vec![8.0], vec![7.0])
        );
        let a = pool(&Node::new("AveragePool", vec![k(vec![2, 2, 2])]), &cube).unwrap();
        assert_eq!(a.data, vec![4.5]);
        let sq = HostVal::float(vec![1, 1, 2, 2], vec![1.0, 9.0, 3.0, 4.0]);
        let col = Node::new(
            "MaxPool",
            vec![k(vec![2, 2]), ("storage_order", AttrValue::Int(1))],
        );
        assert_eq!(pool_with_indices(&col, &sq).unwrap().1.data, vec![2.0]);
    }

    /// By hand, 1-D: [1, 2] by the kernel [1, 1, 1] at stride 2 overlap in the middle:
    /// [1, 1, 3, 2, 2]. auto_pad SAME_UPPER (output 2 x 2 = 4) crops the end: [1, 1, 3, 2];
    /// SAME_LOWER the beginning: [1, 3, 2, 2]; an output_shape of 6 pads the end: [1, 1,
    /// 3, 2, 2, 0].
    #[test]
    fn transposed_convolution_output_sizes_by_hand() {
        let x = HostVal::float(vec![1, 1, 2], vec![1.0, 2.0]);
        let w = HostVal::float(vec![1, 1, 3], vec![1.0; 3]);
        let run = |attrs: Vec<(&str, AttrValue)>| {
            let mut a = vec![("strides", AttrValue::Ints(vec![2]))];
            a.extend(attrs);
            conv_transpose(&Node::new("ConvTranspose", a), &x, &w, None)
                .unwrap()
                .data
        };
        assert_eq!(run(vec![]), vec![1.0, 1.0, 3.0, 2.0, 2.0]);
        let pad = |t: &str| vec![("auto_pad", AttrValue::Text(t.into()))];
        assert_eq!(run(pad("SAME_UPPER")), vec![1.0, 1.0, 3.0, 2.0]);
        assert_eq!(run(pad("SAME_LOWER")), vec![1.0, 3.0, 2.0, 2.0]);
        let shape = vec![("output_shape", AttrValue::Ints(vec![6]))];
        assert_eq!(run(shape), vec![1.0, 1.0, 3.0, 2.0, 2.0, 0.0]);
    }
}
