//! The one shape of everything hwgen refuses: what was refused and where (the file, line
//! and key, the layer or node, the argument), the rule it breaks and the fix. Every error
//! type of the tool prints itself through [`Refusal`], and the binary prints nothing else
//! (an error that reaches it in another shape is put in this one).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What was refused and where, as the user gave it.
    pub what: String,
    pub rule: String,
    pub fix: String,
}

impl Refusal {
    pub fn new(
        what: impl fmt::Display,
        rule: impl fmt::Display,
        fix: impl fmt::Display,
    ) -> Refusal {
        Refusal {
            what: what.to_string(),
            rule: rule.to_string(),
            fix: fix.to_string(),
        }
    }

    /// Whether `text` is one or more refusals in this shape, one after another.
    pub fn is_shaped(text: &str) -> bool {
        let lines: Vec<&str> = text.lines().collect();
        let starts: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("error: "))
            .map(|(i, _)| i)
            .collect();
        !starts.is_empty()
            && starts[0] == 0
            && starts.iter().enumerate().all(|(k, &s)| {
                let end = starts.get(k + 1).copied().unwrap_or(lines.len());
                let block = &lines[s..end];
                block.iter().any(|l| l.starts_with("  rule: "))
                    && block.iter().any(|l| l.starts_with("  fix:  "))
            })
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error: {}", self.what)?;
        writeln!(f, "  rule: {}", self.rule)?;
        write!(f, "  fix:  {}", self.fix)
    }
}

impl std::error::Error for Refusal {}

/// A tool's log in a rule: each line indented under it (so that no line of the log reads
/// as a refusal of its own).
pub fn indented(log: &str) -> String {
    log.lines().map(|l| format!("\n    {l}")).collect()
}

/// Several refusals, one after another (a file with several problems).
pub fn write_all(
    f: &mut fmt::Formatter<'_>,
    all: impl IntoIterator<Item = Refusal>,
) -> fmt::Result {
    for (i, r) in all.into_iter().enumerate() {
        if i > 0 {
            writeln!(f)?;
        }
        write!(f, "{r}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Refusal;

    #[test]
    fn the_shape_is_every_block_s() {
        let one = Refusal::new("x.toml:3:1: a = 2", "a is 0 or 1", "use 0 or 1").to_string();
        assert_eq!(
            one,
            "error: x.toml:3:1: a = 2\n  rule: a is 0 or 1\n  fix:  use 0 or 1"
        );
        assert!(Refusal::is_shaped(&one));
        assert!(Refusal::is_shaped(&format!("{one}\n{one}")));
        assert!(!Refusal::is_shaped("Is a directory (os error 21)"));
        assert!(!Refusal::is_shaped(&format!("{one}\nerror: terse")));
        assert!(!Refusal::is_shaped(&format!("note: {one}")));
    }
}
