//! The row unit's operators against float64 references (rtl-tests/ref/rows_reference.py:
//! numpy and Python's math, test-only). Two measurements, both written in the README
//! ("The row unit's accuracy"), whose bounds are asserted here:
//! - each function's FP32 value (e^x, and the spline of every nonlinearity) on a dense
//!   grid, against the function in float64;
//! - each operator's integer output (the golden model, which the interpreter and the RTL
//!   equal bit for bit: rtl_cases), against the float64 operator of the dequantized input,
//!   in units of the output's last place.

mod common;

use common::*;
use hwgen::model::npy::{write_f32, write_i64};
use hwgen::model::op::Function;
use hwgen::numeric::{rows, spline};

fn have_numpy() -> bool {
    have_python_modules(&["numpy"])
}

/// `name x y` lines for the reference, y = `f(x)` over x from `lo` to `hi` by 2^-9.
fn grid(name: &str, (lo, hi): (f32, f32), f: impl Fn(u32) -> u32) -> String {
    let mut s = format!("function {name}\n");
    let n = ((hi - lo) * 512.0) as i64;
    for k in 0..=n {
        let x = lo + k as f32 / 512.0;
        s += &format!("{:08x} {:08x}\n", x.to_bits(), f(x.to_bits()));
    }
    s + "done\n"
}

/// The reference's lines, keyed by their first word: three numbers each.
fn parse(out: &str) -> std::collections::HashMap<String, [f64; 3]> {
    out.lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let v = |i: usize| w[i].parse::<f64>().unwrap();
            (w[0].to_string(), [v(1), v(2), v(3)])
        })
        .collect()
}

/// The functions on a grid of step 2^-9 over [-12, 12] (e^x over [-20, 10], where its
/// values are normal and finite): the largest absolute error of every nonlinearity within
/// its documented bound, and e^x's relative error.
#[test]
fn functions_against_float64() {
    if !have_numpy() {
        return;
    }
    let mut input = grid("exp", (-20.0, 10.0), |x| spline::exp(x, rows::exp2()));
    let functions = [
        ("gelu", Function::GeluErf),
        ("gelu_tanh", Function::GeluTanh),
        ("silu", Function::Silu),
        ("sigmoid", Function::Sigmoid),
        ("tanh", Function::Tanh),
        ("erf", Function::Erf),
    ];
    for (name, f) in functions {
        let table = f.table();
        input += &grid(name, (-12.0, 12.0), |x| table.eval(x));
    }
    let got = parse(&run_reference("rows_reference.py", &[], &input));
    eprintln!("{got:?}");
    // (largest absolute error, largest relative error) bounds, README "The row unit's
    // accuracy".
    let bounds = [
        ("exp", f64::INFINITY, 1.5e-6),
        ("gelu", 2.5e-4, f64::INFINITY),
        ("gelu_tanh", 2.5e-4, f64::INFINITY),
        ("silu", 5e-4, f64::INFINITY),
        ("sigmoid", 2e-4, f64::INFINITY),
        ("tanh", 4e-4, f64::INFINITY),
        ("erf", 2.5e-4, f64::INFINITY),
    ];
    for (name, abs, rel) in bounds {
        let [max_abs, _, max_rel] = got[name];
        assert!(
            max_abs <= abs,
            "{name}: largest absolute error {max_abs} > {abs}"
        );
        assert!(
            max_rel <= rel,
            "{name}: largest relative error {max_rel} > {rel}"
        );
    }
}

