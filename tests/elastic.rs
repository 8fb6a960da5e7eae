//! Elastic multi-engine programs on the ISA interpreter: every engine of every stage runs
//! its share, the stream links carry the hand-off tokens, and every frame's output equals
//! the golden model's, bit for bit.

mod common;

use hwgen::compiler::passes::encode::read_tensor;
use hwgen::compiler::Program;
use hwgen::isa::Op;
use std::path::Path;

/// Compile for an elastic config and run every engine on the interpreter; the output of
/// every frame must be the golden model's (for that frame's input).
fn check(config: &str, model_src: &str) -> Program {
    check_on(&hwgen::config::load(Path::new(config)).unwrap(), model_src)
}

/// As [`check`], for a config given as text.
fn check_src(config_src: &str, model_src: &str) -> Program {
    let design = hwgen::config::parse_str(config_src, "test.toml", "test").unwrap();
    check_on(&design, model_src)
}

fn check_on(design: &hwgen::design::Design, model_src: &str) -> Program {
    let (program, expected, c) = common::interpreted_on(design, model_src);
    assert!(c.matched(), "{} {} differ", c.differing, c.unit);
    // Guard against a degenerate case: the outputs must vary (not saturated or all zero).
    for out in &program.outputs {
        let want = read_tensor(&expected, &out.layout);
        let distinct: std::collections::BTreeSet<i64> = want.data.iter().copied().collect();
        assert!(
            distinct.len() >= 10,
            "the output takes only {} values",
            distinct.len()
        );
    }
    program
}

const CHAIN: &str = include_str!("../rtl-tests/cases/elastic_chain.toml");

#[test]
fn two_stages_two_replicas_two_frames() {
    let p = check("rtl-tests/configs/elastic_2stage_h2_int8.toml", CHAIN);
    let e = p.elastic.as_ref().expect("elastic");
    // Every engine has work: more than its end instruction.
    for (i, prog) in e.programs.iter().enumerate() {
        assert!(prog.len() > 1, "engine {i} runs an empty program");
    }
    assert_eq!(e.stages.len(), 2);
    assert_eq!(p.frames(), 2);
}

/// Row bands (fine-grained pipelining) on the chain of two units of two replicas, the front
/// in 2 bands and the back in 3 (the config's `bands`), derived by hand. Replica 0 of the
/// back computes c's rows [0, 3) and b's [0, 6) (3x3 windows; c has stride 2). Its band k
/// ends at fraction (k + 1) / 3: c at 1, 2, 3; c's window over rows ..1 reads b's rows ..2
/// (row 0 * 2 - 1 + 3), so b ends at 2, then 4 and 6, and b's window reads a's rows ..3,
/// ..5 and ..7. The back's band k waits for the front's band that ends at the same
/// fraction of the frame, ceil((k + 1) 2 / 3) - 1 = 0, 1, 1, so the front's band 0 of a
/// ends at 3 (its own half of [0, 7) is also 3), band 1 at 7. Replica 1 (a's rows
/// [4, 14), c's [3, 7)): c's band 0 ends at 4, its window reads b's rows ..8 (3 * 2 - 1 +
/// 3), b's window a's rows ..9, which is also half of a's rows. Every frame still equals
/// the golden model's, and the back's first band computes before its second token arrives.
#[test]
fn row_bands_hand_on_part_of_a_frame() {
    let p = check("rtl-tests/configs/elastic_2stage_h2_int8.toml", CHAIN);
    let e = p.elastic.as_ref().unwrap();
    let rows = |v: &[(&str, usize, usize)]| -> Vec<(String, usize, usize)> {
        v.iter().map(|&(l, a, b)| (l.to_string(), a, b)).collect()
    };
    assert_eq!(e.stages[0].bands, 2);
    assert_eq!(
        e.stages[0].band_rows,
        vec![
            vec![rows(&[("a", 0, 3)]), rows(&[("a", 3, 7)])],
            vec![rows(&[("a", 4, 9)]), rows(&[("a", 9, 14)])],
        ]
    );
    assert_eq!(e.stages[1].bands, 3);
    assert_eq!(
        e.stages[1].band_rows[0],
        vec![
            rows(&[("b", 0, 2), ("c", 0, 1)]),
            rows(&[("b", 2, 4), ("c", 1, 2)]),
            rows(&[("b", 4, 6), ("c", 2, 3)]),
        ]
    );
    assert_eq!(
        e.stages[1].band_rows[1][0],
        rows(&[("b", 5, 8), ("c", 3, 4)])
    );
    // The back's replica 0 (engine 2): per frame, a token before band 0 (the front's band
    // 0 covers a's rows ..3), one before band 1 (..5 is in the front's band 1), none more;
    // and it sends three, one after each band.
    let prog = &e.programs[e.stages[1].engines[0]];
    let token_loads: Vec<usize> = prog
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(&i.op, Op::Load(t) if t.stream))
        .map(|(pc, _)| pc)
        .collect();
    let token_stores = prog
        .iter()
        .filter(|i| matches!(&i.op, Op::Store(t) if t.stream))
        .count();
    assert_eq!(token_loads.len(), 2 * 2, "two tokens per frame, two frames");
    assert_eq!(token_stores, 0, "the last unit feeds no one");
    let first_matmul = prog
        .iter()
        .position(|i| matches!(i.op, Op::Matmul(_)))
        .unwrap();
    assert!(
        token_loads[0] < first_matmul && first_matmul < token_loads[1],
        "band 0 computes between the frame's first and second token"
    );
    let front = &e.programs[e.stages[0].engines[0]];
    let sent = front
        .iter()
        .filter(|i| matches!(&i.op, Op::Store(t) if t.stream))
        .count();
    assert_eq!(sent, 2 * 2, "the front sends a token per band and frame");
}

