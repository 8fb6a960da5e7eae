//! Detection operators on the host: NonMaxSuppression and RoiAlign, as ONNX's reference
//! computes them (in float32).

use super::{need, HostVal};
use crate::onnx::proto::{dtype, AttrValue, Node};

/// One of these operators; None for others.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    Some(match n.op_type.as_str() {
        "NonMaxSuppression" => non_max_suppression(n, x, ins),
        "RoiAlign" => roi_align(n, x, ins),
        _ => return None,
    })
}

/// A box's extent on its two axes, each (min, max), from corners in either order
/// (`[y1, x1, y2, x2]`) or, with `center_point_box`, from `[x_center, y_center, width,
/// height]`.
fn extent(b: &[f32], center: bool) -> [(f32, f32); 2] {
    let order = |a: f32, b: f32| if a >= b { (b, a) } else { (a, b) };
    if center {
        let (hw, hh) = (b[2] / 2.0, b[3] / 2.0);
        [(b[0] - hw, b[0] + hw), (b[1] - hh, b[1] + hh)]
    } else {
        [order(b[1], b[3]), order(b[0], b[2])]
    }
}

/// Whether box `a` suppresses box `b`: their intersection over union is above `threshold`
/// (boxes that do not overlap, or of no area, never suppress).
fn suppresses(a: &[f32], b: &[f32], center: bool, threshold: f32) -> bool {
    let (ea, eb) = (extent(a, center), extent(b, center));
    let mut inter = 1.0f32;
    for k in 0..2 {
        let (lo, hi) = (ea[k].0.max(eb[k].0), ea[k].1.min(eb[k].1));
        if hi <= lo {
            return false;
        }
        inter *= hi - lo;
    }
    let area = |e: [(f32, f32); 2]| (e[0].1 - e[0].0) * (e[1].1 - e[1].0);
    let (aa, ab) = (area(ea), area(eb));
    let union = aa + ab - inter;
    if inter <= 0.0 || aa <= 0.0 || ab <= 0.0 || union <= 0.0 {
        return false;
    }
    inter / union > threshold
}

/// NonMaxSuppression: for each batch and class, the boxes by score (highest first, the
/// lower index first among equal scores; only scores above `score_threshold` when it is
/// given), each kept unless a kept one suppresses it, up to `max_output_boxes_per_class`
/// (0 when absent). The output lists `[batch, class, box]` of each kept box, int64.
fn non_max_suppression(
    n: &Node,
    boxes: &HostVal,
    ins: &[Option<HostVal>],
) -> Result<HostVal, String> {
    let scores = need(ins, 1)?;
    let [batches, count, 4] = boxes.dims[..] else {
        return Err(format!(
            "boxes of shape {:?}, not [batches, boxes, 4]",
            boxes.dims
        ));
    };
    let [sb, classes, sc] = scores.dims[..] else {
        return Err(format!(
            "scores of shape {:?}, not [batches, classes, boxes]",
            scores.dims
        ));
    };
    if (sb, sc) != (batches, count) {
        return Err(format!(
            "scores of shape {:?} for boxes of shape {:?}",
            scores.dims, boxes.dims
        ));
    }
    let scalar = |i: usize| {
        ins.get(i)
            .and_then(|v| v.as_ref())
            .and_then(|v| v.data.first().copied())
    };
    let most = scalar(2).unwrap_or(0.0).max(0.0) as usize;
    let iou = scalar(3).unwrap_or(0.0) as f32;
    let floor = scalar(4).map(|v| v as f32);
    let center = n.attr_int("center_point_box", 0) != 0;
    let b: Vec<f32> = boxes.data.iter().map(|&v| v as f32).collect();
    let mut out = vec![];
    for batch in 0..batches {
        let boxes = &b[batch * count * 4..(batch + 1) * count * 4];
        let at = |k: usize| &boxes[k * 4..k * 4 + 4];
        for class in 0..classes {
            let s = &scores.data[(batch * classes + class) * count..][..count];
            let score = |k: usize| s[k] as f32;
            let mut order: Vec<usize> = (0..count)
                .filter(|&k| floor.is_none_or(|f| score(k) > f))
                .collect();
            // (A stable sort: equal scores keep the lower index first.)
            order.sort_by(|&i, &j| score(j).total_cmp(&score(i)));
            let mut kept: Vec<usize> = vec![];
            for k in order {
                if kept.len() >= most {
                    break;
                }
                if !kept.iter().any(|&j| suppresses(at(k), at(j), center, iou)) {
                    kept.push(k);
                    out.extend([batch as f64, class as f64, k as f64]);
                }
            }
        }
    }
    Ok(HostVal {
        dims: vec![out.len() / 3, 3],
        data: out,
        elem: dtype::INT64,
    })
}

/// The sample points of one region's bins: for each, the four neighbouring pixels' flat
/// positions and bilinear weights (all zero outside the feature map), in float32.
struct Samples {
    at: Vec<([usize; 4], [f32; 4])>,
    /// Samples per bin.
    per_bin: usize,
}

