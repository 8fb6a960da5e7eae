//! Generated files are built in memory as a map of relative path → contents, then written
//! to disk in one step: staged in a temporary directory beside the target and renamed into
//! place, so an error never leaves a half-written output behind.

use indexmap::IndexMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Clone)]
pub struct FileMap {
    files: IndexMap<String, String>,
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

    pub fn get(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Write every file below `dir`. Each top-level entry (a file, or a directory such as
    /// `rtl/`) is staged completely and then renamed over the old one.
    pub fn write_atomic(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)?;
        let stage = tempfile::Builder::new()
            .prefix(".hwgen-stage-")
            .tempdir_in(dir)?;
        let mut tops: Vec<String> = Vec::new();
        for (path, contents) in &self.files {
            let target = stage.path().join(path);
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::write(&target, contents)?;
            let top = path.split('/').next().unwrap_or(path).to_string();
            if !tops.contains(&top) {
                tops.push(top);
            }
        }
        for top in &tops {
            let from = stage.path().join(top);
            let to = dir.join(top);
            if to.is_dir() {
                let old: PathBuf = stage.path().join(format!(".old-{top}"));
                fs::rename(&to, &old)?;
                fs::rename(&from, &to)?;
                fs::remove_dir_all(&old)?;
            } else {
                fs::rename(&from, &to)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