/// The hand-off tokens are what orders the stages: with the downstream engines' token loads
/// turned into ordinary loads (same semaphores, nothing waited for), the interpreter runs
/// the stages concurrently and the result is wrong. This shows the interpreter models the
/// engines as concurrent, so the equality above is not an accident of a sequential order.
#[test]
fn without_the_hand_off_the_result_is_wrong() {
    let design =
        hwgen::config::load(Path::new("rtl-tests/configs/elastic_2stage_int8.toml")).unwrap();
    let model = hwgen::model::parse_str(CHAIN, "test.toml", Path::new(".")).unwrap();
    let mut program = hwgen::compiler::compile(&design, &model).unwrap();
    let expected = hwgen::verify::expected(&design, &model, &program);
    let e = program.elastic.as_mut().unwrap();
    let mut turned = 0;
    for prog in &mut e.programs {
        for i in prog.iter_mut() {
            if let Op::Load(t) = &mut i.op {
                if t.stream {
                    t.stream = false;
                    turned += 1;
                }
            }
        }
    }
    assert_eq!(turned, 2, "one token load per frame on the second stage");
    let mem = hwgen::verify::interpret(&design, &program).unwrap();
    let c = hwgen::verify::compare(&program, &expected, &mem);
    assert!(!c.matched(), "the stages ran unordered and still matched");
}

const DECODER: &str = include_str!("../models/codec_avatar/decoder_small.toml");

/// The small codec-avatar decoder on its elastic config: three branches (one per output),
/// warp forking from texture's first unit, a concat of the two inputs, transposed
/// convolutions with untied bias and leaky ReLU, two replicas per unit, each branch its
/// batch of frames (geometry 1, texture and warp 2). Every
/// engine works, and the shared up-convolution runs once, on texture (the branch with
/// more compute of its own).
#[test]
fn small_decoder_on_three_branches() {
    let p = check("configs/codec_avatar_small.toml", DECODER);
    let e = p.elastic.as_ref().unwrap();
    for (i, prog) in e.programs.iter().enumerate() {
        assert!(prog.len() > 1, "engine {i} runs an empty program");
    }
    let on = |layer: &str| -> Vec<String> {
        e.stages
            .iter()
            .filter(|s| s.layers.iter().any(|l| l.starts_with(layer)))
            .map(|s| format!("{}.{}", s.branch, s.unit))
            .collect()
    };
    assert_eq!(on("tex1."), vec!["texture.up1"]);
    assert_eq!(on("warp1."), vec!["warp.up"]);
    assert_eq!(on("geo1."), vec!["geometry.up"]);
    // Each branch runs its batch of frames: geometry 1, texture and warp 2.
    let frames = |o: &str| p.outputs.iter().filter(|r| r.name == o).count();
    assert_eq!(
        (frames("geometry"), frames("texture"), frames("warp")),
        (1, 2, 2)
    );
}

