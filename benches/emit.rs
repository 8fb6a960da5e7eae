//! Benchmark: time to validate a parameter file and emit its RTL in memory.
//! Run with `cargo bench --bench emit` (optionally followed by config paths).

use std::path::PathBuf;
use std::time::{Duration, Instant};

fn main() {
    let mut configs: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .collect();
    if configs.is_empty() {
        configs = ["8x8_int8", "32x32_int8", "64x64_int8", "elastic_3unit_int8"]
            .iter()
            .map(|c| PathBuf::from(format!("configs/{c}.toml")))
            .collect();
    }
    println!(
        "{:<36} {:>6} {:>12} {:>12} {:>10}",
        "config", "runs", "median", "min", "bytes"
    );
    for config in configs {
        let mut times: Vec<Duration> = Vec::new();
        let mut bytes = 0;
        let runs = 30;
        for _ in 0..runs {
            let t = Instant::now();
            let design = hwgen::config::load(&config).expect("config is valid");
            let files = hwgen::rtl::emit(&design);
            times.push(t.elapsed());
            bytes = files.iter().map(|(_, s)| s.len()).sum::<usize>();
        }
        times.sort();
        println!(
            "{:<36} {:>6} {:>12.3?} {:>12.3?} {:>10}",
            config.display(),
            runs,
            times[runs / 2],
            times[0],
            bytes
        );
    }
}
