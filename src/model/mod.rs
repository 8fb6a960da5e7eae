//! The native model format: a TOML file describing a network as an input tensor and a list
//! of layers, each producing a tensor named after the layer. Weights, biases and the input
//! come from `.npy` files (paths relative to the model file) or from a seeded generator
//! (`"random"`). Tensors are HWC (batch 1); convolution weights are [kh][kw][cin/groups][cout];
//! fully-connected weights are [h*w*c][cout] over the HWC flattening of their input.
//!
//! Every tensor carries its element [`Format`] and every layer its [`Precision`]; the files
//! of this module are the raw format (`raw`), data sources (`data`), the model's datatypes
//! and the type boundaries between precisions (`types`), per-operator parsing (`ops`) and
//! weight quantization (`quant`).

mod data;
pub mod lower;
pub mod npy;
pub mod op;
mod quant;
mod raw;
mod types;

pub use op::{
    conv_accumulate, Add, AvgPool, Concat, Conv, Eltwise, MaxPool, Op, Operator, Upsample,
};

pub use crate::numeric::int::Combine;

/// The largest window (kernel) of `maxpool` and `avgpool`.
pub const MAX_POOL_KERNEL: usize = 15;
pub use crate::numeric::Requant;
pub use quant::AUTO_MX_ERROR_RATIO;

use crate::numeric::{Format, MxFormat, Precision};
use std::fmt;
use std::path::Path;

/// The most elements one tensor or weight array of a model may hold (2^27: 1 GiB as the
/// golden model's 64-bit codes). Every size is checked against it, without overflow,
/// before anything is allocated.
pub const MAX_ELEMENTS: usize = 1 << 27;

/// The element count of `shape`, if it is at most [`MAX_ELEMENTS`].
pub fn element_count(shape: &[usize]) -> Option<usize> {
    shape
        .iter()
        .try_fold(1usize, |n, d| n.checked_mul(*d))
        .filter(|n| *n <= MAX_ELEMENTS)
}

/// A tensor of element codes with their format, HWC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    pub h: usize,
    pub w: usize,
    pub c: usize,
    pub format: Format,
    /// Element codes in HWC order.
    pub data: Vec<i64>,
    /// MX block scales, one per pixel and block of channels:
    /// `scales[(y * w + x) * (c / block) + b]`; empty for the other formats.
    pub scales: Vec<u8>,
}

