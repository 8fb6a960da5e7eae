//! Resize (opset 11 and later) in every mode, as ONNX's reference computes it: each axis
//! maps an output index to a source coordinate (the coordinate transformation), takes the
//! coefficients of its mode (nearest, linear or cubic, stretched when antialiasing a
//! downscale) over the neighbours around that coordinate (edge values past the border, or
//! with `exclude_outside` no weight there), and the axes combine separably, the first axis
//! last; `tf_crop_and_resize` reads `extrapolation_value` where the coordinate leaves the
//! input.

use super::HostVal;
use crate::onnx::proto::{dtype, AttrValue, Node};

/// One axis of the resize: for each output index, None (the extrapolation value) or the
/// input indices (clamped to the border) and their coefficients.
type Taps = Vec<Option<Vec<(usize, f64)>>>;

/// The attributes that shape every axis.
struct Modes {
    mode: String,
    transform: String,
    nearest: String,
    cubic_a: f64,
    antialias: bool,
    exclude_outside: bool,
}

/// Resize's attributes; Upsample (opset 9, scales an input) reads asymmetric coordinates
/// rounded down (`resize::nearest_modes`, the importer's rule too).
fn modes(n: &Node) -> Result<Modes, String> {
    let text = |name: &str, default: &str| match n.attr(name) {
        Some(AttrValue::Text(t)) => t.clone(),
        _ => default.to_string(),
    };
    let (transform, nearest) = match n.op_type.as_str() {
        "Upsample" => super::resize::nearest_modes(n)?,
        _ => (
            text("coordinate_transformation_mode", "half_pixel"),
            text("nearest_mode", "round_prefer_floor"),
        ),
    };
    Ok(Modes {
        mode: text("mode", "nearest"),
        transform,
        nearest,
        cubic_a: f64::from(n.attr_float("cubic_coeff_a", -0.75)),
        antialias: n.attr_int("antialias", 0) != 0,
        exclude_outside: n.attr_int("exclude_outside", 0) != 0,
    })
}

/// The coefficients of `m`'s mode at `ratio` (in (0, 1], the coordinate's distance past
/// the neighbour on its left) for scale `scale`; an even number of them, centred there.
fn coeffs(m: &Modes, ratio: f64, scale: f64) -> Result<Vec<f64>, String> {
    let a = m.cubic_a;
    let cubic = |x: f64| {
        let x = x.abs();
        if x <= 1.0 {
            ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        } else if x < 2.0 {
            ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        } else {
            0.0
        }
    };
    let normalized = |c: Vec<f64>| {
        let s: f64 = c.iter().sum();
        c.into_iter().map(|v| v / s).collect()
    };
    Ok(match (m.mode.as_str(), m.antialias) {
        ("nearest", false) => {
            let left = match m.nearest.as_str() {
                _ if ratio == 1.0 => false,
                "round_prefer_floor" => ratio <= 0.5,
                "round_prefer_ceil" => ratio < 0.5,
                "floor" => true,
                "ceil" => false,
                other => return Err(format!("nearest_mode {other}")),
            };
            if left {
                vec![1.0, 0.0]
            } else {
                vec![0.0, 1.0]
            }
        }
        ("linear", false) => vec![1.0 - ratio, ratio],
        ("cubic", false) => [ratio + 1.0, ratio, 1.0 - ratio, 2.0 - ratio]
            .into_iter()
            .map(cubic)
            .collect(),
        ("linear", true) => {
            let s = scale.min(1.0);
            let start = (-1.0 / s).floor() as i64 + 1;
            let c = (start..2 - start)
                .map(|i| (1.0 - ((i as f64 - ratio) * s).abs()).clamp(0.0, 1.0))
                .collect();
            normalized(c)
        }
        ("cubic", true) => {
            let s = scale.min(1.0);
            let start = (-2.0 / s).floor() as i64 + 1;
            let c = (start..2 - start)
                .map(|i| cubic(s * (i as f64 - ratio)))
                .collect();
            normalized(c)
        }
        (mode, _) => return Err(format!("mode {mode} with antialias {}", m.antialias)),
    })
}

