//! ISA-level interpreter: runs programs on a functional model of one engine (its
//! scratchpads, weight banks, bias register and semaphores) and of external memory. The
//! four queues are modelled with their semaphores and bounded depths, so a program that
//! would deadlock in hardware deadlocks here too; each instruction executes atomically when
//! it starts. For race-free programs this computes exactly what the RTL computes.
//!
//! MX designs: an input or output row holds its elements followed by the block's E8M0 scale
//! (one more value, 0..=255), accumulator rows hold FP32 bit patterns (as int32), and a
//! weight tile is `cpf` element rows followed by the rows of column scales (8 bits per
//! column: one row for MXINT8, two for MXINT4).

mod memory;

pub use memory::Memory;

use crate::design::{Design, IntType, MxFormat, Unit};
use crate::isa::{self, Buffer, Instr, Opcode, Queue};
use crate::numeric::{fp32, mx};
use std::collections::VecDeque;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterpError {
    Decode { pc: usize, reason: String },
    Deadlock { pending: Vec<String> },
    Illegal { pc: usize, reason: String },
    NoEnd,
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterpError::Decode { pc, reason } => write!(f, "instruction {pc}: {reason}"),
            InterpError::Deadlock { pending } => {
                write!(
                    f,
                    "deadlock: no queue can start; heads: {}",
                    pending.join("; ")
                )
            }
            InterpError::Illegal { pc, reason } => write!(f, "instruction {pc}: {reason}"),
            InterpError::NoEnd => write!(f, "the program has no end instruction"),
        }
    }
}

impl std::error::Error for InterpError {}

/// Architectural state of one engine.
#[derive(Debug, Clone)]
pub struct Engine {
    pub unit: Unit,
    pub mem_w: u32,
    queue_depth: usize,
    sem_max: u32,
    /// Scratchpads: rows of element values (sign- or zero-extended).
    pub input: Vec<Vec<i64>>,
    pub weight: Vec<Vec<i64>>,
    pub acc: Vec<Vec<i64>>,
    pub output: Vec<Vec<i64>>,
    /// Weight banks of the array: [bank][row][col].
    pub banks: [Vec<Vec<i64>>; 2],
    pub cur_bank: usize,
    pub bias: Vec<i64>,
    /// MX: column scales (E8M0 codes) of the two weight banks.
    pub bank_scales: [Vec<u8>; 2],
    pub sems: Vec<u32>,
    /// Instructions executed, in the order they started.
    pub trace: Vec<(usize, Opcode)>,
    /// When `Some`, every scratchpad row an instruction writes, in write order:
    /// (instruction index, buffer, row, values). Used by lock-step comparison with the RTL.
    pub writes: Option<Vec<RowWrite>>,
}

/// One scratchpad row written by an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowWrite {
    pub pc: usize,
    pub buffer: Buffer,
    pub row: usize,
    pub values: Vec<i64>,
}

/// Wrap `v` to the two's-complement or unsigned range of `t`.
pub fn wrap(v: i64, t: IntType) -> i64 {
    let bits = t.bits;
    let m = v & ((1i64 << bits) - 1);
    if t.signed && m >= 1i64 << (bits - 1) {
        m - (1i64 << bits)
    } else {
        m
    }
}

/// The vector lane of the README: round half up, saturate, then add, ReLU, the ReLU6 clamp
/// and pool.
#[allow(clippy::too_many_arguments)]
pub fn vector_lane(
    acc: i64,
    bias: Option<i64>,
    multiplier: u64,
    shift: u32,
    zero_point: i64,
    out: IntType,
    add: Option<i64>,
    relu: bool,
    clamp_hi: Option<i64>,
    pool: Option<i64>,
) -> i64 {
    let x = acc + bias.unwrap_or(0);
    let p = i128::from(x) * i128::from(multiplier);
    let r = if shift == 0 {
        p
    } else {
        (p + (1i128 << (shift - 1))) >> shift
    };
    let clamp = |v: i128| v.clamp(i128::from(out.min()), i128::from(out.max())) as i64;
    let mut q = clamp(r + i128::from(zero_point));
    if let Some(o) = add {
        q = clamp(i128::from(q) + i128::from(o));
    }
    let zp = clamp(i128::from(zero_point));
    if relu && q < zp {
        q = zp;
    }
    if let Some(hi) = clamp_hi {
        let hi = clamp(i128::from(hi));
        if q > hi {
            q = hi;
        }
    }
    if let Some(o) = pool {
        q = q.max(o);
    }
    q
}

