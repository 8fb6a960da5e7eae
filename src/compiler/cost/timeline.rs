//! The timeline of one engine's program (`cost::timeline`): its four queues event by
//! event, the memory port shared by loads and stores, and the accumulator banks shared by
//! the array and the vector unit.

use super::VECTOR_PIPE;

/// hwgen_prefetch's LOW.
const PREFETCH_LOW: usize = crate::rtl::PREFETCH_LOW as usize;
use crate::isa::{Op, Queue};

/// How an instruction reads the accumulator, whose banks serve the array first
/// (`hwgen_shared_buffer`): the vector unit's reads wait while the array reads the same bank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum AccUse {
    None,
    /// An accumulating matmul: the array reads each row's old sum as the row leaves it,
    /// `lag` cycles after the row's read from the input buffer.
    Array {
        bank: u64,
        rows: u64,
        lag: u64,
    },
    /// A vector instruction: its bias row, its scale row (per-channel) and its rows.
    Vector {
        bank: u64,
        reads: u64,
    },
}

impl AccUse {
    pub(super) fn of(u: &crate::design::Unit, i: &crate::isa::Instr) -> Self {
        // The bank is the address bit above the per-bank rows (depths are powers of two).
        let bank = |addr: u64| match u.acc_banks() {
            1 => 0,
            _ => addr / u64::from(u.buffers.accumulator_depth),
        };
        match &i.op {
            Op::Matmul(m) if m.accumulate => AccUse::Array {
                bank: bank(m.acc_addr),
                rows: m.count0 * m.count1,
                lag: u64::from(u.cpf + u.kpf),
            },
            Op::Vector(v) => AccUse::Vector {
                bank: bank(v.acc_addr),
                reads: v.count + u64::from(v.load_bias) + u64::from(v.per_channel),
            },
            _ => AccUse::None,
        }
    }
}

/// The cycles the array reads one accumulator bank: per accumulating matmul (in program
/// order), its index and the first and the last-plus-one cycle of its reads.
pub(super) type BankReads = Vec<(usize, u64, u64)>;

/// Cycles a reader that needs `reads` cycles of a bank from cycle `from` on loses to the
/// intervals in which the array reads that bank (in order of their starts).
fn acc_stall(busy: impl IntoIterator<Item = (u64, u64)>, from: u64, reads: u64) -> u64 {
    let (mut t, mut left, mut stall) = (from, reads, 0);
    for (s, e) in busy {
        if e <= t {
            continue;
        }
        if s >= t + left {
            break;
        }
        left -= s.saturating_sub(t);
        stall += e - s.max(t);
        t = e;
    }
    stall
}

/// What an instruction takes on the timeline.
#[derive(Clone, Copy)]
pub(super) enum Cost {
    /// Cycles its queue is busy, cycles from its start until its semaphores are released,
    /// the rows it writes into the input buffer (a vector instruction's `to_input`), and
    /// the cycles after the array's last busy cycle it may start (a window instruction).
    Fixed {
        busy: u64,
        done: u64,
        input_rows: u64,
        after_array: u64,
    },
    /// Cycles of the memory port for its beats, cycles it skips padding rows (a load's,
    /// without the port), and whether a load fills the input buffer; it releases its
    /// semaphores the memory latency after the last (a load's last row arrives then).
    Transfer {
        work: u64,
        pad: u64,
        into_input: bool,
    },
    /// A hand-off token of `beats` beats sent down the engine's stream links (`send`) or
    /// taken from the one into it: it waits for room in every link, or for the token.
    Stream { send: bool, beats: u64 },
    /// A transfer with the on-chip hand-off buffers: `cycles` of its unit (a beat or a
    /// padding row a cycle, and the buffer's read), without the memory port; it starts
    /// once the unit's earlier transfers have released (a load's reads of memory have
    /// returned).
    Local { cycles: u64 },
}

impl Cost {
    pub(super) fn fixed(busy: u64, done: u64) -> Self {
        Cost::Fixed {
            busy,
            done,
            input_rows: 0,
            after_array: 0,
        }
    }
}

