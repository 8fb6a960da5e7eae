//! The resolved, validated Design: every default filled and every width derived. The
//! emitter and the compiler trust it; a panic downstream of it is a validation bug.

use serde::Serialize;
use std::fmt;

/// A fixed-point integer element type (`int8`, `uint4`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IntType {
    pub signed: bool,
    pub bits: u32,
}

impl IntType {
    pub const fn new(signed: bool, bits: u32) -> Self {
        IntType { signed, bits }
    }
    pub fn min(&self) -> i64 {
        if self.signed {
            -(1i64 << (self.bits - 1))
        } else {
            0
        }
    }
    pub fn max(&self) -> i64 {
        if self.signed {
            (1i64 << (self.bits - 1)) - 1
        } else {
            (1i64 << self.bits) - 1
        }
    }
}

impl fmt::Display for IntType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}int{}", if self.signed { "" } else { "u" }, self.bits)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Datatypes {
    pub input: IntType,
    pub weight: IntType,
    pub accumulator: IntType,
    pub output: IntType,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Buffers {
    pub input_depth: u32,
    pub weight_depth: u32,
    pub accumulator_depth: u32,
    pub output_depth: u32,
    pub accumulator_double_buffer: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetStyle {
    Sync,
    Async,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Reset {
    pub style: ResetStyle,
    pub active_low: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Memory {
    pub data_width_bits: u32,
    pub latency_cycles: u32,
    pub bytes_per_cycle: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Control {
    pub imem_depth: u32,
    pub queue_depth: u32,
}

/// Post-processing operations the vector unit implements. Requantization is always present:
/// it is how an accumulator value becomes an output element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VectorOps {
    pub bias: bool,
    pub relu: bool,
    pub maxpool: bool,
    pub add: bool,
}

/// One core of a branch: a systolic array of `cpf` rows by `kpf` columns, replicated `h`
/// times (engine replicas that split the feature map by height).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unit {
    pub name: String,
    pub cpf: u32,
    pub kpf: u32,
    pub h: u32,
    pub datatype: Datatypes,
    pub buffers: Buffers,
}

impl Unit {
    pub fn input_row_bits(&self) -> u32 {
        self.cpf * self.datatype.input.bits
    }
    pub fn weight_row_bits(&self) -> u32 {
        self.kpf * self.datatype.weight.bits
    }
    pub fn acc_row_bits(&self) -> u32 {
        self.kpf * self.datatype.accumulator.bits
    }
    pub fn output_row_bits(&self) -> u32 {
        self.kpf * self.datatype.output.bits
    }
    /// Accumulator addresses: one bank, or two when double-buffered.
    pub fn acc_banks(&self) -> u32 {
        if self.buffers.accumulator_double_buffer {
            2
        } else {
            1
        }
    }
    pub fn pes(&self) -> u64 {
        u64::from(self.cpf) * u64::from(self.kpf) * u64::from(self.h)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Branch {
    pub name: String,
    pub batch: u32,
    pub priority: u32,
    pub fifo_depth: u32,
    pub units: Vec<Unit>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Design {
    /// Short name of the design (from `name`, else the file stem).
    pub name: String,
    /// File name of the parameter file (without its directory).
    pub source: String,
    pub dataflow: String,
    pub reset: Reset,
    pub memory: Memory,
    pub control: Control,
    pub vector: VectorOps,
    pub branches: Vec<Branch>,
}

impl Design {
    /// Every engine replica of every unit, in a fixed order: (branch, unit, replica).
    pub fn cores(&self) -> Vec<(&Branch, &Unit, u32)> {
        let mut v = Vec::new();
        for b in &self.branches {
            for u in &b.units {
                for r in 0..u.h {
                    v.push((b, u, r));
                }
            }
        }
        v
    }

    /// 64-bit FNV-1a hash of everything that shapes the hardware (not the name or path).
    /// Programs carry it; the ID register of the generated top returns it.
    pub fn hash(&self) -> u64 {
        let mut hw = serde_json::to_value(self).expect("Design serializes");
        if let Some(m) = hw.as_object_mut() {
            m.remove("name");
            m.remove("source");
        }
        let text = serde_json::to_string(&hw).expect("Design serializes");
        fnv1a64(text.as_bytes())
    }
}

pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Smallest `n` with `2^n >= x` (and at least 1), as `$clog2` with a floor of one bit.
pub fn clog2(x: u64) -> u32 {
    let mut n = 0;
    while (1u64 << n) < x {
        n += 1;
    }
    n.max(1)
}
