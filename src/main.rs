//! The `hwgen` command line.

mod cmd;

use clap::{Parser, Subcommand};
use hwgen::refusal::Refusal;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "hwgen",
    version,
    about = "Generate DNN accelerators: TOML parameters in, lint-clean Verilog out"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a parameter file and write the accelerator's Verilog, file list and manifest.
    Emit(cmd::emit::Args),
    /// Validate a parameter file only.
    Check(cmd::check::Args),
    /// Print the instruction-set tables (markdown).
    Isa(cmd::isa::Args),
    /// Turn a quantized ONNX model into a model file (and its tensors).
    Import(cmd::import::Args),
    /// Compile a model into the instruction and data memories of a Design.
    Compile(cmd::compile::Args),
    /// Run a quantized ONNX model on float .npy data: the accelerator's part in the RTL (or
    /// the ISA interpreter), the rest on the host, the outputs as the graph declares them.
    Run(cmd::run::Args),
    /// Compile a model, run it on the generated RTL in Verilator and compare with the golden model.
    Sim(cmd::sim::Args),
    /// Synthesize the emitted RTL with Yosys and report resources per unit and module.
    Synth(cmd::synth::Args),
    /// Search the elastic Design with the best throughput for a model within DSP, block-RAM
    /// and bandwidth budgets, and write its parameter file.
    Dse(cmd::dse::Args),
}

impl Command {
    /// The subcommand as typed.
    fn name(&self) -> &'static str {
        match self {
            Command::Emit(_) => "emit",
            Command::Check(_) => "check",
            Command::Isa(_) => "isa",
            Command::Import(_) => "import",
            Command::Compile(_) => "compile",
            Command::Run(_) => "run",
            Command::Sim(_) => "sim",
            Command::Synth(_) => "synth",
            Command::Dse(_) => "dse",
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let name = cli.command.name();
    let result = match cli.command {
        Command::Emit(a) => cmd::emit::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Isa(a) => cmd::isa::run(a),
        Command::Import(a) => cmd::import::run(a),
        Command::Compile(a) => cmd::compile::run(a),
        Command::Sim(a) => cmd::sim::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Synth(a) => cmd::synth::run(a),
        Command::Dse(a) => cmd::dse::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", shaped(name, &format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// An error as every refusal prints: as it is when it has the shape; otherwise (an error
/// no module put in words: a bug to report, but never a bare message) named after the
/// command.
fn shaped(command: &str, text: &str) -> String {
    if Refusal::is_shaped(text) {
        return text.to_string();
    }
    Refusal::new(
        format!("hwgen {command}"),
        text.split_whitespace().collect::<Vec<_>>().join(" "),
        format!("check the files and arguments given (`hwgen {command} --help` describes them); if they are right, report this message with them"),
    )
    .to_string()
}

/// A command line clap refuses, in the shape of every refusal (what, rule, fix; exit 2, as
/// usage errors are); help and version print as clap prints them.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return match e.kind() {
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => ExitCode::from(2),
            _ => ExitCode::SUCCESS,
        };
    }
    let text = e.render().to_string();
    let mut parts = text.split("\n\n");
    let rule = parts
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let usage = parts
        .find(|p| p.trim_start().starts_with("Usage:"))
        .map(|u| u.split_whitespace().collect::<Vec<_>>().join(" "));
    let tip = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("tip: "))
        .map(str::to_string);
    let arg = match e.get(clap::error::ContextKind::InvalidArg) {
        Some(clap::error::ContextValue::String(a)) => Some(a.clone()),
        _ => None,
    };
    let fix = match (tip, arg, usage) {
        (Some(t), _, _) => t,
        (None, Some(a), _)
            if e.kind() == ErrorKind::InvalidValue || e.kind() == ErrorKind::ValueValidation =>
        {
            format!("give {a} a value the rule allows (--help describes each argument)")
        }
        (None, _, Some(u)) => format!(
            "write the command as {} (--help describes each argument)",
            u.trim_start_matches("Usage: ")
        ),
        _ => "see hwgen --help for the commands and their arguments".to_string(),
    };
    eprintln!("{}", Refusal::new("command line", rule, fix));
    ExitCode::from(2)
}
