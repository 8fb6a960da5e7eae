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

/// An OCP MX block format: integer elements with an implicit 2^-frac, one E8M0 scale per
/// block of `block_size` elements along the reduction dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MxFormat {
    /// `mxint8` or `mxint4`.
    pub element: &'static str,
    pub bits: u32,
    pub frac: u32,
    pub block_size: u32,
}

impl MxFormat {
    /// Width of the exact integer partial sum of one block pair.
    pub fn psum_bits(&self) -> u32 {
        self.numeric().psum_bits(self.block_size)
    }
    /// Weight rows that hold the column scales of a weight tile (8 bits per column).
    pub fn scale_rows(&self) -> u32 {
        SCALE_BITS / self.bits
    }
    /// The column scales of a weight tile as `scale_rows()` weight rows of `scales.len()`
    /// elements: scale c is byte c, little-endian across the rows (an MXINT4 row holds two
    /// elements per scale, low nibble first). Element values are two's complement.
    pub fn pack_scale_rows(&self, scales: &[u8]) -> Vec<Vec<i64>> {
        let (w, cols) = (self.bits as usize, scales.len());
        let t = IntType::new(true, self.bits);
        (0..self.scale_rows() as usize)
            .map(|r| {
                (0..cols)
                    .map(|e| {
                        let bit = (r * cols + e) * w;
                        let v = (scales[bit / 8] >> (bit % 8)) & ((1u16 << w) - 1) as u8;
                        crate::interp::wrap(i64::from(v), t)
                    })
                    .collect()
            })
            .collect()
    }
    /// The inverse of `pack_scale_rows`: `rows` are the scale rows, in order.
    pub fn unpack_scale_rows(&self, rows: &[&[i64]]) -> Vec<u8> {
        let w = self.bits as usize;
        let cols = rows[0].len();
        (0..cols)
            .map(|c| {
                (0..SCALE_BITS as usize / w).fold(0u8, |b, k| {
                    let e = c * SCALE_BITS as usize / w + k;
                    let v = (rows[e / cols][e % cols] as u8) & ((1u16 << w) - 1) as u8;
                    b | v << (k * w)
                })
            })
            .collect()
    }
    pub fn numeric(&self) -> crate::numeric::mx::MxInt {
        crate::numeric::mx::MxInt {
            name: self.element,
            bits: self.bits,
            frac: self.frac,
        }
    }
}

/// Width of an E8M0 scale.
pub const SCALE_BITS: u32 = 8;

/// Element types. With `mx` set, input, weight and output hold the MX element codes (signed
/// integers of `mx.bits`), every input and output row carries one E8M0 scale, and the
/// accumulator holds FP32 bit patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Datatypes {
    pub input: IntType,
    pub weight: IntType,
    pub accumulator: IntType,
    pub output: IntType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mx: Option<MxFormat>,
    /// Floating-point elements (FP8 E4M3/E5M2, BF16): input, weight and output hold the
    /// codes (unsigned integers of the format's width), the accumulator FP32 bit patterns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fp: Option<crate::numeric::MiniFloat>,
    /// Multi-precision (with `mx`): the array also runs integer layers (elements of the MX
    /// element width, int32 accumulation); each instruction selects the integer or the MX
    /// path. Input and output rows have room for the scale; integer rows leave it out in
    /// external memory.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub multi_precision: bool,
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
    /// Bits of the block scale carried by an input or output row (0 without MX).
    pub fn scale_bits(&self) -> u32 {
        if self.datatype.mx.is_some() {
            SCALE_BITS
        } else {
            0
        }
    }
    /// Bits of the elements of an input row.
    pub fn input_elem_bits(&self) -> u32 {
        self.cpf * self.datatype.input.bits
    }
    /// Bits of the elements of an output row.
    pub fn output_elem_bits(&self) -> u32 {
        self.kpf * self.datatype.output.bits
    }
    /// Width of an input-buffer row: the elements, then (MX) the block scale.
    pub fn input_row_bits(&self) -> u32 {
        self.input_elem_bits() + self.scale_bits()
    }
    pub fn weight_row_bits(&self) -> u32 {
        self.kpf * self.datatype.weight.bits
    }
    pub fn acc_row_bits(&self) -> u32 {
        self.kpf * self.datatype.accumulator.bits
    }
    /// Width of an output-buffer row: the elements, then (MX) the block scale.
    pub fn output_row_bits(&self) -> u32 {
        self.output_elem_bits() + self.scale_bits()
    }
    /// Memory beats of a row of `bits`: the elements fill whole beats and an MX scale takes
    /// one more beat of its own.
    pub fn row_beats(bits: u32, mem_w: u32) -> u32 {
        bits.div_ceil(mem_w)
    }
    /// Rows of a weight tile: cpf element rows, then (MX) the rows of the kpf column scales.
    /// The largest tile of the design; see `layer_tile_rows`.
    pub fn weight_tile_rows(&self) -> u32 {
        self.layer_tile_rows(true)
    }
    /// Rows of a weight tile of a layer that runs in MX (`mx_layer`) or, in a
    /// multi-precision design, on the integer path (no scale rows).
    pub fn layer_tile_rows(&self, mx_layer: bool) -> u32 {
        self.cpf
            + self
                .datatype
                .mx
                .filter(|_| mx_layer)
                .map_or(0, |m| m.scale_rows())
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

    /// The floating-point element format when the design computes in FP8/BF16.
    pub fn fp(&self) -> Option<crate::numeric::MiniFloat> {
        self.branches
            .iter()
            .flat_map(|b| b.units.iter())
            .find_map(|u| u.datatype.fp)
    }

    /// The MX format when the design computes in MX (validation makes it design-wide).
    pub fn mx(&self) -> Option<MxFormat> {
        self.branches
            .iter()
            .flat_map(|b| b.units.iter())
            .find_map(|u| u.datatype.mx)
    }

    /// True when the design runs both integer and MX layers (validation makes it design-wide).
    pub fn multi_precision(&self) -> bool {
        self.branches
            .iter()
            .flat_map(|b| b.units.iter())
            .any(|u| u.datatype.multi_precision)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_rows_by_hand() {
        let mx4 = MxFormat {
            element: "mxint4",
            bits: 4,
            frac: 2,
            block_size: 32,
        };
        // Four columns: two rows of four 4-bit elements; scale c is byte c, low nibble first.
        let rows = mx4.pack_scale_rows(&[0x12, 0x34, 0xf0, 0x7f]);
        assert_eq!(rows, vec![vec![2, 1, 4, 3], vec![0, -1, -1, 7]]);
        let refs: Vec<&[i64]> = rows.iter().map(Vec::as_slice).collect();
        assert_eq!(mx4.unpack_scale_rows(&refs), vec![0x12, 0x34, 0xf0, 0x7f]);
        let mx8 = MxFormat {
            element: "mxint8",
            bits: 8,
            frac: 6,
            block_size: 32,
        };
        let rows = mx8.pack_scale_rows(&[127, 200]);
        assert_eq!(rows, vec![vec![127, -56]]);
        assert_eq!(mx8.unpack_scale_rows(&[&rows[0]]), vec![127, 200]);
        assert_eq!(
            (mx4.scale_rows(), mx8.scale_rows(), mx8.psum_bits()),
            (2, 1, 21)
        );
    }
}
