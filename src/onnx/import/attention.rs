//! Transformer operators: the views attention takes of a sequence (a Reshape into heads and
//! back, Transpose), which cost nothing in hwgen's layout (a `[1, S, D]` sequence is
//! `[S, 1, D]` with the heads side by side in the channels, `Layout`); a MatMul of two
//! activations (`matmul`, per head, the second operand transposed by the load unit); and
//! Softmax and LayerNormalization on the row unit.

use super::emit::{desc_name, requant_text};
use super::patterns::Decomposed;
use super::{Importer, PendingOp, Val};
use crate::onnx::layer::{Layer, Layout, QTensor, Requant};
use crate::onnx::proto::{AttrValue, Node};
use crate::onnx::ImportError;

/// An operator of the row unit or a product of two activations, waiting for its
/// QuantizeLinear.
#[derive(Clone)]
pub(super) enum RowLayer {
    /// Softmax along the last axis, per head.
    Softmax { x: QTensor, heads: usize },
    /// LayerNormalization over the last axis (float32 gamma and beta).
    LayerNorm {
        x: QTensor,
        gamma: Vec<f32>,
        beta: Vec<f32>,
        epsilon: f32,
    },
    /// A function of the row unit's spline stage (`erf`, or `gelu` with its form) of the
    /// input at scale `scale` (the input's, times a constant factor a Div or Mul before it
    /// folded in).
    Function {
        x: QTensor,
        op: &'static str,
        approximate: bool,
        scale: f64,
    },
    /// `a b` (or `a b^T` when `b` is transposed), per head, over `keys` keys per head (b's
    /// pixels, or padded to whole channel tiles: `matmul`'s `keys`).
    Product {
        a: QTensor,
        b: QTensor,
        transpose_b: bool,
        heads: usize,
        keys: usize,
    },
}

/// A view's input tensor, and whether it was quantized (`Val::Q`) or dequantized
/// (`Val::Dq`): the constructor of the view's value.
type View = (QTensor, fn(QTensor) -> Val);

/// The layout `perm` makes of a tensor of layout `from`, when the addressing folds it.
fn transposed(from: Layout, perm: &[i64]) -> Option<Layout> {
    Some(match (from, perm) {
        (Layout::Split(h), [0, 2, 1, 3]) => Layout::Heads(h),
        (Layout::Split(h), [0, 2, 3, 1]) => Layout::HeadsT(h),
        (Layout::Heads(h), [0, 2, 1, 3]) => Layout::Split(h),
        (Layout::Heads(h), [0, 1, 3, 2]) => Layout::HeadsT(h),
        (Layout::HeadsT(h), [0, 1, 3, 2]) => Layout::Heads(h),
        (Layout::HeadsT(h), [0, 3, 1, 2]) => Layout::Split(h),
        (Layout::SeqT, [0, 2, 1]) => Layout::Seq,
        (Layout::Seq, [0, 2, 1]) => Layout::SeqT,
        (l, p) if p.iter().enumerate().all(|(i, &v)| v == i as i64) => l,
        _ => return None,
    })
}