/// The timeline of one engine's program, run event by event: the compute and vector queues
/// as far as their signals are known, then the memory port up to its next finished transfer.
pub(super) struct Timeline<'a> {
    instrs: &'a [crate::isa::Instr],
    pub(super) queue: Vec<usize>,
    pub(super) costs: Vec<Cost>,
    pub(super) latency: u64,
    /// Per queue, its instructions in program order, and the next to start.
    order: [Vec<usize>; 4],
    next: [usize; 4],
    pub(super) free: [u64; 4],
    /// Per semaphore, the cycles its signals are given, and the signals taken by waits.
    signals: Vec<Vec<u64>>,
    taken: Vec<usize>,
    /// Per instruction, the cycle it releases its semaphores (its end).
    done: Vec<u64>,
    /// The cycles vector instructions write rows into the input buffer, in order: its write
    /// port is theirs then, and a load into it waits (`hwgen_core`).
    pub(super) input_writes: Vec<(u64, u64)>,
    /// Rows of responses a load holds while it cannot write (`rtl::rsp_depth`).
    response_fifo: u64,
    /// The cycle after the array's last busy cycle.
    array_idle: u64,
    /// Per instruction, its position in its queue, the cycle it started (once it has), and
    /// the cycle it was issued (for the instructions issued so far).
    pos: Vec<usize>,
    started: Vec<Option<u64>>,
    issue: Vec<u64>,
    /// Instructions each queue holds.
    queue_depth: usize,
    /// Per instruction, how it reads the accumulator; per bank, the cycles the array reads
    /// it as this pass finds them, and as the pass before found them (a vector
    /// instruction's reads may meet matmuls that start after it on this pass: their
    /// cycles on the pass before stand in for them).
    acc: Vec<AccUse>,
    pub(super) array_reads: Vec<BankReads>,
    array_reads_now: Vec<BankReads>,
    /// The instruction prefetch, when the timeline counts it.
    pub(super) fetch: Option<Fetch>,
}

/// The instruction prefetch (`hwgen_prefetch`): each instruction takes `work` cycles of the
/// port and arrives the memory latency later; instruction k is requested once instruction
/// k - `ring` has been issued (its entry of the instruction memory is free), and issued
/// only once it has arrived.
#[derive(Clone)]
pub(super) struct Fetch {
    pub(super) work: u64,
    pub(super) ring: usize,
    pub(super) requested: usize,
    pub(super) arrived: Vec<u64>,
}

impl<'a> Timeline<'a> {
    pub(super) fn new(
        instrs: &'a [crate::isa::Instr],
        queue: Vec<usize>,
        costs: Vec<Cost>,
        latency: u64,
        response_fifo: u64,
        queue_depth: usize,
        acc: Vec<AccUse>,
    ) -> Self {
        let mut order: [Vec<usize>; 4] = Default::default();
        let mut pos = Vec::with_capacity(queue.len());
        for (pc, &q) in queue.iter().enumerate() {
            pos.push(order[q].len());
            order[q].push(pc);
        }
        let sems = crate::isa::SEMAPHORES.len();
        Timeline {
            instrs,
            done: vec![0; queue.len()],
            started: vec![None; queue.len()],
            issue: Vec::with_capacity(queue.len()),
            pos,
            queue_depth,
            queue,
            costs,
            latency,
            order,
            next: [0; 4],
            free: [0; 4],
            signals: vec![Vec::new(); sems],
            taken: vec![0; sems],
            input_writes: Vec::new(),
            response_fifo,
            array_idle: 0,
            acc,
            array_reads: Vec::new(),
            array_reads_now: Vec::new(),
            fetch: None,
        }
    }

    /// The timeline with its instructions fetched through the port, `work` cycles each, into
    /// a ring of `ring` instructions.
    pub(super) fn with_fetch(mut self, work: u64, ring: usize) -> Self {
        self.fetch = Some(Fetch {
            work,
            ring: ring.max(1),
            requested: 0,
            arrived: Vec::new(),
        });
        self
    }

