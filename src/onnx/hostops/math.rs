//! More of ONNX's elementwise arithmetic on the host: the basic one-input operators
//! (Relu, Abs, Sign, Exp, Clip, ...), the trigonometric and smooth activation functions, Round, Pow, Mod and BitShift with numpy broadcasting, and the
//! norm-like reductions, as ONNX's reference implementation computes them (float32 elementwise,
//! integers exactly).

use super::{nn, pairs, quant, wrap, HostVal};
use crate::onnx::proto::{dtype, Node};

/// erf(x) to within 1.2e-7 (Numerical Recipes' erfc by a Chebyshev fit of exp).
fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    if x >= 0.0 {
        1.0 - erfc
    } else {
        erfc - 1.0
    }
}

/// The one-input elementwise operators (Clip's bounds are inputs too); None for others.
pub(super) fn basic_unary(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    // In float32 for float tensors (exact for integers).
    let f = |g: &dyn Fn(f64) -> f64| {
        let data = x.data.iter().map(|&v| g(v)).collect();
        Ok(match x.elem {
            dtype::FLOAT => HostVal::float(x.dims.clone(), data),
            _ => HostVal {
                dims: x.dims.clone(),
                data,
                elem: x.elem,
            },
        })
    };
    // float64: the functions in double precision.
    if x.elem == dtype::DOUBLE {
        let g: Option<fn(f64) -> f64> = match n.op_type.as_str() {
            "Exp" => Some(f64::exp),
            "Log" => Some(f64::ln),
            "Sqrt" => Some(f64::sqrt),
            "Reciprocal" => Some(|v| 1.0 / v),
            _ => None,
        };
        if let Some(g) = g {
            return Some(f(&g));
        }
    }
    Some(match n.op_type.as_str() {
        "Identity" => Ok(x.clone()),
        "Relu" => f(&|v| v.max(0.0)),
        "Sigmoid" => f(&|v| f64::from(1.0 / (1.0 + (-(v as f32)).exp()))),
        "Tanh" => f(&|v| f64::from((v as f32).tanh())),
        "LeakyRelu" => {
            let a = n.attr_float("alpha", 0.01);
            f(&|v| if v < 0.0 { f64::from(v as f32 * a) } else { v })
        }
        "Clip" => {
            let bound = |i: usize, d: f64| {
                ins.get(i)
                    .and_then(|v| v.as_ref())
                    .and_then(|v| v.data.first().copied())
                    .unwrap_or(d)
            };
            let (lo, hi) = (bound(1, f64::MIN), bound(2, f64::MAX));
            // (A minimum above the maximum makes every value the maximum.)
            f(&|v| v.max(lo).min(hi))
        }
        "Abs" => f(&f64::abs),
        "Sign" => f(&|v| {
            if v == 0.0 || v.is_nan() {
                v
            } else {
                v.signum()
            }
        }),
        "Neg" => f(&|v| -v),
        "Floor" => f(&f64::floor),
        "Ceil" => f(&f64::ceil),
        "Exp" => f(&|v| f64::from((v as f32).exp())),
        "Log" => f(&|v| f64::from((v as f32).ln())),
        "Sqrt" => f(&|v| f64::from((v as f32).sqrt())),
        "Reciprocal" => f(&|v| f64::from(1.0 / v as f32)),
        "Elu" => {
            let a = n.attr_float("alpha", 1.0);
            f(&|v| {
                if v < 0.0 {
                    f64::from(a * ((v as f32).exp() - 1.0))
                } else {
                    v
                }
            })
        }
        "HardSigmoid" => {
            let (a, b) = (n.attr_float("alpha", 0.2), n.attr_float("beta", 0.5));
            f(&|v| f64::from((a * v as f32 + b).clamp(0.0, 1.0)))
        }
        "HardSwish" => f(&|v| f64::from(v as f32 * (v as f32 / 6.0 + 0.5).clamp(0.0, 1.0))),
        _ => return None,
    })
}

