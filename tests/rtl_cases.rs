//! The whole-program cases, one test each: a model of `rtl-tests/cases/` compiled for a
//! shipped config runs on the ISA interpreter and on the generated RTL in Verilator, and
//! both equal the golden model bit for bit (`common::golden_interpreter_rtl`). Each config
//! is verilated once for all its cases.

mod common;

use common::*;

/// Compile `model` (under `rtl-tests/`) for `config` and check the contract with
/// `stall_pct` percent of memory back-pressure.
fn case(model: &str, config: &str, stall_pct: u32) {
    if !have_tool("verilator", model) {
        return;
    }
    let design = hwgen::config::load(&repo().join(config)).unwrap_or_else(|e| panic!("{e}"));
    let model_path = repo().join("rtl-tests").join(model);
    let m = hwgen::model::load(&model_path).unwrap_or_else(|e| panic!("{e}"));
    let program = hwgen::compiler::compile(&design, &m).unwrap_or_else(|e| panic!("{e}"));
    let label = format!("{model} on {config}");
    let r = golden_interpreter_rtl(&label, &design, &m, &program, stall_pct, 1);
    let ideal = program.ideal_cycles(&design);
    assert!(
        r.cycles >= ideal,
        "{label}: {} cycles is below the ideal {ideal}",
        r.cycles
    );
    eprintln!(
        "{label}: {} cycles, ideal {ideal}, estimated {}",
        r.cycles,
        program.estimated_cycles()
    );
}

/// `name: model on config [with stall_pct]` for every case.
macro_rules! cases {
    ($($name:ident: $model:literal on $config:literal $(with $stall:literal)?;)*) => {
        $(
            #[test]
            fn $name() {
                case($model, $config, 0 $(+ $stall)?);
            }
        )*
        /// Every model of rtl-tests/cases/ is a case.
        #[test]
        fn every_case_model_runs() {
            let models = [$($model),*];
            for entry in std::fs::read_dir(repo().join("rtl-tests/cases")).unwrap() {
                let name = format!("cases/{}", entry.unwrap().file_name().to_string_lossy());
                assert!(models.contains(&name.as_str()), "{name} is not a case");
            }
        }
    };
}

