//! The datatypes of a model: the model-level keys (`type`, `weight_type`, `output_type`,
//! `accumulator`, `block_size`, `es`) through the one format parser, the precision of each
//! layer (its own `type` in a mixed model), and the formats of the tensors where layers of
//! different precisions meet.

use super::data::Ctx;
use super::raw::{RawLayer, RawModel};
use super::{Layer, ModelError};
use crate::numeric::format::{self, Accumulator, Param, Params};
use crate::numeric::{Format, IntPrecision, IntType, Precision};

/// What the model-level keys resolve to.
pub(super) struct ModelTypes {
    /// Format of the model input.
    pub input: Format,
    /// Precision of every layer that does not name its own.
    pub default: Precision,
    /// Mixed models: the precision of the same width in the other family that a conv2d or
    /// fc layer may name (int8 and mxint8, int4 and mxint4); also what `type = "auto"`
    /// chooses between.
    pub counterpart: Option<Precision>,
    /// True when some layer names its own type: pooling, add and upsample are then
    /// integer layers.
    pub per_layer: bool,
}

impl ModelTypes {
    /// The integer one of the model's precisions.
    pub fn integer(&self) -> Option<Precision> {
        [Some(self.default), self.counterpart]
            .into_iter()
            .flatten()
            .find(|p| matches!(p, Precision::Int(_)))
    }
    /// The MX one.
    pub fn mx(&self) -> Option<Precision> {
        [Some(self.default), self.counterpart]
            .into_iter()
            .flatten()
            .find(|p| matches!(p, Precision::Mx(_)))
    }
}

fn parse(ctx: &Ctx, key: &str, name: &str) -> Result<Format, ModelError> {
    format::parse(name).map_err(|e| ctx.err(&format!("{key} = {name}"), e.rule, e.fix))
}

/// The integer format of the same width as an MX format, or the MX format of the same
/// width as a signed integer format, from the format table.
fn counterpart(f: Format) -> Option<Format> {
    match f {
        Format::Mx(m) => Some(Format::Int(IntType::new(true, m.elem.bits))),
        Format::Int(t) if t.signed => format::TABLE.iter().find_map(|e| match e.format {
            Format::Mx(m) if m.elem.bits == t.bits => Some(e.format),
            _ => None,
        }),
        _ => None,
    }
}

pub(super) fn model_types(ctx: &Ctx, raw: &RawModel) -> Result<ModelTypes, ModelError> {
    let top_name = raw.act_type.as_deref().unwrap_or("int8");
    let mut top = parse(ctx, "type", top_name)?;
    // Per-layer types: the model's, its counterpart, or "auto".
    let other = counterpart(top);
    let mut uses_counterpart = false;
    for rl in &raw.layer {
        let Some(lt) = rl.layer_type.as_deref() else {
            continue;
        };
        let lf = (lt != "auto").then(|| format::parse(lt).ok()).flatten();
        if lf.is_some_and(|f| f.name() == top.name()) {
            continue;
        }
        let is_counterpart = lf.is_some_and(|f| other.is_some_and(|o| o.name() == f.name()));
        if is_counterpart || (lt == "auto" && other.is_some()) {
            uses_counterpart = true;
            continue;
        }
        return Err(ctx.err_in(
            Some(&rl.name),
            &format!("type = {lt}"),
            format!("a layer's type is the model's ({top_name}) or its counterpart of the same width: a mixed model pairs int8 with mxint8 (or int4 with mxint4)"),
            match other {
                Some(o) => format!("use type = \"{top_name}\", \"{}\" or \"auto\"", o.name()),
                None => format!("remove type (the model is {top_name} throughout)"),
            },
        ));
    }
    let params = Params {
        block_size: raw.block_size,
        es: raw.es,
    };
    let mut mixed = other.filter(|_| uses_counterpart);
    // block_size and es belong to the MX or posit format among the model's.
    let param_target = match (top, mixed) {
        (Format::Int(_), Some(m @ Format::Mx(_))) => m,
        _ => top,
    };
    let applied = format::with_params(param_target, params).map_err(|(p, e)| {
        let v = match p {
            Param::BlockSize => raw.block_size,
            Param::Es => raw.es,
        };
        ctx.err(&format!("{} = {}", p.key(), v.unwrap_or(0)), e.rule, e.fix)
    })?;
    if param_target == top {
        top = applied;
    } else {
        mixed = Some(applied);
    }
    let accumulator = accumulator(ctx, raw, top)?;
    let is_mixed = mixed.is_some();
    let default = precision(ctx, raw, top, accumulator, is_mixed)?;
    let counterpart = mixed
        .map(|f| precision(ctx, raw, f, accumulator, is_mixed))
        .transpose()?;
    if counterpart.is_some() && raw.output_type.is_some() {
        return Err(ctx.err(
            "output_type",
            "output_type applies to integer models; in a mixed model the integer layers read and write the same type",
            "remove output_type",
        ));
    }
    Ok(ModelTypes {
        input: default.ops().input(),
        default,
        counterpart,
        per_layer: raw.layer.iter().any(|l| l.layer_type.is_some()),
    })
}

