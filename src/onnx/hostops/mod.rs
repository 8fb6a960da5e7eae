//! The host's operators (BYOC's fallback): the ONNX nodes the accelerator does not run,
//! evaluated as ONNX defines them (float operators in float32, integer ones exactly), on
//! demand from the graph outputs back to the values the accelerator handed over, the
//! graph's initializers and its inputs.

use super::proto::{dtype, AttrValue, Graph, Node, Tensor};
use std::collections::HashMap;

mod attention;
mod control;
mod detect;
mod extra;
mod grid;
mod image;
mod index;
mod interpolate;
mod logic;
mod math;
mod misc;
mod ml;
mod narrow;
mod nn;
mod quant;
mod recurrent;
pub mod resize;
mod rnn;
mod seq;
mod shape;
mod spectral;
mod training;
mod window;

pub use ml::runs_in_domain;
pub use quant::quantize;
pub use seq::Value;

/// A tensor on the host: its dims and elements, with its ONNX element type. Elements are
/// f64: integers exactly (int32 and the 8- and 16-bit types; int64 up to 2^53), float32,
/// float16 and bfloat16 values exactly.
#[derive(Clone, Debug)]
pub struct HostVal {
    pub dims: Vec<usize>,
    pub data: Vec<f64>,
    pub elem: i32,
}

impl HostVal {
    fn from_tensor(t: &Tensor) -> HostVal {
        HostVal {
            dims: t.dims.iter().map(|&d| d as usize).collect(),
            data: t.values.clone(),
            elem: t.data_type,
        }
    }
    /// A float32 tensor: each element rounded to float32.
    fn float(dims: Vec<usize>, data: Vec<f64>) -> HostVal {
        HostVal {
            dims,
            data: data.into_iter().map(|v| f64::from(v as f32)).collect(),
            elem: dtype::FLOAT,
        }
    }

    /// A float result of an operator on a tensor of type `elem`: float64 as it is,
    /// otherwise float32 (each element rounded).
    fn float_like(elem: i32, dims: Vec<usize>, data: Vec<f64>) -> HostVal {
        match elem {
            dtype::DOUBLE => HostVal { dims, data, elem },
            _ => HostVal::float(dims, data),
        }
    }
}

/// Evaluates graph values on demand; `known` holds what is given (handed over, inputs).
pub struct Host<'g> {
    graph: &'g Graph,
    producer: HashMap<&'g str, usize>,
    pub known: HashMap<String, HostVal>,
    /// The sequences and optionals given or computed.
    pub others: HashMap<String, Value>,
    /// The nodes evaluated (their indices in the graph), in order (for the report).
    pub ran: Vec<usize>,
    /// Tensors being evaluated (a cycle is an error, not an endless recursion).
    busy: std::collections::HashSet<String>,
}

/// The most elements a tensor the host makes may have (as a model tensor).
const MAX_ELEMENTS: usize = 1 << 27;

