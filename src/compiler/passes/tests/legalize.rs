use super::*;
use crate::compiler::passes::legalize;

const THREE_LAYERS: &str = r#"
name = "three"
seed = 1
[input]
shape = [9, 7, 5]
[[layer]]
name = "a"
op = "conv2d"
kernel = 3
stride = 2
padding = 1
out_channels = 6
[[layer]]
name = "b"
op = "conv2d"
kernel = 1
out_channels = 6
[[layer]]
name = "sum"
op = "add"
residual = "a"
"#;

/// One node per layer with hand-derived shapes ((9 + 2 - 3) / 2 + 1 = 5 rows,
/// (7 + 2 - 3) / 2 + 1 = 4 columns), MACs, and tensor edges for the residual.
#[test]
fn builds_one_node_per_layer_with_its_shape_and_edges() {
    let d = design(8, ROOMY);
    let m = model(THREE_LAYERS);
    let g = legalize::run(&d, &m).unwrap();
    let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "sum"]);
    assert_eq!(g.nodes[0].out, [5, 4, 6]);
    assert_eq!(g.nodes[1].out, [5, 4, 6]);
    assert_eq!(g.nodes[2].out, [5, 4, 6]);
    // MACs: out pixels x cout x kernel taps x cin.
    assert_eq!(g.nodes[0].macs, 5 * 4 * 6 * 9 * 5);
    assert_eq!(g.nodes[1].macs, 5 * 4 * 6 * 6);
    assert_eq!(g.nodes[2].macs, 0);
    assert_eq!(g.nodes[2].input, "b");
    assert_eq!(g.nodes[2].residual.as_deref(), Some("a"));
    // a -> b, a -> sum (residual), b -> sum.
    assert_eq!(g.dag.edge_count(), 3);
    assert_eq!(g.consumers("a"), vec![1, 2]);
    assert_eq!(g.last_use("a"), Some(2));
    assert_eq!(g.last_use(g.input()), Some(0));
    assert_eq!(g.outputs, vec!["sum".to_string()]);
}

/// A model in a datatype the Design does not compute is refused, naming the layer, what
/// differs and a fix.
#[test]
fn refuses_a_precision_the_design_lacks() {
    let d = design(8, ROOMY);
    let fp8 = THREE_LAYERS.replace("seed = 1", "seed = 1\ntype = \"fp8_e4m3\"");
    let m = model(&fp8[..fp8.find("[[layer]]\nname = \"sum\"").unwrap()]);
    let e = legalize::run(&d, &m).unwrap_err();
    assert_eq!(e.layer.as_deref(), Some("a"));
    assert!(
        e.rule.contains("FP8 E4M3") || e.rule.contains("fp8_e4m3"),
        "{e}"
    );
    assert!(e.fix.contains("type = \"int8\""), "{e}");
}

/// An integer model whose accumulator differs gets a fix naming the key to change.
#[test]
fn names_the_integer_key_that_differs() {
    let d = design(8, ROOMY);
    let m = model(&THREE_LAYERS.replace("seed = 1", "seed = 1\naccumulator = \"int16\""));
    let e = legalize::run(&d, &m).unwrap_err();
    assert!(e.fix.contains("accumulator = \"int32\""), "{e}");
    assert!(
        !e.fix.contains("type = "),
        "only the accumulator differs: {e}"
    );
}

/// A layer that needs a vector operation the Design left out is refused with the op to add.
#[test]
fn refuses_a_vector_operation_the_design_lacks() {
    let mut d = design(8, ROOMY);
    d.vector.add = false;
    let m = model(THREE_LAYERS);
    let e = legalize::run(&d, &m).unwrap_err();
    assert_eq!(e.layer.as_deref(), Some("sum"));
    assert!(e.rule.contains("add is not enabled"), "{e}");
    assert!(e.fix.contains("[vector] ops"), "{e}");
}