    /// The next instruction to fetch, the cycle it may be requested from, if known, and the
    /// cycle from which it no longer yields to the load and store unit (fewer than
    /// `PREFETCH_LOW` instructions are then requested ahead of the issue; as far as known).
    pub(super) fn next_fetch(&mut self) -> Option<(usize, u64, u64)> {
        let f = self.fetch.as_ref()?;
        let (k, ring) = (f.requested, f.ring);
        if k >= self.queue.len() {
            return None;
        }
        let at = match k.checked_sub(ring) {
            Some(old) => self.issued(old)? + 1,
            None => 0,
        };
        let urgent = match k.checked_sub(PREFETCH_LOW) {
            Some(i) => self.issued(i).map_or(u64::MAX, |t| t + 1),
            None => 0,
        };
        Some((k, at, urgent))
    }

    /// Each instruction's end: the engine alone with its memory port, its timeline run again
    /// with the array's accumulator reads of the pass before until they no longer change
    /// (`System::run_to_fixpoint`).
    pub(super) fn run_to_fixpoint(self) -> Vec<u64> {
        super::system::System::alone(self)
            .run_to_fixpoint()
            .pop()
            .expect("one engine")
    }

    /// A fresh timeline of the same program, reading the array's accumulator reads this one
    /// read.
    pub(super) fn clone_empty(&self) -> Self {
        let mut t = Timeline::new(
            self.instrs,
            self.queue.clone(),
            self.costs.clone(),
            self.latency,
            self.response_fifo,
            self.queue_depth,
            self.acc.clone(),
        );
        t.array_reads = self.array_reads.clone();
        if let Some(f) = &self.fetch {
            t = t.with_fetch(f.work, f.ring);
        }
        t
    }

    /// Each instruction's end, on one pass, the engine alone with its memory port.
    #[cfg(test)]
    fn run(self) -> Vec<u64> {
        super::system::System::alone(self).pass().remove(0).0
    }

    /// Whether every queue ran all its instructions.
    pub(super) fn finished(&self) -> bool {
        (0..4).all(|q| self.next[q] == self.order[q].len())
    }

    /// The engine's results once it has run: each instruction's end, and per bank the
    /// cycles the array read it.
    pub(super) fn results(self) -> (Vec<u64>, Vec<BankReads>) {
        (self.done, self.array_reads_now)
    }

    /// Starts the compute and vector queues' instructions whose signals are known.
    pub(super) fn run_fixed(&mut self) {
        loop {
            let mut progressed = false;
            for q in [Queue::Compute, Queue::Vector].map(Queue::index) {
                while let Some((pc, at)) = self.ready(q) {
                    let Cost::Fixed {
                        busy,
                        done,
                        input_rows,
                        after_array,
                    } = self.costs[pc]
                    else {
                        unreachable!("compute and vector instructions take fixed cycles")
                    };
                    let at = if after_array > 0 {
                        at.max(self.array_idle + after_array)
                    } else {
                        at
                    };
                    let stall = self.accumulator(pc, at);
                    let (busy, done) = (busy + stall, done + stall);
                    if matches!(self.instrs[pc].op, Op::Matmul(_)) {
                        self.array_idle = at + busy;
                    }
                    // Rows leave the lanes' pipeline one per cycle from `rows_out` on; a
                    // load into the input buffer stops once its responses fill their FIFO.
                    let rows_out = at + VECTOR_PIPE - 1;
                    let (stop, end) = (rows_out + self.response_fifo, rows_out + input_rows);
                    if input_rows > 0 && stop < end {
                        self.input_writes.push((stop, end));
                    }
                    self.start(pc, at);
                    self.free[q] = at + busy;
                    self.finish(pc, at + done);
                    progressed = true;
                }
            }
            if !progressed {
                return;
            }
        }
    }

