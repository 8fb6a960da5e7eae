//! An elastic run's programs: every engine's share of every frame of a run, with its
//! hand-off tokens, synced (`assemble`), and the estimate of a round from a timeline of all
//! the engines at once (`system_round`).

use super::tokens::{band_needs, token, token_beats, token_rows};
use super::{branch_frames, in_unit, Plan};
use crate::compiler::passes::encode;
use crate::compiler::passes::estimate::{self, EngineProgram, Streams};
use crate::compiler::passes::schedule::{Res, Step};
use crate::compiler::passes::sync::{self, Synced};
use crate::compiler::{CompileError, TensorLayout};
use crate::design::Design;
use crate::isa::Op as IsaOp;

/// Every engine's synced program for a run (None: an idle engine with nothing to drain),
/// and where the run's frames live.
pub(super) struct Programs {
    pub(super) synced: Vec<Option<Synced>>,
    pub(super) reloc: Reloc,
    pub(super) frames: usize,
    pub(super) end: u64,
}

/// Every engine's program for a run of `per_branch[b]` frames of each branch.
pub(super) fn assemble(
    design: &Design,
    plan: &Plan,
    per_branch: &[usize],
) -> Result<Programs, CompileError> {
    let branch_of = |name: &str| {
        design
            .branches
            .iter()
            .position(|b| b.name == name)
            .expect("branch exists")
    };
    let frames = plan
        .stages
        .iter()
        .map(|s| per_branch[s.branch])
        .max()
        .unwrap_or(1);
    let act_size = plan.alloc.inputs_end + (plan.alloc.end - plan.alloc.activations);
    let end = plan.alloc.end + (frames as u64 - 1) * act_size;
    let addressable = 1u64 << crate::isa::EXT_ADDR_BITS;
    if end > addressable {
        return Err(CompileError::new(
            None,
            format!("{frames} frames of the model's tensors, with the weights, need {end} beats of external memory; the ISA's addresses reach {addressable}"),
            "lower the branches' batch, or compile a smaller model",
        ));
    }
    let reloc = Reloc {
        input_end: plan.alloc.inputs_end,
        activations: plan.alloc.activations,
        end: plan.alloc.end,
        act_size,
    };
    let cores = design.cores();
    let links = design.links();
    // Per engine, its stage and replica (None: idle).
    let mut share_of = vec![None; cores.len()];
    for (k, share) in plan.shares.iter().enumerate() {
        for (r, sh) in share.iter().enumerate() {
            share_of[sh.engine] = Some((k, r));
        }
    }
    let active: Vec<bool> = share_of.iter().map(Option::is_some).collect();
    let bands_of = |e: usize| share_of[e].map_or(0, |(k, r)| plan.shares[k][r].ends.len());
    let frames_of = |e: usize| per_branch[branch_of(&cores[e].0.name)];
    // A band's token leaves an active engine for every engine it feeds, one per band of
    // every frame of its branch; the engine fed loads each before the first of its bands
    // that reads what it covers, all of a frame's before its last band, and drains the
    // rest (a fork source may run more frames than the branch it feeds; an idle engine
    // runs none).
    let tokens_in = |e: usize| {
        links
            .iter()
            .find(|l| l.to == e && active[l.from])
            .map_or(0, |l| frames_of(l.from) * bands_of(l.from))
    };
    let sends_token = |e: usize| active[e] && links.iter().any(|l| l.from == e);
    let (send, receive) = token_rows(design, &links, &active);
    let mut programs: Vec<Option<Synced>> = (0..cores.len()).map(|_| None).collect();
    for (e, p) in programs.iter_mut().enumerate() {
        if !active[e] && tokens_in(e) > 0 {
            let drain: Vec<Step> = (0..tokens_in(e))
                .map(|_| token(0, false, receive[e]))
                .collect();
            *p = Some(sync::run(drain, design.control.queue_depth));
        }
    }
    for (st, share) in plan.stages.iter().zip(&plan.shares) {
        let branch = &design.branches[st.branch];
        let unit = &branch.units[st.unit];
        for sh in share {
            let e = sh.engine;
            let first = st.nodes[0];
            let mut all = Vec::new();
            let own = per_branch[st.branch];
            let feeds: Vec<usize> = links
                .iter()
                .filter(|l| l.to == e && active[l.from])
                .map(|l| l.from)
                .collect();
            let needs = band_needs(&plan.g, &plan.shares, &share_of, sh, &feeds);
            for f in 0..own {
                let mut taken = 0;
                for (k, steps) in sh.bands.iter().enumerate() {
                    for _ in taken..needs[k] {
                        all.push(token(first, false, receive[e]));
                    }
                    taken = needs[k];
                    all.extend(steps.iter().map(|s| reloc.step(s, f)));
                    if sends_token(e) {
                        all.push(token(first, true, send[e]));
                    }
                }
            }
            let per_frame = needs.last().copied().unwrap_or(0);
            for _ in (own * per_frame).min(tokens_in(e))..tokens_in(e) {
                all.push(token(first, false, receive[e]));
            }
            encode::fits_program_space(design, all.len() + 1)
                .map_err(|e| in_unit(e, &branch.name, unit))?;
            programs[e] = Some(sync::run(all, design.control.queue_depth));
        }
    }
    Ok(Programs {
        synced: programs,
        reloc,
        frames,
        end,
    })
}

