//! The `hwgen` command line.

mod cmd;

use clap::{Parser, Subcommand};
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

fn main() -> ExitCode {
    let cli = Cli::parse();
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
            eprintln!("{e:#}");
            ExitCode::FAILURE
        }
    }
}
