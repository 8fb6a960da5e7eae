//! What each instruction does to the engine's state: one path for transfers, one for
//! matmuls and one for vector instructions, each over the precision the instruction names.

use super::{Engine, InterpError, Memory, Streams};
use crate::design::Unit;
use crate::isa::{self, Buffer, Instr, Matmul, Op, Transfer, Vector, Window};
use crate::numeric::{int, Datapath, Format, PostOps, Precision, Requant};

/// A scratchpad row address: the sum wraps at the width of the address fields, and the
/// row is taken modulo the buffer's depth (its low index bits).
pub(super) fn spad(addr: u64, depth: usize) -> usize {
    (addr & isa::mask(isa::SPAD_ADDR_BITS)) as usize % depth
}

/// An external-memory beat address (wraps at the address width).
fn ext(addr: u64) -> u64 {
    addr & isa::mask(isa::EXT_ADDR_BITS)
}

/// The rows of a two-level strided loop: (row index, offset of the row in the loop).
fn rows(count0: u64, count1: u64) -> impl Iterator<Item = (u64, u64, u64)> {
    (0..count1).flat_map(move |i1| (0..count0).map(move |i0| (i1 * count0 + i0, i0, i1)))
}

/// Beats a transfer moves on an engine of unit `u`: its rows, each its elements in whole
/// beats and, for a block-scaled precision of an input or output row, one more beat with
/// the scale.
pub(super) fn transfer_beats(
    u: &Unit,
    mem_w: u32,
    pc: usize,
    t: &Transfer,
) -> Result<u64, InterpError> {
    let elem_beats = row_beats(u, mem_w, pc, t, false)?;
    let slot = u.scale_bits() > 0 && matches!(t.buffer, Buffer::Input | Buffer::Output);
    let scaled = slot && precision(u, pc, t.prec)?.ops().input().block_scaled();
    Ok(t.moved_rows() * (elem_beats + u64::from(scaled)))
}

/// The beats of one row's elements a transfer moves: the buffer's whole row, or the first
/// `row_beats` of an accumulator row a load from memory names.
fn row_beats(
    u: &Unit,
    mem_w: u32,
    pc: usize,
    t: &Transfer,
    store: bool,
) -> Result<u64, InterpError> {
    let (n, elem) = super::row_type(u, t.buffer);
    let whole = (n as u64 * u64::from(elem.bits)).div_ceil(u64::from(mem_w));
    if t.row_beats == 0 && t.widen == 0 {
        return Ok(whole);
    }
    let narrow = isa::widened_bits(t.widen).is_some_and(|w| w < elem.bits);
    if store
        || t.stream
        || t.buffer != Buffer::Accumulator
        || t.row_beats == 0
        || t.row_beats >= whole
        || (t.widen != 0 && !narrow)
    {
        return Err(InterpError::Illegal {
            pc,
            reason: format!(
                "row_beats {} (widen {}) is for a load from memory into the accumulator, of fewer beats than its rows' {whole}, of elements narrower than the accumulator's",
                t.row_beats, t.widen
            ),
        });
    }
    Ok(t.row_beats)
}

/// The precision an instruction names, or why it cannot run.
/// The weight-buffer rows a block load writes for one block of n rows (n = kpf, the
/// weight row's elements): transposed, row r holds element r of each of its rows; else
/// (re-blocked) the rows as they are. Rows of a block-scaled precision end with their
/// scale: transposed, column k's scale is row k's; re-blocked, `mx::reblock` gives the
/// codes and each column's scale; the scale rows follow the element rows.
fn block_tile(
    rows_of: &[Vec<i64>],
    n: usize,
    transpose: bool,
    scaled: Option<crate::numeric::MxInt>,
) -> Vec<Vec<i64>> {
    let Some(elem) = scaled else {
        return (0..n)
            .map(|r| rows_of.iter().map(|v| v[r]).collect())
            .collect();
    };
    let with_scales: Vec<(u8, Vec<i64>)> = rows_of
        .iter()
        .map(|v| (v[n] as u8, v[..n].to_vec()))
        .collect();
    let (mut tile, scales) = match transpose {
        true => (
            (0..n)
                .map(|r| with_scales.iter().map(|(_, q)| q[r]).collect())
                .collect::<Vec<Vec<i64>>>(),
            with_scales.iter().map(|(s, _)| *s).collect::<Vec<u8>>(),
        ),
        false => {
            let (scales, codes) = crate::numeric::mx::reblock(&with_scales, elem);
            (codes, scales)
        }
    };
    let f = crate::numeric::MxFormat {
        elem,
        block_size: n as u32,
    };
    tile.extend(f.pack_scale_rows(&scales));
    tile
}

