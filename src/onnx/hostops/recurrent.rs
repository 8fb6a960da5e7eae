//! The operators of state-space and linear-attention models on the host, as ONNX's
//! reference computes them (float32): SwiGLU, CausalConvWithState and LinearAttention.

use super::{need, HostVal};
use crate::onnx::proto::{dtype, AttrValue, Node};

/// One of these operators; None for others.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<Vec<HostVal>, String>> {
    Some(match n.op_type.as_str() {
        "SwiGLU" => swiglu(n, x, ins).map(|v| vec![v]),
        "CausalConvWithState" => causal_conv(n, x, ins),
        "LinearAttention" => linear_attention(n, x, ins),
        _ => return None,
    })
}

fn float_only(n: &Node, v: &HostVal) -> Result<(), String> {
    match v.elem {
        dtype::FLOAT => Ok(()),
        e => Err(format!("{} of {} tensors", n.op_type, dtype::name(e))),
    }
}

/// x * sigmoid(alpha * x) in float32.
fn swish(x: f32, alpha: f32) -> f32 {
    x * (1.0 / (1.0 + (-(alpha * x)).exp()))
}

/// SwiGLU: `swish(a, alpha) * b`, a and b of one shape.
fn swiglu(n: &Node, a: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let b = need(ins, 1)?;
    float_only(n, a)?;
    if a.dims != b.dims || a.elem != b.elem {
        return Err(format!(
            "inputs of shapes {:?} and {:?}: SwiGLU takes two of one shape and type",
            a.dims, b.dims
        ));
    }
    let alpha = n.attr_float("alpha", 1.0);
    let data = a
        .data
        .iter()
        .zip(&b.data)
        .map(|(&p, &q)| f64::from(swish(p as f32, alpha) * q as f32))
        .collect();
    Ok(HostVal::float(a.dims.clone(), data))
}

