//! Resolution (defaults, inheritance of per-unit overrides) and validation of every rule.

use super::error::{ConfigError, Location, Problem};
use super::raw::*;
use crate::design::*;
use crate::rtl::names;

const DEFAULT_DATATYPES: Datatypes = Datatypes {
    input: IntType::new(true, 8),
    weight: IntType::new(true, 8),
    accumulator: IntType::new(true, 32),
    output: IntType::new(true, 8),
    mx: None,
    fp: None,
    multi_precision: false,
};

/// What a datatype string names.
#[derive(Clone, Copy, PartialEq)]
enum Parsed {
    Int(IntType),
    Mx(MxFormat),
    Fp(crate::numeric::MiniFloat),
    Fp32,
}

const MXINT4: MxFormat = MxFormat {
    element: "mxint4",
    bits: 4,
    frac: 2,
    block_size: 32,
};

const MXINT8: MxFormat = MxFormat {
    element: "mxint8",
    bits: 8,
    frac: 6,
    block_size: 32,
};

const DEFAULT_BUFFERS: Buffers = Buffers {
    input_depth: 512,
    weight_depth: 512,
    accumulator_depth: 256,
    output_depth: 256,
    accumulator_double_buffer: true,
};

const VECTOR_OPS: [&str; 5] = ["bias", "requantize", "relu", "maxpool", "add"];

struct Ctx<'a> {
    src: &'a str,
    problems: Vec<Problem>,
}

impl Ctx<'_> {
    fn loc<T>(&self, s: &S<T>) -> Option<Location> {
        Some(Location::of_offset(self.src, s.span().start))
    }

    fn problem(
        &mut self,
        key: &str,
        location: Option<Location>,
        value: Option<String>,
        rule: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.problems.push(Problem {
            key: key.to_string(),
            location,
            value,
            rule: rule.into(),
            fix: fix.into(),
        });
    }

    fn bad<T: std::fmt::Debug>(
        &mut self,
        key: &str,
        s: &S<T>,
        rule: impl Into<String>,
        fix: impl Into<String>,
    ) {
        let value = format!("{:?}", s.get_ref());
        let loc = self.loc(s);
        self.problem(key, loc, Some(value), rule, fix);
    }

    /// An integer in `lo..=hi`; `None` (after recording a problem) otherwise.
    fn int_in(&mut self, key: &str, s: &S<i64>, lo: i64, hi: i64) -> Option<u32> {
        let v = *s.get_ref();
        if v < lo || v > hi {
            self.bad(
                key,
                s,
                format!("{key} must be between {lo} and {hi}"),
                format!("use a value from {lo} to {hi}"),
            );
            return None;
        }
        Some(v as u32)
    }

    /// A power of two in `lo..=hi`.
    fn pow2_in(&mut self, key: &str, s: &S<i64>, lo: i64, hi: i64) -> Option<u32> {
        let v = *s.get_ref();
        if v < lo || v > hi || (v & (v - 1)) != 0 {
            let fix = if v > lo && v < hi {
                let below = 1i64 << (63 - v.leading_zeros());
                format!("use {} or {}", below, below * 2)
            } else {
                format!("use a power of two from {lo} to {hi}")
            };
            self.bad(
                key,
                s,
                format!("{key} must be a power of two between {lo} and {hi}"),
                fix,
            );
            return None;
        }
        Some(v as u32)
    }

    fn identifier(&mut self, key: &str, s: &S<String>) -> bool {
        match names::check_identifier(s.get_ref()) {
            Ok(()) => true,
            Err(rule) => {
                self.bad(
                    key,
                    s,
                    format!("{key} {rule}"),
                    "use lower-case letters, digits and underscores, starting with a letter",
                );
                false
            }
        }
    }
}

