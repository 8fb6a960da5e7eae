//! ISA-level interpreter: runs programs on a functional model of one engine (its
//! scratchpads, weight banks, bias register and semaphores) and of external memory. The
//! four queues are modelled with their semaphores and bounded depths, so a program that
//! would deadlock in hardware deadlocks here too; each instruction executes atomically when
//! it starts. For race-free programs this computes exactly what the RTL computes.
//!
//! Every instruction runs one path over the precision it names (`numeric::Datapath`): a
//! scratchpad row holds its element codes and, when the design's input and output rows
//! have a block-scale slot, the scale as one more value (0 for rows of a precision without
//! scales); accumulator rows hold what `Datapath::acc_type` says (FP32 as int32 bit
//! patterns); a weight tile is `cpf` element rows followed by its precision's scale rows.

mod exec;
mod memory;

pub use memory::Memory;

use crate::design::{Design, Unit};
use crate::isa::{self, Buffer, Instr, Opcode, Queue};
use crate::numeric::IntType;
use std::collections::VecDeque;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterpError {
    Deadlock { pending: Vec<String> },
    Illegal { pc: usize, reason: String },
    NoEnd,
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterpError::Deadlock { pending } => {
                write!(f, "deadlock: no queue can start; {}", pending.join("; "))
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
    /// Scratchpads: rows of element values (sign- or zero-extended), then (input and
    /// output rows of a design with block scales) the scale slot.
    pub input: Vec<Vec<i64>>,
    pub weight: Vec<Vec<i64>>,
    pub acc: Vec<Vec<i64>>,
    pub output: Vec<Vec<i64>>,
    /// Weight banks of the array, column by column: [bank][col][row].
    pub banks: [Vec<Vec<i64>>; 2],
    pub cur_bank: usize,
    pub bias: Vec<i64>,
    /// Column scales (E8M0 codes) of the two weight banks (0 without block scales).
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

impl Engine {
    pub fn new(design: &Design, unit: &Unit) -> Engine {
        let b = unit.buffers;
        let (cpf, kpf) = (unit.cpf as usize, unit.kpf as usize);
        let slot = usize::from(unit.scale_bits() > 0);
        Engine {
            unit: unit.clone(),
            mem_w: design.memory.data_width_bits,
            queue_depth: design.control.queue_depth as usize,
            sem_max: isa::mask(isa::SEM_COUNT_BITS) as u32,
            input: vec![vec![0; cpf + slot]; b.input_depth as usize],
            weight: vec![vec![0; kpf]; b.weight_depth as usize],
            acc: vec![vec![0; kpf]; (b.accumulator_depth * unit.acc_banks()) as usize],
            output: vec![vec![0; kpf + slot]; b.output_depth as usize],
            banks: [vec![vec![0; cpf]; kpf], vec![vec![0; cpf]; kpf]],
            cur_bank: 0,
            bias: vec![0; kpf],
            bank_scales: [vec![0; kpf], vec![0; kpf]],
            sems: vec![0; isa::NUM_SEMAPHORES as usize],
            trace: Vec::new(),
            writes: None,
        }
    }

    /// True when input and output rows have a block-scale slot.
    pub fn has_slot(&self, buf: Buffer) -> bool {
        self.unit.scale_bits() > 0 && matches!(buf, Buffer::Input | Buffer::Output)
    }

    /// Element count and type of a row of `buf` (without the scale slot).
    pub fn row_type(&self, buf: Buffer) -> (usize, IntType) {
        let d = &self.unit.datatype;
        match buf {
            Buffer::Input => (self.unit.cpf as usize, d.input_type()),
            Buffer::Weight => (self.unit.kpf as usize, d.weight_type()),
            Buffer::Accumulator => (self.unit.kpf as usize, d.acc_type()),
            Buffer::Output => (self.unit.kpf as usize, d.output_type()),
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

    /// Run `program` to its `end` with `mem` as external memory.
    pub fn run(&mut self, program: &[Instr], mem: &mut Memory) -> Result<(), InterpError> {
        let mut sems = Semaphores {
            counts: std::mem::take(&mut self.sems),
            max: self.sem_max,
        };
        let depth = self.queue_depth;
        let r = schedule(program, depth, &mut sems, |pc| {
            self.execute(pc, &program[pc], mem)
        });
        self.sems = sems.counts;
        r
    }
}

/// The semaphore counts of one engine.
struct Semaphores {
    counts: Vec<u32>,
    max: u32,
}

impl Semaphores {
    /// Take every semaphore in `wait` if all are available.
    fn acquire(&mut self, wait: u32) -> bool {
        let held = |s: usize| wait & (1 << s) != 0;
        if (0..self.counts.len()).any(|s| held(s) && self.counts[s] == 0) {
            return false;
        }
        for s in (0..self.counts.len()).filter(|&s| held(s)) {
            self.counts[s] -= 1;
        }
        true
    }

    fn release(&mut self, pc: usize, signal: u32) -> Result<(), InterpError> {
        for s in (0..self.counts.len()).filter(|s| signal & (1 << s) != 0) {
            if self.counts[s] == self.max {
                return Err(InterpError::Illegal {
                    pc,
                    reason: format!(
                        "semaphore {} overflows (more than {} releases outstanding)",
                        isa::SEMAPHORES[s].name(),
                        self.max
                    ),
                });
            }
            self.counts[s] += 1;
        }
        Ok(())
    }
}

/// The queues of one engine: fetch in order into four bounded queues; an instruction
/// starts (and `exec` runs it, atomically) when every semaphore it waits on is available,
/// and then releases the ones it signals. A state in which no queue can start is a
/// deadlock, reported with each queue's head, the semaphores it waits on and their counts.
fn schedule(
    program: &[Instr],
    queue_depth: usize,
    sems: &mut Semaphores,
    mut exec: impl FnMut(usize) -> Result<(), InterpError>,
) -> Result<(), InterpError> {
    let end = program
        .iter()
        .position(|i| i.opcode() == Opcode::End)
        .ok_or(InterpError::NoEnd)?;
    let mut queues: [VecDeque<usize>; 4] = Default::default();
    let qi = |q: Queue| Queue::ALL.iter().position(|x| *x == q).expect("a queue");
    let mut pc = 0;
    loop {
        // Fetch in order until the next instruction's queue is full.
        while pc < end {
            let q = qi(program[pc].queue().expect("not end"));
            if queues[q].len() >= queue_depth {
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
            if !sems.acquire(program[head].wait) {
                continue;
            }
            queue.pop_front();
            exec(head)?;
            sems.release(head, program[head].signal)?;
            progressed = true;
        }
        // Fetch already pushed all it could; with no queue able to start, nothing changes.
        if !progressed {
            let counts: Vec<u64> = sems.counts.iter().map(|c| u64::from(*c)).collect();
            let pending = Queue::ALL
                .iter()
                .zip(&queues)
                .filter_map(|(q, queue)| queue.front().map(|&h| (q, h)))
                .map(|(q, h)| {
                    format!(
                        "{} queue: instruction {h}: {} {}",
                        q.name(),
                        program[h].to_asm(),
                        isa::wait_text(program[h].wait, &counts)
                    )
                })
                .collect();
            return Err(InterpError::Deadlock { pending });
        }
    }
}

/// Check `program`'s synchronisation without computing anything: every instruction can
/// start in the queues' schedule and `end` is reached (no deadlock, no semaphore overflow).
pub fn check_sync(design: &Design, program: &[Instr]) -> Result<(), InterpError> {
    let mut sems = Semaphores {
        counts: vec![0; isa::NUM_SEMAPHORES as usize],
        max: isa::mask(isa::SEM_COUNT_BITS) as u32,
    };
    schedule(
        program,
        design.control.queue_depth as usize,
        &mut sems,
        |_| Ok(()),
    )
}

#[cfg(test)]
mod tests;
