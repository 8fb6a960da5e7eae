//! The space `hwgen dse` searches: per branch of a template Design, a list of units, each
//! a square array and a number of replicas; what a point costs (the resource model) and
//! the parameter file it becomes.

use crate::design::{Design, Unit};
use crate::synth::model::{self, Predicted};

/// Resource and bandwidth budgets (F-CAD's: DSPs, 18-Kbit block RAMs, external memory;
/// and a part's LUTs and flip-flops).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Budget {
    pub dsps: u64,
    pub bram18: u64,
    /// Gigabytes per second of external memory.
    pub bandwidth_gbs: f64,
    /// Logic LUTs (LUT RAM included) and flip-flops, when given (`--device` gives the
    /// part's): F-CAD budgets DSPs and block RAM only, but a design must also fit the
    /// device's logic.
    pub luts: Option<u64>,
    pub ffs: Option<u64>,
}

impl Budget {
    /// `dsp=N,bram=N,bw=GB/s[,lut=N][,ff=N]` (every key once, in any order).
    pub fn parse(s: &str) -> Result<Budget, String> {
        Budget::parse_for(s, None)
    }

    /// As `parse`, for a part (`--device`): dsp, bram, lut and ff default to the part's
    /// capacity and may only narrow it; bw (the board's memory) is always given.
    pub fn parse_for(s: &str, device: Option<&super::device::Device>) -> Result<Budget, String> {
        let (mut dsps, mut bram, mut bw, mut lut, mut ff) = (None, None, None, None, None);
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                format!("--budget {s}: {part:?} is not KEY=VALUE; write dsp=2520,bram=1824,bw=19.2")
            })?;
            let bad = |rule: &str| format!("--budget {s}: {k}={v}: {rule}");
            let (slot, cap) = match k {
                "dsp" => (&mut dsps, device.map(|d| d.dsps)),
                "bram" => (&mut bram, device.map(|d| d.bram18)),
                "bw" => (&mut bw, None),
                "lut" => (&mut lut, device.map(|d| d.luts)),
                "ff" => (&mut ff, device.map(|d| d.ffs)),
                _ => {
                    return Err(format!(
                        "--budget {s}: unknown key {k:?}; the keys are dsp (DSP slices), bram (18-Kbit block RAMs), bw (GB/s of external memory) and, optionally, lut (LUTs) and ff (flip-flops)"
                    ))
                }
            };
            if slot.is_some() {
                return Err(bad("given twice; give each key once"));
            }
            let x: f64 = v
                .parse()
                .map_err(|_| bad("not a number; write e.g. dsp=2520"))?;
            if !(x.is_finite() && x > 0.0) {
                return Err(bad("must be a positive number"));
            }
            if k != "bw" && x.fract() != 0.0 {
                return Err(bad("must be a whole number of blocks"));
            }
            if let (Some(cap), Some(d)) = (cap, device) {
                if x > cap as f64 {
                    return Err(bad(&format!(
                        "the {} has {cap}; a budget for it can only narrow that (leave the key out for all of it)",
                        d.name
                    )));
                }
            }
            *slot = Some(x);
        }
        let whole = |x: Option<f64>, cap: Option<u64>| x.map(|x| x as u64).or(cap);
        let missing = |k: &str| {
            match device {
            None => format!("--budget {s}: {k}= is missing; give dsp=, bram= and bw= (or --device NAME for a part's dsp, bram, lut and ff)"),
            Some(_) => format!("--budget {s}: {k}= is missing; give bw=GB/s, the board's external memory"),
        }
        };
        Ok(Budget {
            dsps: whole(dsps, device.map(|d| d.dsps)).ok_or_else(|| missing("dsp"))?,
            bram18: whole(bram, device.map(|d| d.bram18)).ok_or_else(|| missing("bram"))?,
            bandwidth_gbs: bw.ok_or_else(|| missing("bw"))?,
            luts: whole(lut, device.map(|d| d.luts)),
            ffs: whole(ff, device.map(|d| d.ffs)),
        })
    }
}

impl Budget {
    /// What of `r` exceeds this budget, counted in whole blocks ("2600 DSPs > 2520"), or
    /// None when it fits.
    pub fn exceeded(&self, r: &Predicted) -> Option<String> {
        let mut over = Vec::new();
        let (dsps, bram, luts) = (
            r.dsps.ceil() as u64,
            r.bram18.ceil() as u64,
            (r.luts + r.lutram).ceil() as u64,
        );
        if dsps > self.dsps {
            over.push(format!("{dsps} DSPs > {}", self.dsps));
        }
        if bram > self.bram18 {
            over.push(format!("{bram} BRAM18 > {}", self.bram18));
        }
        if let Some(l) = self.luts.filter(|&l| luts > l) {
            over.push(format!("{luts} LUTs > {l}"));
        }
        let ffs = r.ffs.ceil() as u64;
        if let Some(f) = self.ffs.filter(|&f| ffs > f) {
            over.push(format!("{ffs} flip-flops > {f}"));
        }
        (!over.is_empty()).then(|| over.join(", "))
    }
}

