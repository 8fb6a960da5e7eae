//! hwgen layers from the recognised operators: weights, biases with the zero point folded
//! in, requantization, and the model file at the end.

use super::{same, ConstQ, Importer, Val};
use crate::onnx::layer::{self, ConvGeom, Layer, Layout, QTensor, Requant};
use crate::onnx::proto::{dtype, Graph};
use crate::onnx::{ImportError, Imported, OutputQuant};

impl Importer<'_> {
    /// The weight scale of each of the `n` output channels (one per-tensor scale repeated,
    /// or the per-channel scales).
    pub(super) fn weights_of(
        &mut self,
        desc: &str,
        w: &ConstQ,
        n: usize,
    ) -> Result<Vec<f64>, ImportError> {
        if w.zero_point.iter().any(|&z| z != 0) {
            return Err(self.err(
                desc,
                format!(
                    "weight zero point {:?}: hwgen's weights are symmetric (zero point 0)",
                    w.zero_point
                ),
                "quantize weights symmetrically (quantize_static's default for int8 weights)",
            ));
        }
        let signed = match w.q.data_type {
            dtype::INT8 => true,
            dtype::UINT8 => false,
            t => {
                return Err(self.err(
                    desc,
                    format!("weights '{}' are {}", w.q.name, dtype::name(t)),
                    "quantize weights to int8",
                ))
            }
        };
        self.target.takes("weights", signed).map_err(|rule| {
            self.err(desc, rule, "run on a design of the model's types, or quantize the weights to the design's (quantize_static's weight_type); otherwise the host runs the graph")
        })?;
        match self.weight_signed {
            Some(s) if s != signed => {
                return Err(self.err(
                    desc,
                    "mixes int8 and uint8 weights",
                    "quantize every weight to the same type",
                ))
            }
            _ => self.weight_signed = Some(signed),
        }
        match w.scale.len() {
            1 => Ok(vec![w.scale[0]; n]),
            k if k == n => Ok(w.scale.clone()),
            k => Err(self.err(
                desc,
                format!(
                    "weights '{}' have {k} scales for {n} output channels",
                    w.q.name
                ),
                "quantize weights per tensor or per output channel",
            )),
        }
    }

    /// Layer `name`'s bias key: `bias` (one per channel), or `untied_bias` (one per pixel
    /// of an output of `shape` and channel) when it varies across the map.
    pub(super) fn bias_key(
        &mut self,
        name: &str,
        bias: &[i64],
        untied: Option<&[i64]>,
        shape: [usize; 3],
    ) -> (&'static str, String) {
        match untied {
            Some(ub) => ("untied_bias", self.npy(name, "untied_bias", &shape, ub)),
            None => ("bias", self.npy(name, "bias", &[shape[2]], bias)),
        }
    }

    /// The int32 bias at scale x_scale * w_scale (per output channel).
    pub(super) fn bias_of(
        &self,
        desc: &str,
        b: Option<&ConstQ>,
        acc_scales: &[f64],
    ) -> Result<Vec<i64>, ImportError> {
        let n = acc_scales.len();
        let Some(b) = b else { return Ok(vec![0; n]) };
        let scale = |c: usize| b.scale.get(if b.scale.len() == 1 { 0 } else { c });
        let ok_scale = (b.scale.len() == 1 || b.scale.len() == n)
            && (0..n).all(|c| scale(c).is_some_and(|&s| same(s, acc_scales[c])));
        if b.q.data_type != dtype::INT32
            || b.zero_point.iter().any(|&z| z != 0)
            || !ok_scale
            || b.q.values.len() != n
        {
            return Err(self.err(desc, format!("bias '{}' is not {n} int32 values at scale input scale x weight scale ({}) with zero point 0", b.q.name, acc_scales.first().copied().unwrap_or(0.0)), "quantize the bias as quantize_static does"));
        }
        Ok(b.q.values.iter().map(|&v| v as i64).collect())
    }

    /// Each channel's requantization (input scale x weight scale / output scale).
    pub(super) fn requants(
        &self,
        desc: &str,
        acc_scales: &[f64],
        y_scale: f64,
    ) -> Result<Vec<Requant>, ImportError> {
        acc_scales
            .iter()
            .map(|&a| {
                let scale = a / y_scale;
                self.requant_for(
                    desc,
                    scale,
                    "the scale input scale x weight scale / output scale",
                )
            })
            .collect()
    }

    /// The requantization of `scale` (named `what` in the error).
    pub(super) fn requant_for(
        &self,
        desc: &str,
        scale: f64,
        what: &str,
    ) -> Result<Requant, ImportError> {
        Requant::checked(scale, what)
            .map_err(|rule| self.err(desc, rule, "check the model's scales"))
    }

    pub(super) fn npy(&mut self, layer: &str, what: &str, shape: &[usize], data: &[i64]) -> String {
        let file = format!("{layer}.{what}.npy");
        self.tensors
            .push((file.clone(), crate::model::npy::encode_i64(shape, data)));
        format!("\"{}/{file}\"", self.data_dir)
    }

    pub(super) fn check_acc(&self, desc: &str, bias: &[i64]) -> Result<(), ImportError> {
        match bias.iter().find(|&&b| i32::try_from(b).is_err()) {
            Some(b) => Err(self.err(desc, format!("the bias with the input zero point folded in, {b}, does not fit the int32 accumulator"), "check the model's zero points and weights")),
            None => Ok(()),
        }
    }

    /// The keys that say what layer `name` writes (`requant`, or `output_type`), appended
    /// to `keys`, and its note so far.
    pub(super) fn out_keys(
        &self,
        desc: &str,
        name: &str,
        acc: &[f64],
        out: Out,
        keys: &mut Vec<(&'static str, String)>,
    ) -> Result<Note, ImportError> {
        match out {
            Out::Q(y) => {
                let r = self.requants(desc, acc, y.0)?;
                keys.push(("requant", self.requant_keys(&r, y.1)));
                let scales: Vec<f64> = acc.iter().map(|a| a / y.0).collect();
                Ok(Note(Self::note(desc, name, &scales, &r)))
            }
            Out::Acc => {
                keys.push(("output_type", "\"accumulator\"".to_string()));
                let lo = acc.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = acc.iter().copied().fold(0.0, f64::max);
                Ok(Note(format!("{desc} -> '{name}': its float output is not quantized: writes its int32 accumulator, which the host multiplies by input scale x weight scale ({lo:.6e} .. {hi:.6e}) per channel")))
            }
        }
    }

    /// Add layer `l` writing `out` (a tensor of `shape`); that tensor. An accumulator
    /// output is remembered with its dequantization: channel c's accumulator times
    /// `acc[c]`.
    pub(super) fn push_out(
        &mut self,
        l: Layer,
        out: Out,
        shape: [usize; 3],
        acc: &[f64],
    ) -> QTensor {
        match out {
            Out::Q(y) => self.push(l, y, shape),
            Out::Acc => {
                self.accumulators.insert(l.name.clone(), acc.to_vec());
                self.push(l, (1.0, 0, true), shape)
            }
        }
    }

    /// Add layer `l`, which writes a tensor of `shape` quantized as `y`; that tensor.
    pub(super) fn push(&mut self, l: Layer, y: (f64, i64, bool), shape: [usize; 3]) -> QTensor {
        let name = l.name.clone();
        self.layers.push(l);
        QTensor {
            name,
            scale: y.0,
            zero_point: y.1,
            signed: y.2,
            shape,
            layout: Layout::Map,
        }
    }

    /// The model file's `requant`: one multiplier and shift, or a list of each.
    pub(super) fn requant_keys(&self, r: &[Requant], zp: i64) -> String {
        if r.iter().all(|x| *x == r[0]) {
            return requant_text(r[0], zp);
        }
        let list = |f: &dyn Fn(&Requant) -> String| r.iter().map(f).collect::<Vec<_>>().join(", ");
        format!(
            "{{ multiplier = [{}], shift = [{}], zero_point = {zp} }}",
            list(&|x| x.multiplier.to_string()),
            list(&|x| x.shift.to_string())
        )
    }

    pub(super) fn note(desc: &str, name: &str, scales: &[f64], r: &[Requant]) -> String {
        let err = scales
            .iter()
            .zip(r)
            .map(|(s, r)| (r.value() / s - 1.0).abs())
            .fold(0.0, f64::max);
        if r.iter().all(|x| *x == r[0]) {
            format!(
                "{desc} -> '{name}': scale {:.6e} = {} / 2^{} (relative error {err:.1e})",
                scales[0], r[0].multiplier, r[0].shift
            )
        } else {
            format!("{desc} -> '{name}': per-channel scales {:.3e} .. {:.3e} as a multiplier and shift per channel (relative error at most {err:.1e})",
                scales.iter().copied().fold(f64::INFINITY, f64::min),
                scales.iter().copied().fold(0.0, f64::max))
        }
    }

    pub(super) fn emit_conv(
        &mut self,
        desc: &str,
        x: &QTensor,
        w: &ConstQ,
        b: Option<&ConstQ>,
        geom: ConvGeom,
        out: Out,
    ) -> Result<QTensor, ImportError> {
        if x.layout != Layout::Map {
            return Err(self.err(
                desc,
                "a convolution of a tensor that is not a feature map [1, C, H, W]",
                "convolve the feature map before flattening it",
            ));
        }
        let [cout, cin_g, k, _] = [0, 1, 2, 3].map(|i| w.q.dims[i] as usize);
        let acc: Vec<f64> = self
            .weights_of(desc, w, cout)?
            .iter()
            .map(|s| x.scale * s)
            .collect();
        let [h, wd, _] = x.shape;
        if h + 2 * geom.pad < k || wd + 2 * geom.pad < k {
            return Err(self.err(
                desc,
                format!(
                    "a {k}x{k} kernel over a {h}x{wd} input with padding {}",
                    geom.pad
                ),
                "check the model",
            ));
        }
        let bias = self.bias_of(desc, b, &acc)?;
        let wh = layer::conv_weights(&w.q.values, cout, cin_g, k);
        let bias = layer::fold_zero_point(&bias, &wh, cout, x.zero_point);
        self.check_acc(desc, &bias)?;
        let name = self.fresh(&desc_name(desc), "conv");
        let shape = [geom.out(h), geom.out(wd), cout];
        let mut keys = vec![
            ("kernel", k.to_string()),
            ("stride", geom.stride.to_string()),
            ("padding", geom.pad.to_string()),
            ("groups", geom.groups.to_string()),
            ("out_channels", cout.to_string()),
            (
                "weights",
                self.npy(&name, "weights", &[k, k, cin_g, cout], &wh),
            ),
            ("bias", self.npy(&name, "bias", &[cout], &bias)),
        ];
        keys.extend(pad_value_key(geom, x.zero_point));
        let note = self.out_keys(desc, &name, &acc, out, &mut keys)?;
        let note = note.with_zero_point(x.zero_point, geom.pad > 0);
        let l = Layer {
            name,
            op: "conv2d",
            input: x.name.clone(),
            keys,
            note,
        };
        Ok(self.push_out(l, out, shape, &acc))
    }

    pub(super) fn emit_fc(
        &mut self,
        desc: &str,
        x: &QTensor,
        w: &ConstQ,
        b: Option<&ConstQ>,
        trans: bool,
        out: Out,
    ) -> Result<QTensor, ImportError> {
        let k_in: usize = x.shape.iter().product();
        let (k, n) = match w.q.dims[..] {
            [a, b] if trans => (b as usize, a as usize),
            [a, b] => (a as usize, b as usize),
            _ => {
                return Err(self.err(
                    desc,
                    format!("weights of shape {:?} are not 2-D", w.q.dims),
                    "check the model",
                ))
            }
        };
        if x.layout == Layout::Seq && k == x.shape[2] {
            return self.emit_token_linear(desc, x, w, b, (k, n, trans), out);
        }
        if k != k_in || (x.layout != Layout::Flat && x.shape[0] * x.shape[1] > 1) {
            return Err(self.err(
                desc,
                format!(
                    "a {k}x{n} weight matrix over an input of shape {:?} ({k_in} values{})",
                    x.layout.onnx_dims(x.shape),
                    if x.layout == Layout::Flat {
                        ""
                    } else {
                        ", not flattened"
                    }
                ),
                "flatten the input to [1, K] first, or give a sequence [1, S, K]",
            ));
        }
        let acc: Vec<f64> = self
            .weights_of(desc, w, n)?
            .iter()
            .map(|s| x.scale * s)
            .collect();
        let bias = self.bias_of(desc, b, &acc)?;
        let wh = layer::fc_weights(&w.q.values, trans, x.shape, x.layout, n);
        let bias = layer::fold_zero_point(&bias, &wh, n, x.zero_point);
        self.check_acc(desc, &bias)?;
        let name = self.fresh(&desc_name(desc), "fc");
        let mut keys = vec![
            ("out_channels", n.to_string()),
            ("weights", self.npy(&name, "weights", &[k, n], &wh)),
            ("bias", self.npy(&name, "bias", &[n], &bias)),
        ];
        let note = self.out_keys(desc, &name, &acc, out, &mut keys)?;
        let note = note.with_zero_point(x.zero_point, false);
        let l = Layer {
            name,
            op: "fc",
            input: x.name.clone(),
            keys,
            note,
        };
        let q = self.push_out(l, out, [1, 1, n], &acc);
        Ok(QTensor {
            layout: Layout::Flat,
            ..q
        })
    }

    /// A MatMul (or Gemm) of a sequence `[1, S, K]` with constant `[K, N]` weights (`[N, K]`
    /// when `trans`): the same linear map of every token, a 1x1 convolution over hwgen's
    /// `[S, 1, K]`, writing the sequence `[1, S, N]`.
    fn emit_token_linear(
        &mut self,
        desc: &str,
        x: &QTensor,
        w: &ConstQ,
        b: Option<&ConstQ>,
        (k, n, trans): (usize, usize, bool),
        out: Out,
    ) -> Result<QTensor, ImportError> {
        // As ONNX Conv weights [N, K, 1, 1].
        let mut conv = w.clone();
        conv.q.dims = vec![n as i64, k as i64, 1, 1];
        if !trans {
            conv.q.values = (0..n * k)
                .map(|i| w.q.values[(i % k) * n + i / k])
                .collect();
        }
        let geom = ConvGeom {
            k: 1,
            stride: 1,
            pad: 0,
            groups: 1,
        };
        let map = QTensor {
            layout: Layout::Map,
            ..x.clone()
        };
        let q = self.emit_conv(desc, &map, &conv, b, geom, out)?;
        Ok(QTensor {
            layout: Layout::Seq,
            ..q
        })
    }

    pub(super) fn emit_maxpool(&mut self, desc: &str, x: &QTensor, geom: ConvGeom) -> QTensor {
        let name = self.fresh(&desc_name(desc), "maxpool");
        let keys = vec![
            ("kernel", geom.k.to_string()),
            ("stride", geom.stride.to_string()),
            ("padding", geom.pad.to_string()),
        ];
        let note = format!("{desc} -> '{name}': max-pool, quantization kept");
        self.layers.push(Layer {
            name: name.clone(),
            op: "maxpool",
            input: x.name.clone(),
            keys,
            note,
        });
        let [h, w, c] = x.shape;
        QTensor {
            name,
            shape: [geom.out(h), geom.out(w), c],
            layout: Layout::Map,
            ..x.clone()
        }
    }

    /// The model file, once every node is read.
    /// The model file, once every node is read, with the graph's outputs.
    pub(in crate::onnx) fn finish_graph(
        self,
        g: &Graph,
        model_name: &str,
        input_data: Option<&str>,
    ) -> Result<Imported, ImportError> {
        let outs: Vec<(String, Option<usize>)> = g
            .outputs
            .iter()
            .map(|o| (o.name.clone(), o.shape.as_ref().map(Vec::len)))
            .collect();
        self.finish_with(&outs, model_name, input_data)
    }

    /// The model file whose outputs are the ONNX tensors `outs` (name, and the rank the
    /// graph declares for it, if it does), each a layer's output.
    pub(in crate::onnx) fn finish_with(
        mut self,
        outs: &[(String, Option<usize>)],
        model_name: &str,
        input_data: Option<&str>,
    ) -> Result<Imported, ImportError> {
        let mut inputs = std::mem::take(&mut self.inputs);
        if inputs.is_empty() {
            return Err(self.err(
                "",
                "no graph input is ever quantized",
                "quantize the model with quantize_static",
            ));
        }
        let order =
            |q: &crate::onnx::InputQuant| self.input_order.iter().position(|o| *o == q.onnx);
        inputs.sort_by_key(order);
        let mut outputs = vec![];
        let mut quant = vec![];
        for (name, rank) in outs {
            if let Some(Val::Pending(p)) = self.vals.get(name) {
                let p = (**p).clone();
                let x = self.finish_accumulator(&p)?;
                self.vals.insert(name.clone(), Val::Dq(x.clone()));
                if !outputs.contains(&x.name) {
                    outputs.push(x.name.clone());
                }
                quant.push(OutputQuant {
                    onnx: name.clone(),
                    layer: x.name.clone(),
                    scale: 1.0,
                    zero_point: 0,
                    signed: true,
                    float: true,
                    shape: x.shape,
                    layout: declared(&x, *rank),
                    accumulator: self.accumulators.get(&x.name).cloned(),
                });
                continue;
            }
            match self.vals.get(name) {
                Some(v @ (Val::Q(x) | Val::Dq(x))) if !inputs.iter().any(|i| i.name == x.name) => {
                    if !outputs.contains(&x.name) {
                        outputs.push(x.name.clone());
                    }
                    quant.push(OutputQuant {
                        onnx: name.clone(),
                        layer: x.name.clone(),
                        scale: x.scale,
                        zero_point: x.zero_point,
                        signed: x.signed,
                        float: matches!(v, Val::Dq(_)),
                        shape: x.shape,
                        layout: declared(x, *rank),
                        accumulator: self.accumulators.get(&x.name).cloned(),
                    });
                }
                _ => return Err(self.err(
                    "",
                    format!("graph output '{name}' is not the quantized output of an operator"),
                    "end the graph with a quantized operator (and optionally a DequantizeLinear)",
                )),
            }
        }
        let ty = |signed: bool| if signed { "int8" } else { "uint8" };
        let mut toml = format!("# Imported by hwgen from {} (quantized ONNX).\n", self.file);
        for q in &inputs {
            toml += &format!(
                "# Input '{}' is quantized with scale {:e} and zero point {}.\n",
                q.onnx, q.scale, q.zero_point
            );
        }
        toml += &format!(
            "name = \"{model_name}\"\ntype = \"{}\"\nweight_type = \"{}\"\nrounding = \"half_even\"      # as ONNX rounds\noutputs = [{}]\n",
            ty(inputs[0].signed),
            ty(self.weight_signed.unwrap_or(true)),
            outputs
                .iter()
                .map(|o| format!("\"{o}\""))
                .collect::<Vec<_>>()
                .join(", "),
        );
        let section = if inputs.len() == 1 {
            "[input]"
        } else {
            "[[input]]"
        };
        for (k, q) in inputs.iter().enumerate() {
            let [h, w, c] = q.shape;
            toml += &format!(
                "\n{section}\nname = \"{}\"\nshape = [{h}, {w}, {c}]\n",
                q.name
            );
            if let Some(d) = input_data {
                toml += &format!("data = \"{}\"\n", crate::onnx::input_data_file(d, k));
            }
        }
        if self.layers.is_empty() {
            return Err(self.err(
                "",
                "the graph has no operator the accelerator runs",
                "import a model with at least one Conv, Gemm, MatMul or MaxPool",
            ));
        }
        for l in &self.layers {
            l.toml(&mut toml);
        }
        Ok(Imported {
            toml,
            notes: self.layers.iter().map(|l| l.note.clone()).collect(),
            tensors: self.tensors,
            inputs,
            outputs: quant,
        })
    }
}

