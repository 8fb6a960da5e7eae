//! A quantized ONNX graph, in either form ONNX Runtime's `quantize_static` writes, as a
//! hwgen model file:
//!
//! - QOperator: QuantizeLinear, QLinearConv, QLinearMatMul, MaxPool on integers,
//!   DequantizeLinear;
//! - QDQ: float Conv, Gemm, MatMul, MaxPool and Relu whose inputs come from
//!   DequantizeLinear and whose outputs go to QuantizeLinear.
//!
//! The graph is walked in its (topological) order, keeping for each ONNX tensor what it is
//! in hwgen's terms (`Val`); a float operator between a dequantize and a quantize waits as
//! `Pending` until the QuantizeLinear names its output scale.

use super::layer::{ConvGeom, Layer, Layout, QTensor};
use super::proto::{dtype, AttrValue, Graph, Node, Tensor};
use super::{ImportError, InputQuant};
use std::collections::{HashMap, HashSet};

mod affine;
mod attention;
mod eltwise;
mod emit;
mod inputs;
mod joins;
mod norm;
mod ops;
mod patterns;
mod resize;

/// A quantized constant (weights or bias) with its per-tensor or per-axis quantization.
#[derive(Clone)]
struct ConstQ {
    q: Tensor,
    scale: Vec<f64>,
    zero_point: Vec<i64>,
}

#[derive(Clone)]
enum PendingOp {
    Conv {
        x: QTensor,
        w: ConstQ,
        b: Option<ConstQ>,
        geom: ConvGeom,
    },
    Fc {
        x: QTensor,
        w: ConstQ,
        b: Option<ConstQ>,
        trans: bool,
    },
    MaxPool {
        x: QTensor,
        geom: ConvGeom,
    },
    /// Relu of a tensor a layer already wrote.
    Relu {
        x: QTensor,
    },
    /// Clip(lo, hi) of a tensor a layer already wrote (float bounds).
    Clip {
        x: QTensor,
        lo: f64,
        hi: f64,
    },
    /// a + b, a - b or a b of two tensors.
    Binary {
        a: QTensor,
        b: QTensor,
        op: eltwise::Binary,
    },
    GlobalPool {
        x: QTensor,
    },
    /// An average pool (square window; padding counted as zeros of x - zero_point).
    AvgPool {
        x: QTensor,
        geom: ConvGeom,
    },
    Concat {
        parts: Vec<QTensor>,
    },
    /// Nearest upsampling by a whole factor (Resize, Upsample), quantization kept.
    Upsample {
        x: QTensor,
        factor: usize,
    },
    /// Add, Sub, Mul or Div with constants: a float affine map of a dequantized tensor.
    Affine(affine::Affine),
    /// Softmax, LayerNormalization or a product of two activations.
    Rows(attention::RowLayer),
    /// A transposed convolution: (kernel, stride, padding).
    ConvT {
        x: QTensor,
        w: ConstQ,
        b: Option<ConstQ>,
        geom: (usize, usize, usize),
    },
}

#[derive(Clone)]
struct Pending {
    node: String,
    op: PendingOp,
    relu: bool,
    /// A Clip(0, hi) after the operator (float bound), applied with its quantization.
    clip_hi: Option<f64>,
}

impl Pending {
    /// Operator `op` of node `node`, with no activation after it yet.
    fn new(node: &str, op: PendingOp) -> Self {
        Pending {
            node: node.to_string(),
            op,
            relu: false,
            clip_hi: None,
        }
    }
}

#[derive(Clone)]
enum Val {
    /// The float graph input, before its QuantizeLinear.
    Float([usize; 3], Layout),
    Q(QTensor),
    Dq(QTensor),
    /// A dequantized constant, as its zero point left it (centred where it is used as
    /// weights), and the DequantizeLinear's axis.
    DqConst(ConstQ, i64),
    Pending(Box<Pending>),
}

