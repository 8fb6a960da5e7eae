//! The multiply-accumulates of an ONNX node (for `hwgen run --json`), from its inputs' dims:
//! convolutions, matrix products and their quantized and integer forms; 0 for the rest.

use super::proto::{AttrValue, Node};

/// The positions of the data and weight inputs of the operators that multiply-accumulate.
fn operands(op: &str) -> Option<(usize, usize)> {
    Some(match op {
        "Conv" | "ConvTranspose" | "ConvInteger" | "MatMul" | "MatMulInteger" | "Gemm" => (0, 1),
        "QLinearConv" | "QLinearMatMul" | "QGemm" => (0, 3),
        _ => return None,
    })
}

/// The node's MACs, or None when it multiply-accumulates but the dims of an operand are
/// not known (`dims` gives them by tensor name).
pub fn node_macs(n: &Node, dims: impl Fn(&str) -> Option<Vec<usize>>) -> Option<u64> {
    let Some((xi, wi)) = operands(&n.op_type) else {
        return Some(0);
    };
    let x = dims(n.inputs.get(xi)?)?;
    let w = dims(n.inputs.get(wi)?)?;
    let prod = |d: &[usize]| d.iter().map(|&v| v as u64).product::<u64>();
    match n.op_type.as_str() {
        "Conv" | "ConvInteger" | "QLinearConv" => {
            // Output pixels x (input channels per group x kernel taps) x output channels.
            let (spatial, taps) = (x.get(2..)?, w.get(2..)?);
            let ints = |k: &str, d: i64| match n.attr(k) {
                Some(AttrValue::Ints(v)) => v.clone(),
                _ => vec![d; spatial.len() * if k == "pads" { 2 } else { 1 }],
            };
            let (strides, pads, dil) = (ints("strides", 1), ints("pads", 0), ints("dilations", 1));
            let mut pixels = 1u64;
            for (i, (&s, &k)) in spatial.iter().zip(taps).enumerate() {
                let span = dil.get(i).copied().unwrap_or(1) * (k as i64 - 1) + 1;
                let padded = s as i64
                    + pads.get(i).copied().unwrap_or(0)
                    + pads.get(i + spatial.len()).copied().unwrap_or(0);
                let same =
                    matches!(n.attr("auto_pad"), Some(AttrValue::Text(t)) if t.starts_with("SAME"));
                let stride = strides.get(i).copied().unwrap_or(1).max(1);
                let out = if same {
                    (s as i64 + stride - 1) / stride
                } else {
                    ((padded - span) / stride + 1).max(0)
                };
                pixels *= out as u64;
            }
            Some(x[0] as u64 * pixels * prod(&w))
        }
        // Each input pixel scatters its channels through every weight.
        "ConvTranspose" => Some(prod(&x) / *x.get(1)? as u64 * prod(&w)),
        "Gemm" | "QGemm" => {
            let m = if n.attr_int("transA", 0) != 0 {
                *x.get(1)?
            } else {
                *x.first()?
            };
            Some(m as u64 * prod(&w))
        }
        // [.., M, K] x [.., K, N]: every output element sums K products.
        _ => {
            let (k, nn) = match w[..] {
                [k] => (k, 1),
                _ => (w[w.len() - 2], w[w.len() - 1]),
            };
            let m = if x.len() >= 2 { x[x.len() - 2] } else { 1 };
            let batch = |d: &[usize]| prod(&d[..d.len().saturating_sub(2)]);
            Some(batch(&x).max(batch(&w)) * (m * k * nn) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::proto::Attribute;

    fn node(op: &str, attrs: Vec<Attribute>) -> Node {
        Node {
            op_type: op.into(),
            inputs: vec!["x".into(), "w".into()],
            attributes: attrs,
            ..Node::default()
        }
    }

    /// Hand-derived: a 3x3 convolution of 4 to 8 channels over 10x10, padding 1, stride 2:
    /// 5x5 output pixels x 8 x 4 x 9; a [1, 16, 32] x [32, 64] MatMul: 16 x 64 x 32; a
    /// [1, 2, 16, 16] x [1, 2, 16, 16] one: 2 x 16 x 16 x 16; a Gemm [1, 32] x [10, 32]^T:
    /// 320.
    #[test]
    fn macs_of_convolutions_and_products() {
        let dims = |x: Vec<usize>, w: Vec<usize>| {
            move |t: &str| Some(if t == "x" { x.clone() } else { w.clone() })
        };
        let conv = node(
            "Conv",
            vec![
                Attribute {
                    name: "strides".into(),
                    value: AttrValue::Ints(vec![2, 2]),
                },
                Attribute {
                    name: "pads".into(),
                    value: AttrValue::Ints(vec![1, 1, 1, 1]),
                },
            ],
        );
        assert_eq!(
            node_macs(&conv, dims(vec![1, 4, 10, 10], vec![8, 4, 3, 3])),
            Some(25 * 8 * 4 * 9)
        );
        let mm = node("MatMul", vec![]);
        assert_eq!(
            node_macs(&mm, dims(vec![1, 16, 32], vec![32, 64])),
            Some(16 * 64 * 32)
        );
        assert_eq!(
            node_macs(&mm, dims(vec![1, 2, 16, 16], vec![1, 2, 16, 16])),
            Some(2 * 16 * 16 * 16)
        );
        let gemm = node(
            "Gemm",
            vec![Attribute {
                name: "transB".into(),
                value: AttrValue::Int(1),
            }],
        );
        assert_eq!(node_macs(&gemm, dims(vec![1, 32], vec![10, 32])), Some(320));
        assert_eq!(node_macs(&node("Relu", vec![]), |_| None), Some(0));
        assert_eq!(node_macs(&mm, |_| None), None);
    }
}
