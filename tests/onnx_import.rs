//! `hwgen import` and `hwgen run` on small float graphs quantized by onnxruntime's
//! quantize_static (rtl-tests/ref/onnx_quantized.py, test-only), in QDQ and QOperator form,
//! with int8 and uint8 activations. The expected values come from the exact reference
//! (rtl-tests/ref/onnx_exact.py: ONNX's own reference implementation, its float sums
//! rounded once, and onnxruntime's contrib operators by their definition), which gives the
//! same values on every CPU; ONNX Runtime's integer kernels do not (without AVX-512 VNNI
//! their uint8 x int8 pair sums saturate, and its fused and unfused sessions differ). Where
//! a test also compares with ONNX Runtime's default session, as users run the model, it
//! allows the spread that session shows against the exact values on the same machine. The
//! README ("Quantized ONNX models") states the bounds.

mod common;

use common::*;

fn have_onnxruntime() -> bool {
    have_python_modules(&["onnxruntime", "onnx", "numpy"])
}

/// The outputs of one quantized graph on one quantized input, as integers in HWC order.
struct Outputs {
    /// hwgen's golden model on the imported model.
    hwgen: Vec<i64>,
    /// The exact reference.
    exact: Vec<i64>,
    /// ONNX Runtime's default session.
    ort: Vec<i64>,
}

/// The largest element-wise difference of two integer tensors.
fn max_difference(a: &[i64], b: &[i64]) -> i64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .max()
        .unwrap_or(0)
}

/// The outputs of `graph` in `format` ("qdq" or "qop", with "_pc" for per-channel weight
/// scales and "_u8w" for uint8 weights with zero point 128).
fn both(graph: &str, format: &str, act: &str, seed: u64) -> Outputs {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_string_lossy().into_owned();
    let (format, u8w) = match format.strip_suffix("_u8w") {
        Some(f) => (f, "_u8w"),
        None => (format, ""),
    };
    let (form, pc) = match format.strip_suffix("_pc") {
        Some(f) => (f, format!("per_channel{u8w}")),
        None => (format, format!("per_tensor{u8w}")),
    };
    run_reference(
        "onnx_quantized.py",
        &[&d, graph, form, act, &seed.to_string(), &pc],
        "",
    );
    let toml = dir.path().join("model.toml");
    hwgen::onnx::write(&dir.path().join("model.onnx"), &toml).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&toml).unwrap();
    // The imported model's input is random; this run feeds it the reference's input.
    let text = text.replacen("[input]\n", "[input]\ndata = \"x.npy\"\n", 1);
    std::fs::write(&toml, text).unwrap();
    let model = hwgen::model::load(&toml).unwrap_or_else(|e| panic!("{e}"));
    let out = model.output().name.clone();
    let read = |f: &str| hwgen::model::npy::read(&dir.path().join(f)).unwrap().data;
    Outputs {
        hwgen: hwgen::golden::run(&model, 16)[&out].data.clone(),
        exact: read("y.npy"),
        ort: read("y_ort.npy"),
    }
}

/// Every element within 1 of the exact reference (a near-tie, the README's bound for a
/// layer) and at least 90% of them equal (the unfolded batch norm's Add meets a value just
/// beside a tie in 11 of 180); within 1 plus ONNX Runtime's own spread of its default
/// session's.
fn check(graph: &str, format: &str, act: &str, seed: u64) {
    let o = both(graph, format, act, seed);
    let label = format!("{graph} {format} {act}");
    assert_eq!(o.hwgen.len(), o.exact.len(), "{label}: element count");
    let same = o.hwgen.iter().zip(&o.exact).filter(|(g, w)| g == w).count();
    let worst = max_difference(&o.hwgen, &o.exact);
    let spread = max_difference(&o.ort, &o.exact);
    let against_ort = max_difference(&o.hwgen, &o.ort);
    let (lo, hi) = if act == "int8" { (-128, 127) } else { (0, 255) };
    let inside = o.exact.iter().filter(|&&w| w > lo && w < hi).count();
    eprintln!(
        "{label}: {same}/{} identical, max difference {worst}, {inside} not saturated; \
         ONNX Runtime's session {against_ort} from hwgen, {spread} from the exact values",
        o.hwgen.len()
    );
    // ReLU clamps about half of the outputs to the zero point; the rest must be inside.
    assert!(
        inside * 3 > o.exact.len(),
        "{label}: only {inside} outputs inside the range"
    );
    assert!(worst <= 1, "{label}: max difference {worst}");
    assert!(
        same * 10 >= o.exact.len() * 9,
        "{label}: only {same}/{} identical",
        o.exact.len()
    );
    assert!(
        against_ort <= 1 + spread,
        "{label}: {against_ort} from ONNX Runtime's session, which is {spread} from the exact values"
    );
}

#[test]
fn single_convolutions_match_onnx_runtime() {
    if !have_onnxruntime() {
        return;
    }
    for graph in ["conv", "depthwise"] {
        for format in ["qdq", "qop", "qdq_pc", "qop_pc", "qdq_u8w", "qop_u8w"] {
            for act in ["int8", "uint8"] {
                // (onnxruntime pairs uint8 weights with uint8 activations only.)
                if format.ends_with("_u8w") && act == "int8" {
                    continue;
                }
                check(graph, format, act, 1);
            }
        }
    }
}

#[test]
fn layer_chains_match_onnx_runtime() {
    if !have_onnxruntime() {
        return;
    }
    for graph in [
        "conv_relu_conv",
        "pool_fc",
        "residual",
        "relu6_gap",
        "inverted_residual",
        "concat",
        "avgpool",
        "upconv",
        "affine",
        "const_map",
        "batchnorm",
        "resize",
        "sub",
        "mul",
        "se_gate",
    ] {
        // onnxruntime quantizes ConvTranspose and BatchNormalization in QDQ form only.
        let formats: &[&str] = if graph == "upconv" || graph == "batchnorm" {
            &["qdq", "qdq_pc"]
        } else {
            &["qdq", "qop", "qdq_pc", "qop_pc"]
        };
        for &format in formats {
            for act in ["int8", "uint8"] {
                check(graph, format, act, 2);
            }
        }
    }
}

/// Make a quantized model with the reference script; its directory.
fn make(graph: &str, format: &str, extra: &[&str]) -> tempfile::TempDir {
    make_act(graph, format, "int8", extra)
}

/// As `make`, with activations `act` ("int8" or "uint8").
fn make_act(graph: &str, format: &str, act: &str, extra: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_string_lossy().into_owned();
    let mut args = vec![d.as_str(), graph, format, act, "3"];
    args.extend(extra);
    run_reference("onnx_quantized.py", &args, "");
    dir
}

/// `hwgen sim --model model.onnx` runs the imported model in RTL bit-exact (golden =
/// interpreter = RTL), a convolution with an untied bias (the input zero point at the
/// padding), a max-pool and a fully-connected layer, and arithmetic with constants.
#[test]
fn imported_models_run_bit_exact_in_rtl() {
    if !have_onnxruntime() || !have_tool("verilator", "imported_models_run_bit_exact_in_rtl") {
        return;
    }
    for (graph, format, pc) in [
        ("pool_fc", "qop", "per_channel"),
        ("conv_relu_conv", "qdq", "per_tensor"),
        ("residual", "qdq", "per_channel"),
        ("relu6_gap", "qop", "per_channel"),
        ("upconv", "qdq", "per_channel"),
        ("concat", "qop", "per_tensor"),
        ("affine", "qdq", "per_channel"),
        ("const_map", "qop", "per_tensor"),
        ("resize", "qdq", "per_channel"),
        ("sub", "qop", "per_channel"),
        ("mul", "qop", "per_channel"),
        ("se_gate", "qdq", "per_tensor"),
    ] {
        let dir = make(graph, format, &[pc]);
        // Per-channel weights become per-channel requantization in the model file.
        let toml = dir.path().join("imported.toml");
        hwgen::onnx::write(&dir.path().join("model.onnx"), &toml).unwrap();
        let text = std::fs::read_to_string(&toml).unwrap();
        assert_eq!(
            text.contains("multiplier = ["),
            pc == "per_channel",
            "{text}"
        );
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hwgen"))
            .args(["sim", "-c", "configs/8x8_int8.toml", "--json", "-m"])
            .arg(dir.path().join("model.onnx"))
            .arg("--cache")
            .arg(sim_cache())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{graph} {format}: {stderr}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["match"], true, "{graph} {format}");
    }
}

