//! Average pooling to one output pixel (global average pooling) with the activations as the
//! array's weights: run as pool taps, each of the k x k window's pixels would be a one-row
//! matmul (49 per channel tile for a 7x7 map, each waiting for the array to drain). Instead,
//! up to cpf window pixels of a channel tile are loaded into a weight slot (a pixel row of
//! cpf channels is a weight row of kpf columns when the two formats are the same integer
//! type), and one input row of m ones followed by zeros sums the m pixels of the slot into
//! the channel tile's accumulator row: ceil(k / rows per slot) matmuls per channel tile. The
//! vector unit then requantizes the sum as for any pool. The rows of ones come from the
//! table of constants `Alloc::ones` (row m - 1 holds m ones).

use super::{GroupCtx, NodeCtx, Res, Sched};
use crate::compiler::passes::tile::Tiling;
use crate::isa::{Buffer, Matmul, Op as IsaOp, Transfer};
use crate::model::lower::Taps;
use crate::numeric::Format;

impl Sched<'_> {
    /// Whether node `nc` sums its window with the activations as weights: an average pool
    /// to one output pixel whose window rows fit a weight slot, on a unit whose input and
    /// weight rows are the same unscaled integer rows, with the table of ones allocated.
    pub(super) fn sums_by_weights(&self, nc: &NodeCtx) -> bool {
        let u = &self.g.unit;
        let p = u.datatype.get(nc.n.prec);
        let same_rows = matches!(p.input(), Format::Int(_))
            && p.input() == p.weight()
            && u.cpf == u.kpf
            && self.g.prec_of(self.g.format_of(&nc.n.input)) == nc.n.prec
            && self.wt == self.t;
        nc.n.stencil().taps == Taps::Sum
            && nc.n.out[..2] == [1, 1]
            && nc.kw <= self.t
            && nc.n.residual.is_none()
            && nc.n.place.is_none()
            && self.alloc.ones.is_some_and(|(_, b)| b == nc.src.beats)
            && same_rows
    }

    /// Every channel-tile group of a global average pool, summed by weights.
    pub(super) fn gap(&mut self, nc: &NodeCtx, tiling: Tiling, rows: std::ops::Range<usize>) {
        let (ones, beats) = self.alloc.ones.expect("sums_by_weights checked the table");
        let (k_h, k_w) = (nc.kh, nc.kw);
        // Whole window rows per weight slot, and the slots of one channel tile.
        let per = (self.t / k_w).min(k_h);
        let chunks: Vec<(usize, usize)> = (0..k_h)
            .step_by(per)
            .map(|y| (y, per.min(k_h - y)))
            .collect();
        // The rows of ones the chunks need, loaded once for the node into an input half.
        let in0 = (self.in_no % 2) as u64 * self.bud.input_half as u64;
        self.in_no += 1;
        let mut sizes: Vec<usize> = chunks.iter().map(|&(_, r)| r * k_w).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let row_of = |m: usize| in0 + sizes.iter().position(|&s| s == m).expect("a size") as u64;
        for (i, &m) in sizes.iter().enumerate() {
            let ext = ones + (m as u64 - 1) * beats;
            let t = Transfer {
                buffer: Buffer::Input,
                spad_addr: in0 + i as u64,
                ext_addr: ext,
                count0: 1,
                stride0: beats,
                count1: 1,
                prec: nc.prec,
                ..Transfer::default()
            };
            let row = in0 + i as u64;
            self.push(
                nc.ni,
                IsaOp::Load(t),
                vec![Res::Dram(ext, ext + beats)],
                vec![Res::Spad(Buffer::Input, row, row + 1)],
            );
        }
        for tile in tiling.tiles_in(nc.n.out, self.t, rows) {
            let gc = self.group_ctx(nc, (0, 0), (1, 1), tile.octs.collect());
            self.bias_loads(nc, &gc);
            self.gap_group(nc, &gc, &chunks, &row_of);
            self.finish(nc, &gc);
        }
    }

    /// The matmuls of one group: for each member, one per chunk of window rows, each
    /// preloading the next chunk's pixels while it streams its row of ones.
    fn gap_group(
        &mut self,
        nc: &NodeCtx,
        gc: &GroupCtx,
        chunks: &[(usize, usize)],
        row_of: &dyn Fn(usize) -> u64,
    ) {
        let k_w = nc.kw as u64;
        let entries: Vec<(usize, (usize, usize))> = (0..gc.members.len())
            .flat_map(|j| chunks.iter().map(move |&c| (j, c)))
            .collect();
        // Each chunk's pixels into the next slot of the weight ring, just before the matmul
        // that preloads them.
        let mut slots = Vec::new();
        let mut loads = Vec::new();
        for &(j, (y, r)) in &entries {
            let slot = (self.take_slots(1) * self.wt) as u64;
            let origin = (
                nc.src.pad - nc.pad + nc.n.shift.0 + y,
                nc.src.pad - nc.pad + nc.n.shift.1,
            );
            let (t, res) = super::pixels(
                nc.src,
                gc.members[j],
                origin,
                (r as u64, k_w),
                Buffer::Weight,
                slot,
                nc.src_prec,
            );
            slots.push(slot);
            loads.push(Some((t, res, slot, r as u64 * k_w)));
        }
        let wt = self.wt as u64;
        let w_slot = |k: usize| Res::Spad(Buffer::Weight, slots[k], slots[k] + wt);
        let mut load = |s: &mut Self, k: usize| {
            if let Some((t, res, slot, n)) = loads[k].take() {
                s.push(
                    nc.ni,
                    IsaOp::Load(t),
                    vec![res],
                    vec![Res::Spad(Buffer::Weight, slot, slot + n)],
                );
            }
        };
        load(self, 0);
        let preload = Matmul {
            preload: true,
            weight_addr: slots[0],
            count1: 1,
            prec: nc.prec,
            ..Matmul::default()
        };
        self.push(nc.ni, IsaOp::Matmul(preload), vec![w_slot(0)], vec![]);
        for (k, &(j, (_, r))) in entries.iter().enumerate() {
            let next = k + 1 < entries.len();
            if next {
                load(self, k + 1);
            }
            let ones_row = row_of(r * nc.kw);
            let mut reads = vec![Res::Spad(Buffer::Input, ones_row, ones_row + 1)];
            if next {
                reads.push(w_slot(k + 1));
            }
            let m = Matmul {
                swap: true,
                accumulate: k > 0 && entries[k - 1].0 == j,
                preload: next,
                weight_addr: if next { slots[k + 1] } else { 0 },
                input_addr: ones_row,
                count0: 1,
                count1: 1,
                acc_addr: gc.acc_of(j),
                prec: nc.prec,
                ..Matmul::default()
            };
            self.push(nc.ni, IsaOp::Matmul(m), reads, vec![gc.acc_region(j)]);
        }
    }
}
