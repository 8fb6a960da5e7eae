//! Add, AveragePool, GlobalAveragePool and Clip: mapped onto existing layers, with the error bound the
//! README states (two roundings where ONNX has one).

use super::{same, Importer, Pending, PendingOp, Val};
use crate::onnx::layer::{ConvGeom, Layer, QTensor, Requant};
use crate::onnx::proto::Node;
use crate::onnx::ImportError;

/// The quantized code of a float clip bound: saturate(round_half_even(hi / scale) + zp).
pub(super) fn clip_code(hi: f64, y: (f64, i64, bool)) -> i64 {
    let t = crate::onnx::layer::act_type(y.2);
    ((hi / y.0).round_ties_even() as i64 + y.1).clamp(t.min(), t.max())
}

impl Importer<'_> {
    /// Operator `op` of node `desc`, waiting for the QuantizeLinear that names its output's
    /// quantization.
    pub(super) fn pending(&self, desc: &str, op: PendingOp) -> Val {
        Val::Pending(Box::new(Pending::new(desc, op)))
    }

    /// QDQ Add or Sub of two dequantized tensors, or QLinearAdd (A, As, Az, B, Bs, Bz, Cs,
    /// Cz).
    pub(super) fn add(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        if let Some(v) = self.affine(desc, n)? {
            return Ok(v);
        }
        let qdq = n.op_type != "QLinearAdd";
        let operand = |s: &Self, i: usize| match n.inputs.get(i).map(|v| s.val(desc, v)) {
            Some(Ok(Val::Dq(x))) if qdq => Ok(x),
            Some(Ok(Val::Q(_))) if n.op_type == "QLinearAdd" => s.q_input(desc, n, i),
            _ => Err(s.err(
                desc,
                format!("input {i} is neither a quantized activation nor a constant"),
                "quantize the model with quantize_static",
            )),
        };
        let (ai, bi) = if qdq { (0, 1) } else { (0, 3) };
        let (a, b) = (operand(self, ai)?, operand(self, bi)?);
        if a.shape != b.shape || a.flat != b.flat {
            return Err(self.err(
                desc,
                format!(
                    "operands of shapes {:?} and {:?}: broadcasting is not supported yet",
                    a.shape, b.shape
                ),
                "add tensors of the same shape",
            ));
        }
        let sub = n.op_type == "Sub";
        if qdq {
            return Ok(self.pending(desc, PendingOp::Add { a, b, sub }));
        }
        let y = self.quant_params(desc, n, 6, 7)?;
        let p = Pending::new(desc, PendingOp::Add { a, b, sub });
        Ok(Val::Q(self.finish(&p, y)?))
    }

    /// Sub (of a constant, or of two tensors of one shape: `add`), Mul or Div (QDQ) or
    /// QLinearMul: with a constant operand only.
    pub(super) fn arithmetic(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        if n.op_type == "Sub" {
            return self.add(desc, n);
        }
        match self.affine(desc, n)? {
            Some(v) => Ok(v),
            None => Err(self.err(
                desc,
                format!("{} of two tensors", n.op_type),
                "the accelerator multiplies and divides by constants only (and adds or subtracts two tensors of one shape)",
            )),
        }
    }

    /// QDQ GlobalAveragePool of a dequantized tensor, or QLinearGlobalAveragePool (X, xs,
    /// xz, ys, yz; channels first).
    pub(super) fn global_pool(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        match self.val(desc, &n.inputs[0])? {
            Val::Dq(x) if n.op_type == "GlobalAveragePool" => {
                Ok(self.pending(desc, PendingOp::GlobalPool { x }))
            }
            Val::Q(_) if n.op_type == "QLinearGlobalAveragePool" => {
                let x = self.q_input(desc, n, 0)?;
                if n.attr_int("channels_last", 0) != 0 {
                    return Err(self.err(
                        desc,
                        "channels_last = 1",
                        "export the pooling channels first",
                    ));
                }
                let y = self.quant_params(desc, n, 3, 4)?;
                let p = Pending::new(desc, PendingOp::GlobalPool { x });
                Ok(Val::Q(self.finish(&p, y)?))
            }
            _ => Err(self.err(
                desc,
                "its input is not quantized",
                "quantize the model with quantize_static",
            )),
        }
    }

    /// Clip(min, max) with min = 0 (ReLU6 and its kin): on an operator's float output, or on
    /// a dequantized tensor a layer wrote, applied by that layer in the quantized domain.
    pub(super) fn clip(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        let bound = |s: &Self, i: usize, default: f64| -> Result<f64, ImportError> {
            match n.inputs.get(i).filter(|v| !v.is_empty()) {
                Some(v) => Ok(s
                    .constant(desc, v)?
                    .values
                    .first()
                    .copied()
                    .unwrap_or(default)),
                None => Ok(default),
            }
        };
        let (lo, hi) = (
            bound(self, 1, f64::NEG_INFINITY)?,
            bound(self, 2, f64::INFINITY)?,
        );
        if lo != 0.0 || !hi.is_finite() || hi <= 0.0 {
            return Err(self.err(desc, format!("Clip({lo}, {hi})"), "the accelerator clips from 0 to a positive bound (ReLU6); use Relu for an unbounded clip"));
        }
        match self.val(desc, &n.inputs[0])? {
            Val::Pending(mut p)
                if !matches!(
                    p.op,
                    PendingOp::MaxPool { .. }
                        | PendingOp::GlobalPool { .. }
                        | PendingOp::AvgPool { .. }
                        | PendingOp::Upsample { .. }
                ) =>
            {
                p.clip_hi = Some(hi);
                Ok(Val::Pending(p))
            }
            Val::Dq(x) => Ok(self.pending(desc, PendingOp::Clip { x, lo, hi })),
            _ => Err(self.err(
                desc,
                "its input is not a convolution's, fully-connected or add layer's output",
                "put the Clip right after a Conv, Gemm, MatMul or Add",
            )),
        }
    }

    /// A Clip of a tensor a layer wrote, quantized as its input (as quantize_static does).
    pub(super) fn fold_clip(
        &mut self,
        desc: &str,
        x: &QTensor,
        lo: f64,
        hi: f64,
        y: (f64, i64, bool),
    ) -> Result<QTensor, ImportError> {
        if !(same(x.scale, y.0) && x.zero_point == y.1) || lo != 0.0 {
            return Err(self.err(
                desc,
                "a Clip whose output is quantized unlike its input",
                "keep the Clip's input quantization",
            ));
        }
        self.fold_activation(desc, x, Some(clip_code(hi, y)))
    }

    /// y = saturate(round(ra (a - za) + rb (b - zb)) + zy), ra = sa/sy and rb = sb/sy (`sub`:
    /// `- rb (b - zb)`), as a channel concat of a and b and a 1x1 convolution with weights
    /// wa (from a's channel c to output c) and wb (from b's; -wb for `sub`), the zero points
    /// in the bias (-(wa za + wb zb) with wb's sign, exact) and one requantization m / 2^s
    /// with m wa / 2^s ~ ra and m wb / 2^s ~ rb: the sum is rounded once, as ONNX does, with
    /// both scales within the error printed.
    pub(super) fn emit_add(
        &mut self,
        desc: &str,
        (a, b, sub): (&QTensor, &QTensor, bool),
        y: (f64, i64, bool),
    ) -> Result<QTensor, ImportError> {
        let (ra, rb) = (a.scale / y.0, b.scale / y.0);
        let (wa, wb, r, err) = add_weights(ra, rb).ok_or_else(|| {
            self.err(
                desc,
                format!("operand scale ratios {ra:.4e} and {rb:.4e} to the output's"),
                "check the model's scales",
            )
        })?;
        let wb = if sub { -wb } else { wb };
        let base = super::emit::desc_name(desc);
        let c = a.shape[2];
        let cat = self.fresh(&format!("{base}.operands"), "operands");
        let note = format!("{desc}: its operands joined along the channels");
        self.layers.push(Layer {
            name: cat.clone(),
            op: "concat",
            input: String::new(),
            keys: vec![("inputs", format!("[\"{}\", \"{}\"]", a.name, b.name))],
            note,
        });
        let name = self.fresh(&base, "add");
        let mut w = vec![0i64; 2 * c * c];
        for ch in 0..c {
            w[ch * c + ch] = wa;
            w[(c + ch) * c + ch] = wb;
        }
        let bias = vec![-(wa * a.zero_point + wb * b.zero_point); c];
        let keys = vec![
            ("kernel", "1".to_string()),
            ("out_channels", c.to_string()),
            ("weights", self.npy(&name, "weights", &[1, 1, 2 * c, c], &w)),
            ("bias", self.npy(&name, "bias", &[c], &bias)),
            ("requant", super::emit::requant_text(r, y.1)),
        ];
        let note = format!(
            "{desc} -> '{name}': {wa} x a {} {} x b, scaled by {} / 2^{} (operand scales {ra:.6e} and {rb:.6e}, relative error at most {err:.1e})",
            if sub { "-" } else { "+" },
            wb.abs(),
            r.multiplier,
            r.shift
        );
        let l = Layer {
            name,
            op: "conv2d",
            input: cat,
            keys,
            note,
        };
        let q = self.push(l, y, a.shape);
        Ok(QTensor { flat: a.flat, ..q })
    }

    /// The mean of each channel over the map, exactly as ONNX rounds it once: a depthwise
    /// convolution with a kernel of the whole (square) map and unit weights, the input zero
    /// point in its bias (`-N zx`, exact) and one requantization `m / 2^s ~ sx / (sy N)`.
    pub(super) fn emit_global_pool(
        &mut self,
        desc: &str,
        x: &QTensor,
        y: (f64, i64, bool),
    ) -> Result<QTensor, ImportError> {
        let [h, w, c] = x.shape;
        if h != w || x.flat {
            return Err(self.err(
                desc,
                format!("a global average pool over a {h}x{w} map"),
                "the accelerator's pooling windows are square: use a square feature map",
            ));
        }
        let geom = ConvGeom {
            k: h,
            stride: 1,
            pad: 0,
            groups: c,
        };
        self.emit_avg_pool(desc, x, geom, y)
    }

    /// The k x k average of each channel: the sum of `x - zero_point` over the window,
    /// scaled by `x_scale / (y_scale k^2)` with one rounding, as ONNX computes the average.
    /// With zero point 0, hwgen's `avgpool`; otherwise a depthwise convolution of unit
    /// weights (the zero point in the bias, and with padding the padding reading it, so
    /// that padded taps count as zeros of `x - zero_point`).
    pub(super) fn emit_avg_pool(
        &mut self,
        desc: &str,
        x: &QTensor,
        geom: ConvGeom,
        y: (f64, i64, bool),
    ) -> Result<QTensor, ImportError> {
        let [h, w, c] = x.shape;
        let k = geom.k;
        if x.flat || h + 2 * geom.pad < k || w + 2 * geom.pad < k {
            return Err(self.err(
                desc,
                format!(
                    "a {k}x{k} average over a {h}x{w} map with padding {}",
                    geom.pad
                ),
                "check the model",
            ));
        }
        let geom = ConvGeom { groups: c, ..geom };
        let n = (k * k) as i64;
        let scale = x.scale / (y.0 * n as f64);
        let r = self.requant_for(desc, scale, "the scale")?;
        if x.zero_point == 0 {
            // No zero point to fold: hwgen's own average pool (padding counts as zeros),
            // which the compiler runs faster (a global one sums whole rows at once).
            let name = self.fresh(&super::emit::desc_name(desc), "avgpool");
            let keys = vec![
                ("kernel", k.to_string()),
                ("stride", geom.stride.to_string()),
                ("padding", geom.pad.to_string()),
                ("requant", super::emit::requant_text(r, y.1)),
            ];
            let err = (r.value() / scale - 1.0).abs();
            let note = format!("{desc} -> '{name}': avgpool {k}x{k}, the sum scaled by {scale:.6e} = {} / 2^{} (relative error {err:.1e})", r.multiplier, r.shift);
            let l = Layer {
                name,
                op: "avgpool",
                input: x.name.clone(),
                keys,
                note,
            };
            return Ok(self.push(l, y, [geom.out(h), geom.out(w), c]));
        }
        let name = self.fresh(&super::emit::desc_name(desc), "avgpool");
        let ones = vec![1; k * k * c];
        let bias = crate::onnx::layer::fold_zero_point(&vec![0; c], &ones, c, x.zero_point);
        let shape = [geom.out(h), geom.out(w), c];
        let mut keys = vec![
            ("kernel", k.to_string()),
            ("stride", geom.stride.to_string()),
            ("padding", geom.pad.to_string()),
            ("groups", c.to_string()),
            ("out_channels", c.to_string()),
            ("weights", self.npy(&name, "weights", &[k, k, 1, c], &ones)),
            ("bias", self.npy(&name, "bias", &[c], &bias)),
            ("requant", super::emit::requant_text(r, y.1)),
        ];
        keys.extend(super::emit::pad_value_key(geom, x.zero_point));
        let err = (r.value() / scale - 1.0).abs();
        let note = format!("{desc} -> '{name}': the {k}x{k} sum of each channel (a depthwise convolution of unit weights, the input zero point in its bias{}), scaled by {scale:.6e} = {} / 2^{} (relative error {err:.1e})", if geom.pad > 0 { " and its padding" } else { "" }, r.multiplier, r.shift);
        let l = Layer {
            name,
            op: "conv2d",
            input: x.name.clone(),
            keys,
            note,
        };
        Ok(self.push(l, y, shape))
    }
}

