//! `hwgen dse`: the search never returns a design over a budget, is deterministic per
//! seed, finds the optimum a brute-force enumeration of a small space finds, and writes a
//! parameter file that `hwgen emit` accepts and that compiles to the estimate it reports.

use hwgen::design::Design;
use hwgen::dse::{self, Budget, Explorer, Options, Point, Scored, Space};
use hwgen::model::Model;
use std::path::Path;
use std::process::Command;

const SMALL_CONFIG: &str = "configs/codec_avatar_small.toml";
const SMALL_MODEL: &str = "models/codec_avatar/decoder_small.toml";

/// A one-branch template for the four-convolution chain (the decoder's vector unit, which
/// the resource model is fitted on).
const CHAIN_CONFIG: &str = r#"name = "chain"
[datatype]
input = "int8"
weight = "int8"
accumulator = "int32"
output = "int8"
[buffers]
input_depth = 256
weight_depth = 256
accumulator_depth = 128
output_depth = 128
[memory]
data_width_bits = 64
latency_cycles = 16
[vector]
ops = ["requantize", "bias", "relu", "leaky_relu"]
[[branch]]
name = "trunk"
[[branch.unit]]
name = "a"
cpf = 8
kpf = 8
"#;

fn load(config_src: &str, config_file: &str, model: &str) -> (Design, String, Model) {
    let d = hwgen::config::parse_str(config_src, config_file, "t").expect("template");
    let m = hwgen::model::load(Path::new(model)).expect("model");
    (d, config_src.to_string(), m)
}

fn small() -> (Design, String, Model) {
    let src = std::fs::read_to_string(SMALL_CONFIG).unwrap();
    load(&src, SMALL_CONFIG, SMALL_MODEL)
}

fn options(budget: Budget, space: Space, seed: u64) -> Options {
    Options {
        budget,
        clock_mhz: 200,
        space,
        seed,
        iterations: 12,
        runner_ups: 4,
        threads: 2,
    }
}

/// A budget of `dsps` DSPs and `bram18` BRAM18 at 6.4 GB/s, LUTs and flip-flops
/// unbudgeted.
fn budget_of(dsps: u64, bram18: u64) -> Budget {
    Budget {
        dsps,
        bram18,
        bandwidth_gbs: 6.4,
        luts: None,
        ffs: None,
    }
}

fn search(t: &(Design, String, Model), o: Options) -> (dse::Outcome, Explorer<'_>) {
    let mut ex = Explorer::new(&t.0, &t.1, "t.toml", &t.2, o).expect("explorer");
    let out = dse::search(&mut ex, &mut |_, _| {}).expect("search");
    (out, ex)
}

/// Every point of `space` for `branches` branches: per branch, every sequence of 1 to
/// `max_units` units of every size and replica count.
fn every_point(space: &Space, branches: usize) -> Vec<Point> {
    let unit: Vec<(u32, u32)> = space
        .sizes
        .iter()
        .flat_map(|&s| (1..=space.max_h).map(move |h| (s, h)))
        .collect();
    let mut per_branch: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut frontier: Vec<Vec<(u32, u32)>> = vec![Vec::new()];
    for _ in 0..space.max_units {
        frontier = frontier
            .iter()
            .flat_map(|v| {
                unit.iter().map(move |&u| {
                    let mut w = v.clone();
                    w.push(u);
                    w
                })
            })
            .collect();
        per_branch.extend(frontier.iter().cloned());
    }
    let mut points = vec![Vec::new()];
    for _ in 0..branches {
        points = points
            .iter()
            .flat_map(|p: &Vec<Vec<(u32, u32)>>| {
                per_branch.iter().map(move |b| {
                    let mut q = p.clone();
                    q.push(b.clone());
                    q
                })
            })
            .collect();
    }
    points.into_iter().map(Point).collect()
}

/// What the search optimises: the round (frames per second), then DSPs, then BRAM.
fn key(s: &Scored) -> (u64, u64, u64) {
    (s.cycles_per_round, s.dsps, s.bram18)
}

