use anyhow::Result;
use std::fmt::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Parameter file (TOML) of the target accelerator.
    #[arg(long, short)]
    pub config: PathBuf,
    /// Model file (TOML; see the README for the format) or a quantized ONNX model (.onnx).
    #[arg(long, short)]
    pub model: PathBuf,
    /// Output directory: imem0.hex, dmem.hex (data, then programs), prog_base.hex,
    /// expected.hex, listing.asm, report.json.
    #[arg(long, short, default_value = "out-program")]
    pub out: PathBuf,
    /// Print the estimate (per stage, per frame) and write nothing. On an elastic design it
    /// needs no program, so it also covers models too large for the instruction memory.
    #[arg(long)]
    pub estimate: bool,
    /// With --estimate: print one JSON object.
    #[arg(long, requires = "estimate")]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let design = hwgen::config::load(&args.config)?;
    let model = super::load_model(&args.model)?;
    if args.estimate {
        return estimate(&design, &model, &args);
    }
    let program = super::compile(&design, &model, &args.model, &args.config)?;
    let expected = hwgen::verify::expected(&design, &model, &program);
    let mut files = hwgen::sim::run::images(&program, &expected)?;
    let mut listing = format!(
        "; {} compiled for design {} (hash {:016x})\n",
        model.name,
        design.name,
        design.hash()
    );
    let cores = design.cores();
    for (e, instrs) in program.programs().into_iter().enumerate() {
        if program.elastic.is_some() {
            let (b, u, r) = cores[e];
            listing.push_str(&format!(
                "\n; engine {e}: {}.{}[{r}] (imem{e}.hex)\n",
                b.name, u.name
            ));
        }
        listing.reserve(instrs.len() * 128);
        for (pc, i) in instrs.iter().enumerate() {
            write!(listing, "{pc:5}: ").expect("writing to a String");
            i.push_asm(&mut listing);
            listing.push('\n');
        }
    }
    files.add("listing.asm", listing);
    let mut rep = report(&design, &model, &program);
    if let Some(o) = super::onnx_report(&args.model) {
        // Which ONNX nodes run where, and how each layer was mapped.
        let mut v: serde_json::Value = serde_json::from_str(&rep)?;
        v["onnx"] = o;
        rep = serde_json::to_string_pretty(&v)?;
    }
    files.add("report.json", rep);
    files.write_atomic(&args.out)?;
    match &program.elastic {
        Some(e) => println!(
            "{}: {} engines, {} instructions, {} MACs per frame, {} frames, estimated {} cycles of compute (the slowest stage for its branch's frames; compile --estimate adds the memory ports); wrote {}",
            args.model.display(),
            e.programs.len(),
            e.programs.iter().map(Vec::len).sum::<usize>(),
            program.macs,
            program.frames(),
            e.compute_cycles(&design),
            args.out.display()
        ),
        None => println!(
            "{}: {} instructions, {} MACs, estimated {} cycles; wrote {}",
            args.model.display(),
            program.instrs.len(),
            program.macs,
            program.estimated_cycles(),
            args.out.display()
        ),
    }
    Ok(())
}

pub fn report(
    design: &hwgen::design::Design,
    model: &hwgen::model::Model,
    p: &hwgen::compiler::Program,
) -> String {
    let range = p.output_range();
    let v = serde_json::json!({
        "model": model.name,
        "design": design.name,
        "design_hash": format!("{:016x}", design.hash()),
        "instructions": p.instrs.len(),
        // dmem.hex holds the data and then every engine's program; engine e fetches its
        // program from beat program_base[e] (its prog_base CSR).
        "data_beats": p.dmem.beats(),
        "program_base": p.memory_image().1,
        "macs": p.macs,
        "estimated_cycles": p.estimated_cycles(),
        "output": {
            "tensor": p.output.name, "shape": [p.output.h, p.output.w, p.output.c],
            "first_beat": range.start, "beats": range.end - range.start,
            "format": p.output.format.name(),
            "pad": p.output.pad, "channel_tiles": p.output.tiles,
            // An accumulator output's values are stored as this many slices (`planes`).
            "slices": p.output.planes,
        },
        "layers": p.layers,
        "fused": p.fused,
    });
    let mut v = v;
    if let Some(e) = &p.elastic {
        let cores = design.cores();
        v["frames"] = serde_json::json!(p.frames());
        v["stages"] = serde_json::to_value(&e.stages).expect("serializes");
        v["engines"] = serde_json::Value::Array(
            e.programs
                .iter()
                .enumerate()
                .map(|(i, prog)| {
                    let (b, u, r) = cores[i];
                    serde_json::json!({
                        "engine": i, "branch": b.name, "unit": u.name, "replica": r,
                        "instructions": prog.len(), "image": format!("imem{i}.hex"),
                    })
                })
                .collect(),
        );
        v["frame_outputs"] = serde_json::Value::Array(
            p.outputs
                .iter()
                .map(|o| {
                    serde_json::json!({
                        "tensor": o.name, "frame": o.frame,
                        "first_beat": o.layout.base, "beats": o.layout.size_beats(),
                    })
                })
                .collect(),
        );
        // A pipeline's frame takes its slowest stage, not the sum of its layers.
        v["estimated_cycles_per_frame"] = serde_json::json!(e
            .stages
            .iter()
            .map(|s| s.estimated_cycles)
            .max()
            .unwrap_or(0));
        v["estimated_compute_cycles"] = serde_json::json!(e.compute_cycles(design));
    }
    serde_json::to_string_pretty(&v).expect("report serializes") + "\n"
}

