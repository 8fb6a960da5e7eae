//! The optimizers of ONNX's ai.onnx.preview.training domain on the host: Adagrad, Adam and
//! Momentum (standard and Nesterov), one update step as ONNX defines it, for one or several
//! tensors. Each step is computed in double precision and each output rounded once to
//! float32.

use super::HostVal;
use crate::onnx::proto::{dtype, AttrValue, Node};

/// One of these operators (every output); None for others.
pub(super) fn eval(n: &Node, ins: &[Option<HostVal>]) -> Option<Result<Vec<HostVal>, String>> {
    // The optimizer's per-tensor inputs after R and T, and its per-element update from
    // (r, t, x, g, states) to (x, states).
    let states = match n.op_type.as_str() {
        "Adagrad" | "Momentum" => 1,
        "Adam" => 2,
        _ => return None,
    };
    Some(step(n, ins, states))
}

/// Inputs R (learning rate), T (update count), then the tensors X..., their gradients G...
/// and each state (`states` of them) for every tensor; outputs the new X... then each new
/// state for every tensor.
fn step(n: &Node, ins: &[Option<HostVal>], states: usize) -> Result<Vec<HostVal>, String> {
    let all: Vec<&HostVal> = ins
        .iter()
        .map(|v| v.as_ref().ok_or("an input is missing"))
        .collect::<Result<_, _>>()?;
    let per = 2 + states;
    let count = all.len().saturating_sub(2) / per;
    if all.len() < 2 + per || !(all.len() - 2).is_multiple_of(per) {
        return Err(format!(
            "{} inputs: R, T, then {per} inputs (X, G and {states} state) for each tensor",
            all.len()
        ));
    }
    let scalar = |v: &HostVal, what: &str| match v.data[..] {
        [s] => Ok(s),
        _ => Err(format!("{what} of shape {:?} (a scalar)", v.dims)),
    };
    let (r, t) = (scalar(all[0], "R")?, scalar(all[1], "T")?);
    let update = rule(n, r, t)?;
    let tensors: Vec<Vec<&HostVal>> = (0..count)
        .map(|i| (0..per).map(|k| all[2 + k * count + i]).collect())
        .collect();
    let mut outs: Vec<Vec<HostVal>> = vec![Vec::with_capacity(count); 1 + states];
    for group in &tensors {
        let x = group[0];
        if x.elem != dtype::FLOAT || group.iter().any(|v| v.dims != x.dims) {
            return Err("X, G and the states of a tensor must be float32 of one shape".into());
        }
        let mut cols: Vec<Vec<f64>> = vec![Vec::with_capacity(x.data.len()); 1 + states];
        for k in 0..x.data.len() {
            let s: Vec<f64> = group[2..].iter().map(|v| v.data[k]).collect();
            for (c, v) in cols.iter_mut().zip(update(x.data[k], group[1].data[k], &s)) {
                c.push(v);
            }
        }
        for (o, c) in outs.iter_mut().zip(cols) {
            o.push(HostVal::float(x.dims.clone(), c));
        }
    }
    Ok(outs.into_iter().flatten().collect())
}

type Update = Box<dyn Fn(f64, f64, &[f64]) -> Vec<f64>>;