/// A branch that reads another branch's layers needs a fork link from it.
#[test]
fn shared_layers_need_a_fork_link() {
    let design = hwgen::config::load(Path::new("configs/codec_avatar_small.toml")).unwrap();
    let mut design = design;
    design.branches[2].from = None;
    let model = hwgen::model::parse_str(DECODER, "d.toml", Path::new(".")).unwrap();
    let e = hwgen::compiler::compile(&design, &model).unwrap_err();
    assert!(
        e.rule
            .contains("branch warp reads tex1 computed on branch texture")
            && e.fix.contains("from = \"texture.<unit>\""),
        "{e}"
    );
}

/// The fork source must finish the shared layers: with warp forking from texture's second
/// unit, the shared up-convolution is kept on units up to it, and the result still holds.
#[test]
fn fork_from_a_later_unit() {
    let mut design = hwgen::config::load(Path::new("configs/codec_avatar_small.toml")).unwrap();
    design.branches[2].from = Some(("texture".into(), "up2".into()));
    let model = hwgen::model::parse_str(DECODER, "d.toml", Path::new(".")).unwrap();
    let program = hwgen::compiler::compile(&design, &model).unwrap_or_else(|e| panic!("{e}"));
    let expected = hwgen::verify::expected(&design, &model, &program);
    let mem = hwgen::verify::interpret(&design, &program).unwrap_or_else(|e| panic!("{e}"));
    assert!(hwgen::verify::compare(&program, &expected, &mem).matched());
}

/// Units of different sizes (F-CAD's elastic units): the small decoder with texture's first
/// unit a 16x16 array among 8x8 ones. Tensors are stored pixel by pixel in rows of 16
/// channels; the 8x8 units read and write them as rows of 8 (one 64-bit beat), the 16x16
/// unit as rows of 16 (two beats), on the fork and the link both ways.
#[test]
fn units_of_different_sizes_share_tensors() {
    let src = std::fs::read_to_string("configs/codec_avatar_small.toml").unwrap();
    let mixed = src.replacen(
        "name = \"up1\"\ncpf = 8\nkpf = 8",
        "name = \"up1\"\ncpf = 16\nkpf = 16",
        1,
    );
    assert_ne!(mixed, src);
    let design = hwgen::config::parse_str(&mixed, "mixed.toml", "mixed").unwrap();
    let model = hwgen::model::parse_str(DECODER, "d.toml", Path::new(".")).unwrap();
    let program = hwgen::compiler::compile(&design, &model).unwrap_or_else(|e| panic!("{e}"));
    let expected = hwgen::verify::expected(&design, &model, &program);
    let mem = hwgen::verify::interpret(&design, &program).unwrap_or_else(|e| panic!("{e}"));
    let c = hwgen::verify::compare(&program, &expected, &mem);
    assert!(c.matched(), "{} {} differ", c.differing, c.unit);
    let e = program.elastic.as_ref().unwrap();
    let up1 = e.stages.iter().find(|s| s.unit == "up1").unwrap();
    let up2 = e.stages.iter().find(|s| s.unit == "up2").unwrap();
    assert!(!up1.layers.is_empty() && !up2.layers.is_empty());
    // Every activation row a 16x16 engine moves is two beats, an 8x8 engine's one.
    let beats_of = |engine: usize| -> std::collections::BTreeSet<u64> {
        e.programs[engine]
            .iter()
            .filter_map(|i| match &i.op {
                Op::Load(t) | Op::Store(t)
                    if !t.stream && t.buffer == hwgen::isa::Buffer::Input =>
                {
                    Some(t.stride0)
                }
                _ => None,
            })
            .collect()
    };
    assert!(
        beats_of(up1.engines[0]).iter().all(|&s| s % 2 == 0),
        "{:?}",
        beats_of(up1.engines[0])
    );
}

/// Units of different sizes need exact accumulation: a floating-point sum depends on the
/// channel tile it is accumulated in (the golden model's order is the tile's).
#[test]
fn units_of_different_sizes_need_an_integer_datatype() {
    let src = std::fs::read_to_string("rtl-tests/configs/elastic_mixed_int8.toml").unwrap();
    let bf16 = src
        .replace("\"int8\"", "\"bf16\"")
        .replace("\"int32\"", "\"fp32\"");
    let design = hwgen::config::parse_str(&bf16, "bf16.toml", "bf16").unwrap();
    let model = hwgen::model::parse_str(
        include_str!("../rtl-tests/cases/bf16_conv3x3_relu_stride2.toml"),
        "m.toml",
        Path::new("."),
    )
    .unwrap();
    let e = hwgen::compiler::compile(&design, &model).unwrap_err();
    assert!(
        e.rule
            .contains("unit main.front is 8x8 but unit wide is 16x16"),
        "{e}"
    );
    assert!(e.rule.contains("floating-point sums"), "{e}");
    assert!(e.fix.contains("integer datatype"), "{e}");
}