impl Tensor {
    pub fn zeros(h: usize, w: usize, c: usize, format: Format) -> Tensor {
        let blocks = format.block_size().map_or(0, |b| c.div_ceil(b as usize));
        Tensor {
            h,
            w,
            c,
            format,
            data: vec![0; h * w * c],
            scales: vec![0; h * w * blocks],
        }
    }
    pub fn at(&self, y: usize, x: usize, ch: usize) -> i64 {
        self.data[(y * self.w + x) * self.c + ch]
    }
    pub fn set(&mut self, y: usize, x: usize, ch: usize, v: i64) {
        self.data[(y * self.w + x) * self.c + ch] = v;
    }
    /// The block scale of pixel (y, x) and channel block `b` (0 for formats without).
    pub fn scale(&self, y: usize, x: usize, b: usize) -> u8 {
        if self.scales.is_empty() {
            return 0;
        }
        let blocks = self.scales.len() / (self.h * self.w);
        self.scales[(y * self.w + x) * blocks + b]
    }
    pub fn shape(&self) -> [usize; 3] {
        [self.h, self.w, self.c]
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub name: String,
    pub inputs: Vec<String>,
    pub op: Op,
    /// Output shape (h, w, c).
    pub out: [usize; 3],
    /// What the layer computes in.
    pub prec: Precision,
    /// The format its output tensor is stored in: its own output format, or at a boundary
    /// between precisions the input format of the layers that read it.
    pub out_format: Format,
    /// At a boundary between integer and MX layers: the output's integer elements q stand
    /// for q * 2^exponent (`output_exponent`).
    pub exponent: Option<i32>,
    /// `type = "auto"`: the compiler chose `prec` from the weights.
    pub auto: bool,
}

impl Layer {
    /// The MX format at this layer's boundary, if one side is MX.
    fn boundary_mx(&self) -> Option<MxFormat> {
        match (self.prec, self.out_format) {
            (Precision::Mx(m), _) | (_, Format::Mx(m)) => Some(m),
            _ => None,
        }
    }
    /// The E8M0 code under which the integer elements at this layer's boundary are MX
    /// elements: q * 2^exponent = 2^(code - 127) * q / 2^frac (0 where there is none).
    pub fn fixed_scale(&self) -> u8 {
        match (self.exponent, self.boundary_mx()) {
            (Some(e), Some(m)) => (e + 127 + m.elem.frac as i32) as u8,
            _ => 0,
        }
    }
    /// True when the output tensor has another format than the layer computes in.
    pub fn converts(&self) -> bool {
        self.out_format != self.prec.ops().output()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    pub name: String,
    /// The model inputs (name, tensor), in file order.
    pub inputs: Vec<(String, Tensor)>,
    pub layers: Vec<Layer>,
    /// The layers whose tensors are the model's outputs, in file order (`outputs`, by
    /// default the last layer).
    pub outputs: Vec<String>,
}

impl Model {
    /// The first model input.
    pub fn input(&self) -> &Tensor {
        &self.inputs[0].1
    }
    /// The name of the first model input.
    pub fn input_name(&self) -> &str {
        &self.inputs[0].0
    }
    /// The model input called `name`.
    pub fn input_named(&self, name: &str) -> Option<&Tensor> {
        self.inputs.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }
    /// Shape of a named tensor.
    pub fn shape_of(&self, name: &str) -> Option<[usize; 3]> {
        if let Some(t) = self.input_named(name) {
            return Some(t.shape());
        }
        self.layers.iter().find(|l| l.name == name).map(|l| l.out)
    }
    /// Format of a named tensor.
    pub fn format_of(&self, name: &str) -> Option<Format> {
        if let Some(t) = self.input_named(name) {
            return Some(t.format);
        }
        self.layers
            .iter()
            .find(|l| l.name == name)
            .map(|l| l.out_format)
    }
    /// The model's first output tensor.
    pub fn output(&self) -> &Layer {
        self.layer(&self.outputs[0]).expect("outputs name layers")
    }
    /// The layer called `name`.
    pub fn layer(&self, name: &str) -> Option<&Layer> {
        self.layers.iter().find(|l| l.name == name)
    }
    /// The precisions the layers compute in, in the order of first use.
    pub fn precisions(&self) -> Vec<Precision> {
        let mut v: Vec<Precision> = Vec::new();
        for l in &self.layers {
            if !v.contains(&l.prec) {
                v.push(l.prec);
            }
        }
        v
    }
    /// Multiply-accumulates of the network (the weighted sums of its operators).
    pub fn macs(&self) -> u64 {
        self.layers
            .iter()
            .map(|l| {
                let cin = self.shape_of(&l.inputs[0]).expect("input exists")[2];
                l.op.get().macs(l, cin)
            })
            .sum()
    }
}

/// A problem in a model file: file, line and column, layer, field, rule and fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelProblem {
    pub file: String,
    pub location: Option<crate::location::Location>,
    pub layer: Option<String>,
    pub field: String,
    pub rule: String,
    pub fix: String,
}

/// The problems found in a model file (at least one): every key that does not apply to its
/// operator and every unknown operator at once, else the first problem of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    pub problems: Vec<ModelProblem>,
}

impl From<ModelProblem> for ModelError {
    fn from(p: ModelProblem) -> Self {
        ModelError { problems: vec![p] }
    }
}

impl fmt::Display for ModelProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let loc = self
            .location
            .as_ref()
            .map(|l| format!(":{}:{}", l.line, l.col))
            .unwrap_or_default();
        let what = match &self.layer {
            Some(l) => format!("{}{loc}: layer {l}: {}", self.file, self.field),
            None => format!("{}{loc}: {}", self.file, self.field),
        };
        write!(
            f,
            "{}",
            crate::refusal::Refusal::new(what, &self.rule, &self.fix)
        )
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ModelError {}

/// Read and check a model file.
pub fn load(path: &Path) -> Result<Model, ModelError> {
    let file = path.display().to_string();
    let src = crate::location::read_text(path, "model file", "sample models are in models/")
        .map_err(|(rule, fix)| ModelProblem {
            file: file.clone(),
            location: None,
            layer: None,
            field: "<file>".into(),
            rule,
            fix,
        })?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse_str(&src, &file, &dir)
}

