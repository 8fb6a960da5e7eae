//! The native model format: a TOML file describing a quantized network as an input tensor
//! and a list of layers, each producing a tensor named after the layer. Weights, biases and
//! the input come from `.npy` files (paths relative to the model file) or from a seeded
//! generator (`"random"`). Tensors are HWC (batch 1); convolution weights are
//! [kh][kw][cin/groups][cout]; fully-connected weights are [h*w*c][cout] over the HWC
//! flattening of their input.

pub mod npy;

use crate::design::{IntType, MxFormat};
use crate::numeric::mx::quantize_block;
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    pub h: usize,
    pub w: usize,
    pub c: usize,
    /// Values in HWC order.
    pub data: Vec<i64>,
}

impl Tensor {
    pub fn zeros(h: usize, w: usize, c: usize) -> Tensor {
        Tensor {
            h,
            w,
            c,
            data: vec![0; h * w * c],
        }
    }
    pub fn at(&self, y: usize, x: usize, ch: usize) -> i64 {
        self.data[(y * self.w + x) * self.c + ch]
    }
    pub fn set(&mut self, y: usize, x: usize, ch: usize, v: i64) {
        self.data[(y * self.w + x) * self.c + ch] = v;
    }
    pub fn shape(&self) -> [usize; 3] {
        [self.h, self.w, self.c]
    }
}

/// Requantization as the hardware does it (see the README).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requant {
    pub multiplier: u64,
    pub shift: u32,
    pub zero_point: i64,
}

impl Requant {
    pub const IDENTITY: Requant = Requant {
        multiplier: 1,
        shift: 0,
        zero_point: 0,
    };
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Convolution (fully-connected layers are convolutions whose kernel covers the input).
    Conv {
        kh: usize,
        kw: usize,
        stride: usize,
        pad: usize,
        groups: usize,
        cout: usize,
        weights: Vec<i64>,
        bias: Vec<i64>,
        requant: Requant,
        relu: bool,
        /// ReLU6: the upper clamp, as a quantized output value.
        clamp: Option<i64>,
    },
    MaxPool {
        k: usize,
        stride: usize,
    },
    AvgPool {
        k: usize,
        stride: usize,
        requant: Requant,
    },
    /// y = saturate(requant(a) + b)
    Add {
        requant: Requant,
        relu: bool,
        clamp: Option<i64>,
    },
    Upsample {
        factor: usize,
    },
}

impl Op {
    pub fn name(&self) -> &'static str {
        match self {
            Op::Conv { .. } => "conv2d",
            Op::MaxPool { .. } => "maxpool",
            Op::AvgPool { .. } => "avgpool",
            Op::Add { .. } => "add",
            Op::Upsample { .. } => "upsample",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub name: String,
    pub inputs: Vec<String>,
    pub op: Op,
    /// Output shape (h, w, c).
    pub out: [usize; 3],
    /// The layer computes in MX (MX models, and MX layers of a mixed model).
    pub mx: bool,
    /// Its output tensor is stored as MX blocks (the type of the layers that read it).
    pub out_mx: bool,
    /// Mixed models, at a boundary between integer and MX layers: the output's integer
    /// elements q stand for q * 2^exponent (`output_exponent`).
    pub exponent: Option<i32>,
    /// `type = "auto"`: the compiler chose `mx` from the weights.
    pub auto: bool,
}

impl Layer {
    /// The E8M0 code under which the integer rows at this layer's output are MX elements of
    /// `frac` fraction bits: q * 2^exponent = 2^(code - 127) * q / 2^frac.
    pub fn fixed_scale(&self, frac: u32) -> Option<u8> {
        self.exponent.map(|e| (e + 127 + frac as i32) as u8)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    pub name: String,
    /// MX models (`type = "mxint8"`): element codes live in the tensors and weights as
    /// integers; the block scales are here.
    pub mx: Option<MxModel>,
    /// Floating-point models (`type = "fp8_e4m3"`, `"fp8_e5m2"` or `"bf16"`): the tensors
    /// and weights hold the codes.
    pub fp: Option<crate::numeric::MiniFloat>,
    /// Element type of every activation tensor.
    pub act_type: IntType,
    pub weight_type: IntType,
    pub input_name: String,
    pub input: Tensor,
    pub layers: Vec<Layer>,
}

/// The block scales of an MX model. Blocks run along the channels (the reduction dimension
/// of the next convolution): the input's scale of pixel (y, x) and channel block b is
/// `input_scales[(y * w + x) * (c / block) + b]`; a convolution's weight scale of tap
/// (ky, kx), input-channel block b and output channel co is
/// `weight_scales[layer][((ky * kw + kx) * (cin / block) + b) * cout + co]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MxModel {
    pub format: MxFormat,
    pub input_scales: Vec<u8>,
    pub weight_scales: HashMap<String, Vec<u8>>,
}

impl Model {
    /// Integer layers in a model with an MX format (per-layer or automatic types): a model
    /// for a multi-precision design, run by `golden::run_mixed`.
    pub fn is_mixed(&self) -> bool {
        self.mx.is_some() && self.layers.iter().any(|l| !l.mx)
    }

    /// True when the tensor `name` is stored as MX blocks.
    pub fn tensor_is_mx(&self, name: &str) -> bool {
        if name == self.input_name {
            return self.mx.as_ref().is_some_and(|m| !m.input_scales.is_empty());
        }
        self.layers.iter().any(|l| l.name == name && l.out_mx)
    }

    /// Shape of a named tensor.
    pub fn shape_of(&self, name: &str) -> Option<[usize; 3]> {
        if name == self.input_name {
            return Some(self.input.shape());
        }
        self.layers.iter().find(|l| l.name == name).map(|l| l.out)
    }

