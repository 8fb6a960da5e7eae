//! The host's side of running an imported model: the float input quantized as the graph's
//! QuantizeLinear does it, and each output written as the graph declares it (dequantized
//! as its DequantizeLinear does it, or as integers).

use super::hostops::HostVal;
use super::proto::dtype;
use super::{InputQuant, OutputQuant};
use crate::model::npy;

/// The float input (`[1, C, H, W]`, `[1, S, D]` or `[1, K]` as the input's layout says;
/// dimensions of 1 may be left out) quantized in hwgen's layout (H, W, C): `saturate(round_half_even(x / scale) +
/// zero_point)`, in float32 as ONNX's QuantizeLinear computes it; an integer input
/// (`q.integer`) as it is. An error names the problem.
pub fn quantize_input(q: &InputQuant, shape: &[usize], data: &[f32]) -> Result<Vec<i64>, String> {
    let [h, w, c] = q.shape;
    let declared = q.layout.onnx_dims(q.shape);
    // Dimensions of 1 do not change the element order: compare the others.
    let big = |d: &[usize]| d.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    if big(shape) != big(&declared) || data.len() != c * h * w {
        return Err(format!(
            "shape {shape:?} is not the model input's {declared:?} (dimensions of 1 may be left out)"
        ));
    }
    let t = super::layer::act_type(q.signed);
    let (lo, hi) = (t.min(), t.max());
    let elem = if q.signed { dtype::INT8 } else { dtype::UINT8 };
    if q.integer {
        if let Some(k) = data
            .iter()
            .position(|&v| v.fract() != 0.0 || v < lo as f32 || v > hi as f32)
        {
            return Err(format!(
                "element {k} ({}) is not an {} value",
                data[k],
                if q.signed { "int8" } else { "uint8" }
            ));
        }
    }
    let mut out = vec![0; data.len()];
    for ch in 0..c {
        for y in 0..h {
            for x in 0..w {
                let v = data[q.layout.onnx_index(q.shape, y, x, ch)];
                if v.is_nan() {
                    return Err(format!("element ({ch}, {y}, {x}) is NaN"));
                }
                let r = if q.integer {
                    v as i64
                } else {
                    let zp = q.zero_point as f64;
                    super::hostops::quantize(f64::from(v), q.scale, zp, elem) as i64
                };
                out[(y * w + x) * c + ch] = r.clamp(lo, hi);
            }
        }
    }
    Ok(out)
}

/// A tensor the accelerator hands over, from its layer's integers (H, W, C), as the graph
/// holds it: float32 `(q - zero_point) * scale` when dequantized (as DequantizeLinear
/// computes it), else the integers; shaped as its layout says. A layer
/// that wrote its accumulator (`OutputQuant::accumulator`) gives channel c's
/// `q * scales[c]`, computed in double precision and rounded once to float32.
pub fn handoff_val(o: &OutputQuant, hwc: &[i64]) -> HostVal {
    let [h, w, c] = o.shape;
    let dims = o.layout.onnx_dims(o.shape);
    let n: usize = dims.iter().product();
    // ONNX's element k is hwgen's (y, x, ch) (padding is none).
    let mut at = vec![0; n];
    for y in 0..h {
        for x in 0..w {
            for ch in (0..c).filter(|&ch| !o.layout.is_padding(o.shape, ch)) {
                at[o.layout.onnx_index(o.shape, y, x, ch)] = (y * w + x) * c + ch;
            }
        }
    }
    let chw = |k: usize| hwc[at[k]];
    let chan = |k: usize| at[k] % c;
    let scale = o.scale as f32;
    if let Some(scales) = &o.accumulator {
        let data = (0..n)
            .map(|k| f64::from((chw(k) as f64 * scales[chan(k)]) as f32))
            .collect();
        return HostVal {
            dims,
            data,
            elem: dtype::FLOAT,
        };
    }
    if o.float {
        let data = (0..n)
            .map(|k| f64::from(((chw(k) - o.zero_point) as f32) * scale))
            .collect();
        HostVal {
            dims,
            data,
            elem: dtype::FLOAT,
        }
    } else {
        let data = (0..n).map(|k| chw(k) as f64).collect();
        HostVal {
            dims,
            data,
            elem: if o.signed { dtype::INT8 } else { dtype::UINT8 },
        }
    }
}

