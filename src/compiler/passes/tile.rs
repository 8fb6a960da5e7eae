//! tile: choose, for every layer, the output tile (th rows x tw columns of output pixels) so
//! that a tile's input window fits half the input buffer (the other half is being loaded),
//! its accumulator rows fit one accumulator bank (less the row that holds the bias), and its
//! output rows fit half the output buffer (double-buffered), or a quarter with a residual
//! operand (loaded into the output rows, four tiles in flight). Channels are tiled by cpf
//! (input) and kpf (output); kernel taps are separate matmuls that accumulate.

use super::allocate::{window, Alloc};
use super::legalize::{Graph, Node};
use crate::compiler::CompileError;
use crate::design::Design;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    pub th: usize,
    pub tw: usize,
    /// Output-channel tiles that share each loaded input window (their accumulator rows sit
    /// side by side in one bank).
    pub g: usize,
}

/// One tile of a layer's output: rows `oy0..oy0 + h`, columns `ox0..ox0 + w`, and the
/// output-channel tiles `octs` of its group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tile {
    pub oy0: usize,
    pub ox0: usize,
    pub h: usize,
    pub w: usize,
    pub octs: std::ops::Range<usize>,
}

impl Tiling {
    /// The tiles of an output of shape `[oh, ow, cout]` with `t` channels per channel tile,
    /// in schedule order: channel groups outermost, then rows of tiles, then tiles of a
    /// row, so a group's weights, once loaded, serve every spatial tile while they stay in
    /// the weight buffer (`schedule` keeps them); edge tiles are cut to the output.
    pub fn tiles(&self, shape: [usize; 3], t: usize) -> Vec<Tile> {
        self.tiles_in(shape, t, 0..shape[0])
    }

    /// As [`Tiling::tiles`], for output rows `rows` only (the band an engine replica
    /// computes); tile rows start at the band's first row.
    pub fn tiles_in(
        &self,
        [oh, ow, cout]: [usize; 3],
        t: usize,
        rows: std::ops::Range<usize>,
    ) -> Vec<Tile> {
        let octs = cout.div_ceil(t);
        let mut out = Vec::new();
        let end = rows.end.min(oh);
        for og in (0..octs).step_by(self.g) {
            for oy0 in (rows.start..end).step_by(self.th) {
                for ox0 in (0..ow).step_by(self.tw) {
                    out.push(Tile {
                        oy0,
                        ox0,
                        h: self.th.min(end - oy0),
                        w: self.tw.min(ow - ox0),
                        octs: og..octs.min(og + self.g),
                    });
                }
            }
        }
        out
    }
}

/// Output-channel tiles a convolution tries to group: each input window is then loaded once
/// for `GROUP` weight tiles, which keeps large layers compute-bound.
const GROUP: usize = 4;

/// Output-channel tiles a convolution whose output is one spatial tile groups when the
/// accumulator bank has room for more than `GROUP` (a 7x7 map is one 49-row tile, and
/// each group reloads every input-channel window, which with 4 tiles a group made the
/// memory port the bottleneck of ResNet-50's last stage and fc layer on 32x32).
const MAX_GROUP: usize = 8;

/// Scratchpad regions the schedule uses.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub input_half: usize,
    pub acc_bank: usize,
    pub acc_rows: usize,
    pub out_quarter: usize,
    pub weight_slots: usize,
}

pub fn budget(design: &Design, g: &Graph) -> Budget {
    let b = g.unit.buffers;
    let _ = design;
    Budget {
        input_half: b.input_depth as usize / 2,
        acc_bank: b.accumulator_depth as usize,
        acc_rows: b.accumulator_depth as usize - 1,
        out_quarter: b.output_depth as usize / 4,
        // A weight tile is cpf rows, plus the rows of column scales in MX designs.
        weight_slots: (b.weight_depth / g.unit.weight_tile_rows()) as usize,
    }
}