cases! {
    // Integer: matmul, 1x1 and 3x3 convolutions with stride 1 and 2 and padding,
    // depthwise, ReLU and ReLU6, pooling, fusion, upsampling, residual blocks, tiling.
    matmul_8x8: "cases/matmul_37x53x71.toml" on "configs/8x8_int8.toml";
    matmul_16x16_stalls: "cases/matmul_37x53x71.toml" on "configs/16x16_int8.toml" with 20;
    conv1x1_stride1: "cases/conv1x1_stride1.toml" on "configs/8x8_int8.toml";
    conv_per_channel: "cases/conv_per_channel.toml" on "configs/8x8_int8.toml" with 20;
    accumulator_out: "cases/accumulator_out.toml" on "configs/8x8_int8.toml" with 10;
    accumulator_out_int16: "cases/accumulator_out_int16.toml" on "rtl-tests/configs/8x8_uint8_int16.toml";
    concat_input_computed: "cases/concat_input_computed.toml" on "configs/8x8_int8.toml";
    conv1x1_stride2: "cases/conv1x1_stride2.toml" on "configs/16x16_int8.toml";
    // Packed multipliers (`[array] pack_macs`: two columns per multiplier).
    packed_tiled_every_dimension: "cases/tiled_every_dimension.toml" on "configs/16x16_int8_packed.toml" with 20;
    conv3x3_stride1_pad1: "cases/conv3x3_stride1_pad1.toml" on "configs/8x8_int8.toml" with 30;
    conv3x3_stride2_pad1: "cases/conv3x3_stride2_pad1.toml" on "configs/16x16_int8.toml";
    depthwise3x3: "cases/depthwise3x3.toml" on "configs/8x8_int8.toml";
    depthwise3x3_array: "cases/depthwise3x3.toml" on "rtl-tests/configs/8x8_int8_array.toml";
    depthwise_stride2: "cases/depthwise_stride2.toml" on "configs/16x16_int8.toml" with 25;
    maxpool_pad_8x8: "cases/maxpool_pad.toml" on "configs/8x8_int8.toml" with 15;
    maxpool_pad_16x16: "cases/maxpool_pad.toml" on "configs/16x16_int8.toml";
    maxpool_array: "cases/maxpool.toml" on "rtl-tests/configs/8x8_int8_array.toml";
    relu_maxpool_pad_array: "cases/relu_maxpool_pad.toml" on "rtl-tests/configs/8x8_int8_array.toml" with 15;
    avgpool_pad: "cases/avgpool_pad.toml" on "configs/8x8_int8.toml" with 10;
    avgpool_pad_array: "cases/avgpool_pad.toml" on "rtl-tests/configs/8x8_int8_array.toml";
    avgpool_zero_point: "cases/avgpool_zero_point.toml" on "configs/8x8_int8.toml" with 10;
    avgpool_zero_point_array: "cases/avgpool_zero_point.toml" on "rtl-tests/configs/8x8_int8_array.toml";
    uint8_window: "cases/uint8_window.toml" on "rtl-tests/configs/8x8_uint8_int16.toml" with 20;
    expand_dw_on_chip: "cases/expand_dw_on_chip.toml" on "configs/16x16_int8.toml" with 20;
    expand_dw_per_channel: "cases/expand_dw_per_channel.toml" on "configs/16x16_int8.toml";
    conv_relu: "cases/conv_relu.toml" on "configs/16x16_int8.toml";
    maxpool: "cases/maxpool.toml" on "configs/8x8_int8.toml";
    avgpool: "cases/avgpool.toml" on "configs/16x16_int8.toml";
    // Global average pooling summed by weights: two rows of 7 pixels per weight slot on
    // 16x16, one on 8x8 (a row of ones per slot), under back-pressure.
    global_avgpool: "cases/global_avgpool.toml" on "configs/16x16_int8.toml" with 20;
    global_avgpool_8x8: "cases/global_avgpool.toml" on "configs/8x8_int8.toml";
    residual_block: "cases/residual_block.toml" on "configs/8x8_int8.toml" with 10;
    // The quantized add and mul (weights, zero points, products, one-pixel operands
    // broadcast), fused into convolutions (and into expand + depthwise) and on their own.
    quantized_eltwise: "cases/quantized_eltwise.toml" on "configs/8x8_int8.toml" with 15;
    quantized_se_block: "cases/quantized_se_block.toml" on "configs/16x16_int8.toml" with 10;
    small_resnet: "cases/small_resnet.toml" on "configs/16x16_int8.toml";
    // A MobileNetV2 inverted-residual block (issue 12): the project layer's stores wait
    // for the depthwise layer's loads of the memory they reuse, 38 of them, which overflowed
    // the 4-bit load -> store semaphore before every pair's waits were bounded.
    mobilenet_block: "cases/mobilenet_block.toml" on "configs/16x16_int8.toml";
    // A 7x7 stride-2 stem over 3 channels and a max-pool, its taps packed into channels.
    stem_im2col: "cases/stem_im2col.toml" on "configs/16x16_int8.toml" with 15;
    tiled_every_dimension: "cases/tiled_every_dimension.toml" on "configs/8x8_int8.toml";
    upsample: "cases/upsample.toml" on "configs/8x8_int8.toml" with 20;
    conv_relu6: "cases/conv_relu6.toml" on "configs/16x16_int8.toml";
    conv_leaky_relu: "cases/conv_leaky_relu.toml" on "configs/16x16_int8.toml" with 15;
    conv_untied_bias: "cases/conv_untied_bias.toml" on "configs/16x16_int8.toml" with 20;
    // Padding that reads pad_value (an input zero point): the host's im2col, the loads'
    // padding rows, the window unit.
    conv_pad_value: "cases/conv_pad_value.toml" on "configs/16x16_int8.toml" with 20;
    conv_transpose: "cases/conv_transpose.toml" on "configs/16x16_int8.toml" with 20;
    conv_maxpool_fused: "cases/conv_maxpool_fused.toml" on "configs/16x16_int8.toml" with 15;
    // Integer input and output types that differ (uint8 in, int16 out: output_type).
    uint8_to_int16: "cases/uint8_to_int16.toml" on "rtl-tests/configs/8x8_uint8_int16.toml";
    // The row unit's operators (softmax, layernorm, rmsnorm, the spline functions) on the
    // 8x8 design with [rows], under back-pressure; edge rows (all equal, one huge value,
    // the minimum or maximum everywhere, huge values in the partial last channel tile).
    rows_softmax: "cases/rows_softmax.toml" on "rtl-tests/configs/8x8_int8_rows.toml" with 20;
    rows_edges: "cases/rows_edges.toml" on "rtl-tests/configs/8x8_int8_rows.toml" with 10;
    rows_layernorm: "cases/rows_layernorm.toml" on "rtl-tests/configs/8x8_int8_rows.toml" with 15;
    rows_nonlinear: "cases/rows_nonlinear.toml" on "rtl-tests/configs/8x8_int8_rows.toml";
    // Attention: q k^T per head through the transposing weight loads, softmax per head,
    // p v per head with v's rows as weights.
    attention: "cases/attention.toml" on "rtl-tests/configs/8x8_int8_rows.toml" with 15;
    // The same with asymmetric operands: the array's zero-point correction.
    attention_zero_points: "cases/attention_zero_points.toml" on "rtl-tests/configs/8x8_int8_rows.toml" with 15;
    // Rotary position embedding from existing layers (a grouped permutation convolution,
    // two muls by the position tables and an add), then the scores.
    rope: "cases/rope.toml" on "rtl-tests/configs/8x8_int8_rows.toml" with 10;
    // Heads that do not fill channel tiles (17 tokens): keys padded to the tile, masked.
    attention_padded_keys: "cases/attention_padded_keys.toml" on "rtl-tests/configs/8x8_int8_rows.toml" with 15;
    // A ViT patch embedding: kernel 16 at stride 16.
    patch_embed: "cases/patch_embed.toml" on "configs/16x16_int8.toml" with 10;
    // A whole BERT-style encoder layer (projections, attention, residual adds, layernorms,
    // GELU), int8.
    encoder_layer: "cases/encoder_layer.toml" on "rtl-tests/configs/8x8_int8_rows.toml" with 15;
    // The same layer in BF16: FP32 biases and residual adds in the vector unit, the row
    // unit reading and writing BF16 elements.
    bf16_encoder_layer: "cases/bf16_encoder_layer.toml" on "rtl-tests/configs/8x8_bf16_rows.toml" with 15;
    // The row operators on FP8 E4M3 elements (SiLU fused into a projection, layer norm,
    // a fused residual add, GELU, RMSNorm, scores and a per-head softmax).
    fp8_rows: "cases/fp8_rows.toml" on "rtl-tests/configs/8x8_fp8_rows.toml" with 10;
    // The row operators, FP32 biases and a residual add on MXINT8 blocks: each operand row
    // read with its block scale, each written row quantized as one block.
    mx_rows: "cases/mx_rows.toml" on "rtl-tests/configs/16x16_mxint8_rows.toml" with 10;
    // Attention on MXINT8 blocks: keys transposed with their scales as the columns', values
    // re-blocked down the keys as they load; then with keys padded to the tile and values
    // whose token scales differ by up to 10 (codes shifted to zero, ties to even).
    mx_attention: "cases/mx_attention.toml" on "rtl-tests/configs/16x16_mxint8_rows.toml" with 10;
    mx_attention_padded_keys: "cases/mx_attention_padded_keys.toml" on "rtl-tests/configs/16x16_mxint8_rows.toml" with 15;
    // The encoder layer of encoder_layer.toml in MXINT8: projections with FP32 biases,
    // MX attention, residual adds, layernorms and GELU on MX blocks.
    mx_encoder_layer: "cases/mx_encoder_layer.toml" on "rtl-tests/configs/16x16_mxint8_rows.toml" with 10;
    // The row operators on posit8 elements (es = 2): each posit read as its FP32 value,
    // each output converted as the vector unit converts.
    posit_rows: "cases/posit_rows.toml" on "rtl-tests/configs/8x8_posit8_rows.toml" with 10;
    // Elastic multi-engine programs (golden = interpreter = RTL for every frame): the
    // five-engine design with synchronous active-high reset (the trunk's two units of two
    // replicas run the model, the side branch has nothing to run); a two-stage pipeline over
    // a stream link with two frames in flight; the same with each stage split by height over
    // two replicas (3x3 halos).
    elastic_conv_relu: "cases/conv_relu.toml" on "configs/elastic_3unit_int8.toml";
    elastic_two_stages: "cases/elastic_chain.toml" on "rtl-tests/configs/elastic_2stage_int8.toml" with 15;
    elastic_two_replicas: "cases/elastic_chain.toml" on "rtl-tests/configs/elastic_2stage_h2_int8.toml" with 20;
    // Units of different sizes (8x8, 16x16, 8x8): rows of 16 channels written by one and
    // read as two rows of 8 by the next, and the other way.
    elastic_mixed_sizes: "cases/elastic_chain.toml" on "rtl-tests/configs/elastic_mixed_int8.toml" with 15;
    elastic_accumulator: "cases/elastic_accumulator.toml" on "rtl-tests/configs/elastic_mixed_int8.toml";
    // Broadcast operands on replicas that split the map by height: each replica reads the
    // operand's one row, which the hand-off must wait for.
    elastic_quantized_eltwise: "cases/quantized_eltwise.toml" on "rtl-tests/configs/elastic_2stage_h2_int8.toml";
    // On-chip hand-offs: the front unit's replicas write the rows they store into the
    // hand-off buffers of the back unit's and, through a fork, the side unit's replicas,
    // which read their windows (3x3 halos, a stride-2 consumer) from there; only weights,
    // the input and the outputs go through memory.
    elastic_handoff: "cases/elastic_handoff.toml" on "rtl-tests/configs/elastic_handoff_int8.toml" with 20;
    // The scaled-down codec-avatar decoder on its three-branch design (eight engines): the
    // host-side concat of the two inputs, a fork (warp from texture's first unit),
    // transposed convolutions with untied bias and leaky ReLU, two replicas per unit, two
    // frames, all under back-pressure.
    decoder_small: "../models/codec_avatar/decoder_small.toml" on "configs/codec_avatar_small.toml" with 10;
    // Two inputs, two outputs, a concat the host makes and one stored in place, on one engine.
    branches_concat: "cases/branches_concat.toml" on "configs/8x8_int8.toml" with 10;
    // MXINT8 on the flagship: block sums dequantized and accumulated in FP32, outputs
    // quantized to MX blocks; every output beat (elements and scales) bit-exact.
    mx_matmul: "cases/mx_matmul_100x160x224.toml" on "configs/32x32_mxint8.toml" with 20;
    mx_conv3x3_relu_stride2: "cases/mx_conv3x3_relu_stride2.toml" on "configs/32x32_mxint8.toml";
    mx_tiled_every_dimension: "cases/mx_tiled_every_dimension.toml" on "configs/32x32_mxint8.toml";
    // FP8 E4M3, E5M2 and BF16: exact products summed in FP32 down the columns, FP32
    // accumulation, conversion back to the element format in the vector unit.
    fp8_conv3x3_relu_stride2: "cases/fp8_conv3x3_relu_stride2.toml" on "configs/16x16_fp8.toml" with 20;
    fp8_tiled_every_dimension: "cases/fp8_tiled_every_dimension.toml" on "configs/16x16_fp8.toml";
    bf16_matmul: "cases/bf16_matmul_37x53x71.toml" on "configs/16x16_bf16.toml";
    bf16_conv3x3_relu_stride2: "cases/bf16_conv3x3_relu_stride2.toml" on "configs/16x16_bf16.toml";
    fp8_matmul: "cases/fp8_matmul_37x53x71.toml" on "configs/16x16_fp8.toml";
    fp8_e5m2_matmul_conv: "cases/fp8_e5m2_matmul_conv.toml" on "configs/16x16_fp8_e5m2.toml" with 10;
    // posit8, es = 2 (the 2022 standard) and es = 0 (SoftPosit's posit8_t): the FP8 datapath
    // with posit decoding in the PEs and rounding on the posit encoding in the vector unit.
    posit8_conv3x3_relu_stride2: "cases/posit8_conv3x3_relu_stride2.toml" on "configs/16x16_posit8.toml" with 15;
    posit8_es0_matmul: "cases/posit8_es0_matmul.toml" on "rtl-tests/configs/8x8_posit8_es0.toml";
    // MXINT4 (4-bit elements, q / 4; two rows of column scales per weight tile).
    mxint4_conv3x3_relu_stride2: "cases/mxint4_conv3x3_relu_stride2.toml" on "configs/32x32_mxint4.toml" with 20;
    mxint4_matmul: "cases/mxint4_matmul_100x160x224.toml" on "configs/32x32_mxint4.toml";
    // Multi-precision: int8 and MXINT8 layers on one design, chosen per instruction.
    mixed_sample: "../models/sample_mixed.toml" on "configs/16x16_int8_mxint8.toml" with 20;
    mixed_mx_first: "cases/mixed_mx_first.toml" on "configs/16x16_int8_mxint8.toml";
    mixed_tiled_every_dimension: "cases/mixed_tiled_every_dimension.toml" on "configs/16x16_int8_mxint8.toml";
    mixed_residual_block: "cases/residual_block.toml" on "configs/16x16_int8_mxint8.toml" with 10;
    mixed_int4_mxint4: "cases/mixed_int4_mxint4.toml" on "configs/32x32_int4_mxint4.toml" with 10;
    mixed_auto: "cases/mixed_auto.toml" on "configs/16x16_int8_mxint8.toml" with 30;
}

