//! encode: check every instruction against the ISA and the Design, append `end`, and build
//! the memory images: the input, weight tiles, the identity tile and bias rows before the
//! run, and the output tensor as the golden model says it must be after the run.

use super::allocate::{weight_tile, Alloc};
use super::legalize::Graph;
use super::schedule::Res;
use super::sync::Synced;
use super::tile::Tiling;
use crate::compiler::{CompileError, LayerReport, Program, TensorLayout};
use crate::design::{Design, IntType};
use crate::golden::MxTensor;
use crate::interp::Memory;
use crate::isa::{Buffer, Instr, Opcode};
use crate::model::{Model, Tensor};

/// Write a tensor into its layout (channels past `c` in the last tile stay zero).
pub fn write_tensor(mem: &mut Memory, l: &TensorLayout, x: &Tensor, t: IntType) {
    for ct in 0..l.tiles {
        for y in 0..l.h {
            for xx in 0..l.w {
                let row: Vec<i64> = (0..l.tile)
                    .map(|k| {
                        let ch = ct * l.tile + k;
                        if ch < l.c {
                            x.at(y, xx, ch)
                        } else {
                            0
                        }
                    })
                    .collect();
                mem.write_row(l.addr(ct, y + l.pad, xx + l.pad), l.beats, &row, t);
            }
        }
    }
}

/// Write an MX tensor: each row is a channel tile (one block) followed by its scale.
pub fn write_mx_tensor(mem: &mut Memory, l: &TensorLayout, x: &MxTensor, t: IntType) {
    for ct in 0..l.tiles {
        for y in 0..l.h {
            for xx in 0..l.w {
                let mut row: Vec<i64> = (0..l.tile)
                    .map(|k| x.t.at(y, xx, ct * l.tile + k))
                    .collect();
                row.push(i64::from(x.scales[(y * l.w + xx) * l.tiles + ct]));
                mem.write_mx_row(l.addr(ct, y + l.pad, xx + l.pad), l.beats - 1, &row, t);
            }
        }
    }
}

/// Read a tensor back from its layout (only the real channels).
pub fn read_tensor(mem: &Memory, l: &TensorLayout, t: IntType) -> Tensor {
    let mut x = Tensor::zeros(l.h, l.w, l.c);
    for ct in 0..l.tiles {
        for y in 0..l.h {
            for xx in 0..l.w {
                let row = mem.read_row(l.addr(ct, y + l.pad, xx + l.pad), l.beats, l.tile, t);
                for (k, v) in row.iter().enumerate() {
                    let ch = ct * l.tile + k;
                    if ch < l.c {
                        x.set(y, xx, ch, *v);
                    }
                }
            }
        }
    }
    x
}

