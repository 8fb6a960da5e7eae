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
    /// Flattened (Flatten/Reshape to [1, h*w*c]): ONNX orders its elements c, y, x.
    pub flat: bool,
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
pub fn fc_weights(b: &[f64], trans: bool, input: [usize; 3], flat: bool, n: usize) -> Vec<i64> {
    let [h, w, c] = input;
    let k = h * w * c;
    let mut out = vec![0; k * n];
    for y in 0..h {
        for x in 0..w {
            for ch in 0..c {
                let hw_row = (y * w + x) * c + ch;
                let onnx_row = if flat { (ch * h + y) * w + x } else { hw_row };
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
/// padding at zx (padded inputs contribute nothing); hwgen sums x * w with the padding at
/// 0. So output (y, x, o) needs bias[o] - zx * (the sum of the weights whose taps fall
/// inside the input). Without padding every tap is inside and the bias stays one per
/// channel; with padding and zx != 0 the border differs, and the bias is untied (one per
/// output pixel and channel), which is exact.
/// Returns (per-channel bias, or untied bias [oh][ow][cout]).
pub fn fold_zero_point(
    bias: &[i64],
    w_hwc: &[i64],
    cin_g: usize,
    cout: usize,
    geom: ConvGeom,
    input: [usize; 2],
    zx: i64,
) -> (Vec<i64>, Option<Vec<i64>>) {
    let k = geom.k;
    let tap = |ky: usize, kx: usize, o: usize| -> i64 {
        (0..cin_g)
            .map(|i| w_hwc[((ky * k + kx) * cin_g + i) * cout + o])
            .sum()
    };
    if zx == 0 {
        return (bias.to_vec(), None);
    }
    if geom.pad == 0 {
        let b = (0..cout)
            .map(|o| {
                let s: i64 = (0..k)
                    .flat_map(|ky| (0..k).map(move |kx| (ky, kx)))
                    .map(|(ky, kx)| tap(ky, kx, o))
                    .sum();
                bias[o] - zx * s
            })
            .collect();
        return (b, None);
    }
    let [h, w] = input;
    let (oh, ow) = (geom.out(h), geom.out(w));
    let taps: Vec<i64> = (0..k * k * cout)
        .map(|t| tap(t / (k * cout), t / cout % k, t % cout))
        .collect();
    let mut ub = vec![0; oh * ow * cout];
    for oy in 0..oh {
        for ox in 0..ow {
            for o in 0..cout {
                let mut s = 0;
                for ky in 0..k {
                    let iy = (oy * geom.stride + ky) as i64 - geom.pad as i64;
                    if iy < 0 || iy >= h as i64 {
                        continue;
                    }
                    for kx in 0..k {
                        let ix = (ox * geom.stride + kx) as i64 - geom.pad as i64;
                        if ix >= 0 && ix < w as i64 {
                            s += taps[(ky * k + kx) * cout + o];
                        }
                    }
                }
                ub[(oy * ow + ox) * cout + o] = bias[o] - zx * s;
            }
        }
    }
    (vec![0; cout], Some(ub))
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

    /// A 1-channel 3x3 all-ones kernel over a 2x2 input with padding 1: the output pixels
    /// each see 4 of the 9 taps inside the input (a corner of a 2x2 map), so the folded
    /// bias is b - 4 zx everywhere; without padding (k = 1) it is b - zx.
    #[test]
    fn zero_point_fold_counts_taps_inside() {
        let geom = ConvGeom {
            k: 3,
            stride: 1,
            pad: 1,
            groups: 1,
        };
        let (b, ub) = fold_zero_point(&[10], &[1; 9], 1, 1, geom, [2, 2], 3);
        assert_eq!(b, vec![0]);
        assert_eq!(ub, Some(vec![10 - 12; 4]));
        let one = ConvGeom {
            k: 1,
            stride: 1,
            pad: 0,
            groups: 1,
        };
        assert_eq!(
            fold_zero_point(&[10], &[2], 1, 1, one, [2, 2], 3),
            (vec![4], None)
        );
    }

    #[test]
    fn weights_reorder() {
        // cout 2, cin 1, k 1: ONNX [2,1,1,1] = [a, b] -> hwgen [1,1,1,2] = [a, b].
        assert_eq!(conv_weights(&[5.0, -6.0], 2, 1, 1), vec![5, -6]);
        // A flattened 1x2x2 map (c=2? no: h=1, w=2, c=2): ONNX rows (c, x) = 0:(0,0) 1:(0,1)
        // 2:(1,0) 3:(1,1); hwgen rows (x, c): 0:(0,0) 1:(0,1)->ONNX 2, 2:(1,0)->ONNX 1.
        let b = [10.0, 11.0, 12.0, 13.0];
        assert_eq!(
            fc_weights(&b, false, [1, 2, 2], true, 1),
            vec![10, 12, 11, 13]
        );
        assert_eq!(
            fc_weights(&b, true, [1, 2, 2], false, 1),
            vec![10, 11, 12, 13]
        );
    }
}