impl Importer<'_> {
    /// The quantized or dequantized tensor a view reads, and a constructor of the same kind.
    fn view_input(&self, desc: &str, n: &Node) -> Result<View, ImportError> {
        match self.val(desc, &n.inputs[0])? {
            // (A view of padded keys would read the padding as elements.)
            Val::Q(x) | Val::Dq(x) if matches!(x.layout, Layout::Keys { .. }) => Err(self.err(
                desc,
                "a view of attention's scores whose keys are padded to whole channel tiles",
                "the accelerator takes the scores to a Softmax and the weighted values; otherwise the host runs it",
            )),
            Val::Q(x) => Ok((x, Val::Q)),
            Val::Dq(x) => Ok((x, Val::Dq)),
            _ => Err(self.err(
                desc,
                "its input is not a quantized activation",
                "quantize the model with quantize_static",
            )),
        }
    }

    /// Transpose: attention's head split (`[1, S, H, D/H]` to `[1, H, S, D/H]`, or to
    /// `[1, H, D/H, S]` for the keys) and merge, and a map's pixels made tokens (`[1, C, S]`
    /// to `[1, S, C]`), which the loads and stores address.
    pub(super) fn transpose(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        let (x, kind) = self.view_input(desc, n)?;
        let rank = x.layout.onnx_dims(x.shape).len();
        let perm = n.attr_ints_or("perm", &(0..rank as i64).rev().collect::<Vec<_>>());
        match transposed(x.layout, &perm) {
            Some(layout) => Ok(kind(QTensor { layout, ..x })),
            None => Err(self.err(
                desc,
                format!(
                    "Transpose {perm:?} of a tensor {:?}",
                    x.layout.onnx_dims(x.shape)
                ),
                "the accelerator folds attention's head transposes ([1, S, H, D/H] to [1, H, S, D/H] or [1, H, D/H, S], and back)",
            )),
        }
    }

    /// A Reshape of a sequence into heads (`[1, S, D]` to `[1, S, H, D/H]`) or back, of a
    /// map into its pixels (`[1, C, H, W]` to `[1, C, H*W]`), or to the shape it has; None
    /// when the target is 2-D (a flatten, `flatten`).
    pub(super) fn reshape_heads(
        &mut self,
        desc: &str,
        n: &Node,
    ) -> Result<Option<Val>, ImportError> {
        let target = &self
            .constant(desc, n.inputs.get(1).map_or("", String::as_str))?
            .values;
        if target.len() <= 2 {
            return Ok(None);
        }
        let (x, kind) = self.view_input(desc, n)?;
        let dims = x.layout.onnx_dims(x.shape);
        let total: usize = dims.iter().product();
        // ONNX's rule: 0 copies the input's dimension, -1 takes what is left.
        let mut out: Vec<Option<usize>> = target
            .iter()
            .enumerate()
            .map(|(i, &v)| match v as i64 {
                0 => dims.get(i).copied(),
                -1 => None,
                v if v > 0 => Some(v as usize),
                _ => Some(0),
            })
            .collect();
        let known: usize = out.iter().flatten().product();
        if let Some(slot) = out.iter_mut().find(|d| d.is_none()) {
            *slot = (known > 0).then(|| total / known);
        }
        let out: Vec<usize> = out.into_iter().map(|d| d.unwrap_or(0)).collect();
        let (s, d) = (x.shape[0] * x.shape[1], x.shape[2]);
        let layout = match (x.layout, out.as_slice()) {
            (l, o) if o == dims.as_slice() => Some(l),
            (Layout::Map, [1, c, s2]) if *c == d && *s2 == s => Some(Layout::SeqT),
            (Layout::Seq, [1, s2, h, dh]) if *s2 == s && h * dh == d => Some(Layout::Split(*h)),
            (Layout::Split(_), [1, s2, d2]) if *s2 == s && *d2 == d => Some(Layout::Seq),
            _ => None,
        };
        match layout {
            Some(layout) => Ok(Some(kind(QTensor { layout, ..x }))),
            _ => Err(self.err(
                desc,
                format!("Reshape of a tensor {dims:?} to {out:?}"),
                "the accelerator folds attention's head split and merge ([1, S, D] to [1, S, H, D/H] and back), a map's pixels as tokens ([1, C, H, W] to [1, C, H*W]) and a flatten to [1, K]",
            )),
        }
    }

    /// The row unit's operators and the transposer need a design with `[rows]`.
    fn needs_rows(&self, desc: &str, what: &str) -> Result<(), ImportError> {
        if self.target.rows {
            return Ok(());
        }
        Err(self.err(
            desc,
            format!("{what} needs the row unit and the transposer ([rows]), and the design has neither"),
            "use a design with [rows] (configs/16x16_int8_transformer.toml); otherwise the host runs it",
        ))
    }

    /// The dequantized input of a QDQ operator.
    fn dq_input(&self, desc: &str, n: &Node, i: usize) -> Result<QTensor, ImportError> {
        match self.val(desc, n.inputs.get(i).map_or("", String::as_str))? {
            Val::Dq(x) => Ok(x),
            _ => Err(self.err(
                desc,
                format!("input {i} is not dequantized from a quantized tensor"),
                "quantize the model in QDQ form (quantize_static, quant_format=QDQ)",
            )),
        }
    }

    /// With more than one head, each head's share of each of `channels` fills whole channel
    /// tiles of the design (its row unit runs a head's tiles at a time).
    fn fills_tiles(&self, desc: &str, heads: usize, channels: &[usize]) -> Result<(), ImportError> {
        let t = self.target.tile;
        match channels
            .iter()
            .find(|&&c| heads > 1 && !(c / heads).is_multiple_of(t))
        {
            None => Ok(()),
            Some(c) => Err(self.err(
                desc,
                format!(
                    "heads of {} channels, and the design's channel tiles hold {t}",
                    c / heads
                ),
                "use heads whose size is a multiple of the array size; otherwise the host runs it",
            )),
        }
    }

    /// Axis `axis` (negative from the end) of a tensor of rank `rank` is its last.
    fn last_axis(&self, desc: &str, axis: i64, rank: usize) -> Result<(), ImportError> {
        let a = if axis < 0 { axis + rank as i64 } else { axis };
        if a == rank as i64 - 1 {
            return Ok(());
        }
        Err(self.err(
            desc,
            format!("axis {axis} of a tensor of rank {rank}"),
            "the row unit normalizes along the last axis (the channels: a sequence's hidden values, or each head's scores)",
        ))
    }

    /// The heads a row operator over the last axis of `x` runs in: a sequence's values (1),
    /// each head's (`[1, H, S, T]`), or a flat tensor of one pixel's.
    fn row_heads(&self, desc: &str, x: &QTensor) -> Result<usize, ImportError> {
        match x.layout {
            Layout::Seq => Ok(1),
            Layout::Heads(h) | Layout::Keys { heads: h, .. } => Ok(h),
            Layout::Flat if x.shape[..2] == [1, 1] => Ok(1),
            _ => Err(self.err(
                desc,
                format!(
                    "a tensor {:?} whose last axis is not hwgen's channels",
                    x.layout.onnx_dims(x.shape)
                ),
                "the row unit normalizes a sequence [1, S, D] or attention's scores [1, H, S, T] along the last axis",
            )),
        }
    }

    /// QDQ Softmax along the last axis.
    pub(super) fn softmax(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        self.needs_rows(desc, "Softmax")?;
        let x = self.dq_input(desc, n, 0)?;
        let heads = self.row_heads(desc, &x)?;
        self.fills_tiles(desc, heads, &[x.shape[2]])?;
        let rank = x.layout.onnx_dims(x.shape).len();
        // Before opset 13 the axis defaults to 1 and the input is coerced to 2-D there.
        let axis = n.attr_int("axis", if self.opset >= 13 { -1 } else { 1 });
        self.last_axis(desc, axis, rank)?;
        Ok(self.pending(desc, PendingOp::Rows(RowLayer::Softmax { x, heads })))
    }

    /// QDQ LayerNormalization over the last axis, its scale and bias constants (dequantized
    /// or float) rounded to float32.
    pub(super) fn layer_norm(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        self.needs_rows(desc, "LayerNormalization")?;
        let x = self.dq_input(desc, n, 0)?;
        if self.row_heads(desc, &x)? != 1 {
            return Err(self.err(
                desc,
                "a LayerNormalization of attention's heads",
                "normalize the merged sequence [1, S, D]",
            ));
        }
        let rank = x.layout.onnx_dims(x.shape).len();
        self.last_axis(desc, n.attr_int("axis", -1), rank)?;
        let c = x.shape[2];
        let name = |i: usize| n.inputs.get(i).filter(|v| !v.is_empty()).cloned();
        let gamma = self.channel_param(desc, name(1).as_deref(), c, 1.0)?;
        let beta = self.channel_param(desc, name(2).as_deref(), c, 0.0)?;
        let epsilon = match n.attr("epsilon") {
            Some(AttrValue::Float(e)) => *e,
            _ => 1e-5,
        };
        Ok(self.pending(
            desc,
            PendingOp::Rows(RowLayer::LayerNorm {
                x,
                gamma,
                beta,
                epsilon,
            }),
        ))
    }

    /// QDQ Erf, or Gelu (opset 20), element-wise; an Erf's input may be scaled by a Div or
    /// Mul with one constant for every channel (PyTorch's erf-form GELU divides by sqrt 2).
    pub(super) fn function(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        self.needs_rows(desc, &n.op_type)?;
        let (x, scale) = match self.val(desc, n.inputs.first().map_or("", String::as_str))? {
            Val::Dq(x) => {
                let s = x.scale;
                (x, s)
            }
            Val::Pending(p) if !p.relu && p.clip_hi.is_none() => match &p.op {
                PendingOp::Affine(f)
                    if f.offset.iter().all(|&b| b == 0.0)
                        && f.scale.iter().all(|&g| g > 0.0 && super::same(g, f.scale[0])) =>
                {
                    (f.x.clone(), f.x.scale * f.scale[0])
                }
                _ => return Err(self.err(desc, "its input is a float operator's output other than the input scaled by one positive constant", "quantize that operator's output (quantize_static does)")),
            },
            _ => {
                return Err(self.err(
                    desc,
                    "its input is not dequantized from a quantized tensor",
                    "quantize the model in QDQ form (quantize_static, quant_format=QDQ)",
                ))
            }
        };
        let approximate = match n.attr("approximate") {
            Some(AttrValue::Text(t)) if t == "tanh" => true,
            None => false,
            Some(AttrValue::Text(t)) if t == "none" => false,
            Some(AttrValue::Text(t)) => {
                return Err(self.err(
                    desc,
                    format!("approximate = \"{t}\""),
                    "use approximate \"none\" or \"tanh\"",
                ))
            }
            Some(_) => {
                return Err(self.err(
                    desc,
                    "approximate is not a string",
                    "use approximate \"none\" or \"tanh\"",
                ))
            }
        };
        let op = if n.op_type == "Erf" { "erf" } else { "gelu" };
        Ok(self.pending(
            desc,
            PendingOp::Rows(RowLayer::Function {
                x,
                op,
                approximate,
                scale,
            }),
        ))
    }

    /// A per-channel parameter of a normalization (`name`, a constant of `c` values or one),
    /// rounded to float32; `default` for each channel when there is none.
    fn channel_param(
        &self,
        desc: &str,
        name: Option<&str>,
        c: usize,
        default: f32,
    ) -> Result<Vec<f32>, ImportError> {
        let Some(name) = name else {
            return Ok(vec![default; c]);
        };
        let v = match self.float_constant(name) {
            Some((v, _)) if v.len() == c => v.iter().map(|&f| f as f32).collect(),
            Some((v, _)) if v.len() == 1 => vec![v[0] as f32; c],
            Some((v, dims)) => {
                return Err(self.err(
                    desc,
                    format!(
                        "input '{name}' has shape {dims:?} ({} values) for {c} channels",
                        v.len()
                    ),
                    "give the scale and bias one value per channel",
                ))
            }
            None => {
                return Err(self.err(
                    desc,
                    format!("input '{name}' is not a constant"),
                    "give the scale and bias as initializers (quantized or float)",
                ))
            }
        };
        match v.iter().find(|x: &&f32| !x.is_finite()) {
            Some(bad) => Err(self.err(
                desc,
                format!("'{name}' holds {bad}"),
                "export finite values",
            )),
            None => Ok(v),
        }
    }

    /// A LayerNormalization spelt out (`patterns::Decomposed`): the same row operator, its
    /// intermediate quantizations (of the variance, the normalized values) skipped.
    pub(super) fn decomposed_norm(
        &mut self,
        desc: &str,
        m: &Decomposed,
    ) -> Result<Val, ImportError> {
        let desc = format!(
            "{desc}, the last node of a LayerNormalization spelt out from '{}'",
            m.x
        );
        let desc = desc.as_str();
        self.needs_rows(desc, "LayerNormalization")?;
        let x = match self.val(desc, &m.x)? {
            Val::Dq(x) => x,
            _ => {
                return Err(self.err(
                    desc,
                    "its input is not dequantized from a quantized tensor",
                    "quantize the model in QDQ form (quantize_static, quant_format=QDQ)",
                ))
            }
        };
        if self.row_heads(desc, &x)? != 1 {
            return Err(self.err(
                desc,
                "a LayerNormalization of attention's heads",
                "normalize the merged sequence [1, S, D]",
            ));
        }
        let rank = x.layout.onnx_dims(x.shape).len();
        for &i in &m.means {
            let n = &self.graph_nodes[i];
            let axes = match n.inputs.get(1).filter(|a| !a.is_empty()) {
                Some(a) => self
                    .constant(desc, a)?
                    .values
                    .iter()
                    .map(|&v| v as i64)
                    .collect(),
                None => n.attr_ints_or("axes", &[]),
            };
            if n.attr_int("keepdims", 1) != 1 || axes.len() != 1 {
                return Err(self.err(
                    desc,
                    format!(
                        "a ReduceMean over axes {axes:?} (keepdims {})",
                        n.attr_int("keepdims", 1)
                    ),
                    "the row unit normalizes over the last axis, keeping it",
                ));
            }
            self.last_axis(desc, axes[0], rank)?;
        }
        let scalar = |s: &Self, t: &str, what: &str| match s.float_constant(t) {
            Some((v, _)) if v.len() == 1 && v[0].is_finite() => Ok(v[0]),
            _ => Err(s.err(
                desc,
                format!("the {what} '{t}' is not one finite constant"),
                "export the normalization with constant epsilon and exponent 2",
            )),
        };
        if let Some(e) = &m.exponent {
            if scalar(self, e, "exponent")? != 2.0 {
                return Err(self.err(
                    desc,
                    format!("Pow by '{e}', not 2"),
                    "square the deviation (Pow 2)",
                ));
            }
        }
        let epsilon = scalar(self, &m.epsilon, "epsilon")? as f32;
        let c = x.shape[2];
        let gamma = self.channel_param(desc, m.gamma.as_deref(), c, 1.0)?;
        let beta = self.channel_param(desc, m.beta.as_deref(), c, 0.0)?;
        Ok(self.pending(
            desc,
            PendingOp::Rows(RowLayer::LayerNorm {
                x,
                gamma,
                beta,
                epsilon,
            }),
        ))
    }

    /// QDQ MatMul of two activations: attention's scores (`[1, H, S, D/H]` by the keys
    /// `[1, H, D/H, T]`) or its weighted values (`[1, H, S, T]` by `[1, H, T, D/H]`), per
    /// head; None when the second operand is not an activation.
    pub(super) fn product(&mut self, desc: &str, n: &Node) -> Result<Option<Val>, ImportError> {
        let Some(Val::Dq(b)) = n.inputs.get(1).and_then(|i| self.vals.get(i)).cloned() else {
            return Ok(None);
        };
        let a = self.dq_input(desc, n, 0)?;
        self.needs_rows(desc, "a MatMul of two activations")?;
        let (heads, transpose_b) = match (a.layout, b.layout) {
            (Layout::Heads(h), Layout::HeadsT(g)) if h == g => (h, true),
            (Layout::Heads(h) | Layout::Keys { heads: h, .. }, Layout::Heads(g)) if h == g => {
                (h, false)
            }
            (Layout::Seq, Layout::Seq) => (1, false),
            _ => {
                return Err(self.err(
                    desc,
                    format!(
                        "a MatMul of activations {:?} and {:?}",
                        a.layout.onnx_dims(a.shape),
                        b.layout.onnx_dims(b.shape)
                    ),
                    "the accelerator multiplies attention's heads: [1, H, S, D/H] by [1, H, D/H, T] (keys transposed) or [1, H, S, T] by [1, H, T, D/H]",
                ))
            }
        };
        let [ta, _, ca] = a.shape;
        let t = b.shape[0] * b.shape[1];
        // Keys that do not fill the channel tiles per head are padded to whole tiles (the
        // softmax masks the padding out); the probabilities come padded.
        let tile = self.target.tile;
        let keys = match (transpose_b, a.layout) {
            (true, _) if heads > 1 || a.zero_point != 0 || b.zero_point != 0 => {
                t.next_multiple_of(tile)
            }
            (false, Layout::Keys { keys, .. }) if keys == t => ca / heads,
            _ => t,
        };
        let fits = if transpose_b {
            b.shape[2] == ca
        } else {
            ca == heads * keys
        };
        if !fits || ta == 0 {
            return Err(self.err(
                desc,
                format!(
                    "operands {:?} and {:?} do not multiply",
                    a.layout.onnx_dims(a.shape),
                    b.layout.onnx_dims(b.shape)
                ),
                "check the model",
            ));
        }
        // The array's zero-point correction spans all its rows: a head's channels must fill
        // them.
        if (a.zero_point != 0 || b.zero_point != 0)
            && !(ca / heads).is_multiple_of(self.target.tile)
        {
            return Err(self.err(
                desc,
                format!(
                    "operands with zero points {} and {} over heads of {} channels: the array takes zero points out of sums over whole channel tiles of {}",
                    a.zero_point, b.zero_point, ca / heads, self.target.tile
                ),
                "use heads (or, for the weighted values, a number of tokens) that are a multiple of the array size, or quantize activations symmetrically (quantize_static's extra_options ActivationSymmetric=True); otherwise the host runs it",
            ));
        }
        let cout = if transpose_b {
            heads * keys
        } else {
            b.shape[2]
        };
        self.fills_tiles(desc, heads, &[ca, cout])?;
        if transpose_b && !ca.is_multiple_of(self.target.tile) {
            return Err(self.err(
                desc,
                format!("keys of {ca} channels, and the design's transposer loads whole channel tiles of {}", self.target.tile),
                "use a head size whose total is a multiple of the array size; otherwise the host runs it",
            ));
        }
        if a.signed != b.signed {
            return Err(self.err(
                desc,
                "an int8 operand times a uint8 one",
                "quantize activations to one type",
            ));
        }
        Ok(Some(self.pending(
            desc,
            PendingOp::Rows(RowLayer::Product {
                a,
                b,
                transpose_b,
                heads,
                keys,
            }),
        )))
    }

    /// The layer of a row operator or product, quantized to `y` (scale, zero point, signed).
    pub(super) fn emit_rows(
        &mut self,
        desc: &str,
        op: &RowLayer,
        y: (f64, i64, bool),
    ) -> Result<QTensor, ImportError> {
        let name = self.fresh(&desc_name(desc), "rows");
        // The input's scale (`in_scale`: times a factor folded in) and zero point, and the
        // output's.
        let quant = |x: &QTensor, in_scale: f64| {
            vec![
                (
                    "scales",
                    format!("{{ input = {in_scale:?}, output = {:?} }}", y.0),
                ),
                (
                    "zero_points",
                    format!("{{ input = {}, output = {} }}", x.zero_point, y.1),
                ),
            ]
        };
        let (x, op_name, keys, note, shape, layout) = match op {
            RowLayer::Softmax { x, heads } => {
                let mut k = vec![("heads", heads.to_string())];
                k.extend(quant(x, x.scale));
                // Padded keys are masked out: their probabilities are 0.
                if let Layout::Keys { heads, keys } = x.layout {
                    let per_head = x.shape[2] / heads;
                    let mask: Vec<f32> = (0..per_head)
                        .map(|j| if j < keys { 0.0 } else { -10000.0 })
                        .collect();
                    k.push(("mask", self.npy_f32(&name, "mask", &[per_head], &mask)));
                }
                let note = format!("{desc} -> '{name}': softmax over {heads} head(s) on the row unit, scales {:e} -> {:e}", x.scale, y.0);
                (x, "softmax", k, note, x.shape, x.layout)
            }
            RowLayer::LayerNorm {
                x,
                gamma,
                beta,
                epsilon,
            } => {
                let c = x.shape[2];
                let mut k = vec![("epsilon", format!("{:?}", f64::from(*epsilon)))];
                k.push(("gamma", self.npy_f32(&name, "gamma", &[c], gamma)));
                k.push(("beta", self.npy_f32(&name, "beta", &[c], beta)));
                k.extend(quant(x, x.scale));
                let note = format!("{desc} -> '{name}': layernorm on the row unit (epsilon {epsilon:e}), scales {:e} -> {:e}", x.scale, y.0);
                (x, "layernorm", k, note, x.shape, x.layout)
            }
            RowLayer::Function {
                x,
                op,
                approximate,
                scale,
            } => {
                let mut k = vec![];
                if *approximate {
                    k.push(("approximate", "\"tanh\"".to_string()));
                }
                k.extend(quant(x, *scale));
                let note = format!("{desc} -> '{name}': {op} on the row unit's spline stage, scales {scale:e} -> {:e}", y.0);
                (x, *op, k, note, x.shape, x.layout)
            }
            RowLayer::Product {
                a,
                b,
                transpose_b,
                heads,
                keys: per_head,
            } => {
                let scale = a.scale * b.scale / y.0;
                let r = Requant::checked(scale, "input scale x input scale / output scale")
                    .map_err(|rule| self.err(desc, rule, "check the model's scales"))?;
                let t = b.shape[0] * b.shape[1];
                let cout = if *transpose_b {
                    heads * per_head
                } else {
                    b.shape[2]
                };
                let mut k = vec![
                    ("b", format!("\"{}\"", b.name)),
                    ("transpose_b", transpose_b.to_string()),
                    ("heads", heads.to_string()),
                    ("requant", requant_text(r, y.1)),
                    (
                        "zero_points",
                        format!("{{ input = {}, b = {} }}", a.zero_point, b.zero_point),
                    ),
                ];
                if *per_head != t {
                    k.push(("keys", per_head.to_string()));
                }
                let note = format!(
                    "{desc} -> '{name}': {heads} head(s) of a run-time product{}, scale {scale:.6e} = {} / 2^{} (relative error {:.1e})",
                    if *transpose_b { " by a transposed tensor" } else { "" },
                    r.multiplier,
                    r.shift,
                    (r.value() / scale - 1.0).abs()
                );
                let layout = match (*transpose_b, *heads) {
                    (true, h) if *per_head != t => Layout::Keys { heads: h, keys: t },
                    (false, 1) if !matches!(a.layout, Layout::Keys { .. }) => a.layout,
                    (_, h) => Layout::Heads(h),
                };
                (a, "matmul", k, note, [a.shape[0], a.shape[1], cout], layout)
            }
        };
        let l = Layer {
            name,
            op: op_name,
            input: x.name.clone(),
            keys,
            note,
        };
        let q = self.push(l, y, shape);
        Ok(QTensor { layout, ..q })
    }

    /// A float32 `.npy` of a layer's parameter; its path as the model file names it.
    fn npy_f32(&mut self, layer: &str, what: &str, shape: &[usize], data: &[f32]) -> String {
        let file = format!("{layer}.{what}.npy");
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.tensors.push((
            file.clone(),
            crate::model::npy::encode("<f4", shape, &bytes),
        ));
        format!("\"{}/{file}\"", self.data_dir)
    }
}
