//! Bad models and models the compiler cannot map get clear messages (file, layer, field,
//! rule, fix), snapshot-tested like RTL.

use std::path::Path;

#[test]
fn bad_models() {
    insta::glob!("bad_models/*.toml", |path| {
        let name = path.file_name().unwrap().to_string_lossy();
        let rel = Path::new("tests/bad_models").join(&*name);
        let err = hwgen::model::load(&rel).expect_err("a bad model must be refused");
        insta::assert_snapshot!(err.to_string());
    });
}

fn compile_err(config: &str, model: &str) -> String {
    let design = hwgen::config::load(Path::new(config)).unwrap();
    let model = hwgen::model::parse_str(model, "m.toml", Path::new(".")).unwrap();
    hwgen::compiler::compile(&design, &model)
        .unwrap_err()
        .to_string()
}

/// A row operator on a Design without the row unit names the config key that adds it.
#[test]
fn row_operator_without_the_row_unit() {
    let model = "[input]\nshape = [4, 1, 32]\n[[layer]]\nname = \"sm\"\nop = \"softmax\"\nscales = { input = 0.1, output = 0.004 }\n";
    insta::assert_snapshot!(
        "softmax_without_row_unit",
        compile_err("configs/16x16_int8.toml", model)
    );
}

#[test]
fn mx_and_integer_mismatch() {
    let int_model = "[input]\nshape = [4, 4, 32]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 1\nout_channels = 32\n";
    let mx_model = format!("type = \"mxint8\"\n{int_model}");
    insta::assert_snapshot!(
        "int_model_on_mx_design",
        compile_err("configs/32x32_mxint8.toml", int_model)
    );
    insta::assert_snapshot!(
        "mx_model_on_int_design",
        compile_err("configs/32x32_int8.toml", &mx_model)
    );
    let block16 = format!("block_size = 16\n{mx_model}");
    insta::assert_snapshot!(
        "mx_block_size_mismatch",
        compile_err("configs/32x32_mxint8.toml", &block16)
    );
    let mixed = std::fs::read_to_string("models/sample_mixed.toml").unwrap();
    insta::assert_snapshot!(
        "mixed_model_on_mx_design",
        compile_err("configs/32x32_mxint8.toml", &mixed)
    );
    // An MX residual add on a Design mixing integer and MX layers, whose vector unit has
    // no FP32 add for MX rows.
    let add = "type = \"mxint8\"\nblock_size = 16\n[input]\nname = \"x\"\nshape = [4, 4, 32]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 1\nout_channels = 32\n[[layer]]\nname = \"r\"\nop = \"add\"\nresidual = \"x\"\n";
    insta::assert_snapshot!(
        "mx_add_on_mixed_design",
        compile_err("configs/16x16_int8_mxint8.toml", add)
    );
}

#[test]
fn compile_errors() {
    let conv = "[input]\nshape = [4, 4, 8]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 1\nout_channels = 8\n";
    let rect = std::env::temp_dir().join(format!("hwgen-rect-{}.toml", std::process::id()));
    std::fs::write(
        &rect,
        "[array]
rows = 8
cols = 16
",
    )
    .unwrap();
    insta::assert_snapshot!("non_square", compile_err(rect.to_str().unwrap(), conv));
    let _ = std::fs::remove_file(&rect);
    let up = "[input]\nshape = [2, 40, 8]\n[[layer]]\nname = \"u\"\nop = \"upsample\"\n";
    insta::assert_snapshot!(
        "upsample_too_wide",
        compile_err("configs/8x8_int8.toml", up)
    );
    let wide = "type = \"int16\"\n[input]\nshape = [4, 4, 8]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 1\nout_channels = 8\n";
    insta::assert_snapshot!("type_mismatch", compile_err("configs/8x8_int8.toml", wide));
    // A padded max-pool over signed values on a design without the window unit: the zero
    // rows the array pools over as padding could win. (Over a ReLU's output it compiles:
    // rtl-tests case relu_maxpool_pad_array.)
    let signed_pool = "[input]\nshape = [6, 6, 8]\n[[layer]]\nname = \"p\"\nop = \"maxpool\"\nkernel = 3\nstride = 2\npadding = 1\n";
    insta::assert_snapshot!(
        "padded_maxpool_of_signed_values_on_the_array",
        compile_err("rtl-tests/configs/8x8_int8_array.toml", signed_pool)
    );
    // After a ReLU the values are >= 0, but an average pool with a negative zero point can
    // make them negative again: refused there, accepted with zero point 0.
    let pooled = |zp: i64| {
        format!(
            "[input]\nshape = [6, 6, 8]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 1\nout_channels = 8\nactivation = \"relu\"\n[[layer]]\nname = \"a\"\nop = \"avgpool\"\nkernel = 2\nstride = 1\nrequant = {{ multiplier = 16384, shift = 16, zero_point = {zp} }}\n[[layer]]\nname = \"p\"\nop = \"maxpool\"\nkernel = 3\nstride = 2\npadding = 1\n"
        )
    };
    let array = Path::new("rtl-tests/configs/8x8_int8_array.toml");
    let design = hwgen::config::load(array).unwrap();
    let accepted = hwgen::model::parse_str(&pooled(0), "m.toml", Path::new(".")).unwrap();
    assert!(hwgen::compiler::compile(&design, &accepted).is_ok());
    let err = compile_err(array.to_str().unwrap(), &pooled(-3));
    assert!(
        err.contains("cannot compile layer p") && err.contains("cannot be negative"),
        "{err}"
    );
}

