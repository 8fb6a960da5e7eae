//! The timeline of every engine of a Design at once: each engine's queues as `Timeline`
//! runs them, the memory ports the engines share (`Port`), and the stream links that carry
//! their hand-off tokens, run in the order their transfers finish.

use super::port::{port_side, Active, Port, FETCH};
use super::timeline::{BankReads, Cost, Timeline};
use crate::isa::Queue;

/// The stream links between the engines and the tokens that went down them.
#[derive(Clone, Default)]
pub struct Streams {
    /// Per engine: the engines it sends to and how many tokens each link holds; the
    /// engine that feeds it.
    out: Vec<Vec<(usize, usize)>>,
    feed: Vec<Option<usize>>,
    /// Per engine: the cycle each token it sent arrived, and the cycle it took each of its
    /// feeder's.
    sent: Vec<Vec<u64>>,
    took: Vec<Vec<u64>>,
}

impl Streams {
    /// `engines` engines and the links (from, to, tokens it holds) between them.
    pub fn new(engines: usize, links: impl IntoIterator<Item = (usize, usize, usize)>) -> Self {
        let mut s = Streams {
            out: vec![Vec::new(); engines],
            feed: vec![None; engines],
            sent: vec![Vec::new(); engines],
            took: vec![Vec::new(); engines],
        };
        for (from, to, tokens) in links {
            s.out[from].push((to, tokens.max(1)));
            s.feed[to] = Some(from);
        }
        s
    }

    /// Without the tokens.
    fn fresh(&self) -> Self {
        Streams::new(
            self.out.len(),
            self.out
                .iter()
                .enumerate()
                .flat_map(|(f, o)| o.iter().map(move |&(t, n)| (f, t, n))),
        )
    }

    /// The cycle engine e's next token transfer, ready at `at`, may start, if known: a send
    /// once every link has room (its receiver took the token `tokens` before), a take once
    /// the token arrived.
    fn when(&self, e: usize, send: bool, at: u64) -> Option<u64> {
        if send {
            let k = self.sent[e].len();
            let mut at = at;
            for &(to, tokens) in &self.out[e] {
                if let Some(before) = k.checked_sub(tokens) {
                    at = at.max(*self.took[to].get(before)?);
                }
            }
            Some(at)
        } else {
            let from = self.feed[e]?;
            Some(at.max(*self.sent[from].get(self.took[e].len())?))
        }
    }

    fn record(&mut self, e: usize, send: bool, end: u64) {
        match send {
            true => self.sent[e].push(end),
            false => self.took[e].push(end),
        }
    }
}

/// Every engine's timeline, the ports they share and the links between them.
pub struct System<'a> {
    engines: Vec<Timeline<'a>>,
    /// Per engine, its port.
    port_of: Vec<usize>,
    streams: Streams,
}

impl<'a> System<'a> {
    /// Engines `engines`, engine e on port `port_of[e]`, linked by `streams`.
    pub(super) fn new(engines: Vec<Timeline<'a>>, port_of: Vec<usize>, streams: Streams) -> Self {
        System {
            engines,
            port_of,
            streams,
        }
    }

    /// One engine alone with its port.
    pub(super) fn alone(t: Timeline<'a>) -> Self {
        System::new(vec![t], vec![0], Streams::new(1, []))
    }

    /// Each engine's instructions' ends: the timeline run again with every engine's array
    /// accumulator reads of the pass before, until they no longer change (at most four
    /// passes).
    pub(super) fn run_to_fixpoint(self) -> Vec<Vec<u64>> {
        let mut s = self;
        for pass in 1.. {
            let mut next = System {
                engines: s.engines.iter().map(Timeline::clone_empty).collect(),
                port_of: s.port_of.clone(),
                streams: s.streams.fresh(),
            };
            let results = s.pass();
            let same = results
                .iter()
                .zip(&next.engines)
                .all(|((_, found), t)| *found == t.array_reads);
            if same || pass == 4 {
                return results.into_iter().map(|(done, _)| done).collect();
            }
            for ((_, found), t) in results.into_iter().zip(&mut next.engines) {
                t.array_reads = found;
            }
            s = next;
        }
        unreachable!("the passes end at the fourth")
    }

    /// Per engine, each instruction's end and per bank the cycles the array read it, on one
    /// pass: the compute and vector queues as far as their signals are known, the transfers
    /// that can start put on their ports, then the port whose next transfer finishes first
    /// run up to it.
    pub(super) fn pass(mut self) -> Vec<(Vec<u64>, Vec<BankReads>)> {
        let ports = self.port_of.iter().copied().max().map_or(0, |p| p + 1);
        let mut port: Vec<Port> = (0..ports)
            .map(|p| Port::new((0..self.engines.len()).filter(|&e| self.port_of[e] == p)))
            .collect();
        loop {
            while self.start_all(&mut port) {}
            let pauses: Vec<&[(u64, u64)]> = self
                .engines
                .iter()
                .map(|t| t.input_writes.as_slice())
                .collect();
            let first = match port.len() {
                1 => 0,
                _ => match (0..port.len())
                    .filter_map(|p| port[p].peek(&pauses).map(|end| (end, p)))
                    .min()
                {
                    Some((_, p)) => p,
                    None => break,
                },
            };
            let Some((a, end)) = port[first].advance(&pauses) else {
                break;
            };
            let t = &mut self.engines[a.engine];
            let latency = t.latency;
            if a.side == FETCH {
                let f = t.fetch.as_mut().expect("a fetch is on the port");
                f.arrived.push(end + latency);
                continue;
            }
            let q = t.queue[a.pc];
            t.free[q] = end;
            t.finish(a.pc, end + latency);
        }
        debug_assert!(
            self.engines.iter().all(Timeline::finished),
            "synced programs run to their ends"
        );
        self.engines.into_iter().map(Timeline::results).collect()
    }