/// The element count of `dims`, or an error when it exceeds `MAX_ELEMENTS`: the one bound
/// of every tensor the host makes and of the graph's inputs.
pub(crate) fn elements(dims: &[usize]) -> Result<usize, String> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= MAX_ELEMENTS)
        .ok_or_else(|| format!("a tensor of shape {dims:?}: more than 2^27 elements"))
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
        for (i, n) in graph.nodes.iter().enumerate() {
            for o in &n.outputs {
                producer.insert(o.as_str(), i);
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
            others: HashMap::new(),
            ran: vec![],
            busy: Default::default(),
        }
    }

    /// The value of tensor `name`, evaluating what it needs.
    pub fn value(&mut self, name: &str) -> Result<HostVal, String> {
        self.any_value(name)?
            .tensor()
            .map_err(|e| format!("'{name}' is {e}"))
    }

    /// The value (a tensor, a sequence or an optional) `name` names.
    fn given(&self, name: &str) -> Option<Value> {
        match self.known.get(name) {
            Some(t) => Some(Value::Tensor(t.clone())),
            None => self.others.get(name).cloned(),
        }
    }

    /// The value `name` names, evaluating what it needs (with an explicit stack: a deep
    /// graph cannot overflow the call stack, a cycle is an error).
    pub fn any_value(&mut self, name: &str) -> Result<Value, String> {
        // (Tensors on the path of this evaluation only: an earlier one that failed midway
        // left its path behind.)
        self.busy.clear();
        let mut stack = vec![(name.to_string(), false)];
        while let Some((t, expanded)) = stack.pop() {
            if self.known.contains_key(&t) || self.others.contains_key(&t) {
                continue;
            }
            let index = *self
                .producer
                .get(t.as_str())
                .ok_or_else(|| format!("tensor '{t}' has no value (an input without data?)"))?;
            let node = &self.graph.nodes[index];
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
                for i in control::outer_names(node) {
                    stack.push((i, false));
                }
                continue;
            }
            self.busy.remove(&t);
            let ins: Vec<Option<Value>> = node
                .inputs
                .iter()
                .map(|i| if i.is_empty() { None } else { self.given(i) })
                .collect();
            let non_tensor = ins.iter().flatten().any(|v| !matches!(v, Value::Tensor(_)));
            let outs = if control::is_control(node) {
                let outer = control::outer_names(node)
                    .into_iter()
                    .filter_map(|k| self.given(&k).map(|v| (k, v)))
                    .collect();
                control::eval(node, &ins, &outer)
            } else if seq::is_seq_op(node, non_tensor) {
                seq::eval(node, &ins)
            } else {
                tensors(&ins)
                    .and_then(|ins| eval(node, &ins))
                    .map(|v| v.into_iter().map(Value::Tensor).collect())
            }
            .map_err(|e| format!("node '{}' ({}): {e}", node.name, node.op_type))?;
            self.ran.push(index);
            for (o, v) in node.outputs.iter().zip(outs) {
                match v {
                    Value::Tensor(t) => {
                        self.known.insert(o.clone(), t);
                    }
                    other => {
                        self.others.insert(o.clone(), other);
                    }
                }
            }
            if !self.known.contains_key(&t) && !self.others.contains_key(&t) {
                return Err(format!(
                    "node '{}' ({}): the host does not compute its output '{t}' (an optional output it does not compute, such as BatchNormalization's running statistics)",
                    node.name, node.op_type
                ));
            }
        }
        self.given(name)
            .ok_or_else(|| format!("tensor '{name}' has no value"))
    }

    /// The graph's outputs, in order (each a tensor, a sequence or an optional).
    pub fn outputs(&mut self) -> Result<Vec<(String, Value)>, String> {
        let names: Vec<String> = self.graph.outputs.iter().map(|o| o.name.clone()).collect();
        names
            .into_iter()
            .map(|n| Ok((n.clone(), self.any_value(&n)?)))
            .collect()
    }
}

/// The inputs of an operator on tensors, or an error naming the one that is not.
fn tensors(ins: &[Option<Value>]) -> Result<Vec<Option<HostVal>>, String> {
    ins.iter()
        .enumerate()
        .map(|(i, v)| match v {
            None => Ok(None),
            Some(Value::Tensor(t)) => Ok(Some(t.clone())),
            Some(v) => Err(format!(
                "input {i} is {}: only the sequence and optional operators take one",
                v.kind()
            )),
        })
        .collect()
}

pub(super) fn need(ins: &[Option<HostVal>], i: usize) -> Result<&HostVal, String> {
    ins.get(i)
        .and_then(|v| v.as_ref())
        .ok_or_else(|| format!("input {i} is missing"))
}

/// Two's-complement wrap-around of an integer result to its type (numpy's and onnxruntime's
/// integer arithmetic).
fn wrap(v: i128, elem: i32) -> f64 {
    let bits = match elem {
        dtype::UINT8 | dtype::INT8 => 8,
        dtype::UINT16 | dtype::INT16 => 16,
        dtype::UINT32 | dtype::INT32 => 32,
        _ => 64,
    };
    let m = v.rem_euclid(1i128 << bits);
    let signed = matches!(
        elem,
        dtype::INT8 | dtype::INT16 | dtype::INT32 | dtype::INT64
    );
    (if signed && m >= 1i128 << (bits - 1) {
        m - (1i128 << bits)
    } else {
        m
    }) as f64
}

/// A broadcast shape and the pairs of elements at each of its positions.
pub(super) type Pairs = (Vec<usize>, Vec<(f64, f64)>);