    /// Instruction pc starts at `at`: records the cycles the array reads an accumulator
    /// bank, or returns the cycles a vector instruction's reads wait for the array.
    fn accumulator(&mut self, pc: usize, at: u64) -> u64 {
        match self.acc[pc] {
            AccUse::Array { bank, rows, lag } if rows > 0 => {
                let b = bank as usize;
                if self.array_reads_now.len() <= b {
                    self.array_reads_now.resize(b + 1, Vec::new());
                }
                self.array_reads_now[b].push((pc, at + lag, at + lag + rows));
                0
            }
            AccUse::Vector { bank, reads } => {
                let b = bank as usize;
                // The compute queue's next instruction: it and those after it have not
                // started on this pass.
                let frontier = self.order[Queue::Compute.index()]
                    .get(self.next[Queue::Compute.index()])
                    .copied()
                    .unwrap_or(usize::MAX);
                let now = self.array_reads_now.get(b).map_or(&[][..], Vec::as_slice);
                let before = self.array_reads.get(b).map_or(&[][..], Vec::as_slice);
                let later = &before[before.partition_point(|r| r.0 < frontier)..];
                let from = at + 1;
                let busy = now[now.partition_point(|r| r.2 <= from)..]
                    .iter()
                    .chain(later)
                    .map(|&(_, s, e)| (s, e));
                acc_stall(busy, from, reads)
            }
            _ => 0,
        }
    }

    /// The cycle instruction pc enters its queue, if known: instructions are issued in
    /// program order, one per cycle, each once its queue has room (the instruction
    /// `queue_depth` before it in its queue has started).
    fn issued(&mut self, pc: usize) -> Option<u64> {
        while self.issue.len() <= pc {
            let i = self.issue.len();
            let (q, p) = (self.queue[i], self.pos[i]);
            let room = match p.checked_sub(self.queue_depth) {
                Some(before) => self.started[self.order[q][before]]? + 1,
                None => 0,
            };
            let prev = self.issue.last().map_or(0, |&t| t + 1);
            let arrived = match &self.fetch {
                Some(f) => *f.arrived.get(i)?,
                None => 0,
            };
            self.issue.push(prev.max(room).max(arrived));
        }
        Some(self.issue[pc])
    }

    /// Queue q's next instruction and the cycle it can start, if its issue and its signals
    /// are known.
    pub(super) fn ready(&mut self, q: usize) -> Option<(usize, u64)> {
        let &pc = self.order[q].get(self.next[q])?;
        let mut at = self.free[q].max(self.issued(pc)? + 1);
        for (k, list) in self.signals.iter().enumerate() {
            if self.instrs[pc].wait & (1 << k) != 0 {
                at = at.max(*list.get(self.taken[k])?);
            }
        }
        Some((pc, at))
    }

    /// Instruction pc (the next of its queue) starts at cycle `at`: takes the signals it
    /// waits for.
    pub(super) fn start(&mut self, pc: usize, at: u64) {
        self.started[pc] = Some(at);
        for (k, taken) in self.taken.iter_mut().enumerate() {
            if self.instrs[pc].wait & (1 << k) != 0 {
                *taken += 1;
            }
        }
        self.next[self.queue[pc]] += 1;
    }

    /// The cycle queue q's instruction before pc released its semaphores (0 for its first).
    pub(super) fn before_done(&self, q: usize, pc: usize) -> u64 {
        match self.pos[pc].checked_sub(1) {
            Some(p) => self.done[self.order[q][p]],
            None => 0,
        }
    }

    /// Instruction pc releases its semaphores at cycle `end`.
    pub(super) fn finish(&mut self, pc: usize, end: u64) {
        for (k, list) in self.signals.iter_mut().enumerate() {
            if self.instrs[pc].signal & (1 << k) != 0 {
                list.push(end);
            }
        }
        self.done[pc] = end;
    }
}

#[cfg(test)]
mod tests {
    use super::{acc_stall, AccUse, Cost, Timeline};
    use crate::isa::{Instr, Matmul, Op, Transfer};

    /// By hand, with queues of one instruction: two matmuls of 100 cycles, then a load of
    /// 10. The first matmul is issued at 0 and starts at 1; the second waits for room until
    /// the first starts (issued at 2, runs 101..201); the load is issued only after it, at
    /// 3, and runs 4..14. With queues of two the second matmul is issued at 1 and the load
    /// at 2, running 3..13. (Without the in-order issue the load would run 0..10.)
    #[test]
    fn instructions_enter_their_queues_in_program_order() {
        let mm = Instr::new(Op::Matmul(Matmul {
            count0: 100,
            count1: 1,
            ..Matmul::default()
        }));
        let load = Instr::new(Op::Load(Transfer::default()));
        let instrs = [mm, mm, load];
        let costs = vec![
            Cost::fixed(100, 100),
            Cost::fixed(100, 100),
            Cost::Transfer {
                work: 10,
                pad: 0,
                into_input: false,
            },
        ];
        let run = |depth: usize| {
            let acc = vec![AccUse::None; 3];
            Timeline::new(&instrs, vec![1, 1, 0], costs.clone(), 0, 32, depth, acc).run()
        };
        assert_eq!(run(1), vec![101, 201, 14]);
        assert_eq!(run(2), vec![101, 201, 13]);
    }

