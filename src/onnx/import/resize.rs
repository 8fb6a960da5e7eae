//! Resize (and the older Upsample) in nearest mode by a whole factor: hwgen's `upsample`,
//! which repeats each pixel. ONNX's coordinate transformation and nearest rounding are
//! evaluated for every output row and column of the actual sizes; the node is taken only
//! when they pick exactly the pixel a repeat does.

use super::{Importer, PendingOp, Val};
use crate::onnx::layer::{Layer, QTensor};
use crate::onnx::proto::{AttrValue, Node};
use crate::onnx::ImportError;

/// The input index ONNX's nearest Resize reads for output index `o` (of `n_out`, from
/// `n_in`, at scale `scale`), under `transform` and `nearest` (ONNX's attribute values).
pub(super) fn nearest_source(
    o: usize,
    (n_in, n_out, scale): (usize, usize, f64),
    transform: &str,
    nearest: &str,
) -> Option<usize> {
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

impl Importer<'_> {
    /// QDQ Resize/Upsample of a dequantized tensor (waits for its QuantizeLinear, which
    /// must keep the quantization), or of a quantized one (QOperator: the integers).
    pub(super) fn resize(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        let (x, pending) = match self.val(desc, &n.inputs[0])? {
            Val::Q(x) => (x, false),
            Val::Dq(x) => (x, true),
            _ => {
                return Err(self.err(
                    desc,
                    "its input is not quantized",
                    "quantize the model with quantize_static",
                ))
            }
        };
        let factor = self.resize_factor(desc, n, &x)?;
        if pending {
            return Ok(self.pending(desc, PendingOp::Upsample { x, factor }));
        }
        Ok(Val::Q(self.emit_upsample(desc, &x, factor)))
    }

    /// The whole factor of a nearest Resize (or Upsample) of `x` that repeats each pixel,
    /// the same along height and width; an error naming what differs otherwise.
    fn resize_factor(&self, desc: &str, n: &Node, x: &QTensor) -> Result<usize, ImportError> {
        let text = |name: &str, default: &str| match n.attr(name) {
            Some(AttrValue::Text(t)) => t.clone(),
            _ => default.to_string(),
        };
        let upsample = n.op_type == "Upsample";
        let mode = text("mode", "nearest");
        let (transform, nearest) = if upsample {
            ("asymmetric".to_string(), "floor".to_string())
        } else {
            (
                text("coordinate_transformation_mode", "half_pixel"),
                text("nearest_mode", "round_prefer_floor"),
            )
        };
        let bad = |what: String| {
            self.err(desc, what, "the accelerator repeats pixels by a whole factor (Resize mode nearest, scales [1, 1, f, f])")
        };
        if mode != "nearest" || x.flat {
            return Err(bad(format!("mode {mode}")));
        }
        let [h, w, c] = x.shape;
        // Scales (Resize input 2, Upsample input 1) or sizes (Resize input 3).
        let input = |i: usize| n.inputs.get(i).filter(|s| !s.is_empty());
        let scales_at = if upsample { 1 } else { 2 };
        let (sh, sw) = if let Some(name) = input(scales_at) {
            match self.constant(desc, name)?.values[..] {
                [1.0, 1.0, a, b] => (a, b),
                ref v => return Err(bad(format!("scales {v:?}"))),
            }
        } else if let Some(name) = input(3) {
            match self.constant(desc, name)?.values[..] {
                [1.0, cc, a, b] if cc as usize == c => (a / h as f64, b / w as f64),
                ref v => return Err(bad(format!("sizes {v:?}"))),
            }
        } else {
            return Err(bad("neither scales nor sizes".into()));
        };
        if sh != sw || sh < 1.0 || sh.fract() != 0.0 || sh > 8.0 {
            return Err(bad(format!("scales {sh} and {sw} (height, width)")));
        }
        let f = sh as usize;
        for (n_in, what) in [(h, "row"), (w, "column")] {
            let n_out = n_in * f;
            for o in 0..n_out {
                if nearest_source(o, (n_in, n_out, sh), &transform, &nearest) != Some(o / f) {
                    return Err(bad(format!(
                        "coordinate_transformation_mode {transform} with nearest_mode {nearest}: output {what} {o} reads another input {what} than a repeat by {f}"
                    )));
                }
            }
        }
        Ok(f)
    }

    /// hwgen's `upsample` by `factor` of `x`, its quantization kept.
    pub(super) fn emit_upsample(&mut self, desc: &str, x: &QTensor, factor: usize) -> QTensor {
        let name = self.fresh(&super::emit::desc_name(desc), "upsample");
        let note = format!("{desc} -> '{name}': nearest upsampling by {factor}, quantization kept");
        self.layers.push(Layer {
            name: name.clone(),
            op: "upsample",
            input: x.name.clone(),
            keys: vec![("factor", factor.to_string())],
            note,
        });
        let [h, w, c] = x.shape;
        QTensor {
            name,
            shape: [h * factor, w * factor, c],
            ..x.clone()
        }
    }
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
    }
}
