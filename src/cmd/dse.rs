use anyhow::{bail, Context, Result};
use hwgen::dse::{self, Budget, Explorer, Options, Outcome, Scored, Space};
use std::fmt::Write;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Model file (TOML) or quantized ONNX model.
    #[arg(long, short)]
    pub model: PathBuf,
    /// Template parameter file: its branches (names, forks, batch, priority), datatype,
    /// buffers, memory width and vector unit are kept; its units are what is searched.
    #[arg(long, short)]
    pub config: PathBuf,
    /// Budgets: dsp=N (DSP slices), bram=N (18-Kbit block RAMs), bw=GB/s (external memory),
    /// optionally lut=N (LUTs) and ff=N (flip-flops), as the resource model
    /// (src/synth/model.rs) counts them. With --device, bw= alone (the part gives the rest;
    /// a key given narrows it).
    #[arg(long)]
    pub budget: String,
    /// The FPGA part to fit (Z7045, ZU17EG or ZU9CG: F-CAD's Table IV): its DSPs, block
    /// RAMs, LUTs and flip-flops are the budget unless --budget narrows them.
    #[arg(long)]
    pub device: Option<String>,
    /// Clock of the design, MHz (sets the memory ports the bandwidth pays for).
    #[arg(long)]
    pub clock_mhz: u32,
    /// Frames per round per branch, b1,b2,... (default: the template's).
    #[arg(long, value_delimiter = ',')]
    pub batch: Vec<u32>,
    /// Priority per branch, p1,p2,... (default: the template's).
    #[arg(long, value_delimiter = ',')]
    pub priority: Vec<u32>,
    /// Seed of the search's random perturbations: the same seed, the same design.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Perturbations after the first growth.
    #[arg(long, default_value_t = 24)]
    pub iterations: usize,
    /// Array sizes a unit may have (cpf = kpf).
    #[arg(long, value_delimiter = ',', default_value = "8,16,32")]
    pub sizes: Vec<u32>,
    /// Memory widths (`memory.data_width_bits`) to search, each a space of its own
    /// (default: the template's).
    #[arg(long, value_delimiter = ',')]
    pub widths: Vec<u32>,
    /// Most replicas per unit.
    #[arg(long, default_value_t = 8)]
    pub max_h: u32,
    /// Most units (pipeline stages) per branch.
    #[arg(long, default_value_t = 8)]
    pub max_units: usize,
    /// Runner-up designs to report.
    #[arg(long, default_value_t = 5)]
    pub runner_ups: usize,
    /// Threads that schedule the stages of a step's candidate designs (default: the
    /// machine's cores). The design found is the same on any number.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Where to write the chosen design's parameter file.
    #[arg(long, short)]
    pub out: PathBuf,
}

/// The arguments `run` checks before searching; the array sizes, sorted and deduplicated.
fn checked_args(args: &Args) -> Result<Vec<u32>> {
    let mut sizes = args.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    if let Some(s) = sizes
        .iter()
        .find(|&&s| !s.is_power_of_two() || !(2..=64).contains(&s))
    {
        let given: Vec<String> = args.sizes.iter().map(u32::to_string).collect();
        return Err(super::refuse(
            format!("--sizes {}", given.join(",")),
            format!("{s} is not an array size the search takes (a power of two from 2 to 64, as a unit's cpf and kpf are)"),
            "write e.g. --sizes 8,16,32",
        ));
    }
    if !(1..=16).contains(&args.max_h) {
        return Err(super::refuse(
            format!("--max-h {}", args.max_h),
            "a unit has 1 to 16 replicas (the config's limit)",
            "give --max-h from 1 to 16",
        ));
    }
    if args.max_units == 0 {
        return Err(super::refuse(
            "--max-units 0",
            "a branch has at least one unit",
            "give --max-units 1 or more",
        ));
    }
    if args.threads == Some(0) {
        return Err(super::refuse(
            "--threads 0",
            "the search needs at least one thread",
            "give --threads 1 or more, or leave it out for one per core",
        ));
    }
    if !(1..=1000).contains(&args.clock_mhz) {
        return Err(super::refuse(
            format!("--clock-mhz {}", args.clock_mhz),
            "the clock is 1 to 1000 MHz",
            "give --clock-mhz from 1 to 1000",
        ));
    }
    Ok(sizes)
}