/// CausalConvWithState: a depthwise 1-D convolution of `[batch, channels, length]` with
/// `[channels, 1, k]` weights over the input preceded by the past state (`k - 1` steps,
/// zeros when absent), optionally followed by SiLU; the present state is the last `k - 1`
/// steps of that padded input.
fn causal_conv(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<Vec<HostVal>, String> {
    let w = need(ins, 1)?;
    float_only(n, x)?;
    let (&[b, c, l], &[wc, 1, k]) = (&x.dims[..], &w.dims[..]) else {
        return Err(format!(
            "input {:?} and weight {:?}: not [batch, channels, length] and [channels, 1, k]",
            x.dims, w.dims
        ));
    };
    if wc != c || k == 0 {
        return Err(format!("a weight of shape {:?} for {c} channels", w.dims));
    }
    let act = match n.attr("activation") {
        None => false,
        Some(AttrValue::Text(a)) if a == "none" => false,
        Some(AttrValue::Text(a)) if a == "silu" || a == "swish" => true,
        Some(AttrValue::Text(a)) => return Err(format!("activation {a:?} (none, silu or swish)")),
        Some(_) => return Err("an activation that is not a string".into()),
    };
    let past = match ins.get(3).and_then(Option::as_ref) {
        Some(p) if p.dims == [b, c, k - 1] => Some(p),
        Some(p) => {
            return Err(format!(
                "a past state of shape {:?}, not [{b}, {c}, {}]",
                p.dims,
                k - 1
            ))
        }
        None => None,
    };
    let len = l + k - 1;
    let mut padded = vec![0.0; b * c * len];
    for bc in 0..b * c {
        if let Some(p) = past {
            padded[bc * len..][..k - 1].copy_from_slice(&p.data[bc * (k - 1)..][..k - 1]);
        }
        padded[bc * len + k - 1..][..l].copy_from_slice(&x.data[bc * l..][..l]);
    }
    let conv = Node::new("Conv", vec![("group", AttrValue::Int(c as i64))]);
    let input = HostVal::float(vec![b, c, len], padded.clone());
    let bias = ins.get(2).cloned().flatten();
    let mut y = super::eval(&conv, &[Some(input), Some(w.clone()), bias])?.remove(0);
    if act {
        y.data = y
            .data
            .iter()
            .map(|&v| f64::from(swish(v as f32, 1.0)))
            .collect();
    }
    let state = (0..b * c)
        .flat_map(|bc| padded[bc * len + l..(bc + 1) * len].to_vec())
        .collect();
    Ok(vec![y, HostVal::float(vec![b, c, k - 1], state)])
}

/// The sizes of a LinearAttention: steps, key/value heads, key and value head sizes.
struct Heads {
    t: usize,
    hkv: usize,
    dk: usize,
    dv: usize,
}

impl Heads {
    /// Element `d` of head `h` at step `i` of batch `bb` in a `[B, T, H * D]` tensor.
    fn at(&self, v: &HostVal, bb: usize, i: usize, h: usize, d: usize, size: usize) -> f32 {
        let width = v.dims[2];
        v.data[(bb * self.t + i) * width + h * size + d] as f32
    }
}

/// LinearAttention (`linear`, `gated`, `delta`, `gated_delta` update rules): per step, the
/// state `[d_k, d_v]` of each key/value head decays by `exp(decay)` (gated), the value is
/// corrected by `beta * (v - state^T k)` (delta), the state adds `k v^T`, and each query
/// head reads `scale * q^T state` of its group's head. Outputs `[B, T, H_q * d_v]` and the
/// final state `[B, H_kv, d_k, d_v]`, in float32.
fn linear_attention(
    n: &Node,
    q: &HostVal,
    ins: &[Option<HostVal>],
) -> Result<Vec<HostVal>, String> {
    let (k, v) = (need(ins, 1)?, need(ins, 2)?);
    let opt = |i: usize| ins.get(i).and_then(Option::as_ref);
    let (past, decay, beta) = (opt(3), opt(4), opt(5));
    for t in [q, k, v] {
        float_only(n, t)?;
        if t.dims.len() != 3 {
            return Err(format!(
                "a query, key or value of shape {:?}, not [B, T, H * D]",
                t.dims
            ));
        }
    }
    let rule = match n.attr("update_rule") {
        Some(AttrValue::Text(r)) => r.as_str(),
        _ => "gated_delta",
    };
    let (gated, delta) = match rule {
        "linear" => (false, false),
        "gated" => (true, false),
        "delta" => (false, true),
        "gated_delta" => (true, true),
        r => {
            return Err(format!(
                "update_rule {r:?} (linear, gated, delta or gated_delta)"
            ))
        }
    };
    if gated != decay.is_some() || delta != beta.is_some() {
        return Err(format!(
            "update rule {rule:?} with{} decay and with{} beta: gated rules take decay and delta rules beta, the others neither",
            if decay.is_some() { "" } else { "out" },
            if beta.is_some() { "" } else { "out" }
        ));
    }
    let (hq, hkv) = (n.attr_int("q_num_heads", 0), n.attr_int("kv_num_heads", 0));
    if hq <= 0 || hkv <= 0 || hq % hkv != 0 {
        return Err(format!(
            "q_num_heads {hq} and kv_num_heads {hkv}: positive, the first a multiple of the second"
        ));
    }
    let (hq, hkv) = (hq as usize, hkv as usize);
    let [b, t, qw] = q.dims[..] else {
        unreachable!()
    };
    if qw % hq != 0 || v.dims[2] % hkv != 0 || k.dims[..2] != [b, t] || v.dims[..2] != [b, t] {
        return Err(format!(
            "query {:?}, key {:?}, value {:?} for {hq} and {hkv} heads",
            q.dims, k.dims, v.dims
        ));
    }
    let s = Heads {
        t,
        hkv,
        dk: qw / hq,
        dv: v.dims[2] / hkv,
    };
    if k.dims[2] != hkv * s.dk {
        return Err(format!(
            "a key of shape {:?}: its last dimension is not {hkv} x {}",
            k.dims, s.dk
        ));
    }
    let mut state = vec![0f32; b * hkv * s.dk * s.dv];
    if let Some(p) = past {
        if p.dims != [b, hkv, s.dk, s.dv] {
            return Err(format!(
                "a past state of shape {:?}, not [{b}, {hkv}, {}, {}]",
                p.dims, s.dk, s.dv
            ));
        }
        state = p.data.iter().map(|&x| x as f32).collect();
    }
    let per_dim = |g: &HostVal, name: &str, ok: &[usize]| -> Result<usize, String> {
        match g.dims[..] {
            [gb, gt, w] if (gb, gt) == (b, t) && ok.contains(&w) => Ok(w),
            _ => Err(format!("{name} of shape {:?}", g.dims)),
        }
    };
    let dw = decay
        .map(|g| per_dim(g, "a decay", &[hkv, hkv * s.dk]))
        .transpose()?;
    let bw = beta.map(|g| per_dim(g, "a beta", &[hkv, 1])).transpose()?;
    let scale = match n.attr_float("scale", 0.0) {
        0.0 => 1.0 / (s.dk as f32).sqrt(),
        v => v,
    };
    let mut out = vec![0f64; b * t * hq * s.dv];
    for bb in 0..b {
        for i in 0..t {
            for h in 0..hkv {
                let st = &mut state[(bb * hkv + h) * s.dk * s.dv..][..s.dk * s.dv];
                step(&s, st, (bb, i, h), [k, v], [decay.zip(dw), beta.zip(bw)]);
                for g in 0..hq / hkv {
                    let qh = h * (hq / hkv) + g;
                    for m in 0..s.dv {
                        let r: f32 = (0..s.dk)
                            .map(|d| s.at(q, bb, i, qh, d, s.dk) * st[d * s.dv + m])
                            .sum();
                        out[(bb * t + i) * hq * s.dv + qh * s.dv + m] = f64::from(scale * r);
                    }
                }
            }
        }
    }
    Ok(vec![
        HostVal::float(vec![b, t, hq * s.dv], out),
        HostVal::float(
            vec![b, hkv, s.dk, s.dv],
            state.into_iter().map(f64::from).collect(),
        ),
    ])
}

/// One step of one key/value head's state `[d_k, d_v]`: decay, delta correction, `+ k v^T`.
fn step(
    s: &Heads,
    st: &mut [f32],
    (bb, i, h): (usize, usize, usize),
    [k, v]: [&HostVal; 2],
    [decay, beta]: [Option<(&HostVal, usize)>; 2],
) {
    let kv = |d: usize| s.at(k, bb, i, h, d, s.dk);
    if let Some((g, w)) = decay {
        for d in 0..s.dk {
            // One decay per head, or one per key dimension.
            let e = if w == s.hkv {
                s.at(g, bb, i, h, 0, 1)
            } else {
                s.at(g, bb, i, h, d, s.dk)
            }
            .exp();
            st[d * s.dv..][..s.dv].iter_mut().for_each(|x| *x *= e);
        }
    }
    let mut val: Vec<f32> = (0..s.dv).map(|m| s.at(v, bb, i, h, m, s.dv)).collect();
    if let Some((be, w)) = beta {
        let bv = s.at(be, bb, i, if w == 1 { 0 } else { h }, 0, 1);
        for (m, x) in val.iter_mut().enumerate() {
            let retrieved: f32 = (0..s.dk).map(|d| st[d * s.dv + m] * kv(d)).sum();
            *x = bv * (*x - retrieved);
        }
    }
    for d in 0..s.dk {
        for m in 0..s.dv {
            st[d * s.dv + m] += kv(d) * val[m];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(dims: &[usize], data: &[f64]) -> Option<HostVal> {
        Some(HostVal::float(dims.to_vec(), data.to_vec()))
    }

    /// By hand: SwiGLU(2, 3) = 2 sigmoid(2) 3 = 6 / (1 + e^-2). The causal convolution of
    /// [1, 2, 3] by [1, 10] (k = 2) over [0, 1, 2, 3] is [10, 21, 32], state [3]; after a
    /// past state [5], [15, 21, 32].
    #[test]
    fn swiglu_and_causal_conv_by_hand() {
        let s = swiglu(
            &Node::new("SwiGLU", vec![]),
            &f(&[1], &[2.0]).unwrap(),
            &[None, f(&[1], &[3.0])],
        )
        .unwrap();
        assert!((s.data[0] - 6.0 / (1.0 + (-2f64).exp())).abs() < 1e-6);
        let n = Node::new("CausalConvWithState", vec![]);
        let x = f(&[1, 1, 3], &[1.0, 2.0, 3.0]);
        let w = f(&[1, 1, 2], &[1.0, 10.0]);
        let r = causal_conv(&n, x.as_ref().unwrap(), &[x.clone(), w.clone()]).unwrap();
        assert_eq!(
            (r[0].data.clone(), r[1].data.clone()),
            (vec![10.0, 21.0, 32.0], vec![3.0])
        );
        let past = f(&[1, 1, 1], &[5.0]);
        let r = causal_conv(&n, x.as_ref().unwrap(), &[x.clone(), w, None, past]).unwrap();
        assert_eq!(r[0].data, vec![15.0, 21.0, 32.0]);
    }

    /// By hand, one head of sizes 1, q = [1, 1], k = [2, 3], v = [4, 5], scale 1. linear:
    /// state 8, then 8 + 15 = 23. gated with decay ln(1/2): 8, then 4 + 15 = 19. delta with
    /// beta 1: 8; then v = 5 - 8 * 3 = -19 and the state 8 + 3 * -19 = -49.
    #[test]
    fn linear_attention_rules_by_hand() {
        let run = |rule: &str, decay: Option<HostVal>, beta: Option<HostVal>| {
            let n = Node::new(
                "LinearAttention",
                vec![
                    ("update_rule", AttrValue::Text(rule.into())),
                    ("q_num_heads", AttrValue::Int(1)),
                    ("kv_num_heads", AttrValue::Int(1)),
                    ("scale", AttrValue::Float(1.0)),
                ],
            );
            let q = f(&[1, 2, 1], &[1.0, 1.0]);
            let ins = [
                q.clone(),
                f(&[1, 2, 1], &[2.0, 3.0]),
                f(&[1, 2, 1], &[4.0, 5.0]),
                None,
                decay,
                beta,
            ];
            let r = linear_attention(&n, q.as_ref().unwrap(), &ins).unwrap();
            (r[0].data.clone(), r[1].data.clone())
        };
        assert_eq!(run("linear", None, None), (vec![8.0, 23.0], vec![23.0]));
        let half = f(&[1, 2, 1], &[0.5f64.ln(); 2]);
        assert_eq!(run("gated", half, None).0, vec![8.0, 19.0]);
        assert_eq!(
            run("delta", None, f(&[1, 2, 1], &[1.0, 1.0])).0,
            vec![8.0, -49.0]
        );
        let n = Node::new(
            "LinearAttention",
            vec![("update_rule", AttrValue::Text("linear".into()))],
        );
        let q = f(&[1, 2, 1], &[1.0, 1.0]);
        let e = linear_attention(&n, q.as_ref().unwrap(), &[q.clone(), q.clone(), q.clone()]);
        assert!(e.unwrap_err().contains("q_num_heads 0"));
    }
}
