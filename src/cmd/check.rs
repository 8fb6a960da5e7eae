use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Parameter file (TOML).
    #[arg(long, short)]
    pub config: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let design = hwgen::config::load(&args.config)?;
    let pes: u64 = design
        .cores()
        .iter()
        .map(|(_, u, _)| u64::from(u.cpf * u.kpf))
        .sum();
    println!(
        "{}: ok (design {}, {} engine(s), {} PEs, hash {:016x})",
        args.config.display(),
        design.name,
        design.cores().len(),
        pes,
        design.hash()
    );
    Ok(())
}
