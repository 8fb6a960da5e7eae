//! Piecewise-quadratic functions of FP32 values: the row unit's function stage (softmax's
//! exponent, GELU, SiLU, sigmoid, tanh). A [`Spline`] has [`SEGMENTS`] segments split at
//! `SEGMENTS - 1` increasing knots; segment j holds the x with exactly j knots at or
//! below x, and evaluates `(a x + b) x + c` in FP32 under the contract (`fp32::mul` and
//! `fp32::add`, each rounded once), so the golden model, the interpreter and the RTL agree
//! bit for bit. The tables ride in parameter rows ([`Spline::words`]: the knots, then a, b,
//! c of every segment).
//!
//! How the tables are derived ([`Spline::fit`]): the function's two outer segments are its
//! asymptotes (given by the caller: a constant, or x); the 14 inner ones cover [k1, k15]
//! and are each the minimax quadratic over 257 Chebyshev points of its interval (Lawson's
//! iteration of weighted least squares, computed in f64, the coefficients then rounded to
//! f32); the knots start evenly spaced and are moved 40 times, each segment's width scaled
//! by (mean error / its error)^(1/3) (a quadratic's error grows as the cube of its width),
//! which evens out the segments' largest errors. exp2 on [0, 1) (the exponent's fraction)
//! uses 16 even segments and no asymptotes.

use super::fp32;

/// Segments of every spline (Voyager uses seven: sixteen make GELU's largest error 1.6e-4
/// instead of 2.8e-3 at eight, for 15 comparators a lane instead of 7).
pub const SEGMENTS: usize = 16;

/// FP32 words a table uses: the knots, then three coefficients per segment.
pub const USED: usize = SEGMENTS - 1 + 3 * SEGMENTS;

/// FP32 words of a table in accumulator rows: `USED`, padded to a power of two.
pub const WORDS: usize = USED.next_power_of_two();

/// A piecewise quadratic in FP32 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spline {
    pub knots: [u32; SEGMENTS - 1],
    /// (a, b, c) of each segment.
    pub coeffs: [[u32; 3]; SEGMENTS],
}

/// What a spline's outer segments are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tail {
    /// y = c.
    Constant(f64),
    /// y = x.
    Identity,
}

impl Tail {
    fn coeffs(self) -> [f64; 3] {
        match self {
            Tail::Constant(c) => [0.0, 0.0, c],
            Tail::Identity => [0.0, 1.0, 0.0],
        }
    }
}

fn f32_bits(v: f64) -> u32 {
    (v as f32).to_bits()
}

impl Spline {
    /// The segment of x: how many knots are at or below it (NaN: none).
    pub fn segment(&self, x: u32) -> usize {
        let v = f32::from_bits(fp32::flush(x));
        self.knots
            .iter()
            .filter(|k| v >= f32::from_bits(**k))
            .count()
    }

    /// `(a x + b) x + c` of x's segment, each operation rounded under the FP32 contract.
    pub fn eval(&self, x: u32) -> u32 {
        let [a, b, c] = self.coeffs[self.segment(x)];
        fp32::add(fp32::mul(fp32::add(fp32::mul(a, x), b), x), c)
    }

    /// The table in the order the parameter rows hold it: the knots, then a, b, c of every
    /// segment, then zeros.
    pub fn words(&self) -> [u32; WORDS] {
        let mut w = [0u32; WORDS];
        let body = self
            .knots
            .iter()
            .copied()
            .chain(self.coeffs.iter().flatten().copied());
        for (slot, v) in w.iter_mut().zip(body) {
            *slot = v;
        }
        w
    }

    /// The inverse of [`Spline::words`].
    pub fn from_words(w: &[u32]) -> Spline {
        let mut s = Spline {
            knots: [0; SEGMENTS - 1],
            coeffs: [[0; 3]; SEGMENTS],
        };
        for (k, v) in s.knots.iter_mut().zip(w) {
            *k = *v;
        }
        for (j, seg) in s.coeffs.iter_mut().enumerate() {
            for (i, c) in seg.iter_mut().enumerate() {
                *c = w.get(SEGMENTS - 1 + 3 * j + i).copied().unwrap_or(0);
            }
        }
        s
    }

