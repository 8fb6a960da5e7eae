//! legalize: check the model against the Design (its datapath runs every layer's
//! precision, its vector unit has the operations the layers use) and build the layer graph
//! (petgraph) the later passes work on.

mod concat;
mod graph;
mod phases;

pub use graph::{window, Concat, Fused, Graph, Im2col, Node, Place, Source};

use crate::compiler::CompileError;
use crate::design::{Datatypes, Design, Unit};
use crate::model::lower::{Lowered, Stencil, Taps};
use crate::model::{Layer, Model};
use crate::numeric::{Format, Precision};
use petgraph::graph::DiGraph;

/// The graph's unit: the one engine's, or an elastic Design's first square unit with the
/// largest array, whose cpf tiles every tensor (smaller units: `TensorLayout::view`).
pub fn graph_unit(design: &Design) -> Result<Unit, CompileError> {
    let unit = design
        .cores()
        .iter()
        .map(|c| c.1)
        .filter(|u| u.cpf == u.kpf)
        .fold(design.cores()[0].1, |a, u| {
            match u.cpf > a.cpf || a.cpf != a.kpf {
                true => u,
                false => a,
            }
        })
        .clone();
    if unit.cpf != unit.kpf {
        return Err(CompileError::new(
            None,
            format!("the array is {}x{}; activations are stored in tiles of cpf channels and written in tiles of kpf channels, so the compiler needs cpf = kpf", unit.cpf, unit.kpf),
            "use a square array",
        ));
    }
    Ok(unit)
}

pub fn run(design: &Design, model: &Model) -> Result<Graph, CompileError> {
    let unit = graph_unit(design)?;
    let mut nodes = Vec::new();
    let mut inputs: Vec<Source> = model
        .inputs
        .iter()
        .map(|(name, t)| Source {
            name: name.clone(),
            shape: t.shape(),
            format: t.format,
            joins: Vec::new(),
            im2col: None,
        })
        .collect();
    let mut concats: Vec<Concat> = Vec::new();
    for l in &model.layers {
        let work = l.op.get().lower(l);
        if let Lowered::Concat = work {
            concat::concat(
                model,
                l,
                &unit,
                design.cores().len() == 1,
                (&mut inputs, &mut concats),
            )?;
            continue;
        }
        let prec = precision_index(&unit.datatype, model, l)?;
        if let Lowered::Rows(r) = &work {
            row_unit_runs(&unit, model, l, r.groups)?;
        }
        if let Some(s) = work.stencil().filter(|s| s.weights_from().is_some()) {
            runtime_weights_fit(design, &unit, model, l, s)?;
        }
        if let Some(pad_value) = work.stencil().map(|s| s.pad_value) {
            let t = unit.datatype.input_type();
            if pad_value != 0 && crate::isa::pad_pattern(pad_value, t.bits, t.signed).is_none() {
                return Err(CompileError::new(
                    Some(&l.name),
                    format!(
                        "pad_value = {pad_value}: the loads and the window unit write padding from an {}-bit pattern, which cannot hold it for {t} inputs",
                        crate::isa::PAD_VALUE_BITS
                    ),
                    "use a pad_value that fits 8 bits, or no pad_value (an untied bias can carry the zero point)",
                ));
            }
        }
        let cin = model.shape_of(&l.inputs[0]).expect("input exists")[2];
        let window = in_window(&unit, &work, prec, cin, l.inputs.len() > 1);
        vector_ops(design, l, &work, window)?;
        let padded_max = matches!(&work, Lowered::Stencil(s) if s.taps == Taps::Max && s.pad > 0);
        if padded_max && !window && !non_negative(model, &l.inputs[0]) {
            return Err(CompileError::new(
                Some(&l.name),
                "a max-pool with padding runs in the window unit (padding never counts there), or on the array when its input cannot be negative (an integer ReLU's output: the zero rows the array pools over as padding then never win)",
                if unit.window.is_some() {
                    "use a kernel of at most window.kernel and a stride of at most 3, or pool without padding"
                } else {
                    "add [window] enabled = true to the config, or pool without padding"
                },
            ));
        }
        let cin = model.shape_of(&l.inputs[0]).map_or(0, |s| s[2]);
        let int = matches!(l.prec, crate::numeric::Precision::Int(_));
        // (Reading a concat of padded operands: the stored channels, and the number of
        // the concat's channels in each stored channel tile.)
        let (work, cin, real) = match concat::through_padded(model, &concats, l, &work, unit.cpf) {
            Some((w, stored, real)) => (w, stored, Some(real)),
            None => (work, cin, None),
        };
        let zero_tiles = zero_tiles(&work, int, cin, unit.cpf as usize);
        let runtime = work.stencil().and_then(|s| s.weights_from()).is_some();
        let (planes, out_format) = raw_planes(&unit, l, &work, prec)?;
        let node = Node {
            name: l.name.clone(),
            op: l.op.name(),
            combine: work.stencil().and_then(|s| s.post.combine),
            macs: macs(l.out, &work, cin, real.as_deref(), zero_tiles.as_ref()),
            work,
            input: l.inputs[0].clone(),
            // (A matmul's second input is its run-time weights, not an operand.)
            residual: l.inputs.get(1).filter(|_| !runtime).cloned(),
            broadcast: !runtime
                && l.inputs
                    .get(1)
                    .and_then(|r| model.shape_of(r))
                    .is_some_and(|s| s[0] * s[1] == 1 && l.out[0] * l.out[1] > 1),
            out: l.out,
            pool: None,
            prec,
            out_format,
            fixed_scale: l.fixed_scale(),
            shift: (0, 0),
            place: None,
            window,
            fused_into_next: false,
            then: None,
            zero_tiles,
            planes,
        };
        if node.work.stencil().is_some_and(|s| s.transposed) {
            let input = model.shape_of(&l.inputs[0]).expect("input exists");
            nodes.extend(phases::lower(&node, input));
        } else {
            nodes.push(node);
        }
    }
    pack_taps(&mut nodes, &mut inputs, &unit);
    let mut g = Graph {
        unit,
        outputs: model.outputs.clone(),
        nodes,
        dag: DiGraph::new(),
        inputs,
        concats,
        fused: Vec::new(),
    };
    for o in &g.outputs {
        if g.inputs.iter().any(|s| s.name == *o) || g.concats.iter().any(|c| c.name == *o) {
            return Err(CompileError::new(
                Some(o),
                "an output that is a concat is assembled in memory, not computed; the compiler needs every output to be a computed layer",
                "make the concat's consumer the output, or list its operands as outputs",
            ));
        }
    }
    g.rebuild_dag();
    Ok(g)
}

