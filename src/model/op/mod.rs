//! The operators of the model format, each defined once, in its own file, behind one
//! interface ([`Operator`]): how its `[[layer]]` is parsed, its exact golden semantics over
//! the datatype interface, what the hardware runs for it ([`Lowered`]) and its MACs. The
//! operators are registered in one list, [`operators!`] below; nothing else names them.
//!
//! A layer's generic keys (name, op, input, type, output_exponent, activation) are parsed
//! here, the rest by the operator's `Form`.

use super::data::Ctx;
use super::lower::Lowered;
use super::raw::RawLayer;
use super::types::{layer_precision, ModelTypes};
use super::{Layer, ModelError, Tensor};
use crate::numeric::{Format, Precision, Slope};

mod concat;
mod conv;
mod eltwise;
mod geometry;
mod matmul;
mod nonlinear;
mod norm;
mod pool;
mod rowops;
mod softmax;
mod upsample;

pub use concat::{concat, Concat};
pub use conv::{conv_accumulate, input_pixel, Conv};
#[cfg(test)]
pub(crate) use conv::{int_conv_accumulate, pass_conv_accumulate};
pub use eltwise::{Add, Eltwise};
pub use matmul::Bmm;
pub use nonlinear::{Function, Nonlinear};
pub use norm::{Norm, NormKind};
pub use pool::{AvgPool, MaxPool};
pub use rowops::RowQuant;
pub use softmax::Softmax;
pub use upsample::Upsample;

/// What every operator supplies.
pub trait Operator {
    /// The name reports and messages give the layer (its model-format operator).
    fn name(&self) -> &'static str;
    /// The golden model: `layer`'s output from its input tensors (in `layer.inputs`
    /// order), as the README's numeric rules define it, on an array of `rows` rows (the
    /// height of a column pass, which fixes the order of FP32 sums).
    fn golden(&self, layer: &Layer, inputs: &[&Tensor], rows: usize) -> Tensor;
    /// What the hardware runs for `layer`.
    fn lower(&self, layer: &Layer) -> Lowered;
    /// Multiply-accumulates of the network's arithmetic (the array's weighted sums) from
    /// an input of `cin` channels.
    fn macs(&self, _layer: &Layer, _cin: usize) -> u64 {
        0
    }
    /// Whether the (integer) output holds no negative value, given for each input
    /// whether it holds none.
    fn non_negative(&self, _inputs: &[bool]) -> bool {
        false
    }
    /// Round exact ties of its requantizations to the even neighbour (the model's
    /// `rounding = "half_even"`).
    fn round_half_even(&mut self) {}
    /// Its output is its accumulator's values (`output_type = "accumulator"`), a model
    /// output that no layer reads.
    fn writes_accumulator(&self) -> bool {
        false
    }
    /// Whether it reads input `k` in its precision's input format (a residual, read in
    /// the output format, is not).
    fn reads_as_input(&self, k: usize) -> bool {
        k == 0
    }
    /// The rules of its output being stored in another precision's format (a type
    /// boundary, `types::boundaries`): the offending (field, rule, fix) when it cannot.
    fn converts(&self, _layer: &Layer) -> Result<(), [String; 3]> {
        Err([
            format!("op = {}", self.name()),
            "types change only at the output of a conv2d or fc layer".into(),
            "insert the type change after a conv2d or fc layer".into(),
        ])
    }
}

/// One operator form of the model format: its `op` name, parser, the keys it takes (its
/// own, then shared ones; every layer also takes name, op, input, type and
/// output_exponent), and what the generic keys may say for it.
struct Form {
    name: &'static str,
    parse: fn(&mut Ctx, &Args) -> Result<Parsed, ModelError>,
    keys: &'static [&'static str],
    shared: &'static [&'static str],
    /// It may compute in a real-valued precision (MX, floating point, posit), and its
    /// precision may be `type = "auto"`.
    real: bool,
    auto: bool,
    /// It applies `activation = "leaky_relu"`.
    leaky: bool,
}

