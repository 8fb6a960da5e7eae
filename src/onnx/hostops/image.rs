//! Image-geometry operators on the host, as ONNX's reference computes them: Col2Im,
//! AffineGrid and DeformConv.

use super::shape::strides;
use super::{elements, need, HostVal};
use crate::onnx::proto::Node;

/// One of these operators; None for others.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    Some(match n.op_type.as_str() {
        "Col2Im" => col2im(n, x, ins),
        "AffineGrid" => affine_grid(n, x, ins),
        "DeformConv" => deform_conv(n, x, ins),
        _ => return None,
    })
}

/// The values of a 1-D integer input as sizes (each at least `min`).
fn sizes(v: &HostVal, what: &str, min: i64) -> Result<Vec<usize>, String> {
    v.data
        .iter()
        .map(|&d| {
            usize::try_from(d as i64)
                .ok()
                .filter(|&u| u as i64 >= min)
                .ok_or(format!("{what} {:?}: each at least {min}", v.data))
        })
        .collect()
}

/// `k` as a multi-index of `dims` (row-major).
fn unravel(mut k: usize, dims: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; dims.len()];
    for a in (0..dims.len()).rev() {
        idx[a] = k % dims[a];
        k /= dims[a];
    }
    idx
}

/// Col2Im: the sliding blocks of `[N, C x prod(block), L]` (one column per block position)
/// summed back into an image `[N, C, image_shape...]`, with the window's strides, pads and
/// dilations (N-D).
fn col2im(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let image = sizes(need(ins, 1)?, "an image shape", 1)?;
    let block = sizes(need(ins, 2)?, "a block shape", 1)?;
    let d = image.len();
    let strides_ = n.attr_ints_or("strides", &vec![1; d]);
    let dil = n.attr_ints_or("dilations", &vec![1; d]);
    let pads = n.attr_ints_or("pads", &vec![0; 2 * d]);
    let &[batch, rows, len] = &x.dims[..] else {
        return Err(format!(
            "an input of shape {:?}, not [N, C x block, L]",
            x.dims
        ));
    };
    if block.len() != d || strides_.len() != d || dil.len() != d || pads.len() != 2 * d {
        return Err(format!(
            "image shape {image:?}, block shape {block:?}, strides {strides_:?}, dilations {dil:?}, pads {pads:?}: of different ranks"
        ));
    }
    let k: usize = block.iter().product();
    if rows % k != 0 {
        return Err(format!("{rows} rows for blocks of {k} elements"));
    }
    let mut blocks = vec![];
    for a in 0..d {
        let span = dil[a] * (block[a] as i64 - 1) + 1;
        let b = (image[a] as i64 + pads[a] + pads[d + a] - span).div_euclid(strides_[a].max(1)) + 1;
        blocks.push(usize::try_from(b).ok().filter(|&b| b >= 1).ok_or(format!(
            "no block fits axis {a} of the image ({} with pads {} and {})",
            image[a],
            pads[a],
            pads[d + a]
        ))?);
    }
    if blocks.iter().product::<usize>() != len {
        return Err(format!(
            "{len} columns, and the image holds {blocks:?} block positions"
        ));
    }
    let c = rows / k;
    let mut dims = vec![batch, c];
    dims.extend(&image);
    let mut out = vec![0.0; elements(&dims)?];
    let st = strides(&image);
    let plane: usize = image.iter().product();
    for (r, col) in x.data.chunks(len.max(1)).enumerate() {
        let (nc, kk) = (r / k, r % k);
        let koff = unravel(kk, &block);
        for (p, &v) in col.iter().enumerate() {
            let pos = unravel(p, &blocks);
            let at: Option<usize> = (0..d)
                .map(|a| {
                    let i = pos[a] as i64 * strides_[a] - pads[a] + koff[a] as i64 * dil[a];
                    usize::try_from(i)
                        .ok()
                        .filter(|&i| i < image[a])
                        .map(|i| i * st[a])
                })
                .sum();
            if let Some(at) = at {
                out[nc * plane + at] += v;
            }
        }
    }
    Ok(HostVal::float_like(x.elem, dims, out))
}