fn import_error(path: &std::path::Path) -> String {
    let out = tempfile::tempdir().unwrap();
    let e = hwgen::onnx::write(path, &out.path().join("m.toml"))
        .err()
        .expect("an error");
    // Nothing is written for a file that does not import.
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
    format!("{e:#}")
}

#[test]
fn bad_onnx_files_get_clear_errors() {
    if !have_onnxruntime() {
        return;
    }
    let dir = make("conv_relu_conv", "qdq", &[]);
    // The float model: its Conv reads the float input directly.
    let e = import_error(&dir.path().join("float.onnx"));
    assert!(
        e.contains("float.onnx: node 0 writing 'c1' (Conv)")
            && e.contains("not dequantized")
            && e.contains("fix:"),
        "{e}"
    );
    // A truncated file.
    let bytes = std::fs::read(dir.path().join("model.onnx")).unwrap();
    let cut = dir.path().join("cut.onnx");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = import_error(&cut);
    assert!(
        e.contains("cut.onnx") && e.contains("not a readable ONNX model"),
        "{e}"
    );
    // An operator variant the accelerator does not run (a Softmax along a feature map's
    // width, which is not the channels): named, with the rule and what it does run.
    let soft = make("conv_softmax", "qdq", &[]);
    let e = import_error(&soft.path().join("model.onnx"));
    assert!(
        e.contains("(Softmax)")
            && e.contains("rule: a tensor [1, 4, 4, 4] whose last axis is not hwgen's channels")
            && e.contains("fix:  the row unit normalizes a sequence [1, S, D]"),
        "{e}"
    );
}

/// 300 mutated ONNX files (bytes flipped, inserted, removed; truncation) through the
/// importer: each imports or is refused with a rule and a fix, never a panic.
#[test]
fn mutated_onnx_files_never_panic() {
    if !have_onnxruntime() {
        return;
    }
    let dir = make("pool_fc", "qdq", &[]);
    let bytes = std::fs::read(dir.path().join("model.onnx")).unwrap();
    let mut rng = Rng::new(11);
    let path = dir.path().join("mutated.onnx");
    for i in 0..300 {
        let mut b = bytes.clone();
        for _ in 0..1 + rng.range(0, 4) {
            let at = rng.range(0, b.len() as i64 - 1) as usize;
            match rng.range(0, 4) {
                0 => b[at] = rng.range(0, 255) as u8,
                1 => b[at] ^= 1 << rng.range(0, 7),
                2 => b.insert(at, rng.range(0, 255) as u8),
                3 => {
                    b.remove(at);
                }
                _ => b.truncate(at),
            }
        }
        std::fs::write(&path, &b).unwrap();
        let out = tempfile::tempdir().unwrap();
        if let Err(e) = hwgen::onnx::write(&path, &out.path().join("m.toml")) {
            let e = format!("{e:#}");
            assert!(
                e.contains("rule:") && e.contains("fix:"),
                "mutation {i}: {e}"
            );
        }
        // The partition and the host's evaluation of the whole graph (on a zero input)
        // refuse or run, never panic.
        if let Ok(p) = hwgen::onnx::partition(&path, "d", None) {
            let mut host = hwgen::onnx::hostops::Host::new(&p.model.graph);
            let x = hwgen::onnx::hostops::HostVal {
                dims: vec![1, 4, 8, 8],
                data: vec![0.0; 256],
                elem: 1,
            };
            host.known.insert("x".into(), x);
            let _ = host.outputs();
        }
    }
}

/// `hwgen run` on float data (off the quantization grid): the input quantized on the host
/// as the graph's QuantizeLinear does it, the model on the interpreter or the RTL, the
/// output dequantized as its DequantizeLinear does it, equals the exact reference's float
/// output float for float in every element (the integers agree: no near-tie on these
/// graphs), and is within one quantization step plus ONNX Runtime's own spread of its
/// default session's output.
#[test]
fn hwgen_run_on_float_data_equals_the_reference() {
    if !have_onnxruntime()
        || !have_tool("verilator", "hwgen_run_on_float_data_equals_the_reference")
    {
        return;
    }
    // (graph, form, weights, activations, config, on the interpreter)
    let uint8 = "configs/16x16_uint8.toml";
    for (graph, format, pc, act, config, interp) in [
        (
            "pool_fc",
            "qdq",
            "per_channel",
            "int8",
            "configs/8x8_int8.toml",
            false,
        ),
        (
            "conv_relu_conv",
            "qop",
            "per_tensor",
            "int8",
            "configs/8x8_int8.toml",
            true,
        ),
        (
            "depthwise",
            "qdq",
            "per_channel",
            "int8",
            "configs/8x8_int8.toml",
            true,
        ),
        ("conv", "qdq", "per_channel", "uint8", uint8, false),
    ] {
        let dir = make_act(graph, format, act, &[pc]);
        let out = dir.path().join("y_hwgen.npy");
        let o = hwgen_run_on(config, dir.path(), &["xr.npy"], &out, interp);
        assert!(
            o.status.success(),
            "{graph}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got = hwgen::model::npy::read_f32(&out).unwrap();
        let want = hwgen::model::npy::read_f32(&dir.path().join("yr.npy")).unwrap();
        assert_eq!(got.shape, want.shape, "{graph}");
        let step = hwgen::onnx::import(&dir.path().join("model.onnx"), "d")
            .unwrap()
            .outputs[0]
            .scale;
        let (same, worst) = agreement(&got, &want, step);
        let label = format!("{graph} {format} {pc} {act}");
        eprintln!(
            "{label}: {same}/{} identical, max {worst:.3} steps",
            want.data.len()
        );
        assert_eq!(
            same,
            want.data.len(),
            "{label}: {same}/{} identical, max {worst} steps",
            want.data.len()
        );
        within_ort_spread(&label, dir.path(), &got, step, 1.0);
    }
}

/// `got`, hwgen's float output for the input xr.npy in `dir`, against ONNX Runtime's default
/// session's (yr_ort.npy), as users run the model: within `bound` steps of `step` plus the
/// largest difference that session shows against the exact reference (yr.npy) on this
/// machine, which depends on its CPU.
fn within_ort_spread(
    label: &str,
    dir: &std::path::Path,
    got: &hwgen::model::npy::NpyF32,
    step: f64,
    bound: f64,
) {
    let read = |f: &str| hwgen::model::npy::read_f32(&dir.join(f)).unwrap();
    let (exact, ort) = (read("yr.npy"), read("yr_ort.npy"));
    let (_, spread) = agreement(&ort, &exact, step);
    let (_, from_ort) = agreement(got, &ort, step);
    eprintln!("{label}: {from_ort:.3} steps from ONNX Runtime's session, {spread:.3} from the exact values");
    assert!(
        from_ort <= bound + spread + 1e-3,
        "{label}: {from_ort} steps from ONNX Runtime's session, which is {spread} from the exact values"
    );
}

/// `hwgen run` of `dir`'s model.onnx on `config` with `dir`'s input files, into `out`
/// (in RTL, or with `interp` on the interpreter).
fn hwgen_run_on(
    config: &str,
    dir: &std::path::Path,
    inputs: &[&str],
    out: &std::path::Path,
    interp: bool,
) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hwgen"));
    cmd.args(["run", "-c", config, "-m"])
        .arg(dir.join("model.onnx"));
    for i in inputs {
        cmd.arg("-i").arg(dir.join(i));
    }
    cmd.arg("-o").arg(out).arg("--cache").arg(sim_cache());
    if interp {
        cmd.arg("--interp");
    }
    cmd.output().unwrap()
}

