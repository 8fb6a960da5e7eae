//! One hwgen layer from one quantized ONNX operator: weights reordered to hwgen's layout,
//! zero points folded into the bias, the float scale turned into the hardware's
//! requantization, and the error of that requantization stated.

use std::fmt::Write;

/// A quantized activation tensor: a hwgen tensor and its ONNX quantization.
#[derive(Clone, Debug)]
pub struct QTensor {
    /// The hwgen tensor (model input or layer) holding it.
    pub name: String,
    pub scale: f64,
    pub zero_point: i64,
    pub signed: bool,
    /// [h, w, c] of the hwgen tensor.
    pub shape: [usize; 3],
    /// How ONNX holds it.
    pub layout: Layout,
}

/// How ONNX holds a tensor that hwgen stores as `[h, w, c]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// A feature map `[1, C, H, W]`.
    #[default]
    Map,
    /// Flattened (Flatten/Reshape to `[1, h*w*c]`, a Gemm's output): ONNX orders its
    /// elements c, y, x.
    Flat,
    /// A sequence `[1, S, D]` of S tokens of D values: hwgen's `[S, 1, D]`, in the same
    /// element order (or a map's `[h, w, D]`, its h*w pixels the tokens: ViT's patches).
    Seq,
    /// Channels first, `[1, D, S]`: a map's pixels as tokens (a Reshape of `[1, C, H, W]`
    /// to `[1, C, H*W]`, which a Transpose makes a `Seq`), the same storage.
    SeqT,
    /// A sequence split into heads, `[1, S, H, D/H]` (a Reshape of `Seq`): the same
    /// storage and element order.
    Split(usize),
    /// Heads first, `[1, H, S, D/H]` (attention's queries, values, scores and
    /// probabilities): hwgen keeps `[S, 1, D]`, the heads side by side in the channels.
    Heads(usize),
    /// Heads first and transposed, `[1, H, D/H, S]` (attention's keys as the scores'
    /// second operand), the same storage.
    HeadsT(usize),
    /// Attention's scores or probabilities `[1, H, S, T]` whose T keys per head do not
    /// fill the design's channel tiles: hwgen keeps `[S, 1, H * T']`, each head's keys
    /// padded to T' (a whole number of tiles); the padding is no ONNX element.
    Keys { heads: usize, keys: usize },
}

impl Layout {
    /// The layout of ONNX dims `dims` (a leading batch of 1) and hwgen's `[h, w, c]` for
    /// it; None for another rank or batch.
    pub fn of_dims(dims: &[usize]) -> Option<(Layout, [usize; 3])> {
        match dims {
            [1, c, h, w] => Some((Layout::Map, [*h, *w, *c])),
            [1, s, d] => Some((Layout::Seq, [*s, 1, *d])),
            [1, k] => Some((Layout::Flat, [1, 1, *k])),
            _ => None,
        }
    }

    /// The ONNX dims of a tensor of hwgen shape `[h, w, c]`.
    pub fn onnx_dims(self, [h, w, c]: [usize; 3]) -> Vec<usize> {
        let s = h * w;
        match self {
            Layout::Map => vec![1, c, h, w],
            Layout::Flat => vec![1, h * w * c],
            Layout::Seq => vec![1, s, c],
            Layout::SeqT => vec![1, c, s],
            Layout::Split(n) => vec![1, s, n, c / n],
            Layout::Heads(n) => vec![1, n, s, c / n],
            Layout::HeadsT(n) => vec![1, n, c / n, s],
            Layout::Keys { heads, keys } => vec![1, heads, s, keys],
        }
    }

    /// Channel `ch` of a tensor of shape `[h, w, c]` is padding, no ONNX element.
    pub fn is_padding(self, [_, _, c]: [usize; 3], ch: usize) -> bool {
        match self {
            Layout::Keys { heads, keys } => ch % (c / heads) >= keys,
            _ => false,
        }
    }

    /// The ONNX coordinates (in `onnx_dims`) of hwgen's element (y, x, ch) of a tensor of
    /// shape `[h, w, c]`.
    pub fn onnx_coords(self, [h, w, c]: [usize; 3], y: usize, x: usize, ch: usize) -> Vec<usize> {
        let t = y * w + x;
        match self {
            Layout::Map => vec![0, ch, y, x],
            Layout::Flat => vec![0, (ch * h + y) * w + x],
            Layout::Seq => vec![0, t, ch],
            Layout::SeqT => vec![0, ch, t],
            Layout::Split(n) => vec![0, t, ch / (c / n), ch % (c / n)],
            Layout::Heads(n) => vec![0, ch / (c / n), t, ch % (c / n)],
            Layout::HeadsT(n) => vec![0, ch / (c / n), ch % (c / n), t],
            // (Padding's key index is past the keys: callers skip it, `is_padding`.)
            Layout::Keys { heads, .. } => vec![0, ch / (c / heads), t, ch % (c / heads)],
        }
    }

