//! encode: check every instruction against the ISA and the Design, append `end`, and build
//! the memory image before the run: the input, the weight tiles (element rows, then their
//! precision's scale rows), the identity tile and the bias rows.

use super::allocate::Placed;
use super::allocate::{tile_rows, weight_tile, window_weight_row, Alloc};
use super::frames::{self, frame_model, Framed, Reloc};
use super::legalize::Graph;
use super::map::Stage;
use super::schedule::Scheduled;
use crate::compiler::{
    CompileError, Elastic, LayerReport, OutputRegion, Program, StageReport, TensorLayout,
};
use crate::design::Design;
use crate::interp::Memory;
use crate::isa::Instr;
use crate::model::lower::{Stencil, Taps};
use crate::model::{Model, Tensor};

/// Write a tensor into its layout: each row is one channel tile of one pixel (channels
/// past `c` in the last tile are zero), then for a block-scaled format its scale beat; a
/// sliced tensor's row of slice p holds bits p*b.. of each value (b the row format's).
pub fn write_tensor(mem: &mut Memory, l: &TensorLayout, x: &Tensor) {
    let t = l.format.code_type();
    let acc = l.value_format().code_type();
    for ct in 0..l.tiles {
        let (plane, tile) = (ct / l.slice_tiles(), ct % l.slice_tiles());
        for y in 0..l.h {
            for xx in 0..l.w {
                let row: Vec<i64> = (0..l.tile)
                    .map(|k| {
                        let ch = tile * l.tile + k;
                        match (ch < l.c, l.planes) {
                            (false, _) => 0,
                            (true, 1) => x.at(y, xx, ch),
                            (true, _) => {
                                let v = i128::from(x.at(y, xx, ch));
                                let shift = crate::numeric::int::slice_shift(plane, t);
                                crate::numeric::int::raw_slice(v, shift, acc, t)
                            }
                        }
                    })
                    .collect();
                let at = l.addr(ct, y + l.pad, xx + l.pad);
                mem.write_row(at, l.elem_beats(), &row, t);
                if l.format.block_scaled() {
                    mem.write_scale(at + l.elem_beats(), x.scale(y, xx, ct));
                }
            }
        }
    }
}

/// Read a tensor back from its layout (only the real channels, and the block scales); a
/// sliced tensor's values are joined from their slices (`numeric::int::join_slices`).
pub fn read_tensor(mem: &Memory, l: &TensorLayout) -> Tensor {
    let t = l.format.code_type();
    let mut x = Tensor::zeros(l.h, l.w, l.c, l.value_format());
    let mut slices =
        vec![Vec::with_capacity(l.planes); if l.planes > 1 { x.data.len() } else { 0 }];
    for ct in 0..l.tiles {
        let tile = ct % l.slice_tiles();
        for y in 0..l.h {
            for xx in 0..l.w {
                let at = l.addr(ct, y + l.pad, xx + l.pad);
                let row = mem.read_row(at, l.elem_beats(), l.tile, t);
                for (k, v) in row.iter().enumerate() {
                    let ch = tile * l.tile + k;
                    if ch < l.c && l.planes > 1 {
                        slices[(y * l.w + xx) * l.c + ch].push(*v);
                    } else if ch < l.c {
                        x.set(y, xx, ch, *v);
                    }
                }
                if l.format.block_scaled() {
                    x.scales[(y * l.w + xx) * l.tiles + ct] = mem.read_scale(at + l.elem_beats());
                }
            }
        }
    }
    // (Slices are read plane by plane, so each value's are low bits first.)
    let acc = l.value_format().code_type();
    for (v, s) in x.data.iter_mut().zip(&slices) {
        *v = crate::numeric::int::join_slices(s, t, acc);
    }
    x
}

/// The program of a run: every engine's encoded instructions (`run`), the memory image of
/// its frames, every output of every frame, and the reports (`layers`, and per stage
/// `stages` on an elastic Design).
#[allow(clippy::too_many_arguments)]
pub fn program(
    design: &Design,
    model: &Model,
    plan: Scheduled,
    framed: &Framed,
    mut programs: Vec<Vec<Instr>>,
    per_branch: &[usize],
    stages: Vec<StageReport>,
    layers: Vec<LayerReport>,
) -> Program {
    let Placed {
        mapped,
        alloc,
        allocs,
    } = plan.placed;
    let (g, m) = (&mapped.g, &mapped.map);
    let dmem = memory(design, model, (g, &alloc), (&m.stages, &allocs), framed);
    let output = alloc.tensors[&g.outputs[0]].clone();
    let (outputs, macs_run) = outputs(g, &alloc, &m.stages, per_branch, &framed.reloc);
    let macs = layers.iter().map(|l| l.macs).sum();
    let elastic = (!m.single).then(|| Elastic {
        frames: (0..design.branches.len())
            .map(|b| match m.stages.iter().any(|s| s.branch == b) {
                true => per_branch[b],
                false => 0,
            })
            .collect(),
        programs: programs.clone(),
        stages,
    });
    Program {
        design_hash: design.hash(),
        instrs: std::mem::take(&mut programs[0]),
        dmem,
        output,
        outputs,
        macs,
        macs_run,
        layers,
        fused: g.fused.clone(),
        elastic,
    }
}

