//! The importer on small graphs built by hand.

use super::*;
use crate::onnx::proto::ValueInfo;

fn scalar(name: &str, data_type: i32, v: f64) -> Tensor {
    Tensor {
        name: name.into(),
        dims: vec![],
        data_type,
        values: vec![v],
    }
}

fn node(op: &str, inputs: &[&str], out: &str) -> Node {
    Node {
        name: out.into(),
        op_type: op.into(),
        domain: if op.starts_with("QLinear") && op != "QLinearConv" {
            "com.microsoft".into()
        } else {
            String::new()
        },
        inputs: inputs.iter().map(|s| s.to_string()).collect(),
        outputs: vec![out.into()],
        attributes: vec![],
    }
}

/// A float input x [1, 2, 2, 2] quantized to `xq` (scale 0.5, zero point 0, uint8),
/// then `last`; the importer's verdict on `last`.
fn verdict(last: Node) -> Result<(), ImportError> {
    verdict_of(vec![last], vec![])
}

/// As `verdict`, for the nodes `last` with more initializers.
fn verdict_of(last: Vec<Node>, more: Vec<Tensor>) -> Result<(), ImportError> {
    imported(&graph_after(last, more)).map(|_| ())
}

/// The float input x [1, 2, 2, 2] quantized to `xq` (scale 0.5, zero point 0, uint8; the
/// scale 0.25 is `other`), then the nodes `last`, with more initializers.
fn graph_after(last: Vec<Node>, more: Vec<Tensor>) -> Graph {
    let mut nodes = vec![node("QuantizeLinear", &["x", "s", "z"], "xq")];
    nodes.extend(last);
    let mut initializers = vec![
        scalar("s", dtype::FLOAT, 0.5),
        scalar("z", dtype::UINT8, 0.0),
        scalar("other", dtype::FLOAT, 0.25),
    ];
    initializers.extend(more);
    Graph {
        nodes,
        initializers,
        inputs: vec![ValueInfo {
            name: "x".into(),
            elem_type: dtype::FLOAT,
            shape: Some(vec![Some(1), Some(2), Some(2), Some(2)]),
            ..ValueInfo::default()
        }],
        outputs: vec![],
    }
}

/// The importer after every node of `g`.
fn imported(g: &Graph) -> Result<Importer<'static>, ImportError> {
    let mut im = Importer::new("t.onnx", g, "d");
    im.graph_input(g)?;
    for (i, n) in g.nodes.iter().enumerate() {
        im.node(n, i)?;
    }
    Ok(im)
}

/// A QOperator node must be given its input's own scale and zero point; a
/// QLinearConcat without operands is an error, not a panic.
#[test]
fn qoperator_inputs_must_carry_their_tensors_parameters() {
    for last in [
        node(
            "QLinearGlobalAveragePool",
            &["xq", "other", "z", "s", "z"],
            "g",
        ),
        Node {
            attributes: vec![crate::onnx::proto::Attribute {
                name: "kernel_shape".into(),
                value: AttrValue::Ints(vec![1, 1]),
            }],
            ..node("QLinearAveragePool", &["xq", "other", "z", "s", "z"], "p")
        },
        node(
            "QLinearAdd",
            &["xq", "s", "z", "xq", "other", "z", "s", "z"],
            "a",
        ),
        node(
            "QLinearConcat",
            &["s", "z", "xq", "s", "z", "xq", "other", "z"],
            "c",
        ),
    ] {
        let op = last.op_type.clone();
        let e = verdict(last).expect_err(&op);
        assert!(
            e.rule
                .contains("is given scale 0.25 zero point 0, but was quantized with scale 0.5"),
            "{op}: {e}"
        );
    }
    let e = verdict(node("QLinearConcat", &["s", "z"], "c")).expect_err("no operands");
    assert!(e.rule.contains("only one"), "{e}");
}

/// A float constant of ONNX dims `dims`.
fn constant(name: &str, dims: &[i64], values: &[f64]) -> Tensor {
    Tensor {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: dtype::FLOAT,
        values: values.to_vec(),
    }
}

