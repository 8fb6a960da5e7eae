//! schedule: the instruction stream in program order. For every layer, spatial tile and
//! group of `g` output-channel tiles: load the biases, then for every input-channel tile
//! load the input window once (alternating input-buffer halves) and, for every
//! output-channel tile of the group and every kernel tap, stream it through the array into
//! that tile's accumulator rows (`pass.rs`). Weight tiles are loaded in groups into a ring
//! of weight-buffer slots, and each matmul preloads the next one's weights while it
//! streams. Then each output-channel tile is post-processed in the vector unit and stored
//! (`finish.rs`). Groups alternate accumulator banks and tiles alternate output-buffer
//! halves, so the next group's loads and matmuls overlap this group's vector and store work
//! once `sync` adds the semaphores. Every instruction lists the buffer rows and memory beats
//! it reads and writes. Upsampling and row programs have their own schedules (`upsample.rs`,
//! `rows.rs`).

mod finish;
mod fused;
mod gap;
mod hoist;
mod pass;
mod rows;
mod upsample;
mod window;

use super::allocate::{tile_rows, window, Alloc, Placed};
use super::legalize::{Graph, Node};
use super::map::Part;
use super::tile::{budget, Budget, Tiling};
use crate::compiler::TensorLayout;
use crate::design::Design;
use crate::isa::{Buffer, Instr, Op as IsaOp, Transfer};
use crate::model::lower::{Lowered, Taps};
use crate::model::{Combine, Requant};

pub use crate::compiler::step::{Res, Step};

/// Beats touched by a two-level strided transfer of rows of `beats` beats.
fn span(base: u64, c0: u64, s0: u64, c1: u64, s1: u64, beats: u64) -> Res {
    let last = base + (c0.max(1) - 1) * s0 + (c1.max(1) - 1) * s1;
    Res::Dram(base, last + beats)
}

impl NodeCtx<'_> {
    /// The pixel step of an input-window load: a 1x1 window at stride s needs only every
    /// s-th pixel of every s-th row, so the load skips the others (4x fewer beats for a
    /// stride-2 downsample) and the matmul reads the window densely; any other window is
    /// loaded whole.
    fn load_step(&self) -> usize {
        if self.kh_e == 1 && self.kw_e == 1 && !self.n.window {
            self.s_e
        } else {
            1
        }
    }
}

/// A transfer of `h` rows of `w` pixels of tensor `t` starting at its padded pixel (y, x) of
/// channel tile `ct`, to or from scratchpad rows from `spad_addr`.
fn pixels(
    t: &TensorLayout,
    ct: usize,
    (y, x): (usize, usize),
    (h, w): (u64, u64),
    buffer: Buffer,
    spad_addr: u64,
    prec: usize,
) -> (Transfer, Res) {
    every(t, ct, (y, x), (h, w), 1, (buffer, spad_addr), prec)
}

/// Like `pixels`, but every `step`-th pixel of every `step`-th row (a phase of a
/// transposed convolution writing its share of the output, or the window of a strided
/// 1x1 convolution).
fn every(
    t: &TensorLayout,
    ct: usize,
    (y, x): (usize, usize),
    (h, w): (u64, u64),
    step: u64,
    (buffer, spad_addr): (Buffer, u64),
    prec: usize,
) -> (Transfer, Res) {
    let base = t.addr(ct, y, x);
    let (s0, s1) = (step * t.pixel_stride, step * t.wp() as u64 * t.pixel_stride);
    let transfer = Transfer {
        buffer,
        spad_addr,
        ext_addr: base,
        count0: w,
        stride0: s0,
        count1: h,
        stride1: s1,
        prec: prec as u64,
        ..Transfer::default()
    };
    (transfer, span(base, w, s0, h, s1, t.beats))
}

