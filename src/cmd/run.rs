use anyhow::{bail, Result};
use hwgen::onnx::hostops::{Host, HostVal, Value};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Parameter file (TOML) of the accelerator.
    #[arg(long, short)]
    pub config: PathBuf,
    /// Quantized ONNX model (QDQ or QOperator).
    #[arg(long, short)]
    pub model: PathBuf,
    /// The graph input as a .npy of the type the graph declares (float32, int8, uint8,
    /// int16, uint16, int32 or int64; [1, C, H, W]: dimensions of 1 may be left out); a
    /// sequence input as a directory of 0.npy, 1.npy, ...; an optional one as its element,
    /// or `none` when empty. Repeat it for a graph with several inputs, in the graph's order.
    #[arg(long, short, required = true)]
    pub input: Vec<PathBuf>,
    /// Where the graph's output goes: a .npy file, or with several outputs a directory
    /// holding OUTPUT_NAME.npy for each; a sequence output is a directory of 0.npy,
    /// 1.npy, ... (OUTPUT_NAME/ with several outputs).
    #[arg(long, short)]
    pub output: PathBuf,
    /// Run on the ISA interpreter instead of the RTL in Verilator.
    #[arg(long)]
    pub interp: bool,
    /// Where verilated models are cached (default: $HWGEN_CACHE or ~/.cache/hwgen).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Print, instead of the summary line, one JSON object: per node its name, op type,
    /// where it ran and its MACs; the totals on the accelerator and on the host; the
    /// accelerator's segments.
    #[arg(long)]
    pub json: bool,
}

