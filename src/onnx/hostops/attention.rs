//! ONNX's Attention (opsets 23 to 25) on the host, in float32 as ONNX's reference computes
//! it: 3-D inputs split into heads (q_num_heads, kv_num_heads) or 4-D ones, the past key
//! and value concatenated in front (present_key, present_value), Q and K each scaled by
//! the square root of `scale` (default 1/sqrt(head size)), softcap, the boolean or additive
//! mask (padded to the keys with masked positions), is_causal aligned to the bottom right
//! (after the past keys), the sliding window, nonpad_kv_seqlen, grouped-query heads (each
//! key/value head serving consecutive query heads), a softmax whose fully masked rows are
//! zero, and qk_matmul_output in its four modes.

use super::{need, HostVal};
use crate::onnx::proto::{dtype, Node};

/// Attention or RotaryEmbedding; None for other operators.
pub(super) fn eval(
    n: &Node,
    q: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<Vec<HostVal>, String>> {
    match n.op_type.as_str() {
        "Attention" => Some(run(n, q, ins)),
        "RotaryEmbedding" => Some(rotary(n, q, ins).map(|v| vec![v])),
        "FlexAttention" => Some(flex(n, q, ins, &|_, v| Ok(v)).map(|v| vec![v])),
        _ => None,
    }
}

/// FlexAttention (the ai.onnx.preview domain) as ONNX's reference computes it: 4-D Q
/// `[B, Hq, L, E]`, K `[B, Hkv, S, E]` and V `[B, Hkv, S, Ev]` (each key/value head serving
/// `Hq / Hkv` consecutive query heads), the scores `(Q sqrt(scale)) (K sqrt(scale))^T`
/// (scale 1/sqrt(E) by default), then `score_mod`, a softmax along the keys, `prob_mod`,
/// and the product with V. `apply(name, x)` runs the graph attribute `name` on `x` (the
/// caller's; the identity when the node has none). In float32, or float64 for float64
/// inputs.
pub(super) fn flex(
    n: &Node,
    q: &HostVal,
    ins: &[Option<HostVal>],
    apply: &dyn Fn(&str, HostVal) -> Result<HostVal, String>,
) -> Result<HostVal, String> {
    let (k, v) = (need(ins, 1)?, need(ins, 2)?);
    let (&[b, hq, l, e], &[kb, hkv, s, ke], &[vb, vh, vs, ev]) =
        (&q.dims[..], &k.dims[..], &v.dims[..])
    else {
        return Err(format!(
            "Q {:?}, K {:?}, V {:?}: FlexAttention takes rank-4 tensors",
            q.dims, k.dims, v.dims
        ));
    };
    if (kb, vb) != (b, b) || vh != hkv || vs != s || ke != e || hkv == 0 || hq % hkv != 0 {
        return Err(format!(
            "Q {:?}, K {:?}, V {:?} do not match",
            q.dims, k.dims, v.dims
        ));
    }
    let double = q.elem == dtype::DOUBLE;
    if !double && q.elem != dtype::FLOAT {
        return Err(format!("FlexAttention of {} tensors", dtype::name(q.elem)));
    }
    let round = |x: f64| if double { x } else { f64::from(x as f32) };
    let scale = match n.attr("scale") {
        Some(crate::onnx::proto::AttrValue::Float(v)) => f64::from(*v),
        _ => 1.0 / (e as f64).sqrt(),
    };
    let root = round(f64::from((scale as f32).sqrt()));
    let mut scores = vec![0.0; b * hq * l * s];
    for (bh, row) in scores.chunks_mut(l * s).enumerate() {
        let (bb, h) = (bh / hq, bh % hq);
        let kh = bb * hkv + h / (hq / hkv);
        for i in 0..l {
            for j in 0..s {
                let dot: f64 = (0..e)
                    .map(|d| {
                        round(q.data[(bh * l + i) * e + d] * root)
                            * round(k.data[(kh * s + j) * e + d] * root)
                    })
                    .sum();
                row[i * s + j] = round(dot);
            }
        }
    }
    let elem = q.elem;
    let val = |data: Vec<f64>| HostVal {
        dims: vec![b, hq, l, s],
        data,
        elem,
    };
    let scores = apply("score_mod", val(scores))?;
    if scores.data.len() != b * hq * l * s {
        return Err(format!("a score_mod giving shape {:?}", scores.dims));
    }
    let mut probs = scores.data;
    for row in probs.chunks_mut(s.max(1)) {
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|&x| (x - m).exp()).sum();
        row.iter_mut()
            .for_each(|x| *x = round((*x - m).exp() / sum));
    }
    let probs = apply("prob_mod", val(probs))?;
    if probs.data.len() != b * hq * l * s {
        return Err(format!("a prob_mod giving shape {:?}", probs.dims));
    }
    let mut out = vec![0.0; b * hq * l * ev];
    for (bh, o) in out.chunks_mut(l * ev).enumerate() {
        let vh = (bh / hq) * hkv + (bh % hq) / (hq / hkv);
        for i in 0..l {
            for m in 0..ev {
                let dot: f64 = (0..s)
                    .map(|j| probs.data[(bh * l + i) * s + j] * v.data[(vh * s + j) * ev + m])
                    .sum();
                o[i * ev + m] = round(dot);
            }
        }
    }
    Ok(HostVal {
        dims: vec![b, hq, l, ev],
        data: out,
        elem,
    })
}

