//! The `rows` instruction on the row unit: tile by tile, pixel by pixel, each accumulator
//! row through `numeric::rows` (the element pipeline, the reduction into the pixel's
//! statistics, the rounding to output elements), then each pixel's statistics finished.

use super::exec::spad;
use super::{Engine, InterpError};
use crate::isa::{Buffer, Rows};
use crate::numeric::rows::{self, Consts, Elem, Finish, Func, Lane, Reduce, Stages};
use crate::numeric::spline::{self, Spline};

/// The stages an instruction's flags select (the spline's table read separately).
pub fn stages(r: &Rows, table: Option<Spline>) -> Stages {
    Stages {
        bias: r.bias,
        src_float: r.src_float,
        src_zero: r.src_zero,
        scale: r.scale,
        opnd: r.opnd,
        centre: r.centre,
        norm: r.norm,
        affine: r.affine,
        func: match (r.func, table) {
            (1, _) => Func::Exp,
            (2, Some(t)) => Func::Spline(t),
            _ => Func::None,
        },
        square: r.square,
        reduce: [Reduce::None, Reduce::MaxA, Reduce::SumA, Reduce::SumB][r.reduce as usize & 3],
        finish: [Finish::None, Finish::RecipB, Finish::MeanA, Finish::RstdB][r.finish as usize & 3],
        write: r.write,
        out_b: r.out_b,
    }
}

/// The flags of a `rows` instruction that runs `st` (the inverse of [`stages`]; the
/// spline's table rides in the rows after the constants).
pub fn with_stages(r: Rows, st: &Stages) -> Rows {
    Rows {
        bias: st.bias,
        src_float: st.src_float,
        src_zero: st.src_zero,
        scale: st.scale,
        opnd: st.opnd,
        centre: st.centre,
        norm: st.norm,
        affine: st.affine,
        func: match st.func {
            Func::None => 0,
            Func::Exp => 1,
            Func::Spline(_) => 2,
        },
        square: st.square,
        reduce: match st.reduce {
            Reduce::None => 0,
            Reduce::MaxA => 1,
            Reduce::SumA => 2,
            Reduce::SumB => 3,
        },
        finish: match st.finish {
            Finish::None => 0,
            Finish::RecipB => 1,
            Finish::MeanA => 2,
            Finish::RstdB => 3,
        },
        write: st.write,
        out_b: st.out_b,
        ..r
    }
}

/// The words of one tile's parameter rows for lanes `lanes` (one per lane: bias, then
/// scale and shift, then gamma and beta, as the flags ask), in the order the unit reads
/// them.
pub fn param_words(r: &Rows, lanes: &[Lane]) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    if r.bias {
        out.push(lanes.iter().map(|l| l.bias as u32).collect());
    }
    if r.scale {
        out.push(lanes.iter().map(|l| l.scale).collect());
        out.push(lanes.iter().map(|l| l.shift).collect());
    }
    if r.affine {
        out.push(lanes.iter().map(|l| l.gamma).collect());
        out.push(lanes.iter().map(|l| l.beta).collect());
    }
    out
}

/// Parameter rows of one tile: bias (bias), scale and shift (scale), gamma and beta
/// (affine).
pub fn param_rows(r: &Rows) -> u64 {
    u64::from(r.bias) + 2 * u64::from(r.scale) + 2 * u64::from(r.affine)
}

/// Accumulator rows of the constants on `lanes` lanes (five FP32 words).
pub fn const_rows(lanes: usize) -> u64 {
    rows::CONST_WORDS.div_ceil(lanes) as u64
}

/// Accumulator rows of the spline table after the constants, on `lanes` lanes.
pub fn table_rows(lanes: usize) -> u64 {
    spline::WORDS.div_ceil(lanes) as u64
}

impl Engine {
    /// An accumulator row's lanes as FP32 words.
    fn acc_words(&self, addr: u64) -> Vec<u32> {
        self.acc[spad(addr, self.acc.len())]
            .iter()
            .map(|&v| v as u32)
            .collect()
    }

