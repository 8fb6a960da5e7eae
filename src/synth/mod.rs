//! `hwgen synth`: Yosys on the emitted RTL, and the resources it reports per module, per
//! unit and in all.
//!
//! The design is synthesized hierarchically (nothing flattened), so every module keeps its
//! own cells and the instance tree says how often it occurs. Two targets:
//!
//! - `generic`: Yosys' generic gates (`synth` to its `fine` step, then `techmap` and
//!   `abc -fast`); memories stay whole `$mem_v2` cells rather than becoming flip-flops.
//! - `xilinx`: `synth_xilinx -family xcup` (UltraScale+, F-CAD's ZU9CG): DSP48E2, RAMB18E2
//!   and RAMB36E2 (counted as 18-Kbit blocks, two per RAMB36 as F-CAD counts BRAM), LUTs,
//!   LUT RAM and flip-flops.
//! - `ice40`: `synth_ice40` (Lattice iCE40): 4-input LUTs, carries, flip-flops, 4-Kbit block
//!   RAMs; then the module in a harness, placed and routed by `nextpnr-ice40` for the clock
//!   it reaches (`pnr`; small modules only).
//!
//! A unit's resources are those of the core instances of its replicas (`u_<branch>_<unit>_r<i>`
//! in `hwgen_top`, found in the synthesized top's netlist); the rest of the top (links,
//! arbiters, CSRs) is the top-level overhead.

pub mod model;
pub mod pnr;
mod stat;

pub use stat::{Cells, Hierarchy};

use crate::design::Design;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// What Yosys maps the design to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    Generic,
    Xilinx,
    Ice40,
}

impl Target {
    /// The synthesis commands after the sources are read.
    fn script(self, top: &str) -> String {
        match self {
            Target::Generic => format!(
                "synth -top {top} -run begin:fine; opt -fast -full; techmap; opt -fast; abc -fast; opt_clean"
            ),
            Target::Xilinx => format!("synth_xilinx -family xcup -top {top}"),
            Target::Ice40 => format!("synth_ice40 -top {top} -noflatten"),
        }
    }
}

/// Resource counts of one part of the design, by the classes a target's budget uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Resources {
    /// Every leaf cell.
    pub cells: u64,
    /// Flip-flops and latches.
    pub ffs: u64,
    /// Logic LUTs (xilinx; 4-input LUTs, ice40).
    pub luts: u64,
    /// LUTs used as memory or shift registers (xilinx), in LUTs.
    pub lutram: u64,
    /// DSP slices (xilinx; SB_MAC16, ice40).
    pub dsps: u64,
    /// Block RAM in 18-Kbit blocks: RAMB18 one, RAMB36 two (xilinx).
    pub bram18: u64,
    /// 4-Kbit block RAMs, SB_RAM40_4K (ice40).
    pub ram4k: u64,
    /// Whole memories left as `$mem_v2` cells (generic).
    pub memories: u64,
}

impl Resources {
    /// The classes of a count of leaf cells by type.
    pub fn of(cells: &Cells) -> Resources {
        let mut r = Resources::default();
        for (t, &n) in cells {
            r.cells += n;
            let t = t.as_str();
            if t.starts_with("$_DFF")
                || t.starts_with("$_SDFF")
                || t.starts_with("$_DLATCH")
                || t.starts_with("$_ALDFF")
                || t.starts_with("$_DFFSR")
                || matches!(t, "FDRE" | "FDSE" | "FDCE" | "FDPE" | "LDCE" | "LDPE")
                || t.starts_with("SB_DFF")
            {
                r.ffs += n;
            } else if (t.len() == 4 && t.starts_with("LUT")) || t == "SB_LUT4" {
                r.luts += n;
            } else if let Some(l) = lutram_luts(t) {
                r.lutram += n * l;
            } else if t.starts_with("DSP48") || t == "SB_MAC16" {
                r.dsps += n;
            } else if t.starts_with("SB_RAM40") {
                r.ram4k += n;
            } else if t.starts_with("RAMB18") {
                r.bram18 += n;
            } else if t.starts_with("RAMB36") {
                r.bram18 += 2 * n;
            } else if t.starts_with("$mem") {
                r.memories += n;
            }
        }
        r
    }
}

