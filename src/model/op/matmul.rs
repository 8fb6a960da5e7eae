//! `matmul`: the product of two run-time tensors (attention's scores and its weighted sum
//! of values), per head; lowered to a 1x1 window whose weights are the second tensor's
//! rows (`Taps::Tensor`), loaded as they are or transposed.

use super::{shape_of, Args, Form, Operator, Parsed};
use crate::model::data::Ctx;
use crate::model::lower::{window_macs, Lowered, Post, Stencil, Taps};
use crate::model::{Layer, ModelError, Requant, Tensor};
use crate::numeric::{PostOps, Precision};

/// A batched matmul (`matmul` in the model format). Per pixel p of the input a (`[h, w, heads * ka]`) and head g, with b of `t` pixels:
/// `transpose_b`: y[p, g*t + j] = sum_k a[p, g*ka + k] * b[j, g*ka + k] (b's channels
/// match a's); otherwise (a's channels are heads * t) y[p, g*n + j] = sum_i a[p, g*t + i]
/// times b[i, g*n + j]. With `keys` = T' (at least b's t pixels), b counts T' pixels per
/// head, those past its own zero codes: transposed, y has heads * T' channels; otherwise
/// a's channels per head are T'. Integer codes less their zero points (za for a, zb for
/// b), summed modulo 2^acc_bits, then requantized. MX layers: b's rows become the weight
/// tile with a block scale per column: transposed, each key's own block; otherwise each
/// column of the tile's keys quantized as one MX block (`mx::reblock`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bmm {
    pub b: String,
    pub transpose_b: bool,
    pub heads: usize,
    /// Keys per head, b's pixels padded with zero codes (b's pixel count without padding).
    pub keys: usize,
    pub cout: usize,
    /// (za, zb): a's and b's zero points (integer layers).
    pub zero_points: (i64, i64),
    pub requant: Requant,
}

pub(super) const FORMS: &[Form] = &[Form {
    name: "matmul",
    parse,
    keys: &[
        "b",
        "transpose_b",
        "heads",
        "keys",
        "requant",
        "zero_points",
    ],
    shared: &[],
    real: true,
    auto: false,
    leaky: false,
}];