/// The program: every instruction checked (masks, field widths), `end` appended, and the
/// whole checked against the instruction memory.
pub fn run(design: &Design, mut instrs: Vec<Instr>) -> Result<Vec<Instr>, CompileError> {
    instrs.push(Instr::end());
    frames::fits_program_space(design, instrs.len())?;
    for (pc, i) in instrs.iter().enumerate() {
        i.check_masks()
            .and_then(|()| i.encode().map(|_| ()))
            .map_err(|e| {
                CompileError::new(
                    None,
                    format!("instruction {pc}: {e}"),
                    "this is a compiler bug; please report it",
                )
            })?;
    }
    let max = crate::isa::mask(crate::isa::SEM_COUNT_BITS);
    if let Some((sem, pc, held)) = super::sync::max_outstanding(&instrs, design.control.queue_depth)
        .filter(|&(_, _, held)| held > max)
    {
        return Err(CompileError::new(
            None,
            format!(
                "instruction {pc}: semaphore {} can hold {held} signals, its counter {max}",
                crate::isa::SEMAPHORES[sem].name()
            ),
            "this is a compiler bug; please report it with the model and config",
        ));
    }
    crate::interp::check_sync(design, &instrs).map_err(|e| {
        CompileError::new(
            None,
            format!("the program's semaphores cannot all be satisfied: {e}"),
            "this is a compiler bug; please report it with the model and config",
        )
    })?;
    Ok(instrs)
}

/// Write the tensors the host writes before a run: the model inputs and the concats of
/// model inputs, each at `place(its layout)`.
pub fn write_inputs(
    mem: &mut Memory,
    model: &Model,
    g: &Graph,
    alloc: &Alloc,
    place: impl Fn(&TensorLayout) -> TensorLayout,
) {
    for s in &g.inputs {
        let layout = place(&alloc.tensors[&s.name]);
        write_tensor(mem, &layout, &host_tensor(model, g, &s.name));
    }
}

/// A tensor the host writes: a model input, a concat of model inputs, or the im2col
/// tensor of one of them.
fn host_tensor(model: &Model, g: &Graph, name: &str) -> Tensor {
    let s = g
        .inputs
        .iter()
        .find(|s| s.name == name)
        .expect("a host-written tensor");
    if let Some(ic) = &s.im2col {
        return im2col(&host_tensor(model, g, &ic.of), ic, s.shape);
    }
    if s.joins.is_empty() {
        return model.input_named(name).expect("a model input").clone();
    }
    let parts: Vec<&Tensor> = s
        .joins
        .iter()
        .map(|n| model.input_named(n).expect("a model input"))
        .collect();
    crate::golden::concat(&parts)
}

/// The im2col tensor of `x` (`legalize::Im2col`), of `shape`.
pub fn im2col(x: &Tensor, ic: &super::legalize::Im2col, shape: [usize; 3]) -> Tensor {
    let [oh, ow, c] = shape;
    let mut data = Vec::with_capacity(oh * ow * c);
    for oy in 0..oh {
        for ox in 0..ow {
            for ky in 0..ic.kh {
                for kx in 0..ic.kw {
                    // The pixel the convolution reads for this tap (the golden model's rule).
                    let at = (oy, ox);
                    let pixel =
                        crate::golden::input_pixel(at, (ky, kx), ic.stride, ic.pad, (x.h, x.w));
                    for ci in 0..x.c {
                        data.push(pixel.map_or(ic.pad_value, |(iy, ix)| x.at(iy, ix, ci)));
                    }
                }
            }
        }
    }
    Tensor {
        h: oh,
        w: ow,
        c,
        format: x.format,
        data,
        scales: Vec::new(),
    }
}

