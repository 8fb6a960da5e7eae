//! Build a Verilator model once and reuse it: the model is cached under a directory named
//! by the hash of everything that shapes it (sources, top, parameters, flags, Verilator's
//! version), so each configuration is verilated once however many cases run on it.

use crate::design::fnv1a64;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variable that turns a missing simulator from a skip into a failure. The
/// project's test command sets it.
pub const REQUIRE_ENV: &str = "HWGEN_REQUIRE_SIMULATORS";

#[derive(Debug)]
pub enum SimError {
    /// Verilator is not installed.
    Missing,
    /// A tool ran and failed.
    Failed {
        what: String,
        log: String,
    },
    Io(std::io::Error),
    /// The simulation cache cannot be used: its path, what went wrong.
    Cache {
        path: PathBuf,
        rule: String,
    },
    /// The output directory cannot be written.
    Output(crate::filemap::OutputError),
    /// The accelerator stopped making progress: the diagnosis (`stall::Stall::report`).
    Stalled(String),
}

impl SimError {
    /// A cache operation on `path` failed.
    pub fn cache(path: &Path, what: &str, e: std::io::Error) -> SimError {
        SimError::Cache {
            path: path.to_path_buf(),
            rule: format!("cannot {what}: {e}"),
        }
    }
}

impl From<crate::filemap::OutputError> for SimError {
    fn from(e: crate::filemap::OutputError) -> Self {
        SimError::Output(e)
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::refusal::{indented, Refusal};
        let r = match self {
            SimError::Missing => Refusal::new(
                "verilator",
                "the RTL is simulated in Verilator, which is not on PATH",
                "install it with scripts/setup.sh (apt-get install verilator), or run `hwgen run --interp` on the ISA interpreter",
            ),
            SimError::Failed { what, log } => Refusal::new(
                what,
                format!("it failed; its log:{}", indented(log)),
                "the log names the file and the line: a generated file that does not build is a bug in hwgen; report it with the config",
            ),
            SimError::Io(e) => Refusal::new(
                "the simulation",
                format!("a file of the run could not be read or written: {e}"),
                "check that the cache directory and the temporary directory are writable and not full",
            ),
            SimError::Cache { path, rule } => Refusal::new(
                format!("simulation cache {}", path.display()),
                rule,
                "give a writable directory with --cache or $HWGEN_CACHE (the cache may be deleted at any time)",
            ),
            SimError::Output(e) => return write!(f, "{e}"),
            SimError::Stalled(report) => Refusal::new(
                format!("the accelerator hangs: {report}"),
                "`hwgen compile` ran this program to its end on the ISA interpreter, so every semaphore it waits on is released in the ISA's semantics; a hang in the RTL is a hardware bug (or a program changed after compiling)",
                "run `hwgen sim --lockstep` to find the first instruction whose writes differ, or `--trace FILE` for a waveform, and report it with the model and config",
            ),
        };
        write!(f, "{r}")
    }
}

impl std::error::Error for SimError {}

impl From<std::io::Error> for SimError {
    fn from(e: std::io::Error) -> Self {
        SimError::Io(e)
    }
}

