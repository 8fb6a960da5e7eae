//! The small sections of the parameter file, one function each: `[reset]`, `[array]`
//! dataflow, `[buffers]`, `[memory]`, `[vector]`, `[control]` and `[window]`.

use super::ctx::Ctx;
use super::error::Location;
use super::raw::*;
use crate::design::*;

pub(super) const DEFAULT_BUFFERS: Buffers = Buffers {
    input_depth: 512,
    weight_depth: 512,
    accumulator_depth: 256,
    output_depth: 256,
    accumulator_double_buffer: true,
};

const VECTOR_OPS: [&str; 6] = ["bias", "requantize", "relu", "leaky_relu", "maxpool", "add"];

pub(super) fn reset(ctx: &mut Ctx, raw: Option<&RawReset>) -> Reset {
    let mut reset = Reset {
        style: ResetStyle::Async,
        active_low: true,
    };
    let Some(r) = raw else { return reset };
    if let Some(s) = &r.style {
        match s.get_ref().as_str() {
            "sync" => reset.style = ResetStyle::Sync,
            "async" => reset.style = ResetStyle::Async,
            _ => ctx.bad(
                "reset.style",
                s,
                "reset.style must be \"sync\" or \"async\"",
                "use \"async\" (the default) or \"sync\"",
            ),
        }
    }
    if let Some(s) = &r.active {
        match s.get_ref().as_str() {
            "low" => reset.active_low = true,
            "high" => reset.active_low = false,
            _ => ctx.bad(
                "reset.active",
                s,
                "reset.active must be \"low\" or \"high\"",
                "use \"low\" (the default) or \"high\"",
            ),
        }
    }
    reset
}

/// `[array] dataflow`; the rows and columns are resolved with the branches.
pub(super) fn dataflow(ctx: &mut Ctx, raw: Option<&RawArray>) -> String {
    let Some(s) = raw.and_then(|a| a.dataflow.as_ref()) else {
        return "weight_stationary".to_string();
    };
    if s.get_ref() != "weight_stationary" {
        ctx.bad(
            "array.dataflow",
            s,
            "array.dataflow: only \"weight_stationary\" is implemented",
            "use \"weight_stationary\"",
        );
    }
    s.get_ref().clone()
}

/// `[array] pack_macs = true`: every unit multiplies integer or MX elements of at most 8
/// bits, so two products fit one 27 x 18-bit DSP multiply (`hwgen_mac_int_pair`).
pub(super) fn check_pack_macs(ctx: &mut Ctx, s: &S<bool>, branches: &[Branch]) {
    for u in branches.iter().flat_map(|b| &b.units) {
        let d = &u.datatype;
        let (input, weight) = (d.input_type().bits, d.weight_type().bits);
        let what = match d.leaves().mac {
            crate::numeric::MAC_INT if input <= 8 && weight <= 8 => continue,
            crate::numeric::MAC_INT => format!("{input}-bit inputs and {weight}-bit weights"),
            _ => "products that are not integer ones".to_string(),
        };
        ctx.bad(
            "array.pack_macs",
            s,
            format!(
                "array.pack_macs: two products share one multiplier only for integer and MX elements of at most 8 bits (both fit one 27 x 18-bit DSP multiply); unit \"{}\" runs {}, with {what}",
                u.name,
                d.get(0).name()
            ),
            "remove pack_macs, or use 8-bit (or narrower) integer or MX types",
        );
        return;
    }
}

pub(super) fn buffers(
    ctx: &mut Ctx,
    prefix: &str,
    raw: Option<&RawBuffers>,
    base: Buffers,
) -> Buffers {
    let mut b = base;
    let Some(raw) = raw else { return b };
    let depths: [(&str, &Option<S<i64>>, &mut u32); 4] = [
        ("input_depth", &raw.input_depth, &mut b.input_depth),
        ("weight_depth", &raw.weight_depth, &mut b.weight_depth),
        (
            "accumulator_depth",
            &raw.accumulator_depth,
            &mut b.accumulator_depth,
        ),
        ("output_depth", &raw.output_depth, &mut b.output_depth),
    ];
    for (name, val, slot) in depths {
        if let Some(s) = val {
            if let Some(v) = ctx.pow2_in(&format!("{prefix}.{name}"), s, 2, 65536) {
                *slot = v;
            }
        }
    }
    if let Some(s) = &raw.accumulator_double_buffer {
        b.accumulator_double_buffer = *s.get_ref();
    }
    b
}

/// Where each buffer depth of a table was set (input, weight, accumulator, output), for
/// messages.
pub(super) fn buffer_locs(ctx: &Ctx, b: Option<&RawBuffers>) -> [Option<Location>; 4] {
    let Some(b) = b else {
        return [None, None, None, None];
    };
    [
        b.input_depth.as_ref().and_then(|s| ctx.loc(s)),
        b.weight_depth.as_ref().and_then(|s| ctx.loc(s)),
        b.accumulator_depth.as_ref().and_then(|s| ctx.loc(s)),
        b.output_depth.as_ref().and_then(|s| ctx.loc(s)),
    ]
}