/// The elements of `x` and `y` broadcast together, and the shape.
pub(super) fn pairs(x: &HostVal, y: &HostVal) -> Result<Pairs, String> {
    let dims = broadcast(&x.dims, &y.dims)
        .ok_or_else(|| format!("shapes {:?} and {:?} do not broadcast", x.dims, y.dims))?;
    let count = elements(&dims)?;
    let v = (0..count)
        .map(|k| {
            (
                x.data[source(k, &dims, &x.dims)],
                y.data[source(k, &dims, &y.dims)],
            )
        })
        .collect();
    Ok((dims, v))
}

/// Add, Sub, Mul, Div with numpy broadcasting: float32, or exact integers of one type
/// (wrapping around, Div truncating toward zero).
fn binary(n: &Node, x: &HostVal, y: &HostVal) -> Result<HostVal, String> {
    if x.elem != y.elem {
        return Err(format!(
            "inputs of types {} and {}",
            dtype::name(x.elem),
            dtype::name(y.elem)
        ));
    }
    let (dims, ps) = pairs(x, y)?;
    let (count, pair) = (ps.len(), |k: usize| ps[k]);
    if x.elem == dtype::DOUBLE {
        let f: fn(f64, f64) -> f64 = match n.op_type.as_str() {
            "Add" => |a, b| a + b,
            "Sub" => |a, b| a - b,
            "Mul" => |a, b| a * b,
            _ => |a, b| a / b,
        };
        let data = (0..count).map(|k| f(pair(k).0, pair(k).1)).collect();
        return Ok(HostVal {
            dims,
            data,
            elem: x.elem,
        });
    }
    if x.elem == dtype::FLOAT {
        let f: fn(f32, f32) -> f32 = match n.op_type.as_str() {
            "Add" => |a, b| a + b,
            "Sub" => |a, b| a - b,
            "Mul" => |a, b| a * b,
            _ => |a, b| a / b,
        };
        let data: Vec<f64> = (0..count)
            .map(|k| {
                let (a, b) = pair(k);
                f64::from(f(a as f32, b as f32))
            })
            .collect();
        return Ok(HostVal::float(dims, data));
    }
    if quant::int_range(x.elem).is_none() {
        return Err(format!("{} of {} tensors", n.op_type, dtype::name(x.elem)));
    }
    let mut data = Vec::with_capacity(count);
    for k in 0..count {
        let (a, b) = pair(k);
        let (a, b) = (a as i128, b as i128);
        let v = match n.op_type.as_str() {
            "Add" => a + b,
            "Sub" => a - b,
            "Mul" => a * b,
            _ if b == 0 => return Err("an integer division by zero".into()),
            _ => a / b,
        };
        data.push(wrap(v, x.elem));
    }
    Ok(HostVal {
        dims,
        data,
        elem: x.elem,
    })
}

/// Max, Min, Sum and Mean of any number of inputs, with broadcasting.
fn variadic(n: &Node, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let parts: Vec<&HostVal> = ins.iter().flatten().collect();
    let mut acc = parts[0].clone();
    for p in &parts[1..] {
        let dims = broadcast(&acc.dims, &p.dims)
            .ok_or_else(|| format!("shapes {:?} and {:?} do not broadcast", acc.dims, p.dims))?;
        if p.elem != acc.elem {
            return Err("inputs of different types".into());
        }
        let count = elements(&dims)?;
        let data = (0..count)
            .map(|k| {
                let (a, b) = (
                    acc.data[source(k, &dims, &acc.dims)],
                    p.data[source(k, &dims, &p.dims)],
                );
                match n.op_type.as_str() {
                    "Max" => a.max(b),
                    "Min" => a.min(b),
                    _ if acc.elem == dtype::FLOAT => f64::from(a as f32 + b as f32),
                    _ if acc.elem == dtype::DOUBLE => a + b,
                    _ => wrap(a as i128 + b as i128, acc.elem),
                }
            })
            .collect();
        acc = HostVal {
            dims,
            data,
            elem: acc.elem,
        };
    }
    if n.op_type == "Mean" {
        let k = parts.len() as f64;
        acc.data = match acc.elem {
            dtype::FLOAT => acc
                .data
                .iter()
                .map(|&v| f64::from(v as f32 / k as f32))
                .collect(),
            dtype::DOUBLE => acc.data.iter().map(|&v| v / k).collect(),
            _ => return Err("Mean of integers".into()),
        };
    }
    Ok(acc)
}

