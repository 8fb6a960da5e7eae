//! The host's quantization operators, as ONNX's reference implementation computes them:
//! QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, the integer products
//! (ConvInteger, MatMulInteger: exact int32) and the quantized ones (QLinearConv,
//! QLinearMatMul: the exact integer sum times the float32 multiplier `x_scale * w_scale /
//! y_scale`, in f64, plus the zero point, rounded half to even and saturated), and
//! onnxruntime's QLinearAdd and QLinearSoftmax (dequantize, the float operator,
//! quantize).

use super::nn::matmul_values;
use super::window::conv_values;
use super::{eval, need, HostVal};
use crate::onnx::proto::{dtype, Attribute, Node};

/// The range of an integer element type.
pub fn int_range(elem: i32) -> Option<(f64, f64)> {
    Some(match elem {
        dtype::UINT8 => (0.0, 255.0),
        dtype::INT8 => (-128.0, 127.0),
        dtype::UINT16 => (0.0, 65535.0),
        dtype::INT16 => (-32768.0, 32767.0),
        dtype::INT32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
        dtype::UINT32 => (0.0, f64::from(u32::MAX)),
        dtype::INT64 => (i64::MIN as f64, i64::MAX as f64),
        dtype::UINT64 => (0.0, u64::MAX as f64),
        _ => return None,
    })
}

/// QuantizeLinear of one value: `saturate(round_half_even(v / scale) + zp)` to an integer
/// type, the division in float32 (the host's and `hwgen run`'s input quantization alike).
pub fn quantize(v: f64, scale: f64, zp: f64, elem: i32) -> f64 {
    quantize_in(
        v,
        scale,
        zp,
        int_range(elem).unwrap_or((f64::MIN, f64::MAX)),
    )
}

/// [`quantize`] into the range `lo..=hi`.
fn quantize_in(v: f64, scale: f64, zp: f64, (lo, hi): (f64, f64)) -> f64 {
    let r = f64::from((v as f32 / scale as f32).round_ties_even());
    if r.is_nan() {
        return zp.clamp(lo, hi);
    }
    (r + zp).clamp(lo, hi)
}

/// The per-tensor or per-axis parameter of element `k` of a tensor of `dims`.
fn param(p: &HostVal, dims: &[usize], axis: usize, k: usize) -> f64 {
    if p.data.len() <= 1 {
        return p.data.first().copied().unwrap_or(0.0);
    }
    let inner: usize = dims[axis + 1..].iter().product();
    p.data[k / inner % dims[axis]]
}

/// The parameter of element `k` of a tensor of `dims` under blocked quantization: the
/// parameter tensor has the tensor's shape but `ceil(dims[axis] / block)` along `axis`,
/// one value per `block` consecutive elements there.
fn block_param(p: &HostVal, dims: &[usize], axis: usize, block: usize, k: usize) -> f64 {
    let (st, pst) = (super::shape::strides(dims), super::shape::strides(&p.dims));
    let at: usize = (0..dims.len())
        .map(|a| {
            let i = k / st[a] % dims[a];
            (if a == axis { i / block } else { i }) * pst[a]
        })
        .sum();
    p.data[at]
}

/// The parameter of element `k` as the layout `(axis, block)` from [`param_axis`] says:
/// per tensor or per axis (block 0), or per block.
fn qparam(p: &HostVal, dims: &[usize], (axis, block): (usize, usize), k: usize) -> f64 {
    match block {
        0 => param(p, dims, axis, k),
        b => block_param(p, dims, axis, b, k),
    }
}

