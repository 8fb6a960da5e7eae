//! Parameter file → validated [`Design`]. Parsing keeps spans; resolution fills defaults;
//! validation collects every problem with its line, column, rule and fix.

mod branches;
mod ctx;
mod datatype;
pub mod error;
mod raw;
mod resolve;
mod rules;
mod sections;

pub use error::{ConfigError, Location, Problem};

use crate::design::Design;
use std::path::Path;

/// Read and validate a parameter file.
pub fn load(path: &Path) -> Result<Design, ConfigError> {
    let file = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| ConfigError::Unreadable {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "design".to_string());
    let mut design = parse_str(&src, &file, &stem)?;
    // Outputs name the parameter file without its directory, so they do not depend on where
    // hwgen ran.
    if let Some(name) = path.file_name() {
        design.source = name.to_string_lossy().into_owned();
    }
    Ok(design)
}

/// Validate parameter-file text. `file` is used in messages; `stem` names the design when
/// the file has no `name` key.
pub fn parse_str(src: &str, file: &str, stem: &str) -> Result<Design, ConfigError> {
    let raw: raw::RawConfig = toml::from_str(src).map_err(|e| ConfigError::Invalid {
        file: file.to_string(),
        problems: vec![toml_problem(src, &e)],
    })?;
    resolve::resolve(raw, src, file, stem)
}

/// Turn a syntax or type error from the TOML reader into a [`Problem`].
fn toml_problem(src: &str, e: &toml::de::Error) -> Problem {
    let span = e.span();
    let location = span.as_ref().map(|s| Location::of_offset(src, s.start));
    let message = e.message().trim().to_string();
    let key = span
        .as_ref()
        .and_then(|s| key_path_at(src, s.start))
        .unwrap_or_else(|| "<document>".to_string());
    // For an unknown key the span covers the key itself, which is not a value.
    let value = span
        .as_ref()
        .map(|s| src[s.clone()].trim().to_string())
        .filter(|v| !v.is_empty() && !v.contains('\n') && v.len() < 80)
        .filter(|_| !message.starts_with("unknown field"));
    let (rule, fix) = if message.starts_with("unknown field") {
        (
            message.clone(),
            "remove the key or correct its spelling; unknown keys are never ignored".to_string(),
        )
    } else if message.starts_with("invalid type") {
        (
            message.clone(),
            "write the value with the type the key takes (integers unquoted, names quoted)"
                .to_string(),
        )
    } else if message.starts_with("missing field") {
        (message.clone(), "add the key".to_string())
    } else {
        (
            format!("TOML syntax: {message}"),
            "fix the TOML syntax at this position".to_string(),
        )
    };
    Problem {
        key,
        location,
        value,
        rule,
        fix,
    }
}

/// Best-effort key path (`array.rows`) for the text at `offset`: the nearest table header
/// above it plus the key on its line.
fn key_path_at(src: &str, offset: usize) -> Option<String> {
    let line_start = src[..offset.min(src.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line_end = src[line_start..]
        .find('\n')
        .map_or(src.len(), |i| line_start + i);
    let line = &src[line_start..line_end];
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().to_string())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    let table = src[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    let header_here = line.trim().starts_with('[');
    match (table, key) {
        _ if header_here => Some(
            line.trim()
                .trim_matches(|c| c == '[' || c == ']')
                .to_string(),
        ),
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (None, Some(k)) => Some(k),
        (Some(t), None) => Some(t),
        (None, None) => None,
    }
}