    /// Runs every engine's compute and vector queues, and starts the transfers and tokens
    /// that can start; whether any did.
    fn start_all(&mut self, port: &mut [Port]) -> bool {
        let mut started = false;
        for e in 0..self.engines.len() {
            self.engines[e].run_fixed();
            for unit in [Queue::Load, Queue::Store] {
                let (p, side) = (self.port_of[e], port_side(unit));
                if port[p].busy(e, side) {
                    continue;
                }
                let t = &mut self.engines[e];
                let Some((pc, at)) = t.ready(unit.index()) else {
                    continue;
                };
                match t.costs[pc] {
                    Cost::Transfer {
                        work,
                        pad,
                        into_input,
                    } => {
                        t.start(pc, at);
                        let a = Active::new(pc, e, at, work, into_input).padded(pad);
                        port[p].put(side, a);
                    }
                    Cost::Stream { send, beats } => {
                        let Some(at) = self.streams.when(e, send, at) else {
                            continue;
                        };
                        let end = at + beats;
                        t.start(pc, at);
                        t.free[unit.index()] = end;
                        t.finish(pc, end);
                        self.streams.record(e, send, end);
                    }
                    Cost::Local { cycles } => {
                        let at = at.max(t.before_done(unit.index(), pc));
                        t.start(pc, at);
                        t.free[unit.index()] = at + cycles;
                        t.finish(pc, at + cycles);
                    }
                    Cost::Fixed { .. } => {
                        unreachable!("loads and stores are transfers or tokens")
                    }
                }
                started = true;
            }
            let p = self.port_of[e];
            if !port[p].busy(e, FETCH) {
                let t = &mut self.engines[e];
                if let Some((k, at, urgent)) = t.next_fetch() {
                    let f = t.fetch.as_mut().expect("fetching");
                    f.requested += 1;
                    let a = Active::new(k, e, at, f.work, false).urgent_from(urgent);
                    port[p].put(FETCH, a);
                    started = true;
                }
            }
        }
        started
    }
}

#[cfg(test)]
mod tests {
    use super::{Streams, System};
    use crate::compiler::cost::timeline::{AccUse, Cost, Timeline};
    use crate::isa::{Instr, Matmul, Op, Transfer};

    fn token(store: bool) -> Instr {
        let t = Transfer {
            stream: true,
            ..Transfer::default()
        };
        Instr::new(if store { Op::Store(t) } else { Op::Load(t) })
    }

    /// By hand, queues of two, one-beat tokens: engine 0 sends three tokens, engine 1 takes
    /// each and runs a matmul of 100 cycles on it (its matmuls run 3..103, 103..203,
    /// 203..303). With a link of one token, engine 0 sends token 1 only once token 0 is
    /// taken (sent over 1..2, taken over 2..3; token 1 sent over 3..4) and token 2 once
    /// token 1 is (taken over 4..5, token 2 sent over 5..6, taken over 6..7: the third load
    /// is issued at 4 and ready at 5). With a link of two, engine 0 sends back to back
    /// (1..2, 2..3, 3..4), and engine 1 takes token 1 over 3..4 (ready at 3) and token 2 over
    /// 5..6 (ready at 5).
    #[test]
    fn tokens_wait_for_room_in_the_link_and_for_their_sender() {
        let sender = [token(true), token(true), token(true)];
        let mut load = token(false);
        load.signal = 1; // load_to_compute
        let mut mm = Instr::new(Op::Matmul(Matmul {
            count0: 100,
            count1: 1,
            ..Matmul::default()
        }));
        mm.wait = 1;
        let receiver = [load, mm, load, mm, load, mm];
        let send = Cost::Stream {
            send: true,
            beats: 1,
        };
        let take = Cost::Stream {
            send: false,
            beats: 1,
        };
        let run = |tokens: usize| {
            let engines = vec![
                Timeline::new(
                    &sender,
                    vec![3; 3],
                    vec![send; 3],
                    0,
                    32,
                    2,
                    vec![AccUse::None; 3],
                ),
                Timeline::new(
                    &receiver,
                    vec![0, 1, 0, 1, 0, 1],
                    [take, Cost::fixed(100, 100)].repeat(3),
                    0,
                    32,
                    2,
                    vec![AccUse::None; 6],
                ),
            ];
            let streams = Streams::new(2, [(0, 1, tokens)]);
            System::new(engines, vec![0, 1], streams).run_to_fixpoint()
        };
        assert_eq!(run(1), vec![vec![2, 4, 6], vec![3, 103, 5, 203, 7, 303]]);
        assert_eq!(run(2), vec![vec![2, 3, 4], vec![3, 103, 4, 203, 6, 303]]);
    }
}