/// AffineGrid: for `theta` `[N, 2, 3]` (or `[N, 3, 4]`) and `size` `[N, C, H, W]` (or
/// `[N, C, D, H, W]`), each output point `theta (x, y[, z], 1)` `[N, H, W, 2]` (or
/// `[N, D, H, W, 3]`), where x runs over the width, y the height and z the depth from -1
/// to 1: the pixels' centres, or with align_corners their edges' centres. In double
/// precision, rounded to float32.
fn affine_grid(n: &Node, theta: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let size = sizes(need(ins, 1)?, "a size", 1)?;
    let spatial = &size.get(2..).unwrap_or_default();
    let d = spatial.len();
    if !(d == 2 || d == 3) || theta.dims != [size[0], d, d + 1] {
        return Err(format!(
            "theta {:?} and size {size:?}: [N, 2, 3] with [N, C, H, W], or [N, 3, 4] with [N, C, D, H, W]",
            theta.dims
        ));
    }
    let align = n.attr_int("align_corners", 0) != 0;
    // numpy's arange: start + i * step.
    let coord = |i: usize, s: usize| {
        if align {
            if s == 1 {
                -1.0
            } else {
                -1.0 + i as f64 * (2.0 / (s as f64 - 1.0))
            }
        } else {
            let step = 2.0 / s as f64;
            (-1.0 + step / 2.0) + i as f64 * step
        }
    };
    let points: usize = spatial.iter().product();
    let mut data = Vec::with_capacity(size[0] * points * d);
    for b in 0..size[0] {
        let t = &theta.data[b * d * (d + 1)..][..d * (d + 1)];
        for p in 0..points {
            let idx = unravel(p, spatial);
            // (x, y[, z]): the last spatial axis first.
            let mut h: Vec<f64> = (0..d)
                .map(|a| coord(idx[d - 1 - a], spatial[d - 1 - a]))
                .collect();
            h.push(1.0);
            for r in 0..d {
                data.push((0..=d).map(|c| t[r * (d + 1) + c] * h[c]).sum());
            }
        }
    }
    let mut dims = vec![size[0]];
    dims.extend(spatial.iter());
    dims.push(d);
    Ok(HostVal::float(dims, data))
}

/// Channel plane `plane` (`h` x `w`) sampled bilinearly at (y, x) in pixel coordinates,
/// pixels outside the plane counting as zero.
fn sample(plane: &[f64], [h, w]: [usize; 2], y: f64, x: f64) -> f64 {
    let (y0, x0) = (y.floor(), x.floor());
    let (ly, lx) = (y - y0, x - x0);
    let at = |yy: f64, xx: f64| {
        if yy < 0.0 || xx < 0.0 || yy >= h as f64 || xx >= w as f64 {
            0.0
        } else {
            plane[yy as usize * w + xx as usize]
        }
    };
    at(y0, x0) * (1.0 - ly) * (1.0 - lx)
        + at(y0, x0 + 1.0) * (1.0 - ly) * lx
        + at(y0 + 1.0, x0) * ly * (1.0 - lx)
        + at(y0 + 1.0, x0 + 1.0) * ly * lx
}