/// The sample points of region `roi` (`[x1, y1, x2, y2]`) on an `h` x `w` map, `out`
/// bins high and wide, as ONNX's reference places them; an error when there would be more
/// than the host's tensor limit.
fn samples(n: &Node, roi: &[f32], [h, w]: [usize; 2], out: [usize; 2]) -> Result<Samples, String> {
    let scale = n.attr_float("spatial_scale", 1.0);
    let half = !matches!(n.attr("coordinate_transformation_mode"),
        Some(AttrValue::Text(m)) if m == "output_half_pixel");
    let offset = if half { 0.5 } else { 0.0 };
    let [x1, y1, x2, y2] = [0, 1, 2, 3].map(|k| roi[k] * scale - offset);
    let (mut rw, mut rh) = (x2 - x1, y2 - y1);
    if !half {
        rw = rw.max(1.0);
        rh = rh.max(1.0);
    }
    let (bh, bw) = (rh / out[0] as f32, rw / out[1] as f32);
    let ratio = n.attr_int("sampling_ratio", 0);
    let grid = |r: f32, o: usize| {
        if ratio > 0 {
            ratio as usize
        } else {
            (r / o as f32).ceil().max(0.0) as usize
        }
    };
    let (gh, gw) = (grid(rh, out[0]), grid(rw, out[1]));
    // (Each factor on its own too: a zero bin count must not hide an overflowing grid.)
    let fits =
        super::elements(&[gh, gw]).is_ok() && super::elements(&[out[0], out[1], gh, gw]).is_ok();
    fits.then_some(()).ok_or_else(|| {
        format!(
            "{gh} x {gw} samples in each of {} x {} bins: too many",
            out[0], out[1]
        )
    })?;
    let mut at = vec![];
    for ph in 0..out[0] {
        for pw in 0..out[1] {
            for iy in 0..gh {
                let y = y1 + ph as f32 * bh + (iy as f32 + 0.5) * bh / gh as f32;
                for ix in 0..gw {
                    let x = x1 + pw as f32 * bw + (ix as f32 + 0.5) * bw / gw as f32;
                    at.push(bilinear(y, x, h, w));
                }
            }
        }
    }
    Ok(Samples {
        at,
        per_bin: gh * gw,
    })
}

/// The four neighbours of point (y, x) and their weights (zero beyond the map's edge).
fn bilinear(y: f32, x: f32, h: usize, w: usize) -> ([usize; 4], [f32; 4]) {
    if y < -1.0 || y > h as f32 || x < -1.0 || x > w as f32 {
        return ([0; 4], [0.0; 4]);
    }
    let near = |v: f32, size: usize| {
        let v = v.max(0.0);
        let low = v as usize;
        if low >= size - 1 {
            (size - 1, size - 1, (size - 1) as f32)
        } else {
            (low, low + 1, v)
        }
    };
    let ((yl, yh, y), (xl, xh, x)) = (near(y, h), near(x, w));
    let (ly, lx) = (y - yl as f32, x - xl as f32);
    let (hy, hx) = (1.0 - ly, 1.0 - lx);
    (
        [yl * w + xl, yl * w + xh, yh * w + xl, yh * w + xh],
        [hy * hx, hy * lx, ly * hx, ly * lx],
    )
}

