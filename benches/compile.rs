//! Benchmark: time to compile a whole network (load the model, every compiler pass, the
//! checked program; not the golden model or the output files), with the time of each pass,
//! and to compute the golden model's output. Run with `cargo bench --bench compile`
//! (optionally followed by `config.toml model.toml` pairs); default: ResNet-18 and ResNet-50
//! on 16x16_int8.

use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let args: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .collect();
    let pairs: Vec<(PathBuf, PathBuf)> = if args.len() >= 2 {
        args.chunks(2)
            .filter(|c| c.len() == 2)
            .map(|c| (c[0].clone(), c[1].clone()))
            .collect()
    } else {
        ["resnet18", "resnet50"]
            .iter()
            .map(|m| {
                (
                    PathBuf::from("configs/16x16_int8.toml"),
                    PathBuf::from(format!("models/{m}.toml")),
                )
            })
            .collect()
    };
    println!(
        "{:<28} {:<22} {:>12} {:>10} {:>10}",
        "model", "config", "instructions", "compile", "golden"
    );
    for (config, model) in pairs {
        let design = hwgen::config::load(&config).expect("config is valid");
        let t = Instant::now();
        let m = hwgen::model::load(&model).expect("model is valid");
        // The pipeline's two halves, to see where the time goes: the layer graph (legalize
        // and fuse, whose strategy compiles candidate groups) and the rest.
        let mut passes = Vec::new();
        let g = hwgen::compiler::pipeline::graph(&design, &m).expect("model compiles");
        passes.push(format!("graph {:.2}s", t.elapsed().as_secs_f64()));
        let rest = Instant::now();
        let program = hwgen::compiler::pipeline::compile_graph(
            &design,
            &m,
            g,
            &hwgen::compiler::passes::frames::branch_frames(&design, 0, 1),
        )
        .expect("model compiles");
        passes.push(format!("rest {:.2}s", rest.elapsed().as_secs_f64()));
        let compile = t.elapsed();
        let t = Instant::now();
        let expected = hwgen::verify::expected(&design, &m, &program);
        let golden = t.elapsed();
        std::hint::black_box(expected);
        println!(
            "{:<28} {:<22} {:>12} {:>9.2}s {:>9.2}s",
            model.display(),
            config.file_stem().unwrap_or_default().to_string_lossy(),
            program.programs().iter().map(|p| p.len()).sum::<usize>(),
            compile.as_secs_f64(),
            golden.as_secs_f64()
        );
        if !passes.is_empty() {
            println!("  passes: {}", passes.join(", "));
        }
    }
}
