//! The end of a group: each output-channel tile's residual operand, its vector
//! post-processing and its store.

use super::{GroupCtx, NodeCtx, Res, Sched};
use crate::compiler::rowprog::{self, Image};
use crate::isa::{Buffer, Op as IsaOp, Rows, Transfer, Vector};

impl Sched<'_> {
    /// The fields every vector instruction of member j shares: the bias and the
    /// requantization, activation and precisions of the layer.
    pub(super) fn post(&self, nc: &NodeCtx, gc: &GroupCtx, j: usize) -> Vector {
        Vector {
            bias: gc.has_bias[j],
            load_bias: gc.has_bias[j],
            bias_addr: self.bias_row(gc, j),
            per_channel: gc.bias_rows > 1,
            ..post_ops(nc)
        }
    }

    /// The bias row (and scale row) member j's vector instruction reads, if it has a bias.
    pub(super) fn bias_read(&self, gc: &GroupCtx, j: usize) -> Option<Res> {
        let row = self.bias_row(gc, j);
        gc.has_bias[j].then_some(Res::Spad(Buffer::Accumulator, row, row + gc.bias_rows))
    }

    /// Post-process and store every output-channel tile of the group. A layer that writes
    /// its accumulator does both once per slice (`Node::planes`): slice p's vector
    /// instruction writes bits p*b.. of each value (b the output type's), its store the
    /// slice's channel tile.
    pub(super) fn finish(&mut self, nc: &NodeCtx, gc: &GroupCtx) {
        let (h, w) = (gc.h, gc.w);
        let then = self.then_image(nc, gc);
        let origin = |t: &crate::compiler::TensorLayout| (t.pad + gc.oy0, t.pad + gc.ox0);
        for (j, &oct) in gc.members.iter().enumerate() {
            if let Some(r) = nc.res {
                // A broadcast residual is its one pixel.
                let (at, size) = match nc.n.broadcast {
                    true => ((r.pad, r.pad), (1, 1)),
                    false => (origin(r), (h, w)),
                };
                let (t, res) =
                    super::pixels(r, oct, at, size, Buffer::Output, gc.outs[j].1, nc.res_prec);
                self.push(
                    nc.ni,
                    IsaOp::Load(t),
                    vec![res],
                    vec![gc.opnd_region(j, nc.n.broadcast)],
                );
            }
            let raw = nc.n.post().raw;
            let slice_type = nc.n.out_format.code_type();
            for plane in 0..nc.n.planes {
                if !nc.maxpool && nc.n.pool.is_none() {
                    let post = self.post(nc, gc, j);
                    let v = Vector {
                        acc_addr: gc.acc_of(j),
                        out_addr: gc.outs[j].0,
                        opnd_addr: gc.outs[j].1,
                        count: gc.rows(),
                        raw,
                        shift: match raw {
                            true => u64::from(crate::numeric::int::slice_shift(plane, slice_type)),
                            false => post.shift,
                        },
                        ..combined(post, nc)
                    };
                    let mut reads = vec![gc.acc_region(j)];
                    reads.extend(self.bias_read(gc, j));
                    if nc.res.is_some() {
                        reads.push(gc.opnd_region(j, nc.n.broadcast));
                    }
                    self.push(nc.ni, IsaOp::Vector(v), reads, vec![gc.out_region(j)]);
                }
                if let Some((image, at)) = &then {
                    self.then_rows(nc, gc, j, oct, (image, *at));
                }
                self.store(nc, gc, j, plane * nc.dst.slice_tiles() + oct);
            }
        }
    }

    /// A fused row program's constants and table (`Node::then`), at the top of the group's
    /// bank, loaded by the node's first group in each bank (the rows stay reserved for the
    /// node): the image and its first row.
    fn then_image(&mut self, nc: &NodeCtx, gc: &GroupCtx) -> Option<(Image, u64)> {
        let work = nc.n.then.as_ref()?;
        let kpf = self.g.unit.kpf as usize;
        let image = rowprog::image(work, kpf, nc.n.out[2]);
        let n = image.rows.len() as u64;
        let at = gc.bank + self.bud.acc_bank as u64 - n;
        if self.then_loaded.contains(&(nc.ni, gc.bank)) {
            return Some((image, at));
        }
        self.then_loaded.push((nc.ni, gc.bank));
        let (base, beats) = (self.alloc.rows[&nc.ni], self.alloc.acc_beats);
        let t = Transfer {
            buffer: Buffer::Accumulator,
            spad_addr: at,
            ext_addr: base,
            count0: n,
            stride0: beats,
            count1: 1,
            ..Transfer::default()
        };
        let region = Res::Spad(Buffer::Accumulator, at, at + n);
        self.push(
            nc.ni,
            IsaOp::Load(t),
            vec![Res::Dram(base, base + n * beats)],
            vec![region],
        );
        Some((image, at))
    }

    /// Member j's output rows (channel tile `oct`) through the fused row program, in place.
    fn then_rows(
        &mut self,
        nc: &NodeCtx,
        gc: &GroupCtx,
        j: usize,
        oct: usize,
        (image, at): (&Image, u64),
    ) {
        let work = nc.n.then.as_ref().expect("a fused row program");
        let (kpf, cout) = (self.g.unit.kpf as usize, nc.n.out[2]);
        let pass = &work.passes[0];
        let (consts, params) = image.passes[0];
        let last = (oct + 1) * kpf >= cout;
        let r = Rows {
            acc_addr: at,
            count0: gc.rows(),
            count1: 1,
            out_addr: gc.outs[j].0,
            opnd_addr: gc.outs[j].0,
            param_addr: at + params,
            const_addr: at + consts,
            valid: if last {
                (cout - oct * kpf) as u64 % kpf as u64
            } else {
                0
            },
            zero_point: pass.zero,
            prec_out: nc.out_prec,
            ..rowprog::flags(pass)
        };
        let n = image.rows.len() as u64;
        self.push(
            nc.ni,
            IsaOp::Rows(r),
            vec![Res::Spad(Buffer::Accumulator, at, at + n), gc.out_region(j)],
            vec![gc.out_region(j)],
        );
    }

    /// Store member j's output rows to channel tile `ct` of the node's tensor.
    fn store(&mut self, nc: &NodeCtx, gc: &GroupCtx, j: usize, ct: usize) {
        // A phase of a transposed convolution writes every stride-th pixel from its first.
        let (step, (oy, ox)) =
            nc.n.place
                .as_ref()
                .map_or((1, (0, 0)), |p| (p.stride, p.offset));
        let d = nc.dst;
        let (t, res) = super::every(
            d,
            ct,
            (d.pad + oy + step * gc.oy0, d.pad + ox + step * gc.ox0),
            (gc.h, gc.w),
            step as u64,
            (Buffer::Output, gc.outs[j].0),
            nc.out_prec as usize,
        );
        self.push(nc.ni, IsaOp::Store(t), vec![gc.out_region(j)], vec![res]);
    }
}