/// RoiAlign: for each region of interest (`[x1, y1, x2, y2]` in `rois`, on batch element
/// `batch_indices[r]`), an `output_height` x `output_width` grid of bins, each the average
/// (or, `mode` max, the largest weighted neighbour) of its bilinear samples.
fn roi_align(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let (rois, batch) = (need(ins, 1)?, need(ins, 2)?);
    let &[nb, c, h, w] = &x.dims[..] else {
        return Err(format!("an input of shape {:?}, not [N, C, H, W]", x.dims));
    };
    let r = batch.data.len();
    if rois.dims != [r, 4] || h == 0 || w == 0 {
        return Err(format!(
            "rois {:?} for {r} batch indices on a map of {h} x {w}",
            rois.dims
        ));
    }
    let out = [
        n.attr_int("output_height", 1),
        n.attr_int("output_width", 1),
    ]
    .map(|v| usize::try_from(v).unwrap_or(0));
    if out.contains(&0) {
        return Err(format!(
            "an output of {} x {} bins: output_height and output_width must be at least 1",
            out[0], out[1]
        ));
    }
    let max = matches!(n.attr("mode"), Some(AttrValue::Text(m)) if m == "max");
    let mut y = Vec::with_capacity(super::elements(&[r, c, out[0], out[1]])?);
    for k in 0..r {
        let b = usize::try_from(batch.data[k] as i64)
            .ok()
            .filter(|&b| b < nb)
            .ok_or(format!("batch index {} of {nb}", batch.data[k]))?;
        let roi: Vec<f32> = rois.data[k * 4..k * 4 + 4]
            .iter()
            .map(|&v| v as f32)
            .collect();
        let s = samples(n, &roi, [h, w], out)?;
        let count = s.per_bin.max(1) as f32;
        for ch in 0..c {
            let map = &x.data[(b * c + ch) * h * w..][..h * w];
            for bin in s.at.chunks(s.per_bin.max(1)).take(out[0] * out[1]) {
                let vals = bin
                    .iter()
                    .map(|(p, wt)| (0..4).map(|j| wt[j] * map[p[j]] as f32));
                let v = if max {
                    vals.flat_map(|v| v.reduce(f32::max))
                        .reduce(f32::max)
                        .unwrap_or(0.0)
                } else {
                    vals.map(|v| v.sum::<f32>()).sum::<f32>() / count
                };
                y.push(f64::from(v));
            }
            if s.per_bin == 0 {
                y.extend(std::iter::repeat_n(0.0, out[0] * out[1]));
            }
        }
    }
    Ok(HostVal::float(vec![r, c, out[0], out[1]], y))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: boxes [0, 0, 1, 1], [0, 0.1, 1, 1.1] (IoU 0.9 / 1.1 = 0.82 with the first)
    /// and [0, 2, 1, 3] (apart), scores 0.9, 0.8, 0.7. With IoU threshold 0.5 the second
    /// is suppressed: boxes 0 and 2. With threshold 0.9 all three stay; with at most 2 per
    /// class, 0 and 1; with a score threshold of 0.75, only 0 (1 is suppressed).
    #[test]
    fn suppression_by_hand() {
        let boxes = HostVal {
            dims: vec![1, 3, 4],
            data: vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.1, 1.0, 1.1, 0.0, 2.0, 1.0, 3.0],
            elem: dtype::FLOAT,
        };
        let v = |d: Vec<f64>| {
            Some(HostVal {
                dims: vec![d.len()],
                data: d,
                elem: dtype::FLOAT,
            })
        };
        let scores = Some(HostVal {
            dims: vec![1, 1, 3],
            ..v(vec![0.9, 0.8, 0.7]).unwrap()
        });
        let run = |most: f64, iou: f64, floor: Option<f64>| {
            let ins = [
                None,
                scores.clone(),
                v(vec![most]),
                v(vec![iou]),
                floor.and_then(|f| v(vec![f])),
            ];
            let r = non_max_suppression(&Node::default(), &boxes, &ins).unwrap();
            assert_eq!(r.dims[1], 3);
            r.data.chunks(3).map(|c| c[2] as usize).collect::<Vec<_>>()
        };
        assert_eq!(run(10.0, 0.5, None), vec![0, 2]);
        assert_eq!(run(10.0, 0.9, None), vec![0, 1, 2]);
        assert_eq!(run(2.0, 0.9, None), vec![0, 1]);
        assert_eq!(run(10.0, 0.5, Some(0.75)), vec![0]);
        assert_eq!(run(0.0, 0.5, None), Vec::<usize>::new());
    }

    /// By hand, the map [[1, 2], [3, 4]] and the region [0, 0, 1, 1], one bin, one sample:
    /// without the half-pixel offset the sample is at (0.5, 0.5), each pixel weighted 1/4:
    /// 2.5; in max mode the largest weighted pixel, 4/4 = 1; with the offset (the default)
    /// the sample is at (0, 0): 1.
    #[test]
    fn roi_align_by_hand() {
        let attr = |name: &str, value: AttrValue| crate::onnx::proto::Attribute {
            name: name.into(),
            value,
        };
        let x = HostVal::float(vec![1, 1, 2, 2], vec![1.0, 2.0, 3.0, 4.0]);
        let rois = Some(HostVal::float(vec![1, 4], vec![0.0, 0.0, 1.0, 1.0]));
        let batch = Some(HostVal {
            dims: vec![1],
            data: vec![0.0],
            elem: dtype::INT64,
        });
        let run = |attrs: Vec<crate::onnx::proto::Attribute>| {
            let mut attributes = vec![attr("sampling_ratio", AttrValue::Int(1))];
            attributes.extend(attrs);
            let n = Node {
                attributes,
                ..Node::default()
            };
            roi_align(&n, &x, &[None, rois.clone(), batch.clone()])
                .unwrap()
                .data
        };
        let plain = || {
            attr(
                "coordinate_transformation_mode",
                AttrValue::Text("output_half_pixel".into()),
            )
        };
        assert_eq!(run(vec![plain()]), vec![2.5]);
        assert_eq!(
            run(vec![plain(), attr("mode", AttrValue::Text("max".into()))]),
            vec![1.0]
        );
        assert_eq!(run(vec![]), vec![1.0]);
        // Too large an output, or too many samples a bin, is refused, not allocated.
        let huge = |name: &str, v: i64| {
            let n = Node::new("RoiAlign", vec![(name, AttrValue::Int(v))]);
            roi_align(&n, &x, &[None, rois.clone(), batch.clone()]).unwrap_err()
        };
        assert!(huge("output_width", 1 << 62).contains("2^27"));
        assert!(huge("sampling_ratio", 1 << 20).contains("too many"));
        assert!(huge("output_height", 0).contains("at least 1"));
    }
}
