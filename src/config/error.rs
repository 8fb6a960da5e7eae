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
        use crate::refusal::{write_all, Refusal};
        match self {
            ConfigError::Unreadable { file, rule, fix } => {
                write!(f, "{}", Refusal::new(file, rule, fix))
            }
            ConfigError::Invalid { file, problems } => write_all(
                f,
                problems.iter().map(|p| {
                    let loc = p
                        .location
                        .as_ref()
                        .map(|l| format!(":{}:{}", l.line, l.col))
                        .unwrap_or_default();
                    let what = match &p.value {
                        Some(v) => format!("{file}{loc}: {} = {v}", p.key),
                        None => format!("{file}{loc}: {}", p.key),
                    };
                    Refusal::new(what, &p.rule, &p.fix)
                }),
            ),
        }
    }
}
