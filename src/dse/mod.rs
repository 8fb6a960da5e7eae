//! Design-space exploration (`hwgen dse`, F-CAD's search): the elastic Design with the
//! best throughput for a model within DSP, block-RAM and bandwidth budgets.
//!
//! - **The space** (`space.rs`): the template Design's branches, each a list of units
//!   (pipeline stages), each a square array of one of the allowed sizes with `h` replicas;
//!   at least two engines in all (one engine alone is compiled, and estimated, by the
//!   single-engine compiler).
//!   The datatype, buffers, memory width and vector unit are the template's; the clock and
//!   the memory ports come from the budget.
//! - **Cost of a point**: the resource model (`synth::model`, fitted to `hwgen synth
//!   --target xilinx`); a point over a budget is never estimated.
//! - **Value of a point**: the compiler's own estimate (`compiler::estimate`: the mapping,
//!   tiling and schedule `compile` emits, memory ports included), memoized per stage. A
//!   round runs every branch's batch, so the branches' frame rates stand in the ratio of
//!   their batches and F-CAD's fitness (frame rates weighted by priority, minus a multiple
//!   of their variance) orders points as the round's length does; the fitness reported is
//!   the sum of priority x frames per second. Ties go to fewer DSPs, then fewer block
//!   RAMs, then the smaller point.
//! - **The search**: F-CAD's two levels, on the whole Design at once (branches share the
//!   memory ports and the round). *Growth* (its Algorithm 2, across branches): from the
//!   smallest point, take the step (a replica more, the next array size, a new stage, a
//!   replica moved to the slowest stage, a split or a merge) that gains the most frames per
//!   second per DSP it adds (or the most, `steepest`), the slowest stage's steps first;
//!   when no one step gains, two. A step whose stages already estimated are as slow as
//!   the current point's round cannot gain and is skipped unestimated (`Memo::floor`);
//!   the others' new stages are scheduled on the machine's cores (`Memo::prepare`).
//!   *Perturbation* (its Algorithm 1's stochastic
//!   redistribution): 1 to 3 seeded random steps either way from the current point, grown
//!   again, kept if better or, annealed, now and then if worse. *Polish*: every point one
//!   step down from the best, grown again. Deterministic for a seed. Each memory width is
//!   searched as a space of its own, the widths at once (`search_widths`).

use crate::compiler::{Estimate, Memo};
use crate::design::Design;
use crate::model::Model;
use crate::numeric::Precision;
use std::collections::HashMap;

pub mod device;
pub mod space;

pub use space::{Budget, Point, Space};

/// What `hwgen dse` is asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub budget: Budget,
    pub clock_mhz: u32,
    pub space: Space,
    pub seed: u64,
    /// Perturbations after the first growth.
    pub iterations: usize,
    /// Runner-up designs to report.
    pub runner_ups: usize,
    /// Threads that schedule the stages of a step's candidates (`Memo::prepare`); the
    /// search's outcome does not depend on it.
    pub threads: usize,
}

/// A point within budget, with its estimate.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Scored {
    pub point: Point,
    /// The memory's beat (`memory.data_width_bits`), and the point's units.
    pub memory_width_bits: u32,
    pub label: String,
    /// Sum over branches of priority x frames per second.
    pub fitness: f64,
    pub cycles_per_round: u64,
    pub frames_per_second: f64,
    pub branch_fps: Vec<f64>,
    pub efficiency: f64,
    pub pes: u64,
    pub engines: usize,
    pub dsps: u64,
    pub bram18: u64,
    pub luts: u64,
    pub ffs: u64,
    pub compute_cycles: u64,
    pub memory_cycles: u64,
    /// The stage that takes longest for its branch's frames (branch, unit).
    pub slowest: (usize, usize),
}

impl Scored {
    /// Better: higher fitness, then fewer DSPs, fewer block RAMs, the smaller point.
    pub fn better_than(&self, o: &Scored) -> bool {
        let key = |s: &Scored| {
            (
                std::cmp::Reverse(s.cycles_per_round),
                std::cmp::Reverse(s.dsps),
                std::cmp::Reverse(s.bram18),
            )
        };
        match key(self).cmp(&key(o)) {
            std::cmp::Ordering::Equal => {
                (self.memory_width_bits, &self.point) < (o.memory_width_bits, &o.point)
            }
            c => c.is_gt(),
        }
    }
}

