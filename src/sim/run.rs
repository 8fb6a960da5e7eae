//! Run a compiled program on the generated RTL in Verilator: emit the RTL into a cache
//! directory named by the Design hash, verilate it once with the whole-accelerator
//! testbench, load the memories, run, and compare the output tensor with the golden model.

use super::stall::Stall;
use super::verilator::{self, Model, SimError};
use crate::compiler::Program;
use crate::design::Design;
use crate::filemap::FileMap;
use crate::interp::Memory;
use crate::rtl::PERF_COUNTER_NAMES;
use crate::verify::{compare, Comparison};
use std::path::{Path, PathBuf};

const TB_TOP: &str = include_str!("../../rtl-tests/tb/tb_top.v");
const SIM_MAIN: &str = include_str!("../../rtl-tests/tb/sim_main.cpp");

/// Words of external memory the testbench models.
/// Bytes of the testbench's memory model: 64 MiB, in beats of the Design's width.
pub const TB_MEM_BYTES: u64 = 64 << 20;

/// Beats of the testbench's memory model by default.
pub fn tb_mem_words(design: &Design) -> u64 {
    TB_MEM_BYTES / u64::from(design.memory.data_width_bits / 8)
}

/// Beats of a memory model that holds `beats`: the default, or the next power of two above
/// it (a larger model, verilated once per size).
pub fn mem_words_for(design: &Design, beats: u64) -> u64 {
    tb_mem_words(design).max(beats.next_power_of_two())
}

#[derive(Debug, Clone)]
pub struct SimResult {
    pub matched: bool,
    /// How the output region compares with the expected one (`verify::compare`).
    pub comparison: Comparison,
    pub cycles: u64,
    /// Engine 0's counters, in `PERF_COUNTER_NAMES` order.
    pub perf: Vec<u64>,
    /// Every engine's counters (`Design::cores` order), each as `perf`.
    pub engines: Vec<Vec<u64>>,
    pub memory: Memory,
}

impl SimResult {
    /// Engine 0's counter `name` (`PERF_COUNTER_NAMES`).
    pub fn counter(&self, name: &str) -> u64 {
        self.engine_counter(0, name)
    }
    /// Engine `e`'s counter `name`.
    pub fn engine_counter(&self, e: usize, name: &str) -> u64 {
        PERF_COUNTER_NAMES
            .iter()
            .position(|n| *n == name)
            .map_or(0, |i| self.engines[e][i])
    }
}

/// Default cache: `$HWGEN_CACHE`, else `$XDG_CACHE_HOME/hwgen`, else `~/.cache/hwgen`.
pub fn default_cache() -> PathBuf {
    if let Ok(d) = std::env::var("HWGEN_CACHE") {
        return PathBuf::from(d);
    }
    if let Ok(d) = std::env::var("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("hwgen");
    }
    std::env::var("HOME")
        .map(|h| PathBuf::from(h).join(".cache/hwgen"))
        .unwrap_or_else(|_| std::env::temp_dir().join("hwgen-cache"))
}

/// Emit the Design's RTL and the testbench under `cache/<design hash>-<RTL hash>/` and
/// verilate (once). The RTL hash keeps a model built by an older hwgen from being reused.
pub fn build(design: &Design, cache: &Path) -> Result<PathBuf, SimError> {
    build_with(design, cache, Instrument::default())
}

/// What a model is built with besides the run itself (each a separate model in the cache).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Instrument {
    /// FST waveform support (`+trace=FILE`).
    pub trace: bool,
    /// The lock-step log of engine 0's scratchpad writes (`+writes=FILE`).
    pub lockstep: bool,
    /// Every engine's instruction starts and executor activity (`+timeline=FILE`).
    pub timeline: bool,
    /// Beats of the memory model (default `tb_mem_words`; `mem_words_for` a program).
    pub mem_words: Option<u64>,
}