/// The integer accumulator (int32 unless the model says otherwise).
fn accumulator(ctx: &Ctx, raw: &RawModel, top: Format) -> Result<IntType, ModelError> {
    let int32 = IntType::new(true, 32);
    let Some(name) = raw.accumulator.as_deref() else {
        return Ok(int32);
    };
    let field = format!("accumulator = {name}");
    match (format::parse_accumulator(name), top) {
        (Err(e), _) => Err(ctx.err(&field, e.rule, e.fix)),
        (Ok(Accumulator::Int(t)), Format::Int(_)) => Ok(t),
        (Ok(Accumulator::Fp32), Format::Int(_)) => Err(ctx.err(
            &field,
            "integer layers accumulate in an integer type",
            "use accumulator = \"int32\"",
        )),
        (Ok(Accumulator::Fp32), _) => Ok(int32),
        (Ok(Accumulator::Int(_)), _) => Err(ctx.err(
            &field,
            format!("{} layers accumulate in FP32", top.name()),
            "remove accumulator",
        )),
    }
}

/// The precision of layers of `f` under the model-level keys: an integer precision takes
/// `weight_type` (default int8, or in a mixed model the integer type itself),
/// `output_type` (default `type`) and the accumulator; the others use one format
/// throughout (in a mixed model, the integer keys belong to its integer layers).
fn precision(
    ctx: &Ctx,
    raw: &RawModel,
    f: Format,
    acc: IntType,
    mixed: bool,
) -> Result<Precision, ModelError> {
    let Format::Int(t) = f else {
        // In a mixed model the integer keys are the integer layers'.
        if mixed {
            return Ok(Precision::of(f, acc));
        }
        let same = |w: &str| format::parse(w).is_ok_and(|g| g.name() == f.name());
        if let Some(w) = raw.weight_type.as_deref().filter(|w| !same(w)) {
            return Err(ctx.err(
                &format!("weight_type = {w}"),
                format!(
                    "a {} model uses {} for activations and weights",
                    f.name(),
                    f.name()
                ),
                format!("remove weight_type or set it to \"{}\"", f.name()),
            ));
        }
        if let Some(o) = raw.output_type.as_deref() {
            return Err(ctx.err(
                &format!("output_type = {o}"),
                "output_type applies to integer models",
                "remove output_type",
            ));
        }
        return Ok(Precision::of(f, acc));
    };
    let int_key =
        |key: &str, name: Option<&str>, default: IntType| -> Result<IntType, ModelError> {
            let Some(name) = name else { return Ok(default) };
            match parse(ctx, key, name)? {
                Format::Int(i) => Ok(i),
                other => Err(ctx.err(
                    &format!("{key} = {name}"),
                    format!(
                        "{key} of an integer model is an integer type, not {}",
                        other.name()
                    ),
                    "use for example \"int8\"",
                )),
            }
        };
    let int8 = IntType::new(true, 8);
    let weight = int_key(
        "weight_type",
        raw.weight_type.as_deref(),
        if mixed { t } else { int8 },
    )?;
    let output = int_key("output_type", raw.output_type.as_deref(), t)?;
    if acc.bits < t.bits + weight.bits {
        return Err(ctx.err(
            &format!("accumulator = {acc}"),
            format!(
                "the accumulator must hold the {}-bit products of {t} x {weight}",
                t.bits + weight.bits
            ),
            "use accumulator = \"int32\"",
        ));
    }
    Ok(Precision::Int(IntPrecision {
        input: t,
        weight,
        accumulator: acc,
        output,
    }))
}

