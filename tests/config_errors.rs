//! Every bad parameter file gets a message that names the file, the key, line and column,
//! the value, the rule and a fix. The messages are snapshot-tested like RTL.

use std::path::Path;

#[test]
fn bad_configs() {
    insta::glob!("bad_configs/*.toml", |path| {
        let name = path.file_name().unwrap().to_string_lossy();
        let rel = Path::new("tests/bad_configs").join(&*name);
        let err = hwgen::config::load(&rel).expect_err("a bad config must be refused");
        insta::assert_snapshot!(err.to_string());
    });
}

#[test]
fn missing_file() {
    let err = hwgen::config::load(Path::new("configs/no_such_design.toml")).unwrap_err();
    insta::assert_snapshot!(err.to_string(), @r"
    error: configs/no_such_design.toml
      rule: cannot read the parameter file: No such file or directory (os error 2)
      fix:  check the path; the shipped parameter files are in configs/
    ");
}

/// Regression (issue 10): a file that is not UTF-8 said "stream did not contain valid
/// UTF-8" with the fix for a missing file.
#[test]
fn not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.toml");
    std::fs::write(&path, b"[array]\nrows = 8 # caf\xe9\n").unwrap();
    let err = hwgen::config::load(&path).unwrap_err().to_string();
    assert!(err.contains("byte 22 (line 2, column 15) is not"), "{err}");
    assert!(err.contains("fix:  save the file as UTF-8"), "{err}");
    std::fs::write(&path, b"[input]\nshape = [2, 2, 2] # \xff\n").unwrap();
    let err = hwgen::model::load(&path).unwrap_err().to_string();
    assert!(err.contains("byte 28 (line 2, column 21) is not"), "{err}");
    assert!(err.contains("fix:  save the file as UTF-8"), "{err}");
}

#[test]
fn every_problem_has_a_location_rule_and_fix() {
    for entry in std::fs::read_dir("tests/bad_configs").unwrap() {
        let path = entry.unwrap().path();
        match hwgen::config::load(&path).unwrap_err() {
            hwgen::config::ConfigError::Invalid { file, problems } => {
                assert_eq!(file, path.display().to_string());
                for p in problems {
                    assert!(!p.key.is_empty(), "{}: empty key", path.display());
                    assert!(
                        !p.rule.is_empty() && !p.fix.is_empty(),
                        "{}: {p:?}",
                        path.display()
                    );
                    assert!(
                        p.location.is_some(),
                        "{}: no line/column for {}",
                        path.display(),
                        p.key
                    );
                }
            }
            other => panic!("{}: {other}", path.display()),
        }
    }
}