/// As [`build`], with the instrumentation `with` asks for.
pub fn build_with(design: &Design, cache: &Path, with: Instrument) -> Result<PathBuf, SimError> {
    let Instrument {
        trace,
        lockstep,
        timeline,
        mem_words,
    } = with;
    let mem_words = mem_words.unwrap_or_else(|| tb_mem_words(design));
    let files = crate::rtl::emit(design);
    let mut text = String::new();
    for (p, c) in files.iter() {
        text.push_str(p);
        text.push_str(c);
    }
    // Verilator's make runs in the build directory: a relative cache path must not reach it.
    let cache = std::path::absolute(cache).unwrap_or_else(|_| cache.to_path_buf());
    let dir = cache.join(format!(
        "{:016x}-{:016x}",
        design.hash(),
        crate::design::fnv1a64(text.as_bytes())
    ));
    // The cached RTL is compared with the generated files on every use; a damaged copy is
    // written again.
    let rtl = dir.join("rtl-out");
    let intact = files
        .iter()
        .all(|(p, c)| std::fs::read_to_string(rtl.join(p)).ok().as_deref() == Some(c));
    if !intact {
        if rtl.exists() {
            eprintln!(
                "hwgen: cache: {} differs from the generated RTL (truncated or modified); writing it again",
                rtl.display()
            );
        }
        std::fs::create_dir_all(&dir)
            .map_err(|e| SimError::cache(&dir, "create the cache directory", e))?;
        files.write_atomic(&rtl)?;
    }
    std::fs::create_dir_all(dir.join("tb"))
        .map_err(|e| SimError::cache(&dir, "create the cache directory", e))?;
    let tb = dir.join("tb/tb_top.v");
    let main = dir.join("tb/sim_main.cpp");
    if std::fs::read_to_string(&tb).ok().as_deref() != Some(TB_TOP) {
        std::fs::write(&tb, TB_TOP)?;
    }
    if std::fs::read_to_string(&main).ok().as_deref() != Some(SIM_MAIN) {
        std::fs::write(&main, SIM_MAIN)?;
    }
    let mut sources: Vec<PathBuf> = std::fs::read_to_string(rtl.join("hwgen.f"))?
        .lines()
        .filter(|l| l.ends_with(".v"))
        .map(|l| rtl.join(l))
        .collect();
    sources.push(tb);
    if timeline {
        let path = dir.join("tb/tb_timeline.v");
        let text = super::timeline::monitor(design);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, text)?;
        }
        sources.push(path);
    }
    let cores = design.cores().len() as u64;
    let model = Model {
        top: "tb".into(),
        sources,
        include_dirs: vec![rtl.join("rtl")],
        harness: main,
        params: vec![
            ("MEM_W".into(), design.memory.data_width_bits.to_string()),
            ("MEM_PORTS".into(), design.memory.ports.to_string()),
            ("NUM_CORES".into(), cores.to_string()),
            ("LATENCY".into(), design.memory.latency_cycles.to_string()),
            (
                "BYTES_PER_CYCLE".into(),
                design.memory.bytes_per_cycle.to_string(),
            ),
            ("MEM_WORDS".into(), mem_words.to_string()),
            ("PERF_WORDS".into(), PERF_COUNTER_NAMES.len().to_string()),
            ("PERF_BASE".into(), crate::rtl::CSR_PERF_BASE.to_string()),
            (
                "PERF_STRIDE".into(),
                crate::rtl::CSR_PERF_STRIDE.to_string(),
            ),
            (
                "PROG_BASE_SLOT".into(),
                crate::rtl::CSR_PROG_BASE_SLOT.to_string(),
            ),
            ("PATH_CHARS".into(), TB_PATH_CHARS.to_string()),
        ],
        trace,
        defines: {
            let mut d = Vec::new();
            if !design.reset.active_low {
                d.push("HWGEN_RST_HIGH".to_string());
            }
            // Engine 0's path, for the hang diagnosis and the lock-step write log.
            let (b, u, r) = design.cores()[0];
            d.push(format!(
                "HWGEN_CORE0=dut.{}",
                crate::names::instance(&crate::names::core_instance(&b.name, &u.name, r))
            ));
            if design.cores().len() > 1 {
                d.push(format!("HWGEN_PROGRESS_ALL={}", progress_all(design)));
            }
            if lockstep {
                d.push("HWGEN_LOCKSTEP".to_string());
            }
            if timeline {
                d.push("HWGEN_TIMELINE".to_string());
            }
            d
        },
    };
    model.build(&dir.join("verilator"))
}

/// The testbench's progress signal over every engine of a multi-engine design: an
/// instruction fetched or started, or a scratchpad row written, by any engine.
fn progress_all(design: &Design) -> String {
    design
        .cores()
        .iter()
        .map(|(b, u, r)| {
            let core = crate::names::core_instance(&b.name, &u.name, *r);
            let c = format!("dut.{}", crate::names::instance(&core));
            format!(
                "(|{c}.head_pop)||(|({c}.push_valid&{c}.push_ready))||{c}.ld_wr_valid||{c}.acc_hi_wr_valid||{c}.out_hi_wr_valid"
            )
        })
        .collect::<Vec<_>>()
        .join("||")
}

