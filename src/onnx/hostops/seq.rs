//! Sequence and optional values on the host, and the operators on them as ONNX defines
//! them: SequenceEmpty, SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase,
//! SequenceLength, SplitToSequence, ConcatFromSequence, Optional, OptionalHasElement,
//! OptionalGetElement, and Identity of either. (SequenceMap, which runs a subgraph, is in
//! `control`.)

use super::shape::axis_of;
use super::HostVal;
use crate::onnx::proto::{dtype, AttrValue, Node};

/// A value of a graph: a tensor, a sequence of tensors, or an optional (empty, or holding a
/// tensor or a sequence).
#[derive(Clone, Debug)]
pub enum Value {
    Tensor(HostVal),
    Seq(Vec<HostVal>),
    Opt(Option<Box<Value>>),
}

impl Value {
    /// The elements it holds (a sequence's, all of them).
    pub fn elements(&self) -> usize {
        match self {
            Value::Tensor(t) => t.data.len(),
            Value::Seq(v) => v.iter().map(|t| t.data.len()).sum(),
            Value::Opt(v) => v.as_deref().map_or(0, Value::elements),
        }
    }

    /// The tensor this value is, or an error naming what it is.
    pub fn tensor(self) -> Result<HostVal, String> {
        match self {
            Value::Tensor(t) => Ok(t),
            other => Err(format!("{}, where a tensor is needed", other.kind())),
        }
    }

    /// What the value is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Tensor(_) => "a tensor",
            Value::Seq(_) => "a sequence",
            Value::Opt(_) => "an optional",
        }
    }
}

/// Whether node `n` is one of these operators (Identity only of a sequence or optional:
/// `non_tensor` says whether an input is one).
pub(super) fn is_seq_op(n: &Node, non_tensor: bool) -> bool {
    n.op_type.starts_with("Sequence") && n.op_type != "SequenceMap"
        || n.op_type.starts_with("Optional")
        || matches!(n.op_type.as_str(), "SplitToSequence" | "ConcatFromSequence")
        || n.op_type == "Identity" && non_tensor
}

/// Input `i` as a sequence.
fn seq(ins: &[Option<Value>], i: usize) -> Result<&[HostVal], String> {
    match ins.get(i).and_then(Option::as_ref) {
        Some(Value::Seq(s)) => Ok(s),
        Some(v) => Err(format!("input {i} is {}, not a sequence", v.kind())),
        None => Err(format!("input {i} is missing")),
    }
}

/// Input `i` as a tensor, if given.
fn tensor(ins: &[Option<Value>], i: usize) -> Result<Option<&HostVal>, String> {
    match ins.get(i).and_then(Option::as_ref) {
        Some(Value::Tensor(t)) => Ok(Some(t)),
        Some(v) => Err(format!("input {i} is {}, not a tensor", v.kind())),
        None => Ok(None),
    }
}

/// A position input (a scalar) in a sequence of `len`: negative counts from the end;
/// `end` allows `len` itself (insertion at the back).
fn position(p: &HostVal, len: usize, end: bool) -> Result<usize, String> {
    let [v] = p.data[..] else {
        return Err(format!("a position of shape {:?} (a scalar)", p.dims));
    };
    let i = v as i64 + if v < 0.0 { len as i64 } else { 0 };
    let top = len as i64 + i64::from(end);
    (0..top)
        .contains(&i)
        .then_some(i as usize)
        .ok_or(format!("position {v} in a sequence of {len}"))
}

fn int64(v: i64) -> HostVal {
    HostVal {
        dims: vec![],
        data: vec![v as f64],
        elem: dtype::INT64,
    }
}

