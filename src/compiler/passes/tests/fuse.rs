use super::*;
use crate::compiler::passes::fuse::{self, candidates, choose, Candidate, RULES};
use crate::compiler::passes::legalize;

/// The config with a window unit, as shipped.
fn windowed() -> Design {
    crate::config::load(std::path::Path::new("configs/8x8_int8.toml")).expect("shipped config")
}

/// Compile and interpret; the output must equal the golden model's.
fn bit_exact(design: &Design, m: &Model) -> crate::compiler::Program {
    let p = crate::compiler::compile(design, m).unwrap_or_else(|e| panic!("{e}"));
    assert_golden(design, m, &p, &m.name);
    p
}

/// The rules' names of the candidates, with their layers' names.
fn named(g: &legalize::Graph, cands: &[Candidate]) -> Vec<(String, Vec<String>)> {
    let rules: Vec<_> = RULES.iter().collect();
    cands
        .iter()
        .map(|c| {
            let layers = c.nodes.iter().map(|&i| g.nodes[i].name.clone()).collect();
            (rules[c.rule].name.to_string(), layers)
        })
        .collect()
}

/// A MobileNetV2-like block whose add reads the depthwise convolution: `wide` (the
/// residual operand), then expand, depthwise, add.
const BLOCK: &str = r#"
seed = 5
[input]
shape = [6, 6, 8]
[[layer]]
name = "wide"
op = "conv2d"
kernel = 1
out_channels = 16
requant = { multiplier = 80, shift = 12 }
[[layer]]
name = "expand"
op = "conv2d"
input = "input"
kernel = 1
out_channels = 16
bias = "random"
activation = "relu"
requant = { multiplier = 90, shift = 12 }
[[layer]]
name = "dw"
op = "conv2d"
kernel = 3
padding = 1
groups = 16
out_channels = 16
bias = "random"
requant = { multiplier = 100, shift = 10 }
[[layer]]
name = "sum"
op = "add"
residual = "wide"
"#;

/// The patterns match where the layer graph has them: an expand, its depthwise
/// convolution and the add reading it match three rules that overlap, and nothing else
/// matches (the add's residual operand is not a pattern edge).
#[test]
fn patterns_match_overlapping_groups() {
    let d = windowed();
    let m = model(BLOCK);
    let g = legalize::run(&d, &m).expect("legal");
    let rules: Vec<_> = RULES.iter().collect();
    let found = named(&g, &candidates(&g, &rules));
    let want: Vec<(String, Vec<String>)> = [
        ("expand+depthwise", vec!["expand", "dw"]),
        ("expand+depthwise+add", vec!["expand", "dw", "sum"]),
        ("conv+add", vec!["dw", "sum"]),
    ]
    .iter()
    .map(|(r, l)| (r.to_string(), l.iter().map(|s| s.to_string()).collect()))
    .collect();
    assert_eq!(found, want);
    // The strategy takes one cover, and the program is bit-exact.
    let p = bit_exact(&d, &m);
    assert!(!p.fused.is_empty(), "nothing fused");
    let covered: Vec<&String> = p.fused.iter().flat_map(|f| &f.layers).collect();
    let mut unique = covered.clone();
    unique.dedup();
    assert_eq!(covered, unique, "overlapping groups chosen: {:?}", p.fused);
    for f in &p.fused {
        assert!(
            f.estimated_cycles <= f.estimated_cycles_apart,
            "{f:?} is slower fused"
        );
    }
}

/// A layer whose output two layers read is not fused into either, and an add with a
/// requantization other than the identity is not folded.
#[test]
fn guards_refuse_what_the_hardware_cannot_fuse() {
    let d = windowed();
    let src = r#"
seed = 2
[input]
shape = [5, 5, 8]
[[layer]]
name = "a"
op = "conv2d"
kernel = 3
padding = 1
out_channels = 8
requant = { multiplier = 90, shift = 12 }
[[layer]]
name = "b"
op = "add"
residual = "input"
[[layer]]
name = "c"
op = "conv2d"
input = "a"
kernel = 1
out_channels = 8
requant = { multiplier = 90, shift = 12 }
[[layer]]
name = "d"
op = "add"
residual = "b"
requant = { multiplier = 3, shift = 1 }
"#;
    let m = model(src);
    let g = legalize::run(&d, &m).expect("legal");
    let rules: Vec<_> = RULES.iter().collect();
    assert_eq!(named(&g, &candidates(&g, &rules)), vec![]);
    let p = bit_exact(&d, &m);
    assert!(p.fused.is_empty(), "{:?}", p.fused);
}

/// Brute force: the cheapest set of non-overlapping candidates, with every layer outside
/// them costing its own.
fn brute(n: usize, cands: &[Candidate], single: &[u64], group: &[u64]) -> u64 {
    let mut best = u64::MAX;
    for mask in 0u32..1 << cands.len() {
        let mut used = vec![false; n];
        let mut total = 0;
        let mut ok = true;
        for (k, c) in cands.iter().enumerate().filter(|(k, _)| mask >> k & 1 == 1) {
            for &i in &c.nodes {
                ok &= !std::mem::replace(&mut used[i], true);
            }
            total += group[k];
        }
        if ok {
            total += (0..n).filter(|&i| !used[i]).map(|i| single[i]).sum::<u64>();
            best = best.min(total);
        }
    }
    best
}

