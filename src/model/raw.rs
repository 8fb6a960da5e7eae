//! serde structs that mirror the model file exactly. Unknown keys are errors.

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawModel {
    pub name: Option<String>,
    pub seed: Option<u64>,
    /// Format of the model input and (by default) of every activation.
    #[serde(rename = "type")]
    pub act_type: Option<String>,
    pub weight_type: Option<String>,
    /// Integer models: the format of the layers' outputs when it differs from `type`.
    pub output_type: Option<String>,
    /// Integer models: the accumulator the products are summed in (default int32).
    pub accumulator: Option<String>,
    pub block_size: Option<i64>,
    pub es: Option<i64>,
    /// Integer models: how requantization rounds exact ties, "half_up" (default) or
    /// "half_even" (ONNX's).
    pub rounding: Option<String>,
    /// `[input]`, or `[[input]]` for a model with several inputs.
    pub input: OneOrMany<RawInput>,
    pub layer: Vec<RawLayer>,
    /// The model's outputs, by layer name (default: the last layer).
    pub outputs: Option<Vec<String>>,
}

/// A table or an array of tables. Dispatched on the TOML value's kind (not an untagged
/// enum, whose error would hide the inner one: an unknown key in `[input]` is reported as
/// such).
pub(super) enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table ([input]) or an array of tables ([[input]])")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                m: A,
            ) -> Result<Self::Value, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(m)).map(OneOrMany::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                s: A,
            ) -> Result<Self::Value, A::Error> {
                Vec::<T>::deserialize(serde::de::value::SeqAccessDeserializer::new(s))
                    .map(OneOrMany::Many)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<T> OneOrMany<T> {
    pub fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(t) => std::slice::from_ref(t),
            OneOrMany::Many(v) => v,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawInput {
    pub name: Option<String>,
    pub shape: Vec<i64>,
    pub data: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum Kernel {
    Square(i64),
    Rect(Vec<i64>),
}

/// One integer, or one per output channel.
#[derive(Deserialize, Clone)]
#[serde(untagged)]
pub(super) enum IntOrList {
    One(i64),
    Many(Vec<i64>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRequant {
    pub multiplier: IntOrList,
    pub shift: IntOrList,
    pub zero_point: Option<i64>,
}

/// The fixed-point scale of the quantized `add` (`input`, `residual`: the weights of the two
/// differences) or `mul` (`multiplier`), and the right `shift` of the result.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScale {
    pub input: Option<i64>,
    pub residual: Option<i64>,
    pub multiplier: Option<i64>,
    pub shift: Option<i64>,
}

/// The real scales of a row operator's integer input and output: a value q stands for
/// scale * (q - zero point).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScales {
    pub input: Option<f64>,
    pub output: Option<f64>,
}

/// The zero points of the quantized `add` and `mul`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawZeroPoints {
    pub input: Option<i64>,
    /// matmul's second operand's.
    pub b: Option<i64>,
    pub residual: Option<i64>,
    pub output: Option<i64>,
}

/// The slope of leaky ReLU, multiplier / 2^shift.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSlope {
    pub multiplier: i64,
    pub shift: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLayer {
    pub name: String,
    pub op: String,
    pub input: Option<String>,
    /// concat: the tensors joined along the channels, in order.
    pub inputs: Option<Vec<String>>,
    pub residual: Option<String>,
    pub out_channels: Option<i64>,
    pub kernel: Option<Kernel>,
    pub stride: Option<i64>,
    pub padding: Option<i64>,
    pub pad_value: Option<i64>,
    pub groups: Option<i64>,
    pub weights: Option<String>,
    pub bias: Option<String>,
    pub untied_bias: Option<String>,
    pub requant: Option<RawRequant>,
    pub activation: Option<String>,
    pub relu6_max: Option<i64>,
    pub negative_slope: Option<RawSlope>,
    pub factor: Option<i64>,
    /// add and mul, quantized form.
    pub scale: Option<RawScale>,
    pub zero_points: Option<RawZeroPoints>,
    /// The row unit's operators: the real scales of the integer input and output.
    pub scales: Option<RawScales>,
    /// layernorm and rmsnorm.
    pub epsilon: Option<f64>,
    pub gamma: Option<String>,
    pub beta: Option<String>,
    /// gelu: "none" (erf) or "tanh".
    pub approximate: Option<String>,
    /// matmul: the second operand, whether it is transposed, and the heads.
    pub b: Option<String>,
    pub transpose_b: Option<bool>,
    pub heads: Option<i64>,
    /// matmul: the keys per head, b's pixels padded with zero codes to that many.
    pub keys: Option<i64>,
    /// softmax: the factor its input is multiplied by (attention's 1/sqrt(head size)) and
    /// the additive mask over each head's channels.
    pub logit_scale: Option<f64>,
    pub mask: Option<String>,
    #[serde(rename = "type")]
    pub layer_type: Option<String>,
    pub output_exponent: Option<i64>,
    /// conv2d, fc, conv_transpose: "accumulator" writes the accumulator (no requantization).
    pub output_type: Option<String>,
}

impl RawLayer {
    /// The operator-specific keys this layer sets (not name, op, input, type and
    /// output_exponent, which every layer takes).
    pub fn op_keys(&self) -> Vec<&'static str> {
        [
            ("inputs", self.inputs.is_some()),
            ("residual", self.residual.is_some()),
            ("out_channels", self.out_channels.is_some()),
            ("kernel", self.kernel.is_some()),
            ("stride", self.stride.is_some()),
            ("padding", self.padding.is_some()),
            ("pad_value", self.pad_value.is_some()),
            ("groups", self.groups.is_some()),
            ("weights", self.weights.is_some()),
            ("bias", self.bias.is_some()),
            ("untied_bias", self.untied_bias.is_some()),
            ("requant", self.requant.is_some()),
            ("activation", self.activation.is_some()),
            ("relu6_max", self.relu6_max.is_some()),
            ("negative_slope", self.negative_slope.is_some()),
            ("output_type", self.output_type.is_some()),
            ("factor", self.factor.is_some()),
            ("scale", self.scale.is_some()),
            ("zero_points", self.zero_points.is_some()),
            ("scales", self.scales.is_some()),
            ("epsilon", self.epsilon.is_some()),
            ("gamma", self.gamma.is_some()),
            ("beta", self.beta.is_some()),
            ("approximate", self.approximate.is_some()),
            ("b", self.b.is_some()),
            ("transpose_b", self.transpose_b.is_some()),
            ("heads", self.heads.is_some()),
            ("keys", self.keys.is_some()),
            ("logit_scale", self.logit_scale.is_some()),
            ("mask", self.mask.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, present)| present.then_some(k))
        .collect()
    }
}