/// Split the graph between the accelerator and the host, run the accelerator's part on the
/// input quantized as the graph does (RTL or interpreter, checked against the golden model),
/// hand its tensors to the host, run the rest there, and write every graph output as the
/// graph declares it.
pub fn run(args: Args) -> Result<()> {
    let design = hwgen::config::load(&args.config)?;
    if !args
        .model
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
    {
        bail!(
            "error: {}\n  rule: hwgen run takes a quantized ONNX model\n  fix:  use hwgen sim for a model file",
            args.model.display()
        );
    }
    let dir = tempfile::tempdir()?;
    let target = hwgen::onnx::Target::of(&design);
    let part = hwgen::onnx::partition_at(&args.model, None, target, "data", Some("input.npy"))?;
    let g = &part.model.graph;
    let mut host = Host::new(g);
    let inputs: Vec<_> = g
        .inputs
        .iter()
        .filter(|i| !g.initializers.iter().any(|t| t.name == i.name))
        .collect();
    if inputs.len() != args.input.len() {
        bail!(
            "error: {}\n  rule: the graph has {} inputs ({}) and {} were given\n  fix:  give one --input per graph input, in the graph's order",
            args.model.display(),
            inputs.len(),
            inputs.iter().map(|i| format!("'{}'", i.name)).collect::<Vec<_>>().join(", "),
            args.input.len()
        );
    }
    for (i, path) in inputs.iter().zip(&args.input) {
        match input_value(&args.model, i, path)? {
            Value::Tensor(v) => {
                host.known.insert(i.name.clone(), v);
            }
            other => {
                host.others.insert(i.name.clone(), other);
            }
        }
    }
    if let Some(e) = &part.reason {
        let at = g.nodes.get(part.cut).map_or(String::new(), |n| {
            format!(" from node {} ({})", part.cut, n.op_type)
        });
        eprintln!("hwgen run: the host runs the graph{at}: {}", e.rule);
    }
    // The first segment from the graph input; then, where the host has computed a float
    // tensor that a QuantizeLinear quantizes, the next segment from there.
    let mut runs: Vec<(usize, String)> = Vec::new();
    // (first node, cut, the ONNX dims it knows) of each accelerator segment.
    let mut spans = Vec::new();
    if let Some(accel) = &part.accel {
        let how = accelerate(&args, &design, (accel, None), dir.path(), &mut host)?;
        runs.push((accel.notes.len(), how));
        spans.push((0, part.cut, part.dims.clone()));
    }
    let mut pos = part.cut;
    while let Some(mut start) = next_segment(g, pos, &mut host) {
        // (No segment from here: the host goes on.)
        let Some(seg) = segment_from(&args.model, &mut start, target, &mut host) else {
            pos = start.node + 1;
            continue;
        };
        pos = seg.cut.max(start.node + 1);
        let Some(accel) = &seg.accel else { continue };
        eprintln!(
            "hwgen run: the accelerator runs the graph again from node {} ({} of '{}'){}",
            start.node,
            g.nodes[start.node].op_type,
            start.input,
            seg.reason.as_ref().map_or(String::new(), |e| format!(
                ", until node {}: {}",
                seg.cut, e.rule
            ))
        );
        let how = accelerate(&args, &design, (accel, Some(&start)), dir.path(), &mut host)?;
        runs.push((accel.notes.len(), how));
        spans.push((start.node, seg.cut, seg.dims.clone()));
    }
    let how = match runs.as_slice() {
        [] => {
            eprintln!(
                "warning: no node of {} runs on the accelerator; the whole graph runs on the host",
                args.model.display()
            );
            "host only".to_string()
        }
        [(_, how)] => how.clone(),
        _ => format!(
            "{} accelerator segments ({})",
            runs.len(),
            runs.iter()
                .map(|(_, h)| h.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ),
    };
    let outs = host.outputs().map_err(|e| host_error(&args.model, &e))?;
    let wrote = match write_outputs(&args.model, &args.output, &outs)? {
        true => format!("wrote {}", args.output.display()),
        false => "wrote nothing".to_string(),
    };
    let host_nodes = host.ran.len();
    if args.json {
        let report = report(&args, &design.name, g, &host, (&spans, &runs), &wrote);
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{} on {}: {how}; {host_nodes} nodes on the host; {wrote}",
        args.model.display(),
        design.name,
    );
    Ok(())
}

/// Where a node ran, for the report.
fn placement(i: usize, host: &Host, spans: &[Span]) -> &'static str {
    if host.ran.contains(&i) {
        "host"
    } else if spans.iter().any(|(from, to, _)| (*from..*to).contains(&i)) {
        "accelerator"
    } else {
        "not run"
    }
}

/// An accelerator segment: its first node, the node where the host takes over, and the
/// ONNX dims of the tensors it reads and writes.
type Span = (usize, usize, std::collections::HashMap<String, Vec<usize>>);

/// `hwgen run --json`: per node (in the graph's order) its name, op type, where it ran
/// ("accelerator": mapped into a segment's layers, weights and quantization folded in;
/// "host"; "not run": nothing needed it) and its MACs (null when an operand's dims are not
/// known); the totals; the segments.
fn report(
    args: &Args,
    design: &str,
    g: &hwgen::onnx::proto::Graph,
    host: &Host,
    (spans, runs): (&[Span], &[(usize, String)]),
    wrote: &str,
) -> serde_json::Value {
    use serde_json::json;
    let mut totals = std::collections::BTreeMap::<&str, (u64, u64)>::new();
    let nodes: Vec<_> = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let at = placement(i, host, spans);
            let dims = |t: &str| {
                host.known
                    .get(t)
                    .map(|v| v.dims.clone())
                    .or_else(|| spans.iter().find_map(|(_, _, d)| d.get(t).cloned()))
            };
            let macs = hwgen::onnx::macs::node_macs(n, dims);
            let e = totals.entry(at).or_default();
            e.0 += 1;
            e.1 += macs.unwrap_or(0);
            json!({
                "name": n.name,
                "op_type": n.op_type,
                "output": n.outputs.first(),
                "ran_on": at,
                "macs": macs,
            })
        })
        .collect();
    let total = |k: &str| {
        let (n, m) = totals.get(k).copied().unwrap_or_default();
        json!({ "nodes": n, "macs": m })
    };
    let segments: Vec<_> = spans
        .iter()
        .zip(runs)
        .map(|((from, to, _), (layers, how))| {
            json!({ "from_node": from, "to_node": to, "layers": layers, "ran": how })
        })
        .collect();
    json!({
        "model": args.model.display().to_string(),
        "design": design,
        "nodes": nodes,
        "accelerator": total("accelerator"),
        "host": total("host"),
        "not_run": total("not run"),
        "segments": segments,
        "output": wrote,
    })
}