/// Integer operand weights (wa, wb) of at most 127 and one requantization r with r wa ~ ra
/// and r wb ~ rb: the pair with the smallest larger relative error of the two, and that
/// error.
pub(super) fn add_weights(ra: f64, rb: f64) -> Option<(i64, i64, Requant, f64)> {
    let mut best: Option<(i64, i64, Requant, f64)> = None;
    for wa in 1..=127i64 {
        let wb = (wa as f64 * rb / ra).round() as i64;
        if !(1..=127).contains(&wb) {
            continue;
        }
        let Some(r) = Requant::of(ra / wa as f64) else {
            continue;
        };
        let err_a = (r.value() * wa as f64 / ra - 1.0).abs();
        let err_b = (r.value() * wb as f64 / rb - 1.0).abs();
        let err = err_a.max(err_b);
        if best.as_ref().is_none_or(|b| err < b.3) {
            best = Some((wa, wb, r, err));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal scales: 1 : 1 (or a multiple); 0.5 vs 0.25: 2 : 1; a ratio of 3/7 within the
    /// rational approximation's error.
    #[test]
    fn add_weights_approximate_both_scales() {
        let (wa, wb, r, err) = add_weights(0.5, 0.5).unwrap();
        assert_eq!(wa, wb);
        assert!(err < 1e-4 && (r.value() * wa as f64 - 0.5).abs() < 1e-4);
        let (wa, wb, _, err) = add_weights(0.5, 0.25).unwrap();
        assert_eq!(wa, 2 * wb);
        assert!(err < 1e-4);
        let (_, _, _, err) = add_weights(0.3, 0.7).unwrap();
        assert!(err < 1e-3, "{err}");
        assert!(add_weights(1.0, 1e6).is_none());
    }
}
