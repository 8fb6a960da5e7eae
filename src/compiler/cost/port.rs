//! A memory port of the timeline: the transfers of the engines that share it, each engine's
//! load and store unit one at a time, granted round robin as `hwgen_mem_arbiter` grants
//! them (the top-level arbiter among the engines, each engine's among its units).

use crate::isa::Queue;

/// The port's side of a queue's transfers: 0 for the load unit, 1 for the store unit.
pub(super) fn port_side(q: Queue) -> usize {
    usize::from(q == Queue::Store)
}

/// The port's side of the instruction prefetch, which yields to its engine's load and store
/// units (`hwgen_prefetch`).
pub(super) const FETCH: usize = 2;

/// A transfer on the port: instruction `pc` of engine `engine`, which from `start` on needs
/// `left` more cycles of the port to itself; a load into the input buffer (`paused`) stops
/// while the vector unit writes that buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Active {
    pub(super) pc: usize,
    pub(super) engine: usize,
    /// Its unit: `port_side` or `FETCH`.
    pub(super) side: usize,
    start: u64,
    /// A prefetch yields to its engine's load and store unit until this cycle.
    urgent_from: u64,
    left: f64,
    /// Cycles it spends on padding rows, without the port (before its beats).
    pad: u64,
    paused: bool,
}

impl Active {
    pub(super) fn new(pc: usize, engine: usize, start: u64, cycles: u64, paused: bool) -> Self {
        Active {
            pc,
            engine,
            side: 0,
            urgent_from: u64::MAX,
            start,
            left: cycles as f64,
            pad: 0,
            paused,
        }
    }

    /// A prefetch that yields to its engine's load and store unit until cycle `from`.
    pub(super) fn urgent_from(self, from: u64) -> Self {
        Active {
            urgent_from: from,
            ..self
        }
    }

    /// The transfer with `pad` cycles of padding rows, which do not use the port.
    pub(super) fn padded(self, pad: u64) -> Self {
        Active { pad, ..self }
    }
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

/// The port: per engine on it, a load, a store and a prefetch slot. Of the transfers that
/// move, each engine gets an equal share of the port's cycles and splits it equally between
/// its units that move (alone, a transfer takes a cycle per cycle of work; a load and a
/// store of one engine alone each get every other cycle); the prefetch moves only while
/// its engine's load and store unit do not. `clock` is the cycle up to which the port's
/// time is spent.
#[derive(Clone, Default)]
pub(super) struct Port {
    clock: u64,
    /// Per engine on the port (in the order they were added), its slots.
    slots: Vec<(usize, [Option<Active>; 3])>,
}

impl Port {
    /// A port shared by `engines` (global engine indices).
    pub(super) fn new(engines: impl IntoIterator<Item = usize>) -> Self {
        Port {
            clock: 0,
            slots: engines
                .into_iter()
                .map(|e| (e, [None, None, None]))
                .collect(),
        }
    }

    fn slot(&mut self, engine: usize, side: usize) -> &mut Option<Active> {
        let i = self
            .slots
            .iter()
            .position(|s| s.0 == engine)
            .expect("the engine is on this port");
        &mut self.slots[i].1[side]
    }

    /// Whether engine `engine`'s unit `side` has a transfer on the port.
    pub(super) fn busy(&mut self, engine: usize, side: usize) -> bool {
        self.slot(engine, side).is_some()
    }

    /// Puts transfer `a` on its engine's unit `side` (which must be free).
    pub(super) fn put(&mut self, side: usize, a: Active) {
        let slot = self.slot(a.engine, side);
        debug_assert!(slot.is_none(), "one transfer per unit");
        *slot = Some(Active { side, ..a });
    }

    /// The cycle the port's next transfer would finish (without running it).
    pub(super) fn peek(&self, pauses: &[&[(u64, u64)]]) -> Option<u64> {
        self.clone().advance(pauses).map(|(_, end)| end)
    }

