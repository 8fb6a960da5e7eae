//! Fuzzing the error promise on command lines (issue 41): every subcommand with its flags
//! given good, bad and misplaced values (missing, empty, binary and directory files; numbers
//! that are negative, huge, not numbers or outside their range; unknown, repeated and
//! missing flags; outputs that are FIFOs, directories or under a missing folder). Every
//! case must end in success or in a refusal (exit 1, or 2 for what clap refuses) whose
//! message has an `error:`, a `rule:` and a `fix:` line and no Rust debug text; a panic, a
//! signal or a hang fails. A refusal writes no output, and a FIFO given as an output stays
//! a FIFO.
//!
//! Every command runs in a temporary directory, with the repository's configs and models
//! named by absolute paths, so that nothing it writes (a default output directory, an
//! output under a relative path) lands in the repository.
//!
//! Commands that would verilate, synthesize or search (`sim`, `synth`, `dse`, `run` without
//! `--interp`) always carry a value refused before that work starts, so the suite's cases
//! stay cheap. `HWGEN_FUZZ_N` sets the cases (default 120); `scripts/fuzz.sh N` runs N.

mod common;

use common::fuzz::{cases, run_in, Counts, Rng};
use common::repo;
use std::ffi::OsString;
use std::path::Path;

/// What a flag's value is drawn from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pool {
    Config,
    Model,
    Onnx,
    Npy,
    Out,
    Num,
    Budget,
    Param,
    Sizes,
    Target,
    /// A flag without a value.
    Flag,
}

/// A subcommand: its required and optional flags, and whether running it for real is
/// expensive (it then always carries an early refusal).
struct Spec {
    name: &'static str,
    required: &'static [(&'static str, Pool)],
    optional: &'static [(&'static str, Pool)],
    expensive: bool,
}

const SPECS: &[Spec] = &[
    Spec {
        name: "emit",
        required: &[("--config", Pool::Config)],
        optional: &[("--out", Pool::Out)],
        expensive: false,
    },
    Spec {
        name: "check",
        required: &[("--config", Pool::Config)],
        optional: &[],
        expensive: false,
    },
    Spec {
        name: "isa",
        required: &[],
        optional: &[("--config", Pool::Config)],
        expensive: false,
    },
    Spec {
        name: "import",
        required: &[("", Pool::Onnx)],
        optional: &[("-o", Pool::Out)],
        expensive: false,
    },
    Spec {
        name: "compile",
        required: &[("--config", Pool::Config), ("--model", Pool::Model)],
        optional: &[
            ("-o", Pool::Out),
            ("--estimate", Pool::Flag),
            ("--json", Pool::Flag),
        ],
        expensive: false,
    },
    Spec {
        name: "run",
        required: &[
            ("-c", Pool::Config),
            ("-m", Pool::Onnx),
            ("-i", Pool::Npy),
            ("-o", Pool::Out),
            ("--interp", Pool::Flag),
        ],
        optional: &[("--json", Pool::Flag)],
        expensive: false,
    },
    Spec {
        name: "sim",
        required: &[("-c", Pool::Config), ("-m", Pool::Model)],
        optional: &[
            ("--stall-pct", Pool::Num),
            ("--seed", Pool::Num),
            ("--max-cycles", Pool::Num),
            ("--json", Pool::Flag),
        ],
        expensive: true,
    },
    Spec {
        name: "synth",
        required: &[("-c", Pool::Config)],
        optional: &[
            ("--target", Pool::Target),
            ("--param", Pool::Param),
            ("--json", Pool::Flag),
        ],
        expensive: true,
    },
    Spec {
        name: "dse",
        required: &[
            ("-m", Pool::Model),
            ("-c", Pool::Config),
            ("--budget", Pool::Budget),
            ("--clock-mhz", Pool::Num),
            ("-o", Pool::Out),
        ],
        optional: &[
            ("--iterations", Pool::Num),
            ("--sizes", Pool::Sizes),
            ("--max-h", Pool::Num),
            ("--max-units", Pool::Num),
            ("--threads", Pool::Num),
            ("--seed", Pool::Num),
        ],
        expensive: true,
    },
];

