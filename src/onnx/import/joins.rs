//! Concat and ConvTranspose: channel joins with every operand requantized to the output's
//! scale (one rounding, as ONNX), and the transposed convolution with its input zero point
//! folded into an untied bias.

use super::{same, ConstQ, Importer, Pending, PendingOp, Val};
use crate::onnx::layer::{Layer, Layout, QTensor};
use crate::onnx::proto::{AttrValue, Node};
use crate::onnx::ImportError;

impl Importer<'_> {
    /// QDQ Concat of dequantized tensors, or QLinearConcat (Ys, Yz, then X, Xs, Xz per
    /// operand), along the channels.
    pub(super) fn concat(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        let axis = n.attr_int("axis", 1);
        if axis != 1 && axis != -3 {
            return Err(self.err(
                desc,
                format!("Concat along axis {axis}"),
                "the accelerator joins tensors along the channels (axis 1)",
            ));
        }
        let (first, step) = if n.op_type == "Concat" {
            (0, 1)
        } else {
            (2, 3)
        };
        let mut parts = vec![];
        for i in (first..n.inputs.len()).step_by(step) {
            match (self.val(desc, &n.inputs[i])?, n.op_type.as_str()) {
                (Val::Dq(x), "Concat") if channels_last(&x) => parts.push(x),
                (Val::Q(x), "QLinearConcat") if channels_last(&x) => {
                    self.q_input(desc, n, i)?;
                    parts.push(x)
                }
                _ => {
                    return Err(self.err(
                        desc,
                        format!("operand '{}' is not a quantized feature map", n.inputs[i]),
                        "quantize the model with quantize_static",
                    ))
                }
            }
        }
        let first_shape = parts.first().map(|p| (p.shape, p.signed));
        let differs = |(s, signed): ([usize; 3], bool)| {
            parts
                .iter()
                .any(|p| p.shape[..2] != s[..2] || p.signed != signed)
        };
        if parts.len() < 2 || first_shape.is_none_or(differs) {
            return Err(self.err(
                desc,
                "operands of different heights, widths or types (or only one)",
                "join feature maps of one size and type",
            ));
        }
        if n.op_type == "Concat" {
            return Ok(self.pending(desc, PendingOp::Concat { parts }));
        }
        let y = self.quant_params(desc, n, 0, 1)?;
        let p = Pending::new(desc, PendingOp::Concat { parts });
        Ok(Val::Q(self.finish(&p, y)?))
    }

    /// The concat layer, each operand quantized unlike the output first requantized to it.
    pub(super) fn emit_concat(
        &mut self,
        desc: &str,
        parts: &[QTensor],
        y: (f64, i64, bool),
    ) -> Result<QTensor, ImportError> {
        let base = super::emit::desc_name(desc);
        let mut names = vec![];
        for (k, p) in parts.iter().enumerate() {
            if same(p.scale, y.0) && p.zero_point == y.1 {
                names.push(p.name.clone());
            } else {
                names.push(self.rescale(desc, p, &format!("{base}.in{k}"), y)?);
            }
        }
        let name = self.fresh(&base, "concat");
        let list: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        let note = format!("{desc} -> '{name}': joined along the channels");
        let l = Layer {
            name,
            op: "concat",
            input: String::new(),
            keys: vec![("inputs", format!("[{}]", list.join(", ")))],
            note,
        };
        let c = parts.iter().map(|p| p.shape[2]).sum();
        Ok(self.push(l, y, [parts[0].shape[0], parts[0].shape[1], c]))
    }

    /// `x` requantized to `y`: a 1x1 depthwise layer of unit weights, the input zero point
    /// in its bias (exact), one rounding `saturate(round((x - zx) sx / sy) + zy)`.
    fn rescale(
        &mut self,
        desc: &str,
        x: &QTensor,
        name: &str,
        y: (f64, i64, bool),
    ) -> Result<String, ImportError> {
        let scale = x.scale / y.0;
        let r = self.requant_for(desc, scale, "the scale ratio")?;
        let c = x.shape[2];
        let name = self.fresh(name, "rescale");
        let keys = vec![
            ("kernel", "1".to_string()),
            ("groups", c.to_string()),
            ("out_channels", c.to_string()),
            (
                "weights",
                self.npy(&name, "weights", &[1, 1, 1, c], &vec![1; c]),
            ),
            (
                "bias",
                self.npy(&name, "bias", &[c], &vec![-x.zero_point; c]),
            ),
            ("requant", super::emit::requant_text(r, y.1)),
        ];
        let err = (r.value() / scale - 1.0).abs();
        let note = format!("{desc} -> '{name}': operand '{}' requantized to the output's scale, {scale:.6e} = {} / 2^{} (relative error {err:.1e})", x.name, r.multiplier, r.shift);
        let l = Layer {
            name: name.clone(),
            op: "conv2d",
            input: x.name.clone(),
            keys,
            note,
        };
        self.push(l, y, x.shape);
        Ok(name)
    }

    /// QDQ ConvTranspose (groups 1, square kernel, one stride, the same padding on every
    /// side, no output padding or dilation).
    pub(super) fn conv_transpose(
        &mut self,
        desc: &str,
        n: &Node,
        x: QTensor,
        w: ConstQ,
        b: Option<ConstQ>,
    ) -> Result<Val, ImportError> {
        let s = n.attr_ints_or("strides", &[1, 1]);
        let p = n.attr_ints_or("pads", &[0; 4]);
        let out_pad = n.attr_ints_or("output_padding", &[0, 0]);
        let [cin, _, kh, kw] = w.q.dims[..] else {
            return Err(self.err(
                desc,
                format!("weights of shape {:?} are not 4-D", w.q.dims),
                "check the model",
            ));
        };
        let uniform = |v: &[i64]| v.iter().all(|&e| e == v[0]);
        let ok = kh == kw
            && uniform(&s)
            && uniform(&p)
            && out_pad.iter().all(|&o| o == 0)
            && n.attr_int("group", 1) == 1
            && n.attr("output_shape").is_none()
            && !matches!(n.attr("auto_pad"), Some(AttrValue::Text(t)) if t != "NOTSET")
            && n.attr_ints("dilations")
                .is_none_or(|d| d.iter().all(|&e| e == 1))
            && s[0] >= 1
            && kh >= s[0]
            && (0..kh).contains(&p[0])
            && cin as usize == x.shape[2]
            && x.layout == Layout::Map;
        if !ok {
            return Err(self.err(desc, format!("kernel {kh}x{kw}, strides {s:?}, pads {p:?}, output_padding {out_pad:?}"), "hwgen's transposed convolution has groups 1, a square kernel of at least the stride, one stride, one padding below the kernel, and no output padding or dilation"));
        }
        let geom = (kh as usize, s[0] as usize, p[0] as usize);
        Ok(self.pending(desc, PendingOp::ConvT { x, w, b, geom }))
    }

    /// The conv_transpose layer: weights [cin][cout][k][k] as [k][k][cin][cout]; the input
    /// zero point folded per output pixel (the taps that land on it from inside the input)
    /// into an untied bias when it is not 0.
    pub(super) fn emit_conv_transpose(
        &mut self,
        desc: &str,
        x: &QTensor,
        w: &ConstQ,
        b: Option<&ConstQ>,
        (k, s, p): (usize, usize, usize),
        out: super::emit::Out,
    ) -> Result<QTensor, ImportError> {
        let [cin, cout] = [w.q.dims[0] as usize, w.q.dims[1] as usize];
        let acc: Vec<f64> = self
            .weights_of(desc, w, cout)?
            .iter()
            .map(|sc| x.scale * sc)
            .collect();
        let bias = self.bias_of(desc, b, &acc)?;
        let mut wh = vec![0i64; k * k * cin * cout];
        for ci in 0..cin {
            for co in 0..cout {
                for t in 0..k * k {
                    wh[(t * cin + ci) * cout + co] =
                        w.q.values[(ci * cout + co) * k * k + t] as i64;
                }
            }
        }
        let [h, wd, _] = x.shape;
        let (oh, ow) = ((h - 1) * s + k - 2 * p, (wd - 1) * s + k - 2 * p);
        let name = self.fresh(&super::emit::desc_name(desc), "upconv");
        let mut keys = vec![
            ("kernel", k.to_string()),
            ("stride", s.to_string()),
            ("padding", p.to_string()),
            ("out_channels", cout.to_string()),
            (
                "weights",
                self.npy(&name, "weights", &[k, k, cin, cout], &wh),
            ),
        ];
        let zx = x.zero_point;
        if zx == 0 {
            keys.push(("bias", self.npy(&name, "bias", &[cout], &bias)));
        } else {
            // Output (oy, ox) receives tap (ky, kx) of input (iy, ix) when oy = iy s - p + ky.
            let sums: Vec<i64> = (0..k * k * cout)
                .map(|i| {
                    (0..cin)
                        .map(|ci| wh[(i / cout * cin + ci) * cout + i % cout])
                        .sum()
                })
                .collect();
            let inside = |o: usize, kk: usize, n: usize| {
                let v = o as i64 + p as i64 - kk as i64;
                v >= 0 && v % s as i64 == 0 && ((v / s as i64) as usize) < n
            };
            let mut ub = vec![0i64; oh * ow * cout];
            for oy in 0..oh {
                for ox in 0..ow {
                    for co in 0..cout {
                        let taps: i64 = (0..k * k)
                            .filter(|t| inside(oy, t / k, h) && inside(ox, t % k, wd))
                            .map(|t| sums[t * cout + co])
                            .sum();
                        ub[(oy * ow + ox) * cout + co] = bias[co] - zx * taps;
                    }
                }
            }
            self.check_acc(desc, &ub)?;
            keys.push((
                "untied_bias",
                self.npy(&name, "untied_bias", &[oh, ow, cout], &ub),
            ));
        }
        let note = self.out_keys(desc, &name, &acc, out, &mut keys)?;
        let note = note.with_zero_point(zx, zx != 0);
        let l = Layer {
            name,
            op: "conv_transpose",
            input: x.name.clone(),
            keys,
            note,
        };
        Ok(self.push_out(l, out, [oh, ow, cout], &acc))
    }
}

/// Whether a concat along axis 1 of `x` is a concat of hwgen's channels: a feature map, or
/// a flat tensor of one pixel.
fn channels_last(x: &QTensor) -> bool {
    x.layout == Layout::Map || (x.layout == Layout::Flat && x.shape[..2] == [1, 1])
}