    /// The spline of `f` with asymptotes `left` (below the first knot) and `right` (at and
    /// above the last) and `SEGMENTS - 2` fitted segments over [lo, hi] at first (see the
    /// module).
    pub fn fit(f: &dyn Fn(f64) -> f64, (lo, hi): (f64, f64), left: Tail, right: Tail) -> Spline {
        let inner = SEGMENTS - 2;
        let mut edges: Vec<f64> = (0..=inner)
            .map(|i| lo + (hi - lo) * i as f64 / inner as f64)
            .collect();
        for _ in 0..40 {
            let errors: Vec<f64> = edges
                .windows(2)
                .map(|w| segment_error(f, w[0], w[1], &minimax(f, w[0], w[1])))
                .collect();
            let mean = errors.iter().sum::<f64>() / errors.len() as f64;
            if mean == 0.0 {
                break;
            }
            let widths: Vec<f64> = edges
                .windows(2)
                .zip(&errors)
                .map(|(w, e)| (w[1] - w[0]) * (mean / e.max(1e-300)).cbrt())
                .collect();
            let total: f64 = widths.iter().sum();
            let mut at = lo;
            for (i, w) in widths.iter().enumerate() {
                at += w * (hi - lo) / total;
                if i + 1 < inner {
                    edges[i + 1] = at;
                }
            }
        }
        // The knots rounded to f32 first, so that each segment is fitted to the interval
        // it evaluates.
        let edges: Vec<f64> = edges.iter().map(|e| f64::from(*e as f32)).collect();
        let mut coeffs = vec![left.coeffs()];
        coeffs.extend(edges.windows(2).map(|w| minimax(f, w[0], w[1])));
        coeffs.push(right.coeffs());
        Spline::from_f64(&edges, &coeffs)
    }

    /// A spline of `SEGMENTS` even segments over [lo, hi): the first covers everything below
    /// lo + h, the last everything from hi - h.
    pub fn even(f: &dyn Fn(f64) -> f64, (lo, hi): (f64, f64)) -> Spline {
        let h = (hi - lo) / SEGMENTS as f64;
        let edges: Vec<f64> = (0..=SEGMENTS).map(|i| lo + h * i as f64).collect();
        let coeffs: Vec<[f64; 3]> = edges.windows(2).map(|w| minimax(f, w[0], w[1])).collect();
        Spline::from_f64(&edges[1..SEGMENTS], &coeffs)
    }

    fn from_f64(knots: &[f64], coeffs: &[[f64; 3]]) -> Spline {
        let mut s = Spline {
            knots: [0; SEGMENTS - 1],
            coeffs: [[0; 3]; SEGMENTS],
        };
        for (k, v) in s.knots.iter_mut().zip(knots) {
            *k = f32_bits(*v);
        }
        for (seg, c) in s.coeffs.iter_mut().zip(coeffs) {
            *seg = c.map(f32_bits);
        }
        s
    }
}

/// 257 Chebyshev points of [l, r].
fn nodes(l: f64, r: f64) -> impl Iterator<Item = f64> {
    (0..257).map(move |i| {
        let t = (std::f64::consts::PI * (i as f64 + 0.5) / 257.0).cos();
        0.5 * (l + r) + 0.5 * (r - l) * t
    })
}