/// The cycles of one round alone and of a round in steady state (a run of two rounds less
/// one of one, as `hwgen sim` measures it in RTL), from a timeline of every engine at once
/// (`estimate::system`): the engines' programs as `compile` emits them, the memory ports
/// they share, and the tokens their stream links hold.
pub(super) fn system_round(design: &Design, plan: &Plan) -> Result<(u64, u64), CompileError> {
    let cores = design.cores();
    let links = design.links();
    let mut stage_of = vec![None; cores.len()];
    for (k, share) in plan.shares.iter().enumerate() {
        for sh in share {
            stage_of[sh.engine] = Some(k);
        }
    }
    let active: Vec<bool> = stage_of.iter().map(Option::is_some).collect();
    let beats = token_beats(design, &links, &active);
    // A link holds its depth in beats of its sender's tokens.
    let streams = || {
        Streams::new(
            cores.len(),
            links
                .iter()
                .map(|l| (l.from, l.to, (u64::from(l.depth) / beats[l.from]) as usize)),
        )
    };
    let ports = design.memory.ports.max(1) as usize;
    // The cycles of `rounds` rounds.
    let cycles = |rounds: usize| -> Result<u64, CompileError> {
        let run = assemble(design, plan, &branch_frames(design, 0, rounds))?;
        let none = Synced {
            steps: Vec::new(),
            instrs: Vec::new(),
        };
        let engines: Vec<EngineProgram> = run
            .synced
            .iter()
            .enumerate()
            .map(|(e, s)| {
                let s = s.as_ref().unwrap_or(&none);
                let (unit, alloc) = match stage_of[e] {
                    Some(k) => (
                        super::unit_of(design, &plan.stages[k]),
                        plan.allocs.get(k).unwrap_or(&plan.alloc),
                    ),
                    None => (cores[e].1, &plan.alloc),
                };
                EngineProgram {
                    unit,
                    alloc,
                    steps: &s.steps,
                    instrs: &s.instrs,
                    port: e % ports,
                }
            })
            .collect();
        Ok(estimate::system(design, &engines, streams())
            .into_iter()
            .max()
            .unwrap_or(0))
    };
    // One round and two, on two threads where the machine has them.
    let [one, two] = super::par::map(&[1, 2], super::par::cores(), |&r| cycles(r))
        .try_into()
        .expect("two timelines");
    let (one, two) = (one?, two?);
    Ok((one, two.saturating_sub(one)))
}

/// Where frame f's copy of the activations lives: the input (beats 0..input_end) and the
/// other tensors (activations..end) of frame f > 0 follow one another after `end`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reloc {
    input_end: u64,
    activations: u64,
    end: u64,
    act_size: u64,
}

impl Reloc {
    /// How far beat `addr` moves for frame `f` (weights do not move).
    fn delta(&self, addr: u64, f: usize) -> i64 {
        if f == 0 {
            return 0;
        }
        let base = self.end + (f as u64 - 1) * self.act_size;
        if addr < self.input_end {
            base as i64
        } else if addr >= self.activations {
            (base + self.input_end) as i64 - self.activations as i64
        } else {
            0
        }
    }

    pub(super) fn step(&self, s: &Step, f: usize) -> Step {
        // A transfer moves with the region it reads or writes: its first beat may lie
        // outside the tensor (a load's padding), so it is not classified by itself.
        let region = s.reads.iter().chain(&s.writes).find_map(|r| match r {
            Res::Dram(a, b) if a < b => Some(*a),
            _ => None,
        });
        let mut s = s.clone();
        let move_res = |r: &mut Res| {
            if let Res::Dram(a, b) = r {
                let d = self.delta(*a, f);
                *a = (*a as i64 + d) as u64;
                *b = (*b as i64 + d) as u64;
            }
        };
        s.reads.iter_mut().for_each(move_res);
        s.writes.iter_mut().for_each(move_res);
        if let IsaOp::Load(t) | IsaOp::Store(t) = &mut s.instr.op {
            if !t.stream {
                let d = region.map_or(0, |a| self.delta(a, f));
                t.ext_addr =
                    (t.ext_addr as i64 + d).rem_euclid(1 << crate::isa::EXT_ADDR_BITS) as u64;
            }
        }
        s
    }

    pub(super) fn layout(&self, l: &TensorLayout, f: usize) -> TensorLayout {
        TensorLayout {
            base: (l.base as i64 + self.delta(l.base, f)) as u64,
            ..l.clone()
        }
    }
}