/// RotaryEmbedding (opset 23) as ONNX's reference computes it: the input [batch, heads,
/// sequence, head] or [batch, sequence, heads x head] (num_heads); the first
/// rotary_embedding_dim (default all) of each head rotated by the cos and sin caches
/// ([batch, sequence, dim/2], or [positions, dim/2] indexed by position_ids), its halves
/// (or, interleaved, its even and odd elements) as the real and imaginary parts.
fn rotary(n: &Node, x: &HostVal, ins: &[Option<HostVal>]) -> Result<HostVal, String> {
    let (cos, sin) = (need(ins, 1)?, need(ins, 2)?);
    let pos = ins.get(3).and_then(Option::as_ref);
    if x.elem != dtype::FLOAT {
        return Err("RotaryEmbedding of float tensors only".into());
    }
    // (batch, sequence, heads, head) and the stride of each in x.
    let (b, s, h, d, st) = match x.dims[..] {
        [b, h, s, d] => (b, s, h, d, [h * s * d, d, s * d, 1]),
        [b, s, hidden] => {
            let h = n.attr_int("num_heads", 0);
            if h <= 0 || hidden % h as usize != 0 {
                return Err(format!("num_heads {h} for a hidden size of {hidden}"));
            }
            let h = h as usize;
            let d = hidden / h;
            (b, s, h, d, [s * hidden, hidden, d, 1])
        }
        _ => return Err(format!("an input of shape {:?} (3-D or 4-D)", x.dims)),
    };
    let rot = match n.attr_int("rotary_embedding_dim", 0) {
        0 => d,
        r if r > 0 && r as usize <= d && r % 2 == 0 => r as usize,
        r => return Err(format!("rotary_embedding_dim {r} for heads of {d}")),
    };
    let half = rot / 2;
    let interleaved = n.attr_int("interleaved", 0) != 0;
    if cos.data.len() != sin.data.len() || *cos.dims.last().unwrap_or(&0) != half {
        return Err(format!(
            "caches of shapes {:?} and {:?}: their last dimension must be rotary_embedding_dim / 2 = {half}",
            cos.dims, sin.dims
        ));
    }
    let rows = cos.data.len() / half.max(1);
    // The caches' row for batch bi, position si.
    let row = |bi: usize, si: usize| -> Result<usize, String> {
        let r = match pos {
            Some(p) => {
                let at = p
                    .data
                    .get(bi * s + si)
                    .copied()
                    .ok_or("position_ids is too small")?;
                match at >= 0.0 {
                    true => at as usize,
                    false => usize::MAX,
                }
            }
            None => bi * s + si,
        };
        match r < rows {
            true => Ok(r),
            false => Err(format!(
                "batch {bi}, position {si}: row {r} outside the caches' {rows} rows"
            )),
        }
    };
    let mut out = x.data.clone();
    for bi in 0..b {
        for si in 0..s {
            let r = row(bi, si)?;
            for hi in 0..h {
                let base = bi * st[0] + si * st[1] + hi * st[2];
                for k in 0..half {
                    let (i1, i2) = match interleaved {
                        true => (base + 2 * k, base + 2 * k + 1),
                        false => (base + k, base + half + k),
                    };
                    let (x1, x2) = (x.data[i1] as f32, x.data[i2] as f32);
                    let (c, sn) = (cos.data[r * half + k] as f32, sin.data[r * half + k] as f32);
                    out[i1] = f64::from(c * x1 - sn * x2);
                    out[i2] = f64::from(sn * x1 + c * x2);
                }
            }
        }
    }
    Ok(HostVal::float(x.dims.clone(), out))
}