/// The segment from `start`: as long as it ends at a node reading a tensor from before it
/// that the host holds or computes from what it holds through a DequantizeLinear (and a
/// QuantizeLinear) — a residual from before the host's part — that tensor becomes one of
/// its inputs too (`start.extra`), and the segment runs further. None when no segment
/// starts there.
fn segment_from(
    model: &std::path::Path,
    start: &mut hwgen::onnx::SegmentStart,
    target: hwgen::onnx::Target,
    host: &mut Host,
) -> Option<hwgen::onnx::Partition> {
    loop {
        let seg = hwgen::onnx::partition_at(model, Some(start), target, "data", Some("input.npy"))
            .ok()?;
        let more = seg
            .missing
            .as_deref()
            .filter(|t| *t != start.input && !start.extra.iter().any(|e| e.0 == *t))
            .filter(|t| cheap(&seg.model.graph, host, t, start.node))
            .and_then(|t| host.value(t).ok().map(|v| (t.to_string(), v.dims, v.elem)));
        match more {
            Some(extra) if start.extra.len() < 16 => start.extra.push(extra),
            _ => return Some(seg),
        }
    }
}

/// Whether the host holds tensor `t`, written before node `before`, or computes it from
/// what it holds with at most a DequantizeLinear after a QuantizeLinear.
fn cheap(g: &hwgen::onnx::proto::Graph, host: &Host, t: &str, before: usize) -> bool {
    if host.known.contains_key(t) {
        return true;
    }
    let producer = |t: &str| {
        g.nodes
            .iter()
            .take(before)
            .find(|n| n.outputs.iter().any(|o| o == t))
    };
    let Some(dq) = producer(t).filter(|n| n.op_type == "DequantizeLinear") else {
        return false;
    };
    let q = &dq.inputs[0];
    host.known.contains_key(q)
        || producer(q)
            .is_some_and(|n| n.op_type == "QuantizeLinear" && host.known.contains_key(&n.inputs[0]))
}

/// The next place from node `pos` on where an accelerator segment can start: a
/// QuantizeLinear of a float tensor the host computes (it does so now), or a quantized
/// operator (or a DequantizeLinear) reading an int8/uint8 tensor the host computes.
fn next_segment(
    g: &hwgen::onnx::proto::Graph,
    pos: usize,
    host: &mut Host,
) -> Option<hwgen::onnx::SegmentStart> {
    use hwgen::onnx::proto::dtype;
    for (i, n) in g.nodes.iter().enumerate().skip(pos) {
        let Some(t) = n.inputs.first() else { continue };
        let reads_quantized = matches!(
            n.op_type.as_str(),
            "DequantizeLinear"
                | "QLinearConv"
                | "QLinearMatMul"
                | "QGemm"
                | "QLinearAdd"
                | "QLinearAveragePool"
                | "QLinearGlobalAveragePool"
        );
        if !(n.op_type == "QuantizeLinear" || reads_quantized)
            || g.initializers.iter().any(|c| &c.name == t)
        {
            continue;
        }
        let want: &[i32] = if reads_quantized {
            &[dtype::INT8, dtype::UINT8]
        } else {
            &[dtype::FLOAT]
        };
        match host.value(t) {
            Ok(v) if want.contains(&v.elem) => {
                return Some(hwgen::onnx::SegmentStart {
                    node: i,
                    input: t.clone(),
                    dims: v.dims,
                    elem: v.elem,
                    extra: vec![],
                })
            }
            // (What the host cannot compute is reported where an output needs it.)
            _ => continue,
        }
    }
    None
}