/// The template made ready for the search, the memo of estimates and every point seen.
pub struct Explorer<'m> {
    template: Design,
    /// The template's text and file name: every point's Design is its parameter file read
    /// back (`space::config_toml`, `config::parse_str`), so the config's rules decide what
    /// is a Design.
    src: String,
    file: String,
    model: &'m Model,
    pub options: Options,
    memo: Memo,
    seen: HashMap<Point, Option<Scored>>,
    /// Points estimated (within budget and compiled), and points over a budget.
    pub estimated: usize,
    pub over_budget: usize,
    /// Points the compiler refused (e.g. a fork whose shared layers do not fit its unit).
    pub refused: usize,
    /// Points the config's rules refuse (e.g. rows narrower than a memory beat).
    pub invalid: usize,
}

impl<'m> Explorer<'m> {
    /// The template with the budget's clock and memory ports, or why it cannot be searched.
    pub fn new(
        template: &Design,
        src: &str,
        file: &str,
        model: &'m Model,
        options: Options,
    ) -> Result<Self, String> {
        let mut t = template.clone();
        let table: toml::Table = src.parse().map_err(|e| format!("{file}: {e}"))?;
        if !table.contains_key("branch") {
            return Err(format!(
                "the template {file} has no [[branch]] tables; dse searches elastic Designs (see configs/codec_avatar.toml)"
            ));
        }
        let unit = &t.branches[0].units[0];
        if !unit
            .datatype
            .precisions
            .iter()
            .all(|p| matches!(p, Precision::Int(_)))
        {
            return Err(format!(
                "the template {}'s datatype is not integer; the resource model (src/synth/model.rs) and units of different sizes need an integer datatype",
                t.source
            ));
        }
        let sp = &options.space;
        if sp.sizes.is_empty() || sp.max_h == 0 || sp.max_units == 0 {
            return Err(
                "the space is empty: give at least one size, max_h >= 1 and max_units >= 1"
                    .to_string(),
            );
        }
        t.control.clock_mhz = options.clock_mhz;
        let (ports, bytes) = space::memory_for(
            options.budget.bandwidth_gbs,
            options.clock_mhz,
            t.memory.data_width_bits,
        )?;
        t.memory.ports = ports;
        t.memory.bytes_per_cycle = bytes;
        Ok(Explorer {
            template: t,
            src: src.to_string(),
            file: file.to_string(),
            model,
            options,
            memo: Memo::default(),
            seen: HashMap::new(),
            estimated: 0,
            over_budget: 0,
            refused: 0,
            invalid: 0,
        })
    }

    /// The template as searched (clock and memory from the budget).
    pub fn template(&self) -> &Design {
        &self.template
    }

    /// The parameter file of point `p`, with `header` as its opening comment (and `name`,
    /// when given, as its name).
    pub fn config_toml(
        &self,
        p: &Point,
        header: &str,
        name: Option<&str>,
    ) -> Result<String, String> {
        space::config_toml(&self.src, &space::design(&self.template, p), header, name)
    }

    /// The Design of point `p`: its parameter file read back, or the config's error
    /// (e.g. an array whose rows are narrower than a memory beat).
    pub fn design(&self, p: &Point) -> Result<Design, String> {
        let text = self.config_toml(p, "", None)?;
        let stem = std::path::Path::new(&self.file)
            .file_stem()
            .map_or(String::new(), |s| s.to_string_lossy().into_owned());
        crate::config::parse_str(&text, &self.file, &stem).map_err(|e| e.to_string())
    }