/// Write the program's memory images into `dir` (imem0.hex ... one per engine, dmem.hex,
/// prog_base.hex and the expected output region, expected.hex).
pub fn write_images(program: &Program, expected: &Memory, dir: &Path) -> std::io::Result<()> {
    for (name, text) in images(program, expected)?.iter() {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(())
}

/// The memory images as files: `imem0.hex` (and `imem1.hex` ... for the other engines of
/// an elastic Design; one instruction per line, for reading), `dmem.hex` (external memory
/// as the run starts: the data, then every engine's instructions, `Program::memory_image`),
/// `prog_base.hex` (each engine's program base, one per line, for its `prog_base` CSR)
/// and `expected.hex`.
pub fn images(program: &Program, expected: &Memory) -> std::io::Result<FileMap> {
    let mut files = FileMap::new();
    for (e, instrs) in program.programs().into_iter().enumerate() {
        files.add(format!("imem{e}.hex"), program_hex(program, e, instrs)?);
    }
    let (image, bases) = program.memory_image();
    let dmem = image.to_hex_lines();
    let bases: String = bases.iter().map(|b| format!("{b:x}\n")).collect();
    let range = program.output_range();
    let mut text = format!(
        "// output region: beats {}..{} (valid channels as in manifest)\n@{:x}\n",
        range.start, range.end, range.start
    );
    for b in range {
        text.push_str(&expected.beat_hex(b as usize));
        text.push('\n');
    }
    files.add("dmem.hex", dmem);
    files.add("prog_base.hex", bases);
    files.add("expected.hex", text);
    Ok(files)
}

/// Engine `e`'s program as a `$readmemh` file, one instruction per line.
fn program_hex(
    program: &Program,
    e: usize,
    instrs: &[crate::isa::Instr],
) -> std::io::Result<String> {
    let mut imem = format!(
        "// hwgen program of engine {e} for design {:016x}\n",
        program.design_hash
    );
    for i in instrs {
        let word = i
            .encode()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
        word.push_hex(&mut imem);
        imem.push('\n');
    }
    Ok(imem)
}

/// A private directory for one run of `exe`, beside it in the cache (`.run-PID-*`); those
/// of killed runs are removed first.
fn run_dir(exe: &Path) -> Result<tempfile::TempDir, SimError> {
    let parent = exe.parent().unwrap_or(Path::new("."));
    crate::filemap::remove_dead(parent, ".run-");
    let dir = tempfile::Builder::new()
        .prefix(&format!(".run-{}-", std::process::id()))
        .tempdir_in(parent)
        .map_err(|e| SimError::cache(parent, "create a run directory in the cache", e))?;
    // The testbench holds file names of up to TB_PATH_CHARS characters.
    let longest = dir.path().join("expected.hex").as_os_str().len();
    if longest > TB_PATH_CHARS {
        return Err(SimError::Cache {
            path: dir.path().to_path_buf(),
            rule: format!("the testbench takes file names of up to {TB_PATH_CHARS} characters; this cache's are {longest}"),
        });
    }
    Ok(dir)
}

/// The longest file name the testbench takes (its `PATH_CHARS` parameter).
const TB_PATH_CHARS: usize = 1024;

/// How a program runs in the testbench.
#[derive(Debug, Clone, Default)]
pub struct RunOptions<'a> {
    /// Percentage of cycles in which the memory model refuses a request, and its seed.
    pub stall_pct: u32,
    pub seed: u64,
    /// Write an FST waveform (the model must be built with tracing).
    pub trace: Option<&'a Path>,
    /// Log engine 0's scratchpad writes (the model must be built for lock-step).
    pub writes: Option<&'a Path>,
    /// Log every engine's instruction starts (the model must be built with the timeline).
    pub timeline: Option<&'a Path>,
    /// Stop after this many cycles (default [`MAX_CYCLES`]); a hang is caught much earlier
    /// by the stall bound (`stall::limit`).
    pub max_cycles: Option<u64>,
    /// Beats of the memory model `exe` was built with (`Instrument::mem_words`).
    pub mem_words: Option<u64>,
}

/// The default cycle limit of a run.
pub const MAX_CYCLES: u64 = 50_000_000;

/// Run `program` on the verilated model `exe` and compare its output region with
/// `expected`.
pub fn run(
    design: &Design,
    exe: &Path,
    program: &Program,
    expected: &Memory,
    stall_pct: u32,
    seed: u64,
) -> Result<SimResult, SimError> {
    let opts = RunOptions {
        stall_pct,
        seed,
        ..RunOptions::default()
    };
    run_with(design, exe, program, expected, &opts)
}