/// LUTs a Xilinx LUT-RAM or shift-register primitive occupies.
fn lutram_luts(t: &str) -> Option<u64> {
    Some(match t {
        "RAM32M16" | "RAM64M8" => 8,
        "RAM32M" | "RAM64M" | "RAM128X1D" | "RAM256X1S" => 4,
        "RAM32X1D" | "RAM64X1D" | "RAM128X1S" => 2,
        "RAM32X1S" | "RAM64X1S" | "SRL16E" | "SRLC32E" => 1,
        _ => return None,
    })
}

/// One module of the synthesized design (its parameterisations together).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModuleRow {
    pub module: String,
    /// Distinct parameterisations.
    pub variants: usize,
    /// Instances in the whole design.
    pub instances: u64,
    /// Resources of all its instances together, submodules included.
    pub total: Resources,
}

/// One unit: its replicas' cores.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UnitRow {
    pub branch: String,
    pub unit: String,
    pub cpf: u32,
    pub kpf: u32,
    pub replicas: u32,
    /// All of its replicas together.
    pub total: Resources,
    /// The unit's MACs per DSP slice, as synthesis mapped its arrays (xilinx).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub macs_per_dsp: Option<f64>,
    /// What the resource model (`model.rs`) predicts for its replicas (xilinx).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<model::Predicted>,
    /// The resource model's features of one of its engines (`model::features`), which
    /// `scripts/fit_resources.sh` fits on.
    pub model_features: [f64; model::FEATURES],
    /// The LUT RAM of one of its engines the model derives rather than fits
    /// (`model::derived_lutram`); the fit takes it out of the synthesized LUT RAM first.
    pub model_lutram_derived: f64,
    /// Why the resource model does not apply to the unit (xilinx).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_model: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    pub design: String,
    pub target: Target,
    /// The module synthesized (`hwgen_top`: the whole design).
    pub top: String,
    pub yosys: String,
    pub seconds: f64,
    /// Yosys' CMOS transistor estimate (`stat -tech cmos`, generic target); a trailing `+`
    /// means cells it cannot price (flip-flops with reset) are left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmos_transistors: Option<String>,
    pub total: Resources,
    pub units: Vec<UnitRow>,
    /// What is outside every unit's cores: links, joins, arbiters, CSRs.
    pub top_overhead: Resources,
    /// What the resource model predicts for the top overhead (xilinx, whole design).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_model: Option<model::Predicted>,
    /// The resource model's features of the top level (`model::top_features`), which
    /// `scripts/fit_resources.sh` fits on.
    pub top_features: [f64; model::TOP_FEATURES],
    pub modules: Vec<ModuleRow>,
    /// Every leaf cell type of the whole design and its count.
    pub cells: Cells,
    /// The module placed and routed on an iCE40 (ice40).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub place_and_route: Option<pnr::PlaceAndRoute>,
}

#[derive(Debug)]
pub enum SynthError {
    /// The tool (yosys, nextpnr-ice40) is not installed.
    Missing(&'static str),
    Failed {
        log: String,
    },
    Io(String),
    Parse(String),
    /// `--top` names no module of the emitted design.
    NoModule {
        top: String,
        modules: Vec<String>,
    },
    /// A `--param` the module does not have, or a size of 0 or less.
    Param {
        given: String,
        rule: String,
        fix: String,
    },
}

impl std::fmt::Display for SynthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::refusal::{indented, Refusal};
        let r = match self {
            SynthError::Missing(tool) => Refusal::new(
                tool,
                format!("hwgen synth runs {tool}, which is not on PATH"),
                format!("install it with scripts/setup.sh (apt-get install {tool})"),
            ),
            SynthError::Failed { log } => Refusal::new(
                "yosys",
                format!("it failed; the end of its log:{}", indented(log)),
                "the log names the module and the line: emitted RTL that does not synthesize is a bug in hwgen; report it with the config",
            ),
            SynthError::Io(e) => Refusal::new(
                "the synthesis",
                format!("a file of the run could not be read or written: {e}"),
                "check that the temporary directory is writable and not full",
            ),
            SynthError::Parse(e) => Refusal::new(
                "yosys' statistics",
                format!("they cannot be read: {e}"),
                "check that the yosys on PATH is the one scripts/setup.sh installs (Debian's)",
            ),
            SynthError::Param { given, rule, fix } => Refusal::new(format!("--param {given}"), rule, fix),
            SynthError::NoModule { top, modules } => Refusal::new(
                format!("--top {top}"),
                format!("the module synthesized must be one of the design's: {}", modules.join(", ")),
                "give --top one of them (hwgen_top, the default, is the whole design)",
            ),
        };
        write!(f, "{r}")
    }
}

