//! Quantized ONNX models in: `hwgen import model.onnx -o model.toml`, and `--model
//! model.onnx` wherever a model file is taken. The ONNX protobuf is decoded by a small
//! reader of the wire format (`wire`, `proto`: the fields ONNX uses, no code generation,
//! no dependency); `import` maps the quantized graph onto hwgen's layers and `layer` does
//! the numbers (weight layout, zero points, requantization).

pub mod host;
pub mod hostops;
mod import;
mod layer;
pub mod macs;
pub mod proto;
mod wire;

pub use layer::{Layout, Requant};

use crate::filemap::FileMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// How the model input is quantized (QuantizeLinear of the float graph input): a float
/// input x becomes `saturate(round_half_even(x / scale) + zero_point)`.
#[derive(Clone, Debug)]
pub struct InputQuant {
    /// The hwgen model input.
    pub name: String,
    /// The ONNX tensor it is: a graph input, or the host's tensor a segment starts from.
    pub onnx: String,
    pub scale: f64,
    pub zero_point: i64,
    pub signed: bool,
    /// [h, w, c]
    pub shape: [usize; 3],
    /// How ONNX holds it.
    pub layout: Layout,
    /// The graph input (or the host's tensor a segment starts from) is already these
    /// integers (int8 or uint8), quantized with `scale` and `zero_point` as its first
    /// quantized reader declares: the host passes it on unchanged.
    pub integer: bool,
}

/// How a graph output relates to the hwgen layer that computes it.
#[derive(Clone, Debug)]
pub struct OutputQuant {
    /// The ONNX graph output's name.
    pub onnx: String,
    /// The hwgen layer.
    pub layer: String,
    pub scale: f64,
    pub zero_point: i64,
    pub signed: bool,
    /// The graph output is the float DequantizeLinear of the layer (QDQ graphs), not its
    /// integers.
    pub float: bool,
    /// [h, w, c] of the layer's tensor.
    pub shape: [usize; 3],
    /// How ONNX holds it (`[1, C, H, W]`, `[1, K]` or `[1, S, D]`).
    pub layout: Layout,
    /// The layer writes its int32 accumulator (the float output of an operator the graph
    /// leaves unquantized): channel c's float value is `acc * scales[c]` (the input scale
    /// times the weight scale); `scale` and `zero_point` are then unused.
    pub accumulator: Option<Vec<f64>>,
}

/// A model file made from an ONNX graph.
pub struct Imported {
    /// The model file; its tensors are `DATA_DIR/<file>` (the directory passed to
    /// `import`).
    pub toml: String,
    /// (file name, `.npy` bytes)
    pub tensors: Vec<(String, Vec<u8>)>,
    /// One line per layer: the node it came from, its requantization and its error.
    pub notes: Vec<String>,
    /// The model inputs, in the graph's order (a segment has one).
    pub inputs: Vec<InputQuant>,
    /// The graph's outputs, in order.
    pub outputs: Vec<OutputQuant>,
}

/// A file or node the importer cannot take: the file, the node (name and op type), the
/// rule and the fix.
#[derive(Debug)]
pub struct ImportError {
    pub file: String,
    pub node: Option<String>,
    pub rule: String,
    pub fix: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match &self.node {
            Some(n) => format!("{}: {n}", self.file),
            None => self.file.clone(),
        };
        write!(
            f,
            "{}",
            crate::refusal::Refusal::new(what, &self.rule, &self.fix)
        )
    }
}

impl std::error::Error for ImportError {}

/// What the design a graph is mapped to runs besides convolutions, products, pooling and
/// element-wise layers, which every design runs.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The row unit (`[rows]`: softmax, the norms, the nonlinearities) and the transposer
    /// (a matmul of two run-time tensors).
    pub rows: bool,
    /// The channel tile that each head of a per-head row program or product must fill
    /// (the array's size).
    pub tile: usize,
    /// The 8-bit integer datapath: (activations signed, weights signed); None when the
    /// design has none (an MX or floating-point design).
    pub int8: Option<(Option<bool>, Option<bool>)>,
}

impl Target {
    /// Any design (`hwgen import`, which knows none): every operator the importer maps.
    pub const ANY: Target = Target {
        rows: true,
        tile: 1,
        int8: Some((None, None)),
    };

