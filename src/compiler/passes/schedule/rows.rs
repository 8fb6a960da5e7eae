//! A row program (softmax, the norms, the spline functions): for every tile of whole pixel
//! rows, the program's accumulator rows (`rowprog::image`) are loaded into an accumulator
//! bank; then for each group of channels (a softmax's head; one group otherwise) every
//! channel tile of the group's pixels is loaded into half the output buffer, each pass is
//! one `rows` instruction over the group's channel tiles, reading them as its operand (the
//! last pass writes its output over them, each row after its read), and the stores write
//! them back. Tiles alternate banks and groups alternate output halves, so one group's
//! loads overlap the previous group's passes.

use super::{pixels, Res, Sched};
use crate::compiler::passes::tile::Tiling;
use crate::compiler::rowprog;
use crate::isa::{Buffer, Op as IsaOp, Rows, Transfer};

/// The most channel tiles one `rows` instruction covers (its count1 field's largest value).
fn max_tiles() -> usize {
    let width = crate::isa::format(crate::isa::Opcode::Rows)
        .field("count1")
        .width;
    (1usize << width) - 1
}

impl Sched<'_> {
    pub(super) fn rows_node(&mut self, ni: usize, tiling: Tiling, rows: std::ops::Range<usize>) {
        let n = &self.g.nodes[ni];
        let work = n.work.rows().expect("a row program");
        let kpf = self.g.unit.kpf as usize;
        let [_, ow, c] = n.out;
        let tiles = c.div_ceil(kpf);
        let image = rowprog::image(work, kpf, c);
        let (base, acc_beats) = (self.alloc.rows[&ni], self.alloc.acc_beats);
        let src = &self.alloc.tensors[&n.input];
        let dst = &self.alloc.tensors[n.tensor()];
        let (in_prec, out_prec) = (
            self.g.prec_of(self.g.format_of(&n.input)),
            self.g.prec_of(n.out_format),
        );
        // Lanes of the last channel tile that hold channels (0: all).
        let valid = match c % kpf {
            0 => 0,
            v => v as u64,
        };
        let image_rows = image.rows.len() as u64;
        let mut oy = rows.start;
        while oy < rows.end {
            let h = tiling.th.min(rows.end - oy);
            let p = (h * ow) as u64;
            let acc0 = (self.group_no % 2) as u64 * self.bud.acc_bank as u64;
            self.group_no += 1;
            let params = Res::Spad(Buffer::Accumulator, acc0, acc0 + image_rows);
            let load = Transfer {
                buffer: Buffer::Accumulator,
                spad_addr: acc0,
                ext_addr: base,
                count0: image_rows,
                stride0: acc_beats,
                count1: 1,
                ..Transfer::default()
            };
            let dram = Res::Dram(base, base + image_rows * acc_beats);
            self.push(ni, IsaOp::Load(load), vec![dram], vec![params]);
            // Each run of channel tiles (a head; a tile of an element-wise program) on its
            // own, alternating output halves: its tiles loaded, its passes, its stores.
            let runs = work.runs(tiles);
            let per = tiles / runs;
            for g in 0..runs {
                let out0 = (self.out_no % 2) as u64 * 2 * self.bud.out_quarter as u64;
                self.out_no += 1;
                let data = Res::Spad(Buffer::Output, out0, out0 + per as u64 * p);
                let cts = g * per..(g + 1) * per;
                for ct in cts.clone() {
                    let at = out0 + (ct - g * per) as u64 * p;
                    let (t, res) = pixels(
                        src,
                        ct,
                        (src.pad + oy, src.pad),
                        (h as u64, ow as u64),
                        Buffer::Output,
                        at,
                        in_prec,
                    );
                    let written = Res::Spad(Buffer::Output, at, at + p);
                    self.push(ni, IsaOp::Load(t), vec![res], vec![written]);
                }
                for (pass, &(consts, param)) in work.passes.iter().zip(&image.passes) {
                    let flags = rowprog::flags(pass);
                    let prows = crate::interp::param_rows(&flags);
                    let writes = match pass.stages.write {
                        true => vec![data],
                        false => Vec::new(),
                    };
                    // At most max_tiles() tiles an instruction (its count1): a longer pass is
                    // several, the first replacing the statistics, the last finishing them.
                    let chunks: Vec<usize> = (0..per).step_by(max_tiles()).collect();
                    for (k, &c0) in chunks.iter().enumerate() {
                        let n = (per - c0).min(max_tiles());
                        let last = k + 1 == chunks.len();
                        let first = (g * per + c0) as u64 * prows;
                        let at = out0 + c0 as u64 * p;
                        // The source rows are read and ignored (src_zero): the program's
                        // own.
                        let r = Rows {
                            acc_addr: acc0,
                            acc_stride: 0,
                            count0: p,
                            count1: n as u64,
                            out_addr: at,
                            out_stride: p,
                            opnd_addr: at,
                            param_addr: acc0 + param + first,
                            const_addr: acc0 + consts,
                            stat_addr: 0,
                            valid: if last && g + 1 == runs { valid } else { 0 },
                            zero_point: pass.zero,
                            prec_out: out_prec as u64,
                            init: flags.init && k == 0,
                            finish: if last { flags.finish } else { 0 },
                            ..flags
                        };
                        self.push(ni, IsaOp::Rows(r), vec![params, data], writes.clone());
                    }
                }
                for ct in cts {
                    let at = out0 + (ct - g * per) as u64 * p;
                    let (t, res) = pixels(
                        dst,
                        ct,
                        (dst.pad + oy, dst.pad),
                        (h as u64, ow as u64),
                        Buffer::Output,
                        at,
                        out_prec,
                    );
                    let read = Res::Spad(Buffer::Output, at, at + p);
                    self.push(ni, IsaOp::Store(t), vec![read], vec![res]);
                }
            }
            oy += h;
        }
    }
}