pub fn run(
    design: &Design,
    model: &Model,
    g: &Graph,
    alloc: &Alloc,
    tiling: &[Tiling],
    synced: Synced,
) -> Result<Program, CompileError> {
    let u = &g.unit;
    let t = u.cpf as usize;
    let mut instrs = synced.instrs;
    instrs.push(Instr::new(Opcode::End));
    if instrs.len() > design.control.imem_depth as usize {
        return Err(CompileError::new(
            None,
            format!(
                "the program has {} instructions; the instruction memory holds {}",
                instrs.len(),
                design.control.imem_depth
            ),
            "raise control.imem_depth in the config, or compile a smaller model",
        ));
    }
    for (pc, i) in instrs.iter().enumerate() {
        i.check_masks().map_err(|e| {
            CompileError::new(
                None,
                format!("instruction {pc}: {e}"),
                "this is a compiler bug; please report it",
            )
        })?;
    }

    // Memory before the run.
    let mem_w = design.memory.data_width_bits;
    let mut dmem = Memory::new(mem_w, alloc.end as usize);
    let mx_input = model.mx.as_ref().filter(|_| g.input_mx).map(|m| MxTensor {
        t: model.input.clone(),
        scales: m.input_scales.clone(),
    });
    match &mx_input {
        Some(x) => write_mx_tensor(&mut dmem, &alloc.tensors[&g.input], x, g.act),
        None => write_tensor(&mut dmem, &alloc.tensors[&g.input], &model.input, g.act),
    }
    let identity: Vec<Vec<i64>> = (0..t)
        .map(|r| (0..t).map(|c| i64::from(r == c)).collect())
        .collect();
    for (r, row) in identity.iter().enumerate() {
        dmem.write_row(
            alloc.identity + r as u64 * alloc.weight_beats,
            alloc.weight_beats,
            row,
            u.datatype.weight,
        );
    }
    for (&(ni, oct), (base, taps)) in &alloc.weights {
        let n = &g.nodes[ni];
        let cin = g.shape_of(&n.input)[2];
        let wt = super::allocate::tile_rows(u, n) as usize;
        for (k, &(ict, ky, kx)) in taps.iter().enumerate() {
            let tile = weight_tile(n, cin, t, oct, ict, ky, kx).expect("allocated tiles exist");
            for (r, row) in tile.iter().enumerate() {
                let at = base + ((k * wt + r) as u64) * alloc.weight_beats;
                dmem.write_row(at, alloc.weight_beats, row, u.datatype.weight);
            }
            if let Some(mx) = model.mx.as_ref().filter(|_| n.mx) {
                // The tile's scale row: the E8M0 scale of each output channel's block.
                let crate::model::Op::Conv { kw, cout, .. } = &n.op else {
                    unreachable!("weight tiles belong to convolutions")
                };
                // The tile's scale rows: byte c (little-endian across the rows) is the E8M0
                // scale of output channel oct * t + c.
                let scales = &mx.weight_scales[&n.name];
                let blocks = cin / t;
                let bytes: Vec<u8> = (0..t)
                    .map(|c| scales[((ky * kw + kx) * blocks + ict) * cout + oct * t + c])
                    .collect();
                for (s, row) in mx.format.pack_scale_rows(&bytes).iter().enumerate() {
                    let at = base + ((k * wt + t + s) as u64) * alloc.weight_beats;
                    dmem.write_row(at, alloc.weight_beats, row, u.datatype.weight);
                }
            }
        }
    }
    for (&(ni, oct), &base) in &alloc.bias {
        let crate::model::Op::Conv { bias, .. } = &g.nodes[ni].op else {
            unreachable!()
        };
        let row: Vec<i64> = (0..t)
            .map(|k| bias.get(oct * t + k).copied().unwrap_or(0))
            .collect();
        dmem.write_row(base, alloc.acc_beats, &row, u.datatype.accumulator);
    }

    // The golden model's output in the output layout.
    let model_output = &model.layers.last().expect("layers").name;
    let output = alloc.tensors[&g.output].clone();
    let mut expected = Memory::new(mem_w, alloc.end as usize);
    if model.fp.is_some() {
        let golden = crate::golden::run_fp(model, t);
        write_tensor(&mut expected, &output, &golden[model_output], g.act);
    } else if model.is_mixed() {
        let golden = crate::golden::run_mixed(model, u.datatype.accumulator);
        match &golden[model_output] {
            crate::golden::Value::Mx(y) => write_mx_tensor(&mut expected, &output, y, g.act),
            crate::golden::Value::Int(y) => write_tensor(&mut expected, &output, y, g.act),
        }
    } else if model.mx.is_some() {
        let golden = crate::golden::run_mx(model);
        write_mx_tensor(&mut expected, &output, &golden[model_output], g.act);
    } else {
        let golden = crate::golden::run(model, u.datatype.accumulator);
        write_tensor(&mut expected, &output, &golden[model_output], g.act);
    }

    // Per-layer report with the estimator.
    let bytes_per_beat = u64::from(mem_w / 8);
    let bw = u64::from(design.memory.bytes_per_cycle).max(1);
    let fill = u64::from(u.cpf + u.kpf) + u64::from(design.memory.latency_cycles);
    let mut layers = Vec::new();
    for (ni, n) in g.nodes.iter().enumerate() {
        let steps: Vec<_> = synced.steps.iter().filter(|s| s.node == ni).collect();
        let compute: u64 = steps
            .iter()
            .filter(|s| s.instr.opcode == Opcode::Matmul)
            .map(|s| {
                let rows = s.instr.get("count0") * s.instr.get("count1");
                // A preload-only matmul costs cpf cycles of weight shifting; a streaming one
                // its rows plus the issue bubble.
                if rows == 0 {
                    0
                } else {
                    rows + 2
                }
            })
            .sum();
        let vector: u64 = steps
            .iter()
            .filter(|s| s.instr.opcode == Opcode::Vector)
            .map(|s| s.instr.get("count") + 7)
            .sum();
        let beats: u64 = steps
            .iter()
            .filter(|s| matches!(s.instr.opcode, Opcode::Load | Opcode::Store))
            .map(|s| {
                let rows = s.instr.get("count0") * s.instr.get("count1");
                let per_row = match (s.instr.opcode, s.writes.first(), s.reads.first()) {
                    (Opcode::Load, Some(Res::Spad(b, ..)), _) => beats_of(alloc, *b),
                    _ => alloc.act_beats,
                };
                // An integer row of a multi-precision design leaves out the scale beat.
                let per_row = match s.writes.first().or(s.reads.first()) {
                    Some(Res::Spad(Buffer::Input | Buffer::Output, ..))
                        if u.datatype.multi_precision && s.instr.get("scale") == 0 =>
                    {
                        per_row - 1
                    }
                    _ => per_row,
                };
                rows * per_row
            })
            .sum();
        let memory = beats * bytes_per_beat / bw;
        let macs = n.macs;
        let _ = tiling;
        layers.push(LayerReport {
            name: n.name.clone(),
            op: n.op.name().to_string(),
            datatype: match (u.datatype.fp, u.datatype.mx) {
                (Some(f), _) => f.name.to_string(),
                (_, Some(m)) if n.mx => m.element.to_string(),
                _ => g.act.to_string(),
            },
            macs,
            instructions: steps.len(),
            estimated_cycles: compute.max(memory).max(vector) + fill,
        });
    }
    Ok(Program {
        design_hash: design.hash(),
        instrs,
        dmem,
        output,
        expected,
        macs: layers.iter().map(|l| l.macs).sum(),
        layers,
    })
}

fn beats_of(alloc: &Alloc, b: Buffer) -> u64 {
    match b {
        Buffer::Input | Buffer::Output => alloc.act_beats,
        Buffer::Weight => alloc.weight_beats,
        Buffer::Accumulator => alloc.acc_beats,
    }
}