fn parse_type(ctx: &mut Ctx, key: &str, s: &S<String>, accumulator: bool) -> Option<Parsed> {
    let text = s.get_ref().trim().to_ascii_lowercase();
    match (text.as_str(), accumulator) {
        ("mxint8", false) => return Some(Parsed::Mx(MXINT8)),
        ("mxint4", false) => return Some(Parsed::Mx(MXINT4)),
        ("fp8_e4m3" | "e4m3", false) => return Some(Parsed::Fp(crate::numeric::E4M3)),
        ("fp8_e5m2" | "e5m2", false) => return Some(Parsed::Fp(crate::numeric::E5M2)),
        ("bf16", false) => return Some(Parsed::Fp(crate::numeric::BF16)),
        ("fp32", true) => return Some(Parsed::Fp32),
        ("mxint8" | "mxint4" | "fp8_e4m3" | "e4m3" | "fp8_e5m2" | "e5m2" | "bf16", true) => {
            ctx.bad(
                key,
                s,
                format!(
                    "{key}: {text} is an element type; MX and floating-point products are accumulated in FP32"
                ),
                "use \"fp32\"",
            );
            return None;
        }
        ("fp32", false) => {
            ctx.bad(
                key,
                s,
                format!("{key}: fp32 is only an accumulator type"),
                "use an integer type such as \"int8\", or \"mxint8\", \"fp8_e4m3\", \"fp8_e5m2\" or \"bf16\"",
            );
            return None;
        }
        _ => {}
    }
    let (signed, digits) = if let Some(d) = text.strip_prefix("uint") {
        (false, d)
    } else if let Some(d) = text.strip_prefix("int") {
        (true, d)
    } else {
        ctx.bad(
            key,
            s,
            format!("{key}: unknown datatype; integer types are written intN or uintN"),
            if accumulator {
                "use \"int32\""
            } else {
                "use one of int4..int16 or uint4..uint16, for example \"int8\""
            },
        );
        return None;
    };
    let bits: u32 = match digits.parse() {
        Ok(b) => b,
        Err(_) => {
            ctx.bad(
                key,
                s,
                format!("{key}: unknown datatype; integer types are written intN or uintN"),
                "use for example \"int8\"",
            );
            return None;
        }
    };
    if accumulator {
        if !signed || !(8..=32).contains(&bits) {
            ctx.bad(
                key,
                s,
                format!("{key} must be a signed integer of 8 to 32 bits"),
                "use \"int32\"",
            );
            return None;
        }
    } else if !(4..=16).contains(&bits) {
        ctx.bad(
            key,
            s,
            format!("{key}: integer element types are 4 to 16 bits wide"),
            "use one of int4..int16 or uint4..uint16",
        );
        return None;
    }
    Some(Parsed::Int(IntType::new(signed, bits)))
}

