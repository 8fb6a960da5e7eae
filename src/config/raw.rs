//! serde structs that mirror the parameter file exactly. Every leaf keeps its span so that
//! validation can point at the line and column of a bad value. Unknown keys are errors.

use serde::Deserialize;
use toml::Spanned;

pub type S<T> = Spanned<T>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub name: Option<S<String>>,
    pub array: Option<RawArray>,
    pub datatype: Option<RawDatatype>,
    pub buffers: Option<RawBuffers>,
    pub memory: Option<RawMemory>,
    pub vector: Option<RawVector>,
    pub reset: Option<RawReset>,
    pub control: Option<RawControl>,
    pub window: Option<RawWindow>,
    pub rows: Option<RawRows>,
    pub branch: Option<Vec<RawBranch>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawArray {
    pub rows: Option<S<i64>>,
    pub cols: Option<S<i64>>,
    pub dataflow: Option<S<String>>,
    pub pack_macs: Option<S<bool>>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawDatatype {
    pub input: Option<S<TypeSpec>>,
    pub weight: Option<S<TypeSpec>>,
    pub accumulator: Option<S<String>>,
    pub output: Option<S<TypeSpec>>,
    pub block_size: Option<S<i64>>,
    pub scale: Option<S<String>>,
    pub es: Option<S<i64>>,
}

/// An element type, or (multi-precision designs) the list of types the hardware selects from
/// per instruction.
#[derive(Debug, Clone)]
pub enum TypeSpec {
    One(String),
    List(Vec<String>),
}

impl<'de> Deserialize<'de> for TypeSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = TypeSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a datatype name such as \"int8\", or a list of names such as [\"int8\", \"mxint8\"]",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TypeSpec, E> {
                Ok(TypeSpec::One(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<TypeSpec, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(TypeSpec::List(names))
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawBuffers {
    pub input_depth: Option<S<i64>>,
    pub weight_depth: Option<S<i64>>,
    pub accumulator_depth: Option<S<i64>>,
    pub output_depth: Option<S<i64>>,
    pub accumulator_double_buffer: Option<S<bool>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMemory {
    pub data_width_bits: Option<S<i64>>,
    pub latency_cycles: Option<S<i64>>,
    pub bytes_per_cycle: Option<S<i64>>,
    pub ports: Option<S<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVector {
    pub ops: Option<S<Vec<S<String>>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReset {
    pub style: Option<S<String>>,
    pub active: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawControl {
    pub imem_depth: Option<S<i64>>,
    pub queue_depth: Option<S<i64>>,
    pub clock_mhz: Option<S<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRows {
    pub enabled: Option<S<bool>>,
    pub stats: Option<S<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWindow {
    pub enabled: Option<S<bool>>,
    pub kernel: Option<S<i64>>,
    pub line: Option<S<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBranch {
    pub name: S<String>,
    pub batch: Option<S<i64>>,
    pub priority: Option<S<i64>>,
    pub fifo_depth: Option<S<i64>>,
    /// "branch.unit": the unit of an earlier branch whose output also feeds this branch's
    /// first unit (shared front layers).
    pub from: Option<S<String>>,
    pub unit: Option<Vec<RawUnit>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUnit {
    pub name: S<String>,
    pub cpf: S<i64>,
    pub kpf: S<i64>,
    pub h: Option<S<i64>>,
    pub bands: Option<S<i64>>,
    pub handoff_depth: Option<S<i64>>,
    pub buffers: Option<RawBuffers>,
    pub datatype: Option<RawDatatype>,
}