/// The choices per unit and per branch.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Space {
    /// Array sizes (cpf = kpf), ascending.
    pub sizes: Vec<u32>,
    /// Replicas (F-CAD's height split) per unit, 1..=max_h.
    pub max_h: u32,
    /// Units (pipeline stages) per branch, 1..=max_units.
    pub max_units: usize,
}

/// A point of the space: per branch (the template's order), per unit, (array size, h).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Point(pub Vec<Vec<(u32, u32)>>);

impl Point {
    /// "geometry [16x16 h1], texture [16x16 h3, 8x8 h1]".
    pub fn label(&self, design: &Design) -> String {
        self.0
            .iter()
            .zip(&design.branches)
            .map(|(units, b)| {
                let u: Vec<String> = units.iter().map(|(s, h)| format!("{s}x{s} h{h}")).collect();
                format!("{} [{}]", b.name, u.join(", "))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Points one step up: a unit with one replica more, the next larger array, or a new
    /// stage (any array size, one replica) after it or before the first.
    pub fn grown(&self, space: &Space) -> Vec<Point> {
        self.grown_at(space, None)
    }

    /// As [`Point::grown`], the steps of unit `at` (branch, unit) only, or of every unit.
    pub fn grown_at(&self, space: &Space, at: Option<(usize, usize)>) -> Vec<Point> {
        self.each_unit(|b, units, u, out| {
            if at.is_some_and(|a| a != (b, u)) {
                return;
            }
            let (s, h) = units[u];
            if h < space.max_h {
                out.push(with(units, |v| v[u].1 += 1));
            }
            if let Some(&bigger) = space.sizes.iter().find(|&&x| x > s) {
                out.push(with(units, |v| v[u].0 = bigger));
            }
            if units.len() < space.max_units {
                for &size in &space.sizes {
                    out.push(with(units, |v| v.insert(u + 1, (size, 1))));
                }
                if u == 0 {
                    for &size in &space.sizes {
                        out.push(with(units, |v| v.insert(0, (size, 1))));
                    }
                }
            }
        })
    }

    /// Points one step down: a unit with one replica fewer, the next smaller array, or
    /// removed.
    pub fn shrunk(&self, space: &Space) -> Vec<Point> {
        self.each_unit(|_, units, u, out| {
            let (s, h) = units[u];
            if h > 1 {
                out.push(with(units, |v| v[u].1 -= 1));
            }
            if let Some(&smaller) = space.sizes.iter().rev().find(|&&x| x < s) {
                out.push(with(units, |v| v[u].0 = smaller));
            }
            if units.len() > 1 {
                out.push(with(units, |v| {
                    v.remove(u);
                }));
            }
        })
    }

    /// Points with the same arrays, rearranged: a replica moved from another unit to unit
    /// `to` (branch, unit; without `to`, between any two units), a unit of several replicas
    /// split into two stages, two neighbouring stages of one array size merged.
    pub fn shifted(&self, space: &Space, to: Option<(usize, usize)>) -> Vec<Point> {
        let mut out = Vec::new();
        let units: Vec<(usize, usize)> = self
            .0
            .iter()
            .enumerate()
            .flat_map(|(b, v)| (0..v.len()).map(move |u| (b, u)))
            .collect();
        for &(fb, fu) in &units {
            for &(tb, tu) in &units {
                let (from, into) = (self.0[fb][fu], self.0[tb][tu]);
                let aimed = to.is_none_or(|t| t == (tb, tu));
                if (fb, fu) != (tb, tu) && aimed && from.1 > 1 && into.1 < space.max_h {
                    let mut p = self.clone();
                    p.0[fb][fu].1 -= 1;
                    p.0[tb][tu].1 += 1;
                    out.push(p);
                }
            }
        }
        out.extend(self.each_unit(|_, v, u, out| {
            let (s, h) = v[u];
            if h > 1 && v.len() < space.max_units {
                out.push(with(v, |v| {
                    v[u].1 = h.div_ceil(2);
                    v.insert(u + 1, (s, h / 2));
                }));
            }
            if let Some(&(s2, h2)) = v.get(u + 1) {
                if s2 == s && h + h2 <= space.max_h {
                    out.push(with(v, |v| {
                        v[u].1 = h + h2;
                        v.remove(u + 1);
                    }));
                }
            }
        }));
        out
    }

    /// `f(branch, its units, unit index, out)` for every unit; each `Vec` it pushes
    /// replaces that branch's units in a new point.
    fn each_unit(
        &self,
        mut f: impl FnMut(usize, &[(u32, u32)], usize, &mut Vec<Vec<(u32, u32)>>),
    ) -> Vec<Point> {
        let mut out = Vec::new();
        for (b, units) in self.0.iter().enumerate() {
            for u in 0..units.len() {
                let mut alts = Vec::new();
                f(b, units, u, &mut alts);
                out.extend(alts.into_iter().map(|v| {
                    let mut p = self.clone();
                    p.0[b] = v;
                    p
                }));
            }
        }
        out
    }
}

/// `units` changed by `f`.
fn with(units: &[(u32, u32)], f: impl FnOnce(&mut Vec<(u32, u32)>)) -> Vec<(u32, u32)> {
    let mut v = units.to_vec();
    f(&mut v);
    v
}

/// The template with the point's units: branch b's units named u1, u2, ..., each with the
/// template's first unit's datatype, buffers and window unit; a fork from another branch
/// comes from that branch's first unit (which then runs every layer the branches share);
/// the memory ports the budget pays for, at most one per engine.
pub fn design(template: &Design, p: &Point) -> Design {
    let mut d = template.clone();
    for (b, units) in d.branches.iter_mut().zip(&p.0) {
        let first = b.units[0].clone();
        b.units = units
            .iter()
            .enumerate()
            .map(|(k, &(s, h))| Unit {
                name: format!("u{}", k + 1),
                cpf: s,
                kpf: s,
                h,
                bands: 1,
                handoff_depth: 0,
                ..first.clone()
            })
            .collect();
        if let Some((from, _)) = &b.from {
            b.from = Some((from.clone(), "u1".to_string()));
        }
    }
    // Every port needs an engine (engine e uses port e mod ports).
    let engines = d.cores().len() as u32;
    d.memory.ports = d.memory.ports.min(engines.max(1));
    d
}

/// What the resource model predicts for `d`, and its DSPs and 18-Kbit block RAMs rounded
/// up.
pub fn resources(d: &Design) -> Result<(Predicted, u64, u64), String> {
    let r = model::design(d)?;
    Ok((r, r.dsps.ceil() as u64, r.bram18.ceil() as u64))
}

/// The memory ports a bandwidth budget pays for at `clock_mhz`, with beats of
/// `width_bits`: (ports, bytes per cycle and port). Whole ports of a full beat per cycle,
/// at most 16 (the config's limit); below one, one port of the bytes per cycle it allows.
pub fn memory_for(
    bandwidth_gbs: f64,
    clock_mhz: u32,
    width_bits: u32,
) -> Result<(u32, u32), String> {
    let per_cycle = bandwidth_gbs * 1e3 / f64::from(clock_mhz);
    let beat = f64::from(width_bits / 8);
    if per_cycle < 1.0 {
        return Err(format!(
            "bw={bandwidth_gbs} GB/s is {per_cycle:.3} bytes per cycle at {clock_mhz} MHz; the memory needs at least 1"
        ));
    }
    if per_cycle < beat {
        return Ok((1, per_cycle.floor() as u32));
    }
    Ok(((per_cycle / beat).floor().min(16.0) as u32, width_bits / 8))
}

/// The parameter file of `d` (a point of the space over `template_src`, the template's
/// text): the template's tables with the budget's clock and memory ports, the branches'
/// batch and priority, and each branch's units replaced; `header` becomes its opening
/// comment, and `name`, when given, its `name`. Keys of the template's first unit other
/// than its name, shape, bands and hand-off buffer carry over to every unit (the search
/// makes every unit hand on whole frames through memory).
pub fn config_toml(
    template_src: &str,
    d: &Design,
    header: &str,
    name: Option<&str>,
) -> Result<String, String> {
    use toml::{Table, Value};
    let mut t: Table = template_src
        .parse()
        .map_err(|e| format!("the template does not parse as TOML: {e}"))?;
    if let Some(n) = name {
        t.insert("name".into(), Value::String(n.to_string()));
    }
    let int = |x: u32| Value::Integer(i64::from(x));
    // Edited in place, so the tables keep the template's order.
    fn table<'t>(t: &'t mut Table, k: &str) -> Result<&'t mut Table, String> {
        t.entry(k)
            .or_insert_with(|| Value::Table(Table::new()))
            .as_table_mut()
            .ok_or_else(|| format!("the template's {k} is not a table"))
    }
    table(&mut t, "control")?.insert("clock_mhz".into(), int(d.control.clock_mhz));
    let memory = table(&mut t, "memory")?;
    memory.insert("data_width_bits".into(), int(d.memory.data_width_bits));
    memory.insert("ports".into(), int(d.memory.ports));
    memory.remove("bytes_per_cycle");
    if d.memory.bytes_per_cycle != d.memory.data_width_bits / 8 {
        memory.insert("bytes_per_cycle".into(), int(d.memory.bytes_per_cycle));
    }
    let Some(Value::Array(branches)) = t.get_mut("branch") else {
        return Err("the template has no [[branch]] tables".to_string());
    };
    for (raw, b) in branches.iter_mut().zip(&d.branches) {
        let Value::Table(raw) = raw else {
            return Err("the template's branch is not an array of tables".to_string());
        };
        raw.insert("batch".into(), int(b.batch));
        raw.insert("priority".into(), int(b.priority));
        if let Some((fb, fu)) = &b.from {
            raw.insert("from".into(), Value::String(format!("{fb}.{fu}")));
        }
        let mut extra = match raw.get("unit") {
            Some(Value::Array(u)) => match u.first() {
                Some(Value::Table(x)) => x.clone(),
                _ => Table::new(),
            },
            _ => Table::new(),
        };
        for k in ["name", "cpf", "kpf", "h", "bands", "handoff_depth"] {
            extra.remove(k);
        }
        let units = b
            .units
            .iter()
            .map(|u| {
                let mut x = Table::new();
                x.insert("name".into(), Value::String(u.name.clone()));
                x.insert("cpf".into(), int(u.cpf));
                x.insert("kpf".into(), int(u.kpf));
                x.insert("h".into(), int(u.h));
                x.extend(extra.clone());
                Value::Table(x)
            })
            .collect();
        raw.insert("unit".into(), Value::Array(units));
    }
    let body = toml::to_string(&t).map_err(|e| format!("writing the design as TOML: {e}"))?;
    let comment: String = header
        .lines()
        .map(|l| format!("# {l}\n").replace("# \n", "#\n"))
        .collect();
    Ok(format!("{comment}{body}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_parse_and_refuse() {
        let b = Budget::parse("dsp=2520, bram=1824,bw=19.2").unwrap();
        assert_eq!(
            (b.dsps, b.bram18, b.bandwidth_gbs, b.luts),
            (2520, 1824, 19.2, None)
        );
        let b = Budget::parse("lut=274080,dsp=2520,bram=1824,bw=19.2").unwrap();
        assert_eq!(b.luts, Some(274080));
        for (s, says) in [
            ("dsp=10,bram=5", "bw= is missing"),
            ("dsp=10,bram=5,bw=1,dsp=3", "given twice"),
            ("dsp=1.5,bram=5,bw=1", "whole number"),
            ("dsp=10,bram=-5,bw=1", "positive"),
            ("dsp=10,uram=5,bw=1", "unknown key \"uram\""),
            ("dsp10", "KEY=VALUE"),
        ] {
            let e = Budget::parse(s).unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
    }

    /// 19.2 GB/s at 200 MHz is 96 bytes per cycle: six 128-bit ports (F-CAD's ZCU102
    /// DDR4); 1 GB/s is 5 bytes per cycle, less than one 128-bit beat.
    #[test]
    fn bandwidth_becomes_ports() {
        assert_eq!(memory_for(19.2, 200, 128).unwrap(), (6, 16));
        assert_eq!(memory_for(20.0, 200, 128).unwrap(), (6, 16));
        assert_eq!(memory_for(1.0, 200, 128).unwrap(), (1, 5));
        assert_eq!(memory_for(1000.0, 200, 64).unwrap(), (16, 8));
        assert!(memory_for(0.1, 200, 128).is_err());
    }

    /// A template whose forked branch's first unit hands on chip and in bands: the
    /// written design's units do neither (every unit would otherwise inherit them, units
    /// the search gave another h than their feeder's too), and it parses.
    #[test]
    fn written_units_drop_bands_and_hand_off_buffers() {
        let src = "[[branch]]\nname = \"main\"\n[[branch.unit]]\nname = \"a\"\ncpf = 8\nkpf = 8\n[[branch]]\nname = \"side\"\nfrom = \"main.a\"\n[[branch.unit]]\nname = \"s\"\ncpf = 8\nkpf = 8\nbands = 4\nhandoff_depth = 256\n";
        let template = crate::config::parse_str(src, "t.toml", "t").unwrap();
        assert_eq!(template.branches[1].units[0].handoff_depth, 256);
        let p = Point(vec![vec![(8, 1)], vec![(8, 2), (8, 1)]]);
        let text = config_toml(src, &design(&template, &p), "", None).unwrap();
        assert!(
            !text.contains("handoff_depth") && !text.contains("bands"),
            "{text}"
        );
        let d = crate::config::parse_str(&text, "w.toml", "w").unwrap();
        assert!(d
            .cores()
            .iter()
            .all(|(_, u, _)| u.handoff_depth == 0 && u.bands == 1));
    }
}