    pub(super) fn rows(&mut self, pc: usize, r: &Rows) -> Result<(), InterpError> {
        let illegal = |reason: String| InterpError::Illegal { pc, reason };
        let Some(unit) = self.unit.rows else {
            return Err(illegal(
                "rows runs on the row unit, which the design does not have ([rows] enabled = true)"
                    .into(),
            ));
        };
        let out = self.precision(pc, r.prec_out)?.ops().output();
        let Some(e) = Elem::of(out) else {
            return Err(illegal(format!(
                "rows reads and writes integer, FP8, BF16, posit or MX integer elements; precision {} writes {}",
                r.prec_out,
                out.name()
            )));
        };
        if r.stat_addr + r.count0 > u64::from(unit.stats) {
            return Err(illegal(format!(
                "statistics entries {}..{} past the row unit's {}",
                r.stat_addr,
                r.stat_addr + r.count0,
                unit.stats
            )));
        }
        // A pass reads the statistics before the stage that combines into them: centring by
        // a while reducing into a, or normalising by b while reducing into b, would see a
        // partial statistic from the pass's earlier tiles.
        if (r.centre && matches!(r.reduce, 1 | 2)) || ((r.norm || r.out_b) && r.reduce == 3) {
            return Err(illegal(format!(
                "a pass may not read the statistic it reduces into (centre reads a, norm and out_b read b; reduce = {}); split it into two passes",
                r.reduce
            )));
        }
        let kpf = self.unit.kpf as usize;
        if r.valid as usize > kpf {
            return Err(illegal(format!(
                "valid = {} is more than the {kpf} lanes",
                r.valid
            )));
        }
        let u = &self.unit;
        if r.to_input && (u.cpf != u.kpf || u.datatype.input_type() != u.datatype.output_type()) {
            return Err(illegal(
                "to_input writes output rows into the input buffer, which needs rows of one width (cpf = kpf and one element type)".into(),
            ));
        }
        let words = |first: u64, n: u64| -> Vec<u32> {
            (0..n).flat_map(|k| self.acc_words(first + k)).collect()
        };
        let consts = Consts::from_words(&words(r.const_addr, const_rows(kpf)));
        let table = (r.func == 2).then(|| {
            let words = words(r.const_addr + const_rows(kpf), table_rows(kpf));
            Spline::from_words(&words)
        });
        let st = stages(r, table);
        let per_tile = param_rows(r);
        let slot = usize::from(self.has_slot(Buffer::Output));
        for tile in 0..r.count1 {
            let base = r.param_addr + tile * per_tile;
            let mut k = base;
            let mut next = || {
                k += 1;
                k - 1
            };
            let bias = r.bias.then(&mut next);
            let scale = r.scale.then(|| (next(), next()));
            let affine = r.affine.then(|| (next(), next()));
            let lanes: Vec<Lane> = (0..kpf)
                .map(|l| {
                    let word = |row: u64| self.acc[spad(row, self.acc.len())][l];
                    let mut lane = Lane::default();
                    if let Some(b) = bias {
                        lane.bias = word(b);
                    }
                    if let Some((s, h)) = scale {
                        (lane.scale, lane.shift) = (word(s) as u32, word(h) as u32);
                    }
                    if let Some((g, b)) = affine {
                        (lane.gamma, lane.beta) = (word(g) as u32, word(b) as u32);
                    }
                    lane
                })
                .collect();
            let valid = match (tile + 1 == r.count1, r.valid) {
                (true, v) if v > 0 => v as usize,
                _ => kpf,
            };
            for i in 0..r.count0 {
                let acc =
                    self.acc[spad(r.acc_addr + tile * r.acc_stride + i, self.acc.len())].clone();
                let opnd_row = spad(r.opnd_addr + tile * r.out_stride + i, self.output.len());
                let opnd = self.output[opnd_row].clone();
                let entry = (r.stat_addr + i) as usize;
                let stat = self.stats[entry];
                // An MX operand row's block scale rides in its slot.
                let scale = opnd.get(kpf).map_or(0, |&s| s as u8);
                let row_consts = e.row_consts(&consts, scale);
                let vals: Vec<u32> = (0..kpf)
                    .map(|l| {
                        let b = e.value(opnd[l]);
                        rows::element(&st, &row_consts, &lanes[l], acc[l], b, stat)
                    })
                    .collect();
                let mult = st.out_multiplier(&consts, stat);
                if st.reduce != Reduce::None {
                    let red = rows::reduce_row(st.reduce, st.square, &vals, valid);
                    self.stats[entry] = rows::combine(st.reduce, tile == 0 && r.init, stat, red);
                }
                if r.write {
                    let (mut codes, block) = e.write_row(&vals, valid, mult, r.zero_point);
                    codes.extend(std::iter::repeat_n(block.map_or(0, i64::from), slot));
                    let at = r.out_addr + tile * r.out_stride + i;
                    let buffer = if r.to_input {
                        Buffer::Input
                    } else {
                        Buffer::Output
                    };
                    let row = match buffer {
                        Buffer::Input => spad(at, self.input.len()),
                        _ => spad(at, self.output.len()),
                    };
                    self.record(pc, buffer, row, &codes);
                    match buffer {
                        Buffer::Input => self.input[row] = codes,
                        _ => self.output[row] = codes,
                    }
                }
            }
        }
        for i in 0..r.count0 {
            let entry = (r.stat_addr + i) as usize;
            self.stats[entry] = rows::finish(st.finish, &consts, self.stats[entry]);
        }
        Ok(())
    }
}
