//! The resolved, validated Design: every default filled and every width derived. The
//! emitter and the compiler trust it; a panic downstream of it is a validation bug.

use crate::numeric::mx::SCALE_BITS;
use crate::numeric::{leaves_of, Datapath, IntType, Leaves, Precision};
use serde::Serialize;

/// The datapath of a unit: the precisions it runs, selected per instruction by their index
/// (the ISA's `prec` fields). One precision, or a multi-precision pair that shares the
/// array's multipliers (an integer type and the MX type of the same width, in that order).
/// Every width the hardware needs is derived from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Datatypes {
    pub precisions: Vec<Precision>,
}

impl Datatypes {
    pub fn single(p: Precision) -> Datatypes {
        Datatypes {
            precisions: vec![p],
        }
    }
    /// The first precision: the one every width is taken from (a multi-precision pair
    /// shares its element widths).
    pub fn primary(&self) -> &dyn Datapath {
        self.precisions[0].ops()
    }
    /// Index of `p` among the precisions (the value of an instruction's `prec` field).
    pub fn index_of(&self, p: &Precision) -> Option<usize> {
        self.precisions.iter().position(|q| q == p)
    }
    pub fn get(&self, index: usize) -> &dyn Datapath {
        self.precisions[index].ops()
    }
    pub fn is_multi(&self) -> bool {
        self.precisions.len() > 1
    }
    /// How input, weight, accumulator and output values are stored in their scratchpads.
    pub fn input_type(&self) -> IntType {
        self.primary().input().code_type()
    }
    pub fn weight_type(&self) -> IntType {
        self.primary().weight().code_type()
    }
    pub fn acc_type(&self) -> IntType {
        self.primary().acc_type()
    }
    pub fn output_type(&self) -> IntType {
        self.primary().output().code_type()
    }
    /// Width of a column result of an array of `rows` rows (`numeric::psum_bits`).
    pub fn psum_bits(&self, rows: u32) -> u32 {
        crate::numeric::psum_bits(&self.precisions, rows)
    }
    /// Width in which the array of `rows` rows adds a column (`numeric::column_bits`).
    pub fn column_bits(&self, rows: u32) -> u32 {
        crate::numeric::column_bits(&self.precisions, rows)
    }
    /// Input and output rows have a slot for an E8M0 block scale (some precision's rows
    /// carry one).
    pub fn row_scale_bits(&self) -> u32 {
        if self
            .precisions
            .iter()
            .any(|p| p.ops().input().block_scaled())
        {
            SCALE_BITS
        } else {
            0
        }
    }
    /// Bit i set when the rows of precision i carry block scales.
    pub fn scaled_mask(&self) -> u32 {
        self.precisions
            .iter()
            .enumerate()
            .filter(|(_, p)| p.ops().input().block_scaled())
            .fold(0, |m, (i, _)| m | 1 << i)
    }
    /// Rows of column scales after a weight tile's element rows (the largest).
    pub fn weight_scale_rows(&self) -> u32 {
        self.precisions
            .iter()
            .map(|p| p.ops().weight_scale_rows())
            .max()
            .unwrap_or(0)
    }
    /// The RTL leaf modules of this datapath (validation makes sure there are some).
    pub fn leaves(&self) -> Leaves {
        leaves_of(&self.precisions).expect("validated datapath")
    }
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
    /// Per port.
    pub bytes_per_cycle: u32,
    /// External-memory ports: engine e (in `Design::cores` order) uses port e mod ports.
    /// Left out of the serialized Design (and so of its hash) when 1.
    #[serde(skip_serializing_if = "is_one")]
    pub ports: u32,
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Control {
    pub imem_depth: u32,
    pub queue_depth: u32,
    /// The clock the design is meant to run at, for frames per second in reports. It does
    /// not change the RTL, so it is not part of the Design hash.
    pub clock_mhz: u32,
}

/// Post-processing operations the vector unit implements. Requantization is always present:
/// it is how an accumulator value becomes an output element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VectorOps {
    pub bias: bool,
    pub relu: bool,
    /// Leaky ReLU: a second requantization multiplier for negative values.
    pub leaky_relu: bool,
    pub maxpool: bool,
    pub add: bool,
}

impl VectorOps {
    /// The operations as the config's `vector.ops` names them (requantize always).
    pub fn names(&self) -> Vec<&'static str> {
        let all = [
            (true, "requantize"),
            (self.bias, "bias"),
            (self.relu, "relu"),
            (self.leaky_relu, "leaky_relu"),
            (self.maxpool, "maxpool"),
            (self.add, "add"),
        ];
        all.iter().filter(|(on, _)| *on).map(|&(_, n)| n).collect()
    }
}

