//! Detection post-processing on the host: NonMaxSuppression, as ONNX's reference computes
//! it (in float32).

use super::{need, HostVal};
use crate::onnx::proto::{dtype, Node};

/// One of these operators; None for others.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    Some(match n.op_type.as_str() {
        "NonMaxSuppression" => non_max_suppression(n, x, ins),
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
}