pub(super) struct Importer<'a> {
    file: &'a str,
    consts: HashMap<String, Tensor>,
    vals: HashMap<String, Val>,
    /// ONNX tensor -> (op type, first output) of each node that reads it.
    readers: HashMap<String, Vec<(String, String)>>,
    graph_outputs: HashSet<String>,
    /// hwgen tensor -> the ONNX tensor (a QuantizeLinear's or QLinear op's output) it is.
    produced: HashMap<String, String>,
    layers: Vec<Layer>,
    tensors: Vec<(String, Vec<u8>)>,
    names: HashSet<String>,
    act_signed: Option<bool>,
    weight_signed: Option<bool>,
    /// The model inputs quantized so far, in the order they were (the graph's order is
    /// restored at the end).
    inputs: Vec<InputQuant>,
    /// The graph's inputs, in its order.
    input_order: Vec<String>,
    /// Where the TOML finds the tensor files, relative to itself.
    data_dir: String,
    /// Layers that write their accumulator (`emit::Out::Acc`) -> each channel's scale
    /// (`OutputQuant::accumulator`).
    accumulators: HashMap<String, Vec<f64>>,
    /// What the design runs.
    target: super::Target,
    /// The model's default-domain opset.
    opset: i64,
    /// Decomposed layer norms, by the node that stands for each, and the nodes they absorb.
    norms: HashMap<usize, patterns::Decomposed>,
    absorbed: HashSet<usize>,
    /// The graph's nodes (for the patterns' nodes).
    graph_nodes: Vec<Node>,
    /// The tensor computed outside the segment that a node needed (`outside`).
    missing: std::cell::RefCell<Option<String>>,
}

/// "node 'name' (OpType)", how errors and notes name a node.
fn describe(n: &Node, index: usize) -> String {
    if n.name.is_empty() {
        match n.outputs.first().filter(|o| !o.is_empty()) {
            Some(o) => format!("node {index} writing '{o}' ({})", n.op_type),
            None => format!("node {index} ({})", n.op_type),
        }
    } else {
        format!("node '{}' ({})", n.name, n.op_type)
    }
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
}

impl<'a> Importer<'a> {
    pub fn new(file: &'a str, g: &Graph, data_dir: &str) -> Self {
        let (norms, absorbed) = patterns::layer_norms(g);
        let mut readers: HashMap<String, Vec<(String, String)>> = HashMap::new();
        for n in &g.nodes {
            for i in n.inputs.iter().filter(|i| !i.is_empty()) {
                let out = n.outputs.first().cloned().unwrap_or_default();
                readers
                    .entry(i.clone())
                    .or_default()
                    .push((n.op_type.clone(), out));
            }
        }
        Importer {
            file,
            consts: g
                .initializers
                .iter()
                .map(|t| (t.name.clone(), t.clone()))
                .collect(),
            vals: HashMap::new(),
            readers,
            graph_outputs: g.outputs.iter().map(|o| o.name.clone()).collect(),
            produced: HashMap::new(),
            layers: vec![],
            tensors: vec![],
            names: HashSet::new(),
            act_signed: None,
            weight_signed: None,
            inputs: Vec::new(),
            input_order: Vec::new(),
            data_dir: data_dir.to_string(),
            accumulators: HashMap::new(),
            target: super::Target::ANY,
            opset: 0,
            norms,
            absorbed,
            graph_nodes: g.nodes.clone(),
            missing: Default::default(),
        }
    }

    /// For a design that runs `target`, reading a model of default-domain opset `opset`.
    pub fn with(self, target: super::Target, opset: i64) -> Self {
        Importer {
            target,
            opset,
            ..self
        }
    }

    fn err(&self, node: &str, rule: impl Into<String>, fix: impl Into<String>) -> ImportError {
        ImportError {
            file: self.file.to_string(),
            node: (!node.is_empty()).then(|| node.to_string()),
            rule: rule.into(),
            fix: fix.into(),
        }
    }

    /// A unique hwgen name for an ONNX name: letters, digits, `_` and `.`.
    fn fresh(&mut self, onnx: &str, fallback: &str) -> String {
        // The suffixes quantize_static appends to the float model's tensor names.
        let onnx = ["_QuantizeLinear_Input", "_quantized"]
            .iter()
            .fold(onnx, |n, sfx| n.strip_suffix(sfx).unwrap_or(n));
        let mut base: String = onnx
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() {
            base = fallback.to_string();
        }
        if !base.starts_with(|c: char| c.is_ascii_alphabetic()) {
            base = format!("n{base}");
        }
        let mut name = base.clone();
        let mut k = 1;
        while !self.names.insert(name.clone()) {
            k += 1;
            name = format!("{base}_{k}");
        }
        name
    }