impl Operator for Bmm {
    fn name(&self) -> &'static str {
        "matmul"
    }

    /// Integer sums by the definition (exact modulo 2^acc_bits); float ones in the
    /// array's order, as a grouped convolution's (`conv::pass_conv_accumulate`): input
    /// channel tiles of `rows` channels, each a column pass (`Datapath::column`, the other
    /// heads' channels zero codes), accumulated.
    fn golden(&self, layer: &Layer, inputs: &[&Tensor], rows: usize) -> Tensor {
        let (a, b) = (inputs[0], inputs[1]);
        let dp = layer.prec.ops();
        let acc_type = dp.acc_type();
        let (cin_g, cout_g) = (a.c / self.heads, self.cout / self.heads);
        let mut y = Tensor::zeros(a.h, a.w, self.cout, layer.out_format);
        y.scales.clear();
        let ops = PostOps {
            requant: self.requant,
            ..PostOps::default()
        };
        let (za, zb) = self.zero_points;
        let pixels = b.h * b.w;
        // A key past b's pixels is a zero code (of scale 0).
        let weight = |co: usize, i: usize| {
            let j = co % cout_g;
            let g = co / cout_g;
            let code = match self.transpose_b {
                true if j < pixels => b.data[j * b.c + g * cin_g + i],
                false if i < pixels => b.data[i * b.c + co],
                _ => 0,
            };
            code - zb
        };
        let int = matches!(layer.prec, Precision::Int(_));
        let rows = rows.max(1);
        // MX: the weight tile of output channel co and b's rows (keys) i0..i0 + rows of
        // its head, with the column's scale: transposed, key j's own block of channels
        // (the tile's, i0 / rows); else the column's values re-blocked down the tile's
        // keys (`mx::reblock`).
        let mx_column = |co: usize, i0: usize| -> Option<(u8, Vec<i64>)> {
            let Precision::Mx(f) = layer.prec else {
                return None;
            };
            let j = co % cout_g;
            let g = co / cout_g;
            if self.transpose_b {
                let s = match j < pixels {
                    true => b.scale(j / b.w, j % b.w, (g * cin_g + i0) / rows),
                    false => 0,
                };
                return Some((s, (i0..i0 + rows).map(|i| weight(co, i)).collect()));
            }
            let tile: Vec<(u8, Vec<i64>)> = (i0..i0 + rows)
                .map(|i| match i < pixels {
                    true => (b.scale(i / b.w, i % b.w, co / rows), vec![weight(co, i)]),
                    false => (0, vec![0]),
                })
                .collect();
            let (s, codes) = crate::numeric::mx::reblock(&tile, f.elem);
            Some((s[0], codes.into_iter().map(|c| c[0]).collect()))
        };
        for p in 0..a.h * a.w {
            let x = &a.data[p * a.c..(p + 1) * a.c];
            let row: Vec<i64> = (0..self.cout)
                .map(|co| {
                    let group = (co / cout_g) * cin_g..(co / cout_g + 1) * cin_g;
                    if int {
                        let sum: i128 = group
                            .clone()
                            .map(|ci| {
                                i128::from(x[ci] - za) * i128::from(weight(co, ci - group.start))
                            })
                            .sum();
                        return acc_type.wrap(sum);
                    }
                    let mut acc: Option<i64> = None;
                    for ict in 0..a.c.div_ceil(rows) {
                        let tile = ict * rows..((ict + 1) * rows).min(a.c);
                        if tile.end <= group.start || group.end <= tile.start {
                            continue;
                        }
                        let live = |ci: usize| tile.contains(&ci) && group.contains(&ci);
                        // (MX heads fill whole tiles: the tile's keys from ict * rows
                        // less the head's first channel.)
                        let mx = mx_column(co, (ict * rows).saturating_sub(group.start));
                        let sb = mx.as_ref().map_or(0, |(s, _)| *s);
                        let col: Vec<(i64, i64)> = (ict * rows..(ict + 1) * rows)
                            .enumerate()
                            .map(|(r, ci)| match (live(ci), &mx) {
                                (true, Some((_, w))) => (x[ci], w[r]),
                                (true, None) => (x[ci], weight(co, ci - group.start)),
                                (false, _) => (0, 0),
                            })
                            .collect();
                        let (xs, ws): (Vec<i64>, Vec<i64>) = col.into_iter().unzip();
                        let sa = a.scale(p / a.w, p % a.w, ict);
                        let v = dp.column(&xs, &ws, (sa, sb));
                        acc = Some(acc.map_or(v, |s| dp.accumulate(s, v)));
                    }
                    acc.expect("a head has at least one channel")
                })
                .collect();
            let out = layer.prec.ops().post(&row, &ops, layer.out_format);
            y.data[p * self.cout..(p + 1) * self.cout].copy_from_slice(&out.codes);
            y.scales.extend(out.scales);
        }
        y
    }

    fn lower(&self, _layer: &Layer) -> Lowered {
        Lowered::Stencil(Stencil {
            transposed: false,
            kh: 1,
            kw: 1,
            stride: 1,
            pad: 0,
            pad_value: 0,
            cout: self.cout,
            taps: Taps::Tensor {
                groups: self.heads,
                tensor: self.b.clone(),
                transposed: self.transpose_b,
                zero_points: self.zero_points,
            },
            post: Post::requant(self.requant),
        })
    }

    fn macs(&self, layer: &Layer, cin: usize) -> u64 {
        window_macs(layer.out, 1, 1, cin / self.heads)
    }

    /// It reads its second input as weights, not as its precision's input rows.
    fn reads_as_input(&self, k: usize) -> bool {
        k == 0
    }
}

