//! One file per subcommand.

pub mod check;
pub mod compile;
pub mod emit;
pub mod import;
pub mod isa;
pub mod run;
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

/// A model file, or a quantized ONNX model (`.onnx`) imported on the fly: its model file
/// and tensors go to a private temporary directory, read before it is removed.
pub fn load_model(path: &Path) -> anyhow::Result<hwgen::model::Model> {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
    {
        let dir = tempfile::tempdir()?;
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        let toml = dir.path().join(format!("{stem}.toml"));
        hwgen::onnx::write(path, &toml)?;
        return Ok(hwgen::model::load(&toml)?);
    }
    Ok(hwgen::model::load(path)?)
}
