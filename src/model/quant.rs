//! Real-valued weights to codes: MX blocks along a convolution's input channels, one
//! power-of-two scale for the integer type, and the choice an automatic layer makes between
//! them.

use super::data::Ctx;
use super::{Layer, ModelError, Requant};
use crate::numeric::mx::{e8m0_value, quantize_block};
use crate::numeric::{Format, IntType, MxFormat};

/// `type = "auto"`: the layer runs in MXINT8 (MXINT4) when the error of its weights
/// quantized to int8 (int4) with one power-of-two scale is more than this many times the
/// error of the MX blocks; otherwise in the integer type, which is cheaper (rows without a
/// scale beat, weight tiles without scale rows) and keeps bias, pooling and add fusable.
pub const AUTO_MX_ERROR_RATIO: f64 = 4.0;

/// Real weights [taps][cin][cout] encoded in `format`: MX blocks along cin (one block per
/// tap, input-channel block and output channel; scales as [taps][cin / block][cout]), or
/// one code per weight.
pub(super) fn encode_weights(
    w: &[f32],
    taps: usize,
    cin: usize,
    cout: usize,
    format: Format,
) -> (Vec<i64>, Vec<u8>) {
    let Format::Mx(f) = format else {
        return format.encode_reals(w).expect("a real-valued format");
    };
    let bs = f.block_size as usize;
    let mut codes = vec![0i64; w.len()];
    let mut scales = vec![0u8; taps * (cin / bs) * cout];
    for tap in 0..taps {
        for b in 0..cin / bs {
            for co in 0..cout {
                let at = |k: usize| (tap * cin + b * bs + k) * cout + co;
                let block: Vec<f32> = (0..bs).map(|k| w[at(k)]).collect();
                let (s, q) = quantize_block(&block, f.elem);
                scales[(tap * (cin / bs) + b) * cout + co] = s;
                for (k, v) in q.iter().enumerate() {
                    codes[at(k)] = i64::from(*v);
                }
            }
        }
    }
    (codes, scales)
}

/// Weights quantized with one power-of-two scale 2^e (the smallest that fits the largest
/// magnitude), rounded to nearest even and saturated: (e, codes).
pub(super) fn quantize_pow2(w: &[f32], t: IntType) -> (i32, Vec<i64>) {
    let amax = w.iter().fold(0f64, |m, v| m.max(f64::from(v.abs())));
    let mut e = if amax > 0.0 {
        (amax / t.max() as f64).log2().ceil() as i32
    } else {
        0
    };
    // The float log2 only proposes; the check is exact.
    while amax / 2f64.powi(e) > t.max() as f64 {
        e += 1;
    }
    while e > -126 && amax / 2f64.powi(e - 1) <= t.max() as f64 {
        e -= 1;
    }
    let codes = w
        .iter()
        .map(|v| {
            (f64::from(*v) / 2f64.powi(e))
                .round_ties_even()
                .clamp(t.min() as f64, t.max() as f64) as i64
        })
        .collect();
    (e, codes)
}

/// sqrt(sum (w - q)^2 / sum w^2), with q(i) the dequantized weight i.
pub(super) fn relative_rms(w: &[f32], q: impl Fn(usize) -> f64) -> f64 {
    let (mut err, mut norm) = (0f64, 0f64);
    for (i, v) in w.iter().enumerate() {
        let v = f64::from(*v);
        err += (v - q(i)).powi(2);
        norm += v * v;
    }
    if norm == 0.0 {
        0.0
    } else {
        (err / norm).sqrt()
    }
}

/// What an automatic layer got: the codes and scales of its weights, and (integer) its
/// requantization.
pub(super) struct AutoChoice {
    pub mx: bool,
    pub codes: Vec<i64>,
    pub scales: Vec<u8>,
    pub requant: Option<Requant>,
}