/// A tensor as [batch, heads, sequence, size] in float32.
struct Heads {
    dims: [usize; 4],
    data: Vec<f32>,
}

impl Heads {
    fn at(&self, b: usize, h: usize, s: usize, d: usize) -> f32 {
        let [_, hh, ss, dd] = self.dims;
        self.data[((b * hh + h) * ss + s) * dd + d]
    }

    /// A 4-D tensor, or a 3-D one [batch, sequence, heads x size] split into `heads`.
    fn of(v: &HostVal, heads: Option<usize>, what: &str) -> Result<Heads, String> {
        let data: Vec<f32> = v.data.iter().map(|&x| x as f32).collect();
        match (&v.dims[..], heads) {
            (&[b, h, s, d], _) => Ok(Heads {
                dims: [b, h, s, d],
                data,
            }),
            (&[b, s, hidden], Some(h)) if h > 0 && hidden % h == 0 => {
                let d = hidden / h;
                let mut out = vec![0.0; data.len()];
                for bi in 0..b {
                    for si in 0..s {
                        for hi in 0..h {
                            for di in 0..d {
                                out[((bi * h + hi) * s + si) * d + di] =
                                    data[(bi * s + si) * hidden + hi * d + di];
                            }
                        }
                    }
                }
                Ok(Heads {
                    dims: [b, h, s, d],
                    data: out,
                })
            }
            _ => Err(format!(
                "{what} has shape {:?}: 4-D, or 3-D with q_num_heads and kv_num_heads dividing its last dimension",
                v.dims
            )),
        }
    }

    /// `past` then `self` along the sequence.
    fn after(self, past: Option<Heads>, what: &str) -> Result<Heads, String> {
        let Some(p) = past else {
            return Ok(self);
        };
        let [b, h, s, d] = self.dims;
        if (p.dims[0], p.dims[1], p.dims[3]) != (b, h, d) {
            return Err(format!(
                "{what} has shape {:?}, against {:?}",
                p.dims, self.dims
            ));
        }
        let ps = p.dims[2];
        let mut data = Vec::with_capacity(p.data.len() + self.data.len());
        for bi in 0..b {
            for hi in 0..h {
                let at = |len: usize| ((bi * h + hi) * len) * d;
                data.extend_from_slice(&p.data[at(ps)..at(ps) + ps * d]);
                data.extend_from_slice(&self.data[at(s)..at(s) + s * d]);
            }
        }
        Ok(Heads {
            dims: [b, h, ps + s, d],
            data,
        })
    }

    fn value(self) -> HostVal {
        HostVal::float(
            self.dims.to_vec(),
            self.data.into_iter().map(f64::from).collect(),
        )
    }
}

