//! Typed configuration errors. Each names the file, the key path, line and column, the
//! offending value, the rule it breaks and a fix.

use std::fmt;

pub use crate::location::{Location, Problem};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The file could not be read at all.
    Unreadable {
        file: String,
        rule: String,
        fix: String,
    },
    /// One or more problems found in the file.
    Invalid {
        file: String,
        problems: Vec<Problem>,
    },
}

impl std::error::Error for ConfigError {}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Unreadable { file, rule, fix } => {
                writeln!(f, "error: {file}")?;
                writeln!(f, "  rule: {rule}")?;
                write!(f, "  fix:  {fix}")
            }
            ConfigError::Invalid { file, problems } => {
                for (i, p) in problems.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    let loc = p
                        .location
                        .as_ref()
                        .map(|l| format!(":{}:{}", l.line, l.col))
                        .unwrap_or_default();
                    match &p.value {
                        Some(v) => writeln!(f, "error: {file}{loc}: {} = {v}", p.key)?,
                        None => writeln!(f, "error: {file}{loc}: {}", p.key)?,
                    }
                    writeln!(f, "  rule: {}", p.rule)?;
                    write!(f, "  fix:  {}", p.fix)?;
                }
                Ok(())
            }
        }
    }
}
