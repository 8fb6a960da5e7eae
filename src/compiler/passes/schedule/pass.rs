//! One pool tap of a group (the only one without a fused max-pool): the plan of its
//! matmuls, the weight loads into the slot ring, the input windows, and the matmuls with
//! their preloads, in program order.

use super::{GroupCtx, NodeCtx, Res, Sched, Step};
use crate::compiler::cost;
use crate::compiler::passes::allocate::tile_present;
use crate::isa::{Buffer, Instr, Matmul, Op as IsaOp, Transfer, Vector};

/// One matmul of a group: input-channel tile, output-channel tile (index in the group),
/// kernel tap, and the external address of its weights (for run-time weights, the load of
/// the tensor's rows that make the tile).
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub(super) ict: usize,
    j: usize,
    ky: usize,
    kx: usize,
    waddr: u64,
    tensor: Option<TensorTile>,
}

/// The rows of a run-time tensor that make a weight tile: `rows` of its pixel rows from
/// beat `waddr` (then zero rows up to the tile), transposed or not.
#[derive(Debug, Clone, Copy)]
struct TensorTile {
    stride: u64,
    rows: u64,
    transposed: bool,
    /// Beats of one of its rows (with the scale beat of a block-scaled format), and
    /// whether it is block-scaled: a block of t rows then makes the tile's element rows
    /// and its scale rows (`reblock`, or transposed).
    beats: u64,
    scaled: bool,
}

/// Where an input window lives: its first input-buffer row and its rows.
type Window = (u64, Res);