fn precision(u: &Unit, pc: usize, index: u64) -> Result<Precision, InterpError> {
    let d = &u.datatype;
    if index as usize >= d.precisions.len() {
        return Err(InterpError::Illegal {
            pc,
            reason: format!(
                "precision {index} does not exist: the design runs {}",
                d.precisions
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    Ok(d.precisions[index as usize])
}

impl Engine {
    /// The precision an instruction names, or why it cannot run.
    pub(super) fn precision(&self, pc: usize, index: u64) -> Result<Precision, InterpError> {
        precision(&self.unit, pc, index)
    }

    pub(super) fn execute(
        &mut self,
        pc: usize,
        i: &Instr,
        mem: &mut Memory,
        streams: &mut Streams,
    ) -> Result<(), InterpError> {
        self.trace.push((pc, i.opcode()));
        match &i.op {
            Op::Load(t) if t.stream => self.stream_transfer(pc, t, false, streams),
            Op::Store(t) if t.stream => self.stream_transfer(pc, t, true, streams),
            Op::Load(t) if t.handoff => self.handoff_transfer(pc, t, false, streams),
            Op::Store(t) if t.handoff => self.handoff_transfer(pc, t, true, streams),
            Op::Load(t) => self.transfer(pc, t, false, mem),
            Op::Store(t) => self.transfer(pc, t, true, mem),
            Op::Matmul(m) => self.matmul(pc, m),
            Op::Vector(v) => self.vector(pc, v),
            Op::Window(w) => self.window(pc, w),
            Op::Rows(r) => self.rows(pc, r),
            Op::End => Ok(()),
        }
    }

    /// Beats a stream transfer moves (`transfer_beats`).
    pub(super) fn stream_beats(&self, pc: usize, t: &Transfer) -> Result<u64, InterpError> {
        transfer_beats(&self.unit, self.mem_w, pc, t)
    }

    /// A transfer over the engine's stream link: the rows go through a scratch memory laid
    /// out as consecutive rows (a stream has no addresses), whose beats are pushed to or
    /// popped from the link in order. The caller started it only with the beats available.
    fn stream_transfer(
        &mut self,
        pc: usize,
        t: &Transfer,
        store: bool,
        streams: &mut Streams,
    ) -> Result<(), InterpError> {
        let beats = self.stream_beats(pc, t)?;
        let per_row = beats / (t.count0 * t.count1).max(1);
        let local = t.as_consecutive_rows(per_row);
        let mut scratch = Memory::new(self.mem_w, beats as usize);
        let missing = if store {
            streams.outputs.is_empty()
        } else {
            streams.inputs.is_empty()
        };
        if missing {
            return Err(InterpError::Illegal {
                pc,
                reason: format!(
                    "a stream {} on an engine without a {} link",
                    if store { "store" } else { "load" },
                    if store { "downstream" } else { "upstream" }
                ),
            });
        }
        if store {
            self.transfer(pc, &local, true, &mut scratch)?;
            for fifo in &mut streams.outputs {
                fifo.extend((0..beats as usize).map(|b| scratch.beat_hex(b)));
            }
        } else {
            for b in 0..beats as usize {
                let beats: Vec<String> = streams
                    .inputs
                    .iter_mut()
                    .map(|f| f.pop_front().expect("started with the beats available"))
                    .collect();
                scratch.set_beat_hex(b, &or_hex(&beats));
            }
            self.transfer(pc, &local, false, &mut scratch)?;
        }
        Ok(())
    }

    /// A transfer with the hand-off buffers: a load reads the engine's own, a store writes
    /// into those of every engine it feeds (`streams.handoff_out`, applied after the
    /// instruction), each beat at its address modulo the buffer's depth. The rows go
    /// through a scratch memory of consecutive rows, as a stream's do; a load's padding
    /// rows read nothing. A load of a beat whose slot holds another address (overwritten
    /// before it was read, or never written) is refused: the compiler sizes the hand-offs
    /// so that this cannot happen.
    fn handoff_transfer(
        &mut self,
        pc: usize,
        t: &Transfer,
        store: bool,
        streams: &mut Streams,
    ) -> Result<(), InterpError> {
        let illegal = |reason: String| InterpError::Illegal { pc, reason };
        if t.stream {
            return Err(illegal(
                "a transfer is a stream or a hand-off, not both".into(),
            ));
        }
        let rows = t.moved_rows();
        let beats = transfer_beats(&self.unit, self.mem_w, pc, t)?;
        let per_row = beats.checked_div(rows).unwrap_or(0);
        let local = t.as_consecutive_rows(per_row);
        let mut scratch = Memory::new(self.mem_w, (per_row * t.count0 * t.count1) as usize);
        let at = |i0: u64, i1: u64, b: u64| ext(t.ext_addr + i1 * t.stride1 + i0 * t.stride0 + b);
        if store {
            if streams.handoff_targets == 0 {
                return Err(illegal(
                    "a hand-off store on an engine that feeds no hand-off buffer".into(),
                ));
            }
            self.transfer(pc, &local, true, &mut scratch)?;
            for (k, i0, i1) in super::exec::rows(t.count0, t.count1) {
                for b in 0..per_row {
                    let beat = scratch.beat_hex((k * per_row + b) as usize);
                    streams.handoff_out.push((at(i0, i1, b), beat));
                }
            }
            return Ok(());
        }
        let ring = streams.handoff_in.as_ref().ok_or_else(|| {
            illegal("a hand-off load on an engine without a hand-off buffer".into())
        })?;
        for (k, i0, i1) in super::exec::rows(t.count0, t.count1) {
            if t.is_pad(i0, i1) {
                continue;
            }
            for b in 0..per_row {
                let addr = at(i0, i1, b);
                let hex = ring.read(addr).map_err(illegal)?;
                scratch.set_beat_hex((k * per_row + b) as usize, hex);
            }
        }
        self.transfer(pc, &local, false, &mut scratch)
    }

    /// Rows between external memory and a scratchpad. A row is its elements in whole
    /// beats, and for a block-scaled precision (of an input or output row) one more beat
    /// with the scale; a row that has a scale slot but a precision without scales moves
    /// its elements only, and its slot reads 0.
    fn transfer(
        &mut self,
        pc: usize,
        t: &Transfer,
        store: bool,
        mem: &mut Memory,
    ) -> Result<(), InterpError> {
        let illegal = |reason: &str| InterpError::Illegal {
            pc,
            reason: reason.to_string(),
        };
        if store && t.buffer != Buffer::Output {
            return Err(illegal("store reads the output buffer only"));
        }
        let padded = t.pad_top + t.pad_bottom + t.pad_left + t.pad_right > 0;
        if padded && (store || t.stream) {
            return Err(illegal(
                "only a load from external memory takes padding (zero rows)",
            ));
        }
        let buf = t.buffer;
        // A block load (transposed or re-blocked) goes through the transposer; its rows
        // bring their block scales when its precision has them.
        let block_scaled = match self.precision(pc, t.prec)? {
            crate::numeric::Precision::Mx(f) => Some(f.elem),
            _ => None,
        };
        if t.transpose || t.reblock {
            let kpf = self.unit.kpf as usize;
            if store || buf != Buffer::Weight || t.stream {
                return Err(illegal(
                    "transpose and reblock are loads from external memory into the weight buffer",
                ));
            }
            if self.unit.rows.is_none() {
                return Err(illegal(
                    "transposing and re-blocking loads need a design with [rows] enabled (their transposer)",
                ));
            }
            if t.reblock && (t.transpose || block_scaled.is_none()) {
                return Err(illegal(
                    "reblock is a load of rows of a block-scaled precision, not transposed",
                ));
            }
            if !((t.count0 * t.count1) as usize).is_multiple_of(kpf) {
                return Err(illegal(&format!(
                    "a transposing or re-blocking load moves whole blocks of kpf = {kpf} rows; it moves {}",
                    t.count0 * t.count1
                )));
            }
        }
        let block_scaled = block_scaled.filter(|_| t.transpose || t.reblock);
        if block_scaled.is_some() && t.count0 * t.count1 != u64::from(self.unit.kpf) {
            return Err(illegal(&format!(
                "a block load of rows with block scales moves one block of kpf = {} rows; it moves {}",
                self.unit.kpf,
                t.count0 * t.count1
            )));
        }
        let (n, elem) = self.row_type(buf);
        // A padding row of the input buffer holds pad_value in every lane; of the others,
        // zeros.
        let pad_elem = match buf {
            Buffer::Input => isa::pad_element(t.pad_value, elem.bits, elem.signed),
            _ => 0,
        };
        let elem_beats = row_beats(&self.unit, self.mem_w, pc, t, store)?;
        // A short row's elements, the first lanes of the row, of their own width when
        // widened.
        let elem = match isa::widened_bits(t.widen) {
            Some(bits) => crate::numeric::IntType::new(true, bits),
            None => elem,
        };
        let moved = (elem_beats * u64::from(self.mem_w) / u64::from(elem.bits)) as usize;
        let slot = self.has_slot(buf);
        let scaled = slot && self.precision(pc, t.prec)?.ops().input().block_scaled();
        let depth = self.rows_mut(buf).len();
        // A transposing load's rows, written block by block at the end.
        let mut block: Vec<Vec<i64>> = Vec::new();
        for (k, i0, i1) in rows(t.count0, t.count1) {
            let beat = ext(t.ext_addr + i1 * t.stride1 + i0 * t.stride0);
            let row = spad(t.spad_addr + k, depth);
            if store {
                let vals = self.output[row].clone();
                mem.write_row(beat, elem_beats, &vals[..n], elem);
                if scaled {
                    mem.write_scale(beat + elem_beats, vals[n] as u8);
                }
            } else {
                // A row in the padding reads no memory.
                let pad = t.is_pad(i0, i1);
                let mut vals = if pad {
                    vec![pad_elem; n]
                } else {
                    mem.read_row(beat, elem_beats, moved.min(n), elem)
                };
                vals.resize(n, 0);
                if slot || block_scaled.is_some() {
                    vals.push(if (scaled || block_scaled.is_some()) && !pad {
                        i64::from(mem.read_scale(beat + elem_beats))
                    } else {
                        0
                    });
                }
                if t.transpose || t.reblock {
                    block.push(vals);
                    continue;
                }
                self.record(pc, buf, row, &vals);
                self.rows_mut(buf)[row] = vals;
            }
        }
        for (b, rows_of) in block.chunks(n).enumerate() {
            let tile = block_tile(rows_of, n, t.transpose, block_scaled);
            let first = (b * tile.len()) as u64;
            for (r, vals) in tile.into_iter().enumerate() {
                let row = spad(t.spad_addr + first + r as u64, depth);
                self.record(pc, buf, row, &vals);
                self.rows_mut(buf)[row] = vals;
            }
        }
        Ok(())
    }

    /// Preload a weight tile of precision `p` into the idle bank: `cpf` element rows, then
    /// the rows of its column scales.
    fn preload(&mut self, p: &dyn Datapath, base: u64) {
        let cpf = self.unit.cpf as usize;
        let depth = self.weight.len();
        let idle = self.cur_bank ^ 1;
        for r in 0..cpf {
            let row = spad(base + r as u64, depth);
            for (c, col) in self.banks[idle].iter_mut().enumerate() {
                col[r] = self.weight[row][c];
            }
        }
        let scale_rows: Vec<&[i64]> = (0..p.weight_scale_rows() as usize)
            .map(|s| self.weight[spad(base + (cpf + s) as u64, depth)].as_slice())
            .collect();
        let columns = self.unit.kpf as usize;
        self.bank_scales[idle] = p.unpack_weight_scales(&scale_rows, columns);
    }

    /// Input rows through the array: each column of the current bank makes one pass
    /// (`Datapath::column`), written or accumulated into the accumulator row.
    fn matmul(&mut self, pc: usize, m: &Matmul) -> Result<(), InterpError> {
        let prec = self.precision(pc, m.prec)?;
        let p = prec.ops();
        if m.swap {
            self.cur_bank ^= 1;
        }
        if m.preload {
            self.preload(p, m.weight_addr);
        }
        let cpf = self.unit.cpf as usize;
        let (za, zw) = self.zero_points(pc, m)?;
        let (in_depth, acc_depth) = (self.input.len(), self.acc.len());
        for (k, i0, i1) in rows(m.count0, m.count1) {
            let in_row = spad(m.input_addr + i1 * m.stride1 + i0 * m.stride0, in_depth);
            let acc_row = spad(m.acc_addr + k, acc_depth);
            let a = &self.input[in_row];
            // A row without a scale slot, or an integer row in one, reads scale 0.
            let sa = a.get(cpf).map_or(0, |s| *s as u8);
            let a: Vec<i64> = a[..cpf].iter().map(|x| x - za).collect();
            let bank = self.cur_bank;
            for c in 0..self.unit.kpf as usize {
                let w: Vec<i64> = self.banks[bank][c].iter().map(|x| x - zw).collect();
                let v = p.column(&a, &w, (sa, self.bank_scales[bank][c]));
                let old = self.acc[acc_row][c];
                self.acc[acc_row][c] = if m.accumulate {
                    p.accumulate(old, v)
                } else {
                    v
                };
            }
            let row = self.acc[acc_row].clone();
            self.record(pc, Buffer::Accumulator, acc_row, &row);
        }
        Ok(())
    }

    /// A matmul's operand zero points (za, zw), as its rows' elements read them; non-zero
    /// ones need the Design's zero-point correction.
    fn zero_points(&self, pc: usize, m: &Matmul) -> Result<(i64, i64), InterpError> {
        let (_, it) = self.row_type(Buffer::Input);
        let (_, wt) = self.row_type(Buffer::Weight);
        let za = isa::pad_element(m.zero_input, it.bits, it.signed);
        let zw = isa::pad_element(m.zero_weight, wt.bits, wt.signed);
        if (za, zw) != (0, 0) && !self.unit.zero_points() {
            return Err(InterpError::Illegal {
                pc,
                reason: format!(
                    "matmul with zero points {za} and {zw}: the array subtracts zero points on integer Designs with [rows] only"
                ),
            });
        }
        Ok((za, zw))
    }

    /// A window over input rows in the window unit: for every output position (oy, ox) and
    /// lane c, over the kernel taps (ky, kx), the sum of input pixel (oy * step + ky, ox *
    /// step + kx) times weight row `ky * kw + kx` (modulo 2^acc_bits; a padding pixel reads
    /// `pad_value`), or with `max` the largest pixel that is not padding; written to, added
    /// to or (max) folded into accumulator row `acc_addr + oy * ow + ox`.
    fn window(&mut self, pc: usize, w: &Window) -> Result<(), InterpError> {
        let illegal = |reason: String| InterpError::Illegal { pc, reason };
        let Some(wu) = self.unit.window else {
            return Err(illegal(
                "window needs the window unit, which this design does not have ([window] enabled = false)".into(),
            ));
        };
        let prec = self.precision(pc, w.prec)?;
        let p = prec.ops();
        if !matches!(p.input(), Format::Int(_)) {
            return Err(illegal(format!(
                "the window unit runs integer precisions, not {}",
                p.name()
            )));
        }
        let (kh, kw, step) = (w.kh, w.kw, w.step);
        let k = u64::from(wu.kernel);
        if !(1..=k).contains(&kh) || !(1..=k).contains(&kw) || step == 0 {
            return Err(illegal(format!(
                "window kernel {kh}x{kw} at step {step}: the unit takes kernels of 1 to {k} at a step of at least 1"
            )));
        }
        if w.count0 < kw || w.count1 < kh || w.count0 > u64::from(wu.line) {
            return Err(illegal(format!(
                "window input of {} x {} pixels: at least the kernel ({kh}x{kw}) and at most {} pixels wide (the line buffer)",
                w.count1, w.count0, wu.line
            )));
        }
        let (oh, ow) = ((w.count1 - kh) / step + 1, (w.count0 - kw) / step + 1);
        let acc_t = p.acc_type();
        let lanes = self.unit.kpf as usize;
        let (in_depth, w_depth, acc_depth) = (self.input.len(), self.weight.len(), self.acc.len());
        let pad = |v: u64, lo: u64, hi: u64, n: u64| v < lo || v + hi >= n;
        let in_t = self.row_type(Buffer::Input).1;
        let pad_elem = isa::pad_element(w.pad_value, in_t.bits, in_t.signed);
        for oy in 0..oh {
            for ox in 0..ow {
                let mut out = vec![None::<i128>; lanes];
                for ky in 0..kh {
                    for kx in 0..kw {
                        let (y, x) = (oy * step + ky, ox * step + kx);
                        let padding = pad(y, w.pad_top, w.pad_bottom, w.count1)
                            || pad(x, w.pad_left, w.pad_right, w.count0);
                        if padding && (w.max || pad_elem == 0) {
                            continue;
                        }
                        let row = &self.input
                            [spad(w.input_addr + y * w.stride1 + x * w.stride0, in_depth)];
                        let wt = &self.weight[spad(w.weight_addr + ky * kw + kx, w_depth)];
                        for (c, o) in out.iter_mut().enumerate() {
                            let a = i128::from(if padding { pad_elem } else { row[c] });
                            *o = Some(match (*o, w.max) {
                                (None, true) => a,
                                (Some(m), true) => m.max(a),
                                (v, false) => v.unwrap_or(0) + a * i128::from(wt[c]),
                            });
                        }
                    }
                }
                let acc_row = spad(w.acc_addr + oy * ow + ox, acc_depth);
                for (c, o) in out.iter().enumerate() {
                    // A maximum over taps that are all padding is 0 (the compiler pads
                    // less than the kernel, so its windows always have a tap).
                    let v = acc_t.wrap(o.unwrap_or(0));
                    let old = self.acc[acc_row][c];
                    self.acc[acc_row][c] = match (w.accumulate, w.max) {
                        (false, _) => v,
                        (true, true) => old.max(v),
                        (true, false) => acc_t.wrap(i128::from(old) + i128::from(v)),
                    };
                }
                let row = self.acc[acc_row].clone();
                self.record(pc, Buffer::Accumulator, acc_row, &row);
            }
        }
        Ok(())
    }

    /// Accumulator rows through the vector unit: the post-processing of the accumulator's
    /// precision (`prec_in`) into rows of the output precision (`prec_out`).
    fn vector(&mut self, pc: usize, v: &Vector) -> Result<(), InterpError> {
        let illegal = |reason: &str| InterpError::Illegal {
            pc,
            reason: reason.to_string(),
        };
        if v.add && v.pool {
            return Err(illegal(
                "add and pool share the operand read; use one per instruction",
            ));
        }
        let (out_base, opnd_base, n) = (v.out_addr, v.opnd_addr, v.count);
        if (v.add || v.pool)
            && out_base != opnd_base
            && out_base < opnd_base + n
            && opnd_base < out_base + n
        {
            return Err(illegal("the operand rows overlap the rows being written (only the same rows, in place, are allowed)"));
        }
        if v.bcast && !v.to_input && (out_base..out_base + n).contains(&opnd_base) {
            return Err(illegal(
                "bcast reads one operand row for every row, so the rows written must not include it",
            ));
        }
        let p_in = self.precision(pc, v.prec_in)?;
        let out = self.precision(pc, v.prec_out)?.ops().output();
        if matches!(p_in, Precision::Mx(_)) && v.bias && v.add {
            return Err(illegal(
                "an MX row takes a bias or an operand, not both (the vector unit has one FP32 adder a lane)",
            ));
        }
        let u = &self.unit;
        if v.to_input && (u.cpf != u.kpf || u.datatype.input_type() != u.datatype.output_type()) {
            return Err(illegal(
                "to_input writes output rows into the input buffer, which needs rows of one width (cpf = kpf and one element type)",
            ));
        }
        // The RTL takes each lane's multiplier and shift from the low bits of its element:
        // an accumulator narrower than both holds none (the compiler refuses such layers).
        let wide =
            matches!(p_in, Precision::Int(p) if p.accumulator.bits >= isa::scale_word_bits());
        if v.per_channel && (!v.load_bias || v.leaky || !wide) {
            return Err(illegal(
                "per_channel reads its scale row with the bias (load_bias), on integer rows whose accumulator holds a multiplier and a shift, without leaky",
            ));
        }
        if v.load_bias {
            self.bias = self.acc[spad(v.bias_addr, self.acc.len())].clone();
        }
        if v.per_channel {
            self.scales = self.acc[spad(v.bias_addr + 1, self.acc.len())]
                .iter()
                .map(|&e| isa::scale_of_word(e as u64))
                .collect();
        }
        for j in 0..n {
            let acc_row = spad(v.acc_addr + j, self.acc.len());
            let out_row = spad(out_base + j, self.output.len());
            let opnd_row = if v.bcast { opnd_base } else { opnd_base + j };
            let opnd = self.output[spad(opnd_row, self.output.len())].clone();
            let ops = PostOps {
                negative_multiplier: v.leaky.then_some(v.neg_multiplier),
                bias: v.bias.then_some(self.bias.as_slice()),
                requant: Requant {
                    multiplier: v.multiplier,
                    shift: v.shift as u32,
                    zero_point: v.zero_point,
                    half_even: v.half_even,
                },
                per_lane: v.per_channel.then_some(self.scales.as_slice()),
                relu: v.relu,
                clamp: v.clamp.then_some(v.clamp_max),
                add: v.add.then(|| combine_of(v, out)),
                pool: v.pool,
                operand: Some(&opnd),
                fixed_scale: v.fixed_scale as u8,
                raw: v.raw.then(|| p_in.ops().acc_type()),
            };
            let row = p_in.ops().post(&self.acc[acc_row], &ops, out);
            let mut vals = row.codes;
            if self.has_slot(Buffer::Output) {
                vals.push(row.scales.first().map_or(0, |s| i64::from(*s)));
            }
            if v.to_input {
                let in_row = spad(out_base + j, self.input.len());
                self.record(pc, Buffer::Input, in_row, &vals);
                self.input[in_row] = vals;
            } else {
                self.record(pc, Buffer::Output, out_row, &vals);
                self.output[out_row] = vals;
            }
        }
        Ok(())
    }
}

/// The combination a vector instruction's `add` makes (its fields; the operand zero point a
/// pattern of the output element code, read like `pad_value`).
fn combine_of(v: &Vector, out: Format) -> int::Combine {
    let t = out.code_type();
    int::Combine {
        product: v.mul,
        weight: v.add_weight,
        operand_weight: v.opnd_weight,
        shift: v.add_shift as u32,
        operand_zero: isa::pad_element(v.opnd_zero, t.bits, t.signed),
        output_zero: v.add_zero,
    }
}

/// The bitwise OR of hex beats of one width (a join's beat: every FIFO's, ORed).
fn or_hex(beats: &[String]) -> String {
    let mut out: Vec<u8> = beats[0].bytes().collect();
    for b in &beats[1..] {
        for (o, c) in out.iter_mut().zip(b.bytes()) {
            let v = |c: u8| (c as char).to_digit(16).expect("hex beat");
            *o = std::char::from_digit(v(*o) | v(c), 16).expect("a hex digit") as u8;
        }
    }
    String::from_utf8(out).expect("hex digits")
}
