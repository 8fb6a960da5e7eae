//! One file per subcommand.

pub mod check;
pub mod compile;
pub mod emit;
pub mod isa;
pub mod sim;

use std::path::Path;

/// Compile `model` for `design`; an error names the model and config files.
pub fn compile(
    design: &hwgen::design::Design,
    model: &hwgen::model::Model,
    model_file: &Path,
    config_file: &Path,
) -> anyhow::Result<hwgen::compiler::Program> {
    hwgen::compiler::compile(design, model)
        .map_err(|e| anyhow::anyhow!(e.in_files(model_file, config_file)))
}