/// The MX vector path on one FP32 accumulator row (`numeric::mx::quantize_fp32_row`): the
/// elements followed by the scale code.
pub fn mx_vector_row(acc: &[u32], relu: bool, mx: MxFormat) -> Vec<i64> {
    let (scale, q) = mx::quantize_fp32_row(acc, relu, mx.numeric());
    q.iter()
        .map(|v| i64::from(*v))
        .chain(std::iter::once(i64::from(scale)))
        .collect()
}

/// The floating-point vector path on one FP32 accumulator value: ReLU (negative values and
/// -0 become +0, NaN stays NaN), then conversion to the element format.
pub fn fp_output(acc: u32, relu: bool, f: crate::numeric::MiniFloat) -> u32 {
    let v = f32::from_bits(acc);
    let x = if relu && !v.is_nan() && acc >> 31 == 1 {
        0
    } else {
        acc
    };
    fp32::to_mini(x, f)
}

impl Engine {
    pub fn new(design: &Design, unit: &Unit) -> Engine {
        let b = unit.buffers;
        let cpf = unit.cpf as usize;
        let kpf = unit.kpf as usize;
        let scale = usize::from(unit.datatype.mx.is_some());
        Engine {
            unit: unit.clone(),
            mem_w: design.memory.data_width_bits,
            queue_depth: design.control.queue_depth as usize,
            sem_max: (1 << crate::rtl::SEM_COUNT_W) - 1,
            input: vec![vec![0; cpf + scale]; b.input_depth as usize],
            weight: vec![vec![0; kpf]; b.weight_depth as usize],
            acc: vec![vec![0; kpf]; (b.accumulator_depth * unit.acc_banks()) as usize],
            output: vec![vec![0; kpf + scale]; b.output_depth as usize],
            banks: [vec![vec![0; kpf]; cpf], vec![vec![0; kpf]; cpf]],
            cur_bank: 0,
            bias: vec![0; kpf],
            bank_scales: [vec![0; kpf], vec![0; kpf]],
            sems: vec![0; isa::NUM_SEMAPHORES as usize],
            trace: Vec::new(),
            writes: None,
        }
    }

    /// Values in a row of `buf` and their type. An MX input or output row has one more
    /// value, the scale (see `row_has_scale`).
    fn row_shape(&self, buf: Buffer) -> (usize, IntType) {
        let d = self.unit.datatype;
        let scale = usize::from(d.mx.is_some());
        match buf {
            Buffer::Input => (self.unit.cpf as usize + scale, d.input),
            Buffer::Weight => (self.unit.kpf as usize, d.weight),
            Buffer::Accumulator => (self.unit.kpf as usize, d.accumulator),
            Buffer::Output => (self.unit.kpf as usize + scale, d.output),
        }
    }

    fn rows_mut(&mut self, buf: Buffer) -> &mut Vec<Vec<i64>> {
        match buf {
            Buffer::Input => &mut self.input,
            Buffer::Weight => &mut self.weight,
            Buffer::Accumulator => &mut self.acc,
            Buffer::Output => &mut self.output,
        }
    }

    /// Beats of one row of `buf`.
    pub fn beats(&self, buf: Buffer) -> u64 {
        let (n, t) = self.row_shape(buf);
        if self.row_has_scale(buf) {
            return self.elem_beats(buf) + 1;
        }
        (n as u64 * u64::from(t.bits)).div_ceil(u64::from(self.mem_w))
    }