/// As [`run`], with every option.
pub fn run_with(
    design: &Design,
    exe: &Path,
    program: &Program,
    expected: &Memory,
    opts: &RunOptions,
) -> Result<SimResult, SimError> {
    let words = opts.mem_words.unwrap_or_else(|| tb_mem_words(design));
    let footprint = program.footprint_beats();
    if footprint > words {
        return Err(SimError::Failed {
            what: "loading the memory image".into(),
            log: format!(
                "the data and programs need {footprint} beats; this testbench models {words} (build it with Instrument::mem_words = mem_words_for(footprint), as hwgen sim does)"
            ),
        });
    }
    let dir = run_dir(exe)?;
    write_images(program, expected, dir.path())?;
    let range = program.output_range();
    // The stall bound: no engine made progress (on a multi-engine design the testbench
    // watches every engine, as one may wait on another's stream while others compute).
    let stall_limit = super::stall::limit(design, opts.stall_pct);
    let path_arg = |key: &str, p: Option<&Path>| {
        p.map(|p| format!("+{key}={}", p.display()))
            .unwrap_or_default()
    };
    let out = verilator::run(
        exe,
        &[
            format!("+prog={}", dir.path().join("prog_base.hex").display()),
            format!("+dmem={}", dir.path().join("dmem.hex").display()),
            format!("+dump={}", dir.path().join("dump.hex").display()),
            format!("+dump_base={}", range.start),
            format!("+dump_count={}", range.end - range.start),
            format!("+design_id={:016x}", program.design_hash),
            format!("+stall_pct={}", opts.stall_pct),
            format!("+seed={}", opts.seed),
            format!("+max_cycles={}", opts.max_cycles.unwrap_or(MAX_CYCLES)),
            format!("+stall_limit={stall_limit}"),
            path_arg("trace", opts.trace),
            path_arg("writes", opts.writes),
            path_arg("timeline", opts.timeline),
        ],
    )
    .map_err(|e| match e {
        SimError::Failed { log, .. } if log.contains("STALL ") => match Stall::parse(&log) {
            Some(s) => SimError::Stalled(s.report(&program.instrs)),
            None => SimError::Failed {
                what: "the simulation".into(),
                log,
            },
        },
        other => other,
    })?;
    let dump = std::fs::read_to_string(dir.path().join("dump.hex"))?;
    let mut memory = Memory::new(design.memory.data_width_bits, range.end as usize);
    for (k, line) in dump.lines().enumerate() {
        memory.set_beat_hex(range.start as usize + k, line);
    }
    let comparison = compare(program, expected, &memory);
    let field = |key: &str| -> Option<u64> {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
    };
    let cycles = field("CYCLES ").unwrap_or(0);
    let engines: Vec<Vec<u64>> = (0..design.cores().len())
        .map(|e| {
            (0..PERF_COUNTER_NAMES.len())
                .map(|i| field(&format!("PERF {e} {i} ")).unwrap_or(0))
                .collect()
        })
        .collect();
    let perf = engines[0].clone();
    Ok(SimResult {
        matched: comparison.matched(),
        comparison,
        cycles,
        perf,
        engines,
        memory,
    })
}

/// The first instruction whose scratchpad writes differ between the RTL and the interpreter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    pub pc: usize,
    pub listing: String,
    pub detail: String,
}

/// Run `program` on the RTL (built with `lockstep`) and on the ISA interpreter and compare,
/// instruction by instruction, every scratchpad row each instruction writes. Returns the
/// simulation result and the first instruction that differs, if any.
pub fn lockstep(
    design: &Design,
    exe: &Path,
    program: &Program,
    expected: &Memory,
    stall_pct: u32,
    seed: u64,
) -> Result<(SimResult, Option<Divergence>), SimError> {
    let dir = run_dir(exe)?;
    let log = dir.path().join("writes.log");
    let opts = RunOptions {
        stall_pct,
        seed,
        writes: Some(&log),
        ..RunOptions::default()
    };
    let result = run_with(design, exe, program, expected, &opts)?;
    // Engine 0's writes; on an elastic design with every engine running (its data may come
    // from the others, in the order their tokens allow).
    let interp_failed = |e: crate::interp::InterpError| SimError::Failed {
        what: "the ISA interpreter".into(),
        log: e.to_string(),
    };
    let mut mem = program.dmem.clone();
    let expected = match &program.elastic {
        Some(el) => {
            let mut engines = crate::interp::run_system(design, &el.programs, &mut mem, Some(0))
                .map_err(interp_failed)?;
            engines[0].writes.take().unwrap_or_default()
        }
        None => {
            let unit = &design.branches[0].units[0];
            let mut engine = crate::interp::Engine::new(design, unit);
            engine.writes = Some(Vec::new());
            engine
                .run(&program.instrs, &mut mem)
                .map_err(interp_failed)?;
            engine.writes.take().unwrap_or_default()
        }
    };

    let text = std::fs::read_to_string(&log)?;
    let div = first_divergence(design, program, &expected, &text);
    Ok((result, div))
}

