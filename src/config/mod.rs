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
    let src = crate::location::read_text(
        path,
        "parameter file",
        "the shipped parameter files are in configs/",
    )
    .map_err(|(rule, fix)| ConfigError::Unreadable {
        file: file.clone(),
        rule,
        fix,
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
        problems: vec![Problem::of_toml(src, &e)],
    })?;
    resolve::resolve(raw, src, file, stem)
}