    /// By hand: two matmuls of one cycle, fetched through the port (4 cycles each, latency
    /// 10). The first is fetched over 0..4, arrives at 14, is issued then and runs 15..16.
    /// With a ring of two the second is fetched over 4..8 and runs 19..20; with a ring of
    /// one it is requested only once the first was issued: fetched over 15..19, run 30..31.
    #[test]
    fn instructions_are_issued_once_fetched() {
        let mm = Instr::new(Op::Matmul(Matmul {
            count0: 1,
            count1: 1,
            ..Matmul::default()
        }));
        let instrs = [mm, mm];
        let run = |ring: usize| {
            let acc = vec![AccUse::None; 2];
            let costs = vec![Cost::fixed(1, 1); 2];
            Timeline::new(&instrs, vec![1, 1], costs, 10, 32, 2, acc)
                .with_fetch(4, ring)
                .run()
        };
        assert_eq!(run(2), vec![16, 20]);
        assert_eq!(run(1), vec![16, 31]);
    }

    /// By hand: the array reads the bank over 10..20 and 25..30. A reader of 10 cycles
    /// from 5 reads over 5..10 and 20..25 (10 lost); one of 11 also over 30..31 (15 lost);
    /// one of 3 from 12 waits until 20 (8 lost); one of 5 from 31 loses nothing.
    #[test]
    fn vector_reads_wait_while_the_array_reads_the_bank() {
        let busy = [(10, 20), (25, 30)];
        assert_eq!(acc_stall(busy, 5, 10), 10);
        assert_eq!(acc_stall(busy, 5, 11), 15);
        assert_eq!(acc_stall(busy, 12, 3), 8);
        assert_eq!(acc_stall(busy, 31, 5), 0);
    }

    /// By hand: a load of 10 cycles (issued at 0, on the port over 1..11) signals a matmul
    /// of 100 accumulating rows, which starts at 11; with a lag of 16 the array reads its
    /// bank over 27..127. A vector instruction of 30 reads (busy 31, done 37), issued at 2,
    /// starts at 3 and reads from 4: on the other bank it ends at 40; on the same bank it
    /// reads over 4..27, waits the array's 100 cycles and ends at 140. The vector
    /// instruction starts before the matmul does, so only the second pass sees it.
    #[test]
    fn the_timeline_stalls_vector_reads_on_the_arrays_bank() {
        let mut load = Instr::new(Op::Load(Transfer::default()));
        load.signal = 1; // load_to_compute
        let mut mm = Instr::new(Op::Matmul(Matmul {
            count0: 100,
            count1: 1,
            accumulate: true,
            ..Matmul::default()
        }));
        mm.wait = 1;
        let vector = Instr::new(Op::Vector(crate::isa::Vector::default()));
        let instrs = [load, mm, vector];
        let costs = vec![
            Cost::Transfer {
                work: 10,
                pad: 0,
                into_input: false,
            },
            Cost::fixed(100, 133),
            Cost::Fixed {
                busy: 31,
                done: 37,
                input_rows: 0,
                after_array: 0,
            },
        ];
        let ends = |bank: u64, fixpoint: bool| {
            let acc = vec![
                AccUse::None,
                AccUse::Array {
                    bank: 0,
                    rows: 100,
                    lag: 16,
                },
                AccUse::Vector { bank, reads: 30 },
            ];
            let t = Timeline::new(&instrs, vec![0, 1, 2], costs.clone(), 0, 32, 2, acc);
            match fixpoint {
                true => t.run_to_fixpoint(),
                false => t.run(),
            }
        };
        assert_eq!(ends(1, true), vec![11, 144, 40]);
        assert_eq!(ends(0, false)[2], 40);
        assert_eq!(ends(0, true)[2], 140);
    }
}