    /// Whether ONNX tensor `name` is the output of a layer (quantized or dequantized, or the
    /// unquantized output of a convolution or product, from its accumulator): a value the
    /// accelerator can hand over to the host.
    pub fn is_layer_value(&self, name: &str) -> bool {
        match self.vals.get(name) {
            Some(Val::Q(x) | Val::Dq(x)) => !self.inputs.iter().any(|i| i.name == x.name),
            Some(Val::Pending(p)) => ops::writes_accumulator(p),
            _ => false,
        }
    }

    /// The tensor computed outside the segment that the last refused node needed, if that
    /// is why it was refused.
    pub fn missing(&self) -> Option<String> {
        self.missing.borrow().clone()
    }

    /// The ONNX dims of every tensor and constant read so far (for the MACs of the report).
    pub fn onnx_dims(&self) -> HashMap<String, Vec<usize>> {
        let mut dims: HashMap<String, Vec<usize>> = self
            .consts
            .iter()
            .map(|(k, t)| (k.clone(), t.dims.iter().map(|&d| d as usize).collect()))
            .collect();
        for (k, v) in &self.vals {
            let d = match v {
                Val::Float(shape, layout) => layout.onnx_dims(*shape),
                Val::Q(x) | Val::Dq(x) => x.layout.onnx_dims(x.shape),
                Val::DqConst(c, _) => c.q.dims.iter().map(|&d| d as usize).collect(),
                Val::Pending(_) => continue,
            };
            dims.insert(k.clone(), d);
        }
        dims
    }

    /// The error for input `i` of node `n`: not a quantized activation of this segment
    /// (nor a constant); when the graph computes it, the host or an earlier segment does.
    fn outside(&self, desc: &str, n: &Node, i: usize) -> ImportError {
        let name = n.inputs.get(i).map_or("", String::as_str);
        if self.vals.contains_key(name) || self.consts.contains_key(name) {
            return self.err(
                desc,
                format!("input {i} ('{name}') is neither a quantized activation nor a constant"),
                "quantize the model with quantize_static",
            );
        }
        self.missing.replace(Some(name.to_string()));
        self.err(
            desc,
            format!("input {i} ('{name}') is computed outside this accelerator segment (by the host, or by an earlier segment), which reads one tensor the host hands over"),
            "none needed: the host runs this node",
        )
    }

    fn val(&self, node: &str, name: &str) -> Result<Val, ImportError> {
        if let Some(v) = self.vals.get(name) {
            return Ok(v.clone());
        }
        Err(self.err(
            node,
            format!("input '{name}' is not a quantized tensor or a constant the importer knows"),
            "quantize the model with onnxruntime.quantization.quantize_static (QDQ or QOperator)",
        ))
    }

    fn constant(&self, node: &str, name: &str) -> Result<&Tensor, ImportError> {
        self.consts.get(name).ok_or_else(|| {
            self.err(
                node,
                format!("input '{name}' must be a constant (an initializer)"),
                "fold constants before importing (onnxruntime's quant_pre_process, or onnx-simplifier)",
            )
        })
    }

    /// A per-tensor scale and zero point (inputs `s` and `z` of node `n`).
    fn quant_params(
        &self,
        desc: &str,
        n: &Node,
        s: usize,
        z: usize,
    ) -> Result<(f64, i64, bool), ImportError> {
        let sn = n.inputs.get(s).map_or("", String::as_str);
        let scale = self.scales(desc, sn)?;
        let [sv] = scale[..] else {
            return Err(self.err(
                desc,
                format!(
                    "scale '{sn}' has {} values; activations are quantized per tensor",
                    scale.len()
                ),
                "quantize activations per tensor",
            ));
        };
        let (zp, signed) = match n.inputs.get(z).filter(|z| !z.is_empty()) {
            Some(zn) => {
                let t = self.constant(desc, zn)?;
                let signed = match t.data_type {
                    dtype::INT8 => true,
                    dtype::UINT8 => false,
                    other => {
                        return Err(self.err(desc, format!("zero point '{zn}' is {}; the accelerator takes int8 and uint8 activations", dtype::name(other)), "quantize to int8 or uint8"))
                    }
                };
                let [v] = t.values[..] else {
                    return Err(self.err(
                        desc,
                        format!(
                            "zero point '{zn}' has {} values; a per-tensor zero point has one, as its scale",
                            t.values.len()
                        ),
                        "give one zero point (a scalar) per tensor",
                    ));
                };
                (v as i64, signed)
            }
            None => (0, false),
        };
        Ok((sv, zp, signed))
    }