/// Run an accelerator segment (the first with no start) and hand its tensors to the host;
/// how it ran.
fn accelerate(
    args: &Args,
    design: &hwgen::design::Design,
    (accel, start): (&hwgen::onnx::Imported, Option<&hwgen::onnx::SegmentStart>),
    dir: &std::path::Path,
    host: &mut Host,
) -> Result<String> {
    // Each model input quantized on the host (a segment's: the host's tensor it starts
    // from) and written where the model file says.
    for (k, q) in accel.inputs.iter().enumerate() {
        let x = host.known.get(&q.onnx).ok_or_else(|| {
            anyhow::anyhow!(
                "error: {}\n  rule: no value for the accelerator's input '{}'\n  fix:  give every graph input with --input, in the graph's order",
                args.model.display(),
                q.onnx
            )
        })?;
        let data: Vec<f32> = x.data.iter().map(|&v| v as f32).collect();
        let v = hwgen::onnx::host::quantize_input(q, &x.dims, &data).map_err(|e| {
            let what = match start {
                None => format!("{}: graph input '{}'", args.model.display(), q.onnx),
                Some(s) => format!("{}: the host's tensor '{}'", args.model.display(), s.input),
            };
            let fix = if q.integer {
                "give the input's int8/uint8 values in the declared shape"
            } else {
                "give the input's float32 tensor in the declared shape"
            };
            anyhow::anyhow!("error: {what}\n  rule: {e}\n  fix:  {fix}")
        })?;
        let [h, w, c] = q.shape;
        let file = hwgen::onnx::input_data_file("input.npy", k);
        hwgen::model::npy::write_i64(&dir.join(file), &[h, w, c], &v)?;
    }
    let toml = dir.join("model.toml");
    let target = hwgen::onnx::Target::of(design);
    let imported =
        hwgen::onnx::write_segment(&args.model, &toml, start, target, Some("input.npy"))?;
    let model = hwgen::model::load(&toml)?;
    let program = super::compile(design, &model, &args.model, &args.config)?;
    let expected = hwgen::verify::expected(design, &model, &program);
    let (mem, how) = if args.interp {
        (
            hwgen::verify::interpret(design, &program)?,
            "ISA interpreter".to_string(),
        )
    } else {
        let cache = args
            .cache
            .clone()
            .unwrap_or_else(hwgen::sim::run::default_cache);
        let mem_words = hwgen::sim::run::mem_words_for(design, program.footprint_beats());
        let with = hwgen::sim::run::Instrument {
            mem_words: Some(mem_words),
            ..Default::default()
        };
        let exe = hwgen::sim::run::build_with(design, &cache, with)?;
        let opts = hwgen::sim::run::RunOptions {
            mem_words: Some(mem_words),
            ..Default::default()
        };
        let r = hwgen::sim::run::run_with(design, &exe, &program, &expected, &opts)?;
        (r.memory, format!("RTL, {} cycles", r.cycles))
    };
    let cmp = hwgen::verify::compare(&program, &expected, &mem);
    if !cmp.matched() {
        bail!(
            "the {how} run differs from the golden model in {} {}",
            cmp.differing,
            cmp.unit
        );
    }
    for o in &imported.outputs {
        let Some(region) = program
            .outputs
            .iter()
            .find(|r| r.name == o.layer && r.frame == 0)
        else {
            bail!("no output region for layer {}", o.layer);
        };
        let t = hwgen::compiler::passes::encode::read_tensor(&mem, &region.layout);
        host.known
            .insert(o.onnx.clone(), hwgen::onnx::host::handoff_val(o, &t.data));
    }
    Ok(format!(
        "{} layers on the {how}, bit-exact against the golden model",
        imported.notes.len()
    ))
}

