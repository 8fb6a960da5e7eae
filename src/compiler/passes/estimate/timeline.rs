//! The timeline of one engine's program (`estimate::timeline`): its four queues event by
//! event, the memory port shared by loads and stores, and the accumulator banks shared by
//! the array and the vector unit.

use super::VECTOR_PIPE;
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
type BankReads = Vec<(usize, u64, u64)>;

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
    /// Cycles of the memory port, and whether a load fills the input buffer; it releases
    /// its semaphores the memory latency after the last (a load's last row arrives then).
    Transfer { work: u64, into_input: bool },
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
    queue: Vec<usize>,
    costs: Vec<Cost>,
    latency: u64,
    /// Per queue, its instructions in program order, and the next to start.
    order: [Vec<usize>; 4],
    next: [usize; 4],
    free: [u64; 4],
    /// Per semaphore, the cycles its signals are given, and the signals taken by waits.
    signals: Vec<Vec<u64>>,
    taken: Vec<usize>,
    port: Port,
    /// Per instruction, the cycle it releases its semaphores (its end).
    done: Vec<u64>,
    /// The cycles vector instructions write rows into the input buffer, in order: its write
    /// port is theirs then, and a load into it waits (`hwgen_core`).
    input_writes: Vec<(u64, u64)>,
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
    array_reads: Vec<BankReads>,
    array_reads_now: Vec<BankReads>,
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
            port: Port::default(),
            input_writes: Vec::new(),
            response_fifo,
            array_idle: 0,
            acc,
            array_reads: Vec::new(),
            array_reads_now: Vec::new(),
        }
    }

    /// Each instruction's end: the timeline run again with the array's accumulator reads
    /// of the pass before, until they no longer change (at most four passes).
    pub(super) fn run_to_fixpoint(self) -> Vec<u64> {
        let mut t = self;
        for pass in 1.. {
            let mut next = t.clone_empty();
            let (done, found) = t.pass();
            if found == next.array_reads || pass == 4 {
                return done;
            }
            next.array_reads = found;
            t = next;
        }
        unreachable!("the passes end at the fourth")
    }

    /// A fresh timeline of the same program, reading the array's accumulator reads this one
    /// read.
    fn clone_empty(&self) -> Self {
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
        t
    }

    /// Each instruction's end, on one pass.
    #[cfg(test)]
    fn run(self) -> Vec<u64> {
        self.pass().0
    }

    /// Each instruction's end, and per bank the cycles the array read it.
    fn pass(mut self) -> (Vec<u64>, Vec<BankReads>) {
        loop {
            self.run_fixed();
            for unit in [Queue::Load, Queue::Store] {
                if self.port.active[port_side(unit)].is_none() {
                    if let Some((pc, at)) = self.ready(unit.index()) {
                        self.start(pc, at);
                        let Cost::Transfer { work, into_input } = self.costs[pc] else {
                            unreachable!("loads and stores are transfers")
                        };
                        self.port.active[port_side(unit)] =
                            Some(Active::new(pc, at, work, into_input));
                    }
                }
            }
            let Some((a, end)) = self.port.advance(&self.input_writes) else {
                break;
            };
            let q = self.queue[a.pc];
            self.free[q] = end;
            self.finish(a.pc, end + self.latency);
        }
        debug_assert!(
            (0..4).all(|q| self.next[q] == self.order[q].len()),
            "a synced program runs to its end"
        );
        (self.done, self.array_reads_now)
    }

    /// Starts the compute and vector queues' instructions whose signals are known.
    fn run_fixed(&mut self) {
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
            self.issue.push(prev.max(room));
        }
        Some(self.issue[pc])
    }

    /// Queue q's next instruction and the cycle it can start, if its issue and its signals
    /// are known.
    fn ready(&mut self, q: usize) -> Option<(usize, u64)> {
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
    fn start(&mut self, pc: usize, at: u64) {
        self.started[pc] = Some(at);
        for (k, taken) in self.taken.iter_mut().enumerate() {
            if self.instrs[pc].wait & (1 << k) != 0 {
                *taken += 1;
            }
        }
        self.next[self.queue[pc]] += 1;
    }

    /// Instruction pc releases its semaphores at cycle `end`.
    fn finish(&mut self, pc: usize, end: u64) {
        for (k, list) in self.signals.iter_mut().enumerate() {
            if self.instrs[pc].signal & (1 << k) != 0 {
                list.push(end);
            }
        }
        self.done[pc] = end;
    }
}

/// The port's side of a queue's transfers: 0 for the load unit, 1 for the store unit.
fn port_side(q: Queue) -> usize {
    usize::from(q == Queue::Store)
}

/// A transfer on the port: from `start` on it needs `left` more half cycles of it; a load
/// into the input buffer (`paused`) stops while the vector unit writes that buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Active {
    pc: usize,
    start: u64,
    left: u64,
    paused: bool,
}

impl Active {
    fn new(pc: usize, start: u64, cycles: u64, paused: bool) -> Self {
        Active {
            pc,
            start,
            left: 2 * cycles,
            paused,
        }
    }
}

