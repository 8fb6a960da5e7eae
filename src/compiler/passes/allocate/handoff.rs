//! Which tensors stages hand on chip. A unit with a hand-off buffer (`handoff_depth`) is
//! written into by the one engine that feeds it through a link between units of the same
//! `h` (`Design::handoff_feeder`): replica r of the unit before it writes rows of its output
//! into replica r's buffer as it stores them, and replica r reads its input windows from
//! there, at beat addresses modulo the buffer's depth (a ring). Replica chains compute
//! their halo rows themselves (`map::rows`), so a consumer replica reads only its own
//! producer replica's rows; a unit fed through a join (another `h`) reads several
//! producers' rows and takes them from memory.
//!
//! A tensor goes on chip when a stage writes it and only stages it feeds through buffers
//! read it (every reader, a fork's too), when it is the one tensor those stages read of it
//! and the one it hands on (a buffer holds one tensor's rows), when it is not a model
//! output or an operand of a concat, and when every consumer's buffer holds what can be
//! live in it. Live beats are bounded by the hand-off tokens: the producer starts writing
//! band J of a run once its token for band J - 1 is in the link's FIFO, which holds C
//! tokens, so the consumer has taken J - C tokens, and it takes a token only once its loads
//! before it have read their rows. Every consumer band from the first that needs more than
//! J - C tokens may still be reading, so its first row read to the last row of band J must
//! fit the buffer. Two frames of a run are checked (the pattern repeats per frame). Every
//! other tensor goes through memory, with the reason.

use super::super::legalize::Graph;
use super::super::map::links::token_capacity;
use super::super::map::rows::{band_needs, reads};
use super::super::map::{Mapping, Part};
use crate::design::Design;

/// Hand-off tensors live at virtual beats from here (external memory stays below), each in
/// a region of its own. Replica r's rows of frame f sit `f * frame_beats[r]` beats after
/// frame 0's, `frame_beats[r]` being the span of rows replica r of the producer writes, so
/// that in each replica's buffer a frame's rows follow the last frame's.
pub const HANDOFF_BASE: u64 = 1 << 31;
pub const HANDOFF_REGION: u64 = 1 << 26;

/// A tensor a stage hands to the stages it feeds through their hand-off buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    pub tensor: String,
    /// The stage that writes it and those that read it.
    pub producer: usize,
    pub consumers: Vec<usize>,
    /// Its first virtual beat (frame 0), its beats per frame, and per replica the beats of
    /// the rows the producer replica writes of a frame (how far a frame's rows move from
    /// the last frame's).
    pub base: u64,
    pub size: u64,
    pub frame_beats: Vec<u64>,
    /// The most beats live in a consumer's buffer.
    pub live_beats: u64,
}

/// What stages hand on chip, and what stages with a buffer read from memory, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Handoffs {
    pub on_chip: Vec<Handoff>,
    /// (consumer stage, tensor, why it goes through memory).
    pub memory: Vec<(usize, String, String)>,
}

impl Handoffs {
    /// The hand-off of tensor `t`, if it goes on chip.
    pub fn of(&self, t: &str) -> Option<&Handoff> {
        self.on_chip.iter().find(|h| h.tensor == t)
    }
}

/// Beats of one row of tensor `t` stored pixel by pixel in tiles of the graph unit's cpf,
/// as a hand-off tensor is.
pub fn row_beats(design: &Design, g: &Graph, t: &str) -> u64 {
    let [_, w, c] = g.shape_of(t);
    let tile = g.unit.cpf as usize;
    let beats = super::row_beats(
        tile,
        g.format_of(t),
        u64::from(design.memory.data_width_bits),
    );
    (w * c.div_ceil(tile)) as u64 * beats
}

/// A stage with hand-off buffers: the stage feeding them, and the tensors it reads of it.
struct Fed {
    stage: usize,
    feeder: usize,
    tensors: Vec<String>,
}

/// What `decide` looks at: the mapping's replica parts, which part and stage every engine
/// and node belongs to, the links and how many tokens each holds.
struct Plan<'a> {
    design: &'a Design,
    g: &'a Graph,
    m: &'a Mapping,
    parts: Vec<Vec<Part>>,
    part_of: Vec<Option<(usize, usize)>>,
    stage_of: Vec<Option<usize>>,
    links: Vec<crate::design::Link>,
    active: Vec<bool>,
    capacity: Vec<u64>,
}