/// External memory before the run.
pub fn memory_image(design: &Design, model: &Model, g: &Graph, alloc: &Alloc) -> Memory {
    let mut dmem = Memory::new(design.memory.data_width_bits, alloc.end as usize);
    write_inputs(&mut dmem, model, g, alloc, |l| l.clone());
    write_params(&mut dmem, g, alloc);
    dmem
}

/// The identity tile of `u`: element codes of 1 on the diagonal and, on a Design with MX
/// weights, column scales that make each 1.0 (2^(scale - 127 - frac) = 1), so that an
/// identity pass reads an MX block's values exactly.
fn write_identity(dmem: &mut Memory, u: &crate::design::Unit, alloc: &Alloc) {
    let t = u.cpf as usize;
    let wt = u.datatype.weight_type();
    let ones = (0..t).map(|r| (0..t).map(|c| i64::from(r == c)).collect::<Vec<i64>>());
    let unit_scales = u
        .datatype
        .precisions
        .iter()
        .find_map(|p| match p.ops().weight() {
            crate::numeric::Format::Mx(m) => {
                Some(
                    p.ops()
                        .pack_weight_scales(&vec![(127 + m.elem.frac) as u8; t]),
                )
            }
            _ => None,
        });
    for (r, row) in ones.chain(unit_scales.into_iter().flatten()).enumerate() {
        dmem.write_row(
            alloc.identity + r as u64 * alloc.weight_beats,
            alloc.weight_beats,
            &row,
            wt,
        );
    }
}

/// The identity tile, the table of ones, weight tiles and biases of `alloc` in the layout
/// of `g.unit`.
pub fn write_params(dmem: &mut Memory, g: &Graph, alloc: &Alloc) {
    let u = &g.unit;
    let t = u.cpf as usize;
    let mem_w = u64::from(dmem.beat_bits);
    let wt = u.datatype.weight_type();
    write_identity(dmem, u, alloc);
    if let Some((ones, beats)) = alloc.ones {
        for m in 1..=t {
            let row: Vec<i64> = (0..t).map(|c| i64::from(c < m)).collect();
            dmem.write_row(
                ones + (m as u64 - 1) * beats,
                beats,
                &row,
                u.datatype.input_type(),
            );
        }
    }
    for (&(ni, oct), (base, taps)) in &alloc.weights {
        let n = &g.nodes[ni];
        // Run-time weights are loaded from their tensor.
        if n.weights_from().is_some() {
            continue;
        }
        let cin = g.shape_of(&n.input)[2];
        let rows = tile_rows(u, n) as usize;
        let p = u.datatype.get(n.prec);
        for (k, &(ict, ky, kx)) in taps.iter().enumerate() {
            let tile = weight_tile(n, cin, t, oct, ict, ky, kx).expect("allocated tiles exist");
            let Stencil {
                kw,
                cout,
                taps: Taps::Weighted { weight_scales, .. },
                ..
            } = n.stencil()
            else {
                unreachable!("weight tiles belong to weighted windows")
            };
            // Byte c of the scale rows is the block scale of output channel oct * t + c.
            let scales: Vec<u8> = (0..t)
                .map(|c| {
                    let co = oct * t + c;
                    let i = ((ky * kw + kx) * cin.div_ceil(t) + ict) * cout + co;
                    weight_scales.get(i).copied().unwrap_or(0)
                })
                .collect();
            let rows_of_tile = tile.into_iter().chain(p.pack_weight_scales(&scales));
            for (r, row) in rows_of_tile.enumerate().take(rows) {
                let at = base + ((k * rows + r) as u64) * alloc.weight_beats;
                dmem.write_row(at, alloc.weight_beats, &row, wt);
            }
        }
    }
    for (&(ni, oct), &base) in &alloc.window_weights {
        let n = &g.nodes[ni];
        let (kh, kw, _, _) = super::allocate::window(n);
        for ky in 0..kh {
            for kx in 0..kw {
                let row = window_weight_row(n, t, oct, ky, kx);
                let at = base + ((ky * kw + kx) as u64) * alloc.weight_beats;
                dmem.write_row(at, alloc.weight_beats, &row, wt);
            }
        }
    }
    for (&ni, ub) in &alloc.untied {
        let untied_bias = &g.nodes[ni].post().untied_bias;
        let [oh, ow, cout] = g.nodes[ni].out;
        let (base, beats) = (ub.base, ub.beats);
        let acc = crate::numeric::IntType::new(true, ub.bits);
        // The lanes the beats hold (all of the row's, or the layer's channels and the
        // zeros after them up to a whole beat).
        let fit = (beats * mem_w / u64::from(ub.bits)) as usize;
        for oct in 0..cout.div_ceil(t) {
            for p in 0..oh * ow {
                let row: Vec<i64> = (0..t)
                    .map(|k| {
                        let c = oct * t + k;
                        if c < cout {
                            untied_bias[p * cout + c]
                        } else {
                            0
                        }
                    })
                    .collect();
                let at = base + ((oct * oh * ow + p) as u64) * beats;
                dmem.write_row(at, beats, &row[..fit.min(t)], acc);
            }
        }
    }
    let acc = u.datatype.acc_type();
    for (&ni, &base) in &alloc.rows {
        let n = &g.nodes[ni];
        let work = n
            .work
            .rows()
            .or(n.then.as_ref())
            .expect("row images belong to row programs");
        let image = crate::compiler::rowprog::image(work, u.kpf as usize, n.out[2]);
        for (k, row) in image.rows.iter().enumerate() {
            let words: Vec<i64> = row.iter().map(|w| i64::from(*w as i32)).collect();
            dmem.write_row(
                base + k as u64 * alloc.acc_beats,
                alloc.acc_beats,
                &words,
                acc,
            );
        }
    }
    for (&(ni, oct), &base) in &alloc.bias {
        let n = &g.nodes[ni];
        let bias = n.bias();
        let channel_requant = &n.post().channel_requant;
        let row: Vec<i64> = (0..t)
            .map(|k| bias.get(oct * t + k).copied().unwrap_or(0))
            .collect();
        dmem.write_row(base, alloc.acc_beats, &row, acc);
        if !channel_requant.is_empty() {
            // The scale row: lane k's multiplier and shift (`isa::scale_word`), as the
            // accumulator element with those bits (padding lanes 0).
            let row: Vec<i64> = (0..t)
                .map(|k| {
                    let (m, s) = channel_requant.get(oct * t + k).copied().unwrap_or((0, 0));
                    acc.wrap(i128::from(crate::isa::scale_word(m, s)))
                })
                .collect();
            dmem.write_row(base + alloc.acc_beats, alloc.acc_beats, &row, acc);
        }
    }
}