/// Every layer of a stage (`nodes`, of graph `g` with the stage's unit) split into tiles
/// that fit its unit's scratchpads; the other nodes get a placeholder tiling that nothing
/// schedules.
pub fn run(
    design: &Design,
    g: &Graph,
    alloc: &Alloc,
    nodes: &[usize],
) -> Result<Vec<Tiling>, CompileError> {
    let mut mine = vec![false; g.nodes.len()];
    for &i in nodes {
        mine[i] = true;
    }
    let bud = budget(design, g);
    if !g.unit.buffers.accumulator_double_buffer {
        return Err(CompileError::new(
            None,
            "the schedule alternates tiles between the two accumulator banks",
            "set buffers.accumulator_double_buffer = true",
        ));
    }
    if bud.weight_slots < 2 {
        return Err(CompileError::new(
            None,
            "the weight buffer must hold two weight tiles (2 x cpf rows)",
            "raise buffers.weight_depth",
        ));
    }
    let mut out = Vec::new();
    for (i, n) in g.nodes.iter().enumerate() {
        if !mine[i] {
            out.push(Tiling { th: 1, tw: 1, g: 1 });
            continue;
        }
        if let crate::model::lower::Lowered::Upsample { factor } = n.work {
            out.push(upsample_tiling(&bud, n, factor)?);
            continue;
        }
        if let Some(work) = n.work.rows() {
            out.push(rows_tiling(&bud, &g.unit, n, work)?);
            continue;
        }
        if i > 0 && g.nodes[i - 1].fused_into_next {
            out.push(fused_tiling(design, &bud, g, alloc, i)?);
            continue;
        }
        if n.window {
            out.push(window_tiling(design, &bud, g, alloc, n)?);
            continue;
        }
        let (mut kh, mut kw, mut s, _) = window(n);
        if let Some((k, ps)) = n.pool {
            // A fused pool: the window covers every pool tap of every pooled pixel.
            kh += (k - 1) * s;
            kw += (k - 1) * s;
            s *= ps;
        }
        if kh == 1 && kw == 1 {
            // A 1x1 window: the load takes every s-th pixel of every s-th row, so the
            // window holds only the pixels the matmul reads.
            s = 1;
        }
        let [oh, ow, cout] = n.out;
        let octs = cout.div_ceil(g.unit.kpf as usize);
        // Pooling and add layers read one input-channel tile per output-channel tile, so
        // grouping would not save a load.
        // A fused max-pool keeps every member's running maximum in the output buffer until
        // its last pool tap, and members take the two output halves in turn: at most two.
        let want = if n.pool.is_some() {
            octs.min(GROUP).min(2)
        } else if n.weighted() {
            octs.min(GROUP)
        } else {
            1
        };
        // Output rows: half the output buffer, or a quarter when residual operands are
        // loaded into them (a group's members take the four quarters in turn).
        let out_rows = n.out_rows(bud.out_quarter);
        // A group needs its accumulator rows plus one bias row per member (two with
        // per-channel requantization) in one bank; small tiles make the preload of the next
        // weights the bottleneck, so never shrink a tile below the rows that hide it for the
        // sake of grouping.
        let min_rows = crate::compiler::cost::preload_rows(g.unit.cpf) as usize;
        let br = n.bias_rows();
        // (A fused row program's constants and table take rows of every bank.)
        let acc_bank = bud.acc_bank - n.then_rows(g.unit.kpf as usize);
        let g0 = want.min((acc_bank / (min_rows + br)).max(1));
        let rows_cap = ((acc_bank - br * g0) / g0).min(bud.acc_rows).min(out_rows);
        // The tiles that take the fewest cycles: each tile's matmul as the estimator counts
        // one that preloads the next weights (`estimate::matmul_cycles`), summed over the
        // tiles of the output, the remainder tiles at the right and bottom edges included,
        // plus two cycles per tile for its vector and store issue.
        let cost = |th: usize, tw: usize| -> u64 {
            over_tiles(oh, ow, th, tw, |h, w| {
                crate::compiler::cost::matmul_cycles((h * w) as u64, g.unit.cpf, true) + 2
            })
        };
        let mut best: Option<(u64, Tiling)> = None;
        // Widest first among equal costs: a tile of whole rows reads and writes one
        // contiguous span of each channel tile, so its first window depends only on the
        // layer before's first stores, where a column strip's window spans every row (and
        // waits for that layer's last group).
        for tw in (1..=ow).rev() {
            let win_w = (tw - 1) * s + kw;
            if win_w * kh > bud.input_half || tw > rows_cap {
                continue;
            }
            let th_in = bud.input_half / win_w;
            let th_max = ((th_in - kh) / s + 1).min(rows_cap / tw).min(oh);
            for th in 1..=th_max {
                let c = cost(th, tw);
                if best.is_none_or(|(b, _)| c < b) {
                    best = Some((c, Tiling { th, tw, g: 1 }));
                }
            }
        }
        let best = best.map(|(_, t)| t);
        let mut t = best.ok_or_else(|| {
            CompileError::new(
                Some(&n.name),
                format!(
                    "one output pixel needs a {kh}x{kw} input window, more than half the input buffer ({} rows)",
                    bud.input_half
                ),
                "raise buffers.input_depth",
            )
        })?;
        let cap = (acc_bank / (t.th * t.tw + br)).max(1);
        t.g = g0.min(cap);
        if t.th >= oh && t.tw >= ow && want == octs.min(GROUP) && n.pool.is_none() {
            // One spatial tile: every group reloads all input windows, so take the largest
            // group that fits and divides the channel tiles evenly (uneven groups leave
            // the last one short).
            let even = (1..=octs.min(MAX_GROUP).min(cap))
                .rev()
                .find(|d| octs % d == 0);
            t.g = t.g.max(even.unwrap_or(1));
        }
        out.push(t);
    }
    Ok(out)
}