/// The memory port, shared round robin by the load and the store unit (one transfer each at
/// a time): alone, a transfer takes a cycle per cycle of work; while both move, each gets
/// every other cycle (so work is counted in half cycles). `clock` is the cycle up to which
/// the port's time is spent.
#[derive(Default)]
struct Port {
    clock: u64,
    active: [Option<Active>; 2],
}

/// Whether cycle t falls in one of the sorted, disjoint `pauses`, and the next cycle after
/// t where that changes.
fn pause_at(pauses: &[(u64, u64)], t: u64) -> (bool, Option<u64>) {
    match pauses.get(pauses.partition_point(|&(_, e)| e <= t)) {
        Some(&(s, e)) if s <= t => (true, Some(e)),
        Some(&(s, _)) => (false, Some(s)),
        None => (false, None),
    }
}

impl Port {
    /// Runs the port until the first of its transfers finishes; returns that transfer and
    /// the cycle after its last (`None` when the port has no transfer). A paused transfer
    /// does not move during `pauses`.
    fn advance(&mut self, pauses: &[(u64, u64)]) -> Option<(Active, u64)> {
        let mut t = self.clock;
        loop {
            // Which transfers move from t on, and the next cycle that may change it.
            let mut moving = [false; 2];
            let mut edge: Option<u64> = None;
            for (side, a) in self.active.iter().enumerate() {
                let Some(a) = a else { continue };
                let (paused, next) = if a.start > t {
                    (true, Some(a.start))
                } else if a.paused {
                    pause_at(pauses, t)
                } else {
                    (false, None)
                };
                moving[side] = !paused;
                edge = match (edge, next) {
                    (Some(e), Some(n)) => Some(e.min(n)),
                    (e, n) => e.or(n),
                };
            }
            let n = moving.iter().filter(|&&m| m).count() as u64;
            if n == 0 {
                t = edge?;
                continue;
            }
            // Half cycles per cycle for each moving transfer: a whole cycle alone, every
            // other cycle when both move.
            let rate = if n == 1 { 2 } else { 1 };
            let finish = (0..2)
                .filter(|&side| moving[side])
                .map(|side| {
                    let left = self.active[side].expect("moving").left;
                    (t + left.div_ceil(rate), side)
                })
                .min()
                .expect("a transfer moves");
            let until = edge.map_or(finish.0, |e| e.min(finish.0));
            for (a, &m) in self.active.iter_mut().zip(&moving) {
                if let Some(a) = a.as_mut().filter(|_| m) {
                    a.left = a.left.saturating_sub(rate * (until - t));
                }
            }
            t = until;
            if until == finish.0 {
                self.clock = t;
                let done = self.active[finish.1].take().expect("moving");
                return Some((done, t));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{acc_stall, AccUse, Active, Cost, Port, Timeline};
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

    fn transfer(pc: usize, start: u64, cycles: u64) -> Option<Active> {
        Some(Active::new(pc, start, cycles, false))
    }

    fn next(p: &mut Port, pauses: &[(u64, u64)]) -> Option<(usize, u64)> {
        p.advance(pauses).map(|(a, end)| (a.pc, end))
    }

    /// By hand: a load of 10 cycles from 0 and a store of 4 from 2: the load runs alone over
    /// 0..2 (8 left), then they alternate, so the store's 4 take 2..10 and the load's last 4
    /// run alone over 10..14. A store of 3 starting at 20 then finds the port idle: 20..23.
    #[test]
    fn load_and_store_share_the_port_round_robin() {
        let mut p = Port {
            active: [transfer(0, 0, 10), transfer(1, 2, 4)],
            ..Port::default()
        };
        assert_eq!(next(&mut p, &[]), Some((1, 10)));
        assert_eq!(next(&mut p, &[]), Some((0, 14)));
        p.active[1] = transfer(2, 20, 3);
        assert_eq!(next(&mut p, &[]), Some((2, 23)));
        assert_eq!(next(&mut p, &[]), None);
        // A transfer that ends before the other starts does not share.
        p.active = [transfer(3, 30, 5), transfer(4, 40, 5)];
        assert_eq!(next(&mut p, &[]), Some((3, 35)));
        assert_eq!(next(&mut p, &[]), Some((4, 45)));
    }

    /// By hand: a load of 6 into the input buffer from 0, paused over 2..5, and a store of 4
    /// from 0. Over 0..2 they alternate (one each), over 2..5 the store runs alone (3, so it
    /// ends at 5), and the load's last 5 run alone over 5..10.
    #[test]
    fn a_paused_load_leaves_the_port_to_the_store() {
        let mut p = Port {
            active: [Some(Active::new(0, 0, 6, true)), transfer(1, 0, 4)],
            ..Port::default()
        };
        assert_eq!(next(&mut p, &[(2, 5)]), Some((1, 5)));
        assert_eq!(next(&mut p, &[(2, 5)]), Some((0, 10)));
    }
}