    pub fn of(design: &crate::design::Design) -> Target {
        let cores = design.cores();
        let unit = cores[0].1;
        let int8 = unit.datatype.precisions.iter().find_map(|p| match p {
            crate::numeric::Precision::Int(i) if i.input.bits == 8 && i.weight.bits == 8 => {
                Some((Some(i.input.signed), Some(i.weight.signed)))
            }
            _ => None,
        });
        let rows = cores.iter().map(|c| c.1).find(|u| u.rows.is_some());
        Target {
            rows: rows.is_some(),
            tile: rows.map_or(1, |u| (u.cpf as usize).max(u.kpf as usize)),
            int8,
        }
    }

    /// Whether the design computes with 8-bit activations and weights of these signs;
    /// else the rule it breaks.
    pub fn takes(&self, what: &str, signed: bool) -> Result<(), String> {
        let ty = |s: bool| if s { "int8" } else { "uint8" };
        let want = match self.int8 {
            None => {
                return Err(format!(
                    "{what} are {}, and the design has no 8-bit integer datapath",
                    ty(signed)
                ))
            }
            Some((act, w)) => {
                if what == "weights" {
                    w
                } else {
                    act
                }
            }
        };
        match want {
            Some(s) if s != signed => Err(format!(
                "{what} are {}, and the design computes with {} {what}",
                ty(signed),
                ty(s)
            )),
            _ => Ok(()),
        }
    }
}

/// The default-domain opset of a model (0 when it names none).
fn opset(model: &proto::Model) -> i64 {
    model
        .opsets
        .iter()
        .find(|(d, _)| d.is_empty() || d == "ai.onnx")
        .map_or(0, |o| o.1)
}

/// Read and map an ONNX file; the model file refers to its tensors as `data_dir/<file>`.
pub fn import(path: &Path, data_dir: &str) -> Result<Imported, ImportError> {
    import_with(path, data_dir, None)
}

/// As [`import`], with the model input's data (`[input] data`, a path relative to the
/// model file) when given. Every node must run on the accelerator.
pub fn import_with(
    path: &Path,
    data_dir: &str,
    input_data: Option<&str>,
) -> Result<Imported, ImportError> {
    let (file, model) = read(path)?;
    let g = &model.graph;
    let mut im = import::Importer::new(&file, g, data_dir).with(Target::ANY, opset(&model));
    im.graph_input(g)?;
    for (i, n) in g.nodes.iter().enumerate() {
        im.node(n, i)?;
    }
    im.finish_graph(g, &stem(path), input_data)
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into())
}

/// The file, decoded and checked for an opset with the quantized operators.
fn read(path: &Path) -> Result<(String, proto::Model), ImportError> {
    let file = path.display().to_string();
    let fail = |rule: String, fix: &str| ImportError {
        file: file.clone(),
        node: None,
        rule,
        fix: fix.to_string(),
    };
    // Protocol buffers hold at most 2 GiB.
    let bytes = crate::filemap::read_input(path, 1 << 31)
        .map_err(|rule| fail(rule, "give the path of an .onnx file"))?;
    let model = proto::model(&bytes).map_err(|e| {
        let fix = if e.what.starts_with(proto::UNSUPPORTED_TYPE) {
            "store that tensor as float32, float16, bfloat16, float64, a float8 type, float4e2m1, bool or a 2-, 4-, 8-, 16-, 32- or 64-bit integer (strings and complex numbers are not read)"
        } else {
            "give an ONNX model file (onnx.save_model), not a truncated or other file"
        };
        fail(format!("not a readable ONNX model: {}: {}", e.path, e.what), fix)
    })?;
    if let Err((rule, fix)) = well_formed(&model) {
        return Err(fail(rule, fix));
    }
    let opset = opset(&model);
    // Below opset 10 a model is read when every operator means there what it means in the
    // opsets hwgen implements (a float graph the host runs); anything else needs opset 10.
    if let Some(n) = (opset < 10)
        .then(|| first_changed(opset, &model.graph.nodes))
        .flatten()
    {
        let listed: Vec<String> = SAME_SINCE
            .iter()
            .map(|(ops, since)| format!("{} (opset {since})", ops.join(", ")))
            .collect();
        let domain = if n.domain.is_empty() {
            "ai.onnx"
        } else {
            &n.domain
        };
        return Err(fail(
            format!("default-domain opset {opset} (IR version {}): node '{}' ({} of domain {domain}); below opset 10 hwgen reads only default-domain operators whose meaning has not changed since: {}", model.ir_version, n.name, n.op_type, listed.join("; ")),
            "export with opset 13 or later",
        ));
    }
    Ok((file, model))
}