/// Units that run layers must have cpf = kpf (tensors are read in tiles of cpf channels
/// and written in tiles of kpf): the error names the unit.
#[test]
fn units_with_another_array_shape_are_refused() {
    let mut design = hwgen::config::load(Path::new("configs/codec_avatar_small.toml")).unwrap();
    design.branches[1].units[1].kpf = 16;
    let model = hwgen::model::parse_str(DECODER, "d.toml", Path::new(".")).unwrap();
    let e = hwgen::compiler::compile(&design, &model).unwrap_err();
    assert!(e.rule.contains("unit texture.up2 is 8x16"), "{e}");
}
/// A concat stored in place, on replicas: the rows a replica needs of the concat are the
/// rows it computes of every operand (found by the model fuzzer: without that, the operands'
/// layers computed nothing on an elastic design).
#[test]
fn concat_in_place_across_stages_and_replicas() {
    let p = check(
        "rtl-tests/configs/elastic_2stage_h2_int8.toml",
        include_str!("../rtl-tests/cases/branches_concat.toml"),
    );
    let e = p.elastic.as_ref().unwrap();
    let computed: Vec<&str> = e
        .stages
        .iter()
        .flat_map(|s| s.rows.iter().flatten().map(|(l, _, _)| l.as_str()))
        .collect();
    for layer in ["geo", "tex", "tex2", "warp", "mix"] {
        assert!(computed.contains(&layer), "{layer} computes no rows");
    }
}

/// A unit whose buffers cannot hold what a layer mapped onto it needs: the error names the
/// layer and the unit.
#[test]
fn a_unit_too_small_for_its_layer_is_named() {
    let mut design = hwgen::config::load(Path::new("configs/codec_avatar_small.toml")).unwrap();
    design.branches[1].units[1].buffers.input_depth = 16;
    let model = hwgen::model::parse_str(DECODER, "d.toml", Path::new(".")).unwrap();
    let e = hwgen::compiler::compile(&design, &model).unwrap_err();
    assert_eq!(e.layer.as_deref(), Some("texture"), "{e}");
    assert!(e.rule.starts_with("on unit texture.up2:"), "{e}");
    assert!(e.fix.contains("input_depth"), "{e}");
}

/// Units of different `h` (F-CAD's per-unit height split): every replica of one unit feeds
/// every replica of the next, the replicas downstream wait for all of them (a join), and
/// the rows a replica reads across the bands come through memory. The small decoder with
/// texture's first unit (the fork source) on one engine and its second on four, and the
/// chain with two replicas, then one, then two: every frame bit-exact on the interpreter.
#[test]
fn units_of_different_h() {
    let src = std::fs::read_to_string("configs/codec_avatar_small.toml").unwrap();
    let set_h = |src: &str, unit: &str, h: u32| {
        let at = src.find(&format!("name = \"{unit}\"")).expect("unit");
        let (head, tail) = src.split_at(at);
        format!("{head}{}", tail.replacen("h = 2", &format!("h = {h}"), 1))
    };
    let mixed = set_h(&set_h(&src, "up1", 1), "up2", 4);
    let p = check_src(&mixed, DECODER);
    let e = p.elastic.as_ref().unwrap();
    let up2 = e.stages.iter().find(|s| s.unit == "up2").unwrap();
    assert_eq!(up2.engines.len(), 4);
    for (r, rows) in up2.rows.iter().enumerate() {
        assert!(
            !rows.is_empty(),
            "replica {r} of texture.up2 computes nothing"
        );
    }
    // The chain (a, b: 3x3 pad 1 on 14 rows; c: 3x3 stride 2 pad 1 to 7 rows) on units of
    // h = 2, 1, 2. c's replicas take bands [0, 3) and [3, 7), whose windows read b's rows
    // [0, 6) and [5, 14): b's one engine computes [0, 14). Its window reads a's rows
    // [0, 14), which a's two replicas split by band, [0, 7) and [7, 14), with no halo rows
    // computed twice (on units of one h they would be [0, 7) and [4, 14)).
    let p = check("rtl-tests/configs/elastic_mixed_int8.toml", CHAIN);
    let rows: Vec<Vec<(String, usize, usize)>> = p
        .elastic
        .as_ref()
        .unwrap()
        .stages
        .iter()
        .flat_map(|s| s.rows.iter().cloned())
        .collect();
    let want = |l: &str, a: usize, b: usize| vec![(l.to_string(), a, b)];
    assert_eq!(
        rows,
        vec![
            want("a", 0, 7),
            want("a", 7, 14),
            want("b", 0, 14),
            want("c", 0, 3),
            want("c", 3, 7)
        ]
    );
}

