//! Nearest resizing: the rule by which the importer decides when a Resize is the
//! accelerator's repeat (`nearest_source`: every output index along every axis reads the
//! input index its coordinate transformation and nearest rounding give). The host resizes
//! in every mode, Upsample included, in `interpolate`.

use crate::onnx::proto::{AttrValue, Node};

/// The input index ONNX's nearest Resize reads for output index `o` (of `n_out`, from
/// `n_in`, at scale `scale`), under `transform` and `nearest` (ONNX's attribute values);
/// None for a transformation or rounding it does not know here, or an empty input.
pub fn nearest_source(
    o: usize,
    (n_in, n_out, scale): (usize, usize, f64),
    transform: &str,
    nearest: &str,
) -> Option<usize> {
    if n_in == 0 {
        return None;
    }
    let x = o as f64;
    let orig = match transform {
        "half_pixel" => (x + 0.5) / scale - 0.5,
        "pytorch_half_pixel" if n_out > 1 => (x + 0.5) / scale - 0.5,
        "pytorch_half_pixel" => 0.0,
        "asymmetric" => x / scale,
        "align_corners" if n_out > 1 => x * (n_in as f64 - 1.0) / (n_out as f64 - 1.0),
        "align_corners" => 0.0,
        _ => return None,
    };
    let tie = (orig - orig.floor() - 0.5).abs() < 1e-9;
    let i = match nearest {
        "round_prefer_floor" if tie => orig.floor(),
        "round_prefer_ceil" if tie => orig.ceil(),
        "round_prefer_floor" | "round_prefer_ceil" => orig.round(),
        "floor" => orig.floor(),
        "ceil" => orig.ceil(),
        _ => return None,
    };
    Some(i.clamp(0.0, n_in as f64 - 1.0) as usize)
}

/// The coordinate transformation and nearest rounding of Resize or Upsample node `n`
/// (Upsample: asymmetric, floor), or why they are not supported.
pub fn nearest_modes(n: &Node) -> Result<(String, String), String> {
    let text = |name: &str, default: &str| match n.attr(name) {
        Some(AttrValue::Text(t)) => t.clone(),
        _ => default.to_string(),
    };
    let mode = text("mode", "nearest");
    if mode != "nearest" {
        return Err(format!("mode {mode} (nearest only)"));
    }
    if n.op_type == "Upsample" {
        return Ok(("asymmetric".into(), "floor".into()));
    }
    if n.attr_int("antialias", 0) != 0
        || n.attr("axes").is_some()
        || !matches!(
            text("keep_aspect_ratio_policy", "stretch").as_str(),
            "stretch"
        )
    {
        return Err("antialias, axes or a keep_aspect_ratio_policy".into());
    }
    Ok((
        text("coordinate_transformation_mode", "half_pixel"),
        text("nearest_mode", "round_prefer_floor"),
    ))
}

#[cfg(test)]
mod tests {
    use super::nearest_source;

    /// By 2 from 3: half_pixel reads (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, 1.75,
    /// 2.25 -> 0 0 1 1 2 2 when rounded (no ties); floor gives -1 (clamped to 0), 0, 0, 1,
    /// 1, 2, not a repeat; asymmetric o / 2 = 0, 0.5, 1, 1.5, ... -> floor and
    /// round_prefer_floor repeat, round_prefer_ceil reads 0 1 1 2 2 2; align_corners o * 2
    /// / 5 = 0, 0.4, 0.8, 1.2, 1.6, 2 -> 0 0 1 1 2 2 rounded.
    #[test]
    fn nearest_sources_by_hand() {
        let src = |t: &str, m: &str| -> Vec<usize> {
            (0..6)
                .map(|o| nearest_source(o, (3, 6, 2.0), t, m).unwrap())
                .collect()
        };
        assert_eq!(src("half_pixel", "round_prefer_floor"), [0, 0, 1, 1, 2, 2]);
        assert_eq!(src("half_pixel", "round_prefer_ceil"), [0, 0, 1, 1, 2, 2]);
        assert_eq!(src("half_pixel", "floor"), [0, 0, 0, 1, 1, 2]);
        assert_eq!(src("asymmetric", "floor"), [0, 0, 1, 1, 2, 2]);
        assert_eq!(src("asymmetric", "round_prefer_floor"), [0, 0, 1, 1, 2, 2]);
        assert_eq!(src("asymmetric", "round_prefer_ceil"), [0, 1, 1, 2, 2, 2]);
        assert_eq!(
            src("align_corners", "round_prefer_floor"),
            [0, 0, 1, 1, 2, 2]
        );
        assert_eq!(
            nearest_source(0, (3, 6, 2.0), "tf_crop_and_resize", "floor"),
            None
        );
        // An empty input has no pixel to read (and is no panic).
        assert_eq!(nearest_source(0, (0, 4, 2.0), "half_pixel", "floor"), None);
    }
}