/// The IR versions ONNX defines (1 to onnx 1.23's 14) and the default domain's opsets
/// (to 28), which ONNX Runtime reads.
const MAX_IR_VERSION: i64 = 14;
const MAX_OPSET: i64 = 28;

/// What ONNX Runtime refuses before running anything: an IR version or default-domain
/// opset ONNX does not define, and a name defined twice (two initializers, or a node output
/// that is also an initializer, a graph input or another node's output), in the graph or
/// any subgraph.
fn well_formed(model: &proto::Model) -> Result<(), (String, &'static str)> {
    let ir = model.ir_version;
    if !(1..=MAX_IR_VERSION).contains(&ir) {
        return Err((
            format!("IR version {ir}: ONNX defines IR versions 1 to {MAX_IR_VERSION}"),
            "save the model with the onnx package (onnx.save_model sets the IR version)",
        ));
    }
    let op = opset(model);
    if op > MAX_OPSET {
        return Err((
            format!("default-domain opset {op}: ONNX defines opsets up to {MAX_OPSET}"),
            "export with opset 13 to 28",
        ));
    }
    for i in &model.graph.inputs {
        if let Some(d) = i.shape.iter().flatten().flatten().find(|d| **d < 0) {
            return Err((
                format!(
                    "graph input '{}' declares a dimension of {d}: a dimension is 0 or more, or symbolic",
                    i.name
                ),
                "declare the input's shape as exported (a symbolic name for a free dimension)",
            ));
        }
    }
    fn defined_once(g: &proto::Graph, outer: &[&str]) -> Result<(), String> {
        let mut seen: std::collections::HashSet<&str> = outer.iter().copied().collect();
        let inits = g.initializers.iter().map(|t| t.name.as_str());
        let ins = g.inputs.iter().map(|v| v.name.as_str());
        // A graph input may share its name with an initializer (the initializer is its
        // default); two initializers may not, nor may a node output repeat any name.
        let mut init_names = std::collections::HashSet::new();
        for n in inits {
            if !init_names.insert(n) {
                return Err(format!("two initializers are named '{n}'"));
            }
        }
        seen.extend(init_names.iter().copied());
        seen.extend(ins);
        for node in &g.nodes {
            for o in node.outputs.iter().filter(|o| !o.is_empty()) {
                if !seen.insert(o.as_str()) {
                    return Err(format!(
                        "node '{}' ({}) defines '{o}', which is already defined",
                        node.name, node.op_type
                    ));
                }
            }
        }
        for node in &g.nodes {
            for a in &node.attributes {
                if let proto::AttrValue::Graph(sub) = &a.value {
                    defined_once(sub, &[])?;
                }
            }
        }
        Ok(())
    }
    defined_once(&model.graph, &[]).map_err(|rule| {
        (
            rule,
            "give every tensor one definition (onnx.checker.check_model finds them)",
        )
    })
}

/// The first node (its subgraphs' included) of a model of default-domain opset `opset`
/// that is not an operator of the default domain whose meaning has not changed since an
/// opset at most `opset`.
fn first_changed(opset: i64, nodes: &[proto::Node]) -> Option<&proto::Node> {
    nodes.iter().find_map(|n| {
        // (The host's operators of other domains each have one version there.)
        let same = hostops::runs_in_domain(&n.domain, &n.op_type)
            || (n.domain.is_empty() || n.domain == "ai.onnx")
                && SAME_SINCE
                    .iter()
                    .any(|(ops, since)| opset >= *since && ops.contains(&n.op_type.as_str()));
        if !same {
            return Some(n);
        }
        n.attributes.iter().find_map(|a| match &a.value {
            proto::AttrValue::Graph(g) => first_changed(opset, &g.nodes),
            _ => None,
        })
    })
}

/// Whether every node of a model of default-domain opset `opset` reads as it would later.
#[cfg(test)]
fn unchanged_since(opset: i64, nodes: &[proto::Node]) -> bool {
    first_changed(opset, nodes).is_none()
}