/// `[memory]`, and where its data width was set.
pub(super) fn memory(ctx: &mut Ctx, raw: Option<&RawMemory>) -> (Memory, Option<Location>) {
    let mut memory = Memory {
        data_width_bits: 64,
        latency_cycles: 20,
        bytes_per_cycle: 8,
        ports: 1,
    };
    let mut width_loc = None;
    let Some(m) = raw else {
        return (memory, width_loc);
    };
    if let Some(s) = &m.data_width_bits {
        width_loc = ctx.loc(s);
        let v = *s.get_ref();
        if !(8..=2048).contains(&v) || v % 8 != 0 {
            let below = (v.clamp(8, 2048) / 8).max(1) * 8;
            let fix = if below == v.clamp(8, 2048) || below + 8 > 2048 {
                format!("use {below}")
            } else {
                format!("use {below} or {}", below + 8)
            };
            ctx.bad(
                "memory.data_width_bits",
                s,
                "memory.data_width_bits must be a multiple of 8 between 8 and 2048",
                fix,
            );
        } else {
            memory.data_width_bits = v as u32;
            memory.bytes_per_cycle = v as u32 / 8;
        }
    }
    if let Some(s) = &m.latency_cycles {
        if let Some(v) = ctx.int_in("memory.latency_cycles", s, 1, 4096) {
            memory.latency_cycles = v;
        }
    }
    if let Some(s) = &m.bytes_per_cycle {
        let max = i64::from(memory.data_width_bits / 8);
        if let Some(v) = ctx.int_in("memory.bytes_per_cycle", s, 1, 1 << 16) {
            if i64::from(v) > max {
                ctx.bad(
                    "memory.bytes_per_cycle",
                    s,
                    format!(
                        "memory.bytes_per_cycle cannot exceed what one {}-bit beat per cycle carries ({max})",
                        memory.data_width_bits
                    ),
                    format!("use at most {max}, or widen memory.data_width_bits"),
                );
            } else {
                memory.bytes_per_cycle = v;
            }
        }
    }
    if let Some(s) = &m.ports {
        if let Some(v) = ctx.int_in("memory.ports", s, 1, 16) {
            memory.ports = v;
        }
    }
    (memory, width_loc)
}

pub(super) fn vector(ctx: &mut Ctx, raw: Option<&RawVector>) -> VectorOps {
    let all = VectorOps {
        bias: true,
        relu: true,
        leaky_relu: true,
        maxpool: true,
        add: true,
    };
    let Some(ops) = raw.and_then(|v| v.ops.as_ref()) else {
        return all;
    };
    let mut vector = VectorOps {
        bias: false,
        relu: false,
        leaky_relu: false,
        maxpool: false,
        add: false,
    };
    let mut requant = false;
    for op in ops.get_ref() {
        match op.get_ref().as_str() {
            "bias" => vector.bias = true,
            "requantize" => requant = true,
            "relu" => vector.relu = true,
            "leaky_relu" => vector.leaky_relu = true,
            "maxpool" => vector.maxpool = true,
            "add" => vector.add = true,
            _ => ctx.bad(
                "vector.ops",
                op,
                format!(
                    "vector.ops: unknown operation; the integer vector unit offers {}",
                    VECTOR_OPS.join(", ")
                ),
                "remove it or correct its spelling",
            ),
        }
    }
    if !requant {
        let loc = ctx.loc(ops);
        ctx.problem(
            "vector.ops",
            loc,
            None,
            "vector.ops must include \"requantize\": it is how an accumulator value becomes an output element",
            "add \"requantize\" to vector.ops",
        );
    }
    vector
}

pub(super) fn control(ctx: &mut Ctx, raw: Option<&RawControl>) -> Control {
    let mut control = Control {
        imem_depth: 1024,
        queue_depth: 8,
        clock_mhz: 200,
    };
    let Some(c) = raw else { return control };
    if let Some(s) = &c.imem_depth {
        if let Some(v) = ctx.pow2_in("control.imem_depth", s, 16, 65536) {
            control.imem_depth = v;
        }
    }
    if let Some(s) = &c.clock_mhz {
        if let Some(v) = ctx.int_in("control.clock_mhz", s, 1, 5000) {
            control.clock_mhz = v;
        }
    }
    if let Some(s) = &c.queue_depth {
        if *s.get_ref() > 8 {
            // The compiler keeps semaphore counts bounded by a margin of queue entries
            // (src/compiler/passes/sync.rs); deeper queues would break that bound.
            ctx.bad(
                "control.queue_depth",
                s,
                "control.queue_depth must be at most 8: the 4-bit semaphore counters must count every wait a full load queue can hold plus the signals the compiler lets run ahead",
                "use queue_depth = 8",
            );
        } else if let Some(v) = ctx.pow2_in("control.queue_depth", s, 2, 8) {
            control.queue_depth = v;
        }
    }
    control
}

/// `[rows]`: the row unit on the vector queue, `None` unless `enabled = true`.
pub(super) fn rows(ctx: &mut Ctx, raw: Option<&RawRows>) -> Option<RowUnit> {
    let r = raw?;
    let mut unit = RowUnit { stats: 256 };
    if let Some(s) = &r.stats {
        if let Some(v) = ctx.pow2_in("rows.stats", s, 16, 4096) {
            unit.stats = v;
        }
    }
    r.enabled
        .as_ref()
        .is_some_and(|s| *s.get_ref())
        .then_some(unit)
}

/// `[window]`: the window unit beside the array, `None` unless `enabled = true`.
pub(super) fn window(ctx: &mut Ctx, raw: Option<&RawWindow>) -> Option<WindowUnit> {
    let w = raw?;
    let mut unit = WindowUnit {
        kernel: 3,
        line: 64,
    };
    if let Some(s) = &w.kernel {
        if let Some(v) = ctx.int_in("window.kernel", s, 1, 7) {
            unit.kernel = v;
        }
    }
    if let Some(s) = &w.line {
        if let Some(v) = ctx.pow2_in("window.line", s, 4, 2048) {
            unit.line = v;
        }
    }
    w.enabled
        .as_ref()
        .is_some_and(|s| *s.get_ref())
        .then_some(unit)
}