/// Arithmetic with a constant that the accelerator cannot run is refused, naming the
/// rule: a Div of two tensors, a Mul by a constant that varies across the map, a constant
/// divided by a tensor, a division by 0, a constant that does not broadcast.
#[test]
fn arithmetic_the_accelerator_cannot_run_is_refused() {
    let dq = || node("DequantizeLinear", &["xq", "s", "z"], "xd");
    let cases = [
        (
            node("Div", &["xd", "xd"], "m"),
            vec![],
            "Div of two tensors",
        ),
        (
            node("Mul", &["xd", "map"], "m"),
            vec![constant(
                "map",
                &[1, 2, 2, 2],
                &[1., 2., 3., 4., 5., 6., 7., 8.],
            )],
            "varies across the feature map",
        ),
        (
            node("Div", &["k", "xd"], "m"),
            vec![constant("k", &[1], &[2.0])],
            "a constant divided by a tensor",
        ),
        (
            node("Div", &["xd", "k"], "m"),
            vec![constant("k", &[1, 2, 1, 1], &[2.0, 0.0])],
            "a division by a constant holding 0",
        ),
        (
            node("Add", &["xd", "k"], "m"),
            vec![constant("k", &[3], &[1., 2., 3.])],
            "a constant of shape [3] does not broadcast to the tensor's [1, 2, 2, 2]",
        ),
    ];
    for (last, more, rule) in cases {
        let op = last.op_type.clone();
        let e = verdict_of(vec![dq(), last], more).expect_err(&op);
        assert!(e.rule.contains(rule), "{op}: {e}");
    }
}