fn run(n: &Node, qv: &HostVal, ins: &[Option<HostVal>]) -> Result<Vec<HostVal>, String> {
    let opt = |i: usize| ins.get(i).and_then(Option::as_ref);
    let (kv, vv) = (need(ins, 1)?, need(ins, 2)?);
    for (v, what) in [(qv, "Q"), (kv, "K"), (vv, "V")] {
        if v.elem != dtype::FLOAT {
            return Err(format!(
                "{what} is {}: the host runs Attention on float",
                dtype::name(v.elem)
            ));
        }
    }
    let heads = |name: &str| match n.attr_int(name, 0) {
        h if h > 0 => Some(h as usize),
        _ => None,
    };
    let q = Heads::of(qv, heads("q_num_heads"), "Q")?;
    let past = |i: usize, what: &str| opt(i).map(|v| Heads::of(v, None, what)).transpose();
    let past_len = opt(4).map_or(0, |p| p.dims.get(2).copied().unwrap_or(0));
    let k = Heads::of(kv, heads("kv_num_heads"), "K")?.after(past(4, "past_key")?, "past_key")?;
    let v =
        Heads::of(vv, heads("kv_num_heads"), "V")?.after(past(5, "past_value")?, "past_value")?;
    let [batch, qh, qs, hd] = q.dims;
    let [kb, kh, ks, kd] = k.dims;
    let [vb, vh, vs, vd] = v.dims;
    if kb != batch || vb != batch || kd != hd || vh != kh || vs != ks || kh == 0 || qh % kh != 0 {
        return Err(format!(
            "Q {:?}, K {:?} and V {:?} (with their past) disagree: one batch, K's head size Q's, V's heads and keys K's, Q's heads a multiple of K's",
            q.dims, k.dims, v.dims
        ));
    }
    // sqrt(scale) in double precision, then float32 (ONNX's reference).
    let scale = match n.attr("scale") {
        Some(crate::onnx::proto::AttrValue::Float(s)) => f64::from(*s),
        _ => 1.0 / (hd as f64).sqrt(),
    };
    let s = scale.sqrt() as f32;
    let softcap = n.attr_float("softcap", 0.0);
    let mode = n.attr_int("qk_matmul_output_mode", 0);
    let causal = n.attr_int("is_causal", 0) != 0;
    let (left, right) = (
        n.attr_int("left_window_size", -1),
        n.attr_int("right_window_size", -1),
    );
    let nonpad = opt(6);
    let bias = Bias::new(opt(3), [batch, qh, qs, ks])?;
    // Per batch, the keys before the query block (causal and window alignment).
    let offset = |b: usize| -> i64 {
        match (past_len, nonpad) {
            (0, Some(np)) => np.data.get(b).map_or(ks as i64, |&x| x as i64) - qs as i64,
            _ => past_len as i64,
        }
    };
    let reps = qh / kh;
    let mut y = vec![0.0f32; batch * qh * qs * vd];
    let mut qk_out = vec![0.0f32; batch * qh * qs * ks];
    let mut row = vec![0.0f32; ks];
    let mut add = vec![0.0f32; ks];
    for b in 0..batch {
        for h in 0..qh {
            let g = h / reps;
            for i in 0..qs {
                for j in 0..ks {
                    let mut a = bias.at(b, h, i, j);
                    let allowed = |ok: bool, a: f32| if ok { a } else { a + f32::NEG_INFINITY };
                    let p = i as i64 + offset(b);
                    if causal {
                        a = allowed(j as i64 <= p, a);
                    }
                    if left >= 0 {
                        a = allowed(p - j as i64 <= left, a);
                    }
                    if right >= 0 {
                        a = allowed(j as i64 - p <= right, a);
                    }
                    if let Some(np) = nonpad {
                        a = allowed((j as f64) < np.data.get(b).copied().unwrap_or(ks as f64), a);
                    }
                    add[j] = a;
                    let mut dot = 0.0f32;
                    for d in 0..hd {
                        dot += (q.at(b, h, i, d) * s) * (k.at(b, g, j, d) * s);
                    }
                    if softcap > 0.0 {
                        dot = (dot / softcap).tanh() * softcap;
                    }
                    row[j] = dot + a;
                    let at = ((b * qh + h) * qs + i) * ks + j;
                    qk_out[at] = match mode {
                        2 => row[j],
                        _ => dot,
                    };
                }
                let masked = add.iter().all(|&a| a == f32::NEG_INFINITY);
                let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let max = if max == f32::NEG_INFINITY { 0.0 } else { max };
                let e: Vec<f32> = row.iter().map(|&x| (x - max).exp()).collect();
                let sum: f32 = e.iter().sum();
                let sum = if sum == 0.0 { 1.0 } else { sum };
                let p: Vec<f32> = e
                    .iter()
                    .map(|&x| if masked { 0.0 } else { x / sum })
                    .collect();
                if mode == 3 {
                    let at = ((b * qh + h) * qs + i) * ks;
                    qk_out[at..at + ks].copy_from_slice(&p);
                }
                for d in 0..vd {
                    let mut acc = 0.0f32;
                    for (j, pj) in p.iter().enumerate() {
                        acc += pj * v.at(b, g, j, d);
                    }
                    y[((b * qh + h) * qs + i) * vd + d] = acc;
                }
            }
        }
    }
    let y = match qv.dims.len() {
        3 => {
            // [batch, heads, q, vd] -> [batch, q, heads x vd]
            let mut t = vec![0.0f32; y.len()];
            for b in 0..batch {
                for h in 0..qh {
                    for i in 0..qs {
                        for d in 0..vd {
                            t[((b * qs + i) * qh + h) * vd + d] =
                                y[((b * qh + h) * qs + i) * vd + d];
                        }
                    }
                }
            }
            HostVal::float(
                vec![batch, qs, qh * vd],
                t.into_iter().map(f64::from).collect(),
            )
        }
        _ => HostVal::float(
            vec![batch, qh, qs, vd],
            y.into_iter().map(f64::from).collect(),
        ),
    };
    let qk = HostVal::float(
        vec![batch, qh, qs, ks],
        qk_out.into_iter().map(f64::from).collect(),
    );
    Ok(vec![y, k.value(), v.value(), qk])
}