/// Operators whose meaning has not changed since the opset beside them (later versions only
/// added element types; numpy broadcasting since opset 7).
const SAME_SINCE: &[(&[&str], i64)] = &[
    (&["Identity", "Not"], 1),
    (
        &[
            "Relu",
            "Sigmoid",
            "Tanh",
            "Abs",
            "Neg",
            "Exp",
            "Log",
            "Sqrt",
            "Floor",
            "Ceil",
            "Reciprocal",
        ],
        6,
    ),
    (
        &[
            "Add", "Sub", "Mul", "Div", "And", "Or", "Xor", "Equal", "Less", "Greater",
        ],
        7,
    ),
    // Its last version (Resize replaced it): scales an input, nearest mode on the host.
    (&["Upsample"], 9),
    (&["Shrink", "TfIdfVectorizer"], 9),
    // (Opset 11 added negative axes.)
    (&["Scan"], 9),
];

/// A graph split between the accelerator and the host (BYOC): the nodes before `cut` that
/// the importer maps run on the accelerator as `accel` (whose outputs are the tensors the
/// host reads), the rest on the host (`hostops`), from the first node the accelerator
/// cannot run (`reason` says why), or in later segments ([`partition_at`]).
pub struct Partition {
    pub model: proto::Model,
    pub accel: Option<Imported>,
    pub cut: usize,
    pub reason: Option<ImportError>,
    /// The ONNX dims of the tensors the segment reads and writes (for the report's MACs).
    pub dims: std::collections::HashMap<String, Vec<usize>>,
    /// The tensor computed outside the segment (by the host or an earlier segment) that
    /// the node at `cut` reads, if that is why the segment ends there: given as one of
    /// the segment's `extra` inputs, it may run further.
    pub missing: Option<String>,
}

/// Where a later accelerator segment starts: node `node`, which reads the tensor `input`
/// that the host computed, of ONNX dims `dims` and element type `elem`: a QuantizeLinear of
/// a float tensor, or a quantized operator reading an int8/uint8 one.
#[derive(Clone, Debug)]
pub struct SegmentStart {
    pub node: usize,
    pub input: String,
    pub dims: Vec<usize>,
    pub elem: i32,
    /// Other tensors the host holds that the segment reads (name, ONNX dims, element type):
    /// a residual from before the host's part, say ([`Partition::missing`]).
    pub extra: Vec<(String, Vec<usize>, i32)>,
}

/// Split the graph: the longest prefix of nodes the accelerator runs, then the host.
pub fn partition(
    path: &Path,
    data_dir: &str,
    input_data: Option<&str>,
) -> Result<Partition, ImportError> {
    partition_at(path, None, Target::ANY, data_dir, input_data)
}

/// As [`partition`], for the segment that starts at `start` (None: the graph's start) on a
/// design that runs `target`: the longest run of nodes from there that the accelerator
/// runs, reading the host's tensor `start.input` as its input; `cut` is where the host
/// takes over again.
pub fn partition_at(
    path: &Path,
    start: Option<&SegmentStart>,
    target: Target,
    data_dir: &str,
    input_data: Option<&str>,
) -> Result<Partition, ImportError> {
    let (file, model) = read(path)?;
    let g = &model.graph;
    // A segment from a 4-D host tensor reads it as a feature map, or as attention's heads
    // ([1, H, S, T]: its scores or probabilities); the reading that runs further is taken.
    let readings: &[Option<Layout>] = match start.map(|s| s.dims.as_slice()) {
        Some([1, h, _, _]) => &[None, Some(Layout::Heads(*h))],
        _ => &[None],
    };
    let (im, cut, reason) = readings
        .iter()
        .map(|&reading| {
            let mut im = import::Importer::new(&file, g, data_dir).with(target, opset(&model));
            let (cut, reason) = segment(&mut im, g, start, reading);
            (im, cut, reason)
        })
        .reduce(|best, next| if next.1 > best.1 { next } else { best })
        .expect("one reading at least");
    let dims = im.onnx_dims();
    let missing = im.missing();
    if reason.is_none() && start.is_none() {
        let accel = Some(im.finish_graph(g, &stem(path), input_data)?);
        return Ok(Partition {
            model,
            accel,
            cut,
            reason,
            dims,
            missing,
        });
    }
    // The accelerator's values the host needs: from the graph outputs back through the
    // host's nodes (and through nodes before the cut that are not layers, which the host
    // evaluates again: dequantized constants, the quantized input).
    let producer: std::collections::HashMap<&str, usize> = g
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.outputs.iter().map(move |o| (o.as_str(), i)))
        .collect();
    let mut handoff: Vec<(String, Option<usize>)> = vec![];
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<&str> = g.outputs.iter().map(|o| o.name.as_str()).collect();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        match producer.get(t) {
            None => {}
            Some(&i) if i < cut && im.is_layer_value(t) => handoff.push((t.to_string(), None)),
            Some(&i) => stack.extend(
                g.nodes[i]
                    .inputs
                    .iter()
                    .map(String::as_str)
                    .filter(|s| !s.is_empty()),
            ),
        }
    }
    let accel = if handoff.is_empty() {
        None
    } else {
        Some(im.finish_with(&handoff, &stem(path), input_data)?)
    };
    Ok(Partition {
        model,
        accel,
        cut,
        reason,
        dims,
        missing,
    })
}