/// `v` with the fields of node `nc`'s combination with its residual, if it has one.
fn combined(v: Vector, nc: &NodeCtx) -> Vector {
    if nc.res.is_none() {
        return v;
    }
    let c = &nc.combine;
    let t = nc.n.out_format.code_type();
    Vector {
        add: true,
        mul: c.product,
        bcast: nc.n.broadcast,
        add_weight: c.weight,
        opnd_weight: c.operand_weight,
        add_shift: u64::from(c.shift),
        opnd_zero: crate::isa::pad_pattern(c.operand_zero, t.bits, t.signed)
            .expect("the model checks that the residual's zero point fits"),
        add_zero: c.output_zero,
        ..v
    }
}

/// The fields every vector instruction of node `nc` shares but its bias: the
/// requantization, activation and precisions of the layer.
pub(super) fn post_ops(nc: &NodeCtx) -> Vector {
    Vector {
        relu: nc.relu,
        clamp: nc.clamp.is_some(),
        clamp_max: nc.clamp.unwrap_or(0),
        multiplier: nc.requant.multiplier,
        leaky: nc.negative_multiplier.is_some(),
        neg_multiplier: nc.negative_multiplier.unwrap_or(0),
        shift: u64::from(nc.requant.shift),
        zero_point: nc.requant.zero_point,
        half_even: nc.requant.half_even,
        prec_in: nc.prec,
        prec_out: nc.out_prec,
        fixed_scale: u64::from(nc.n.fixed_scale),
        ..Vector::default()
    }
}
