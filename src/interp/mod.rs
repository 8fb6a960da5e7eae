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
mod rows;

pub use rows::{const_rows, param_rows, param_words, table_rows, with_stages};
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
    /// The per-lane (multiplier, shift) a `per_channel` vector instruction read.
    pub scales: Vec<(u64, u32)>,
    /// Column scales (E8M0 codes) of the two weight banks (0 without block scales).
    pub bank_scales: [Vec<u8>; 2],
    /// The row unit's statistics register file (empty without a row unit).
    pub stats: Vec<crate::numeric::rows::Stat>,
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
            scales: vec![(0, 0); kpf],
            bank_scales: [vec![0; kpf], vec![0; kpf]],
            stats: vec![(0, 0); unit.rows.map_or(0, |r| r.stats as usize)],
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
        row_type(&self.unit, buf)
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
        let r = (|| {
            let mut q = Queues::new(program, self.queue_depth)?;
            loop {
                q.fetch()?;
                if q.done() {
                    return Ok(());
                }
                let started = q.advance(
                    &mut sems,
                    |_| true,
                    |pc| self.execute(pc, &program[pc], mem, &mut Streams::default()),
                )?;
                if !started {
                    return Err(InterpError::Deadlock {
                        pending: q.pending(&sems),
                    });
                }
            }
        })();
        self.sems = sems.counts;
        r
    }
}

/// Element count and type of a row of `buf` on an engine of unit `u` (without the scale
/// slot).
pub fn row_type(u: &Unit, buf: Buffer) -> (usize, IntType) {
    let d = &u.datatype;
    match buf {
        Buffer::Input => (u.cpf as usize, d.input_type()),
        Buffer::Weight => (u.kpf as usize, d.weight_type()),
        Buffer::Accumulator => (u.kpf as usize, d.acc_type()),
        Buffer::Output => (u.kpf as usize, d.output_type()),
    }
}

/// The stream links of one engine while it executes an instruction: the FIFOs from its
/// upstream unit (one, or one per replica of an upstream unit of another `h`: a stream load
/// takes a beat from each, and the beat it sees is their OR, as the RTL's join does) and
/// those it feeds (its next unit, and the first units of branches that fork from it; a
/// stream store goes to all), as MEM_W-bit beats (hex).
#[derive(Debug, Default)]
pub struct Streams {
    pub inputs: Vec<VecDeque<String>>,
    pub outputs: Vec<VecDeque<String>>,
    /// The engine's hand-off buffer (`Design::handoff_feeder`), while it executes an
    /// instruction.
    pub handoff_in: Option<Ring>,
    /// The hand-off buffers its stores reach, and the beats (address, hex) an instruction
    /// wrote into them, which `run_system` then writes into each.
    pub handoff_targets: usize,
    pub handoff_out: Vec<(u64, String)>,
}

/// A hand-off buffer: `depth` beats, beat address a held in slot a mod depth, with the
/// address it holds.
#[derive(Debug, Clone)]
pub struct Ring {
    slots: Vec<Option<(u64, String)>>,
}

impl Ring {
    pub fn new(depth: usize) -> Ring {
        Ring {
            slots: vec![None; depth],
        }
    }
    fn slot(&self, addr: u64) -> usize {
        (addr % self.slots.len() as u64) as usize
    }
    pub fn write(&mut self, addr: u64, beat: String) {
        let s = self.slot(addr);
        self.slots[s] = Some((addr, beat));
    }
    /// The beat at `addr`, or why it is not there.
    pub fn read(&self, addr: u64) -> Result<&str, String> {
        match &self.slots[self.slot(addr)] {
            Some((a, beat)) if *a == addr => Ok(beat),
            Some((a, _)) if *a > addr => Err(format!(
                "hand-off beat {addr} was overwritten by beat {a} before it was read (the buffer holds {} beats)",
                self.slots.len()
            )),
            _ => Err(format!("hand-off beat {addr} read before it was written")),
        }
    }
}

/// The semaphore counts of one engine.
struct Semaphores {
    counts: Vec<u32>,
    max: u32,
}

impl Semaphores {
    fn new() -> Semaphores {
        Semaphores {
            counts: vec![0; isa::NUM_SEMAPHORES as usize],
            max: isa::mask(isa::SEM_COUNT_BITS) as u32,
        }
    }

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

/// The queues of one engine running a program: fetch in order into four bounded queues;
/// an instruction starts (and runs, atomically) when it is ready (its stream beats are
/// there) and every semaphore it waits on is available, and then releases the ones it
/// signals.
struct Queues<'p> {
    program: &'p [Instr],
    end: usize,
    pc: usize,
    depth: usize,
    queues: [VecDeque<usize>; 4],
}

impl<'p> Queues<'p> {
    fn new(program: &'p [Instr], depth: usize) -> Result<Self, InterpError> {
        let end = program
            .iter()
            .position(|i| i.opcode() == Opcode::End)
            .ok_or(InterpError::NoEnd)?;
        Ok(Queues {
            program,
            end,
            pc: 0,
            depth,
            queues: Default::default(),
        })
    }