/// Like `every`, from a first pixel (y, x) in stored coordinates that may lie outside the
/// stored tensor (above, left of it, or past its end): the rows and columns the window
/// takes there are the load's padding, zero rows that read no memory (`Transfer::pad_*`).
/// The transfer's first beat is the address pixel (y, x) would have (modulo 2^32: the
/// hardware adds the strides to it), and the region read is that of the rows inside.
pub fn padded(
    t: &TensorLayout,
    ct: usize,
    (y, x): (i64, i64),
    (h, w): (u64, u64),
    step: u64,
    (buffer, spad_addr): (Buffer, u64),
    prec: usize,
) -> (Transfer, Res) {
    // Iterations outside 0..n at the start and the end of a loop from `first` by `step`.
    let outside = |first: i64, count: u64, n: usize| -> (u64, u64) {
        let step = step as i64;
        let before = if first < 0 {
            (-first + step - 1) / step
        } else {
            0
        };
        let last_inside = (n as i64 - 1 - first).div_euclid(step);
        let after = count as i64 - 1 - last_inside;
        let clip = |v: i64| v.clamp(0, count as i64) as u64;
        (clip(before), clip(after))
    };
    let (top, bottom) = outside(y, h, t.hp());
    let (left, right) = outside(x, w, t.wp());
    if (top, bottom, left, right) == (0, 0, 0, 0) {
        return every(
            t,
            ct,
            (y as usize, x as usize),
            (h, w),
            step,
            (buffer, spad_addr),
            prec,
        );
    }
    let row = t.wp() as i64 * t.pixel_stride as i64;
    let addr = |yy: i64, xx: i64| t.addr(ct, 0, 0) as i64 + yy * row + xx * t.pixel_stride as i64;
    let (s0, s1) = (step * t.pixel_stride, step * t.wp() as u64 * t.pixel_stride);
    let transfer = Transfer {
        buffer,
        spad_addr,
        ext_addr: addr(y, x).rem_euclid(1 << crate::isa::EXT_ADDR_BITS) as u64,
        count0: w,
        stride0: s0,
        count1: h,
        stride1: s1,
        prec: prec as u64,
        pad_top: top,
        pad_bottom: bottom,
        pad_left: left,
        pad_right: right,
        ..Transfer::default()
    };
    let inside = top + bottom < h && left + right < w;
    let res = if inside {
        let (r0, c0) = (y + (top * step) as i64, x + (left * step) as i64);
        let (rows, cols) = (h - top - bottom, w - left - right);
        span(addr(r0, c0) as u64, cols, s0, rows, s1, t.beats)
    } else {
        Res::Dram(0, 0)
    };
    (transfer, res)
}

/// The constants of one node: its window, layouts, precisions and post-processing.
struct NodeCtx<'a> {
    ni: usize,
    n: &'a Node,
    /// Kernel, stride and padding of the matmul; with a fused max-pool, the effective
    /// window and stride of all pool taps together.
    kh: usize,
    kw: usize,
    s: usize,
    pad: usize,
    /// The `pad_value` bit pattern of the layer's padding (0: zeros).
    pad_value: u64,
    /// The matmul's operand zero points as the instruction holds them (zero_input,
    /// zero_weight).
    zero_points: (u64, u64),
    fused_k: usize,
    kh_e: usize,
    kw_e: usize,
    s_e: usize,
    /// Rows of this node's weight tiles.
    nwt: usize,
    /// Precision indices: of the layer, of its input rows, of its output rows.
    prec: u64,
    src_prec: usize,
    out_prec: u64,
    /// Precision index of the residual's rows.
    res_prec: usize,
    src: &'a TensorLayout,
    dst: &'a TensorLayout,
    res: Option<&'a TensorLayout>,
    requant: Requant,
    /// Leaky ReLU: the requantization multiplier of negative values.
    negative_multiplier: Option<u64>,
    relu: bool,
    clamp: Option<i64>,
    /// A max-pool layer run on the array: each window tap is folded into the output rows.
    maxpool: bool,
    /// Pooling and add layers stream an identity weight tile.
    identity: bool,
    /// How the residual combines with the requantized value.
    combine: Combine,
}

/// The schedule being built: the steps so far and the counters that alternate buffer
/// halves and walk the weight-slot ring.
struct Sched<'a> {
    g: &'a Graph,
    alloc: &'a Alloc,
    bud: Budget,
    /// cpf: channels of a tile.
    t: usize,
    /// Rows of a weight-buffer slot.
    wt: usize,
    steps: Vec<Step>,
    group_no: usize,
    out_no: usize,
    in_no: usize,
    /// Windows kept on chip (`fused`), alternating between two quarters of the input buffer.
    fwd_no: usize,
    w_no: usize,
    /// Weight runs still in the ring, so a later tile that needs the same weights does not
    /// load them again: (node, first external beat, slots, first slot).
    kept: Vec<(usize, u64, usize, usize)>,
    /// Fused row programs' images already in a bank: (node, bank).
    then_loaded: Vec<(usize, u64)>,
}

impl Sched<'_> {
    /// `len` consecutive slots of the weight ring (wrapping to slot 0 when they would run
    /// past its end), forgetting the kept runs they overwrite. Returns the first slot.
    fn take_slots(&mut self, len: usize) -> usize {
        if self.w_no + len > self.bud.weight_slots {
            self.w_no = 0;
        }
        let first = self.w_no;
        self.w_no += len;
        self.kept
            .retain(|&(_, _, n, f)| f + n <= first || first + len <= f);
        first
    }

    fn push(&mut self, node: usize, op: IsaOp, reads: Vec<Res>, writes: Vec<Res>) {
        self.steps.push(Step {
            instr: Instr::new(op),
            reads,
            writes,
            node,
        });
    }
}

