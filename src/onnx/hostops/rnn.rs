//! ONNX's recurrent operators on the host: RNN, GRU and LSTM, every direction, both layouts,
//! sequence lengths, initial states, peepholes, clipping and the activations the operators
//! name, in float32 as ONNX's reference computes them. Inputs (X, W, R, B, sequence_lens,
//! initial_h; LSTM also initial_c, P) and outputs (Y, Y_h; LSTM also Y_c) as the operators
//! define them; gates in ONNX's order (GRU z, r, h; LSTM i, o, f, c).

use super::{need, HostVal};
use crate::onnx::proto::{dtype, AttrValue, Node};

/// RNN, GRU or LSTM; None for other operators.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<Vec<HostVal>, String>> {
    let kind = match n.op_type.as_str() {
        "RNN" => Kind::Rnn,
        "GRU" => Kind::Gru,
        "LSTM" => Kind::Lstm,
        _ => return None,
    };
    Some(run(n, kind, x, ins))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Rnn,
    Gru,
    Lstm,
}

impl Kind {
    /// Gates per hidden unit, and the default activations of one direction.
    fn gates(self) -> usize {
        match self {
            Kind::Rnn => 1,
            Kind::Gru => 3,
            Kind::Lstm => 4,
        }
    }

    fn default_activations(self) -> &'static [&'static str] {
        match self {
            Kind::Rnn => &["Tanh"],
            Kind::Gru => &["Sigmoid", "Tanh"],
            Kind::Lstm => &["Sigmoid", "Tanh", "Tanh"],
        }
    }
}

/// An activation function with its alpha and beta.
#[derive(Clone, Copy, Debug)]
enum Act {
    Tanh,
    Sigmoid,
    Relu,
    Affine(f32, f32),
    LeakyRelu(f32),
    ThresholdedRelu(f32),
    ScaledTanh(f32, f32),
    HardSigmoid(f32, f32),
    Elu(f32),
    Softsign,
    Softplus,
}

impl Act {
    fn apply(self, v: f32) -> f32 {
        match self {
            Act::Tanh => v.tanh(),
            Act::Sigmoid => 1.0 / (1.0 + (-v).exp()),
            Act::Relu => v.max(0.0),
            Act::Affine(a, b) => a * v + b,
            Act::LeakyRelu(a) => match v < 0.0 {
                true => a * v,
                false => v,
            },
            Act::ThresholdedRelu(a) => match v > a {
                true => v,
                false => 0.0,
            },
            Act::ScaledTanh(a, b) => a * (b * v).tanh(),
            Act::HardSigmoid(a, b) => (a * v + b).clamp(0.0, 1.0),
            Act::Elu(a) => match v < 0.0 {
                true => a * (v.exp() - 1.0),
                false => v,
            },
            Act::Softsign => v / (1.0 + v.abs()),
            Act::Softplus => (v.exp() + 1.0).ln(),
        }
    }
}

/// The activations named by `activations` (or the operator's defaults), each direction's
/// `per` of them; alpha and beta consumed in order by the activations that take them
/// (the ONNX operator's defaults where the lists run out).
fn activations(n: &Node, kind: Kind, dirs: usize) -> Result<Vec<Act>, String> {
    let per = kind.default_activations().len();
    let names: Vec<String> = match n.attr("activations") {
        Some(AttrValue::Texts(v)) if !v.is_empty() => v.clone(),
        _ => (0..dirs)
            .flat_map(|_| kind.default_activations().iter().map(|s| s.to_string()))
            .collect(),
    };
    if names.len() != per * dirs {
        return Err(format!(
            "activations has {} names; {} takes {per} per direction ({dirs} direction(s))",
            names.len(),
            n.op_type
        ));
    }
    let floats = |name: &str| match n.attr(name) {
        Some(AttrValue::Floats(v)) => v.clone(),
        _ => Vec::new(),
    };
    let (alphas, betas) = (floats("activation_alpha"), floats("activation_beta"));
    let (mut ai, mut bi) = (alphas.iter(), betas.iter());
    let mut alpha = |d: f32| ai.next().copied().unwrap_or(d);
    let mut beta = |d: f32| bi.next().copied().unwrap_or(d);
    names
        .iter()
        .map(|name| {
            Ok(match name.to_ascii_lowercase().as_str() {
                "tanh" => Act::Tanh,
                "sigmoid" => Act::Sigmoid,
                "relu" => Act::Relu,
                "affine" => Act::Affine(alpha(1.0), beta(0.0)),
                "leakyrelu" => Act::LeakyRelu(alpha(0.01)),
                "thresholdedrelu" => Act::ThresholdedRelu(alpha(1.0)),
                "scaledtanh" => Act::ScaledTanh(alpha(1.0), beta(1.0)),
                "hardsigmoid" => Act::HardSigmoid(alpha(0.2), beta(0.5)),
                "elu" => Act::Elu(alpha(1.0)),
                "softsign" => Act::Softsign,
                "softplus" => Act::Softplus,
                other => {
                    return Err(format!(
                        "activation {other:?} is none of Tanh, Sigmoid, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus"
                    ))
                }
            })
        })
        .collect()
}