/// One of these operators on `ins`.
pub(super) fn eval(n: &Node, ins: &[Option<Value>]) -> Result<Vec<Value>, String> {
    let one = |v: Value| Ok(vec![v]);
    match n.op_type.as_str() {
        "Identity" => one(ins.first().cloned().flatten().ok_or("input 0 is missing")?),
        "SequenceEmpty" => one(Value::Seq(vec![])),
        "SequenceConstruct" => {
            let parts: Vec<HostVal> = (0..ins.len())
                .map(|i| {
                    tensor(ins, i)?
                        .cloned()
                        .ok_or(format!("input {i} is missing"))
                })
                .collect::<Result<_, _>>()?;
            if parts.windows(2).any(|w| w[0].elem != w[1].elem) {
                return Err("tensors of different types in one sequence".into());
            }
            one(Value::Seq(parts))
        }
        "SequenceAt" => {
            let s = seq(ins, 0)?;
            let at = position(tensor(ins, 1)?.ok_or("input 1 is missing")?, s.len(), false)?;
            one(Value::Tensor(s[at].clone()))
        }
        "SequenceInsert" => {
            let mut s = seq(ins, 0)?.to_vec();
            let t = tensor(ins, 1)?.ok_or("input 1 is missing")?.clone();
            if s.first().is_some_and(|f| f.elem != t.elem) {
                return Err("a tensor of another type than the sequence's".into());
            }
            let at = match tensor(ins, 2)? {
                Some(p) => position(p, s.len(), true)?,
                None => s.len(),
            };
            s.insert(at, t);
            one(Value::Seq(s))
        }
        "SequenceErase" => {
            let mut s = seq(ins, 0)?.to_vec();
            let at = match tensor(ins, 1)? {
                Some(p) => position(p, s.len(), false)?,
                None => s
                    .len()
                    .checked_sub(1)
                    .ok_or("erasing from an empty sequence")?,
            };
            s.remove(at);
            one(Value::Seq(s))
        }
        "SequenceLength" => one(Value::Tensor(int64(seq(ins, 0)?.len() as i64))),
        "SplitToSequence" => split(n, ins).map(|s| vec![Value::Seq(s)]),
        "ConcatFromSequence" => concat(n, seq(ins, 0)?).map(|t| vec![Value::Tensor(t)]),
        "Optional" => one(Value::Opt(ins.first().cloned().flatten().map(Box::new))),
        "OptionalHasElement" => {
            let has = match ins.first().and_then(Option::as_ref) {
                None | Some(Value::Opt(None)) => false,
                Some(_) => true,
            };
            one(Value::Tensor(HostVal {
                dims: vec![],
                data: vec![f64::from(u8::from(has))],
                elem: dtype::BOOL,
            }))
        }
        "OptionalGetElement" => match ins.first().and_then(Option::as_ref) {
            Some(Value::Opt(Some(v))) => one((**v).clone()),
            Some(Value::Opt(None)) => Err("the optional is empty".into()),
            Some(v) => one(v.clone()),
            None => Err("input 0 is missing".into()),
        },
        other => Err(format!("operator {other} is not a sequence operator")),
    }
}

/// SplitToSequence along `axis`: into pieces of the sizes `split` gives (a scalar: pieces of
/// that size, the last smaller; a list: those sizes), or without it into pieces of 1,
/// dropped when keepdims is 0.
fn split(n: &Node, ins: &[Option<Value>]) -> Result<Vec<HostVal>, String> {
    let x = tensor(ins, 0)?.ok_or("input 0 is missing")?;
    let a = axis_of(n.attr_int("axis", 0), x.dims.len())?;
    let d = x.dims[a];
    let (sizes, squeeze) = match tensor(ins, 1)? {
        None => (vec![1; d], n.attr_int("keepdims", 1) == 0),
        Some(s) if s.dims.is_empty() => {
            let k = s.data[0];
            if k.is_nan() || k < 1.0 {
                return Err(format!("a split of {k}"));
            }
            let k = (k as usize).min(d.max(1));
            let mut v = vec![k; d / k];
            if d % k != 0 {
                v.push(d % k);
            }
            (v, false)
        }
        Some(s) => {
            let v: Vec<usize> = s.data.iter().map(|&k| k.max(0.0) as usize).collect();
            if v.iter().sum::<usize>() != d || s.data.iter().any(|&k| k < 0.0) {
                return Err(format!("split {:?} of an axis of {d}", s.data));
            }
            (v, false)
        }
    };
    let node = Node::new("Split", vec![("axis", AttrValue::Int(a as i64))]);
    let sizes_val = HostVal {
        dims: vec![sizes.len()],
        data: sizes.iter().map(|&k| k as f64).collect(),
        elem: dtype::INT64,
    };
    let parts = super::shape::split(&node, x, &[Some(x.clone()), Some(sizes_val)], sizes.len())?;
    Ok(parts
        .into_iter()
        .map(|mut p| {
            if squeeze {
                p.dims.remove(a);
            }
            p
        })
        .collect())
}