/// One replica's share of a frame: its part (`map::Part`: its rows, in bands), and each
/// band's steps.
#[derive(Debug, Clone)]
pub struct Share {
    pub part: Part,
    pub bands: Vec<Vec<Step>>,
}

/// The schedule of one frame: the placed mapping and, per stage, every replica's share.
pub struct Scheduled {
    pub placed: Placed,
    pub shares: Vec<Vec<Share>>,
}

/// One replica's share of a frame (its part): each band scheduled after the one before
/// it.
pub fn share(design: &Design, g: &Graph, alloc: &Alloc, tiling: &[Tiling], part: Part) -> Share {
    let bands = (0..part.bands())
        .map(|k| run(design, g, alloc, tiling, &part.band_rows(k)))
        .collect();
    Share { part, bands }
}

/// The schedule of output rows `rows[i]` of every node i (nothing for an empty range) of
/// graph `g` on its unit: a single engine's whole program, or one row band of one replica's
/// share of an elastic Design's stage.
pub fn run(
    design: &Design,
    g: &Graph,
    alloc: &Alloc,
    tiling: &[Tiling],
    rows: &[std::ops::Range<usize>],
) -> Vec<Step> {
    let mut s = Sched {
        g,
        alloc,
        bud: budget(design, g),
        t: g.unit.cpf as usize,
        wt: alloc.weight_tile_rows as usize,
        steps: Vec::new(),
        group_no: 0,
        out_no: 0,
        in_no: 0,
        fwd_no: 0,
        w_no: 0,
        kept: Vec::new(),
        then_loaded: Vec::new(),
    };
    for (ni, n) in g.nodes.iter().enumerate() {
        let r = rows[ni].clone();
        // A node whose output stays on chip runs with the next one.
        if n.fused_into_next {
            continue;
        }
        if r.is_empty() {
            continue;
        }
        if let Lowered::Upsample { factor } = n.work {
            s.upsample(ni, factor, tiling[ni], r);
            continue;
        }
        if let Lowered::Rows(_) = n.work {
            s.rows_node(ni, tiling[ni], r);
            continue;
        }
        let nc = node_ctx(g, alloc, ni, n);
        if ni > 0 && g.nodes[ni - 1].fused_into_next {
            let ne = node_ctx(g, alloc, ni - 1, &g.nodes[ni - 1]);
            s.fused_node(&ne, &nc, tiling[ni], r);
        } else if n.window {
            s.window_node(&nc, tiling[ni], r);
        } else if s.sums_by_weights(&nc) {
            s.gap(&nc, tiling[ni], r);
        } else {
            s.node(&nc, tiling[ni], r);
        }
    }
    let beats = |st: &Step| crate::compiler::cost::step_beats(&g.unit, alloc, st);
    hoist::prologues(&mut s.steps, (g.unit.cpf, g.unit.kpf), &beats);
    hoist::carry_preloads(&mut s.steps, g.unit.cpf, &beats);
    mark_handoffs(&mut s.steps);
    s.steps
}

/// Loads and stores of tensors handed on chip (placed at virtual beats from
/// `allocate::HANDOFF_BASE`) move them through the hand-off buffers.
fn mark_handoffs(steps: &mut [Step]) {
    let on_chip =
        |r: &Res| matches!(r, Res::Dram(a, b) if a < b && *a >= super::allocate::HANDOFF_BASE);
    for s in steps {
        let handoff = s.reads.iter().chain(&s.writes).any(on_chip);
        if let IsaOp::Load(t) | IsaOp::Store(t) = &mut s.instr.op {
            t.handoff = handoff;
        }
    }
}