/// DeformConv (2-D): a convolution whose every kernel tap of every output position reads
/// the input at its regular place moved by that tap's offset (`offset`, `[N, offset_group x
/// kh x kw x 2, oh, ow]`, (y, x) pairs), sampled bilinearly (zeros outside), times the
/// tap's `mask` (1 when absent); groups, offset groups, strides, pads, dilations, a bias.
/// In double precision, rounded once.
fn deform_conv(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let (w, off) = (need(ins, 1)?, need(ins, 2)?);
    let (bias, mask) = (
        ins.get(3).and_then(Option::as_ref),
        ins.get(4).and_then(Option::as_ref),
    );
    let (&[nb, c, ih, iw], &[oc, icg, kh, kw], &[_, offc, oh, ow]) =
        (&x.dims[..], &w.dims[..], &off.dims[..])
    else {
        return Err(format!(
            "input {:?}, weight {:?}, offset {:?}: DeformConv runs 2-D on the host",
            x.dims, w.dims, off.dims
        ));
    };
    let group = n.attr_int("group", 1).max(1) as usize;
    let og = n.attr_int("offset_group", 1).max(1) as usize;
    let get = |k: &str, d: &[i64]| n.attr_ints_or(k, d);
    let (s, p, d) = (
        get("strides", &[1, 1]),
        get("pads", &[0; 4]),
        get("dilations", &[1, 1]),
    );
    let taps = kh * kw;
    let fits = icg * group == c
        && oc % group == 0
        && c % og == 0
        && offc == og * taps * 2
        && off.dims[0] == nb
        && s.len() == 2
        && p.len() == 4
        && d.len() == 2
        && bias.is_none_or(|b| b.data.len() == oc)
        && mask.is_none_or(|m| m.dims == [nb, og * taps, oh, ow]);
    if !fits {
        return Err(format!(
            "input {:?}, weight {:?}, offset {:?}, group {group}, offset_group {og}: they do not match",
            x.dims, w.dims, off.dims
        ));
    }
    let size = |i: usize, k: usize, a: usize| {
        (i as i64 + p[a] + p[a + 2] - ((k as i64 - 1) * d[a] + 1)).div_euclid(s[a].max(1)) + 1
    };
    if size(ih, kh, 0) != oh as i64 || size(iw, kw, 1) != ow as i64 {
        return Err(format!(
            "an offset of shape {:?} for an output of {} x {}",
            off.dims,
            size(ih, kh, 0),
            size(iw, kw, 1)
        ));
    }
    let (ocg, icog) = (oc / group, c / og);
    let mut out = vec![0.0; nb * oc * oh * ow];
    for b in 0..nb {
        for o in 0..oc {
            for ci in 0..icg {
                let ch = (o / ocg) * icg + ci;
                let plane = &x.data[(b * c + ch) * ih * iw..][..ih * iw];
                let g = ch / icog;
                for i in 0..oh {
                    for j in 0..ow {
                        let mut acc = 0.0;
                        for t in 0..taps {
                            let (a, e) = (t / kw, t % kw);
                            let oy = off.data[((b * offc + (g * taps + t) * 2) * oh + i) * ow + j];
                            let ox =
                                off.data[((b * offc + (g * taps + t) * 2 + 1) * oh + i) * ow + j];
                            let y = (i as i64 * s[0] - p[0] + a as i64 * d[0]) as f64 + oy;
                            let xx = (j as i64 * s[1] - p[1] + e as i64 * d[1]) as f64 + ox;
                            let m = mask.map_or(1.0, |m| {
                                m.data[((b * og * taps + g * taps + t) * oh + i) * ow + j]
                            });
                            acc += sample(plane, [ih, iw], y, xx)
                                * w.data[(o * icg + ci) * taps + t]
                                * m;
                        }
                        out[((b * oc + o) * oh + i) * ow + j] += acc;
                    }
                }
            }
        }
    }
    if let Some(bias) = bias {
        for (k, v) in out.iter_mut().enumerate() {
            *v += bias.data[k / (oh * ow) % oc];
        }
    }
    Ok(HostVal::float(vec![nb, oc, oh, ow], out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::proto::dtype;

    fn ints(v: &[f64]) -> Option<HostVal> {
        Some(HostVal {
            dims: vec![v.len()],
            data: v.to_vec(),
            elem: dtype::INT64,
        })
    }

    /// By hand: a 1 x 3 image from 2 x 1 blocks (1-D in effect: blocks of 2 along the
    /// width, stride 1) at two positions, columns [1, 2] and [10, 20]: pixel 0 gets 1,
    /// pixel 1 gets 2 + 10, pixel 2 gets 20. The identity theta maps a 2 x 2 grid's
    /// centres to (-1/2, -1/2), (1/2, -1/2), (-1/2, 1/2), (1/2, 1/2); with align_corners,
    /// to the corners.
    #[test]
    fn col2im_and_affine_grid_by_hand() {
        let x = HostVal::float(vec![1, 2, 2], vec![1.0, 10.0, 2.0, 20.0]);
        let y = col2im(
            &Node::default(),
            &x,
            &[None, ints(&[1.0, 3.0]), ints(&[1.0, 2.0])],
        )
        .unwrap();
        assert_eq!((y.dims, y.data), (vec![1, 1, 1, 3], vec![1.0, 12.0, 20.0]));
        let theta = HostVal::float(vec![1, 2, 3], vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        let g = affine_grid(
            &Node::default(),
            &theta,
            &[None, ints(&[1.0, 1.0, 2.0, 2.0])],
        )
        .unwrap();
        assert_eq!(g.dims, vec![1, 2, 2, 2]);
        assert_eq!(g.data, vec![-0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5]);
        let corners = Node {
            attributes: vec![crate::onnx::proto::Attribute {
                name: "align_corners".into(),
                value: crate::onnx::proto::AttrValue::Int(1),
            }],
            ..Node::default()
        };
        let g = affine_grid(&corners, &theta, &[None, ints(&[1.0, 1.0, 2.0, 2.0])]).unwrap();
        assert_eq!(g.data, vec![-1.0, -1.0, 1.0, -1.0, -1.0, 1.0, 1.0, 1.0]);
    }

    /// By hand, [[1, 2], [3, 4]] by a 1 x 1 kernel of 1: no offset gives the input back;
    /// an offset of (1/2, 1/2) samples between pixels (zeros beyond): 10/4, 6/4, 7/4, 4/4;
    /// a mask of 2 doubles that.
    #[test]
    fn deform_conv_by_hand() {
        let x = HostVal::float(vec![1, 1, 2, 2], vec![1.0, 2.0, 3.0, 4.0]);
        let w = Some(HostVal::float(vec![1, 1, 1, 1], vec![1.0]));
        let off = |v: f64| Some(HostVal::float(vec![1, 2, 2, 2], vec![v; 8]));
        let n = Node::default();
        let y = deform_conv(&n, &x, &[None, w.clone(), off(0.0)]).unwrap();
        assert_eq!(y.data, x.data);
        let y = deform_conv(&n, &x, &[None, w.clone(), off(0.5)]).unwrap();
        assert_eq!(y.data, vec![2.5, 1.5, 1.75, 1.0]);
        let mask = Some(HostVal::float(vec![1, 1, 2, 2], vec![2.0; 4]));
        let y = deform_conv(&n, &x, &[None, w, off(0.5), None, mask]).unwrap();
        assert_eq!(y.data, vec![5.0, 3.0, 3.5, 2.0]);
    }
}