/// Elements of `got` equal to `want`'s (bit for bit), and the largest difference in steps
/// of `step`.
fn agreement(
    got: &hwgen::model::npy::NpyF32,
    want: &hwgen::model::npy::NpyF32,
    step: f64,
) -> (usize, f64) {
    let pairs = || got.data.iter().zip(&want.data);
    let same = pairs().filter(|(a, b)| a.to_bits() == b.to_bits()).count();
    let worst = pairs()
        .map(|(a, b)| (f64::from(*a) - f64::from(*b)).abs() / step)
        .fold(0.0, f64::max);
    (same, worst)
}

/// Run `hwgen run` on the interpreter; the output.
fn hwgen_run(dir: &std::path::Path, model: &str, config: &str) -> hwgen::model::npy::NpyF32 {
    let (_, out) = run_on(dir, model, "xr.npy", config);
    hwgen::model::npy::read_f32(&out).unwrap()
}

/// BYOC: a Softmax after a convolution runs on the host (QDQ: DequantizeLinear, Softmax,
/// QuantizeLinear in float32; QOperator: onnxruntime's QLinearSoftmax), the convolution on
/// the accelerator; a float model (nothing quantized) runs whole on the host. The quantized
/// ones equal the exact reference (its softmax in float64, rounded once) within one output
/// step, where the host's float32 softmax lands beside a quantization tie; the float one
/// within one unit in the last place of float32 (the host sums each Conv's products in
/// double precision and rounds once, as the reference does; the two sums' orders differ).
#[test]
fn host_runs_what_the_accelerator_does_not() {
    if !have_onnxruntime() {
        return;
    }
    for format in ["qdq", "qop"] {
        let dir = make("conv_softmax", format, &["per_channel"]);
        let got = hwgen_run(dir.path(), "model.onnx", "configs/8x8_int8.toml");
        let want = hwgen::model::npy::read_f32(&dir.path().join("yr.npy")).unwrap();
        assert_eq!(got.shape, want.shape);
        // quantize_static gives a Softmax's output the range [0, 1]: a step of 1/255 (uint8)
        // or 1/256 (int8); counted in the larger.
        let step = 1.0 / 255.0;
        let (same, worst) = agreement(&got, &want, step);
        eprintln!(
            "conv_softmax {format}: {same}/{} identical, max {worst:.3} steps",
            want.data.len()
        );
        assert!(worst < 1.001, "{format}: {worst} steps");
        within_ort_spread(
            &format!("conv_softmax {format}"),
            dir.path(),
            &got,
            step,
            1.0,
        );
    }
    // A host operator between two accelerator segments: the host's Softmax output is
    // quantized by the graph's QuantizeLinear and the accelerator runs the second
    // convolution. Equal, float for float, to the exact reference.
    two_segments("qdq");
    let dir = make("conv_relu_conv", "qdq", &[]);
    let got = hwgen_run(dir.path(), "float.onnx", "configs/8x8_int8.toml");
    let want = hwgen::model::npy::read_f32(&dir.path().join("yf.npy")).unwrap();
    assert_eq!(got.shape, want.shape);
    for (a, b) in got.data.iter().zip(&want.data) {
        let ulp = f32::from_bits(b.abs().to_bits() + 1) - b.abs();
        assert!((a - b).abs() <= ulp, "{a} vs {b}");
    }
}

