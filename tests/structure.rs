//! The shape of the code, checked: the layer table in `src/lib.rs` holds (no module names a
//! module of its own tier or above), no source file reaches 800 lines, no function reaches
//! 150 lines, no template branches on the datatype family, and no code outside the
//! operators' own files names an operator.

mod common;

use common::repo;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The tiers of `src/lib.rs`'s table, parsed from the table itself so the documentation and
/// the check cannot drift apart.
fn tiers() -> BTreeMap<String, u32> {
    let lib = std::fs::read_to_string(repo().join("src/lib.rs")).unwrap();
    let mut tiers = BTreeMap::new();
    for line in lib.lines() {
        let Some(row) = line.strip_prefix("//! | ") else {
            continue;
        };
        let mut cells = row.split(" | ");
        let Ok(tier) = cells.next().unwrap_or("").trim().parse::<u32>() else {
            continue;
        };
        for module in cells.next().unwrap_or("").split(',') {
            tiers.insert(module.trim().trim_matches('`').to_string(), tier);
        }
    }
    assert!(
        tiers.len() >= 10,
        "could not read the layer table of src/lib.rs"
    );
    tiers
}

/// Every template, includes too (`templates/rtl/include/`).
fn template_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![repo().join("templates/rtl")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The top-level module a file under `src/` belongs to (`src/compiler/passes/tile.rs` ->
/// `compiler`), or `None` for the binary's files.
fn module_of(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(repo().join("src")).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    match first.as_str() {
        "main.rs" | "lib.rs" | "cmd" => None,
        f => Some(f.trim_end_matches(".rs").to_string()),
    }
}

/// The non-test code of a file without comments and string literals: test modules
/// (`tests.rs`, `tests/`) are skipped entirely, and a file is cut at its `#[cfg(test)]`. (Comments
/// may mention any module.)
fn production_code(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == "tests.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
            && path.starts_with(repo().join("src"))
    {
        return String::new();
    }
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines().map(code_only).collect::<Vec<_>>().join("\n")
}

/// The top-level modules a piece of code names through `crate::`, including grouped imports
/// (`use crate::{design::Design, isa};`).
fn crate_refs(code: &str) -> Vec<String> {
    let mut refs = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    refs.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            refs.push(name);
        }
    }
    refs
}