    /// True for the rows of `buf` that end with an MX block scale.
    pub fn row_has_scale(&self, buf: Buffer) -> bool {
        self.unit.datatype.mx.is_some() && matches!(buf, Buffer::Input | Buffer::Output)
    }

    /// Beats of the elements of an MX row.
    fn elem_beats(&self, buf: Buffer) -> u64 {
        let (n, t) = self.row_shape(buf);
        ((n as u64 - 1) * u64::from(t.bits)).div_ceil(u64::from(self.mem_w))
    }

    /// Run `program` to its `end` with `mem` as external memory.
    pub fn run(&mut self, program: &[Instr], mem: &mut Memory) -> Result<(), InterpError> {
        let end = program
            .iter()
            .position(|i| i.opcode == Opcode::End)
            .ok_or(InterpError::NoEnd)?;
        let mut queues: [VecDeque<usize>; 4] = Default::default();
        let qi = |q: Queue| Queue::ALL.iter().position(|x| *x == q).unwrap();
        let mut pc = 0;
        loop {
            // Fetch in order until the next instruction's queue is full.
            while pc < end {
                let q = qi(program[pc].opcode.queue().expect("not end"));
                if queues[q].len() >= self.queue_depth {
                    break;
                }
                program[pc]
                    .check_masks()
                    .map_err(|e| InterpError::Illegal {
                        pc,
                        reason: e.to_string(),
                    })?;
                queues[q].push_back(pc);
                pc += 1;
            }
            if pc == end && queues.iter().all(VecDeque::is_empty) {
                return Ok(());
            }
            let mut progressed = false;
            for queue in queues.iter_mut() {
                let Some(&head) = queue.front() else {
                    continue;
                };
                let instr = &program[head];
                let wait = instr.get("wait");
                let ready = (0..self.sems.len()).all(|s| wait & (1 << s) == 0 || self.sems[s] > 0);
                if !ready {
                    continue;
                }
                for s in 0..self.sems.len() {
                    if wait & (1 << s) != 0 {
                        self.sems[s] -= 1;
                    }
                }
                queue.pop_front();
                self.execute(head, instr, mem)?;
                let signal = instr.get("signal");
                for s in 0..self.sems.len() {
                    if signal & (1 << s) != 0 {
                        if self.sems[s] == self.sem_max {
                            return Err(InterpError::Illegal {
                                pc: head,
                                reason: format!(
                                    "semaphore {} overflows (more than {} releases outstanding)",
                                    isa::SEMAPHORES[s].name(),
                                    self.sem_max
                                ),
                            });
                        }
                        self.sems[s] += 1;
                    }
                }
                progressed = true;
            }
            // Fetch already pushed all it could; with no queue able to start, nothing changes.
            if !progressed {
                let pending = queues
                    .iter()
                    .filter_map(|q| q.front())
                    .map(|&h| format!("{h}: {}", program[h].opcode.mnemonic()))
                    .collect();
                return Err(InterpError::Deadlock { pending });
            }
        }
    }

    fn record(&mut self, pc: usize, buffer: Buffer, row: usize, values: &[i64]) {
        if let Some(w) = &mut self.writes {
            w.push(RowWrite {
                pc,
                buffer,
                row,
                values: values.to_vec(),
            });
        }
    }

    /// Element type and count of a row of `b`.
    pub fn row_type(&self, b: Buffer) -> (usize, IntType) {
        self.row_shape(b)
    }