/// Verilator's version line, or `None` when it is not installed.
pub fn version() -> Option<String> {
    let out = Command::new("verilator").arg("--version").output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// What to verilate.
#[derive(Debug, Clone)]
pub struct Model {
    /// Top module name.
    pub top: String,
    /// Verilog sources in dependency order.
    pub sources: Vec<PathBuf>,
    /// Include directories.
    pub include_dirs: Vec<PathBuf>,
    /// C++ harness (its `main` drives the model built with `--prefix Vtb`).
    pub harness: PathBuf,
    /// Top-level parameter overrides (`-GNAME=VALUE`).
    pub params: Vec<(String, String)>,
    /// Build with FST waveform support (`+trace=FILE` then writes one).
    pub trace: bool,
    /// Preprocessor defines (`NAME` or `NAME=VALUE`).
    pub defines: Vec<String>,
}

impl Model {
    fn key(&self, version: &str) -> std::io::Result<String> {
        let mut text = format!("{version}\n{}\n", self.top);
        for p in self.sources.iter().chain([&self.harness]) {
            text.push_str(&std::fs::read_to_string(p)?);
        }
        for (k, v) in &self.params {
            text.push_str(&format!("-G{k}={v}\n"));
        }
        if self.trace {
            text.push_str("--trace-fst\n");
        }
        for d in &self.defines {
            text.push_str(&format!("+define+{d}\n"));
        }
        Ok(format!("{:016x}", fnv1a64(text.as_bytes())))
    }

    /// Build (or reuse) the model under `cache`; returns the path of the executable.
    pub fn build(&self, cache: &Path) -> Result<PathBuf, SimError> {
        let version = version().ok_or(SimError::Missing)?;
        let dir = cache.join(format!("{}-{}", self.top, self.key(&version)?));
        let exe = dir.join("Vtb");
        if exe.is_file() {
            if verified(&exe) {
                return Ok(exe);
            }
            eprintln!(
                "hwgen: cache: {} does not match the hash recorded when it was built (truncated or modified); rebuilding it",
                exe.display()
            );
            std::fs::remove_dir_all(&dir)
                .map_err(|e| SimError::cache(&dir, "remove a damaged cached model", e))?;
        }
        std::fs::create_dir_all(cache)
            .map_err(|e| SimError::cache(cache, "create the cache directory", e))?;
        // Build in a private directory and rename it into place, so concurrent test
        // processes never see a half-built model.
        let stage = tempfile::Builder::new()
            .prefix(".build-")
            .tempdir_in(cache)
            .map_err(|e| SimError::cache(cache, "create a build directory in the cache", e))?;
        let mut cmd = Command::new("verilator");
        cmd.args([
            "--cc",
            "--exe",
            "--build",
            "-j",
            "2",
            "-O3",
            "--x-assign",
            "fast",
            "--x-initial",
            "fast",
            "--prefix",
            "Vtb",
            "-o",
            "Vtb",
            "-Wno-fatal",
            "-Wno-lint",
            "-Wno-style",
            "--top-module",
        ])
        .arg(&self.top)
        .arg("--Mdir")
        .arg(stage.path());
        for d in &self.include_dirs {
            cmd.arg(format!("-I{}", d.display()));
        }
        for (k, v) in &self.params {
            cmd.arg(format!("-G{k}={v}"));
        }
        if self.trace {
            cmd.arg("--trace-fst");
        }
        for d in &self.defines {
            cmd.arg(format!("+define+{d}"));
        }
        cmd.args(&self.sources).arg(&self.harness);
        let out = cmd.output()?;
        if !out.status.success() {
            return Err(SimError::Failed {
                what: format!("verilating {}", self.top),
                log: format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ),
            });
        }
        let built_exe = stage.path().join("Vtb");
        let bytes = std::fs::read(&built_exe)
            .map_err(|e| SimError::cache(&built_exe, "read the built model", e))?;
        std::fs::write(
            stage.path().join(HASH_FILE),
            format!("{:016x}\n", fnv1a64(&bytes)),
        )
        .map_err(|e| SimError::cache(stage.path(), "record the model's hash", e))?;
        let built = stage.keep();
        match std::fs::rename(&built, &dir) {
            Ok(()) => {}
            // Another process finished the same model first; use theirs.
            Err(_) if exe.is_file() => {
                let _ = std::fs::remove_dir_all(&built);
            }
            Err(e) => return Err(e.into()),
        }
        Ok(exe)
    }
}

/// The file beside a cached executable that records its FNV-1a hash.
const HASH_FILE: &str = "Vtb.fnv1a64";

/// True when a cached executable still has the hash recorded when it was built.
fn verified(exe: &Path) -> bool {
    let recorded = exe.with_file_name(HASH_FILE);
    match (std::fs::read_to_string(recorded), std::fs::read(exe)) {
        (Ok(h), Ok(bytes)) => h.trim() == format!("{:016x}", fnv1a64(&bytes)),
        _ => false,
    }
}

/// Run a built model with plusargs; returns stdout, or the failure with its output.
pub fn run(exe: &Path, plusargs: &[String]) -> Result<String, SimError> {
    let out = Command::new(exe)
        .args(plusargs.iter().filter(|a| !a.is_empty()))
        .output()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() || text.contains("ERROR") {
        return Err(SimError::Failed {
            what: format!("simulation {}", exe.display()),
            log: text,
        });
    }
    Ok(text)
}