/// The registry: every operator, once. Each line names the `Op` variant, the operator's
/// type (which implements [`Operator`]) and the model-format forms it parses.
macro_rules! operators {
    ($($variant:ident($ty:ty) => $forms:expr,)*) => {
        /// A layer's operator and its parameters.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Op {
            $($variant($ty),)*
        }

        impl Op {
            /// Its interface.
            pub fn get(&self) -> &dyn Operator {
                match self {
                    $(Op::$variant(o) => o,)*
                }
            }
            pub fn get_mut(&mut self) -> &mut dyn Operator {
                match self {
                    $(Op::$variant(o) => o,)*
                }
            }
        }

        $(impl From<$ty> for Op {
            fn from(o: $ty) -> Op {
                Op::$variant(o)
            }
        })*

        /// Every form of every operator, in registry order.
        fn forms() -> impl Iterator<Item = &'static Form> {
            [$($forms,)*].into_iter().flatten()
        }
    };
}

operators! {
    Conv(Conv) => conv::FORMS,
    MaxPool(MaxPool) => pool::MAX_FORMS,
    AvgPool(AvgPool) => pool::AVG_FORMS,
    Add(Add) => eltwise::FORMS,
    Upsample(Upsample) => upsample::FORMS,
    Concat(Concat) => concat::FORMS,
    Softmax(Softmax) => softmax::FORMS,
    Norm(Norm) => norm::FORMS,
    Nonlinear(Nonlinear) => nonlinear::FORMS,
    Bmm(Bmm) => matmul::FORMS,
}

impl Op {
    pub fn name(&self) -> &'static str {
        self.get().name()
    }
}

/// What an operator's parser is given.
struct Args<'a> {
    rl: &'a RawLayer,
    prec: Precision,
    auto: bool,
    /// Name and shape of the input tensor.
    src: &'a str,
    shape: [usize; 3],
    /// The model inputs and the earlier layers.
    model_inputs: &'a [(String, Tensor)],
    layers: &'a [Layer],
    /// The model's MX precision, the other choice of an automatic layer.
    mx: Option<Precision>,
    exponent: Option<i32>,
    relu: bool,
    clamp: Option<i64>,
    /// Leaky ReLU's slope on negative values.
    slope: Option<Slope>,
}

/// What it gives back: the operator, the output shape, the inputs (the first is streamed
/// through the array, a second is combined with the result) and, for an automatic layer,
/// the precision it got.
struct Parsed {
    op: Op,
    out: [usize; 3],
    inputs: Vec<String>,
    prec: Precision,
}

/// The post-processing keys of the convolution-like operators.
const CONV_POST: &[&str] = &[
    "bias",
    "untied_bias",
    "requant",
    "activation",
    "relu6_max",
    "negative_slope",
    "output_type",
];

fn form(op: &str) -> Option<&'static Form> {
    forms().find(|f| f.name == op)
}

/// Whether the `op` of a layer is one that may be `type = "auto"` (conv2d and fc).
pub(super) fn takes_auto(op: &str) -> bool {
    form(op).is_some_and(|f| f.auto)
}

