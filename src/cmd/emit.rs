use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Parameter file (TOML).
    #[arg(long, short)]
    pub config: PathBuf,
    /// Output directory; receives rtl/, hwgen.f and manifest.json.
    #[arg(long, short, default_value = "out")]
    pub out: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let design = hwgen::config::load(&args.config)?;
    let files = hwgen::rtl::emit(&design);
    files.write_atomic(&args.out)?;
    let n = files.paths().filter(|p| p.ends_with(".v")).count();
    println!(
        "{}: wrote {} Verilog modules, hwgen.f and manifest.json to {} (hash {:016x})",
        args.config.display(),
        n,
        args.out.display(),
        design.hash()
    );
    Ok(())
}
