//! ONNX's comparisons, logical and bitwise operators, Where, IsNaN, IsInf and Size on the
//! host: bool tensors hold 0 and 1 (element type BOOL, numpy's `|b1` in `.npy` files).

use super::{broadcast, elements, need, pairs, source, HostVal};
use crate::onnx::proto::{dtype, Node};

fn boolean(dims: Vec<usize>, data: impl Iterator<Item = bool>) -> HostVal {
    HostVal {
        dims,
        data: data.map(|b| f64::from(u8::from(b))).collect(),
        elem: dtype::BOOL,
    }
}

/// The operators of this module; None for others.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    let second = || need(ins, 1);
    let compare = |f: fn(f64, f64) -> bool| -> Result<HostVal, String> {
        let y = second()?;
        if x.elem != y.elem {
            return Err(format!(
                "{} of {} and {} tensors",
                n.op_type,
                dtype::name(x.elem),
                dtype::name(y.elem)
            ));
        }
        let (dims, v) = pairs(x, y)?;
        Ok(boolean(dims, v.into_iter().map(|(a, b)| f(a, b))))
    };
    let logical = |f: fn(bool, bool) -> bool| -> Result<HostVal, String> {
        let y = second()?;
        if x.elem != dtype::BOOL || y.elem != dtype::BOOL {
            return Err(format!("{} of non-bool tensors", n.op_type));
        }
        let (dims, v) = pairs(x, y)?;
        Ok(boolean(
            dims,
            v.into_iter().map(|(a, b)| f(a != 0.0, b != 0.0)),
        ))
    };
    // On the two's-complement bits of integers of one type, wrapped back into it.
    let bitwise = |f: fn(i128, i128) -> i128| -> Result<HostVal, String> {
        let y = second()?;
        if x.elem != y.elem || super::quant::int_range(x.elem).is_none() {
            return Err(format!(
                "{} of {} and {} tensors (integers of one type)",
                n.op_type,
                dtype::name(x.elem),
                dtype::name(y.elem)
            ));
        }
        let (dims, v) = pairs(x, y)?;
        let data = v
            .into_iter()
            .map(|(a, b)| super::wrap(f(a as i128, b as i128), x.elem))
            .collect();
        Ok(HostVal {
            dims,
            data,
            elem: x.elem,
        })
    };
    Some(match n.op_type.as_str() {
        "BitwiseAnd" => bitwise(|a, b| a & b),
        "BitwiseOr" => bitwise(|a, b| a | b),
        "BitwiseXor" => bitwise(|a, b| a ^ b),
        "BitwiseNot" if super::quant::int_range(x.elem).is_some() => Ok(HostVal {
            data: x
                .data
                .iter()
                .map(|&v| super::wrap(!(v as i128), x.elem))
                .collect(),
            ..x.clone()
        }),
        "BitwiseNot" => Err(format!("BitwiseNot of a {} tensor", dtype::name(x.elem))),
        "Equal" => compare(|a, b| a == b),
        "Less" => compare(|a, b| a < b),
        "LessOrEqual" => compare(|a, b| a <= b),
        "Greater" => compare(|a, b| a > b),
        "GreaterOrEqual" => compare(|a, b| a >= b),
        "And" => logical(|a, b| a && b),
        "Or" => logical(|a, b| a || b),
        "Xor" => logical(|a, b| a != b),
        "Not" if x.elem == dtype::BOOL => {
            Ok(boolean(x.dims.clone(), x.data.iter().map(|&v| v == 0.0)))
        }
        "Not" => Err("Not of a non-bool tensor".into()),
        "IsNaN" => Ok(boolean(x.dims.clone(), x.data.iter().map(|v| v.is_nan()))),
        "IsInf" => {
            let (pos, neg) = (
                n.attr_int("detect_positive", 1) != 0,
                n.attr_int("detect_negative", 1) != 0,
            );
            Ok(boolean(
                x.dims.clone(),
                x.data
                    .iter()
                    .map(|&v| v.is_infinite() && if v > 0.0 { pos } else { neg }),
            ))
        }
        "Size" => Ok(HostVal {
            dims: vec![],
            data: vec![x.data.len() as f64],
            elem: dtype::INT64,
        }),
        "Where" => where_(x, ins),
        _ => return None,
    })
}