/// A 3x3 stride-2 convolution over 2 channels on an 8x8 array reads its im2col tensor
/// instead (2 <= 8 / 2 channels, a kernel larger than 1x1): a 1x1 convolution over
/// 3 * 3 * 2 = 18 channels of a [2, 2, 18] host-written tensor. Its values, by hand, for a
/// 3x3 input of channel 0 = 1..9 and channel 1 = 10 x that, padding 1: output pixel (0, 0)
/// reads rows -1..1 and columns -1..1, so taps (0, *) and (*, 0) are padding (0) and tap
/// (1, 1) is input (0, 0) = (1, 10); output pixel (1, 1) reads input rows and columns 1..3,
/// of which row and column 3 are padding: tap (0, 0) is input (1, 1) = (5, 50).
/// A 1x1 convolution, or one over more than cpf / 2 channels, is left alone.
#[test]
fn packs_a_stem_s_taps_into_channels() {
    let d = design(8, ROOMY);
    let src = |c: usize, k: usize| {
        format!("seed = 2\n[input]\nshape = [3, 3, {c}]\n[[layer]]\nname = \"stem\"\nop = \"conv2d\"\nkernel = {k}\nstride = 2\npadding = {}\nout_channels = 8\n", k / 2)
    };
    let g = legalize::run(&d, &model(&src(2, 3))).unwrap();
    let packed = g
        .inputs
        .iter()
        .find(|s| s.name == "stem.im2col")
        .expect("packed");
    assert_eq!(packed.shape, [2, 2, 18]);
    let n = &g.nodes[0];
    assert_eq!(n.input, "stem.im2col");
    let s = n.stencil();
    assert_eq!((s.kh, s.kw, s.stride, s.pad), (1, 1, 1, 0));
    let x = crate::model::Tensor {
        h: 3,
        w: 3,
        c: 2,
        format: crate::numeric::Format::Int(crate::numeric::IntType::new(true, 8)),
        data: (1..=9).flat_map(|v| [v, 10 * v]).collect(),
        scales: vec![],
    };
    let ic = packed.im2col.as_ref().unwrap();
    let t = crate::compiler::passes::encode::im2col(&x, ic, packed.shape);
    let at = |oy: usize, ox: usize, ky: usize, kx: usize, ci: usize| {
        t.at(oy, ox, (ky * 3 + kx) * 2 + ci)
    };
    assert_eq!(
        (at(0, 0, 0, 0, 0), at(0, 0, 0, 2, 1), at(0, 0, 2, 0, 0)),
        (0, 0, 0)
    );
    assert_eq!((at(0, 0, 1, 1, 0), at(0, 0, 1, 1, 1)), (1, 10));
    assert_eq!((at(0, 0, 2, 2, 0), at(0, 0, 2, 2, 1)), (5, 50));
    assert_eq!((at(1, 1, 0, 0, 0), at(1, 1, 0, 0, 1)), (5, 50));
    assert_eq!((at(1, 1, 1, 1, 0), at(1, 1, 2, 2, 0)), (9, 0));
    for (c, k) in [(2, 1), (5, 3)] {
        let g = legalize::run(&d, &model(&src(c, k))).unwrap();
        assert_eq!(g.nodes[0].input, "input", "{c} channels, kernel {k}");
    }
}

/// Conv + max-pool fusion: a 3x3 convolution absorbs the 2x2 pool after it (one node), a
/// 1x1 convolution does not (two nodes): its fused pool taps read strided windows, which
/// measured 2.5x slower on ResNet-18's packed stem.
#[test]
fn fuses_a_max_pool_into_a_3x3_convolution_only() {
    let d = design(8, ROOMY);
    for (k, nodes) in [(3, 1), (1, 2)] {
        let src = format!("seed = 3\n[input]\nshape = [20, 20, 8]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = {k}\npadding = {}\nout_channels = 8\n[[layer]]\nname = \"p\"\nop = \"maxpool\"\nkernel = 2\nstride = 2\n", k / 2);
        let m = model(&src);
        let c = crate::compiler::passes::tests::through(&d, &m, "fuse").unwrap();
        assert_eq!(c.graph().nodes.len(), nodes, "kernel {k}");
    }
}