/// The tiling of a node in the window unit: one channel tile per group, and the output
/// tile whose input window fits half the input buffer and the line buffer and whose rows
/// fit the accumulator bank (less the bias row) and the output rows, with the fewest
/// estimated cycles: per tile, the larger of the window unit's (`estimate::window_cycles`)
/// and the memory port's (the window's input rows and the tile's output rows), remainder
/// tiles at the edges included, plus two cycles for its vector and store issue.
fn window_tiling(
    design: &Design,
    bud: &Budget,
    g: &Graph,
    alloc: &Alloc,
    n: &Node,
) -> Result<Tiling, CompileError> {
    window_plan(design, bud, g, alloc.act_beats, n)
        .map(|(_, t)| t)
        .ok_or_else(|| {
            let (kh, kw, _, _) = window(n);
            CompileError::new(
                Some(&n.name),
                format!(
                    "the window unit's input window for one output pixel ({kh}x{kw}) does not fit half the input buffer ({} rows) or the line buffer ({} pixels)",
                    bud.input_half,
                    g.unit.window.map_or(0, |w| w.line)
                ),
                "raise buffers.input_depth or window.line",
            )
        })
}

/// The best tiling of a node in the window unit (`window_tiling`) and its estimated cycles,
/// with activation rows of `act_beats` beats; `None` when no tile fits.
fn window_plan(
    design: &Design,
    bud: &Budget,
    g: &Graph,
    act_beats: u64,
    n: &Node,
) -> Option<(u64, Tiling)> {
    let (kh, kw, s, _) = window(n);
    let line = g.unit.window.map_or(0, |w| w.line as usize);
    let [oh, ow, _] = n.out;
    let out_rows = n.out_rows(bud.out_quarter);
    let rows_cap = (bud.acc_bank - n.bias_rows()).min(out_rows);
    let weights = if n.stencil().taps == crate::model::lower::Taps::Max {
        0
    } else {
        (kh * kw) as u64
    };
    let bytes_per_row = act_beats * u64::from(design.memory.data_width_bits / 8);
    let bw = u64::from(design.memory.bytes_per_cycle).max(1);
    let cost = |th: usize, tw: usize| -> u64 {
        over_tiles(oh, ow, th, tw, |h, w| {
            let pixels = (((h - 1) * s + kh) * ((w - 1) * s + kw)) as u64;
            let unit = weights + pixels + crate::compiler::cost::WINDOW_PIPE;
            let memory = (pixels + (h * w) as u64) * bytes_per_row / bw;
            unit.max(memory) + 2
        })
    };
    let mut best: Option<(u64, Tiling)> = None;
    for tw in 1..=ow.min(rows_cap) {
        let win_w = (tw - 1) * s + kw;
        if win_w > line || win_w * kh > bud.input_half {
            continue;
        }
        let th_in = bud.input_half / win_w;
        let th_max = ((th_in - kh) / s + 1).min(rows_cap / tw).min(oh);
        for th in 1..=th_max {
            let c = cost(th, tw);
            if best.is_none_or(|(b, _)| c < b) {
                best = Some((c, Tiling { th, tw, g: 1 }));
            }
        }
    }
    // Every channel tile runs every spatial tile.
    let octs = n.out[2].div_ceil(g.unit.cpf as usize) as u64;
    best.map(|(c, t)| (c * octs, t))
}

