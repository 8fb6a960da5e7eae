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