impl std::error::Error for SynthError {}

/// The top module of every emitted design.
pub const TOP: &str = "hwgen_top";

/// The module of an engine's systolic array (its MACs).
const ARRAY: &str = "hwgen_systolic_array";

/// What to synthesize: the whole design (`hwgen_top`, no parameters), or one module of it
/// with some of its parameters set (`chparam`), as `scripts/area.sh` does for the compute
/// unit at a size no config has.
#[derive(Debug, Clone)]
pub struct Options {
    pub target: Target,
    pub top: String,
    pub params: Vec<(String, i64)>,
}

impl Options {
    pub fn whole(target: Target) -> Options {
        Options {
            target,
            top: TOP.to_string(),
            params: Vec::new(),
        }
    }
}

/// The parameters a module's header declares (`parameter [type] NAME = ...`), in order.
pub fn module_params(text: &str) -> Vec<String> {
    let header = text.split(") (").next().unwrap_or("");
    header
        .lines()
        .filter_map(|l| l.trim().strip_prefix("parameter "))
        .filter_map(|rest| {
            let lhs = rest.split('=').next()?;
            lhs.split_whitespace().last().map(str::to_string)
        })
        .collect()
}

/// Every `--param` names a parameter of `top`, and a size (a name ending in `PF`, such as
/// CPF and KPF, or in `_DEPTH`, or starting with `NUM_`) is at least 1.
fn check_params(top: &str, known: &[String], params: &[(String, i64)]) -> Result<(), SynthError> {
    for (k, v) in params {
        if !known.iter().any(|n| n == k) {
            return Err(SynthError::Param {
                given: format!("{k}={v}"),
                rule: format!(
                    "{top} has no parameter {k}; its parameters are {}",
                    known.join(", ")
                ),
                fix: format!("set one of {top}'s parameters, or choose the module with --top"),
            });
        }
        let size = k.ends_with("PF") || k.ends_with("_DEPTH") || k.starts_with("NUM_");
        if size && *v < 1 {
            return Err(SynthError::Param {
                given: format!("{k}={v}"),
                rule: format!("{k} is a size: at least 1"),
                fix: format!("use {k}=8, for example"),
            });
        }
    }
    Ok(())
}

