//! Seeded random differential test: random layer shapes and configs, compiled and checked
//! golden model = ISA interpreter = RTL. A few cases run in the test suite;
//! `scripts/random_sweep.sh N` (HWGEN_RANDOM_CASES=N) runs many. The second test does the
//! same for the MX and floating-point types, one config each in turn; the third for random
//! chains of int8 and MXINT8 layers on the multi-precision config.

mod common;

use common::*;

/// Cases to run: `HWGEN_RANDOM_CASES`, else `default` (the suite's share).
fn case_count(default: u64) -> u64 {
    std::env::var("HWGEN_RANDOM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A random single-layer (sometimes two-layer) model as TOML.
fn random_model(rng: &mut Rng, seed: u64) -> String {
    let h = rng.range(3, 14);
    let w = rng.range(3, 14);
    let c = rng.range(1, 40);
    let mut s =
        format!("name = \"random_{seed}\"\nseed = {seed}\n[input]\nshape = [{h}, {w}, {c}]\n");
    let kind = rng.range(0, 5);
    let layer = match kind {
        0 | 1 => {
            let k = [1, 3][rng.range(0, 1) as usize];
            let stride = rng.range(1, 2);
            let pad = if k == 3 { rng.range(0, 1) } else { 0 };
            let depthwise = rng.range(0, 3) == 0;
            let cout = if depthwise { c } else { rng.range(1, 40) };
            let groups = if depthwise { c } else { 1 };
            let relu = if rng.range(0, 1) == 1 { "relu" } else { "none" };
            // Scale so results spread over the int8 range: |acc| ~ 2^14 * sqrt(k*k*c).
            let shift = 12 + rng.range(0, 4);
            let conv = format!(
                "[[layer]]\nname = \"conv\"\nop = \"conv2d\"\nkernel = {k}\nstride = {stride}\npadding = {pad}\ngroups = {groups}\nout_channels = {cout}\nbias = \"random\"\nactivation = \"{relu}\"\nrequant = {{ multiplier = {}, shift = {shift}, zero_point = {} }}\n",
                rng.range(20, 200),
                rng.range(-10, 10)
            );
            // Half of the padded ones read an input zero point at their padding.
            match rng.range(0, 1) {
                1 if pad > 0 => conv + &format!("pad_value = {}\n", rng.range(-128, 127)),
                _ => conv,
            }
        }
        2 => format!(
            "[[layer]]\nname = \"pool\"\nop = \"maxpool\"\nkernel = {}\nstride = {}\n",
            rng.range(2, 3),
            rng.range(1, 2)
        ),
        // Half of the average pools subtract an input zero point (their padding reads it).
        3 => {
            let k = rng.range(2, 3);
            let pool = format!("[[layer]]\nname = \"pool\"\nop = \"avgpool\"\nkernel = {k}\nstride = {}\npadding = {}\n", rng.range(1, 2), rng.range(0, k - 1));
            match rng.range(0, 1) {
                1 => pool + &format!("zero_points = {{ input = {} }}\n", rng.range(-128, 127)),
                _ => pool,
            }
        }
        _ => random_combination(rng, c),
    };
    s.push_str(&layer);
    // Half of the models round requantization ties to even.
    if rng.range(0, 1) == 1 {
        s = s.replacen("[input]", "rounding = \"half_even\"\n[input]", 1);
    }
    // One in four single convolutions writes its accumulator (int32, in four int8 slices)
    // instead of requantizing.
    if kind <= 1 && rng.range(0, 3) == 0 {
        let lines: Vec<&str> = s
            .lines()
            .filter(|l| !l.starts_with("activation") && !l.starts_with("requant"))
            .collect();
        s = lines.join("\n") + "\noutput_type = \"accumulator\"\n";
    }
    s
}

/// A convolution (zero point zc) and an add or mul of its output with the model input or
/// with a one-pixel gate (a fully-connected layer of the input, broadcast): the plain add,
/// or the quantized form with random weights, shift and zero points, whose input zero point
/// is zc half of the time (folded into the convolution) and otherwise not (on its own).
fn random_combination(rng: &mut Rng, c: i64) -> String {
    let zc = rng.range(-10, 10);
    let mut s = format!(
        "[[layer]]\nname = \"conv\"\nop = \"conv2d\"\nkernel = 3\npadding = 1\nout_channels = {c}\nrequant = {{ multiplier = {}, shift = 13, zero_point = {zc} }}\n",
        rng.range(20, 200)
    );
    let kind = rng.range(0, 2);
    if kind == 0 {
        return s + "[[layer]]\nname = \"sum\"\nop = \"add\"\nresidual = \"input\"\n";
    }
    let zx = if rng.range(0, 1) == 0 {
        zc
    } else {
        rng.range(-10, 10)
    };
    let zeros = format!(
        "zero_points = {{ input = {zx}, residual = {}, output = {} }}\n",
        rng.range(-20, 20),
        rng.range(-20, 20)
    );
    let relu = ["none", "relu"][rng.range(0, 1) as usize];
    if kind == 1 {
        s += &format!(
            "[[layer]]\nname = \"sum\"\nop = \"add\"\nresidual = \"input\"\nscale = {{ input = {}, residual = {}, shift = {} }}\n{zeros}activation = \"{relu}\"\n",
            rng.range(-30000, 30000),
            rng.range(-30000, 30000),
            rng.range(14, 17)
        );
        return s;
    }
    let gate = format!(
        "[[layer]]\nname = \"gate\"\nop = \"fc\"\ninput = \"input\"\nout_channels = {c}\nrequant = {{ multiplier = {}, shift = 16 }}\n",
        rng.range(20, 200)
    );
    s = gate + &s.replacen("op = \"conv2d\"", "op = \"conv2d\"\ninput = \"input\"", 1);
    s + &format!(
        "[[layer]]\nname = \"gated\"\nop = \"mul\"\nresidual = \"gate\"\nscale = {{ multiplier = {}, shift = {} }}\n{zeros}activation = \"{relu}\"\n",
        rng.range(1, 3000),
        rng.range(12, 18)
    )
}

#[test]
fn random_layers_golden_interpreter_rtl() {
    if !have_tool("verilator", "random_layers_golden_interpreter_rtl") {
        return;
    }
    let n = case_count(4);
    let configs = ["configs/8x8_int8.toml", "configs/16x16_int8.toml"];
    for seed in 1..=n {
        let mut rng = Rng::new(seed * 104_729);
        let config = configs[(seed % 2) as usize];
        let src = random_model(&mut rng, seed);
        let design = hwgen::config::load(&repo().join(config)).unwrap();
        let model = hwgen::model::parse_str(&src, "random.toml", &repo())
            .unwrap_or_else(|e| panic!("{e}\n{src}"));
        let program = hwgen::compiler::compile(&design, &model)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
        check(seed, config, "int8", &design, &model, &program, &src);
    }
}

/// A random convolution or fully-connected model for an MX or floating-point type: MX
/// channel counts are whole blocks of `block`; floating-point ones are arbitrary.
fn random_float_model(rng: &mut Rng, seed: u64, ty: &str, block: Option<i64>) -> String {
    let channels = |rng: &mut Rng| match block {
        Some(b) => b * rng.range(1, 3),
        None => rng.range(1, 40),
    };
    let (h, w, c) = (rng.range(3, 12), rng.range(3, 12), channels(rng));
    let mut s = format!(
        "name = \"random_{ty}_{seed}\"\nseed = {seed}\ntype = \"{ty}\"\n[input]\nshape = [{h}, {w}, {c}]\n"
    );
    let relu = if rng.range(0, 1) == 1 { "relu" } else { "none" };
    if rng.range(0, 3) == 0 {
        s.push_str(&format!(
            "[[layer]]\nname = \"fc\"\nop = \"fc\"\nout_channels = {}\nactivation = \"{relu}\"\n",
            channels(rng)
        ));
    } else {
        let k = [1, 3][rng.range(0, 1) as usize];
        s.push_str(&format!(
            "[[layer]]\nname = \"conv\"\nop = \"conv2d\"\nkernel = {k}\nstride = {}\npadding = {}\nout_channels = {}\nactivation = \"{relu}\"\n",
            rng.range(1, 2),
            if k == 3 { rng.range(0, 1) } else { 0 },
            channels(rng)
        ));
    }
    s
}

#[test]
fn random_mx_and_floating_point_layers_golden_interpreter_rtl() {
    if !have_tool(
        "verilator",
        "random_mx_and_floating_point_layers_golden_interpreter_rtl",
    ) {
        return;
    }
    let n = case_count(6);
    let targets = [
        ("configs/32x32_mxint8.toml", "mxint8", Some(32)),
        ("configs/16x16_fp8.toml", "fp8_e4m3", None),
        ("configs/32x32_mxint4.toml", "mxint4", Some(32)),
        ("configs/16x16_bf16.toml", "bf16", None),
        ("configs/16x16_fp8_e5m2.toml", "fp8_e5m2", None),
        ("configs/16x16_posit8.toml", "posit8", None),
    ];
    for seed in 1..=n {
        let mut rng = Rng::new(seed * 7_919);
        let (config, ty, block) = targets[((seed - 1) % targets.len() as u64) as usize];
        let src = random_float_model(&mut rng, seed, ty, block);
        let design = hwgen::config::load(&repo().join(config)).unwrap();
        let model = hwgen::model::parse_str(&src, "random.toml", &repo())
            .unwrap_or_else(|e| panic!("{e}\n{src}"));
        let program = hwgen::compiler::compile(&design, &model)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
        check(seed, config, ty, &design, &model, &program, &src);
    }
}

/// A random chain of two to four convolutions (sometimes ending in a max-pool or an fc) on
/// the multi-precision config, each layer int8 or MXINT8 at random, with the conversions at
/// every change of type. Channel counts are whole blocks of 16.
fn random_mixed_model(rng: &mut Rng, seed: u64, bits: u32, block: i64) -> String {
    let mx: Vec<bool> = (0..rng.range(2, 4)).map(|_| rng.range(0, 1) == 1).collect();
    let ty = |m: bool| format!("{}int{bits}", if m { "mx" } else { "" });
    let (h, w, c) = (rng.range(4, 12), rng.range(4, 12), block * rng.range(1, 3));
    // An all-integer chain runs on the integer path alone (block_size is for MX layers).
    let mut header = if mx.contains(&true) {
        format!("block_size = {block}\n")
    } else {
        String::new()
    };
    if !mx[0] {
        // Integer models say their weight type (the default is int8).
        header.push_str(&format!("weight_type = \"int{bits}\"\n"));
    }
    let mut s = format!(
        "name = \"random_mixed_{seed}\"\nseed = {seed}\ntype = \"{}\"\n{header}[input]\nshape = [{h}, {w}, {c}]\n",
        ty(mx[0])
    );
    let (mut oh, mut ow) = (h, w);
    for (i, &m) in mx.iter().enumerate() {
        // 3x3 kernels are padded, so every layer fits whatever the strides before it.
        let k = [1, 3][rng.range(0, 1) as usize];
        let stride = rng.range(1, 2);
        let relu = if rng.range(0, 1) == 1 { "relu" } else { "none" };
        (oh, ow) = ((oh - 1) / stride + 1, (ow - 1) / stride + 1);
        s.push_str(&format!(
            "[[layer]]\nname = \"l{i}\"\ntype = \"{}\"\nop = \"conv2d\"\nkernel = {k}\nstride = {stride}\npadding = {}\nout_channels = {}\nactivation = \"{relu}\"\n",
            ty(m),
            k / 2,
            block * rng.range(1, 3)
        ));
        if !m {
            // |acc| ~ 2^(2 bits - 2) sqrt(k k c): a multiplier of 1..3 over 2^14 (int8) or
            // 2^9 (int4) keeps the outputs spread over the range.
            s.push_str(&format!(
                "bias = \"random\"\nrequant = {{ multiplier = {}, shift = {}, zero_point = 0 }}\n",
                rng.range(1, 3),
                if bits == 8 { 14 } else { 9 }
            ));
        }
        // Integer q -> MX values q / 2^2..2^6 (int8) or q / 2..2^3 (int4); MX sums
        // (~10..1000) -> integers at 2^1..2^5 (int8) or 2^3..2^7 (int4).
        let (to_mx, to_int) = if bits == 8 {
            ((2, 6), (1, 5))
        } else {
            ((1, 3), (3, 7))
        };
        match mx.get(i + 1) {
            Some(&next) if next != m && m => s.push_str(&format!(
                "output_exponent = {}\n",
                rng.range(to_int.0, to_int.1)
            )),
            Some(&next) if next != m => s.push_str(&format!(
                "output_exponent = {}\n",
                -rng.range(to_mx.0, to_mx.1)
            )),
            _ => {}
        }
    }
    if !mx[mx.len() - 1] && oh >= 2 && ow >= 2 && rng.range(0, 2) == 0 {
        s.push_str("[[layer]]\nname = \"pool\"\nop = \"maxpool\"\nkernel = 2\nstride = 1\n");
    }
    s
}

#[test]
fn random_mixed_precision_models_golden_interpreter_rtl() {
    if !have_tool(
        "verilator",
        "random_mixed_precision_models_golden_interpreter_rtl",
    ) {
        return;
    }
    let n = case_count(4);
    // int8/MXINT8 (blocks of 16) and int4/MXINT4 (blocks of 32) in turn.
    let targets = [
        ("configs/16x16_int8_mxint8.toml", 8, 16),
        ("configs/32x32_int4_mxint4.toml", 4, 32),
    ];
    for seed in 1..=n {
        let (config, bits, block) = targets[((seed - 1) % 2) as usize];
        let design = hwgen::config::load(&repo().join(config)).unwrap();
        let mut rng = Rng::new(seed * 6_151);
        let src = random_mixed_model(&mut rng, seed, bits, block);
        let model = hwgen::model::parse_str(&src, "random.toml", &repo())
            .unwrap_or_else(|e| panic!("{e}\n{src}"));
        let program = hwgen::compiler::compile(&design, &model)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
        check(seed, config, "mixed", &design, &model, &program, &src);
    }
}

/// Golden model = interpreter = RTL under seed-dependent back-pressure.
fn check(
    seed: u64,
    config: &str,
    ty: &str,
    design: &hwgen::design::Design,
    model: &hwgen::model::Model,
    program: &hwgen::compiler::Program,
    src: &str,
) {
    let label = format!("seed {seed} on {config}\n{src}");
    let r = golden_interpreter_rtl(&label, design, model, program, (seed % 4) as u32 * 10, seed);
    eprintln!(
        "seed {seed:4} {config:<28} {ty:<9} ok ({} instructions, {} cycles)",
        program.instrs.len(),
        r.cycles
    );
}

/// A random chain of MobileNetV2 inverted-residual blocks: 1x1 expand (ReLU6), 3x3
/// depthwise (stride 1 or 2, ReLU6), 1x1 project, and the residual add where a block keeps
/// its shape. On one engine dead tensors' memory is reused, so stores wait for the loads
/// of what they overwrite: the pattern that overflowed a semaphore (issue 12).
fn random_inverted_residuals(rng: &mut Rng, seed: u64, max_hw: i64) -> String {
    // (Programs of any length run: the engines fetch them from memory.)
    let mut hw = rng.range(6, max_hw);
    let mut c = rng.range(4, 24);
    let mut s =
        format!("name = \"inverted_{seed}\"\nseed = {seed}\n[input]\nshape = [{hw}, {hw}, {c}]\n");
    let mut src = "input".to_string();
    let relu6 = "activation = \"relu6\"\nrelu6_max = 40";
    for b in 0..rng.range(2, 4) {
        let e = c * rng.range(2, 6);
        let stride = if hw >= 8 && rng.range(0, 2) == 0 {
            2
        } else {
            1
        };
        let cout = if stride == 1 && rng.range(0, 1) == 0 {
            c
        } else {
            rng.range(4, 24)
        };
        s.push_str(&format!(
            "[[layer]]\nname = \"e{b}\"\nop = \"conv2d\"\ninput = \"{src}\"\nkernel = 1\nout_channels = {e}\nbias = \"random\"\n{relu6}\nrequant = {{ multiplier = {}, shift = 14 }}\n",
            rng.range(150, 400)
        ));
        s.push_str(&format!(
            "[[layer]]\nname = \"d{b}\"\nop = \"conv2d\"\nkernel = 3\nstride = {stride}\npadding = 1\ngroups = {e}\nout_channels = {e}\nbias = \"random\"\n{relu6}\nrequant = {{ multiplier = {}, shift = 13 }}\n",
            rng.range(500, 1200)
        ));
        s.push_str(&format!(
            "[[layer]]\nname = \"p{b}\"\nop = \"conv2d\"\nkernel = 1\nout_channels = {cout}\nbias = \"random\"\nrequant = {{ multiplier = {}, shift = 14 }}\n",
            rng.range(60, 200)
        ));
        let out = if stride == 1 && cout == c {
            s.push_str(&format!(
                "[[layer]]\nname = \"r{b}\"\nop = \"add\"\nresidual = \"{src}\"\n"
            ));
            format!("r{b}")
        } else {
            format!("p{b}")
        };
        (src, c, hw) = (out, cout, (hw - 1) / stride + 1);
    }
    s
}

/// Random inverted-residual chains on both integer arrays and every queue depth: every one
/// compiles (the sync pass bounds every semaphore pair, and compile checks the bound on the
/// finished program: no timing can overflow a counter) and runs bit-exact on the
/// interpreter.
#[test]
fn random_inverted_residual_chains_never_overflow_a_semaphore() {
    for seed in 1..=case_count(40) {
        let mut rng = Rng::new(seed * 7919);
        let config = ["configs/8x8_int8.toml", "configs/16x16_int8.toml"][(seed % 2) as usize];
        let src = random_inverted_residuals(&mut rng, seed, 18);
        let mut design = hwgen::config::load(&repo().join(config)).unwrap();
        design.control.queue_depth = rng.range(1, 8) as u32;
        let model = hwgen::model::parse_str(&src, "random.toml", &repo())
            .unwrap_or_else(|e| panic!("{e}\n{src}"));
        let program = hwgen::compiler::compile(&design, &model)
            .unwrap_or_else(|e| panic!("seed {seed} on {config}: {e}\n{src}"));
        let expected = hwgen::verify::expected(&design, &model, &program);
        let mem = hwgen::verify::interpret(&design, &program)
            .unwrap_or_else(|e| panic!("seed {seed} on {config}: {e}\n{src}"));
        let c = hwgen::verify::compare(&program, &expected, &mem);
        assert!(
            c.matched(),
            "seed {seed}: {} {} differ\n{src}",
            c.differing,
            c.unit
        );
    }
}

/// The same chains in RTL (the suite's share; `scripts/random_sweep.sh N` runs many): the
/// accelerator's error flag never rises and the result is bit-exact.
#[test]
fn random_inverted_residual_chains_golden_interpreter_rtl() {
    if !have_tool(
        "verilator",
        "random_inverted_residual_chains_golden_interpreter_rtl",
    ) {
        return;
    }
    for seed in 1..=case_count(20).div_ceil(10) {
        let mut rng = Rng::new(seed * 7919 + 1);
        let config = ["configs/8x8_int8.toml", "configs/16x16_int8.toml"][(seed % 2) as usize];
        let src = random_inverted_residuals(&mut rng, seed, 10);
        let design = hwgen::config::load(&repo().join(config)).unwrap();
        let model = hwgen::model::parse_str(&src, "random.toml", &repo())
            .unwrap_or_else(|e| panic!("{e}\n{src}"));
        let program = hwgen::compiler::compile(&design, &model)
            .unwrap_or_else(|e| panic!("seed {seed} on {config}: {e}\n{src}"));
        check(seed, config, "inverted", &design, &model, &program, &src);
    }
}