fn resolve_datatypes(
    ctx: &mut Ctx,
    prefix: &str,
    raw: Option<&RawDatatype>,
    base: Datatypes,
) -> Datatypes {
    let mut d = base;
    let Some(raw) = raw else { return d };
    let (input, weight, output) = (
        as_text(&raw.input),
        as_text(&raw.weight),
        as_text(&raw.output),
    );
    if base.mx.is_some() || base.fp.is_some() {
        // Per-unit overrides of an MX or FP design: the whole design shares one format.
        for (name, val) in [
            ("input", &input),
            ("weight", &weight),
            ("accumulator", &raw.accumulator),
            ("output", &output),
            ("scale", &raw.scale),
        ] {
            if let Some(s) = val {
                ctx.bad(
                    &format!("{prefix}.{name}"),
                    s,
                    format!("{prefix}.{name}: the datatypes of an MX or floating-point design are set once, in [datatype]"),
                    format!("remove {prefix}"),
                );
            }
        }
        if let Some(s) = &raw.block_size {
            ctx.bad(
                &format!("{prefix}.block_size"),
                s,
                format!("{prefix}.block_size: the datatypes of an MX or floating-point design are set once, in [datatype]"),
                format!("remove {prefix}"),
            );
        }
        return d;
    }
    let lists = [&raw.input, &raw.weight, &raw.output]
        .iter()
        .any(|v| matches!(v.as_ref().map(|s| s.get_ref()), Some(TypeSpec::List(_))));
    if lists {
        return resolve_multi_precision(ctx, prefix, raw, d);
    }
    let elements = [("input", &input), ("weight", &weight), ("output", &output)];
    let mut parsed: Vec<(&str, &S<String>, Parsed)> = Vec::new();
    for (name, val) in elements {
        if let Some(s) = val {
            if let Some(p) = parse_type(ctx, &format!("{prefix}.{name}"), s, false) {
                parsed.push((name, s, p));
            }
        }
    }
    let accumulator = match &raw.accumulator {
        Some(s) => parse_type(ctx, &format!("{prefix}.accumulator"), s, true).map(|p| (s, p)),
        None => None,
    };

    // MX: one element type for input, weight and output, FP32 accumulation.
    let mx_key = parsed.iter().find(|(_, _, p)| matches!(p, Parsed::Mx(_)));
    if let Some(&(mx_name, mx_s, Parsed::Mx(format))) = mx_key {
        one_element_format(
            ctx,
            prefix,
            &elements,
            &parsed,
            Parsed::Mx(format),
            (mx_name, mx_s),
            "an MX design uses one element type",
        );
        require_fp32(
            ctx,
            prefix,
            &accumulator,
            "MX block sums are dequantized and accumulated in FP32",
            "MX",
        );
        let format = mx_block(ctx, prefix, raw, format);
        let element = IntType::new(true, format.bits);
        d.input = element;
        d.weight = element;
        d.output = element;
        d.accumulator = IntType::new(true, 32);
        d.mx = Some(format);
        return d;
    }

    // Floating-point elements: one format for input, weight and output, FP32 accumulation.
    let fp_key = parsed.iter().find(|(_, _, p)| matches!(p, Parsed::Fp(_)));
    if let Some(&(fp_name, fp_s, Parsed::Fp(format))) = fp_key {
        one_element_format(
            ctx,
            prefix,
            &elements,
            &parsed,
            Parsed::Fp(format),
            (fp_name, fp_s),
            "a floating-point design uses one element format",
        );
        require_fp32(
            ctx,
            prefix,
            &accumulator,
            "floating-point products are accumulated in FP32",
            "floating-point elements",
        );
        for (key, present) in [
            ("block_size", raw.block_size.is_some()),
            ("scale", raw.scale.is_some()),
        ] {
            if present {
                let loc = ctx.loc(fp_s);
                ctx.problem(
                    &format!("{prefix}.{key}"),
                    loc,
                    None,
                    format!("{prefix}.{key} applies to MX element types only"),
                    format!("remove {prefix}.{key}"),
                );
            }
        }
        let element = IntType::new(false, format.bits());
        d.input = element;
        d.weight = element;
        d.output = element;
        d.accumulator = IntType::new(true, 32);
        d.fp = Some(format);
        return d;
    }

    // Integer elements (or inherited MX ones).
    for (name, _, p) in &parsed {
        let Parsed::Int(t) = p else { continue };
        match *name {
            "input" => d.input = *t,
            "weight" => d.weight = *t,
            _ => d.output = *t,
        }
    }
    if let Some(s) = raw.block_size.as_ref() {
        ctx.bad(
            &format!("{prefix}.block_size"),
            s,
            format!("{prefix}.block_size applies to MX element types only"),
            "remove it, or use input, weight and output = \"mxint8\"",
        );
    }
    if let Some(s) = raw.scale.as_ref() {
        ctx.bad(
            &format!("{prefix}.scale"),
            s,
            format!("{prefix}.scale applies to MX element types only"),
            "remove it, or use input, weight and output = \"mxint8\"",
        );
    }
    if let Some((s, p)) = &accumulator {
        match p {
            Parsed::Int(t) => d.accumulator = *t,
            _ => {
                ctx.bad(
                    &format!("{prefix}.accumulator"),
                    s,
                    format!("{prefix}.accumulator: fp32 accumulation needs MX or floating-point elements"),
                    "use \"int32\", or input, weight and output = \"mxint8\" (or \"fp8_e4m3\", \"fp8_e5m2\", \"bf16\")",
                );
            }
        }
        let need = d.input.bits + d.weight.bits;
        if d.accumulator.bits < need {
            ctx.bad(
                &format!("{prefix}.accumulator"),
                s,
                format!(
                    "{prefix}.accumulator ({}) is narrower than the {need}-bit products of {} x {} it must hold",
                    d.accumulator, d.input, d.weight
                ),
                format!("use an accumulator of at least {need} bits, for example \"int32\""),
            );
        }
    }
    d
}

