//! Where a model's numbers come from: the seeded generator (`"random"`) or `.npy` files, as
//! integer codes or as real values that the format encodes; and the checking context that
//! names the file and layer of every error.

use super::raw::{RawInput, RawRequant};
use super::types::ModelTypes;
use super::{element_count, npy, ModelError, ModelProblem, Requant, Tensor, MAX_ELEMENTS};
use crate::location::locate_key;
use crate::numeric::{Format, IntType};
use std::path::{Path, PathBuf};

pub(super) struct Ctx {
    pub file: String,
    /// The model file's text, for the line and column of each error.
    src: String,
    pub dir: PathBuf,
    pub layer: Option<String>,
    rng: u64,
}

impl Ctx {
    pub fn new(file: &str, src: &str, dir: &Path, seed: Option<u64>) -> Ctx {
        Ctx {
            file: file.to_string(),
            src: src.to_string(),
            dir: dir.to_path_buf(),
            layer: None,
            rng: seed.unwrap_or(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }

    pub fn err(&self, field: &str, rule: impl Into<String>, fix: impl Into<String>) -> ModelError {
        self.err_in(self.layer.as_deref(), field, rule, fix)
    }

    /// An error in layer `layer` (or outside the layers).
    pub fn err_in(
        &self,
        layer: Option<&str>,
        field: &str,
        rule: impl Into<String>,
        fix: impl Into<String>,
    ) -> ModelError {
        // The key is the field's first word: `requant.multiplier = 70000` is set at
        // `requant`, `input.shape` at `shape` of table `input`.
        let key = field.split([' ', '=']).next().unwrap_or_default();
        let (table, key) = match (layer, key.split_once('.')) {
            (Some(_), _) => ("layer", key.split('.').next().unwrap_or_default()),
            (None, Some((t, k))) => (t, k),
            (None, None) => ("", key),
        };
        ModelProblem {
            file: self.file.clone(),
            location: locate_key(&self.src, table, layer, key),
            layer: layer.map(str::to_string),
            field: field.to_string(),
            rule: rule.into(),
            fix: fix.into(),
        }
        .into()
    }

    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// An integer in 1..=max (`default` when absent).
    pub fn positive(
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

    /// The element count of an array of `shape`, checked against [`MAX_ELEMENTS`] without
    /// overflow before anything is allocated.
    pub fn count(&self, field: &str, shape: &[usize]) -> Result<usize, ModelError> {
        element_count(shape).ok_or_else(|| {
            self.err(
                field,
                format!("an array of shape {shape:?} holds more than {MAX_ELEMENTS} elements, the most a model tensor may have"),
                "use smaller layers (fewer channels, a smaller kernel or input)",
            )
        })
    }

    /// A `.npy` array's shape against the one the layer expects: the same dimensions, where
    /// leading dimensions may be merged (fully-connected weights [h*w*c][cout] for
    /// [h][w][c][cout]) and leading 1s (a batch of one) are ignored. An array with the same
    /// element count in another layout (for example transposed) is an error.
    fn check_shape(
        &self,
        field: &str,
        spec: &str,
        got: &[usize],
        want: &[usize],
    ) -> Result<(), ModelError> {
        let strip =
            |s: &[usize]| -> Vec<usize> { s.iter().copied().skip_while(|d| *d == 1).collect() };
        let (g, w) = (strip(got), strip(want));
        let ok = g.len() <= w.len()
            && match g.split_first() {
                None => w.is_empty(),
                Some((first, rest)) => {
                    let split = w.len() - rest.len();
                    rest == &w[split..] && Some(*first) == element_count(&w[..split])
                }
            };
        if ok {
            return Ok(());
        }
        Err(self.err(
            field,
            format!("{spec} has shape {got:?}; this layer expects {want:?} (leading dimensions may be merged, for example [h*w*c, cout] for fc weights)"),
            "export the array in the expected layout (C order, HWC activations, [kh][kw][cin/groups][cout] weights)",
        ))
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

    /// Integer codes from `"random"` (uniform in the range of `t`... or `lo..=hi`) or a
    /// `.npy` file with `shape`.
    pub fn ints(
        &mut self,
        field: &str,
        spec: &str,
        shape: &[usize],
        (lo, hi): (i64, i64),
    ) -> Result<Vec<i64>, ModelError> {
        let count = self.count(field, shape)?;
        if spec == "random" {
            let span = (hi - lo + 1) as u64;
            return Ok((0..count)
                .map(|_| lo + (self.next() % span) as i64)
                .collect());
        }
        let path = self.dir.join(spec);
        let npy = npy::read(&path).map_err(|e| self.err(field, e.rule, e.fix))?;
        self.check_shape(field, spec, &npy.shape, shape)?;
        if let Some(v) = npy.data.iter().find(|v| **v < lo || **v > hi) {
            return Err(self.err(
                field,
                format!("{spec} holds {v}, outside {lo}..={hi}"),
                "quantize the data to the element type first",
            ));
        }
        Ok(npy.data)
    }

    /// Real values: `"random"` (or absent) draws from a seeded normal distribution; a
    /// `.npy` file must hold float32 values of `shape`.
    pub fn reals(
        &mut self,
        field: &str,
        spec: Option<&str>,
        shape: &[usize],
    ) -> Result<Vec<f32>, ModelError> {
        let count = self.count(field, shape)?;
        let spec = spec.unwrap_or("random");
        if spec == "random" {
            return Ok(self.gaussian(count));
        }
        let path = self.dir.join(spec);
        let v = npy::read_f32(&path).map_err(|e| self.err(field, e.rule, e.fix))?;
        self.check_shape(field, spec, &v.shape, shape)?;
        Ok(v.data)
    }

    /// The codes of data in `format`: integer codes in the range of the type, or real
    /// values encoded (MX blocks along the last dimension).
    pub fn codes(
        &mut self,
        field: &str,
        spec: Option<&str>,
        shape: &[usize],
        format: Format,
    ) -> Result<(Vec<i64>, Vec<u8>), ModelError> {
        if format.from_reals() {
            let x = self.reals(field, spec, shape)?;
            return Ok(format.encode_reals(&x).expect("a real-valued format"));
        }
        let t = format.code_type();
        let v = self.ints(field, spec.unwrap_or("random"), shape, (t.min(), t.max()))?;
        Ok((v, Vec::new()))
    }

    pub fn requant(&self, r: Option<&RawRequant>, default: Requant) -> Result<Requant, ModelError> {
        use super::raw::IntOrList::Many;
        if let Some((key, Many(xs))) = r.and_then(|r| {
            [("multiplier", &r.multiplier), ("shift", &r.shift)]
                .into_iter()
                .find(|(_, v)| matches!(v, Many(_)))
        }) {
            return Err(self.err(
                &format!("requant.{key} = [{} values]", xs.len()),
                "per-channel requantization (a list per output channel) is for conv2d, fc and conv_transpose",
                "give one multiplier and one shift",
            ));
        }
        Ok(self.conv_requant(r, default, 1)?.0)
    }

    /// A layer's requantization: one multiplier and shift, or (for a layer of `cout`
    /// output channels) one of each per channel, returned as the per-channel list (empty
    /// when every channel has the same pair) beside the Requant of channel 0.
    pub fn conv_requant(
        &self,
        r: Option<&RawRequant>,
        default: Requant,
        cout: usize,
    ) -> Result<(Requant, Vec<(u64, u32)>), ModelError> {
        use super::raw::IntOrList;
        let Some(r) = r else {
            return Ok((default, Vec::new()));
        };
        let list = |key: &str, v: &IntOrList| -> Result<Vec<i64>, ModelError> {
            match v {
                IntOrList::One(x) => Ok(vec![*x; cout.max(1)]),
                IntOrList::Many(xs) if cout > 0 && xs.len() == cout => Ok(xs.clone()),
                IntOrList::Many(xs) => Err(self.err(
                    &format!("requant.{key} = [{} values]", xs.len()),
                    format!("a list gives one value per output channel ({cout})"),
                    format!("give {cout} values, or one"),
                )),
            }
        };
        let ms = list("multiplier", &r.multiplier)?;
        let ss = list("shift", &r.shift)?;
        // The vector instruction's multiplier and shift fields bound them.
        let (max_m, max_s) = crate::isa::requant_limits();
        let (max_m, max_s) = (max_m as i64, i64::from(max_s));
        if let Some(m) = ms.iter().find(|m| !(0..=max_m).contains(*m)) {
            return Err(self.err(
                &format!("requant.multiplier = {m}"),
                format!(
                    "the requantization multiplier is an unsigned {}-bit integer",
                    64 - max_m.leading_zeros()
                ),
                format!("use 0..={max_m} and adjust shift"),
            ));
        }
        if let Some(sh) = ss.iter().find(|s| !(0..=max_s).contains(*s)) {
            return Err(self.err(
                &format!("requant.shift = {sh}"),
                format!("shift is 0..={max_s}"),
                format!("use 0..={max_s}"),
            ));
        }
        let pairs: Vec<(u64, u32)> = ms
            .iter()
            .zip(&ss)
            .map(|(&m, &s)| (m as u64, s as u32))
            .collect();
        let zp = r.zero_point.unwrap_or(0);
        if !(-32768..=32767).contains(&zp) {
            return Err(self.err(
                &format!("requant.zero_point = {zp}"),
                "the zero point is a signed 16-bit integer",
                "use -32768..=32767",
            ));
        }
        let requant = Requant {
            multiplier: pairs[0].0,
            shift: pairs[0].1,
            zero_point: zp,
            half_even: false,
        };
        let per_channel = if pairs.iter().all(|p| *p == pairs[0]) {
            Vec::new()
        } else {
            pairs
        };
        Ok((requant, per_channel))
    }
}

/// The model input: its shape, and its data in the model's input format.
pub(super) fn input(
    ctx: &mut Ctx,
    raw: &RawInput,
    types: &ModelTypes,
) -> Result<Tensor, ModelError> {
    if raw.shape.len() != 3 || raw.shape.iter().any(|d| *d < 1 || *d > 4096) {
        return Err(ctx.err(
            &format!("input.shape = {:?}", raw.shape),
            "the input shape is [height, width, channels], each 1..=4096",
            "write for example shape = [8, 8, 16]",
        ));
    }
    let shape: Vec<usize> = raw.shape.iter().map(|d| *d as usize).collect();
    ctx.count("input.shape", &shape)?;
    let format = types.input;
    if let Some(bs) = format.block_size().map(|b| b as usize) {
        if !shape[2].is_multiple_of(bs) {
            return Err(ctx.err(
                &format!("input.shape = {:?}", raw.shape),
                format!("MX blocks of {bs} run along the channels, so the channels must be a multiple of {bs}"),
                format!("use {} channels", shape[2].div_ceil(bs) * bs),
            ));
        }
    }
    let (data, scales) = ctx.codes("input.data", raw.data.as_deref(), &shape, format)?;
    Ok(Tensor {
        h: shape[0],
        w: shape[1],
        c: shape[2],
        format,
        data,
        scales,
    })
}

/// The biases of `cout` output channels: `"random"` gives values uniform in the accumulator
/// type's range clipped to +-2^20, `"random:B"` uniform in the range of B-bit signed
/// integers (B from 2 to the accumulator's bits: a trained network's quantized biases are
/// small); a `.npy` file's values must fit the accumulator type, because the bias is added
/// to the accumulator value exactly (in the hardware it is an accumulator row).
pub(super) fn bias(
    ctx: &mut Ctx,
    field: &str,
    spec: &str,
    shape: &[usize],
    acc: IntType,
) -> Result<Vec<i64>, ModelError> {
    if spec == "random" {
        let range = (acc.min().max(-(1 << 20)), acc.max().min(1 << 20));
        return ctx.ints(field, spec, shape, range);
    }
    if let Some(b) = spec.strip_prefix("random:") {
        let bits = match b.parse::<u32>() {
            Ok(v) if (2..=acc.bits).contains(&v) => v,
            _ => {
                return Err(ctx.err(
                    field,
                    format!("\"{spec}\": the bits of \"random:B\" must be a number from 2 to the accumulator's {}", acc.bits),
                    "write \"random:16\" (values of 16-bit signed integers), \"random\" or a .npy file",
                ))
            }
        };
        let t = IntType::new(true, bits);
        return ctx.ints(field, "random", shape, (t.min(), t.max()));
    }
    let b = ctx.ints(field, spec, shape, (i64::MIN, i64::MAX))?;
    match b.iter().find(|v| !acc.holds(**v)) {
        None => Ok(b),
        Some(v) => Err(ctx.err(
            field,
            format!(
                "{spec} holds {v}, outside the accumulator type {acc} ({}..={}); the bias is added to the accumulator exactly",
                acc.min(),
                acc.max()
            ),
            format!("quantize the bias to {acc}, or use a wider accumulator (accumulator = \"int32\" in the model and the config)"),
        )),
    }
}