/// A row program runs on the unit's row unit, which reads the input as output-buffer rows:
/// the input is stored in the Design's output format.
fn row_unit_runs(unit: &Unit, model: &Model, l: &Layer, groups: usize) -> Result<(), CompileError> {
    let op = l.op.name();
    let (c, t) = (l.out[2], unit.kpf as usize);
    if groups > 1 && !(c / groups).is_multiple_of(t) {
        return Err(CompileError::new(
            Some(&l.name),
            format!(
                "with {groups} heads, each head's {} channels must fill whole channel tiles of {t} (the row unit runs one head's tiles at a time)",
                c / groups
            ),
            "use heads whose size is a multiple of the array size, or one softmax per head",
        ));
    }
    if unit.rows.is_none() {
        return Err(CompileError::new(
            Some(&l.name),
            format!("{op} runs on the row unit, which the Design does not have"),
            "add [rows] enabled = true to the config (configs/16x16_int8_transformer.toml has it)",
        ));
    }
    let out = unit.datatype.primary().output().name();
    let format = model.format_of(&l.inputs[0]).expect("the input exists");
    if format != unit.datatype.primary().output() {
        return Err(CompileError::new(
            Some(&l.name),
            format!(
                "{op} reads its input {} as output-buffer rows of the Design's output type {out}; it is {}",
                l.inputs[0],
                format.name()
            ),
            format!("give the layer before {} the output type {out}", l.name),
        ));
    }
    Ok(())
}