/// The tiling of node `i`, a depthwise convolution in the window unit whose input the node
/// before computes on chip (`schedule/fused.rs`): one group of every channel tile per
/// spatial tile (the expand's input windows serve them all), and the output tile whose
/// input window fits a quarter of the input buffer with every one of the expand's
/// input-channel tiles, the line buffer, and with the expand's rows and the two bias rows
/// the accumulator bank, with the fewest estimated cycles: per spatial tile the largest of
/// the compute queue's (every channel tile's expand matmuls and window), the vector unit's
/// (the expand's rows and the outputs) and the memory port's (the expand's input windows
/// and the outputs).
fn fused_tiling(
    design: &Design,
    bud: &Budget,
    g: &Graph,
    alloc: &Alloc,
    i: usize,
) -> Result<Tiling, CompileError> {
    fused_plan(design, bud, g, alloc.act_beats, i)
        .map(|(_, t)| t)
        .ok_or_else(|| {
            CompileError::new(
                Some(&g.nodes[i].name),
                format!(
                    "the expand before it keeps its output on chip, but no output tile's window of every input-channel tile fits a quarter of the input buffer ({} rows)",
                    bud.input_half / 2
                ),
                "raise buffers.input_depth",
            )
        })
}

/// The best fused tiling of node `i` (`fused_tiling`) and its estimated cycles (the expand
/// before it included), with activation rows of `act_beats` beats; `None` when no tile fits.
fn fused_plan(
    design: &Design,
    bud: &Budget,
    g: &Graph,
    act_beats: u64,
    i: usize,
) -> Option<(u64, Tiling)> {
    let n = &g.nodes[i];
    let (kh, kw, s, _) = window(n);
    let line = g.unit.window.map_or(0, |w| w.line as usize);
    let t = g.unit.cpf as usize;
    let [oh, ow, c] = n.out;
    let octs = c.div_ceil(t);
    let icts = g.shape_of(&g.nodes[i - 1].input)[2].div_ceil(t);
    let quarter = bud.input_half / 2;
    // Both layers' bias rows (and scale rows) at the bank's end.
    let bias_rows = n.bias_rows() + g.nodes[i - 1].bias_rows();
    let out_rows = n.out_rows(bud.out_quarter);
    let bytes_per_row = act_beats * u64::from(design.memory.data_width_bits / 8);
    let bw = u64::from(design.memory.bytes_per_cycle).max(1);
    let cpf = g.unit.cpf;
    let cost = |th: usize, tw: usize| -> u64 {
        over_tiles(oh, ow, th, tw, |h, w| {
            let area = (((h - 1) * s + kh) * ((w - 1) * s + kw)) as u64;
            let outs = (h * w) as u64;
            let expand = icts as u64 * crate::compiler::cost::matmul_cycles(area, cpf, true)
                + crate::compiler::cost::preload_rows(cpf);
            let compute = octs as u64
                * (expand + (kh * kw) as u64 + area + crate::compiler::cost::WINDOW_PIPE);
            let vector = octs as u64 * (area + outs + 14);
            let memory = (icts as u64 * area + octs as u64 * outs) * bytes_per_row / bw;
            compute.max(vector).max(memory)
        })
    };
    let mut best: Option<(u64, Tiling)> = None;
    for tw in 1..=ow {
        let win_w = (tw - 1) * s + kw;
        if win_w > line || win_w * kh * icts > quarter {
            continue;
        }
        let th_in = quarter / (win_w * icts);
        for th in 1..=((th_in - kh) / s + 1).min(oh) {
            let area = ((th - 1) * s + kh) * win_w;
            if th * tw > out_rows || th * tw + area + bias_rows > bud.acc_bank {
                continue;
            }
            let c = cost(th, tw);
            if best.is_none_or(|(b, _)| c < b) {
                best = Some((c, Tiling { th, tw, g: octs }));
            }
        }
    }
    best
}

