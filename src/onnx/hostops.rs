//! The host's operators (BYOC's fallback): the ONNX nodes the accelerator does not run,
//! evaluated in float32 as ONNX defines them, on demand from the graph outputs back to the
//! values the accelerator handed over, the graph's initializers and its input.

use super::proto::{dtype, AttrValue, Graph, Node, Tensor};
use std::collections::HashMap;

/// A tensor on the host: its dims and elements (integers held exactly in f32 up to 2^24, as
/// ONNX Runtime converts them too), with its ONNX element type.
#[derive(Clone, Debug)]
pub struct HostVal {
    pub dims: Vec<usize>,
    pub data: Vec<f32>,
    pub elem: i32,
}

impl HostVal {
    fn from_tensor(t: &Tensor) -> HostVal {
        HostVal {
            dims: t.dims.iter().map(|&d| d as usize).collect(),
            data: t.values.iter().map(|&v| v as f32).collect(),
            elem: t.data_type,
        }
    }
    fn float(dims: Vec<usize>, data: Vec<f32>) -> HostVal {
        HostVal {
            dims,
            data,
            elem: dtype::FLOAT,
        }
    }
}

/// Evaluates graph values on demand; `known` holds what is given (handed over, inputs).
pub struct Host<'g> {
    graph: &'g Graph,
    producer: HashMap<&'g str, &'g Node>,
    pub known: HashMap<String, HostVal>,
    /// The nodes evaluated, in order (for the report).
    pub ran: Vec<String>,
    /// Tensors being evaluated (a cycle is an error, not an endless recursion).
    busy: std::collections::HashSet<String>,
}

/// numpy broadcasting of two shapes.
fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let get = |s: &[usize], i: usize| {
        if i + s.len() >= n {
            s[i + s.len() - n]
        } else {
            1
        }
    };
    (0..n)
        .map(|i| match (get(a, i), get(b, i)) {
            (x, y) if x == y || y == 1 => Some(x),
            (1, y) => Some(y),
            _ => None,
        })
        .collect()
}

/// The flat index into `shape` (right-aligned, broadcast) of the element at `idx` of `out`.
fn source(idx: usize, out: &[usize], shape: &[usize]) -> usize {
    let (mut rem, mut at, mut stride) = (idx, 0, 1);
    for k in (0..out.len()).rev() {
        let i = rem % out[k];
        rem /= out[k];
        if let Some(&d) = (k + shape.len())
            .checked_sub(out.len())
            .and_then(|j| shape.get(j))
        {
            at += (i % d) * stride;
            stride *= d;
        }
    }
    at
}

impl<'g> Host<'g> {
    pub fn new(graph: &'g Graph) -> Self {
        let mut producer = HashMap::new();
        for n in &graph.nodes {
            for o in &n.outputs {
                producer.insert(o.as_str(), n);
            }
        }
        let known = graph
            .initializers
            .iter()
            .map(|t| (t.name.clone(), HostVal::from_tensor(t)))
            .collect();
        Host {
            graph,
            producer,
            known,
            ran: vec![],
            busy: Default::default(),
        }
    }

    /// The value of tensor `name`, evaluating what it needs (with an explicit stack: a
    /// deep graph cannot overflow the call stack, a cycle is an error).
    pub fn value(&mut self, name: &str) -> Result<HostVal, String> {
        let mut stack = vec![(name.to_string(), false)];
        while let Some((t, expanded)) = stack.pop() {
            if self.known.contains_key(&t) {
                continue;
            }
            let node = *self
                .producer
                .get(t.as_str())
                .ok_or_else(|| format!("tensor '{t}' has no value (an input without data?)"))?;
            if !expanded {
                if !self.busy.insert(t.clone()) {
                    return Err(format!(
                        "tensor '{t}' depends on itself: the graph has a cycle"
                    ));
                }
                stack.push((t, true));
                for i in node.inputs.iter().filter(|i| !i.is_empty()) {
                    stack.push((i.clone(), false));
                }
                continue;
            }
            self.busy.remove(&t);
            let ins: Vec<Option<HostVal>> = node
                .inputs
                .iter()
                .map(|i| {
                    if i.is_empty() {
                        None
                    } else {
                        self.known.get(i).cloned()
                    }
                })
                .collect();
            let outs = eval(node, &ins)
                .map_err(|e| format!("node '{}' ({}): {e}", node.name, node.op_type))?;
            self.ran
                .push(format!("{} ({})", node.outputs[0], node.op_type));
            for (o, v) in node.outputs.iter().zip(outs) {
                self.known.insert(o.clone(), v);
            }
            if !self.known.contains_key(&t) {
                return Err(format!("node writing '{t}' gave no value"));
            }
        }
        self.known
            .get(name)
            .cloned()
            .ok_or_else(|| format!("tensor '{name}' has no value"))
    }