pub fn run(args: Args) -> Result<()> {
    let src = std::fs::read_to_string(&args.config)
        .with_context(|| format!("reading {}", args.config.display()))?;
    let mut template = hwgen::config::load(&args.config)?;
    let model = super::load_model(&args.model)?;
    per_branch(&mut template, &args.batch, "--batch", 1, 1024, |b, v| {
        b.batch = v
    })?;
    per_branch(
        &mut template,
        &args.priority,
        "--priority",
        0,
        15,
        |b, v| b.priority = v,
    )?;
    let sizes = checked_args(&args)?;
    let device = match args.device.as_deref() {
        Some(name) => Some(dse::device::device(name).ok_or_else(|| {
            super::refuse(
                format!("--device {name}"),
                format!(
                    "hwgen does not know this part; it knows {}, the parts of F-CAD's Table IV",
                    dse::device::known()
                ),
                "give one of them, or budget another part by hand with --budget dsp=N,bram=N,lut=N,ff=N,bw=GB/s",
            )
        })?),
        None => None,
    };
    let budget = Budget::parse_for(&args.budget, device).map_err(anyhow::Error::msg)?;
    let options = Options {
        budget,
        clock_mhz: args.clock_mhz,
        space: Space {
            sizes,
            max_h: args.max_h,
            max_units: args.max_units,
        },
        seed: args.seed,
        iterations: args.iterations,
        runner_ups: args.runner_ups,
        threads: args
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    };
    let file = args.config.display().to_string();
    if let Some(w) = args
        .widths
        .iter()
        .find(|&&w| !(8..=2048).contains(&w) || w % 8 != 0)
    {
        return Err(super::refuse(
            format!("--widths {w}"),
            "a memory width is a multiple of 8 from 8 to 2048 bits",
            "write e.g. --widths 64,128",
        ));
    }
    let tty = std::io::stderr().is_terminal();
    let mut progress = |f: f64, what: &str| {
        let filled = (f.clamp(0.0, 1.0) * 30.0).round() as usize;
        let line = format!(
            "hwgen dse [{}{}] {:3.0}% {what}",
            "#".repeat(filled),
            "-".repeat(30 - filled),
            f * 100.0
        );
        match tty {
            true => eprint!("\r\x1b[2K{}", line.chars().take(110).collect::<String>()),
            false => eprintln!("{line}"),
        }
    };
    let found = dse::search_widths(
        &template,
        &src,
        &file,
        &model,
        &options,
        &args.widths,
        &mut progress,
    );
    if tty {
        eprintln!();
    }
    let (outcome, ex) = found.map_err(|e| anyhow::anyhow!("{}: {e}", args.config.display()))?;
    let design = ex.design(&outcome.best.point).map_err(anyhow::Error::msg)?;
    // Named after the file written, as a parameter file without `name` would be.
    let stem = args.out.file_stem().unwrap_or_default().to_string_lossy();
    let name = hwgen::names::sanitize(&stem);
    let text = ex
        .config_toml(
            &outcome.best.point,
            &header(&ex.options.budget, &outcome),
            Some(&name),
        )
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.config.display()))?;
    // What is written must be the design chosen: read back as `hwgen emit` would.
    let back =
        hwgen::config::parse_str(&text, &args.out.display().to_string(), &stem).map_err(|e| {
            anyhow::anyhow!("internal error: the design written does not read back: {e}")
        })?;
    let chosen = hwgen::design::Design {
        name: back.name.clone(),
        source: back.source.clone(),
        ..design.clone()
    };
    if back != chosen {
        bail!("internal error: the design written reads back as another design");
    }
    hwgen::filemap::write_file_atomic(&args.out, &text)?;
    // The search ranks by the bound; the design chosen also gets the round of a timeline
    // of every engine's program (`compile --estimate`'s), when its programs can be built.
    if tty {
        eprintln!("hwgen dse: the design chosen on a timeline of every engine ...");
    }
    let clock = std::time::Instant::now();
    let timeline = hwgen::compiler::estimate(&chosen, &model)
        .ok()
        .filter(|e| e.one_round_cycles.is_some())
        .map(|e| Timeline {
            cycles_per_round: e.cycles_per_round,
            one_round_cycles: e.one_round_cycles.unwrap_or(0),
            frames_per_second: e.frames_per_second,
            branch_fps: e.branch_fps,
            efficiency: e.efficiency,
            seconds: clock.elapsed().as_secs_f64(),
        });
    if args.json {
        let v = serde_json::json!({
            "model": model.name,
            "template": args.config.display().to_string(),
            "budget": ex.options.budget,
            "device": device,
            "clock_mhz": args.clock_mhz,
            "memory_ports": ex.template().memory.ports,
            "space": ex.options.space,
            "seed": args.seed,
            "iterations": args.iterations,
            "outcome": outcome,
            "timeline": timeline,
            "wrote": args.out.display().to_string(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", report(&args, &ex, &outcome, timeline.as_ref()));
    }
    Ok(())
}

/// The design chosen on a timeline of every engine's program (`compiler::estimate`).
#[derive(serde::Serialize)]
struct Timeline {
    cycles_per_round: u64,
    one_round_cycles: u64,
    frames_per_second: f64,
    branch_fps: Vec<f64>,
    efficiency: f64,
    seconds: f64,
}

/// Set a per-branch value from a comma list, one per branch.
fn per_branch(
    d: &mut hwgen::design::Design,
    values: &[u32],
    flag: &str,
    lo: u32,
    hi: u32,
    set: impl Fn(&mut hwgen::design::Branch, u32),
) -> Result<()> {
    if values.is_empty() {
        return Ok(());
    }
    if values.len() != d.branches.len() {
        let names: Vec<&str> = d.branches.iter().map(|b| b.name.as_str()).collect();
        return Err(super::refuse(
            flag,
            format!(
                "{} values for {} branches ({})",
                values.len(),
                names.len(),
                names.join(", ")
            ),
            "give one per branch, in that order",
        ));
    }
    for (b, &v) in d.branches.iter_mut().zip(values) {
        if !(lo..=hi).contains(&v) {
            return Err(super::refuse(
                format!("{flag} {v}"),
                format!("the value for branch {} is outside {lo}..={hi}", b.name),
                format!("give a value from {lo} to {hi}"),
            ));
        }
        set(b, v);
    }
    Ok(())
}

fn header(budget: &Budget, o: &Outcome) -> String {
    let cmd: Vec<String> = std::iter::once("hwgen".to_string())
        .chain(std::env::args().skip(1))
        .collect();
    format!(
        "Written by hwgen dse: {}\n\nPredicted: {:.1} frames/s, efficiency {:.1}%, {} DSP48E2 and {} BRAM18 (budget {} and {}); {}.\n",
        cmd.join(" "),
        o.best.frames_per_second,
        o.best.efficiency * 100.0,
        o.best.dsps,
        o.best.bram18,
        budget.dsps,
        budget.bram18,
        o.best.label
    )
}

/// "geometry 21.2, texture 42.4": each branch that runs frames, with its frames per second.
fn fps_list(names: &[String], fps: &[f64]) -> String {
    let per: Vec<String> = names
        .iter()
        .zip(fps)
        .filter(|(_, &f)| f > 0.0)
        .map(|(n, f)| format!("{n} {f:.1}"))
        .collect();
    per.join(", ")
}

fn line(s: &Scored, names: &[String]) -> String {
    format!(
        "{:.1} frames/s (per branch: {}), efficiency {:.1}%, {} DSP48E2, {} BRAM18, {} LUTs, {} flip-flops, {} engines, {}-bit memory",
        s.frames_per_second,
        fps_list(names, &s.branch_fps),
        s.efficiency * 100.0,
        s.dsps,
        s.bram18,
        s.luts,
        s.ffs,
        s.engines,
        s.memory_width_bits
    )
}

fn report(args: &Args, ex: &Explorer, o: &Outcome, timeline: Option<&Timeline>) -> String {
    let t = ex.template();
    let budget = &ex.options.budget;
    let names: Vec<String> = t.branches.iter().map(|b| b.name.clone()).collect();
    let sp = &ex.options.space;
    let b = &o.best;
    let mut r = String::new();
    let sizes: Vec<String> = sp.sizes.iter().map(|s| format!("{s}x{s}")).collect();
    let _ = writeln!(
        r,
        "hwgen dse: {} on the units of {}",
        args.model.display(),
        args.config.display()
    );
    let _ = writeln!(
        r,
        "  budget{}: {} DSP, {} BRAM18, {}{}{} GB/s ({} memory port(s) of {} bytes per cycle at {} MHz)",
        args.device.as_deref().map_or(String::new(), |d| format!(" ({d})")),
        budget.dsps, budget.bram18,
        budget.luts.map_or(String::new(), |l| format!("{l} LUTs, ")),
        budget.ffs.map_or(String::new(), |f| format!("{f} flip-flops, ")),
        budget.bandwidth_gbs, t.memory.ports, t.memory.bytes_per_cycle, args.clock_mhz
    );
    let _ = writeln!(
        r,
        "  space: arrays {}; h 1..={}; 1..={} units per branch; seed {}, {} perturbations",
        sizes.join(", "),
        sp.max_h,
        sp.max_units,
        args.seed,
        args.iterations
    );
    let _ = writeln!(r, "  best: {}", b.label);
    let _ = writeln!(r, "    {}", line(b, &names));
    let _ = writeln!(
        r,
        "    {} cycles per round (slowest stage {}, busiest memory port {}); {} LUTs, {} FFs (resource model)",
        b.cycles_per_round, b.compute_cycles, b.memory_cycles, b.luts, b.ffs
    );
    if let Some(t) = timeline {
        let _ = writeln!(
            r,
            "    on a timeline of every engine: {} cycles per round ({:+.1}% on the bound; one round alone {}): {:.1} frames/s (per branch: {}), efficiency {:.1}% ({:.1} s)",
            t.cycles_per_round,
            (t.cycles_per_round as f64 / b.cycles_per_round.max(1) as f64 - 1.0) * 100.0,
            t.one_round_cycles,
            t.frames_per_second,
            fps_list(names.as_slice(), &t.branch_fps),
            t.efficiency * 100.0,
            t.seconds
        );
    }
    for (k, s) in o.runner_ups.iter().enumerate() {
        let _ = writeln!(
            r,
            "  runner-up {}: {}\n    {}",
            k + 1,
            s.label,
            line(s, &names)
        );
    }
    let _ = writeln!(
        r,
        "  search: {} designs estimated, {} over budget, {} refused by the compiler, {} by the config's rules; {} stages scheduled, {} reused; {:.1} s",
        o.estimated, o.over_budget, o.refused, o.invalid, o.stages_scheduled, o.stages_reused, o.seconds
    );
    let _ = writeln!(r, "  wrote {}", args.out.display());
    r
}