/// A matmul of two run-time tensors loads the second one's rows into the weight buffer as
/// they are stored (transposed for keys): one engine, a square array, one element type for
/// inputs, weights and outputs, heads that fill whole channel tiles, and for a transposed
/// operand the transposer of a Design with [rows].
fn runtime_weights_fit(
    design: &Design,
    unit: &Unit,
    model: &Model,
    l: &Layer,
    s: &Stencil,
) -> Result<(), CompileError> {
    let err = |rule: String, fix: &str| Err(CompileError::new(Some(&l.name), rule, fix));
    let Taps::Tensor {
        groups, transposed, ..
    } = &s.taps
    else {
        return Ok(());
    };
    if design.cores().len() > 1 {
        return err(
            "a matmul of two run-time tensors runs on a single-engine Design".into(),
            "compile the model for a config without [[branch]]",
        );
    }
    if unit.cpf != unit.kpf {
        return err(
            format!(
                "a matmul of two run-time tensors loads rows of one as weight rows, which needs a square array; this one is {}x{}",
                unit.cpf, unit.kpf
            ),
            "use a square array",
        );
    }
    let d = &unit.datatype;
    let (i, w, o) = (d.input_type(), d.weight_type(), d.output_type());
    if i != w || w != o {
        return err(
            format!("a matmul of two run-time tensors reads an activation as weights, which needs one element type for inputs, weights and outputs; the Design has {i}, {w} and {o}"),
            "use a config whose input, weight and output types are the same (int8)",
        );
    }
    let b = &l.inputs[1];
    let wf = d.primary().weight();
    if model.format_of(b) != Some(wf) {
        return err(
            format!(
                "its second operand {b} must be stored as {}, the weights' type",
                wf.name()
            ),
            "give the layer that writes it the Design's output type",
        );
    }
    if *transposed && unit.rows.is_none() {
        return err(
            "transpose_b loads the second operand through the transposer of the row unit's Designs, which this one lacks".into(),
            "add [rows] enabled = true to the config (configs/16x16_int8_transformer.toml has it)",
        );
    }
    if let crate::numeric::Precision::Mx(_) = l.prec {
        if unit.rows.is_none() {
            return err(
                "an MX matmul of two run-time tensors loads the second operand's rows with their block scales through the transposer of the row unit's Designs, which this one lacks".into(),
                "add [rows] enabled = true to the config (configs/32x32_mxint8_transformer.toml has it)",
            );
        }
        if d.precisions.len() > 1 {
            return err(
                "an MX matmul of two run-time tensors runs on an all-MX Design (the transposer writes block scales for one precision)".into(),
                "compile for an all-MX Design with [rows] (configs/32x32_mxint8_transformer.toml)",
            );
        }
    }
    let t = unit.cpf as usize;
    let cin = model.shape_of(&l.inputs[0]).expect("the input exists")[2];
    if *groups > 1 && (!(cin / groups).is_multiple_of(t) || !(s.cout / groups).is_multiple_of(t)) {
        return err(
            format!(
                "with {groups} heads, each head's input channels ({}) and output channels ({}) must fill whole channel tiles of {t}",
                cin / groups,
                s.cout / groups
            ),
            "use heads whose sizes are multiples of the array size, or one matmul per head",
        );
    }
    // Keys padded past b's pixels (`keys`) load as zero rows, within the last tile.
    let bs = model.shape_of(b).expect("b exists");
    let per_head = match transposed {
        true => s.cout / groups,
        false => cin / groups,
    };
    if per_head.div_ceil(t) > (bs[0] * bs[1]).div_ceil(t) {
        return err(
            format!(
                "{per_head} keys per head pad b's {} pixels by a whole channel tile of {t} or more",
                bs[0] * bs[1]
            ),
            "pad the keys to the next multiple of the array size at most",
        );
    }
    if s.zero_points() != (0, 0) {
        let (za, zb) = s.zero_points();
        if !unit.zero_points() {
            return err(
                format!("zero points ({za} for the input, {zb} for b) are taken out of the column sums by the array of integer Designs with [rows], which this one is not"),
                "use an integer config with [rows] enabled = true (configs/16x16_int8_transformer.toml), or operands with zero point 0",
            );
        }
        let fits = |v: i64, t: crate::numeric::IntType| {
            crate::isa::pad_pattern(v, t.bits, t.signed).is_some()
        };
        if !fits(za, d.input_type()) || !fits(zb, d.weight_type()) {
            return err(
                format!(
                    "the matmul instruction holds zero points in {} bits; these are {za} and {zb}",
                    crate::isa::PAD_VALUE_BITS
                ),
                "requantize the operands to 8-bit zero points",
            );
        }
        // The correction spans all the array's rows: a row past the head's channels would
        // add (a - za) * (0 - zb).
        if !(cin / groups).is_multiple_of(t) {
            return err(
                format!(
                    "with zero points, each head's channels multiplied ({}) must fill whole channel tiles of {t}",
                    cin / groups
                ),
                "use a head size (or, without transpose_b, a number of keys) that is a multiple of the array size",
            );
        }
    }
    // (Keys' channels are the weight tile's rows: lanes past the last channel would be
    // whatever the stored rows hold there.)
    if *transposed && !cin.is_multiple_of(t) {
        return err(
            format!("with transpose_b, the channels multiplied ({cin}) must fill whole channel tiles of {t}"),
            "use a head size that is a multiple of the array size",
        );
    }
    Ok(())
}

