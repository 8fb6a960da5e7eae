//! The table of element formats and the one datatype-name parser that the parameter file and
//! the model format both use.

use super::int::IntType;
use super::minifloat::{BF16, E4M3, E5M2};
use super::mx::{MxFormat, MXINT4, MXINT8};
use super::posit::Posit;
use super::Format;

/// One named format: its canonical name, other accepted spellings, the format with its
/// default parameters, and what it is.
pub struct Entry {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub format: Format,
    pub doc: &'static str,
}

/// Every named format (integer types are written `intN` / `uintN`, N = 4..16).
pub const TABLE: &[Entry] = &[
    Entry {
        name: "mxint8",
        aliases: &[],
        format: Format::Mx(MxFormat {
            elem: MXINT8,
            block_size: 32,
        }),
        doc: "OCP MX: int8 elements q/64, one E8M0 scale per block (block_size)",
    },
    Entry {
        name: "mxint4",
        aliases: &[],
        format: Format::Mx(MxFormat {
            elem: MXINT4,
            block_size: 32,
        }),
        doc: "OCP MX: int4 elements q/4, one E8M0 scale per block (block_size)",
    },
    Entry {
        name: "fp8_e4m3",
        aliases: &["e4m3"],
        format: Format::Float(E4M3),
        doc: "OCP FP8 E4M3 (\"fn\": no infinity, max 448)",
    },
    Entry {
        name: "fp8_e5m2",
        aliases: &["e5m2"],
        format: Format::Float(E5M2),
        doc: "OCP FP8 E5M2 (IEEE-like, max 57344)",
    },
    Entry {
        name: "bf16",
        aliases: &[],
        format: Format::Float(BF16),
        doc: "bfloat16",
    },
    Entry {
        name: "posit8",
        aliases: &[],
        format: Format::Posit(Posit { bits: 8, es: 2 }),
        doc: "8-bit posit with es exponent bits (es = 2, the 2022 standard, or 0)",
    },
];

/// Integer element widths.
pub const INT_BITS: std::ops::RangeInclusive<u32> = 4..=16;
/// Integer accumulator widths.
pub const ACC_BITS: std::ops::RangeInclusive<u32> = 8..=32;
/// MX block sizes.
pub const BLOCK_SIZES: [u32; 3] = [16, 32, 64];
/// Posit exponent sizes.
pub const POSIT_ES: [u32; 2] = [0, 2];

/// Why a name or parameter is not a format: the rule it breaks and a fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub rule: String,
    pub fix: String,
}

fn error(rule: impl Into<String>, fix: impl Into<String>) -> FormatError {
    FormatError {
        rule: rule.into(),
        fix: fix.into(),
    }
}

/// The names of the table, for messages: `"mxint8", "mxint4", ...`.
pub fn names() -> String {
    TABLE
        .iter()
        .map(|e| format!("\"{}\"", e.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `intN` / `uintN` with N in `bits`; `None` when the text is not written that way.
fn int_type(text: &str, bits: &std::ops::RangeInclusive<u32>) -> Option<Result<IntType, u32>> {
    let (signed, digits) = if let Some(d) = text.strip_prefix("uint") {
        (false, d)
    } else {
        (true, text.strip_prefix("int")?)
    };
    let n: u32 = digits.parse().ok()?;
    Some(if bits.contains(&n) {
        Ok(IntType::new(signed, n))
    } else {
        Err(n)
    })
}

/// An element format by name (case and surrounding space do not matter), with its default
/// parameters.
pub fn parse(name: &str) -> Result<Format, FormatError> {
    let text = name.trim().to_ascii_lowercase();
    if let Some(e) = TABLE
        .iter()
        .find(|e| e.name == text || e.aliases.contains(&text.as_str()))
    {
        return Ok(e.format);
    }
    match int_type(&text, &INT_BITS) {
        Some(Ok(t)) => Ok(Format::Int(t)),
        Some(Err(n)) => Err(error(
            format!("integer element types are 4 to 16 bits wide, not {n}"),
            "use one of int4..int16 or uint4..uint16",
        )),
        None if text == "fp32" => Err(error(
            "fp32 is only an accumulator type",
            format!("use an integer type such as \"int8\", or one of {}", names()),
        )),
        None => Err(error(
            format!(
                "unknown datatype \"{}\"; integer types are written intN or uintN, and the other formats are {}",
                name.trim(),
                names()
            ),
            "use one of int4..int16 or uint4..uint16, for example \"int8\"",
        )),
    }
}

/// The accumulator of a datapath.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accumulator {
    Int(IntType),
    Fp32,
}

/// An accumulator type by name: `intN` (signed, 8 to 32 bits) or `fp32`.
pub fn parse_accumulator(name: &str) -> Result<Accumulator, FormatError> {
    let text = name.trim().to_ascii_lowercase();
    if text == "fp32" {
        return Ok(Accumulator::Fp32);
    }
    if parse(&text).is_ok_and(|f| !matches!(f, Format::Int(_))) {
        return Err(error(
            format!("{text} is an element type; MX, floating-point and posit products are accumulated in FP32"),
            "use \"fp32\"",
        ));
    }
    match int_type(&text, &ACC_BITS) {
        Some(Ok(t)) if t.signed => Ok(Accumulator::Int(t)),
        Some(_) => Err(error(
            "the accumulator must be a signed integer of 8 to 32 bits",
            "use \"int32\"",
        )),
        None => Err(error(
            format!(
                "unknown accumulator type \"{}\"; it is intN (N = 8..32) or fp32",
                name.trim()
            ),
            "use \"int32\"",
        )),
    }
}

/// The parameters a format may take: the MX block size and the posit exponent size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Params {
    pub block_size: Option<i64>,
    pub es: Option<i64>,
}

/// Which parameter a [`ParamError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    BlockSize,
    Es,
}