fn node_ctx<'a>(g: &'a Graph, alloc: &'a Alloc, ni: usize, n: &'a Node) -> NodeCtx<'a> {
    let (kh, kw, s, pad) = window(n);
    // A fused max-pool: the convolution runs once per pool tap, at stride s * pool stride.
    let (fused_k, fused_s) = n.pool.unwrap_or((1, 1));
    let stencil = n.stencil();
    let p = &stencil.post;
    // A window of maxima on the array: each tap's identity pass is folded into the output
    // rows by the vector unit's maximum (in the window unit it is post-processed as it is).
    let maxpool = stencil.taps == Taps::Max && !n.window;
    NodeCtx {
        ni,
        n,
        kh,
        kw,
        s,
        pad,
        pad_value: {
            let t = g.unit.datatype.input_type();
            crate::isa::pad_pattern(stencil.pad_value, t.bits, t.signed)
                .expect("legalize checks that the pad value fits")
        },
        zero_points: {
            let (za, zb) = stencil.zero_points();
            let (i, w) = (g.unit.datatype.input_type(), g.unit.datatype.weight_type());
            let pattern = |v: i64, t: crate::numeric::IntType| {
                crate::isa::pad_pattern(v, t.bits, t.signed)
                    .expect("legalize checks that the zero points fit")
            };
            (pattern(za, i), pattern(zb, w))
        },
        fused_k,
        kh_e: kh + (fused_k - 1) * s,
        kw_e: kw + (fused_k - 1) * s,
        s_e: s * fused_s,
        nwt: tile_rows(&g.unit, n) as usize,
        prec: n.prec as u64,
        src_prec: g.prec_of(g.format_of(&n.input)),
        out_prec: g.prec_of(n.out_format) as u64,
        res_prec: n.residual.as_ref().map_or(0, |r| g.prec_of(g.format_of(r))),
        src: &alloc.tensors[&n.input],
        dst: &alloc.tensors[n.tensor()],
        res: n.residual.as_ref().map(|r| &alloc.tensors[r]),
        requant: p.requant,
        negative_multiplier: p.negative_multiplier,
        relu: p.relu,
        clamp: p.clamp,
        maxpool,
        identity: !n.weighted() && !n.window,
        combine: n.combine.unwrap_or(Combine::sum(p.requant.zero_point)),
    }
}

/// The constants of one group of output-channel tiles of one spatial tile.
struct GroupCtx {
    oy0: usize,
    ox0: usize,
    h: u64,
    w: u64,
    /// Output-channel tiles of the group.
    members: Vec<usize>,
    /// First accumulator row of the group's bank.
    bank: u64,
    /// Per member: its output rows and its residual operand rows (the same rows: the
    /// residual is added in place).
    outs: Vec<(u64, u64)>,
    has_bias: Vec<bool>,
    /// Accumulator rows per member's bias: 1, or 2 with the scale row of per-channel
    /// requantization (`Node::bias_rows`).
    bias_rows: u64,
    /// Rows at the top of the bank of a fused row program's constants and table
    /// (`Node::then_rows`), above the bias rows: the same rows for every group.
    then_rows: u64,
}

impl GroupCtx {
    fn rows(&self) -> u64 {
        self.h * self.w
    }
    fn acc_of(&self, j: usize) -> u64 {
        self.bank + j as u64 * self.rows()
    }
    fn acc_region(&self, j: usize) -> Res {
        Res::Spad(
            Buffer::Accumulator,
            self.acc_of(j),
            self.acc_of(j) + self.rows(),
        )
    }
    fn out_region(&self, j: usize) -> Res {
        Res::Spad(Buffer::Output, self.outs[j].0, self.outs[j].0 + self.rows())
    }
    /// Member j's residual operand rows (one row when it is broadcast).
    fn opnd_region(&self, j: usize, broadcast: bool) -> Res {
        let rows = if broadcast { 1 } else { self.rows() };
        Res::Spad(Buffer::Output, self.outs[j].1, self.outs[j].1 + rows)
    }
}