/// External memory before the run: the single-frame image, then every later frame's inputs
/// in that frame's copy of the activations.
fn memory(
    design: &Design,
    model: &Model,
    (g, alloc): (&Graph, &Alloc),
    (stages, allocs): (&[Stage], &[Alloc]),
    framed: &Framed,
) -> crate::interp::Memory {
    let mut dmem = crate::interp::Memory::new(design.memory.data_width_bits, framed.end as usize);
    write_inputs(&mut dmem, model, g, alloc, |l| l.clone());
    if allocs.is_empty() {
        write_params(&mut dmem, g, alloc);
    }
    for (st, a) in stages.iter().zip(allocs) {
        let gs = Graph {
            unit: design.branches[st.branch].units[st.unit].clone(),
            ..g.clone()
        };
        write_params(&mut dmem, &gs, a);
    }
    for f in 1..framed.frames {
        let m = frame_model(model, f);
        write_inputs(&mut dmem, &m, g, alloc, |l| framed.reloc.layout(l, f));
    }
    dmem
}

/// Every output, for each frame of the branch that computes it, and the MACs of the whole
/// run.
fn outputs(
    g: &Graph,
    alloc: &Alloc,
    stages: &[Stage],
    per_branch: &[usize],
    reloc: &Reloc,
) -> (Vec<OutputRegion>, u64) {
    // The branch that computes tensor t (a single engine's one branch computes them all,
    // its model inputs and concats too).
    let branch_of = |t: &str| match stages {
        [one] => one.branch,
        _ => {
            stages
                .iter()
                .find(|s| s.nodes.iter().any(|&i| g.nodes[i].tensor() == t))
                .expect("an output is computed")
                .branch
        }
    };
    let frames = per_branch.iter().copied().max().unwrap_or(1);
    let mut outputs = Vec::new();
    for f in 0..frames {
        for o in &g.outputs {
            if f < per_branch[branch_of(o)] {
                outputs.push(OutputRegion {
                    name: o.clone(),
                    frame: f,
                    layout: reloc.layout(&alloc.tensors[o], f),
                });
            }
        }
    }
    let macs_run = stages
        .iter()
        .map(|st| {
            let macs: u64 = st.nodes.iter().map(|&i| g.nodes[i].macs).sum();
            macs * per_branch[st.branch] as u64
        })
        .sum();
    (outputs, macs_run)
}