    /// Runs the port until the first of its transfers finishes; returns that transfer and
    /// the cycle after its last (`None` when the port has no transfer). A paused transfer
    /// does not move during its engine's `pauses`.
    pub(super) fn advance(&mut self, pauses: &[&[(u64, u64)]]) -> Option<(Active, u64)> {
        let mut t = self.clock;
        loop {
            // What each transfer does from t on, and the next cycle that may change it.
            let mut edge: Option<u64> = None;
            let mut at = |n: u64| edge = Some(edge.map_or(n, |e| e.min(n)));
            let mut state = vec![[State::Waiting; 3]; self.slots.len()];
            for (k, (_, sides)) in self.slots.iter().enumerate() {
                for (side, a) in sides.iter().enumerate() {
                    let Some(a) = a else { continue };
                    state[k][side] = if a.start > t {
                        at(a.start);
                        State::Waiting
                    } else if a.paused && {
                        let (paused, next) = pause_at(pauses[a.engine], t);
                        next.into_iter().for_each(&mut at);
                        paused
                    } {
                        State::Waiting
                    } else if a.pad > 0 {
                        at(t + a.pad);
                        State::Padding
                    } else {
                        State::Moving
                    };
                }
                // Until it is urgent, the prefetch waits while its engine's load or store
                // unit requests.
                if let Some(a) = &sides[FETCH] {
                    let m = &mut state[k];
                    let yields = m[0] == State::Moving || m[1] == State::Moving;
                    if m[FETCH] == State::Moving && yields && t < a.urgent_from {
                        m[FETCH] = State::Waiting;
                        if a.urgent_from < u64::MAX {
                            at(a.urgent_from);
                        }
                    }
                }
            }
            let moving = |m: &[State; 3]| m.iter().filter(|&&x| x == State::Moving).count();
            let engines = state.iter().filter(|m| moving(m) > 0).count();
            // Each moving transfer's share of the port's cycles.
            let share = |m: &[State; 3]| 1.0 / (engines * moving(m)) as f64;
            let mut finish: Option<(u64, usize, usize)> = None;
            for (k, m) in state.iter().enumerate() {
                for side in 0..3 {
                    let Some(a) = &self.slots[k].1[side] else {
                        continue;
                    };
                    let end = match m[side] {
                        State::Moving => t + (a.left / share(m) - 1e-9).ceil().max(0.0) as u64,
                        State::Padding if a.left <= 0.0 => t + a.pad,
                        _ => continue,
                    };
                    if finish.is_none_or(|f| end < f.0) {
                        finish = Some((end, k, side));
                    }
                }
            }
            let until = match (finish, edge) {
                (Some((end, ..)), Some(e)) => end.min(e),
                (Some((end, ..)), None) => end,
                (None, e) => e?,
            };
            for (slot, m) in self.slots.iter_mut().zip(&state) {
                let s = share(m);
                for (a, st) in slot.1.iter_mut().zip(m) {
                    let Some(a) = a.as_mut() else { continue };
                    match st {
                        State::Moving => a.left = (a.left - s * (until - t) as f64).max(0.0),
                        State::Padding => a.pad -= until - t,
                        State::Waiting => {}
                    }
                }
            }
            t = until;
            if let Some((_, k, side)) = finish.filter(|f| f.0 == until) {
                self.clock = t;
                let done = self.slots[k].1[side].take().expect("finishing");
                return Some((done, t));
            }
        }
    }
}

/// What a transfer does at a cycle: waits (not started, paused, or a prefetch yielding),
/// skips padding rows (a cycle each, without the port), or moves beats on the port.
#[derive(Clone, Copy, PartialEq)]
enum State {
    Waiting,
    Padding,
    Moving,
}

#[cfg(test)]
mod tests {
    use super::{Active, Port, FETCH};

    fn transfer(pc: usize, start: u64, cycles: u64) -> Active {
        Active::new(pc, 0, start, cycles, false)
    }

    fn next(p: &mut Port, pauses: &[(u64, u64)]) -> Option<(usize, u64)> {
        p.advance(&[pauses]).map(|(a, end)| (a.pc, end))
    }