/// "branch.unit" of stage s.
fn stage_name(design: &Design, m: &Mapping, s: usize) -> String {
    let st = &m.stages[s];
    format!(
        "{}.{}",
        design.branches[st.branch].name,
        m.unit(design, s).name
    )
}

/// The hand-offs of graph `g` mapped as `m` onto `design`.
pub fn decide(design: &Design, g: &Graph, m: &Mapping) -> Handoffs {
    let mut out = Handoffs::default();
    if m.single {
        return out;
    }
    let plan = Plan::new(design, g, m);
    let fed = plan.fed();
    let mut producers: Vec<usize> = fed.iter().map(|f| f.feeder).collect();
    producers.sort_unstable();
    producers.dedup();
    for p in producers {
        let consumers: Vec<&Fed> = fed.iter().filter(|f| f.feeder == p).collect();
        let mut candidates: Vec<&String> = consumers.iter().flat_map(|f| &f.tensors).collect();
        candidates.sort();
        candidates.dedup();
        let mut chosen: Option<Handoff> = None;
        for t in candidates {
            let to_memory = |out: &mut Handoffs, why: &str| {
                for f in consumers.iter().filter(|f| f.tensors.contains(t)) {
                    out.memory.push((f.stage, t.clone(), why.to_string()));
                }
            };
            let h = match plan.handoff(t, p, &consumers) {
                Ok(h) => h,
                Err(why) => {
                    to_memory(&mut out, &why);
                    continue;
                }
            };
            // A buffer holds one tensor's rows: the unit hands on the one that saves the
            // most beats of memory.
            let hands = |x: &str| {
                format!("the unit feeding it hands {x} to its buffer, which holds one tensor")
            };
            match &chosen {
                Some(c) if c.size >= h.size => {
                    for &k in &h.consumers {
                        out.memory.push((k, t.clone(), hands(&c.tensor)));
                    }
                }
                _ => {
                    if let Some(c) = chosen.take() {
                        for &k in &c.consumers {
                            out.memory.push((k, c.tensor.clone(), hands(t)));
                        }
                    }
                    chosen = Some(h);
                }
            }
        }
        if let Some(mut h) = chosen {
            h.base = HANDOFF_BASE + out.on_chip.len() as u64 * HANDOFF_REGION;
            out.on_chip.push(h);
        }
    }
    out
}