/// Import the nodes of the segment from `start` (None: the graph's start; `reading`: the
/// layout its 4-D input is read in, a feature map by default) until the first the
/// accelerator cannot run: where that is (the end of the graph when none) and why.
fn segment(
    im: &mut import::Importer,
    g: &proto::Graph,
    start: Option<&SegmentStart>,
    reading: Option<Layout>,
) -> (usize, Option<ImportError>) {
    let first = start.map_or(0, |s| s.node);
    let ready = match start {
        None => im.graph_input(g),
        Some(s) => {
            im.constants_before(g, s.node);
            im.segment_input(g, s.node, &s.input, (&s.dims, s.elem), reading)
                .and_then(|()| {
                    s.extra
                        .iter()
                        .try_for_each(|(t, dims, elem)| im.extra_input(g, s.node, t, (dims, *elem)))
                })
        }
    };
    if let Err(e) = ready {
        return (first, Some(e));
    }
    for (i, n) in g.nodes.iter().enumerate().skip(first) {
        if let Err(e) = im.node(n, i) {
            return (i, Some(e));
        }
    }
    (g.nodes.len(), None)
}

/// The data file of model input `k` when the first one's is `first` (`input.npy`,
/// `input.1.npy`, `input.2.npy`, ...).
pub fn input_data_file(first: &str, k: usize) -> String {
    match (k, first.strip_suffix(".npy")) {
        (0, _) => first.to_string(),
        (_, Some(stem)) => format!("{stem}.{k}.npy"),
        (_, None) => format!("{first}.{k}"),
    }
}