    /// The graph's outputs, in order.
    pub fn outputs(&mut self) -> Result<Vec<(String, HostVal)>, String> {
        let names: Vec<String> = self.graph.outputs.iter().map(|o| o.name.clone()).collect();
        names
            .into_iter()
            .map(|n| Ok((n.clone(), self.value(&n)?)))
            .collect()
    }
}

fn need(ins: &[Option<HostVal>], i: usize) -> Result<&HostVal, String> {
    ins.get(i)
        .and_then(|v| v.as_ref())
        .ok_or_else(|| format!("input {i} is missing"))
}

/// Saturate and round half to even to an integer type, as QuantizeLinear does.
fn quantize(v: f32, scale: f32, zp: f32, elem: i32) -> f32 {
    let (lo, hi) = match elem {
        dtype::UINT8 | dtype::INT8 => {
            let t = super::layer::act_type(elem == dtype::INT8);
            (t.min() as f32, t.max() as f32)
        }
        dtype::INT32 => (i32::MIN as f32, i32::MAX as f32),
        _ => (f32::MIN, f32::MAX),
    };
    ((v / scale).round_ties_even() + zp).clamp(lo, hi)
}

/// The per-tensor or per-axis parameter of element `k` of a tensor of `dims`.
fn param(p: &HostVal, dims: &[usize], axis: usize, k: usize) -> f32 {
    if p.data.len() <= 1 {
        return p.data.first().copied().unwrap_or(0.0);
    }
    let inner: usize = dims[axis + 1..].iter().product();
    p.data[k / inner % dims[axis]]
}

/// A quantization parameter is one value or one per element along `axis`.
fn check_param(p: &HostVal, dims: &[usize], axis: usize) -> Result<(), String> {
    if p.data.is_empty() || (p.data.len() > 1 && dims.get(axis) != Some(&p.data.len())) {
        return Err(format!(
            "a parameter of {} values for axis {axis} of {dims:?}",
            p.data.len()
        ));
    }
    Ok(())
}

