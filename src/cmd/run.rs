use anyhow::{bail, Result};
use hwgen::onnx::hostops::{Host, HostVal};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Parameter file (TOML) of the accelerator.
    #[arg(long, short)]
    pub config: PathBuf,
    /// Quantized ONNX model (QDQ or QOperator).
    #[arg(long, short)]
    pub model: PathBuf,
    /// The graph input as a float32 .npy ([1, C, H, W]; dimensions of 1 may be left out).
    #[arg(long, short)]
    pub input: PathBuf,
    /// Where the graph's output goes: a .npy file, or with several outputs a directory
    /// holding OUTPUT_NAME.npy for each.
    #[arg(long, short)]
    pub output: PathBuf,
    /// Run on the ISA interpreter instead of the RTL in Verilator.
    #[arg(long)]
    pub interp: bool,
    /// Where verilated models are cached (default: $HWGEN_CACHE or ~/.cache/hwgen).
    #[arg(long)]
    pub cache: Option<PathBuf>,
}

/// Split the graph between the accelerator and the host, run the accelerator's part on the
/// input quantized as the graph does (RTL or interpreter, checked against the golden model),
/// hand its tensors to the host, run the rest there, and write every graph output as the
/// graph declares it.
pub fn run(args: Args) -> Result<()> {
    let design = hwgen::config::load(&args.config)?;
    if !args
        .model
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
    {
        bail!(
            "error: {}: hwgen run takes a quantized ONNX model\n  fix:  use hwgen sim for a model file",
            args.model.display()
        );
    }
    let x = hwgen::model::npy::read_f32(&args.input).map_err(|e| {
        anyhow::anyhow!(
            "error: {}: {}\n  fix:  {}",
            args.input.display(),
            e.rule,
            e.fix
        )
    })?;
    let dir = tempfile::tempdir()?;
    let part = hwgen::onnx::partition(&args.model, "data", Some("input.npy"))?;
    let g = &part.model.graph;
    let mut host = Host::new(g);
    let input = g
        .inputs
        .iter()
        .find(|i| !g.initializers.iter().any(|t| t.name == i.name));
    if let Some(i) = input {
        host.known.insert(
            i.name.clone(),
            HostVal {
                dims: x.shape.clone(),
                data: x.data.clone(),
                elem: hwgen::onnx::proto::dtype::FLOAT,
            },
        );
    }
    if let Some(e) = &part.reason {
        let at = g.nodes.get(part.cut).map_or(String::new(), |n| {
            format!(" from node {} ({})", part.cut, n.op_type)
        });
        eprintln!("hwgen run: the host runs the graph{at}: {}", e.rule);
    }
    let how = match &part.accel {
        Some(accel) => accelerate(&args, &design, accel, &x, dir.path(), &mut host)?,
        None => {
            eprintln!(
                "warning: no node of {} runs on the accelerator; the whole graph runs on the host",
                args.model.display()
            );
            "host only".to_string()
        }
    };
    let outs = host
        .outputs()
        .map_err(|e| anyhow::anyhow!("error: {}: {e}", args.model.display()))?;
    let mut files = Vec::new();
    for (name, v) in &outs {
        let bytes = hwgen::onnx::host::npy_of(v).map_err(|e| {
            anyhow::anyhow!("error: {}: output '{name}': {e}", args.model.display())
        })?;
        files.push((name.clone(), bytes));
    }
    write_outputs(&args.output, &files)?;
    let host_nodes = host.ran.len();
    println!(
        "{} on {}: {how}; {host_nodes} nodes on the host; wrote {}",
        args.model.display(),
        design.name,
        args.output.display()
    );
    Ok(())
}

/// Run the accelerator's part and hand its tensors to the host; how it ran.
fn accelerate(
    args: &Args,
    design: &hwgen::design::Design,
    accel: &hwgen::onnx::Imported,
    x: &hwgen::model::npy::NpyF32,
    dir: &std::path::Path,
    host: &mut Host,
) -> Result<String> {
    let q = hwgen::onnx::host::quantize_input(&accel.input, &x.shape, &x.data).map_err(|e| {
        anyhow::anyhow!(
            "error: {}: {e}\n  fix:  give the graph input's float32 tensor",
            args.input.display()
        )
    })?;
    let [h, w, c] = accel.input.shape;
    hwgen::model::npy::write_i64(&dir.join("input.npy"), &[h, w, c], &q)?;
    let toml = dir.join("model.toml");
    let imported = hwgen::onnx::write_with_partition(&args.model, &toml, Some("input.npy"))?;
    let model = hwgen::model::load(&toml)?;
    let program = super::compile(design, &model, &args.model, &args.config)?;
    let expected = hwgen::verify::expected(design, &model, &program);
    let (mem, how) = if args.interp {
        (
            hwgen::verify::interpret(design, &program)?,
            "ISA interpreter".to_string(),
        )
    } else {
        let cache = args
            .cache
            .clone()
            .unwrap_or_else(hwgen::sim::run::default_cache);
        let mem_words = hwgen::sim::run::mem_words_for(design, program.footprint_beats());
        let with = hwgen::sim::run::Instrument {
            mem_words: Some(mem_words),
            ..Default::default()
        };
        let exe = hwgen::sim::run::build_with(design, &cache, with)?;
        let opts = hwgen::sim::run::RunOptions {
            mem_words: Some(mem_words),
            ..Default::default()
        };
        let r = hwgen::sim::run::run_with(design, &exe, &program, &expected, &opts)?;
        (r.memory, format!("RTL, {} cycles", r.cycles))
    };
    let cmp = hwgen::verify::compare(&program, &expected, &mem);
    if !cmp.matched() {
        bail!(
            "the {how} run differs from the golden model in {} {}",
            cmp.differing,
            cmp.unit
        );
    }
    for o in &imported.outputs {
        let Some(region) = program
            .outputs
            .iter()
            .find(|r| r.name == o.layer && r.frame == 0)
        else {
            bail!("no output region for layer {}", o.layer);
        };
        let t = hwgen::compiler::passes::encode::read_tensor(&mem, &region.layout);
        host.known
            .insert(o.onnx.clone(), hwgen::onnx::host::handoff_val(o, &t.data));
    }
    Ok(format!(
        "{} layers on the {how}, bit-exact against the golden model",
        imported.notes.len()
    ))
}

/// One output: the file, written atomically. Several: a directory of NAME.npy, replaced
/// as a whole.
fn write_outputs(out: &std::path::Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    if let [(_, bytes)] = files {
        hwgen::filemap::write_bytes_atomic(out, bytes)?;
        return Ok(());
    }
    let mut map = hwgen::filemap::FileMap::new();
    for (name, bytes) in files {
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        map.add_bytes(format!("{safe}.npy"), bytes.clone());
    }
    map.write_atomic(out)?;
    Ok(())
}