    /// Input `i` of a QOperator node: a quantized tensor, whose scale and zero point (the
    /// node's inputs `i + 1` and `i + 2`) must be the tensor's.
    fn q_input(&self, desc: &str, n: &Node, i: usize) -> Result<QTensor, ImportError> {
        let name = n.inputs.get(i).map_or("", String::as_str);
        let Val::Q(x) = self.val(desc, name)? else {
            return Err(self.err(
                desc,
                format!("input '{name}' is not a quantized tensor"),
                "quantize the model with quantize_static",
            ));
        };
        let (s, z, _) = self.quant_params(desc, n, i + 1, i + 2)?;
        if !same(s, x.scale) || z != x.zero_point {
            return Err(self.err(
                desc,
                format!(
                    "input '{name}' is given scale {s} zero point {z}, but was quantized with scale {} zero point {}",
                    x.scale, x.zero_point
                ),
                "give the node its input's quantization parameters",
            ));
        }
        Ok(x)
    }

    /// Weights with a zero point as the symmetric weights `w - zero_point` (per element
    /// along `axis` for a per-axis zero point), int8 when they fit it, uint8 when they fit
    /// that; an error otherwise.
    fn centred(&self, desc: &str, mut c: ConstQ, axis: i64) -> Result<ConstQ, ImportError> {
        if c.zero_point.iter().all(|&z| z == 0) {
            return Ok(c);
        }
        let dims: Vec<usize> = c.q.dims.iter().map(|&d| d as usize).collect();
        let axis = if axis < 0 {
            axis + dims.len() as i64
        } else {
            axis
        } as usize;
        let per = c.zero_point.len();
        if per != 1 && dims.get(axis) != Some(&per) {
            return Err(self.err(
                desc,
                format!("{per} weight zero points for weights of shape {dims:?}"),
                "give one zero point, or one per output channel",
            ));
        }
        let inner: usize = dims.get(axis + 1..).map_or(1, |d| d.iter().product());
        let values: Vec<f64> = (0..c.q.values.len())
            .map(|k| {
                let z = if per == 1 {
                    c.zero_point[0]
                } else {
                    c.zero_point[k / inner % per]
                };
                c.q.values[k] - z as f64
            })
            .collect();
        let lo = values.iter().copied().fold(0f64, f64::min);
        let hi = values.iter().copied().fold(0f64, f64::max);
        c.q.data_type =
            match (lo, hi) {
                (l, h) if l >= -128.0 && h <= 127.0 => dtype::INT8,
                (l, h) if l >= 0.0 && h <= 255.0 => dtype::UINT8,
                _ => return Err(self.err(
                    desc,
                    format!(
                        "weights '{}' minus their zero point span [{lo}, {hi}], more than 8 bits",
                        c.q.name
                    ),
                    "quantize weights symmetrically (quantize_static's default for int8 weights)",
                )),
            };
        c.q.values = values;
        c.zero_point = vec![0];
        Ok(c)
    }

    /// The constant a DequantizeLinear node dequantizes, with its scale and zero point.
    fn const_q(&self, desc: &str, n: &Node) -> Result<ConstQ, ImportError> {
        let q = self.constant(desc, &n.inputs[0])?.clone();
        let scale = self.scales(desc, n.inputs.get(1).map_or("", String::as_str))?;
        let z = n.inputs.get(2).map(String::as_str);
        let zero_point = self.zero_points(desc, &q, &scale, z)?;
        Ok(ConstQ {
            q,
            scale,
            zero_point,
        })
    }

