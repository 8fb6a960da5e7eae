//! Add, Sub, Mul and Div with a constant operand (numpy broadcasting), in QDQ form (a chain
//! of them between a DequantizeLinear and a QuantizeLinear composes) or as onnxruntime's
//! QLinearAdd/QLinearMul: the float map `x -> x g[c] + b[y, x, c]` on the dequantized input,
//! run as one depthwise 1x1 convolution whose weights carry the slope, whose (untied) bias
//! carries the constant term and whose requantization rounds once.

use super::{Importer, Pending, PendingOp, Val};
use crate::onnx::layer::{Layer, Layout, QTensor};
use crate::onnx::proto::{dtype, Node};
use crate::onnx::ImportError;

/// A constant's float values and ONNX dims.
type Constant = (Vec<f64>, Vec<usize>);

/// The largest weight magnitude of a scaled channel (int8's): the accumulator's unit (the
/// requantization's scale) is at least 1/127 of an input step's worth, so a constant term,
/// rounded to that unit, is off by at most 1/254 of an input step's worth.
const SLOPE_WEIGHT: i64 = 127;

/// The float map `x -> x scale[c] + offset[h, w, c]` on a dequantized tensor, its elements
/// in hwgen's (h, w, c) order.
#[derive(Clone)]
pub(super) struct Affine {
    pub x: QTensor,
    pub scale: Vec<f64>,
    pub offset: Vec<f64>,
}

impl Affine {
    pub(super) fn identity(x: QTensor) -> Self {
        let [h, w, c] = x.shape;
        Affine {
            scale: vec![1.0; c],
            offset: vec![0.0; h * w * c],
            x,
        }
    }

    /// Each channel's value when `v` (h, w, c) is the same at every pixel.
    fn per_channel(&self, v: &[f64]) -> Option<Vec<f64>> {
        let c = self.x.shape[2];
        let first = v[..c].to_vec();
        v.chunks(c).all(|p| p == first.as_slice()).then_some(first)
    }
}