/// How quantization parameters run: `(axis, 0)` per tensor (one value) or along the
/// node's `axis` (default 1; the parameters' length must match), or with `block_size`
/// B, `(axis, B)`: per block of B elements along the axis (the parameters of the tensor's
/// shape but `ceil(dims[axis] / B)` there).
fn param_axis(n: &Node, dims: &[usize], ps: &[&HostVal]) -> Result<(usize, usize), String> {
    let block = n.attr_int("block_size", 0);
    if block > 0 {
        let a = super::shape::axis_of(n.attr_int("axis", 1), dims.len())?;
        let b = block as usize;
        for p in ps {
            let fits = p.dims.len() == dims.len()
                && (0..dims.len())
                    .all(|i| p.dims[i] == if i == a { dims[a].div_ceil(b) } else { dims[i] });
            if !fits {
                return Err(format!(
                    "a parameter of shape {:?} for blocks of {b} along axis {a} of {dims:?}",
                    p.dims
                ));
            }
        }
        return Ok((a, b));
    }
    if block < 0 {
        return Err(format!("block_size {block}"));
    }
    if ps.iter().all(|p| p.data.len() == 1) {
        return Ok((0, 0));
    }
    let rank = dims.len() as i64;
    let a = n.attr_int("axis", 1);
    let a = if a < 0 { a + rank } else { a };
    let axis = usize::try_from(a)
        .ok()
        .filter(|&a| a < dims.len())
        .ok_or_else(|| format!("axis {a} of a rank-{rank} tensor"))?;
    for p in ps {
        if p.data.is_empty() || (p.data.len() > 1 && p.data.len() != dims[axis]) {
            return Err(format!(
                "a parameter of {} values for axis {axis} of {dims:?}",
                p.data.len()
            ));
        }
    }
    Ok((axis, 0))
}

/// `(x - zero_point) * scale` in float32.
fn dequantize(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let s = need(ins, 1)?;
    let z = ins.get(2).and_then(|v| v.as_ref());
    let ps: Vec<&HostVal> = std::iter::once(s).chain(z).collect();
    let layout = param_axis(n, &x.dims, &ps)?;
    let data = (0..x.data.len())
        .map(|k| {
            let zp = z.map_or(0.0, |z| qparam(z, &x.dims, layout, k));
            f64::from((x.data[k] - zp) as f32 * qparam(s, &x.dims, layout, k) as f32)
        })
        .collect();
    Ok(HostVal::float(x.dims.clone(), data))
}

fn quantize_linear(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let s = need(ins, 1)?;
    let z = ins.get(2).and_then(|v| v.as_ref());
    let elem = match (z, n.attr_int("output_dtype", 0)) {
        (Some(z), _) => z.elem,
        (None, 0) => dtype::UINT8,
        (None, t) => t as i32,
    };
    // int4, uint4, int2 and uint2 as the 8-bit types; float8 and float4 saturating (or
    // not) `x / scale`, as ONNX's reference computes it.
    let range =
        int_range(elem).or(dtype::small_int(elem).map(|i| (i.min() as f64, i.max() as f64)));
    let f8 = dtype::mini_float(elem);
    if range.is_none() && f8.is_none() {
        return Err(format!("quantizes to {}", dtype::name(elem)));
    }
    let saturate = n.attr_int("saturate", 1) != 0;
    let ps: Vec<&HostVal> = std::iter::once(s).chain(z).collect();
    let layout = param_axis(n, &x.dims, &ps)?;
    let data = (0..x.data.len())
        .map(|k| {
            let zp = z.map_or(0.0, |z| qparam(z, &x.dims, layout, k));
            let scale = qparam(s, &x.dims, layout, k);
            match (f8, range) {
                (Some(f), _) => {
                    let mut v = x.data[k] as f32 / scale as f32;
                    // float4e2m1: ONNX's reference adds the zero point (0: it only makes
                    // -0 +0); float8: it does not.
                    if f.specials == crate::numeric::Specials::Finite && z.is_some() {
                        v += zp as f32;
                    }
                    super::shape::to_float8(f64::from(v), f, saturate)
                }
                (None, r) => quantize_in(x.data[k], scale, zp, r.expect("an integer range")),
            }
        })
        .collect();
    Ok(HostVal {
        dims: x.dims.clone(),
        data,
        elem,
    })
}