    /// Fetch in order until the next instruction's queue is full.
    fn fetch(&mut self) -> Result<(), InterpError> {
        while self.pc < self.end {
            let i = &self.program[self.pc];
            let q = i.queue().expect("not end").index();
            if self.queues[q].len() >= self.depth {
                break;
            }
            i.check_masks().map_err(|e| InterpError::Illegal {
                pc: self.pc,
                reason: e.to_string(),
            })?;
            self.queues[q].push_back(self.pc);
            self.pc += 1;
        }
        Ok(())
    }

    fn done(&self) -> bool {
        self.pc == self.end && self.queues.iter().all(VecDeque::is_empty)
    }

    /// Start the head of every queue that can start; whether any did.
    fn advance(
        &mut self,
        sems: &mut Semaphores,
        ready: impl Fn(usize) -> bool,
        mut exec: impl FnMut(usize) -> Result<(), InterpError>,
    ) -> Result<bool, InterpError> {
        let mut progressed = false;
        for queue in self.queues.iter_mut() {
            let Some(&head) = queue.front() else {
                continue;
            };
            if !ready(head) || !sems.acquire(self.program[head].wait) {
                continue;
            }
            queue.pop_front();
            exec(head)?;
            sems.release(head, self.program[head].signal)?;
            progressed = true;
        }
        Ok(progressed)
    }

    /// Each queue's head, what it waits on and the semaphores' counts.
    fn pending(&self, sems: &Semaphores) -> Vec<String> {
        let counts: Vec<u64> = sems.counts.iter().map(|c| u64::from(*c)).collect();
        Queue::ALL
            .iter()
            .zip(&self.queues)
            .filter_map(|(q, queue)| queue.front().map(|&h| (q, h)))
            .map(|(q, h)| {
                format!(
                    "{} queue: instruction {h}: {} {}",
                    q.name(),
                    self.program[h].to_asm(),
                    isa::wait_text(self.program[h].wait, &counts)
                )
            })
            .collect()
    }
}

/// Run every engine of a Design on its own program (`programs[i]` for engine i, as
/// `Design::cores` orders them), all sharing `mem`, with the stream links between them
/// (`Design::links`). With `record = Some(e)`, engine e logs every scratchpad row it writes
/// (`Engine::writes`, for lock-step comparison with the RTL).
/// Engines advance in turn, each starting what it can; a stream load starts when its beats
/// are in the FIFO and a stream store when they fit. A state in which no engine can start
/// anything is a deadlock, reported per engine.
pub fn run_system(
    design: &Design,
    programs: &[Vec<Instr>],
    mem: &mut Memory,
    record: Option<usize>,
) -> Result<Vec<Engine>, InterpError> {
    let cores = design.cores();
    let links = design.links();
    let mut engines: Vec<Engine> = cores
        .iter()
        .map(|(_, u, _)| Engine::new(design, u))
        .collect();
    if let Some(e) = record {
        engines[e].writes = Some(Vec::new());
    }
    let mut sems: Vec<Semaphores> = cores.iter().map(|_| Semaphores::new()).collect();
    let mut queues = programs
        .iter()
        .map(|p| Queues::new(p, design.control.queue_depth as usize))
        .collect::<Result<Vec<_>, _>>()?;
    let mut fifos: Vec<VecDeque<String>> = links.iter().map(|_| VecDeque::new()).collect();
    // Each engine's hand-off buffer, and the engines whose buffers its stores reach.
    let mut rings: Vec<Option<Ring>> = (0..cores.len())
        .map(|e| {
            design
                .handoff_feeder(e)
                .map(|_| Ring::new(cores[e].1.handoff_depth as usize))
        })
        .collect();
    let fed: Vec<Vec<usize>> = (0..cores.len())
        .map(|e| {
            (0..cores.len())
                .filter(|&t| design.handoff_feeder(t) == Some(e))
                .collect()
        })
        .collect();
    let links_in = |e: usize| links_of(&links, e, |l| l.to);
    let links_out = |e: usize| links_of(&links, e, |l| l.from);
    check_streams(design, programs)?;
    loop {
        let mut progressed = false;
        for e in 0..queues.len() {
            queues[e].fetch()?;
            let program = &programs[e];
            let (li, lo) = (links_in(e), links_out(e));
            let mut streams = Streams {
                inputs: li.iter().map(|&l| std::mem::take(&mut fifos[l])).collect(),
                outputs: lo.iter().map(|&l| std::mem::take(&mut fifos[l])).collect(),
                handoff_in: rings[e].take(),
                handoff_targets: fed[e].len(),
                handoff_out: Vec::new(),
            };
            // Readiness reads the FIFO levels as they stand before this engine's turn; a
            // load takes from every FIFO that feeds the engine and a store goes to every
            // FIFO it feeds, so they need beats in all and room in all.
            let have = streams.inputs.iter().map(VecDeque::len).min().unwrap_or(0) as u64;
            let room = lo
                .iter()
                .zip(&streams.outputs)
                .map(|(&l, f)| u64::from(links[l].depth) - f.len() as u64)
                .min()
                .unwrap_or(0);
            let unit = cores[e].1;
            let mem_w = design.memory.data_width_bits;
            let ready = |pc: usize| match &program[pc].op {
                isa::Op::Load(t) if t.stream => {
                    exec::transfer_beats(unit, mem_w, pc, t).is_ok_and(|b| b <= have)
                }
                isa::Op::Store(t) if t.stream => {
                    exec::transfer_beats(unit, mem_w, pc, t).is_ok_and(|b| b <= room)
                }
                _ => true,
            };
            let engine = &mut engines[e];
            let r = queues[e].advance(&mut sems[e], ready, |pc| {
                engine.execute(pc, &program[pc], mem, &mut streams)
            });
            for (&l, f) in li.iter().zip(streams.inputs) {
                fifos[l] = f;
            }
            for (&l, f) in lo.iter().zip(streams.outputs) {
                fifos[l] = f;
            }
            rings[e] = streams.handoff_in;
            for (addr, beat) in streams.handoff_out {
                for &t in &fed[e] {
                    if let Some(r) = rings[t].as_mut() {
                        r.write(addr, beat.clone());
                    }
                }
            }
            progressed |= r?;
        }
        if queues.iter().all(Queues::done) {
            return Ok(engines);
        }
        if !progressed {
            return Err(deadlock(design, &queues, &sems, &fifos));
        }
    }
}