    /// The smallest point: one unit per branch, of the smallest size the config's rules
    /// accept (a row of a small array can be narrower than a memory beat), or the rules'
    /// objection to the largest.
    pub fn smallest(&self) -> Result<Point, String> {
        let n = self.template.branches.len();
        let mut why = String::new();
        // One engine alone is the single-engine compiler's: at least two.
        let h = if n == 1 {
            2.min(self.options.space.max_h)
        } else {
            1
        };
        for &s in &self.options.space.sizes {
            let p = Point(vec![vec![(s, h)]; n]);
            match self.design(&p) {
                Ok(_) => return Ok(p),
                Err(e) => why = e,
            }
        }
        Err(format!(
            "no array size of the space makes a valid design: {why}"
        ))
    }

    /// Point `p` with its estimate, or None when it is over a budget or the compiler
    /// refuses it.
    pub fn evaluate(&mut self, p: &Point) -> Option<Scored> {
        if let Some(s) = self.seen.get(p) {
            return s.clone();
        }
        let s = self.score(p);
        self.seen.insert(p.clone(), s.clone());
        s
    }

    fn score(&mut self, p: &Point) -> Option<Scored> {
        // The budget first (the units are all the resource model reads), then the
        // config's rules, then the estimate.
        let b = self.options.budget;
        let (r, dsps, bram18) = space::resources(&space::design(&self.template, p)).ok()?;
        if b.exceeded(&r).is_some() {
            self.over_budget += 1;
            return None;
        }
        let d = match self.design(p) {
            Ok(d) if d.cores().len() >= 2 => d,
            _ => {
                self.invalid += 1;
                return None;
            }
        };
        let Ok(e) = self.memo.estimate(&d, self.model) else {
            self.refused += 1;
            return None;
        };
        self.estimated += 1;
        Some(scored(&d, p, &e, r, dsps, bram18))
    }

    /// Schedules, on the search's threads, the stages of the points of `points` that
    /// `evaluate` would estimate and has not (within budget, valid), so that it finds them.
    fn prepare(&mut self, points: &[Point]) {
        if self.options.threads <= 1 {
            return;
        }
        let designs: Vec<Design> = points
            .iter()
            .filter(|p| !self.seen.contains_key(p))
            .filter_map(|p| {
                let (r, _, _) = space::resources(&space::design(&self.template, p)).ok()?;
                if self.options.budget.exceeded(&r).is_some() {
                    return None;
                }
                self.design(p).ok().filter(|d| d.cores().len() >= 2)
            })
            .collect();
        self.memo
            .prepare(&designs, self.model, self.options.threads);
    }

    /// Whether point `p` may have a round shorter than `cycles` (a point seen, over a
    /// budget or invalid is left to `evaluate`, which is quick on it): the memo's floor
    /// under its round, from the stages it holds, is shorter.
    fn may_be_faster(&mut self, p: &Point, cycles: u64) -> bool {
        if self.seen.contains_key(p) {
            return true;
        }
        let within = space::resources(&space::design(&self.template, p))
            .is_ok_and(|(r, _, _)| self.options.budget.exceeded(&r).is_none());
        match self.design(p) {
            Ok(d) if within => self.memo.floor(&d, self.model) < cycles,
            _ => true,
        }
    }

    /// Stages the memo scheduled, and stages it found already scheduled.
    pub fn memo_counts(&self) -> (usize, usize) {
        (self.memo.misses, self.memo.hits)
    }
}

fn scored(
    d: &Design,
    p: &Point,
    e: &Estimate,
    r: crate::synth::model::Predicted,
    dsps: u64,
    bram18: u64,
) -> Scored {
    let fitness = e
        .branch_fps
        .iter()
        .zip(&d.branches)
        .map(|(f, b)| f * f64::from(b.priority))
        .sum();
    Scored {
        point: p.clone(),
        memory_width_bits: d.memory.data_width_bits,
        label: p.label(d),
        fitness,
        cycles_per_round: e.cycles_per_round,
        frames_per_second: e.frames_per_second,
        branch_fps: e.branch_fps.clone(),
        efficiency: e.efficiency,
        pes: e.pes,
        engines: d.cores().len(),
        dsps,
        bram18,
        luts: (r.luts + r.lutram).ceil() as u64,
        ffs: r.ffs.ceil() as u64,
        compute_cycles: e.compute_cycles,
        memory_cycles: e.memory_cycles,
        slowest: slowest(d, e),
    }
}