/// A type key as text, for messages (a list is shown as written).
fn as_text(v: &Option<S<TypeSpec>>) -> Option<S<String>> {
    v.as_ref().map(|s| {
        let text = match s.get_ref() {
            TypeSpec::One(t) => t.clone(),
            TypeSpec::List(l) => format!(
                "[{}]",
                l.iter()
                    .map(|t| format!("\"{t}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        S::new(s.span(), text)
    })
}

/// `block_size` and `scale` of an MX format.
fn mx_block(ctx: &mut Ctx, prefix: &str, raw: &RawDatatype, format: MxFormat) -> MxFormat {
    let mut format = format;
    if let Some(s) = &raw.block_size {
        let v = *s.get_ref();
        if [16, 32, 64].contains(&v) {
            format.block_size = v as u32;
        } else {
            ctx.bad(
                &format!("{prefix}.block_size"),
                s,
                format!("{prefix}.block_size must be 16, 32 (the OCP MX block) or 64"),
                "use block_size = 32",
            );
        }
    }
    if let Some(s) = &raw.scale {
        if !s.get_ref().trim().eq_ignore_ascii_case("e8m0") {
            ctx.bad(
                &format!("{prefix}.scale"),
                s,
                format!("{prefix}.scale: MX scales are E8M0"),
                "use scale = \"e8m0\"",
            );
        }
    }
    format
}

/// A multi-precision design: input, weight and output list the same pair of types, a signed
/// integer type and the MX type of the same width. Both run on the array's integer
/// multipliers; each matmul and vector instruction says which path its layer takes.
fn resolve_multi_precision(
    ctx: &mut Ctx,
    prefix: &str,
    raw: &RawDatatype,
    base: Datatypes,
) -> Datatypes {
    let mut d = base;
    let rule = "a multi-precision design lists a signed integer type and the MX type of the same width (both run on the array's integer multipliers; FP8 and BF16 need floating-point ones)";
    let fix = "use [\"int8\", \"mxint8\"] (or [\"int4\", \"mxint4\"])";
    let mut pair: Option<(IntType, MxFormat, Vec<String>)> = None;
    for name in ["input", "weight", "output"] {
        let key = format!("{prefix}.{name}");
        let val = match name {
            "input" => &raw.input,
            "weight" => &raw.weight,
            _ => &raw.output,
        };
        let Some(s) = val else {
            if name == "output" {
                continue; // the same list as input
            }
            let loc = [&raw.input, &raw.weight, &raw.output]
                .into_iter()
                .flatten()
                .next()
                .and_then(|s| ctx.loc(s));
            ctx.problem(
                &key,
                loc,
                None,
                format!("{key} is missing: {rule}, for input, weight and output"),
                format!("set {key} = [\"int8\", \"mxint8\"]"),
            );
            continue;
        };
        let text = as_text(val).expect("present");
        let TypeSpec::List(list) = s.get_ref() else {
            ctx.bad(
                &key,
                &text,
                format!("{key}: a multi-precision design lists the same types for input, weight and output"),
                format!("set {key} to the list the other keys use, for example [\"int8\", \"mxint8\"]"),
            );
            continue;
        };
        let norm: Vec<String> = list.iter().map(|t| t.trim().to_ascii_lowercase()).collect();
        let (mut int, mut mx, mut reported) = (None, None, false);
        for t in list {
            match parse_type(ctx, &key, &S::new(s.span(), t.clone()), false) {
                Some(Parsed::Int(it)) if int.is_none() => int = Some(it),
                Some(Parsed::Mx(f)) if mx.is_none() => mx = Some(f),
                Some(_) => int = None,
                None => reported = true,
            }
        }
        if reported {
            continue; // parse_type said what is wrong with the entry
        }
        let listed = S::new(s.span(), list.clone());
        match (int, mx) {
            (Some(it), Some(f)) if it.signed && it.bits == f.bits && norm.len() == 2 => match &pair
            {
                None => pair = Some((it, f, norm)),
                Some((pi, pf, _)) if *pi == it && pf.element == f.element => {}
                Some((_, _, first)) => {
                    let first = first
                        .iter()
                        .map(|t| format!("\"{t}\""))
                        .collect::<Vec<_>>()
                        .join(", ");
                    ctx.bad(
                        &key,
                        &listed,
                        format!("{key}: a multi-precision design lists the same types for input, weight and output ({prefix}.input is [{first}])"),
                        format!("set {key} = [{first}]"),
                    );
                }
            },
            _ => ctx.bad(&key, &listed, format!("{key}: {rule}"), fix),
        }
    }
    if let Some(s) = &raw.accumulator {
        ctx.bad(
            &format!("{prefix}.accumulator"),
            s,
            format!("{prefix}.accumulator: a multi-precision design accumulates integer layers in int32 and MX layers in FP32"),
            format!("remove {prefix}.accumulator"),
        );
    }
    if let Some((it, f, _)) = pair {
        d.input = it;
        d.weight = it;
        d.output = it;
        d.accumulator = IntType::new(true, 32);
        d.mx = Some(mx_block(ctx, prefix, raw, f));
        d.multi_precision = true;
    }
    d
}

/// Every element key (input, weight, output) must name `want`, the format `first` names.
fn one_element_format(
    ctx: &mut Ctx,
    prefix: &str,
    elements: &[(&str, &Option<S<String>>)],
    parsed: &[(&str, &S<String>, Parsed)],
    want: Parsed,
    first: (&str, &S<String>),
    rule: &str,
) {
    let text = first.1.get_ref().trim().to_ascii_lowercase();
    for (name, val) in elements {
        if parsed.iter().any(|(n, _, p)| n == name && *p == want) {
            continue;
        }
        let key = format!("{prefix}.{name}");
        let rule = format!(
            "{key}: {rule} for input, weight and output ({prefix}.{} is {text})",
            first.0
        );
        let fix = format!("set {key} = \"{text}\"");
        match val {
            // A value that did not parse has its own message already.
            Some(s) => {
                if parsed.iter().any(|(n, _, _)| n == name) {
                    ctx.bad(&key, s, rule, fix);
                }
            }
            None => {
                let loc = ctx.loc(first.1);
                ctx.problem(&key, loc, None, rule, fix);
            }
        }
    }
}

/// An explicit accumulator must be `fp32`; `why` explains, `default_for` names the elements
/// that make it the default.
fn require_fp32(
    ctx: &mut Ctx,
    prefix: &str,
    accumulator: &Option<(&S<String>, Parsed)>,
    why: &str,
    default_for: &str,
) {
    if let Some((s, p)) = accumulator {
        if *p != Parsed::Fp32 {
            ctx.bad(
                &format!("{prefix}.accumulator"),
                s,
                format!("{prefix}.accumulator: {why}"),
                format!("use \"fp32\" (or leave it out: it is the default for {default_for})"),
            );
        }
    }
}

fn resolve_buffers(
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

/// Where each buffer setting of a unit came from, for messages.
struct BufferKeys {
    prefix: String,
    spans: [Option<Location>; 4],
}

pub(super) fn resolve(
    raw: RawConfig,
    src: &str,
    file: &str,
    stem: &str,
) -> Result<Design, ConfigError> {
    let mut ctx = Ctx {
        src,
        problems: Vec::new(),
    };

    let name = match &raw.name {
        Some(n) => {
            ctx.identifier("name", n);
            n.get_ref().clone()
        }
        None => names::sanitize(stem),
    };

    // [reset]
    let mut reset = Reset {
        style: ResetStyle::Async,
        active_low: true,
    };
    if let Some(r) = &raw.reset {
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
    }

    // [array]
    let mut dataflow = "weight_stationary".to_string();
    let (mut rows, mut cols) = (None, None);
    if let Some(a) = &raw.array {
        if let Some(s) = &a.dataflow {
            if s.get_ref() != "weight_stationary" {
                ctx.bad(
                    "array.dataflow",
                    s,
                    "array.dataflow: only \"weight_stationary\" is implemented",
                    "use \"weight_stationary\"",
                );
            }
            dataflow = s.get_ref().clone();
        }
        rows = a.rows.as_ref();
        cols = a.cols.as_ref();
    }

    // [datatype], [buffers]
    let datatype = resolve_datatypes(
        &mut ctx,
        "datatype",
        raw.datatype.as_ref(),
        DEFAULT_DATATYPES,
    );
    let buffers = resolve_buffers(&mut ctx, "buffers", raw.buffers.as_ref(), DEFAULT_BUFFERS);

    // [memory]
    let mut memory = Memory {
        data_width_bits: 64,
        latency_cycles: 20,
        bytes_per_cycle: 8,
    };
    let block_size_loc = raw.datatype.as_ref().and_then(|d| {
        d.block_size
            .as_ref()
            .and_then(|s| ctx.loc(s))
            .or_else(|| d.input.as_ref().and_then(|s| ctx.loc(s)))
    });
    let mut mem_width_loc = None;
    if let Some(m) = &raw.memory {
        if let Some(s) = &m.data_width_bits {
            mem_width_loc = ctx.loc(s);
            let v = *s.get_ref();
            if !(8..=2048).contains(&v) || v % 8 != 0 {
                ctx.bad(
                    "memory.data_width_bits",
                    s,
                    "memory.data_width_bits must be a multiple of 8 between 8 and 2048",
                    {
                        let below = (v.clamp(8, 2048) / 8).max(1) * 8;
                        if below == v.clamp(8, 2048) || below + 8 > 2048 {
                            format!("use {below}")
                        } else {
                            format!("use {below} or {}", below + 8)
                        }
                    },
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
    }

    // [vector]
    let mut vector = VectorOps {
        bias: true,
        relu: true,
        maxpool: true,
        add: true,
    };
    if let Some(v) = &raw.vector {
        if let Some(ops) = &v.ops {
            vector = VectorOps {
                bias: false,
                relu: false,
                maxpool: false,
                add: false,
            };
            let mut requant = false;
            for op in ops.get_ref() {
                match op.get_ref().as_str() {
                    "bias" => vector.bias = true,
                    "requantize" => requant = true,
                    "relu" => vector.relu = true,
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
        }
    }

    // [control]
    let mut control = Control {
        imem_depth: 1024,
        queue_depth: 8,
    };
    if let Some(c) = &raw.control {
        if let Some(s) = &c.imem_depth {
            if let Some(v) = ctx.pow2_in("control.imem_depth", s, 16, 65536) {
                control.imem_depth = v;
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
    }

    // Branches and units.
    let mut branches = Vec::new();
    let mut unit_keys: Vec<Vec<BufferKeys>> = Vec::new();
    let buffer_locs = |ctx: &Ctx, b: Option<&RawBuffers>| -> [Option<Location>; 4] {
        let Some(b) = b else {
            return [None, None, None, None];
        };
        [
            b.input_depth.as_ref().and_then(|s| ctx.loc(s)),
            b.weight_depth.as_ref().and_then(|s| ctx.loc(s)),
            b.accumulator_depth.as_ref().and_then(|s| ctx.loc(s)),
            b.output_depth.as_ref().and_then(|s| ctx.loc(s)),
        ]
    };
    match &raw.branch {
        None => {
            let r = match rows {
                Some(s) => ctx.pow2_in("array.rows", s, 2, 256),
                None => {
                    ctx.problem(
                        "array.rows",
                        None,
                        None,
                        "array.rows is required when the file has no [[branch]] tables",
                        "add rows = 8 (or another power of two) under [array]",
                    );
                    None
                }
            };
            let c = match cols {
                Some(s) => ctx.pow2_in("array.cols", s, 2, 256),
                None => {
                    ctx.problem(
                        "array.cols",
                        None,
                        None,
                        "array.cols is required when the file has no [[branch]] tables",
                        "add cols = 8 (or another power of two) under [array]",
                    );
                    None
                }
            };
            branches.push(Branch {
                name: "main".to_string(),
                batch: 1,
                priority: 0,
                fifo_depth: 8,
                units: vec![Unit {
                    name: "core".to_string(),
                    cpf: r.unwrap_or(8),
                    kpf: c.unwrap_or(8),
                    h: 1,
                    datatype,
                    buffers,
                }],
            });
            unit_keys.push(vec![BufferKeys {
                prefix: "buffers".to_string(),
                spans: buffer_locs(&ctx, raw.buffers.as_ref()),
            }]);
        }
        Some(raw_branches) => {
            for (key, s) in [("array.rows", rows), ("array.cols", cols)] {
                if let Some(s) = s {
                    ctx.bad(
                        key,
                        s,
                        format!("{key} conflicts with [[branch]]: each [[branch.unit]] sets its own cpf and kpf"),
                        format!("remove {key}, or remove the [[branch]] tables for a single-engine design"),
                    );
                }
            }
            if raw_branches.is_empty() {
                ctx.problem(
                    "branch",
                    None,
                    None,
                    "at least one [[branch]] is required",
                    "add a [[branch]] table",
                );
            }
            let mut seen_branches: Vec<(String, Option<Location>)> = Vec::new();
            for (bi, rb) in raw_branches.iter().enumerate() {
                let bkey = format!("branch[{bi}]");
                ctx.identifier(&format!("{bkey}.name"), &rb.name);
                let bname = rb.name.get_ref().clone();
                if let Some((_, first)) = seen_branches.iter().find(|(n, _)| *n == bname) {
                    let first = first
                        .as_ref()
                        .map(|l| format!(" (first used at line {})", l.line))
                        .unwrap_or_default();
                    ctx.bad(
                        &format!("{bkey}.name"),
                        &rb.name,
                        format!("branch names must be unique; \"{bname}\" is already taken{first}"),
                        "give every [[branch]] its own name",
                    );
                }
                seen_branches.push((bname.clone(), ctx.loc(&rb.name)));
                let batch = rb
                    .batch
                    .as_ref()
                    .and_then(|s| ctx.int_in(&format!("{bkey}.batch"), s, 1, 1024))
                    .unwrap_or(1);
                let priority = rb
                    .priority
                    .as_ref()
                    .and_then(|s| ctx.int_in(&format!("{bkey}.priority"), s, 0, 15))
                    .unwrap_or(0);
                let fifo_depth = rb
                    .fifo_depth
                    .as_ref()
                    .and_then(|s| ctx.pow2_in(&format!("{bkey}.fifo_depth"), s, 2, 1024))
                    .unwrap_or(8);
                let mut units = Vec::new();
                let mut keys = Vec::new();
                let raw_units = rb.unit.as_deref().unwrap_or(&[]);
                if raw_units.is_empty() {
                    let loc = ctx.loc(&rb.name);
                    ctx.problem(
                        &format!("{bkey}.unit"),
                        loc,
                        None,
                        format!("branch \"{bname}\" has no [[branch.unit]]"),
                        "add at least one [[branch.unit]] with cpf, kpf and h",
                    );
                }
                let mut seen_units: Vec<String> = Vec::new();
                for (ui, ru) in raw_units.iter().enumerate() {
                    let ukey = format!("{bkey}.unit[{ui}]");
                    ctx.identifier(&format!("{ukey}.name"), &ru.name);
                    if seen_units.contains(ru.name.get_ref()) {
                        ctx.bad(
                            &format!("{ukey}.name"),
                            &ru.name,
                            format!("unit names must be unique within branch \"{bname}\""),
                            "give every [[branch.unit]] of the branch its own name",
                        );
                    }
                    seen_units.push(ru.name.get_ref().clone());
                    let h_val = ru.h.as_ref().map_or(1, |s| *s.get_ref());
                    let product = ru
                        .cpf
                        .get_ref()
                        .saturating_mul(*ru.kpf.get_ref())
                        .saturating_mul(h_val);
                    let (cpf, kpf, h) = if product == 0 {
                        let (which, span): (&str, &S<i64>) = if *ru.cpf.get_ref() == 0 {
                            ("cpf", &ru.cpf)
                        } else if *ru.kpf.get_ref() == 0 {
                            ("kpf", &ru.kpf)
                        } else {
                            ("h", ru.h.as_ref().unwrap_or(&ru.cpf))
                        };
                        ctx.bad(
                            &format!("{ukey}.{which}"),
                            span,
                            format!(
                                "unit \"{}\" has no compute: cpf x kpf x h = {} x {} x {} = 0",
                                ru.name.get_ref(),
                                ru.cpf.get_ref(),
                                ru.kpf.get_ref(),
                                h_val
                            ),
                            "give cpf and kpf a power of two from 2 to 256 and h at least 1",
                        );
                        (None, None, None)
                    } else {
                        (
                            ctx.pow2_in(&format!("{ukey}.cpf"), &ru.cpf, 2, 256),
                            ctx.pow2_in(&format!("{ukey}.kpf"), &ru.kpf, 2, 256),
                            match &ru.h {
                                Some(s) => ctx.int_in(&format!("{ukey}.h"), s, 1, 16),
                                None => Some(1),
                            },
                        )
                    };
                    let udt = resolve_datatypes(
                        &mut ctx,
                        &format!("{ukey}.datatype"),
                        ru.datatype.as_ref(),
                        datatype,
                    );
                    if (udt.mx.is_some() && datatype.mx.is_none())
                        || (udt.fp.is_some() && datatype.fp.is_none())
                    {
                        if let Some(rd) = ru.datatype.as_ref() {
                            let first = [&rd.input, &rd.weight, &rd.output]
                                .into_iter()
                                .flatten()
                                .next();
                            if let Some(s) = first {
                                ctx.bad(
                                    &format!("{ukey}.datatype"),
                                    s,
                                    format!("{ukey}.datatype: MX and floating-point types are chosen for the whole design, in [datatype], not per unit"),
                                    "move the types to [datatype]",
                                );
                            }
                        }
                    }
                    let ubuf = resolve_buffers(
                        &mut ctx,
                        &format!("{ukey}.buffers"),
                        ru.buffers.as_ref(),
                        buffers,
                    );
                    let mut spans = buffer_locs(&ctx, raw.buffers.as_ref());
                    let own = buffer_locs(&ctx, ru.buffers.as_ref());
                    for i in 0..4 {
                        if own[i].is_some() {
                            spans[i] = own[i].clone();
                        }
                    }
                    keys.push(BufferKeys {
                        prefix: if ru.buffers.is_some() {
                            format!("{ukey}.buffers")
                        } else {
                            "buffers".to_string()
                        },
                        spans,
                    });
                    units.push(Unit {
                        name: ru.name.get_ref().clone(),
                        cpf: cpf.unwrap_or(8),
                        kpf: kpf.unwrap_or(8),
                        h: h.unwrap_or(1),
                        datatype: udt,
                        buffers: ubuf,
                    });
                }
                branches.push(Branch {
                    name: bname,
                    batch,
                    priority,
                    fifo_depth,
                    units,
                });
                unit_keys.push(keys);
            }
        }
    }

    // Rules that relate several sections: tiles must fit the buffers, and a memory beat must
    // tile every scratchpad row and every element.
    if ctx.problems.is_empty() {
        let mem_w = memory.data_width_bits;
        let all_units: Vec<&Unit> = branches.iter().flat_map(|b| b.units.iter()).collect();
        let suggestion = suggest_memory_width(&all_units)
            .map(|w| format!("use memory.data_width_bits = {w}, which fits every unit"))
            .unwrap_or_else(|| "no memory width fits every unit; make the element types of all units multiples of 8 bits".to_string());
        for (branch, keys) in branches.iter().zip(&unit_keys) {
            for (unit, key) in branch.units.iter().zip(keys) {
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
                for (what, t) in [
                    ("input", unit.datatype.input),
                    ("weight", unit.datatype.weight),
                    ("output", unit.datatype.output),
                    ("accumulator", unit.datatype.accumulator),
                ] {
                    if !mem_w.is_multiple_of(t.bits) {
                        ctx.problem(
                            "memory.data_width_bits",
                            mem_width_loc.clone(),
                            Some(mem_w.to_string()),
                            format!(
                                "a memory beat must hold whole elements, but {mem_w} bits is not a multiple of the {}-bit {what} type {t} of unit \"{}\"",
                                t.bits, unit.name
                            ),
                            suggestion.clone(),
                        );
                    }
                }
                if let Some(mx) = unit.datatype.mx {
                    if unit.cpf != mx.block_size || unit.kpf != mx.block_size {
                        ctx.problem(
                            "datatype.block_size",
                            block_size_loc.clone(),
                            Some(mx.block_size.to_string()),
                            format!(
                                "an MX block must span the array exactly: one block of the reduction runs down the {} rows per pass and the vector unit quantizes the {} columns of an output row as one block, so block_size must equal both (unit \"{}\")",
                                unit.cpf, unit.kpf, unit.name
                            ),
                            if unit.cpf == unit.kpf && [16, 32, 64].contains(&unit.cpf) {
                                format!("use block_size = {}", unit.cpf)
                            } else {
                                format!(
                                    "use a square {0}x{0} array (block_size 16, 32 and 64 need 16x16, 32x32 and 64x64)",
                                    mx.block_size
                                )
                            },
                        );
                    }
                }
                // Rows are whole beats of elements; an MX row's scale takes one more beat.
                for (what, bits) in [
                    ("input buffer", unit.input_elem_bits()),
                    ("weight buffer", unit.weight_row_bits()),
                    ("accumulator", unit.acc_row_bits()),
                    ("output buffer", unit.output_elem_bits()),
                ] {
                    if !bits.is_multiple_of(mem_w) {
                        ctx.problem(
                            "memory.data_width_bits",
                            mem_width_loc.clone(),
                            Some(mem_w.to_string()),
                            format!(
                                "a scratchpad row must be a whole number of memory beats, but a row of the {what} of unit \"{}\" is {bits} bits",
                                unit.name
                            ),
                            suggestion.clone(),
                        );
                    }
                }
            }
        }
    }

    if !ctx.problems.is_empty() {
        return Err(ConfigError::Invalid {
            file: file.to_string(),
            problems: ctx.problems,
        });
    }
    Ok(Design {
        name,
        source: file.to_string(),
        dataflow,
        reset,
        memory,
        control,
        vector,
        branches,
    })
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
            let d = u.datatype;
            [
                d.input.bits,
                d.weight.bits,
                d.accumulator.bits,
                d.output.bits,
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
