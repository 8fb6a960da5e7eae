//! Resize (and the older Upsample) in nearest mode by a whole factor: hwgen's `upsample`,
//! which repeats each pixel. ONNX's coordinate transformation and nearest rounding (the
//! host's `nearest_source`) are evaluated for every output row and column of the actual
//! sizes; the node is taken only when they pick exactly the pixel a repeat does.

use super::{Importer, PendingOp, Val};
use crate::onnx::hostops::resize::{nearest_modes, nearest_source};
use crate::onnx::layer::{Layer, Layout, QTensor};
use crate::onnx::proto::Node;
use crate::onnx::ImportError;

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
        let (transform, nearest) =
            nearest_modes(n).map_err(|rule| self.err(desc, rule, "the accelerator repeats pixels by a whole factor (Resize mode nearest, scales [1, 1, f, f])"))?;
        let upsample = n.op_type == "Upsample";
        let bad = |what: String| {
            self.err(desc, what, "the accelerator repeats pixels by a whole factor (Resize mode nearest, scales [1, 1, f, f])")
        };
        if x.layout != Layout::Map {
            return Err(bad("a tensor that is not a feature map [1, C, H, W]".into()));
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