/// The (branch, unit) of the stage with the most cycles for its branch's frames.
fn slowest(d: &Design, e: &Estimate) -> (usize, usize) {
    let frames = |b: usize| e.branch_frames.get(b).copied().unwrap_or(1) as u64;
    e.stages
        .iter()
        .filter_map(|s| {
            let b = d.branches.iter().position(|x| x.name == s.branch)?;
            let u = d.branches[b].units.iter().position(|x| x.name == s.unit)?;
            Some(((b, u), frames(b) * s.estimated_cycles))
        })
        .max_by_key(|&((b, u), c)| (c, std::cmp::Reverse((b, u))))
        .map_or((0, 0), |x| x.0)
}

/// The search's result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Outcome {
    pub best: Scored,
    /// The next best points found, best first.
    pub runner_ups: Vec<Scored>,
    pub estimated: usize,
    pub over_budget: usize,
    pub refused: usize,
    pub invalid: usize,
    pub stages_scheduled: usize,
    pub stages_reused: usize,
    pub seconds: f64,
}

/// splitmix64: the search's seeded choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

impl Explorer<'_> {
    /// Growth (F-CAD's Algorithm 2): from `p`, the step that gains the most frames per
    /// second per added DSP (`steepest`: the most frames per second), while one gains and
    /// fits. The steps: a replica more, a larger
    /// array or a new stage anywhere; a replica moved to the slowest stage, a stage split
    /// or two merged (these add nothing: a gain is taken first).
    pub fn grow(&mut self, p: Scored, steepest: bool) -> Scored {
        let mut cur = p;
        loop {
            let sp = self.options.space.clone();
            // The slowest stage first (F-CAD's Algorithm 2), then every unit (the memory
            // ports, or a stage that is not the slowest but holds layers back).
            let mut next = cur.point.grown_at(&sp, Some(cur.slowest));
            next.extend(cur.point.shifted(&sp, Some(cur.slowest)));
            let mut best = self.best_step(&cur, &next, steepest);
            if best.is_none() {
                best = self.best_step(&cur, &cur.point.grown(&sp), steepest);
            }
            if best.is_none() {
                // No one step gains: two steps, the first one that fits without gaining,
                // the second on the stage that is then slowest (a new stage that pays off
                // once it has a second replica).
                let mut pairs = Vec::new();
                for q in &next {
                    if let Some(sq) = self.evaluate(q) {
                        pairs.extend(q.grown_at(&sp, Some(sq.slowest)));
                    }
                }
                best = self.best_step(&cur, &pairs, steepest);
            }
            match best {
                Some(s) => cur = s,
                None => return cur,
            }
        }
    }

    /// Among `next`, the point within budget that gains the most frames per second per DSP
    /// added over `cur` (`steepest`: the most frames per second), if one gains.
    fn best_step(&mut self, cur: &Scored, next: &[Point], steepest: bool) -> Option<Scored> {
        // A point whose stages already estimated are as slow as `cur` cannot gain: it is
        // not estimated (its other stages are not scheduled).
        let next: Vec<Point> = next
            .iter()
            .filter(|q| self.may_be_faster(q, cur.cycles_per_round))
            .cloned()
            .collect();
        self.prepare(&next);
        let mut best: Option<(f64, Scored)> = None;
        for q in &next {
            let Some(s) = self.evaluate(q) else {
                continue;
            };
            if s.cycles_per_round >= cur.cycles_per_round {
                continue;
            }
            let gain = 1.0 / s.cycles_per_round as f64 - 1.0 / cur.cycles_per_round as f64;
            let per_dsp = match steepest {
                true => gain,
                false => gain / (s.dsps.saturating_sub(cur.dsps).max(1)) as f64,
            };
            let wins = match &best {
                None => true,
                Some((g, b)) => per_dsp > *g || (per_dsp == *g && s.better_than(b)),
            };
            if wins {
                best = Some((per_dsp, s));
            }
        }
        best.map(|b| b.1)
    }

    /// From `best`, every point one step down grown again, until none is better (a local
    /// optimum of growth's neighbourhood).
    fn polish(&mut self, mut best: Scored) -> Scored {
        loop {
            let sp = &self.options.space;
            let mut found = None;
            let shrunk = best.point.shrunk(sp);
            self.prepare(&shrunk);
            for q in shrunk {
                let Some(s) = self.evaluate(&q) else {
                    continue;
                };
                let g = self.grow(s, false);
                if g.better_than(found.as_ref().unwrap_or(&best)) {
                    found = Some(g);
                }
            }
            match found {
                Some(f) => best = f,
                None => return best,
            }
        }
    }

    /// Perturbation (F-CAD's Algorithm 1, stochastic): 1..=3 random steps either way
    /// from `p`, each to a point within budget.
    fn perturb(&mut self, p: &Scored, rng: &mut Rng) -> Option<Scored> {
        let mut cur = p.clone();
        for _ in 0..=rng.below(3) {
            let sp = &self.options.space;
            let mut next = cur.point.grown(sp);
            next.extend(cur.point.shrunk(sp));
            next.extend(cur.point.shifted(sp, None));
            if next.is_empty() {
                break;
            }
            let q = next[rng.below(next.len())].clone();
            if let Some(s) = self.evaluate(&q) {
                cur = s;
            }
        }
        (cur.point != p.point).then_some(cur)
    }
}