/// One core of a branch: a systolic array of `cpf` rows by `kpf` columns, replicated `h`
/// times (engine replicas that split the feature map by height).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unit {
    pub name: String,
    pub cpf: u32,
    pub kpf: u32,
    pub h: u32,
    /// Row bands each replica computes a frame in, handing each on to the next unit as soon
    /// as it is done (fine-grained pipelining; 1: whole frames). A choice of the compiler's
    /// schedule, not of the hardware: left out of the Design's hash, and out of its
    /// serialized form when 1.
    #[serde(skip_serializing_if = "is_one")]
    pub bands: u32,
    /// Beats of each replica's hand-off buffer (0: none): the on-chip buffer the unit that
    /// feeds this one writes rows of its output into, and this one reads its input windows
    /// from (`[[branch.unit]] handoff_depth`). Left out of the serialized form, and so of
    /// the hash, when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub handoff_depth: u32,
    pub datatype: Datatypes,
    pub buffers: Buffers,
    /// The window unit beside the array, when the design has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowUnit>,
    /// The row unit on the vector queue, when the design has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<RowUnit>,
}

impl Unit {
    /// The array takes a matmul's operand zero points out of its column sums (an integer
    /// datatype on a Design with [rows], which runs the matmuls of two run-time tensors
    /// whose operands have them): the compute unit's zero-point correction.
    pub fn zero_points(&self) -> bool {
        self.rows.is_some()
            && self
                .datatype
                .precisions
                .iter()
                .all(|p| p.ops().zero_points())
    }

    /// The row unit writes each row of lanes as one MX block and reads each operand row
    /// with its block scale (an MX output datatype): the fraction bits of the block's
    /// elements.
    pub fn row_block_frac(&self) -> Option<u32> {
        match crate::numeric::rows::Elem::of(self.datatype.primary().output()) {
            Some(crate::numeric::rows::Elem::Mx(t)) if self.rows.is_some() => Some(t.frac),
            _ => None,
        }
    }
}

/// The row unit (`[rows]`): an FP32 element pipeline over accumulator rows on the vector
/// queue, one row per cycle (scale, operand, statistics, affine, e^x and a programmable
/// piecewise quadratic, the rounding to an output element), with reductions of a row's
/// lanes into per-pixel statistics (softmax, layer and RMS norms, GELU, SiLU).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RowUnit {
    /// Entries of the statistics register file (one pair of FP32 values per pixel).
    pub stats: u32,
}

/// The window unit (`[window]`): depthwise convolutions and max-pools of kernels up to
/// `kernel` x `kernel` over input rows of up to `line` pixels, one input pixel per cycle
/// for every lane, beside the systolic array on the compute queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WindowUnit {
    pub kernel: u32,
    pub line: u32,
}

