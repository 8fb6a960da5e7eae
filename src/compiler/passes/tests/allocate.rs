use super::*;
use crate::compiler::passes::allocate::Alloc;
use crate::compiler::passes::legalize::Graph;

/// A random chain of 2 to 7 layers: convolutions (1x1 or 3x3, with or without padding),
/// max-pools, and residual adds of an earlier tensor of the same shape.
fn random_chain(rng: &mut Rng) -> String {
    let mut shape = [rng.range(3, 20), rng.range(3, 20), rng.range(1, 24)];
    let mut src = format!(
        "name = \"chain\"\nseed = {}\n[input]\nshape = [{}, {}, {}]\n",
        rng.range(0, 99),
        shape[0],
        shape[1],
        shape[2]
    );
    let mut tensors: Vec<(String, [usize; 3])> = vec![("input".into(), shape)];
    for i in 0..rng.range(2, 7) {
        let name = format!("l{i}");
        let same: Vec<&String> = tensors
            .iter()
            .filter(|(_, s)| *s == shape)
            .map(|(n, _)| n)
            .collect();
        let choice = rng.range(0, 5);
        if choice == 0 && shape[0] >= 2 && shape[1] >= 2 {
            src += &format!(
                "[[layer]]\nname = \"{name}\"\nop = \"maxpool\"\nkernel = 2\nstride = 2\n"
            );
            shape = [shape[0] / 2, shape[1] / 2, shape[2]];
        } else if choice == 1 && same.len() >= 2 {
            let other = same[rng.range(0, same.len() - 2)];
            src += &format!("[[layer]]\nname = \"{name}\"\nop = \"add\"\nresidual = \"{other}\"\n");
        } else {
            let k = rng.pick(&[1usize, 3]);
            let pad = if k == 3 && shape[0] >= 3 && shape[1] >= 3 {
                rng.range(0, 1)
            } else {
                1
            } * (k / 2);
            let cout = rng.range(1, 24);
            src += &format!(
                "[[layer]]\nname = \"{name}\"\nop = \"conv2d\"\nkernel = {k}\npadding = {pad}\nout_channels = {cout}\nbias = \"random\"\nrequant = {{ multiplier = 9, shift = 10 }}\n"
            );
            shape = [shape[0] + 2 * pad + 1 - k, shape[1] + 2 * pad + 1 - k, cout];
        }
        tensors.push((name, shape));
    }
    src
}

/// External-memory regions of an allocation: (what, first beat, end, first node that
/// needs it, last node that needs it); constants live for the whole program.
fn regions(g: &Graph, a: &Alloc) -> Vec<(String, u64, u64, i64, i64)> {
    let forever = g.nodes.len() as i64;
    let mut r = Vec::new();
    for (name, l) in &a.tensors {
        let born = g
            .nodes
            .iter()
            .position(|n| &n.name == name)
            .map_or(-1, |i| i as i64);
        let dies = if g.is_output(name) {
            forever
        } else {
            g.last_use(name).map_or(born, |u| u as i64)
        };
        r.push((
            format!("tensor {name}"),
            l.base,
            l.base + l.size_beats(),
            born,
            dies,
        ));
    }
    let rows = |n: u64| n * a.weight_beats;
    r.push((
        "identity".into(),
        a.identity,
        a.identity + rows(u64::from(g.unit.cpf)),
        -1,
        forever,
    ));
    for ((node, oct), (base, taps)) in &a.weights {
        let end = base + rows(taps.len() as u64 * a.weight_tile_rows);
        r.push((format!("weights {node}/{oct}"), *base, end, -1, forever));
    }
    for ((node, oct), base) in &a.bias {
        r.push((
            format!("bias {node}/{oct}"),
            *base,
            base + a.acc_beats,
            -1,
            forever,
        ));
    }
    r
}

/// Over random chains: regions needed at the same time never overlap, every region lies
/// below `end`, and a tensor with a zero border gets memory no one wrote before (its border
/// must read as zero).
#[test]
fn live_regions_never_overlap() {
    let mut reused = 0;
    for seed in 0..200 {
        let mut rng = Rng::new(seed);
        let t = rng.pick(&[4u32, 8]);
        let d = design(t, ROOMY);
        let src = random_chain(&mut rng);
        let m = model(&src);
        let c = through(&d, &m, "allocate").unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
        let (g, a) = (c.graph(), c.alloc());
        let rs = regions(g, a);
        for (i, x) in rs.iter().enumerate() {
            assert!(
                x.1 <= x.2 && x.2 <= a.end,
                "seed {seed}: {x:?} beyond end {}",
                a.end
            );
            for y in &rs[i + 1..] {
                let live_together = x.3 <= y.4 && y.3 <= x.4;
                let overlap = x.1 < y.2 && y.1 < x.2 && x.1 < x.2 && y.1 < y.2;
                if overlap {
                    reused += 1;
                }
                assert!(
                    !(live_together && overlap),
                    "seed {seed}: {x:?} and {y:?} overlap while both are needed\n{src}"
                );
            }
        }
        // No tensor keeps a border: loads write padding as zero rows.
        for (name, l) in &a.tensors {
            assert_eq!(l.pad, 0, "seed {seed}: {name} has a border");
        }
    }
    assert!(
        reused > 20,
        "dead tensors' memory was reused only {reused} times"
    );
}

/// In a chain of four 1x1 convolutions of one shape, the third output reuses the input's
/// memory (dead after the first layer) and the fourth reuses the first output's.
#[test]
fn dead_tensors_memory_is_reused() {
    let mut src = String::from("name = \"chain\"\n[input]\nshape = [4, 4, 8]\n");
    for name in ["a", "b", "c", "d"] {
        src += &format!(
            "[[layer]]\nname = \"{name}\"\nop = \"conv2d\"\nkernel = 1\nout_channels = 8\n"
        );
    }
    let d = design(8, ROOMY);
    let m = model(&src);
    let c = through(&d, &m, "allocate").unwrap();
    let base = |n: &str| c.alloc().tensors[n].base;
    // Node b runs after a, the input's last reader: b takes the input's place.
    assert_eq!(base("b"), base("input"));
    assert_eq!(base("c"), base("a"));
    assert_eq!(base("d"), base("b"));
}