/// Two rounds of the small decoder (every branch twice its batch: geometry 2, texture and
/// warp 4 frames), as `hwgen sim` runs them for the steady state: every frame of every
/// branch equals the golden model's on the interpreter. The estimate's round charges each
/// stage's beats and cycles once per frame its branch runs in a round, and a branch's
/// frames per second are its frames per round over the round.
#[test]
fn rounds_of_the_small_decoder() {
    let design = hwgen::config::load(Path::new("configs/codec_avatar_small.toml")).unwrap();
    let model = hwgen::model::parse_str(DECODER, "d.toml", Path::new(".")).unwrap();
    let p = hwgen::compiler::compile_rounds(&design, &model, 2).unwrap();
    assert_eq!(p.elastic.as_ref().unwrap().frames, vec![2, 4, 4]);
    let expected = hwgen::verify::expected(&design, &model, &p);
    let mem = hwgen::verify::interpret(&design, &p).unwrap_or_else(|e| panic!("{e}"));
    let c = hwgen::verify::compare(&p, &expected, &mem);
    assert!(c.matched(), "{} {} differ", c.differing, c.unit);
    let e = hwgen::compiler::estimate(&design, &model).unwrap();
    assert_eq!(e.branch_frames, vec![1, 2, 2]);
    let frames = |branch: &str| if branch == "geometry" { 1 } else { 2 };
    let beats: u64 = e.stages.iter().map(|s| frames(&s.branch) * s.beats).sum();
    assert_eq!(e.beats, beats);
    let slowest = e
        .stages
        .iter()
        .map(|s| frames(&s.branch) * s.estimated_cycles)
        .max();
    assert_eq!(e.compute_cycles, slowest.unwrap());
    assert_eq!(
        e.bound_cycles_per_round,
        e.compute_cycles.max(e.memory_cycles)
    );
    assert!((e.branch_fps[1] - 2.0 * e.branch_fps[0]).abs() < 1e-6);
    assert!((e.frames_per_second - e.branch_fps[1]).abs() < 1e-6);
}

/// A last layer that writes its accumulator (`output_type = "accumulator"`, stored as four
/// int8 slices) on elastic designs: its replicas store their bands of every slice, on units
/// of one size and on units of different sizes (which read tensors as rows of their own
/// width: a view must step over a slice's every stored tile, which it once did not), every
/// frame equal to the golden model's int32 values.
#[test]
fn accumulator_outputs_across_stages() {
    let model = include_str!("../rtl-tests/cases/elastic_accumulator.toml");
    for config in [
        "rtl-tests/configs/elastic_2stage_h2_int8.toml",
        "rtl-tests/configs/elastic_mixed_int8.toml",
    ] {
        let p = check(config, model);
        let out = &p.outputs[0].layout;
        assert_eq!((out.planes, out.value_format().name()), (4, "int32".into()));
    }
}

/// A stage's estimate is its own layers' (each replica's, the slowest): a layer another
/// stage runs costs it nothing. Before, every layer of the model added a pipeline fill to
/// every stage (22 phantom fills of 64 cycles on the one-engine warp stage below, +14% on
/// the round against the RTL).
#[test]
fn a_stage_costs_its_own_layers_only() {
    let design = hwgen::config::load(Path::new("configs/codec_avatar_zu9cg.toml")).unwrap();
    let model = hwgen::model::load(Path::new("models/codec_avatar/decoder_small.toml")).unwrap();
    let e = hwgen::compiler::estimate(&design, &model).unwrap();
    let mut one_engine = 0;
    for s in e.stages.iter().filter(|s| s.engines.len() == 1) {
        let own: u64 = e
            .layers
            .iter()
            .filter(|l| s.layers.contains(&l.name))
            .map(|l| l.estimated_cycles)
            .sum();
        assert_eq!(s.estimated_cycles, own, "{}.{}", s.branch, s.unit);
        one_engine += 1;
    }
    assert!(one_engine >= 2, "{one_engine} one-engine stages");
}

const HANDOFF: &str = include_str!("../rtl-tests/cases/elastic_handoff.toml");

