use super::*;
use crate::compiler::passes::schedule::{Res, Step};
use crate::isa::{Buffer, Op};
use std::collections::HashMap;

/// Every scratchpad range a step writes lies inside its buffer, and inside one half of a
/// double-buffered one: the input buffer's halves (one window loads while the other
/// streams) and the two accumulator banks.
fn check_regions(d: &Design, steps: &[Step], what: &str) {
    let b = d.branches[0].units[0].buffers;
    for (i, s) in steps.iter().enumerate() {
        for w in &s.writes {
            let Res::Spad(buf, lo, hi) = *w else { continue };
            let (depth, half) = match buf {
                Buffer::Input => (b.input_depth, Some(b.input_depth / 2)),
                Buffer::Weight => (b.weight_depth, None),
                Buffer::Accumulator => (2 * b.accumulator_depth, Some(b.accumulator_depth)),
                Buffer::Output => (b.output_depth, None),
            };
            let depth = u64::from(depth);
            assert!(
                lo < hi && hi <= depth,
                "{what}: step {i} writes {w:?} beyond {depth}"
            );
            if let Some(half) = half.map(u64::from) {
                assert_eq!(
                    lo / half,
                    (hi - 1) / half,
                    "{what}: step {i} writes {w:?} across halves of {half}"
                );
            }
        }
    }
}

/// Every beat of every layer's output tensor (inside its zero border) is written by exactly
/// one store, and stores write nothing else.
fn check_stores(c: &Through, steps: &[Step], what: &str) {
    let (g, a) = (c.graph(), c.alloc());
    let mut want: HashMap<u64, String> = HashMap::new();
    for n in &g.nodes {
        let l = &a.tensors[&n.name];
        for ct in 0..l.tiles {
            for y in l.pad..l.pad + l.h {
                for x in l.pad..l.pad + l.w {
                    for beat in 0..l.beats {
                        want.insert(l.addr(ct, y, x) + beat, n.name.clone());
                    }
                }
            }
        }
    }
    let mut written: HashMap<u64, usize> = HashMap::new();
    for (i, s) in steps.iter().enumerate() {
        let Op::Store(t) = s.instr.op else { continue };
        let beats = a.tensors[&g.nodes[s.node].name].beats;
        for i1 in 0..t.count1 {
            for i0 in 0..t.count0 {
                let row = t.ext_addr + i0 * t.stride0 + i1 * t.stride1;
                for beat in row..row + beats {
                    assert!(
                        want.contains_key(&beat),
                        "{what}: store {i} writes beat {beat}, outside every output"
                    );
                    if let Some(first) = written.insert(beat, i) {
                        panic!(
                            "{what}: stores {first} and {i} both write beat {beat} of {}",
                            want[&beat]
                        );
                    }
                }
            }
        }
    }
    if let Some(beat) = want.keys().find(|b| !written.contains_key(b)) {
        panic!("{what}: beat {beat} of {} is never stored", want[beat]);
    }
}

/// Over random layers (convolutions with fused pools and residual adds) on random arrays
/// and scratchpads: writes stay in their buffer halves and every output beat is stored once.
#[test]
fn stores_write_every_output_beat_once_within_the_buffers() {
    let mut scheduled = 0;
    for seed in 0..150 {
        let mut rng = Rng::new(1000 + seed);
        let t = rng.pick(&[4u32, 8, 16]);
        let d = design(t, random_depths(&mut rng, t));
        let src = random_model(&mut rng);
        let m = model(&src);
        let what = format!("seed {seed} ({t}x{t})\n{src}");
        let Ok(c) = through(&d, &m, "schedule") else {
            continue;
        };
        let steps = c.steps.as_ref().expect("schedule ran");
        check_regions(&d, steps, &what);
        check_stores(&c, steps, &what);
        scheduled += 1;
    }
    assert!(
        scheduled >= 120,
        "only {scheduled} of 150 random layers were scheduled"
    );
}

/// The schedule of an upsampling layer stores every output beat once too.
#[test]
fn upsampling_stores_every_beat_once() {
    let d = design(
        4,
        Depths {
            acc: 32,
            output: 64,
            ..ROOMY
        },
    );
    let m = model(
        "name = \"up\"\n[input]\nshape = [5, 3, 6]\n[[layer]]\nname = \"u\"\nop = \"upsample\"\nfactor = 2\n",
    );
    let c = through(&d, &m, "schedule").unwrap();
    let steps = c.steps.as_ref().unwrap();
    check_regions(&d, steps, "upsample");
    check_stores(&c, steps, "upsample");
}