    /// The values of scale `name` as ONNX's QuantizeLinear and DequantizeLinear define
    /// them: a constant of a floating-point type (float, float16, bfloat16), a scalar (per
    /// tensor) or a 1-D tensor (per axis), and (hwgen's own rule, as a quantization step)
    /// every value finite and positive.
    fn scales(&self, desc: &str, name: &str) -> Result<Vec<f64>, ImportError> {
        let t = self.constant(desc, name)?;
        if !matches!(t.data_type, dtype::FLOAT | dtype::FLOAT16 | dtype::BFLOAT16) {
            return Err(self.err(
                desc,
                format!(
                    "scale '{name}' is {}; a scale is float, float16 or bfloat16",
                    dtype::name(t.data_type)
                ),
                "store the scale as float32",
            ));
        }
        if t.dims.len() > 1 {
            return Err(self.err(
                desc,
                format!("scale '{name}' has shape {:?}; a scale is a scalar (per tensor) or 1-D (per axis), and blocked quantization is not supported", t.dims),
                "quantize per tensor or per channel",
            ));
        }
        if t.values.is_empty() {
            return Err(self.err(
                desc,
                format!("scale '{name}' is empty"),
                "give one scale per tensor, or one per element along the quantization axis",
            ));
        }
        if let Some(v) = t.values.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
            return Err(self.err(
                desc,
                format!("scale '{name}' holds {v}; a quantization step is finite and positive"),
                "quantize again (a scale of 0 comes from a tensor that was constant during calibration)",
            ));
        }
        Ok(t.values.clone())
    }

    /// The zero points of quantized constant `q` with `scale` (input `z`, absent or empty:
    /// 0), as ONNX defines them: of `q`'s type, and as many as the scales (one per tensor,
    /// or one per element along the axis), at least one.
    fn zero_points(
        &self,
        desc: &str,
        q: &Tensor,
        scale: &[f64],
        z: Option<&str>,
    ) -> Result<Vec<i64>, ImportError> {
        if scale.is_empty() {
            return Err(self.err(
                desc,
                format!("the scale of '{}' is empty", q.name),
                "give one scale per tensor, or one per element along the quantization axis",
            ));
        }
        let Some(zn) = z.filter(|z| !z.is_empty()) else {
            return Ok(vec![0; scale.len()]);
        };
        let t = self.constant(desc, zn)?;
        if t.data_type != q.data_type {
            return Err(self.err(
                desc,
                format!(
                    "zero point '{zn}' is {}, and '{}' is {}; a zero point has its tensor's type",
                    dtype::name(t.data_type),
                    q.name,
                    dtype::name(q.data_type)
                ),
                "store the zero point in the quantized tensor's type",
            ));
        }
        if t.values.len() != scale.len() {
            return Err(self.err(
                desc,
                format!(
                    "zero point '{zn}' has {} values and the scale {}; they are given in pairs",
                    t.values.len(),
                    scale.len()
                ),
                "give one zero point per scale",
            ));
        }
        Ok(t.values.iter().map(|&v| v as i64).collect())
    }

    pub fn node(&mut self, n: &Node, index: usize) -> Result<(), ImportError> {
        let desc = describe(n, index);
        // A decomposed layer norm runs as one: its last node stands for it.
        if self.absorbed.contains(&index) {
            return Ok(());
        }
        if let Some(m) = self.norms.get(&index).cloned() {
            let v = self.decomposed_norm(&desc, &m)?;
            self.vals.insert(n.outputs[0].clone(), v);
            return Ok(());
        }
        // onnxruntime's contrib operators that quantize_static writes in QOperator form.
        let contrib = n.domain == "com.microsoft"
            && matches!(
                n.op_type.as_str(),
                "QGemm"
                    | "QLinearAdd"
                    | "QLinearGlobalAveragePool"
                    | "QLinearAveragePool"
                    | "QLinearConcat"
                    | "QLinearMul"
            );
        if !(n.domain.is_empty() || n.domain == "ai.onnx" || contrib) {
            return Err(self.err(
                &desc,
                format!("operator domain '{}' is not supported", n.domain),
                "use operators of the default ONNX domain",
            ));
        }
        let out = n.outputs.first().cloned().unwrap_or_default();
        if out.is_empty() || (n.inputs.is_empty() && n.op_type != "Constant") {
            return Err(self.err(
                &desc,
                format!("{} inputs and {} outputs", n.inputs.len(), n.outputs.len()),
                "check the model (onnx.checker.check_model)",
            ));
        }
        let v = match n.op_type.as_str() {
            "Constant" => {
                let Some(AttrValue::Tensor(t)) = n.attr("value") else {
                    return Err(self.err(&desc, "only a Constant with a tensor `value` is supported", "fold constants before importing"));
                };
                let mut t = t.clone();
                t.name = out.clone();
                self.consts.insert(out, t);
                return Ok(());
            }
            "QuantizeLinear" => self.quantize(&desc, n)?,
            "DequantizeLinear" => self.dequantize(&desc, n)?,
            "Conv" | "ConvTranspose" | "Gemm" | "MatMul" => self.float_op(&desc, n)?,
            "QLinearConv" | "QLinearMatMul" | "QGemm" => self.qlinear(&desc, n)?,
            "MaxPool" => self.maxpool(&desc, n)?,
            "AveragePool" | "QLinearAveragePool" => self.avgpool(&desc, n)?,
            "Relu" => self.relu(&desc, n)?,
            "Flatten" | "Reshape" => self.flatten(&desc, n)?,
            "Add" | "QLinearAdd" => self.add(&desc, n)?,
            "Sub" | "Mul" | "Div" | "QLinearMul" => self.arithmetic(&desc, n)?,
            "GlobalAveragePool" | "QLinearGlobalAveragePool" => self.global_pool(&desc, n)?,
            "Clip" => self.clip(&desc, n)?,
            "BatchNormalization" => self.batch_norm(&desc, n)?,
            "Resize" | "Upsample" => self.resize(&desc, n)?,
            "Concat" | "QLinearConcat" => self.concat(&desc, n)?,
            "Transpose" => self.transpose(&desc, n)?,
            "Softmax" => self.softmax(&desc, n)?,
            "LayerNormalization" => self.layer_norm(&desc, n)?,
            "Erf" | "Gelu" => self.function(&desc, n)?,
            other => {
                return Err(self.err(
                    &desc,
                    format!("operator {other} is not supported on the accelerator yet"),
                    "supported: QuantizeLinear, DequantizeLinear, Conv, Gemm, MatMul, MaxPool, AveragePool, GlobalAveragePool, Add, Sub and Mul (of two tensors of one shape or one of a single pixel, or of a constant), Div (a constant), BatchNormalization, Resize (nearest, by a whole factor), Relu, Clip (from 0), Concat (channels), ConvTranspose, Flatten, Reshape (to [1, K], or a sequence into heads and back), Transpose (of heads), Softmax and LayerNormalization (last axis), Erf and Gelu (on a design with [rows]), QLinearConv, QLinearMatMul, QGemm, QLinearAdd, QLinearMul, QLinearAveragePool, QLinearGlobalAveragePool, QLinearConcat",
                ))
            }
        };
        if let Val::Q(x) = &v {
            self.produced
                .entry(x.name.clone())
                .or_insert_with(|| out.clone());
        }
        self.vals.insert(out, v);
        Ok(())
    }

    fn quantize(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        let (scale, zp, signed) = self.quant_params(desc, n, 1, 2)?;
        match self.val(desc, &n.inputs[0])? {
            Val::Float(shape, layout) => {
                if self.inputs.iter().any(|i| i.onnx == n.inputs[0]) {
                    return Err(self.err(desc, format!("graph input '{}' is quantized twice", n.inputs[0]), "quantize each input once"));
                }
                self.set_signed(desc, signed)?;
                let q = self.model_input(&n.inputs[0], (scale, zp, signed), (shape, layout), false);
                Ok(Val::Q(q))
            }
            Val::Pending(p) => Ok(Val::Q(self.finish(&p, (scale, zp, signed))?)),
            Val::Dq(x) if same(x.scale, scale) && x.zero_point == zp && x.signed == signed => Ok(Val::Q(x)),
            Val::Dq(x) => Err(self.err(desc, format!("requantizes a tensor from scale {} zero point {} to scale {scale} zero point {zp} with no operator between", x.scale, x.zero_point), "remove the QuantizeLinear/DequantizeLinear pair, or give both the same parameters")),
            _ => Err(self.err(desc, "quantizes something other than the float input or an operator's float output", "quantize the model with quantize_static")),
        }
    }

    fn set_signed(&mut self, desc: &str, signed: bool) -> Result<(), ImportError> {
        self.target.takes("activations", signed).map_err(|rule| {
            self.err(desc, rule, "run on a design of the model's types (configs/16x16_uint8.toml takes uint8 activations), or quantize to the design's (quantize_static's activation_type); otherwise the host runs the graph")
        })?;
        match self.act_signed {
            Some(s) if s != signed => Err(self.err(
                desc,
                format!(
                    "mixes int8 and uint8 activations (this one is {})",
                    if signed { "int8" } else { "uint8" }
                ),
                "quantize every activation to the same type (quantize_static's activation_type)",
            )),
            _ => {
                self.act_signed = Some(signed);
                Ok(())
            }
        }
    }

    fn dequantize(&mut self, desc: &str, n: &Node) -> Result<Val, ImportError> {
        if self.consts.contains_key(&n.inputs[0]) {
            return Ok(Val::DqConst(self.const_q(desc, n)?, n.attr_int("axis", 1)));
        }
        match self.val(desc, &n.inputs[0])? {
            Val::Q(x) => {
                let (scale, zp, _) = self.quant_params(desc, n, 1, 2)?;
                if !same(scale, x.scale) || zp != x.zero_point {
                    return Err(self.err(desc, format!("dequantizes with scale {scale} zero point {zp} a tensor quantized with scale {} zero point {}", x.scale, x.zero_point), "give the DequantizeLinear its QuantizeLinear's parameters"));
                }
                Ok(Val::Dq(x))
            }
            _ => Err(self.err(
                desc,
                "dequantizes something other than a quantized tensor or constant",
                "quantize the model with quantize_static",
            )),
        }
    }

    fn conv_geom(
        &self,
        desc: &str,
        n: &Node,
        w: &Tensor,
        cin: usize,
    ) -> Result<ConvGeom, ImportError> {
        let bad = |what: String| {
            self.err(desc, what, "hwgen's convolutions have square kernels, one stride, the same padding on every side and no dilation")
        };
        let [_, cin_g, kh, kw] = w.dims[..] else {
            return Err(bad(format!("weights of shape {:?} are not 4-D", w.dims)));
        };
        let strides = n.attr_ints_or("strides", &[1, 1]);
        let pads = n.attr_ints_or("pads", &[0; 4]);
        let dil = n.attr_ints_or("dilations", &[1, 1]);
        let auto = match n.attr("auto_pad") {
            Some(AttrValue::Text(s)) => s.as_str(),
            _ => "NOTSET",
        };
        if !matches!(auto, "NOTSET" | "VALID") {
            return Err(bad(format!("auto_pad {auto}")));
        }
        if kh != kw
            || strides.iter().any(|&s| s != strides[0])
            || pads.iter().any(|&p| p != pads[0])
            || dil.iter().any(|&d| d != 1)
        {
            return Err(bad(format!(
                "kernel {kh}x{kw}, strides {strides:?}, pads {pads:?}, dilations {dil:?}"
            )));
        }
        let fine = kh >= 1 && strides[0] >= 1 && (0..kh).contains(&pads[0]);
        if !fine {
            return Err(bad(format!("kernel {kh}, stride {}, padding {}: hwgen takes a kernel of at least 1, a stride of at least 1 and a padding below the kernel", strides[0], pads[0])));
        }
        let groups = n.attr_int("group", 1) as usize;
        if groups == 0 || cin_g as usize * groups != cin {
            return Err(self.err(desc, format!("{groups} groups of {cin_g} input channels do not make the input's {cin} channels"), "check the model"));
        }
        Ok(ConvGeom {
            k: kh as usize,
            stride: strides[0] as usize,
            pad: pads[0] as usize,
            groups,
        })
    }
}

#[cfg(test)]
mod tests;
