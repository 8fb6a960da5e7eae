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
    left: f64,
    paused: bool,
}

impl Active {
    pub(super) fn new(pc: usize, engine: usize, start: u64, cycles: u64, paused: bool) -> Self {
        Active {
            pc,
            engine,
            side: 0,
            start,
            left: cycles as f64,
            paused,
        }
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
            // Which transfers move from t on, and the next cycle that may change it.
            let mut edge: Option<u64> = None;
            let mut moving = vec![[false; 3]; self.slots.len()];
            for (k, (_, sides)) in self.slots.iter().enumerate() {
                for (side, a) in sides.iter().enumerate() {
                    let Some(a) = a else { continue };
                    let (paused, next) = if a.start > t {
                        (true, Some(a.start))
                    } else if a.paused {
                        pause_at(pauses[a.engine], t)
                    } else {
                        (false, None)
                    };
                    moving[k][side] = !paused;
                    edge = match (edge, next) {
                        (Some(e), Some(n)) => Some(e.min(n)),
                        (e, n) => e.or(n),
                    };
                }
                // The prefetch waits while its engine's load or store unit moves.
                let m = &mut moving[k];
                m[FETCH] &= !(m[0] || m[1]);
            }
            let engines = moving.iter().filter(|m| m.contains(&true)).count();
            if engines == 0 {
                t = edge?;
                continue;
            }
            // Each moving transfer's share of the port's cycles.
            let share = |m: &[bool; 3]| 1.0 / (engines * m.iter().filter(|&&x| x).count()) as f64;
            let mut finish: Option<(u64, usize, usize)> = None;
            for (k, m) in moving.iter().enumerate() {
                for side in (0..3).filter(|&s| m[s]) {
                    let left = self.slots[k].1[side].expect("moving").left;
                    let end = t + (left / share(m) - 1e-9).ceil().max(0.0) as u64;
                    if finish.is_none_or(|f| end < f.0) {
                        finish = Some((end, k, side));
                    }
                }
            }
            let (end, k, side) = finish.expect("a transfer moves");
            let until = edge.map_or(end, |e| e.min(end));
            for (slot, m) in self.slots.iter_mut().zip(&moving) {
                let s = share(m);
                for (a, &mv) in slot.1.iter_mut().zip(m) {
                    if let Some(a) = a.as_mut().filter(|_| mv) {
                        a.left = (a.left - s * (until - t) as f64).max(0.0);
                    }
                }
            }
            t = until;
            if until == end {
                self.clock = t;
                let done = self.slots[k].1[side].take().expect("moving");
                return Some((done, t));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Active, Port};

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
