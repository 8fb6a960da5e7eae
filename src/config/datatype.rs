//! `[datatype]` and the per-unit `datatype` overrides: element formats (through the one
//! format parser, `numeric::format`) become the precisions of a unit's datapath.

use super::ctx::Ctx;
use super::raw::{RawDatatype, TypeSpec, S};
use crate::design::Datatypes;
use crate::numeric::format::{self, Accumulator, Param, Params};
use crate::numeric::{leaves_of, Format, IntPrecision, IntType, Precision};

/// The design default: int8 elements, int32 accumulation.
pub(super) fn default_datatypes() -> Datatypes {
    let i8 = IntType::new(true, 8);
    Datatypes::single(Precision::Int(IntPrecision {
        input: i8,
        weight: i8,
        accumulator: IntType::new(true, 32),
        output: i8,
    }))
}

const ELEMENTS: [&str; 3] = ["input", "weight", "output"];

fn element<'r>(raw: &'r RawDatatype, name: &str) -> &'r Option<S<TypeSpec>> {
    match name {
        "input" => &raw.input,
        "weight" => &raw.weight,
        _ => &raw.output,
    }
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

/// Resolve `raw` (the table at `prefix`) over `base`: the design's `[datatype]` over the
/// default, or a unit's override over the design's.
pub(super) fn resolve(
    ctx: &mut Ctx,
    prefix: &str,
    raw: Option<&RawDatatype>,
    base: &Datatypes,
) -> Datatypes {
    let Some(raw) = raw else {
        return base.clone();
    };
    if base.is_multi() || !matches!(base.precisions[0], Precision::Int(_)) {
        set_once(ctx, prefix, raw);
        return base.clone();
    }
    let lists = ELEMENTS.iter().any(|n| {
        matches!(
            element(raw, n).as_ref().map(|s| s.get_ref()),
            Some(TypeSpec::List(_))
        )
    });
    if lists {
        return multi_precision(ctx, prefix, raw, base);
    }
    let parsed = parse_elements(ctx, prefix, raw);
    let accumulator =
        raw.accumulator
            .as_ref()
            .and_then(|s| match format::parse_accumulator(s.get_ref()) {
                Ok(a) => Some((s, a)),
                Err(e) => {
                    ctx.bad(
                        &format!("{prefix}.accumulator"),
                        s,
                        format!("{prefix}.accumulator: {}", e.rule),
                        e.fix,
                    );
                    None
                }
            });
    let other = parsed.iter().find(|(_, _, f)| !matches!(f, Format::Int(_)));
    match other {
        Some((name, s, f)) => one_format(ctx, prefix, raw, &parsed, accumulator, (name, s, *f))
            .map_or_else(|| base.clone(), Datatypes::single),
        None => integers(ctx, prefix, raw, &parsed, accumulator, base),
    }
}

/// Per-unit overrides of a design whose datatypes are not plain integers: refused.
fn set_once(ctx: &mut Ctx, prefix: &str, raw: &RawDatatype) {
    let rule = format!("{prefix}: the datatypes of an MX, floating-point, posit or multi-precision design are set once, in [datatype]");
    for (name, val) in [
        ("input", as_text(&raw.input)),
        ("weight", as_text(&raw.weight)),
        ("accumulator", raw.accumulator.clone()),
        ("output", as_text(&raw.output)),
        ("scale", raw.scale.clone()),
    ] {
        if let Some(s) = val {
            ctx.bad(
                &format!("{prefix}.{name}"),
                &s,
                rule.clone(),
                format!("remove {prefix}"),
            );
        }
    }
    for (name, val) in [("block_size", &raw.block_size), ("es", &raw.es)] {
        if let Some(s) = val {
            ctx.bad(
                &format!("{prefix}.{name}"),
                s,
                rule.clone(),
                format!("remove {prefix}"),
            );
        }
    }
}

/// The element keys that name one format each: (key, its text, the format).
fn parse_elements(
    ctx: &mut Ctx,
    prefix: &str,
    raw: &RawDatatype,
) -> Vec<(&'static str, S<String>, Format)> {
    let mut parsed = Vec::new();
    for name in ELEMENTS {
        let Some(s) = as_text(element(raw, name)) else {
            continue;
        };
        match format::parse(s.get_ref()) {
            Ok(f) => parsed.push((name, s, f)),
            Err(e) => ctx.bad(
                &format!("{prefix}.{name}"),
                &s,
                format!("{prefix}.{name}: {}", e.rule),
                e.fix,
            ),
        }
    }
    parsed
}

