//! Add, Sub and Mul of two tensors, AveragePool, GlobalAveragePool and Clip: mapped onto
//! the model's layers, with the error bound the README states.

use super::{same, Importer, Pending, PendingOp, Val};
use crate::onnx::layer::{ConvGeom, Layer, Layout, QTensor};
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

    /// QDQ Add, Sub or Mul of two dequantized tensors, or QLinearAdd / QLinearMul (A, As,
    /// Az, B, Bs, Bz, Cs, Cz); either operand may be a constant (`affine`). The tensors have
    /// one shape, or one of them is a single pixel of the other's channels ([N, C, 1, 1]),
    /// broadcast over the map.
    pub(super) fn add(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        if let Some(v) = self.affine(desc, n)? {
            return Ok(v);
        }
        let qop = n.op_type.starts_with("QLinear");
        let operand = |s: &Self, i: usize| match n.inputs.get(i).map(|v| s.val(desc, v)) {
            Some(Ok(Val::Dq(x))) if !qop => Ok(x),
            Some(Ok(Val::Q(_))) if qop => s.q_input(desc, n, i),
            _ => Err(s.outside(desc, n, i)),
        };
        let (ai, bi) = if qop { (0, 3) } else { (0, 1) };
        let (a, b) = (operand(self, ai)?, operand(self, bi)?);
        let one_pixel = |t: &QTensor, of: &QTensor| {
            t.shape == [1, 1, of.shape[2]] && t.layout == of.layout && t.layout != Layout::Flat
        };
        let same_shape = a.shape == b.shape && a.layout == b.layout;
        if !(same_shape || one_pixel(&a, &b) || one_pixel(&b, &a)) {
            return Err(self.err(
                desc,
                format!(
                    "operands of shapes {:?} and {:?}: only one shape, or one pixel of the other's channels, is broadcast",
                    a.shape, b.shape
                ),
                "combine tensors of the same shape, or a [N, C, 1, 1] tensor with an [N, C, H, W] one",
            ));
        }
        let op = match n.op_type.as_str() {
            "Mul" | "QLinearMul" => Binary::Mul,
            "Sub" => Binary::Sub,
            _ => Binary::Add,
        };
        if !qop {
            return Ok(self.pending(desc, PendingOp::Binary { a, b, op }));
        }
        let y = self.quant_params(desc, n, 6, 7)?;
        let p = Pending::new(desc, PendingOp::Binary { a, b, op });
        Ok(Val::Q(self.finish(&p, y)?))
    }

    /// Sub (of a constant, or of two tensors: `add`), Mul (of a constant or of two tensors:
    /// `add`), Div (QDQ) or QLinearMul: Div with a constant operand only.
    pub(super) fn arithmetic(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        if n.op_type != "Div" {
            return self.add(desc, n);
        }
        match self.affine(desc, n)? {
            Some(v) => Ok(v),
            None => Err(self.err(
                desc,
                "Div of two tensors",
                "the accelerator divides by constants only",
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

    /// ONNX's quantized Add, Sub and Mul as the model's `add` and `mul` (quantized form):
    /// y = saturate(round(ra (a - za) + rb (b - zb)) + zy) with ra = sa/sy, rb = sb/sy (-rb
    /// for Sub), or y = saturate(round(r (a - za)(b - zb)) + zy) with r = sa sb / sy, rounded
    /// once as ONNX does, the ratios as 16-bit weights over one power of two
    /// (`combine_weights`). The operand a convolution has just written goes first (the
    /// compiler folds the add into that convolution); a one-pixel operand goes second.
    pub(super) fn emit_binary(
        &mut self,
        desc: &str,
        (a, b, op): (&QTensor, &QTensor, Binary),
        y: (f64, i64, bool),
    ) -> Result<QTensor, ImportError> {
        let just_written = |t: &QTensor| {
            self.layers
                .last()
                .is_some_and(|l| l.name == t.name && l.op == "conv2d")
        };
        let sign = if op == Binary::Sub { -1.0 } else { 1.0 };
        let swap = (b.shape != a.shape && a.shape[..2] == [1, 1])
            || (a.shape == b.shape && just_written(b) && !just_written(a));
        let ((x, rx), (r, rr)) = match swap {
            true => ((b, sign * b.scale), (a, a.scale)),
            false => ((a, a.scale), (b, sign * b.scale)),
        };
        let ratios = match op {
            Binary::Mul => vec![a.scale * b.scale / y.0],
            _ => vec![rx / y.0, rr / y.0],
        };
        let shown: Vec<String> = ratios.iter().map(|r| format!("{r:.6e}")).collect();
        let shown = shown.join(", ");
        let (weights, shift, err) = combine_weights(&ratios).ok_or_else(|| {
            self.err(
                desc,
                format!("scale ratios {shown} to the output's"),
                "check the model's scales: each ratio must be below 32767 and not zero",
            )
        })?;
        let name = self.fresh(&super::emit::desc_name(desc), op.name());
        let scale = match op {
            Binary::Mul => format!("{{ multiplier = {}, shift = {shift} }}", weights[0]),
            _ => format!(
                "{{ input = {}, residual = {}, shift = {shift} }}",
                weights[0], weights[1]
            ),
        };
        let keys = vec![
            ("residual", format!("\"{}\"", r.name)),
            ("scale", scale),
            (
                "zero_points",
                format!(
                    "{{ input = {}, residual = {}, output = {} }}",
                    x.zero_point, r.zero_point, y.1
                ),
            ),
        ];
        let note = format!(
            "{desc} -> '{name}': the ratios of the scales {shown} as {weights:?} / 2^{shift} (relative error at most {err:.1e})"
        );
        let l = Layer {
            name,
            op: op.name(),
            input: x.name.clone(),
            keys,
            note,
        };
        let q = self.push(l, y, x.shape);
        Ok(QTensor {
            layout: x.layout,
            ..q
        })
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
        if h != w || x.layout != Layout::Map {
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
    /// hwgen's `avgpool` (with the input zero point in `zero_points`), or for a window
    /// wider than it takes a depthwise convolution of unit weights (the zero point in the
    /// bias, and with padding the padding reading it, so that padded taps count as zeros of
    /// `x - zero_point`).
    pub(super) fn emit_avg_pool(
        &mut self,
        desc: &str,
        x: &QTensor,
        geom: ConvGeom,
        y: (f64, i64, bool),
    ) -> Result<QTensor, ImportError> {
        let [h, w, c] = x.shape;
        let k = geom.k;
        if x.layout != Layout::Map || h + 2 * geom.pad < k || w + 2 * geom.pad < k {
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
        // (A larger window, a global pool over a map wider than the model's pooling
        // layers take, is a depthwise convolution of unit weights.)
        if k <= crate::model::MAX_POOL_KERNEL {
            // hwgen's own average pool (padding counts as zeros of x - zero point), which
            // the compiler runs faster (a global one sums whole rows at once).
            let name = self.fresh(&super::emit::desc_name(desc), "avgpool");
            let mut keys = vec![
                ("kernel", k.to_string()),
                ("stride", geom.stride.to_string()),
                ("padding", geom.pad.to_string()),
                ("requant", super::emit::requant_text(r, y.1)),
            ];
            if x.zero_point != 0 {
                keys.push(("zero_points", format!("{{ input = {} }}", x.zero_point)));
            }
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

/// Ratios of scales as 16-bit signed weights over one power of two: the largest shift
/// (at most 63) at which the largest weight fits, the weights rounded to nearest, and the
/// largest relative error of a weight; None when a ratio is zero, not finite, or too large.
pub(super) fn combine_weights(ratios: &[f64]) -> Option<(Vec<i64>, u32, f64)> {
    let (max_w, max_s) = crate::isa::combine_limits();
    let top = ratios.iter().fold(0.0f64, |m, r| m.max(r.abs()));
    if !top.is_finite() || ratios.contains(&0.0) {
        return None;
    }
    let shift = (max_w as f64 / top).log2().floor().min(max_s as f64);
    if shift < 0.0 {
        return None;
    }
    let scale = 2f64.powi(shift as i32);
    let weights: Vec<i64> = ratios.iter().map(|r| (r * scale).round() as i64).collect();
    let err = ratios
        .iter()
        .zip(&weights)
        .map(|(r, w)| (*w as f64 / scale / r - 1.0).abs())
        .fold(0.0, f64::max);
    // A weight that rounds to zero has lost the ratio entirely.
    (weights.iter().all(|w| *w != 0 && w.abs() <= max_w)).then_some((weights, shift as u32, err))
}

/// The binary operators of two tensors the accelerator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Binary {
    Add,
    Sub,
    Mul,
}

impl Binary {
    /// The model file's operator.
    fn name(self) -> &'static str {
        match self {
            Binary::Mul => "mul",
            _ => "add",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal scales: equal weights of 2^14.. (the largest below 2^15); 0.5 vs 0.25: 2 : 1;
    /// 3 / 7 within 2^-15 of the larger; a product's ratio 1/300: 2^23 / 300 = 27962.03 ->
    /// 27962; a ratio too large or zero is refused.
    #[test]
    fn combine_weights_approximate_every_ratio() {
        let (w, s, err) = combine_weights(&[0.5, 0.5]).unwrap();
        assert_eq!((w, s, err), (vec![16384, 16384], 15, 0.0));
        let (w, _, err) = combine_weights(&[0.5, 0.25]).unwrap();
        assert_eq!((w[0], err), (2 * w[1], 0.0));
        let (w, s, err) = combine_weights(&[0.3, 0.7]).unwrap();
        assert_eq!(s, 15);
        assert_eq!(w, vec![9830, 22938]); // 0.3 x 32768 = 9830.4, 0.7 x 32768 = 22937.6
        assert!(err < 1e-4, "{err}");
        assert_eq!(combine_weights(&[1.0 / 300.0]).unwrap().0, vec![27962]);
        assert_eq!(combine_weights(&[1.0 / 300.0]).unwrap().1, 23);
        assert!(combine_weights(&[1.0, 1e6]).is_none());
        assert!(combine_weights(&[1.0, 0.0]).is_none());
        assert!(combine_weights(&[1.0, 1e-9]).is_none());
    }
}
