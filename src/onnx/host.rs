//! The host's side of running an imported model: the float input quantized as the graph's
//! QuantizeLinear does it, and each output written as the graph declares it (dequantized
//! as its DequantizeLinear does it, or as integers).

use super::{InputQuant, OutputQuant};
use crate::model::npy;

/// The float input (`[1, C, H, W]` or `[C, H, W]`, or `[1, K]`/`[K]` for a flat input)
/// quantized in hwgen's layout (H, W, C): `saturate(round_half_even(x / scale) +
/// zero_point)`, in float32 as ONNX's QuantizeLinear computes it. An error names the
/// problem.
pub fn quantize_input(q: &InputQuant, shape: &[usize], data: &[f32]) -> Result<Vec<i64>, String> {
    let [h, w, c] = q.shape;
    // Dimensions of 1 do not change the element order: compare the others.
    let dims: Vec<usize> = shape.iter().copied().filter(|&d| d != 1).collect();
    let want: Vec<usize> = [c, h, w].into_iter().filter(|&d| d != 1).collect();
    if dims != want || data.len() != c * h * w {
        return Err(format!(
            "shape {shape:?} is not the model input's [1, {c}, {h}, {w}] (dimensions of 1 may be left out)"
        ));
    }
    let (lo, hi) = if q.signed { (-128, 127) } else { (0, 255) };
    let scale = q.scale as f32;
    let mut out = vec![0; data.len()];
    for ch in 0..c {
        for y in 0..h {
            for x in 0..w {
                let v = data[(ch * h + y) * w + x];
                if v.is_nan() {
                    return Err(format!("element ({ch}, {y}, {x}) is NaN"));
                }
                let r = (v / scale).round_ties_even() as i64 + q.zero_point;
                out[(y * w + x) * c + ch] = r.clamp(lo, hi);
            }
        }
    }
    Ok(out)
}

/// The `.npy` bytes of one graph output from its layer's integers (H, W, C): float32
/// `(q - zero_point) * scale` for a dequantized output, else int8/uint8; shaped `[1, C, H,
/// W]`, or `[1, K]` for a flat output.
pub fn output_npy(o: &OutputQuant, hwc: &[i64]) -> Vec<u8> {
    let [h, w, c] = o.shape;
    let chw = |k: usize| {
        let (ch, y, x) = (k / (h * w), k / w % h, k % w);
        hwc[(y * w + x) * c + ch]
    };
    let shape = if o.flat {
        vec![1, h * w * c]
    } else {
        vec![1, c, h, w]
    };
    let n = h * w * c;
    if o.float {
        let scale = o.scale as f32;
        let bytes: Vec<u8> = (0..n)
            .flat_map(|k| (((chw(k) - o.zero_point) as f32) * scale).to_le_bytes())
            .collect();
        npy::encode("<f4", &shape, &bytes)
    } else {
        let bytes: Vec<u8> = (0..n).map(|k| chw(k) as u8).collect();
        npy::encode(if o.signed { "|i1" } else { "|u1" }, &shape, &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0.5 / 0.25 = 2 + zp 1 = 3; 0.375 / 0.25 = 1.5 -> 2 (half to even) + 1 = 3;
    /// 0.625 / 0.25 = 2.5 -> 2 + 1 = 3; -100 saturates to -128; channel-major in, HWC out.
    #[test]
    fn input_rounds_half_to_even_and_saturates() {
        let q = InputQuant {
            name: "x".into(),
            scale: 0.25,
            zero_point: 1,
            signed: true,
            shape: [1, 2, 2],
        };
        let got = quantize_input(&q, &[1, 2, 1, 2], &[0.5, 0.375, 0.625, -100.0]).unwrap();
        // NCHW (c0: 0.5, 0.375; c1: 0.625, -100) -> HWC (x0: c0, c1; x1: c0, c1).
        assert_eq!(got, vec![3, 3, 3, -128]);
        assert!(quantize_input(&q, &[1, 4], &[0.0; 4]).is_err());
        assert!(quantize_input(&q, &[2, 2], &[f32::NAN; 4]).is_err());
    }
}