/// Files of every kind a path may name, made once per run in `dir`.
struct Files {
    empty: OsString,
    binary: OsString,
    fifo: OsString,
    text: OsString,
    dir: OsString,
    /// The repository's root, which the good paths are under.
    repo: std::path::PathBuf,
}

impl Files {
    fn new(dir: &Path) -> Files {
        let p = |n: &str| dir.join(n).into_os_string();
        std::fs::write(dir.join("empty.toml"), "").unwrap();
        let bytes: Vec<u8> = (0..512u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        std::fs::write(dir.join("binary.bin"), bytes).unwrap();
        std::fs::write(dir.join("text.txt"), "not a model\n").unwrap();
        std::fs::write(dir.join("readme.md"), "# Not TOML\n\nSome *text*.\n").unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo");
        Files {
            empty: p("empty.toml"),
            binary: p("binary.bin"),
            fifo: fifo.into_os_string(),
            text: p("text.txt"),
            dir: p("sub"),
            repo: repo(),
        }
    }

    /// Paths any file argument may get wrong: missing, empty, binary, not its format, a
    /// directory, a FIFO, under a missing folder, empty.
    fn bad(&self, rng: &mut Rng) -> OsString {
        let v = [
            "no/such/file.toml".into(),
            self.empty.clone(),
            self.binary.clone(),
            self.text.clone(),
            self.dir.clone(),
            self.fifo.clone(),
            "readme.md".into(),
            "".into(),
        ];
        rng.pick(&v).clone()
    }
}

/// Numbers at and past the edges of every numeric flag, and things that are not numbers.
const NUMS: &[&str] = &[
    "0",
    "1",
    "-1",
    "99",
    "100",
    "200",
    "4294967296",
    "18446744073709551616",
    "1e3",
    "NaN",
    "abc",
    "",
    "0x10",
    " 5",
];
/// Values always refused before any work (by clap's parsers or the argument checks).
const EARLY_NUMS: &[&str] = &["-1", "abc", "", "NaN", "18446744073709551616", "1e3"];

fn value(pool: Pool, files: &Files, out: &Path, rng: &mut Rng, good: bool) -> Option<OsString> {
    let pick = |rng: &mut Rng, v: &[&str]| -> OsString { (*rng.pick(v)).into() };
    let in_repo =
        |rng: &mut Rng, v: &[&str]| -> OsString { files.repo.join(rng.pick(v)).into_os_string() };
    Some(match pool {
        Pool::Flag => return None,
        // (An output never gets one of the files above: it could be written.)
        Pool::Out => match rng.below(4) {
            0 => files.fifo.clone(),
            1 => files.dir.clone(),
            2 => "/proc/hwgen-no-such-folder/out".into(),
            _ => out.as_os_str().to_owned(),
        },
        _ if !good && rng.below(2) == 0 => files.bad(rng),
        Pool::Config => in_repo(
            rng,
            &[
                "configs/8x8_int8.toml",
                "rtl-tests/configs/8x8_int8_rows.toml",
                "configs/codec_avatar_small.toml",
                "configs/16x16_bf16.toml",
            ],
        ),
        Pool::Model => in_repo(
            rng,
            &[
                "models/sample_cnn.toml",
                "rtl-tests/cases/attention.toml",
                "rtl-tests/cases/conv_relu.toml",
            ],
        ),
        // No ONNX file ships in the repository: every one given is one of the bad kinds,
        // or a model file of the wrong format.
        Pool::Onnx => match rng.below(2) {
            0 => in_repo(rng, &["models/sample_cnn.toml"]),
            _ => files.bad(rng),
        },
        Pool::Npy => files.bad(rng),
        Pool::Num if good => pick(rng, &["1", "10", "200"]),
        Pool::Num => pick(rng, NUMS),
        Pool::Budget => pick(
            rng,
            &[
                "dsp=100,bram=100,bw=10",
                "dsp=0,bram=1,bw=1",
                "dsp=-1",
                "bw=NaN",
                "x=1",
                "",
                "dsp=1e400,bram=2,bw=3",
                "dsp=100,dsp=200,bram=1,bw=1",
            ],
        ),
        Pool::Param => pick(rng, &["CPF=0", "NOPE=4", "CPF=4", "KPF=abc", "=3", "CPF"]),
        Pool::Sizes => pick(rng, &["8,16", "3,5", "0", "128", "", "8,,16"]),
        Pool::Target => pick(rng, &["generic", "xilinx", "ice40", "asic", ""]),
    })
}

/// One command line for `spec`: its flags with values (some left out, repeated, moved or
/// unknown); for an expensive command, one early refusal in it.
fn command(spec: &Spec, files: &Files, out: &Path, rng: &mut Rng) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![spec.name.into()];
    let push = |args: &mut Vec<OsString>, flag: &str, v: Option<OsString>| {
        if !flag.is_empty() {
            args.push(flag.into());
        }
        args.extend(v);
    };
    let mut flags: Vec<(&str, Pool)> = spec.required.to_vec();
    flags.extend(spec.optional.iter().filter(|_| rng.below(2) == 0));
    for &(flag, pool) in &flags {
        match rng.below(12) {
            // Left out.
            0 => {}
            // Given twice.
            1 => {
                for _ in 0..2 {
                    let v = value(pool, files, out, rng, false);
                    push(&mut args, flag, v);
                }
            }
            // A value without its flag.
            2 => args.extend(value(pool, files, out, rng, false)),
            k => {
                let v = value(pool, files, out, rng, k > 7);
                push(&mut args, flag, v);
            }
        }
    }
    if rng.below(10) == 0 {
        args.push((*rng.pick(&["--bogus", "-z", "--", "--config="])).into());
    }
    if spec.expensive {
        // Refused before the work starts: a config that does not load, or a number clap
        // refuses.
        match rng.below(2) {
            0 => {
                args.push("--config".into());
                args.push(files.bad(rng));
            }
            _ => {
                let flag = spec
                    .optional
                    .iter()
                    .chain(spec.required)
                    .find(|(_, p)| *p == Pool::Num);
                match flag {
                    Some((f, _)) => {
                        args.push((*f).into());
                        args.push((*rng.pick(EARLY_NUMS)).into());
                    }
                    None => args.push("--bogus".into()),
                }
            }
        }
    }
    args
}