/// Synthesize `design` as `opts` says, in a temporary directory. `progress` receives each
/// pass Yosys starts (its top two levels of steps) with the seconds since the start.
pub fn run(
    design: &Design,
    opts: &Options,
    progress: &mut dyn FnMut(f64, &str),
) -> Result<Report, SynthError> {
    let top = opts.top.as_str();
    let target = opts.target;
    let dir =
        tempfile::tempdir().map_err(|e| SynthError::Io(format!("temporary directory: {e}")))?;
    let files = crate::rtl::emit(design);
    files
        .write_atomic(dir.path())
        .map_err(|e| SynthError::Io(e.to_string()))?;
    let sources: Vec<String> = files
        .paths()
        .filter(|p| p.ends_with(".v"))
        .map(str::to_string)
        .collect();
    let modules: Vec<String> = sources
        .iter()
        .filter_map(|p| p.strip_prefix("rtl/")?.strip_suffix(".v"))
        .map(str::to_string)
        .collect();
    if !modules.iter().any(|m| m == top) {
        return Err(SynthError::NoModule {
            top: top.to_string(),
            modules,
        });
    }
    let text = files.get(&format!("rtl/{top}.v")).unwrap_or_default();
    check_params(top, &module_params(text), &opts.params)?;
    let chparam = match opts.params.is_empty() {
        true => String::new(),
        false => format!(
            "chparam {} {top}\n",
            opts.params
                .iter()
                .map(|(k, v)| format!("-set {k} {v}"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    };
    let cmos = match target {
        Target::Generic => "tee -q -o cmos.txt stat -tech cmos\n",
        Target::Xilinx | Target::Ice40 => "",
    };
    let script = format!(
        "read_verilog -Irtl {}\n{chparam}{}\ntee -q -o stat.txt stat\n{cmos}select {top}\nwrite_verilog -noattr -selected top_netlist.v\n",
        sources.join(" "),
        target.script(top)
    );
    std::fs::write(dir.path().join("synth.ys"), &script)
        .map_err(|e| SynthError::Io(format!("synth.ys: {e}")))?;
    let start = Instant::now();
    let log = yosys(dir.path(), &start, progress)?;
    let read = |f: &str| {
        std::fs::read_to_string(dir.path().join(f)).map_err(|e| SynthError::Io(format!("{f}: {e}")))
    };
    let hier = stat::parse(&read("stat.txt")?).map_err(SynthError::Parse)?;
    let transistors = match target {
        Target::Generic => stat::transistors(&read("cmos.txt")?),
        Target::Xilinx | Target::Ice40 => None,
    };
    let netlist = read("top_netlist.v")?;
    let version = log
        .lines()
        .find(|l| l.trim().starts_with("Yosys "))
        .map(|l| l.trim().to_string())
        .unwrap_or_default();
    let mut r = report(design, (target, top), &hier, &netlist, version)?;
    r.cmos_transistors = transistors;
    if target == Target::Ice40 {
        let ports = pnr::ports(&netlist);
        let mut pr = |t: f64, what: &str| progress(start.elapsed().as_secs_f64().max(t), what);
        r.place_and_route = Some(pnr::run(
            dir.path(),
            &sources,
            (top, &opts.params),
            &ports,
            (r.total.luts, r.total.ram4k),
            &mut pr,
        )?);
    }
    r.seconds = start.elapsed().as_secs_f64();
    Ok(r)
}

/// Run Yosys on `synth.ys` in `dir`, reporting its passes; its log.
fn yosys(
    dir: &Path,
    start: &Instant,
    progress: &mut dyn FnMut(f64, &str),
) -> Result<String, SynthError> {
    let mut child = Command::new("yosys")
        .arg("-s")
        .arg("synth.ys")
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SynthError::Missing("yosys"),
            _ => SynthError::Io(format!("yosys: {e}")),
        })?;
    let stdout = child.stdout.take().expect("piped");
    let mut log = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| SynthError::Io(format!("yosys output: {e}")))?;
        if let Some(what) = pass_step(&line) {
            progress(start.elapsed().as_secs_f64(), what);
        }
        log.push_str(&line);
        log.push('\n');
    }
    let out = child
        .wait_with_output()
        .map_err(|e| SynthError::Io(format!("yosys: {e}")))?;
    if !out.status.success() {
        let tail: Vec<&str> = log.lines().rev().take(30).collect();
        let mut text: String = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        return Err(SynthError::Failed { log: text });
    }
    Ok(log)
}

/// "Executing ABC pass (...)" from a log line "2.23. Executing ABC pass (...)." of the top
/// two levels of Yosys' step numbers.
fn pass_step(line: &str) -> Option<&str> {
    let (num, rest) = line.split_once(". Executing ")?;
    let depth = num.split('.').count();
    let numeric = num
        .split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    // Reading each source file is not worth a line.
    (numeric && depth <= 2 && !rest.contains(" frontend")).then(|| rest.trim_end_matches('.'))
}