/// An integer convolution that reads a host-written tensor of at most cpf / 2 channels with
/// a kernel larger than 1x1 (a network's stem: 3 channels fill 3 of the array's rows) reads
/// instead its im2col tensor, which the host writes, as a 1x1 convolution: the taps fill
/// the rows. (Integer sums do not depend on the order; floating-point ones would.)
fn pack_taps(nodes: &mut [Node], inputs: &mut Vec<Source>, unit: &Unit) {
    let cpf = unit.cpf as usize;
    for n in nodes.iter_mut() {
        // (The phases of a transposed convolution read shifted windows: not these.)
        let int = matches!(
            unit.datatype.precisions[n.prec],
            crate::numeric::Precision::Int(_)
        );
        if !int || n.place.is_some() || n.shift != (0, 0) {
            continue;
        }
        let Some(src) = inputs.iter().find(|s| s.name == n.input).cloned() else {
            continue;
        };
        let Lowered::Stencil(Stencil {
            transposed: false,
            kh,
            kw,
            stride,
            pad,
            pad_value,
            taps: Taps::Weighted { groups: 1, .. },
            ..
        }) = &mut n.work
        else {
            continue;
        };
        let c = src.shape[2];
        if *kh * *kw == 1 || 2 * c > cpf || src.format.block_scaled() || src.im2col.is_some() {
            continue;
        }
        let name = format!("{}.im2col", n.name);
        inputs.push(Source {
            name: name.clone(),
            shape: [n.out[0], n.out[1], *kh * *kw * c],
            format: src.format,
            joins: Vec::new(),
            im2col: Some(Im2col {
                of: src.name.clone(),
                kh: *kh,
                kw: *kw,
                stride: *stride,
                pad: *pad,
                pad_value: *pad_value,
            }),
        });
        (*kh, *kw, *stride, *pad, *pad_value) = (1, 1, 1, 0, 0);
        n.input = name;
    }
}

/// Whether tensor `name` holds no negative value: an unsigned integer tensor, the output of
/// an integer convolution or add with ReLU (or ReLU6; ReLU is the maximum with the zero
/// point, here not negative) and no leaky slope, or a max-pool, upsampling or concat of such
/// tensors, or an average pool of one with a zero point not negative. A max-pool over it may count zero padding: every window holds an input pixel
/// (padding < kernel), and max(x, 0) = x for x >= 0.
fn non_negative(model: &Model, name: &str) -> bool {
    match model.format_of(name) {
        Some(Format::Int(t)) if !t.signed => return true,
        Some(Format::Int(_)) => {}
        _ => return false,
    }
    let Some(l) = model.layer(name) else {
        return false;
    };
    let inputs: Vec<bool> = l.inputs.iter().map(|i| non_negative(model, i)).collect();
    l.op.get().non_negative(&inputs)
}

/// Whether the unit's window unit runs a layer: an integer depthwise window (each output
/// channel weighs its own input channel) or a window of sums or maxima of one input whose
/// kernel fits the window unit (at most `kernel` square, at most `line` wide) at a stride
/// of at most 3 (the instruction's `step`). Everything else runs on the array.
pub fn in_window(unit: &Unit, work: &Lowered, prec: usize, cin: usize, residual: bool) -> bool {
    let Some(w) = unit.window else {
        return false;
    };
    if !matches!(
        unit.datatype.precisions[prec],
        crate::numeric::Precision::Int(_)
    ) {
        return false;
    }
    let Some(s) = work.stencil() else {
        return false;
    };
    let fits = s.kh <= w.kernel as usize
        && s.kw <= w.kernel as usize
        && s.kw <= w.line as usize
        && s.stride <= 3;
    // A depthwise window, or a pool of each channel's own window (not a combination with
    // a second input, which the window unit does not read).
    let kind = match &s.taps {
        Taps::Weighted { .. } => s.depthwise(cin),
        Taps::Tensor { .. } => false,
        Taps::Sum | Taps::Max => !residual,
    };
    kind && fits
}

