//! Error of MXINT8 (and, for comparison, per-tensor INT8 and FP8 E4M3) against an exact
//! reference on a random matmul, computed with hwgen's bit-exact golden arithmetic:
//! MX blocks of 32 along the reduction dimension, integer block sums, FP32 accumulation in
//! block order (`numeric::mx::dot`).
//!
//!     cargo run --release --example mx_error [M K N]
//!
//! Two input distributions: Gaussian, and Gaussian with 1% outliers 50x larger (the case
//! MX's per-block scales are for).

use hwgen::numeric::fp32;
use hwgen::numeric::mx::{self, quantize_block, MXINT8};
use hwgen::numeric::E4M3;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn uniform(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn gaussian(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn matrix(rng: &mut Rng, n: usize, outliers: bool) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let x = rng.gaussian();
            let x = if outliers && rng.uniform() < 0.01 {
                50.0 * x
            } else {
                x
            };
            x as f32
        })
        .collect()
}

struct Error {
    relative_rms: f64,
    max_relative: f64,
}

fn error(got: &[f64], exact: &[f64]) -> Error {
    let num: f64 = got.iter().zip(exact).map(|(g, e)| (g - e) * (g - e)).sum();
    let den: f64 = exact.iter().map(|e| e * e).sum();
    let peak = exact.iter().fold(0f64, |m, e| m.max(e.abs()));
    let max_abs = got
        .iter()
        .zip(exact)
        .fold(0f64, |m, (g, e)| m.max((g - e).abs()));
    Error {
        relative_rms: (num / den).sqrt(),
        max_relative: max_abs / peak,
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("M K N must be integers"))
        .collect();
    let (m, k, n) = match args.as_slice() {
        [m, k, n] => (*m, *k, *n),
        [] => (256, 1024, 256),
        _ => panic!("usage: mx_error [M K N]"),
    };
    assert!(k % 32 == 0, "K must be a multiple of the block size 32");
    let block = 32;
    println!("matmul {m}x{k}x{n}, MX block {block}; error relative to the exact product");
    println!("| inputs | format | relative RMS error | max error / max |C| |");
    println!("|---|---|---|---|");
    for outliers in [false, true] {
        let mut rng = Rng(0x5eed_u64.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let a = matrix(&mut rng, m * k, outliers); // row-major M x K
        let b = matrix(&mut rng, k * n, outliers); // row-major K x N
        let exact: Vec<f64> = (0..m * n)
            .map(|i| {
                let (r, c) = (i / n, i % n);
                (0..k)
                    .map(|j| f64::from(a[r * k + j]) * f64::from(b[j * n + c]))
                    .sum()
            })
            .collect();

        // MXINT8: A rows and B columns in blocks of 32 along K.
        let a_blocks: Vec<Vec<(u8, Vec<i32>)>> = (0..m)
            .map(|r| {
                a[r * k..(r + 1) * k]
                    .chunks(block)
                    .map(|c| quantize_block(c, MXINT8))
                    .collect()
            })
            .collect();
        let b_blocks: Vec<Vec<(u8, Vec<i32>)>> = (0..n)
            .map(|c| {
                let col: Vec<f32> = (0..k).map(|j| b[j * n + c]).collect();
                col.chunks(block)
                    .map(|x| quantize_block(x, MXINT8))
                    .collect()
            })
            .collect();
        let mx: Vec<f64> = (0..m * n)
            .map(|i| {
                let bits = mx::dot(&a_blocks[i / n], &b_blocks[i % n], MXINT8);
                f64::from(f32::from_bits(bits))
            })
            .collect();

        // INT8, one symmetric scale per tensor (amax / 127), exact integer accumulation.
        let quant = |x: &[f32]| {
            let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
            let s = f64::from(amax) / 127.0;
            let q: Vec<i64> = x
                .iter()
                .map(|v| (f64::from(*v) / s).round_ties_even() as i64)
                .collect();
            (s, q)
        };
        let (sa, qa) = quant(&a);
        let (sb, qb) = quant(&b);
        let int8: Vec<f64> = (0..m * n)
            .map(|i| {
                let (r, c) = (i / n, i % n);
                let acc: i64 = (0..k).map(|j| qa[r * k + j] * qb[j * n + c]).sum();
                acc as f64 * sa * sb
            })
            .collect();

        // FP8 E4M3 elements (no scaling), products exact in FP32, FP32 accumulation in K order.
        let fp8 = |x: &[f32]| -> Vec<f32> {
            x.iter()
                .map(|v| E4M3.decode(E4M3.encode(*v)) as f32)
                .collect()
        };
        let (fa, fb) = (fp8(&a), fp8(&b));
        let fp8_out: Vec<f64> = (0..m * n)
            .map(|i| {
                let (r, c) = (i / n, i % n);
                let mut acc = (fa[r * k] * fb[c]).to_bits();
                for j in 1..k {
                    acc = fp32::add(acc, (fa[r * k + j] * fb[j * n + c]).to_bits());
                }
                f64::from(f32::from_bits(acc))
            })
            .collect();

        let name = if outliers {
            "Gaussian + 1% outliers x50"
        } else {
            "Gaussian"
        };
        for (format, got) in [
            ("MXINT8 (block 32, FP32 acc)", &mx),
            ("INT8 per-tensor (int32 acc)", &int8),
            ("FP8 E4M3 (FP32 acc)", &fp8_out),
        ] {
            let e = error(got, &exact);
            println!(
                "| {name} | {format} | {:.3e} | {:.3e} |",
                e.relative_rms, e.max_relative
            );
        }
    }
}