/// uint8 quantization with the scale and zero point of the tensor's range (and 0).
fn dynamic(x: &HostVal) -> Vec<HostVal> {
    let max = x.data.iter().fold(0f32, |m, &v| m.max(v as f32));
    let min = x.data.iter().fold(0f32, |m, &v| m.min(v as f32));
    let scale = if max == min { 1.0 } else { max - min } / 255f32;
    let zp = (0f32 - min / scale).clamp(0.0, 255.0).round_ties_even();
    let data = x
        .data
        .iter()
        .map(|&v| quantize(v, f64::from(scale), f64::from(zp), dtype::UINT8))
        .collect();
    let scalar = |v: f32, elem| HostVal {
        dims: vec![],
        data: vec![f64::from(v)],
        elem,
    };
    vec![
        HostVal {
            dims: x.dims.clone(),
            data,
            elem: dtype::UINT8,
        },
        scalar(scale, dtype::FLOAT),
        scalar(zp, dtype::UINT8),
    ]
}

/// `v - zero_point`, the zero point one value or one per slice along `axis` of `v`.
fn centred(v: &HostVal, z: Option<&HostVal>, axis: usize) -> Result<HostVal, String> {
    let Some(z) = z else { return Ok(v.clone()) };
    if z.data.len() > 1 && v.dims.get(axis) != Some(&z.data.len()) {
        return Err(format!(
            "a zero point of {} values for a tensor of shape {:?}",
            z.data.len(),
            v.dims
        ));
    }
    let data = (0..v.data.len())
        .map(|k| v.data[k] - param(z, &v.dims, axis, k))
        .collect();
    Ok(HostVal { data, ..v.clone() })
}

fn int32(dims: Vec<usize>, data: Vec<f64>) -> HostVal {
    HostVal {
        dims,
        data,
        elem: dtype::INT32,
    }
}

/// Integer sums `acc` (along `axis` of `dims`, channel c) requantized: `acc * (float32
/// a_scale * b_scale[c] / y_scale) + y_zero_point`, rounded half to even, saturated to
/// the zero point's type (or `fallback`'s).
fn requantize(
    (dims, acc): (Vec<usize>, Vec<f64>),
    axis: usize,
    scales: [&HostVal; 3],
    yz: Option<&HostVal>,
    fallback: i32,
) -> Result<HostVal, String> {
    let [a, b, y] = scales;
    if a.data.len() != 1 || y.data.len() != 1 {
        return Err("per-axis activation scales".into());
    }
    if b.data.len() > 1 && dims.get(axis) != Some(&b.data.len()) {
        return Err(format!("{} weight scales for {dims:?}", b.data.len()));
    }
    let elem = yz.map_or(fallback, |z| z.elem);
    let (lo, hi) = int_range(elem).ok_or("an output that is not an integer")?;
    let data = (0..acc.len())
        .map(|k| {
            let m = a.data[0] as f32 * param(b, &dims, axis, k) as f32 / y.data[0] as f32;
            let zp = yz.and_then(|z| z.data.first().copied()).unwrap_or(0.0);
            let r = acc[k] * f64::from(m) + zp;
            r.round_ties_even().clamp(lo, hi)
        })
        .collect();
    Ok(HostVal { dims, data, elem })
}