/// One node on the host.
fn eval(n: &Node, ins: &[Option<HostVal>]) -> Result<Vec<HostVal>, String> {
    let x = need(ins, 0)?;
    let unary = |f: &dyn Fn(f32) -> f32| {
        Ok(vec![HostVal::float(
            x.dims.clone(),
            x.data.iter().map(|&v| f(v)).collect(),
        )])
    };
    // An axis in range, or an error.
    let axis_of = |rank: usize| -> Result<usize, String> {
        let a = n.attr_int("axis", 1);
        let a = if a < 0 { a + rank as i64 } else { a };
        usize::try_from(a)
            .ok()
            .filter(|&a| a < rank.max(1))
            .ok_or_else(|| format!("axis {a} of a rank-{rank} tensor"))
    };
    match n.op_type.as_str() {
        "Identity" => Ok(vec![x.clone()]),
        "Relu" => unary(&|v| v.max(0.0)),
        "Sigmoid" => unary(&|v| 1.0 / (1.0 + (-v).exp())),
        "Tanh" => unary(&|v| v.tanh()),
        "LeakyRelu" => {
            let a = n.attr_float("alpha", 0.01);
            unary(&|v| if v < 0.0 { v * a } else { v })
        }
        "Clip" => {
            let bound = |i: usize, d: f32| {
                ins.get(i)
                    .and_then(|v| v.as_ref())
                    .and_then(|v| v.data.first().copied())
                    .unwrap_or(d)
            };
            let (lo, hi) = (bound(1, f32::MIN), bound(2, f32::MAX));
            unary(&|v| v.clamp(lo, hi))
        }
        "DequantizeLinear" => {
            let (s, z) = (need(ins, 1)?, ins.get(2).and_then(|v| v.clone()));
            let axis = if x.dims.is_empty() { 0 } else { axis_of(x.dims.len())? };
            check_param(s, &x.dims, axis)?;
            if let Some(z) = &z {
                check_param(z, &x.dims, axis)?;
            }
            let data = (0..x.data.len())
                .map(|k| (x.data[k] - z.as_ref().map_or(0.0, |z| param(z, &x.dims, axis, k))) * param(s, &x.dims, axis, k))
                .collect();
            Ok(vec![HostVal::float(x.dims.clone(), data)])
        }
        "QuantizeLinear" => {
            let (s, z) = (need(ins, 1)?, ins.get(2).and_then(|v| v.clone()));
            let elem = z.as_ref().map_or(dtype::UINT8, |z| z.elem);
            let axis = if x.dims.is_empty() { 0 } else { axis_of(x.dims.len())? };
            check_param(s, &x.dims, axis)?;
            if let Some(z) = &z {
                check_param(z, &x.dims, axis)?;
            }
            let data = (0..x.data.len())
                .map(|k| quantize(x.data[k], param(s, &x.dims, axis, k), z.as_ref().map_or(0.0, |z| param(z, &x.dims, axis, k)), elem))
                .collect();
            Ok(vec![HostVal { dims: x.dims.clone(), data, elem }])
        }
        "Add" | "Sub" | "Mul" | "Div" => {
            let y = need(ins, 1)?;
            let dims = broadcast(&x.dims, &y.dims).ok_or_else(|| format!("shapes {:?} and {:?} do not broadcast", x.dims, y.dims))?;
            let f: fn(f32, f32) -> f32 = match n.op_type.as_str() {
                "Add" => |a, b| a + b,
                "Sub" => |a, b| a - b,
                "Mul" => |a, b| a * b,
                _ => |a, b| a / b,
            };
            let count: usize = dims.iter().product();
            let data = (0..count).map(|k| f(x.data[source(k, &dims, &x.dims)], y.data[source(k, &dims, &y.dims)])).collect();
            Ok(vec![HostVal::float(dims, data)])
        }
        // onnxruntime's quantized softmax: dequantize, softmax in float, quantize.
        "QLinearSoftmax" => {
            let deq = Node { op_type: "DequantizeLinear".into(), ..Node::default() };
            let f = eval(&deq, &[ins[0].clone(), ins.get(1).cloned().flatten(), ins.get(2).cloned().flatten()])?;
            let soft = Node { op_type: "Softmax".into(), attributes: n.attributes.iter().filter(|a| a.name == "axis").map(|a| super::proto::Attribute { name: a.name.clone(), value: match &a.value { AttrValue::Int(v) => AttrValue::Int(*v), _ => AttrValue::Other } }).collect(), ..Node::default() };
            let y = eval(&soft, &[Some(f[0].clone())])?;
            let q = Node { op_type: "QuantizeLinear".into(), ..Node::default() };
            eval(&q, &[Some(y[0].clone()), ins.get(3).cloned().flatten(), ins.get(4).cloned().flatten()])
        }
        "Softmax" => {
            if x.dims.is_empty() {
                return Err("a softmax of a scalar".into());
            }
            let axis = if n.attributes.iter().any(|a| a.name == "axis") { axis_of(x.dims.len())? } else { x.dims.len() - 1 };
            let inner: usize = x.dims[axis + 1..].iter().product();
            let d = x.dims[axis];
            let mut data = x.data.clone();
            for outer in 0..x.data.len() / (d * inner) {
                for i in 0..inner {
                    let at = |j: usize| outer * d * inner + j * inner + i;
                    let m = (0..d).map(|j| x.data[at(j)]).fold(f32::MIN, f32::max);
                    let sum: f32 = (0..d).map(|j| (x.data[at(j)] - m).exp()).sum();
                    for j in 0..d {
                        data[at(j)] = (x.data[at(j)] - m).exp() / sum;
                    }
                }
            }
            Ok(vec![HostVal { data, ..x.clone() }])
        }
        "Flatten" => {
            let a = if n.attr_int("axis", 1) == x.dims.len() as i64 {
                x.dims.len()
            } else {
                axis_of(x.dims.len())?
            };
            let dims = vec![x.dims[..a].iter().product(), x.dims[a..].iter().product()];
            Ok(vec![HostVal { dims, ..x.clone() }])
        }
        "Reshape" => {
            let shape = need(ins, 1)?;
            let total = x.data.len();
            let mut dims: Vec<i64> = shape.data.iter().enumerate().map(|(i, &v)| if v == 0.0 { x.dims.get(i).copied().unwrap_or(1) as i64 } else { v as i64 }).collect();
            let bad = || format!("cannot reshape {:?} to {:?}", x.dims, shape.data);
            let known = dims
                .iter()
                .filter(|&&d| d > 0)
                .try_fold(1i64, |a, &d| a.checked_mul(d))
                .ok_or_else(bad)?;
            if dims.iter().filter(|&&d| d < 0).count() > 1 || dims.iter().any(|&d| d < -1) {
                return Err(bad());
            }
            for d in dims.iter_mut().filter(|d| **d < 0) {
                *d = total as i64 / known.max(1);
            }
            let dims: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
            if dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) != Some(total) {
                return Err(bad());
            }
            Ok(vec![HostVal { dims, ..x.clone() }])
        }
        "MatMul" | "Gemm" => matmul(n, x, ins).map(|v| vec![v]),
        "Conv" => conv(n, x, need(ins, 1)?, ins.get(2).and_then(|v| v.as_ref())).map(|v| vec![v]),
        "MaxPool" | "AveragePool" | "GlobalAveragePool" | "GlobalMaxPool" => pool(n, x).map(|v| vec![v]),
        other => Err(format!("operator {other} does not run on the host either (it runs Identity, Relu, Sigmoid, Tanh, LeakyRelu, Clip, QuantizeLinear, DequantizeLinear, Add, Sub, Mul, Div with broadcasting, Softmax, Flatten, Reshape, MatMul, Gemm, Conv and the poolings)")),
    }
}