/// A graph input's value from its `.npy`: the type the graph declares, and the declared
/// shape (dimensions of 1 may be left out of the file's; a symbolic one takes the file's).
fn input_val(
    model: &std::path::Path,
    i: &hwgen::onnx::proto::ValueInfo,
    path: &std::path::Path,
) -> Result<HostVal> {
    use hwgen::onnx::proto::dtype;
    let want = hwgen::onnx::host::npy_descr(i.elem_type).ok_or_else(|| {
        anyhow::anyhow!(
            "error: {}\n  rule: graph input '{}' is {}; hwgen run takes float32, float64, float16, bfloat16, float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0), float4e2m1, bool and integer (2-, 4-, 8-, 16-, 32-, 64-bit) inputs\n  fix:  export the model with one of those input types",
            model.display(),
            i.name,
            dtype::name(i.elem_type)
        )
    })?;
    let (descr, shape, data) = hwgen::model::npy::read_values(path)
        .map_err(|e| super::refuse(path.display(), e.rule, e.fix))?;
    if descr != want {
        bail!(
            "error: {}\n  rule: the array is {descr}, and graph input '{}' is {} ({want})\n  fix:  save it as {}",
            path.display(),
            i.name,
            dtype::name(i.elem_type),
            dtype::name(i.elem_type)
        );
    }
    let declared = i.shape.clone().unwrap_or_default();
    let mut dims = shape.clone();
    if !declared.is_empty() {
        let big = |d: &[usize]| d.iter().copied().filter(|&v| v != 1).collect::<Vec<_>>();
        let fixed: Option<Vec<usize>> = declared
            .iter()
            .map(|d| d.and_then(|v| usize::try_from(v).ok()))
            .collect();
        let count = |f: &[usize]| f.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        let fits = match &fixed {
            Some(f) => big(f) == big(&shape) && count(f) == Some(data.len()),
            None => {
                declared.len() == shape.len()
                    && declared
                        .iter()
                        .zip(&shape)
                        .all(|(d, &s)| d.is_none_or(|d| d as usize == s))
            }
        };
        if !fits {
            let shown: Vec<String> = declared
                .iter()
                .map(|d| d.map_or("?".to_string(), |v| v.to_string()))
                .collect();
            bail!(
                "error: {}\n  rule: its shape {shape:?} is not graph input '{}''s [{}] (? a symbolic dimension)\n  fix:  give an array of the declared shape (dimensions of 1 may be left out)",
                path.display(),
                i.name,
                shown.join(", ")
            );
        }
        if let Some(f) = fixed {
            dims = f;
        }
    }
    let data = match i.elem_type {
        t if dtype::is_small(t) => data
            .into_iter()
            .map(|c| dtype::small_value(t, c as u32))
            .collect(),
        _ => data,
    };
    Ok(HostVal {
        dims,
        data,
        elem: i.elem_type,
    })
}