/// One operator layer over `pixels` x `channels` random int8 codes (64 x 77: the last of
/// the 16 lanes' channel tiles partly full), its golden output on 16 lanes, and the
/// reference's distance from the ideal code.
fn operator_case(op: &str, extra: &str, channels: usize, seed: u64) -> (String, String) {
    let pixels = 64;
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let x: Vec<i64> = (0..pixels * channels)
        .map(|_| rng.range(-128, 127))
        .collect();
    write_i64(&dir.path().join("x.npy"), &[pixels, 1, channels], &x).unwrap();
    let gamma: Vec<f32> = (0..channels)
        .map(|_| rng.range(500, 1500) as f32 / 1000.0)
        .collect();
    let beta: Vec<f32> = (0..channels)
        .map(|_| rng.range(-500, 500) as f32 / 1000.0)
        .collect();
    write_f32(&dir.path().join("g.npy"), &[channels], &gamma).unwrap();
    write_f32(&dir.path().join("b.npy"), &[channels], &beta).unwrap();
    // A masked softmax's mask: a quarter of the channels -10000 (padding), the others
    // from -2 to 0.
    let mask: Vec<f32> = (0..channels)
        .map(|_| match rng.range(0, 3) {
            0 => -10000.0,
            _ => rng.range(-2000, 0) as f32 / 1000.0,
        })
        .collect();
    write_f32(&dir.path().join("m.npy"), &[channels], &mask).unwrap();
    let (s_in, z_in, s_out, z_out) = match op {
        "softmax" => (0.08, 3, 1.0 / 256.0, -128),
        "layernorm" | "rmsnorm" | "scale" => (0.05, -2, 0.03, 1),
        "sigmoid" => (0.06, 0, 1.0 / 256.0, -128),
        "tanh" | "erf" => (0.03, 0, 1.0 / 128.0, 0),
        _ => (0.04, -5, 0.03, -40),
    };
    let affine = match op {
        "layernorm" | "rmsnorm" => "gamma = \"g.npy\"\nbeta = \"b.npy\"\nepsilon = 1e-5\n",
        "scale" => "gamma = \"g.npy\"\nbeta = \"b.npy\"\n",
        _ => "",
    };
    let src = format!(
        "name = \"ref\"\n[input]\nshape = [{pixels}, 1, {channels}]\ndata = \"x.npy\"\n\
         [[layer]]\nname = \"y\"\nop = \"{op}\"\n{extra}{affine}\
         scales = {{ input = {s_in}, output = {s_out} }}\n\
         zero_points = {{ input = {z_in}, output = {z_out} }}\n"
    );
    let path = dir.path().join("model.toml");
    std::fs::write(&path, src).unwrap();
    let model = hwgen::model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let y = &hwgen::golden::run(&model, 16)["y"];
    let masked = op == "softmax" && !extra.is_empty();
    let (g, b) = match op {
        "layernorm" | "rmsnorm" | "scale" => (gamma, beta),
        // The reference adds beta to the scaled input: the mask.
        _ if masked => (vec![1.0; channels], mask),
        _ => (vec![1.0; channels], vec![0.0; channels]),
    };
    let name = match (op, extra.is_empty()) {
        ("gelu", false) => "gelu_tanh",
        ("softmax", false) => "softmax_masked",
        _ => op,
    };
    // A masked softmax's input scale times its logit_scale (0.5).
    let s_in = if masked { s_in * 0.5 } else { s_in };
    let mut s = format!("operator {name} {channels} {s_in} {z_in} {s_out} {z_out} -128 127 1e-5\n");
    let join = |v: &[f32]| {
        v.iter()
            .map(|x| format!("{x}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    s += &format!("{}\n{}\n", join(&g), join(&b));
    for p in 0..pixels {
        let row = |d: &[i64]| {
            d[p * channels..(p + 1) * channels]
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        };
        s += &format!("{} {}\n", row(&x), row(&y.data));
    }
    (name.to_string(), s + "done\n")
}

/// Every operator's output codes within a documented distance of the float64 operator's
/// ideal code (rounding alone would give 0.5; the bound is 0.55), and at least 95% of them
/// the ideal code rounded.
#[test]
fn operators_against_float64() {
    if !have_numpy() {
        return;
    }
    let cases = [
        ("softmax", ""),
        ("softmax", "logit_scale = 0.5\nmask = \"m.npy\"\n"),
        ("layernorm", ""),
        ("rmsnorm", ""),
        ("scale", ""),
        ("gelu", ""),
        ("gelu", "approximate = \"tanh\"\n"),
        ("silu", ""),
        ("sigmoid", ""),
        ("tanh", ""),
        ("erf", ""),
    ];
    let mut input = String::new();
    for (k, (op, extra)) in cases.iter().enumerate() {
        input += &operator_case(op, extra, 77, 40 + k as u64).1;
    }
    let got = parse(&run_reference("rows_reference.py", &[], &input));
    eprintln!("{got:?}");
    for (name, [max, _, exact]) in &got {
        assert!(*max <= 0.55, "{name}: an output code {max} from the ideal");
        assert!(
            *exact >= 0.95,
            "{name}: only {exact} of the codes are the ideal rounded"
        );
    }
}

/// `matmul` of two run-time tensors per head, both orientations, against numpy's integer
/// matmul and the README's requantization (floor((x + 2^(s-1)) / 2^s) + zero point,
/// saturated), on values small enough that nothing wraps.
#[test]
fn matmul_against_numpy() {
    if !have_numpy() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(77);
    let mut ints = |n: usize| -> Vec<i64> { (0..n).map(|_| rng.range(-9, 9)).collect() };
    let (s, t, heads, d) = (5usize, 7usize, 3usize, 4usize);
    let (q, k, v) = (
        ints(s * heads * d),
        ints(t * heads * d),
        ints(t * heads * d),
    );
    write_i64(&dir.path().join("q.npy"), &[s, 1, heads * d], &q).unwrap();
    write_i64(&dir.path().join("k.npy"), &[t, 1, heads * d], &k).unwrap();
    write_i64(&dir.path().join("v.npy"), &[t, 1, heads * d], &v).unwrap();
    let model = format!(
        "name = \"mm\"\noutputs = [\"sc\", \"o\"]\n\
         [[input]]\nname = \"q\"\nshape = [{s}, 1, {c}]\ndata = \"q.npy\"\n\
         [[input]]\nname = \"k\"\nshape = [{t}, 1, {c}]\ndata = \"k.npy\"\n\
         [[input]]\nname = \"v\"\nshape = [{t}, 1, {c}]\ndata = \"v.npy\"\n\
         [[layer]]\nname = \"sc\"\nop = \"matmul\"\ninput = \"q\"\nb = \"k\"\ntranspose_b = true\n\
         heads = {heads}\nrequant = {{ multiplier = 3, shift = 2, zero_point = 1 }}\n\
         [[layer]]\nname = \"o\"\nop = \"matmul\"\nb = \"v\"\nheads = {heads}\n\
         requant = {{ multiplier = 1, shift = 3, zero_point = -2 }}\n",
        c = heads * d
    );
    let path = dir.path().join("m.toml");
    std::fs::write(&path, model).unwrap();
    let m = hwgen::model::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let golden = hwgen::golden::run(&m, 16);
    let script = format!(
        "import numpy as np, sys\n\
         d = sys.argv[1]\n\
         q, k, v = (np.load(f'{{d}}/{{n}}.npy').astype(np.int64).reshape({{'q': {s}}}.get(n, {t}), {heads}, {d}) for n in 'qkv')\n\
         def rq(x, m, s, z): return np.clip(np.floor((x * m + (1 << (s - 1))) / (1 << s)).astype(np.int64) + z, -128, 127)\n\
         sc = rq(np.einsum('shd,thd->sht', q, k), 3, 2, 1)\n\
         o = rq(np.einsum('sht,thd->shd', sc, v), 1, 3, -2)\n\
         print(' '.join(map(str, sc.reshape(-1))))\n\
         print(' '.join(map(str, o.reshape(-1))))\n"
    );
    let out = std::process::Command::new(python())
        .args(["-c", &script, &dir.path().display().to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    for name in ["sc", "o"] {
        let want: Vec<i64> = lines
            .next()
            .unwrap()
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(golden[name].data, want, "{name}");
    }
}
