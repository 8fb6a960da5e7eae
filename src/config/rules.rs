//! Rules that relate several sections, checked once every section resolved cleanly: tiles
//! fit the buffers, an MX block spans the array, and a memory beat holds whole elements and
//! tiles every scratchpad row.

use super::branches::BufferKeys;
use super::ctx::Ctx;
use super::error::Location;
use crate::design::*;

/// Where the keys these rules point at were set.
pub(super) struct Spots {
    pub mem_width: Option<Location>,
    pub block_size: Option<Location>,
    pub window: Option<Location>,
    pub rows: Option<Location>,
}

pub(super) fn check(
    ctx: &mut Ctx,
    branches: &[Branch],
    keys: &[Vec<BufferKeys>],
    memory: &Memory,
    spots: &Spots,
) {
    let all: Vec<&Unit> = branches.iter().flat_map(|b| b.units.iter()).collect();
    let suggestion = suggest_memory_width(&all)
        .map(|w| format!("use memory.data_width_bits = {w}, which fits every unit"))
        .unwrap_or_else(|| "no memory width fits every unit; make the element types of all units multiples of 8 bits".to_string());
    for (branch, keys) in branches.iter().zip(keys) {
        for (unit, key) in branch.units.iter().zip(keys) {
            buffers_hold_a_tile(ctx, unit, key);
            beats_hold_whole_elements(ctx, unit, memory, spots, &suggestion);
            blocks_span_the_array(ctx, unit, spots);
            rows_are_whole_beats(ctx, unit, memory, spots, &suggestion);
            window_fits_the_unit(ctx, unit, spots);
            rows_fit_the_unit(ctx, unit, spots);
        }
    }
}

/// The window unit has one lane per input channel and per output channel, and integer
/// multipliers.
fn window_fits_the_unit(ctx: &mut Ctx, unit: &Unit, spots: &Spots) {
    if unit.window.is_none() {
        return;
    }
    let primary = unit.datatype.primary();
    if !matches!(primary.input(), crate::numeric::Format::Int(_)) {
        ctx.problem(
            "window.enabled",
            spots.window.clone(),
            Some("true".to_string()),
            format!(
                "the window unit multiplies integers; unit \"{}\" runs {}",
                unit.name,
                primary.name()
            ),
            "use an integer [datatype] (or int8 first in a multi-precision list), or remove [window]",
        );
    } else if unit.cpf != unit.kpf {
        ctx.problem(
            "window.enabled",
            spots.window.clone(),
            Some("true".to_string()),
            format!(
                "the window unit has one lane per channel, so it needs a square array (cpf = kpf); unit \"{}\" is {}x{}",
                unit.name, unit.cpf, unit.kpf
            ),
            "make every unit square, or remove [window]",
        );
    }
}

/// The row unit reads accumulator words as int32 or FP32 (its parameters, constants and
/// tables are FP32 words in accumulator rows) and reads and writes integer, small-float,
/// posit or MX integer elements (`numeric::rows::Elem`; an MX row is one block, the
/// array's width).
fn rows_fit_the_unit(ctx: &mut Ctx, unit: &Unit, spots: &Spots) {
    if unit.rows.is_none() {
        return;
    }
    let d = &unit.datatype;
    let acc = d.acc_type();
    if acc.bits != 32 {
        ctx.problem(
            "rows.enabled",
            spots.rows.clone(),
            Some("true".to_string()),
            format!(
                "the row unit reads 32-bit accumulator words (int32 sums, FP32 parameters); unit \"{}\" accumulates in {} bits",
                unit.name, acc.bits
            ),
            "use accumulator = \"int32\" (or a float datatype, which accumulates in FP32), or remove [rows]",
        );
    } else if crate::numeric::rows::Elem::of(d.primary().output()).is_none() {
        // (Every output format a config can name has row elements today; a new one the
        // row unit cannot read is refused here.)
        ctx.problem(
            "rows.enabled",
            spots.rows.clone(),
            Some("true".to_string()),
            format!(
                "the row unit reads and writes integer, FP8 (E4M3, E5M2), BF16, posit or MX integer elements; unit \"{}\" writes {}",
                unit.name,
                d.primary().output().name()
            ),
            "use an integer output datatype (int8 or int16), fp8_e4m3, fp8_e5m2, bf16, posit8, mxint8 or mxint4, or remove [rows]",
        );
    }
}

