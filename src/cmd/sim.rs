use anyhow::{bail, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Parameter file (TOML) of the accelerator.
    #[arg(long, short)]
    pub config: PathBuf,
    /// Model file (TOML).
    #[arg(long, short)]
    pub model: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Percentage of cycles in which the memory model refuses a request (0 to 99: at 100 it
    /// would accept none).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..100))]
    pub stall_pct: u32,
    /// Seed of the memory model's stalls.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where verilated models are cached (default: $HWGEN_CACHE or ~/.cache/hwgen).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Write an FST waveform of the whole run to FILE (uses a separately verilated model).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Compare every scratchpad row each instruction writes with the ISA interpreter and
    /// name the first instruction that differs.
    #[arg(long)]
    pub lockstep: bool,
    /// Write every engine's instructions, as the RTL ran them, to FILE as a Chrome/Perfetto
    /// trace (one track per engine queue, one slice per instruction; open it in
    /// ui.perfetto.dev). Uses a separately verilated model.
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Also report every layer's measured cycles (from the instruction timeline: a layer
    /// ends when its last instruction does), ideal cycles, MAC utilization and estimate.
    /// Single-engine designs; uses the timeline's verilated model.
    #[arg(long)]
    pub layers: bool,
    /// Stop the simulation after N cycles (default 50,000,000). A hang is reported long
    /// before, once no queue has made progress for a bound derived from the design.
    #[arg(long, value_name = "N")]
    pub max_cycles: Option<u64>,
}

/// Run, and with `--json` report a failure as one JSON object too.
pub fn run(args: Args) -> Result<()> {
    let json = args.json;
    let result = simulate(args);
    if let (true, Err(e)) = (json, &result) {
        println!(
            "{}",
            serde_json::json!({ "match": false, "error": format!("{e:#}") })
        );
    }
    result
}

fn simulate(args: Args) -> Result<()> {
    let design = hwgen::config::load(&args.config)?;
    let model = super::load_model(&args.model)?;
    let program = super::compile(&design, &model, &args.model, &args.config)?;
    let expected = hwgen::verify::expected(&design, &model, &program);
    let cache = args
        .cache
        .clone()
        .unwrap_or_else(hwgen::sim::run::default_cache);
    if !args.json {
        eprintln!(
            "hwgen sim: building (or reusing) the Verilator model in {}",
            cache.display()
        );
    }
    let timeline = args.timeline.is_some() || args.layers;
    if [args.lockstep, args.trace.is_some(), timeline]
        .iter()
        .filter(|x| **x)
        .count()
        > 1
    {
        return Err(super::refuse(
            "--lockstep, --trace, --timeline, --layers",
            "at most one of them in a run: each needs its own verilated model",
            "use them in separate runs",
        ));
    }
    if args.layers && program.elastic.is_some() {
        bail!(
            "error: --layers reports the layers of a single-engine design; {} has several engines\n  \
             fix:  use --timeline to see each engine's instructions (the report gives each stage's cycles)",
            args.config.display()
        );
    }
    // A program larger than the default memory model gets a larger one (built once).
    let mem_words = hwgen::sim::run::mem_words_for(&design, program.footprint_beats());
    let with = hwgen::sim::run::Instrument {
        trace: args.trace.is_some(),
        lockstep: args.lockstep,
        timeline,
        mem_words: Some(mem_words),
    };
    let exe = hwgen::sim::run::build_with(&design, &cache, with)?;
    if args.lockstep {
        let (r, div) = hwgen::sim::run::lockstep(
            &design,
            &exe,
            &program,
            &expected,
            args.stall_pct,
            args.seed,
        )?;
        match div {
            None => println!(
                "lockstep: every scratchpad row written by all {} instructions equals the ISA interpreter's ({} cycles, {})",
                program.instrs.len(),
                r.cycles,
                if r.matched { "output bit-exact" } else { "OUTPUT MISMATCH" }
            ),
            Some(d) => {
                println!("lockstep: first difference at instruction {}: {}\n  {}", d.pc, d.listing, d.detail);
                bail!("the RTL diverges from the ISA interpreter at instruction {}", d.pc);
            }
        }
        return Ok(());
    }
    let trace = args.trace.as_ref().map(std::path::absolute).transpose()?;
    // The monitor's log goes to a private temporary file; the trace is written from it.
    let log_dir = tempfile::tempdir()?;
    let log = log_dir.path().join("timeline.log");
    let opts = hwgen::sim::run::RunOptions {
        stall_pct: args.stall_pct,
        seed: args.seed,
        trace: trace.as_deref(),
        writes: None,
        timeline: timeline.then_some(log.as_path()),
        max_cycles: args.max_cycles,
        mem_words: Some(mem_words),
    };
    let r = hwgen::sim::run::run_with(&design, &exe, &program, &expected, &opts)?;
    if let Some(out) = &args.timeline {
        write_timeline(out, args.json, &design, &program, &log)?;
    }
    if let Some(e) = &program.elastic {
        return simulate_elastic(&args, (&design, &model, &program, e), &exe, &opts, &r);
    }
    report_single(&args, (&design, &model, &program), &r, &log)
}

/// The report of a single-engine run (text or `--json`, with `--layers` the per-layer table),
/// and its verdict.
fn report_single(
    args: &Args,
    (design, model, program): (
        &hwgen::design::Design,
        &hwgen::model::Model,
        &hwgen::compiler::Program,
    ),
    r: &hwgen::sim::run::SimResult,
    log: &std::path::Path,
) -> Result<()> {
    let unit = &design.branches[0].units[0];
    let pes = u64::from(unit.cpf * unit.kpf);
    let ideal = program.macs.div_ceil(pes);
    let util = if r.cycles > 0 {
        ideal as f64 / r.cycles as f64
    } else {
        0.0
    };
    let layers = if args.layers {
        Some(layer_table(program, log, pes)?)
    } else {
        None
    };
    let est = program.estimated_cycles();
    let est_err = if r.cycles > 0 {
        (est as f64 - r.cycles as f64) / r.cycles as f64
    } else {
        0.0
    };
    if args.json {
        let perf: serde_json::Map<String, serde_json::Value> = hwgen::rtl::PERF_COUNTER_NAMES
            .iter()
            .zip(&r.perf)
            .map(|(n, v)| (n.to_string(), serde_json::json!(v)))
            .collect();
        let v = serde_json::json!({
            "match": r.matched,
            "mismatches": r.comparison.differing,
            "cycles": r.cycles,
            "ideal_cycles": ideal,
            "mac_utilization": util,
            "estimated_cycles": est,
            "estimator_error": est_err,
            "macs": program.macs,
            "pes": pes,
            "instructions": program.instrs.len(),
            "perf": perf,
            "layers": layers.as_ref().map(|l| &l.1),
        });
        println!("{v}");
    } else {
        println!(
            "{} on {} ({} PEs): {} instructions, {} MACs",
            model.name,
            design.name,
            pes,
            program.instrs.len(),
            program.macs
        );
        if r.matched {
            println!("result:      bit-exact against the golden model");
        } else {
            println!(
                "result:      MISMATCH in {} output {}",
                r.comparison.differing, r.comparison.unit
            );
        }
        println!("cycles:      {}", r.cycles);
        println!("ideal:       {ideal} (MACs / PEs)");
        println!("utilization: {:.1}% of peak MAC throughput", util * 100.0);
        println!(
            "estimated:   {est} cycles ({:+.1}% against measured)",
            est_err * 100.0
        );
        println!(
            "queues:      busy/stall cycles  load {}/{}  compute {}/{}  vector {}/{}  store {}/{}",
            r.perf[0], r.perf[1], r.perf[2], r.perf[3], r.perf[4], r.perf[5], r.perf[6], r.perf[7]
        );
        println!("mac-active:  {} cycles", r.counter("mac_active"));
        if let Some((text, _)) = &layers {
            print!("{text}");
        }
    }
    matched(r)
}

/// The report of an elastic run, as text and as JSON.
struct ElasticReport {
    text: String,
    json: serde_json::Value,
}

/// Per stage, per engine (busy, stalls, MAC-active, utilization), per branch (frames,
/// frames per second at `control.clock_mhz` in steady state) and overall efficiency in
/// F-CAD's sense: MACs done per cycle over the MACs per cycle of all PEs. The run is one
/// round (every branch its batch of frames); `two_rounds` is the cycles of a run of two,
/// whose difference is a round's cycles in steady state (None: two rounds could not be
/// compiled, and the round alone stands for it).
fn elastic_report(
    design: &hwgen::design::Design,
    program: &hwgen::compiler::Program,
    e: &hwgen::compiler::Elastic,
    r: &hwgen::sim::run::SimResult,
    two_rounds: Option<u64>,
) -> ElasticReport {
    use std::fmt::Write;
    let cores = design.cores();
    let frames = program.frames() as u64;
    let pes: u64 = cores.iter().map(|(_, u, _)| u64::from(u.cpf * u.kpf)).sum();
    let cycles = r.cycles.max(1);
    let efficiency = program.macs_run as f64 / (cycles * pes) as f64;
    let mut t = String::new();
    let result = if r.matched {
        format!("bit-exact against the golden model ({frames} frame(s))")
    } else {
        format!(
            "MISMATCH in {} output {}",
            r.comparison.differing, r.comparison.unit
        )
    };
    let _ = writeln!(t, "result:      {result}");
    let _ = writeln!(t, "cycles:      {} for {frames} frame(s)", r.cycles);
    let mut stages = Vec::new();
    for s in &e.stages {
        let _ = writeln!(
            t,
            "stage:       {}.{} (engines {:?}): {} — estimated {} cycles per frame{}; {}",
            s.branch,
            s.unit,
            s.engines,
            s.layers.join(", "),
            s.estimated_cycles,
            s.in_bands(),
            s.traffic()
        );
        for note in &s.handoffs {
            let _ = writeln!(t, "             {}.{} {note}", s.branch, s.unit);
        }
        stages.push(serde_json::to_value(s).expect("serializes"));
    }
    let engines = engine_lines(&cores, r, &mut t);
    let clock = f64::from(design.control.clock_mhz) * 1e6;
    // A round in steady state: the second round of a two-round run. Every branch runs its
    // frames of each round (the branches are one network), so they share the round's
    // interval; each has its own frames, stages, PEs and MAC-active cycles.
    let round = match two_rounds {
        Some(two) => two.saturating_sub(r.cycles),
        None => r.cycles,
    }
    .max(1) as f64;
    let fps_of = |f: usize| f as f64 * clock / round;
    let fps = fps_of(frames as usize);
    let _ = writeln!(
        t,
        "rounds:      a round is every branch's batch of frames ({}); {} cycles per round {} (one round alone: {}), {} per frame of the largest batch: {fps:.1} frames/s at {} MHz",
        hwgen::compiler::round_label(design, &e.frames),
        round,
        match two_rounds {
            Some(_) => "in steady state",
            None => "(not in steady state: two rounds do not fit)",
        },
        r.cycles,
        (round / frames.max(1) as f64).round(),
        design.control.clock_mhz
    );
    let mut branches = Vec::new();
    for (bi, b) in design.branches.iter().enumerate() {
        let b_frames = e.frames[bi];
        let engines: Vec<usize> = (0..cores.len())
            .filter(|&i| cores[i].0.name == b.name)
            .collect();
        let stages: Vec<&hwgen::compiler::StageReport> =
            e.stages.iter().filter(|s| s.branch == b.name).collect();
        let mac: u64 = engines
            .iter()
            .map(|&i| r.engine_counter(i, "mac_active"))
            .sum();
        let b_pes: u64 = engines
            .iter()
            .map(|&i| u64::from(cores[i].1.cpf * cores[i].1.kpf))
            .sum();
        let util = mac as f64 / (cycles * engines.len().max(1) as u64) as f64;
        let slowest = stages.iter().max_by_key(|s| s.estimated_cycles);
        let _ = writeln!(
            t,
            "branch:      {} ({} engines, {b_pes} PEs, batch {}, {b_frames} frame(s) per round: {:.1} frames/s, priority {}): {}; MAC-active {:.1}% of its engines' cycles",
            b.name,
            engines.len(),
            b.batch,
            fps_of(b_frames),
            b.priority,
            match slowest {
                Some(s) => format!("{} stage(s), slowest {} (estimated {} cycles per frame)", stages.len(), s.unit, s.estimated_cycles),
                None => "no layers".to_string(),
            },
            util * 100.0
        );
        branches.push(serde_json::json!({
            "branch": b.name, "engines": engines, "pes": b_pes,
            "batch": b.batch, "priority": b.priority,
            "stages": stages.len(),
            "slowest_stage": slowest.map(|s| s.unit.clone()),
            "slowest_stage_estimated_cycles": slowest.map(|s| s.estimated_cycles),
            "mac_active_fraction": util,
            "frames": b_frames,
            "frames_per_second": fps_of(b_frames),
        }));
    }
    let _ = writeln!(
        t,
        "efficiency:  {:.1}% ({} MACs per frame on {pes} PEs)",
        efficiency * 100.0,
        program.macs
    );
    let json = serde_json::json!({
        "match": r.matched,
        "mismatches": r.comparison.differing,
        "cycles": r.cycles,
        "frames": frames,
        "macs_per_frame": program.macs,
        "pes": pes,
        "efficiency": efficiency,
        "stages": stages,
        "engines": engines,
        "steady_cycles_per_round": round,
        "steady_state_measured": two_rounds.is_some(),
        "one_round_cycles": r.cycles,
        "steady_cycles_per_frame": round / frames.max(1) as f64,
        "frames_per_second": fps,
        "clock_mhz": design.control.clock_mhz,
        "branches": branches,
    });
    ElasticReport { text: t, json }
}

/// The `--layers` table, as text and as JSON: per layer its MACs, ideal cycles (MACs / PEs),
/// measured cycles (`timeline::layer_cycles`), MAC utilization and estimated cycles.
fn layer_table(
    program: &hwgen::compiler::Program,
    log: &std::path::Path,
    pes: u64,
) -> Result<(String, serde_json::Value)> {
    use std::fmt::Write;
    let text = std::fs::read_to_string(log).map_err(|e| {
        anyhow::anyhow!(
            "error: cannot read the run's instruction log {}: {e}\n  fix:  check that the temporary directory is writable and has space",
            log.display()
        )
    })?;
    let slices = hwgen::sim::timeline::slices(program, &text);
    let cycles = hwgen::sim::timeline::layer_cycles(program, &slices);
    let mut t = format!(
        "{:<24} {:<10} {:>12} {:>10} {:>10} {:>8} {:>10}\n",
        "layer", "op", "MACs", "ideal", "cycles", "MAC util", "estimated"
    );
    let mut rows = Vec::new();
    for (l, &c) in program.layers.iter().zip(&cycles) {
        let ideal = l.macs.div_ceil(pes);
        let util = if c > 0 { ideal as f64 / c as f64 } else { 0.0 };
        let util_text = if l.macs > 0 {
            format!("{:.1}%", 100.0 * util)
        } else {
            "-".to_string()
        };
        let _ = writeln!(
            t,
            "{:<24} {:<10} {:>12} {:>10} {:>10} {:>8} {:>10}",
            l.name, l.op, l.macs, ideal, c, util_text, l.estimated_cycles
        );
        rows.push(serde_json::json!({
            "name": l.name, "op": l.op, "macs": l.macs, "ideal_cycles": ideal,
            "cycles": c, "mac_utilization": util, "estimated_cycles": l.estimated_cycles,
        }));
    }
    Ok((t, serde_json::Value::Array(rows)))
}

/// Write the RTL run's timeline (`--timeline`) from the monitor's log.
fn write_timeline(
    out: &std::path::Path,
    json: bool,
    design: &hwgen::design::Design,
    program: &hwgen::compiler::Program,
    log: &std::path::Path,
) -> Result<()> {
    let text = std::fs::read_to_string(log)?;
    let slices = hwgen::sim::timeline::slices(program, &text);
    let trace = hwgen::sim::timeline::chrome_trace(design, program, &slices);
    hwgen::filemap::write_file_atomic(out, &trace)?;
    if !json {
        eprintln!(
            "hwgen sim: timeline of {} instructions written to {} (open it in ui.perfetto.dev)",
            slices.len(),
            out.display()
        );
    }
    Ok(())
}

/// Per engine: compute busy and stall cycles and MAC-active cycles (their share of all the
/// run's), appended to `t`, and as JSON with every counter.
fn engine_lines(
    cores: &[(&hwgen::design::Branch, &hwgen::design::Unit, u32)],
    r: &hwgen::sim::run::SimResult,
    t: &mut String,
) -> Vec<serde_json::Value> {
    use std::fmt::Write;
    let cycles = r.cycles.max(1);
    let mut engines = Vec::new();
    for (i, (b, u, rep)) in cores.iter().enumerate() {
        let p = &r.engines[i];
        let (busy, stall, mac) = (
            r.engine_counter(i, "compute_busy"),
            r.engine_counter(i, "compute_stall"),
            r.engine_counter(i, "mac_active"),
        );
        let util = mac as f64 / cycles as f64;
        let _ = writeln!(
            t,
            "engine {i}:    {}.{}[{rep}] compute busy {busy}, stalled {stall}, MAC-active {mac} ({:.1}% of cycles)",
            b.name,
            u.name,
            util * 100.0
        );
        let counters: serde_json::Map<String, serde_json::Value> = hwgen::rtl::PERF_COUNTER_NAMES
            .iter()
            .zip(p)
            .map(|(n, v)| (n.to_string(), serde_json::json!(v)))
            .collect();
        engines.push(serde_json::json!({
            "engine": i, "branch": b.name, "unit": u.name, "replica": rep,
            "perf": counters, "utilization": util,
        }));
    }
    engines
}

/// The rest of `sim` on an elastic design: the steady state from a second run of two
/// rounds (without waveform or timeline, which belong to the main run), and the report.
fn simulate_elastic(
    args: &Args,
    (design, model, program, e): (
        &hwgen::design::Design,
        &hwgen::model::Model,
        &hwgen::compiler::Program,
        &hwgen::compiler::Elastic,
    ),
    exe: &std::path::Path,
    opts: &hwgen::sim::run::RunOptions,
    r: &hwgen::sim::run::SimResult,
) -> Result<()> {
    // Two rounds may not fit the external memory the ISA addresses (every frame has its
    // own copy of the activations); the round alone then stands for the steady state.
    let two_rounds = match hwgen::compiler::compile_rounds(design, model, 2) {
        Ok(p2) => {
            let x2 = hwgen::verify::expected(design, model, &p2);
            let plain = hwgen::sim::run::RunOptions {
                trace: None,
                timeline: None,
                ..opts.clone()
            };
            let r2 = hwgen::sim::run::run_with(design, exe, &p2, &x2, &plain)?;
            if !r2.matched {
                bail!(
                    "the two-round run differs from the golden model in {} {}",
                    r2.comparison.differing,
                    r2.comparison.unit
                );
            }
            Some(r2.cycles)
        }
        Err(err) => {
            eprintln!(
                "warning: no steady state: two rounds do not compile ({}); the round alone stands for it",
                err.rule
            );
            None
        }
    };
    let mut rep = elastic_report(design, program, e, r, two_rounds);
    // The cycle model (`compile --estimate`'s round) against the round measured.
    if let (Some(two), Ok(est)) = (two_rounds, hwgen::compiler::estimate(design, model)) {
        let measured = two.saturating_sub(r.cycles).max(1) as f64;
        let error = (est.cycles_per_round as f64 / measured - 1.0) * 100.0;
        let _ = std::fmt::Write::write_fmt(
            &mut rep.text,
            format_args!(
                "estimated:   {} cycles per round ({error:+.1}% against the steady state measured)\n",
                est.cycles_per_round
            ),
        );
        rep.json["estimated_cycles_per_round"] = serde_json::json!(est.cycles_per_round);
        rep.json["estimate_error_percent"] = serde_json::json!(error);
    }
    if args.json {
        println!("{}", rep.json);
    } else {
        println!("{} on {}:", model.name, design.name);
        print!("{}", rep.text);
    }
    matched(r)
}

/// A run whose output differs from the golden model is an error (after its report).
fn matched(r: &hwgen::sim::run::SimResult) -> Result<()> {
    if !r.matched {
        bail!(
            "the RTL result differs from the golden model in {} {}",
            r.comparison.differing,
            r.comparison.unit
        );
    }
    Ok(())
}