    // Matrix arithmetic reads best with explicit row and column indices.
    #[allow(clippy::needless_range_loop)]
    fn execute(&mut self, pc: usize, i: &Instr, mem: &mut Memory) -> Result<(), InterpError> {
        self.trace.push((pc, i.opcode));
        let illegal = |reason: String| InterpError::Illegal { pc, reason };
        match i.opcode {
            Opcode::Load | Opcode::Store => {
                if i.get("stream") != 0 {
                    return Err(illegal(
                        "streams between units are not modelled by the single-engine interpreter"
                            .into(),
                    ));
                }
                let buf = Buffer::ALL[i.get("buffer") as usize];
                if i.opcode == Opcode::Store && buf != Buffer::Output {
                    return Err(illegal("store reads the output buffer only".into()));
                }
                let (n, t) = self.row_shape(buf);
                let beats = self.beats(buf);
                // Multi-precision: an integer row (scale = 0) moves its elements only; the
                // scale slot of the scratchpad row reads zero.
                let int_row = self.unit.datatype.multi_precision
                    && self.row_has_scale(buf)
                    && i.get("scale") == 0;
                let depth = self.rows_mut(buf).len();
                let (c0, c1) = (i.get("count0"), i.get("count1"));
                for i1 in 0..c1 {
                    for i0 in 0..c0 {
                        let k = i1 * c0 + i0;
                        let ext =
                            (i.get("ext_addr") + i1 * i.get("stride1") + i0 * i.get("stride0"))
                                & 0xffff_ffff;
                        let row = ((i.get("spad_addr") + k) & 0xffff) as usize % depth;
                        if int_row && i.opcode == Opcode::Load {
                            let mut vals = mem.read_row(ext, self.elem_beats(buf), n - 1, t);
                            vals.push(0);
                            self.record(pc, buf, row, &vals);
                            self.rows_mut(buf)[row] = vals;
                        } else if int_row {
                            let vals = self.output[row][..n - 1].to_vec();
                            mem.write_row(ext, self.elem_beats(buf), &vals, t);
                        } else if i.opcode == Opcode::Load && self.row_has_scale(buf) {
                            let vals = mem.read_mx_row(ext, self.elem_beats(buf), n - 1, t);
                            self.record(pc, buf, row, &vals);
                            self.rows_mut(buf)[row] = vals;
                        } else if i.opcode == Opcode::Load {
                            let vals = mem.read_row(ext, beats, n, t);
                            self.record(pc, buf, row, &vals);
                            self.rows_mut(buf)[row] = vals;
                        } else if self.row_has_scale(buf) {
                            let vals = self.output[row].clone();
                            mem.write_mx_row(ext, self.elem_beats(buf), &vals, t);
                        } else {
                            let vals = self.output[row].clone();
                            mem.write_row(ext, beats, &vals, t);
                        }
                    }
                }
            }
            Opcode::Matmul => {
                let cpf = self.unit.cpf as usize;
                let kpf = self.unit.kpf as usize;
                if i.get("swap") != 0 {
                    self.cur_bank ^= 1;
                }
                // Multi-precision: the instruction says whether this is an MX layer.
                let mx = self
                    .unit
                    .datatype
                    .mx
                    .filter(|_| !self.unit.datatype.multi_precision || i.get("mx") != 0);
                if i.get("preload") != 0 {
                    let depth = self.weight.len();
                    for r in 0..cpf {
                        let row = ((i.get("weight_addr") + r as u64) & 0xffff) as usize % depth;
                        self.banks[self.cur_bank ^ 1][r] = self.weight[row].clone();
                    }
                    if let Some(f) = mx {
                        // The scale rows follow the element rows.
                        let rows: Vec<&[i64]> = (0..f.scale_rows() as usize)
                            .map(|s| {
                                let row = ((i.get("weight_addr") + (cpf + s) as u64) & 0xffff)
                                    as usize
                                    % depth;
                                self.weight[row].as_slice()
                            })
                            .collect();
                        self.bank_scales[self.cur_bank ^ 1] = f.unpack_scale_rows(&rows);
                    }
                }
                let acc_t = self.unit.datatype.accumulator;
                let (c0, c1) = (i.get("count0"), i.get("count1"));
                for i1 in 0..c1 {
                    for i0 in 0..c0 {
                        let k = i1 * c0 + i0;
                        let in_row =
                            ((i.get("input_addr") + i1 * i.get("stride1") + i0 * i.get("stride0"))
                                & 0xffff) as usize
                                % self.input.len();
                        let acc_row = ((i.get("acc_addr") + k) & 0xffff) as usize % self.acc.len();
                        let a = &self.input[in_row];
                        let w = &self.banks[self.cur_bank];
                        if let Some(f) = self.unit.datatype.fp {
                            // Each column sums its rows' exact products in FP32, top to
                            // bottom from +0; the sum is written or added in FP32.
                            let accumulate = i.get("accumulate") != 0;
                            for c in 0..kpf {
                                let column = (0..cpf).fold(0u32, |s, r| {
                                    fp32::add(s, fp32::mini_mul(a[r] as u32, w[r][c] as u32, f))
                                });
                                let old = self.acc[acc_row][c] as u32;
                                let new = if accumulate {
                                    fp32::add(old, column)
                                } else {
                                    column
                                };
                                self.acc[acc_row][c] = i64::from(new as i32);
                            }
                            let row = self.acc[acc_row].clone();
                            self.record(pc, Buffer::Accumulator, acc_row, &row);
                            continue;
                        }
                        if let Some(mx) = mx {
                            let accumulate = i.get("accumulate") != 0;
                            debug_assert!(a.len() == cpf + 1, "MX rows carry a scale");
                            for c in 0..kpf {
                                let psum: i64 = (0..cpf).map(|r| a[r] * w[r][c]).sum();
                                let value = fp32::mx_dequant(
                                    psum,
                                    a[cpf] as u8,
                                    self.bank_scales[self.cur_bank][c],
                                    mx.numeric(),
                                );
                                let old = self.acc[acc_row][c] as u32;
                                let new = if accumulate {
                                    fp32::add(old, value)
                                } else {
                                    value
                                };
                                self.acc[acc_row][c] = i64::from(new as i32);
                            }
                            let row = self.acc[acc_row].clone();
                            self.record(pc, Buffer::Accumulator, acc_row, &row);
                            continue;
                        }
                        for c in 0..kpf {
                            let dot: i64 = (0..cpf)
                                .map(|r| a[r] * w[r][c])
                                .fold(0i64, i64::wrapping_add);
                            let base = if i.get("accumulate") != 0 {
                                self.acc[acc_row][c]
                            } else {
                                0
                            };
                            self.acc[acc_row][c] = wrap(base.wrapping_add(dot), acc_t);
                        }
                        let row = self.acc[acc_row].clone();
                        self.record(pc, Buffer::Accumulator, acc_row, &row);
                    }
                }
            }
            Opcode::Vector => {
                let (add, pool) = (i.get("add") != 0, i.get("pool") != 0);
                if add && pool {
                    return Err(illegal(
                        "add and pool share the operand read; use one per instruction".into(),
                    ));
                }
                if i.get("load_bias") != 0 {
                    let row = (i.get("bias_addr") & 0xffff) as usize % self.acc.len();
                    self.bias = self.acc[row].clone();
                }
                let out_t = self.unit.datatype.output;
                let zp = (i.get("zero_point") as u16) as i16 as i64;
                let n = i.get("count");
                let (out_base, opnd_base) = (i.get("out_addr"), i.get("opnd_addr"));
                if (add || pool)
                    && out_base != opnd_base
                    && out_base < opnd_base + n
                    && opnd_base < out_base + n
                {
                    return Err(illegal(
                        "the operand rows overlap the rows being written (only the same rows, in place, are allowed)".into(),
                    ));
                }
                if let Some(f) = self.unit.datatype.fp {
                    for j in 0..n {
                        let acc_row = ((i.get("acc_addr") + j) & 0xffff) as usize % self.acc.len();
                        let out_row = ((out_base + j) & 0xffff) as usize % self.output.len();
                        let vals: Vec<i64> = self.acc[acc_row]
                            .iter()
                            .map(|v| i64::from(fp_output(*v as u32, i.get("relu") != 0, f)))
                            .collect();
                        self.record(pc, Buffer::Output, out_row, &vals);
                        self.output[out_row] = vals;
                    }
                    return Ok(());
                }
                let multi = self.unit.datatype.multi_precision;
                let mx_in = self
                    .unit
                    .datatype
                    .mx
                    .filter(|_| !multi || i.get("mx_in") != 0);
                if let (true, Some(mx), false) = (multi, mx_in, i.get("mx_out") != 0) {
                    // FP32 rows to integers at the fixed scale, for an integer layer.
                    let scale = i.get("fixed_scale") as u8;
                    for j in 0..n {
                        let acc_row = ((i.get("acc_addr") + j) & 0xffff) as usize % self.acc.len();
                        let out_row = ((out_base + j) & 0xffff) as usize % self.output.len();
                        let vals: Vec<i64> = self.acc[acc_row]
                            .iter()
                            .map(|v| {
                                fp32::to_fixed(
                                    *v as u32,
                                    scale,
                                    mx.frac,
                                    out_t.min(),
                                    out_t.max(),
                                    i.get("relu") != 0,
                                )
                            })
                            .chain(std::iter::once(0))
                            .collect();
                        self.record(pc, Buffer::Output, out_row, &vals);
                        self.output[out_row] = vals;
                    }
                    return Ok(());
                }
                if let Some(mx) = mx_in {
                    for j in 0..n {
                        let acc_row = ((i.get("acc_addr") + j) & 0xffff) as usize % self.acc.len();
                        let out_row = ((out_base + j) & 0xffff) as usize % self.output.len();
                        let bits: Vec<u32> = self.acc[acc_row].iter().map(|v| *v as u32).collect();
                        let vals = mx_vector_row(&bits, i.get("relu") != 0, mx);
                        self.record(pc, Buffer::Output, out_row, &vals);
                        self.output[out_row] = vals;
                    }
                    return Ok(());
                }
                for j in 0..n {
                    let acc_row = ((i.get("acc_addr") + j) & 0xffff) as usize % self.acc.len();
                    let out_row = ((out_base + j) & 0xffff) as usize % self.output.len();
                    let opnd_row = ((opnd_base + j) & 0xffff) as usize % self.output.len();
                    let opnd = self.output[opnd_row].clone();
                    // Multi-precision: the row's scale slot is fixed_scale when the next layer
                    // reads it as MX, else zero.
                    let scale =
                        (multi && i.get("mx_out") != 0).then(|| i.get("fixed_scale") as i64);
                    let tail = if multi {
                        Some(scale.unwrap_or(0))
                    } else {
                        None
                    };
                    let vals: Vec<i64> = (0..self.unit.kpf as usize)
                        .map(|c| {
                            vector_lane(
                                self.acc[acc_row][c],
                                (i.get("bias") != 0).then_some(self.bias[c]),
                                i.get("multiplier"),
                                i.get("shift") as u32,
                                zp,
                                out_t,
                                add.then_some(opnd[c]),
                                i.get("relu") != 0,
                                (i.get("clamp") != 0)
                                    .then_some((i.get("clamp_max") as u16) as i16 as i64),
                                pool.then_some(opnd[c]),
                            )
                        })
                        .chain(tail)
                        .collect();
                    self.record(pc, Buffer::Output, out_row, &vals);
                    self.output[out_row] = vals;
                }
            }
            Opcode::End => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const I8: IntType = IntType::new(true, 8);
    const U8: IntType = IntType::new(false, 8);

    #[test]
    fn requantization_rounds_half_up_and_saturates() {
        // 5 * 1 >> 1 = 2.5 -> 3 ; -5 >> 1 = -2.5 -> -2 (half up, toward +infinity).
        assert_eq!(
            vector_lane(5, None, 1, 1, 0, I8, None, false, None, None),
            3
        );
        assert_eq!(
            vector_lane(-5, None, 1, 1, 0, I8, None, false, None, None),
            -2
        );
        // 7/4 = 1.75 -> 2 ; -7/4 = -1.75 -> -2.
        assert_eq!(
            vector_lane(7, None, 1, 2, 0, I8, None, false, None, None),
            2
        );
        assert_eq!(
            vector_lane(-7, None, 1, 2, 0, I8, None, false, None, None),
            -2
        );
        // (1000 + 24) * 3 = 3072, >> 4 = 192, + zp -70 = 122.
        assert_eq!(
            vector_lane(1000, Some(24), 3, 4, -70, I8, None, false, None, None),
            122
        );
        // Saturation to int8 and to uint8.
        assert_eq!(
            vector_lane(1 << 20, None, 1, 0, 0, I8, None, false, None, None),
            127
        );
        assert_eq!(
            vector_lane(-(1 << 20), None, 1, 0, 0, I8, None, false, None, None),
            -128
        );
        assert_eq!(
            vector_lane(-3, None, 1, 0, 0, U8, None, false, None, None),
            0
        );
        assert_eq!(
            vector_lane(300, None, 1, 0, 0, U8, None, false, None, None),
            255
        );
    }

    #[test]
    fn add_relu_pool() {
        // q = 100; add 50 saturates at 127.
        assert_eq!(
            vector_lane(100, None, 1, 0, 0, I8, Some(50), false, None, None),
            127
        );
        // q = -10 with zero point 5 -> -5; ReLU clamps to the zero point 5.
        assert_eq!(
            vector_lane(-10, None, 1, 0, 5, I8, None, true, None, None),
            5
        );
        // Pool keeps the larger of q = 7 and the operand 9.
        assert_eq!(
            vector_lane(7, None, 1, 0, 0, I8, None, false, None, Some(9)),
            9
        );
        assert_eq!(
            vector_lane(7, None, 1, 0, 0, I8, None, false, None, Some(-9)),
            7
        );
    }

    #[test]
    fn a_wait_nobody_signals_is_a_deadlock() {
        let d = crate::config::parse_str(
            "[array]\nrows = 4\ncols = 4\n[memory]\ndata_width_bits = 32\n",
            "t",
            "t",
        )
        .unwrap();
        let mut e = Engine::new(&d, &d.branches[0].units[0]);
        let c2v = 1 << isa::semaphore_index(Queue::Compute, Queue::Vector).unwrap();
        let program = vec![
            Instr::new(Opcode::Vector).set("wait", c2v).unwrap(),
            Instr::new(Opcode::End),
        ];
        let mut mem = Memory::new(32, 16);
        assert!(matches!(
            e.run(&program, &mut mem),
            Err(InterpError::Deadlock { .. })
        ));
        assert!(matches!(e.run(&[], &mut mem), Err(InterpError::NoEnd)));
    }

    #[test]
    fn wrap_is_twos_complement() {
        assert_eq!(wrap(0x8000_0000, IntType::new(true, 32)), -0x8000_0000);
        assert_eq!(wrap(-1, IntType::new(false, 4)), 15);
        assert_eq!(wrap(8, IntType::new(true, 4)), -8);
    }

    #[test]
    fn memory_rows_pack_little_endian_across_beats() {
        let mut m = Memory::new(16, 4);
        let t = IntType::new(true, 4);
        m.write_row(1, 2, &[1, -1, 2, -8, 7, 0, 3, -2], t);
        // Elements 0..3 in beat 1 (element 0 in the low nibble), 4..7 in beat 2.
        assert_eq!(m.beat_hex(1), "82f1");
        assert_eq!(m.beat_hex(2), "e307");
        assert_eq!(m.read_row(1, 2, 8, t), vec![1, -1, 2, -8, 7, 0, 3, -2]);
    }
}
