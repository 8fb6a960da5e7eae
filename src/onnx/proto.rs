//! The parts of ONNX's `onnx.proto` that a model for hwgen uses, decoded from the wire
//! format (field numbers from onnx.proto3; unknown fields are skipped, as protobuf readers
//! do). Tensor values are held as f64, exact for every integer type up to 2^53 and every
//! float32.

use super::wire::{self, Reader, Value, WireError};

pub struct Model {
    pub ir_version: i64,
    /// (domain, version); "" is the default ONNX domain.
    pub opsets: Vec<(String, i64)>,
    pub graph: Graph,
}

#[derive(Clone, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub initializers: Vec<Tensor>,
    pub inputs: Vec<ValueInfo>,
    pub outputs: Vec<ValueInfo>,
}

#[derive(Clone, Default)]
pub struct Node {
    pub name: String,
    pub op_type: String,
    pub domain: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub attributes: Vec<Attribute>,
}

impl Node {
    /// A node of type `op_type` with attributes `attrs` (the host's operators build the
    /// operators they run in terms of with it).
    pub fn new(op_type: &str, attrs: Vec<(&str, AttrValue)>) -> Node {
        Node {
            op_type: op_type.into(),
            attributes: attrs
                .into_iter()
                .map(|(name, value)| Attribute {
                    name: name.into(),
                    value,
                })
                .collect(),
            ..Node::default()
        }
    }

    /// Attribute `name`'s value, if the node has it.
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attributes
            .iter()
            .find(|a| a.name == name)
            .map(|a| &a.value)
    }

    /// An integer attribute, or `default`.
    pub fn attr_int(&self, name: &str, default: i64) -> i64 {
        match self.attr(name) {
            Some(AttrValue::Int(v)) => *v,
            _ => default,
        }
    }

    /// A float attribute, or `default`.
    pub fn attr_float(&self, name: &str, default: f32) -> f32 {
        match self.attr(name) {
            Some(AttrValue::Float(v)) => *v,
            _ => default,
        }
    }

    /// A list-of-integers attribute.
    pub fn attr_ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.attr(name) {
            Some(AttrValue::Ints(v)) => Some(v.clone()),
            _ => None,
        }
    }

    /// A list-of-integers attribute, or `default` when it is absent or empty (ONNX's
    /// defaults for strides, pads, dilations and the like).
    pub fn attr_ints_or(&self, name: &str, default: &[i64]) -> Vec<i64> {
        self.attr_ints(name)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_vec())
    }
}

#[derive(Clone)]
pub struct Attribute {
    pub name: String,
    pub value: AttrValue,
}

#[derive(Clone)]
pub enum AttrValue {
    Int(i64),
    Float(f32),
    Ints(Vec<i64>),
    Text(String),
    Tensor(Tensor),
    /// Lists of floats and of strings (a recurrent operator's activations and their alphas).
    Floats(Vec<f32>),
    Texts(Vec<String>),
    /// A subgraph (If's branches, Loop's and Scan's body).
    Graph(Box<Graph>),
    /// A sparse tensor or a list of graphs or tensors: no operator hwgen runs takes one.
    Other,
}

/// ONNX TensorProto.DataType values hwgen reads.
pub mod dtype {
    pub const FLOAT: i32 = 1;
    pub const UINT8: i32 = 2;
    pub const INT8: i32 = 3;
    pub const UINT16: i32 = 4;
    pub const INT16: i32 = 5;
    pub const INT32: i32 = 6;
    pub const INT64: i32 = 7;
    pub const BOOL: i32 = 9;
    pub const FLOAT16: i32 = 10;
    pub const DOUBLE: i32 = 11;
    pub const UINT32: i32 = 12;
    pub const UINT64: i32 = 13;
    pub const BFLOAT16: i32 = 16;
    pub const FLOAT8E4M3FN: i32 = 17;
    pub const FLOAT8E4M3FNUZ: i32 = 18;
    pub const FLOAT8E5M2: i32 = 19;
    pub const FLOAT8E5M2FNUZ: i32 = 20;
    pub const UINT4: i32 = 21;
    pub const INT4: i32 = 22;
    pub const FLOAT4E2M1: i32 = 23;
    pub const FLOAT8E8M0: i32 = 24;
    pub const UINT2: i32 = 25;
    pub const INT2: i32 = 26;

