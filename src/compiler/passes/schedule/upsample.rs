//! Nearest upsampling by `f`: for each output row, one identity matmul repeats every pixel
//! of its input row `f` times (inner loop: `f` times the same row; outer loop: the pixels),
//! then the vector unit copies the rows and the store writes them.

use super::{pixels, Res, Sched};
use crate::compiler::passes::tile::Tiling;
use crate::isa::{Buffer, Matmul, Op as IsaOp, Transfer, Vector};

impl Sched<'_> {
    pub(super) fn upsample(
        &mut self,
        ni: usize,
        f: usize,
        tiling: Tiling,
        rows: std::ops::Range<usize>,
    ) {
        let n = &self.g.nodes[ni];
        let src = &self.alloc.tensors[&n.input];
        let dst = &self.alloc.tensors[&n.name];
        // Whole rows (tw = ow) of one channel tile each (g = 1).
        for tile in tiling.tiles_in(n.out, self.t, rows.clone()) {
            let ct = tile.octs.start;
            self.upsample_rows(ni, f, ct, (tile.oy0, tile.h), (src, dst), dst.w);
        }
    }

    /// Output rows oy0..oy0 + h of channel tile `ct`.
    fn upsample_rows(
        &mut self,
        ni: usize,
        f: usize,
        ct: usize,
        (oy0, h): (usize, usize),
        (src, dst): (
            &crate::compiler::TensorLayout,
            &crate::compiler::TensorLayout,
        ),
        ow: usize,
    ) {
        let in_w = src.w as u64;
        let rows = (h * ow) as u64;
        let acc0 = (self.group_no % 2) as u64 * self.bud.acc_bank as u64;
        self.group_no += 1;
        let out0 = (self.out_no % 2) as u64 * 2 * self.bud.out_quarter as u64;
        self.out_no += 1;
        let acc_region = Res::Spad(Buffer::Accumulator, acc0, acc0 + rows);
        let out_region = Res::Spad(Buffer::Output, out0, out0 + rows);
        // Input rows oy0/f ..= (oy0+h-1)/f, full width.
        let iy0 = oy0 / f;
        let in_rows = ((oy0 + h - 1) / f - iy0 + 1) as u64;
        let in0 = (self.in_no % 2) as u64 * self.bud.input_half as u64;
        self.in_no += 1;
        let in_region = Res::Spad(Buffer::Input, in0, in0 + in_rows * in_w);
        let (t, res) = pixels(
            src,
            ct,
            (src.pad + iy0, src.pad),
            (in_rows, in_w),
            Buffer::Input,
            in0,
            0,
        );
        self.push(ni, IsaOp::Load(t), vec![res], vec![in_region]);
        let slot = (self.take_slots(1) * self.wt) as u64;
        let id_rows = self.t as u64;
        let w_region = Res::Spad(Buffer::Weight, slot, slot + id_rows);
        let (identity, wb) = (self.alloc.identity, self.alloc.weight_beats);
        let t = Transfer {
            buffer: Buffer::Weight,
            spad_addr: slot,
            ext_addr: identity,
            count0: id_rows,
            stride0: wb,
            count1: 1,
            ..Transfer::default()
        };
        let dram = Res::Dram(identity, identity + id_rows * wb);
        self.push(ni, IsaOp::Load(t), vec![dram], vec![w_region]);
        let preload = Matmul {
            preload: true,
            weight_addr: slot,
            count1: 1,
            ..Matmul::default()
        };
        self.push(ni, IsaOp::Matmul(preload), vec![w_region], vec![]);
        for r in 0..h {
            let next = r + 1 < h;
            let mut reads = vec![in_region];
            if next {
                reads.push(w_region);
            }
            let in_row = ((oy0 + r) / f - iy0) as u64;
            let acc = acc0 + (r * ow) as u64;
            let m = Matmul {
                swap: true,
                preload: next,
                weight_addr: slot,
                input_addr: in0 + in_row * in_w,
                count0: f as u64,
                count1: in_w,
                stride1: 1,
                acc_addr: acc,
                ..Matmul::default()
            };
            let written = Res::Spad(Buffer::Accumulator, acc, acc + ow as u64);
            self.push(ni, IsaOp::Matmul(m), reads, vec![written]);
        }
        let v = Vector {
            acc_addr: acc0,
            out_addr: out0,
            count: rows,
            multiplier: 1,
            ..Vector::default()
        };
        self.push(ni, IsaOp::Vector(v), vec![acc_region], vec![out_region]);
        let (t, res) = pixels(
            dst,
            ct,
            (dst.pad + oy0, dst.pad),
            (h as u64, ow as u64),
            Buffer::Output,
            out0,
            0,
        );
        self.push(ni, IsaOp::Store(t), vec![out_region], vec![res]);
    }
}
