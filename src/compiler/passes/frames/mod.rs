//! frames: every engine's program for a run, from the schedule of one frame. Each branch
//! runs its frames back to back (so stage s works on frame f + 1 while stage s + 1 works on
//! frame f); frame f's activations have their own copy in memory (`Reloc`), weights are
//! shared. Between bands an engine sends a hand-off token down its stream links and takes
//! the tokens of the engines that feed it (`tokens`): before each band enough that every
//! row it reads of their tensors is done, and all of a frame's before its last band. An
//! idle engine fed by an active one drains its tokens. A single engine runs one frame and
//! hands nothing on: its program is its schedule.

mod tokens;

use super::map::in_unit;
use super::map::links::token_rows;
use super::map::rows::band_needs;
use super::map::Part;
use super::schedule::Scheduled;
use crate::compiler::step::{Res, Step};
use crate::compiler::{CompileError, TensorLayout};
use crate::design::Design;
use crate::isa::Op as IsaOp;
use crate::model::{Model, Tensor};
use tokens::token;

/// Every engine's steps for a run (None: an idle engine with nothing to drain), and where
/// the run's frames live.
pub struct Framed {
    pub engines: Vec<Option<Vec<Step>>>,
    pub reloc: Reloc,
    pub frames: usize,
    pub end: u64,
}

/// Frames per branch: `rounds` times its batch (or `frames` for all), raised to the frames
/// of every branch that forks from it (its shared layers must exist for each of theirs).
/// Forks come from earlier branches, so one backward sweep covers chains of forks.
pub fn branch_frames(design: &Design, frames: usize, rounds: usize) -> Vec<usize> {
    let mut per_branch: Vec<usize> = design
        .branches
        .iter()
        .map(|b| match frames {
            0 => b.batch.max(1) as usize * rounds,
            f => f,
        })
        .collect();
    for b in (0..design.branches.len()).rev() {
        if let Some((a, _)) = &design.branches[b].from {
            let a = design
                .branches
                .iter()
                .position(|x| x.name == *a)
                .expect("validated fork source");
            per_branch[a] = per_branch[a].max(per_branch[b]);
        }
    }
    per_branch
}

/// Every engine's steps for a run of `per_branch[b]` frames of each branch (a single
/// engine: one frame).
pub fn run(
    design: &Design,
    plan: &Scheduled,
    per_branch: &[usize],
) -> Result<Framed, CompileError> {
    let (stages, alloc) = (&plan.placed.mapped.map.stages, &plan.placed.alloc);
    let single = plan.placed.mapped.map.single;
    let branch_of = |name: &str| {
        design
            .branches
            .iter()
            .position(|b| b.name == name)
            .expect("branch exists")
    };
    let frames = stages
        .iter()
        .map(|s| per_branch[s.branch])
        .max()
        .unwrap_or(1);
    let (reloc, end) = relocate(alloc, frames, single)?;
    let cores = design.cores();
    let links = design.links();
    // Per engine, its stage and replica (None: idle).
    let mut share_of = vec![None; cores.len()];
    for (k, share) in plan.shares.iter().enumerate() {
        for (r, sh) in share.iter().enumerate() {
            share_of[sh.part.engine] = Some((k, r));
        }
    }
    let active: Vec<bool> = share_of.iter().map(Option::is_some).collect();
    let parts: Vec<Vec<Part>> = plan
        .shares
        .iter()
        .map(|st| st.iter().map(|sh| sh.part.clone()).collect())
        .collect();
    let bands_of = |e: usize| share_of[e].map_or(0, |(k, r)| plan.shares[k][r].part.bands());
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
    let mut programs: Vec<Option<Vec<Step>>> = (0..cores.len()).map(|_| None).collect();
    for (e, p) in programs.iter_mut().enumerate() {
        if !active[e] && tokens_in(e) > 0 {
            *p = Some(
                (0..tokens_in(e))
                    .map(|_| token(0, false, receive[e]))
                    .collect(),
            );
        }
    }
    for (st, share) in stages.iter().zip(&plan.shares) {
        let branch = &design.branches[st.branch];
        let unit = &branch.units[st.unit];
        for (replica, sh) in share.iter().enumerate() {
            let e = sh.part.engine;
            let first = st.nodes[0];
            let mut all = Vec::new();
            let own = per_branch[st.branch];
            let feeds: Vec<usize> = links
                .iter()
                .filter(|l| l.to == e && active[l.from])
                .map(|l| l.from)
                .collect();
            let needs = band_needs(&plan.placed.mapped.g, &parts, &share_of, &sh.part, &feeds);
            for f in 0..own {
                let mut taken = 0;
                for (k, steps) in sh.bands.iter().enumerate() {
                    for _ in taken..needs[k] {
                        all.push(token(first, false, receive[e]));
                    }
                    taken = needs[k];
                    all.extend(steps.iter().map(|s| reloc.step(s, f, replica)));
                    if sends_token(e) {
                        all.push(token(first, true, send[e]));
                    }
                }
            }
            let per_frame = needs.last().copied().unwrap_or(0);
            for _ in (own * per_frame).min(tokens_in(e))..tokens_in(e) {
                all.push(token(first, false, receive[e]));
            }
            fits_program_space(design, all.len() + 1).map_err(|e| match single {
                true => e,
                false => in_unit(e, &branch.name, unit),
            })?;
            programs[e] = Some(all);
        }
    }
    Ok(Framed {
        engines: programs,
        reloc,
        frames,
        end,
    })
}