/// On-chip hand-offs (`handoff_depth`): the front unit's two replicas write the rows of `a`
/// they compute into the hand-off buffers of the back unit's and, through the fork, the
/// side unit's replicas, which read their 3x3 windows from there; every frame equals the
/// golden model's on the interpreter, whose buffers refuse a beat overwritten before it is
/// read. Derived by hand: a row of `a` (12 pixels, 16 int8 channels in tiles of 8, 64-bit
/// beats) is 24 beats. The back's replica 0 computes b's rows [0, 5) (stride 2), whose
/// windows read a's rows [0, 10); the side's replica 0 computes c's rows [0, 10), reading
/// a's [0, 11): so the front's replica 0 computes a's rows [0, 11), replica 1 [9, 20),
/// 22 rows, 528 beats into the buffers per frame. With buffers of 64 beats (the small
/// config) the rows live at once do not fit and `a` goes through memory, the same program
/// otherwise: every beat a stage moves through the buffers it moves through memory there.
#[test]
fn rows_handed_on_chip() {
    let on = check("rtl-tests/configs/elastic_handoff_int8.toml", HANDOFF);
    let off = check("rtl-tests/configs/elastic_handoff_small_int8.toml", HANDOFF);
    let (on, off) = (&on.elastic.unwrap().stages, &off.elastic.unwrap().stages);
    let notes = |s: &hwgen::compiler::StageReport| s.handoffs.join("; ");
    assert_eq!(notes(&on[0]), "hands a on chip to main.back, side.side");
    for s in &on[1..] {
        assert!(
            notes(s).starts_with("reads a from its hand-off buffers (at most "),
            "{}",
            notes(s)
        );
    }
    assert_eq!(on[0].handoff_beats, 22 * 24);
    for (a, b) in on.iter().zip(off) {
        assert_eq!(b.handoff_beats, 0);
        assert_eq!(
            a.beats + a.handoff_beats,
            b.beats,
            "{}.{}",
            a.branch,
            a.unit
        );
    }
    assert!(notes(&off[0]).is_empty());
    for s in &off[1..] {
        assert!(
            notes(s).starts_with(
                "reads a from memory: its rows live in unit main.back's hand-off buffer need "
            ),
            "{}",
            notes(s)
        );
        assert!(
            notes(s).ends_with(
                "and it holds 64 (it goes on chip to every unit that reads it, or to none)"
            ),
            "{}",
            notes(s)
        );
    }
}

/// The beats live in a hand-off buffer, derived by hand: two units of one replica, 1x1
/// convolutions on an 8x4 map of 8 int8 channels (a row of 4 beats at 64 bits), each unit
/// in 4 bands of 2 rows (8 beats), a FIFO of 2 tokens. The front starts band J once its
/// token for band J - 1 is in the FIFO, so the back has taken J - 2 tokens and its band
/// J - 3 (which needs J - 2) may still read from its first row, 8 (J - 3) beats in, while
/// band J writes up to 8 (J + 1): 32 beats live. A buffer of 32 takes the hand-off, one of
/// 16 does not, and says so.
#[test]
fn live_beats_of_a_hand_off_by_hand() {
    let model = r#"
name = "pointwise"
seed = 5
[input]
shape = [8, 4, 8]
[[layer]]
name = "a"
op = "conv2d"
kernel = 1
out_channels = 8
activation = "relu"
requant = { multiplier = 18, shift = 12 }
[[layer]]
name = "b"
op = "conv2d"
kernel = 1
out_channels = 8
requant = { multiplier = 20, shift = 12 }
"#;
    let config = |depth: u32| {
        format!(
            r#"
[memory]
data_width_bits = 64
[[branch]]
name = "main"
batch = 2
fifo_depth = 2
[[branch.unit]]
name = "front"
cpf = 8
kpf = 8
bands = 4
[[branch.unit]]
name = "back"
cpf = 8
kpf = 8
bands = 4
handoff_depth = {depth}
"#
        )
    };
    let p = check_src(&config(32), model);
    let s = &p.elastic.unwrap().stages;
    assert_eq!(
        s[1].handoffs,
        vec!["reads a from its hand-off buffers (at most 32 of 32 beats live)".to_string()]
    );
    assert_eq!(s[0].handoff_beats, 8 * 4);
    let p = check_src(&config(16), model);
    let s = &p.elastic.unwrap().stages;
    assert_eq!(
        s[1].handoffs,
        vec!["reads a from memory: its rows live in unit main.back's hand-off buffer need 32 beats (8 rows of 4 beats) and it holds 16".to_string()]
    );
}