/// `hwgen compile` of a partly supported ONNX model compiles the accelerator's part and its
/// report says which nodes run where, why the host takes over, and how each layer was mapped.
#[test]
fn compile_reports_the_partition() {
    if !have_onnxruntime() {
        return;
    }
    let dir = make("conv_softmax", "qdq", &[]);
    let out = dir.path().join("out");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hwgen"))
        .args(["compile", "-c", "configs/8x8_int8.toml", "-m"])
        .arg(dir.path().join("model.onnx"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Softmax"));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let onnx = &report["onnx"];
    let has = |key: &str, s: &str| {
        onnx[key]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v.as_str().unwrap().contains(s))
    };
    assert!(
        has("accelerator_nodes", "(Conv)") && has("host_nodes", "(Softmax)"),
        "{onnx}"
    );
    assert!(onnx["host_reason"].as_str().unwrap().contains("Softmax"));
    assert!(has("layers", "scale"));
}

/// Element-wise agreement of hwgen's output file with ONNX's expected one: the same dtype
/// and shape, integers equal, floats within ONNX's backend-test tolerance, 1e-7 + 1e-3 x
/// |expected| (some expected values are written to 4 digits), NaN where NaN. A `spectral`
/// output (DFT, STFT) may also differ by 2^-20 of its largest magnitude: ONNX's reference
/// computes numpy's FFT in single precision, whose error near zero is that large (the
/// README's host rule).
fn same_npy(got: &std::path::Path, want: &std::path::Path, spectral: bool) -> Result<(), String> {
    let read = |p: &std::path::Path| {
        hwgen::model::npy::read_values(p).map_err(|e| format!("{}: {}", p.display(), e.rule))
    };
    let ((gd, gs, g), (wd, ws, w)) = (read(got)?, read(want)?);
    if (gd.as_str(), &gs) != (wd.as_str(), &ws) {
        return Err(format!("{gd} {gs:?}, expected {wd} {ws:?}"));
    }
    let float = matches!(gd.as_str(), "<f4" | "<f8" | "<f2" | "<V2");
    // float16 and bfloat16 (the README's host rule): within 2 units in the last place of
    // the type, counted on the codes in order.
    let narrow = match gd.as_str() {
        "<f2" => Some(hwgen::numeric::FP16),
        "<V2" => Some(hwgen::numeric::BF16),
        _ => None,
    };
    let ordinal = |f: hwgen::numeric::MiniFloat, v: f64| {
        let c = i64::from(f.encode(v as f32));
        if c & 0x8000 != 0 {
            -(c & 0x7fff)
        } else {
            c
        }
    };
    let fft_error = if spectral {
        w.iter().fold(0f64, |m, v| m.max(v.abs())) * 2f64.powi(-20)
    } else {
        0.0
    };
    let close = |a: f64, b: f64| {
        a == b
            || (float && (a - b).abs() <= fft_error)
            || (float && ((a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-7 + 1e-3 * b.abs()))
            || narrow.is_some_and(|f| {
                a.is_finite() && b.is_finite() && (ordinal(f, a) - ordinal(f, b)).abs() <= 2
            })
    };
    match g.iter().zip(&w).position(|(&a, &b)| !close(a, b)) {
        Some(k) => Err(format!("element {k}: {} against {}", g[k], w[k])),
        None => Ok(()),
    }
}

/// Two sequences written as directories of 0.npy, 1.npy, ...: as many elements, each
/// `same_npy`.
fn same_sequence(got: &std::path::Path, want: &std::path::Path) -> Result<(), String> {
    let count = |p: &std::path::Path| {
        std::fs::read_dir(p)
            .map(|d| d.count())
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let (g, w) = (count(got)?, count(want)?);
    if g != w {
        return Err(format!("a sequence of {g} elements, expected {w}"));
    }
    (0..w).try_for_each(|k| {
        let f = format!("{k}.npy");
        same_npy(&got.join(&f), &want.join(&f), false).map_err(|e| format!("element {k}: {e}"))
    })
}

/// ONNX's own operator tests (rtl-tests/ref/onnx_node_tests.py, about 1840 cases, each
/// with its first input as the graph input): through `hwgen run --interp`, every case either
/// runs and every output equals ONNX's expected value (`same_npy`), or is refused with exit
/// status 1 and an error naming the model or the input file; none crashes. The operators the README lists
/// for the accelerator and the host run.
#[test]
fn onnx_operator_tests_run_or_are_refused() {
    let Some((dir, list)) = reference_cases("onnx_node_tests.py") else {
        return;
    };
    let lines: Vec<&str> = list.lines().collect();
    let (mut ran, mut refused, mut wrong) = (Vec::new(), 0, Vec::new());
    for case in lines.chunks(2) {
        let (name, outs) = (case[0], case[1].split(' ').collect::<Vec<_>>());
        let d = dir.path().join(name);
        let out = d.join(if outs.len() == 1 { "out.npy" } else { "out" });
        // The input: a tensor's .npy, a sequence's directory, or an empty optional.
        let x = match (d.join("x.npy"), d.join("x")) {
            (f, _) if f.exists() => f,
            (_, dir) if dir.is_dir() => dir,
            _ => "none".into(),
        };
        let o = run_interp("configs/16x16_uint8.toml", &d.join("model.onnx"), &x, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        match o.status.code() {
            Some(0) => {
                for n in &outs {
                    let file = hwgen::onnx::host::output_file_name(n);
                    let spectral = name.starts_with("test_dft") || name.starts_with("test_stft");
                    let want = d.join(format!("want_{n}"));
                    // A sequence: the directory of its elements (the output path itself
                    // for a graph's one output).
                    let r = if want.is_dir() {
                        let got = match outs.len() {
                            1 => out.clone(),
                            _ => out.join(file.trim_end_matches(".npy")),
                        };
                        same_sequence(&got, &want)
                    } else {
                        let got = if outs.len() == 1 {
                            out.clone()
                        } else {
                            out.join(&file)
                        };
                        same_npy(&got, &want.with_extension("npy"), spectral)
                    };
                    if let Err(e) = r {
                        wrong.push(format!("{name} output {n}: {e}"));
                    }
                }
                ran.push(name.to_string());
            }
            // Refused, naming the model or the input file.
            Some(1)
                if err.contains("error: ")
                    && (err.contains("model.onnx") || err.contains("x.npy")) =>
            {
                refused += 1
            }
            _ => wrong.push(format!("{name}: exit {:?}\n{err}", o.status.code())),
        }
    }
    eprintln!(
        "{} ONNX operator tests ran and matched, {refused} refused",
        ran.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for must in [
        "test_qlinearconv",
        "test_celu_float16",
        "test_celu_bfloat16_expanded",
        "test_mod_mixed_sign_float16",
        "test_einsum_batch_matmul_bfloat16",
        "test_attention_4d_fp16",
        "test_attention_4d_causal_bf16",
        "test_qlinearmatmul_2D_int8_float16",
        "test_cast_FLOAT_to_FLOAT16",
        "test_cast_DOUBLE_to_FLOAT16",
        "test_cast_BFLOAT16_to_FLOAT",
        "test_castlike_FLOAT_to_BFLOAT16",
        "test_bitcast_float32_to_int32",
        "test_bitcast_int64_to_float64",
        "test_nonmaxsuppression_two_batches",
        "test_unique_not_sorted_without_axis",
        "test_unique_sorted_with_axis_3d",
        "test_linear_attention_gated_delta_gqa",
        "test_linear_attention_prefill_with_past",
        "test_causal_conv_with_state_silu_with_past_state",
        "test_swiglu_alpha",
        "test_if",
        "test_cast_FLOAT_to_FLOAT8E4M3FN",
        "test_cast_no_saturate_FLOAT_to_FLOAT8E5M2",
        "test_cast_FLOAT8E5M2_to_FLOAT16",
        "test_cast_FLOAT_to_INT4",
        "test_cast_UINT4_to_FLOAT",
        "test_quantizelinear_e4m3fn",
        "test_quantizelinear_int4",
        "test_dequantizelinear_uint4",
        "test_dequantizelinear_e4m3fn_float16",
        "test_cast_FLOAT_to_FLOAT8E4M3FNUZ",
        "test_cast_no_saturate_FLOAT16_to_FLOAT8E5M2FNUZ",
        "test_cast_FLOAT8E4M3FNUZ_to_FLOAT",
        "test_cast_FLOAT_to_FLOAT4E2M1",
        "test_cast_FLOAT4E2M1_to_FLOAT16",
        "test_cast_FLOAT_to_INT2",
        "test_cast_UINT2_to_UINT8",
        "test_cast_e8m0_FLOAT_to_FLOAT8E8M0",
        "test_cast_e8m0_FLOAT8E8M0_to_FLOAT16",
        "test_quantizelinear_float4e2m1",
        "test_quantizelinear_int2",
        "test_dequantizelinear_uint2",
        "test_sign",
        "test_nonzero_example",
        "test_mvn",
        "test_melweightmatrix",
        "test_wrap_pad",
        "test_reshape_allowzero_reordered",
        "test_eyelike_with_dtype",
        "test_tfidfvectorizer_tf_uniandbigrams_skip5",
        "test_tfidfvectorizer_tf_batch_onlybigrams_skip5",
        "test_tfidfvectorizer_tf_onlybigrams_levelempty",
        "test_ai_onnx_ml_tree_ensemble_set_membership",
        "test_ai_onnx_ml_binarizer",
        "test_ai_onnx_ml_array_feature_extractor",
        "test_adam_multiple",
        "test_split_to_sequence_1",
        "test_split_to_sequence_nokeepdims",
        "test_sequence_insert_at_back",
        "test_if_seq",
        "test_identity_opt",
        "test_optional_get_element_sequence",
        "test_optional_has_element_empty_optional_input",
        "test_sequence_map_add_1_sequence_1_tensor",
        "test_sequence_map_extract_shapes",
        "test_adagrad",
        "test_nesterov_momentum",
        "test_deform_conv_with_mask_bias",
        "test_deform_conv_with_multiple_offset_groups",
        "test_quantizelinear_blocked_asymmetric",
        "test_dequantizelinear_blocked",
        "test_batchnorm_example_training_mode",
        "test_maxpool_3d_dilations_use_ref_impl_large",
        "test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_True",
        "test_lppool_3d_default",
        "test_convtranspose_3d",
        "test_convtranspose_autopad_same",
        "test_convtranspose_output_shape",
        "test_dft_irfft",
        "test_dft_inverse_opset19",
        "test_stft_with_window",
        "test_roialign_mode_max",
        "test_tensorscatter_circular",
        "test_group_normalization_epsilon",
        "test_maxunpool_export_with_output_shape",
        "test_col2im_5d",
        "test_affine_grid_3d_align_corners",
        "test_flexattention_score_mod",
        "test_flexattention_double",
        "test_flexattention_gqa",
        "test_loop11",
        "test_scan9_sum",
        "test_range_float_type_positive_delta_expanded",
        "test_affine_grid_2d_expanded",
        "test_linear_attention_gated_delta_gqa_expanded",
        "test_nonmaxsuppression_center_point_box_format",
        "test_resize_upsample_scales_cubic",
        "test_bitwise_not_2d",
        "test_not_2d",
        "test_and_bcast4v3d",
        "test_upsample_nearest",
        "test_bitwise_xor_ui64_bcast_3v1d",
        "test_cumsum_2d_axis_0",
        "test_cumprod_2d_axis_0",
        "test_gathernd_example_int32_batch_dim1",
        "test_lpnormalization_default",
        "test_shrink_soft",
        "test_mod_mixed_sign_float64",
        "test_resize_upsample_scales_cubic_A_n0p5_exclude_outside",
        "test_resize_downsample_scales_linear_antialias",
        "test_resize_downsample_sizes_cubic_antialias",
        "test_resize_tf_crop_and_resize_axes_3_2",
        "test_resize_downsample_sizes_nearest_not_larger",
        "test_resize_upsample_scales_linear_half_pixel_symmetric",
        "test_qlinearmatmul_2D_uint8_float32",
        "test_qlinearmatmul_3D_int8_float32",
        "test_convinteger_with_padding",
        "test_matmulinteger",
        "test_quantizelinear",
        "test_quantizelinear_axis",
        "test_dequantizelinear_axis",
        "test_dynamicquantizelinear",
        "test_conv_with_autopad_same",
        "test_conv_with_strides_and_asymmetric_padding",
        "test_convtranspose_pads",
        "test_maxpool_2d_pads",
        "test_maxpool_2d_ceil",
        "test_averagepool_2d_ceil_last_window_starts_on_pad",
        "test_averagepool_2d_same_upper",
        "test_globalaveragepool",
        "test_add_bcast",
        "test_add_uint8",
        "test_mul_bcast",
        "test_concat_3d_axis_1",
        "test_relu",
        "test_clip",
        "test_leakyrelu",
        "test_softmax_axis_1",
        "test_gemm_all_attributes",
        "test_matmul_4d",
        "test_flatten_axis1",
        "test_reshape_reduced_dims",
        "test_transpose_all_permutations_2",
        "test_batchnorm_example",
        "test_reduce_mean_keepdims_example",
        "test_argmax_keepdims_example",
        "test_constant_pad",
        "test_reflect_pad",
        "test_slice_neg_steps",
        "test_split_equal_parts_1d_opset18",
        "test_mod_mixed_sign_int32",
        "test_mod_int64_fmod",
        "test_mod_float32_mixed_sign_fmod_0",
        "test_pow",
        "test_pow_types_int32_float32",
        "test_erf",
        "test_gelu_default_1",
        "test_reduce_l2_default_axes_keepdims_example",
        "test_reduce_log_sum_default",
        "test_sin",
        "test_round",
        "test_selu",
        "test_equal",
        "test_less",
        "test_greater_equal",
        "test_where_example",
        "test_where_long_example",
        "test_equal_bcast",
        "test_less_equal",
        "test_greater",
        "test_layer_normalization_4d_axis1",
        "test_rms_normalization_3d_axis1_epsilon",
        "test_instancenorm_example",
        "test_hardmax_axis_1",
        "test_cumsum_2d_int32",
        "test_tril_neg",
        "test_range_int32_type_negative_delta",
        "test_gather_elements_negative_indices",
        "test_bitshift_left_int8_overflow",
        "test_bitshift_right_int32_negative_input",
        "test_bitshift_left_uint16",
        "test_nllloss_NCd1d2_with_weight_reduction_mean",
        "test_nllloss_NCd1_ii",
        "test_sce_mean_weight_ii_log_prob",
        "test_sce_NCd1d2d3_none_no_weight_negative_ii",
        "test_top_k_same_values_largest",
        "test_scatternd_max",
        "test_scatter_elements_with_negative_indices",
        "test_depthtospace_crd_mode_example",
        "test_spacetodepth_example",
        "test_onehot_negative_indices",
        "test_eyelike_populate_off_main_diagonal",
        "test_tile_precomputed",
        "test_isinf_negative",
        "test_isnan",
        "test_size",
        "test_simple_rnn_defaults",
        "test_simple_rnn_with_initial_bias",
        "test_rnn_seq_length",
        "test_simple_rnn_batchwise",
        "test_simple_rnn_reverse",
        "test_simple_rnn_bidirectional",
        "test_gru_defaults",
        "test_gru_with_initial_bias",
        "test_gru_seq_length",
        "test_gru_batchwise",
        "test_gru_reverse",
        "test_gru_bidirectional",
        "test_lstm_defaults",
        "test_lstm_with_initial_bias",
        "test_lstm_with_peepholes",
        "test_lstm_batchwise",
        "test_lstm_reverse",
        "test_lstm_bidirectional",
        "test_attention_4d",
        "test_attention_3d_gqa_causal",
        "test_attention_4d_attn_mask_bool_4d",
        "test_attention_4d_diff_heads_with_past_and_present_mask3d",
        "test_attention_4d_with_qk_matmul_softmax",
        "test_attention_3d_with_past_and_present_qk_matmul_softcap",
        "test_attention_4d_softcap_neginf_mask_poison",
        "test_attention_4d_gqa_causal_nonpad_decode",
        "test_attention_23_boolmask_fullymasked_row_nan_robustness",
        "test_attention_local_window_ext_cache_rank4_batch_mask",
        "test_averagepool_1d_default",
        "test_maxpool_1d_default",
        "test_convtranspose_1d",
        "test_lppool_1d_default",
        "test_lppool_2d_pads",
        "test_dropout_default_mask",
        "test_training_dropout_zero_ratio_mask",
        "test_hannwindow_symmetric",
        "test_hammingwindow",
        "test_blackmanwindow_symmetric",
        "test_compress_negative_axis",
        "test_compress_default_axis",
        "test_center_crop_pad_crop_and_pad",
        "test_center_crop_pad_crop_negative_axes_hwc",
        "test_reversesequence_batch",
        "test_det_nd",
        "test_lrn",
        "test_einsum_batch_diagonal",
        "test_einsum_batch_matmul",
        "test_einsum_sum",
        "test_gridsample",
        "test_gridsample_bicubic_align_corners_1_additional_1",
        "test_gridsample_reflection_padding",
        "test_gridsample_volumetric_bilinear_align_corners_0",
        "test_gridsample_nearest_align_corners_0_additional_1",
        "test_maxpool_with_argmax_2d_precomputed_pads",
        "test_maxpool_with_argmax_2d_precomputed_strides",
        "test_scatter_with_axis",
        "test_rotary_embedding",
        "test_rotary_embedding_3d_input",
        "test_rotary_embedding_with_interleaved_rotary_dim",
        "test_rotary_embedding_no_position_ids_rotary_dim",
    ] {
        assert!(ran.iter().any(|r| r == must), "{must} did not run");
    }
    // A sequence input given as a file, not a directory of its elements, is refused.
    let d = dir.path().join("test_sequence_map_identity_1_sequence");
    let elem = d.join("x").join("0.npy");
    let o = run_interp(
        "configs/16x16_uint8.toml",
        &d.join("model.onnx"),
        &elem,
        &d.join("bad"),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("is a sequence") && err.contains("0.npy") && err.contains("fix:"),
        "{err}"
    );
}

/// Run `hwgen run --interp` on `model` (in `dir`) with `input`; its stdout and output.
fn run_on(
    dir: &std::path::Path,
    model: &str,
    input: &str,
    config: &str,
) -> (String, std::path::PathBuf) {
    let out = dir.join(format!("{model}.{input}.out.npy"));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hwgen"))
        .args(["run", "-c", config, "--interp", "-m"])
        .arg(dir.join(model))
        .arg("-i")
        .arg(dir.join(input))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{model}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (String::from_utf8_lossy(&o.stdout).into_owned(), out)
}

/// A graph whose input is already quantized (int8 or uint8, as deployment graphs take
/// images) runs on the accelerator from its first quantized operator, one with a float
/// normalization in front runs it on the host and the rest on the accelerator, and a QOperator
/// graph with a host operator between two convolutions (QLinearSoftmax, whose uint8 output
/// the second QLinearConv reads) runs as two accelerator segments; each equals the exact
/// reference (rtl-tests/ref/onnx_integer_input.py), element for element.
#[test]
fn integer_inputs_and_quantized_segments() {
    if !have_onnxruntime() {
        return;
    }
    for (format, act, config) in [
        ("qop", "uint8", "configs/16x16_uint8.toml"),
        ("qdq", "int8", "configs/8x8_int8.toml"),
    ] {
        let dir = make_act("conv_relu_conv", format, act, &["per_channel"]);
        run_reference(
            "onnx_integer_input.py",
            &[&dir.path().to_string_lossy()],
            "",
        );
        let (said, out) = run_on(dir.path(), "int_input.onnx", "xq.npy", config);
        assert!(said.contains("2 layers on the ISA interpreter"), "{said}");
        let read = |p: &std::path::Path| hwgen::model::npy::read_values(p).unwrap();
        assert_eq!(
            read(&out),
            read(&dir.path().join("yq.npy")),
            "{format} {act}"
        );
        // A float normalization in front (Sub, Div): the host runs it, then the
        // accelerator from the graph's QuantizeLinear of its result.
        let (said, out) = run_on(dir.path(), "normalize.onnx", "xr.npy", config);
        assert!(
            said.contains("2 layers on the ISA interpreter")
                && said.contains("2 nodes on the host"),
            "{said}"
        );
        assert_eq!(
            read(&out),
            read(&dir.path().join("yn.npy")),
            "normalized {format} {act}"
        );
    }
    two_segments("qop");
}

/// conv -> Softmax -> conv (uint8, per channel) in `format` runs as two accelerator
/// segments around the host's Softmax, and its output equals the exact reference's, float
/// for float.
fn two_segments(format: &str) {
    let dir = make_act("conv_softmax_conv", format, "uint8", &["per_channel"]);
    let (said, out) = run_on(
        dir.path(),
        "model.onnx",
        "xr.npy",
        "configs/16x16_uint8.toml",
    );
    assert!(said.contains("2 accelerator segments"), "{format}: {said}");
    let got = hwgen::model::npy::read_f32(&out).unwrap();
    let want = hwgen::model::npy::read_f32(&dir.path().join("yr.npy")).unwrap();
    assert_eq!(
        (&got.shape, &got.data),
        (&want.shape, &want.data),
        "{format}"
    );
}

/// A graph of two float inputs (each through a convolution, then added) runs whole on the
/// accelerator: two model inputs, each quantized on the host by its own QuantizeLinear's
/// parameters; `hwgen run` with one --input per graph input equals the exact reference's
/// float output in at least 95% of the elements and is within one output step in all (the
/// Add's two operand scales, rounded to integer weights, can tip a near-tie), and is
/// within one step plus ONNX Runtime's own spread of its default session's output. QDQ in
/// RTL, QOperator on the interpreter.
#[test]
fn two_graph_inputs_run_on_the_accelerator() {
    if !have_onnxruntime() || !have_tool("verilator", "two_graph_inputs_run_on_the_accelerator") {
        return;
    }
    for (format, interp) in [("qdq", false), ("qop", true)] {
        let dir = make("two_inputs", format, &["per_channel"]);
        let onnx = dir.path().join("model.onnx");
        let imported = hwgen::onnx::import(&onnx, "d").unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = imported.inputs.iter().map(|q| q.onnx.as_str()).collect();
        assert_eq!(names, ["x", "v"], "{format}");
        let out = dir.path().join("y_hwgen.npy");
        let inputs = ["xr.npy", "vr.npy"];
        let o = hwgen_run_on("configs/8x8_int8.toml", dir.path(), &inputs, &out, interp);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(stdout.contains("0 nodes on the host"), "{format}: {stdout}");
        let got = hwgen::model::npy::read_f32(&out).unwrap();
        let want = hwgen::model::npy::read_f32(&dir.path().join("yr.npy")).unwrap();
        assert_eq!(got.shape, want.shape, "{format}");
        let step = imported.outputs[0].scale;
        let (same, worst) = agreement(&got, &want, step);
        eprintln!(
            "two inputs {format}: {same}/{} identical, max {worst:.3} steps",
            want.data.len()
        );
        assert!(
            worst < 1.001 && same * 20 >= want.data.len() * 19,
            "{format}: {same}/{}, {worst}",
            want.data.len()
        );
        within_ort_spread(&format!("two inputs {format}"), dir.path(), &got, step, 1.0);
    }
    // One input given for two is an error naming both.
    let dir = make("two_inputs", "qdq", &["per_channel"]);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hwgen"))
        .args(["run", "-c", "configs/8x8_int8.toml", "--interp", "-m"])
        .arg(dir.path().join("model.onnx"))
        .arg("-i")
        .arg(dir.path().join("xr.npy"))
        .arg("-o")
        .arg(dir.path().join("o.npy"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("2 inputs ('x', 'v') and 1 were given"),
        "{err}"
    );
}

/// Operators whose float output the graph leaves unquantized (quantize_static's
/// OpTypesToExcludeOutputQuantization: a Gemm, a Conv of uint8 inputs, a ConvTranspose, a
/// Conv whose output a host Softmax reads) run on the accelerator as layers that write their
/// int32 accumulator; the host multiplies each channel by its input scale x weight scale.
/// That is the exact value rounded once to float32. The exact reference instead sums the
/// dequantized float32 operands (each `(q - z) * scale` rounded to float32, as
/// DequantizeLinear defines it) in double precision and rounds once, so the two differ by
/// those operands' float32 rounding: within 8 units in the last place of the output's
/// largest magnitude.
#[test]
fn unquantized_outputs_come_from_the_accumulator() {
    if !have_onnxruntime()
        || !have_tool("verilator", "unquantized_outputs_come_from_the_accumulator")
    {
        return;
    }
    // (graph, activations, weights, config, on the interpreter, host nodes)
    let uint8 = "configs/16x16_uint8.toml";
    let int8 = "configs/8x8_int8.toml";
    for (graph, act, pc, config, interp, host) in [
        ("pool_fc_fout", "int8", "per_channel", int8, false, 0),
        ("conv_fout", "uint8", "per_tensor", uint8, false, 0),
        ("upconv_fout", "int8", "per_channel", int8, true, 0),
        ("conv_softmax_fout", "int8", "per_tensor", int8, true, 1),
    ] {
        let dir = make_act(graph, "qdq", act, &[pc]);
        if host == 0 {
            let toml = hwgen::onnx::import(&dir.path().join("model.onnx"), "d")
                .unwrap_or_else(|e| panic!("{graph}: {e}"))
                .toml;
            assert!(
                toml.contains("output_type = \"accumulator\""),
                "{graph}: {toml}"
            );
        }
        let out = dir.path().join("y_hwgen.npy");
        let o = hwgen_run_on(config, dir.path(), &["xr.npy"], &out, interp);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{graph}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            stdout.contains(&format!("; {host} nodes on the host")),
            "{graph}: {stdout}"
        );
        let got = hwgen::model::npy::read_f32(&out).unwrap();
        let want = hwgen::model::npy::read_f32(&dir.path().join("yr.npy")).unwrap();
        assert_eq!(got.shape, want.shape, "{graph}");
        let top = want.data.iter().fold(0f32, |m, v| m.max(v.abs()));
        let ulp = f64::from(2f32.powi(top.log2().floor() as i32 - 23));
        let worst = got
            .data
            .iter()
            .zip(&want.data)
            .map(|(a, b)| (f64::from(*a) - f64::from(*b)).abs())
            .fold(0.0, f64::max);
        eprintln!(
            "{graph}: max difference {worst:e} = {:.1} ulp of {top}",
            worst / ulp
        );
        assert!(
            worst <= 8.0 * ulp,
            "{graph}: {worst} > 8 ulp ({ulp}) of {top}"
        );
    }
}

/// Every operator the host runtime gained for ONNX's operator tests, on edge shapes (rank
/// 0, an empty dimension, all ones, a plain matrix; rtl-tests/ref/onnx_edge_shapes.py):
/// `hwgen run` runs each or refuses it with an error naming the model, never a crash (a
/// rank-0 GatherElements, and a rank-0 Hardmax given axis 0, once indexed past their
/// dimensions). Most of them run.
#[test]
fn host_operators_on_edge_shapes_never_crash() {
    let Some((dir, list)) = reference_cases("onnx_edge_shapes.py") else {
        return;
    };
    let (mut ran, mut total) = (0, 0);
    for line in list.lines() {
        let (name, outs) = line.split_once(' ').unwrap();
        let d = dir.path();
        let out = d.join(match outs {
            "1" => format!("{name}.out.npy"),
            _ => format!("{name}.out"),
        });
        let (model, input) = (
            d.join(format!("{name}.onnx")),
            d.join(format!("{name}_x.npy")),
        );
        let o = run_interp("configs/8x8_int8.toml", &model, &input, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        total += 1;
        match o.status.code() {
            Some(0) => ran += 1,
            Some(1) if err.contains("error: ") && err.contains(".onnx") => {}
            c => panic!("{name}: exit {c:?}\n{err}"),
        }
    }
    // 45 graphs on 5 shapes each.
    assert_eq!(total, 225, "the script's case list changed");
    assert!(ran * 4 >= total * 3, "only {ran} of {total} ran");
}

/// `hwgen run --interp` of `model` on `config` (relative to the repository) with `input`,
/// into `out`; its exit status and output, whatever they are.
fn run_interp(
    config: &str,
    model: &std::path::Path,
    input: &std::path::Path,
    out: &std::path::Path,
) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_hwgen"))
        .current_dir(repo())
        .args(["run", "-c", config, "--interp", "-m"])
        .arg(model)
        .arg("-i")
        .arg(input)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

/// The graphs reference `script` writes into a fresh directory, and the list it prints;
/// None without ONNX Runtime (`have_onnxruntime` says so).
fn reference_cases(script: &str) -> Option<(tempfile::TempDir, String)> {
    if !have_onnxruntime() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let list = run_reference(script, &[&dir.path().to_string_lossy()], "");
    Some((dir, list))
}

/// The step (scale) of initializer `name` of `dir`'s model.onnx.
fn initializer_scale(dir: &std::path::Path, name: &str) -> f64 {
    let bytes = std::fs::read(dir.join("model.onnx")).unwrap();
    let m = hwgen::onnx::proto::model(&bytes).unwrap();
    let t = m.graph.initializers.iter().find(|t| t.name == name);
    t.unwrap_or_else(|| panic!("no initializer {name}")).values[0]
}

/// A BERT-style encoder layer as quantize_static writes it (QDQ, int8 activations with zero
/// points, per-channel weights; `rtl-tests/ref/onnx_quantized.py`'s "encoder"): its
/// tensors are sequences `[1, 16, 32]`, and its linear layers (MatMul with constant weights,
/// bias Add, residual Add) run on the accelerator as 1x1 convolutions over the tokens,
/// segment by segment between what the host runs (issue 39). The output keeps its declared
/// shape and is within one step, plus ONNX Runtime's own spread, of ONNX Runtime's session.
#[test]
fn encoder_layers_run_on_the_accelerator() {
    if !have_onnxruntime() {
        return;
    }
    let dir = make_act("encoder", "qdq", "int8", &["per_channel"]);
    let out = dir.path().join("y_hwgen.npy");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hwgen"))
        .args([
            "run",
            "-c",
            "configs/8x8_int8.toml",
            "--interp",
            "--json",
            "-m",
        ])
        .arg(dir.path().join("model.onnx"))
        .arg("-i")
        .arg(dir.path().join("xr.npy"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // q, k and v from the input; the scores' scaling (a Div); the output projection with
    // the residual (the layer's input read from the host as a second input); the FFN's
    // first layer; the rest of GELU after the host's Erf, the second layer and its
    // residual: five segments.
    assert_eq!(report["segments"].as_array().unwrap().len(), 5, "{stderr}");
    // Hand-derived MACs (16 tokens, hidden 32, 2 heads of 16, FFN 64): the six linear
    // layers 4 x 16 x 32 x 32 + 2 x 16 x 32 x 64 on the accelerator; the two attention
    // products, 2 x (2 x 16 x 16 x 16), on the host (for now).
    assert_eq!(report["accelerator"]["macs"], 131072);
    assert_eq!(report["host"]["macs"], 16384);
    for n in report["nodes"].as_array().unwrap() {
        if n["op_type"] == "MatMul" {
            let on = if ["s", "a"].contains(&n["output"].as_str().unwrap()) {
                "host"
            } else {
                "accelerator"
            };
            assert_eq!(n["ran_on"], on, "{n}");
        }
    }
    let got = hwgen::model::npy::read_f32(&out).unwrap();
    let want = hwgen::model::npy::read_f32(&dir.path().join("yr.npy")).unwrap();
    assert_eq!(got.shape, vec![1, 16, 32]);
    assert_eq!(got.shape, want.shape);
    let step = initializer_scale(dir.path(), "y_scale");
    within_ort_spread("encoder", dir.path(), &got, step, 1.0);
}

/// A later accelerator segment that reads the host's `[1, K]` tensor (a Softmax's) and
/// writes a graph output of `[1, N]` hands it back as `[1, N]`, not `[1, N, 1, 1]`.
#[test]
fn later_segments_keep_flat_outputs_flat() {
    if !have_onnxruntime() {
        return;
    }
    let dir = make_act("fc_softmax_fc", "qdq", "int8", &["per_channel"]);
    let out = dir.path().join("y_hwgen.npy");
    let o = hwgen_run_on("configs/8x8_int8.toml", dir.path(), &["xr.npy"], &out, true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 accelerator segments"));
    let got = hwgen::model::npy::read_f32(&out).unwrap();
    assert_eq!(got.shape, vec![1, 5]);
    let step = initializer_scale(dir.path(), "y_scale");
    within_ort_spread("fc_softmax_fc", dir.path(), &got, step, 1.0);
}

/// `hwgen run --json` on `dir`'s model.onnx and xr.npy, into `out`: its report and stderr.
fn run_json(
    dir: &std::path::Path,
    config: &str,
    out: &std::path::Path,
    interp: bool,
) -> (serde_json::Value, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hwgen"));
    cmd.args(["run", "-c", config, "--json", "-m"])
        .arg(dir.join("model.onnx"))
        .arg("-i")
        .arg(dir.join("xr.npy"))
        .arg("-o")
        .arg(out)
        .arg("--cache")
        .arg(sim_cache());
    if interp {
        cmd.arg("--interp");
    }
    let o = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{stderr}");
    (serde_json::from_slice(&o.stdout).unwrap(), stderr)
}

/// The encoder layer quantized with symmetric activations runs whole on a design with the
/// row unit, in the RTL: every node on the accelerator in one segment (the head split and
/// merge folded into the addressing, Q K^T and P V as `matmul` per head, Softmax,
/// LayerNormalization and the Erf of GELU on the row unit), bit-exact against the golden
/// model (hwgen run checks it), and within one step (plus ONNX Runtime's own spread) of
/// ONNX Runtime's session; likewise with ONNX Runtime's default asymmetric activations,
/// whose zero points the array takes out of the attention products' sums.
#[test]
fn quantized_encoder_runs_whole_on_the_row_unit() {
    if !have_onnxruntime()
        || !have_tool("verilator", "quantized_encoder_runs_whole_on_the_row_unit")
    {
        return;
    }
    let rows = "rtl-tests/configs/8x8_int8_rows.toml";
    let dir = make_act("encoder", "qdq", "int8", &["per_channel_sym"]);
    let out = dir.path().join("y_hwgen.npy");
    let (report, stderr) = run_json(dir.path(), rows, &out, false);
    assert_eq!(report["host"]["nodes"], 0, "{stderr}");
    assert_eq!(report["segments"].as_array().unwrap().len(), 1);
    // Hand-derived: 4 x 16 x 32 x 32 + 2 x 16 x 32 x 64 + 2 x (2 x 16 x 16 x 16).
    assert_eq!(report["accelerator"]["macs"], 147456);
    let got = hwgen::model::npy::read_f32(&out).unwrap();
    assert_eq!(got.shape, vec![1, 16, 32]);
    let step = initializer_scale(dir.path(), "y_scale");
    // The row unit's operators round to the ideal code or its neighbour (README, "The row
    // operators"), so an intermediate tensor may differ by one step near a tie; the layer
    // norm after it scales a step of its input by gamma / (std x its output step), here
    // up to two output steps. Measured on this seed: 500 of 512 identical, 10 one step,
    // 2 two steps.
    encoder_agrees("encoder (symmetric)", dir.path(), &got, step);

    // quantize_static's default asymmetric activations: the array takes the operands' zero
    // points out of the attention products' sums, so the layer still runs whole.
    let asym = make_act("encoder", "qdq", "int8", &["per_channel"]);
    let out = asym.path().join("y_hwgen.npy");
    let (report, stderr) = run_json(asym.path(), rows, &out, false);
    assert_eq!(report["host"]["nodes"], 0, "{stderr}");
    assert_eq!(report["segments"].as_array().unwrap().len(), 1);
    assert_eq!(report["accelerator"]["macs"], 147456);
    let got = hwgen::model::npy::read_f32(&out).unwrap();
    let step = initializer_scale(asym.path(), "y_scale");
    // Measured on this seed: 509 of 512 identical, 3 one step apart.
    encoder_agrees("encoder (asymmetric)", asym.path(), &got, step);
}

/// The encoder layer's output `got` against the exact reference in `dir` (yr.npy): at
/// least 95% identical and at most 2 steps apart, and within 2 steps plus ONNX Runtime's
/// own spread of its session.
fn encoder_agrees(label: &str, dir: &std::path::Path, got: &hwgen::model::npy::NpyF32, step: f64) {
    let want = hwgen::model::npy::read_f32(&dir.join("yr.npy")).unwrap();
    let (same, worst) = agreement(got, &want, step);
    assert!(
        same * 100 >= want.data.len() * 95,
        "{label}: {same} of {} identical",
        want.data.len()
    );
    assert!(
        worst <= 2.001,
        "{label}: {worst} steps from the exact reference"
    );
    within_ort_spread(label, dir, got, step, 2.0);
}

/// A ViT (`onnx_quantized.py`'s "vit": a 32x32 image, 8x8 patches, the class token, one
/// encoder layer over 17 tokens, the class token's LayerNormalization and classifier): the
/// patch embedding's pixels become tokens in place (Reshape to [1, C, H*W] and Transpose),
/// and the patch convolution, the linear layers, the attention (its 17 keys per head
/// padded to 24, the 8-channel tiles, and masked in the softmax) and the classifier run on
/// the accelerator; the class token's Concat and Gather (no MACs) on the host. Hand-derived
/// MACs: patches 16 x 32 x 3 x 8 x 8, linear layers 4 x 17 x 32 x 32 + 2 x 17 x 32 x 64,
/// classifier 32 x 10, the two products 2 x (2 x 17 x 17 x 16).
#[test]
fn vit_patches_become_tokens_on_the_accelerator() {
    if !have_onnxruntime() {
        return;
    }
    let dir = make_act("vit", "qdq", "int8", &["per_channel_sym"]);
    let out = dir.path().join("y_hwgen.npy");
    let rows = "rtl-tests/configs/8x8_int8_rows.toml";
    let (report, stderr) = run_json(dir.path(), rows, &out, true);
    let macs = 16 * 32 * 3 * 64 + 4 * 17 * 32 * 32 + 2 * 17 * 32 * 64 + 320;
    assert_eq!(report["accelerator"]["macs"], macs + 2 * (2 * 17 * 17 * 16));
    assert_eq!(report["host"]["macs"], 0, "{stderr}");
    let got = hwgen::model::npy::read_f32(&out).unwrap();
    assert_eq!(got.shape, vec![1, 10]);
    let step = initializer_scale(dir.path(), "y_scale");
    within_ort_spread("vit", dir.path(), &got, step, 2.0);
    // With quantize_static's default asymmetric activations too, in the RTL.
    let asym = make_act("vit", "qdq", "int8", &["per_channel"]);
    let out = asym.path().join("y_hwgen.npy");
    let (report, stderr) = run_json(asym.path(), rows, &out, false);
    assert_eq!(report["host"]["macs"], 0, "{stderr}");
    let got = hwgen::model::npy::read_f32(&out).unwrap();
    let step = initializer_scale(asym.path(), "y_scale");
    within_ort_spread("vit (asymmetric)", asym.path(), &got, step, 2.0);
}

/// A graph quantized to uint8 activations on a design that computes with int8 ones: the
/// importer refuses it at its first quantization with the reason, and the host runs the
/// whole graph (the run does not fail).
#[test]
fn a_design_of_another_type_leaves_the_graph_to_the_host() {
    if !have_onnxruntime() {
        return;
    }
    let dir = make_act("fc_softmax_fc", "qdq", "uint8", &["per_channel"]);
    let out = dir.path().join("y_hwgen.npy");
    let (report, stderr) = run_json(dir.path(), "configs/8x8_int8.toml", &out, true);
    assert!(
        stderr.contains("activations are uint8, and the design computes with int8 activations"),
        "{stderr}"
    );
    assert_eq!(report["accelerator"]["nodes"], 0);
    let got = hwgen::model::npy::read_f32(&out).unwrap();
    assert_eq!(got.shape, vec![1, 5]);
    let step = initializer_scale(dir.path(), "y_scale");
    within_ort_spread("fc_softmax_fc uint8 on int8", dir.path(), &got, step, 1.0);
}

/// LayerNormalization spelt out as exports before opset 17 write it (ReduceMean, Sub, Pow,
/// ReduceMean, Add, Sqrt, Div, Mul, Add; quantize_static quantizes the variance and the
/// normalized values between them) runs as one `layernorm` on the row unit: every node on
/// the accelerator. hwgen skips the graph's intermediate quantizations (the int8 variance
/// is rounded to its step there, which moves an output by |normalized value| x gamma x
/// (variance error / 2 variance) / output step), so an element may land a step or two
/// from the graph's value; measured on this seed, with an input within the calibration's
/// range: 497 of 512 identical, max 2 steps.
#[test]
fn spelt_out_layer_norms_run_as_one() {
    if !have_onnxruntime() {
        return;
    }
    let dir = make_act("layernorm_spelt", "qdq", "int8", &["per_channel"]);
    let out = dir.path().join("y_hwgen.npy");
    let rows = "rtl-tests/configs/8x8_int8_rows.toml";
    let (report, stderr) = run_json(dir.path(), rows, &out, true);
    assert_eq!(report["host"]["nodes"], 0, "{stderr}");
    let got = hwgen::model::npy::read_f32(&out).unwrap();
    let want = hwgen::model::npy::read_f32(&dir.path().join("yr.npy")).unwrap();
    assert_eq!(got.shape, vec![1, 16, 32]);
    let step = initializer_scale(dir.path(), "y_scale");
    let (same, worst) = agreement(&got, &want, step);
    eprintln!(
        "layernorm_spelt: {same}/{} identical, max {worst:.3} steps",
        want.data.len()
    );
    assert!(same * 100 >= want.data.len() * 95, "{same} identical");
    assert!(worst <= 2.001, "{worst} steps");
    within_ort_spread("layernorm_spelt", dir.path(), &got, step, 2.0);
}

/// Quantization parameters ONNX's operator definitions forbid are refused, named: a zero
/// point of another type than its tensor (int16 for int8 weights), an empty zero point, and
/// two zero points for one scale; a scale of 0 or NaN, of an integer type, or of two
/// dimensions (blocked quantization).
#[test]
fn zero_points_are_checked_against_the_definition() {
    if !have_onnxruntime() {
        return;
    }
    let dir = make("conv", "qdq", &["per_tensor"]);
    let script = r#"
import sys, numpy as np, onnx
from onnx import numpy_helper
d, case = sys.argv[1], sys.argv[2]
m = onnx.load(f"{d}/model.onnx")
zps = [t for t in m.graph.initializer if t.name.endswith("zero_point")]
w = next(t for t in zps if t.name.startswith("c1_w"))
x = next(t for t in zps if t.name.startswith("x_"))
scales = [t for t in m.graph.initializer if t.name.endswith("scale")]
ws = next(t for t in scales if t.name.startswith("c1_w"))
xs = next(t for t in scales if t.name.startswith("x_"))
if case == "int16":
    w.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(w).astype(np.int16), w.name))
elif case == "empty":
    x.CopyFrom(numpy_helper.from_array(np.zeros([0], np.int8), x.name))
elif case == "two":
    x.CopyFrom(numpy_helper.from_array(np.array([0, 1], np.int8), x.name))
elif case == "scale0":
    xs.CopyFrom(numpy_helper.from_array(np.float32(0), xs.name))
elif case == "nan":
    ws.CopyFrom(numpy_helper.from_array(np.float32(np.nan), ws.name))
elif case == "int_scale":
    xs.CopyFrom(numpy_helper.from_array(np.int32(1), xs.name))
else:
    ws.CopyFrom(numpy_helper.from_array(np.ones([2, 2], np.float32), ws.name))
onnx.save(m, f"{d}/{case}.onnx")
"#;
    for (case, says) in [
        (
            "int16",
            "is int16, and 'c1_w_quantized' is int8; a zero point has its tensor's type",
        ),
        ("empty", "has 0 values; a per-tensor zero point has one"),
        ("two", "has 2 values; a per-tensor zero point has one"),
        (
            "scale0",
            "holds 0; a quantization step is finite and positive",
        ),
        (
            "nan",
            "holds NaN; a quantization step is finite and positive",
        ),
        (
            "int_scale",
            "is int32; a scale is float, float16 or bfloat16",
        ),
        (
            "blocked",
            "has shape [2, 2]; a scale is a scalar (per tensor) or 1-D",
        ),
    ] {
        let o = std::process::Command::new(python())
            .args(["-c", script])
            .arg(dir.path())
            .arg(case)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r = std::process::Command::new(env!("CARGO_BIN_EXE_hwgen"))
            .args(["import", "-o"])
            .arg(dir.path().join(format!("{case}.toml")))
            .arg(dir.path().join(format!("{case}.onnx")))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            r.status.code() == Some(1) && err.contains(says) && err.contains("  fix:  "),
            "{case}: {err}"
        );
    }
}
