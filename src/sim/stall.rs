//! Hang diagnosis: the bound after which the testbench declares engine 0 stuck, and the
//! report that names, for each queue, the instruction at its head (index and listing line),
//! the semaphores it waits on with their counts, and the memory port's state.

use crate::design::Design;
use crate::isa::{wait_text, Instr, Queue, SEMAPHORES};

/// Cycles without progress after which the testbench stops a run. Progress is an
/// instruction fetched or started, a memory handshake or response, or a scratchpad write.
/// The longest legitimate gap between two such events is a memory round trip, or a row
/// crossing the array and the post-processing pipeline, each slowed by the bandwidth limit
/// and by the refused cycles of `stall_pct`; the bound is eight times their sum.
pub fn limit(design: &Design, stall_pct: u32) -> u64 {
    let u = &design.branches[0].units[0];
    let pipeline = u64::from(design.memory.latency_cycles) + u64::from(u.cpf + u.kpf) + 64;
    let beat = u64::from(design.memory.data_width_bits / 8)
        .div_ceil(u64::from(design.memory.bytes_per_cycle.max(1)));
    let refused = 100 / (100 - u64::from(stall_pct.min(99)));
    8 * pipeline * beat * refused
}

/// One queue as the testbench saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueState {
    pub queue: Queue,
    /// An instruction is waiting at the head of the queue.
    pub head_valid: bool,
    /// Instructions of this queue started so far.
    pub started: usize,
    /// The queue's executor is running an instruction.
    pub busy: bool,
}

/// Engine 0's state when it stopped making progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    pub cycle: u64,
    pub idle: u64,
    pub queues: Vec<QueueState>,
    pub sems: Vec<u64>,
    pub fetch_pc: u64,
    pub fetching: bool,
    /// Request valid, ready, write, address; reads in flight.
    pub memport: [u64; 5],
}

impl Stall {
    /// Parse the testbench's report (`tb_top.v`, `+stall_limit`); `None` when the log has
    /// no stall.
    pub fn parse(log: &str) -> Option<Stall> {
        let nums = |l: &str, key: &str| -> Option<Vec<u64>> {
            let rest = l.strip_prefix(key)?;
            rest.split_whitespace().map(|v| v.parse().ok()).collect()
        };
        let head = log.lines().find_map(|l| nums(l, "STALL "))?;
        let mut s = Stall {
            cycle: *head.first()?,
            idle: *head.get(1)?,
            queues: Vec::new(),
            sems: Vec::new(),
            fetch_pc: 0,
            fetching: false,
            memport: [0; 5],
        };
        for l in log.lines() {
            if let Some(v) = nums(l, "QUEUE ").filter(|v| v.len() == 4) {
                s.queues.push(QueueState {
                    queue: *Queue::ALL.get(v[0] as usize)?,
                    head_valid: v[1] != 0,
                    started: v[2] as usize,
                    busy: v[3] != 0,
                });
            } else if let Some(v) = nums(l, "SEM ").filter(|v| v.len() == 2) {
                s.sems.push(v[1]);
            } else if let Some(v) = nums(l, "FETCH ").filter(|v| v.len() == 2) {
                s.fetch_pc = v[0];
                s.fetching = v[1] != 0;
            } else if let Some(v) = nums(l, "MEMPORT ").filter(|v| v.len() == 5) {
                s.memport.copy_from_slice(&v);
            }
        }
        Some(s)
    }

    /// The diagnosis against the program engine 0 ran.
    pub fn report(&self, program: &[Instr]) -> String {
        let mut out = format!(
            "engine 0 made no progress for {} cycles (no instruction fetched or started, no memory transfer, no scratchpad write) and was stopped at cycle {}:\n",
            self.idle, self.cycle
        );
        for q in &self.queues {
            let head = program
                .iter()
                .enumerate()
                .filter(|(_, i)| i.queue() == Some(q.queue))
                .nth(q.started);
            let state = if q.busy { "busy" } else { "idle" };
            let line = match head {
                Some((pc, i)) if q.head_valid => {
                    format!(
                        "head is instruction {pc}: {}; {}",
                        i.to_asm(),
                        wait_text(i.wait, &self.sems)
                    )
                }
                Some((pc, _)) => format!("empty; its next instruction, {pc}, is not fetched yet"),
                None => "empty; all its instructions started".to_string(),
            };
            out.push_str(&format!(
                "  {:<8} queue: {} started, executor {state}, {line}\n",
                q.queue.name(),
                q.started
            ));
        }
        let sems: Vec<String> = self
            .sems
            .iter()
            .zip(SEMAPHORES.iter())
            .map(|(c, s)| format!("{}={c}", s.name()))
            .collect();
        out.push_str(&format!("  semaphores: {}\n", sems.join(" ")));
        let fetch = match program.get(self.fetch_pc as usize).and_then(Instr::queue) {
            Some(q) if self.fetching => format!(
                "at instruction {}, waiting for room in the {} queue",
                self.fetch_pc,
                q.name()
            ),
            _ if self.fetching => format!("at instruction {}", self.fetch_pc),
            _ => "stopped (every instruction fetched)".to_string(),
        };
        out.push_str(&format!("  fetch: {fetch}\n"));
        let [valid, ready, write, addr, in_flight] = self.memport;
        let request = if valid == 0 {
            "no request".to_string()
        } else {
            format!(
                "a {} of beat {addr} waiting{}",
                if write != 0 { "write" } else { "read" },
                if ready == 0 { ", not accepted" } else { "" }
            )
        };
        out.push_str(&format!(
            "  memory port: {request}; {in_flight} reads in flight"
        ));
        out
    }
}