/// FNV-1a, 64 bits: names the data directory after its contents.
fn fnv(parts: &[(String, Vec<u8>)]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for (name, bytes) in parts {
        for &b in name.as_bytes().iter().chain(bytes) {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// `hwgen import`: write `toml_path` and its tensors, in a directory beside it named after
/// the file and its contents (`model.<hash>.data/`). The directory is written whole first,
/// then the model file replaces the old one in one rename, then older data directories of
/// the same model file are removed: a kill at any point leaves the old model file with its
/// data, or the new one with its data.
pub fn write(src: &Path, toml_path: &Path) -> anyhow::Result<Imported> {
    write_with(src, toml_path, None)
}

/// As [`write`], with the model input's data file (relative to the model file).
pub fn write_with(
    src: &Path,
    toml_path: &Path,
    input_data: Option<&str>,
) -> anyhow::Result<Imported> {
    write_using(toml_path, |d| import_with(src, d, input_data))
}

/// As [`write_with`], for the accelerator's part of a graph the host finishes
/// ([`partition`]); an error when no node runs on the accelerator.
pub fn write_with_partition(
    src: &Path,
    toml_path: &Path,
    input_data: Option<&str>,
) -> anyhow::Result<Imported> {
    write_segment(src, toml_path, None, Target::ANY, input_data)
}

/// As [`write_with_partition`], for the segment that starts at `start` on a design that
/// runs `target` ([`partition_at`]).
pub fn write_segment(
    src: &Path,
    toml_path: &Path,
    start: Option<&SegmentStart>,
    target: Target,
    input_data: Option<&str>,
) -> anyhow::Result<Imported> {
    write_using(toml_path, |d| {
        let p = partition_at(src, start, target, d, input_data)?;
        p.accel.ok_or_else(|| {
            let why = p.reason.map_or(String::new(), |e| e.rule);
            ImportError {
                file: src.display().to_string(),
                node: None,
                rule: format!("no node of the graph runs on the accelerator ({why})"),
                fix: "hwgen run executes such a graph on the host".into(),
            }
        })
    })
}

/// Write the model file made by `imp` (given the data directory's name) and its tensors.
fn write_using(
    toml_path: &Path,
    imp: impl Fn(&str) -> Result<Imported, ImportError>,
) -> anyhow::Result<Imported> {
    let stem = toml_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    // The data directory's name depends on the contents, which depend on the name the
    // TOML uses for it: import once to hash the tensors, then with the final name.
    let first = imp("data")?;
    let dir_name = format!("{stem}.{:016x}.data", fnv(&first.tensors));
    let imported = imp(&dir_name)?;
    let parent = match toml_path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut files = FileMap::new();
    for (name, bytes) in &imported.tensors {
        files.add_bytes(name.clone(), bytes.clone());
    }
    files.write_atomic(&parent.join(&dir_name))?;
    crate::filemap::write_file_atomic(toml_path, &imported.toml)?;
    if let Ok(entries) = std::fs::read_dir(&parent) {
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let old = n
                .strip_prefix(&format!("{stem}."))
                .and_then(|r| r.strip_suffix(".data"))
                .is_some_and(|h| h.len() == 16 && h.chars().all(|c| c.is_ascii_hexdigit()));
            if old && n != dir_name {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    Ok(imported)
}

#[cfg(test)]
mod opset_tests {
    use super::*;

    fn nodes(ops: &[&str]) -> Vec<proto::Node> {
        ops.iter()
            .map(|o| proto::Node {
                op_type: o.to_string(),
                ..proto::Node::default()
            })
            .collect()
    }

    /// Below opset 10: Not at opset 1, And at 7 and Shrink at 9 are read; Add at opset 6
    /// (its broadcast-attribute era), Softmax (whose axis rule changed at 13), a
    /// QuantizeLinear and an operator of another domain are not.
    /// IR versions and opsets ONNX does not define, and names defined twice, are refused;
    /// a graph input named like its initializer (the initializer its default) is not.
    #[test]
    fn malformed_models_are_refused() {
        let tensor = |n: &str| proto::Tensor {
            name: n.into(),
            ..proto::Tensor::default()
        };
        let node = |o: &str| proto::Node {
            name: "n".into(),
            op_type: "Relu".into(),
            inputs: vec!["x".into()],
            outputs: vec![o.into()],
            ..proto::Node::default()
        };
        let model = |ir: i64, opset: i64, g: proto::Graph| proto::Model {
            ir_version: ir,
            opsets: vec![(String::new(), opset)],
            graph: g,
        };
        let good = proto::Graph {
            nodes: vec![node("y")],
            initializers: vec![tensor("w")],
            inputs: vec![proto::ValueInfo {
                name: "w".into(),
                ..proto::ValueInfo::default()
            }],
            ..proto::Graph::default()
        };
        assert!(well_formed(&model(8, 13, good.clone())).is_ok());
        for ir in [0, 99, 1 << 62] {
            let e = well_formed(&model(ir, 13, good.clone())).unwrap_err().0;
            assert!(e.starts_with(&format!("IR version {ir}:")), "{e}");
        }
        let e = well_formed(&model(8, 99, good.clone())).unwrap_err().0;
        assert!(e.contains("opset 99"), "{e}");
        let mut twice = good.clone();
        twice.initializers.push(tensor("w"));
        let e = well_formed(&model(8, 13, twice)).unwrap_err().0;
        assert!(e.contains("two initializers are named 'w'"), "{e}");
        let mut clash = good;
        clash.nodes.push(node("y"));
        let e = well_formed(&model(8, 13, clash)).unwrap_err().0;
        assert!(e.contains("defines 'y', which is already defined"), "{e}");
    }

    #[test]
    fn old_opsets_read_only_unchanged_operators() {
        assert!(unchanged_since(1, &nodes(&["Not", "Identity"])));
        assert!(unchanged_since(7, &nodes(&["And", "Add", "Relu"])));
        assert!(unchanged_since(9, &nodes(&["Upsample"])));
        assert!(!unchanged_since(6, &nodes(&["Add"])));
        assert!(!unchanged_since(8, &nodes(&["Upsample"])));
        assert!(unchanged_since(9, &nodes(&["Shrink"])));
        assert!(!unchanged_since(9, &nodes(&["Relu", "Softmax"])));
        assert!(!unchanged_since(9, &nodes(&["QuantizeLinear"])));
        let mut other = nodes(&["Add"]);
        other[0].domain = "ai.onnx.ml".into();
        assert!(!unchanged_since(9, &other));
    }
}