fn buffers_hold_a_tile(ctx: &mut Ctx, unit: &Unit, key: &BufferKeys) {
    let tile = unit.cpf.max(unit.kpf);
    let depths = [
        ("input_depth", unit.buffers.input_depth),
        ("weight_depth", unit.buffers.weight_depth),
        ("accumulator_depth", unit.buffers.accumulator_depth),
        ("output_depth", unit.buffers.output_depth),
    ];
    for (i, (name, depth)) in depths.iter().enumerate() {
        if *depth < tile {
            ctx.problem(
                &format!("{}.{name}", key.prefix),
                key.spans[i].clone(),
                Some(depth.to_string()),
                format!(
                    "a buffer must hold at least one tile of max(cpf, kpf) = {tile} entries for the {}x{} array of unit \"{}\"",
                    unit.cpf, unit.kpf, unit.name
                ),
                format!("use {name} = {tile} or more"),
            );
        }
    }
    if unit.buffers.accumulator_depth * unit.acc_banks() > 65536 {
        ctx.problem(
            &format!("{}.accumulator_depth", key.prefix),
            key.spans[2].clone(),
            Some(unit.buffers.accumulator_depth.to_string()),
            "a double-buffered accumulator has two banks of accumulator_depth rows, and instructions address at most 65536 rows",
            "use accumulator_depth = 32768 or less, or accumulator_double_buffer = false",
        );
    }
}

/// One MX block of the reduction runs down the array's rows per pass and the vector unit
/// quantizes a row of its columns as one block.
fn blocks_span_the_array(ctx: &mut Ctx, unit: &Unit, spots: &Spots) {
    let blocks = unit
        .datatype
        .precisions
        .iter()
        .filter_map(|p| p.ops().input().block_size());
    for block in blocks {
        if unit.cpf != block || unit.kpf != block {
            ctx.problem(
                "datatype.block_size",
                spots.block_size.clone(),
                Some(block.to_string()),
                format!(
                    "an MX block must span the array exactly: one block of the reduction runs down the {} rows per pass and the vector unit quantizes the {} columns of an output row as one block, so block_size must equal both (unit \"{}\")",
                    unit.cpf, unit.kpf, unit.name
                ),
                if unit.cpf == unit.kpf && [16, 32, 64].contains(&unit.cpf) {
                    format!("use block_size = {}", unit.cpf)
                } else {
                    format!(
                        "use a square {block}x{block} array (block_size 16, 32 and 64 need 16x16, 32x32 and 64x64)"
                    )
                },
            );
        }
    }
}

fn beats_hold_whole_elements(
    ctx: &mut Ctx,
    unit: &Unit,
    memory: &Memory,
    spots: &Spots,
    suggestion: &str,
) {
    let mem_w = memory.data_width_bits;
    let d = &unit.datatype;
    for (what, t) in [
        ("input", d.input_type()),
        ("weight", d.weight_type()),
        ("output", d.output_type()),
        ("accumulator", d.acc_type()),
    ] {
        if !mem_w.is_multiple_of(t.bits) {
            ctx.problem(
                "memory.data_width_bits",
                spots.mem_width.clone(),
                Some(mem_w.to_string()),
                format!(
                    "a memory beat must hold whole elements, but {mem_w} bits is not a multiple of the {}-bit {what} type {t} of unit \"{}\"",
                    t.bits, unit.name
                ),
                suggestion,
            );
        }
    }
}

/// Rows are whole beats of elements; an MX row's scale takes one more beat.
fn rows_are_whole_beats(
    ctx: &mut Ctx,
    unit: &Unit,
    memory: &Memory,
    spots: &Spots,
    suggestion: &str,
) {
    let mem_w = memory.data_width_bits;
    for (what, bits) in [
        ("input buffer", unit.input_elem_bits()),
        ("weight buffer", unit.weight_row_bits()),
        ("accumulator", unit.acc_row_bits()),
        ("output buffer", unit.output_elem_bits()),
    ] {
        if !bits.is_multiple_of(mem_w) {
            ctx.problem(
                "memory.data_width_bits",
                spots.mem_width.clone(),
                Some(mem_w.to_string()),
                format!(
                    "a scratchpad row must be a whole number of memory beats, but a row of the {what} of unit \"{}\" is {bits} bits",
                    unit.name
                ),
                suggestion,
            );
        }
    }
}

/// The widest memory beat (a multiple of 8 bits) that holds whole elements of every type
/// and divides every scratchpad row of every unit.
fn suggest_memory_width(units: &[&Unit]) -> Option<u32> {
    let rows: Vec<u32> = units
        .iter()
        .flat_map(|u| {
            [
                u.input_elem_bits(),
                u.weight_row_bits(),
                u.acc_row_bits(),
                u.output_elem_bits(),
            ]
        })
        .collect();
    let elems: Vec<u32> = units
        .iter()
        .flat_map(|u| {
            let d = &u.datatype;
            [
                d.input_type().bits,
                d.weight_type().bits,
                d.acc_type().bits,
                d.output_type().bits,
            ]
        })
        .collect();
    let g = rows.iter().fold(0, |a, b| gcd(a, *b));
    let l = elems.iter().fold(8, |a, b| lcm(a, *b));
    (1..=g / 8)
        .rev()
        .map(|k| k * 8)
        .find(|w| g.is_multiple_of(*w) && w.is_multiple_of(l))
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u32, b: u32) -> u32 {
    a / gcd(a, b) * b
}