    /// The binary format of the float8 types (float8e4m3fn and float8e5m2 are hwgen's FP8
    /// elements) and float4e2m1.
    pub fn mini_float(t: i32) -> Option<crate::numeric::MiniFloat> {
        use crate::numeric as n;
        match t {
            FLOAT8E4M3FN => Some(n::E4M3),
            FLOAT8E4M3FNUZ => Some(n::E4M3FNUZ),
            FLOAT8E5M2 => Some(n::E5M2),
            FLOAT8E5M2FNUZ => Some(n::E5M2FNUZ),
            FLOAT4E2M1 => Some(n::E2M1),
            _ => None,
        }
    }

    /// The 4- and 2-bit integer types.
    pub fn small_int(t: i32) -> Option<crate::numeric::IntType> {
        use crate::numeric::IntType;
        match t {
            INT4 => Some(IntType::new(true, 4)),
            UINT4 => Some(IntType::new(false, 4)),
            INT2 => Some(IntType::new(true, 2)),
            UINT2 => Some(IntType::new(false, 2)),
            _ => None,
        }
    }

    /// Whether `t` is one of the types narrower than 16 bits but bool and the 8-bit
    /// integers: float8 (all five), float4e2m1, int4, uint4, int2, uint2. Their `.npy`
    /// arrays hold one code a byte, as ml_dtypes saves them.
    pub fn is_small(t: i32) -> bool {
        mini_float(t).is_some() || small_int(t).is_some() || t == FLOAT8E8M0
    }

    /// The bits an element of a type ONNX packs several to a byte (4 or 2), else None.
    pub fn packed_bits(t: i32) -> Option<u32> {
        match t {
            FLOAT4E2M1 => Some(4),
            _ => small_int(t).map(|i| i.bits),
        }
    }

    /// The value of one stored code (a byte, or a packed element in its low bits) of a
    /// small type (`is_small`).
    pub fn small_value(t: i32, code: u32) -> f64 {
        if let Some(f) = mini_float(t) {
            return f.decode(code & ((1 << f.bits()) - 1));
        }
        match small_int(t) {
            // The low bits, two's complement when signed.
            Some(i) => i.wrap(i128::from(code)) as f64,
            None => crate::numeric::mx::e8m0_value(code as u8),
        }
    }

    /// The code of value `v` of a small type (exactly a value of it; NaN as numpy and
    /// ml_dtypes write it).
    pub fn small_code(t: i32, v: f64) -> u8 {
        if let Some(f) = mini_float(t) {
            return float_code(f, v) as u8;
        }
        match small_int(t) {
            Some(i) => (v as i64 & ((1 << i.bits) - 1)) as u8,
            None => crate::numeric::mx::e8m0_code(v, crate::numeric::mx::E8m0Round::Down, false),
        }
    }

    /// The code of value `v` (exactly a value of `f`), NaN the quiet one numpy writes.
    pub fn float_code(f: crate::numeric::MiniFloat, v: f64) -> u32 {
        match v.is_nan() {
            true => f.quiet_nan_code(v.is_sign_negative()),
            false => f.encode(v as f32),
        }
    }

    /// The binary format of float16 and bfloat16 (values are held exactly, as f64).
    pub fn narrow_float(t: i32) -> Option<crate::numeric::MiniFloat> {
        match t {
            FLOAT16 => Some(crate::numeric::FP16),
            BFLOAT16 => Some(crate::numeric::BF16),
            _ => None,
        }
    }

    /// The type's ONNX name, for messages.
    pub fn name(t: i32) -> String {
        let n = match t {
            FLOAT => "float",
            UINT8 => "uint8",
            INT8 => "int8",
            UINT16 => "uint16",
            INT16 => "int16",
            INT32 => "int32",
            INT64 => "int64",
            BOOL => "bool",
            FLOAT16 => "float16",
            DOUBLE => "double",
            UINT32 => "uint32",
            UINT64 => "uint64",
            BFLOAT16 => "bfloat16",
            // Types hwgen does not hold, named for messages.
            8 => "string",
            14 => "complex64",
            15 => "complex128",
            FLOAT8E4M3FN => "float8e4m3fn",
            FLOAT8E4M3FNUZ => "float8e4m3fnuz",
            FLOAT8E5M2 => "float8e5m2",
            FLOAT8E5M2FNUZ => "float8e5m2fnuz",
            UINT4 => "uint4",
            INT4 => "int4",
            FLOAT4E2M1 => "float4e2m1",
            FLOAT8E8M0 => "float8e8m0",
            UINT2 => "uint2",
            INT2 => "int2",
            _ => return format!("data type {t}"),
        };
        n.to_string()
    }
}

