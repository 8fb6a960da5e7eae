//! A 1x1 convolution whose output stays on chip (`fuse`'s expand+depthwise, a MobileNetV2
//! expand) and the depthwise convolution in the window unit that reads it, scheduled
//! together per output tile of the depthwise convolution. Per spatial tile, the input window
//! of the expand's every input-channel tile is loaded once (zero rows outside the tensor);
//! then per channel tile of the expanded tensor, the array computes the expand over the
//! depthwise convolution's whole input window (its halo included), the vector unit
//! post-processes it straight into the input buffer (`to_input`), the window unit reads it
//! from there, and the depthwise result is post-processed and stored. Only the expand's
//! input and the depthwise output cross the memory port. The window's rows and columns
//! outside the tensor hold whatever the expand computed there (its bias): they are padding,
//! which the window instruction never counts.
//!
//! Input buffer: the expand's input windows in one quarter (alternating per spatial tile),
//! the depthwise windows in the other half (alternating quarters per channel tile).
//! Accumulator bank (alternating per channel tile): the depthwise rows first, then the
//! expand's, the depthwise bias in the last row (with per-channel requantization the last
//! two: bias, scale) and the expand's in the row(s) before.

use super::pass::Entry;
use super::{GroupCtx, NodeCtx, Res, Sched, Step};
use crate::compiler::passes::tile::{Tile, Tiling};
use crate::isa::{Buffer, Matmul, Op as IsaOp, Transfer, Vector};

/// The plan of one channel tile of one spatial tile: its group, where its expanded rows go
/// in the input buffer, where its expand's input windows are (first row and rows each) and
/// the depthwise window's size, and its expand's weights (entries, slots, loads).
struct Plan {
    gc: GroupCtx,
    qb: u64,
    qx: u64,
    win: (u64, u64),
    entries: Vec<Entry>,
    slots: Vec<u64>,
    loads: Vec<Option<Step>>,
}