/// The parameters of the format table (block_size, es) and `scale`, applied to `f`.
fn parameters(
    ctx: &mut Ctx,
    prefix: &str,
    raw: &RawDatatype,
    f: Format,
    at: &S<String>,
) -> Option<Format> {
    if let Some(s) = &raw.scale {
        if !matches!(f, Format::Mx(_)) {
            ctx.bad(
                &format!("{prefix}.scale"),
                s,
                format!("{prefix}.scale applies to MX element types only"),
                format!("remove {prefix}.scale"),
            );
        } else if !s.get_ref().trim().eq_ignore_ascii_case("e8m0") {
            ctx.bad(
                &format!("{prefix}.scale"),
                s,
                format!("{prefix}.scale: MX scales are E8M0"),
                "use scale = \"e8m0\"",
            );
        }
    }
    let params = Params {
        block_size: raw.block_size.as_ref().map(|s| *s.get_ref()),
        es: raw.es.as_ref().map(|s| *s.get_ref()),
    };
    match format::with_params(f, params) {
        Ok(f) => Some(f),
        Err((param, e)) => {
            let key = format!("{prefix}.{}", param.key());
            match match param {
                Param::BlockSize => &raw.block_size,
                Param::Es => &raw.es,
            } {
                Some(s) => ctx.bad(&key, s, format!("{prefix}.{}", e.rule), e.fix),
                None => {
                    let loc = ctx.loc(at);
                    ctx.problem(&key, loc, None, e.rule, e.fix)
                }
            }
            None
        }
    }
}

