//! GridSample (opsets 16 to 22) on the host, as ONNX's reference computes it: N-D inputs
//! [N, C, D1..Dk] sampled at a grid [N, O1..Ok, k] of normalized coordinates (the last
//! axis x, y, ... for the input's last dimension first), nearest (ties to even), linear
//! or cubic (Keys, a = -0.75) interpolation applied one dimension at a time, zeros,
//! border or reflection padding, align_corners; in float32.

use super::HostVal;
use crate::onnx::proto::{dtype, AttrValue, Node};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Nearest,
    Linear,
    Cubic,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pad {
    Zeros,
    Border,
    Reflection,
}

/// The sampled input.
struct Plane<'a> {
    data: &'a [f64],
    dims: &'a [usize],
    pad: Pad,
    /// Per dimension, the lowest and highest coordinate inside (reflection's borders).
    lo: Vec<f64>,
    hi: Vec<f64>,
}

/// Reflect `x` by the near border until it is within lo..=hi.
fn reflect(x: f64, lo: f64, hi: f64) -> f64 {
    let range = hi - lo;
    let fold = |d: f64| {
        let n = (d / range) as i64;
        (n, d - n as f64 * range)
    };
    if x < lo {
        let (n, r) = fold(lo - x);
        if n % 2 == 0 {
            lo + r
        } else {
            hi - r
        }
    } else if x > hi {
        let (n, r) = fold(x - hi);
        if n % 2 == 0 {
            hi - r
        } else {
            lo + r
        }
    } else {
        x
    }
}

impl Plane<'_> {
    /// Index `i` of dimension `d` after the padding rule, or None for a zero.
    fn index(&self, d: usize, i: i64) -> Option<usize> {
        let n = self.dims[d] as i64;
        match self.pad {
            Pad::Zeros => (0..n).contains(&i).then_some(i as usize),
            Pad::Border => Some(i.clamp(0, n - 1) as usize),
            Pad::Reflection => {
                Some((reflect(i as f64, self.lo[d], self.hi[d]) as i64).clamp(0, n - 1) as usize)
            }
        }
    }

    /// The element at integer coordinates `idx` (each after the padding rule).
    fn pixel(&self, idx: &[i64]) -> f32 {
        let mut at = 0;
        for (d, &i) in idx.iter().enumerate() {
            match self.index(d, i) {
                Some(i) => at = at * self.dims[d] + i,
                None => return 0.0,
            }
        }
        self.data[at] as f32
    }

    /// Interpolation over dimensions `d..` at `x`, the dimensions before fixed at `fixed`.
    fn interp(&self, x: &[f32], d: usize, fixed: &mut Vec<i64>, cubic: bool) -> f32 {
        let x0 = x[d].floor();
        let t = x[d] - x0;
        let (first, coeffs): (i64, Vec<f32>) = match cubic {
            false => (x0 as i64, vec![1.0 - t.abs(), t.abs()]),
            true => (x0 as i64 - 1, cubic_coeffs(t)),
        };
        let mut acc = 0.0f32;
        for (k, c) in coeffs.iter().enumerate() {
            let i = first + k as i64;
            let v = if d + 1 == self.dims.len() {
                fixed.push(i);
                let v = self.pixel(fixed);
                fixed.pop();
                v
            } else {
                // A row outside (zeros padding) contributes nothing.
                match self.index(d, i) {
                    None => 0.0,
                    Some(_) => {
                        fixed.push(i);
                        let v = self.interp(x, d + 1, fixed, cubic);
                        fixed.pop();
                        v
                    }
                }
            };
            acc += c * v;
        }
        acc
    }
}

/// Keys' cubic convolution coefficients (a = -0.75) of the four taps around `t`.
fn cubic_coeffs(t: f32) -> Vec<f32> {
    let a = -0.75f32;
    let x = t.abs();
    vec![
        ((a * (x + 1.0) - 5.0 * a) * (x + 1.0) + 8.0 * a) * (x + 1.0) - 4.0 * a,
        ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0,
        ((a + 2.0) * (1.0 - x) - (a + 3.0)) * (1.0 - x) * (1.0 - x) + 1.0,
        ((a * (2.0 - x) - 5.0 * a) * (2.0 - x) + 8.0 * a) * (2.0 - x) - 4.0 * a,
    ]
}

/// GridSample; None for other operators.
pub(super) fn eval(
    n: &Node,
    x: &HostVal,
    ins: &[Option<HostVal>],
) -> Option<Result<HostVal, String>> {
    (n.op_type == "GridSample").then(|| run(n, x, ins.get(1).and_then(Option::as_ref)))
}

