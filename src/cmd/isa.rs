use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Parameter file (TOML); validated first. The instruction set is the same for every design.
    #[arg(long, short)]
    pub config: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    if let Some(c) = &args.config {
        hwgen::config::load(c)?;
    }
    print!("{}", hwgen::isa::markdown());
    Ok(())
}