/// A ResNet block with a downsample shortcut listed first: after `fuse`, the block's
/// first convolution comes first and the shortcut right before the convolution that adds
/// it (fused with the add, named after it). A shortcut that is also a model output, or
/// that a later layer reads as its input, keeps its place.
#[test]
fn a_shortcut_read_only_as_a_residual_moves_to_just_before_its_consumer() {
    let block = |extra: &str| {
        format!(
            "name = \"block\"\n[input]\nname = \"x\"\nshape = [8, 8, 8]\n\
             [[layer]]\nname = \"down\"\nop = \"conv2d\"\nkernel = 1\nstride = 2\nout_channels = 16\n\
             [[layer]]\nname = \"a\"\nop = \"conv2d\"\ninput = \"x\"\nkernel = 3\nstride = 2\npadding = 1\nout_channels = 16\nactivation = \"relu\"\n\
             [[layer]]\nname = \"b\"\nop = \"conv2d\"\nkernel = 3\npadding = 1\nout_channels = 16\n\
             [[layer]]\nname = \"sum\"\nop = \"add\"\nresidual = \"down\"\nactivation = \"relu\"\n{extra}"
        )
    };
    let order = |src: &str| {
        let d = design(8, ROOMY);
        let m = model(src);
        let c = through(&d, &m, "fuse").unwrap();
        let names: Vec<String> = c.graph().nodes.iter().map(|n| n.name.clone()).collect();
        names
    };
    assert_eq!(order(&block("")), ["a", "down", "sum"]);
    let read = "[[layer]]\nname = \"c\"\nop = \"add\"\ninput = \"down\"\nresidual = \"sum\"\n";
    assert_eq!(order(&block(read)), ["down", "a", "sum", "c"]);
}

/// Two 24-channel convolutions concatenated on a 16x16 array (24 is not a whole number of
/// 16-channel tiles) and read by a 1x1 convolution: the second operand starts at stored
/// channel 32, the reader's weights have zero rows for stored channels 24..31, the MACs
/// count the concat's 48 channels only, and the program equals the golden model.
#[test]
fn a_concat_of_partial_tiles_is_read_through_zero_weight_rows() {
    let d = design(16, ROOMY);
    let src = |reader: &str| {
        format!(
            r#"
seed = 4
[input]
shape = [5, 5, 8]
[[layer]]
name = "a"
op = "conv2d"
kernel = 1
out_channels = 24
requant = {{ multiplier = 90, shift = 12 }}
[[layer]]
name = "b"
op = "conv2d"
input = "input"
kernel = 3
padding = 1
out_channels = 24
requant = {{ multiplier = 90, shift = 13 }}
[[layer]]
name = "cat"
op = "concat"
inputs = ["a", "b"]
{reader}"#
        )
    };
    let conv = "[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 1\nout_channels = 16\nrequant = { multiplier = 70, shift = 13 }\n";
    let m = model(&src(conv));
    let g = crate::compiler::passes::legalize::run(&d, &m).expect("legal");
    let cat = &g.concats[0];
    assert_eq!((cat.offsets.clone(), cat.shape[2]), (vec![0, 32], 56));
    assert_eq!(g.view_of("b", 16).map(|(_, t)| t), Some(2));
    let c = g.nodes.iter().find(|n| n.name == "c").expect("c");
    let crate::model::lower::Taps::Weighted { weights, .. } = &c.stencil().taps else {
        panic!("a conv")
    };
    assert_eq!(weights.len(), 56 * 16);
    assert!(weights[24 * 16..32 * 16].iter().all(|&w| w == 0));
    assert_eq!(c.macs, 5 * 5 * 16 * 48);
    let p = crate::compiler::compile(&d, &m).unwrap_or_else(|e| panic!("{e}"));
    assert_golden(&d, &m, &p, "partial tiles");
    // Read by anything but convolutions, the gap would be in the data: refused.
    let pool = "[[layer]]\nname = \"p\"\nop = \"maxpool\"\nkernel = 1\n";
    let e = crate::compiler::passes::legalize::run(&d, &model(&src(pool))).unwrap_err();
    assert!(
        e.rule
            .contains("unless only integer convolutions read the concat"),
        "{e}"
    );
}

/// An MX matmul of two run-time tensors loads its second operand with block scales through
/// the transposer: a Design without [rows] is refused, naming the layer and the fix.
#[test]
fn refuses_an_mx_runtime_matmul_without_the_transposer() {
    let config = std::fs::read_to_string("rtl-tests/configs/16x16_mxint8_rows.toml").unwrap();
    let no_rows = &config[..config.find("[rows]").unwrap()];
    let d = crate::config::parse_str(no_rows, "mx.toml", "mx").unwrap();
    let attention = std::fs::read_to_string("rtl-tests/cases/mx_attention.toml").unwrap();
    let e = legalize::run(&d, &model(&attention)).unwrap_err();
    assert_eq!(e.layer.as_deref(), Some("s"));
    assert!(e.rule.contains("through the transposer"), "{e}");
    assert!(e.fix.contains("[rows] enabled = true"), "{e}");
}
