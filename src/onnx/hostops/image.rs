//! Image-geometry operators on the host, as ONNX's reference computes them: Col2Im and
//! AffineGrid.

use super::shape::strides;
use super::{elements, need, HostVal};
use crate::onnx::proto::{dtype, Node};

/// One of these operators; None for others.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    Some(match n.op_type.as_str() {
        "Col2Im" => col2im(n, x, ins),
        "AffineGrid" => affine_grid(n, x, ins),
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
    Ok(match x.elem {
        dtype::DOUBLE => HostVal {
            dims,
            data: out,
            elem: dtype::DOUBLE,
        },
        _ => HostVal::float(dims, out),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