/// `matmul`: `b` (the second tensor), `transpose_b` (default false), `heads` (default 1:
/// a's and b's channels split into that many equal groups) and `requant`.
fn parse(ctx: &mut Ctx, a: &Args) -> Result<Parsed, ModelError> {
    let float = match a.prec {
        Precision::Int(_) => false,
        Precision::Float(_) if crate::numeric::rows::Elem::of(a.prec.ops().output()).is_some() => {
            true
        }
        Precision::Mx(_) => true,
        _ => {
            return Err(ctx.err(
                "op = matmul",
                format!(
                    "a matmul of two run-time tensors is an integer, FP8, BF16 or MX layer, not {}",
                    a.prec.name()
                ),
                "give the layer an integer, fp8, bf16 or mxint8 type",
            ))
        }
    };
    if float && a.rl.requant.is_some() {
        return Err(ctx.err(
            "requant",
            format!(
                "a {} matmul accumulates in FP32 and {}: it has no requant",
                a.prec.name(),
                match a.prec {
                    Precision::Mx(_) => "quantizes each output row to blocks",
                    _ => "rounds to the format",
                }
            ),
            "remove requant",
        ));
    }
    let Some(b) = a.rl.b.clone() else {
        return Err(ctx.err(
            "b",
            "matmul needs b = <tensor>, the second operand (a model input or an earlier layer)",
            "name the tensor to multiply by",
        ));
    };
    let Some(bs) = shape_of(a.model_inputs, a.layers, &b) else {
        return Err(ctx.err(
            &format!("b = {b}"),
            "b must name the model input or an earlier layer",
            "use the name of an earlier layer",
        ));
    };
    let transpose_b = a.rl.transpose_b.unwrap_or(false);
    let heads = ctx.positive("heads", a.rl.heads, Some(1), 4096)?;
    let [h, w, ca] = a.shape;
    let pixels = bs[0] * bs[1];
    let t = match a.rl.keys {
        None => pixels,
        Some(k) => {
            let k = ctx.positive("keys", Some(k), None, 1 << 20)?;
            if k < pixels {
                return Err(ctx.err(
                    &format!("keys = {k}"),
                    format!(
                        "keys pads b's {pixels} pixels with zero codes: it is at least {pixels}"
                    ),
                    format!("give keys = {pixels} or more, or leave it out"),
                ));
            }
            k
        }
    };
    let per = |n: usize, what: &str| -> Result<usize, ModelError> {
        if n.is_multiple_of(heads) {
            Ok(n / heads)
        } else {
            Err(ctx.err(
                &format!("heads = {heads}"),
                format!("{what} ({n}) must split into {heads} heads of equal size"),
                "use a number of heads that divides the channels",
            ))
        }
    };
    let cout = if transpose_b {
        if bs[2] != ca {
            return Err(ctx.err(
                &format!("b = {b}"),
                format!("with transpose_b, b's channels ({}) are the input's ({ca}): y = a b^T over the channels of each head", bs[2]),
                "give b the input's channel count, or set transpose_b = false",
            ));
        }
        per(ca, "the input's channels")?;
        heads * t
    } else {
        let ka = per(ca, "the input's channels")?;
        if ka != t {
            return Err(ctx.err(
                &format!("b = {b}"),
                format!("without transpose_b, each head of the input has b's pixel count (or keys) of channels: {ka} per head, b has {t} ({}x{} pixels)", bs[0], bs[1]),
                "reshape so that a's channels per head equal b's pixels, or set transpose_b = true",
            ));
        }
        per(bs[2], "b's channels")?;
        bs[2]
    };
    let op = Bmm {
        b: b.clone(),
        transpose_b,
        heads,
        keys: t,
        cout,
        zero_points: zero_points(ctx, a)?,
        requant: ctx.requant(a.rl.requant.as_ref(), Requant::IDENTITY)?,
    };
    Ok(Parsed {
        op: op.into(),
        out: [h, w, cout],
        inputs: vec![a.src.to_string(), b],
        prec: a.prec,
    })
}

/// `zero_points = { input = za, b = zb }` (default 0): the operands' zero points, each a
/// value of its tensor's element type (integer layers; the output's is requant's).
fn zero_points(ctx: &Ctx, a: &Args) -> Result<(i64, i64), ModelError> {
    super::zero_point_keys(ctx, a.rl, "matmul", &["input", "b"])?;
    let Some(z) = a.rl.zero_points.as_ref() else {
        return Ok((0, 0));
    };
    let Precision::Int(p) = a.prec else {
        return Err(ctx.err(
            "zero_points",
            format!("a {} matmul has no zero points", a.prec.name()),
            "remove zero_points",
        ));
    };
    let zero = |k: &str, v: Option<i64>, t: crate::numeric::IntType| match v.unwrap_or(0) {
        v if t.holds(v) => Ok(v),
        v => Err(ctx.err(
            &format!("zero_points.{k} = {v}"),
            format!("the {k} zero point is a value of {t}, the operand's type"),
            format!("use a value from {} to {}", t.min(), t.max()),
        )),
    };
    Ok((zero("input", z.input, p.input)?, zero("b", z.b, p.weight)?))
}