#[test]
fn testbench_refuses_a_program_for_another_design() {
    if !have_tool(
        "verilator",
        "testbench_refuses_a_program_for_another_design",
    ) {
        return;
    }
    let design = hwgen::config::load(&repo().join("configs/8x8_int8.toml")).unwrap();
    let model = hwgen::model::load(&repo().join("rtl-tests/cases/conv_relu.toml")).unwrap();
    let mut program = hwgen::compiler::compile(&design, &model).unwrap();
    let expected = hwgen::verify::expected(&design, &model, &program);
    // A program compiled for the 16x16 design, presented to the 8x8 RTL.
    let other = hwgen::config::load(&repo().join("configs/16x16_int8.toml")).unwrap();
    program.design_hash = other.hash();
    let exe = accelerator(&design);
    let err = hwgen::sim::run::run(&design, &exe, &program, &expected, 0, 1)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "program compiled for design {:016x}, but this RTL is design {:016x}",
            other.hash(),
            design.hash()
        )),
        "{err}"
    );
}

/// Compile `model` for `config` (paths under the repository) and run it in lock-step with
/// the interpreter under 20% back-pressure with stall seed `seed`.
fn lockstep_run(config: &str, model: &str, seed: u64) -> Lockstep {
    let design = hwgen::config::load(&repo().join(config)).unwrap();
    let model = hwgen::model::load(&repo().join(model)).unwrap();
    let program = hwgen::compiler::compile(&design, &model).unwrap();
    let expected = hwgen::verify::expected(&design, &model, &program);
    let with = hwgen::sim::run::Instrument {
        lockstep: true,
        ..Default::default()
    };
    let exe = hwgen::sim::run::build_with(&design, &sim_cache(), with).unwrap();
    let (r, div) = hwgen::sim::run::lockstep(&design, &exe, &program, &expected, 20, seed).unwrap();
    Lockstep {
        design,
        program,
        expected,
        exe,
        r,
        div,
    }
}

