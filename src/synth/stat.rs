//! Yosys' `stat` text: every module's own cells by type (a type that is a module of the
//! design is an instance of it), and from those the instance tree.
//!
//! The text form is read rather than `stat -json`, whose output in Yosys 0.23 has the
//! design hierarchy printed into the middle of the JSON.

use std::collections::BTreeMap;

/// Cell type -> count.
pub type Cells = BTreeMap<String, u64>;

/// Every module's own cells (leaf cells and instances of other modules).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hierarchy {
    pub modules: BTreeMap<String, Cells>,
    /// The cell count Yosys' `design hierarchy` block gives for the whole design.
    pub reported_total: Option<u64>,
}

/// Parse the text of Yosys' `stat`: a `=== <module> ===` block per module, whose cells
/// follow its `Number of cells:` line, one `<type> <count>` per line; the `design
/// hierarchy` block is left out (it is derived).
pub fn parse(text: &str) -> Result<Hierarchy, String> {
    let mut h = Hierarchy::default();
    let mut module: Option<String> = None;
    let mut in_cells = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("=== ").and_then(|r| r.strip_suffix(" ===")) {
            in_cells = false;
            module = (name != "design hierarchy").then(|| name.to_string());
            if let Some(m) = &module {
                h.modules.insert(m.clone(), Cells::new());
            }
            continue;
        }
        let Some(m) = &module else {
            if let Some(n) = t.strip_prefix("Number of cells:") {
                h.reported_total = n.trim().parse().ok();
            }
            continue;
        };
        if t.starts_with("Number of cells:") {
            in_cells = true;
            continue;
        }
        if !in_cells {
            continue;
        }
        if t.is_empty() || t.starts_with("Number of") || t.starts_with("Chip area") {
            in_cells = false;
            continue;
        }
        let (name, count) = t
            .rsplit_once(char::is_whitespace)
            .ok_or_else(|| format!("module {m}: cannot read the cell line {t:?}"))?;
        let n: u64 = count
            .parse()
            .map_err(|_| format!("module {m}: cell count {count:?} in {t:?} is not a number"))?;
        h.modules
            .get_mut(m)
            .expect("inserted")
            .insert(name.trim().to_string(), n);
    }
    if h.modules.is_empty() {
        return Err("no `=== module ===` block".to_string());
    }
    Ok(h)
}

impl Hierarchy {
    /// Every module's leaf cells, its submodules' included (each once per instance).
    pub fn totals(&self) -> BTreeMap<String, Cells> {
        let mut done: BTreeMap<String, Cells> = BTreeMap::new();
        for m in self.modules.keys() {
            self.total_of(m, &mut done);
        }
        done
    }

    fn total_of(&self, m: &str, done: &mut BTreeMap<String, Cells>) -> Cells {
        if let Some(c) = done.get(m) {
            return c.clone();
        }
        let mut out = Cells::new();
        for (t, &n) in &self.modules[m] {
            if self.modules.contains_key(t) {
                let sub = self.total_of(t, done);
                add(&mut out, &sub, n);
            } else {
                *out.entry(t.clone()).or_default() += n;
            }
        }
        done.insert(m.to_string(), out.clone());
        out
    }

    /// How often every module occurs in the design under `top` (`top` once).
    pub fn instances(&self, top: &str) -> BTreeMap<String, u64> {
        let mut count = BTreeMap::new();
        self.count_under(top, 1, &mut count);
        count
    }

    fn count_under(&self, m: &str, times: u64, count: &mut BTreeMap<String, u64>) {
        *count.entry(m.to_string()).or_default() += times;
        if let Some(cells) = self.modules.get(m) {
            for (t, &n) in cells {
                if self.modules.contains_key(t) {
                    self.count_under(t, times * n, count);
                }
            }
        }
    }

    /// The leaf cells of every instance of a module named `base` (any parameterisation)
    /// under module `m`, `m` itself included.
    pub fn within(&self, totals: &BTreeMap<String, Cells>, m: &str, base: &str) -> Cells {
        let mut out = Cells::new();
        for (name, n) in self.instances(m) {
            if base_name(&name) == base {
                add(&mut out, &totals[&name], n);
            }
        }
        out
    }
}

/// The transistor estimate of `stat -tech cmos` ("12345" or "12345+").
pub fn transistors(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("Estimated number of transistors:"))
        .next_back()
        .map(|n| n.trim().to_string())
}

/// `to += times * from`, by cell type.
pub fn add(to: &mut Cells, from: &Cells, times: u64) {
    for (t, &n) in from {
        *to.entry(t.clone()).or_default() += n * times;
    }
}

/// `to -= from`, by cell type (types that reach zero are dropped).
pub fn subtract(to: &mut Cells, from: &Cells) {
    for (t, &n) in from {
        if let Some(v) = to.get_mut(t) {
            *v = v.saturating_sub(n);
        }
    }
    to.retain(|_, v| *v > 0);
}

/// The module a Yosys name derives from: `hwgen_fifo` for `$paramod$<hash>\hwgen_fifo` or
/// `$paramod\hwgen_fifo\DEPTH=...`, the name itself otherwise.
pub fn base_name(name: &str) -> &str {
    match name.starts_with("$paramod") {
        true => name.split('\\').nth(1).unwrap_or(name),
        false => name,
    }
}

/// Instance name -> module of every module instance in a Verilog netlist written by Yosys
/// (`<module> <instance> (`, the module name escaped with a backslash when it has `$`).
pub fn instances_in(netlist: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in netlist.lines() {
        let mut words = line.split_whitespace();
        let (Some(module), Some(inst), Some("(")) = (words.next(), words.next(), words.next())
        else {
            continue;
        };
        let module = module.strip_prefix('\\').unwrap_or(module);
        let inst = inst.strip_prefix('\\').unwrap_or(inst);
        if module.contains("hwgen_") {
            out.insert(inst.to_string(), module.to_string());
        }
    }
    out
}