/// The slices a layer's output is stored in and their format: a layer that writes its
/// accumulator is stored as accumulator-bits / output-bits slices of the Design's output
/// type; any other layer as one tensor of its format. (The config's rules, every element a
/// divisor of the memory beat, make the output's width divide the accumulator's on every
/// valid Design; the error guards the invariant.)
fn raw_planes(
    unit: &Unit,
    l: &Layer,
    work: &Lowered,
    prec: usize,
) -> Result<(usize, Format), CompileError> {
    if !work.stencil().is_some_and(|s| s.post.raw) {
        return Ok((1, l.out_format));
    }
    let ops = unit.datatype.get(prec);
    let (acc, out) = (ops.acc_type().bits, ops.output().code_type().bits);
    if acc % out != 0 {
        return Err(CompileError::new(
            Some(&l.name),
            format!("output_type = \"accumulator\": the vector unit writes the {acc}-bit accumulator values as slices of the {out}-bit output type, whose width must divide {acc}"),
            "use a config whose output type has 4, 8 or 16 bits, or requantize the layer",
        ));
    }
    Ok(((acc / out) as usize, ops.output()))
}

/// The vector unit must have every post-processing operation the layer's work uses (a
/// max-pool in the window unit needs no `maxpool` in the vector unit).
fn vector_ops(
    design: &Design,
    l: &Layer,
    work: &Lowered,
    window: bool,
) -> Result<(), CompileError> {
    let need = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(CompileError::new(
                Some(&l.name),
                format!("{what} is not enabled in the Design's vector unit"),
                format!("add \"{what}\" to [vector] ops in the config"),
            ))
        }
    };
    let v = design.vector;
    let Some(s) = work.stencil() else {
        return Ok(());
    };
    let p = &s.post;
    if p.bias.iter().any(|b| *b != 0) {
        need(v.bias, "bias")?;
    }
    // An MX layer's FP32 bias and residual add are in the vector unit of an all-MX
    // Design; a Design mixing integer and MX layers rounds MX sums only.
    let mx = matches!(l.prec, crate::numeric::Precision::Mx(_));
    let biased = p.bias.iter().any(|b| *b != 0);
    let adds = l.inputs.len() > 1 && s.weights_from().is_none();
    let all_mx = design
        .datatypes()
        .precisions
        .iter()
        .all(|q| matches!(q, crate::numeric::Precision::Mx(_)));
    if mx && (biased || adds) && !all_mx {
        return Err(CompileError::new(
            Some(&l.name),
            format!(
                "an MX layer's FP32 {} runs in the vector unit of a Design whose layers are all MX; this Design mixes integer and MX layers, and its vector unit only rounds MX sums",
                if adds { "residual add" } else { "bias" }
            ),
            match adds {
                true => "compile for an all-MX Design (configs/32x32_mxint8.toml), or give the add an integer type",
                false => "compile for an all-MX Design (configs/32x32_mxint8.toml), or remove the bias",
            },
        ));
    }
    let acc = l.prec.ops().acc_type().bits;
    if !p.channel_requant.is_empty() && acc < crate::isa::scale_word_bits() {
        return Err(CompileError::new(
            Some(&l.name),
            format!(
                "per-channel requantization keeps each channel's multiplier and shift in an accumulator element, which needs {} bits; the accumulator has {acc}",
                crate::isa::scale_word_bits()
            ),
            "use accumulator = \"int32\" in the config and the model",
        ));
    }
    if l.inputs.len() > 1 && s.weights_from().is_none() {
        need(v.add, "add")?;
    }
    if p.relu {
        need(v.relu, "relu")?;
    }
    if p.negative_multiplier.is_some() {
        need(v.leaky_relu, "leaky_relu")?;
    }
    if s.taps == Taps::Max && !window {
        need(v.maxpool, "maxpool")?;
    }
    Ok(())
}