/// The name inside "node 'name' (Op)", or "Op" for an unnamed node.
/// The `pad_value` key of a convolution of geometry `geom` over an input of zero point
/// `zx`: the padding reads the zero point, as ONNX's `x - zx` padding with zeros does.
/// What a convolution-like layer writes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Out {
    /// Requantized to (scale, zero point, signed).
    Q((f64, i64, bool)),
    /// Its accumulator (`output_type = "accumulator"`): the float output of an operator
    /// whose output the graph does not quantize, which the host dequantizes.
    Acc,
}

/// A layer's note for the report, before the input zero point's part.
pub(super) struct Note(String);

impl Note {
    /// The note, saying where a non-zero input zero point went.
    pub(super) fn with_zero_point(self, zx: i64, padded: bool) -> String {
        let mut s = self.0;
        if zx != 0 {
            s.push_str(&format!(
                "; input zero point {zx} folded into the bias{}",
                if padded {
                    " (the padding reads it: pad_value)"
                } else {
                    ""
                }
            ));
        }
        s
    }
}

pub(super) fn pad_value_key(geom: ConvGeom, zx: i64) -> Option<(&'static str, String)> {
    (geom.pad > 0 && zx != 0).then(|| ("pad_value", zx.to_string()))
}

pub(super) fn desc_name(desc: &str) -> String {
    match desc.split('\'').nth(1) {
        Some(n) => n.to_string(),
        None => desc
            .rsplit('(')
            .next()
            .unwrap_or("")
            .trim_end_matches(')')
            .to_string(),
    }
}

/// The model file's `requant` of one multiplier and shift.
pub(super) fn requant_text(r: Requant, zero_point: i64) -> String {
    format!(
        "{{ multiplier = {}, shift = {}, zero_point = {zero_point} }}",
        r.multiplier, r.shift
    )
}

/// The layout a graph output of ONNX rank `rank` (when the graph declares it) holds tensor
/// `x` in: a one-pixel tensor is `[1, C]` or `[1, C, 1, 1]` as declared (the same element
/// order); otherwise the tensor's own.
fn declared(x: &QTensor, rank: Option<usize>) -> Layout {
    match (rank, x.layout) {
        (Some(2), Layout::Map) if x.shape[..2] == [1, 1] => Layout::Flat,
        (Some(4), Layout::Flat) if x.shape[..2] == [1, 1] => Layout::Map,
        (_, l) => l,
    }
}
