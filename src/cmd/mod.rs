//! One file per subcommand.

pub mod check;
pub mod compile;
pub mod dse;
pub mod emit;
pub mod import;
pub mod isa;
pub mod run;
pub mod sim;
pub mod synth;

use std::path::Path;

/// A refused argument: what (the argument as given), the rule and the fix.
pub fn refuse(
    what: impl std::fmt::Display,
    rule: impl std::fmt::Display,
    fix: impl std::fmt::Display,
) -> anyhow::Error {
    hwgen::refusal::Refusal::new(what, rule, fix).into()
}

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
        let part = hwgen::onnx::partition(path, "data", None)?;
        if let Some(e) = &part.reason {
            let n = part.model.graph.nodes.get(part.cut);
            eprintln!(
                "note: {}: the accelerator runs the graph up to node {}{}; the host (hwgen run) runs the rest: {}",
                path.display(),
                part.cut,
                n.map_or(String::new(), |n| format!(" ({})", n.op_type)),
                e.rule
            );
        }
        hwgen::onnx::write_with_partition(path, &toml, None)?;
        return Ok(hwgen::model::load(&toml)?);
    }
    Ok(hwgen::model::load(path)?)
}

/// For an ONNX model: which nodes run on the accelerator and which on the host (from which
/// node, and why), and how each layer was mapped (the import notes).
pub fn onnx_report(path: &Path) -> Option<serde_json::Value> {
    if !path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
    {
        return None;
    }
    let part = hwgen::onnx::partition(path, "data", None).ok()?;
    let nodes = &part.model.graph.nodes;
    let label = |n: &hwgen::onnx::proto::Node| {
        let name = if n.name.is_empty() {
            n.outputs.first().cloned().unwrap_or_default()
        } else {
            n.name.clone()
        };
        format!("{name} ({})", n.op_type)
    };
    Some(serde_json::json!({
        "accelerator_nodes": nodes[..part.cut].iter().map(label).collect::<Vec<_>>(),
        "host_nodes": nodes[part.cut..].iter().map(label).collect::<Vec<_>>(),
        "host_reason": part.reason.map(|e| format!("{}: {}", e.node.unwrap_or_default(), e.rule)),
        "layers": part.accel.map(|a| a.notes).unwrap_or_default(),
    }))
}
