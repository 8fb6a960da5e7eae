//! The fuzzers' shared machinery: a seeded generator, one run of the `hwgen` binary
//! classified by how it ended, and the counts a fuzzer reports.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest a single case may run before it counts as a hang.
const LIMIT: Duration = Duration::from_secs(60);

pub fn cases() -> u64 {
    std::env::var("HWGEN_FUZZ_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(120)
}

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// How one run ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    Refused,
    /// A refusal without a rule and a fix.
    Unexplained(String),
    Panic(String),
    Signal(String),
    Hang,
}

/// Run `hwgen args`, killing it after [`LIMIT`].
pub fn run(args: &[&std::ffi::OsStr]) -> Outcome {
    run_in(args, None)
}

/// [`run`] in directory `cwd` (the test's own when None).
pub fn run_in(args: &[&std::ffi::OsStr], cwd: Option<&Path>) -> Outcome {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hwgen"));
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let mut child = cmd
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > LIMIT {
            let _ = child.kill();
            child.wait().unwrap();
            return Outcome::Hang;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    match status.code() {
        Some(0) => Outcome::Accepted,
        // A refusal (exit 1; a command line clap refuses, exit 2).
        Some(1 | 2) if explained(&err) => Outcome::Refused,
        Some(1 | 2) => Outcome::Unexplained(err),
        Some(101) => Outcome::Panic(err),
        _ => Outcome::Signal(format!("{status}: {err}")),
    }
}

#[derive(Default, Debug)]
pub struct Counts {
    pub accepted: u64,
    pub refused: u64,
    pub checked: u64,
    pub failures: Vec<String>,
}

impl Counts {
    pub fn add(&mut self, what: &str, input: &Path, o: Outcome) -> bool {
        match o {
            Outcome::Accepted => {
                self.accepted += 1;
                return true;
            }
            Outcome::Refused => self.refused += 1,
            other => {
                let keep = std::env::temp_dir().join(format!(
                    "hwgen-fuzz-failure-{}-{}",
                    std::process::id(),
                    self.failures.len()
                ));
                let _ = std::fs::copy(input, &keep);
                self.failures.push(format!(
                    "{what}: {other:?} (input kept as {})",
                    keep.display()
                ))
            }
        }
        false
    }
    /// A failure found after the input was accepted, with the input kept for replay.
    pub fn fail(&mut self, input: &Path, what: String) {
        let keep = std::env::temp_dir().join(format!(
            "hwgen-fuzz-failure-{}-{}.toml",
            std::process::id(),
            self.failures.len()
        ));
        let _ = std::fs::copy(input, &keep);
        self.failures
            .push(format!("{what} (input kept as {})", keep.display()));
    }
    pub fn report(&self, kind: &str, n: u64) {
        eprintln!(
            "fuzz {kind}: {n} cases, {} accepted ({} checked further), {} refused with rule and fix, {} failures",
            self.accepted,
            self.checked,
            self.refused,
            self.failures.len()
        );
        assert!(
            self.failures.is_empty(),
            "{} {kind} failures:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

/// A refusal in the promised shape (after any notes and warnings): `error:` lines, each
/// followed by its `rule:` and `fix:` line, and no Rust debug formatting (`Some(..)`, a struct's `Name { field: .. }`).
pub fn explained(err: &str) -> bool {
    // Notes and warnings may come first.
    let from = match err.find("error: ") {
        Some(0) => 0,
        Some(_) => match err.find("\nerror: ") {
            Some(i) => i + 1,
            None => return false,
        },
        None => return false,
    };
    hwgen::refusal::Refusal::is_shaped(&err[from..]) && !err.contains("Some(") && !struct_dump(err)
}

/// `Name { field: ` somewhere in `text` (how `{:?}` prints a struct).
fn struct_dump(text: &str) -> bool {
    text.match_indices(" { ").any(|(i, _)| {
        let name = text[..i]
            .rsplit(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .next()
            .unwrap_or("");
        let field: String = text[i + 3..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect();
        name.starts_with(|c: char| c.is_ascii_uppercase())
            && !field.is_empty()
            && text[i + 3 + field.len()..].starts_with(": ")
    })
}