/// Where(condition, X, Y): X's element where the condition holds, else Y's, the three
/// broadcast together; X's type.
fn where_(c: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let (x, y) = (need(ins, 1)?, need(ins, 2)?);
    if c.elem != dtype::BOOL || x.elem != y.elem {
        return Err("Where of a bool condition and two tensors of one type".into());
    }
    let xy = broadcast(&x.dims, &y.dims);
    let dims = xy.and_then(|d| broadcast(&c.dims, &d)).ok_or_else(|| {
        format!(
            "shapes {:?}, {:?} and {:?} do not broadcast",
            c.dims, x.dims, y.dims
        )
    })?;
    let count = elements(&dims)?;
    let data = (0..count)
        .map(|k| match c.data[source(k, &dims, &c.dims)] != 0.0 {
            true => x.data[source(k, &dims, &x.dims)],
            false => y.data[source(k, &dims, &y.dims)],
        })
        .collect();
    Ok(HostVal {
        dims,
        data,
        elem: x.elem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dims: Vec<usize>, data: Vec<f64>, elem: i32) -> Option<HostVal> {
        Some(HostVal { dims, data, elem })
    }

    fn node(op: &str) -> Node {
        Node {
            op_type: op.into(),
            ..Node::default()
        }
    }

    /// The bits of int8 5 (00000101) and -3 (11111101): AND 5, OR -3, XOR 11111000 = -8;
    /// NOT 5 is -6 in int8 and 250 in uint8; a float tensor is refused.
    #[test]
    fn bitwise_by_hand() {
        let run = |op: &str, x: Option<HostVal>, y: Option<HostVal>| {
            eval(&node(op), x.as_ref().unwrap(), &[x.clone(), y]).unwrap()
        };
        let (a, b) = (
            t(vec![1], vec![5.0], dtype::INT8),
            t(vec![1], vec![-3.0], dtype::INT8),
        );
        assert_eq!(run("BitwiseAnd", a.clone(), b.clone()).unwrap().data, [5.0]);
        assert_eq!(run("BitwiseOr", a.clone(), b.clone()).unwrap().data, [-3.0]);
        assert_eq!(run("BitwiseXor", a.clone(), b).unwrap().data, [-8.0]);
        assert_eq!(run("BitwiseNot", a, None).unwrap().data, [-6.0]);
        let u = t(vec![1], vec![5.0], dtype::UINT8);
        assert_eq!(run("BitwiseNot", u, None).unwrap().data, [250.0]);
        let f = t(vec![1], vec![5.0], dtype::FLOAT);
        assert!(run("BitwiseAnd", f.clone(), f).is_err());
    }

    /// By hand: [1, 5] < [[3], [2]] broadcasts to [[1, 0], [1, 0]] (row r: a < b[r]);
    /// Where picks X where the condition holds, Y elsewhere, the condition broadcast over
    /// rows; IsInf with detect_positive = 0 finds only -inf; Size counts the elements.
    #[test]
    fn comparisons_where_isinf_and_size_by_hand() {
        let a = t(vec![2], vec![1.0, 5.0], dtype::INT32);
        let b = t(vec![2, 1], vec![3.0, 2.0], dtype::INT32);
        let less = eval(&node("Less"), a.as_ref().unwrap(), &[a.clone(), b])
            .unwrap()
            .unwrap();
        assert_eq!(
            (less.dims, less.data, less.elem),
            (vec![2, 2], vec![1.0, 0.0, 1.0, 0.0], dtype::BOOL)
        );
        let c = t(vec![2], vec![1.0, 0.0], dtype::BOOL);
        let x = t(vec![2, 2], vec![1.0, 2.0, 3.0, 4.0], dtype::FLOAT);
        let y = t(vec![1], vec![-1.0], dtype::FLOAT);
        let w = eval(&node("Where"), c.as_ref().unwrap(), &[c.clone(), x, y])
            .unwrap()
            .unwrap();
        assert_eq!(w.data, vec![1.0, -1.0, 3.0, -1.0]);
        let mut isinf = node("IsInf");
        isinf.attributes.push(crate::onnx::proto::Attribute {
            name: "detect_positive".into(),
            value: crate::onnx::proto::AttrValue::Int(0),
        });
        let v = t(
            vec![3],
            vec![f64::INFINITY, f64::NEG_INFINITY, 1.0],
            dtype::FLOAT,
        )
        .unwrap();
        assert_eq!(
            eval(&isinf, &v, &[]).unwrap().unwrap().data,
            vec![0.0, 1.0, 0.0]
        );
        let size = eval(&node("Size"), &v, &[]).unwrap().unwrap();
        assert_eq!(
            (size.dims, size.data, size.elem),
            (vec![], vec![3.0], dtype::INT64)
        );
        assert!(eval(&node("And"), &v, &[Some(v.clone()), Some(v.clone())])
            .unwrap()
            .is_err());
    }
}