impl Sched<'_> {
    /// Every matmul of the group, input-channel tile outermost.
    pub(super) fn entries(&self, nc: &NodeCtx, gc: &GroupCtx) -> Vec<Entry> {
        let cin = nc.src.c;
        let mut entries = Vec::new();
        for ict in 0..cin.div_ceil(self.t) {
            for (j, &oct) in gc.members.iter().enumerate() {
                match self.alloc.weights.get(&(nc.ni, oct)) {
                    Some((base, list)) => {
                        for (k, &(i, ky, kx)) in list.iter().enumerate() {
                            if i == ict {
                                let waddr = base + (k * nc.nwt) as u64 * self.alloc.weight_beats;
                                let (waddr, tensor) = match self.tensor_tile(nc, oct, ict) {
                                    Some((at, tile)) => (at, Some(tile)),
                                    None => (waddr, None),
                                };
                                entries.push(Entry {
                                    ict,
                                    j,
                                    ky,
                                    kx,
                                    waddr,
                                    tensor,
                                });
                            }
                        }
                    }
                    None => {
                        for ky in 0..nc.kh {
                            for kx in 0..nc.kw {
                                if tile_present(nc.n, cin, self.t, oct, ict) {
                                    let waddr = self.alloc.identity;
                                    entries.push(Entry {
                                        ict,
                                        j,
                                        ky,
                                        kx,
                                        waddr,
                                        tensor: None,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        entries
    }

    /// The rows of node `nc`'s run-time weight tensor that make weight tile (oct, ict), and
    /// their first beat; `None` for weights of its own. Within group g (cin_g input and
    /// cout_g output channels): untransposed, the tile's row r is the tensor's pixel
    /// ict * t + r - g * cin_g in channel tile oct; transposed (keys), its column c is
    /// pixel oct * t + c - g * cout_g in channel tile ict. Rows past the tensor's pixels
    /// are zero rows (the load's padding).
    fn tensor_tile(&self, nc: &NodeCtx, oct: usize, ict: usize) -> Option<(u64, TensorTile)> {
        let s = nc.n.stencil();
        let crate::model::lower::Taps::Tensor {
            groups,
            tensor,
            transposed,
            ..
        } = &s.taps
        else {
            return None;
        };
        let b = &self.alloc.tensors[tensor];
        let t = self.t;
        let (cin_g, cout_g) = (nc.src.c / groups, s.cout / groups);
        let g = oct * t / cout_g;
        let (ct, first) = match transposed {
            false => (oct, ict * t - g * cin_g),
            true => (ict, oct * t - g * cout_g),
        };
        let pixels = b.h * b.w;
        let rows = (pixels - first).min(t) as u64;
        let at = b.addr(ct, first / b.w, first % b.w);
        Some((
            at,
            TensorTile {
                stride: b.pixel_stride,
                rows,
                transposed: *transposed,
                beats: b.beats,
                scaled: b.format.block_scaled(),
            },
        ))
    }

    /// Weight loads: runs of entries with contiguous weights, at most half the weight
    /// buffer each; an identity tile is loaded once per group. Weight slots form a ring: a
    /// group takes the next free run of slots, so loads can run many matmuls ahead; `sync`
    /// makes a load that wraps around wait for the preloads of the slots it overwrites. A
    /// run still in the ring from an earlier tile of the node is not loaded again (groups
    /// are the outer loop, so a group whose weights fit the ring loads them once).
    /// Returns each entry's slot and, at the first entry of every run it loads, its load.
    pub(super) fn weight_loads(
        &mut self,
        nc: &NodeCtx,
        entries: &[Entry],
    ) -> (Vec<u64>, Vec<Option<Step>>) {
        let half_slots = self.bud.weight_slots / 2;
        let wb = self.alloc.weight_beats;
        let mut slot_of = vec![0u64; entries.len()];
        let mut loads: Vec<Option<Step>> = (0..entries.len()).map(|_| None).collect();
        let mut k = 0;
        while k < entries.len() {
            let mut end = k + 1;
            if nc.identity {
                end = entries.len();
            } else if entries[k].tensor.is_some() {
                // A tile of run-time weights is a load of its own.
            } else {
                while end < entries.len()
                    && end - k < half_slots
                    && entries[end].waddr == entries[end - 1].waddr + nc.nwt as u64 * wb
                {
                    end += 1;
                }
            }
            let len = if nc.identity { 1 } else { end - k };
            let src = entries[k].waddr;
            // A run an earlier tile of this node loaded is still in the ring unless a later
            // load overwrote it: use it as it is.
            let kept = self
                .kept
                .iter()
                .find(|&&(n, w, l, _)| (n, w, l) == (nc.ni, src, len))
                .map(|&(.., f)| f);
            let slot0 = kept.unwrap_or_else(|| self.take_slots(len));
            let first = (slot0 * self.wt) as u64;
            for (m, slot) in slot_of[k..end].iter_mut().enumerate() {
                *slot = if nc.identity {
                    first
                } else {
                    first + (m * nc.nwt) as u64
                };
            }
            let nrows = if nc.identity {
                u64::from(crate::compiler::passes::allocate::identity_rows(
                    &self.g.unit,
                ))
            } else {
                ((end - k) * nc.nwt) as u64
            };
            if kept.is_some() {
                k = end;
                continue;
            }
            self.kept.push((nc.ni, src, len, slot0));
            let (t, read) = match entries[k].tensor {
                None => (
                    Transfer {
                        buffer: Buffer::Weight,
                        spad_addr: first,
                        ext_addr: src,
                        count0: nrows,
                        stride0: wb,
                        count1: 1,
                        ..Transfer::default()
                    },
                    Res::Dram(src, src + nrows * wb),
                ),
                Some(tile) => {
                    // A block-scaled tile is t rows read with their scales; the transposer
                    // writes them and the scale rows.
                    let moved = match tile.scaled {
                        true => self.t as u64,
                        false => nrows,
                    };
                    (
                        Transfer {
                            buffer: Buffer::Weight,
                            spad_addr: first,
                            ext_addr: src,
                            count0: moved,
                            stride0: tile.stride,
                            count1: 1,
                            pad_right: moved - tile.rows,
                            transpose: tile.transposed,
                            reblock: tile.scaled && !tile.transposed,
                            prec: nc.prec,
                            ..Transfer::default()
                        },
                        Res::Dram(src, src + (tile.rows - 1) * tile.stride + tile.beats),
                    )
                }
            };
            loads[k] = Some(Step {
                instr: Instr::new(IsaOp::Load(t)),
                reads: vec![read],
                writes: vec![Res::Spad(Buffer::Weight, first, first + nrows)],
                node: nc.ni,
            });
            k = end;
        }
        (slot_of, loads)
    }

    /// The input windows of the input-channel tiles `icts`, alternating input-buffer halves.
    fn windows(&mut self, icts: &[usize], rows: u64) -> Vec<Window> {
        icts.iter()
            .map(|_| {
                let in0 = (self.in_no % 2) as u64 * self.bud.input_half as u64;
                self.in_no += 1;
                (in0, Res::Spad(Buffer::Input, in0, in0 + rows))
            })
            .collect()
    }

    /// Load input window `i` (input-channel tile `ict`) of the group's spatial tile.
    pub(super) fn load_window(
        &mut self,
        nc: &NodeCtx,
        gc: &GroupCtx,
        (win_h, win_w): (u64, u64),
        ict: usize,
        w: Window,
    ) {
        // The window's first row and column in the tensor's stored coordinates (its border
        // included): rows and columns outside are padding the load writes as zeros.
        let at = |o: usize, shift: usize| (o * nc.s_e + nc.src.pad + shift) as i64 - nc.pad as i64;
        let (y0, x0) = (at(gc.oy0, nc.n.shift.0), at(gc.ox0, nc.n.shift.1));
        let (t, res) = super::padded(
            nc.src,
            ict,
            (y0, x0),
            (win_h, win_w),
            nc.load_step() as u64,
            (Buffer::Input, w.0),
            nc.src_prec,
        );
        let t = crate::isa::Transfer {
            pad_value: nc.pad_value,
            ..t
        };
        self.push(nc.ni, IsaOp::Load(t), vec![res], vec![w.1]);
    }

    /// After which matmul of each input window the next window is loaded: the latest one
    /// whose following matmuls stream long enough to cover the window's beats and the
    /// beats of the weight loads queued behind it up to the next window's first matmul, so
    /// that neither waits (the load queue runs in order); the window's first matmul when
    /// none does, and at most its second-to-last (the window's beats then overlap the last
    /// two matmuls).
    fn prefetch_points(
        &self,
        entries: &[Entry],
        loads: &[Option<Step>],
        rows: u64,
        (window_rows, prec): (u64, usize),
    ) -> Vec<bool> {
        let unit = &self.g.unit;
        let beats = |i: usize| {
            let load = loads.get(i).and_then(|l| l.as_ref());
            load.map_or(0, |l| cost::step_beats(unit, self.alloc, l))
        };
        let cpf = self.t as u32;
        let window_beats = window_rows * cost::row_beats(unit, self.alloc, Buffer::Input, prec);
        let mut at = vec![false; entries.len()];
        let mut a = 0;
        while a < entries.len() {
            let b = (a..entries.len())
                .find(|&i| entries[i].ict != entries[a].ict)
                .unwrap_or(entries.len());
            // Matmul k is followed by matmuls k + 1 .. b and the weight loads of entries
            // k + 2 ..= b in program order.
            let mut k = b.saturating_sub(2).max(a);
            let (mut stream, mut queued) = (0u64, 0u64);
            for i in k + 1..b {
                stream += cost::matmul_cycles(rows, cpf, true);
                queued += beats(i + 1);
            }
            // Not before the previous window (the same input-buffer half) has been read: its
            // last matmul's results leave the array some cycles after its last row, and the
            // load and the weight loads behind it in the queue would wait for that.
            let drain = cost::array_drain(cpf, unit.kpf);
            let earliest = (a + 2 + drain.div_ceil(rows.max(1)) as usize).min(k);
            while k > earliest && stream < window_beats + queued {
                stream += cost::matmul_cycles(rows, cpf, true);
                queued += beats(k + 1);
                k -= 1;
            }
            at[k] = true;
            a = b;
        }
        at
    }

    /// Pool tap `ptap` of the group: every matmul, each preloading the next one's weights
    /// while it streams, with the weight loads and input windows just in time.
    pub(super) fn pool_tap(&mut self, nc: &NodeCtx, gc: &GroupCtx, ptap: usize) {
        let (dy, dx) = (ptap / nc.fused_k, ptap % nc.fused_k);
        let entries = self.entries(nc, gc);
        let (slot_of, mut loads) = self.weight_loads(nc, &entries);
        let w_slot = |k: usize| Res::Spad(Buffer::Weight, slot_of[k], slot_of[k] + nc.nwt as u64);
        let (h, w) = (gc.h, gc.w);
        // The matmul's stride within the window (1 when the load already took every
        // s-th pixel).
        let ms = (nc.s_e / nc.load_step()) as u64;
        let win = ((h - 1) * ms + nc.kh_e as u64, (w - 1) * ms + nc.kw_e as u64);
        let poff = ((dy * nc.s) as u64) * win.1 + (dx * nc.s) as u64;
        // Input windows, one per input-channel tile, alternating halves. Each is loaded
        // while the previous tile's matmuls run (one tile ahead).
        let mut icts: Vec<usize> = entries.iter().map(|e| e.ict).collect();
        icts.dedup();
        let windows = self.windows(&icts, win.0 * win.1);
        if !icts.is_empty() {
            self.load_window(nc, gc, win, icts[0], windows[0]);
        }
        let rows = h * w;
        let prefetch = self.prefetch_points(&entries, &loads, rows, (win.0 * win.1, nc.src_prec));
        let mut window = 0usize;
        let mut first_of = vec![true; gc.members.len()];
        let mut tap_of = vec![0usize; gc.members.len()];
        for k in 0..entries.len() {
            let Entry { ict, j, ky, kx, .. } = entries[k];
            if ict != icts[window] {
                window += 1;
            }
            let (in0, in_region) = windows[window];
            if k == 0 {
                self.steps.extend(loads[0].take());
                let preload = Matmul {
                    preload: true,
                    weight_addr: slot_of[0],
                    count1: 1,
                    prec: nc.prec,
                    ..Matmul::default()
                };
                self.push(nc.ni, IsaOp::Matmul(preload), vec![w_slot(0)], vec![]);
            }
            // The next matmul's weights are shifted in while this one streams.
            let next = k + 1 < entries.len();
            if next {
                if let Some(load) = loads[k + 1].take() {
                    self.steps.push(load);
                }
            }
            let mut reads = vec![in_region];
            if next {
                reads.push(w_slot(k + 1));
            }
            let m = Matmul {
                swap: true,
                // The first matmul overwrites its rows, unless they hold an untied bias.
                accumulate: (!first_of[j] || self.alloc.untied.contains_key(&nc.ni)) && !nc.maxpool,
                preload: next,
                weight_addr: if next { slot_of[k + 1] } else { 0 },
                input_addr: in0 + poff + (ky as u64) * win.1 + kx as u64,
                count0: w,
                stride0: ms,
                count1: h,
                stride1: ms * win.1,
                acc_addr: gc.acc_of(j),
                prec: nc.prec,
                zero_input: nc.zero_points.0,
                zero_weight: nc.zero_points.1,
            };
            self.push(nc.ni, IsaOp::Matmul(m), reads, vec![gc.acc_region(j)]);
            first_of[j] = false;
            if prefetch[k] && window + 1 < icts.len() {
                self.load_window(nc, gc, win, icts[window + 1], windows[window + 1]);
            }
            if nc.maxpool {
                // Max-pool: each tap's values go through the vector unit and are folded
                // into the output rows in place.
                let v = Vector {
                    acc_addr: gc.acc_of(j),
                    out_addr: gc.outs[j].0,
                    opnd_addr: gc.outs[j].0,
                    count: gc.rows(),
                    pool: tap_of[j] > 0,
                    multiplier: 1,
                    prec_in: nc.prec,
                    prec_out: nc.out_prec,
                    fixed_scale: u64::from(nc.n.fixed_scale),
                    ..Vector::default()
                };
                let reads = vec![gc.acc_region(j), gc.out_region(j)];
                self.push(nc.ni, IsaOp::Vector(v), reads, vec![gc.out_region(j)]);
                tap_of[j] += 1;
            }
        }
        if nc.n.pool.is_some() {
            // Fused max-pool: post-process this pool tap and keep the maximum.
            for j in 0..gc.members.len() {
                let v = Vector {
                    acc_addr: gc.acc_of(j),
                    out_addr: gc.outs[j].0,
                    opnd_addr: gc.outs[j].0,
                    count: gc.rows(),
                    pool: ptap > 0,
                    ..self.post(nc, gc, j)
                };
                let mut reads = vec![gc.acc_region(j), gc.out_region(j)];
                reads.extend(self.bias_read(gc, j));
                self.push(nc.ni, IsaOp::Vector(v), reads, vec![gc.out_region(j)]);
            }
        }
    }
}