impl Param {
    pub fn key(self) -> &'static str {
        match self {
            Param::BlockSize => "block_size",
            Param::Es => "es",
        }
    }
}

/// Apply `params` to `format`: each parameter must belong to the format and be valid. The
/// error names the parameter.
pub fn with_params(format: Format, params: Params) -> Result<Format, (Param, FormatError)> {
    let mut f = format;
    if let Some(b) = params.block_size {
        let Format::Mx(m) = &mut f else {
            return Err((
                Param::BlockSize,
                error(
                    format!(
                        "block_size applies to MX formats only, not to {}",
                        format.name()
                    ),
                    "remove block_size",
                ),
            ));
        };
        if !BLOCK_SIZES.contains(&(b as u32)) || b < 0 {
            return Err((
                Param::BlockSize,
                error(
                    "block_size must be 16, 32 (the OCP MX block) or 64",
                    "use block_size = 32",
                ),
            ));
        }
        m.block_size = b as u32;
    }
    if let Some(es) = params.es {
        let Format::Posit(p) = &mut f else {
            return Err((
                Param::Es,
                error(
                    format!("es applies to posit formats only, not to {}", format.name()),
                    "remove es",
                ),
            ));
        };
        if es < 0 || !POSIT_ES.contains(&(es as u32)) {
            return Err((
                Param::Es,
                error(
                    "es (the posit exponent size) must be 0 (SoftPosit's posit8_t) or 2 (the 2022 posit standard)",
                    "use es = 2",
                ),
            ));
        }
        p.es = es as u32;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::posit::POSIT8_ES0;

    #[test]
    fn names_parse_to_the_table() {
        assert_eq!(parse("int8"), Ok(Format::Int(IntType::new(true, 8))));
        assert_eq!(parse(" UINT4 "), Ok(Format::Int(IntType::new(false, 4))));
        assert_eq!(parse("e4m3"), Ok(Format::Float(E4M3)));
        assert_eq!(parse("bf16"), Ok(Format::Float(BF16)));
        assert!(
            matches!(parse("mxint4"), Ok(Format::Mx(m)) if m.elem == MXINT4 && m.block_size == 32)
        );
        assert!(parse("int17").unwrap_err().rule.contains("4 to 16"));
        assert!(parse("fp32").unwrap_err().rule.contains("accumulator"));
        assert!(parse("float8").unwrap_err().rule.contains("posit8"));
        for e in TABLE {
            assert_eq!(parse(e.name), Ok(e.format));
            assert_eq!(e.format.name(), e.name);
        }
    }

    #[test]
    fn accumulators() {
        assert_eq!(parse_accumulator("fp32"), Ok(Accumulator::Fp32));
        assert_eq!(
            parse_accumulator("int24"),
            Ok(Accumulator::Int(IntType::new(true, 24)))
        );
        assert!(parse_accumulator("uint32").is_err());
        assert!(parse_accumulator("mxint8")
            .unwrap_err()
            .fix
            .contains("fp32"));
    }

    #[test]
    fn parameters_belong_to_their_formats() {
        let posit = parse("posit8").unwrap();
        let p0 = with_params(
            posit,
            Params {
                es: Some(0),
                ..Params::default()
            },
        );
        assert_eq!(p0, Ok(Format::Posit(POSIT8_ES0)));
        let bad = with_params(
            posit,
            Params {
                block_size: Some(16),
                ..Params::default()
            },
        );
        assert_eq!(bad.unwrap_err().0, Param::BlockSize);
        let mx = parse("mxint8").unwrap();
        assert!(with_params(
            mx,
            Params {
                block_size: Some(48),
                ..Params::default()
            }
        )
        .is_err());
        assert!(with_params(
            posit,
            Params {
                es: Some(1),
                ..Params::default()
            }
        )
        .is_err());
    }
}