/// Output index `o` of an axis of `len` inputs resized to `out` at `scale`: its source
/// coordinate, or None outside a tf_crop_and_resize region (`roi` its start and end).
fn source(
    m: &Modes,
    o: usize,
    (len, out, scale): (usize, usize, f64),
    roi: (f64, f64),
) -> Result<Option<f64>, String> {
    let (x, n) = (o as f64, len as f64);
    let width = scale * n;
    Ok(Some(match m.transform.as_str() {
        "align_corners" if width == 1.0 => 0.0,
        "align_corners" => x * (n - 1.0) / (width - 1.0),
        "asymmetric" => x / scale,
        "tf_crop_and_resize" => {
            let at = if width == 1.0 {
                (roi.1 - roi.0) * (n - 1.0) / 2.0
            } else {
                x * (roi.1 - roi.0) * (n - 1.0) / (width - 1.0)
            } + roi.0 * (n - 1.0);
            if at < 0.0 || at > n - 1.0 {
                return Ok(None);
            }
            at
        }
        "pytorch_half_pixel" if width == 1.0 => -0.5,
        "pytorch_half_pixel" | "half_pixel" => (x + 0.5) / scale - 0.5,
        "half_pixel_symmetric" => {
            let offset = n / 2.0 * (1.0 - out as f64 / width);
            offset + (x + 0.5) / scale - 0.5
        }
        other => return Err(format!("coordinate_transformation_mode {other}")),
    }))
}

/// The taps of one axis.
fn axis_taps(
    m: &Modes,
    (len, out, scale): (usize, usize, f64),
    roi: (f64, f64),
) -> Result<Taps, String> {
    (0..out)
        .map(|o| {
            let Some(at) = source(m, o, (len, out, scale), roi)? else {
                return Ok(None);
            };
            // The neighbour on the left: ratio in (0, 1], an integer coordinate reading
            // the index left of it with ratio 1.
            let left = if at.fract() == 0.0 {
                at - 1.0
            } else {
                at.floor()
            };
            let mut c = coeffs(m, at - left, scale)?;
            let half = (c.len() / 2) as i64;
            let first = left as i64 - half + 1;
            if m.exclude_outside {
                for (k, v) in c.iter_mut().enumerate() {
                    let i = first + k as i64;
                    if i < 0 || i >= len as i64 {
                        *v = 0.0;
                    }
                }
                let s: f64 = c.iter().sum();
                c.iter_mut().for_each(|v| *v /= s);
            }
            Ok(Some(
                c.into_iter()
                    .enumerate()
                    .map(|(k, v)| ((first + k as i64).clamp(0, len as i64 - 1) as usize, v))
                    .collect(),
            ))
        })
        .collect()
}

/// Resize (X, roi, scales, sizes) of `x` in any mode, with `axes` and
/// `keep_aspect_ratio_policy`, or Upsample (X, scales) in nearest mode.
pub fn resize(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let m = modes(n)?;
    let rank = x.dims.len();
    if x.dims.contains(&0) {
        return Err(format!("a resize of an empty tensor (dims {:?})", x.dims));
    }
    let given = |i: usize| {
        ins.get(i)
            .and_then(|v| v.as_ref())
            .filter(|v| !v.data.is_empty())
    };
    let axes: Vec<usize> = match n.attr_ints("axes") {
        Some(a) => a
            .iter()
            .map(|&v| super::shape::axis_of(v, rank))
            .collect::<Result<_, _>>()?,
        None => (0..rank).collect(),
    };
    let k = axes.len();
    let mut scales = vec![1.0; rank];
    let mut out = x.dims.clone();
    let (scales_in, sizes_in) = match n.op_type.as_str() {
        "Upsample" => (Some(super::need(ins, 1)?), None),
        _ => (given(2), given(3)),
    };
    if let Some(s) = scales_in {
        if s.data.len() != k {
            return Err(format!("{} scales for {k} axes", s.data.len()));
        }
        for (&a, &v) in axes.iter().zip(&s.data) {
            scales[a] = v;
            out[a] = (v * x.dims[a] as f64) as usize;
        }
    } else if let Some(z) = sizes_in {
        if z.data.len() != k {
            return Err(format!("{} sizes for {k} axes", z.data.len()));
        }
        for (&a, &v) in axes.iter().zip(&z.data) {
            out[a] = v as usize;
            scales[a] = v / x.dims[a] as f64;
        }
        let policy = match n.attr("keep_aspect_ratio_policy") {
            Some(AttrValue::Text(t)) => t.clone(),
            _ => "stretch".into(),
        };
        let pick = |f: fn(f64, f64) -> f64| axes.iter().map(|&a| scales[a]).reduce(f);
        let keep = match policy.as_str() {
            "stretch" => None,
            "not_larger" => pick(f64::min),
            "not_smaller" => pick(f64::max),
            other => return Err(format!("keep_aspect_ratio_policy {other}")),
        };
        if let Some(s) = keep {
            for &a in &axes {
                scales[a] = s;
                out[a] = (s * x.dims[a] as f64 + 0.5) as usize;
            }
        }
    } else {
        return Err("neither scales nor sizes".into());
    }
    // (An antialiased downscale by 1/s reads about 2s or 4s taps per output along the axis.)
    let least = if m.antialias { 1.0 / 1024.0 } else { 0.0 };
    if scales
        .iter()
        .any(|&s| s.is_nan() || s <= least || !s.is_finite())
    {
        return Err(format!("scales {scales:?}"));
    }
    if out.contains(&0) {
        return Err(format!("an output of shape {out:?}"));
    }
    let size = super::elements(&out)?;
    // The region of interest, [starts, ends] over the axes (tf_crop_and_resize only).
    let mut roi = vec![(0.0, 1.0); rank];
    if m.transform == "tf_crop_and_resize" {
        let r = given(1).ok_or("tf_crop_and_resize without a roi")?;
        if r.data.len() != 2 * k {
            return Err(format!("a roi of {} values for {k} axes", r.data.len()));
        }
        for (i, &a) in axes.iter().enumerate() {
            roi[a] = (r.data[i], r.data[k + i]);
        }
    }
    let taps: Vec<Taps> = (0..rank)
        .map(|a| axis_taps(&m, (x.dims[a], out[a], scales[a]), roi[a]))
        .collect::<Result<_, _>>()?;
    // Every output reads the product of its axes' taps.
    let reads = taps.iter().try_fold(size, |w, t| {
        let most = t.iter().flatten().map(Vec::len).max().unwrap_or(1);
        w.checked_mul(most)
    });
    if reads.is_none_or(|r| r > 1 << 30) {
        return Err(format!(
            "more than 2^30 reads for an output of shape {out:?}"
        ));
    }
    let extrapolation = f64::from(n.attr_float("extrapolation_value", 0.0));
    let strides: Vec<usize> = (0..rank)
        .map(|a| x.dims[a + 1..].iter().product())
        .collect();
    let total: usize = out.iter().product();
    let mut data = Vec::with_capacity(total);
    let mut idx = vec![0usize; rank];
    for _ in 0..total {
        let v = value(x, &taps, &strides, &idx, (0, 0), extrapolation);
        data.push(match x.elem {
            dtype::FLOAT => f64::from(v as f32),
            dtype::DOUBLE => v,
            _ => v.trunc(),
        });
        super::shape::next_index(&mut idx, &out);
    }
    Ok(HostVal {
        dims: out,
        data,
        elem: x.elem,
    })
}