/// Check model text; `dir` resolves the paths of `.npy` files.
/// The model's `rounding` (of exact ties in every integer requantization): "half_up"
/// (the default) or "half_even", set on every layer's requantization.
fn rounding(ctx: &data::Ctx, key: Option<&str>, layers: &mut [Layer]) -> Result<(), ModelError> {
    let half_even = match key {
        None | Some("half_up") => return Ok(()),
        Some("half_even") => true,
        Some(other) => {
            return Err(ctx.err(
                &format!("rounding = {other}"),
                "requantization rounds exact ties half_up or half_even",
                "use rounding = \"half_up\" (the default) or \"half_even\" (ONNX's)",
            ))
        }
    };
    if half_even {
        for l in layers.iter_mut() {
            l.op.get_mut().round_half_even();
        }
    }
    Ok(())
}

pub fn parse_str(src: &str, file: &str, dir: &Path) -> Result<Model, ModelError> {
    let raw: raw::RawModel = toml::from_str(src).map_err(|e| {
        let d = crate::location::Problem::of_toml(src, &e);
        ModelProblem {
            file: file.into(),
            location: d.location,
            layer: None,
            field: match d.value {
                Some(v) => format!("{} = {v}", d.key),
                None => d.key,
            },
            rule: d.rule,
            fix: d.fix,
        }
    })?;
    let mut ctx = data::Ctx::new(file, src, dir, raw.seed);
    // Problems that do not depend on other layers are reported for all layers at once.
    let problems: Vec<ModelProblem> = raw
        .layer
        .iter()
        .filter_map(|rl| op::check_keys(&ctx, rl).err())
        .flat_map(|e| e.problems)
        .collect();
    if !problems.is_empty() {
        return Err(ModelError { problems });
    }
    let types = types::model_types(&ctx, &raw)?;
    let raw_inputs = raw.input.as_slice();
    let mut inputs: Vec<(String, Tensor)> = Vec::new();
    for (k, ri) in raw_inputs.iter().enumerate() {
        let name = match (&ri.name, raw_inputs.len()) {
            (Some(n), _) => n.clone(),
            (None, 1) => "input".to_string(),
            (None, _) => {
                return Err(ctx.err(
                    &format!("input[{k}].name"),
                    "a model with several [[input]] tables names each of them",
                    "add name = \"...\" to every [[input]]",
                ))
            }
        };
        if inputs.iter().any(|(n, _)| *n == name) {
            return Err(ctx.err(
                &format!("input.name = {name}"),
                format!("two inputs are called {name}"),
                "give every input its own name",
            ));
        }
        let tensor = data::input(&mut ctx, ri, &types)?;
        inputs.push((name, tensor));
    }
    let mut layers: Vec<Layer> = Vec::new();
    if raw.layer.is_empty() {
        return Err(ctx.err(
            "layer",
            "a model needs at least one [[layer]]",
            "add a [[layer]] table",
        ));
    }
    for rl in &raw.layer {
        ctx.layer = Some(rl.name.clone());
        let layer = op::layer(&mut ctx, rl, &types, &inputs, &layers)?;
        layers.push(layer);
    }
    ctx.layer = None;
    let outputs = match &raw.outputs {
        None => vec![layers.last().expect("a layer").name.clone()],
        Some(names) => {
            let mut out: Vec<String> = Vec::new();
            for n in names {
                if !layers.iter().any(|l| l.name == *n) {
                    return Err(ctx.err(
                        &format!("outputs = {names:?}"),
                        format!("{n} is not a layer of the model; outputs name layers"),
                        "list the names of the layers whose tensors the model returns",
                    ));
                }
                if out.contains(n) {
                    return Err(ctx.err(
                        &format!("outputs = {names:?}"),
                        format!("{n} is listed twice"),
                        "list every output once",
                    ));
                }
                out.push(n.clone());
            }
            if out.is_empty() {
                return Err(ctx.err(
                    "outputs = []",
                    "a model has at least one output",
                    "list the output layers, or remove outputs (the last layer is the output)",
                ));
            }
            out
        }
    };
    types::boundaries(&mut ctx, &mut layers, &inputs)?;
    rounding(&ctx, raw.rounding.as_deref(), &mut layers)?;
    Ok(Model {
        name: raw.name.unwrap_or_else(|| "model".into()),
        inputs,
        layers,
        outputs,
    })
}