/// ConcatFromSequence along `axis`, or with new_axis 1 stacked along a new axis there.
fn concat(n: &Node, s: &[HostVal]) -> Result<HostVal, String> {
    let first = s.first().ok_or("concatenating an empty sequence")?;
    let new_axis = n.attr_int("new_axis", 0) == 1;
    let rank = first.dims.len() + usize::from(new_axis);
    let a = axis_of(n.attr_int("axis", 0), rank)?;
    let parts: Vec<Option<HostVal>> = s
        .iter()
        .map(|t| {
            let mut t = t.clone();
            if new_axis {
                t.dims.insert(a.min(t.dims.len()), 1);
            }
            Some(t)
        })
        .collect();
    let node = Node::new("Concat", vec![("axis", AttrValue::Int(a as i64))]);
    super::shape::concat(&node, &parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dims: &[usize], data: &[f64]) -> Value {
        Value::Tensor(HostVal::float(dims.to_vec(), data.to_vec()))
    }

    fn run(op: &str, attrs: Vec<(&str, AttrValue)>, ins: Vec<Option<Value>>) -> Value {
        eval(&Node::new(op, attrs), &ins).unwrap().remove(0)
    }

    fn pos(v: f64) -> Option<Value> {
        Some(Value::Tensor(HostVal {
            dims: vec![],
            data: vec![v],
            elem: dtype::INT64,
        }))
    }

    /// By hand: [[1, 2, 3], [4, 5, 6]] split along axis 1 into pieces of 2 is [[1, 2], [4,
    /// 5]] and [[3], [6]]; concatenated back along 1 it is the input; stacked on a new axis
    /// 0, the two rows of SplitToSequence's default (pieces of 1 along axis 0, kept) are
    /// [2, 1, 3]. Insert at -1 puts before the last; erase with no position drops the last;
    /// SequenceAt -1 is the last; an empty optional has no element.
    #[test]
    fn sequence_operators_by_hand() {
        let x = t(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let axis1 = || vec![("axis", AttrValue::Int(1))];
        let Value::Seq(s) = run("SplitToSequence", axis1(), vec![Some(x.clone()), pos(2.0)]) else {
            panic!("not a sequence")
        };
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].dims.clone(), s[0].data.clone()),
            (vec![2, 2], vec![1.0, 2.0, 4.0, 5.0])
        );
        assert_eq!(s[1].data, [3.0, 6.0]);
        let back = run(
            "ConcatFromSequence",
            axis1(),
            vec![Some(Value::Seq(s.clone()))],
        );
        assert_eq!(back.tensor().unwrap().data, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let Value::Seq(rows) = run("SplitToSequence", vec![], vec![Some(x)]) else {
            panic!("not a sequence")
        };
        let stacked = run(
            "ConcatFromSequence",
            vec![("new_axis", AttrValue::Int(1))],
            vec![Some(Value::Seq(rows))],
        );
        assert_eq!(stacked.tensor().unwrap().dims, vec![2, 1, 3]);
        let (a, b, c) = (t(&[1], &[1.0]), t(&[1], &[2.0]), t(&[1], &[3.0]));
        let ab = run("SequenceConstruct", vec![], vec![Some(a), Some(b)]);
        let acb = run("SequenceInsert", vec![], vec![Some(ab), Some(c), pos(-1.0)]);
        let firsts = |v: &Value| match v {
            Value::Seq(s) => s.iter().map(|t| t.data[0]).collect::<Vec<f64>>(),
            _ => vec![],
        };
        assert_eq!(firsts(&acb), [1.0, 3.0, 2.0]);
        let last = run("SequenceAt", vec![], vec![Some(acb.clone()), pos(-1.0)]);
        assert_eq!(last.tensor().unwrap().data, [2.0]);
        let erased = run("SequenceErase", vec![], vec![Some(acb.clone())]);
        assert_eq!(firsts(&erased), [1.0, 3.0]);
        let len = run("SequenceLength", vec![], vec![Some(erased)]);
        assert_eq!(len.tensor().unwrap().data, [2.0]);
        assert!(eval(&Node::new("SequenceAt", vec![]), &[Some(acb), pos(3.0)]).is_err());
        let empty = run("Optional", vec![], vec![None]);
        let has = run("OptionalHasElement", vec![], vec![Some(empty.clone())]);
        assert_eq!(has.tensor().unwrap().data, [0.0]);
        assert!(eval(&Node::new("OptionalGetElement", vec![]), &[Some(empty)]).is_err());
    }
}