/// Compare the interpreter's row writes with the RTL's write log (see `tb_top.v`), writer by
/// writer in order; the first instruction whose rows differ, if any.
pub fn first_divergence(
    design: &Design,
    program: &Program,
    expected: &[crate::interp::RowWrite],
    log: &str,
) -> Option<Divergence> {
    let unit = &design.branches[0].units[0];
    let engine = crate::interp::Engine::new(design, unit);
    let mut streams: [Vec<(u64, String, Option<u64>)>; 3] = Default::default(); // (row, hex, buffer)
    for line in log.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["L", b, row, hex] => {
                streams[0].push((row.parse().unwrap_or(0), hex.to_string(), b.parse().ok()))
            }
            ["C", row, hex] => streams[1].push((row.parse().unwrap_or(0), hex.to_string(), None)),
            ["V", b, row, hex] => {
                streams[2].push((row.parse().unwrap_or(0), hex.to_string(), b.parse().ok()))
            }
            _ => {}
        }
    }
    let mut next = [0usize; 3];
    for w in expected {
        let s = match program.instrs[w.pc].opcode() {
            crate::isa::Opcode::Load => 0,
            crate::isa::Opcode::Matmul | crate::isa::Opcode::Window => 1,
            _ => 2,
        };
        let (n, t) = engine.row_type(w.buffer);
        let depth = match w.buffer {
            crate::isa::Buffer::Input => unit.buffers.input_depth,
            crate::isa::Buffer::Weight => unit.buffers.weight_depth,
            crate::isa::Buffer::Accumulator => unit.buffers.accumulator_depth * unit.acc_banks(),
            crate::isa::Buffer::Output => unit.buffers.output_depth,
        } as u64;
        let diverge = |detail: String| Divergence {
            pc: w.pc,
            listing: program.instrs[w.pc].to_asm(),
            detail,
        };
        let Some((row, hex, buf)) = streams[s].get(next[s]) else {
            return Some(diverge(format!(
                "the RTL wrote nothing where the interpreter wrote {} row {}",
                w.buffer.name(),
                w.row
            )));
        };
        next[s] += 1;
        let got = if engine.has_slot(w.buffer) {
            // The elements, then the 8-bit block scale right after them.
            let mut v = row_values(hex, n, t);
            let bits = n * t.bits as usize;
            let scale = row_values(hex, bits / 8 + 1, crate::numeric::IntType::new(false, 8));
            v.push(scale[bits / 8]);
            v
        } else {
            row_values(hex, n, t)
        };
        if buf.is_some_and(|b| b != w.buffer as u64)
            || row % depth != w.row as u64
            || got != w.values
        {
            return Some(diverge(format!(
                "{} row {}: interpreter {:?}, RTL wrote row {} of buffer {} with {:?}",
                w.buffer.name(),
                w.row,
                w.values,
                row % depth,
                buf.map_or(w.buffer as u64, |b| b),
                got
            )));
        }
    }
    None
}

/// Elements of a scratchpad row from the RTL's hex (element 0 least significant).
fn row_values(hex: &str, n: usize, t: crate::numeric::IntType) -> Vec<i64> {
    let digits: Vec<u32> = hex
        .chars()
        .rev()
        .map(|c| c.to_digit(16).unwrap_or(0))
        .collect();
    let bit = |i: usize| digits.get(i / 4).is_some_and(|d| (d >> (i % 4)) & 1 == 1);
    (0..n)
        .map(|e| {
            let v = (0..t.bits as usize).fold(0i64, |acc, b| {
                acc | (i64::from(bit(e * t.bits as usize + b)) << b)
            });
            t.wrap(i128::from(v))
        })
        .collect()
}

#[cfg(test)]
mod mem_tests {
    use super::*;

    /// The memory model is 64 MiB unless a program needs more; then the next power of two
    /// of beats (128-bit beats on 16x16_int8: 4 Mi beats by default).
    #[test]
    fn the_memory_model_grows_with_the_footprint() {
        let d = crate::config::load(Path::new("configs/16x16_int8.toml")).unwrap();
        assert_eq!(tb_mem_words(&d), 4 << 20);
        assert_eq!(mem_words_for(&d, 1000), 4 << 20);
        assert_eq!(mem_words_for(&d, 4 << 20), 4 << 20);
        assert_eq!(mem_words_for(&d, (4 << 20) + 1), 8 << 20);
    }
}
