//! float16 and bfloat16 on the host. Every value of either type is a float32 value, so an
//! operator with such inputs runs as it does on float32 (its inputs widened, exactly), and
//! each float32 result is rounded once to the type its output takes
//! (`MiniFloat::round_ieee`: to nearest, ties to even, overflowing to infinity). numpy
//! computes a float16 operation the same way (in float32, rounded to float16), so an
//! elementwise result is the one ONNX's reference computes; an operator that the reference
//! computes in several float16 steps (a softmax, an attention) is rounded here only at its
//! end, and can differ from the reference by a few units in the last place.

use super::{HostVal, Node};
use crate::onnx::proto::dtype;

/// The type the outputs of `n` take when its inputs have the types `elems` (ONNX's type
/// constraints): the first input's, or the second's for CastLike (the target), Where (the
/// values) and DequantizeLinear (the scale), or the third's for OneHot (the values). None for
/// Cast and operators with a `dtype` attribute, which make their outputs' type themselves.
fn result_type(n: &Node, elems: &[Option<i32>]) -> Option<i32> {
    if n.op_type == "Cast" || n.attr("dtype").is_some() {
        return None;
    }
    let from = match n.op_type.as_str() {
        "CastLike" | "Where" | "DequantizeLinear" => 1,
        "OneHot" => 2,
        _ => 0,
    };
    elems.get(from).copied().flatten()
}

/// Whether output `k` of `n` takes the operator's type (LayerNormalization's mean and
/// inverse standard deviation are of its stash type, float32).
fn takes_type(n: &Node, k: usize) -> bool {
    !(n.op_type == "LayerNormalization" && k > 0)
}

/// `v`'s elements rounded to narrow float type `t`, which `v` then has.
pub(super) fn round_to(mut v: HostVal, t: i32) -> HostVal {
    if let Some(f) = dtype::narrow_float(t) {
        v.data.iter_mut().for_each(|x| *x = f.round_ieee(*x));
        v.elem = t;
    }
    v
}

/// `n` evaluated on inputs of which some are float16 or bfloat16 (None when none is), by
/// `eval` on the inputs widened to float32, its float32 outputs rounded to the type they
/// take.
pub(super) fn eval(
    n: &Node,
    ins: &[Option<HostVal>],
    eval: impl Fn(&Node, &[Option<HostVal>]) -> Result<Vec<HostVal>, String>,
) -> Option<Result<Vec<HostVal>, String>> {
    let elems: Vec<Option<i32>> = ins.iter().map(|v| v.as_ref().map(|v| v.elem)).collect();
    // (BitCast reads the stored bits.)
    if n.op_type == "BitCast"
        || !elems
            .iter()
            .flatten()
            .any(|&t| dtype::narrow_float(t).is_some())
    {
        return None;
    }
    let wide: Vec<Option<HostVal>> = ins
        .iter()
        .map(|v| {
            v.as_ref().map(|v| match dtype::narrow_float(v.elem) {
                Some(_) => HostVal {
                    elem: dtype::FLOAT,
                    ..v.clone()
                },
                None => v.clone(),
            })
        })
        .collect();
    let to = result_type(n, &elems).filter(|&t| dtype::narrow_float(t).is_some());
    Some(eval(n, &wide).map(|outs| {
        outs.into_iter()
            .enumerate()
            .map(|(k, v)| match to {
                Some(t) if v.elem == dtype::FLOAT && takes_type(n, k) => round_to(v, t),
                _ => v,
            })
            .collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn val(elem: i32, data: Vec<f64>) -> Option<HostVal> {
        Some(HostVal {
            dims: vec![data.len()],
            data,
            elem,
        })
    }

    fn op(t: &str) -> Node {
        Node {
            op_type: t.into(),
            ..Node::default()
        }
    }

    /// By hand: float16 has a unit of 2^-10 at 1 and 2^-9 at 2. 1 + (1 + 2^-10) =
    /// 2 + 2^-10, halfway between 2 and 2 + 2^-9: even, so 2. bfloat16 (2^-7 at 1): 1 + 2^-8
    /// is the tie with 1, so 1. 60000 + 60000 overflows float16 to infinity. Shape gives
    /// int64 as it is; a float16 scale makes DequantizeLinear's output float16
    /// ((3 - 1) * 0.1 = 0.2 in float32, 0.199951171875 in float16).
    #[test]
    fn results_are_rounded_once_to_the_output_type() {
        let f = |op_: &str, ins: &[Option<HostVal>]| {
            eval(&op(op_), ins, super::super::eval)
                .expect("a narrow input")
                .unwrap()
        };
        let u = 2f64.powi(-10);
        let s = f("Add", &[val(10, vec![1.0]), val(10, vec![1.0 + u])]);
        assert_eq!((s[0].data[0], s[0].elem), (2.0, dtype::FLOAT16));
        let b = f("Add", &[val(16, vec![1.0]), val(16, vec![2f64.powi(-8)])]);
        assert_eq!((b[0].data[0], b[0].elem), (1.0, dtype::BFLOAT16));
        let o = f("Add", &[val(10, vec![60000.0]), val(10, vec![60000.0])]);
        assert_eq!(o[0].data[0], f64::INFINITY);
        let sh = f("Shape", &[val(10, vec![1.0, 2.0, 3.0])]);
        assert_eq!((sh[0].data.clone(), sh[0].elem), (vec![3.0], dtype::INT64));
        let q = f(
            "DequantizeLinear",
            &[
                val(dtype::UINT8, vec![3.0]),
                val(10, vec![0.0999755859375]),
                val(dtype::UINT8, vec![1.0]),
            ],
        );
        assert_eq!((q[0].data[0], q[0].elem), (0.199951171875, dtype::FLOAT16));
        assert!(eval(&op("Add"), &[val(1, vec![1.0])], super::super::eval).is_none());
    }
}