impl Sched<'_> {
    /// Every tile of the depthwise node `nd` with the expand `ne` before it, software-
    /// pipelined over (spatial tile, channel tile) in order: the expand of the next one is
    /// issued before the window of this one (the array computes it while the vector unit
    /// writes this one's rows), and each expand's last matmul preloads the next one's first
    /// weights.
    pub(super) fn fused_node(
        &mut self,
        ne: &NodeCtx,
        nd: &NodeCtx,
        tiling: Tiling,
        rows: std::ops::Range<usize>,
    ) {
        let tiles = tiling.tiles_in(nd.n.out, self.t, rows);
        let mut tiles = tiles.iter();
        let mut queue: std::collections::VecDeque<Plan> = std::collections::VecDeque::new();
        let mut pending: Option<(GroupCtx, u64, (u64, u64))> = None;
        let mut carried = false;
        loop {
            // Plan one tile ahead, so the next channel tile's plan exists.
            while queue.len() < 2 {
                let Some(tile) = tiles.next() else { break };
                let plans = self.plan_tile(ne, nd, tile);
                queue.extend(plans);
            }
            let Some(mut plan) = queue.pop_front() else {
                break;
            };
            // The depthwise biases go where an earlier group of the bank kept its own, so
            // they are loaded in program order, just before their group's work.
            self.bias_loads(nd, &plan.gc);
            self.untied_loads(nd, &plan.gc);
            let next = queue.front_mut().map(|p| (p.slots[0], p.loads[0].take()));
            carried = self.expand(ne, &mut plan, carried, next);
            if let Some((prev, pqb, pwin)) = pending.replace((plan.gc, plan.qb, plan.win)) {
                self.window_instr(nd, &prev, 0, (pqb, pwin));
                self.finish(nd, &prev);
            }
        }
        if let Some((prev, pqb, pwin)) = pending {
            self.window_instr(nd, &prev, 0, (pqb, pwin));
            self.finish(nd, &prev);
        }
    }

    /// The loads of a spatial tile's expand input windows (one per input-channel tile, into
    /// the next quarter of the expand's input), and the plan of every channel tile.
    fn plan_tile(&mut self, ne: &NodeCtx, nd: &NodeCtx, tile: &Tile) -> Vec<Plan> {
        let quarter = (self.bud.input_half / 2) as u64;
        let s = nd.s as u64;
        let win = (
            (tile.h as u64 - 1) * s + nd.kh as u64,
            (tile.w as u64 - 1) * s + nd.kw as u64,
        );
        let area = win.0 * win.1;
        let qx = (self.in_no % 2) as u64 * quarter;
        self.in_no += 1;
        let at = |o: usize| (o as u64 * s) as i64 - nd.pad as i64;
        let (y0, x0) = (at(tile.oy0), at(tile.ox0));
        for ict in 0..ne.src.c.div_ceil(self.t) {
            let first = qx + ict as u64 * area;
            let (t, res) = super::padded(
                ne.src,
                ict,
                (y0 + ne.src.pad as i64, x0 + ne.src.pad as i64),
                win,
                1,
                (Buffer::Input, first),
                ne.src_prec,
            );
            let region = Res::Spad(Buffer::Input, first, first + area);
            self.push(ne.ni, IsaOp::Load(t), vec![res], vec![region]);
        }
        tile.octs
            .clone()
            .map(|oct| {
                let gc = self.group_ctx(
                    nd,
                    (tile.oy0, tile.ox0),
                    (tile.h as u64, tile.w as u64),
                    vec![oct],
                );
                let qb = 2 * quarter + (self.fwd_no % 2) as u64 * quarter;
                self.fwd_no += 1;
                let ge = GroupCtx {
                    members: vec![oct],
                    has_bias: vec![false],
                    outs: vec![(0, 0)],
                    ..gc
                };
                let entries: Vec<Entry> = self.entries(ne, &ge);
                let (slots, loads) = self.weight_loads(ne, &entries);
                Plan {
                    gc,
                    qb,
                    qx,
                    win,
                    entries,
                    slots,
                    loads,
                }
            })
            .collect()
    }

    /// The expand's part of a plan: its bias, every input-channel tile's matmul over the
    /// window into the accumulator rows after the depthwise ones, and the vector instruction
    /// that writes the rows into the input buffer. `carried`: the previous expand preloaded
    /// its first weights; `next`: the next expand's first slot and load, which this one's
    /// last matmul preloads. Returns whether it did.
    fn expand(
        &mut self,
        ne: &NodeCtx,
        plan: &mut Plan,
        carried: bool,
        next: Option<(u64, Option<Step>)>,
    ) -> bool {
        let (gc, qb, qx) = (&plan.gc, plan.qb, plan.qx);
        let area = plan.win.0 * plan.win.1;
        let (entries, slots, loads) = (&plan.entries, &plan.slots, &mut plan.loads);
        let oct = gc.members[0];
        let acc = gc.bank + gc.rows();
        let acc_region = Res::Spad(Buffer::Accumulator, acc, acc + area);
        // The expand's bias (and with per-channel requantization its scale row), in the
        // rows before the depthwise ones.
        let br = ne.n.bias_rows() as u64;
        let bias_row = gc.bank + self.bud.acc_bank as u64 - gc.bias_rows - br;
        let bias = self.alloc.bias.get(&(ne.ni, oct)).copied();
        if let Some(b) = bias {
            let t = Transfer {
                buffer: Buffer::Accumulator,
                spad_addr: bias_row,
                ext_addr: b,
                count0: br,
                stride0: self.alloc.acc_beats,
                count1: 1,
                ..Transfer::default()
            };
            self.push(
                ne.ni,
                IsaOp::Load(t),
                vec![Res::Dram(b, b + br * self.alloc.acc_beats)],
                vec![Res::Spad(Buffer::Accumulator, bias_row, bias_row + br)],
            );
        }
        let slot_res = |slot: u64| Res::Spad(Buffer::Weight, slot, slot + ne.nwt as u64);
        if !carried {
            self.steps.extend(loads[0].take());
            let preload = Matmul {
                preload: true,
                weight_addr: slots[0],
                count1: 1,
                prec: ne.prec,
                ..Matmul::default()
            };
            self.push(
                ne.ni,
                IsaOp::Matmul(preload),
                vec![slot_res(slots[0])],
                vec![],
            );
        }
        let mut next = next;
        let mut carries = false;
        for k in 0..entries.len() {
            // The next weights: this expand's next tile, or the next expand's first.
            let preload = if k + 1 < entries.len() {
                self.steps.extend(loads[k + 1].take());
                Some(slots[k + 1])
            } else if let Some((slot, load)) = next.take() {
                self.steps.extend(load);
                carries = true;
                Some(slot)
            } else {
                None
            };
            let first = qx + entries[k].ict as u64 * area;
            let mut reads = vec![Res::Spad(Buffer::Input, first, first + area)];
            reads.extend(preload.map(slot_res));
            let m = Matmul {
                swap: true,
                accumulate: k > 0,
                preload: preload.is_some(),
                weight_addr: preload.unwrap_or(0),
                input_addr: first,
                count0: area,
                stride0: 1,
                count1: 1,
                acc_addr: acc,
                prec: ne.prec,
                ..Matmul::default()
            };
            self.push(ne.ni, IsaOp::Matmul(m), reads, vec![acc_region]);
        }
        let v = Vector {
            bias: bias.is_some(),
            load_bias: bias.is_some(),
            bias_addr: bias_row,
            acc_addr: acc,
            out_addr: qb,
            count: area,
            to_input: true,
            per_channel: br > 1,
            ..super::finish::post_ops(ne)
        };
        let mut reads = vec![acc_region];
        if bias.is_some() {
            reads.push(Res::Spad(Buffer::Accumulator, bias_row, bias_row + br));
        }
        self.push(
            ne.ni,
            IsaOp::Vector(v),
            reads,
            vec![Res::Spad(Buffer::Input, qb, qb + area)],
        );
        carries
    }
}