/// The quadratic (a, b, c) of f over [l, r] with the smallest largest error on the nodes,
/// approached by Lawson's iteration: weighted least squares (normal equations on centred
/// x), each node's weight then multiplied by its error, 30 times.
fn minimax(f: &dyn Fn(f64) -> f64, l: f64, r: f64) -> [f64; 3] {
    let m = 0.5 * (l + r);
    let pts: Vec<(f64, f64)> = nodes(l, r).map(|x| (x - m, f(x))).collect();
    let scale = pts.iter().fold(1.0f64, |m, (_, y)| m.max(y.abs()));
    let mut w = vec![1.0f64; pts.len()];
    // The best fit so far: its largest error and coefficients.
    let mut best = (f64::INFINITY, [0.0f64; 3]);
    for _ in 0..30 {
        let c = weighted_fit(&pts, &w);
        let err: Vec<f64> = pts
            .iter()
            .map(|(u, y)| (y - (c[0] + c[1] * u + c[2] * u * u)).abs())
            .collect();
        let worst = err.iter().fold(0.0f64, |m, e| m.max(*e));
        if !worst.is_finite() {
            break;
        }
        if worst < best.0 {
            best = (worst, c);
        }
        let total: f64 = w.iter().zip(&err).map(|(w, e)| w * e).sum();
        // (A fit exact to rounding is done: its weights would only degenerate.)
        if worst <= 1e-12 * scale || total == 0.0 {
            break;
        }
        for (wi, e) in w.iter_mut().zip(&err) {
            *wi *= e / total;
        }
    }
    let [c0, c1, c2] = best.1;
    // c0 + c1 (x - m) + c2 (x - m)^2 = c2 x^2 + (c1 - 2 m c2) x + (c0 - m c1 + m^2 c2).
    [c2, c1 - 2.0 * m * c2, c0 - m * c1 + m * m * c2]
}

/// The weighted least-squares quadratic c0 + c1 u + c2 u^2 of the points (u, y) (normal
/// equations, Cramer's rule).
fn weighted_fit(pts: &[(f64, f64)], w: &[f64]) -> [f64; 3] {
    let mut s = [0.0f64; 5];
    let mut t = [0.0f64; 3];
    for (&(u, y), &wi) in pts.iter().zip(w) {
        let mut p = wi;
        for (k, sk) in s.iter_mut().enumerate() {
            *sk += p;
            if k < 3 {
                t[k] += p * y;
            }
            p *= u;
        }
    }
    let det3 = |a: [[f64; 3]; 3]| {
        a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
            - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
            + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
    };
    let a = [[s[0], s[1], s[2]], [s[1], s[2], s[3]], [s[2], s[3], s[4]]];
    let d = det3(a);
    let solve = |col: usize| {
        let mut b = a;
        for (row, v) in b.iter_mut().zip(t) {
            row[col] = v;
        }
        det3(b) / d
    };
    [solve(0), solve(1), solve(2)]
}

/// The largest |f(x) - q(x)| over [l, r], on 257 points.
fn segment_error(f: &dyn Fn(f64) -> f64, l: f64, r: f64, q: &[f64; 3]) -> f64 {
    (0..=256)
        .map(|i| l + (r - l) * i as f64 / 256.0)
        .map(|x| (f(x) - ((q[0] * x + q[1]) * x + q[2])).abs())
        .fold(0.0, f64::max)
}

