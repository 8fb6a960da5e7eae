//! schedule: the instruction stream in program order. For every layer, spatial tile and
//! group of `g` output-channel tiles: load the residual operands and biases, then for every
//! input-channel tile load the input window once (alternating input-buffer halves) and, for
//! every output-channel tile of the group and every kernel tap, stream it through the array
//! into that tile's accumulator rows. Weight tiles are loaded in groups into alternating
//! halves of the weight buffer, and each matmul preloads the next one's weights while it
//! streams. Then each output-channel tile is requantized in the vector unit and stored.
//! Groups alternate accumulator banks and tiles alternate output-buffer halves, so the next
//! group's loads and matmuls overlap this group's vector and store work once `sync` adds the
//! semaphores. Every instruction lists the buffer rows and memory beats it reads and writes.

use super::allocate::{tile_rows, weight_tile, window, Alloc};
use super::legalize::Graph;
use super::tile::{budget, Tiling};
use crate::design::Design;
use crate::isa::{Buffer, Instr, Opcode, Queue};
use crate::model::{Op, Requant};

/// A range of rows of one scratchpad, or of beats of external memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Res {
    Spad(Buffer, u64, u64),
    Dram(u64, u64),
}

impl Res {
    pub fn overlaps(&self, o: &Res) -> bool {
        match (self, o) {
            (Res::Spad(a, s0, e0), Res::Spad(b, s1, e1)) => a == b && s0 < e1 && s1 < e0,
            (Res::Dram(s0, e0), Res::Dram(s1, e1)) => s0 < e1 && s1 < e0,
            _ => false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Step {
    pub instr: Instr,
    pub reads: Vec<Res>,
    pub writes: Vec<Res>,
    /// Index of the layer it belongs to.
    pub node: usize,
}

impl Step {
    pub fn queue(&self) -> Queue {
        self.instr.opcode.queue().expect("no end in the schedule")
    }
}

fn instr(op: Opcode, fields: &[(&str, u64)]) -> Instr {
    let mut i = Instr::new(op);
    for (k, v) in fields {
        i = i
            .set(k, *v)
            .unwrap_or_else(|e| panic!("schedule built a bad {}: {e}", op.mnemonic()));
    }
    i
}

/// Beats touched by a two-level strided transfer of rows of `beats` beats.
fn span(base: u64, c0: u64, s0: u64, c1: u64, s1: u64, beats: u64) -> Res {
    let last = base + (c0.max(1) - 1) * s0 + (c1.max(1) - 1) * s1;
    Res::Dram(base, last + beats)
}

/// One matmul of a group: input-channel tile, output-channel tile (index in the group),
/// kernel tap, and the external address of its weights.
struct Entry {
    ict: usize,
    j: usize,
    ky: usize,
    kx: usize,
    waddr: u64,
}

pub fn run(design: &Design, g: &Graph, alloc: &Alloc, tiling: &[Tiling]) -> Vec<Step> {
    let t = g.unit.cpf as usize;
    // Rows of a weight-buffer slot (MX: + the scale rows); a node's tiles may be shorter.
    let wt = alloc.weight_tile_rows as usize;
    let bud = budget(design, g);
    let mut steps: Vec<Step> = Vec::new();
    let (mut group_no, mut out_no, mut in_no, mut w_no) = (0usize, 0usize, 0usize, 0usize);
    for (ni, n) in g.nodes.iter().enumerate() {
        let (kh, kw, s, pad) = window(n);
        // A fused max-pool: the convolution runs once per pool tap, at stride s * pool stride.
        let (fused_k, fused_s) = n.pool.unwrap_or((1, 1));
        let (kh_e, kw_e, s_e) = (kh + (fused_k - 1) * s, kw + (fused_k - 1) * s, s * fused_s);
        // Rows of this node's weight tiles in memory and in the buffer.
        let nwt = tile_rows(&g.unit, n) as usize;
        // Multi-precision selectors: the path of the layer, whether its rows carry scales.
        let (mx, src_mx, out_mx) = (
            u64::from(n.mx),
            u64::from(g.is_mx(&n.input)),
            u64::from(n.out_mx),
        );
        let src = &alloc.tensors[&n.input];
        let dst = &alloc.tensors[&n.name];
        let res = n.residual.as_ref().map(|r| &alloc.tensors[r]);
        let cin = src.c;
        let [oh, ow, cout] = n.out;
        let Tiling { th, tw, g: group } = tiling[ni];
        let (requant, relu, clamp, pool) = match &n.op {
            Op::Conv {
                requant,
                relu,
                clamp,
                ..
            } => (*requant, *relu, *clamp, false),
            Op::AvgPool { requant, .. } => (*requant, false, None, false),
            Op::Add {
                requant,
                relu,
                clamp,
            } => (*requant, *relu, *clamp, false),
            Op::MaxPool { .. } => (Requant::IDENTITY, false, None, true),
            Op::Upsample { factor } => {
                upsample(
                    &mut steps,
                    ni,
                    *factor,
                    src,
                    dst,
                    tiling[ni],
                    alloc,
                    &bud,
                    t,
                    (&mut group_no, &mut out_no, &mut in_no, &mut w_no),
                );
                continue;
            }
        };
        let identity = !matches!(n.op, Op::Conv { .. });
        let push = |steps: &mut Vec<Step>, instr: Instr, reads: Vec<Res>, writes: Vec<Res>| {
            steps.push(Step {
                instr,
                reads,
                writes,
                node: ni,
            });
        };
        let octs = cout.div_ceil(t);
        for oy0 in (0..oh).step_by(th) {
            for ox0 in (0..ow).step_by(tw) {
                let (h, w) = (th.min(oh - oy0) as u64, tw.min(ow - ox0) as u64);
                let rows = h * w;
                for og in (0..octs).step_by(group) {
                    let members: Vec<usize> = (og..octs.min(og + group)).collect();
                    let bank = (group_no % 2) as u64 * bud.acc_bank as u64;
                    group_no += 1;
                    let acc_of = |j: usize| bank + j as u64 * rows;
                    let acc_region =
                        |j: usize| Res::Spad(Buffer::Accumulator, acc_of(j), acc_of(j) + rows);
                    let bias_row = |j: usize| bank + (bud.acc_bank - 1 - j) as u64;
                    let out_rows = if res.is_some() {
                        bud.out_quarter
                    } else {
                        2 * bud.out_quarter
                    } as u64;
                    // Output rows (and residual operand rows) of every member, alternating halves.
                    let outs: Vec<(u64, u64)> = members
                        .iter()
                        .map(|_| {
                            let k = (out_no % 2) as u64;
                            out_no += 1;
                            (k * out_rows, (2 + k) * bud.out_quarter as u64)
                        })
                        .collect();
                    let out_region =
                        |j: usize| Res::Spad(Buffer::Output, outs[j].0, outs[j].0 + rows);
                    let opnd_region =
                        |j: usize| Res::Spad(Buffer::Output, outs[j].1, outs[j].1 + rows);

                    // Biases (residual operands are loaded just before their vector
                    // instruction: members share the two operand quarters).
                    let mut has_bias = vec![false; members.len()];
                    for (j, &oct) in members.iter().enumerate() {
                        if let Some(&b) = alloc.bias.get(&(ni, oct)) {
                            has_bias[j] = true;
                            push(
                                &mut steps,
                                instr(
                                    Opcode::Load,
                                    &[
                                        ("buffer", Buffer::Accumulator as u64),
                                        ("spad_addr", bias_row(j)),
                                        ("ext_addr", b),
                                        ("count0", 1),
                                        ("stride0", alloc.acc_beats),
                                        ("count1", 1),
                                    ],
                                ),
                                vec![Res::Dram(b, b + alloc.acc_beats)],
                                vec![Res::Spad(Buffer::Accumulator, bias_row(j), bias_row(j) + 1)],
                            );
                        }
                    }

                    // The fields every vector instruction of member j shares (bias and the
                    // requantization and activation of the layer), after its own.
                    let post = |j: usize, own: &[(&'static str, u64)]| {
                        let mut fields = own.to_vec();
                        fields.extend([
                            ("bias", u64::from(has_bias[j])),
                            ("load_bias", u64::from(has_bias[j])),
                            ("bias_addr", bias_row(j)),
                            ("relu", u64::from(relu)),
                            ("clamp", u64::from(clamp.is_some())),
                            ("clamp_max", (clamp.unwrap_or(0) as u64) & 0xffff),
                            ("multiplier", requant.multiplier),
                            ("shift", u64::from(requant.shift)),
                            ("zero_point", (requant.zero_point as u64) & 0xffff),
                            ("mx_in", mx),
                            ("mx_out", out_mx),
                            ("fixed_scale", u64::from(n.fixed_scale)),
                        ]);
                        fields
                    };

                    for ptap in 0..fused_k * fused_k {
                        let (dy, dx) = (ptap / fused_k, ptap % fused_k);
                        // Every matmul of the group, input-channel tile outermost.
                        let mut entries: Vec<Entry> = Vec::new();
                        for ict in 0..cin.div_ceil(t) {
                            for (j, &oct) in members.iter().enumerate() {
                                match alloc.weights.get(&(ni, oct)) {
                                    Some((base, list)) => {
                                        for (k, &(i, ky, kx)) in list.iter().enumerate() {
                                            if i == ict {
                                                let waddr =
                                                    base + (k * nwt) as u64 * alloc.weight_beats;
                                                entries.push(Entry {
                                                    ict,
                                                    j,
                                                    ky,
                                                    kx,
                                                    waddr,
                                                });
                                            }
                                        }
                                    }
                                    None => {
                                        for ky in 0..kh {
                                            for kx in 0..kw {
                                                if weight_tile(n, cin, t, oct, ict, ky, kx)
                                                    .is_some()
                                                {
                                                    entries.push(Entry {
                                                        ict,
                                                        j,
                                                        ky,
                                                        kx,
                                                        waddr: alloc.identity,
                                                    });
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                        // Weight loads: runs of entries with contiguous weights, at most half the
                        // weight buffer each; an identity tile is loaded once per group.
                        let half_slots = bud.weight_slots / 2;
                        let mut slot_of = vec![0u64; entries.len()];
                        let mut loads: Vec<Option<Step>> =
                            (0..entries.len()).map(|_| None).collect();
                        let mut k = 0;
                        while k < entries.len() {
                            let mut end = k + 1;
                            if identity {
                                end = entries.len();
                            } else {
                                while end < entries.len()
                                    && end - k < half_slots
                                    && entries[end].waddr
                                        == entries[end - 1].waddr + nwt as u64 * alloc.weight_beats
                                {
                                    end += 1;
                                }
                            }
                            // Weight slots form a ring: a group takes the next free run of slots, so
                            // loads can run many matmuls ahead; `sync` makes a load that wraps
                            // around wait for the preloads of the slots it overwrites.
                            let len = if identity { 1 } else { end - k };
                            if w_no + len > bud.weight_slots {
                                w_no = 0;
                            }
                            let half = (w_no * wt) as u64;
                            w_no += len;
                            for (m, slot) in slot_of[k..end].iter_mut().enumerate() {
                                *slot = if identity {
                                    half
                                } else {
                                    half + (m * nwt) as u64
                                };
                            }
                            let nrows = if identity {
                                t as u64
                            } else {
                                ((end - k) * nwt) as u64
                            };
                            let src_addr = entries[k].waddr;
                            loads[k] = Some(Step {
                                instr: instr(
                                    Opcode::Load,
                                    &[
                                        ("buffer", Buffer::Weight as u64),
                                        ("spad_addr", half),
                                        ("ext_addr", src_addr),
                                        ("count0", nrows),
                                        ("stride0", alloc.weight_beats),
                                        ("count1", 1),
                                    ],
                                ),
                                reads: vec![Res::Dram(
                                    src_addr,
                                    src_addr + nrows * alloc.weight_beats,
                                )],
                                writes: vec![Res::Spad(Buffer::Weight, half, half + nrows)],
                                node: ni,
                            });
                            k = end;
                        }
                        let w_slot = |k: usize| {
                            Res::Spad(Buffer::Weight, slot_of[k], slot_of[k] + nwt as u64)
                        };

                        let (win_h, win_w) = (
                            (h - 1) * s_e as u64 + kh_e as u64,
                            (w - 1) * s_e as u64 + kw_e as u64,
                        );
                        let poff = ((dy * s) as u64) * win_w + (dx * s) as u64;
                        // Input windows, one per input-channel tile, alternating halves. Each is
                        // loaded while the previous tile's matmuls run (one tile ahead).
                        let mut icts: Vec<usize> = entries.iter().map(|e| e.ict).collect();
                        icts.dedup();
                        let windows: Vec<(u64, Res)> = icts
                            .iter()
                            .map(|_| {
                                let in0 = (in_no % 2) as u64 * bud.input_half as u64;
                                in_no += 1;
                                (in0, Res::Spad(Buffer::Input, in0, in0 + win_h * win_w))
                            })
                            .collect();
                        let load_window = |steps: &mut Vec<Step>, i: usize| {
                            let y0 = oy0 * s_e + src.pad - pad;
                            let x0 = ox0 * s_e + src.pad - pad;
                            let base = src.addr(icts[i], y0, x0);
                            let rs = src.wp() as u64 * src.beats;
                            steps.push(Step {
                                instr: instr(
                                    Opcode::Load,
                                    &[
                                        ("buffer", Buffer::Input as u64),
                                        ("spad_addr", windows[i].0),
                                        ("ext_addr", base),
                                        ("count0", win_w),
                                        ("stride0", src.beats),
                                        ("count1", win_h),
                                        ("stride1", rs),
                                        ("scale", src_mx),
                                    ],
                                ),
                                reads: vec![span(base, win_w, src.beats, win_h, rs, src.beats)],
                                writes: vec![windows[i].1],
                                node: ni,
                            });
                        };
                        if !icts.is_empty() {
                            load_window(&mut steps, 0);
                        }
                        let mut window = 0usize;
                        let mut first_of = vec![true; members.len()];
                        let mut tap_of = vec![0usize; members.len()];
                        for k in 0..entries.len() {
                            let Entry { ict, j, ky, kx, .. } = entries[k];
                            if ict != icts[window] {
                                window += 1;
                            }
                            let (in0, in_region) = windows[window];
                            // Prefetch the next window after this window's second-to-last matmul,
                            // so its beats overlap the last two matmuls and do not delay the weight
                            // loads queued before them.
                            let last_of_window =
                                k + 1 == entries.len() || entries[k + 1].ict != ict;
                            let second_to_last = k + 2 < entries.len() + 1
                                && !last_of_window
                                && (k + 2 == entries.len() || entries[k + 2].ict != ict);
                            let single = last_of_window && (k == 0 || entries[k - 1].ict != ict);
                            let prefetch_here = second_to_last || single;
                            if k == 0 {
                                steps.push(loads[0].take().expect("first weight load"));
                                push(
                                    &mut steps,
                                    instr(
                                        Opcode::Matmul,
                                        &[
                                            ("preload", 1),
                                            ("weight_addr", slot_of[0]),
                                            ("count0", 0),
                                            ("count1", 1),
                                            ("mx", mx),
                                        ],
                                    ),
                                    vec![w_slot(0)],
                                    vec![],
                                );
                            }
                            // The next matmul's weights are shifted in while this one streams.
                            let next = k + 1 < entries.len();
                            if next {
                                if let Some(load) = loads[k + 1].take() {
                                    steps.push(load);
                                }
                            }
                            let mut reads = vec![in_region];
                            if next {
                                reads.push(w_slot(k + 1));
                            }
                            push(
                                &mut steps,
                                instr(
                                    Opcode::Matmul,
                                    &[
                                        ("swap", 1),
                                        ("accumulate", u64::from(!first_of[j] && !pool)),
                                        ("preload", u64::from(next)),
                                        ("weight_addr", if next { slot_of[k + 1] } else { 0 }),
                                        (
                                            "input_addr",
                                            in0 + poff + (ky as u64) * win_w + kx as u64,
                                        ),
                                        ("count0", w),
                                        ("stride0", s_e as u64),
                                        ("count1", h),
                                        ("stride1", s_e as u64 * win_w),
                                        ("acc_addr", acc_of(j)),
                                        ("mx", mx),
                                    ],
                                ),
                                reads,
                                vec![acc_region(j)],
                            );
                            first_of[j] = false;
                            if prefetch_here && window + 1 < icts.len() {
                                load_window(&mut steps, window + 1);
                            }
                            if pool {
                                // Max-pool: each tap's values go through the vector unit and are
                                // folded into the output rows in place.
                                push(
                                    &mut steps,
                                    instr(
                                        Opcode::Vector,
                                        &[
                                            ("acc_addr", acc_of(j)),
                                            ("out_addr", outs[j].0),
                                            ("opnd_addr", outs[j].0),
                                            ("count", rows),
                                            ("pool", u64::from(tap_of[j] > 0)),
                                            ("multiplier", 1),
                                            ("shift", 0),
                                            ("mx_out", out_mx),
                                            ("fixed_scale", u64::from(n.fixed_scale)),
                                        ],
                                    ),
                                    vec![acc_region(j), out_region(j)],
                                    vec![out_region(j)],
                                );
                                tap_of[j] += 1;
                            }
                        }

                        if n.pool.is_some() {
                            // Fused max-pool: requantize this pool tap and keep the maximum.
                            for j in 0..members.len() {
                                let mut reads = vec![acc_region(j), out_region(j)];
                                if has_bias[j] {
                                    reads.push(Res::Spad(
                                        Buffer::Accumulator,
                                        bias_row(j),
                                        bias_row(j) + 1,
                                    ));
                                }
                                push(
                                    &mut steps,
                                    instr(
                                        Opcode::Vector,
                                        &post(
                                            j,
                                            &[
                                                ("acc_addr", acc_of(j)),
                                                ("out_addr", outs[j].0),
                                                ("opnd_addr", outs[j].0),
                                                ("count", rows),
                                                ("pool", u64::from(ptap > 0)),
                                            ],
                                        ),
                                    ),
                                    reads,
                                    vec![out_region(j)],
                                );
                            }
                        }
                    }

                    // Requantize and store every output-channel tile of the group.
                    for (j, &oct) in members.iter().enumerate() {
                        if let Some(r) = res {
                            let base = r.addr(oct, r.pad + oy0, r.pad + ox0);
                            let rs = r.wp() as u64 * r.beats;
                            push(
                                &mut steps,
                                instr(
                                    Opcode::Load,
                                    &[
                                        ("buffer", Buffer::Output as u64),
                                        ("spad_addr", outs[j].1),
                                        ("ext_addr", base),
                                        ("count0", w),
                                        ("stride0", r.beats),
                                        ("count1", h),
                                        ("stride1", rs),
                                    ],
                                ),
                                vec![span(base, w, r.beats, h, rs, r.beats)],
                                vec![opnd_region(j)],
                            );
                        }
                        if !pool && n.pool.is_none() {
                            let mut reads = vec![acc_region(j)];
                            if has_bias[j] {
                                reads.push(Res::Spad(
                                    Buffer::Accumulator,
                                    bias_row(j),
                                    bias_row(j) + 1,
                                ));
                            }
                            if res.is_some() {
                                reads.push(opnd_region(j));
                            }
                            push(
                                &mut steps,
                                instr(
                                    Opcode::Vector,
                                    &post(
                                        j,
                                        &[
                                            ("acc_addr", acc_of(j)),
                                            ("out_addr", outs[j].0),
                                            ("opnd_addr", outs[j].1),
                                            ("count", rows),
                                            ("add", u64::from(res.is_some())),
                                        ],
                                    ),
                                ),
                                reads,
                                vec![out_region(j)],
                            );
                        }
                        let dst_base = dst.addr(oct, dst.pad + oy0, dst.pad + ox0);
                        let row_stride = dst.wp() as u64 * dst.beats;
                        push(
                            &mut steps,
                            instr(
                                Opcode::Store,
                                &[
                                    ("buffer", Buffer::Output as u64),
                                    ("spad_addr", outs[j].0),
                                    ("ext_addr", dst_base),
                                    ("count0", w),
                                    ("stride0", dst.beats),
                                    ("count1", h),
                                    ("stride1", row_stride),
                                    ("scale", out_mx),
                                ],
                            ),
                            vec![out_region(j)],
                            vec![span(dst_base, w, dst.beats, h, row_stride, dst.beats)],
                        );
                    }
                }
            }
        }
    }
    steps
}

/// Nearest upsampling by `f`: for each output row, one identity matmul repeats every pixel
/// of its input row `f` times (inner loop: `f` times the same row; outer loop: the pixels),
/// then the vector unit copies the rows and the store writes them.
#[allow(clippy::too_many_arguments)]
fn upsample(
    steps: &mut Vec<Step>,
    ni: usize,
    f: usize,
    src: &crate::compiler::TensorLayout,
    dst: &crate::compiler::TensorLayout,
    tiling: Tiling,
    alloc: &Alloc,
    bud: &super::tile::Budget,
    t: usize,
    counters: (&mut usize, &mut usize, &mut usize, &mut usize),
) {
    let (group_no, out_no, in_no, w_no) = counters;
    let (oh, ow) = (dst.h, dst.w);
    let in_w = src.w as u64;
    let push = |steps: &mut Vec<Step>, instr: Instr, reads: Vec<Res>, writes: Vec<Res>| {
        steps.push(Step {
            instr,
            reads,
            writes,
            node: ni,
        });
    };
    for ct in 0..dst.tiles {
        for oy0 in (0..oh).step_by(tiling.th) {
            let h = tiling.th.min(oh - oy0);
            let rows = (h * ow) as u64;
            let acc0 = (*group_no % 2) as u64 * bud.acc_bank as u64;
            *group_no += 1;
            let out0 = (*out_no % 2) as u64 * 2 * bud.out_quarter as u64;
            *out_no += 1;
            let acc_region = Res::Spad(Buffer::Accumulator, acc0, acc0 + rows);
            let out_region = Res::Spad(Buffer::Output, out0, out0 + rows);
            // Input rows oy0/f ..= (oy0+h-1)/f, full width.
            let iy0 = oy0 / f;
            let in_rows = ((oy0 + h - 1) / f - iy0 + 1) as u64;
            let in0 = (*in_no % 2) as u64 * bud.input_half as u64;
            *in_no += 1;
            let in_region = Res::Spad(Buffer::Input, in0, in0 + in_rows * in_w);
            let base = src.addr(ct, src.pad + iy0, src.pad);
            let rs = src.wp() as u64 * src.beats;
            push(
                steps,
                instr(
                    Opcode::Load,
                    &[
                        ("buffer", Buffer::Input as u64),
                        ("spad_addr", in0),
                        ("ext_addr", base),
                        ("count0", in_w),
                        ("stride0", src.beats),
                        ("count1", in_rows),
                        ("stride1", rs),
                    ],
                ),
                vec![span(base, in_w, src.beats, in_rows, rs, src.beats)],
                vec![in_region],
            );
            if *w_no + 1 > bud.weight_slots {
                *w_no = 0;
            }
            let slot = (*w_no * t) as u64;
            *w_no += 1;
            let w_region = Res::Spad(Buffer::Weight, slot, slot + t as u64);
            let id_rows = t as u64;
            push(
                steps,
                instr(
                    Opcode::Load,
                    &[
                        ("buffer", Buffer::Weight as u64),
                        ("spad_addr", slot),
                        ("ext_addr", alloc.identity),
                        ("count0", id_rows),
                        ("stride0", alloc.weight_beats),
                        ("count1", 1),
                    ],
                ),
                vec![Res::Dram(
                    alloc.identity,
                    alloc.identity + id_rows * alloc.weight_beats,
                )],
                vec![w_region],
            );
            push(
                steps,
                instr(
                    Opcode::Matmul,
                    &[
                        ("preload", 1),
                        ("weight_addr", slot),
                        ("count0", 0),
                        ("count1", 1),
                    ],
                ),
                vec![w_region],
                vec![],
            );
            for r in 0..h {
                let next = r + 1 < h;
                let mut reads = vec![in_region];
                if next {
                    reads.push(w_region);
                }
                let in_row = ((oy0 + r) / f - iy0) as u64;
                push(
                    steps,
                    instr(
                        Opcode::Matmul,
                        &[
                            ("swap", 1),
                            ("preload", u64::from(next)),
                            ("weight_addr", slot),
                            ("input_addr", in0 + in_row * in_w),
                            ("count0", f as u64),
                            ("stride0", 0),
                            ("count1", in_w),
                            ("stride1", 1),
                            ("acc_addr", acc0 + (r * ow) as u64),
                        ],
                    ),
                    reads,
                    vec![Res::Spad(
                        Buffer::Accumulator,
                        acc0 + (r * ow) as u64,
                        acc0 + ((r + 1) * ow) as u64,
                    )],
                );
            }
            push(
                steps,
                instr(
                    Opcode::Vector,
                    &[
                        ("acc_addr", acc0),
                        ("out_addr", out0),
                        ("count", rows),
                        ("multiplier", 1),
                        ("shift", 0),
                    ],
                ),
                vec![acc_region],
                vec![out_region],
            );
            let dst_base = dst.addr(ct, dst.pad + oy0, dst.pad);
            let row_stride = dst.wp() as u64 * dst.beats;
            push(
                steps,
                instr(
                    Opcode::Store,
                    &[
                        ("buffer", Buffer::Output as u64),
                        ("spad_addr", out0),
                        ("ext_addr", dst_base),
                        ("count0", ow as u64),
                        ("stride0", dst.beats),
                        ("count1", h as u64),
                        ("stride1", row_stride),
                    ],
                ),
                vec![out_region],
                vec![span(
                    dst_base, ow as u64, dst.beats, h as u64, row_stride, dst.beats,
                )],
            );
        }
    }
}