/// `--estimate`.
fn estimate(
    design: &hwgen::design::Design,
    model: &hwgen::model::Model,
    args: &Args,
) -> Result<()> {
    use hwgen::compiler;
    let in_files =
        |e: hwgen::compiler::CompileError| anyhow::anyhow!(e.in_files(&args.model, &args.config));
    if !compiler::is_elastic(design) {
        let p = hwgen::compiler::compile(design, model).map_err(in_files)?;
        let cycles = p.estimated_cycles();
        if args.json {
            println!(
                "{}",
                serde_json::json!({"estimated_cycles": cycles, "macs": p.macs, "layers": p.layers})
            );
        } else {
            println!(
                "{}: estimated {cycles} cycles, {} MACs",
                args.model.display(),
                p.macs
            );
        }
        return Ok(());
    }
    let e = compiler::estimate(design, model).map_err(in_files)?;
    if args.json {
        println!("{}", serde_json::to_string(&e)?);
        return Ok(());
    }
    println!(
        "{} on {} ({} engines, {} PEs); a round is every branch's batch of frames ({}):",
        model.name,
        design.name,
        design.cores().len(),
        e.pes,
        compiler::round_label(design, &e.branch_frames)
    );
    for s in &e.stages {
        println!(
            "  stage {}.{} (engines {:?}): {} layers, {} cycles per frame{}; {}",
            s.branch,
            s.unit,
            s.engines,
            s.layers.len(),
            s.estimated_cycles,
            s.in_bands(),
            s.traffic()
        );
        for note in &s.handoffs {
            println!("    {note}");
        }
    }
    let ports = match e.port_beats.len() {
        1 => "memory port".to_string(),
        n => format!(
            "busiest of {n} memory ports ({} beats)",
            e.port_beats
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    println!(
        "  per round, the search's bound: slowest stage {} cycles (its branch's frames); {ports} {} cycles ({} beats in all at {} bytes per cycle and port)",
        e.compute_cycles, e.memory_cycles, e.beats, design.memory.bytes_per_cycle
    );
    match e.one_round_cycles {
        Some(one) => println!(
            "  timeline of every engine (programs of one and two rounds): {one} cycles for one round alone, {} per round in steady state ({:+.1}% against the bound)",
            e.cycles_per_round,
            (e.cycles_per_round as f64 / e.bound_cycles_per_round.max(1) as f64 - 1.0) * 100.0
        ),
        None => println!("  no timeline of every engine (two rounds' programs do not fit the ISA's addresses): the round is the bound"),
    }
    let fps: Vec<String> = design
        .branches
        .iter()
        .zip(e.branch_frames.iter().zip(&e.branch_fps))
        .filter(|(_, (&f, _))| f > 0)
        .map(|(b, (_, fps))| format!("{} {fps:.1}", b.name))
        .collect();
    println!(
        "  {} cycles per round, {} per frame of the largest batch: {:.1} frames/s at {} MHz (per branch: {}); efficiency {:.1}% ({} MACs per frame of every branch)",
        e.cycles_per_round,
        e.cycles_per_frame,
        e.frames_per_second,
        design.control.clock_mhz,
        fps.join(", "),
        e.efficiency * 100.0,
        e.macs_per_frame
    );
    match hwgen::synth::model::design(design) {
        Ok(r) => {
            let top = hwgen::synth::model::top(design);
            println!(
                "  resource model (Xilinx UltraScale+, src/synth/model.rs): {:.0} DSP48E2, {:.0} BRAM18, {:.0} LUTs ({:.0} logic, {:.0} LUT RAM: FIFOs, small output buffers, hand-off buffers; {:.0} of the LUTs in the top level's links, arbiters and CSRs), {:.0} FFs",
                r.dsps,
                r.bram18,
                r.luts + r.lutram,
                r.luts,
                r.lutram,
                top.luts + top.lutram,
                r.ffs
            )
        }
        Err(why) => println!("  no resource model: {why}"),
    }
    Ok(())
}