/// The float-only one-input operators this module adds, in float32 (the function of the
/// element, rounded once); None for other operators.
pub(super) fn unary(n: &Node, x: &HostVal) -> Option<Result<HostVal, String>> {
    let alpha = |d: f32| f64::from(n.attr_float("alpha", d));
    let g: Box<dyn Fn(f64) -> f64> = match n.op_type.as_str() {
        "Sin" => Box::new(f64::sin),
        "Cos" => Box::new(f64::cos),
        "Tan" => Box::new(f64::tan),
        "Asin" => Box::new(f64::asin),
        "Acos" => Box::new(f64::acos),
        "Atan" => Box::new(f64::atan),
        "Sinh" => Box::new(f64::sinh),
        "Cosh" => Box::new(f64::cosh),
        "Asinh" => Box::new(f64::asinh),
        "Acosh" => Box::new(f64::acosh),
        "Atanh" => Box::new(f64::atanh),
        "Erf" => Box::new(erf),
        "Softplus" => Box::new(|v: f64| v.exp().ln_1p()),
        "Softsign" => Box::new(|v: f64| v / (1.0 + v.abs())),
        "Round" => Box::new(f64::round_ties_even),
        "Mish" => Box::new(|v: f64| v * v.exp().ln_1p().tanh()),
        "ThresholdedRelu" => {
            let a = alpha(1.0);
            Box::new(move |v| if v > a { v } else { 0.0 })
        }
        "Celu" => {
            let a = alpha(1.0);
            Box::new(move |v| v.max(0.0) + (a * ((v / a).exp() - 1.0)).min(0.0))
        }
        "Selu" => {
            let a = alpha(1.673_263_2);
            let gamma = f64::from(n.attr_float("gamma", 1.050_701));
            Box::new(move |v| gamma * if v > 0.0 { v } else { a * (v.exp() - 1.0) })
        }
        "Swish" => {
            let a = alpha(1.0);
            Box::new(move |v| v / (1.0 + (-a * v).exp()))
        }
        "Gelu" => {
            let tanh = matches!(n.attr("approximate"), Some(crate::onnx::proto::AttrValue::Text(s)) if s == "tanh");
            Box::new(move |v: f64| match tanh {
                true => {
                    let k = (2.0 / std::f64::consts::PI).sqrt();
                    0.5 * v * (1.0 + (k * (v + 0.044_715 * v * v * v)).tanh())
                }
                false => 0.5 * v * (1.0 + erf(v / std::f64::consts::SQRT_2)),
            })
        }
        _ => return None,
    };
    if x.elem != dtype::FLOAT {
        return Some(Err(format!(
            "{} of {} tensors (float32 only)",
            n.op_type,
            dtype::name(x.elem)
        )));
    }
    let data = x.data.iter().map(|&v| g(v)).collect();
    Some(Ok(HostVal::float(x.dims.clone(), data)))
}

/// Pow (the base's type: float32, or an integer result, exact for integer exponents and
/// truncated toward zero for float ones, as numpy's astype) and Mod (the remainder with the
/// sign of the divisor, numpy's mod, or with fmod = 1 of the dividend, C's fmod; exact for
/// integers, in float32 for floats), with broadcasting; None for other operators.
pub(super) fn binary(n: &Node, x: &HostVal, y: &HostVal) -> Option<Result<HostVal, String>> {
    match n.op_type.as_str() {
        "Pow" | "Mod" => Some(pow_or_mod(n, x, y)),
        "BitShift" => Some(bit_shift(n, x, y)),
        _ => None,
    }
}

/// BitShift (direction LEFT or RIGHT) of integers, broadcast, as ONNX's reference does
/// it: a left shift wraps around the type (two's complement for signed ones), a right
/// shift of a signed integer is arithmetic; a shift below 0 or of the type's width or more
/// gives 0 (right: -1 for a negative signed value).
fn bit_shift(n: &Node, x: &HostVal, y: &HostVal) -> Result<HostVal, String> {
    let bits: i128 = match x.elem {
        dtype::UINT8 | dtype::INT8 => 8,
        dtype::UINT16 | dtype::INT16 => 16,
        dtype::UINT32 | dtype::INT32 => 32,
        dtype::UINT64 | dtype::INT64 => 64,
        e => {
            return Err(format!(
                "BitShift of {} tensors (integers only)",
                dtype::name(e)
            ))
        }
    };
    if y.elem != x.elem {
        return Err("BitShift of two tensors of one type".into());
    }
    let left = match n.attr("direction") {
        Some(crate::onnx::proto::AttrValue::Text(d)) if d == "LEFT" => true,
        Some(crate::onnx::proto::AttrValue::Text(d)) if d == "RIGHT" => false,
        _ => return Err("BitShift needs direction LEFT or RIGHT".into()),
    };
    let (dims, ps) = pairs(x, y)?;
    let data = ps
        .into_iter()
        .map(|(a, s)| {
            let (a, s) = (a as i128, s as i128);
            match (left, (0..bits).contains(&s)) {
                (true, true) => wrap(a << s, x.elem),
                (false, true) => (a >> s) as f64,
                (false, false) if a < 0 => -1.0,
                _ => 0.0,
            }
        })
        .collect();
    Ok(HostVal {
        dims,
        data,
        elem: x.elem,
    })
}