/// `(x - 1) * [2, -3] / 4` over x's two channels composes into one map: slopes 0.5 and
/// -0.75 and constants -0.5 and 0.75 per channel, in units of the output scale 0.25 (x's
/// scale 0.5): output steps per input step s = [1, -1.5], constants [-2, 3] steps, so
/// [-2, -2] input steps, carried exactly by weight 127: bias -254 and +254 (the zero
/// point is 0), requantization 1/127 and 1.5/127.
#[test]
fn a_chain_of_constant_arithmetic_composes_into_one_layer() {
    let nodes = vec![
        node("DequantizeLinear", &["xq", "s", "z"], "xd"),
        node("Sub", &["xd", "one"], "a"),
        node("Mul", &["a", "k"], "b"),
        node("Div", &["b", "four"], "c"),
        node("QuantizeLinear", &["c", "other", "z"], "y"),
    ];
    let more = vec![
        constant("one", &[], &[1.0]),
        constant("k", &[2, 1, 1], &[2.0, -3.0]),
        constant("four", &[1, 1, 1, 1], &[4.0]),
    ];
    let im = imported(&graph_after(nodes, more)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(im.layers.len(), 1);
    let l = &im.layers[0];
    let key = |k: &str| {
        l.keys
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(layer_npy(&im, l, "weights"), vec![127, -127]);
    assert_eq!(layer_npy(&im, l, "bias"), vec![-254, 254]);
    // 1/127 and 1.5/127 with the largest shift whose multiplier fits 16 bits (22):
    // 2^22 / 127 = 33025.76 -> 33026, 1.5 x 2^22 / 127 = 49538.6 -> 49539.
    let r = key("requant");
    assert!(
        r.contains("multiplier = [33026, 49539], shift = [22, 22]"),
        "{r}"
    );
}

/// A 1x1 convolution (weights [[1, 2], [3, 4]] at scale 0.1, bias [10, -10] at 0.05, over
/// x at scale 0.5) whose float output a batch norm reads (scale [2, -1], mean [0, 1], var
/// [4, 1], B [0.5, 0], epsilon 0: a = [1, -1], d = [0.5, 1]) folds into it: channel 1's
/// weights negated, the bias sign(a) b + d / (0.5 x 0.1) = [20, 30], requantization 0.05 /
/// 0.25 = 0.2 for both.
#[test]
fn a_batch_norm_after_a_convolution_folds_into_it() {
    let int = |name: &str, t: i32, dims: &[i64], v: &[f64]| Tensor {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: t,
        values: v.to_vec(),
    };
    let bn = Node {
        attributes: vec![crate::onnx::proto::Attribute {
            name: "epsilon".into(),
            value: AttrValue::Float(0.0),
        }],
        ..node("BatchNormalization", &["c", "g", "b", "m", "v"], "n")
    };
    let nodes = vec![
        node("DequantizeLinear", &["xq", "s", "z"], "xd"),
        node("DequantizeLinear", &["wq", "ws"], "w"),
        node("DequantizeLinear", &["bq", "bs"], "bias"),
        node("Conv", &["xd", "w", "bias"], "c"),
        bn,
        node("QuantizeLinear", &["n", "other", "z"], "y"),
    ];
    let more = vec![
        int("wq", dtype::INT8, &[2, 2, 1, 1], &[1., 2., 3., 4.]),
        scalar("ws", dtype::FLOAT, 0.1),
        int("bq", dtype::INT32, &[2], &[10., -10.]),
        scalar("bs", dtype::FLOAT, 0.05),
        constant("g", &[2], &[2.0, -1.0]),
        constant("b", &[2], &[0.5, 0.0]),
        constant("m", &[2], &[0.0, 1.0]),
        constant("v", &[2], &[4.0, 1.0]),
    ];
    let im = imported(&graph_after(nodes, more)).unwrap_or_else(|e| panic!("{e}"));
    let [l] = &im.layers[..] else {
        panic!("{} layers", im.layers.len())
    };
    assert_eq!(layer_npy(&im, l, "weights"), vec![1, -3, 2, -4]);
    assert_eq!(layer_npy(&im, l, "bias"), vec![20, 30]);
    // 0.2 with the largest shift whose multiplier fits 16 bits (18): 0.2 x 2^18 = 52428.8
    // -> 52429.
    let key = l.keys.iter().find(|(k, _)| *k == "requant").unwrap();
    assert!(
        key.1.contains("multiplier = 52429, shift = 18"),
        "{}",
        key.1
    );
}

/// The integers of `.npy` key `key` of layer `l`.
fn layer_npy(im: &Importer, l: &crate::onnx::layer::Layer, key: &str) -> Vec<i64> {
    let v = &l.keys.iter().find(|(k, _)| *k == key).unwrap().1;
    let file = v.trim_matches('"').rsplit('/').next().unwrap();
    let bytes = &im.tensors.iter().find(|(f, _)| f == file).unwrap().1;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.npy"), bytes).unwrap();
    crate::model::npy::read(&dir.path().join("t.npy"))
        .unwrap()
        .data
}

/// A Resize the accelerator's repeat cannot express is refused, naming what: linear mode,
/// different factors along height and width, a transformation that reads other pixels
/// (asymmetric with round_prefer_ceil reads input 1 for output 1).
#[test]
fn resizes_that_are_not_a_repeat_are_refused() {
    let text = |name: &str, v: &str| crate::onnx::proto::Attribute {
        name: name.into(),
        value: AttrValue::Text(v.into()),
    };
    let resize = |attributes: Vec<crate::onnx::proto::Attribute>, scales: &str| Node {
        attributes,
        ..node("Resize", &["xd", "", scales], "r")
    };
    let scales = vec![
        constant("two", &[4], &[1.0, 1.0, 2.0, 2.0]),
        constant("two_three", &[4], &[1.0, 1.0, 2.0, 3.0]),
    ];
    let cases = [
        (resize(vec![text("mode", "linear")], "two"), "mode linear"),
        (resize(vec![], "two_three"), "scales 2 and 3"),
        (
            resize(
                vec![
                    text("coordinate_transformation_mode", "asymmetric"),
                    text("nearest_mode", "round_prefer_ceil"),
                ],
                "two",
            ),
            "output row 1 reads another input row than a repeat by 2",
        ),
    ];
    for (last, rule) in cases {
        let dq = node("DequantizeLinear", &["xq", "s", "z"], "xd");
        let e = verdict_of(vec![dq, last], scales.clone()).expect_err(rule);
        assert!(e.rule.contains(rule), "{e}");
    }
    // PyTorch's export (half_pixel, round_prefer_floor) by 2 is a repeat.
    let dq = node("DequantizeLinear", &["xq", "s", "z"], "xd");
    verdict_of(vec![dq, resize(vec![], "two")], scales).unwrap_or_else(|e| panic!("{e}"));
}

/// A constant term far beyond the accumulator (an infinite or huge constant, as a corrupt
/// scale makes it) is refused when the layer is made, never an overflow.
#[test]
fn constant_terms_beyond_the_accumulator_are_refused() {
    for k in [1e30, f64::INFINITY, f64::NEG_INFINITY] {
        let nodes = vec![
            node("DequantizeLinear", &["xq", "s", "z"], "xd"),
            node("Add", &["xd", "k"], "m"),
            node("QuantizeLinear", &["m", "other", "z"], "mq"),
        ];
        let e = verdict_of(nodes, vec![constant("k", &[1], &[k])]).expect_err("a huge constant");
        assert!(
            e.rule.contains("which the int32 accumulator does not hold"),
            "{k}: {e}"
        );
    }
}