/// A lock-step run and what it ran.
struct Lockstep {
    design: hwgen::design::Design,
    program: hwgen::compiler::Program,
    expected: hwgen::interp::Memory,
    exe: std::path::PathBuf,
    r: hwgen::sim::run::SimResult,
    div: Option<hwgen::sim::run::Divergence>,
}

#[test]
fn lockstep_agrees_and_names_the_first_differing_instruction() {
    if !have_tool(
        "verilator",
        "lockstep_agrees_and_names_the_first_differing_instruction",
    ) {
        return;
    }
    let Lockstep {
        design,
        program,
        expected,
        exe,
        r,
        div,
    } = lockstep_run(
        "configs/8x8_int8.toml",
        "rtl-tests/cases/residual_block.toml",
        3,
    );
    assert!(r.matched);
    assert_eq!(div, None, "the RTL diverged from the interpreter");

    // Corrupt one matmul result in the RTL's log: the comparator must name that matmul.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("w.log");
    let opts = hwgen::sim::run::RunOptions {
        stall_pct: 0,
        seed: 1,
        writes: Some(&log),
        ..Default::default()
    };
    hwgen::sim::run::run_with(&design, &exe, &program, &expected, &opts).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let mut seen = 0;
    let corrupted: String = text
        .lines()
        .map(|l| {
            let mut l = l.to_string();
            if l.starts_with("C ") {
                seen += 1;
                if seen == 40 {
                    let flip = if l.ends_with('0') { '1' } else { '0' };
                    l.pop();
                    l.push(flip);
                }
            }
            l + "\n"
        })
        .collect();
    let mut engine = hwgen::interp::Engine::new(&design, &design.branches[0].units[0]);
    engine.writes = Some(Vec::new());
    let mut mem = program.dmem.clone();
    engine.run(&program.instrs, &mut mem).unwrap();
    let writes = engine.writes.take().unwrap();
    let culprit = writes
        .iter()
        .filter(|w| program.instrs[w.pc].opcode() == hwgen::isa::Opcode::Matmul)
        .nth(39)
        .unwrap()
        .pc;
    let d = hwgen::sim::run::first_divergence(&design, &program, &writes, &corrupted)
        .expect("a divergence");
    assert_eq!(d.pc, culprit);
    assert!(d.listing.starts_with("matmul"), "{}", d.listing);
}