/// The per-element update of node `n` at learning rate `r` and update count `t`:
/// (x, g, states) to (new x, new states).
fn rule(n: &Node, r: f64, t: f64) -> Result<Update, String> {
    let a = |name: &str, d: f32| f64::from(n.attr_float(name, d));
    let norm = a("norm_coefficient", 0.0);
    Ok(match n.op_type.as_str() {
        // r / (1 + t decay); h += g^2; x -= r' g / (sqrt(h) + epsilon), g regularized.
        "Adagrad" => {
            let (decay, eps) = (a("decay_factor", 0.0), a("epsilon", 0.0));
            Box::new(move |x, g, s| {
                let g = norm * x + g;
                let h = s[0] + g * g;
                vec![x - r / (1.0 + t * decay) * g / (h.sqrt() + eps), h]
            })
        }
        // v = alpha v + (1 - alpha) g; h = beta h + (1 - beta) g^2; bias-corrected rate
        // when t > 0; x' = (1 - norm_post) (x - r' v / (sqrt(h) + epsilon)).
        "Adam" => {
            let (alpha, beta, eps) = (a("alpha", 0.9), a("beta", 0.999), a("epsilon", 0.0));
            let post = a("norm_coefficient_post", 0.0);
            let rate = match t > 0.0 {
                true => r * (1.0 - beta.powf(t)).sqrt() / (1.0 - alpha.powf(t)),
                false => r,
            };
            Box::new(move |x, g, s| {
                let g = norm * x + g;
                let v = alpha * s[0] + (1.0 - alpha) * g;
                let h = beta * s[1] + (1.0 - beta) * g * g;
                vec![(1.0 - post) * (x - rate * (v / (h.sqrt() + eps))), v, h]
            })
        }
        // v = alpha v + beta' g (beta' = 1 at t = 0); x -= r v, or for Nesterov
        // x -= r (g + alpha v).
        _ => {
            let need = |name: &str| match n.attr(name) {
                Some(AttrValue::Float(v)) => Ok(f64::from(*v)),
                _ => Err(format!("Momentum without its {name} attribute")),
            };
            let (alpha, beta) = (need("alpha")?, need("beta")?);
            let beta = if t > 0.0 { beta } else { 1.0 };
            let nesterov = match n.attr("mode") {
                Some(AttrValue::Text(m)) if m == "standard" => false,
                Some(AttrValue::Text(m)) if m == "nesterov" => true,
                _ => return Err("Momentum's mode must be standard or nesterov".into()),
            };
            Box::new(move |x, g, s| {
                let g = norm * x + g;
                let v = alpha * s[0] + beta * g;
                let step = if nesterov { g + alpha * v } else { v };
                vec![x - r * step, v]
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: f64) -> Option<HostVal> {
        Some(HostVal::float(vec![1], vec![v]))
    }

    /// By hand, one element, r = 0.5, t = 1: Adagrad (no decay, epsilon 0) from x = 1,
    /// g = 2, h = 0: h = 4, x = 1 - 0.5 * 2 / 2 = 0.5. Momentum (alpha 0.5, beta 0.5) from
    /// v = 2: v = 1 + 1 = 2, x = 1 - 0.5 * 2 = 0; Nesterov: x = 1 - 0.5 (2 + 1) = -0.5.
    /// Adam (alpha 0.5, beta 0.75, epsilon 0) from v = h = 0: v = 1, h = 1, rate
    /// 0.5 sqrt(0.25) / 0.5 = 0.5, x = 1 - 0.5 = 0.5.
    #[test]
    fn optimizers_by_hand() {
        let run = |op: &str, attrs: Vec<(&str, AttrValue)>, states: &[f64]| {
            let mut ins = vec![s(0.5), s(1.0), s(1.0), s(2.0)];
            ins.extend(states.iter().map(|&v| s(v)));
            let out = eval(&Node::new(op, attrs), &ins).unwrap().unwrap();
            out.iter().map(|v| v.data[0]).collect::<Vec<f64>>()
        };
        assert_eq!(run("Adagrad", vec![], &[0.0]), [0.5, 4.0]);
        let momentum = |mode: &str| {
            vec![
                ("alpha", AttrValue::Float(0.5)),
                ("beta", AttrValue::Float(0.5)),
                ("mode", AttrValue::Text(mode.into())),
            ]
        };
        assert_eq!(run("Momentum", momentum("standard"), &[2.0]), [0.0, 2.0]);
        assert_eq!(run("Momentum", momentum("nesterov"), &[2.0]), [-0.5, 2.0]);
        let adam = vec![
            ("alpha", AttrValue::Float(0.5)),
            ("beta", AttrValue::Float(0.75)),
        ];
        assert_eq!(run("Adam", adam, &[0.0, 0.0]), [0.5, 1.0, 1.0]);
        let short = eval(&Node::new("Adam", vec![]), &[s(0.5), s(1.0), s(1.0)]);
        assert!(short.unwrap().is_err());
    }
}