/// The precision of one layer, and whether the compiler chooses it (`type = "auto"`,
/// decided from the weights by the convolution's parser).
pub(super) fn layer_precision(
    ctx: &Ctx,
    rl: &RawLayer,
    types: &ModelTypes,
) -> Result<(Precision, bool), ModelError> {
    let conv = super::op::takes_auto(&rl.op);
    match rl.layer_type.as_deref() {
        Some("auto") if !conv => Err(ctx.err(
            "type = auto",
            "the compiler chooses the type of conv2d and fc layers only",
            "remove type (pooling, add and upsample are integer layers)",
        )),
        Some("auto") => Ok((types.integer().expect("a mixed model"), true)),
        Some(t) => {
            let f = format::parse(t).expect("checked with the model's types");
            let p = [Some(types.default), types.counterpart]
                .into_iter()
                .flatten()
                .find(|p| p.ops().input().name() == f.name())
                .expect("checked with the model's types");
            Ok((p, false))
        }
        None if !conv && types.per_layer => Ok((types.integer().unwrap_or(types.default), false)),
        None => Ok((types.default, false)),
    }
}

/// The formats of the tensors of a model: every tensor is stored in the format the layers
/// that read it read (they must agree); where that differs from its producer's output
/// format, the producer (a conv2d or fc layer) converts at a fixed scale 2^output_exponent.
/// A layer reads its first input in its input format and a residual in its output format.
pub(super) fn boundaries(
    ctx: &mut Ctx,
    layers: &mut [Layer],
    inputs: &[(String, super::Tensor)],
) -> Result<(), ModelError> {
    let reads = |l: &Layer, t: &str| -> Option<Format> {
        let ops = l.prec.ops();
        let k = l.inputs.iter().position(|i| i == t)?;
        Some(match l.op.get().reads_as_input(k) {
            true => ops.input(),
            false => ops.output(),
        })
    };
    let readers = |layers: &[Layer], t: &str| -> Vec<(String, Format)> {
        layers
            .iter()
            .filter_map(|l| reads(l, t).map(|f| (l.name.clone(), f)))
            .collect()
    };
    for (input_name, input) in inputs {
        let input_format = input.format;
        for (name, f) in readers(layers, input_name) {
            if f != input_format {
                ctx.layer = Some(name);
                return Err(ctx.err(
                "type",
                format!("the layer reads the model input, which is {}, as {}; types change only at the output of a conv2d or fc layer", input_format.describe(), f.describe()),
                format!("set type = \"{}\" on this layer, or make the model's type {}", input_format.name(), f.name()),
            ));
            }
        }
    }
    for i in 0..layers.len() {
        let rs = readers(layers, &layers[i].name);
        ctx.layer = Some(layers[i].name.clone());
        let own = layers[i].out_format;
        let out = rs.first().map_or(own, |r| r.1);
        if let Some(other) = rs.iter().find(|r| r.1 != out) {
            return Err(ctx.err(
                "type",
                format!("layers {} ({}) and {} ({}) both read this layer's output; a tensor has one type", rs[0].0, rs[0].1.describe(), other.0, other.1.describe()),
                "give the layers that read one tensor the same type (and in an integer model, output_type = type where layers read layers)",
            ));
        }
        // Exponents are also the scales an automatic layer computes with.
        let rs_auto = layers
            .iter()
            .any(|r| r.auto && r.inputs.iter().any(|t| *t == layers[i].name));
        layers[i].out_format = out;
        check_boundary(ctx, &layers[i], &rs, rs_auto)?;
    }
    ctx.layer = None;
    Ok(())
}

/// The rules of a layer whose output format differs from what it computes in.
fn check_boundary(
    ctx: &Ctx,
    l: &Layer,
    readers: &[(String, Format)],
    rs_auto: bool,
) -> Result<(), ModelError> {
    // A layer that writes its accumulator is read by no layer (`ops::check_readable`).
    if l.op.get().writes_accumulator() {
        return Ok(());
    }
    let own = l.prec.ops().output();
    let boundary = l.out_format != own;
    if boundary && matches!((own, l.out_format), (Format::Int(_), Format::Int(_))) {
        return Err(ctx.err(
            "output_type",
            format!("layer {} reads this layer's {} output as {}: the layers of an integer model read what the others write", readers[0].0, own.describe(), l.out_format.describe()),
            "set output_type = type in the model (only a single layer, or layers that all read the model input, can write another integer type)",
        ));
    }
    match (boundary, l.exponent) {
        (true, None) => {
            return Err(ctx.err(
                "output_exponent",
                format!("the layer is {} and its output is read by {} ({}): the conversion needs the fixed scale of the integer values, q * 2^output_exponent", l.prec.name(), readers[0].0, l.out_format.name()),
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
    if !boundary {
        return Ok(());
    }
    l.op.get()
        .converts(l)
        .map_err(|[field, rule, fix]| ctx.err(&field, rule, fix))
}
