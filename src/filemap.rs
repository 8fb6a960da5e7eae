//! Generated files are built in memory as a map of relative path → contents, then written
//! to disk in one step: the whole output directory is staged beside the destination and
//! exchanged with it atomically, so an error or a kill at any point leaves the destination
//! either the old complete output or the new one, never a mixture. Staging directories
//! left by a killed run are removed by the next run into the same destination.

use indexmap::IndexMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Clone)]
pub struct FileMap {
    files: IndexMap<String, String>,
    /// Files that are not text (`.npy` tensors).
    binary: IndexMap<String, Vec<u8>>,
}

impl FileMap {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a file; a second file with the same path is a generator bug.
    pub fn add(&mut self, path: impl Into<String>, contents: impl Into<String>) {
        let path = path.into();
        let prev = self.files.insert(path.clone(), contents.into());
        assert!(prev.is_none(), "generated two files named {path}");
    }

    /// Add a binary file.
    pub fn add_bytes(&mut self, path: impl Into<String>, contents: Vec<u8>) {
        let path = path.into();
        let prev = self.binary.insert(path.clone(), contents);
        assert!(
            prev.is_none() && !self.files.contains_key(&path),
            "generated two files named {path}"
        );
    }

    pub fn get(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files
            .keys()
            .chain(self.binary.keys())
            .map(String::as_str)
    }

    /// Replace directory `dir` with exactly these files, atomically. An existing `dir` is
    /// replaced only when every entry in it is one this map writes (an earlier output of
    /// the same command); anything else is refused, so no user file is ever deleted.
    pub fn write_atomic(&self, dir: &Path) -> Result<(), OutputError> {
        let err = |rule: String, fix: &str| OutputError {
            path: dir.to_path_buf(),
            what: "output directory",
            rule,
            fix: fix.to_string(),
        };
        let io = |what: &str, e: io::Error| {
            err(
                format!("cannot {what}: {e}"),
                "check that the parent directory exists, is writable and has free space",
            )
        };
        let name = dir
            .file_name()
            .ok_or_else(|| {
                err(
                    "the output path has no directory name".into(),
                    "give a directory such as out/design",
                )
            })?
            .to_string_lossy()
            .into_owned();
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(|e| io("create the parent directory", e))?;
        remove_leftovers(&parent, &name);
        if let Ok(m) = fs::symlink_metadata(dir) {
            if !m.is_dir() {
                return Err(err(
                    format!(
                        "the output path exists and is {}, not a directory this command writes",
                        kind_of(&m)
                    ),
                    "give another --out, or remove it",
                ));
            }
            let tops: Vec<&str> = self
                .paths()
                .map(|p| p.split('/').next().unwrap_or(p))
                .collect();
            let foreign: Vec<String> = fs::read_dir(dir)
                .map_err(|e| io("read the existing output directory", e))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !tops.contains(&n.as_str()))
                .collect();
            if !foreign.is_empty() {
                return Err(err(
                    format!(
                        "the output directory is replaced as a whole, and it holds entries this command does not write: {}",
                        foreign.join(", ")
                    ),
                    "give a new or empty --out directory, or move those entries elsewhere",
                ));
            }
        }
        let stage = tempfile::Builder::new()
            .prefix(&format!(".{name}{STAGE}{}-", std::process::id()))
            .tempdir_in(&parent)
            .map_err(|e| io("create a staging directory beside the output", e))?;
        let text = self.files.iter().map(|(p, c)| (p, c.as_bytes()));
        for (path, contents) in text.chain(self.binary.iter().map(|(p, c)| (p, c.as_slice()))) {
            let target = stage.path().join(path);
            if let Some(p) = target.parent() {
                fs::create_dir_all(p).map_err(|e| io("stage the output", e))?;
            }
            fs::write(&target, contents).map_err(|e| io("stage the output", e))?;
        }
        let stage = stage.keep();
        // A destination created meanwhile (by another thread writing the same output) is
        // exchanged like an old one.
        let swapped = if dir.exists() {
            exchange(&stage, dir)
        } else {
            fs::rename(&stage, dir).or_else(|_| exchange(&stage, dir))
        };
        if let Err(e) = swapped {
            let _ = fs::remove_dir_all(&stage);
            return Err(io("move the output into place", e));
        }
        // After an exchange the staging path holds the old output.
        let _ = fs::remove_dir_all(&stage);
        Ok(())
    }
}

/// The infix of the staging directories beside an output: `.NAME.hwgen-stage-PID-XXXXXX`,
/// with the process that owns it.
const STAGE: &str = ".hwgen-stage-";

/// Remove the staging directories that processes which no longer run (killed runs) left
/// beside output `name` in `parent`; those of running processes are in use.
fn remove_leftovers(parent: &Path, name: &str) {
    remove_dead(parent, &format!(".{name}{STAGE}"));
}

/// Remove the entries of `parent` named `PREFIX<pid>-...` whose process no longer runs: the
/// private directories of killed runs (output staging, simulation runs).
pub fn remove_dead(parent: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for e in entries.filter_map(|e| e.ok()) {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(prefix) else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_none_or(|p| !running(p)) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// Whether process `pid` is running (Linux: /proc; elsewhere every process is assumed to
/// run, so leftovers are removed only on Linux).
fn running(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}

/// Swap two directories in one step (Linux: renameat2 with RENAME_EXCHANGE).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(io::Error::from)
}

/// Elsewhere: move the old directory into the staging path's place, then the new one in.
/// A kill between the two renames leaves the old output under the staging name, which the
/// next run removes.
#[cfg(not(target_os = "linux"))]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    let old = PathBuf::from(format!("{}-old", a.display()));
    fs::rename(b, &old)?;
    fs::rename(a, b)?;
    fs::rename(&old, a)
}