/// An optional input (absent, or named "").
fn opt(ins: &[Option<HostVal>], i: usize) -> Option<&HostVal> {
    ins.get(i).and_then(Option::as_ref)
}

/// `v`'s dims must be `want` (`what` names it).
fn dims(v: &HostVal, want: &[usize], what: &str) -> Result<(), String> {
    match v.dims == want {
        true => Ok(()),
        false => Err(format!("{what} has shape {:?}, expected {want:?}", v.dims)),
    }
}

fn run(n: &Node, kind: Kind, x: &HostVal, ins: &[Option<HostVal>]) -> Result<Vec<HostVal>, String> {
    if x.elem != dtype::FLOAT {
        return Err(format!(
            "{} of {} tensors (the host runs it on float)",
            n.op_type,
            dtype::name(x.elem)
        ));
    }
    let g = kind.gates();
    let layout = n.attr_int("layout", 0);
    let (w, r) = (need(ins, 1)?, need(ins, 2)?);
    let [a, b, input] = x.dims[..] else {
        return Err(format!("X has shape {:?}, expected 3 dimensions", x.dims));
    };
    let (seq, batch) = if layout == 0 { (a, b) } else { (b, a) };
    let dirs = match n.attr("direction") {
        None => 1,
        Some(AttrValue::Text(d)) if d == "forward" || d == "reverse" => 1,
        Some(AttrValue::Text(d)) if d == "bidirectional" => 2,
        _ => return Err("direction must be forward, reverse or bidirectional".into()),
    };
    let reverse = matches!(n.attr("direction"), Some(AttrValue::Text(d)) if d == "reverse");
    let hidden = match n.attr_int("hidden_size", 0) {
        h if h > 1 << 24 => return Err(format!("hidden_size {h}: at most 2^24")),
        h if h > 0 => h as usize,
        _ => *r.dims.get(2).ok_or("R has fewer than 3 dimensions")?,
    };
    dims(w, &[dirs, g * hidden, input], "W")?;
    dims(r, &[dirs, g * hidden, hidden], "R")?;
    if let Some(b) = opt(ins, 3) {
        dims(b, &[dirs, 2 * g * hidden], "B")?;
    }
    if kind == Kind::Lstm && n.attr_int("input_forget", 0) != 0 {
        return Err("input_forget = 1 (coupled input and forget gates) is not supported".into());
    }
    let lens: Vec<usize> = match opt(ins, 4) {
        Some(l) => {
            dims(l, &[batch], "sequence_lens")?;
            l.data
                .iter()
                .map(|&v| match v >= 0.0 && v as usize <= seq {
                    true => Ok(v as usize),
                    false => Err(format!("sequence_lens holds {v}, outside 0..={seq}")),
                })
                .collect::<Result<_, _>>()?
        }
        None => vec![seq; batch],
    };
    // Initial states, [dirs, batch, hidden] (layout 0) or [batch, dirs, hidden].
    let state_dims = match layout {
        0 => vec![dirs, batch, hidden],
        _ => vec![batch, dirs, hidden],
    };
    let state = |i: usize, what: &str| -> Result<Option<&HostVal>, String> {
        match opt(ins, i) {
            Some(v) => dims(v, &state_dims, what).map(|_| Some(v)),
            None => Ok(None),
        }
    };
    let h0 = state(5, "initial_h")?;
    let c0 = match kind {
        Kind::Lstm => state(6, "initial_c")?,
        _ => None,
    };
    let peep = match kind {
        Kind::Lstm => opt(ins, 7),
        _ => None,
    };
    if let Some(p) = peep {
        dims(p, &[dirs, 3 * hidden], "P")?;
    }
    let acts = activations(n, kind, dirs)?;
    let clip = match n.attr("clip") {
        Some(AttrValue::Float(c)) => Some(*c),
        _ => None,
    };
    let lbr = n.attr_int("linear_before_reset", 0) != 0;
    let per = kind.default_activations().len();
    // Index of a state element of direction d, batch b, unit j in the given layout.
    let st = |d: usize, b: usize, j: usize| match layout {
        0 => (d * batch + b) * hidden + j,
        _ => (b * dirs + d) * hidden + j,
    };
    let mut y = vec![0.0f32; seq * dirs * batch * hidden];
    let mut yh = vec![0.0f32; dirs * batch * hidden];
    let mut yc = vec![0.0f32; dirs * batch * hidden];
    let f32s = |v: &HostVal| -> Vec<f32> { v.data.iter().map(|&x| x as f32).collect() };
    let (xs, ws, rs) = (f32s(x), f32s(w), f32s(r));
    let bs = opt(ins, 3).map(f32s);
    let ps = peep.map(f32s);
    for d in 0..dirs {
        let back = reverse || d == 1;
        let cell = Cell {
            kind,
            input,
            hidden,
            w: &ws[d * g * hidden * input..(d + 1) * g * hidden * input],
            r: &rs[d * g * hidden * hidden..(d + 1) * g * hidden * hidden],
            b: bs
                .as_ref()
                .map(|b| &b[d * 2 * g * hidden..(d + 1) * 2 * g * hidden]),
            p: ps
                .as_ref()
                .map(|p| &p[d * 3 * hidden..(d + 1) * 3 * hidden]),
            acts: &acts[d * per..(d + 1) * per],
            clip,
            lbr,
        };
        for bt in 0..batch {
            let init = |v: Option<&HostVal>| -> Vec<f32> {
                (0..hidden)
                    .map(|j| v.map_or(0.0, |v| v.data[st(d, bt, j)] as f32))
                    .collect()
            };
            let (mut h, mut c) = (init(h0), init(c0));
            for step in 0..lens[bt] {
                let t = if back { lens[bt] - 1 - step } else { step };
                let at = match layout {
                    0 => (t * batch + bt) * input,
                    _ => (bt * seq + t) * input,
                };
                cell.step(&xs[at..at + input], &mut h, &mut c);
                // Y's row of time t, direction d, batch bt.
                let row = match layout {
                    0 => ((t * dirs + d) * batch + bt) * hidden,
                    _ => ((bt * seq + t) * dirs + d) * hidden,
                };
                y[row..row + hidden].copy_from_slice(&h);
            }
            for j in 0..hidden {
                yh[st(d, bt, j)] = h[j];
                yc[st(d, bt, j)] = c[j];
            }
        }
    }
    let y_dims = match layout {
        0 => vec![seq, dirs, batch, hidden],
        _ => vec![batch, seq, dirs, hidden],
    };
    let out = |dims: Vec<usize>, v: Vec<f32>| {
        HostVal::float(dims, v.into_iter().map(f64::from).collect())
    };
    let mut outs = vec![out(y_dims, y), out(state_dims.clone(), yh)];
    if kind == Kind::Lstm {
        outs.push(out(state_dims, yc));
    }
    Ok(outs)
}

