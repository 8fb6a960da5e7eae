//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod fuzz;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where verilated models are cached between test runs.
pub fn sim_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verilator-cache")
}

/// True when `tool --version` runs. When it does not: under the project's test command
/// (HWGEN_REQUIRE_SIMULATORS=1) that is a failure; in a plain `cargo test` the test says
/// that it skipped.
pub fn have_tool(tool: &str, test: &str) -> bool {
    let ok = std::process::Command::new(tool)
        .arg(if tool == "iverilog" {
            "-V"
        } else {
            "--version"
        })
        .output()
        .map(|o| o.status.success() || tool == "iverilog")
        .unwrap_or(false);
    if ok {
        return true;
    }
    if std::env::var(hwgen::sim::verilator::REQUIRE_ENV).as_deref() == Ok("1") {
        panic!("{test}: {tool} is required (HWGEN_REQUIRE_SIMULATORS=1) but was not found; run scripts/setup.sh");
    }
    eprintln!("skipped {test}: {tool} not found (run scripts/setup.sh to install it)");
    false
}

/// The RTL of the 8x8 config (async active-low reset), emitted once per test process.
pub fn module_rtl() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("module-rtl-{}", std::process::id()));
        let design = hwgen::config::load(&repo().join("configs/8x8_int8.toml")).unwrap();
        hwgen::rtl::emit(&design).write_atomic(&dir).unwrap();
        dir
    })
}

pub fn rtl_file(name: &str) -> PathBuf {
    module_rtl().join("rtl").join(name)
}

/// The RTL of the config with packed multipliers (`[array] pack_macs`), emitted once per
/// test process.
pub fn packed_rtl_file(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("packed-rtl-{}", std::process::id()));
        let config = repo().join("configs/16x16_int8_packed.toml");
        let design = hwgen::config::load(&config).unwrap();
        hwgen::rtl::emit(&design).write_atomic(&dir).unwrap();
        dir
    })
    .join("rtl")
    .join(name)
}

pub fn testbench(name: &str) -> PathBuf {
    repo().join("rtl-tests/tb").join(name)
}

/// xorshift64*: a small deterministic generator for test stimulus.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in lo..=hi.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo + 1) as u64)) as i64
    }
}

/// Pack `values` (two's complement, `width` bits each, element 0 least significant) into a
/// `$readmemh` line.
pub fn pack_hex(values: &[i64], width: u32) -> String {
    let total = values.len() as u32 * width;
    let mut bits = vec![false; total as usize];
    for (i, v) in values.iter().enumerate() {
        for b in 0..width {
            bits[i * width as usize + b as usize] = (v >> b) & 1 == 1;
        }
    }
    let digits = total.div_ceil(4);
    (0..digits)
        .rev()
        .map(|d| {
            let mut nib = 0;
            for b in 0..4 {
                let i = (d * 4 + b) as usize;
                if i < bits.len() && bits[i] {
                    nib |= 1 << b;
                }
            }
            char::from_digit(nib, 16).unwrap()
        })
        .collect()
}

/// Split a hex string into `count` fields of `width` bits, field 0 least significant,
/// each as an unsigned value.
pub fn unpack_hex(hex: &str, count: usize, width: u32) -> Vec<u64> {
    let bits: Vec<bool> = hex
        .trim()
        .chars()
        .rev()
        .flat_map(|c| {
            let n = c
                .to_digit(16)
                .unwrap_or_else(|| panic!("bad hex digit {c:?} in {hex}"));
            (0..4).map(move |b| (n >> b) & 1 == 1)
        })
        .collect();
    (0..count)
        .map(|i| {
            (0..width).fold(0u64, |acc, b| {
                let idx = i * width as usize + b as usize;
                acc | (u64::from(*bits.get(idx).unwrap_or(&false)) << b)
            })
        })
        .collect()
}

/// The whole-accelerator testbench over the 8x8 config's RTL (`module_rtl`), as a model to
/// verilate once per process and reuse.
pub fn top_model() -> hwgen::sim::verilator::Model {
    let mut sources: Vec<PathBuf> = std::fs::read_to_string(module_rtl().join("hwgen.f"))
        .unwrap()
        .lines()
        .filter(|l| l.ends_with(".v"))
        .map(|l| module_rtl().join(l))
        .collect();
    sources.push(testbench("tb_top.v"));
    hwgen::sim::verilator::Model {
        top: "tb".into(),
        sources,
        include_dirs: vec![module_rtl().join("rtl")],
        harness: testbench("sim_main.cpp"),
        params: vec![("LATENCY".into(), "20".into())],
        trace: false,
        defines: vec![],
    }
}

/// The verilated whole-accelerator model of a config, built once per test process (tests of
/// the same config wait for the first to finish verilating) and cached across processes.
pub fn accelerator(design: &hwgen::design::Design) -> PathBuf {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    static BUILT: OnceLock<Mutex<HashMap<u64, Arc<OnceLock<PathBuf>>>>> = OnceLock::new();
    let cell = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(design.hash())
        .or_default()
        .clone();
    cell.get_or_init(|| {
        hwgen::sim::run::build(design, &sim_cache()).unwrap_or_else(|e| panic!("{e}"))
    })
    .clone()
}