/// An upsample layer's tiling: whole output rows, each one matmul that repeats every input
/// pixel.
fn upsample_tiling(bud: &Budget, n: &Node, factor: usize) -> Result<Tiling, CompileError> {
    let [oh, ow, _] = n.out;
    let in_w = ow / factor;
    let rows_cap = bud.acc_rows.min(2 * bud.out_quarter);
    let th = (rows_cap / ow)
        .min(oh)
        .min((bud.input_half / in_w).saturating_sub(1) * factor);
    if th == 0 {
        return Err(CompileError::new(
            Some(&n.name),
            format!("an upsampled row of {ow} pixels does not fit the accumulator ({} rows) or its input row the input buffer", rows_cap),
            "upsample a narrower tensor, or raise buffers.accumulator_depth and buffers.output_depth",
        ));
    }
    Ok(Tiling {
        th: oh.div_ceil(oh.div_ceil(th)),
        tw: ow,
        g: 1,
    })
}

/// A row program's tiling: whole rows of pixels, as many as the row unit's statistics
/// hold and as fit half the output buffer with every channel tile of one run of each (a
/// group, or one tile of an element-wise program: `RowWork::runs`; the input is read there
/// and the output written in place; runs go one after another), and the program's
/// accumulator rows in one bank.
fn rows_tiling(
    bud: &Budget,
    u: &crate::design::Unit,
    n: &Node,
    work: &crate::model::lower::RowWork,
) -> Result<Tiling, CompileError> {
    let [oh, ow, c] = n.out;
    let kpf = u.kpf as usize;
    let tiles = c.div_ceil(kpf) / work.runs(c.div_ceil(kpf));
    // An element-wise program keeps no statistics.
    let stats = match work.elementwise() {
        true => usize::MAX,
        false => u.rows.map_or(0, |r| r.stats as usize),
    };
    let half = 2 * bud.out_quarter;
    let image = crate::compiler::rowprog::image(work, kpf, c).rows.len();
    if image > bud.acc_bank {
        return Err(CompileError::new(
            Some(&n.name),
            format!("the {} pass(es) read {image} accumulator rows of constants and per-channel parameters ({tiles} channel tiles), more than an accumulator bank's {} rows", work.passes.len(), bud.acc_bank),
            "raise buffers.accumulator_depth, or use a wider array",
        ));
    }
    let th = (stats / ow).min(half / (tiles * ow)).min(oh);
    if th == 0 {
        return Err(CompileError::new(
            Some(&n.name),
            format!("a row of {ow} pixels of {c} channels ({tiles} channel tiles each) must fit the row unit's {stats} statistics entries and half the output buffer ({half} rows)"),
            "raise [rows] stats and buffers.output_depth, or give the tensor fewer pixels per row",
        ));
    }
    Ok(Tiling {
        th: oh.div_ceil(oh.div_ceil(th)),
        tw: ow,
        g: 1,
    })
}

/// The sum of `cost(h, w)` over the output tiles of an `oh` x `ow` map cut into `th` x `tw`
/// tiles: the whole tiles and the remainder tiles at the right and bottom edges, each counted
/// with its own size.
fn over_tiles(
    oh: usize,
    ow: usize,
    th: usize,
    tw: usize,
    cost: impl Fn(usize, usize) -> u64,
) -> u64 {
    let sizes = |n: usize, t: usize| [(n / t, t), (usize::from(!n.is_multiple_of(t)), n % t)];
    let mut total = 0;
    for (nh, h) in sizes(oh, th) {
        for (nw, w) in sizes(ow, tw) {
            if nh * nw > 0 {
                total += (nh * nw) as u64 * cost(h, w);
            }
        }
    }
    total
}
