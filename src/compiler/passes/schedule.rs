//! schedule: the instruction stream in program order. For every layer, output-channel
//! tile and spatial tile: load the residual operand and the bias, then for every input-
//! channel tile load the input window (alternating input-buffer halves) and for every kernel
//! tap load the weight tile (round-robin weight slots), preload it and stream the window
//! through the array, accumulating; then requantize in the vector unit and store. Tiles
//! alternate accumulator banks and output-buffer halves, so the next tile's loads and
//! matmuls overlap this tile's vector and store work once `sync` adds the semaphores.
//! Every instruction lists the buffer rows and memory beats it reads and writes.

use super::allocate::{weight_tile, window, Alloc};
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

#[allow(clippy::too_many_lines)]
pub fn run(design: &Design, g: &Graph, alloc: &Alloc, tiling: &[Tiling]) -> Vec<Step> {
    let t = g.unit.cpf as usize;
    let bud = budget(design, g);
    let mut steps: Vec<Step> = Vec::new();
    let (mut tile_no, mut in_no, mut w_no) = (0usize, 0usize, 0usize);
    for (ni, n) in g.nodes.iter().enumerate() {
        let (kh, kw, s, pad) = window(n);
        let src = &alloc.tensors[&n.input];
        let dst = &alloc.tensors[&n.name];
        let res = n.residual.as_ref().map(|r| &alloc.tensors[r]);
        let cin = src.c;
        let [oh, ow, cout] = n.out;
        let Tiling { th, tw } = tiling[ni];
        let (requant, relu, pool) = match &n.op {
            Op::Conv { requant, relu, .. } => (*requant, *relu, false),
            Op::AvgPool { requant, .. } => (*requant, false, false),
            Op::Add { requant, relu } => (*requant, *relu, false),
            Op::MaxPool { .. } => (Requant::IDENTITY, false, true),
            Op::Upsample { .. } => unreachable!("legalize refuses upsample"),
        };
        let push = |steps: &mut Vec<Step>, instr: Instr, reads: Vec<Res>, writes: Vec<Res>| {
            steps.push(Step {
                instr,
                reads,
                writes,
                node: ni,
            });
        };
        for oct in 0..cout.div_ceil(t) {
            for oy0 in (0..oh).step_by(th) {
                for ox0 in (0..ow).step_by(tw) {
                    let (h, w) = (th.min(oh - oy0) as u64, tw.min(ow - ox0) as u64);
                    let rows = h * w;
                    let bank = (tile_no % 2) as u64;
                    let acc0 = bank * bud.acc_bank as u64;
                    let bias_row = acc0 + bud.acc_rows as u64;
                    let out_rows = if res.is_some() {
                        bud.out_quarter
                    } else {
                        2 * bud.out_quarter
                    };
                    let out0 = (tile_no % 2) as u64 * out_rows as u64;
                    let opnd0 = (2 + tile_no % 2) as u64 * bud.out_quarter as u64;
                    tile_no += 1;
                    let acc_region = Res::Spad(Buffer::Accumulator, acc0, acc0 + rows);
                    let out_region = Res::Spad(Buffer::Output, out0, out0 + rows);
                    let opnd_region = Res::Spad(Buffer::Output, opnd0, opnd0 + rows);
                    let dst_base = dst.addr(oct, dst.pad + oy0, dst.pad + ox0);
                    let row_stride = dst.wp() as u64 * dst.beats;

                    if let Some(r) = res {
                        let base = r.addr(oct, r.pad + oy0, r.pad + ox0);
                        let rs = r.wp() as u64 * r.beats;
                        push(
                            &mut steps,
                            instr(
                                Opcode::Load,
                                &[
                                    ("buffer", Buffer::Output as u64),
                                    ("spad_addr", opnd0),
                                    ("ext_addr", base),
                                    ("count0", w),
                                    ("stride0", r.beats),
                                    ("count1", h),
                                    ("stride1", rs),
                                ],
                            ),
                            vec![span(base, w, r.beats, h, rs, r.beats)],
                            vec![opnd_region],
                        );
                    }
                    let bias = alloc.bias.get(&(ni, oct)).copied();
                    if let Some(b) = bias {
                        push(
                            &mut steps,
                            instr(
                                Opcode::Load,
                                &[
                                    ("buffer", Buffer::Accumulator as u64),
                                    ("spad_addr", bias_row),
                                    ("ext_addr", b),
                                    ("count0", 1),
                                    ("stride0", alloc.acc_beats),
                                    ("count1", 1),
                                ],
                            ),
                            vec![Res::Dram(b, b + alloc.acc_beats)],
                            vec![Res::Spad(Buffer::Accumulator, bias_row, bias_row + 1)],
                        );
                    }

                    // Every (input-channel tile, tap) of this output tile, in order, with
                    // where its weights come from.
                    let taps: Vec<(usize, usize, usize, u64)> = match alloc.weights.get(&(ni, oct))
                    {
                        Some((base, list)) => list
                            .iter()
                            .enumerate()
                            .map(|(k, &(ict, ky, kx))| {
                                (ict, ky, kx, base + (k * t) as u64 * alloc.weight_beats)
                            })
                            .collect(),
                        None => (0..cin.div_ceil(t))
                            .flat_map(|ict| {
                                (0..kh).flat_map(move |ky| (0..kw).map(move |kx| (ict, ky, kx)))
                            })
                            .filter(|&(ict, ky, kx)| {
                                weight_tile(n, cin, t, oct, ict, ky, kx).is_some()
                            })
                            .map(|(ict, ky, kx)| (ict, ky, kx, alloc.identity))
                            .collect(),
                    };
                    let identity = !matches!(n.op, Op::Conv { .. });
                    let (win_h, win_w) = (
                        (h - 1) * s as u64 + kh as u64,
                        (w - 1) * s as u64 + kw as u64,
                    );
                    // Weight slots: taps are loaded in groups into alternating halves of the
                    // weight buffer; an identity tile is loaded once per output tile.
                    let group = if identity {
                        taps.len()
                    } else {
                        bud.weight_slots / 2
                    };
                    let half_rows = (bud.weight_slots / 2 * t) as u64;
                    let mut slot_of = vec![0u64; taps.len()];
                    let mut group_loads: Vec<Option<Step>> = vec![None; taps.len()];
                    for (k, chunk) in taps.chunks(group.max(1)).enumerate() {
                        let first = k * group.max(1);
                        let half = (w_no % 2) as u64 * half_rows;
                        w_no += 1;
                        let rows = if identity {
                            t as u64
                        } else {
                            (chunk.len() * t) as u64
                        };
                        for j in 0..chunk.len() {
                            slot_of[first + j] = if identity {
                                half
                            } else {
                                half + (j * t) as u64
                            };
                        }
                        let src_addr = chunk[0].3;
                        let w_region = Res::Spad(Buffer::Weight, half, half + rows);
                        group_loads[first] = Some(Step {
                            instr: instr(
                                Opcode::Load,
                                &[
                                    ("buffer", Buffer::Weight as u64),
                                    ("spad_addr", half),
                                    ("ext_addr", src_addr),
                                    ("count0", rows),
                                    ("stride0", alloc.weight_beats),
                                    ("count1", 1),
                                ],
                            ),
                            reads: vec![Res::Dram(src_addr, src_addr + rows * alloc.weight_beats)],
                            writes: vec![w_region],
                            node: ni,
                        });
                    }
                    let w_slot =
                        |k: usize| Res::Spad(Buffer::Weight, slot_of[k], slot_of[k] + t as u64);
                    let mut in_region = Res::Spad(Buffer::Input, 0, 0);
                    let mut in0 = 0;
                    let mut cur_ict = usize::MAX;
                    for k in 0..taps.len() {
                        let (ict, ky, kx, _) = taps[k];
                        if ict != cur_ict {
                            // The input window of this tile, in the source tensor's padded frame.
                            cur_ict = ict;
                            let y0 = oy0 * s + src.pad - pad;
                            let x0 = ox0 * s + src.pad - pad;
                            in0 = (in_no % 2) as u64 * bud.input_half as u64;
                            in_no += 1;
                            let base = src.addr(ict, y0, x0);
                            let rs = src.wp() as u64 * src.beats;
                            in_region = Res::Spad(Buffer::Input, in0, in0 + win_h * win_w);
                            push(
                                &mut steps,
                                instr(
                                    Opcode::Load,
                                    &[
                                        ("buffer", Buffer::Input as u64),
                                        ("spad_addr", in0),
                                        ("ext_addr", base),
                                        ("count0", win_w),
                                        ("stride0", src.beats),
                                        ("count1", win_h),
                                        ("stride1", rs),
                                    ],
                                ),
                                vec![span(base, win_w, src.beats, win_h, rs, src.beats)],
                                vec![in_region],
                            );
                        }
                        if k == 0 {
                            steps.push(group_loads[0].take().expect("first group"));
                            push(
                                &mut steps,
                                instr(
                                    Opcode::Matmul,
                                    &[
                                        ("preload", 1),
                                        ("weight_addr", slot_of[0]),
                                        ("count0", 0),
                                        ("count1", 1),
                                    ],
                                ),
                                vec![w_slot(0)],
                                vec![],
                            );
                        }
                        // The next tap's weights are shifted in while this tap streams.
                        let next = k + 1 < taps.len();
                        if next {
                            if let Some(load) = group_loads[k + 1].take() {
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
                                    ("accumulate", u64::from(k > 0 && !pool)),
                                    ("preload", u64::from(next)),
                                    ("weight_addr", if next { slot_of[k + 1] } else { 0 }),
                                    ("input_addr", in0 + (ky as u64) * win_w + kx as u64),
                                    ("count0", w),
                                    ("stride0", s as u64),
                                    ("count1", h),
                                    ("stride1", s as u64 * win_w),
                                    ("acc_addr", acc0),
                                ],
                            ),
                            reads,
                            vec![acc_region],
                        );
                        if pool {
                            // Max-pool: each tap's values go through the vector unit and are
                            // folded into the output rows in place.
                            push(
                                &mut steps,
                                instr(
                                    Opcode::Vector,
                                    &[
                                        ("acc_addr", acc0),
                                        ("out_addr", out0),
                                        ("opnd_addr", out0),
                                        ("count", rows),
                                        ("pool", u64::from(k > 0)),
                                        ("multiplier", 1),
                                        ("shift", 0),
                                    ],
                                ),
                                vec![acc_region, out_region],
                                vec![out_region],
                            );
                        }
                    }
                    if !pool {
                        let mut reads = vec![acc_region];
                        if bias.is_some() {
                            reads.push(Res::Spad(Buffer::Accumulator, bias_row, bias_row + 1));
                        }
                        if res.is_some() {
                            reads.push(opnd_region);
                        }
                        push(
                            &mut steps,
                            instr(
                                Opcode::Vector,
                                &[
                                    ("acc_addr", acc0),
                                    ("out_addr", out0),
                                    ("opnd_addr", opnd0),
                                    ("count", rows),
                                    ("bias", u64::from(bias.is_some())),
                                    ("load_bias", u64::from(bias.is_some())),
                                    ("bias_addr", bias_row),
                                    ("add", u64::from(res.is_some())),
                                    ("relu", u64::from(relu)),
                                    ("multiplier", requant.multiplier),
                                    ("shift", u64::from(requant.shift)),
                                    ("zero_point", (requant.zero_point as u64) & 0xffff),
                                ],
                            ),
                            reads,
                            vec![out_region],
                        );
                    }
                    push(
                        &mut steps,
                        instr(
                            Opcode::Store,
                            &[
                                ("buffer", Buffer::Output as u64),
                                ("spad_addr", out0),
                                ("ext_addr", dst_base),
                                ("count0", w),
                                ("stride0", dst.beats),
                                ("count1", h),
                                ("stride1", row_stride),
                            ],
                        ),
                        vec![out_region],
                        vec![span(dst_base, w, dst.beats, h, row_stride, dst.beats)],
                    );
                }
            }
        }
    }
    steps
}