#[test]
fn fuzz_command_lines() {
    let n = cases();
    let tmp = tempfile::tempdir().unwrap();
    let files = Files::new(tmp.path());
    let mut rng = Rng::new(0xC11);
    let mut counts = Counts::default();
    let log = tmp.path().join("command.txt");
    for i in 0..n {
        let spec = rng.pick(SPECS);
        let out = tmp.path().join(format!("out{i}"));
        let args = command(spec, &files, &out, &mut rng);
        let shown: Vec<String> = args
            .iter()
            .map(|a| format!("{:?}", a.to_string_lossy()))
            .collect();
        std::fs::write(&log, shown.join(" ")).unwrap();
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let accepted = counts.add(
            &format!("hwgen {}", shown.join(" ")),
            &log,
            run_in(&refs, Some(tmp.path())),
        );
        if !accepted && out.exists() {
            counts.fail(&log, format!("case {i}: a refusal left {}", out.display()));
        }
        use std::os::unix::fs::FileTypeExt;
        let fifo = std::fs::symlink_metadata(&files.fifo).map(|m| m.file_type().is_fifo());
        if !matches!(fifo, Ok(true)) {
            counts.fail(
                &log,
                format!("case {i}: the FIFO output is no longer a FIFO"),
            );
            break;
        }
    }
    counts.report("command lines", n);
}
