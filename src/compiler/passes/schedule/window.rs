//! A node in the window unit (a depthwise convolution or a pooling layer, `legalize::in_window`):
//! for every output tile and channel tile, its weights (kh x kw rows, loaded into the weight
//! ring once while they stay there; an average pool's ones serve every channel tile, a
//! max-pool has none), its biases, its input window (alternating input-buffer halves) and one
//! `window` instruction into the tile's accumulator rows; then the vector instruction and the
//! store of every group (`finish`). The window's rows and columns outside the input are
//! padding, which the instruction names so they never count (a max-pool's would win over
//! negative inputs as zero rows).

use super::{GroupCtx, NodeCtx, Res, Sched};
use crate::compiler::passes::tile::Tiling;
use crate::isa::{Buffer, Op as IsaOp, Transfer, Window};
use crate::model::lower::Taps;

impl Sched<'_> {
    /// Every tile of node `nc`, which the window unit runs.
    pub(super) fn window_node(
        &mut self,
        nc: &NodeCtx,
        tiling: Tiling,
        rows: std::ops::Range<usize>,
    ) {
        for tile in tiling.tiles_in(nc.n.out, self.t, rows) {
            let gc = self.group_ctx(
                nc,
                (tile.oy0, tile.ox0),
                (tile.h as u64, tile.w as u64),
                tile.octs.collect(),
            );
            self.bias_loads(nc, &gc);
            self.untied_loads(nc, &gc);
            for j in 0..gc.members.len() {
                self.window_member(nc, &gc, j);
            }
            self.finish(nc, &gc);
        }
    }

    /// The weights of channel tile `oct` in the weight ring: their first row and rows,
    /// loaded unless a run of the node still holds them. `None` for a max-pool.
    fn window_weights(&mut self, nc: &NodeCtx, oct: usize) -> Option<(u64, Res)> {
        let &src = self.alloc.window_weights.get(&(nc.ni, oct))?;
        let rows = (nc.kh * nc.kw) as u64;
        let len = (rows as usize).div_ceil(self.wt);
        let kept = self
            .kept
            .iter()
            .find(|&&(n, w, l, _)| (n, w, l) == (nc.ni, src, len))
            .map(|&(.., f)| f);
        let slot0 = kept.unwrap_or_else(|| self.take_slots(len));
        let first = (slot0 * self.wt) as u64;
        let region = Res::Spad(Buffer::Weight, first, first + rows);
        if kept.is_none() {
            self.kept.push((nc.ni, src, len, slot0));
            let wb = self.alloc.weight_beats;
            let t = Transfer {
                buffer: Buffer::Weight,
                spad_addr: first,
                ext_addr: src,
                count0: rows,
                stride0: wb,
                count1: 1,
                ..Transfer::default()
            };
            self.push(
                nc.ni,
                IsaOp::Load(t),
                vec![Res::Dram(src, src + rows * wb)],
                vec![region],
            );
        }
        Some((first, region))
    }

    /// Member j of the group: its weights, its input window and its window instruction.
    fn window_member(&mut self, nc: &NodeCtx, gc: &GroupCtx, j: usize) {
        let oct = gc.members[j];
        let s = nc.s as u64;
        let win = ((gc.h - 1) * s + nc.kh as u64, (gc.w - 1) * s + nc.kw as u64);
        let in0 = (self.in_no % 2) as u64 * self.bud.input_half as u64;
        self.in_no += 1;
        let in_region = Res::Spad(Buffer::Input, in0, in0 + win.0 * win.1);
        self.load_window(nc, gc, win, oct, (in0, in_region));
        self.window_instr(nc, gc, j, (in0, win));
    }

    /// The window instruction of member j over the input window of `win` (height, width)
    /// pixels from input-buffer row `in0`: its rows and columns outside the input tensor are
    /// padding (never counted, whatever the rows hold).
    pub(super) fn window_instr(
        &mut self,
        nc: &NodeCtx,
        gc: &GroupCtx,
        j: usize,
        (in0, (win_h, win_w)): (u64, (u64, u64)),
    ) {
        let weights = self.window_weights(nc, gc.members[j]);
        let s = nc.s as u64;
        let p = nc.pad as i64;
        let [h, w, _] = self.g.shape_of(&nc.n.input).map(|v| v as i64);
        let (y0, x0) = (gc.oy0 as i64 * s as i64 - p, gc.ox0 as i64 * s as i64 - p);
        let clip = |v: i64, n: u64| v.clamp(0, n as i64) as u64;
        let w = Window {
            max: nc.n.stencil().taps == Taps::Max,
            // Accumulate onto an untied bias loaded into the rows.
            accumulate: self.alloc.untied.contains_key(&nc.ni),
            weight_addr: weights.as_ref().map_or(0, |(first, _)| *first),
            input_addr: in0,
            acc_addr: gc.acc_of(j),
            count0: win_w,
            stride0: 1,
            count1: win_h,
            stride1: win_w,
            kh: nc.kh as u64,
            kw: nc.kw as u64,
            step: s,
            pad_top: clip(-y0, win_h),
            pad_bottom: clip(y0 + win_h as i64 - h, win_h),
            pad_left: clip(-x0, win_w),
            pad_right: clip(x0 + win_w as i64 - w, win_w),
            prec: nc.prec,
            pad_value: nc.pad_value,
        };
        let mut reads = vec![Res::Spad(Buffer::Input, in0, in0 + win_h * win_w)];
        reads.extend(weights.map(|(_, r)| r));
        if w.accumulate {
            reads.push(gc.acc_region(j));
        }
        self.push(nc.ni, IsaOp::Window(w), reads, vec![gc.acc_region(j)]);
    }
}