impl Sched<'_> {
    /// Every spatial tile and output-channel group of a node.
    fn node(&mut self, nc: &NodeCtx, tiling: Tiling, rows: std::ops::Range<usize>) {
        for tile in tiling.tiles_in(nc.n.out, self.t, rows) {
            let gc = self.group_ctx(
                nc,
                (tile.oy0, tile.ox0),
                (tile.h as u64, tile.w as u64),
                tile.octs.collect(),
            );
            self.bias_loads(nc, &gc);
            self.untied_loads(nc, &gc);
            for ptap in 0..nc.fused_k * nc.fused_k {
                self.pool_tap(nc, &gc, ptap);
            }
            self.finish(nc, &gc);
        }
    }

    /// A group's accumulator bank and output rows (alternating), and its biases.
    fn group_ctx(
        &mut self,
        nc: &NodeCtx,
        (oy0, ox0): (usize, usize),
        (h, w): (u64, u64),
        members: Vec<usize>,
    ) -> GroupCtx {
        let bank = (self.group_no % 2) as u64 * self.bud.acc_bank as u64;
        self.group_no += 1;
        // Output rows (and residual operand rows) of every member. Without a residual,
        // members alternate output-buffer halves. With one, members take the four quarters
        // in turn, and each loads its operand into its own output rows, where the vector
        // instruction adds it in place: a member's operand load then waits only for the
        // store of the member four before it (one group earlier, already under way while
        // this group computes), never for this group's vector work, so it does not hold up
        // the next group's input loads behind it in the load queue.
        let quarter = self.bud.out_quarter as u64;
        let outs = members
            .iter()
            .map(|_| {
                self.out_no += 1;
                if nc.res.is_some() {
                    // Quarters 0 and 1 are the first bank of the output buffer, 2 and 3
                    // the second: consecutive members use different banks, so the store
                    // of one does not wait for the vector unit's reads of the next.
                    let k = [0, 2, 1, 3][self.out_no % 4] * quarter;
                    // A broadcast operand takes the row after the output rows
                    // (`Node::out_rows`: the quarter's last).
                    let opnd = match nc.n.broadcast {
                        true => k + nc.n.out_rows(quarter as usize) as u64,
                        false => k,
                    };
                    (k, opnd)
                } else {
                    ((self.out_no % 2) as u64 * 2 * quarter, 0)
                }
            })
            .collect();
        let has_bias = members
            .iter()
            .map(|&oct| self.alloc.bias.contains_key(&(nc.ni, oct)))
            .collect();
        GroupCtx {
            oy0,
            ox0,
            h,
            w,
            members,
            bank,
            outs,
            has_bias,
            bias_rows: nc.n.bias_rows() as u64,
            then_rows: nc.n.then_rows(self.g.unit.kpf as usize) as u64,
        }
    }

    /// The accumulator row of member j's bias: the bank's last rows, in member order (each
    /// bias followed by its scale row under per-channel requantization).
    fn bias_row(&self, gc: &GroupCtx, j: usize) -> u64 {
        let br = gc.bias_rows;
        gc.bank + self.bud.acc_bank as u64 - gc.then_rows - br * gc.members.len() as u64
            + br * j as u64
    }

    /// Load the untied biases of the group's members into their accumulator rows, where the
    /// matmuls then accumulate onto them.
    fn untied_loads(&mut self, nc: &NodeCtx, gc: &GroupCtx) {
        let Some(&ub) = self.alloc.untied.get(&nc.ni) else {
            return;
        };
        let [oh, ow, _] = nc.n.out;
        let beats = ub.beats;
        for (j, &oct) in gc.members.iter().enumerate() {
            let first = ub.base + ((oct * oh + gc.oy0) * ow + gc.ox0) as u64 * beats;
            let t = Transfer {
                buffer: Buffer::Accumulator,
                spad_addr: gc.acc_of(j),
                ext_addr: first,
                count0: gc.w,
                stride0: beats,
                count1: gc.h,
                stride1: ow as u64 * beats,
                // Few channels or small values: only the beats that hold them, of
                // narrow integers widened into the lanes.
                row_beats: ub.row_beats,
                widen: ub.widen,
                ..Transfer::default()
            };
            let read = span(first, gc.w, beats, gc.h, ow as u64 * beats, beats);
            self.push(nc.ni, IsaOp::Load(t), vec![read], vec![gc.acc_region(j)]);
        }
    }

    /// Load the biases of the group's members (residual operands are loaded just before
    /// their vector instruction, into the member's output rows): one load for each run of
    /// members whose bias rows follow each other in memory (all of a group, as `allocate`
    /// places a node's biases), so that the group waits once for the vector unit to be done
    /// with the rows they fill.
    fn bias_loads(&mut self, nc: &NodeCtx, gc: &GroupCtx) {
        let beats = self.alloc.acc_beats;
        // Rows per member: the bias, and the scale row after it.
        let br = gc.bias_rows;
        let bias = |j: usize| self.alloc.bias.get(&(nc.ni, gc.members[j])).copied();
        let mut runs: Vec<(usize, u64, u64)> = Vec::new();
        for j in 0..gc.members.len() {
            let Some(b) = bias(j) else {
                continue;
            };
            match runs.last_mut() {
                Some((first, at, n)) if *first + *n as usize == j && *at + *n * br * beats == b => {
                    *n += 1
                }
                _ => runs.push((j, b, 1)),
            }
        }
        for (first, b, n) in runs {
            let row = self.bias_row(gc, first);
            let rows = n * br;
            let t = Transfer {
                buffer: Buffer::Accumulator,
                spad_addr: row,
                ext_addr: b,
                count0: rows,
                stride0: beats,
                count1: 1,
                ..Transfer::default()
            };
            self.push(
                nc.ni,
                IsaOp::Load(t),
                vec![Res::Dram(b, b + rows * beats)],
                vec![Res::Spad(Buffer::Accumulator, row, row + rows)],
            );
        }
    }
}