/// MatMul and Gemm of 2-D tensors (transB, alpha, beta; no transA).
fn matmul(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let w = need(ins, 1)?;
    let tb = n.op_type == "Gemm" && n.attr_int("transB", 0) != 0;
    if x.dims.len() != 2
        || w.dims.len() != 2
        || (n.op_type == "Gemm" && n.attr_int("transA", 0) != 0)
    {
        return Err("only 2-D products (without transA) run on the host".into());
    }
    let (m, k) = (x.dims[0], x.dims[1]);
    let (wk, cols) = if tb {
        (w.dims[1], w.dims[0])
    } else {
        (w.dims[0], w.dims[1])
    };
    let c = ins.get(2).and_then(|v| v.clone());
    let fits = |c: &HostVal| broadcast(&[m, cols], &c.dims).as_deref() == Some(&[m, cols][..]);
    if wk != k || c.as_ref().is_some_and(|c| !fits(c)) {
        return Err(format!(
            "a [{m}, {k}] by {:?} product with a bias that does not fit",
            w.dims
        ));
    }
    let (alpha, beta) = (n.attr_float("alpha", 1.0), n.attr_float("beta", 1.0));
    let mut data = vec![0f32; m * cols];
    for i in 0..m {
        for j in 0..cols {
            let mut acc = 0f32;
            for t in 0..k {
                acc += x.data[i * k + t]
                    * if tb {
                        w.data[j * k + t]
                    } else {
                        w.data[t * cols + j]
                    };
            }
            let bias = c
                .as_ref()
                .map_or(0.0, |c| c.data[source(i * cols + j, &[m, cols], &c.dims)]);
            data[i * cols + j] = alpha * acc + beta * bias;
        }
    }
    Ok(HostVal::float(vec![m, cols], data))
}