pub(super) fn layer(
    ctx: &mut Ctx,
    rl: &RawLayer,
    types: &ModelTypes,
    inputs: &[(String, Tensor)],
    layers: &[Layer],
) -> Result<Layer, ModelError> {
    if inputs.iter().any(|(n, _)| *n == rl.name) || layers.iter().any(|l| l.name == rl.name) {
        return Err(ctx.err(
            "name",
            format!("tensor name {} is already used", rl.name),
            "give every layer its own name",
        ));
    }
    let prev = layers
        .last()
        .map_or(inputs[0].0.as_str(), |l| l.name.as_str());
    // concat names its inputs in `inputs`.
    let first = rl.inputs.as_ref().and_then(|v| v.first());
    let src = rl
        .input
        .as_deref()
        .or(first.map(String::as_str))
        .unwrap_or(prev);
    let shape = shape_of(inputs, layers, src).ok_or_else(|| {
        ctx.err(
            &format!("input = {src}"),
            "the input must name the model input or an earlier layer",
            "use the name of an earlier layer",
        )
    })?;
    check_keys(ctx, rl)?;
    let form = form(&rl.op).expect("check_keys accepted the operator");
    let (prec, auto) = layer_precision(ctx, rl, types)?;
    let (relu, clamp, slope) = activation(ctx, rl, prec, form)?;
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
    if !form.real && !matches!(prec, Precision::Int(_)) {
        // FP8 and BF16 layers run every real-valued form, MX ones every one but the matmul
        // of two run-time tensors, posit ones neither that nor add (their own rules say
        // why).
        let but: &[&str] = match prec {
            Precision::Float(_) => &[],
            Precision::Mx(_) => &["matmul"],
            _ => &["matmul", "add"],
        };
        let real: Vec<&str> = forms()
            .filter(|f| f.real && !but.contains(&f.name))
            .map(|f| f.name)
            .collect();
        return Err(ctx.err(
            &format!("op = {}", rl.op),
            format!(
                "{} layers are {}; {} is an integer layer",
                prec.name(),
                real.join(", "),
                rl.op
            ),
            "give the layer (or the model) an integer type, type = \"int8\"",
        ));
    }
    let args = Args {
        rl,
        prec,
        auto,
        src,
        shape,
        model_inputs: inputs,
        layers,
        mx: types.mx(),
        exponent,
        relu,
        clamp,
        slope,
    };
    let p = (form.parse)(ctx, &args)?;
    ctx.count(&format!("output {:?}", p.out), &p.out)?;
    check_readable(ctx, &p.inputs, layers)?;
    let out_format = match p.op.get().writes_accumulator() {
        true => Format::Int(p.prec.ops().acc_type()),
        false => p.prec.ops().output(),
    };
    Ok(Layer {
        name: rl.name.clone(),
        inputs: p.inputs,
        op: p.op,
        out: p.out,
        prec: p.prec,
        out_format,
        exponent,
        auto,
    })
}