/// Output `idx` from axis `axis` on, within the input block at `base`: the weighted sum
/// over this axis's taps of the inner axes' values (ONNX's reference interpolates the last
/// axes first), or the extrapolation value where this axis has none.
fn value(
    x: &HostVal,
    taps: &[Taps],
    strides: &[usize],
    idx: &[usize],
    (axis, base): (usize, usize),
    ev: f64,
) -> f64 {
    if axis == taps.len() {
        return x.data[base];
    }
    match &taps[axis][idx[axis]] {
        None => ev,
        Some(t) => t
            .iter()
            .map(|&(i, c)| {
                c * value(
                    x,
                    taps,
                    strides,
                    idx,
                    (axis + 1, base + i * strides[axis]),
                    ev,
                )
            })
            .sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modes_of(mode: &str, transform: &str) -> Modes {
        Modes {
            mode: mode.into(),
            transform: transform.into(),
            nearest: "round_prefer_floor".into(),
            cubic_a: -0.75,
            antialias: false,
            exclude_outside: false,
        }
    }

    /// Linear by 2 from 2 (half_pixel): sources -0.25, 0.25, 0.75, 1.25 -> index -1 and 0
    /// (clamped to 0, 0) with 0.75 / 0.25 ... : values of [10, 20] are 10, 12.5, 17.5, 20.
    /// Cubic at ratio 0.5 with A = -0.75: (-0.09375, 0.59375, 0.59375, -0.09375), summing
    /// to 1.
    #[test]
    fn taps_by_hand() {
        let m = modes_of("linear", "half_pixel");
        let t = axis_taps(&m, (2, 4, 2.0), (0.0, 1.0)).unwrap();
        let x = [10.0, 20.0];
        let got: Vec<f64> = t
            .iter()
            .map(|o| o.as_ref().unwrap().iter().map(|&(i, c)| c * x[i]).sum())
            .collect();
        assert_eq!(got, vec![10.0, 12.5, 17.5, 20.0]);
        let c = coeffs(&modes_of("cubic", "half_pixel"), 0.5, 1.0).unwrap();
        assert_eq!(c, vec![-0.09375, 0.59375, 0.59375, -0.09375]);
        // tf_crop_and_resize leaves the input: the extrapolation value.
        let m = modes_of("linear", "tf_crop_and_resize");
        let t = axis_taps(&m, (4, 3, 0.75), (0.5, 1.5)).unwrap();
        assert!(t[2].is_none() && t[0].is_some());
    }
}