/// On the multi-precision config, every scratchpad row the RTL writes (the tagged int8 rows,
/// FP32 accumulators of MX layers, int32 ones of integer layers, rows rounded back to int8)
/// equals the interpreter's, instruction by instruction, under memory back-pressure.
#[test]
fn lockstep_agrees_on_a_mixed_precision_model() {
    if !have_tool("verilator", "lockstep_agrees_on_a_mixed_precision_model") {
        return;
    }
    let Lockstep { r, div, .. } = lockstep_run(
        "configs/16x16_int8_mxint8.toml",
        "models/sample_mixed.toml",
        5,
    );
    assert!(
        r.matched,
        "{} {} differ from the golden model",
        r.comparison.differing, r.comparison.unit
    );
    assert_eq!(div, None, "the RTL diverged from the interpreter");
}

/// The window unit's accumulator rows are matched with the window instructions.
#[test]
fn lockstep_agrees_on_window_instructions() {
    if !have_tool("verilator", "lockstep_agrees_on_window_instructions") {
        return;
    }
    let Lockstep {
        program, r, div, ..
    } = lockstep_run(
        "configs/8x8_int8.toml",
        "rtl-tests/cases/maxpool_pad.toml",
        7,
    );
    assert!(program
        .instrs
        .iter()
        .any(|i| matches!(i.op, hwgen::isa::Op::Window(_))));
    assert!(r.matched);
    assert_eq!(div, None, "the RTL diverged from the interpreter");
}