    /// Where hwgen's element (y, x, ch) of a tensor of shape `[h, w, c]` sits in ONNX's
    /// element order.
    pub fn onnx_index(self, shape: [usize; 3], y: usize, x: usize, ch: usize) -> usize {
        let dims = self.onnx_dims(shape);
        self.onnx_coords(shape, y, x, ch)
            .iter()
            .zip(&dims)
            .fold(0, |at, (&i, &d)| at * d + i)
    }
}

/// The 8-bit activation type (ONNX's int8 or uint8) an importer's tensor holds.
pub fn act_type(signed: bool) -> crate::numeric::int::IntType {
    crate::numeric::int::IntType::new(signed, 8)
}

/// The hardware's requantization of a float scale: `multiplier / 2^shift`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Requant {
    pub multiplier: u64,
    pub shift: u32,
}

impl Requant {
    /// The closest `multiplier / 2^shift` to `scale`: the largest shift whose rounded
    /// multiplier still fits the vector instruction's multiplier field (16 bits: the
    /// multiplier keeps 16 significant bits, a relative error of at most 2^-16), or None
    /// when the scale rounds above the largest multiplier.
    pub fn of(scale: f64) -> Option<Requant> {
        let (max_m, max_shift) = crate::isa::requant_limits();
        let max_m = max_m as f64;
        if !(scale.is_finite() && scale > 0.0) || scale.round() > max_m {
            return None;
        }
        let mut best = Requant {
            multiplier: scale.round() as u64,
            shift: 0,
        };
        for shift in 1..=max_shift {
            let m = (scale * 2f64.powi(shift as i32)).round();
            if m > max_m {
                break;
            }
            best = Requant {
                multiplier: m as u64,
                shift,
            };
        }
        Some(best)
    }

    /// [`Requant::of`], or the rule `scale` (called `what`) breaks.
    pub fn checked(scale: f64, what: &str) -> Result<Requant, String> {
        Requant::of(scale).ok_or_else(|| {
            let max = crate::isa::requant_limits().0 as f64 + 0.5;
            format!("{what} = {scale} is not a positive number below {max}")
        })
    }

    pub fn value(&self) -> f64 {
        self.multiplier as f64 / 2f64.powi(self.shift as i32)
    }
}