/// Where every frame's tensors live (`Reloc`), and the first beat after them, checked
/// against the ISA's external addresses and the hand-off regions.
fn relocate(
    alloc: &super::allocate::Alloc,
    frames: usize,
    single: bool,
) -> Result<(Reloc, u64), CompileError> {
    let act_size = alloc.inputs_end + (alloc.end - alloc.activations);
    let end = alloc.end + (frames as u64 - 1) * act_size;
    let addressable = 1u64 << crate::isa::EXT_ADDR_BITS;
    // (A single engine's placement was checked by allocate.)
    if end > addressable && !single {
        return Err(CompileError::new(
            None,
            format!("{frames} frames of the model's tensors, with the weights, need {end} beats of external memory; the ISA's addresses reach {addressable}"),
            "lower the branches' batch, or compile a smaller model",
        ));
    }
    let on_chip = &alloc.handoffs.on_chip;
    if !on_chip.is_empty() && end > super::allocate::HANDOFF_BASE {
        return Err(CompileError::new(
            None,
            format!("{frames} frames of the model's tensors, with the weights, need {end} beats of external memory; with tensors handed on chip the ISA's addresses reach {} of it (the hand-off buffers take the rest)", super::allocate::HANDOFF_BASE),
            "lower the branches' batch, or compile a smaller model",
        ));
    }
    let span = |h: &super::allocate::Handoff| {
        h.size
            + (frames as u64).saturating_sub(1) * h.frame_beats.iter().copied().max().unwrap_or(0)
    };
    if let Some(h) = on_chip
        .iter()
        .find(|h| span(h) > super::allocate::HANDOFF_REGION)
    {
        return Err(CompileError::new(
            None,
            format!(
                "{frames} frames of {}, handed on chip, span {} beats of the hand-off addresses; each tensor has {}",
                h.tensor,
                span(h),
                super::allocate::HANDOFF_REGION
            ),
            "lower the branches' batch",
        ));
    }
    let reloc = Reloc {
        input_end: alloc.inputs_end,
        activations: alloc.activations,
        end: alloc.end,
        act_size,
        handoffs: on_chip
            .iter()
            .map(|h| (h.base, h.frame_beats.clone()))
            .collect(),
    };
    Ok((reloc, end))
}