#[derive(Clone, Default)]
pub struct Tensor {
    pub name: String,
    pub dims: Vec<i64>,
    pub data_type: i32,
    pub values: Vec<f64>,
}

#[derive(Clone, Default)]
pub struct ValueInfo {
    pub name: String,
    /// A tensor, or a sequence or optional of what `kind` says; `elem_type` and `shape`
    /// are the (innermost) tensor's.
    pub kind: ValueKind,
    pub elem_type: i32,
    /// Each dimension's size, None for a symbolic one (dim_param); None without a shape.
    pub shape: Option<Vec<Option<i64>>>,
}

/// What a graph value is (ONNX's TypeProto).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ValueKind {
    #[default]
    Tensor,
    /// A sequence of tensors.
    Sequence,
    /// An optional tensor or sequence.
    Optional(Box<ValueKind>),
    /// A map or sparse tensor: nothing hwgen holds.
    Other,
}

/// A decoding problem: where in the message tree, and what.
#[derive(Debug)]
pub struct ProtoError {
    pub path: String,
    pub what: String,
}

type R<T> = Result<T, ProtoError>;

fn at(path: &str) -> impl Fn(WireError) -> ProtoError + '_ {
    move |e| ProtoError {
        path: path.to_string(),
        what: if e.offset > 0 {
            format!("{} (byte {} of the message)", e.what, e.offset)
        } else {
            e.what
        },
    }
}

/// Visit every field of a message, with the error path for it.
fn fields<'a>(buf: &'a [u8], path: &str, mut f: impl FnMut(u32, Value<'a>) -> R<()>) -> R<()> {
    let mut r = Reader::new(buf);
    while let Some((n, v)) = r.next_field().map_err(at(path))? {
        f(n, v)?;
    }
    Ok(())
}

fn int(v: Value, path: &str) -> R<i64> {
    let mut out = vec![];
    wire::ints(v, &mut out).map_err(at(path))?;
    Ok(out.pop().unwrap_or(0))
}

pub fn model(buf: &[u8]) -> R<Model> {
    let mut m = Model {
        ir_version: 0,
        opsets: vec![],
        graph: Graph::default(),
    };
    let mut graph = None;
    fields(buf, "model", |n, v| {
        match n {
            1 => m.ir_version = int(v, "model.ir_version")?,
            7 => {
                graph = Some(self::graph(
                    wire::message(v).map_err(at("model.graph"))?,
                    0,
                )?)
            }
            8 => {
                let (mut domain, mut version) = (String::new(), 0);
                fields(
                    wire::message(v).map_err(at("model.opset_import"))?,
                    "model.opset_import",
                    |n, v| {
                        match n {
                            1 => domain = wire::text(v).map_err(at("model.opset_import.domain"))?,
                            2 => version = int(v, "model.opset_import.version")?,
                            _ => {}
                        }
                        Ok(())
                    },
                )?;
                m.opsets.push((domain, version));
            }
            _ => {}
        }
        Ok(())
    })?;
    m.graph = graph.ok_or_else(|| ProtoError {
        path: "model".into(),
        what: "no graph (field 7): this is not an ONNX model file".into(),
    })?;
    Ok(m)
}

/// Subgraphs nest at most this deep (a file cannot exhaust the stack).
const MAX_NESTING: usize = 32;

