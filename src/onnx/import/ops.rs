//! The operators of both forms: QDQ's float operators between DequantizeLinear and
//! QuantizeLinear, QOperator's QLinear operators, and the ones that only re-describe a
//! tensor (max-pool, ReLU, flatten).

use super::eltwise::clip_code;
use super::emit::Out;
use super::{same, ConstQ, Importer, Pending, PendingOp, Val};
use crate::onnx::layer::{ConvGeom, Layout, QTensor};
use crate::onnx::proto::{AttrValue, Node};
use crate::onnx::ImportError;

impl Importer<'_> {
    /// QDQ: Conv, Gemm or MatMul on dequantized inputs; waits for its QuantizeLinear.
    pub(super) fn float_op(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        if n.op_type == "MatMul" {
            if let Some(v) = self.product(desc, n)? {
                return Ok(v);
            }
        }
        let x = match self.val(desc, &n.inputs[0])? {
            Val::Dq(x) => x,
            _ => {
                return Err(self.err(
                    desc,
                    "its input is not dequantized from a quantized tensor",
                    "quantize the model in QDQ form (quantize_static, quant_format=QDQ)",
                ))
            }
        };
        let wq = |s: &Self, i: usize| match n.inputs.get(i).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(name) => match s.val(desc, name) {
                Ok(Val::DqConst(c, axis)) => Ok(Some(s.centred(desc, c, axis)?)),
                Err(_) => Err(s.outside(desc, n, i)),
                _ => Err(s.err(
                    desc,
                    format!(
                        "input '{name}' is not a dequantized constant (quantized weights or bias)"
                    ),
                    "quantize the weights (quantize_static quantizes them by default)",
                )),
            },
        };
        let w = wq(self, 1)?.ok_or_else(|| self.err(desc, "has no weights", "check the model"))?;
        let b = wq(self, 2)?;
        let op = match n.op_type.as_str() {
            "ConvTranspose" => return self.conv_transpose(desc, n, x, w, b),
            "Conv" => PendingOp::Conv {
                geom: self.conv_geom(desc, n, &w.q, x.shape[2])?,
                x,
                w,
                b,
            },
            "MatMul" => PendingOp::Fc {
                x,
                w,
                b: None,
                trans: false,
            },
            _ => {
                if n.attr_int("transA", 0) != 0
                    || !matches!(n.attr("alpha"), None | Some(AttrValue::Float(1.0)))
                    || !matches!(n.attr("beta"), None | Some(AttrValue::Float(1.0)))
                {
                    return Err(self.err(
                        desc,
                        "Gemm with transA, alpha or beta other than 0, 1, 1",
                        "export the linear layer as Gemm(A, B, C) with alpha = beta = 1",
                    ));
                }
                PendingOp::Fc {
                    x,
                    w,
                    b,
                    trans: n.attr_int("transB", 0) != 0,
                }
            }
        };
        Ok(self.pending(desc, op))
    }

    /// QOperator: QLinearConv (x, xs, xz, w, ws, wz, ys, yz, B), QLinearMatMul (a, as, az,
    /// b, bs, bz, ys, yz) or onnxruntime's QGemm (a, as, az, b, bs, bz, C, ys, yz).
    pub(super) fn qlinear(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        let x = self.q_input(desc, n, 0)?;
        let xs = x.scale;
        let name = |i: usize| n.inputs.get(i).cloned().unwrap_or_default();
        let q = self.constant(desc, &name(3))?.clone();
        let scale = self.scales(desc, &name(4))?;
        let zero_point = self.zero_points(desc, &q, &scale, Some(&name(5)))?;
        let w = ConstQ {
            q,
            scale,
            zero_point,
        };
        let gemm = n.op_type == "QGemm";
        // The weights' zero points run along the output channels: a convolution's first
        // axis, a product's columns (a transposed Gemm's rows).
        let axis = match n.op_type.as_str() {
            "QLinearConv" => 0,
            _ if gemm && n.attr_int("transB", 0) != 0 => 0,
            _ => -1,
        };
        let w = self.centred(desc, w, axis)?;
        let y = if gemm {
            self.quant_params(desc, n, 7, 8)?
        } else {
            self.quant_params(desc, n, 6, 7)?
        };
        let bias = |s: &Self, i: usize| match n.inputs.get(i).filter(|b| !b.is_empty()) {
            Some(b) => Ok(Some(ConstQ {
                q: s.constant(desc, b)?.clone(),
                scale: w.scale.iter().map(|ws| xs * ws).collect(),
                zero_point: vec![0],
            })),
            None => Ok(None),
        };
        let op = match n.op_type.as_str() {
            "QLinearConv" => PendingOp::Conv {
                geom: self.conv_geom(desc, n, &w.q, x.shape[2])?,
                b: bias(self, 8)?,
                x,
                w,
            },
            "QGemm" => {
                if n.attr_int("transA", 0) != 0
                    || !matches!(n.attr("alpha"), None | Some(AttrValue::Float(1.0)))
                {
                    return Err(self.err(
                        desc,
                        "QGemm with transA or alpha other than 0, 1",
                        "export the linear layer as Gemm(A, B, C) with alpha = 1",
                    ));
                }
                PendingOp::Fc {
                    b: bias(self, 6)?,
                    trans: n.attr_int("transB", 0) != 0,
                    x,
                    w,
                }
            }
            _ => PendingOp::Fc {
                x,
                w,
                b: None,
                trans: false,
            },
        };
        Ok(Val::Q(self.finish(&Pending::new(desc, op), y)?))
    }

    /// A pooling node's window: square, one stride, one padding, no dilation, ceil_mode 0,
    /// explicit pads (auto_pad NOTSET or VALID), one output.
    fn pool_geom(&self, desc: &str, n: &Node) -> Result<ConvGeom, ImportError> {
        if matches!(n.attr("auto_pad"), Some(AttrValue::Text(t)) if t != "NOTSET" && t != "VALID") {
            return Err(self.err(
                desc,
                "auto_pad SAME_UPPER or SAME_LOWER",
                "export the pooling with explicit pads",
            ));
        }
        let k = n.attr_ints("kernel_shape").unwrap_or_default();
        let s = n.attr_ints_or("strides", &[1, 1]);
        let p = n.attr_ints_or("pads", &[0; 4]);
        let square = k.len() == 2
            && k[0] == k[1]
            && s.iter().all(|&v| v == s[0])
            && p.iter().all(|&v| v == p[0]);
        if !square
            || n.attr_int("ceil_mode", 0) != 0
            || n.attr_ints("dilations")
                .is_some_and(|d| d.iter().any(|&v| v != 1))
            || n.outputs.len() > 1
        {
            return Err(self.err(desc, format!("kernel {k:?}, strides {s:?}, pads {p:?}"), "hwgen's pooling has a square kernel, one stride, one padding, ceil_mode 0 and no indices output"));
        }
        if !(k[0] >= 1 && s[0] >= 1 && (0..k[0]).contains(&p[0])) {
            return Err(self.err(
                desc,
                format!("kernel {}, stride {}, padding {}", k[0], s[0], p[0]),
                "a pooling needs a kernel of at least 1, a stride of at least 1 and a padding below the kernel",
            ));
        }
        Ok(ConvGeom {
            k: k[0] as usize,
            stride: s[0] as usize,
            pad: p[0] as usize,
            groups: 1,
        })
    }

    pub(super) fn maxpool(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        let geom = self.pool_geom(desc, n)?;
        let x = self.val(desc, &n.inputs[0])?;
        if let Val::Q(t) | Val::Dq(t) = &x {
            let [h, w, _] = t.shape;
            if t.layout != Layout::Map || h + 2 * geom.pad < geom.k || w + 2 * geom.pad < geom.k {
                return Err(self.err(
                    desc,
                    format!(
                        "a {k}x{k} max-pool over a {h}x{w} map with padding {}: the window does not fit",
                        geom.pad,
                        k = geom.k
                    ),
                    "give the pooling a kernel no larger than its input plus padding",
                ));
            }
        }
        match x {
            Val::Q(x) => Ok(Val::Q(self.emit_maxpool(desc, &x, geom))),
            Val::Dq(x) => Ok(self.pending(desc, PendingOp::MaxPool { x, geom })),
            _ => Err(self.err(
                desc,
                "its input is not quantized",
                "quantize the model with quantize_static",
            )),
        }
    }

    /// AveragePool (QDQ) or onnxruntime's QLinearAveragePool: a depthwise convolution of
    /// unit weights (`emit_avg_pool`). Padding must count (count_include_pad = 1, PyTorch's
    /// default export), or there must be none: otherwise the border windows divide by
    /// fewer taps than the others.
    pub(super) fn avgpool(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        let geom = self.pool_geom(desc, n)?;
        if geom.pad > 0 && n.attr_int("count_include_pad", 0) == 0 {
            return Err(self.err(
                desc,
                format!("padding {} with count_include_pad = 0: the border windows average fewer inputs", geom.pad),
                "export the pooling with count_include_pad = 1 (PyTorch's default) or without padding",
            ));
        }
        match self.val(desc, &n.inputs[0])? {
            Val::Dq(x) if n.op_type == "AveragePool" => {
                Ok(self.pending(desc, PendingOp::AvgPool { x, geom }))
            }
            Val::Q(_) if n.op_type == "QLinearAveragePool" => {
                if n.attr_int("channels_last", 0) != 0 {
                    return Err(self.err(
                        desc,
                        "channels_last = 1",
                        "export the pooling channels first",
                    ));
                }
                let x = self.q_input(desc, n, 0)?;
                let y = self.quant_params(desc, n, 3, 4)?;
                let p = Pending::new(desc, PendingOp::AvgPool { x, geom });
                Ok(Val::Q(self.finish(&p, y)?))
            }
            _ => Err(self.err(
                desc,
                "its input is not quantized",
                "quantize the model with quantize_static",
            )),
        }
    }

    pub(super) fn relu(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        match self.val(desc, &n.inputs[0])? {
            Val::Pending(mut p) => {
                p.relu = true;
                Ok(Val::Pending(p))
            }
            Val::Dq(x) => Ok(Val::Pending(Box::new(Pending {
                relu: true,
                ..Pending::new(desc, PendingOp::Relu { x })
            }))),
            Val::Q(x) => Ok(Val::Q(self.fold_relu(desc, &x)?)),
            _ => Err(self.err(
                desc,
                "its input is not quantized",
                "quantize the model with quantize_static",
            )),
        }
    }

    /// ReLU in the quantized domain is max(q, zero point): the layer that wrote `x` applies
    /// it, when nothing else reads `x`.
    pub(super) fn fold_relu(&mut self, desc: &str, x: &QTensor) -> Result<QTensor, ImportError> {
        self.fold_activation(desc, x, None)
    }

    /// ReLU (`clamp` None) or a clip to `clamp` by the layer that wrote `x`, when nothing
    /// else reads `x`.
    pub(super) fn fold_activation(
        &mut self,
        desc: &str,
        x: &QTensor,
        clamp: Option<i64>,
    ) -> Result<QTensor, ImportError> {
        let readers = self
            .produced
            .get(&x.name)
            .map_or(0, |o| self.real_readers(o));
        if readers != 1 {
            return Err(self.err(
                desc,
                format!(
                    "an activation of '{}', which {readers} operators or graph outputs read",
                    x.name
                ),
                "give the activation's input no other reader",
            ));
        }
        self.add_activation(desc, &x.name, clamp)?;
        Ok(x.clone())
    }

    /// Operators and graph outputs that read ONNX tensor `name`, looking through the
    /// operators that only re-describe it (DequantizeLinear, Flatten, Reshape).
    pub(super) fn real_readers(&self, name: &str) -> usize {
        let through = |op: &str| matches!(op, "DequantizeLinear" | "Flatten" | "Reshape");
        let mut n = usize::from(self.graph_outputs.contains(name));
        for (op, out) in self.readers.get(name).map_or(&[][..], Vec::as_slice) {
            n += if through(op) {
                self.real_readers(out)
            } else {
                1
            };
        }
        n
    }

    pub(super) fn add_relu(&mut self, desc: &str, name: &str) -> Result<(), ImportError> {
        self.add_activation(desc, name, None)
    }

    /// ReLU (`clamp` None) or a clip from the zero point to `clamp` (ReLU6), applied by the
    /// convolution, fully-connected or add layer that wrote `name`.
    pub(super) fn add_activation(
        &mut self,
        desc: &str,
        name: &str,
        clamp: Option<i64>,
    ) -> Result<(), ImportError> {
        let layer = self.layers.iter_mut().find(|l| l.name == name);
        match layer {
            Some(l)
                if matches!(l.op, "conv2d" | "conv_transpose" | "fc" | "add")
                    && !l.keys.iter().any(|(k, _)| *k == "activation") =>
            {
                match clamp {
                    None => {
                        l.keys.push(("activation", "\"relu\"".into()));
                        l.note.push_str("; ReLU fused (max(q, zero point))");
                    }
                    Some(hi) => {
                        l.keys.push(("activation", "\"relu6\"".into()));
                        l.keys.push(("relu6_max", hi.to_string()));
                        l.note.push_str(&format!("; Clip fused (zero point .. {hi})"));
                    }
                }
                Ok(())
            }
            _ => Err(self.err(desc, format!("an activation of '{name}', which is not the output of a convolution, fully-connected or add layer (or already has one)"), "put the ReLU or Clip right after a Conv, Gemm, MatMul or Add")),
        }
    }

    pub(super) fn flatten(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        let flat =
            |s: &Self, x: QTensor| {
                if x.layout == Layout::Seq && x.shape[0] * x.shape[1] > 1 {
                    return Err(s.err(
                    desc,
                    format!("a flatten of a sequence of {} tokens", x.shape[0] * x.shape[1]),
                    "apply the linear layer to each token ([1, S, D] MatMul) instead of flattening",
                ));
                }
                if matches!(
                    x.layout,
                    Layout::Split(_) | Layout::Heads(_) | Layout::HeadsT(_) | Layout::Keys { .. }
                ) {
                    return Err(s.err(
                        desc,
                        "a flatten of attention's heads",
                        "merge the heads into [1, S, D] first",
                    ));
                }
                Ok(QTensor {
                    layout: Layout::Flat,
                    ..x
                })
            };
        if n.op_type == "Flatten" && n.attr_int("axis", 1) != 1 {
            return Err(self.err(
                desc,
                "Flatten with an axis other than 1",
                "flatten to [1, K]",
            ));
        }
        if n.op_type == "Reshape" {
            if let Some(v) = self.reshape_heads(desc, n)? {
                return Ok(v);
            }
            let shape = &self
                .constant(desc, n.inputs.get(1).map_or("", String::as_str))?
                .values;
            if !(shape.len() == 2 && (shape[0] == 1.0 || shape[0] == -1.0 || shape[0] == 0.0)) {
                return Err(self.err(desc, format!("Reshape to {shape:?}"), "only a reshape to [1, K] (a flatten) is folded into the fully-connected layer's addressing"));
            }
        }
        match self.val(desc, &n.inputs[0])? {
            Val::Q(x) => Ok(Val::Q(flat(self, x)?)),
            Val::Dq(x) => Ok(Val::Dq(flat(self, x)?)),
            _ => Err(self.err(
                desc,
                "its input is not quantized",
                "quantize the model with quantize_static",
            )),
        }
    }

    /// A pending float operator quantized to `y` (scale, zero point, signed).
    /// A pending convolution, transposed convolution or matrix product whose float output
    /// the graph does not quantize (a graph output, or a tensor the host reads): its layer
    /// writes its accumulator (`Out::Acc`), which the host dequantizes. A Gemm's output is
    /// 2-D.
    pub(super) fn finish_accumulator(&mut self, p: &Pending) -> Result<QTensor, ImportError> {
        let desc = p.node.as_str();
        if !writes_accumulator(p) {
            return Err(self.err(
                desc,
                "its float output is not quantized; the accelerator writes the unquantized output of a Conv, ConvTranspose, Gemm or MatMul (its int32 accumulator, dequantized on the host) with no activation after it",
                "quantize the output (quantize_static does unless told not to)",
            ));
        }
        match &p.op {
            PendingOp::Conv { x, w, b, geom } => {
                self.emit_conv(desc, x, w, b.as_ref(), *geom, Out::Acc)
            }
            PendingOp::ConvT { x, w, b, geom } => {
                self.emit_conv_transpose(desc, x, w, b.as_ref(), *geom, Out::Acc)
            }
            PendingOp::Fc { x, w, b, trans } => {
                self.emit_fc(desc, x, w, b.as_ref(), *trans, Out::Acc)
            }
            _ => unreachable!("writes_accumulator accepts these operators only"),
        }
    }

    pub(super) fn finish(
        &mut self,
        p: &Pending,
        y: (f64, i64, bool),
    ) -> Result<QTensor, ImportError> {
        let desc = p.node.as_str();
        self.set_signed(desc, y.2)?;
        let out = match &p.op {
            PendingOp::MaxPool { x, .. }
            | PendingOp::Relu { x }
            | PendingOp::Upsample { x, .. }
                if !(same(x.scale, y.0) && x.zero_point == y.1) =>
            {
                return Err(self.err(
                    desc,
                    format!(
                        "output scale {} zero point {} differ from the input's {} / {}",
                        y.0, y.1, x.scale, x.zero_point
                    ),
                    "a max-pool, ReLU or Resize keeps its input's quantization (quantize_static does so)",
                ));
            }
            PendingOp::MaxPool { x, geom } => {
                let q = self.emit_maxpool(desc, x, *geom);
                if p.relu {
                    return Err(self.err(
                        desc,
                        "ReLU after a max-pool",
                        "put the ReLU before the max-pool",
                    ));
                }
                q
            }
            PendingOp::Relu { x } => return self.fold_relu(desc, x),
            PendingOp::Upsample { .. } if p.relu || p.clip_hi.is_some() => {
                return Err(self.err(
                    desc,
                    "an activation after a Resize",
                    "put the activation before the Resize",
                ));
            }
            PendingOp::Upsample { x, factor } => self.emit_upsample(desc, x, *factor),
            PendingOp::Clip { x, lo, hi } => return self.fold_clip(desc, x, *lo, *hi, y),
            PendingOp::Binary { a, b, op } => self.emit_binary(desc, (a, b, *op), y)?,
            PendingOp::Affine(f) => self.emit_affine(desc, f, y)?,
            PendingOp::GlobalPool { x } => self.emit_global_pool(desc, x, y)?,
            PendingOp::AvgPool { x, geom } => self.emit_avg_pool(desc, x, *geom, y)?,
            PendingOp::Concat { parts } => self.emit_concat(desc, parts, y)?,
            PendingOp::ConvT { x, w, b, geom } => {
                self.emit_conv_transpose(desc, x, w, b.as_ref(), *geom, Out::Q(y))?
            }
            PendingOp::Conv { x, w, b, geom } => {
                self.emit_conv(desc, x, w, b.as_ref(), *geom, Out::Q(y))?
            }
            PendingOp::Fc { x, w, b, trans } => {
                self.emit_fc(desc, x, w, b.as_ref(), *trans, Out::Q(y))?
            }
            PendingOp::Rows(op) => self.emit_rows(desc, op, y)?,
        };
        if let Some(hi) = p.clip_hi {
            self.add_activation(desc, &out.name, Some(clip_code(hi, y)))?;
        } else if p.relu {
            self.add_relu(desc, &out.name)?;
        }
        Ok(out)
    }
}

/// Whether pending operator `p` can end a segment unquantized: a convolution, transposed
/// convolution or matrix product with no activation after it writes its accumulator.
pub(super) fn writes_accumulator(p: &Pending) -> bool {
    !p.relu
        && p.clip_hi.is_none()
        && matches!(
            p.op,
            PendingOp::Conv { .. } | PendingOp::ConvT { .. } | PendingOp::Fc { .. }
        )
}
