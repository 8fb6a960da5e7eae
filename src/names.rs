//! The one place that makes Verilog names: every generated identifier passes through here,
//! gets the `hwgen_` module prefix where it names a module, and is checked against the
//! reserved words of Verilog-2005 and SystemVerilog (tools often parse both).

pub const MODULE_PREFIX: &str = "hwgen_";

const RESERVED: &[&str] = &[
    "always",
    "and",
    "assign",
    "automatic",
    "begin",
    "buf",
    "bufif0",
    "bufif1",
    "case",
    "casex",
    "casez",
    "cell",
    "cmos",
    "config",
    "deassign",
    "default",
    "defparam",
    "design",
    "disable",
    "edge",
    "else",
    "end",
    "endcase",
    "endconfig",
    "endfunction",
    "endgenerate",
    "endmodule",
    "endprimitive",
    "endspecify",
    "endtable",
    "endtask",
    "event",
    "for",
    "force",
    "forever",
    "fork",
    "function",
    "generate",
    "genvar",
    "highz0",
    "highz1",
    "if",
    "ifnone",
    "incdir",
    "include",
    "initial",
    "inout",
    "input",
    "instance",
    "integer",
    "join",
    "large",
    "liblist",
    "library",
    "localparam",
    "macromodule",
    "medium",
    "module",
    "nand",
    "negedge",
    "nmos",
    "nor",
    "noshowcancelled",
    "not",
    "notif0",
    "notif1",
    "or",
    "output",
    "parameter",
    "pmos",
    "posedge",
    "primitive",
    "pull0",
    "pull1",
    "pulldown",
    "pullup",
    "pulsestyle_ondetect",
    "pulsestyle_onevent",
    "rcmos",
    "real",
    "realtime",
    "reg",
    "release",
    "repeat",
    "rnmos",
    "rpmos",
    "rtran",
    "rtranif0",
    "rtranif1",
    "scalared",
    "showcancelled",
    "signed",
    "small",
    "specify",
    "specparam",
    "strong0",
    "strong1",
    "supply0",
    "supply1",
    "table",
    "task",
    "time",
    "tran",
    "tranif0",
    "tranif1",
    "tri",
    "tri0",
    "tri1",
    "triand",
    "trior",
    "trireg",
    "unsigned",
    "use",
    "uwire",
    "vectored",
    "wait",
    "wand",
    "weak0",
    "weak1",
    "while",
    "wire",
    "wor",
    "xnor",
    "xor", // SystemVerilog
    "logic",
    "bit",
    "byte",
    "int",
    "shortint",
    "longint",
    "struct",
    "union",
    "enum",
    "typedef",
    "class",
    "interface",
    "package",
    "import",
    "export",
    "program",
    "property",
    "sequence",
    "assert",
    "assume",
    "cover",
    "final",
    "unique",
    "priority",
    "return",
    "break",
    "continue",
    "void",
    "string",
    "const",
    "static",
    "virtual",
    "extern",
    "local",
    "protected",
    "rand",
    "randc",
    "new",
    "null",
    "this",
    "super",
    "type",
    "var",
    "ref",
    "chandle",
    "modport",
    "clocking",
    "covergroup",
    "bind",
    "constraint",
    "dist",
    "inside",
    "with",
    "foreach",
    "do",
    "alias",
    "matches",
    "tagged",
    "wildcard",
    "let",
    "global",
    "soft",
    "checker",
    "restrict",
];

/// `Ok` when `name` can stand in a Verilog identifier we generate: lower-case letters,
/// digits and underscores, starting with a letter, not a reserved word.
pub fn check_identifier(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_lowercase() => {}
        _ => return Err("must start with a lower-case letter".to_string()),
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        return Err("may hold only lower-case letters, digits and underscores".to_string());
    }
    if name.len() > 32 {
        return Err("must be at most 32 characters".to_string());
    }
    if RESERVED.contains(&name) {
        return Err(format!("is a Verilog reserved word ({name})"));
    }
    Ok(())
}

/// A design name from a file stem: lower-cased, other characters become underscores.
pub fn sanitize(stem: &str) -> String {
    let s: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "design".to_string()
    } else {
        s
    }
}

/// Module name for a generated module.
pub fn module(base: &str) -> String {
    let name = format!("{MODULE_PREFIX}{base}");
    debug_assert!(check_identifier(&name).is_ok(), "bad module name {name}");
    name
}

/// Instance name of engine `replica` of unit `unit` of branch `branch`, without the `u_`
/// (`instance` adds it).
pub fn core_instance(branch: &str, unit: &str, replica: u32) -> String {
    format!("{branch}_{unit}_r{replica}")
}

/// The instance in `hwgen_top` of the engine or link named `name` (`core_instance`,
/// `link`): what hierarchical paths (testbench, timeline) and synthesis reports look for.
pub fn instance(name: &str) -> String {
    format!("u_{name}")
}

/// Name of the stream link from one unit of a branch to the next, replica `replica`.
pub fn link(branch: &str, from: &str, to: &str, replica: u32) -> String {
    format!("link_{branch}_{from}_to_{to}_r{replica}")
}

/// The FIFO of a fork: replica r of `from` (a unit of branch `branch`) feeds the first unit
/// of branch `to`.
pub fn fork_link(branch: &str, from: &str, to: &str, replica: u32) -> String {
    format!("link_{branch}_{from}_to_branch_{to}_r{replica}")
}

/// The FIFO from replica `rf` of unit `from` (of branch `branch`) to replica `rt` of unit
/// `to`, between units of different `h`, where every replica of one feeds every replica of
/// the other (`to` is `branch_<name>` for the first unit of a forked branch).
pub fn cross_link(branch: &str, from: &str, rf: u32, to: &str, rt: u32) -> String {
    format!("link_{branch}_{from}_r{rf}_to_{to}_r{rt}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(check_identifier("stem").is_ok());
        assert!(check_identifier("b2_unit_3").is_ok());
        assert!(check_identifier("wire").is_err());
        assert!(check_identifier("logic").is_err());
        assert!(check_identifier("Stem").is_err());
        assert!(check_identifier("2x").is_err());
        assert!(check_identifier("a-b").is_err());
        assert_eq!(sanitize("32x32_int8"), "32x32_int8");
        assert_eq!(sanitize("My-Design"), "my_design");
        assert_eq!(module("pe"), "hwgen_pe");
    }
}