/// Brute force over every point of three small spaces (84, 64 and 74,088 points), at
/// several budgets and two seeds: the search's best equals the best point within the
/// budget. The estimate and the resource model are the search's own; what is checked is
/// that the search finds their optimum. (Before two-step growth, a stage that pays off
/// only with its second replica was missed here.)
#[test]
fn finds_the_brute_force_optimum_on_small_spaces() {
    let chain = load(CHAIN_CONFIG, "chain.toml", "models/bench/chain4_int8.toml");
    let sm = small();
    let space = |max_h, max_units| Space {
        sizes: vec![8, 16],
        max_h,
        max_units,
    };
    let cases = [
        (&chain, space(2, 3), vec![170, 250, 350, 600, 910, 1200]),
        (&sm, space(2, 1), vec![250, 400, 700, 1200]),
        (&sm, space(3, 2), vec![400, 900, 1300]),
    ];
    for (t, space, dsps) in cases {
        let all = budget_of(u64::MAX, u64::MAX);
        let mut ex =
            Explorer::new(&t.0, &t.1, "t.toml", &t.2, options(all, space.clone(), 1)).unwrap();
        let points = every_point(&space, t.0.branches.len());
        let scored: Vec<Scored> = points.iter().filter_map(|p| ex.evaluate(p)).collect();
        assert!(
            scored.len() > points.len() / 2,
            "{} of {} points estimated",
            scored.len(),
            points.len()
        );
        for &d in &dsps {
            let best = scored.iter().filter(|s| s.dsps <= d).min_by_key(|s| key(s));
            let best = best.expect("a point within budget");
            for seed in [1, 7] {
                let budget = budget_of(d, 10_000);
                let (out, _) = search(t, options(budget, space.clone(), seed));
                assert_eq!(
                    key(&out.best),
                    key(best),
                    "budget {d}, seed {seed}: search {} vs brute force {}",
                    out.best.label,
                    best.label
                );
            }
        }
    }
}

/// The best design and every runner-up are within each budget (DSPs, BRAM18, LUTs when
/// given), by the resource model's count of the parameter file written (read back as
/// `hwgen emit` reads it), and the memory ports stay within the bandwidth.
#[test]
fn never_over_a_budget() {
    let t = small();
    let space = Space {
        sizes: vec![8, 16],
        max_h: 3,
        max_units: 2,
    };
    for (dsps, bram, bw, luts) in [
        (250, 1000, 6.4, None),
        (600, 120, 3.2, None),
        (1000, 300, 12.8, None),
        (2000, 2000, 1.0, None),
        (2000, 2000, 6.4, Some(150_000)),
    ] {
        let budget = Budget {
            dsps,
            bram18: bram,
            bandwidth_gbs: bw,
            luts,
            ffs: None,
        };
        let (out, ex) = search(&t, options(budget, space.clone(), 3));
        for s in std::iter::once(&out.best).chain(&out.runner_ups) {
            let text = ex.config_toml(&s.point, "", None).unwrap();
            let d = hwgen::config::parse_str(&text, "out.toml", "out").unwrap();
            let r = hwgen::synth::model::design(&d).unwrap();
            assert!(
                r.dsps.ceil() as u64 <= dsps
                    && r.bram18.ceil() as u64 <= bram
                    && luts.is_none_or(|l| r.luts <= l as f64),
                "{}: {r:?} over {budget:?}",
                s.label
            );
            let bytes = f64::from(d.memory.ports * d.memory.bytes_per_cycle) * 200e6;
            assert!(
                bytes <= bw * 1e9 + 1.0,
                "{}: {} ports of {} bytes over {bw} GB/s",
                s.label,
                d.memory.ports,
                d.memory.bytes_per_cycle
            );
        }
    }
}

