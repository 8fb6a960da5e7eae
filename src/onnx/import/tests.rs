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
    let g = Graph {
        nodes: vec![node("QuantizeLinear", &["x", "s", "z"], "xq"), last],
        initializers: vec![
            scalar("s", dtype::FLOAT, 0.5),
            scalar("z", dtype::UINT8, 0.0),
            scalar("other", dtype::FLOAT, 0.25),
        ],
        inputs: vec![ValueInfo {
            name: "x".into(),
            elem_type: dtype::FLOAT,
            shape: Some(vec![Some(1), Some(2), Some(2), Some(2)]),
        }],
        outputs: vec![],
    };
    let mut im = Importer::new("t.onnx", &g, "d");
    im.graph_input(&g)?;
    for (i, n) in g.nodes.iter().enumerate() {
        im.node(n, i)?;
    }
    Ok(())
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
