//! insta snapshots of the complete output (RTL, file list, manifest) of every shipped
//! config. Review changes with `cargo insta review`; CI never writes snapshots.

#[test]
fn emitted_rtl() {
    insta::glob!("../configs", "*.toml", |path| {
        let name = path.file_name().unwrap().to_string_lossy();
        let rel = std::path::Path::new("configs").join(&*name);
        let design = hwgen::config::load(&rel).unwrap_or_else(|e| panic!("{e}"));
        let files = hwgen::rtl::emit(&design);
        let mut all = String::new();
        for (path, text) in files.iter() {
            all.push_str(&format!("==== {path} ====\n{text}"));
        }
        insta::assert_snapshot!(all);
    });
}

#[test]
fn emit_is_repeatable() {
    let design =
        hwgen::config::load(std::path::Path::new("configs/elastic_3unit_int8.toml")).unwrap();
    let a: Vec<(String, String)> = hwgen::rtl::emit(&design)
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    let b: Vec<(String, String)> = hwgen::rtl::emit(&design)
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    assert_eq!(a, b);
}