#[test]
fn deterministic_for_a_seed() {
    let t = small();
    let space = Space {
        sizes: vec![8, 16],
        max_h: 4,
        max_units: 3,
    };
    let budget = budget_of(900, 1000);
    let run = |seed, threads| {
        let o = Options {
            threads,
            ..options(budget, space.clone(), seed)
        };
        let (o, _) = search(&t, o);
        let points: Vec<Point> = std::iter::once(&o.best)
            .chain(&o.runner_ups)
            .map(|s| s.point.clone())
            .collect();
        let counts = (o.estimated, o.stages_scheduled, o.stages_reused);
        (points, counts, o.best.cycles_per_round)
    };
    assert_eq!(run(5, 2), run(5, 2));
    assert_eq!(run(9, 2), run(9, 2));
    // The stages of a step's candidates scheduled on two threads or in turn: the same
    // search, the same stages scheduled once each.
    assert_eq!(run(5, 1), run(5, 2));
}

/// Memory widths searched at once, each on a thread of its own, or one after another: the
/// same best, runner-ups and counts, and the best is the better of each width searched
/// alone.
#[test]
fn widths_at_once_or_in_turn() {
    let t = small();
    let space = Space {
        sizes: vec![8, 16],
        max_h: 3,
        max_units: 3,
    };
    let budget = budget_of(700, 600);
    let run = |threads, widths: &[u32]| {
        let o = Options {
            threads,
            iterations: 6,
            ..options(budget, space.clone(), 3)
        };
        let (o, _) = dse::search_widths(&t.0, &t.1, "t.toml", &t.2, &o, widths, &mut |_, _| {})
            .expect("search");
        let points: Vec<(u32, Point)> = std::iter::once(&o.best)
            .chain(&o.runner_ups)
            .map(|s| (s.memory_width_bits, s.point.clone()))
            .collect();
        (
            points,
            (o.estimated, o.stages_scheduled),
            o.best.cycles_per_round,
        )
    };
    let both = run(2, &[32, 64]);
    assert_eq!(both, run(1, &[32, 64]));
    let alone = [run(1, &[32]).2, run(1, &[64]).2];
    assert_eq!(both.2, alone.into_iter().min().unwrap());
}

fn hwgen(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hwgen"))
        .args(args)
        .output()
        .unwrap()
}