/// The shortest path finds the cheapest cover: over random layer counts, overlapping
/// candidate groups and costs, the chosen groups never overlap and cost what an
/// enumeration of every non-overlapping subset finds cheapest.
#[test]
fn strategy_is_the_cheapest_cover() {
    let mut rng = Rng::new(11);
    for case in 0..300 {
        let n = rng.range(1, 9);
        let mut cands = Vec::new();
        for _ in 0..rng.range(0, 8) {
            let len = rng.range(2, 3).min(n);
            if len < 2 {
                break;
            }
            let start = rng.range(0, n - len);
            let c = Candidate {
                rule: rng.range(0, 3),
                nodes: (start..start + len).collect(),
            };
            if !cands.contains(&c) {
                cands.push(c);
            }
        }
        cands.sort_by_key(|c| c.nodes[0]);
        let single: Vec<u64> = (0..n).map(|_| rng.range(1, 100) as u64).collect();
        let group: Vec<u64> = (0..cands.len()).map(|_| rng.range(1, 250) as u64).collect();
        let chosen = choose(n, &cands, |nodes, rule| {
            Some(match rule {
                None => single[nodes[0]],
                Some(r) => {
                    let k = cands.iter().position(|c| c.nodes == nodes && c.rule == r);
                    group[k.expect("a candidate")]
                }
            })
        });
        let touched = |i: usize| cands.iter().any(|c| c.nodes.contains(&i));
        let mut used = vec![false; n];
        let mut total: u64 = 0;
        for (c, fused, _) in &chosen {
            for &i in &c.nodes {
                assert!(
                    !std::mem::replace(&mut used[i], true),
                    "case {case}: overlap"
                );
            }
            total += fused;
        }
        total += (0..n)
            .filter(|&i| !used[i] && touched(i))
            .map(|i| single[i])
            .sum::<u64>();
        let untouched: u64 = (0..n).filter(|&i| !touched(i)).map(|i| single[i]).sum();
        assert_eq!(
            total + untouched,
            brute(n, &cands, &single, &group),
            "case {case}: {cands:?} {single:?} {group:?}"
        );
    }
}

/// A group the estimate says is slower than its layers apart is not fused.
#[test]
fn strategy_keeps_layers_apart_when_fusing_costs_more() {
    let cands = vec![Candidate {
        rule: 0,
        nodes: vec![0, 1],
    }];
    let cost = |fused: u64| {
        move |_: &[usize], rule: Option<usize>| Some(if rule.is_some() { fused } else { 10 })
    };
    assert!(choose(2, &cands, cost(21)).is_empty());
    assert_eq!(choose(2, &cands, cost(19)).len(), 1);
    // A tie goes to the fused group (fewer layers).
    assert_eq!(choose(2, &cands, cost(20)).len(), 1);
    // A group that does not compile is never chosen.
    assert!(choose(2, &cands, |_, r| r.is_none().then_some(10)).is_empty());
}

/// The pass on a ResNet-style block: the second convolution takes the add, and the graph
/// has one node fewer; an elastic compile (no on-chip rules) never keeps a tensor on chip.
#[test]
fn pass_folds_the_residual_add() {
    let d = windowed();
    let src = r#"
seed = 9
[input]
shape = [6, 6, 16]
[[layer]]
name = "c1"
op = "conv2d"
kernel = 3
padding = 1
out_channels = 16
activation = "relu"
requant = { multiplier = 90, shift = 14 }
[[layer]]
name = "c2"
op = "conv2d"
kernel = 3
padding = 1
out_channels = 16
requant = { multiplier = 90, shift = 14 }
[[layer]]
name = "sum"
op = "add"
residual = "input"
activation = "relu"
"#;
    let m = model(src);
    let g = fuse::run(legalize::run(&d, &m).expect("legal"), false, |sub| {
        crate::compiler::pipeline::cycles(&d, sub)
    })
    .expect("fuses");
    let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["c1", "sum"]);
    assert_eq!(g.nodes[1].residual.as_deref(), Some("input"));
    assert_eq!(g.fused.len(), 1);
    assert_eq!(g.fused[0].rule, "conv+add");
    assert_eq!(g.fused[0].layers, ["c2", "sum"]);
    assert!(g.nodes.iter().all(|n| !n.fused_into_next));
    bit_exact(&d, &m);
}

/// Every rule's rewrite alone keeps the program bit-exact: each candidate of the block
/// (expand+depthwise, expand+depthwise+add, conv+add) and of the pool model (conv+maxpool)
/// applied by itself, the rest of the passes run, the interpreter against the golden model.
#[test]
fn each_rule_alone_is_bit_exact() {
    let d = windowed();
    let pool = r#"
seed = 8
[input]
shape = [12, 12, 8]
[[layer]]
name = "c"
op = "conv2d"
kernel = 3
padding = 1
out_channels = 16
bias = "random"
requant = { multiplier = 90, shift = 14 }
[[layer]]
name = "p"
op = "maxpool"
kernel = 2
stride = 2
"#;
    let rules: Vec<_> = RULES.iter().collect();
    let mut seen = Vec::new();
    for src in [BLOCK, pool] {
        let m = model(src);
        let g0 = legalize::run(&d, &m).expect("legal");
        for c in candidates(&g0, &rules) {
            let mut g = g0.clone();
            (RULES[c.rule].apply)(&mut g, &c.nodes);
            g.rebuild_dag();
            let p = crate::compiler::pipeline::compile_graph(&d, &m, g, &[1])
                .unwrap_or_else(|e| panic!("{}: {e}", RULES[c.rule].name));
            assert_golden(&d, &m, &p, RULES[c.rule].name);
            seen.push(RULES[c.rule].name);
        }
    }
    seen.sort_unstable();
    assert_eq!(
        seen,
        [
            "conv+add",
            "conv+maxpool",
            "expand+depthwise",
            "expand+depthwise+add"
        ]
    );
}