impl Unit {
    /// Bits of the block-scale slot of an input or output row (0 without MX).
    pub fn scale_bits(&self) -> u32 {
        self.datatype.row_scale_bits()
    }
    /// Bits of the elements of an input row.
    pub fn input_elem_bits(&self) -> u32 {
        self.cpf * self.datatype.input_type().bits
    }
    /// Bits of the elements of an output row.
    pub fn output_elem_bits(&self) -> u32 {
        self.kpf * self.datatype.output_type().bits
    }
    /// Width of an input-buffer row: the elements, then (MX) the block scale.
    pub fn input_row_bits(&self) -> u32 {
        self.input_elem_bits() + self.scale_bits()
    }
    pub fn weight_row_bits(&self) -> u32 {
        self.kpf * self.datatype.weight_type().bits
    }
    pub fn acc_row_bits(&self) -> u32 {
        self.kpf * self.datatype.acc_type().bits
    }
    /// Width of an output-buffer row: the elements, then (MX) the block scale.
    pub fn output_row_bits(&self) -> u32 {
        self.output_elem_bits() + self.scale_bits()
    }
    /// Rows of a weight tile: cpf element rows, then (MX) the rows of the kpf column scales.
    /// The largest tile of the design; see `layer_tile_rows`.
    pub fn weight_tile_rows(&self) -> u32 {
        self.cpf + self.datatype.weight_scale_rows()
    }
    /// Rows of a weight tile of a layer that runs in precision `prec` (an index).
    pub fn layer_tile_rows(&self, prec: usize) -> u32 {
        self.cpf + self.datatype.get(prec).weight_scale_rows()
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
    /// (branch, unit) of an earlier branch that also feeds this branch's first unit through
    /// a stream link of its own (a fork: shared front layers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<(String, String)>,
    pub units: Vec<Unit>,
}

/// A stream link between two engines (`Design::links`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub from: usize,
    pub to: usize,
    /// FIFO depth in beats.
    pub depth: u32,
    /// Instance name of the FIFO, and what it links, for comments.
    pub name: String,
    pub doc: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Design {
    /// Short name of the design (from `name`, else the file stem).
    pub name: String,
    /// File name of the parameter file (without its directory).
    pub source: String,
    pub dataflow: String,
    /// Columns 2p and 2p+1 of every array share one multiplier, as an FPGA's DSP block
    /// computes two 8-bit products (`[array] pack_macs`; 8-bit integer and MX elements).
    /// Left out of the serialized form (and so of the hash) when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pack_macs: bool,
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

    /// The position in `cores()` of replica `r` of unit `u` of branch `b`.
    pub fn core_index(&self, b: &str, u: &str, r: u32) -> Option<usize> {
        self.cores()
            .iter()
            .position(|(cb, cu, cr)| cb.name == b && cu.name == u && *cr == r)
    }

    /// The stream links between engines, each an elastic FIFO. Replica r of every unit
    /// feeds replica r of the next unit of its branch, and replica r of a branch's `from`
    /// unit feeds replica r of the branch's first unit (a fork), when both units have the
    /// same `h`; between units of different `h`, every replica of the one feeds every
    /// replica of the other (an engine fed by several FIFOs takes a beat when all of them
    /// offer one: a join). Engine indices are `cores()` positions.
    pub fn links(&self) -> Vec<Link> {
        let index = |b: &str, u: &str, r: u32| self.core_index(b, u, r).expect("engine exists");
        let mut out = Vec::new();
        for b in &self.branches {
            let mut pairs: Vec<(&str, &Unit, &Unit)> = Vec::new();
            if let Some((fb, fu)) = &b.from {
                let src = self
                    .branches
                    .iter()
                    .find(|x| x.name == *fb)
                    .and_then(|x| x.units.iter().find(|u| u.name == *fu))
                    .expect("validated fork source");
                pairs.push((fb, src, &b.units[0]));
            }
            for w in b.units.windows(2) {
                pairs.push((&b.name, &w[0], &w[1]));
            }
            for (src_branch, from, to) in pairs {
                let ends: Vec<(u32, u32)> = if from.h == to.h {
                    (0..from.h).map(|r| (r, r)).collect()
                } else {
                    (0..from.h)
                        .flat_map(|rf| (0..to.h).map(move |rt| (rf, rt)))
                        .collect()
                };
                let fork = src_branch != b.name;
                for (rf, rt) in ends {
                    let name = match (fork, from.h == to.h) {
                        (false, true) => crate::names::link(&b.name, &from.name, &to.name, rf),
                        (true, true) => {
                            crate::names::fork_link(src_branch, &from.name, &b.name, rf)
                        }
                        (false, false) => {
                            crate::names::cross_link(&b.name, &from.name, rf, &to.name, rt)
                        }
                        (true, false) => crate::names::cross_link(
                            src_branch,
                            &from.name,
                            rf,
                            &format!("branch_{}", b.name),
                            rt,
                        ),
                    };
                    out.push(Link {
                        from: index(src_branch, &from.name, rf),
                        to: index(&b.name, &to.name, rt),
                        depth: b.fifo_depth,
                        name,
                        doc: format!(
                            "stream {src_branch}.{}[{rf}] -> {}.{}[{rt}]",
                            from.name, b.name, to.name
                        ),
                    });
                }
            }
        }
        out
    }

    /// The engine that writes into engine `e`'s hand-off buffer: the one engine feeding it
    /// through a link between units of the same `h` (replica r of the unit before it, or
    /// of its branch's `from` unit), when `e`'s unit has a buffer (`handoff_depth`). None
    /// for an engine without a buffer or fed through a join (units of different `h`: a
    /// consumer replica would read several producers' rows; those hand-offs go through
    /// memory).
    pub fn handoff_feeder(&self, e: usize) -> Option<usize> {
        let cores = self.cores();
        if cores[e].1.handoff_depth == 0 {
            return None;
        }
        let feeding: Vec<Link> = self.links().into_iter().filter(|l| l.to == e).collect();
        match feeding.as_slice() {
            [l] if cores[l.from].1.h == cores[e].1.h => Some(l.from),
            _ => None,
        }
    }

    /// The datapath of the design's units (validation gives every unit the same family,
    /// so they share their RTL leaves).
    pub fn datatypes(&self) -> &Datatypes {
        &self.branches[0].units[0].datatype
    }

    /// 64-bit FNV-1a hash of everything that shapes the hardware (not the name or path).
    /// Programs carry it; the ID register of the generated top returns it.
    pub fn hash(&self) -> u64 {
        let mut hw = serde_json::to_value(self).expect("Design serializes");
        if let Some(m) = hw.as_object_mut() {
            m.remove("name");
            m.remove("source");
            if let Some(c) = m.get_mut("control").and_then(|c| c.as_object_mut()) {
                c.remove("clock_mhz");
            }
            let units = m
                .get_mut("branches")
                .and_then(|b| b.as_array_mut())
                .into_iter()
                .flatten()
                .filter_map(|b| b.get_mut("units").and_then(|u| u.as_array_mut()))
                .flatten();
            for u in units.filter_map(|u| u.as_object_mut()) {
                u.remove("bands");
            }
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