impl<'a> Plan<'a> {
    fn new(design: &'a Design, g: &'a Graph, m: &'a Mapping) -> Plan<'a> {
        let parts = m.parts(design, g);
        let mut part_of: Vec<Option<(usize, usize)>> = vec![None; design.cores().len()];
        for (k, ps) in parts.iter().enumerate() {
            for (r, p) in ps.iter().enumerate() {
                part_of[p.engine] = Some((k, r));
            }
        }
        let mut stage_of = vec![None; g.nodes.len()];
        for (k, st) in m.stages.iter().enumerate() {
            for &i in &st.nodes {
                stage_of[i] = Some(k);
            }
        }
        let links = design.links();
        let active: Vec<bool> = part_of.iter().map(Option::is_some).collect();
        let capacity = token_capacity(design, &links, &active);
        Plan {
            design,
            g,
            m,
            parts,
            part_of,
            stage_of,
            links,
            active,
            capacity,
        }
    }

    fn name(&self, s: usize) -> String {
        stage_name(self.design, self.m, s)
    }

    /// Every stage with hand-off buffers whose feeder runs a stage, and the tensors it
    /// reads that only that stage writes.
    fn fed(&self) -> Vec<Fed> {
        let g = self.g;
        let mut fed = Vec::new();
        for (k, ps) in self.parts.iter().enumerate() {
            if self.m.unit(self.design, k).handoff_depth == 0 {
                continue;
            }
            let feeder = self.design.handoff_feeder(ps[0].engine);
            let Some((p, _)) = feeder.and_then(|f| self.part_of[f]) else {
                continue;
            };
            let mut tensors: Vec<String> = Vec::new();
            for &j in &self.m.stages[k].nodes {
                for t in g.nodes[j].reads() {
                    let mut ws = (0..g.nodes.len()).filter(|&i| g.nodes[i].tensor() == t);
                    let only_p =
                        ws.clone().next().is_some() && ws.all(|i| self.stage_of[i] == Some(p));
                    if only_p && !tensors.iter().any(|x| x == t) {
                        tensors.push(t.to_string());
                    }
                }
            }
            fed.push(Fed {
                stage: k,
                feeder: p,
                tensors,
            });
        }
        fed
    }

    /// Tensor t handed on chip by stage p to the stages among `consumers` that read it, or
    /// why it goes through memory.
    fn handoff(&self, t: &str, p: usize, consumers: &[&Fed]) -> Result<Handoff, String> {
        let g = self.g;
        let reader_stages: Vec<usize> = g
            .consumers(t)
            .iter()
            .filter_map(|&i| self.stage_of[i])
            .collect();
        if g.is_output(t) {
            return Err("it is a model output".to_string());
        }
        let in_concat = |c: &crate::compiler::passes::legalize::Concat| {
            c.inputs.iter().any(|x| x == t) || c.name == t
        };
        if g.concats.iter().any(in_concat) {
            return Err("it is part of a concat stored in place".to_string());
        }
        if let Some(&s) = reader_stages
            .iter()
            .find(|&&s| !consumers.iter().any(|f| f.stage == s))
        {
            return Err(format!(
                "unit {} reads it too and has no hand-off buffer it feeds",
                self.name(s)
            ));
        }
        let readers: Vec<usize> = consumers
            .iter()
            .map(|f| f.stage)
            .filter(|s| reader_stages.contains(s))
            .collect();
        if let Some(f) = consumers
            .iter()
            .find(|f| readers.contains(&f.stage) && f.tensors.len() > 1)
        {
            return Err(format!(
                "the unit reads {} tensors of the unit feeding it ({}) and its buffer holds one",
                f.tensors.len(),
                f.tensors.join(", ")
            ));
        }
        let row = row_beats(self.design, g, t);
        let frame_beats: Vec<u64> = self.parts[p]
            .iter()
            .map(|pp| written_rows(g, t, pp).len() as u64 * row)
            .collect();
        let live_beats = self
            .live(t, p, &readers, row, &frame_beats)
            .map_err(|mut why| {
                if readers.len() > 1 {
                    why.push_str(" (it goes on chip to every unit that reads it, or to none)");
                }
                why
            })?;
        Ok(Handoff {
            tensor: t.to_string(),
            producer: p,
            consumers: readers,
            base: 0,
            size: g.shape_of(t)[0] as u64 * row,
            frame_beats,
            live_beats,
        })
    }

    /// The most beats of tensor t (rows of `row` beats) live in any reader's buffer, or why
    /// they do not fit one.
    fn live(
        &self,
        t: &str,
        p: usize,
        readers: &[usize],
        row: u64,
        frame_beats: &[u64],
    ) -> Result<u64, String> {
        let mut live = 0u64;
        for &k in readers {
            let depth = u64::from(self.m.unit(self.design, k).handoff_depth);
            for (r, cp) in self.parts[k].iter().enumerate() {
                let pp = &self.parts[p][r];
                let link = self
                    .links
                    .iter()
                    .position(|l| l.from == pp.engine && l.to == cp.engine)
                    .expect("a hand-off buffer's feeder is linked to it");
                let feeds: Vec<usize> = self
                    .links
                    .iter()
                    .filter(|l| l.to == cp.engine && self.active[l.from])
                    .map(|l| l.from)
                    .collect();
                let needs = band_needs(self.g, &self.parts, &self.part_of, cp, &feeds);
                let capacity = self.capacity[link];
                let l = live_beats(self.g, t, pp, cp, &needs, capacity, (row, frame_beats[r]));
                if l > depth {
                    return Err(format!(
                        "its rows live in unit {}'s hand-off buffer need {l} beats ({} rows of {row} beats) and it holds {depth}",
                        self.name(k),
                        l.div_ceil(row)
                    ));
                }
                live = live.max(l);
            }
        }
        Ok(live)
    }
}

/// The tensor rows node writes of its tensor once its own rows `..end` are done.
fn tensor_end(n: &crate::compiler::passes::legalize::Node, end: usize) -> usize {
    match (&n.place, end) {
        (_, 0) => 0,
        (Some(p), e) => p.offset.0 + p.stride * (e - 1) + 1,
        (None, e) => e,
    }
}

/// The tensor rows producer replica `pp` writes of tensor `t` in a frame.
fn written_rows(g: &Graph, t: &str, pp: &Part) -> std::ops::Range<usize> {
    let writers =
        || (0..g.nodes.len()).filter(|&i| g.nodes[i].tensor() == t && !pp.rows[i].is_empty());
    let lo = writers()
        .map(|i| tensor_start(&g.nodes[i], pp.rows[i].start))
        .min()
        .unwrap_or(0);
    let hi = writers()
        .map(|i| tensor_end(&g.nodes[i], pp.rows[i].end))
        .max()
        .unwrap_or(0);
    lo..hi.max(lo)
}

/// The first tensor row node n writes of its tensor with its own row `start`.
fn tensor_start(n: &crate::compiler::passes::legalize::Node, start: usize) -> usize {
    match &n.place {
        Some(p) => p.offset.0 + p.stride * start,
        None => start,
    }
}

/// The most beats of tensor `t` live in a consumer replica's buffer (`cp`, fed by the
/// producer replica `pp` through a link whose FIFO holds `capacity` tokens, taking
/// `needs[b]` of a frame's tokens before its band b) over two frames of a run: rows of
/// `row` beats, `frame` beats a frame.
fn live_beats(
    g: &Graph,
    t: &str,
    pp: &Part,
    cp: &Part,
    needs: &[usize],
    capacity: u64,
    (row, frame): (u64, u64),
) -> u64 {
    const FRAMES: usize = 2;
    let (bp, bc) = (pp.bands(), cp.bands());
    // The beat after the last row written once producer band j is done (of a frame).
    let written: Vec<u64> = (0..bp)
        .map(|j| {
            (0..g.nodes.len())
                .filter(|&i| g.nodes[i].tensor() == t && !pp.rows[i].is_empty())
                .map(|i| tensor_end(&g.nodes[i], pp.ends[j][i]))
                .max()
                .unwrap_or(0) as u64
                * row
        })
        .collect();
    // The first beat consumer band b reads (None: it reads none).
    let first_read: Vec<Option<u64>> = (0..bc)
        .map(|b| {
            let rows = cp.band_rows(b);
            (0..g.nodes.len())
                .filter(|&j| !rows[j].is_empty())
                .flat_map(|j| reads(g, &g.nodes[j], rows[j].clone()))
                .filter(|(u, r)| u == t && !r.is_empty())
                .map(|(_, r)| r.start as u64 * row)
                .min()
        })
        .collect();
    let mut live = 0;
    for big_j in 0..FRAMES * bp {
        let (f, j) = (big_j / bp, big_j % bp);
        let end = f as u64 * frame + written[j];
        // Tokens the consumer has surely taken when band J starts writing, and so the
        // first consumer band that may still be reading.
        let taken = big_j as i64 - capacity as i64;
        let first = (0..FRAMES * bc)
            .find(|&i| taken <= 0 || ((i / bc) * bp + needs[i % bc]) as i64 >= taken);
        let Some(first) = first else { continue };
        let read = (first..FRAMES * bc)
            .find_map(|i| first_read[i % bc].map(|b| (i / bc) as u64 * frame + b));
        if let Some(read) = read {
            live = live.max(end.saturating_sub(read));
        }
    }
    live
}

impl Handoffs {
    /// What stage k's report says of the hand-offs: the tensor it hands on chip and to
    /// which units, the one it reads from its buffers (with the beats live in them), and
    /// those it reads from memory though it has a buffer, with why.
    pub fn notes(&self, design: &Design, m: &Mapping, k: usize) -> Vec<String> {
        let name = |s: usize| stage_name(design, m, s);
        let mut notes = Vec::new();
        for h in &self.on_chip {
            if h.producer == k {
                let to: Vec<String> = h.consumers.iter().map(|&c| name(c)).collect();
                notes.push(format!("hands {} on chip to {}", h.tensor, to.join(", ")));
            }
            if h.consumers.contains(&k) {
                notes.push(format!(
                    "reads {} from its hand-off buffers (at most {} of {} beats live)",
                    h.tensor,
                    h.live_beats,
                    m.unit(design, k).handoff_depth
                ));
            }
        }
        for (c, t, why) in &self.memory {
            if *c == k {
                notes.push(format!("reads {t} from memory: {why}"));
            }
        }
        notes
    }

    /// What of the hand-offs stage k's schedule depends on: the tensors it hands on chip or
    /// reads from its buffers, with their virtual beats.
    pub fn key(&self, k: usize) -> String {
        let mine: Vec<(&str, u64, bool)> = self
            .on_chip
            .iter()
            .filter(|h| h.producer == k || h.consumers.contains(&k))
            .map(|h| (h.tensor.as_str(), h.base, h.producer == k))
            .collect();
        format!("{mine:?}")
    }
}