fn run(n: &Node, x: &HostVal, grid: Option<&HostVal>) -> Result<HostVal, String> {
    let grid = grid.ok_or("input 1 (grid) is missing")?;
    if x.elem != dtype::FLOAT || grid.elem != dtype::FLOAT {
        return Err("GridSample of float tensors only".into());
    }
    let text = |k: &str, d: &str| match n.attr(k) {
        Some(AttrValue::Text(t)) => t.clone(),
        _ => d.to_string(),
    };
    let mode = match text("mode", "linear").as_str() {
        "nearest" => Mode::Nearest,
        "linear" | "bilinear" => Mode::Linear,
        "cubic" | "bicubic" => Mode::Cubic,
        m => return Err(format!("mode {m:?} (nearest, linear or cubic)")),
    };
    let pad = match text("padding_mode", "zeros").as_str() {
        "zeros" => Pad::Zeros,
        "border" => Pad::Border,
        "reflection" => Pad::Reflection,
        p => return Err(format!("padding_mode {p:?} (zeros, border or reflection)")),
    };
    let align = n.attr_int("align_corners", 0) != 0;
    let r = x.dims.len();
    let k = r.saturating_sub(2);
    let gd = &grid.dims;
    if r < 3 || gd.len() != r || gd[0] != x.dims[0] || gd[r - 1] != k {
        return Err(format!(
            "input {:?} and grid {gd:?}: the grid must be [N, output dims (one per input spatial dimension), {k}]",
            x.dims
        ));
    }
    let (nb, c) = (x.dims[0], x.dims[1]);
    let dims = &x.dims[2..];
    if dims.contains(&0) {
        return Err(format!("an input of shape {:?}: nothing to sample", x.dims));
    }
    let vol: usize = dims.iter().product();
    let points: usize = gd[1..r - 1].iter().product();
    let (lo, hi): (Vec<f64>, Vec<f64>) = dims
        .iter()
        .map(|&d| match align {
            true => (0.0, d as f64 - 1.0),
            false => (-0.5, d as f64 - 0.5),
        })
        .unzip();
    let mut out = Vec::with_capacity(nb * c * points);
    for b in 0..nb {
        for ch in 0..c {
            let plane = Plane {
                data: &x.data[(b * c + ch) * vol..(b * c + ch + 1) * vol],
                dims,
                pad,
                lo: lo.clone(),
                hi: hi.clone(),
            };
            for p in 0..points {
                let g = &grid.data[(b * points + p) * k..(b * points + p + 1) * k];
                let mut xs: Vec<f32> = (0..k)
                    .map(|i| {
                        let (v, len) = (g[k - 1 - i] as f32, dims[i] as f32);
                        match align {
                            true => (v + 1.0) / 2.0 * (len - 1.0),
                            false => ((v + 1.0) * len - 1.0) / 2.0,
                        }
                    })
                    .collect();
                if mode == Mode::Nearest {
                    for v in &mut xs {
                        *v = v.round_ties_even();
                    }
                }
                for (i, v) in xs.iter_mut().enumerate() {
                    let f = f64::from(*v);
                    if f < lo[i] || f > hi[i] {
                        match pad {
                            Pad::Border => *v = v.clamp(0.0, dims[i] as f32 - 1.0),
                            Pad::Reflection => *v = reflect(f, lo[i], hi[i]) as f32,
                            Pad::Zeros => {}
                        }
                    }
                }
                let v = match mode {
                    Mode::Nearest => {
                        let idx: Vec<i64> = xs.iter().map(|&v| v as i64).collect();
                        plane.pixel(&idx)
                    }
                    Mode::Linear => plane.interp(&xs, 0, &mut Vec::new(), false),
                    Mode::Cubic => plane.interp(&xs, 0, &mut Vec::new(), true),
                };
                out.push(f64::from(v));
            }
        }
    }
    let mut odims = vec![nb, c];
    odims.extend_from_slice(&gd[1..r - 1]);
    Ok(HostVal::float(odims, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::proto::Attribute;

    /// By hand, the 2x2 input [[1, 2], [3, 4]] with align_corners: the centre (0, 0) is
    /// the mean, 2.5, linearly; the corner (-1, -1) is 1; (x, y) = (1, -1) is the top right,
    /// 2; nearest at (x, y) = (-0.2, 0.2) is row 0.6 and column 0.4 rounded, (1, 0): 3; a
    /// point outside with zeros padding is 0 in nearest mode.
    #[test]
    fn a_2x2_input_by_hand() {
        let x = HostVal::float(vec![1, 1, 2, 2], vec![1.0, 2.0, 3.0, 4.0]);
        let run = |mode: &str, pts: &[f64]| {
            let n = Node {
                op_type: "GridSample".into(),
                attributes: vec![
                    Attribute {
                        name: "align_corners".into(),
                        value: AttrValue::Int(1),
                    },
                    Attribute {
                        name: "mode".into(),
                        value: AttrValue::Text(mode.into()),
                    },
                ],
                ..Node::default()
            };
            let g = HostVal::float(vec![1, 1, pts.len() / 2, 2], pts.to_vec());
            run(&n, &x, Some(&g)).unwrap().data
        };
        assert_eq!(
            run("linear", &[0.0, 0.0, -1.0, -1.0, 1.0, -1.0]),
            vec![2.5, 1.0, 2.0]
        );
        assert_eq!(run("nearest", &[-0.2, 0.2, 3.0, 0.0]), vec![3.0, 0.0]);
        // An empty spatial dimension is refused, not clamped into (a panic before).
        let empty = HostVal::float(vec![1, 1, 0, 2], vec![]);
        let g = HostVal::float(vec![1, 1, 1, 2], vec![0.0, 0.0]);
        let e = run_on(&empty, &g).unwrap_err();
        assert!(e.contains("nothing to sample"), "{e}");
    }

    fn run_on(x: &HostVal, g: &HostVal) -> Result<HostVal, String> {
        let n = Node {
            op_type: "GridSample".into(),
            attributes: vec![Attribute {
                name: "padding_mode".into(),
                value: AttrValue::Text("border".into()),
            }],
            ..Node::default()
        };
        run(&n, x, Some(g))
    }
}