    /// By hand: a load of 10 cycles from 0 and a store of 4 from 2: the load runs alone over
    /// 0..2 (8 left), then they alternate, so the store's 4 take 2..10 and the load's last 4
    /// run alone over 10..14. A store of 3 starting at 20 then finds the port idle: 20..23.
    #[test]
    fn load_and_store_share_the_port_round_robin() {
        let mut p = Port::new([0]);
        p.put(0, transfer(0, 0, 10));
        p.put(1, transfer(1, 2, 4));
        assert_eq!(next(&mut p, &[]), Some((1, 10)));
        assert_eq!(next(&mut p, &[]), Some((0, 14)));
        p.put(1, transfer(2, 20, 3));
        assert_eq!(next(&mut p, &[]), Some((2, 23)));
        assert_eq!(next(&mut p, &[]), None);
        // A transfer that ends before the other starts does not share.
        p.put(0, transfer(3, 30, 5));
        p.put(1, transfer(4, 40, 5));
        assert_eq!(next(&mut p, &[]), Some((3, 35)));
        assert_eq!(next(&mut p, &[]), Some((4, 45)));
    }

    /// By hand: a load of 6 into the input buffer from 0, paused over 2..5, and a store of 4
    /// from 0. Over 0..2 they alternate (one each), over 2..5 the store runs alone (3, so it
    /// ends at 5), and the load's last 5 run alone over 5..10.
    #[test]
    fn a_paused_load_leaves_the_port_to_the_store() {
        let mut p = Port::new([0]);
        p.put(0, Active::new(0, 0, 0, 6, true));
        p.put(1, transfer(1, 0, 4));
        assert_eq!(next(&mut p, &[(2, 5)]), Some((1, 5)));
        assert_eq!(next(&mut p, &[(2, 5)]), Some((0, 10)));
    }

    /// By hand: engine 0 loads 4 beats after 6 padding rows, engine 1 loads 6 beats, both
    /// from 0. Padding rows do not use the port: engine 1 has it alone over 0..6, then
    /// engine 0's beats run alone over 6..10.
    #[test]
    fn padding_rows_leave_the_port_to_others() {
        let mut p = Port::new([0, 1]);
        p.put(0, Active::new(0, 0, 0, 4, false).padded(6));
        p.put(0, Active::new(1, 1, 0, 6, false));
        let mut run = || p.advance(&[&[], &[]]).map(|(a, end)| (a.engine, end));
        assert_eq!(run(), Some((1, 6)));
        assert_eq!(run(), Some((0, 10)));
    }

    /// By hand: a load of 8 and a prefetch of 4, both from 0. A prefetch that yields waits
    /// for the load (0..8) and runs 8..12; one urgent from 2 shares the port with the load
    /// from 2 on (2 beats done, 6 left; each gets every other cycle): it ends at 10, and the
    /// load's last 2 run alone over 10..12.
    #[test]
    fn the_prefetch_yields_to_its_engines_loads_until_it_is_urgent() {
        for (urgent, ends) in [(u64::MAX, [(0, 8), (1, 12)]), (2, [(1, 10), (0, 12)])] {
            let mut p = Port::new([0]);
            p.put(0, Active::new(0, 0, 0, 8, false));
            p.put(FETCH, Active::new(1, 0, 0, 4, false).urgent_from(urgent));
            assert_eq!(next(&mut p, &[]), Some(ends[0]), "urgent from {urgent}");
            assert_eq!(next(&mut p, &[]), Some(ends[1]), "urgent from {urgent}");
        }
    }

    /// By hand, two engines on one port from cycle 0: engine 0 loads 8 and stores 4, engine
    /// 1 loads 6. Each engine gets half the port, and engine 0 splits its half between its
    /// units: over 0..12 engine 1's load moves at 1/2 (done at 12) and engine 0's at 1/4
    /// each (5 and 1 left); then engine 0 is alone, 1/2 each: its store ends at 14 (the load
    /// has 4 left), and the load runs alone over 14..18.
    #[test]
    fn engines_share_the_port_round_robin() {
        let mut p = Port::new([0, 1]);
        p.put(0, Active::new(0, 0, 0, 8, false));
        p.put(1, Active::new(1, 0, 0, 4, false));
        p.put(0, Active::new(2, 1, 0, 6, false));
        let mut run = || p.advance(&[&[], &[]]).map(|(a, end)| (a.engine, a.pc, end));
        assert_eq!(run(), Some((1, 2, 12)));
        assert_eq!(run(), Some((0, 1, 14)));
        assert_eq!(run(), Some((0, 0, 18)));
        assert_eq!(run(), None);
    }
}