/// The file written is a design `hwgen emit` accepts, and `compile --estimate` on it
/// reports the round the search reported.
#[test]
fn writes_the_design_it_reports() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chosen.toml");
    let o = out.to_str().unwrap();
    let r = hwgen(&[
        "dse",
        "--model",
        SMALL_MODEL,
        "--config",
        SMALL_CONFIG,
        "--budget",
        "dsp=700,bram=600,bw=6.4",
        "--clock-mhz",
        "200",
        "--batch",
        "1,2,2",
        "--sizes",
        "8,16",
        "--widths",
        "32,64",
        "--iterations",
        "6",
        "--json",
        "-o",
        o,
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let best = &v["outcome"]["best"];
    assert!(best["dsps"].as_u64().unwrap() <= 700);
    let e = hwgen(&[
        "compile",
        "--config",
        o,
        "--model",
        SMALL_MODEL,
        "--estimate",
        "--json",
    ]);
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    let est: serde_json::Value = serde_json::from_slice(&e.stdout).unwrap();
    // The search ranks by the bound; the estimate also runs every engine's timeline.
    assert_eq!(est["bound_cycles_per_round"], best["cycles_per_round"]);
    // And it reports the chosen design's round on that timeline, as compile --estimate does.
    assert_eq!(v["timeline"]["cycles_per_round"], est["cycles_per_round"]);
    assert_eq!(v["timeline"]["one_round_cycles"], est["one_round_cycles"]);
    assert_eq!(est["branch_frames"], serde_json::json!([1, 2, 2]));
    let d = hwgen::config::load(&out).unwrap();
    assert_eq!(d.name, "chosen", "named after the file written");
    assert_eq!(
        u64::from(d.memory.data_width_bits),
        best["memory_width_bits"].as_u64().unwrap()
    );
    let rtl = dir.path().join("rtl");
    let emit = hwgen(&["emit", "--config", o, "--out", rtl.to_str().unwrap()]);
    assert!(
        emit.status.success(),
        "{}",
        String::from_utf8_lossy(&emit.stderr)
    );
}

/// Bad requests are refused with what is wrong and how to fix it, and write nothing.
#[test]
fn refuses_bad_requests() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.toml");
    let o = out.to_str().unwrap();
    let base = [
        "dse",
        "--model",
        SMALL_MODEL,
        "--config",
        SMALL_CONFIG,
        "--clock-mhz",
        "200",
        "-o",
        o,
    ];
    let cases: [(&[&str], &str); 9] = [
        (&["--device", "XC7VX690T", "--budget", "bw=6.4"], "error: --device XC7VX690T\n  rule: hwgen does not know this part; it knows Z7045 (XC7Z045), ZU17EG (XCZU17EG), ZU9CG (XCZU9CG)"),
        (&["--device", "z7045", "--budget", "dsp=1000,bw=6.4"], "dsp=1000: the Z7045 has 900; a budget for it can only narrow that"),
        (&["--device", "ZU9CG", "--budget", "dsp=700"], "bw= is missing; give bw=GB/s, the board's external memory"),
        // The part's LUTs are in force: a ZU9CG narrowed to 20,000 LUTs cannot hold the
        // smallest design, and the refusal says which resource ran out.
        (&["--device", "XCZU9CG", "--budget", "lut=20000,bw=6.4"], "is over the budget ("),
        (&["--budget", "dsp=700,bram=600,bw=6.4", "--batch", "1,2"], "error: --batch\n  rule: 2 values for 3 branches (geometry, texture, warp)"),
        (&["--budget", "dsp=100,bram=600,bw=6.4"], "the smallest design (geometry [8x8 h1], texture [8x8 h1], warp [8x8 h1]) is over the budget (243 DSPs > 100)"),
        (&["--budget", "dsp=700,bram=600"], "bw= is missing"),
        (&["--budget", "dsp=700,bram=600,bw=0.0001"], "bytes per cycle at 200 MHz; the memory needs at least 1"),
        (&["--budget", "dsp=700,bram=600,bw=6.4", "--sizes", "0,8"], "error: --sizes 0,8\n  rule: 0 is not an array size"),
    ];
    for (extra, says) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let r = hwgen(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            !r.status.success() && err.contains(says),
            "{extra:?}: {err}"
        );
        assert!(!out.exists());
    }
    let r = hwgen(&[
        "dse",
        "--model",
        SMALL_MODEL,
        "--config",
        "configs/16x16_int8.toml",
        "--clock-mhz",
        "200",
        "--budget",
        "dsp=700,bram=600,bw=6.4",
        "-o",
        o,
    ]);
    assert!(String::from_utf8_lossy(&r.stderr).contains("has no [[branch]] tables"));
}

/// The memo reuses a stage's estimate only where it is the same: over every point of a
/// space with three array sizes (so the graph's widest unit, always named u1, changes
/// shape), the estimate through one shared memo equals a fresh `compile --estimate`.
#[test]
fn the_memo_gives_the_fresh_estimate() {
    let t = small();
    let space = Space {
        sizes: vec![8, 16, 32],
        max_h: 2,
        max_units: 1,
    };
    let all = budget_of(u64::MAX, u64::MAX);
    let mut ex = Explorer::new(&t.0, &t.1, "t.toml", &t.2, options(all, space.clone(), 1)).unwrap();
    let mut checked = 0;
    for p in every_point(&space, t.0.branches.len()) {
        let Some(s) = ex.evaluate(&p) else { continue };
        let d = ex.design(&p).unwrap();
        let fresh = hwgen::compiler::estimate(&d, &t.2).unwrap();
        assert_eq!(
            s.cycles_per_round, fresh.bound_cycles_per_round,
            "{}",
            s.label
        );
        checked += 1;
    }
    assert!(checked > 100, "{checked} points");
}