/// An output (directory or file) that cannot be written: the path as given, the rule and
/// the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputError {
    pub path: PathBuf,
    /// "output directory" or "output file".
    pub what: &'static str,
    pub rule: String,
    pub fix: String,
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = format!("{} {}", self.what, self.path.display());
        write!(
            f,
            "{}",
            crate::refusal::Refusal::new(what, &self.rule, &self.fix)
        )
    }
}

impl std::error::Error for OutputError {}

/// What a file system entry is, for messages.
fn kind_of(m: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if m.file_type().is_symlink() {
        "a symbolic link"
    } else if m.is_dir() {
        "a directory"
    } else {
        "a regular file"
    }
}

/// Read an input file whole, refusing first (by its metadata, before reading) what is not
/// a regular file (a device such as /dev/zero, a FIFO, a directory) and a file of more
/// than `max` bytes: the rule, naming the file as given.
pub fn read_input(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let m = fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !m.is_file() {
        return Err(format!(
            "{} is {}: an input is a regular file",
            path.display(),
            kind_of(&m)
        ));
    }
    if m.len() > max {
        return Err(format!(
            "{} holds {} bytes, more than the {max} such an input may hold",
            path.display(),
            m.len()
        ));
    }
    fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Write one file so that `path` holds either its old contents or all of `contents`, even
/// if the process is killed: a temporary file beside it (removed on failure), then a rename.
/// A `path` that exists and is not a regular file (a directory, a device such as
/// /dev/null, a FIFO, a symbolic link) is refused before anything is written, as is a
/// missing parent directory (named as given).
pub fn write_file_atomic(path: &Path, contents: &str) -> Result<(), OutputError> {
    write_bytes_atomic(path, contents.as_bytes())
}

/// As [`write_file_atomic`], for bytes.
pub fn write_bytes_atomic(path: &Path, contents: &[u8]) -> Result<(), OutputError> {
    let err = |rule: String, fix: &str| OutputError {
        path: path.to_path_buf(),
        what: "output file",
        rule,
        fix: fix.to_string(),
    };
    if let Ok(m) = fs::symlink_metadata(path) {
        if !m.is_file() {
            return Err(err(
                format!(
                    "the output exists and is {}: hwgen replaces only regular files",
                    kind_of(&m)
                ),
                "name a new file or an existing regular file",
            ));
        }
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(err(
            format!("its folder {} does not exist", dir.display()),
            "create the folder first, or name a file in an existing one",
        ));
    }
    write_staged(path, dir, contents).map_err(|e| {
        err(
            format!("cannot write it: {e}"),
            "check that its folder is writable and has free space",
        )
    })
}

/// The temporary file beside `path` in `dir`, then the rename.
fn write_staged(path: &Path, dir: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut tmp = tempfile::Builder::new()
        .prefix(".hwgen-write-")
        .tempfile_in(dir)?;
    // The temporary file is private (0600); the file written is an ordinary one: the mode
    // of the file it replaces, or rw-r--r--.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file written through a private temporary file is an ordinary file: rw-r--r--
    /// when new, the old file's mode when it replaces one.
    #[cfg(unix)]
    #[test]
    fn a_file_written_keeps_an_ordinary_mode() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("design.toml");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        write_file_atomic(&f, "a").unwrap();
        assert_eq!(mode(&f), 0o644);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file_atomic(&f, "b").unwrap();
        assert_eq!(
            (mode(&f), std::fs::read_to_string(&f).unwrap().as_str()),
            (0o640, "b")
        );
    }

    #[test]
    fn writes_and_replaces() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let mut a = FileMap::new();
        a.add("rtl/a.v", "one");
        a.add("rtl/b.v", "two");
        a.add("top.txt", "x");
        a.write_atomic(&out).unwrap();
        let mut b = FileMap::new();
        b.add("rtl/a.v", "three");
        b.add("top.txt", "y");
        b.write_atomic(&out).unwrap();
        assert_eq!(fs::read_to_string(out.join("rtl/a.v")).unwrap(), "three");
        // The whole rtl/ directory was replaced: stale files do not survive.
        assert!(!out.join("rtl/b.v").exists());
        assert_eq!(fs::read_to_string(out.join("top.txt")).unwrap(), "y");
        // No staging directory is left behind.
        let leftovers: Vec<_> = fs::read_dir(&out)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".hwgen"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    #[should_panic(expected = "generated two files")]
    fn refuses_duplicates() {
        let mut a = FileMap::new();
        a.add("x", "1");
        a.add("x", "2");
    }

    /// An output that exists and is not a regular file (a FIFO, a directory; a device such
    /// as /dev/null likewise) is refused before anything is written and left as it was; a
    /// missing folder is named as given.
    #[cfg(unix)]
    #[test]
    fn refuses_to_replace_what_is_not_a_regular_file() {
        use std::os::unix::fs::FileTypeExt;
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("pipe");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let e = write_bytes_atomic(&fifo, b"x").unwrap_err();
        assert!(
            e.to_string()
                .contains("is a FIFO: hwgen replaces only regular files"),
            "{e}"
        );
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        let e = write_file_atomic(tmp.path(), "x").unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let mut m = FileMap::new();
        m.add("a", "1");
        let e = m.write_atomic(&fifo).unwrap_err();
        assert!(e.to_string().contains("is a FIFO, not a directory"), "{e}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        let missing = tmp.path().join("no/such/out.npy");
        let e = write_file_atomic(&missing, "x").unwrap_err();
        let folder = tmp.path().join("no/such");
        assert!(
            e.to_string()
                .contains(&format!("its folder {} does not exist", folder.display())),
            "{e}"
        );
        // Nothing but the FIFO is left in the folder.
        let names: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["pipe".to_string()]);
    }
}