/// The window geometry of a 2-D convolution or pooling: (kernel, strides, pads [top, left,
/// bottom, right], dilations), ONNX's defaults filled in.
type Window = ([usize; 2], [usize; 2], [usize; 4], [usize; 2]);

fn window(n: &Node, kernel: [usize; 2]) -> Result<Window, String> {
    let get = |k: &str, d: Vec<i64>| n.attr_ints_or(k, &d);
    if matches!(n.attr("auto_pad"), Some(AttrValue::Text(t)) if t != "NOTSET" && t != "VALID") {
        return Err("auto_pad SAME_* is not supported on the host".into());
    }
    let k = get("kernel_shape", kernel.iter().map(|&v| v as i64).collect());
    let (s, p, d) = (
        get("strides", vec![1, 1]),
        get("pads", vec![0; 4]),
        get("dilations", vec![1, 1]),
    );
    if k.len() != 2
        || s.len() != 2
        || p.len() != 4
        || d.len() != 2
        || [&k, &s, &p, &d].iter().any(|v| v.iter().any(|&e| e < 0))
    {
        return Err("only 2-D windows run on the host".into());
    }
    let u = |v: &[i64], i: usize| v[i] as usize;
    Ok((
        [u(&k, 0), u(&k, 1)],
        [u(&s, 0).max(1), u(&s, 1).max(1)],
        [u(&p, 0), u(&p, 1), u(&p, 2), u(&p, 3)],
        [u(&d, 0).max(1), u(&d, 1).max(1)],
    ))
}

/// A float 2-D convolution, NCHW, any group count.
fn conv(n: &Node, x: &HostVal, w: &HostVal, b: Option<&HostVal>) -> Result<HostVal, String> {
    let ([nb, c, h, wd], [co, cig, kh, kw]) = (dims4(&x.dims)?, dims4(&w.dims)?);
    let groups = n.attr_int("group", 1).max(1) as usize;
    let (_, s, p, d) = window(n, [kh, kw])?;
    if cig * groups != c || co % groups != 0 || b.is_some_and(|b| b.data.len() != co) {
        return Err("its groups, weights and bias do not match the channels".into());
    }
    let reach = |k: usize, d: usize| d * (k.max(1) - 1) + 1;
    if h + p[0] + p[2] < reach(kh, d[0]) || wd + p[1] + p[3] < reach(kw, d[1]) || kh == 0 || kw == 0
    {
        return Err("a kernel larger than the padded input".into());
    }
    let oh = (h + p[0] + p[2]).saturating_sub(d[0] * (kh - 1) + 1) / s[0] + 1;
    let ow = (wd + p[1] + p[3]).saturating_sub(d[1] * (kw - 1) + 1) / s[1] + 1;
    let mut out = vec![0f32; nb * co * oh * ow];
    for bi in 0..nb {
        for o in 0..co {
            let g = o / (co / groups);
            for oy in 0..oh {
                for ox in 0..ow {
                    let mut acc = b.map_or(0.0, |b| b.data[o]);
                    for ci in 0..cig {
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let iy = (oy * s[0] + ky * d[0]) as i64 - p[0] as i64;
                                let ix = (ox * s[1] + kx * d[1]) as i64 - p[1] as i64;
                                if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < wd {
                                    let xi = ((bi * c + g * cig + ci) * h + iy as usize) * wd
                                        + ix as usize;
                                    acc +=
                                        x.data[xi] * w.data[((o * cig + ci) * kh + ky) * kw + kx];
                                }
                            }
                        }
                    }
                    out[((bi * co + o) * oh + oy) * ow + ox] = acc;
                }
            }
        }
    }
    Ok(HostVal::float(vec![nb, co, oh, ow], out))
}