/// Where frame f's copy of the activations lives: the input (beats 0..input_end) and the
/// other tensors (activations..end) of frame f > 0 follow one another after `end`.
#[derive(Debug, Clone)]
pub struct Reloc {
    input_end: u64,
    activations: u64,
    end: u64,
    act_size: u64,
    /// The tensors handed on chip: (first beat, per replica the beats a frame's rows move);
    /// frame f's rows follow
    /// frame f - 1's, so that the buffers' rings run on across frames.
    handoffs: Vec<(u64, Vec<u64>)>,
}

impl Reloc {
    /// How far beat `addr` moves for frame `f` (weights do not move).
    /// (A beat handed on chip moves by what replica `replica` of its producer writes a
    /// frame; layouts, of tensors in memory, take replica 0.)
    fn delta(&self, addr: u64, f: usize, replica: usize) -> i64 {
        if f == 0 {
            return 0;
        }
        if let Some((_, moves)) = self
            .handoffs
            .iter()
            .find(|(b, _)| (*b..b + super::allocate::HANDOFF_REGION).contains(&addr))
        {
            return (f as u64 * moves[replica]) as i64;
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

    /// Step `s` of replica `replica`'s program as frame `f` runs it.
    pub fn step(&self, s: &Step, f: usize, replica: usize) -> Step {
        // A transfer moves with the region it reads or writes: its first beat may lie
        // outside the tensor (a load's padding), so it is not classified by itself.
        let region = s.reads.iter().chain(&s.writes).find_map(|r| match r {
            Res::Dram(a, b) if a < b => Some(*a),
            _ => None,
        });
        let mut s = s.clone();
        let move_res = |r: &mut Res| {
            if let Res::Dram(a, b) = r {
                let d = self.delta(*a, f, replica);
                *a = (*a as i64 + d) as u64;
                *b = (*b as i64 + d) as u64;
            }
        };
        s.reads.iter_mut().for_each(move_res);
        s.writes.iter_mut().for_each(move_res);
        if let IsaOp::Load(t) | IsaOp::Store(t) = &mut s.instr.op {
            if !t.stream {
                let d = region.map_or(0, |a| self.delta(a, f, replica));
                t.ext_addr =
                    (t.ext_addr as i64 + d).rem_euclid(1 << crate::isa::EXT_ADDR_BITS) as u64;
            }
        }
        s
    }

    pub fn layout(&self, l: &TensorLayout, f: usize) -> TensorLayout {
        TensorLayout {
            base: (l.base as i64 + self.delta(l.base, f, 0)) as u64,
            ..l.clone()
        }
    }
}

/// The model as frame `f` runs it: every input rolled by `f` pixels (frame 0 is the model
/// itself), so that every frame computes something different.
pub fn frame_model(model: &Model, f: usize) -> Model {
    let mut m = model.clone();
    for (_, x) in &mut m.inputs {
        *x = rolled(x, f);
    }
    m
}

/// `x` rolled by `f` pixels (with their block scales).
fn rolled(x: &Tensor, f: usize) -> Tensor {
    let pixels = x.h * x.w;
    let mut y = x.clone();
    let shift = f % pixels.max(1);
    y.data.rotate_right(shift * x.c);
    let per = y.scales.len() / pixels.max(1);
    y.scales.rotate_right(shift * per);
    y
}

/// A program of `n` instructions (with `end`) fits the engines' program address space:
/// instructions are fetched from external memory (the instruction memory is a prefetch
/// ring, `control.imem_depth` deep, so programs may be of any length up to that) through
/// the 32-bit `prog_base` CSR and the prefetcher's beat counter.
pub fn fits_program_space(design: &Design, n: usize) -> Result<(), CompileError> {
    let beats = n as u64 * crate::isa::instr_beats(design.memory.data_width_bits);
    if beats >= 1 << 32 {
        return Err(CompileError::new(
            None,
            format!("the program has {n} instructions, {beats} beats of external memory; engines fetch programs from 32-bit beat addresses"),
            "compile a smaller model, or split it",
        ));
    }
    Ok(())
}