/// Write the graph outputs `outs` to `out`, atomically: one tensor output as that file;
/// otherwise a directory, replaced as a whole, of OUTPUT_NAME.npy per tensor and
/// OUTPUT_NAME/0.npy, 1.npy, ... per non-empty sequence (one sequence output: `out` holds
/// its 0.npy, 1.npy, ..., and is empty for an empty sequence). An optional is written as
/// its element; an empty one is not written (and said on stderr), and when every output is
/// one, nothing is. Whether anything was written.
fn write_outputs(
    model: &std::path::Path,
    out: &std::path::Path,
    outs: &[(String, Value)],
) -> Result<bool> {
    use hwgen::onnx::host::{npy_of, output_file_name};
    let npy = |name: &str, v: &HostVal| {
        npy_of(v).map_err(|e| {
            anyhow::anyhow!(
                "error: {}: output '{name}'\n  rule: {e}\n  fix:  declare the output as a tensor type .npy holds",
                model.display()
            )
        })
    };
    let unwrap = |v: &Value| -> Option<Value> {
        match v {
            Value::Opt(inner) => inner.as_deref().cloned(),
            other => Some(other.clone()),
        }
    };
    if let [(name, v)] = outs {
        if let Some(Value::Tensor(t)) = unwrap(v) {
            hwgen::filemap::write_bytes_atomic(out, &npy(name, &t)?)?;
            return Ok(true);
        }
    }
    if outs.iter().all(|(_, v)| matches!(v, Value::Opt(None))) {
        eprintln!("hwgen run: every output is an empty optional: nothing written");
        return Ok(false);
    }
    let mut map = hwgen::filemap::FileMap::new();
    for (name, v) in outs {
        let dir = match outs.len() {
            1 => String::new(),
            _ => output_file_name(name).trim_end_matches(".npy").to_string() + "/",
        };
        match unwrap(v) {
            Some(Value::Tensor(t)) => map.add_bytes(output_file_name(name), npy(name, &t)?),
            Some(Value::Seq(s)) => {
                for (k, t) in s.iter().enumerate() {
                    map.add_bytes(format!("{dir}{k}.npy"), npy(name, t)?);
                }
            }
            _ => eprintln!("hwgen run: output '{name}' is an empty optional: nothing written"),
        }
    }
    map.write_atomic(out)?;
    Ok(true)
}

/// A graph input's value from `path`: a tensor's `.npy`, a sequence's directory of 0.npy,
/// 1.npy, ... (each element as the declared tensor type and shape), an optional's element
/// or `none`.
fn input_value(
    model: &std::path::Path,
    i: &hwgen::onnx::proto::ValueInfo,
    path: &std::path::Path,
) -> Result<Value> {
    use hwgen::onnx::proto::{ValueInfo, ValueKind};
    match &i.kind {
        ValueKind::Tensor => Ok(Value::Tensor(input_val(model, i, path)?)),
        ValueKind::Optional(_) if path.as_os_str() == "none" => Ok(Value::Opt(None)),
        ValueKind::Optional(k) => {
            let inner = ValueInfo {
                kind: (**k).clone(),
                ..i.clone()
            };
            Ok(Value::Opt(Some(Box::new(input_value(model, &inner, path)?))))
        }
        ValueKind::Sequence => {
            let fail = |rule: &str| {
                anyhow::anyhow!(
                    "error: {}\n  rule: graph input '{}' is a sequence: {rule}\n  fix:  give a directory holding 0.npy, 1.npy, ... (one tensor each, in order; empty for an empty sequence)",
                    path.display(),
                    i.name
                )
            };
            let entries = std::fs::read_dir(path).map_err(|e| fail(&format!("cannot read it as a directory: {e}")))?.count();
            let mut items = Vec::new();
            while path.join(format!("{}.npy", items.len())).is_file() {
                items.push(input_val(model, i, &path.join(format!("{}.npy", items.len())))?);
            }
            if items.len() != entries {
                return Err(fail(&format!("it holds {entries} entries, of which only 0.npy to {}.npy are a sequence's", items.len() as i64 - 1)));
            }
            Ok(Value::Seq(items))
        }
        ValueKind::Other => bail!(
            "error: {}\n  rule: graph input '{}' is a map or a sparse tensor, which hwgen run does not hold\n  fix:  export the model with tensor, sequence or optional inputs",
            model.display(),
            i.name
        ),
    }
}

/// The host's refusal of the graph (a node whose inputs or attributes break its operator's
/// definition, a tensor nothing defines, a cycle): the model, the rule (naming the node or
/// tensor) and the fix.
fn host_error(model: &std::path::Path, e: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "error: {}\n  rule: {e}\n  fix:  correct the graph there: each node's inputs and attributes as its operator's definition requires, each tensor defined once (onnx.checker.check_model with full_check names such problems)",
        model.display()
    )
}