/// The attention mask as an additive bias, broadcast right-aligned to [batch, heads, q,
/// keys], its keys padded to `keys` with masked positions (a boolean mask's false and
/// padding are -inf).
struct Bias<'a> {
    mask: Option<&'a HostVal>,
}

impl<'a> Bias<'a> {
    /// The mask, if its shape broadcasts to `full` ([batch, heads, q, keys], with at most
    /// `keys` keys).
    fn new(mask: Option<&'a HostVal>, full: [usize; 4]) -> Result<Self, String> {
        if let Some(m) = mask {
            let r = m.dims.len();
            let fits = (1..=4).contains(&r)
                && m.dims.iter().enumerate().all(|(k, &d)| {
                    let f = full[4 - r + k];
                    d == 1 || d == f || (k == r - 1 && d <= f)
                });
            if !fits {
                return Err(format!(
                    "attn_mask has shape {:?}, which does not broadcast to [batch, heads, q, keys] = {full:?}",
                    m.dims
                ));
            }
        }
        Ok(Bias { mask })
    }

    fn at(&self, b: usize, h: usize, i: usize, j: usize) -> f32 {
        let Some(m) = self.mask else {
            return 0.0;
        };
        let r = m.dims.len();
        let last = m.dims[r - 1];
        if j >= last {
            return f32::NEG_INFINITY;
        }
        // Right-aligned: the mask's dims are the last r of [batch, heads, q, keys].
        let idx = [b, h, i, j];
        let mut at = 0;
        for (k, &d) in m.dims.iter().enumerate() {
            let x = idx[4 - r + k];
            at = at * d + if d == 1 { 0 } else { x };
        }
        let v = m.data[at];
        match m.elem {
            dtype::BOOL if v != 0.0 => 0.0,
            dtype::BOOL => f32::NEG_INFINITY,
            _ => v as f32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::proto::{AttrValue, Attribute};

    fn t(dims: &[usize], data: &[f64], elem: i32) -> Option<HostVal> {
        Some(HostVal {
            dims: dims.to_vec(),
            data: data.to_vec(),
            elem,
        })
    }

    /// By hand, one query and two keys of one dimension with Q . K = 0 for both: the
    /// softmax is 1/2, 1/2 and Y the mean of V = 2, 4: 3. Causal, the query (no past) sees
    /// key 0 only: 2. A boolean mask false, true: 4. Both masked: a zero row, 0.
    #[test]
    fn one_query_two_keys_by_hand() {
        let attend = |causal: i64, mask: Option<HostVal>| {
            let n = Node {
                op_type: "Attention".into(),
                attributes: vec![Attribute {
                    name: "is_causal".into(),
                    value: AttrValue::Int(causal),
                }],
                ..Node::default()
            };
            let q = HostVal::float(vec![1, 1, 1, 1], vec![1.0]);
            let ins = [
                Some(q.clone()),
                t(&[1, 1, 2, 1], &[0.0, 0.0], dtype::FLOAT),
                t(&[1, 1, 2, 1], &[2.0, 4.0], dtype::FLOAT),
                mask,
            ];
            eval(&n, &q, &ins).unwrap()
        };
        let run = |causal: i64, mask: Option<HostVal>| {
            let out = attend(causal, mask).unwrap();
            assert_eq!(out.len(), 4);
            out[0].data[0]
        };
        assert_eq!(run(0, None), 3.0);
        assert_eq!(run(1, None), 2.0);
        assert_eq!(run(0, t(&[1, 2], &[0.0, 1.0], dtype::BOOL)), 4.0);
        assert_eq!(run(0, t(&[1, 2], &[0.0, 0.0], dtype::BOOL)), 0.0);
        // A mask of three keys does not broadcast to two.
        let e = attend(0, t(&[1, 3], &[0.0; 3], dtype::FLOAT)).unwrap_err();
        assert!(e.contains("does not broadcast"), "{e}");
    }

    /// By hand, FlexAttention with Q = K = I (2 x 2, scale 1): the scores are I, so row 0's
    /// probabilities are e/(1+e), 1/(1+e), and with V = [1, 0] the output is e/(1+e),
    /// 1/(1+e). A score_mod negating the scores swaps them. In float64, not rounded.
    #[test]
    fn flex_attention_by_hand() {
        let n = Node {
            op_type: "FlexAttention".into(),
            attributes: vec![Attribute {
                name: "scale".into(),
                value: AttrValue::Float(1.0),
            }],
            ..Node::default()
        };
        let eye = t(&[1, 1, 2, 2], &[1.0, 0.0, 0.0, 1.0], dtype::DOUBLE);
        let v = t(&[1, 1, 2, 1], &[1.0, 0.0], dtype::DOUBLE);
        let ins = [eye.clone(), eye.clone(), v];
        let e = std::f64::consts::E;
        let y = flex(&n, eye.as_ref().unwrap(), &ins, &|_, x| Ok(x)).unwrap();
        assert_eq!(y.dims, vec![1, 1, 2, 1]);
        assert!((y.data[0] - e / (1.0 + e)).abs() < 1e-15);
        assert!((y.data[1] - 1.0 / (1.0 + e)).abs() < 1e-15);
        let negate = |name: &str, mut x: HostVal| {
            if name == "score_mod" {
                x.data.iter_mut().for_each(|v| *v = -*v);
            }
            Ok(x)
        };
        let y = flex(&n, eye.as_ref().unwrap(), &ins, &negate).unwrap();
        assert!((y.data[0] - 1.0 / (1.0 + e)).abs() < 1e-15);
    }
}