/// The contract, on one program: the ISA interpreter leaves exactly the golden model's
/// output region in memory, and so does the RTL in Verilator (under `stall_pct` percent of
/// memory back-pressure). Both comparisons are `hwgen::verify::compare`, keyed on the
/// output's format. `label` names the case in failures. Returns the RTL run.
pub fn golden_interpreter_rtl(
    label: &str,
    design: &hwgen::design::Design,
    model: &hwgen::model::Model,
    program: &hwgen::compiler::Program,
    stall_pct: u32,
    seed: u64,
) -> hwgen::sim::run::SimResult {
    let expected = hwgen::verify::expected(design, model, program);
    let mem = hwgen::verify::interpret(design, program).unwrap_or_else(|e| panic!("{label}: {e}"));
    let c = hwgen::verify::compare(program, &expected, &mem);
    assert!(
        c.matched(),
        "{label}: the interpreter differs from the golden model in {} {}",
        c.differing,
        c.unit
    );
    let golden = hwgen::compiler::passes::encode::read_tensor(&expected, &program.output);
    assert!(
        golden.data.iter().any(|v| *v != golden.data[0]),
        "{label}: the golden output is constant, so the case checks little"
    );
    let exe = accelerator(design);
    let r = hwgen::sim::run::run(design, &exe, program, &expected, stall_pct, seed)
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    assert!(
        r.matched,
        "{label}: the RTL differs from the golden model in {} {}",
        r.comparison.differing, r.comparison.unit
    );
    r
}

/// A one-loop transfer of `count0` rows.
pub fn rows(
    buffer: hwgen::isa::Buffer,
    spad_addr: u64,
    ext_addr: u64,
    count0: u64,
    stride0: u64,
) -> hwgen::isa::Transfer {
    hwgen::isa::Transfer {
        buffer,
        spad_addr,
        ext_addr,
        count0,
        stride0,
        count1: 1,
        ..Default::default()
    }
}

/// The Python with the test-only reference packages: $HWGEN_PYTHON (scripts/test.sh sets
/// it), else python3.
pub fn python() -> String {
    std::env::var("HWGEN_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Whether the reference Python imports `modules`; under scripts/test.sh
/// (HWGEN_REQUIRE_SIMULATORS=1) a missing module is a failure, not a skip.
pub fn have_python_modules(modules: &[&str]) -> bool {
    let ok = std::process::Command::new(python())
        .args(["-c", &format!("import {}", modules.join(", "))])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return true;
    }
    let install = format!("python3 -m pip install {}", modules.join(" "));
    if std::env::var(hwgen::sim::verilator::REQUIRE_ENV).as_deref() == Ok("1") {
        panic!(
            "python with {} is required (scripts/test.sh installs them)",
            modules.join(", ")
        );
    }
    eprintln!("skipped reference tests: {install}");
    false
}

/// Run a reference script from rtl-tests/ref with `args` and `input` on stdin; its stdout.
pub fn run_reference(script: &str, args: &[&str], input: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(python())
        .arg(repo().join("rtl-tests/ref").join(script))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Compile `model_src` (model TOML text) for the config at `config` and run it on the ISA
/// interpreter (every engine): the program, the golden model's memory and the
/// interpreter's, and how their outputs compare.
pub fn interpreted(
    config: &str,
    model_src: &str,
) -> (
    hwgen::compiler::Program,
    hwgen::interp::Memory,
    hwgen::verify::Comparison,
) {
    let design = hwgen::config::load(std::path::Path::new(config)).unwrap();
    interpreted_on(&design, model_src)
}

/// As [`interpreted`], on a Design already loaded.
#[allow(dead_code)]
pub fn interpreted_on(
    design: &hwgen::design::Design,
    model_src: &str,
) -> (
    hwgen::compiler::Program,
    hwgen::interp::Memory,
    hwgen::verify::Comparison,
) {
    interpreted_in(design, model_src, std::path::Path::new("."))
}

/// As [`interpreted_on`], with the model's files (`.npy`) relative to `dir`.
#[allow(dead_code)]
pub fn interpreted_in(
    design: &hwgen::design::Design,
    model_src: &str,
    dir: &std::path::Path,
) -> (
    hwgen::compiler::Program,
    hwgen::interp::Memory,
    hwgen::verify::Comparison,
) {
    let design = design.clone();
    let model =
        hwgen::model::parse_str(model_src, "test.toml", dir).unwrap_or_else(|e| panic!("{e}"));
    let program = hwgen::compiler::compile(&design, &model).unwrap_or_else(|e| panic!("{e}"));
    let expected = hwgen::verify::expected(&design, &model, &program);
    let mem = hwgen::verify::interpret(&design, &program).unwrap_or_else(|e| panic!("{e}"));
    let c = hwgen::verify::compare(&program, &expected, &mem);
    (program, expected, c)
}

/// Writes `dmem.hex` (the data, then the program, where the engine fetches it from) and
/// `prog_base.hex` into `dir` for the whole-accelerator testbench; returns its `+prog` and
/// `+dmem` arguments.
#[allow(dead_code)]
pub fn program_images(
    dir: &std::path::Path,
    data: &hwgen::interp::Memory,
    program: &[hwgen::isa::Instr],
) -> [String; 2] {
    let (image, bases) = data.with_programs(&[program]);
    let text = image.to_hex_lines();
    std::fs::write(dir.join("dmem.hex"), text).unwrap();
    let bases: String = bases.iter().map(|b| format!("{b:x}\n")).collect();
    std::fs::write(dir.join("prog_base.hex"), bases).unwrap();
    [
        format!("+prog={}", dir.join("prog_base.hex").display()),
        format!("+dmem={}", dir.join("dmem.hex").display()),
    ]
}