#[test]
fn no_module_uses_a_module_of_its_tier_or_above() {
    let tiers = tiers();
    let mut violations = Vec::new();
    for path in rust_files(&repo().join("src")) {
        let Some(module) = module_of(&path) else {
            continue;
        };
        let own = *tiers
            .get(&module)
            .unwrap_or_else(|| panic!("module `{module}` is missing from src/lib.rs's table"));
        for target in crate_refs(&production_code(&path)) {
            if target == module {
                continue;
            }
            match tiers.get(&target) {
                Some(&t) if t < own => {}
                Some(&t) => violations.push(format!(
                    "{}: `{module}` (tier {own}) uses `{target}` (tier {t})",
                    path.display()
                )),
                None => violations.push(format!(
                    "{}: `crate::{target}` is not in src/lib.rs's table",
                    path.display()
                )),
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn every_source_file_is_under_800_lines() {
    let long: Vec<String> = rust_files(&repo().join("src"))
        .into_iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(&p).unwrap().lines().count();
            (n >= 800).then(|| format!("{}: {n} lines", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// A line with string literals, character literals and `//` comments blanked out, so the
/// braces left are code.
fn code_only(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '/' if chars.peek() == Some(&'/') => break,
            '\'' => {
                // '{' or '\'' as a character literal; lifetimes ('a) pass through.
                let ahead: String = chars.clone().take(3).collect();
                if ahead.starts_with("\\") || ahead.chars().nth(1) == Some('\'') {
                    for n in chars.by_ref() {
                        if n == '\'' {
                            break;
                        }
                    }
                } else {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// (file, line, name, length in lines) of every function with a body.
fn functions(path: &Path) -> Vec<(usize, String, usize)> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<String> = text.lines().map(code_only).collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let Some(at) = trimmed.find("fn ") else {
            continue;
        };
        let prefix = &trimmed[..at];
        let is_decl = prefix.split_whitespace().all(|w| {
            matches!(w, "pub" | "const" | "unsafe" | "async" | "extern") || w.starts_with("pub(")
        });
        if !is_decl {
            continue;
        }
        let name: String = trimmed[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The body opens at the first '{' before any ';' (a ';' first is a declaration).
        let mut depth = 0i64;
        let mut opened = false;
        let mut end = None;
        'scan: for (j, l) in lines.iter().enumerate().skip(i) {
            for c in l.chars() {
                match c {
                    ';' if !opened && depth == 0 => break 'scan,
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => {
                        depth -= 1;
                        if opened && depth == 0 {
                            end = Some(j);
                            break 'scan;
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(end) = end {
            found.push((i + 1, name, end - i + 1));
        }
    }
    found
}

#[test]
fn every_function_is_under_150_lines() {
    let mut long = Vec::new();
    for path in rust_files(&repo().join("src")) {
        for (line, name, len) in functions(&path) {
            if len >= 150 {
                long.push(format!(
                    "{}:{line}: fn {name} is {len} lines",
                    path.display()
                ));
            }
        }
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// The `Op` variants of the operator registry (`operators!` in src/model/op/mod.rs).
fn registered_operators() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("src/model/op/mod.rs")).unwrap();
    let start = text.find("\noperators! {").expect("the registry");
    let end = start + text[start..].find("\n}").expect("the registry's end");
    text[start..end]
        .lines()
        .skip(1)
        .filter_map(|l| l.trim().split_once('(').map(|(v, _)| v.trim().to_string()))
        .filter(|v| !v.is_empty())
        .collect()
}

/// Operators are defined once: outside `src/model/op/` (each operator's file and the
/// registry) no production code names an `Op` variant. The passes see an operator only as
/// the work it lowers to (`model::lower`), the golden model and the parser through the
/// `Operator` interface.
#[test]
fn operators_are_named_only_in_their_own_files() {
    let ops = registered_operators();
    assert!(ops.len() >= 6, "could not read the registry: {ops:?}");
    let mut found = Vec::new();
    for path in rust_files(&repo().join("src")) {
        if path.starts_with(repo().join("src/model/op")) {
            continue;
        }
        let code = production_code(&path);
        for op in &ops {
            for pattern in [
                format!("Op::{op}("),
                format!("Op::{op} "),
                format!("Op::{op}{{"),
            ] {
                // (The ONNX importer's own `PendingOp` is not the model's `Op`.)
                let hits = code.match_indices(&pattern).filter(|(i, _)| {
                    !code[..*i].ends_with("Pending") && !code[..*i].ends_with("Isa")
                });
                if hits.count() > 0 {
                    found.push(format!("{}: names {pattern}", path.display()));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_function_finder_sees_functions() {
    // A guard on the check above: it must find this file's own functions with their lengths.
    let fns = functions(&repo().join("tests/structure.rs"));
    let tiers_fn = fns
        .iter()
        .find(|(_, n, _)| n == "tiers")
        .expect("finds fn tiers");
    assert!(tiers_fn.2 > 10 && tiers_fn.2 < 30, "{tiers_fn:?}");
    assert!(fns.len() >= 10);
}

/// Words that name a datatype family or a datatype-specific feature; a template `if` on one
/// of them is datatype logic that belongs in a leaf module chosen in Rust.
const FAMILY_WORDS: &[&str] = &[
    "mx",
    "fp",
    "float",
    "posit",
    "multi",
    "int",
    "family",
    "prec",
    "scaled",
    "mini",
    "bf16",
    "fp8",
    "datatype",
    "precision",
];

#[test]
fn no_template_branches_on_the_datatype() {
    let mut found = Vec::new();
    for path in template_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(i) = rest.find("{%") {
                let end = rest[i..].find("%}").map_or(rest.len(), |e| i + e);
                let tag = rest[i + 2..end].trim_start_matches('-').trim();
                if let Some(cond) = tag
                    .strip_prefix("if ")
                    .or_else(|| tag.strip_prefix("elif "))
                {
                    let words = cond
                        .split(|c: char| !c.is_alphanumeric())
                        .filter(|w| !w.is_empty())
                        .map(str::to_lowercase);
                    for w in words {
                        if FAMILY_WORDS.contains(&w.as_str()) {
                            found.push(format!("{}:{}: {{% {tag} %}}", path.display(), n + 1));
                        }
                    }
                }
                rest = &rest[end.min(rest.len())..];
                if rest.starts_with("%}") {
                    rest = &rest[2..];
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// `x` with Verilog sized literals (`8'd0`, `1'b1`, `32'h7fc0_0000`) removed.
fn without_literals(x: &str) -> String {
    let mut out = String::new();
    let mut chars = x.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' && chars.peek().is_some_and(|n| "bdhoBDHO".contains(*n)) {
            chars.next();
            while chars
                .peek()
                .is_some_and(|n| n.is_ascii_hexdigit() || "xXzZ_".contains(*n))
            {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The generated RTL's register blocks hold only reset values and `x_q <= x_d` (STYLE.md),
/// except the RAM idioms: a write into a memory array and a synchronous read from one.
#[test]
fn register_blocks_hold_only_q_from_d() {
    let mut found = Vec::new();
    for path in template_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut depth = 0i32;
        let mut in_block = false;
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split("//").next().unwrap_or("").trim();
            if line.starts_with("always @(posedge") {
                in_block = true;
                depth = 0;
            }
            if !in_block {
                continue;
            }
            let words: Vec<&str> = line
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .collect();
            depth += words.iter().filter(|w| **w == "begin").count() as i32;
            depth -= words.iter().filter(|w| **w == "end").count() as i32;
            if let Some((lhs, rhs)) = line.split_once("<=") {
                let (lhs, rhs) = (lhs.trim(), rhs.trim().trim_end_matches(';').trim());
                let base = lhs.split('[').next().unwrap_or(lhs).trim();
                let q_from_d = base
                    .strip_suffix("_q")
                    .is_some_and(|stem| rhs == format!("{stem}_d"));
                let constant = !without_literals(rhs)
                    .chars()
                    .any(|c| c.is_ascii_lowercase());
                let ram = lhs.contains('[') || rhs.starts_with("mem[");
                if !(q_from_d || constant || ram) {
                    found.push(format!("{}:{}: {line}", path.display(), n + 1));
                }
            }
            if depth <= 0 && (line.ends_with("end") || line.ends_with(';')) {
                in_block = false;
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