/// The error function in double precision (its Taylor series below 3, a continued fraction
/// of the complement above; better than 1e-13 everywhere): the GELU tables are fitted to
/// it. (Rust's standard library has no erf.)
pub fn erf(x: f64) -> f64 {
    let t = x.abs();
    let r = if t < 3.0 {
        let (mut sum, mut term, mut n) = (t, t, 0.0);
        loop {
            n += 1.0;
            term *= -t * t / n;
            let add = term / (2.0 * n + 1.0);
            sum += add;
            if add.abs() < 1e-17 {
                break;
            }
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else {
        let mut f = 0.0;
        for k in (1..60).rev() {
            f = (k as f64 / 2.0) / (t + f);
        }
        1.0 - (-t * t).exp() / std::f64::consts::PI.sqrt() / (t + f)
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// 2^f on [0, 1): the exponent's fraction (`SEGMENTS` even segments).
pub fn exp2_table() -> Spline {
    Spline::even(&|x: f64| x.exp2(), (0.0, 1.0))
}

/// log2(e) rounded to f32.
pub const LOG2_E: u32 = 0x3fb8_aa3b;

/// e^x under the contract: t = x log2(e) (rounded), n = floor(t), f = t - n (exact), and
/// 2^f from the exp2 spline times 2^n (exact; below the normal range zero, above it
/// infinity). NaN gives NaN, -infinity 0, +infinity infinity.
pub fn exp(x: u32, exp2: &Spline) -> u32 {
    let t = fp32::mul(fp32::flush(x), LOG2_E);
    let v = f32::from_bits(t);
    if v.is_nan() {
        return fp32::CANONICAL_NAN;
    }
    if v >= 128.0 {
        return 0x7f80_0000;
    }
    if v < -150.0 {
        return 0;
    }
    let n = v.floor();
    let frac = fp32::sub(t, n.to_bits());
    ldexp(exp2.eval(frac), n as i32)
}

/// p * 2^n for a normal p (or zero), exactly: below the normal range a zero of its sign,
/// above it infinity.
pub fn ldexp(p: u32, n: i32) -> u32 {
    let e = ((p >> 23) & 0xff) as i32;
    if e == 0 || e == 0xff {
        return fp32::flush(p);
    }
    let sign = p & 0x8000_0000;
    match e + n {
        k if k <= 0 => sign,
        k if k >= 0xff => sign | 0x7f80_0000,
        k => sign | ((k as u32) << 23) | (p & 0x007f_ffff),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f32) -> u32 {
        x.to_bits()
    }

    /// Segments by hand: below the first knot 0, at a knot the next one.
    #[test]
    fn segments_by_hand() {
        let s = Spline::even(&|x| x, (0.0, 16.0));
        assert_eq!(s.segment(f(-5.0)), 0);
        assert_eq!(s.segment(f(0.99)), 0);
        assert_eq!(s.segment(f(1.0)), 1);
        assert_eq!(s.segment(f(7.5)), 7);
        assert_eq!(s.segment(f(100.0)), 15);
        assert_eq!(s.segment(fp32::CANONICAL_NAN), 0);
    }

    /// A quadratic is fitted exactly: x^2 - 3x + 1 on every segment, so (with coefficients
    /// and arithmetic exact on these small integers) the spline gives it back exactly.
    #[test]
    fn a_quadratic_is_reproduced() {
        let q = |x: f64| x * x - 3.0 * x + 1.0;
        let s = Spline::even(&q, (-4.0, 4.0));
        for x in [-7.0f32, -2.0, 0.0, 1.0, 3.0, 6.0] {
            assert_eq!(f32::from_bits(s.eval(f(x))), q(f64::from(x)) as f32, "{x}");
        }
    }

    /// The words round-trip.
    #[test]
    fn words_round_trip() {
        let s = exp2_table();
        assert_eq!(Spline::from_words(&s.words()), s);
    }

    /// exp by hand: e^0 = 1 (t = 0, f = 0: 2^0 from the first segment, within its error of
    /// 1), e^-infinity = 0, e^+infinity = infinity, NaN; ldexp's range.
    #[test]
    fn exp_and_ldexp_by_hand() {
        let t = exp2_table();
        let one = f32::from_bits(exp(0, &t));
        assert!((one - 1.0).abs() < 1e-5, "{one}");
        assert_eq!(exp(f(f32::NEG_INFINITY), &t), 0);
        assert_eq!(exp(f(f32::INFINITY), &t), 0x7f80_0000);
        assert_eq!(exp(fp32::CANONICAL_NAN, &t), fp32::CANONICAL_NAN);
        assert_eq!(ldexp(f(1.5), 3), f(12.0));
        assert_eq!(ldexp(f(1.5), -126), f(1.5 * 2f32.powi(-126)));
        assert_eq!(ldexp(f(1.5), -127), 0);
        assert_eq!(ldexp(f(-1.5), 128), 0xff80_0000);
    }
}