/// On an elastic design, engine 0's scratchpad writes equal the interpreter's running every
/// engine (engine 0 is the first stage's first replica; its token stores wait for FIFO
/// room the others make).
#[test]
fn lockstep_agrees_on_an_elastic_design() {
    if !have_tool("verilator", "lockstep_agrees_on_an_elastic_design") {
        return;
    }
    let Lockstep { r, div, .. } = lockstep_run(
        "rtl-tests/configs/elastic_2stage_h2_int8.toml",
        "rtl-tests/cases/elastic_chain.toml",
        7,
    );
    assert!(r.matched);
    assert_eq!(div, None, "the RTL diverged from the interpreter");
}

/// Programs of any length (issue 12): a 96x96 convolution on the 8x8 array compiles to
/// more than twice as many instructions as its 1024-entry instruction memory holds; the
/// engine fetches them from external memory through that memory as a ring, and the result
/// is bit-exact under back-pressure.
#[test]
fn a_program_longer_than_the_instruction_memory() {
    if !have_tool("verilator", "a_program_longer_than_the_instruction_memory") {
        return;
    }
    let src = "name = \"long\"\nseed = 3\n[input]\nshape = [96, 96, 8]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 3\npadding = 1\nout_channels = 8\nrequant = { multiplier = 100, shift = 13 }\n";
    let design = hwgen::config::load(&repo().join("configs/8x8_int8.toml")).unwrap();
    let model = hwgen::model::parse_str(src, "long.toml", &repo()).unwrap();
    let program = hwgen::compiler::compile(&design, &model).unwrap_or_else(|e| panic!("{e}"));
    let depth = design.control.imem_depth as usize;
    assert!(
        program.instrs.len() > 2 * depth,
        "{} instructions, {depth} entries",
        program.instrs.len()
    );
    golden_interpreter_rtl("long program", &design, &model, &program, 20, 3);
}

/// Packed multipliers change neither the array's timing nor its results: a convolution
/// takes the same cycles on the packed 16x16 config as on the unpacked one.
#[test]
fn packed_multipliers_take_the_same_cycles() {
    if !have_tool("verilator", "packed_multipliers_take_the_same_cycles") {
        return;
    }
    let m = hwgen::model::load(&repo().join("rtl-tests/cases/conv_relu.toml")).unwrap();
    let cycles = |config: &str| {
        let design = hwgen::config::load(&repo().join(config)).unwrap();
        let program = hwgen::compiler::compile(&design, &m).unwrap();
        golden_interpreter_rtl(config, &design, &m, &program, 0, 1).cycles
    };
    assert_eq!(
        cycles("configs/16x16_int8_packed.toml"),
        cycles("configs/16x16_int8.toml")
    );
}
