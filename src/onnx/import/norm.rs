//! BatchNormalization (inference) in a quantized graph: `y = (x - mean) / sqrt(var + eps) *
//! scale + B`, per channel the affine map `x a[c] + d[c]`. After a convolution whose float
//! output it reads (QDQ: Conv -> BatchNormalization -> QuantizeLinear) it is folded into
//! that convolution's per-channel requantization and bias; after a dequantized tensor it
//! is an affine layer (`affine`).

use super::{ConstQ, Importer, PendingOp, Val};
use crate::onnx::proto::{dtype, Node};
use crate::onnx::ImportError;

impl Importer<'_> {
    /// The per-channel (a, d) of BatchNormalization node `n` over `c` channels: its four
    /// constant inputs (float, or dequantized) and its epsilon, as ONNX computes them in
    /// float32.
    fn norm_coefficients(
        &self,
        desc: &str,
        n: &Node,
        c: usize,
    ) -> Result<(Vec<f64>, Vec<f64>), ImportError> {
        let param = |i: usize, what: &str| -> Result<Vec<f64>, ImportError> {
            let name = n.inputs.get(i).map_or("", String::as_str);
            match self.float_constant(name) {
                Some((v, _)) if v.len() == c => Ok(v),
                Some((v, _)) => Err(self.err(
                    desc,
                    format!("{what} '{name}' has {} values for {c} channels", v.len()),
                    "check the model",
                )),
                None => Err(self.err(
                    desc,
                    format!("{what} '{name}' is not a constant"),
                    "fold constants before importing (onnxruntime's quant_pre_process)",
                )),
            }
        };
        let (scale, b) = (param(1, "scale")?, param(2, "B")?);
        let (mean, var) = (param(3, "mean")?, param(4, "var")?);
        if n.outputs.len() > 1 && n.outputs[1..].iter().any(|o| !o.is_empty()) {
            return Err(self.err(
                desc,
                "BatchNormalization in training mode (running statistics as outputs)",
                "export the model for inference",
            ));
        }
        let eps = n.attr_float("epsilon", 1e-5);
        let a: Vec<f64> = (0..c)
            .map(|k| (scale[k] as f32 / (var[k] as f32 + eps).sqrt()) as f64)
            .collect();
        let d = (0..c).map(|k| b[k] - mean[k] * a[k]).collect();
        Ok((a, d))
    }

    /// QDQ BatchNormalization of a convolution's float output (folded into it), of a
    /// dequantized tensor or of constant arithmetic on one (an affine layer).
    pub(super) fn batch_norm(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        let v = self.val(desc, &n.inputs[0])?;
        let c = match &v {
            Val::Dq(x) => x.shape[2],
            Val::Pending(p) => match &p.op {
                PendingOp::Conv { w, .. } => w.q.dims[0] as usize,
                PendingOp::Affine(f) => f.x.shape[2],
                _ => 0,
            },
            _ => 0,
        };
        let unsupported = || {
            self.err(desc, "its input is not a convolution's float output or a dequantized tensor", "quantize the model in QDQ form (quantize_static), or fold the batch norm first (onnxruntime's quant_pre_process)")
        };
        if c == 0 {
            return Err(unsupported());
        }
        let (a, d) = self.norm_coefficients(desc, n, c)?;
        match v {
            Val::Pending(mut p) if !p.relu && p.clip_hi.is_none() => {
                if let PendingOp::Conv { x, w, b, .. } = &mut p.op {
                    let (nw, nb) = self.fold_norm(desc, x.scale, w, b.as_ref(), (&a, &d))?;
                    (*w, *b) = (nw, Some(nb));
                    return Ok(Val::Pending(p));
                }
                let PendingOp::Affine(mut f) = p.op else {
                    return Err(unsupported());
                };
                self.apply_norm(&mut f, (&a, &d));
                Ok(self.pending(desc, PendingOp::Affine(f)))
            }
            Val::Dq(x) => {
                let mut f = super::affine::Affine::identity(x);
                self.apply_norm(&mut f, (&a, &d));
                Ok(self.pending(desc, PendingOp::Affine(f)))
            }
            _ => Err(unsupported()),
        }
    }

    fn apply_norm(&self, f: &mut super::affine::Affine, (a, d): (&[f64], &[f64])) {
        let c = a.len();
        f.scale.iter_mut().zip(a).for_each(|(s, a)| *s *= a);
        for (k, o) in f.offset.iter_mut().enumerate() {
            *o = *o * a[k % c] + d[k % c];
        }
    }

    /// Weights and bias of a convolution (input scale `sx`) with the batch norm `x a + d`
    /// after it: channel c's weight scale times |a[c]| (its weights negated where a[c] <
    /// 0), and the bias, at the new scale `sx ws'[c]`, `sign(a) b + d / (sx ws'[c])`
    /// rounded to an integer (off by at most half an accumulator unit).
    fn fold_norm(
        &self,
        desc: &str,
        sx: f64,
        w: &ConstQ,
        b: Option<&ConstQ>,
        (a, d): (&[f64], &[f64]),
    ) -> Result<(ConstQ, ConstQ), ImportError> {
        let c = a.len();
        let ws = |k: usize| w.scale[if w.scale.len() == 1 { 0 } else { k }];
        if a.contains(&0.0) {
            return Err(self.err(
                desc,
                "a batch norm with a zero scale",
                "remove the channel, or fold the batch norm first",
            ));
        }
        let per = w.q.values.len() / c;
        let mut nw = w.clone();
        for (k, v) in nw.q.values.iter_mut().enumerate() {
            if a[k / per] < 0.0 {
                *v = -*v;
            }
        }
        if nw.q.values.iter().any(|&v| v > 127.0)
            || nw.q.data_type != dtype::INT8 && a.iter().any(|&v| v < 0.0)
        {
            return Err(self.err(desc, "a batch norm with a negative scale after weights that cannot be negated (-128, or uint8)", "fold the batch norm into the weights before quantizing (onnxruntime's quant_pre_process)"));
        }
        nw.scale = (0..c).map(|k| ws(k) * a[k].abs()).collect();
        let old = |k: usize| b.map_or(0.0, |b| b.q.values[k]);
        let values = (0..c)
            .map(|k| (a[k].signum() * old(k) + d[k] / (sx * nw.scale[k])).round_ties_even())
            .collect();
        let mut q = w.q.clone();
        q.name = format!("{}.folded_bias", w.q.name);
        q.data_type = dtype::INT32;
        q.dims = vec![c as i64];
        q.values = values;
        let nb = ConstQ {
            q,
            scale: (0..c).map(|k| sx * nw.scale[k]).collect(),
            zero_point: vec![0],
        };
        Ok((nw, nb))
    }
}
