use anyhow::Result;
use hwgen::synth::{Report, Resources, Target};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Parameter file (TOML).
    #[arg(long, short)]
    pub config: PathBuf,
    /// What Yosys maps to: generic gates, Xilinx UltraScale+ (DSP48E2, RAMB18/36, LUTs), or
    /// Lattice iCE40 (LUT4s, 4-Kbit RAMs), whose module is also placed and routed on an
    /// HX8K by nextpnr-ice40 for the clock it reaches (small modules only).
    #[arg(long, value_enum, default_value = "generic")]
    pub target: Target,
    /// Synthesize this module of the design instead of the whole (`hwgen_top`).
    #[arg(long, default_value = hwgen::synth::TOP)]
    pub top: String,
    /// Set a parameter of the module synthesized, NAME=VALUE (repeatable), e.g. to try an
    /// array size no config has.
    #[arg(long = "param", value_parser = parse_param)]
    pub params: Vec<(String, i64)>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// NAME=VALUE with an integer VALUE.
fn parse_param(s: &str) -> Result<(String, i64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("--param {s}: expected NAME=VALUE, e.g. CPF=8"))?;
    let ok = !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !ok {
        return Err(format!(
            "--param {s}: {k:?} is not a Verilog parameter name"
        ));
    }
    let v = v
        .parse()
        .map_err(|_| format!("--param {s}: the value {v:?} is not an integer"))?;
    Ok((k.to_string(), v))
}

pub fn run(args: Args) -> Result<()> {
    let design = hwgen::config::load(&args.config)?;
    let tty = std::io::stderr().is_terminal();
    let mut progress = |t: f64, what: &str| {
        // One line per pass; on a terminal the line is overwritten.
        let line = format!("hwgen synth: [{t:6.0} s] {what}");
        if tty {
            eprint!("\r\x1b[2K{}", line.chars().take(100).collect::<String>());
        } else {
            eprintln!("{line}");
        }
    };
    let opts = hwgen::synth::Options {
        target: args.target,
        top: args.top.clone(),
        params: args.params.clone(),
    };
    let report = hwgen::synth::run(&design, &opts, &mut progress);
    if tty {
        eprintln!();
    }
    let report = report?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", table(&report, &args.config.display().to_string()));
    }
    Ok(())
}

/// The report as a text table.
pub fn table(r: &Report, config: &str) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let target = match r.target {
        Target::Generic => "generic gates",
        Target::Xilinx => "Xilinx UltraScale+ (synth_xilinx -family xcup)",
        Target::Ice40 => "Lattice iCE40 (synth_ice40)",
    };
    let _ = writeln!(
        t,
        "{} ({config}), module {}, on {target}, {}, {:.0} s",
        r.design, r.top, r.yosys, r.seconds
    );
    let _ = writeln!(
        t,
        "{:<34} {:>9} {:>8} {:>8} {:>8} {:>6} {:>7} {:>6}",
        "", "cells", "FFs", "LUTs", "LUTRAM", "DSPs", "BRAM18", "mems"
    );
    let row = |t: &mut String, name: &str, x: &Resources| {
        let _ = writeln!(
            t,
            "{:<34} {:>9} {:>8} {:>8} {:>8} {:>6} {:>7} {:>6}",
            name, x.cells, x.ffs, x.luts, x.lutram, x.dsps, x.bram18, x.memories
        );
    };
    row(&mut t, "total", &r.total);
    for u in &r.units {
        let name = format!(
            "unit {}.{} ({}x{} x{})",
            u.branch, u.unit, u.cpf, u.kpf, u.replicas
        );
        row(&mut t, &name, &u.total);
        if let Some(m) = &u.model {
            let _ = writeln!(
                t,
                "{:<34} {:>9} {:>8.0} {:>8.0} {:>8} {:>6.0} {:>7.0} {:>6}",
                "  its resource model", "", m.ffs, m.luts, m.lutram, m.dsps, m.bram18, ""
            );
        }
        if let Some(why) = &u.no_model {
            let _ = writeln!(t, "  (no resource model: {why})");
        }
    }
    if !r.units.is_empty() {
        row(&mut t, "top level (links, arbiters, CSRs)", &r.top_overhead);
    }
    let _ = writeln!(t, "modules (all instances, submodules included):");
    for m in &r.modules {
        let name = format!("  {} x{}", m.module, m.instances);
        row(&mut t, &name, &m.total);
    }
    if r.target == Target::Ice40 {
        let _ = writeln!(t, "4-Kbit block RAMs (SB_RAM40_4K): {}", r.total.ram4k);
    }
    if let Some(p) = &r.place_and_route {
        let _ = match (p.fmax_mhz, &p.error) {
            (Some(f), _) => writeln!(
                t,
                "placed and routed on the {} (nextpnr-ice40, in a harness of {} flip-flops): {f:.2} MHz, {:.0} s",
                p.device, p.harness_ffs, p.seconds
            ),
            (None, Some(e)) => writeln!(t, "no clock: {e}"),
            (None, None) => writeln!(t, "no clock: nextpnr reported no frequency"),
        };
    }
    if let Some(n) = &r.cmos_transistors {
        let _ = writeln!(t, "CMOS transistor estimate (yosys stat -tech cmos): {n}");
    }
    for u in &r.units {
        if let Some(m) = u.macs_per_dsp {
            let _ = writeln!(
                t,
                "unit {}.{}: {m:.2} MACs per DSP in its arrays (F-CAD assumes 2 8-bit MACs per DSP)",
                u.branch, u.unit
            );
        }
    }
    t
}