/// The first matmul of every accumulation overwrites (accumulate = 0) and later taps add:
/// per first accumulator row, the first matmul to write it after the vector unit read it
/// does not accumulate. A matmul that streams no rows only preloads weights.
#[test]
fn each_accumulation_starts_by_overwriting() {
    let d = design(8, ROOMY);
    let m = model(
        "name = \"m\"\n[input]\nshape = [6, 6, 20]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 3\npadding = 1\nout_channels = 20\n",
    );
    let c = through(&d, &m, "schedule").unwrap();
    let mut fresh: HashMap<u64, bool> = HashMap::new(); // first acc row -> next matmul starts
    for s in c.steps.as_ref().unwrap() {
        match s.instr.op {
            Op::Matmul(mm) => {
                if mm.count0 == 0 {
                    assert!(
                        mm.preload && !mm.swap,
                        "a matmul without rows only preloads: {mm:?}"
                    );
                    continue;
                }
                let start = fresh.entry(mm.acc_addr).or_insert(true);
                assert_eq!(mm.accumulate, !*start, "matmul into row {}", mm.acc_addr);
                *start = false;
            }
            Op::Vector(v) => {
                fresh.insert(v.acc_addr, true);
            }
            _ => {}
        }
    }
}

/// A load that reaches outside a 4x5 tensor (rows of 2 beats, stored from beat 10): a 3x4
/// window from pixel (-1, -1) at step 1 has padding top 1, left 1, nothing at the bottom
/// or right; its first beat is the one pixel (-1, -1) would have, 10 - (5 + 1) * 2 = -2,
/// modulo 2^32; it reads rows 0..1 and columns 0..2: beats 10 to the end of pixel (1, 2),
/// 10 + (1 * 5 + 2) * 2 + 2 = 26. From (3, 3) at step 2 a 2x2 window takes row 3 and
/// column 3, and rows 5 and columns 5 (past the end) are padding.
#[test]
fn loads_outside_a_tensor_pad_with_zero_rows() {
    use crate::compiler::passes::schedule::padded;
    use crate::numeric::{Format, IntType};
    let t = crate::compiler::TensorLayout::tiled(
        "x",
        [4, 5, 8],
        Format::Int(IntType::new(true, 8)),
        0,
        8,
        2,
        10,
    );
    let (tr, res) = padded(&t, 0, (-1, -1), (3, 4), 1, (Buffer::Input, 0), 0);
    assert_eq!(
        (tr.pad_top, tr.pad_bottom, tr.pad_left, tr.pad_right),
        (1, 0, 1, 0)
    );
    assert_eq!(tr.ext_addr, (1u64 << 32) - 2);
    assert_eq!((tr.stride0, tr.stride1), (2, 10));
    assert_eq!(res, Res::Dram(10, 26));
    assert_eq!(tr.moved_rows(), 6);
    let (tr, res) = padded(&t, 0, (3, 3), (2, 2), 2, (Buffer::Input, 0), 0);
    assert_eq!(
        (tr.pad_top, tr.pad_bottom, tr.pad_left, tr.pad_right),
        (0, 1, 0, 1)
    );
    let first = 10 + (3 * 5 + 3) * 2;
    assert_eq!(tr.ext_addr, first);
    assert_eq!(res, Res::Dram(first, first + 2));
    // Inside the tensor: no padding.
    let (tr, _) = padded(&t, 0, (1, 1), (2, 2), 1, (Buffer::Input, 0), 0);
    assert_eq!(tr.pad_top + tr.pad_bottom + tr.pad_left + tr.pad_right, 0);
}

/// A group's biases arrive in one load: a 6x6 convolution to 32 channels on 8x8 is one
/// spatial tile and one group of its four output-channel tiles (`tile::GROUP`), so one
/// accumulator load of four rows, from four consecutive bias rows in memory (one row of
/// `acc_beats` per tile, `allocate`), into the bank's last four rows; member j's vector
/// reads row j of them.
#[test]
fn a_group_s_biases_arrive_in_one_load() {
    let d = design(8, ROOMY);
    let m = model(
        "name = \"m\"\n[input]\nshape = [6, 6, 8]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 3\npadding = 1\nout_channels = 32\nbias = \"random\"\n",
    );
    let c = through(&d, &m, "schedule").unwrap();
    let (a, steps) = (c.alloc(), c.steps.as_ref().unwrap());
    let loads: Vec<_> = steps
        .iter()
        .filter_map(|s| match s.instr.op {
            Op::Load(t) if t.buffer == Buffer::Accumulator => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(loads.len(), 1, "{loads:?}");
    let bank = u64::from(d.branches[0].units[0].buffers.accumulator_depth);
    assert_eq!((loads[0].count0, loads[0].stride0), (4, a.acc_beats));
    assert_eq!(loads[0].ext_addr, a.bias[&(0, 0)]);
    for oct in 1..4 {
        assert_eq!(
            a.bias[&(0, oct)],
            a.bias[&(0, 0)] + oct as u64 * a.acc_beats
        );
    }
    let rows: Vec<u64> = steps
        .iter()
        .filter_map(|s| match s.instr.op {
            Op::Vector(v) if v.load_bias => Some(v.bias_addr),
            _ => None,
        })
        .collect();
    let first = loads[0].spad_addr;
    assert_eq!(first % bank, bank - 4);
    assert_eq!(rows, (first..first + 4).collect::<Vec<_>>());
}