impl Importer<'_> {
    /// Input `name` of node `desc` as a constant's float values and ONNX dims: a
    /// DequantizeLinear of an initializer (`(q - zero point) x scale` in float32, per axis
    /// where it is) or a float initializer; None when it is not a constant.
    pub(super) fn float_constant(&self, name: &str) -> Option<Constant> {
        if let Some(Val::DqConst(c, axis)) = self.vals.get(name) {
            let dims: Vec<usize> = c.q.dims.iter().map(|&d| d as usize).collect();
            let axis = if *axis < 0 {
                *axis + dims.len() as i64
            } else {
                *axis
            } as usize;
            let per = c.scale.len().max(c.zero_point.len());
            let inner: usize = dims.get(axis + 1..).map_or(1, |d| d.iter().product());
            let pick = |v: &[f64], k: usize| v[if v.len() == 1 { 0 } else { k / inner % per }];
            let z: Vec<f64> = c.zero_point.iter().map(|&z| z as f64).collect();
            let values = (0..c.q.values.len())
                .map(|k| ((c.q.values[k] - pick(&z, k)) as f32 * pick(&c.scale, k) as f32) as f64)
                .collect();
            return Some((values, dims));
        }
        let t = self.consts.get(name)?;
        (t.data_type == dtype::FLOAT).then(|| {
            (
                t.values.clone(),
                t.dims.iter().map(|&d| d as usize).collect(),
            )
        })
    }

    /// A constant of ONNX dims `dims` broadcast (numpy's rule) to `x`'s shape, in hwgen's
    /// (h, w, c) order: `x` is `[1, C, H, W]` in ONNX, or `[1, C]` when flattened from a
    /// 1x1 map.
    fn broadcast(
        &self,
        desc: &str,
        values: &[f64],
        dims: &[usize],
        x: &QTensor,
    ) -> Result<Vec<f64>, ImportError> {
        let [h, w, c] = x.shape;
        if x.layout == Layout::Flat && h * w != 1 {
            return Err(self.err(
                desc,
                "a constant operand of a flattened feature map",
                "apply the operator before the Flatten",
            ));
        }
        let target = x.layout.onnx_dims(x.shape);
        let fits =
            dims.len() <= target.len() || dims[..dims.len() - target.len()].iter().all(|&d| d == 1);
        let aligned: Vec<usize> = (0..target.len())
            .map(|i| {
                let j = (i + dims.len()).checked_sub(target.len());
                j.map_or(1, |j| dims[j])
            })
            .collect();
        if !fits
            || aligned.iter().zip(&target).any(|(&d, &t)| d != 1 && d != t)
            || values.len() != dims.iter().product::<usize>()
        {
            return Err(self.err(
                desc,
                format!(
                    "a constant of shape {dims:?} does not broadcast to the tensor's {target:?}"
                ),
                "give the constant a shape numpy broadcasts to the tensor's, without growing it",
            ));
        }
        // Strides of the aligned constant (0 along its broadcast dimensions).
        let mut strides = vec![0; target.len()];
        let mut s = 1;
        for i in (0..target.len()).rev() {
            if aligned[i] != 1 {
                strides[i] = s;
            }
            s *= aligned[i];
        }
        let at =
            |idx: &[usize]| values[idx.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>()];
        let mut out = Vec::with_capacity(h * w * c);
        for y in 0..h {
            for xx in 0..w {
                for ch in 0..c {
                    // (A padded key's value is never read: any will do, 1 divides.)
                    out.push(match x.layout.is_padding(x.shape, ch) {
                        true => 1.0,
                        false => at(&x.layout.onnx_coords(x.shape, y, xx, ch)),
                    });
                }
            }
        }
        Ok(out)
    }

    /// Add, Sub, Mul or Div (QDQ) or QLinearAdd/QLinearMul with a constant operand; None
    /// when neither operand is a constant.
    pub(super) fn affine(&mut self, desc: &str, n: &Node) -> Result<Option<Val>, ImportError> {
        let qop = n.op_type.starts_with("QLinear");
        let (ai, bi) = if qop { (0, 3) } else { (0, 1) };
        let name = |i: usize| n.inputs.get(i).map_or("", String::as_str);
        let constant = |s: &Self, i: usize| -> Result<Option<Constant>, ImportError> {
            if !qop {
                return Ok(s.float_constant(name(i)));
            }
            let Some(t) = s.consts.get(name(i)) else {
                return Ok(None);
            };
            let (scale, zp, _) = s.quant_params(desc, n, i + 1, i + 2)?;
            let v = t
                .values
                .iter()
                .map(|&q| ((q - zp as f64) as f32 * scale as f32) as f64)
                .collect();
            Ok(Some((v, t.dims.iter().map(|&d| d as usize).collect())))
        };
        let (k, xi, const_first) = match (constant(self, ai)?, constant(self, bi)?) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    desc,
                    "both operands are constants",
                    "fold constants before importing (onnxruntime's quant_pre_process)",
                ))
            }
            (Some(k), None) => (k, bi, true),
            (None, Some(k)) => (k, ai, false),
            (None, None) => return Ok(None),
        };
        let mut f = if qop {
            Affine::identity(self.q_input(desc, n, xi)?)
        } else {
            match self.val(desc, name(xi))? {
                Val::Dq(x) => Affine::identity(x),
                Val::Pending(p) if p.relu || p.clip_hi.is_some() => {
                    return Err(self.err(desc, "an arithmetic operator after an activation that is not quantized in between", "quantize the activation's output (quantize_static does)"))
                }
                Val::Pending(p) => match p.op {
                    PendingOp::Affine(f) => f,
                    _ => return Err(self.err(desc, "its input is the float output of an operator other than Add, Sub, Mul or Div of a constant", "quantize that operator's output (quantize_static does)")),
                },
                _ => return Err(self.err(desc, "its tensor operand is not a quantized activation", "quantize the model with quantize_static")),
            }
        };
        let v = self.broadcast(desc, &k.0, &k.1, &f.x)?;
        self.apply(desc, &mut f, &n.op_type, &v, const_first)?;
        let p = Pending::new(desc, PendingOp::Affine(f));
        if !qop {
            return Ok(Some(Val::Pending(Box::new(p))));
        }
        let y = self.quant_params(desc, n, 6, 7)?;
        Ok(Some(Val::Q(self.finish(&p, y)?)))
    }

    /// `f` followed by operator `op` with the constant `v` (h, w, c), the constant being
    /// the first operand when `const_first`.
    fn apply(
        &self,
        desc: &str,
        f: &mut Affine,
        op: &str,
        v: &[f64],
        const_first: bool,
    ) -> Result<(), ImportError> {
        let c = f.x.shape[2];
        match op {
            "Add" | "QLinearAdd" => f.offset.iter_mut().zip(v).for_each(|(o, v)| *o += v),
            "Sub" if const_first => {
                f.scale.iter_mut().for_each(|s| *s = -*s);
                f.offset.iter_mut().zip(v).for_each(|(o, v)| *o = v - *o);
            }
            "Sub" => f.offset.iter_mut().zip(v).for_each(|(o, v)| *o -= v),
            "Div" if const_first => {
                return Err(self.err(
                    desc,
                    "a constant divided by a tensor",
                    "the accelerator divides a tensor by a constant only",
                ))
            }
            _ => {
                let Some(g) = f.per_channel(v) else {
                    return Err(self.err(desc, format!("{op} by a constant that varies across the feature map"), "the accelerator scales each channel by one number: give the constant one value per channel (shape [1, C, 1, 1])"));
                };
                if op == "Div" && g.contains(&0.0) {
                    return Err(self.err(
                        desc,
                        "a division by a constant holding 0",
                        "check the model",
                    ));
                }
                let g: Vec<f64> = g
                    .iter()
                    .map(|&g| if op == "Div" { 1.0 / g } else { g })
                    .collect();
                f.scale.iter_mut().zip(&g).for_each(|(s, g)| *s *= g);
                for (k, o) in f.offset.iter_mut().enumerate() {
                    *o *= g[k % c];
                }
            }
        }
        Ok(())
    }

    /// `y = saturate(round((sx (x - zx) g[c] + b[h, w, c]) / sy) + zy)`, with `s = g sx /
    /// sy` the output steps per input step: a depthwise 1x1 convolution with weight `+-W`
    /// (0 where s is 0), each channel's requantization `|s| / W`, and the bias
    /// `round(b W / (sy |s|)) - w zx` (untied when b varies across the map). `W` is 127,
    /// or, for a constant per channel, the weight that carries it best
    /// ([`carrying_weight`]).
    pub(super) fn emit_affine(
        &mut self,
        desc: &str,
        f: &Affine,
        y: (f64, i64, bool),
    ) -> Result<QTensor, ImportError> {
        let x = &f.x;
        let [h, w, c] = x.shape;
        let slope: Vec<f64> = f.scale.iter().map(|g| g * x.scale / y.0).collect();
        if slope.iter().any(|&g| g < 0.0) {
            // Negative weights: int8 weights for the whole model.
            if self.weight_signed == Some(false) {
                return Err(self.err(
                    desc,
                    "a negative scale in a model of uint8 weights",
                    "quantize the weights to int8",
                ));
            }
            self.weight_signed = Some(true);
        }
        // Channels of slope 0 take the unit of the others (or of an input step).
        let unit = slope
            .iter()
            .map(|g| g.abs())
            .find(|&g| g > 0.0)
            .unwrap_or(x.scale / y.0);
        let tied = f.per_channel(&f.offset);
        let (mut requants, mut weights) = (Vec::with_capacity(c), Vec::with_capacity(c));
        let mut worst = 0f64;
        for (ch, &g) in slope.iter().enumerate() {
            let big = if g == 0.0 { unit } else { g.abs() };
            let m = match &tied {
                Some(o) if g != 0.0 => carrying_weight(o[ch] / (y.0 * big)),
                _ => SLOPE_WEIGHT,
            };
            let a = big / m as f64;
            let r = self.requant_for(
                desc,
                a,
                "the scale |slope| x input scale / (weight x output scale)",
            )?;
            worst = worst.max((r.value() / a - 1.0).abs());
            requants.push(r);
            weights.push(if g == 0.0 { 0 } else { m * g.signum() as i64 });
        }
        // The constant in accumulator units, rounded; and the largest rounding, in output
        // steps.
        let mut off = 0f64;
        let mut bias = Vec::with_capacity(f.offset.len());
        for (k, b) in f.offset.iter().enumerate() {
            let unit = requants[k % c].value();
            let exact = b / (y.0 * unit);
            if !exact.is_finite() || exact.abs() > 2f64.powi(40) {
                return Err(self.err(
                    desc,
                    format!("the constant term {b} is {exact:e} accumulator units, which the int32 accumulator does not hold"),
                    "check the model's constants and scales",
                ));
            }
            off = off.max((exact.round_ties_even() - exact).abs() * unit);
            bias.push(exact.round_ties_even() as i64 - weights[k % c] * x.zero_point);
        }
        self.check_acc(desc, &bias)?;
        let name = self.fresh(&super::emit::desc_name(desc), "affine");
        let mut keys = vec![
            ("kernel", "1".to_string()),
            ("groups", c.to_string()),
            ("out_channels", c.to_string()),
            (
                "weights",
                self.npy(&name, "weights", &[1, 1, 1, c], &weights),
            ),
        ];
        let untied = tied.is_none().then_some(&bias[..]);
        keys.push(self.bias_key(&name, &bias[..c], untied, [h, w, c]));
        keys.push(("requant", self.requant_keys(&requants, y.1)));
        let note = format!(
            "{desc} -> '{name}': x times {} plus a constant {} (in the {}bias, off by at most {off:.1e} of an output step), requantization relative error at most {worst:.1e}",
            if slope.iter().all(|g| *g == slope[0]) { "one scale" } else { "a scale per channel" },
            if untied.is_some() { "per element" } else { "per channel" },
            if untied.is_some() { "untied " } else { "" },
        );
        let l = Layer {
            name,
            op: "conv2d",
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
}

/// The weight magnitude `W` (1..=127) that carries a constant of `t` input steps best: the
/// constant becomes the integer bias `round(W t)` in units of 1/W input step, off by
/// `|W t - round(W t)| / W` input steps; the smallest such error, and the largest `W`
/// among equals.
pub(super) fn carrying_weight(t: f64) -> i64 {
    let err = |w: i64| {
        let v = w as f64 * t;
        (v - v.round()).abs() / w as f64
    };
    (1..=SLOPE_WEIGHT)
        .rev()
        .min_by(|&a, &b| err(a).total_cmp(&err(b)))
        .unwrap_or(SLOPE_WEIGHT)
}

#[cfg(test)]
mod tests {
    use super::carrying_weight;

    /// A whole number of input steps needs any weight (the largest is kept); 1/2 and 1/3
    /// are carried exactly by the largest even weight and multiple of 3; 0.3 by a
    /// multiple of 10, 120; an irrational one with less error than 1/254.
    #[test]
    fn constants_are_carried_by_the_weight_that_fits_them() {
        assert_eq!(carrying_weight(5.0), 127);
        assert_eq!(carrying_weight(0.5), 126);
        assert_eq!(carrying_weight(-1.0 / 3.0), 126);
        assert_eq!(carrying_weight(0.3), 120);
        let t = std::f64::consts::SQRT_2;
        let w = carrying_weight(t) as f64;
        assert!((w * t - (w * t).round()).abs() / w < 1.0 / 254.0);
    }
}
