//! Control flow on the host: If, Loop, Scan and SequenceMap, each running its subgraph (a
//! branch or the body) on the host as ONNX defines them, and FlexAttention's score_mod and
//! prob_mod. A subgraph sees the values of the graphs around it by name: the host evaluates
//! those first ([`outer_names`]) and hands them in. If's branches and Loop's carried values
//! may be sequences or optionals too.

use super::{elements, tensors, Host, HostVal, Value};
use crate::onnx::proto::{dtype, AttrValue, Graph, Node};
use std::collections::{HashMap, HashSet};

/// The most iterations a Loop runs (one without a trip count whose condition stays true
/// would run forever).
const MAX_ITERATIONS: usize = 1 << 20;

/// The subgraphs of `n`.
fn subgraphs(n: &Node) -> impl Iterator<Item = &Graph> {
    n.attributes.iter().filter_map(|a| match &a.value {
        AttrValue::Graph(g) => Some(&**g),
        _ => None,
    })
}

/// The tensors of the enclosing graphs that the subgraphs of `n` (and theirs) read: every
/// name a subgraph's nodes read or it outputs that it does not define itself (as an input,
/// an initializer or a node's output).
pub(super) fn outer_names(n: &Node) -> Vec<String> {
    let mut names = vec![];
    for g in subgraphs(n) {
        let defined: HashSet<&str> = g
            .inputs
            .iter()
            .map(|v| v.name.as_str())
            .chain(g.initializers.iter().map(|t| t.name.as_str()))
            .chain(
                g.nodes
                    .iter()
                    .flat_map(|m| m.outputs.iter().map(String::as_str)),
            )
            .collect();
        let read = g.nodes.iter().flat_map(|m| {
            m.inputs
                .iter()
                .cloned()
                .chain(outer_names(m))
                .collect::<Vec<_>>()
        });
        for name in read.chain(g.outputs.iter().map(|o| o.name.clone())) {
            if !name.is_empty() && !defined.contains(name.as_str()) && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// Whether `n` has subgraphs (and runs here).
pub(super) fn is_control(n: &Node) -> bool {
    subgraphs(n).next().is_some()
}

/// The values the enclosing graphs hand a subgraph, by name.
type Outer = HashMap<String, Value>;

/// Subgraph `g` run on `inputs` (its inputs, in order) with the enclosing graphs' values
/// `outer`: its outputs, in order.
fn run(g: &Graph, inputs: Vec<Value>, outer: &Outer) -> Result<Vec<Value>, String> {
    if inputs.len() != g.inputs.len() {
        return Err(format!(
            "a subgraph of {} inputs given {}",
            g.inputs.len(),
            inputs.len()
        ));
    }
    let mut h = Host::new(g);
    let mut give = |name: &str, v: Value| match v {
        Value::Tensor(t) => {
            h.others.remove(name);
            h.known.insert(name.to_string(), t);
        }
        other => {
            h.known.remove(name);
            h.others.insert(name.to_string(), other);
        }
    };
    for (name, v) in outer {
        if !g.initializers.iter().any(|t| &t.name == name) {
            give(name, v.clone());
        }
    }
    for (vi, v) in g.inputs.iter().zip(inputs) {
        give(&vi.name, v);
    }
    Ok(h.outputs()?.into_iter().map(|(_, v)| v).collect())
}

/// `run` of a subgraph on tensors that returns tensors.
fn run_tensors(g: &Graph, inputs: Vec<HostVal>, outer: &Outer) -> Result<Vec<HostVal>, String> {
    let inputs = inputs.into_iter().map(Value::Tensor).collect();
    run(g, inputs, outer)?
        .into_iter()
        .map(|v| v.tensor().map_err(|e| format!("a subgraph output is {e}")))
        .collect()
}

/// The graph attribute `name` of `n`.
fn body<'n>(n: &'n Node, name: &str) -> Result<&'n Graph, String> {
    match n.attr(name) {
        Some(AttrValue::Graph(g)) => Ok(g),
        _ => Err(format!("no graph attribute '{name}'")),
    }
}

/// If, Loop, Scan, SequenceMap or FlexAttention on inputs `ins` with the enclosing graphs'
/// values `outer`.
pub(super) fn eval(n: &Node, ins: &[Option<Value>], outer: &Outer) -> Result<Vec<Value>, String> {
    let wrap = |r: Result<Vec<HostVal>, String>| Ok(r?.into_iter().map(Value::Tensor).collect());
    match n.op_type.as_str() {
        "If" => {
            let cond = tensors(&ins[..ins.len().min(1)])?;
            let cond = super::need(&cond, 0)?;
            let Some(&c) = cond.data.first().filter(|_| cond.data.len() == 1) else {
                return Err(format!(
                    "a condition of shape {:?}, not one element",
                    cond.dims
                ));
            };
            let branch = body(
                n,
                if c != 0.0 {
                    "then_branch"
                } else {
                    "else_branch"
                },
            )?;
            let outs = run(branch, vec![], outer)?;
            if outs.len() != n.outputs.len() {
                return Err(format!(
                    "a branch of {} outputs for {}",
                    outs.len(),
                    n.outputs.len()
                ));
            }
            Ok(outs)
        }
        "Loop" => run_loop(n, ins, outer),
        "Scan" => wrap(scan(n, &tensors(ins)?, outer)),
        "SequenceMap" => sequence_map(n, ins, outer),
        "FlexAttention" => {
            let ins = tensors(ins)?;
            let apply = |name: &str, x: HostVal| match n.attr(name) {
                Some(AttrValue::Graph(g)) => {
                    let mut r = run_tensors(g, vec![x], outer)?;
                    (r.len() == 1)
                        .then(|| r.remove(0))
                        .ok_or(format!("a {name} of {} outputs, not 1", r.len()))
                }
                _ => Ok(x),
            };
            wrap(super::attention::flex(n, super::need(&ins, 0)?, &ins, &apply).map(|v| vec![v]))
        }
        other => Err(format!(
            "operator {other} with a subgraph (the host runs the subgraphs of If, Loop, Scan, SequenceMap and FlexAttention)"
        )),
    }
}

/// SequenceMap: the body runs once per element of the input sequence, on that element and
/// each further input (a sequence's element at the same position, or a tensor as it is);
/// each body output, collected over the elements, is an output sequence.
fn sequence_map(n: &Node, ins: &[Option<Value>], outer: &Outer) -> Result<Vec<Value>, String> {
    let g = body(n, "body")?;
    let len = match ins.first().and_then(Option::as_ref) {
        Some(Value::Seq(s)) => s.len(),
        _ => return Err("input 0 is not a sequence".into()),
    };
    let mut outs: Vec<Vec<HostVal>> = vec![vec![]; g.outputs.len()];
    for i in 0..len {
        let inputs = ins
            .iter()
            .map(|v| match v {
                Some(Value::Seq(s)) if s.len() == len => Ok(Value::Tensor(s[i].clone())),
                Some(Value::Tensor(t)) => Ok(Value::Tensor(t.clone())),
                _ => Err(
                    "an input that is neither a sequence of the first one's length nor a tensor",
                ),
            })
            .collect::<Result<_, _>>()?;
        for (o, v) in outs.iter_mut().zip(run(g, inputs, outer)?) {
            o.push(v.tensor().map_err(|e| format!("a body output is {e}"))?);
        }
    }
    Ok(outs.into_iter().map(Value::Seq).collect())
}

fn scalar(data: f64, elem: i32) -> HostVal {
    HostVal {
        dims: vec![],
        data: vec![data],
        elem,
    }
}

/// `parts` (of one shape) stacked along a new axis `axis` (in reverse order when `reverse`).
fn stack(parts: &[HostVal], axis: usize, reverse: bool) -> Result<HostVal, String> {
    let Some(first) = parts.first() else {
        return Ok(HostVal {
            dims: vec![0],
            data: vec![],
            elem: dtype::FLOAT,
        });
    };
    if parts
        .iter()
        .any(|p| p.dims != first.dims || p.elem != first.elem)
    {
        return Err("scan outputs whose shapes or types differ between iterations".into());
    }
    let axis = axis.min(first.dims.len());
    let outer: usize = first.dims[..axis].iter().product();
    let inner: usize = first.dims[axis..].iter().product();
    let mut dims = first.dims.clone();
    dims.insert(axis, parts.len());
    elements(&dims)?;
    let mut data = Vec::with_capacity(outer * parts.len() * inner);
    for o in 0..outer {
        for t in 0..parts.len() {
            let p = &parts[if reverse { parts.len() - 1 - t } else { t }];
            data.extend_from_slice(&p.data[o * inner..(o + 1) * inner]);
        }
    }
    Ok(HostVal {
        dims,
        data,
        elem: first.elem,
    })
}

/// Loop: the body runs while the iteration count is below the trip count `M` (when given)
/// and the condition (when given) holds, on (iteration, condition, carried values); it
/// returns (condition, carried values, scan outputs). The outputs are the last carried
/// values and each scan output stacked over the iterations.
fn run_loop(n: &Node, ins: &[Option<Value>], outer: &Outer) -> Result<Vec<Value>, String> {
    let g = body(n, "body")?;
    let control = tensors(&ins[..ins.len().min(2)])?;
    let trips = control
        .first()
        .cloned()
        .flatten()
        .and_then(|m| m.data.first().copied());
    // A trip count beyond the limit is refused before the first iteration runs.
    if let Some(m) = trips.filter(|m| *m > MAX_ITERATIONS as f64) {
        return Err(format!(
            "a trip count of {m}: the host runs a Loop for at most {MAX_ITERATIONS} iterations"
        ));
    }
    let mut cond = control
        .get(1)
        .cloned()
        .flatten()
        .and_then(|c| c.data.first().copied())
        .is_none_or(|c| c != 0.0);
    let mut carried: Vec<Value> = ins
        .iter()
        .skip(2)
        .map(|v| v.clone().ok_or("a carried value is missing"))
        .collect::<Result<_, _>>()?;
    let n_carried = carried.len();
    let n_scans = g
        .outputs
        .len()
        .checked_sub(1 + n_carried)
        .ok_or("a body with fewer outputs than carried values")?;
    let mut scans: Vec<Vec<HostVal>> = vec![vec![]; n_scans];
    let mut scanned = 0usize;
    let mut i = 0usize;
    while cond && trips.is_none_or(|m| (i as f64) < m) {
        if i >= MAX_ITERATIONS {
            return Err(format!("more than {MAX_ITERATIONS} iterations"));
        }
        let mut inputs = vec![
            Value::Tensor(scalar(i as f64, dtype::INT64)),
            Value::Tensor(scalar(1.0, dtype::BOOL)),
        ];
        inputs.extend(carried);
        let mut outs = run(g, inputs, outer)?.into_iter();
        let c = outs.next().ok_or("the body has no outputs")?.tensor()?;
        cond = c
            .data
            .first()
            .copied()
            .ok_or("the body's condition is empty")?
            != 0.0;
        carried = outs.by_ref().take(n_carried).collect();
        for (s, v) in scans.iter_mut().zip(outs) {
            let t = v.tensor().map_err(|e| format!("a scan output is {e}"))?;
            // The scan outputs stacked so far, bounded as any tensor the host makes,
            // before they grow further.
            scanned = scanned.saturating_add(t.data.len());
            if scanned > super::MAX_ELEMENTS {
                return Err(format!(
                    "the scan outputs of {} iterations hold more than 2^27 elements, the most the host's tensors may",
                    i + 1
                ));
            }
            s.push(t);
        }
        let held: usize = carried.iter().map(Value::elements).sum();
        if held > super::MAX_ELEMENTS {
            return Err(format!(
                "the carried values of {} iterations hold more than 2^27 elements, the most the host's tensors may",
                i + 1
            ));
        }
        i += 1;
    }
    let mut result = carried;
    for s in &scans {
        result.push(Value::Tensor(stack(s, 0, false)?));
    }
    Ok(result)
}

/// Element `t` along `axis` of `x`: its slice without that axis.
fn slice_at(x: &HostVal, axis: usize, t: usize) -> HostVal {
    let inner: usize = x.dims[axis + 1..].iter().product();
    let len = x.dims[axis];
    let outer = x.data.len() / (len * inner).max(1);
    let data = (0..outer)
        .flat_map(|o| x.data[(o * len + t) * inner..][..inner].iter().copied())
        .collect();
    let mut dims = x.dims.clone();
    dims.remove(axis);
    HostVal {
        dims,
        data,
        elem: x.elem,
    }
}

/// Scan (opset 9 and later): the body runs once per element along each scan input's axis
/// (forward or reverse), on (states, the inputs' slices), returning (states, output
/// slices). The outputs are the last states and each output's slices stacked along its
/// axis (in reverse for a reverse direction).
fn scan(n: &Node, ins: &[Option<HostVal>], outer: &Outer) -> Result<Vec<HostVal>, String> {
    let g = body(n, "body")?;
    let m = usize::try_from(n.attr_int("num_scan_inputs", 0)).unwrap_or(0);
    let all: Vec<HostVal> = ins
        .iter()
        .map(|v| v.clone().ok_or("an input is missing"))
        .collect::<Result<_, _>>()?;
    let n_states = all
        .len()
        .checked_sub(m)
        .filter(|_| m > 0)
        .ok_or(format!("num_scan_inputs {m} of {} inputs", all.len()))?;
    let (mut states, xs) = (all[..n_states].to_vec(), &all[n_states..]);
    let list = |name: &str, count: usize| {
        let v = n.attr_ints(name).unwrap_or_else(|| vec![0; count]);
        if v.len() == count {
            Ok(v)
        } else {
            Err(format!("{name} of {} values for {count}", v.len()))
        }
    };
    let (in_axes, in_dirs) = (
        list("scan_input_axes", m)?,
        list("scan_input_directions", m)?,
    );
    let n_out = g
        .outputs
        .len()
        .checked_sub(n_states)
        .ok_or("a body with fewer outputs than states")?;
    let (out_axes, out_dirs) = (
        list("scan_output_axes", n_out)?,
        list("scan_output_directions", n_out)?,
    );
    let axes: Vec<usize> = xs
        .iter()
        .zip(&in_axes)
        .map(|(x, &a)| super::shape::axis_of(a, x.dims.len()))
        .collect::<Result<_, _>>()?;
    let steps = xs.first().map_or(0, |x| x.dims[axes[0]]);
    if xs.iter().zip(&axes).any(|(x, &a)| x.dims[a] != steps) {
        return Err("scan inputs of different lengths along their axes".into());
    }
    let mut outs: Vec<Vec<HostVal>> = vec![vec![]; n_out];
    for t in 0..steps {
        let mut inputs = states;
        for ((x, &a), &d) in xs.iter().zip(&axes).zip(&in_dirs) {
            inputs.push(slice_at(x, a, if d != 0 { steps - 1 - t } else { t }));
        }
        let mut r = run_tensors(g, inputs, outer)?.into_iter();
        states = r.by_ref().take(n_states).collect();
        for (o, v) in outs.iter_mut().zip(r) {
            o.push(v);
        }
    }
    let mut result = states;
    for ((o, &a), &d) in outs.iter().zip(&out_axes).zip(&out_dirs) {
        let rank = o.first().map_or(0, |v| v.dims.len()) + 1;
        let a = super::shape::axis_of(a, rank)?;
        result.push(stack(o, a, d != 0)?);
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::proto::{Attribute, ValueInfo};

    fn op(t: &str, inputs: &[&str], outputs: &[&str], graphs: Vec<(&str, Graph)>) -> Node {
        Node {
            op_type: t.into(),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            outputs: outputs.iter().map(|s| s.to_string()).collect(),
            attributes: graphs
                .into_iter()
                .map(|(name, g)| Attribute {
                    name: name.into(),
                    value: AttrValue::Graph(Box::new(g)),
                })
                .collect(),
            ..Node::default()
        }
    }

    fn graph(inputs: &[&str], nodes: Vec<Node>, outputs: &[&str]) -> Graph {
        let vi = |n: &&str| ValueInfo {
            name: n.to_string(),
            ..ValueInfo::default()
        };
        Graph {
            nodes,
            inputs: inputs.iter().map(vi).collect(),
            outputs: outputs.iter().map(vi).collect(),
            ..Graph::default()
        }
    }

    fn f(data: &[f64]) -> HostVal {
        HostVal::float(vec![data.len()], data.to_vec())
    }

    fn t(v: HostVal) -> Option<Value> {
        Some(Value::Tensor(v))
    }

    fn tensor(v: &Value) -> HostVal {
        v.clone().tensor().unwrap()
    }

    /// If reads `a` from the graph around it in its then-branch (Identity) and `b` in its
    /// else-branch (Neg): the branch the condition picks runs, and `outer_names` lists both.
    #[test]
    fn if_runs_the_chosen_branch_on_outer_tensors() {
        let then = graph(&[], vec![op("Identity", &["a"], &["t"], vec![])], &["t"]);
        let other = graph(&[], vec![op("Neg", &["b"], &["e"], vec![])], &["e"]);
        let node = op(
            "If",
            &["c"],
            &["y"],
            vec![("then_branch", then), ("else_branch", other)],
        );
        assert_eq!(outer_names(&node), vec!["a".to_string(), "b".to_string()]);
        let g = graph(&["c"], vec![node], &["y"]);
        for (c, want) in [(1.0, 2.0), (0.0, -3.0)] {
            let mut h = Host::new(&g);
            h.known.insert("a".into(), f(&[2.0]));
            h.known.insert("b".into(), f(&[3.0]));
            h.known.insert("c".into(), scalar(c, dtype::BOOL));
            assert_eq!(h.value("y").unwrap().data, vec![want]);
        }
    }

    /// By hand: a Loop of 3 trips doubling x = 1 (times `two` from outside) carries 8 out
    /// and stacks [2, 4, 8]; a Scan summing [1, 2, 3] into s = 0 ends at 6 with the running
    /// sums [1, 3, 6], or, scanning the input in reverse, [3, 5, 6], or stacking the output
    /// in reverse, [6, 3, 1].
    #[test]
    fn loop_and_scan_by_hand() {
        let body = graph(
            &["i", "cond", "x"],
            vec![
                op("Mul", &["x", "two"], &["x2"], vec![]),
                op("Identity", &["cond"], &["c2"], vec![]),
                op("Identity", &["x2"], &["s"], vec![]),
            ],
            &["c2", "x2", "s"],
        );
        let node = op("Loop", &["m", "", "x0"], &["x", "xs"], vec![("body", body)]);
        let outer = HashMap::from([("two".to_string(), Value::Tensor(f(&[2.0])))]);
        let ins = [t(scalar(3.0, dtype::INT64)), None, t(f(&[1.0]))];
        let r = eval(&node, &ins, &outer).unwrap();
        let (x, xs) = (tensor(&r[0]), tensor(&r[1]));
        assert_eq!((x.data, xs.data), (vec![8.0], vec![2.0, 4.0, 8.0]));
        assert_eq!(xs.dims, vec![3, 1]);
        let sum = graph(
            &["s", "x"],
            vec![
                op("Add", &["s", "x"], &["s2"], vec![]),
                op("Identity", &["s2"], &["o"], vec![]),
            ],
            &["s2", "o"],
        );
        let cases = [
            (0, 0, vec![1.0, 3.0, 6.0]),
            (1, 0, vec![3.0, 5.0, 6.0]),
            (0, 1, vec![6.0, 3.0, 1.0]),
        ];
        for (dir, out_dir, want) in cases {
            let mut node = op(
                "Scan",
                &["s0", "xs"],
                &["s", "os"],
                vec![("body", sum.clone())],
            );
            for (name, v) in [
                ("num_scan_inputs", vec![1]),
                ("scan_input_directions", vec![dir]),
                ("scan_output_directions", vec![out_dir]),
            ] {
                node.attributes.push(Attribute {
                    name: name.into(),
                    value: match name {
                        "num_scan_inputs" => AttrValue::Int(v[0]),
                        _ => AttrValue::Ints(v),
                    },
                });
            }
            let s0 = HostVal::float(vec![], vec![0.0]);
            let r = eval(&node, &[t(s0), t(f(&[1.0, 2.0, 3.0]))], &HashMap::new()).unwrap();
            assert_eq!((tensor(&r[0]).data, tensor(&r[1]).data), (vec![6.0], want));
        }
    }

    /// A Loop's bounds: a trip count past 2^20 is refused before the body runs (this body
    /// would fail at once: it has no outputs), and scan outputs that grow past 2^27
    /// elements are refused when they do (2^20 elements a trip, 128 trips: at the 129th).
    #[test]
    fn loop_bounds() {
        let empty = graph(&["i", "cond"], vec![], &[]);
        let node = op("Loop", &["m", ""], &[], vec![("body", empty)]);
        let ins = [t(scalar(2f64.powi(31), dtype::INT64)), None];
        let e = eval(&node, &ins, &HashMap::new()).unwrap_err();
        assert!(e.contains("a trip count of 2147483648"), "{e}");
        let big = HostVal::float(vec![1 << 20], vec![0.0; 1 << 20]);
        let body = graph(
            &["i", "cond"],
            vec![
                op("Identity", &["cond"], &["c2"], vec![]),
                op("Identity", &["big"], &["s"], vec![]),
            ],
            &["c2", "s"],
        );
        let node = op("Loop", &["m", ""], &["ss"], vec![("body", body)]);
        let outer = HashMap::from([("big".to_string(), Value::Tensor(big))]);
        let ins = [t(scalar(1000.0, dtype::INT64)), None];
        let e = eval(&node, &ins, &outer).unwrap_err();
        assert!(e.contains("scan outputs of 129 iterations"), "{e}");
    }

    /// By hand: a Loop of 2 trips carrying a sequence, each trip inserting `a` at its back,
    /// ends with [a, a] after the one it started with; an If whose branch builds a
    /// sequence returns it; SequenceMap negating each element of [[1], [2, 3]] (with a
    /// tensor input passed whole to each) gives [[-1], [-2, -3]].
    #[test]
    fn sequences_through_loop_if_and_sequence_map() {
        let body = graph(
            &["i", "cond", "s"],
            vec![
                op("SequenceInsert", &["s", "a"], &["s2"], vec![]),
                op("Identity", &["cond"], &["c2"], vec![]),
            ],
            &["c2", "s2"],
        );
        let node = op("Loop", &["m", "", "s0"], &["s"], vec![("body", body)]);
        let outer = HashMap::from([("a".to_string(), Value::Tensor(f(&[5.0])))]);
        let start = Some(Value::Seq(vec![f(&[1.0])]));
        let r = eval(&node, &[t(scalar(2.0, dtype::INT64)), None, start], &outer).unwrap();
        let Value::Seq(s) = &r[0] else {
            panic!("not a sequence")
        };
        let firsts: Vec<f64> = s.iter().map(|v| v.data[0]).collect();
        assert_eq!(firsts, [1.0, 5.0, 5.0]);
        let then = graph(
            &[],
            vec![op("SequenceConstruct", &["a", "a"], &["q"], vec![])],
            &["q"],
        );
        let node = op(
            "If",
            &["c"],
            &["y"],
            vec![("then_branch", then.clone()), ("else_branch", then)],
        );
        let r = eval(&node, &[t(scalar(1.0, dtype::BOOL))], &outer).unwrap();
        assert!(matches!(&r[0], Value::Seq(s) if s.len() == 2));
        let neg = graph(
            &["x", "unused"],
            vec![op("Neg", &["x"], &["y"], vec![])],
            &["y"],
        );
        let node = op("SequenceMap", &["xs", "k"], &["ys"], vec![("body", neg)]);
        let xs = Some(Value::Seq(vec![f(&[1.0]), f(&[2.0, 3.0])]));
        let r = eval(&node, &[xs, t(f(&[9.0]))], &HashMap::new()).unwrap();
        let Value::Seq(ys) = &r[0] else {
            panic!("not a sequence")
        };
        assert_eq!(
            (ys[0].data.clone(), ys[1].data.clone()),
            (vec![-1.0], vec![-2.0, -3.0])
        );
    }
}
