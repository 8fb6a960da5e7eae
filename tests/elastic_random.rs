//! Seeded random multi-branch models on random elastic configs: golden model = ISA
//! interpreter (every engine, the stream links) for every output of every frame, and for a
//! few cases the RTL too. `HWGEN_RANDOM_CASES=N` runs N interpreter cases and N / 10 RTL
//! cases (`scripts/elastic_sweep.sh N`).
//!
//! A model is a chain for output 0 (convolutions, transposed convolutions, upsampling,
//! tied or untied bias, ReLU or leaky ReLU, sometimes an in-place concat of two of its
//! tensors), from one input or from the host-side concat of two; every other output forks
//! from a layer of that chain (or starts from the input) with a lighter tail of its own
//! (fewer channels, no upsampling, sometimes a stride-2 last layer), so branch 0 has the
//! most compute of its own and runs the shared layers. The
//! config has one branch per output (or one branch for all), units of 8x8 int8 PEs with
//! one `h` for all, random batch and FIFO depths, and each forking branch `from` a unit of
//! branch 0 that can finish the shared layers.

mod common;

use common::*;
use std::fmt::Write;
use std::path::Path;

fn case_count(default: u64) -> u64 {
    std::env::var("HWGEN_RANDOM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One random layer reading `input` of `cin` channels at `hw` pixels; its output channels
/// and size.
fn layer(
    rng: &mut Rng,
    s: &mut String,
    name: &str,
    input: &str,
    (cin, hw): (usize, usize),
    cout: usize,
    (up_ok, down_ok): (bool, bool),
) -> (usize, usize) {
    let kind = if up_ok && hw <= 8 {
        rng.range(0, 4)
    } else {
        rng.range(0, 1)
    };
    let _ = writeln!(s, "\n[[layer]]\nname = \"{name}\"\ninput = \"{input}\"");
    let (taps, out_hw) = match kind {
        0 | 1 => {
            let stride = if down_ok && hw >= 4 && rng.range(0, 1) == 0 {
                2
            } else {
                1
            };
            let _ = writeln!(
                s,
                "op = \"conv2d\"\nkernel = 3\nstride = {stride}\npadding = 1\nout_channels = {cout}"
            );
            (9 * cin, hw.div_ceil(stride))
        }
        2 => {
            let _ = writeln!(
                s,
                "op = \"conv_transpose\"\nkernel = 4\nstride = 2\npadding = 1\nout_channels = {cout}"
            );
            (4 * cin, 2 * hw)
        }
        3 => {
            let _ = writeln!(
                s,
                "op = \"conv_transpose\"\nkernel = 3\nstride = 2\npadding = 1\nout_channels = {cout}"
            );
            (3 * cin, 2 * hw - 1)
        }
        _ => {
            let _ = writeln!(s, "op = \"upsample\"\nfactor = 2");
            return (cin, 2 * hw);
        }
    };
    let bias = rng.range(0, 2);
    match bias {
        1 => s.push_str("bias = \"random\"\n"),
        2 => s.push_str("untied_bias = \"random\"\n"),
        _ => {}
    }
    match rng.range(0, 2) {
        1 => s.push_str("activation = \"relu\"\n"),
        2 => s.push_str(
            "activation = \"leaky_relu\"\nnegative_slope = { multiplier = 13107, shift = 16 }\n",
        ),
        _ => {}
    }
    // Spread the results over the int8 range: biases are up to 2^20, a sum of n products
    // of int8 values has a spread of about sqrt(n) x 5300.
    let multiplier = if bias > 0 {
        6
    } else {
        (65536.0 * 60.0 / ((taps as f64).sqrt() * 5300.0))
            .round()
            .max(1.0) as i64
    };
    let _ = writeln!(s, "requant = {{ multiplier = {multiplier}, shift = 16 }}");
    (cout, out_hw)
}

/// A random model (TOML), its number of outputs, and per forking output the index of the
/// chain layer it forks after (None: from the model input).
fn random_model(rng: &mut Rng, seed: u64, branches: usize) -> (String, Vec<Option<usize>>) {
    let hw = rng.range(3, 6) as usize;
    let two_inputs = rng.range(0, 1) == 1;
    let mut s = format!("name = \"elastic_random_{seed}\"\nseed = {seed}\n");
    let outputs = branches.max(1);
    let mut out_names = vec!["out0".to_string()];
    out_names.extend((1..outputs).map(|k| format!("out{k}")));
    let _ = writeln!(s, "outputs = {out_names:?}");
    let c0 = rng.range(2, 8) as usize;
    let (mut src, mut c) = if two_inputs {
        let c1 = rng.range(1, 4) as usize;
        let _ = writeln!(
            s,
            "\n[[input]]\nname = \"a\"\nshape = [{hw}, {hw}, {c0}]\n\n[[input]]\nname = \"b\"\nshape = [{hw}, {hw}, {c1}]\n\n[[layer]]\nname = \"code\"\nop = \"concat\"\ninputs = [\"a\", \"b\"]"
        );
        ("code".to_string(), c0 + c1)
    } else {
        let _ = writeln!(s, "\n[input]\nname = \"x\"\nshape = [{hw}, {hw}, {c0}]");
        ("x".to_string(), c0)
    };
    let input = src.clone();
    let input_c = c;
    let mut size = hw;
    // The chain of output 0: shared front, then a heavier tail of 16-channel layers.
    let front = rng.range(1, 3) as usize;
    let mut chain: Vec<(String, usize, usize)> = Vec::new();
    for i in 0..front {
        let name = format!("f{i}");
        let (co, sz) = layer(rng, &mut s, &name, &src, (c, size), 8, (size <= 6, false));
        chain.push((name.clone(), co, sz));
        (src, c, size) = (name, co, sz);
    }
    let tail = rng.range(2, 3) as usize;
    for i in 0..tail {
        let name = if i + 1 == tail {
            "out0".to_string()
        } else {
            format!("t{i}")
        };
        // Sometimes an in-place concat of the last two 8-channel tensors first.
        if i == 0 && c == 8 && chain.len() >= 2 && rng.range(0, 1) == 0 {
            let (a, ac, asz) = chain[chain.len() - 2].clone();
            if ac == 8 && asz == size {
                let _ = writeln!(
                    s,
                    "\n[[layer]]\nname = \"cat\"\nop = \"concat\"\ninputs = [\"{a}\", \"{src}\"]"
                );
                src = "cat".to_string();
                c = 16;
            }
        }
        let (co, sz) = layer(rng, &mut s, &name, &src, (c, size), 16, (false, false));
        chain.push((name.clone(), co, sz));
        (src, c, size) = (name, co, sz);
    }
    // Other outputs: fork after a front layer (or start at the input), one or two light
    // layers of their own.
    let mut forks = Vec::new();
    for k in 1..outputs {
        let at = rng.range(-1, front as i64 - 1);
        let (mut src, mut c, mut size) = if at < 0 {
            (input.clone(), input_c, hw)
        } else {
            chain[at as usize].clone()
        };
        forks.push((at >= 0).then_some(at as usize));
        let n = rng.range(1, 2);
        for i in 0..n {
            let name = if i + 1 == n {
                format!("out{k}")
            } else {
                format!("b{k}_{i}")
            };
            let (co, sz) = layer(rng, &mut s, &name, &src, (c, size), 8, (false, i + 1 == n));
            (src, c, size) = (name, co, sz);
        }
    }
    (s, forks)
}

/// A random elastic config for a model whose forking outputs fork after chain layer `f`;
/// with `mixed`, units of two sizes.
fn random_config(
    rng: &mut Rng,
    seed: u64,
    (branches, mixed): (usize, bool),
    forks: &[Option<usize>],
) -> String {
    let h = rng.range(1, 2);
    // Half the designs give every unit its own h (1 to 3), as F-CAD's units have.
    let own_h = rng.range(0, 1) == 1;
    let mut s = format!(
        "name = \"elastic_random_{seed}\"\n[datatype]\ninput = \"int8\"\nweight = \"int8\"\naccumulator = \"int32\"\noutput = \"int8\"\n[buffers]\ninput_depth = 256\nweight_depth = 256\naccumulator_depth = 128\noutput_depth = 128\n[memory]\ndata_width_bits = 64\nlatency_cycles = {}\n[vector]\nops = [\"requantize\", \"bias\", \"relu\", \"leaky_relu\"]\n[control]\nimem_depth = 64\n",
        rng.range(4, 24)
    );
    let units0 = rng.range(1, 3) as usize;
    let mut engines = 0;
    // Half the units hand frames on in 2 to 4 row bands (drawn apart, so the other draws
    // stay those of the cases before bands existed).
    let mut band_rng = Rng::new(seed ^ 0xba4d);
    for b in 0..branches {
        let units = if b == 0 {
            units0
        } else {
            rng.range(1, 2) as usize
        };
        let _ = writeln!(
            s,
            "\n[[branch]]\nname = \"br{b}\"\nbatch = {}\npriority = {}\nfifo_depth = {}",
            rng.range(1, 2),
            rng.range(0, 3),
            [2, 4, 8][rng.range(0, 2) as usize]
        );
        if b > 0 {
            if let Some(Some(at)) = forks.get(b - 1) {
                // The shared layers are chain groups 0..=at: the from unit must be one that
                // can finish them with every unit before it busy.
                let u = rng.range(0, (units0 - 1).min(*at) as i64);
                let _ = writeln!(s, "from = \"br0.u{u}\"");
            }
        }
        for u in 0..units {
            // Units of 16x16 among the 8x8 ones (not with a concat stored in place, whose
            // first operand's 8 channels are not a whole row of 16).
            let size = if mixed && rng.range(0, 2) == 0 { 16 } else { 8 };
            let h = if own_h { rng.range(1, 3) } else { h };
            engines += h;
            let bands = match band_rng.range(0, 1) {
                0 => 1,
                _ => band_rng.range(2, 4),
            };
            let _ = writeln!(
                s,
                "\n[[branch.unit]]\nname = \"u{u}\"\ncpf = {size}\nkpf = {size}\nh = {h}\nbands = {bands}"
            );
        }
    }
    // One to three memory ports (engine e on port e mod ports).
    let ports = rng.range(1, engines.min(3));
    s.replacen("[vector]", &format!("ports = {ports}\n[vector]"), 1)
}

/// Case `seed`: (design, model).
fn case(seed: u64) -> (hwgen::design::Design, hwgen::model::Model, String, String) {
    let mut rng = Rng::new(seed);
    let branches = rng.range(1, 3) as usize;
    let (model_src, forks) = random_model(&mut rng, seed, branches);
    let mixed = !model_src.contains("name = \"cat\"");
    let config_src = random_config(&mut rng, seed, (branches, mixed), &forks);
    let design = hwgen::config::parse_str(&config_src, "random.toml", "random")
        .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{config_src}"));
    let model = hwgen::model::parse_str(&model_src, "random.toml", Path::new("."))
        .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{model_src}"));
    (design, model, model_src, config_src)
}

/// Whether the program's stages run on units of more than one size, and of more than one
/// `h`.
fn mixed_sizes(design: &hwgen::design::Design, program: &hwgen::compiler::Program) -> (bool, bool) {
    let Some(e) = program.elastic.as_ref() else {
        return (false, false);
    };
    let kinds = |f: &dyn Fn(&hwgen::design::Unit) -> u32| {
        let v: std::collections::BTreeSet<u32> = e
            .stages
            .iter()
            .map(|s| f(design.cores()[s.engines[0]].1))
            .collect();
        v.len() > 1
    };
    (kinds(&|u| u.cpf), kinds(&|u| u.h))
}

#[test]
fn random_multi_branch_models_on_the_interpreter() {
    let (mut mixed, mut mixed_h, mut ported, mut banded) = (0, 0, 0, 0);
    let cases = case_count(12);
    for seed in 0..cases {
        let (design, model, msrc, csrc) = case(seed);
        banded += usize::from(design.cores().iter().any(|(_, u, _)| u.bands > 1));
        let program = hwgen::compiler::compile(&design, &model)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{msrc}\n{csrc}"));
        let (sizes, hs) = mixed_sizes(&design, &program);
        mixed += usize::from(sizes);
        mixed_h += usize::from(hs);
        ported += usize::from(design.memory.ports > 1);
        let expected = hwgen::verify::expected(&design, &model, &program);
        let mem = hwgen::verify::interpret(&design, &program)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{msrc}\n{csrc}"));
        let c = hwgen::verify::compare(&program, &expected, &mem);
        assert!(
            c.matched(),
            "seed {seed}: {} {} differ\n{msrc}\n{csrc}",
            c.differing,
            c.unit
        );
    }
    eprintln!("{mixed} of {cases} cases ran stages on units of two sizes, {mixed_h} of two h, {ported} had several memory ports, {banded} row bands");
    assert!(cases < 12 || mixed > 0, "no case mixed unit sizes");
    assert!(cases < 12 || mixed_h > 0, "no case mixed h");
    assert!(cases < 12 || ported > 0, "no case had several memory ports");
    assert!(
        cases < 12 || banded > 0,
        "no case handed frames on in row bands"
    );
}

#[test]
fn random_multi_branch_models_in_rtl() {
    let (mut mixed, mut mixed_h, mut ported) = (0, 0, 0);
    for seed in 1000..1000 + case_count(20).div_ceil(10) {
        let (design, model, msrc, csrc) = case(seed);
        if !have_tool("verilator", "random elastic case") {
            return;
        }
        let program = hwgen::compiler::compile(&design, &model)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{msrc}\n{csrc}"));
        let (sizes, hs) = mixed_sizes(&design, &program);
        mixed += usize::from(sizes);
        mixed_h += usize::from(hs);
        ported += usize::from(design.memory.ports > 1);
        let label = format!("seed {seed}\n{msrc}\n{csrc}");
        golden_interpreter_rtl(&label, &design, &model, &program, 10, seed);
    }
    eprintln!("{mixed} ran stages on units of two sizes, {mixed_h} of two h, {ported} had several memory ports");
}