/// Every model the repository ships or tests with is accepted: the per-operator key rules
/// (issue 10) refuse only keys that do nothing.
#[test]
fn shipped_models_load() {
    let mut n = 0;
    for dir in ["models", "models/bench", "rtl-tests/cases"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                hwgen::model::load(&path).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
    }
    assert!(n > 40, "only {n} models found");
}

/// A BF16 add runs only fused into the convolution before it; where that convolution's
/// output is read twice, the compiler names the add and the rule.
#[test]
fn float_add_that_cannot_fuse() {
    let model = "type = \"bf16\"\n[input]\nname = \"x\"\nshape = [4, 1, 16]\n[[layer]]\nname = \"o\"\nop = \"conv2d\"\nkernel = 1\nout_channels = 16\n[[layer]]\nname = \"r\"\nop = \"add\"\nresidual = \"x\"\n[[layer]]\nname = \"z\"\nop = \"conv2d\"\ninput = \"o\"\nkernel = 1\nout_channels = 16\n";
    insta::assert_snapshot!(
        "float_add_unfused",
        compile_err("configs/16x16_bf16.toml", model)
    );
}

/// Zero points of a matmul of two run-time tensors: on a Design without the array's
/// correction (an integer Design with [rows]), and with a head whose channels do not fill
/// the array's rows (the correction spans them all), the compiler names the rule (a zero
/// point outside its operand's type is a model error: `bad_models/`).
#[test]
fn matmul_zero_points_the_design_cannot_take() {
    let model = |c: usize, transpose: bool| {
        format!("[input]\nname = \"x\"\nshape = [16, 1, {c}]\n[[layer]]\nname = \"s\"\nop = \"matmul\"\nb = \"x\"\ntranspose_b = {transpose}\nzero_points = {{ input = -3, b = 5 }}\nrequant = {{ multiplier = 1, shift = 8 }}\n")
    };
    insta::assert_snapshot!(
        "matmul_zero_points_without_rows",
        compile_err("configs/16x16_int8.toml", &model(16, false))
    );
    insta::assert_snapshot!(
        "matmul_zero_points_partial_tile",
        compile_err("rtl-tests/configs/8x8_int8_rows.toml", &model(12, true))
    );
}

/// Keys padded by a whole channel tile or more would load a weight tile of no key at all;
/// the compiler names the rule.
#[test]
fn matmul_keys_past_the_next_tile() {
    let model = "[input]\nname = \"x\"\nshape = [16, 1, 16]\n[[layer]]\nname = \"s\"\nop = \"matmul\"\nb = \"x\"\ntranspose_b = true\nkeys = 24\nrequant = { multiplier = 1, shift = 8 }\n";
    insta::assert_snapshot!(
        "matmul_keys_past_the_next_tile",
        compile_err("rtl-tests/configs/8x8_int8_rows.toml", model)
    );
}