/// Quantize a layer's real weights both ways and choose (see `AUTO_MX_ERROR_RATIO`).
#[allow(clippy::too_many_arguments)]
pub(super) fn choose(
    ctx: &Ctx,
    w: &[f32],
    (taps, cin, cout): (usize, usize, usize),
    f: MxFormat,
    int: IntType,
    layers: &[Layer],
    input: &str,
    e_out: i32,
) -> Result<AutoChoice, ModelError> {
    let (codes, scales) = encode_weights(w, taps, cin, cout, Format::Mx(f));
    let (ws, int_codes) = quantize_pow2(w, int);
    let blocks = cin / f.block_size as usize;
    let err_mx = relative_rms(w, |i| {
        let b = (i / cout) % cin / f.block_size as usize;
        let tap = i / (cin * cout);
        let s = scales[(tap * blocks + b) * cout + i % cout];
        codes[i] as f64 * e8m0_value(s) / f64::from(1u32 << f.elem.frac)
    });
    let err_int = relative_rms(w, |i| int_codes[i] as f64 * 2f64.powi(ws));
    if err_int > AUTO_MX_ERROR_RATIO * err_mx {
        return Ok(AutoChoice {
            mx: true,
            codes,
            scales,
            requant: None,
        });
    }
    let requant = pow2_requant(ctx, layers, input, ws, e_out)?;
    Ok(AutoChoice {
        mx: false,
        codes: int_codes,
        scales: Vec::new(),
        requant: Some(requant),
    })
}

/// The requantization of an automatic layer that runs in the integer type: its input holds
/// q * 2^e_in (the producer's output_exponent), its weights q * 2^ws, its output q * 2^e_out
/// (its own output_exponent), so acc * 2^(e_in + ws - e_out) as a multiplier and a shift.
fn pow2_requant(
    ctx: &Ctx,
    layers: &[Layer],
    input: &str,
    ws: i32,
    e_out: i32,
) -> Result<Requant, ModelError> {
    let Some(producer) = layers.iter().find(|l| l.name == input) else {
        return Err(ctx.err(
            &format!("input = {input}"),
            "the compiler chose the integer type for this layer, which needs the fixed scale of its input, and the model input has none",
            "make the first layer an explicit conv2d or fc (type = \"int8\" or \"mxint8\")",
        ));
    };
    let Some(e_in) = producer.exponent else {
        return Err(ctx.err(
            &format!("input = {input}"),
            format!("the compiler chose the integer type for this layer, which needs the fixed scale of its input: layer {input} has no output_exponent"),
            format!("set output_exponent on layer {input}"),
        ));
    };
    let shift = e_out - e_in - ws;
    match shift {
        0..=63 => Ok(Requant {
            multiplier: 1,
            shift: shift as u32,
            zero_point: 0,
            half_even: false,
        }),
        -15..=-1 => Ok(Requant {
            multiplier: 1 << -shift,
            shift: 0,
            zero_point: 0,
            half_even: false,
        }),
        _ => Err(ctx.err(
            &format!("output_exponent = {e_out}"),
            format!("the integer path would scale the accumulator by 2^{} (input 2^{e_in}, weights 2^{ws}), outside 2^-63..2^15", -shift),
            "choose an output_exponent closer to the input's",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_of_two_weight_quantization_by_hand() {
        // amax 1.0: 2^-6 is the smallest scale with 1.0 / 2^e <= 127 (2^-7 gives 128).
        let (e, q) = quantize_pow2(&[1.0, -0.5, 0.3, 0.0234375], IntType::new(true, 8));
        assert_eq!(e, -6);
        // 0.3 * 64 = 19.2 -> 19; 0.0234375 * 64 = 1.5 -> 2 (ties to even).
        assert_eq!(q, vec![64, -32, 19, 2]);
        // int4: 1.0 / 2^-3 = 8 > 7, so 2^-2: 0.3 * 4 = 1.2 -> 1.
        let (e, q) = quantize_pow2(&[1.0, -0.5, 0.3], IntType::new(true, 4));
        assert_eq!((e, q), (-2, vec![4, -2, 1]));
        assert!((relative_rms(&[3.0, 4.0], |i| [3.0, 4.0][i] + 0.5) - 0.1414).abs() < 1e-4);
    }
}