/// A Constant node's value.
fn constant(n: &Node) -> Result<HostVal, String> {
    let scalar = |data: Vec<f64>, elem, dims: Vec<usize>| Ok(HostVal { dims, data, elem });
    match n.attributes.first().map(|a| (a.name.as_str(), &a.value)) {
        Some(("value", AttrValue::Tensor(t))) => Ok(HostVal::from_tensor(t)),
        Some(("value_float", AttrValue::Float(v))) => {
            scalar(vec![f64::from(*v)], dtype::FLOAT, vec![])
        }
        Some(("value_int", AttrValue::Int(v))) => scalar(vec![*v as f64], dtype::INT64, vec![]),
        Some(("value_ints", AttrValue::Ints(v))) => scalar(
            v.iter().map(|&e| e as f64).collect(),
            dtype::INT64,
            vec![v.len()],
        ),
        _ => Err(
            "only a Constant with value, value_float, value_int or value_ints runs on the host"
                .into(),
        ),
    }
}

/// The operators the host runs on float64 tensors, in double precision: exact ones (data
/// movement, comparisons, selection, Max/Min, Abs, Sign, Neg, Floor, Ceil, Clip, Relu) and
/// arithmetic, sums and functions computed in f64 without rounding to float32.
const F64_OPS: &[&str] = &[
    "Identity",
    "Relu",
    "Abs",
    "Sign",
    "Neg",
    "Floor",
    "Ceil",
    "Clip",
    "Exp",
    "Log",
    "Sqrt",
    "Reciprocal",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Mod",
    "Max",
    "Min",
    "Sum",
    "Mean",
    "CumSum",
    "CumProd",
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceSumSquare",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "Cast",
    "CastLike",
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Transpose",
    "Concat",
    "Split",
    "Slice",
    "Shape",
    "Size",
    "Gather",
    "Expand",
    "Tile",
    "Equal",
    "Less",
    "LessOrEqual",
    "Greater",
    "GreaterOrEqual",
    "Where",
    "IsNaN",
    "IsInf",
    "Einsum",
    "BitCast",
    "FlexAttention",
    "MatMul",
    "Gemm",
    "Softmax",
    "Binarizer",
    "ArrayFeatureExtractor",
    "TreeEnsemble",
];

/// The operators the host runs, for messages.
const HOST_OPS: &str = "Identity, Constant, Relu, LeakyRelu, PRelu, Elu, Selu, Celu, ThresholdedRelu, Sigmoid, HardSigmoid, HardSwish, Swish, Mish, Gelu, Softplus, Softsign, Tanh, Clip, Abs, Sign, Neg, Floor, Ceil, Round, Exp, Log, Sqrt, Reciprocal, Erf, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh; Add, Sub, Mul, Div, Pow, Mod, BitShift, Max, Min, Sum, Mean with broadcasting; QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger, QLinearAdd, QLinearSoftmax; Softmax, MatMul, Gemm, Conv, ConvTranspose (any spatial rank), BatchNormalization, MeanVarianceNormalization, the poolings (any spatial rank, Lp too), Resize and Upsample (nearest); ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, LogSoftmax, LayerNormalization, RMSNormalization, InstanceNormalization, Hardmax, CumSum, CumProd, Shrink, LpNormalization, GatherND, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss; Flatten, Reshape, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Pad, Cast, CastLike, Shape, Size, Gather, GatherElements, ScatterElements (and Scatter, its old name), ScatterND, TopK, Tile, DepthToSpace, SpaceToDepth, OneHot, EyeLike, Trilu, Range, Expand, ConstantOfShape, Dropout, ArgMax, ArgMin; RNN, GRU, LSTM, Attention, RotaryEmbedding, FlexAttention, LinearAttention, CausalConvWithState, SwiGLU; HannWindow, HammingWindow, BlackmanWindow, Compress, NonZero, CenterCropPad, ReverseSequence, Det, LRN, Einsum, BitCast, GridSample, NonMaxSuppression, Unique, Col2Im, AffineGrid, MaxUnpool, GroupNormalization, RoiAlign, TensorScatter, DFT, STFT, MelWeightMatrix, DeformConv, TfIdfVectorizer; ai.onnx.ml's Binarizer, ArrayFeatureExtractor and TreeEnsemble; ai.onnx.preview.training's Adagrad, Adam and Momentum; If, Loop, Scan, SequenceMap (their subgraphs on the host); SequenceEmpty, SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, Optional, OptionalHasElement, OptionalGetElement; Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not, BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot, Where, IsNaN, IsInf";