/// MX, floating-point and posit elements: one format for input, weight and output,
/// accumulated in FP32.
fn one_format(
    ctx: &mut Ctx,
    prefix: &str,
    raw: &RawDatatype,
    parsed: &[(&'static str, S<String>, Format)],
    accumulator: Option<(&S<String>, Accumulator)>,
    (first, first_s, want): (&str, &S<String>, Format),
) -> Option<Precision> {
    let text = first_s.get_ref().trim().to_ascii_lowercase();
    let p = Precision::of(want, IntType::new(true, 32));
    let (family, a_family) = (p.family(), p.a_family());
    for name in ELEMENTS {
        if parsed.iter().any(|(n, _, f)| *n == name && *f == want) {
            continue;
        }
        let key = format!("{prefix}.{name}");
        let rule = format!(
            "{key}: {a_family} design uses one element format for input, weight and output ({prefix}.{first} is {text})"
        );
        let fix = format!("set {key} = \"{text}\"");
        match parsed.iter().find(|(n, _, _)| *n == name) {
            Some((_, s, _)) => ctx.bad(&key, s, rule, fix),
            None if element(raw, name).is_none() => {
                let loc = ctx.loc(first_s);
                ctx.problem(&key, loc, None, rule, fix);
            }
            None => {} // it did not parse: said already
        }
    }
    if let Some((s, Accumulator::Int(_))) = accumulator {
        ctx.bad(
            &format!("{prefix}.accumulator"),
            s,
            format!("{prefix}.accumulator: {family} products are accumulated in FP32"),
            format!("use \"fp32\" (or leave it out: it is the default for {family} elements)"),
        );
    }
    let f = parameters(ctx, prefix, raw, want, first_s)?;
    Some(Precision::of(f, IntType::new(true, 32)))
}

/// Integer elements over `base`'s integer precision.
fn integers(
    ctx: &mut Ctx,
    prefix: &str,
    raw: &RawDatatype,
    parsed: &[(&'static str, S<String>, Format)],
    accumulator: Option<(&S<String>, Accumulator)>,
    base: &Datatypes,
) -> Datatypes {
    let Precision::Int(mut p) = base.precisions[0] else {
        unreachable!("integer bases only")
    };
    for (name, _, f) in parsed {
        let Format::Int(t) = *f else { continue };
        match *name {
            "input" => p.input = t,
            "weight" => p.weight = t,
            _ => p.output = t,
        }
    }
    for (key, val) in [("block_size", &raw.block_size), ("es", &raw.es)] {
        if let Some(s) = val {
            ctx.bad(
                &format!("{prefix}.{key}"),
                s,
                format!(
                    "{prefix}.{key} applies to {} element types only",
                    if key == "es" { "posit" } else { "MX" }
                ),
                format!(
                    "remove it, or use input, weight and output = \"{}\"",
                    if key == "es" { "posit8" } else { "mxint8" }
                ),
            );
        }
    }
    if let Some(s) = raw.scale.as_ref() {
        ctx.bad(
            &format!("{prefix}.scale"),
            s,
            format!("{prefix}.scale applies to MX element types only"),
            "remove it, or use input, weight and output = \"mxint8\"",
        );
    }
    if let Some((s, acc)) = accumulator {
        match acc {
            Accumulator::Int(t) => p.accumulator = t,
            Accumulator::Fp32 => ctx.bad(
                &format!("{prefix}.accumulator"),
                s,
                format!("{prefix}.accumulator: fp32 accumulation needs MX, floating-point or posit elements"),
                "use \"int32\", or input, weight and output = \"mxint8\" (or \"fp8_e4m3\", \"fp8_e5m2\", \"bf16\", \"posit8\")",
            ),
        }
        let need = p.input.bits + p.weight.bits;
        if p.accumulator.bits < need {
            ctx.bad(
                &format!("{prefix}.accumulator"),
                s,
                format!(
                    "{prefix}.accumulator ({}) is narrower than the {need}-bit products of {} x {} it must hold",
                    p.accumulator, p.input, p.weight
                ),
                format!("use an accumulator of at least {need} bits, for example \"int32\""),
            );
        }
    }
    Datatypes::single(Precision::Int(p))
}

/// A multi-precision design: input, weight and output list the same pair of types, a
/// signed integer type and the MX type of the same width (`numeric::leaves_of`). Both run
/// on the array's integer multipliers; each instruction says which its layer takes.
fn multi_precision(ctx: &mut Ctx, prefix: &str, raw: &RawDatatype, base: &Datatypes) -> Datatypes {
    let rule = "a multi-precision design lists a signed integer type and the MX type of the same width (both run on the array's integer multipliers; FP8, BF16 and posits need floating-point ones)";
    let fix = "use [\"int8\", \"mxint8\"] (or [\"int4\", \"mxint4\"])";
    let mut first: Option<(Vec<Format>, Vec<String>)> = None;
    for name in ELEMENTS {
        let key = format!("{prefix}.{name}");
        let Some(s) = element(raw, name) else {
            if name != "output" {
                let loc = ELEMENTS
                    .iter()
                    .find_map(|n| element(raw, n).as_ref())
                    .and_then(|s| ctx.loc(s));
                ctx.problem(
                    &key,
                    loc,
                    None,
                    format!("{key} is missing: {rule}, for input, weight and output"),
                    format!("set {key} = [\"int8\", \"mxint8\"]"),
                );
            }
            continue; // output defaults to the list of input
        };
        let text = as_text(element(raw, name)).expect("present");
        let TypeSpec::List(list) = s.get_ref() else {
            ctx.bad(
                &key,
                &text,
                format!("{key}: a multi-precision design lists the same types for input, weight and output"),
                format!("set {key} to the list the other keys use, for example [\"int8\", \"mxint8\"]"),
            );
            continue;
        };
        let mut formats = Vec::new();
        for t in list {
            match format::parse(t) {
                Ok(f) => formats.push(f),
                Err(e) => ctx.bad(
                    &key,
                    &S::new(s.span(), t.clone()),
                    format!("{key}: {}", e.rule),
                    e.fix,
                ),
            }
        }
        if formats.len() != list.len() {
            continue; // said already
        }
        // Integer first, then MX: the order of the precision indices.
        formats.sort_by_key(|f| !matches!(f, Format::Int(_)));
        let listed = S::new(s.span(), list.clone());
        let pair: Vec<Precision> = formats
            .iter()
            .map(|f| Precision::of(*f, IntType::new(true, 32)))
            .collect();
        if leaves_of(&pair).is_err() || pair.len() != 2 {
            ctx.bad(&key, &listed, format!("{key}: {rule}"), fix);
            continue;
        }
        let norm: Vec<String> = list.iter().map(|t| t.trim().to_ascii_lowercase()).collect();
        match &first {
            None => first = Some((formats, norm)),
            Some((f, _)) if *f == formats => {}
            Some((_, names)) => {
                let names = names
                    .iter()
                    .map(|t| format!("\"{t}\""))
                    .collect::<Vec<_>>()
                    .join(", ");
                ctx.bad(
                    &key,
                    &listed,
                    format!("{key}: a multi-precision design lists the same types for input, weight and output ({prefix}.input is [{names}])"),
                    format!("set {key} = [{names}]"),
                );
            }
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
    let Some((formats, _)) = first else {
        return base.clone();
    };
    let at = as_text(&raw.input)
        .or_else(|| as_text(&raw.weight))
        .expect("a list");
    let mut precisions = Vec::new();
    for f in formats {
        let f = match f {
            Format::Int(_) => f,
            _ => match parameters(ctx, prefix, raw, f, &at) {
                Some(f) => f,
                None => return base.clone(),
            },
        };
        precisions.push(Precision::of(f, IntType::new(true, 32)));
    }
    Datatypes { precisions }
}