/// The index of the layer's precision in the unit's datapath, or an error that says what
/// differs and how to make them agree.
fn precision_index(d: &Datatypes, model: &Model, l: &Layer) -> Result<usize, CompileError> {
    if let Some(i) = d.index_of(&l.prec) {
        return Ok(i);
    }
    let names = |ps: &[Precision]| {
        ps.iter()
            .map(|p| p.ops().input().describe())
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let design = names(&d.precisions);
    let layer = Some(l.name.as_str());
    let same_family = d.precisions.iter().find(|p| p.family() == l.prec.family());
    let mp = model.precisions();
    let (rule, fix) = match (same_family, l.prec) {
        (Some(Precision::Mx(dm)), Precision::Mx(m)) if dm.elem == m.elem => (
            format!("the model's MX blocks have {} elements, the Design's {}", m.block_size, dm.block_size),
            format!("set block_size = {} in the model", dm.block_size),
        ),
        (Some(Precision::Posit(dp)), Precision::Posit(p)) if dp.bits == p.bits => (
            format!("the model's posits have es = {}, the Design's es = {}", p.es, dp.es),
            format!("set es = {} in the model", dp.es),
        ),
        (Some(Precision::Int(di)), Precision::Int(i)) => {
            let keys = [
                ("type", i.input, di.input),
                ("weight_type", i.weight, di.weight),
                ("output_type", i.output, di.output),
                ("accumulator", i.accumulator, di.accumulator),
            ];
            // output_type follows type unless the model says otherwise.
            let follows = i.output == i.input && di.output == di.input;
            let differ: Vec<String> = keys
                .iter()
                .filter(|(k, m, d)| m != d && !(*k == "output_type" && follows))
                .map(|(k, _, d)| format!("{k} = \"{d}\""))
                .collect();
            (
                format!(
                    "the layer computes {} x {} -> {} (accumulator {}), but the Design's integer datapath is {} x {} -> {} (accumulator {})",
                    i.input, i.weight, i.output, i.accumulator, di.input, di.weight, di.output, di.accumulator
                ),
                format!(
                    "set {} in the model, or compile for a matching config",
                    differ.join(", ")
                ),
            )
        }
        _ if mp.len() > 1 && d.precisions.len() == 1 => (
            format!("the model mixes {} layers but the Design computes in {design} only", names(&mp)),
            "compile for a multi-precision config such as configs/16x16_int8_mxint8.toml".to_string(),
        ),
        _ => (
            format!("the layer computes in {} but the Design's datapath runs {design}", l.prec.ops().input().describe()),
            format!("compile for a config whose datatype is {} (see configs/), or set type = \"{}\" in the model", l.prec.ops().input().name(), d.precisions[0].ops().input().name()),
        ),
    };
    Err(CompileError::new(layer, rule, fix))
}

/// The MACs of a layer of output `out`: a weighted window's without the all-zero weight
/// tiles, which are not run, nor the stored channels of a padded concat that are none of
/// its own (`real`: the concat's channels in each stored channel tile); 0 for others.
fn macs(
    out: [usize; 3],
    work: &Lowered,
    cin: usize,
    real: Option<&[usize]>,
    zero_tiles: Option<&(usize, Vec<bool>)>,
) -> u64 {
    let Some(s) = work.stencil() else {
        return 0;
    };
    match (&s.taps, zero_tiles) {
        (Taps::Weighted { .. }, Some((t, zero))) => {
            let icts = cin.div_ceil(*t);
            let size = |k: usize, n: usize| (n - k * t).min(*t);
            let in_tile = |k: usize| real.map_or(size(k, cin), |r| r[k]);
            let pairs: usize = (0..zero.len())
                .filter(|&p| !zero[p])
                .map(|p| size(p / icts, s.cout) * in_tile(p % icts))
                .sum();
            (out[0] * out[1] * s.kh * s.kw * pairs) as u64
        }
        _ => s.macs(out, real.map_or(cin, |r| r.iter().sum())),
    }
}

/// The all-zero (output tile, input tile) pairs of an integer weighted window of groups 1
/// and tiles of `t` channels (`Node::zero_tiles`), when there are any; every output tile
/// keeps at least one input tile (its accumulator rows must be written).
fn zero_tiles(work: &Lowered, int: bool, cin: usize, t: usize) -> Option<(usize, Vec<bool>)> {
    let Some(Stencil {
        transposed: false,
        kh,
        kw,
        cout,
        taps: Taps::Weighted {
            groups: 1, weights, ..
        },
        ..
    }) = work.stencil()
    else {
        return None;
    };
    if !int || t == 0 || cin == 0 {
        return None;
    }
    let (icts, octs) = (cin.div_ceil(t), cout.div_ceil(t));
    let mut zero = vec![true; octs * icts];
    for tap in 0..kh * kw {
        for ci in 0..cin {
            for co in 0..*cout {
                if weights[(tap * cin + ci) * cout + co] != 0 {
                    zero[co / t * icts + ci / t] = false;
                }
            }
        }
    }
    for oct in 0..octs {
        if zero[oct * icts..(oct + 1) * icts].iter().all(|z| *z) {
            zero[oct * icts] = false;
        }
    }
    zero.iter().any(|z| *z).then_some((t, zero))
}
