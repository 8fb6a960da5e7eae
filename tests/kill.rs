//! `kill -9` at any moment leaves an output directory either the old complete output or the
//! new complete one, and the next run removes what the killed run staged (issue 10).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn hwgen() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hwgen"))
}

/// Every file below `dir`, by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.map(Result::unwrap) {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Names beside `dest` that a run staged.
fn staged(dest: &Path) -> Vec<String> {
    let name = dest.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(dest.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!(".{name}.hwgen-stage-")))
        .collect()
}

/// A small xorshift generator: the kill points are reproducible.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Run `old` into the destination, then start `new` and kill it after a random delay (up
/// to a little more than a whole run takes), `rounds` times; after each kill the
/// destination must equal the old or the new output exactly, and after the next complete
/// run nothing staged may be left.
fn kill_loop(old: &[&str], new: &[&str], rounds: u32, seed: u64) {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("out");
    let run = |args: &[&str]| {
        let out = hwgen().args(args).arg("-o").arg(&dest).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(new);
    let want_new = tree(&dest);
    let t0 = Instant::now();
    run(old);
    let full = t0.elapsed().as_micros() as u64;
    let want_old = tree(&dest);
    assert_ne!(want_old, want_new);
    let mut rng = Rng(seed);
    let (mut olds, mut news) = (0, 0);
    for _ in 0..rounds {
        let mut child = hwgen().args(new).arg("-o").arg(&dest).spawn().unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(full * 5 / 4)));
        let _ = child.kill(); // SIGKILL
        child.wait().unwrap();
        let got = tree(&dest);
        if got == want_old {
            olds += 1;
        } else if got == want_new {
            news += 1;
        } else {
            panic!(
                "after kill -9 the destination is neither output ({} files)",
                got.len()
            );
        }
        run(old);
        assert_eq!(tree(&dest), want_old);
        assert!(staged(&dest).is_empty(), "left behind: {:?}", staged(&dest));
    }
    // How often each outcome occurred (both usually do; the test does not require it).
    eprintln!("{rounds} kills: {olds} left the old output, {news} the new one");
}

#[test]
fn killed_emit_leaves_old_or_new_output() {
    kill_loop(
        &["emit", "--config", "configs/8x8_int8.toml"],
        &["emit", "--config", "configs/16x16_int8.toml"],
        25,
        7,
    );
}

#[test]
fn killed_compile_leaves_old_or_new_output() {
    kill_loop(
        &[
            "compile",
            "--config",
            "configs/8x8_int8.toml",
            "--model",
            "rtl-tests/cases/avgpool.toml",
        ],
        &[
            "compile",
            "--config",
            "configs/8x8_int8.toml",
            "--model",
            "rtl-tests/cases/conv_relu.toml",
        ],
        25,
        11,
    );
}

/// A staging directory of a process that no longer runs is removed by the next run; one of
/// a running process is not.
#[test]
fn next_run_removes_dead_staging_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("out");
    let dead = tmp.path().join(".out.hwgen-stage-4000000000-abc");
    let alive = tmp
        .path()
        .join(format!(".out.hwgen-stage-{}-abc", std::process::id()));
    std::fs::create_dir_all(dead.join("rtl")).unwrap();
    std::fs::create_dir_all(&alive).unwrap();
    let out = hwgen()
        .args(["emit", "--config", "configs/8x8_int8.toml", "-o"])
        .arg(&dest)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!dead.exists() && alive.exists());
}
