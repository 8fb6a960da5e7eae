use super::*;
use crate::compiler::passes::tile::{budget, Tiling};

/// Checks the tiles of every node of a compilation after `tile`: each output element
/// (pixel and output-channel tile) is in exactly one tile, and a tile's group fits the
/// scratchpads as the Design sizes them: its members' accumulator rows and one bias row per
/// member in one accumulator bank, a member's rows in its share of the output buffer.
fn check_tiles(c: &Through, what: &str) {
    let g = c.graph();
    let t = g.unit.kpf as usize;
    let bud = budget(c.design, g);
    for (n, tiling) in g.nodes.iter().zip(c.tiling()) {
        let [oh, ow, cout] = n.out;
        let octs = cout.div_ceil(t);
        let mut seen = vec![0u32; oh * ow * octs];
        let tiles = tiling.tiles(n.out, t);
        for tile in &tiles {
            assert!(
                tile.h >= 1 && tile.w >= 1 && !tile.octs.is_empty(),
                "{what}: {tile:?}"
            );
            let members = tile.octs.len();
            assert!(
                members * tile.h * tile.w + members <= bud.acc_bank,
                "{what}: node {} tile {tile:?} needs more than a bank of {} rows",
                n.name,
                bud.acc_bank
            );
            let out_rows = if n.residual.is_some() { 1 } else { 2 } * bud.out_quarter;
            assert!(
                tile.h * tile.w <= out_rows,
                "{what}: node {} tile {tile:?}",
                n.name
            );
            for y in tile.oy0..tile.oy0 + tile.h {
                for x in tile.ox0..tile.ox0 + tile.w {
                    for o in tile.octs.clone() {
                        seen[(y * ow + x) * octs + o] += 1;
                    }
                }
            }
        }
        if let Some(i) = seen.iter().position(|&k| k != 1) {
            let (pix, o) = (i / octs, i % octs);
            panic!(
                "{what}: node {} output ({}, {}) channel tile {o} is in {} tiles ({tiling:?})",
                n.name,
                pix / ow,
                pix % ow,
                seen[i]
            );
        }
    }
}

/// The property: over random shapes, kernels, strides, fused pools, residual adds, array
/// sizes and scratchpad depths, tiling covers every output element exactly once and every
/// group fits its bank; a layer that cannot be tiled gets an error that names a buffer.
#[test]
fn tiling_covers_every_output_element_exactly_once() {
    let mut tiled = 0;
    for seed in 0..300 {
        let mut rng = Rng::new(seed);
        let t = rng.pick(&[4u32, 8, 16]);
        let d = design(t, random_depths(&mut rng, t));
        let src = random_model(&mut rng);
        let m = model(&src);
        let what = format!(
            "seed {seed} ({t}x{t}, {:?})\n{src}",
            d.branches[0].units[0].buffers
        );
        match through(&d, &m, "tile") {
            Ok(c) => {
                check_tiles(&c, &what);
                tiled += 1;
            }
            Err(e) => assert!(e.fix.contains("buffers."), "{what}: {e}"),
        }
    }
    assert!(
        tiled >= 240,
        "only {tiled} of 300 random layers could be tiled"
    );
}

/// A layer that fits the scratchpads whole is one tile per channel group.
#[test]
fn a_small_layer_is_one_tile() {
    let d = design(8, ROOMY);
    let m = model(
        "name = \"small\"\n[input]\nshape = [4, 5, 8]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 3\npadding = 1\nout_channels = 16\n",
    );
    let c = through(&d, &m, "tile").unwrap();
    let tiling = c.tiling()[0];
    assert_eq!((tiling.th, tiling.tw), (4, 5));
    // Two output-channel tiles share the input window: 2 x 20 rows + 2 bias rows fit 256.
    assert_eq!(tiling.g, 2);
    assert_eq!(tiling.tiles([4, 5, 16], 8).len(), 1);
}

/// Tiles are balanced: 37 rows with room for 16 per tile become 13 + 13 + 11, never
/// 16 + 16 + 5.
#[test]
fn edge_tiles_are_cut_to_the_output() {
    let t = Tiling {
        th: 13,
        tw: 7,
        g: 2,
    };
    let tiles = t.tiles([37, 7, 20], 8);
    let heights: Vec<usize> = tiles
        .iter()
        .filter(|x| x.octs.start == 0)
        .map(|x| x.h)
        .collect();
    assert_eq!(heights, [13, 13, 11]);
    // Three channel tiles in groups of two, {0, 1} then {2}, each over all three rows of
    // tiles (groups outermost).
    let groups: Vec<_> = tiles.iter().map(|x| (x.octs.clone(), x.oy0)).collect();
    assert_eq!(
        groups,
        [
            (0..2, 0),
            (0..2, 13),
            (0..2, 26),
            (2..3, 0),
            (2..3, 13),
            (2..3, 26)
        ]
    );
}

/// One output pixel whose input window exceeds half the input buffer cannot be tiled.
#[test]
fn refuses_a_window_larger_than_half_the_input_buffer() {
    let d = design(4, Depths { input: 16, ..ROOMY });
    // A 5x5 window: 25 rows > 8.
    let m = model(
        "name = \"wide\"\n[input]\nshape = [6, 6, 4]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 5\nout_channels = 4\n",
    );
    let e = through(&d, &m, "tile").err().expect("does not fit");
    assert_eq!(e.layer.as_deref(), Some("c"));
    assert!(e.rule.contains("5x5 input window"), "{e}");
    assert!(e.fix.contains("buffers.input_depth"), "{e}");
}

#[test]
fn refuses_a_single_accumulator_bank() {
    let mut d = design(8, ROOMY);
    d.branches[0].units[0].buffers.accumulator_double_buffer = false;
    let m = model(
        "name = \"m\"\n[input]\nshape = [4, 4, 8]\n[[layer]]\nname = \"c\"\nop = \"conv2d\"\nkernel = 1\nout_channels = 8\n",
    );
    let e = through(&d, &m, "tile").err().expect("refused");
    assert!(e.fix.contains("accumulator_double_buffer = true"), "{e}");
}