fn dims4(d: &[usize]) -> Result<[usize; 4], String> {
    d.try_into()
        .map_err(|_| format!("a tensor of shape {d:?} where NCHW is needed"))
}

/// Max and average pooling (padding never counts for the max; for the average only with
/// count_include_pad), and the global ones.
fn pool(n: &Node, x: &HostVal) -> Result<HostVal, String> {
    let [nb, c, h, w] = dims4(&x.dims)?;
    let global = n.op_type.starts_with("Global");
    let (k, s, p, _) = if global {
        ([h, w], [1, 1], [0; 4], [1, 1])
    } else {
        window(n, [1, 1])?
    };
    if n.attr_int("ceil_mode", 0) != 0 {
        return Err("ceil_mode 1 is not supported on the host".into());
    }
    if k[0] == 0 || k[1] == 0 || h + p[0] + p[2] < k[0] || w + p[1] + p[3] < k[1] {
        return Err("a window larger than the padded input".into());
    }
    let max = n.op_type.contains("Max");
    let include = n.attr_int("count_include_pad", 0) != 0;
    let oh = (h + p[0] + p[2] - k[0]) / s[0] + 1;
    let ow = (w + p[1] + p[3] - k[1]) / s[1] + 1;
    let mut out = vec![0f32; nb * c * oh * ow];
    for plane in 0..nb * c {
        for oy in 0..oh {
            for ox in 0..ow {
                let (mut best, mut sum, mut count) = (f32::MIN, 0f32, 0usize);
                for ky in 0..k[0] {
                    for kx in 0..k[1] {
                        let (iy, ix) = (
                            (oy * s[0] + ky) as i64 - p[0] as i64,
                            (ox * s[1] + kx) as i64 - p[1] as i64,
                        );
                        if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < w {
                            let v = x.data[(plane * h + iy as usize) * w + ix as usize];
                            best = best.max(v);
                            sum += v;
                            count += 1;
                        }
                    }
                }
                let div = if include { k[0] * k[1] } else { count.max(1) };
                out[(plane * oh + oy) * ow + ox] = if max { best } else { sum / div as f32 };
            }
        }
    }
    Ok(HostVal::float(vec![nb, c, oh, ow], out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_and_softmax() {
        assert_eq!(broadcast(&[1, 3, 2], &[2]), Some(vec![1, 3, 2]));
        assert_eq!(broadcast(&[4, 1], &[1, 5]), Some(vec![4, 5]));
        assert_eq!(broadcast(&[3], &[4]), None);
        // [[1, 2], [3, 4]] + [10, 20] -> [[11, 22], [13, 24]]: element 2 reads y[0].
        assert_eq!(source(2, &[2, 2], &[2]), 0);
        let n = Node {
            op_type: "Softmax".into(),
            ..Node::default()
        };
        let x = HostVal::float(vec![1, 2], vec![0.0, 0.0]);
        let y = eval(&n, &[Some(x)]).unwrap();
        assert_eq!(y[0].data, vec![0.5, 0.5]);
        // QuantizeLinear: 2.5 / 1 -> 2 (half to even) + 0; 300 saturates to 255 (uint8).
        assert_eq!(quantize(2.5, 1.0, 0.0, dtype::UINT8), 2.0);
        assert_eq!(quantize(300.0, 1.0, 0.0, dtype::UINT8), 255.0);
    }

    /// A node that reads its own output is an error, not an endless recursion.
    #[test]
    fn cycles_are_errors() {
        let n = Node {
            op_type: "Relu".into(),
            inputs: vec!["a".into()],
            outputs: vec!["a".into()],
            ..Node::default()
        };
        let g = Graph {
            nodes: vec![n],
            ..Graph::default()
        };
        let e = Host::new(&g).value("a").unwrap_err();
        assert!(e.contains("cycle"), "{e}");
    }
}