/// The quantized and integer operators; None for any other.
pub fn eval_quant(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<Vec<HostVal>, String>> {
    let opt = |i: usize| ins.get(i).and_then(|v| v.as_ref());
    let r = match n.op_type.as_str() {
        "DequantizeLinear" => dequantize(n, x, ins).map(|v| vec![v]),
        "QuantizeLinear" => quantize_linear(n, x, ins).map(|v| vec![v]),
        "DynamicQuantizeLinear" => Ok(dynamic(x)),
        "ConvInteger" => (|| {
            let w = centred(need(ins, 1)?, opt(3), 0)?;
            let (dims, acc) = conv_values(n, &centred(x, opt(2), 99)?, &w, None)?;
            Ok(vec![int32(dims, acc)])
        })(),
        "MatMulInteger" => (|| {
            let b = need(ins, 1)?;
            let a = centred(x, opt(2), x.dims.len().saturating_sub(2))?;
            let b = centred(b, opt(3), b.dims.len().saturating_sub(1))?;
            let (dims, acc) = matmul_values(&a, &b)?;
            Ok(vec![int32(dims, acc)])
        })(),
        "QLinearConv" => (|| {
            let w = centred(need(ins, 3)?, opt(5), 0)?;
            let acc = conv_values(n, &centred(x, opt(2), 99)?, &w, opt(8))?;
            let scales = [need(ins, 1)?, need(ins, 4)?, need(ins, 6)?];
            Ok(vec![requantize(acc, 1, scales, opt(7), x.elem)?])
        })(),
        "QLinearMatMul" => (|| {
            let b = need(ins, 3)?;
            let a = centred(x, opt(2), 99)?;
            let b = centred(b, opt(5), b.dims.len().saturating_sub(1))?;
            let acc = matmul_values(&a, &b)?;
            let axis = acc.0.len().saturating_sub(1);
            let scales = [need(ins, 1)?, need(ins, 4)?, need(ins, 6)?];
            Ok(vec![requantize(acc, axis, scales, opt(7), x.elem)?])
        })(),
        "QLinearAdd" => (|| {
            let deq = |i: usize| {
                let v = need(ins, i)?;
                dequantize(
                    &Node::default(),
                    v,
                    &[
                        None,
                        ins.get(i + 1).cloned().flatten(),
                        ins.get(i + 2).cloned().flatten(),
                    ],
                )
            };
            let (a, b) = (deq(0)?, deq(3)?);
            let sum = eval(&op("Add", vec![]), &[Some(a), Some(b)])?;
            let q = [
                Some(sum[0].clone()),
                ins.get(6).cloned().flatten(),
                ins.get(7).cloned().flatten(),
            ];
            quantize_linear(&Node::default(), &sum[0], &q).map(|v| vec![v])
        })(),
        // onnxruntime's quantized softmax: dequantize, softmax in float, quantize.
        "QLinearSoftmax" => (|| {
            let f = dequantize(&Node::default(), x, ins)?;
            let attrs = n
                .attributes
                .iter()
                .filter(|a| a.name == "axis")
                .cloned()
                .collect();
            let y = eval(&op("Softmax", attrs), &[Some(f)])?;
            let q = [
                Some(y[0].clone()),
                ins.get(3).cloned().flatten(),
                ins.get(4).cloned().flatten(),
            ];
            quantize_linear(&Node::default(), &y[0], &q).map(|v| vec![v])
        })(),
        _ => return None,
    };
    Some(r)
}

fn op(op_type: &str, attributes: Vec<Attribute>) -> Node {
    Node {
        op_type: op_type.into(),
        attributes,
        ..Node::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::proto::AttrValue;

    /// By hand, blocks of 2 along axis 1 of [[1, 2, 3, 4]] with scales [[1, 2]]: 1/1, 2/1,
    /// 3/2 = 1.5 (half to even: 2), 4/2: [1, 2, 2, 2] (uint8), back [1, 2, 4, 4]; scales
    /// of the wrong shape are refused.
    #[test]
    fn blocked_quantization_by_hand() {
        let n = Node {
            attributes: vec![
                Attribute {
                    name: "axis".into(),
                    value: AttrValue::Int(1),
                },
                Attribute {
                    name: "block_size".into(),
                    value: AttrValue::Int(2),
                },
            ],
            ..Node::default()
        };
        let x = HostVal::float(vec![1, 4], vec![1.0, 2.0, 3.0, 4.0]);
        let s = Some(HostVal::float(vec![1, 2], vec![1.0, 2.0]));
        let q = quantize_linear(&n, &x, &[None, s.clone()]).unwrap();
        assert_eq!(
            (q.data.clone(), q.elem),
            (vec![1.0, 2.0, 2.0, 2.0], dtype::UINT8)
        );
        assert_eq!(
            dequantize(&n, &q, &[None, s]).unwrap().data,
            vec![1.0, 2.0, 4.0, 4.0]
        );
        let wrong = Some(HostVal::float(vec![1, 3], vec![1.0; 3]));
        assert!(quantize_linear(&n, &x, &[None, wrong]).is_err());
    }
}
