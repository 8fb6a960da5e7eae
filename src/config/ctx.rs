//! The validation context: the parameter file's text (for line and column) and every
//! problem found so far, with helpers for the common rules.

use super::error::{Location, Problem};
use super::raw::S;
use crate::names;

pub(super) struct Ctx<'a> {
    pub src: &'a str,
    pub problems: Vec<Problem>,
}

impl Ctx<'_> {
    pub fn loc<T>(&self, s: &S<T>) -> Option<Location> {
        Some(Location::of_offset(self.src, s.span().start))
    }

    pub fn problem(
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

    pub fn bad<T: std::fmt::Debug>(
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
    pub fn int_in(&mut self, key: &str, s: &S<i64>, lo: i64, hi: i64) -> Option<u32> {
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
    pub fn pow2_in(&mut self, key: &str, s: &S<i64>, lo: i64, hi: i64) -> Option<u32> {
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

    pub fn identifier(&mut self, key: &str, s: &S<String>) -> bool {
        match names::check_identifier(s.get_ref()) {
            Ok(()) => true,
            Err(rule) => {
                let fix = if rule.contains("reserved word") {
                    "choose another name, or add a suffix (e.g. \"_u\")"
                } else {
                    "use lower-case letters, digits and underscores, starting with a letter, at most 32"
                };
                self.bad(key, s, format!("{key} {rule}"), fix);
                false
            }
        }
    }
}