/// The layer's operator exists and it sets only keys the operator takes.
pub(super) fn check_keys(ctx: &Ctx, rl: &RawLayer) -> Result<(), ModelError> {
    let layer = Some(rl.name.as_str());
    let Some(form) = form(&rl.op) else {
        let names: Vec<&str> = forms().map(|f| f.name).collect();
        return Err(ctx.err_in(
            layer,
            &format!("op = {}", rl.op),
            format!("supported operators: {}", names.join(", ")),
            "use one of those (flatten is implicit: fc takes the HWC flattening of its input)",
        ));
    };
    let stray: Vec<&str> = rl
        .op_keys()
        .into_iter()
        .filter(|k| !form.keys.contains(k) && !form.shared.contains(k))
        .collect();
    if stray.is_empty() {
        return Ok(());
    }
    Err(ctx.err_in(
        layer,
        stray[0],
        format!(
            "{} {} not apply to op = \"{}\", which takes {} (and name, op, input, type, output_exponent)",
            stray.join(", "),
            if stray.len() == 1 { "does" } else { "do" },
            rl.op,
            form.keys
                .iter()
                .chain(form.shared.iter())
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!("remove {}", stray.join(", ")),
    ))
}

/// The shape of the model input or of an earlier layer's output.
/// Refuses the `zero_points` keys operator `op` does not take (`takes`, in the order its
/// documentation lists them).
fn zero_point_keys(ctx: &Ctx, rl: &RawLayer, op: &str, takes: &[&str]) -> Result<(), ModelError> {
    let Some(z) = rl.zero_points.as_ref() else {
        return Ok(());
    };
    let given = [
        ("input", z.input),
        ("b", z.b),
        ("residual", z.residual),
        ("output", z.output),
    ];
    match given
        .into_iter()
        .find(|(k, v)| v.is_some() && !takes.contains(k))
    {
        Some((k, v)) => Err(ctx.err(
            &format!("zero_points.{k} = {}", v.unwrap_or(0)),
            format!("{op}'s zero_points are {{ {} }}", takes.join(", ")),
            match k {
                "output" => {
                    "remove zero_points.output: the output's zero point is requant.zero_point"
                        .to_string()
                }
                _ => format!("remove zero_points.{k}"),
            },
        )),
        None => Ok(()),
    }
}

fn shape_of(inputs: &[(String, Tensor)], layers: &[Layer], name: &str) -> Option<[usize; 3]> {
    if let Some((_, t)) = inputs.iter().find(|(n, _)| n == name) {
        return Some(t.shape());
    }
    layers.iter().find(|l| l.name == name).map(|l| l.out)
}

/// `activation`: none, relu, relu6 with `relu6_max` (an output value of an integer layer),
/// or leaky_relu with `negative_slope` (the forms that apply it).
fn activation(
    ctx: &Ctx,
    rl: &RawLayer,
    prec: Precision,
    form: &Form,
) -> Result<(bool, Option<i64>, Option<Slope>), ModelError> {
    let out = prec.ops().output().code_type();
    match rl.activation.as_deref() {
        None | Some("none") => Ok((false, None, None)),
        Some("relu") => Ok((true, None, None)),
        Some("leaky_relu") => Ok((false, None, Some(slope(ctx, rl, form)?))),
        Some("relu6") => match rl.relu6_max {
            Some(m) if out.holds(m) => Ok((true, Some(m), None)),
            Some(m) => Err(ctx.err(
                &format!("relu6_max = {m}"),
                format!("relu6_max is the quantized value of 6.0 and must be a {out} value"),
                format!("use a value from {} to {}", out.min(), out.max()),
            )),
            None => Err(ctx.err(
                "relu6_max",
                "activation = \"relu6\" needs relu6_max, the quantized value of 6.0 (zero_point + round(6 / scale))",
                "add relu6_max = <value>",
            )),
        },
        Some(other) => Err(ctx.err(
            &format!("activation = {other}"),
            "supported activations: none, relu, relu6, leaky_relu (gelu, silu, sigmoid and tanh are layers of their own on the row unit: op = \"gelu\")",
            "use \"relu\", \"relu6\" or \"leaky_relu\", or remove the key",
        )),
    }
}

/// `negative_slope = { multiplier = M, shift = S }` of a leaky-ReLU layer: the slope
/// M / 2^S, in [0, 1).
fn slope(ctx: &Ctx, rl: &RawLayer, form: &Form) -> Result<Slope, ModelError> {
    if !form.leaky {
        return Err(ctx.err(
            "activation = leaky_relu",
            format!(
                "leaky_relu is applied by conv2d and fc layers, not by {}",
                rl.op
            ),
            "move the activation to the convolution before, or use relu",
        ));
    }
    let Some(s) = &rl.negative_slope else {
        return Err(ctx.err(
            "negative_slope",
            "activation = \"leaky_relu\" needs negative_slope, its slope on negative values as multiplier / 2^shift",
            "add negative_slope = { multiplier = 13, shift = 6 } (0.203), or the slope you need",
        ));
    };
    if !(0..=16).contains(&s.shift) || !(0..1i64 << s.shift.clamp(0, 16)).contains(&s.multiplier) {
        return Err(ctx.err(
            &format!(
                "negative_slope = {{ multiplier = {}, shift = {} }}",
                s.multiplier, s.shift
            ),
            "the slope multiplier / 2^shift is in [0, 1): shift is 0..=16 and multiplier 0..2^shift",
            "for a slope a, use shift = 16 and multiplier = round(a * 65536)",
        ));
    }
    Ok(Slope {
        multiplier: s.multiplier as u64,
        shift: s.shift as u32,
    })
}

/// No layer reads a tensor of accumulator values (`output_type = "accumulator"`): the
/// datapath reads activations only.
fn check_readable(ctx: &Ctx, inputs: &[String], layers: &[Layer]) -> Result<(), ModelError> {
    for i in inputs {
        if layers
            .iter()
            .any(|l| l.name == *i && l.op.get().writes_accumulator())
        {
            return Err(ctx.err(
                &format!("input = {i}"),
                format!("{i} has output_type = \"accumulator\": its accumulator values are an output of the model, which no layer can read"),
                format!("remove output_type from {i} to requantize it, or read another tensor"),
            ));
        }
    }
    Ok(())
}