/// The links (indices) whose end `end` is engine e.
fn links_of(
    links: &[crate::design::Link],
    e: usize,
    end: fn(&crate::design::Link) -> usize,
) -> Vec<usize> {
    (0..links.len()).filter(|&l| end(&links[l]) == e).collect()
}

/// Every stream transfer starts whole, so it must fit its FIFO, and needs a link.
fn check_streams(design: &Design, programs: &[Vec<Instr>]) -> Result<(), InterpError> {
    let cores = design.cores();
    let links = design.links();
    let links_in = |e: usize| links_of(&links, e, |l| l.to);
    let links_out = |e: usize| links_of(&links, e, |l| l.from);
    for (e, program) in programs.iter().enumerate() {
        for (pc, i) in program.iter().enumerate() {
            let (isa::Op::Load(t) | isa::Op::Store(t)) = &i.op else {
                continue;
            };
            if !t.stream {
                continue;
            }
            let store = matches!(i.op, isa::Op::Store(_));
            let link = if store { links_out(e) } else { links_in(e) }
                .into_iter()
                .min_by_key(|&l| links[l].depth);
            let beats = exec::transfer_beats(cores[e].1, design.memory.data_width_bits, pc, t)?;
            let reason = match link {
                None => format!(
                    "engine {e}: a stream {} without a {} link",
                    if store { "store" } else { "load" },
                    if store { "downstream" } else { "upstream" }
                ),
                Some(l) if beats > u64::from(links[l].depth) => format!(
                    "engine {e}: a stream transfer of {beats} beats is larger than its FIFO ({} beats)",
                    links[l].depth
                ),
                Some(_) => continue,
            };
            return Err(InterpError::Illegal { pc, reason });
        }
    }
    Ok(())
}

/// The deadlock of a system in which no engine can start anything: per engine, what it
/// waits for, and the levels of its links.
fn deadlock(
    design: &Design,
    queues: &[Queues],
    sems: &[Semaphores],
    fifos: &[VecDeque<String>],
) -> InterpError {
    let cores = design.cores();
    let links = design.links();
    let mut pending = Vec::new();
    for (e, q) in queues.iter().enumerate() {
        if q.done() {
            continue;
        }
        let (b, u, r) = cores[e];
        for p in q.pending(&sems[e]) {
            pending.push(format!("engine {e} ({}.{}[{r}]): {p}", b.name, u.name));
        }
        for (l, link) in links.iter().enumerate() {
            if link.to == e || link.from == e {
                pending.push(format!(
                    "{}: {} of {} beats",
                    link.doc,
                    fifos[l].len(),
                    link.depth
                ));
            }
        }
    }
    InterpError::Deadlock { pending }
}

/// Check `program`'s synchronisation without computing anything: every instruction can
/// start in the queues' schedule and `end` is reached (no deadlock, no semaphore overflow).
pub fn check_sync(design: &Design, program: &[Instr]) -> Result<(), InterpError> {
    let mut sems = Semaphores::new();
    let mut q = Queues::new(program, design.control.queue_depth as usize)?;
    loop {
        q.fetch()?;
        if q.done() {
            return Ok(());
        }
        if !q.advance(&mut sems, |_| true, |_| Ok(()))? {
            return Err(InterpError::Deadlock {
                pending: q.pending(&sems),
            });
        }
    }
}

#[cfg(test)]
mod tests;