/// A convolution or fully-connected layer as the importer builds it.
pub struct Layer {
    pub name: String,
    pub op: &'static str,
    pub input: String,
    /// (key, TOML value) in order.
    pub keys: Vec<(&'static str, String)>,
    /// The ONNX node it came from and how its numbers were mapped, for the report.
    pub note: String,
}

impl Layer {
    pub fn toml(&self, out: &mut String) {
        out.push('\n');
        for line in self.note.lines() {
            let _ = writeln!(out, "# {line}");
        }
        let _ = writeln!(
            out,
            "[[layer]]\nname = \"{}\"\nop = \"{}\"",
            self.name, self.op
        );
        // A concat names its operands in `inputs` instead.
        if !self.input.is_empty() {
            let _ = writeln!(out, "input = \"{}\"", self.input);
        }
        for (k, v) in &self.keys {
            let _ = writeln!(out, "{k} = {v}");
        }
    }
}

/// Geometry of a convolution in hwgen's terms (square kernel, one stride, one padding).
#[derive(Clone, Copy, Debug)]
pub struct ConvGeom {
    pub k: usize,
    pub stride: usize,
    pub pad: usize,
    pub groups: usize,
}

impl ConvGeom {
    pub fn out(&self, i: usize) -> usize {
        (i + 2 * self.pad - self.k) / self.stride + 1
    }
}

/// ONNX Conv weights [cout, cin/g, kh, kw] as hwgen's [kh, kw, cin/g, cout].
pub fn conv_weights(w: &[f64], cout: usize, cin_g: usize, k: usize) -> Vec<i64> {
    let mut out = vec![0; w.len()];
    for o in 0..cout {
        for i in 0..cin_g {
            for ky in 0..k {
                for kx in 0..k {
                    let src = ((o * cin_g + i) * k + ky) * k + kx;
                    out[((ky * k + kx) * cin_g + i) * cout + o] = w[src] as i64;
                }
            }
        }
    }
    out
}

/// Gemm/MatMul weights as hwgen's fc weights [h*w*c, cout]. `rows` is ONNX's [K, N]
/// (or [N, K] when `trans`); a flattened map's K runs c, y, x in ONNX and y, x, c in hwgen.
pub fn fc_weights(b: &[f64], trans: bool, input: [usize; 3], layout: Layout, n: usize) -> Vec<i64> {
    let [h, w, c] = input;
    let k = h * w * c;
    let mut out = vec![0; k * n];
    for y in 0..h {
        for x in 0..w {
            for ch in 0..c {
                let hw_row = (y * w + x) * c + ch;
                let onnx_row = if layout == Layout::Flat {
                    layout.onnx_index(input, y, x, ch)
                } else {
                    hw_row
                };
                for o in 0..n {
                    let v = if trans {
                        b[o * k + onnx_row]
                    } else {
                        b[onnx_row * n + o]
                    };
                    out[hw_row * n + o] = v as i64;
                }
            }
        }
    }
    out
}

/// The bias with the input zero point folded in: ONNX computes sum((x - zx) * w) with the
/// padding at zx (padded inputs contribute nothing); hwgen sums x * w with its padding
/// reading the layer's `pad_value`, which the importer sets to zx. So every output pixel
/// of channel o needs bias[o] - zx * (the sum of o's weights over all taps), one per
/// channel, exact.
pub fn fold_zero_point(bias: &[i64], w_hwc: &[i64], cout: usize, zx: i64) -> Vec<i64> {
    (0..cout)
        .map(|o| {
            // Saturating: a weight or bias out of its type's range (a malformed model) gives
            // a value the accumulator check then refuses, not an overflow.
            let s = w_hwc
                .iter()
                .skip(o)
                .step_by(cout)
                .fold(0i64, |a, w| a.saturating_add(*w));
            bias[o].saturating_sub(zx.saturating_mul(s))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requant_keeps_sixteen_bits() {
        // 0.1 = 52429 / 2^19 (52428.8 rounded); 3.0 = 49152 / 2^14; 65535 exactly.
        assert_eq!(
            Requant::of(0.1),
            Some(Requant {
                multiplier: 52429,
                shift: 19
            })
        );
        assert_eq!(
            Requant::of(3.0),
            Some(Requant {
                multiplier: 49152,
                shift: 14
            })
        );
        assert_eq!(Requant::of(65535.0).map(|r| r.shift), Some(0));
        assert_eq!(Requant::of(65536.0), None);
        assert_eq!(Requant::of(0.0), None);
        let r = Requant::of(0.000123).unwrap();
        assert!((r.value() / 0.000123 - 1.0).abs() < 2f64.powi(-16));
    }

    /// Two channels of a 3x3 kernel over one input channel: the weights of channel 0 sum
    /// to 9 (all ones), of channel 1 to -9 + 2 = -7 (all -1 but one 1); with zero point 3
    /// the biases 10 and 20 become 10 - 27 and 20 + 21, whatever the padding (the padding
    /// reads the zero point).
    #[test]
    fn zero_point_fold_sums_every_tap() {
        let mut w = Vec::new();
        for t in 0..9 {
            w.extend([1, if t == 4 { 1 } else { -1 }]);
        }
        assert_eq!(fold_zero_point(&[10, 20], &w, 2, 3), vec![-17, 41]);
        assert_eq!(fold_zero_point(&[10, 20], &w, 2, 0), vec![10, 20]);
    }

    #[test]
    fn weights_reorder() {
        // cout 2, cin 1, k 1: ONNX [2,1,1,1] = [a, b] -> hwgen [1,1,1,2] = [a, b].
        assert_eq!(conv_weights(&[5.0, -6.0], 2, 1, 1), vec![5, -6]);
        // A flattened 1x2x2 map (c=2? no: h=1, w=2, c=2): ONNX rows (c, x) = 0:(0,0) 1:(0,1)
        // 2:(1,0) 3:(1,1); hwgen rows (x, c): 0:(0,0) 1:(0,1)->ONNX 2, 2:(1,0)->ONNX 1.
        let b = [10.0, 11.0, 12.0, 13.0];
        assert_eq!(
            fc_weights(&b, false, [1, 2, 2], Layout::Flat, 1),
            vec![10, 12, 11, 13]
        );
        assert_eq!(
            fc_weights(&b, true, [1, 2, 2], Layout::Map, 1),
            vec![10, 11, 12, 13]
        );
    }
}