fn pow_or_mod(n: &Node, x: &HostVal, y: &HostVal) -> Result<HostVal, String> {
    let (dims, ps) = pairs(x, y)?;
    let float = matches!(x.elem, dtype::FLOAT | dtype::DOUBLE);
    let double = x.elem == dtype::DOUBLE;
    if !float && quant::int_range(x.elem).is_none() {
        return Err(format!("{} of {} tensors", n.op_type, dtype::name(x.elem)));
    }
    let fmod = n.attr_int("fmod", 0) != 0;
    if n.op_type == "Mod" && x.elem != y.elem {
        return Err("Mod of two tensors of one type".into());
    }
    let int_exp = !matches!(y.elem, dtype::FLOAT | dtype::DOUBLE);
    let mut data = Vec::with_capacity(ps.len());
    for (a, b) in ps {
        let v = match (n.op_type.as_str(), float) {
            ("Pow", true) if double => a.powf(b),
            ("Pow", true) => f64::from((a as f32).powf(b as f32)),
            ("Pow", false) if int_exp => {
                let e =
                    u32::try_from(b as i64).map_err(|_| format!("an integer to the power {b}"))?;
                wrap((a as i128).wrapping_pow(e), x.elem)
            }
            ("Pow", false) => wrap(a.powf(b).trunc() as i128, x.elem),
            (_, true) => {
                // In the element's precision: float32 rounds its operands first.
                let (a, b) = match double {
                    true => (a, b),
                    false => (f64::from(a as f32), f64::from(b as f32)),
                };
                let r = a % b;
                // numpy's mod: a zero remainder takes the divisor's sign too.
                let m = match (fmod, r == 0.0) {
                    (true, _) => r,
                    (false, true) => 0f64.copysign(b),
                    (false, false) if (r < 0.0) != (b < 0.0) => r + b,
                    (false, false) => r,
                };
                match double {
                    true => m,
                    false => f64::from(m as f32),
                }
            }
            (_, false) if b == 0.0 => return Err("an integer Mod by zero".into()),
            (_, false) => {
                let (a, b) = (a as i128, b as i128);
                let r = a % b;
                let r = if !fmod && r != 0 && (r < 0) != (b < 0) {
                    r + b
                } else {
                    r
                };
                wrap(r, x.elem)
            }
        };
        data.push(v);
    }
    Ok(HostVal {
        dims,
        data,
        elem: x.elem,
    })
}

/// ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum and ReduceLogSumExp: ReduceSum of
/// the squares, magnitudes or exponentials, then the root or logarithm; None for other
/// operators.
pub(super) fn reduce(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    type Map = fn(f64) -> f64;
    let (pre, post): (Map, Map) = match n.op_type.as_str() {
        "ReduceSumSquare" => (|v| v * v, |s| s),
        "ReduceL1" => (f64::abs, |s| s),
        "ReduceL2" => (|v| v * v, f64::sqrt),
        "ReduceLogSum" => (|v| v, f64::ln),
        "ReduceLogSumExp" => (f64::exp, f64::ln),
        _ => return None,
    };
    let mapped = HostVal {
        data: x.data.iter().map(|&v| pre(v)).collect(),
        ..x.clone()
    };
    let sum = Node {
        op_type: "ReduceSum".into(),
        ..n.clone()
    };
    Some(nn::reduce(&sum, &mapped, ins).map(|mut r| {
        r.data.iter_mut().for_each(|v| *v = post(*v));
        match r.elem {
            dtype::FLOAT => HostVal::float(r.dims, r.data),
            _ => r,
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// erf at 0, 0.5, 1, 2 and -1 (tables: 0.5204998778, 0.8427007929, 0.9953222650).
    #[test]
    fn erf_matches_its_table() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (-1.0, -0.842_700_792_9),
        ] {
            assert!((erf(x) - want).abs() < 2e-7, "erf({x}) = {}", erf(x));
        }
    }

    /// Mod by hand: 7 mod -3 = -2 (the divisor's sign), 7 fmod -3 = 1 (the dividend's);
    /// -7 mod 3 = 2, -7 fmod 3 = -1; 2^10 = 1024 and int8 2^7 wraps to -128.
    #[test]
    fn mod_and_pow_by_hand() {
        let t = |data: Vec<f64>, elem| HostVal {
            dims: vec![data.len()],
            data,
            elem,
        };
        let node = |op: &str, fmod: i64| Node {
            op_type: op.into(),
            attributes: vec![crate::onnx::proto::Attribute {
                name: "fmod".into(),
                value: crate::onnx::proto::AttrValue::Int(fmod),
            }],
            ..Node::default()
        };
        let (a, b) = (
            t(vec![7.0, -7.0], dtype::INT32),
            t(vec![-3.0, 3.0], dtype::INT32),
        );
        let m = pow_or_mod(&node("Mod", 0), &a, &b).unwrap();
        assert_eq!(m.data, vec![-2.0, 2.0]);
        let f = pow_or_mod(&node("Mod", 1), &a, &b).unwrap();
        assert_eq!(f.data, vec![1.0, -1.0]);
        let p = pow_or_mod(
            &node("Pow", 0),
            &t(vec![2.0, 2.0], dtype::INT8),
            &t(vec![6.0, 7.0], dtype::INT64),
        )
        .unwrap();
        assert_eq!(p.data, vec![64.0, -128.0]);
        assert!(pow_or_mod(&node("Mod", 0), &a, &t(vec![0.0, 1.0], dtype::INT32)).is_err());
    }
}