/// A graph, `depth` subgraphs deep.
fn graph(buf: &[u8], depth: usize) -> R<Graph> {
    if depth > MAX_NESTING {
        return Err(ProtoError {
            path: "graph".into(),
            what: format!("subgraphs nested more than {MAX_NESTING} deep"),
        });
    }
    let mut g = Graph::default();
    fields(buf, "graph", |n, v| {
        let msg = || wire::message(v).map_err(at("graph"));
        match n {
            1 => g.nodes.push(node(msg()?, g.nodes.len(), depth)?),
            5 => g.initializers.push(tensor(msg()?, "graph.initializer")?),
            11 => g.inputs.push(value_info(msg()?, "graph.input")?),
            12 => g.outputs.push(value_info(msg()?, "graph.output")?),
            15 => {
                return Err(ProtoError {
                    path: "graph.sparse_initializer".into(),
                    what: "sparse initializers are not supported".into(),
                })
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(g)
}

fn node(buf: &[u8], index: usize, depth: usize) -> R<Node> {
    let path = format!("graph.node[{index}]");
    let mut nd = Node::default();
    fields(buf, &path, |n, v| {
        let txt = |v| wire::text(v).map_err(at(&path));
        match n {
            1 => nd.inputs.push(txt(v)?),
            2 => nd.outputs.push(txt(v)?),
            3 => nd.name = txt(v)?,
            4 => nd.op_type = txt(v)?,
            7 => nd.domain = txt(v)?,
            5 => nd.attributes.push(attribute(
                wire::message(v).map_err(at(&path))?,
                &path,
                depth,
            )?),
            _ => {}
        }
        Ok(())
    })?;
    Ok(nd)
}

fn attribute(buf: &[u8], node: &str, depth: usize) -> R<Attribute> {
    let path = format!("{node}.attribute");
    let (mut name, mut ty) = (String::new(), 0i64);
    let (mut i, mut f, mut s, mut t, mut g) = (None, None, None, None, None);
    let (mut is, mut fs, mut ss) = (vec![], Vec::<f32>::new(), Vec::<String>::new());
    fields(buf, &path, |n, v| {
        let e = at(&path);
        match n {
            1 => name = wire::text(v).map_err(&e)?,
            2 => {
                f = Some(match v {
                    Value::Fixed32(x) => f32::from_bits(x),
                    _ => {
                        return Err(e(WireError {
                            offset: 0,
                            what: "attribute f is not a float".into(),
                        }))
                    }
                })
            }
            3 => i = Some(int(v, &path)?),
            4 => s = Some(wire::text(v).map_err(&e)?),
            5 => t = Some(tensor(wire::message(v).map_err(&e)?, &path)?),
            6 => g = Some(graph(wire::message(v).map_err(&e)?, depth + 1)?),
            7 => wire::floats(v, &mut fs).map_err(&e)?,
            8 => wire::ints(v, &mut is).map_err(&e)?,
            9 => ss.push(wire::text(v).map_err(&e)?),
            20 => ty = int(v, &path)?,
            _ => {}
        }
        Ok(())
    })?;
    // AttributeProto.AttributeType: FLOAT 1, INT 2, STRING 3, TENSOR 4, GRAPH 5, FLOATS 6,
    // INTS 7, STRINGS 8.
    let value = match ty {
        1 => AttrValue::Float(f.unwrap_or(0.0)),
        2 => AttrValue::Int(i.unwrap_or(0)),
        3 => AttrValue::Text(s.unwrap_or_default()),
        4 => AttrValue::Tensor(t.unwrap_or_default()),
        5 => g.map_or(AttrValue::Other, |g| AttrValue::Graph(Box::new(g))),
        6 => AttrValue::Floats(fs),
        7 => AttrValue::Ints(is),
        8 => AttrValue::Texts(ss),
        // Files from before IR version 4 may leave the type out: infer it from the field.
        0 if i.is_some() => AttrValue::Int(i.unwrap_or(0)),
        0 if f.is_some() => AttrValue::Float(f.unwrap_or(0.0)),
        0 if !is.is_empty() => AttrValue::Ints(is),
        0 if !fs.is_empty() => AttrValue::Floats(fs),
        0 if !ss.is_empty() => AttrValue::Texts(ss),
        0 if s.is_some() => AttrValue::Text(s.unwrap_or_default()),
        0 if t.is_some() => AttrValue::Tensor(t.unwrap_or_default()),
        0 if g.is_some() => g.map_or(AttrValue::Other, |g| AttrValue::Graph(Box::new(g))),
        _ => AttrValue::Other,
    };
    Ok(Attribute { name, value })
}

fn value_info(buf: &[u8], path: &str) -> R<ValueInfo> {
    let mut vi = ValueInfo::default();
    fields(buf, path, |n, v| {
        match n {
            1 => vi.name = wire::text(v).map_err(at(path))?,
            2 => vi.kind = type_proto(wire::message(v).map_err(at(path))?, path, &mut vi, 0)?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(vi)
}

/// A TypeProto: tensor_type (1) = { elem_type (1), shape (2) = { dim (1) } },
/// sequence_type (4) and optional_type (9) = { elem_type (1): TypeProto }; the tensor's
/// type and shape go to `vi`.
fn type_proto(buf: &[u8], path: &str, vi: &mut ValueInfo, depth: usize) -> R<ValueKind> {
    if depth > 8 {
        return Err(ProtoError {
            path: path.into(),
            what: "types nested more than 8 deep".into(),
        });
    }
    let mut kind = ValueKind::Other;
    fields(buf, path, |n, v| {
        let inner = |vi: &mut ValueInfo| -> R<ValueKind> {
            let mut k = ValueKind::Other;
            fields(wire::message(v).map_err(at(path))?, path, |n, v| {
                if n == 1 {
                    k = type_proto(wire::message(v).map_err(at(path))?, path, vi, depth + 1)?;
                }
                Ok(())
            })?;
            Ok(k)
        };
        match n {
            1 => {
                kind = ValueKind::Tensor;
                fields(wire::message(v).map_err(at(path))?, path, |n, v| {
                    match n {
                        1 => vi.elem_type = int(v, path)? as i32,
                        2 => vi.shape = Some(shape(wire::message(v).map_err(at(path))?, path)?),
                        _ => {}
                    }
                    Ok(())
                })?;
            }
            4 => {
                kind = match inner(vi)? {
                    ValueKind::Tensor => ValueKind::Sequence,
                    _ => ValueKind::Other,
                }
            }
            9 => {
                kind = match inner(vi)? {
                    k @ (ValueKind::Tensor | ValueKind::Sequence) => {
                        ValueKind::Optional(Box::new(k))
                    }
                    _ => ValueKind::Other,
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(kind)
}

fn shape(buf: &[u8], path: &str) -> R<Vec<Option<i64>>> {
    let mut dims = vec![];
    fields(buf, path, |n, v| {
        if n == 1 {
            let mut d = None;
            fields(wire::message(v).map_err(at(path))?, path, |n, v| {
                if n == 1 {
                    d = Some(int(v, path)?);
                }
                Ok(())
            })?;
            dims.push(d);
        }
        Ok(())
    })?;
    Ok(dims)
}

/// Bytes per element of raw_data for the types hwgen reads.
fn raw_width(t: i32) -> Option<usize> {
    use dtype::*;
    match t {
        UINT8 | INT8 | BOOL => Some(1),
        t if is_small(t) => Some(1),
        UINT16 | INT16 | FLOAT16 | BFLOAT16 => Some(2),
        FLOAT | INT32 | UINT32 => Some(4),
        INT64 | DOUBLE | UINT64 => Some(8),
        _ => None,
    }
}

fn raw_value(t: i32, b: &[u8]) -> f64 {
    use dtype::*;
    match t {
        UINT8 | BOOL => f64::from(b[0]),
        INT8 => f64::from(b[0] as i8),
        UINT16 => f64::from(u16::from_le_bytes([b[0], b[1]])),
        INT16 => f64::from(i16::from_le_bytes([b[0], b[1]])),
        t if is_small(t) => small_value(t, u32::from(b[0])),
        FLOAT16 | BFLOAT16 => {
            let code = u32::from(u16::from_le_bytes([b[0], b[1]]));
            narrow_float(t).expect("a 16-bit float").decode(code)
        }
        FLOAT => f64::from(f32::from_le_bytes(b.try_into().unwrap())),
        INT32 => f64::from(i32::from_le_bytes(b.try_into().unwrap())),
        UINT32 => f64::from(u32::from_le_bytes(b.try_into().unwrap())),
        INT64 => i64::from_le_bytes(b.try_into().unwrap()) as f64,
        UINT64 => u64::from_le_bytes(b.try_into().unwrap()) as f64,
        _ => f64::from_le_bytes(b.try_into().unwrap()),
    }
}

/// The refusal of a tensor type hwgen does not hold; `crate::onnx` recognizes it by its
/// start to give the fix.
pub const UNSUPPORTED_TYPE: &str = "tensors of this type are not supported";

fn unsupported(t: i32) -> String {
    format!("{UNSUPPORTED_TYPE}: {}", dtype::name(t))
}

pub(super) fn tensor(buf: &[u8], parent: &str) -> R<Tensor> {
    let mut t = Tensor::default();
    let (mut raw, mut external) = (None, false);
    let (mut ints, mut fl, mut db) = (vec![], vec![], vec![]);
    fields(buf, parent, |n, v| {
        let e = at(parent);
        match n {
            1 => wire::ints(v, &mut t.dims).map_err(&e)?,
            2 => t.data_type = int(v, parent)? as i32,
            4 => wire::floats(v, &mut fl).map_err(&e)?,
            5 | 7 | 11 => wire::ints(v, &mut ints).map_err(&e)?,
            8 => t.name = wire::text(v).map_err(&e)?,
            9 => raw = Some(wire::message(v).map_err(&e)?),
            10 => wire::doubles(v, &mut db).map_err(&e)?,
            14 => external = int(v, parent)? == 1,
            _ => {}
        }
        Ok(())
    })?;
    let path = format!("{parent} {:?}", t.name);
    let fail = |what: String| ProtoError {
        path: path.clone(),
        what,
    };
    if external {
        return Err(fail(
            "its data is stored outside the file (external data); save the model with every tensor inside it (onnx.save_model(..., save_as_external_data=False))".into(),
        ));
    }
    let count = t
        .dims
        .iter()
        .try_fold(1i64, |a, &d| (d >= 0).then(|| a.checked_mul(d)).flatten());
    if let Some(bits) = dtype::packed_bits(t.data_type) {
        // 8 / bits elements a byte, the first in the low bits: raw_data, or int32_data
        // holding one byte each.
        let bytes: Vec<u8> = match &raw {
            Some(r) => r.to_vec(),
            None => ints.iter().map(|&v| v as u8).collect(),
        };
        let (n, per_byte) = (count.unwrap_or(-1), 8 / bits as usize);
        let per = per_byte as i64;
        if n < 0 || bytes.len() as i64 != n / per + i64::from(n % per != 0) {
            return Err(fail(format!(
                "{} bytes for {n} {bits}-bit elements",
                bytes.len()
            )));
        }
        t.values = (0..n as usize)
            .map(|k| {
                let code = bytes[k / per_byte] >> (bits as usize * (k % per_byte));
                dtype::small_value(t.data_type, u32::from(code))
            })
            .collect();
    } else if let Some(raw) = raw {
        let w = raw_width(t.data_type).ok_or_else(|| fail(unsupported(t.data_type)))?;
        if raw.len() % w != 0 {
            return Err(fail(format!(
                "raw_data of {} bytes is not a whole number of {w}-byte elements",
                raw.len()
            )));
        }
        t.values = raw
            .chunks_exact(w)
            .map(|c| raw_value(t.data_type, c))
            .collect();
    } else if !fl.is_empty() {
        t.values = fl.into_iter().map(f64::from).collect();
    } else if !db.is_empty() {
        t.values = db;
    } else {
        t.values = ints
            .into_iter()
            .map(|v| match t.data_type {
                // int32_data carries int8/int16 values sign-extended, uint8/uint16 as is
                // and float16/bfloat16/float8 bit patterns; uint64_data carries uint64 bit
                // patterns.
                dtype::UINT64 => v as u64 as f64,
                t @ (dtype::FLOAT16 | dtype::BFLOAT16) => dtype::narrow_float(t)
                    .expect("a 16-bit float")
                    .decode(v as u16 as u32),
                t if dtype::is_small(t) => dtype::small_value(t, v as u32),
                _ => v as f64,
            })
            .collect();
    }
    if count != Some(t.values.len() as i64) {
        return Err(fail(format!(
            "dims {:?} do not match its {} values",
            t.dims,
            t.values.len()
        )));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TensorProtos written by hand: dims [2] (field 1), data_type (field 2), then float16
    /// 1.0 and -2.0 (0x3c00 and 0xc000) as int32_data bit patterns (field 5, packed
    /// varints 80 78 and 80 80 03), or bfloat16 1.0 and -2.0 (0x3f80, 0xc000) as
    /// little-endian raw_data (field 9).
    #[test]
    fn float16_and_bfloat16_tensors_decode() {
        let f16 = [0x08, 2, 0x10, 10, 0x2a, 5, 0x80, 0x78, 0x80, 0x80, 0x03];
        assert_eq!(tensor(&f16, "t").unwrap().values, vec![1.0, -2.0]);
        let bf16 = [0x08, 2, 0x10, 16, 0x4a, 4, 0x80, 0x3f, 0x00, 0xc0];
        assert_eq!(tensor(&bf16, "t").unwrap().values, vec![1.0, -2.0]);
    }

    /// By hand: dims [3] of int4 packed two a byte, low bits first, in raw_data e1 07:
    /// 1, 0xe = -2, 7 (as uint4 1, 14, 7); float8e4m3fn 1.0 and -2.0 (0x38, 0xc0) as
    /// int32_data codes 56 and 192 (varints 38, c0 01); a 4-bit tensor of the wrong byte
    /// count is refused.
    #[test]
    fn float8_and_int4_tensors_decode() {
        let int4 = [0x08, 3, 0x10, 22, 0x4a, 2, 0xe1, 0x07];
        assert_eq!(tensor(&int4, "t").unwrap().values, vec![1.0, -2.0, 7.0]);
        let uint4 = [0x08, 3, 0x10, 21, 0x4a, 2, 0xe1, 0x07];
        assert_eq!(tensor(&uint4, "t").unwrap().values, vec![1.0, 14.0, 7.0]);
        let f8 = [0x08, 2, 0x10, 17, 0x2a, 3, 0x38, 0xc0, 0x01];
        assert_eq!(tensor(&f8, "t").unwrap().values, vec![1.0, -2.0]);
        let short = [0x08, 3, 0x10, 22, 0x4a, 1, 0xe1];
        assert!(tensor(&short, "t").is_err());
    }

    /// ValueInfoProtos written by hand: name "s" (field 1) and a TypeProto (field 2) of
    /// sequence_type (field 4) of a float tensor_type (fields 1, 1: elem_type 1), and an
    /// optional_type (field 9) of that sequence.
    #[test]
    fn sequence_and_optional_types_decode() {
        let float = [0x0a, 0x02, 0x08, 0x01];
        let seq_type = [&[0x22, 0x06, 0x0a, 0x04][..], &float].concat();
        let vi = [&[0x0a, 0x01, b's', 0x12, 0x08][..], &seq_type].concat();
        let v = value_info(&vi, "v").unwrap();
        assert_eq!((v.kind, v.elem_type), (ValueKind::Sequence, dtype::FLOAT));
        let opt = [
            &[0x0a, 0x01, b's', 0x12, 0x0c, 0x4a, 0x0a, 0x0a, 0x08][..],
            &seq_type,
        ]
        .concat();
        let v = value_info(&opt, "v").unwrap();
        assert_eq!(v.kind, ValueKind::Optional(Box::new(ValueKind::Sequence)));
    }

    /// By hand: dims [5] of int2 packed four a byte, low bits first, raw_data 0xe4 0x02 =
    /// 00 01 10 11 | 10: 0, 1, -2, -1, -2 (as uint2 0, 1, 2, 3, 2); float4e2m1 [3] in
    /// raw_data 0xf1 0x03: 0.5, -6, 1.5; float8e4m3fnuz 0x40 0x80 0xff: 1, NaN, -240.
    #[test]
    fn int2_float4_and_fnuz_tensors_decode() {
        let int2 = [0x08, 5, 0x10, 26, 0x4a, 2, 0xe4, 0x02];
        assert_eq!(
            tensor(&int2, "t").unwrap().values,
            [0.0, 1.0, -2.0, -1.0, -2.0]
        );
        let uint2 = [0x08, 5, 0x10, 25, 0x4a, 2, 0xe4, 0x02];
        assert_eq!(
            tensor(&uint2, "t").unwrap().values,
            [0.0, 1.0, 2.0, 3.0, 2.0]
        );
        let f4 = [0x08, 3, 0x10, 23, 0x4a, 2, 0xf1, 0x03];
        assert_eq!(tensor(&f4, "t").unwrap().values, [0.5, -6.0, 1.5]);
        let fnuz = [0x08, 3, 0x10, 18, 0x4a, 3, 0x40, 0x80, 0xff];
        let v = tensor(&fnuz, "t").unwrap().values;
        assert!(v[0] == 1.0 && v[1].is_nan() && v[2] == -240.0);
        let long = [0x08, 3, 0x10, 26, 0x4a, 2, 0xe4, 0x02];
        assert!(tensor(&long, "t").is_err_and(|e| e.what.contains("2 bytes for 3 2-bit")));
    }
}