    /// Multiply-accumulates of the network (convolutions only).
    pub fn macs(&self) -> u64 {
        self.layers
            .iter()
            .map(|l| match &l.op {
                Op::Conv { kh, kw, groups, .. } => {
                    let cin = self.shape_of(&l.inputs[0]).unwrap()[2];
                    (l.out[0] * l.out[1] * l.out[2] * kh * kw * (cin / groups)) as u64
                }
                _ => 0,
            })
            .sum()
    }
}

/// A problem in a model file: file, layer, field, rule and fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    pub file: String,
    pub layer: Option<String>,
    pub field: String,
    pub rule: String,
    pub fix: String,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.layer {
            Some(l) => writeln!(f, "error: {}: layer {l}: {}", self.file, self.field)?,
            None => writeln!(f, "error: {}: {}", self.file, self.field)?,
        }
        writeln!(f, "  rule: {}", self.rule)?;
        write!(f, "  fix:  {}", self.fix)
    }
}

impl std::error::Error for ModelError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    name: Option<String>,
    seed: Option<u64>,
    #[serde(rename = "type")]
    act_type: Option<String>,
    weight_type: Option<String>,
    block_size: Option<i64>,
    input: RawInput,
    layer: Vec<RawLayer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInput {
    name: Option<String>,
    shape: Vec<i64>,
    data: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Kernel {
    Square(i64),
    Rect(Vec<i64>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequant {
    multiplier: i64,
    shift: i64,
    zero_point: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLayer {
    name: String,
    op: String,
    input: Option<String>,
    residual: Option<String>,
    out_channels: Option<i64>,
    kernel: Option<Kernel>,
    stride: Option<i64>,
    padding: Option<i64>,
    groups: Option<i64>,
    weights: Option<String>,
    bias: Option<String>,
    requant: Option<RawRequant>,
    activation: Option<String>,
    relu6_max: Option<i64>,
    factor: Option<i64>,
    #[serde(rename = "type")]
    layer_type: Option<String>,
    output_exponent: Option<i64>,
}

struct Ctx<'a> {
    file: String,
    dir: PathBuf,
    layer: Option<String>,
    rng: u64,
    _src: &'a str,
}

impl Ctx<'_> {
    fn err(&self, field: &str, rule: impl Into<String>, fix: impl Into<String>) -> ModelError {
        ModelError {
            file: self.file.clone(),
            layer: self.layer.clone(),
            field: field.to_string(),
            rule: rule.into(),
            fix: fix.into(),
        }
    }

    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn positive(
        &self,
        field: &str,
        v: Option<i64>,
        default: Option<i64>,
        max: i64,
    ) -> Result<usize, ModelError> {
        let v = match (v, default) {
            (Some(v), _) => v,
            (None, Some(d)) => d,
            (None, None) => {
                return Err(self.err(
                    field,
                    format!("{field} is required"),
                    format!("add {field} = ..."),
                ))
            }
        };
        if v < 1 || v > max {
            return Err(self.err(
                &format!("{field} = {v}"),
                format!("{field} must be between 1 and {max}"),
                format!("use a value from 1 to {max}"),
            ));
        }
        Ok(v as usize)
    }

    /// Approximately standard normal values (Irwin-Hall: the sum of 12 uniforms, minus 6).
    fn gaussian(&mut self, count: usize) -> Vec<f32> {
        (0..count)
            .map(|_| {
                let s: f64 = (0..12)
                    .map(|_| (self.next() >> 11) as f64 / (1u64 << 53) as f64)
                    .sum();
                (s - 6.0) as f32
            })
            .collect()
    }

    /// Values from `"random"` (uniform in lo..=hi) or a `.npy` file with `shape`.
    fn data(
        &mut self,
        field: &str,
        spec: &str,
        shape: &[usize],
        lo: i64,
        hi: i64,
    ) -> Result<Vec<i64>, ModelError> {
        let count: usize = shape.iter().product();
        if spec == "random" {
            let span = (hi - lo + 1) as u64;
            return Ok((0..count)
                .map(|_| lo + (self.next() % span) as i64)
                .collect());
        }
        let path = self.dir.join(spec);
        let npy = npy::read(&path).map_err(|e| {
            self.err(
                field,
                e,
                "give the path of a .npy file relative to the model file, or \"random\"",
            )
        })?;
        if npy.shape.iter().product::<usize>() != count {
            return Err(self.err(
                field,
                format!(
                    "{} has shape {:?}, expected {:?} ({} values)",
                    spec, npy.shape, shape, count
                ),
                "export the array with the expected shape",
            ));
        }
        if let Some(v) = npy.data.iter().find(|v| **v < lo || **v > hi) {
            return Err(self.err(
                field,
                format!("{spec} holds {v}, outside {lo}..={hi}"),
                "quantize the data to the element type first",
            ));
        }
        Ok(npy.data)
    }

    /// Float values for an MX model: `"random"` (or absent) draws from a seeded normal
    /// distribution; a `.npy` file must hold float32 values of `shape`.
    fn floats(
        &mut self,
        field: &str,
        spec: Option<&str>,
        shape: &[usize],
    ) -> Result<Vec<f32>, ModelError> {
        let count: usize = shape.iter().product();
        let spec = spec.unwrap_or("random");
        if spec == "random" {
            return Ok(self.gaussian(count));
        }
        let path = self.dir.join(spec);
        let v = npy::read_f32(&path).map_err(|e| {
            self.err(
                field,
                e,
                "give the path of a float32 .npy file relative to the model file, or \"random\"",
            )
        })?;
        if v.shape.iter().product::<usize>() != count {
            return Err(self.err(
                field,
                format!(
                    "{} has shape {:?}, expected {:?} ({} values)",
                    spec, v.shape, shape, count
                ),
                "export the array with the expected shape",
            ));
        }
        Ok(v.data)
    }

    fn requant(&self, r: Option<&RawRequant>, default: Requant) -> Result<Requant, ModelError> {
        let Some(r) = r else { return Ok(default) };
        if !(0..=65535).contains(&r.multiplier) {
            return Err(self.err(
                &format!("requant.multiplier = {}", r.multiplier),
                "the requantization multiplier is an unsigned 16-bit integer",
                "use 0..=65535 and adjust shift",
            ));
        }
        if !(0..=63).contains(&r.shift) {
            return Err(self.err(
                &format!("requant.shift = {}", r.shift),
                "shift is 0..=63",
                "use 0..=63",
            ));
        }
        let zp = r.zero_point.unwrap_or(0);
        if !(-32768..=32767).contains(&zp) {
            return Err(self.err(
                &format!("requant.zero_point = {zp}"),
                "the zero point is a signed 16-bit integer",
                "use -32768..=32767",
            ));
        }
        Ok(Requant {
            multiplier: r.multiplier as u64,
            shift: r.shift as u32,
            zero_point: zp,
        })
    }
}

fn parse_type(ctx: &Ctx, field: &str, s: Option<&str>) -> Result<IntType, ModelError> {
    let s = s.unwrap_or("int8");
    let (signed, d) = if let Some(d) = s.strip_prefix("uint") {
        (false, d)
    } else if let Some(d) = s.strip_prefix("int") {
        (true, d)
    } else {
        (true, "")
    };
    match d.parse::<u32>() {
        Ok(b) if (4..=16).contains(&b) => Ok(IntType::new(signed, b)),
        _ => Err(ctx.err(
            &format!("{field} = {s}"),
            "element types are intN or uintN with N from 4 to 16",
            "use \"int8\"",
        )),
    }
}

/// Read and check a model file.
pub fn load(path: &Path) -> Result<Model, ModelError> {
    let file = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| ModelError {
        file: file.clone(),
        layer: None,
        field: "<file>".into(),
        rule: format!("cannot read the model file: {e}"),
        fix: "check the path; sample models are in models/".into(),
    })?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse_str(&src, &file, &dir)
}

pub fn parse_str(src: &str, file: &str, dir: &Path) -> Result<Model, ModelError> {
    let raw: RawModel = toml::from_str(src).map_err(|e| {
        let loc = e
            .span()
            .map(|s| crate::config::Location::of_offset(src, s.start))
            .map(|l| format!(" (line {}, column {})", l.line, l.col))
            .unwrap_or_default();
        ModelError {
            file: file.to_string(),
            layer: None,
            field: format!("<document>{loc}"),
            rule: e.message().to_string(),
            fix: "fix the TOML at that position; unknown keys are errors".into(),
        }
    })?;
    let mut ctx = Ctx {
        file: file.to_string(),
        dir: dir.to_path_buf(),
        layer: None,
        rng: raw.seed.unwrap_or(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        _src: src,
    };
    // Per-layer types (mixed models): intN and mxintN of the same width.
    let top = raw.act_type.as_deref().unwrap_or("int8");
    let counterpart = match top {
        "int8" => Some("mxint8"),
        "mxint8" => Some("int8"),
        "int4" => Some("mxint4"),
        "mxint4" => Some("int4"),
        _ => None,
    };
    let mut mixed_mx: Option<&str> = None;
    for rl in &raw.layer {
        let Some(lt) = rl.layer_type.as_deref() else {
            continue;
        };
        if lt == top {
            continue;
        }
        if let (true, Some(cp)) = (lt == "auto", counterpart) {
            // The compiler chooses; the MX format must be known either way.
            let mx = if top.starts_with("mx") { top } else { cp };
            mixed_mx = mixed_mx.or(Some(mx));
            continue;
        }
        if Some(lt) != counterpart {
            ctx.layer = Some(rl.name.clone());
            let fix = match counterpart {
                Some(c) => format!("use type = \"{top}\", \"{c}\" or \"auto\""),
                None => format!("remove type (the model is {top} throughout)"),
            };
            return Err(ctx.err(
                &format!("type = {lt}"),
                format!("a layer's type is the model's ({top}) or its counterpart of the same width: a mixed model pairs int8 with mxint8 (or int4 with mxint4)"),
                fix,
            ));
        }
        if lt.starts_with("mx") {
            mixed_mx = Some(lt);
        }
    }
    let mx_type = if top.starts_with("mx") {
        Some(top)
    } else {
        mixed_mx
    };
    let mx_format = match mx_type {
        Some(ty @ ("mxint8" | "mxint4")) => {
            if let Some(w) = raw.weight_type.as_deref().filter(|w| *w != top) {
                return Err(ctx.err(
                    &format!("weight_type = {w}"),
                    format!("an MX model uses {ty} for activations and weights"),
                    format!("remove weight_type or set it to \"{ty}\""),
                ));
            }
            let block_size = raw.block_size.unwrap_or(32);
            if ![16, 32, 64].contains(&block_size) {
                return Err(ctx.err(
                    &format!("block_size = {block_size}"),
                    "the MX block size is 16, 32 or 64",
                    "use block_size = 32",
                ));
            }
            let (element, bits, frac) = if ty == "mxint8" {
                ("mxint8", 8, 6)
            } else {
                ("mxint4", 4, 2)
            };
            Some(MxFormat {
                element,
                bits,
                frac,
                block_size: block_size as u32,
            })
        }
        Some("fp8_e4m3" | "fp8_e5m2" | "bf16") if raw.block_size.is_some() => {
            return Err(ctx.err(
                "block_size",
                "block_size applies to MX models only",
                "remove block_size",
            ))
        }
        _ => {
            if let Some(b) = raw.block_size {
                return Err(ctx.err(
                    &format!("block_size = {b}"),
                    "block_size applies to MX models (type = \"mxint8\") only",
                    "remove block_size, or set type = \"mxint8\"",
                ));
            }
            None
        }
    };
    let fp_format = match raw.act_type.as_deref() {
        Some("fp8_e4m3") => Some(crate::numeric::E4M3),
        Some("fp8_e5m2") => Some(crate::numeric::E5M2),
        Some("bf16") => Some(crate::numeric::BF16),
        _ => None,
    };
    if let (Some(f), Some(w)) = (fp_format, raw.weight_type.as_deref()) {
        if w != f.name {
            return Err(ctx.err(
                &format!("weight_type = {w}"),
                format!(
                    "a floating-point model uses {} for activations and weights",
                    f.name
                ),
                format!("remove weight_type or set it to \"{}\"", f.name),
            ));
        }
    }
    let (act_type, weight_type) = if let Some(f) = fp_format {
        (IntType::new(false, f.bits()), IntType::new(false, f.bits()))
    } else if let Some(f) = mx_format {
        (IntType::new(true, f.bits), IntType::new(true, f.bits))
    } else {
        (
            parse_type(&ctx, "type", raw.act_type.as_deref())?,
            parse_type(&ctx, "weight_type", raw.weight_type.as_deref())?,
        )
    };
    let mut weight_scales: HashMap<String, Vec<u8>> = HashMap::new();
    if raw.input.shape.len() != 3 || raw.input.shape.iter().any(|d| *d < 1 || *d > 4096) {
        return Err(ctx.err(
            &format!("input.shape = {:?}", raw.input.shape),
            "the input shape is [height, width, channels], each 1..=4096",
            "write for example shape = [8, 8, 16]",
        ));
    }
    let shape: Vec<usize> = raw.input.shape.iter().map(|d| *d as usize).collect();
    let input_name = raw.input.name.clone().unwrap_or_else(|| "input".into());
    let mut input_scales = Vec::new();
    let top_mx = top.starts_with("mx");
    let per_layer_types = raw.layer.iter().any(|l| l.layer_type.is_some());
    let data = match mx_format.filter(|_| top_mx) {
        Some(f) => {
            let bs = f.block_size as usize;
            if !shape[2].is_multiple_of(bs) {
                return Err(ctx.err(
                    &format!("input.shape = {:?}", raw.input.shape),
                    format!("MX blocks of {bs} run along the channels, so the channels must be a multiple of {bs}"),
                    format!("use {} channels", shape[2].div_ceil(bs) * bs),
                ));
            }
            let x = ctx.floats("input.data", raw.input.data.as_deref(), &shape)?;
            let (codes, scales) = quantize_rows(&x, bs, f);
            input_scales = scales;
            codes
        }
        None if fp_format.is_some() => {
            let f = fp_format.expect("checked");
            let x = ctx.floats("input.data", raw.input.data.as_deref(), &shape)?;
            x.iter().map(|v| i64::from(f.encode(*v))).collect()
        }
        None => ctx.data(
            "input.data",
            raw.input.data.as_deref().unwrap_or("random"),
            &shape,
            act_type.min(),
            act_type.max(),
        )?,
    };
    let input = Tensor {
        h: shape[0],
        w: shape[1],
        c: shape[2],
        data,
    };

    let mut shapes: HashMap<String, [usize; 3]> = HashMap::new();
    shapes.insert(input_name.clone(), input.shape());
    let mut layers: Vec<Layer> = Vec::new();
    let mut prev = input_name.clone();
    if raw.layer.is_empty() {
        return Err(ctx.err(
            "layer",
            "a model needs at least one [[layer]]",
            "add a [[layer]] table",
        ));
    }
    for rl in &raw.layer {
        ctx.layer = Some(rl.name.clone());
        if shapes.contains_key(&rl.name) {
            return Err(ctx.err(
                "name",
                format!("tensor name {} is already used", rl.name),
                "give every layer its own name",
            ));
        }
        let src_name = rl.input.clone().unwrap_or_else(|| prev.clone());
        let [h, w, c] = *shapes.get(&src_name).ok_or_else(|| {
            ctx.err(
                &format!("input = {src_name}"),
                "the input must name the model input or an earlier layer",
                "use the name of an earlier layer",
            )
        })?;
        let (relu, clamp) = match rl.activation.as_deref() {
            None | Some("none") => (false, None),
            Some("relu") => (true, None),
            Some("relu6") => match rl.relu6_max {
                Some(m) if (act_type.min()..=act_type.max()).contains(&m) => (true, Some(m)),
                Some(m) => {
                    return Err(ctx.err(
                        &format!("relu6_max = {m}"),
                        format!("relu6_max is the quantized value of 6.0 and must be a {} value", act_type),
                        format!("use a value from {} to {}", act_type.min(), act_type.max()),
                    ))
                }
                None => {
                    return Err(ctx.err(
                        "relu6_max",
                        "activation = \"relu6\" needs relu6_max, the quantized value of 6.0 (zero_point + round(6 / scale))",
                        "add relu6_max = <value>",
                    ))
                }
            },
            Some(other) => {
                return Err(ctx.err(
                    &format!("activation = {other}"),
                    "supported activations: none, relu, relu6 (the piecewise-quadratic unit for GeLU, sigmoid and tanh is not implemented yet)",
                    "use \"relu\" or \"relu6\", or remove the key",
                ))
            }
        };
        // A layer's type: its own, else the model's; in a model with per-layer types,
        // pooling, add and upsample are integer operations.
        let conv = matches!(rl.op.as_str(), "conv2d" | "fc");
        let auto = rl.layer_type.as_deref() == Some("auto");
        if auto && !conv {
            return Err(ctx.err(
                "type = auto",
                "the compiler chooses the type of conv2d and fc layers only",
                "remove type (pooling, add and upsample are integer layers)",
            ));
        }
        let mut layer_mx = match rl.layer_type.as_deref() {
            Some("auto") => false, // decided from the weights below
            Some(t) => t.starts_with("mx"),
            None if !conv && per_layer_types => false,
            None => top_mx,
        };
        let exponent = match rl.output_exponent {
            None => None,
            Some(e) if (-100..=100).contains(&e) => Some(e as i32),
            Some(e) => {
                return Err(ctx.err(
                    &format!("output_exponent = {e}"),
                    "output_exponent is between -100 and 100 (the integer output q stands for q * 2^output_exponent)",
                    "use an exponent from -100 to 100",
                ))
            }
        };
        let mut inputs = vec![src_name.clone()];
        let mut auto_requant: Option<Requant> = None;
        let (op, out) = match rl.op.as_str() {
            "conv2d" | "fc" => {
                let fc = rl.op == "fc";
                let cout = ctx.positive("out_channels", rl.out_channels, None, 65536)?;
                let (kh, kw) = if fc {
                    (h, w)
                } else {
                    match &rl.kernel {
                        Some(Kernel::Square(k)) => (
                            ctx.positive("kernel", Some(*k), None, 15)?,
                            ctx.positive("kernel", Some(*k), None, 15)?,
                        ),
                        Some(Kernel::Rect(v)) if v.len() == 2 => (
                            ctx.positive("kernel", Some(v[0]), None, 15)?,
                            ctx.positive("kernel", Some(v[1]), None, 15)?,
                        ),
                        _ => {
                            return Err(ctx.err(
                                "kernel",
                                "conv2d needs kernel = K or [KH, KW]",
                                "add kernel = 3",
                            ))
                        }
                    }
                };
                let stride = if fc {
                    1
                } else {
                    ctx.positive("stride", rl.stride, Some(1), 8)?
                };
                let pad = if fc {
                    0
                } else {
                    rl.padding.unwrap_or(0).clamp(0, 16) as usize
                };
                if !fc && rl.padding.is_some_and(|p| !(0..=16).contains(&p)) {
                    return Err(ctx.err(
                        "padding",
                        "padding is 0..=16",
                        "use a padding from 0 to 16",
                    ));
                }
                let groups = if fc {
                    1
                } else {
                    ctx.positive("groups", rl.groups, Some(1), 65536)?
                };
                if c % groups != 0 || cout % groups != 0 {
                    return Err(ctx.err(
                        &format!("groups = {groups}"),
                        format!(
                            "groups must divide the input channels ({c}) and out_channels ({cout})"
                        ),
                        "use a divisor of both (groups = channels is a depthwise convolution)",
                    ));
                }
                if h + 2 * pad < kh || w + 2 * pad < kw {
                    return Err(ctx.err(
                        "kernel",
                        format!("the {kh}x{kw} kernel is larger than the padded {h}x{w} input"),
                        "use a smaller kernel or more padding",
                    ));
                }
                let oh = (h + 2 * pad - kh) / stride + 1;
                let ow = (w + 2 * pad - kw) / stride + 1;
                let wshape = [kh, kw, c / groups, cout];
                let wt = weight_type;
                let weights = if let Some(f) = fp_format {
                    check_fp_conv(&ctx, rl, groups)?;
                    let w = ctx.floats("weights", rl.weights.as_deref(), &wshape)?;
                    w.iter().map(|v| i64::from(f.encode(*v))).collect()
                } else if let Some(f) = mx_format.filter(|_| auto) {
                    let Some(e_out) = exponent else {
                        return Err(ctx.err(
                            "output_exponent",
                            "an automatic layer needs the fixed scale of its output, q * 2^output_exponent, whichever type the compiler chooses",
                            "add output_exponent = <e>",
                        ));
                    };
                    check_mx_conv(&ctx, rl, f, c, cout, groups)?;
                    let w = ctx.floats("weights", rl.weights.as_deref(), &wshape)?;
                    let (codes, scales) = quantize_weights(&w, kh * kw, c, cout, f);
                    let (ws, int_codes) = quantize_pow2(&w, weight_type);
                    let err_mx = relative_rms(&w, |i| {
                        let b = (i / cout) % c / f.block_size as usize;
                        let tap = i / (c * cout);
                        let s = scales[(tap * (c / f.block_size as usize) + b) * cout + i % cout];
                        codes[i] as f64 * crate::numeric::mx::e8m0_value(s)
                            / f64::from(1u32 << f.frac)
                    });
                    let err_int = relative_rms(&w, |i| int_codes[i] as f64 * 2f64.powi(ws));
                    layer_mx = err_int > AUTO_MX_ERROR_RATIO * err_mx;
                    if layer_mx {
                        weight_scales.insert(rl.name.clone(), scales);
                        codes
                    } else {
                        let r = auto_int_requant(&ctx, &layers, &src_name, ws, e_out)?;
                        auto_requant = Some(r);
                        int_codes
                    }
                } else if let Some(f) = mx_format.filter(|_| layer_mx) {
                    check_mx_conv(&ctx, rl, f, c, cout, groups)?;
                    let w = ctx.floats("weights", rl.weights.as_deref(), &wshape)?;
                    let (codes, scales) = quantize_weights(&w, kh * kw, c, cout, f);
                    weight_scales.insert(rl.name.clone(), scales);
                    codes
                } else {
                    ctx.data(
                        "weights",
                        rl.weights.as_deref().unwrap_or("random"),
                        &wshape,
                        wt.min(),
                        wt.max(),
                    )?
                };
                let bias = match rl.bias.as_deref() {
                    None => vec![0; cout],
                    Some(spec) => ctx.data("bias", spec, &[cout], -(1 << 20), 1 << 20)?,
                };
                let requant = match auto_requant {
                    Some(r) => r,
                    None => ctx.requant(
                        rl.requant.as_ref(),
                        Requant {
                            multiplier: 1,
                            shift: 8,
                            zero_point: 0,
                        },
                    )?,
                };
                (
                    Op::Conv {
                        kh,
                        kw,
                        stride,
                        pad,
                        groups,
                        cout,
                        weights,
                        bias,
                        requant,
                        relu,
                        clamp,
                    },
                    [oh, ow, cout],
                )
            }
            other if fp_format.is_some() => {
                return Err(ctx.err(
                    &format!("op = {other}"),
                    "floating-point models support conv2d and fc layers (with activation none or relu) so far",
                    "use type = \"int8\" for networks with pooling, add or upsample layers",
                ))
            }
            other if layer_mx => {
                return Err(ctx.err(
                    &format!("op = {other}"),
                    "MX models support conv2d and fc layers (with activation none or relu) so far",
                    "use type = \"int8\" for networks with pooling, add or upsample layers",
                ))
            }
            "maxpool" | "avgpool" => {
                let k = match &rl.kernel {
                    Some(Kernel::Square(k)) => ctx.positive("kernel", Some(*k), None, 15)?,
                    _ => {
                        return Err(ctx.err(
                            "kernel",
                            "pooling needs a square kernel = K",
                            "add kernel = 2",
                        ))
                    }
                };
                let stride = ctx.positive("stride", rl.stride, Some(k as i64), 8)?;
                if h < k || w < k {
                    return Err(ctx.err(
                        "kernel",
                        format!("the {k}x{k} window is larger than the {h}x{w} input"),
                        "use a smaller window",
                    ));
                }
                let out = [(h - k) / stride + 1, (w - k) / stride + 1, c];
                if rl.op == "maxpool" {
                    (Op::MaxPool { k, stride }, out)
                } else {
                    // Default: divide by k*k with a 16-bit fixed-point multiplier.
                    let default = Requant {
                        multiplier: ((1u64 << 16) + (k * k) as u64 / 2) / (k * k) as u64,
                        shift: 16,
                        zero_point: 0,
                    };
                    (
                        Op::AvgPool {
                            k,
                            stride,
                            requant: ctx.requant(rl.requant.as_ref(), default)?,
                        },
                        out,
                    )
                }
            }
            "add" => {
                let other = rl.residual.clone().ok_or_else(|| {
                    ctx.err(
                        "residual",
                        "add needs residual = <tensor>",
                        "name the tensor to add",
                    )
                })?;
                let os = *shapes.get(&other).ok_or_else(|| {
                    ctx.err(
                        &format!("residual = {other}"),
                        "residual must name an earlier tensor",
                        "use the name of an earlier layer",
                    )
                })?;
                if os != [h, w, c] {
                    return Err(ctx.err(
                        "residual",
                        format!("shapes differ: {:?} and {:?}", [h, w, c], os),
                        "add tensors of the same shape",
                    ));
                }
                inputs.push(other);
                (
                    Op::Add {
                        requant: ctx.requant(rl.requant.as_ref(), Requant::IDENTITY)?,
                        relu,
                        clamp,
                    },
                    [h, w, c],
                )
            }
            "upsample" => {
                let f = ctx.positive("factor", rl.factor, Some(2), 8)?;
                (Op::Upsample { factor: f }, [h * f, w * f, c])
            }
            other => return Err(ctx.err(
                &format!("op = {other}"),
                "supported operators: conv2d, fc, maxpool, avgpool, add, upsample",
                "use one of those (flatten is implicit: fc takes the HWC flattening of its input)",
            )),
        };
        shapes.insert(rl.name.clone(), out);
        prev = rl.name.clone();
        layers.push(Layer {
            name: rl.name.clone(),
            inputs,
            op,
            out,
            mx: layer_mx,
            out_mx: layer_mx,
            exponent,
            auto,
        });
    }
    if let Some(f) = mx_format {
        type_boundaries(&mut ctx, &mut layers, &input_name, top_mx, f)?;
    }
    Ok(Model {
        name: raw.name.unwrap_or_else(|| "model".into()),
        fp: fp_format,
        mx: mx_format.map(|format| MxModel {
            format,
            input_scales,
            weight_scales,
        }),
        act_type,
        weight_type,
        input_name,
        input,
        layers,
    })
}

/// The types of the tensors of a model with MX layers: every tensor is stored in the type of
/// the layers that read it (they must agree); where that differs from its producer's type,
/// the producer (a conv2d or fc layer) converts at a fixed scale 2^output_exponent.
fn type_boundaries(
    ctx: &mut Ctx,
    layers: &mut [Layer],
    input_name: &str,
    top_mx: bool,
    f: MxFormat,
) -> Result<(), ModelError> {
    let kind = |mx: bool| {
        if mx {
            f.element.to_string()
        } else {
            format!("int{}", f.bits)
        }
    };
    let readers = |layers: &[Layer], t: &str| -> Vec<(String, bool)> {
        layers
            .iter()
            .filter(|l| l.inputs.iter().any(|i| i == t))
            .map(|l| (l.name.clone(), l.mx))
            .collect()
    };
    for r in readers(layers, input_name) {
        if r.1 != top_mx {
            ctx.layer = Some(r.0.clone());
            return Err(ctx.err(
                "type",
                format!("the layer is {} but reads the model input, which is {} (the model's type); types change only at the output of a conv2d or fc layer", kind(r.1), kind(top_mx)),
                format!("set type = \"{}\" on this layer, or make the model's type {}", kind(top_mx), kind(r.1)),
            ));
        }
    }
    for i in 0..layers.len() {
        let rs = readers(layers, &layers[i].name);
        ctx.layer = Some(layers[i].name.clone());
        let out_mx = rs.first().map_or(layers[i].mx, |r| r.1);
        if let Some(other) = rs.iter().find(|r| r.1 != out_mx) {
            return Err(ctx.err(
                "type",
                format!("layers {} ({}) and {} ({}) both read this layer's output; a tensor has one type", rs[0].0, kind(rs[0].1), other.0, kind(other.1)),
                "give the layers that read one tensor the same type",
            ));
        }
        // Exponents are also the scales an automatic layer computes with.
        let rs_auto = layers
            .iter()
            .any(|r| r.auto && r.inputs.iter().any(|t| *t == layers[i].name));
        let l = &mut layers[i];
        l.out_mx = out_mx;
        let boundary = out_mx != l.mx;
        match (boundary, l.exponent) {
            (true, None) => {
                return Err(ctx.err(
                    "output_exponent",
                    format!("the layer is {} and its output is read by {} ({}): the conversion needs the fixed scale of the integer values, q * 2^output_exponent", kind(l.mx), rs[0].0, kind(out_mx)),
                    "add output_exponent = <e> (for example -4: q stands for q / 16)",
                ))
            }
            (false, Some(_)) if l.auto || rs_auto => {}
            (false, Some(e)) => {
                return Err(ctx.err(
                    &format!("output_exponent = {e}"),
                    "output_exponent applies only where the layers reading the output use the other type",
                    "remove output_exponent",
                ))
            }
            _ => {}
        }
        if boundary {
            match &l.op {
                Op::Conv { requant, clamp, .. } => {
                    if !l.mx && requant.zero_point != 0 {
                        return Err(ctx.err(
                            &format!("requant.zero_point = {}", requant.zero_point),
                            "an integer layer whose output becomes MX elements is symmetric: MX elements have no zero point",
                            "use zero_point = 0",
                        ));
                    }
                    if !l.mx && clamp.is_some() {
                        return Err(ctx.err(
                            "activation",
                            "relu6 is not supported at an integer-to-MX boundary",
                            "use activation = \"relu\"",
                        ));
                    }
                }
                _ => {
                    return Err(ctx.err(
                        &format!("op = {}", l.op.name()),
                        "types change only at the output of a conv2d or fc layer",
                        "insert the type change after a conv2d or fc layer",
                    ))
                }
            }
        }
    }
    ctx.layer = None;
    Ok(())
}

/// `type = "auto"`: the layer runs in MXINT8 (MXINT4) when the error of its weights
/// quantized to int8 (int4) with one power-of-two scale is more than this many times the
/// error of the MX blocks; otherwise in the integer type, which is cheaper (rows without a
/// scale beat, weight tiles without scale rows) and keeps bias, pooling and add fusable.
pub const AUTO_MX_ERROR_RATIO: f64 = 4.0;

/// Weights quantized with one power-of-two scale 2^e (the smallest that fits the largest
/// magnitude), rounded to nearest even and saturated: (e, codes).
fn quantize_pow2(w: &[f32], t: IntType) -> (i32, Vec<i64>) {
    let amax = w.iter().fold(0f64, |m, v| m.max(f64::from(v.abs())));
    let mut e = if amax > 0.0 {
        (amax / t.max() as f64).log2().ceil() as i32
    } else {
        0
    };
    // The float log2 only proposes; the check is exact.
    while amax / 2f64.powi(e) > t.max() as f64 {
        e += 1;
    }
    while e > -126 && amax / 2f64.powi(e - 1) <= t.max() as f64 {
        e -= 1;
    }
    let codes = w
        .iter()
        .map(|v| {
            (f64::from(*v) / 2f64.powi(e))
                .round_ties_even()
                .clamp(t.min() as f64, t.max() as f64) as i64
        })
        .collect();
    (e, codes)
}

/// sqrt(sum (w - q)^2 / sum w^2), with q(i) the dequantized weight i.
fn relative_rms(w: &[f32], q: impl Fn(usize) -> f64) -> f64 {
    let (mut err, mut norm) = (0f64, 0f64);
    for (i, v) in w.iter().enumerate() {
        let v = f64::from(*v);
        err += (v - q(i)).powi(2);
        norm += v * v;
    }
    if norm == 0.0 {
        0.0
    } else {
        (err / norm).sqrt()
    }
}

/// The requantization of an automatic layer that runs in the integer type: its input holds
/// q * 2^e_in (the producer's output_exponent), its weights q * 2^ws, its output q * 2^e_out
/// (its own output_exponent), so acc * 2^(e_in + ws - e_out) as a multiplier and a shift.
fn auto_int_requant(
    ctx: &Ctx,
    layers: &[Layer],
    input: &str,
    ws: i32,
    e_out: i32,
) -> Result<Requant, ModelError> {
    let Some(producer) = layers.iter().find(|l| l.name == input) else {
        return Err(ctx.err(
            &format!("input = {input}"),
            "the compiler chose the integer type for this layer, which needs the fixed scale of its input, and the model input has none",
            "make the first layer an explicit conv2d or fc (type = \"int8\" or \"mxint8\")",
        ));
    };
    let Some(e_in) = producer.exponent else {
        return Err(ctx.err(
            &format!("input = {input}"),
            format!("the compiler chose the integer type for this layer, which needs the fixed scale of its input: layer {input} has no output_exponent"),
            format!("set output_exponent on layer {input}"),
        ));
    };
    let shift = e_out - e_in - ws;
    match shift {
        0..=63 => Ok(Requant {
            multiplier: 1,
            shift: shift as u32,
            zero_point: 0,
        }),
        -15..=-1 => Ok(Requant {
            multiplier: 1 << -shift,
            shift: 0,
            zero_point: 0,
        }),
        _ => Err(ctx.err(
            &format!("output_exponent = {e_out}"),
            format!("the integer path would scale the accumulator by 2^{} (input 2^{e_in}, weights 2^{ws}), outside 2^-63..2^15", -shift),
            "choose an output_exponent closer to the input's",
        )),
    }
}

/// Quantize HWC floats to MX blocks along the channels: (element codes, scales per pixel and
/// block).
fn quantize_rows(x: &[f32], block: usize, f: MxFormat) -> (Vec<i64>, Vec<u8>) {
    let mut codes = Vec::with_capacity(x.len());
    let mut scales = Vec::with_capacity(x.len() / block);
    for chunk in x.chunks(block) {
        let (s, q) = quantize_block(chunk, f.numeric());
        scales.push(s);
        codes.extend(q.iter().map(|v| i64::from(*v)));
    }
    (codes, scales)
}

/// Quantize [taps][cin][cout] float weights to MX blocks along cin (one block per tap, input
/// channel block and output channel): (element codes in the same layout, scales as
/// [taps][cin / block][cout]).
fn quantize_weights(
    w: &[f32],
    taps: usize,
    cin: usize,
    cout: usize,
    f: MxFormat,
) -> (Vec<i64>, Vec<u8>) {
    let bs = f.block_size as usize;
    let mut codes = vec![0i64; w.len()];
    let mut scales = vec![0u8; taps * (cin / bs) * cout];
    for tap in 0..taps {
        for b in 0..cin / bs {
            for co in 0..cout {
                let at = |k: usize| (tap * cin + b * bs + k) * cout + co;
                let block: Vec<f32> = (0..bs).map(|k| w[at(k)]).collect();
                let (s, q) = quantize_block(&block, f.numeric());
                scales[(tap * (cin / bs) + b) * cout + co] = s;
                for (k, v) in q.iter().enumerate() {
                    codes[at(k)] = i64::from(*v);
                }
            }
        }
    }
    (codes, scales)
}

/// The layer rules of the MX datapath.
fn check_mx_conv(
    ctx: &Ctx,
    rl: &RawLayer,
    f: MxFormat,
    cin: usize,
    cout: usize,
    groups: usize,
) -> Result<(), ModelError> {
    let bs = f.block_size as usize;
    if groups != 1 {
        return Err(ctx.err(
            &format!("groups = {groups}"),
            "MX blocks run along the input channels of a convolution; grouped and depthwise convolutions are not supported for MX",
            "use groups = 1, or type = \"int8\"",
        ));
    }
    if !cin.is_multiple_of(bs) || !cout.is_multiple_of(bs) {
        return Err(ctx.err(
            "out_channels",
            format!("an MX layer's input ({cin}) and output ({cout}) channels must be multiples of the block size {bs}"),
            format!("use out_channels = {}", cout.div_ceil(bs) * bs),
        ));
    }
    check_fp32_layer(
        ctx,
        rl,
        "MX layers accumulate in FP32 and quantize their outputs to MX blocks",
    )
}

/// The layer rules of the floating-point datapath.
fn check_fp_conv(ctx: &Ctx, rl: &RawLayer, groups: usize) -> Result<(), ModelError> {
    if groups != 1 {
        return Err(ctx.err(
            &format!("groups = {groups}"),
            "grouped and depthwise convolutions are not supported for floating-point models yet",
            "use groups = 1, or type = \"int8\"",
        ));
    }
    check_fp32_layer(
        ctx,
        rl,
        "floating-point layers accumulate in FP32 and convert their outputs to the element format",
    )
}

/// What MX and floating-point layers share: no integer post-processing (bias,
/// requantization, ReLU6) and an activation of ReLU or none. `what` says why.
fn check_fp32_layer(ctx: &Ctx, rl: &RawLayer, what: &str) -> Result<(), ModelError> {
    for (key, present) in [
        ("bias", rl.bias.is_some()),
        ("requant", rl.requant.is_some()),
        ("relu6_max", rl.relu6_max.is_some()),
    ] {
        if present {
            return Err(ctx.err(
                key,
                format!("{what}: bias, requantization and ReLU6 are integer-path operations"),
                format!("remove {key}"),
            ));
        }
    }
    if rl
        .activation
        .as_deref()
        .is_some_and(|a| a != "relu" && a != "none")
    {
        let kind = what.split(" layers").next().unwrap_or(what);
        return Err(ctx.err(
            "activation",
            format!("{kind} layers support activation = \"relu\" or none"),
            "use activation = \"relu\"",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_of_two_weight_quantization_by_hand() {
        // amax 1.0: 2^-6 is the smallest scale with 1.0 / 2^e <= 127 (2^-7 gives 128).
        let (e, q) = quantize_pow2(&[1.0, -0.5, 0.3, 0.0234375], IntType::new(true, 8));
        assert_eq!(e, -6);
        // 0.3 * 64 = 19.2 -> 19; 0.0234375 * 64 = 1.5 -> 2 (ties to even).
        assert_eq!(q, vec![64, -32, 19, 2]);
        // int4: 1.0 / 2^-3 = 8 > 7, so 2^-2: 0.3 * 4 = 1.2 -> 1.
        let (e, q) = quantize_pow2(&[1.0, -0.5, 0.3], IntType::new(true, 4));
        assert_eq!((e, q), (-2, vec![4, -2, 1]));
        assert!((relative_rms(&[3.0, 4.0], |i| [3.0, 4.0][i] + 0.5) - 0.1414).abs() < 1e-4);
    }
}