/// One direction's weights, biases, peepholes and activations.
struct Cell<'a> {
    kind: Kind,
    input: usize,
    hidden: usize,
    /// [gates x hidden, input], [gates x hidden, hidden], [2 x gates x hidden] (W's biases,
    /// then R's), [3 x hidden] (i, o, f).
    w: &'a [f32],
    r: &'a [f32],
    b: Option<&'a [f32]>,
    p: Option<&'a [f32]>,
    acts: &'a [Act],
    clip: Option<f32>,
    lbr: bool,
}

impl Cell<'_> {
    /// Row `row` of `m` (`cols` wide) times `v`.
    fn dot(m: &[f32], row: usize, cols: usize, v: &[f32]) -> f32 {
        m[row * cols..(row + 1) * cols]
            .iter()
            .zip(v)
            .map(|(a, b)| a * b)
            .sum()
    }

    /// Gate `k`'s unit j: X's and W's part with W's bias, and H's and R's with R's bias.
    fn parts(&self, x: &[f32], h: &[f32], k: usize, j: usize) -> (f32, f32) {
        let (hid, g) = (self.hidden, self.kind.gates());
        let row = k * hid + j;
        let bias = |i: usize| self.b.map_or(0.0, |b| b[i]);
        (
            Self::dot(self.w, row, self.input, x) + bias(row),
            Self::dot(self.r, row, hid, h) + bias(g * hid + row),
        )
    }

    /// Activation i of a gate's input, clipped to the cell clip (when given).
    fn act(&self, i: usize, v: f32) -> f32 {
        let v = match self.clip {
            Some(c) => v.clamp(-c, c),
            None => v,
        };
        self.acts[i].apply(v)
    }

    /// One time step: `h` (and an LSTM's `c`) from input row `x`.
    fn step(&self, x: &[f32], h: &mut [f32], c: &mut [f32]) {
        let hid = self.hidden;
        let prev = h.to_vec();
        match self.kind {
            Kind::Rnn => {
                for (j, hj) in h.iter_mut().enumerate() {
                    let (a, b) = self.parts(x, &prev, 0, j);
                    *hj = self.act(0, a + b);
                }
            }
            Kind::Gru => {
                let gate = |k: usize, j: usize| {
                    let (a, b) = self.parts(x, &prev, k, j);
                    self.act(0, a + b)
                };
                let z: Vec<f32> = (0..hid).map(|j| gate(0, j)).collect();
                let r: Vec<f32> = (0..hid).map(|j| gate(1, j)).collect();
                let rh: Vec<f32> = prev.iter().zip(&r).map(|(p, r)| p * r).collect();
                for j in 0..hid {
                    let pre = match self.lbr {
                        // (r . H) R^T + Rb
                        false => {
                            let (a, _) = self.parts(x, &prev, 2, j);
                            let rb = self.b.map_or(0.0, |b| b[3 * hid + 2 * hid + j]);
                            a + Self::dot(self.r, 2 * hid + j, hid, &rh) + rb
                        }
                        // r . (H R^T + Rb)
                        true => {
                            let (a, b) = self.parts(x, &prev, 2, j);
                            a + r[j] * b
                        }
                    };
                    let hh = self.act(1, pre);
                    h[j] = (1.0 - z[j]) * hh + z[j] * prev[j];
                }
            }
            Kind::Lstm => {
                let pre = |k: usize, j: usize| {
                    let (a, b) = self.parts(x, &prev, k, j);
                    a + b
                };
                let peep = |k: usize, j: usize| self.p.map_or(0.0, |p| p[k * hid + j]);
                for j in 0..hid {
                    let i = self.act(0, pre(0, j) + peep(0, j) * c[j]);
                    let f = self.act(0, pre(2, j) + peep(2, j) * c[j]);
                    let cc = self.act(1, pre(3, j));
                    c[j] = f * c[j] + i * cc;
                    let o = self.act(0, pre(1, j) + peep(1, j) * c[j]);
                    // The cell state itself is not clipped.
                    h[j] = o * self.acts[2].apply(c[j]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dims: &[usize], data: &[f64]) -> Option<HostVal> {
        Some(HostVal::float(dims.to_vec(), data.to_vec()))
    }

    /// By hand, one unit, identity activation (Affine 1, 0), W 0.5, R 0.25, X = 1, 2:
    /// forward h = 0.5, then 0.5 x 2 + 0.25 x 0.5 = 1.125; reverse h(t=1) = 1, then h(t=0)
    /// = 0.5 + 0.25 = 0.75; with a sequence length of 1 only t = 0 runs (Y's second row 0).
    #[test]
    fn a_one_unit_rnn_by_hand() {
        let run = |dir: &str, lens: Option<HostVal>| {
            let n = Node::new(
                "RNN",
                vec![
                    ("activations", AttrValue::Texts(vec!["Affine".into()])),
                    ("direction", AttrValue::Text(dir.into())),
                    ("hidden_size", AttrValue::Int(1)),
                ],
            );
            let x = HostVal::float(vec![2, 1, 1], vec![1.0, 2.0]);
            let ins = [
                Some(x.clone()),
                t(&[1, 1, 1], &[0.5]),
                t(&[1, 1, 1], &[0.25]),
                None,
                lens,
            ];
            let out = eval(&n, &x, &ins).unwrap().unwrap();
            (out[0].data.clone(), out[1].data.clone())
        };
        assert_eq!(run("forward", None), (vec![0.5, 1.125], vec![1.125]));
        assert_eq!(run("reverse", None), (vec![0.75, 1.0], vec![0.75]));
        let one = Some(HostVal {
            dims: vec![1],
            data: vec![1.0],
            elem: dtype::INT32,
        });
        assert_eq!(run("forward", one), (vec![0.5, 0.0], vec![0.5]));
    }

    /// By hand, an LSTM of one unit with every weight 0 but the cell's input weight 1 and
    /// identity activations (Affine): i = f = o = 0 (+ biases), so with input and output gate
    /// biases 1 (W's bias) c = f c + i x = x and h = o c = x.
    #[test]
    fn a_one_unit_lstm_by_hand() {
        let n = Node::new(
            "LSTM",
            vec![(
                "activations",
                AttrValue::Texts(vec!["Affine".into(), "Affine".into(), "Affine".into()]),
            )],
        );
        let x = HostVal::float(vec![2, 1, 1], vec![3.0, -2.0]);
        // W rows i, o, f, c; B = W's biases (i, o, f, c) then R's.
        let ins = [
            Some(x.clone()),
            t(&[1, 4, 1], &[0.0, 0.0, 0.0, 1.0]),
            t(&[1, 4, 1], &[0.0; 4]),
            t(&[1, 8], &[1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        ];
        let out = eval(&n, &x, &ins).unwrap().unwrap();
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].data, vec![3.0, -2.0]);
        assert_eq!(
            (out[1].data.clone(), out[2].data.clone()),
            (vec![-2.0], vec![-2.0])
        );
    }

    #[test]
    fn bad_shapes_and_names_are_refused() {
        let x = HostVal::float(vec![1, 1, 2], vec![1.0, 2.0]);
        let w = t(&[1, 1, 3], &[0.0; 3]);
        let ins = [Some(x.clone()), w, t(&[1, 1, 1], &[0.0])];
        let e = eval(&Node::new("RNN", vec![]), &x, &ins)
            .unwrap()
            .unwrap_err();
        assert!(
            e.contains("W has shape [1, 1, 3], expected [1, 1, 2]"),
            "{e}"
        );
        let n = Node::new(
            "GRU",
            vec![(
                "activations",
                AttrValue::Texts(vec!["Cosh".into(), "Tanh".into()]),
            )],
        );
        let ins = [
            Some(x.clone()),
            t(&[1, 3, 2], &[0.0; 6]),
            t(&[1, 3, 1], &[0.0; 3]),
        ];
        let e = eval(&n, &x, &ins).unwrap().unwrap_err();
        assert!(e.contains("\"cosh\" is none of"), "{e}");
        let n = Node::new("LSTM", vec![("hidden_size", AttrValue::Int(1 << 62))]);
        let e = eval(&n, &x, &ins).unwrap().unwrap_err();
        assert!(e.contains("at most 2^24"), "{e}");
    }
}