/// Search for the best point (see the module's documentation); `progress` gets the
/// fraction done and what is being done.
pub fn search(ex: &mut Explorer, progress: &mut dyn FnMut(f64, &str)) -> Result<Outcome, String> {
    let start = std::time::Instant::now();
    let first = ex.smallest()?;
    let Some(s0) = ex.evaluate(&first) else {
        let d = ex.design(&first)?;
        let (r, _, _) = space::resources(&d)?;
        if let Some(over) = ex.options.budget.exceeded(&r) {
            return Err(format!(
                "the smallest design ({}) is over the budget ({over}); raise the budget or allow a smaller array size (--sizes)",
                first.label(&d)
            ));
        }
        if d.cores().len() < 2 {
            return Err(format!(
                "the smallest design ({}) has one engine, which the single-engine compiler runs; allow --max-h 2 or more",
                first.label(&d)
            ));
        }
        let e = ex
            .memo
            .estimate(&d, ex.model)
            .err()
            .map_or(String::new(), |e| e.to_string());
        return Err(format!(
            "the compiler refuses the smallest design ({}): {e}",
            first.label(&d)
        ));
    };
    progress(0.0, "growing from the smallest design");
    let mut best = ex.grow(s0.clone(), false);
    let steep = ex.grow(s0, true);
    if steep.better_than(&best) {
        best = steep;
    }
    // Iterated local search: perturb the current point, grow it again (alternating the
    // two growth rules), keep it if better, or now and then if worse (annealing).
    let mut rng = Rng(ex.options.seed);
    let n = ex.options.iterations;
    let mut cur = best.clone();
    for it in 0..n {
        progress(
            it as f64 / (n + 1) as f64,
            &format!(
                "perturbation {}/{n}: best {:.1} frames/s ({} DSPs)",
                it + 1,
                best.frames_per_second,
                best.dsps
            ),
        );
        let Some(p) = ex.perturb(&cur, &mut rng) else {
            continue;
        };
        let s = ex.grow(p, it % 2 == 1);
        let worse = s.cycles_per_round as f64 / cur.cycles_per_round as f64 - 1.0;
        let temperature = 0.05 * (1.0 - it as f64 / n as f64);
        let take = (rng.next() % 1_000_000) as f64 / 1e6;
        if s.better_than(&cur) || take < (-worse / temperature.max(1e-9)).exp() {
            cur = s.clone();
        }
        if s.better_than(&best) {
            best = s;
        }
    }
    progress(
        n as f64 / (n + 1) as f64,
        "polishing: one step down from the best, grown again",
    );
    best = ex.polish(best);
    progress(1.0, "done");
    let mut all: Vec<Scored> = ex.seen.values().flatten().cloned().collect();
    all.sort_by(order);
    let runner_ups = all
        .into_iter()
        .filter(|s| s.point != best.point)
        .take(ex.options.runner_ups)
        .collect();
    let (scheduled, reused) = ex.memo_counts();
    Ok(Outcome {
        best,
        runner_ups,
        estimated: ex.estimated,
        over_budget: ex.over_budget,
        refused: ex.refused,
        invalid: ex.invalid,
        stages_scheduled: scheduled,
        stages_reused: reused,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// [`search`] once per memory width in `widths` (the template's when empty): each width
/// its own space (a narrower beat allows smaller arrays and more ports for the same
/// bandwidth), the widths searched at once on threads of their own when the search has
/// more than one (each search depends on its width alone, so the outcome is the same).
/// The best over all widths, the runner-ups among every width's, and the explorer that
/// found the best (which writes its parameter file). `progress` gets the mean of the
/// widths' fractions done; the outcome's `seconds` are the whole search's.
pub fn search_widths<'m>(
    template: &Design,
    src: &str,
    file: &str,
    model: &'m Model,
    options: &Options,
    widths: &[u32],
    progress: &mut (dyn FnMut(f64, &str) + Send),
) -> Result<(Outcome, Explorer<'m>), String> {
    let start = std::time::Instant::now();
    let own = [template.memory.data_width_bits];
    let widths = if widths.is_empty() { &own[..] } else { widths };
    let n = widths.len();
    let done = std::sync::Mutex::new((vec![0.0; n], progress));
    let one = |k: usize| -> Result<(Outcome, Explorer<'m>), String> {
        let w = widths[k];
        let mut t = template.clone();
        t.memory.data_width_bits = w;
        t.memory.bytes_per_cycle = w / 8;
        let mut ex = Explorer::new(&t, src, file, model, options.clone())?;
        let mut each = |f: f64, what: &str| {
            let mut g = done.lock().unwrap_or_else(|p| p.into_inner());
            let (fractions, progress) = &mut *g;
            fractions[k] = f;
            let mean = fractions.iter().sum::<f64>() / n as f64;
            progress(mean, &format!("{w}-bit memory: {what}"));
        };
        let out = search(&mut ex, &mut each).map_err(|e| format!("with {w}-bit memory: {e}"))?;
        Ok((out, ex))
    };
    let results: Vec<_> = match n > 1 && options.threads > 1 {
        true => std::thread::scope(|s| {
            let one = &one;
            let handles: Vec<_> = (0..n).map(|k| s.spawn(move || one(k))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        }),
        false => (0..n).map(one).collect(),
    };
    let mut found: Option<(Outcome, Explorer<'m>)> = None;
    let mut others: Vec<Scored> = Vec::new();
    let mut errors = Vec::new();
    for r in results {
        let (out, ex) = match r {
            Ok(x) => x,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        match found.take() {
            None => found = Some((out, ex)),
            Some((best, bex)) => {
                let (win, lose, wex) = match out.best.better_than(&best.best) {
                    true => (out, best, ex),
                    false => (best, out, bex),
                };
                let mut win = win;
                others.push(lose.best.clone());
                others.extend(lose.runner_ups);
                win.estimated += lose.estimated;
                win.over_budget += lose.over_budget;
                win.refused += lose.refused;
                win.invalid += lose.invalid;
                win.stages_scheduled += lose.stages_scheduled;
                win.stages_reused += lose.stages_reused;
                found = Some((win, wex));
            }
        }
    }
    let (mut out, ex) = found.ok_or_else(|| errors.join("; "))?;
    out.seconds = start.elapsed().as_secs_f64();
    others.append(&mut out.runner_ups);
    others.sort_by(order);
    out.runner_ups = others.into_iter().take(options.runner_ups).collect();
    Ok((out, ex))
}

/// Best first.
fn order(a: &Scored, b: &Scored) -> std::cmp::Ordering {
    match (a.better_than(b), b.better_than(a)) {
        (true, _) => std::cmp::Ordering::Less,
        (_, true) => std::cmp::Ordering::Greater,
        _ => std::cmp::Ordering::Equal,
    }
}