/// One node on the host.
fn eval(n: &Node, ins: &[Option<HostVal>]) -> Result<Vec<HostVal>, String> {
    if let Some(e) = ml::domain_error(n) {
        return Err(e);
    }
    if n.op_type == "Constant" {
        return constant(n).map(|v| vec![v]);
    }
    if let Some(r) = training::eval(n, ins) {
        return r;
    }
    if let Some(r) = narrow::eval(n, ins, eval) {
        return r;
    }
    if ins.iter().flatten().any(|v| v.elem == dtype::DOUBLE)
        && !F64_OPS.contains(&n.op_type.as_str())
    {
        return Err(format!(
            "{} of float64 tensors (the host runs float64 through {})",
            n.op_type,
            F64_OPS.join(", ")
        ));
    }
    let x = need(ins, 0)?;
    if let Some(r) = quant::eval_quant(n, x, ins) {
        return r;
    }
    if n.op_type == "Split" {
        return shape::split(n, x, ins, n.outputs.len());
    }
    if n.op_type == "Dropout" {
        return shape::dropout(x, ins);
    }
    if let Some(r) = shape::eval_shape(n, x, ins) {
        return r.map(|v| vec![v]);
    }
    if let Some(r) = math::basic_unary(n, x, ins)
        .or_else(|| math::unary(n, x))
        .or_else(|| math::reduce(n, x, ins))
    {
        return r.map(|v| vec![v]);
    }
    if let Some(r) = ins.get(1).and_then(|y| math::binary(n, x, y.as_ref()?)) {
        return r.map(|v| vec![v]);
    }
    if let Some(r) = logic::eval(n, x, ins) {
        return r.map(|v| vec![v]);
    }
    if let Some(r) = extra::eval(n, x, ins) {
        return r;
    }
    if let Some(r) = rnn::eval(n, x, ins)
        .or_else(|| attention::eval(n, x, ins))
        .or_else(|| recurrent::eval(n, x, ins))
    {
        return r;
    }
    if let Some(r) = misc::eval(n, x, ins)
        .or_else(|| grid::eval(n, x, ins))
        .or_else(|| detect::eval(n, x, ins))
        .or_else(|| image::eval(n, x, ins))
        .or_else(|| spectral::eval(n, x, ins))
        .or_else(|| ml::eval(n, x, ins))
    {
        return r.map(|v| vec![v]);
    }
    match n.op_type.as_str() {
        "PRelu" => {
            let slope = need(ins, 1)?;
            let neg = binary(
                &Node {
                    op_type: "Mul".into(),
                    ..Node::default()
                },
                x,
                slope,
            )?;
            let data = (0..neg.data.len()).map(|k| {
                let v = x.data[source(k, &neg.dims, &x.dims)];
                if v < 0.0 {
                    neg.data[k]
                } else {
                    v
                }
            });
            Ok(vec![HostVal {
                data: data.collect(),
                ..neg
            }])
        }
        "Max" | "Min" | "Sum" | "Mean" => variadic(n, ins).map(|v| vec![v]),
        "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" => {
            nn::reduce(n, x, ins).map(|v| vec![v])
        }
        "LogSoftmax" => {
            let soft = eval(
                &Node {
                    op_type: "Softmax".into(),
                    ..n.clone()
                },
                ins,
            )?;
            Ok(vec![HostVal::float(
                x.dims.clone(),
                soft[0]
                    .data
                    .iter()
                    .map(|&v| f64::from((v as f32).ln()))
                    .collect(),
            )])
        }
        "BatchNormalization" => nn::batch_norm(n, x, ins),
        "ConvTranspose" => {
            window::conv_transpose(n, x, need(ins, 1)?, ins.get(2).and_then(|v| v.as_ref()))
                .map(|v| vec![v])
        }
        "Add" | "Sub" | "Mul" | "Div" => binary(n, x, need(ins, 1)?).map(|v| vec![v]),
        "Softmax" => nn::softmax(n, x).map(|v| vec![v]),
        "MatMul" | "Gemm" => nn::matmul(n, x, ins).map(|v| vec![v]),
        "Conv" => {
            window::conv(n, x, need(ins, 1)?, ins.get(2).and_then(|v| v.as_ref())).map(|v| vec![v])
        }
        "MaxPool" => window::pool_with_indices(n, x).map(|(v, i)| vec![v, i]),
        "AveragePool" | "LpPool" | "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
            window::pool(n, x).map(|v| vec![v])
        }
        "Resize" | "Upsample" => interpolate::resize(n, x, ins).map(|v| vec![v]),
        other => Err(format!(
            "operator {other} does not run on the host either (it runs {HOST_OPS})"
        )),
    }
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
        assert_eq!(quant::quantize(2.5, 1.0, 0.0, dtype::UINT8), 2.0);
        assert_eq!(quant::quantize(300.0, 1.0, 0.0, dtype::UINT8), 255.0);
    }

    /// float64 keeps double precision, where float32 would round: 1 + 2^-40 (float32
    /// gives 1), Mean of it and 1 (1 + 2^-41), Mod(1 + 2^-40, 2^-41) = 0 exactly and
    /// numpy's sign rule Mod(-(2^-40), 1) = 1 - 2^-40, exp(2^-40) = 1 + 2^-40 (to 2^-80);
    /// an operator without a float64 rule is refused, naming it.
    #[test]
    fn float64_keeps_double_precision() {
        let op = |t: &str| Node {
            op_type: t.into(),
            ..Node::default()
        };
        let d = |v: Vec<f64>| HostVal {
            dims: vec![v.len()],
            data: v,
            elem: dtype::DOUBLE,
        };
        let e = 2f64.powi(-40);
        let one = || Some(d(vec![1.0]));
        let sum = eval(&op("Add"), &[one(), Some(d(vec![e]))]).unwrap();
        assert_eq!((sum[0].data[0], sum[0].elem), (1.0 + e, dtype::DOUBLE));
        let mean = eval(&op("Mean"), &[Some(sum[0].clone()), one()]).unwrap();
        assert_eq!(mean[0].data[0], 1.0 + e / 2.0);
        let m = eval(&op("Mod"), &[Some(sum[0].clone()), Some(d(vec![e / 2.0]))]).unwrap();
        assert_eq!(m[0].data[0], 0.0);
        let m = eval(&op("Mod"), &[Some(d(vec![-e])), one()]).unwrap();
        assert_eq!(m[0].data[0], 1.0 - e);
        let x = eval(&op("Exp"), &[Some(d(vec![e]))]).unwrap();
        assert!((x[0].data[0] - (1.0 + e)).abs() < 1e-24);
        let f = HostVal::float(vec![1], vec![1.0 + e]);
        assert_eq!(f.data[0], 1.0);
        let err = eval(&op("Sigmoid"), &[Some(d(vec![1.0, 2.0]))]).unwrap_err();
        assert!(err.starts_with("Sigmoid of float64 tensors"), "{err}");
    }

    /// A failed evaluation does not leave its path behind: asked again, the host reports
    /// the same error, not a cycle.
    #[test]
    fn a_failed_evaluation_is_reported_again_not_as_a_cycle() {
        let add = Node {
            op_type: "Add".into(),
            inputs: vec!["x".into(), "y".into()],
            outputs: vec!["s".into()],
            ..Node::default()
        };
        let relu = Node {
            op_type: "Relu".into(),
            inputs: vec!["s".into()],
            outputs: vec!["r".into()],
            ..Node::default()
        };
        let g = Graph {
            nodes: vec![add, relu],
            ..Graph::default()
        };
        let mut h = Host::new(&g);
        h.known
            .insert("x".into(), HostVal::float(vec![3], vec![1.0; 3]));
        h.known
            .insert("y".into(), HostVal::float(vec![4], vec![1.0; 4]));
        let first = h.value("r").unwrap_err();
        let again = h.value("r").unwrap_err();
        assert!(first.contains("do not broadcast"), "{first}");
        assert_eq!(first, again);
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