/// The report from the parsed statistics and the top's netlist.
fn report(
    design: &Design,
    (target, top): (Target, &str),
    hier: &Hierarchy,
    netlist: &str,
    yosys: String,
) -> Result<Report, SynthError> {
    let totals = hier.totals();
    // A module given parameters is named `$paramod...\<top>`: the one of that base name.
    let mut named = totals.keys().filter(|m| stat::base_name(m) == top);
    let top = match (totals.contains_key(top), named.next(), named.next()) {
        (true, _, _) => top.to_string(),
        (false, Some(m), None) => m.clone(),
        _ => {
            return Err(SynthError::Parse(format!(
                "no module {top} in the statistics"
            )))
        }
    };
    let counts = hier.instances(&top);
    let total_cells = &totals[&top];
    // The tree's arithmetic against Yosys' own total for the design.
    let cells: u64 = total_cells.values().sum();
    if let Some(n) = hier.reported_total.filter(|&n| n != cells) {
        return Err(SynthError::Parse(format!(
            "the modules' cells add up to {cells} through the instance tree, Yosys counts {n}"
        )));
    }
    let instances = stat::instances_in(netlist);
    let mut units = Vec::new();
    let mut in_units = Cells::new();
    for b in design.branches.iter().filter(|_| top == TOP) {
        for u in &b.units {
            let (mut cells, mut arrays) = (Cells::new(), Cells::new());
            for r in 0..u.h {
                let inst =
                    crate::names::instance(&crate::names::core_instance(&b.name, &u.name, r));
                let module = instances.get(&inst).ok_or_else(|| {
                    SynthError::Parse(format!("no instance {inst} in the synthesized {TOP}"))
                })?;
                stat::add(&mut cells, &totals[module], 1);
                stat::add(&mut arrays, &hier.within(&totals, module, ARRAY), 1);
            }
            stat::add(&mut in_units, &cells, 1);
            let array_dsps = Resources::of(&arrays).dsps;
            let h = f64::from(u.h);
            let predicted = (target == Target::Xilinx).then(|| {
                model::replica(design, u).map(|e| model::Predicted {
                    dsps: e.dsps * h,
                    bram18: e.bram18 * h,
                    luts: e.luts * h,
                    lutram: e.lutram * h,
                    ffs: e.ffs * h,
                })
            });
            let macs = u64::from(u.cpf * u.kpf * u.h);
            units.push(UnitRow {
                branch: b.name.clone(),
                unit: u.name.clone(),
                cpf: u.cpf,
                kpf: u.kpf,
                replicas: u.h,
                macs_per_dsp: (array_dsps > 0).then(|| macs as f64 / array_dsps as f64),
                model: predicted.as_ref().and_then(|p| p.as_ref().ok()).copied(),
                no_model: predicted.and_then(Result::err),
                model_features: model::features(design, u),
                model_lutram_derived: model::derived_lutram(u),
                total: Resources::of(&cells),
            });
        }
    }
    let mut overhead = total_cells.clone();
    stat::subtract(&mut overhead, &in_units);
    let mut modules: BTreeMap<String, ModuleRow> = BTreeMap::new();
    for (name, n) in &counts {
        let base = stat::base_name(name).to_string();
        let row = modules.entry(base.clone()).or_insert(ModuleRow {
            module: base,
            variants: 0,
            instances: 0,
            total: Resources::default(),
        });
        row.variants += 1;
        row.instances += n;
        let mut all = Cells::new();
        stat::add(&mut all, &totals[name], *n);
        let r = Resources::of(&all);
        row.total = sum(&row.total, &r);
    }
    Ok(Report {
        design: design.name.clone(),
        target,
        top: stat::base_name(&top).to_string(),
        yosys,
        seconds: 0.0,
        cmos_transistors: None,
        total: Resources::of(total_cells),
        units,
        top_overhead: Resources::of(&overhead),
        top_model: (target == Target::Xilinx && top == TOP).then(|| model::top(design)),
        top_features: model::top_features(design),
        modules: modules.into_values().collect(),
        cells: total_cells.clone(),
        place_and_route: None,
    })
}

fn sum(a: &Resources, b: &Resources) -> Resources {
    Resources {
        cells: a.cells + b.cells,
        ffs: a.ffs + b.ffs,
        luts: a.luts + b.luts,
        lutram: a.lutram + b.lutram,
        dsps: a.dsps + b.dsps,
        bram18: a.bram18 + b.bram18,
        ram4k: a.ram4k + b.ram4k,
        memories: a.memories + b.memories,
    }
}

#[cfg(test)]
mod tests;
