use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Quantized ONNX model (QDQ or QOperator, as onnxruntime's quantize_static writes it).
    pub onnx: PathBuf,
    /// Model file to write; its tensors go to a directory beside it (NAME.<hash>.data/).
    #[arg(long, short)]
    pub out: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let imported = hwgen::onnx::write(&args.onnx, &args.out)?;
    let inputs: Vec<String> = imported
        .inputs
        .iter()
        .map(|q| {
            format!(
                "input '{}' {:?} ({}, scale {:e}, zero point {})",
                q.name,
                q.shape,
                if q.signed { "int8" } else { "uint8" },
                q.scale,
                q.zero_point
            )
        })
        .collect();
    println!(
        "{} -> {}: {}",
        args.onnx.display(),
        args.out.display(),
        inputs.join("; ")
    );
    for n in &imported.notes {
        println!("  {n}");
    }
    Ok(())
}