/// The file `hwgen run` writes graph output `name` to in its output directory: the name
/// with every character but letters, digits, `.`, `_` and `-` replaced by `_`, then `.npy`.
pub fn output_file_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.npy")
}

/// The `.npy` dtype of an ONNX element type, if hwgen reads and writes it.
pub fn npy_descr(elem: i32) -> Option<&'static str> {
    Some(match elem {
        dtype::FLOAT => "<f4",
        dtype::DOUBLE => "<f8",
        dtype::FLOAT16 => "<f2",
        // As ml_dtypes saves bfloat16 (numpy has no bfloat16 type): two raw bytes.
        dtype::BFLOAT16 => "<V2",
        // As ml_dtypes saves them: one byte (code) an element.
        dtype::FLOAT8E5M2 => "|f1",
        t if dtype::is_small(t) => "|V1",
        dtype::INT8 => "|i1",
        dtype::UINT8 => "|u1",
        dtype::BOOL => "|b1",
        dtype::INT16 => "<i2",
        dtype::UINT16 => "<u2",
        dtype::INT32 => "<i4",
        dtype::UINT32 => "<u4",
        dtype::INT64 => "<i8",
        dtype::UINT64 => "<u8",
        _ => return None,
    })
}

/// The `.npy` bytes of a host tensor in its ONNX type (float32, float64, float16, bfloat16
/// as ml_dtypes saves it, bool, or a signed or unsigned 8-, 16-, 32- or 64-bit integer).
pub fn npy_of(v: &HostVal) -> Result<Vec<u8>, String> {
    let descr =
        npy_descr(v.elem).ok_or_else(|| format!("an output of type {}", dtype::name(v.elem)))?;
    let bytes: Vec<u8> = match v.elem {
        dtype::FLOAT => v
            .data
            .iter()
            .flat_map(|&x| (x as f32).to_le_bytes())
            .collect(),
        dtype::INT8 | dtype::UINT8 | dtype::BOOL => {
            v.data.iter().map(|&x| x as i64 as u8).collect()
        }
        dtype::INT16 | dtype::UINT16 => v
            .data
            .iter()
            .flat_map(|&x| (x as i64 as u16).to_le_bytes())
            .collect(),
        dtype::INT32 | dtype::UINT32 => v
            .data
            .iter()
            .flat_map(|&x| (x as i64 as u32).to_le_bytes())
            .collect(),
        dtype::UINT64 => v
            .data
            .iter()
            .flat_map(|&x| (x as u64).to_le_bytes())
            .collect(),
        dtype::DOUBLE => v.data.iter().flat_map(|&x| x.to_le_bytes()).collect(),
        t if dtype::is_small(t) => v.data.iter().map(|&x| dtype::small_code(t, x)).collect(),
        t @ (dtype::FLOAT16 | dtype::BFLOAT16) => {
            let f = dtype::narrow_float(t).expect("a 16-bit float");
            v.data
                .iter()
                .flat_map(|&x| (dtype::float_code(f, x) as u16).to_le_bytes())
                .collect()
        }
        _ => v
            .data
            .iter()
            .flat_map(|&x| (x as i64).to_le_bytes())
            .collect(),
    };
    Ok(npy::encode(descr, &v.dims, &bytes))
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
            onnx: "x".into(),
            scale: 0.25,
            zero_point: 1,
            signed: true,
            shape: [1, 2, 2],
            layout: super::super::Layout::Map,
            integer: false,
        };
        let got = quantize_input(&q, &[1, 2, 1, 2], &[0.5, 0.375, 0.625, -100.0]).unwrap();
        // NCHW (c0: 0.5, 0.375; c1: 0.625, -100) -> HWC (x0: c0, c1; x1: c0, c1).
        assert_eq!(got, vec![3, 3, 3, -128]);
        assert!(quantize_input(&q, &[1, 4], &[0.0; 4]).is_err());
        assert!(quantize_input(&q, &[2, 2], &[f32::NAN; 4]).is_err());
    }
}
