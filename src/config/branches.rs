//! `[array]` rows and columns (a single engine), or `[[branch]]` with `[[branch.unit]]`:
//! the units of the design, each with its datatypes and buffers inherited from the
//! design-wide tables unless it overrides them.

use super::ctx::Ctx;
use super::error::Location;
use super::raw::*;
use super::sections::buffer_locs;
use crate::design::*;

/// Where each buffer setting of a unit came from, for messages.
pub(super) struct BufferKeys {
    pub prefix: String,
    pub spans: [Option<Location>; 4],
}

/// What every unit inherits.
pub(super) struct Inherited<'a> {
    pub datatype: &'a Datatypes,
    pub buffers: Buffers,
    pub window: Option<WindowUnit>,
    pub rows: Option<RowUnit>,
    pub raw_buffers: Option<&'a RawBuffers>,
}

/// The branches of the design, and for every unit where its buffers were set.
pub(super) fn resolve(
    ctx: &mut Ctx,
    raw: &RawConfig,
    base: &Inherited,
) -> (Vec<Branch>, Vec<Vec<BufferKeys>>) {
    let (rows, cols) = match &raw.array {
        Some(a) => (a.rows.as_ref(), a.cols.as_ref()),
        None => (None, None),
    };
    let Some(raw_branches) = &raw.branch else {
        return single_engine(ctx, rows, cols, base);
    };
    for (key, s) in [("array.rows", rows), ("array.cols", cols)] {
        if let Some(s) = s {
            ctx.bad(
                key,
                s,
                format!("{key} conflicts with [[branch]]: each [[branch.unit]] sets its own cpf and kpf"),
                format!("remove {key}, or remove the [[branch]] tables for a single-engine design"),
            );
        }
    }
    if raw_branches.is_empty() {
        ctx.problem(
            "branch",
            None,
            None,
            "at least one [[branch]] is required",
            "add a [[branch]] table",
        );
    }
    let mut branches = Vec::new();
    let mut keys = Vec::new();
    let mut seen: Vec<(String, Option<Location>)> = Vec::new();
    for (bi, rb) in raw_branches.iter().enumerate() {
        let bkey = format!("branch[{bi}]");
        let bname = rb.name.get_ref().clone();
        ctx.identifier(&format!("{bkey}.name"), &rb.name);
        if let Some((_, first)) = seen.iter().find(|(n, _)| *n == bname) {
            let first = first
                .as_ref()
                .map(|l| format!(" (first used at line {})", l.line))
                .unwrap_or_default();
            ctx.bad(
                &format!("{bkey}.name"),
                &rb.name,
                format!("branch names must be unique; \"{bname}\" is already taken{first}"),
                "give every [[branch]] its own name",
            );
        }
        seen.push((bname, ctx.loc(&rb.name)));
        let (mut branch, unit_keys) = branch(ctx, &bkey, rb, base);
        if let Some(s) = &rb.from {
            branch.from = fork_source(ctx, &format!("{bkey}.from"), s, &branches);
        }
        handoff_feeders(ctx, &bkey, rb, &branch, &branches);
        branches.push(branch);
        keys.push(unit_keys);
    }
    (branches, keys)
}

/// A unit with a hand-off buffer (`handoff_depth`) is fed rows by the unit before it in
/// its branch (the first unit: by its branch's `from` unit), replica to replica: that unit
/// must exist and have the same `h`.
fn handoff_feeders(ctx: &mut Ctx, bkey: &str, rb: &RawBranch, branch: &Branch, earlier: &[Branch]) {
    let Some(raw_units) = &rb.unit else { return };
    for (ui, (u, ru)) in branch.units.iter().zip(raw_units).enumerate() {
        let Some(s) = &ru.handoff_depth else { continue };
        let feeder = match ui {
            0 => branch.from.as_ref().and_then(|(b, x)| {
                earlier
                    .iter()
                    .find(|e| e.name == *b)
                    .and_then(|e| e.units.iter().find(|y| y.name == *x))
            }),
            _ => Some(&branch.units[ui - 1]),
        };
        let key = format!("{bkey}.unit[{ui}].handoff_depth");
        match feeder {
            None => ctx.bad(
                &key,
                s,
                format!(
                    "unit {}.{} has a hand-off buffer, but no unit feeds it: it is its branch's first unit and the branch has no from",
                    branch.name, u.name
                ),
                "remove handoff_depth, or give the branch a from unit whose output it reads",
            ),
            Some(f) if f.h != u.h => ctx.bad(
                &key,
                s,
                format!(
                    "unit {}.{} (h = {}) has a hand-off buffer, but the unit feeding it, {}, has h = {}; a buffer is written replica to replica, by a unit of the same h",
                    branch.name, u.name, u.h, f.name, f.h
                ),
                format!("give both units the same h, or remove handoff_depth (it reads {}'s output from memory)", f.name),
            ),
            Some(_) => {}
        }
    }
}

/// `from = "branch.unit"`: a unit of an earlier branch (so the branches form a tree).
fn fork_source(
    ctx: &mut Ctx,
    key: &str,
    s: &S<String>,
    earlier: &[Branch],
) -> Option<(String, String)> {
    let v = s.get_ref();
    let Some((b, u)) = v.split_once('.') else {
        ctx.bad(
            key,
            s,
            "from names a unit of an earlier branch as \"branch.unit\"",
            "write for example from = \"texture.up1\"",
        );
        return None;
    };
    let Some(branch) = earlier.iter().find(|x| x.name == b) else {
        let names: Vec<&str> = earlier.iter().map(|x| x.name.as_str()).collect();
        ctx.bad(
            key,
            s,
            format!(
                "from must name a branch defined before this one; earlier branches: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
            "move this [[branch]] after the branch it forks from, or correct the name",
        );
        return None;
    };
    if !branch.units.iter().any(|x| x.name == u) {
        let names: Vec<&str> = branch.units.iter().map(|x| x.name.as_str()).collect();
        ctx.bad(
            key,
            s,
            format!(
                "branch \"{b}\" has no unit \"{u}\"; its units: {}",
                names.join(", ")
            ),
            "name one of its units",
        );
        return None;
    }
    Some((b.to_string(), u.to_string()))
}

/// No `[[branch]]`: one branch (`main`) of one unit (`core`) built from `[array]`.
fn single_engine(
    ctx: &mut Ctx,
    rows: Option<&S<i64>>,
    cols: Option<&S<i64>>,
    base: &Inherited,
) -> (Vec<Branch>, Vec<Vec<BufferKeys>>) {
    let mut dim = |key: &str, s: Option<&S<i64>>| match s {
        Some(s) => ctx.pow2_in(key, s, 2, 256),
        None => {
            ctx.problem(
                key,
                None,
                None,
                format!("{key} is required when the file has no [[branch]] tables"),
                format!(
                    "add {} = 8 (or another power of two) under [array]",
                    &key[6..]
                ),
            );
            None
        }
    };
    let r = dim("array.rows", rows);
    let c = dim("array.cols", cols);
    let branch = Branch {
        name: "main".to_string(),
        batch: 1,
        priority: 0,
        fifo_depth: 8,
        from: None,
        units: vec![Unit {
            name: "core".to_string(),
            cpf: r.unwrap_or(8),
            kpf: c.unwrap_or(8),
            h: 1,
            bands: 1,
            handoff_depth: 0,
            datatype: base.datatype.clone(),
            buffers: base.buffers,
            window: base.window,
            rows: base.rows,
        }],
    };
    let keys = vec![vec![BufferKeys {
        prefix: "buffers".to_string(),
        spans: buffer_locs(ctx, base.raw_buffers),
    }]];
    (vec![branch], keys)
}

/// One `[[branch]]` and its units.
fn branch(
    ctx: &mut Ctx,
    bkey: &str,
    rb: &RawBranch,
    base: &Inherited,
) -> (Branch, Vec<BufferKeys>) {
    let bname = rb.name.get_ref().clone();
    let batch = rb
        .batch
        .as_ref()
        .and_then(|s| ctx.int_in(&format!("{bkey}.batch"), s, 1, 1024))
        .unwrap_or(1);
    let priority = rb
        .priority
        .as_ref()
        .and_then(|s| ctx.int_in(&format!("{bkey}.priority"), s, 0, 15))
        .unwrap_or(0);
    let fifo_depth = rb
        .fifo_depth
        .as_ref()
        .and_then(|s| ctx.pow2_in(&format!("{bkey}.fifo_depth"), s, 2, 1024))
        .unwrap_or(8);
    let raw_units = rb.unit.as_deref().unwrap_or(&[]);
    if raw_units.is_empty() {
        let loc = ctx.loc(&rb.name);
        ctx.problem(
            &format!("{bkey}.unit"),
            loc,
            None,
            format!("branch \"{bname}\" has no [[branch.unit]]"),
            "add at least one [[branch.unit]] with cpf, kpf and h",
        );
    }
    let mut units = Vec::new();
    let mut keys = Vec::new();
    for (ui, ru) in raw_units.iter().enumerate() {
        let ukey = format!("{bkey}.unit[{ui}]");
        ctx.identifier(&format!("{ukey}.name"), &ru.name);
        if units.iter().any(|u: &Unit| u.name == *ru.name.get_ref()) {
            ctx.bad(
                &format!("{ukey}.name"),
                &ru.name,
                format!("unit names must be unique within branch \"{bname}\""),
                "give every [[branch.unit]] of the branch its own name",
            );
        }
        let (u, k) = unit(ctx, &ukey, ru, base);
        units.push(u);
        keys.push(k);
    }
    let branch = Branch {
        name: bname,
        batch,
        priority,
        fifo_depth,
        from: None,
        units,
    };
    (branch, keys)
}

/// The range of a unit's hand-off buffer depth in beats (`handoff_depth`, a power of two):
/// from a few rows up to more than any FPGA's block RAM holds at 64 bits.
pub const MIN_HANDOFF_DEPTH: i64 = 16;
pub const MAX_HANDOFF_DEPTH: i64 = 1 << 20;

/// The most row bands a unit may hand a frame on in (`bands`): more only adds instructions.
pub const MAX_BANDS: u32 = 64;

/// One `[[branch.unit]]`.
fn unit(ctx: &mut Ctx, ukey: &str, ru: &RawUnit, base: &Inherited) -> (Unit, BufferKeys) {
    let h_val = ru.h.as_ref().map_or(1, |s| *s.get_ref());
    let product = ru
        .cpf
        .get_ref()
        .saturating_mul(*ru.kpf.get_ref())
        .saturating_mul(h_val);
    let (cpf, kpf, h) = if product == 0 {
        let (which, span): (&str, &S<i64>) = if *ru.cpf.get_ref() == 0 {
            ("cpf", &ru.cpf)
        } else if *ru.kpf.get_ref() == 0 {
            ("kpf", &ru.kpf)
        } else {
            ("h", ru.h.as_ref().unwrap_or(&ru.cpf))
        };
        ctx.bad(
            &format!("{ukey}.{which}"),
            span,
            format!(
                "unit \"{}\" has no compute: cpf x kpf x h = {} x {} x {} = 0",
                ru.name.get_ref(),
                ru.cpf.get_ref(),
                ru.kpf.get_ref(),
                h_val
            ),
            "give cpf and kpf a power of two from 2 to 256 and h at least 1",
        );
        (None, None, None)
    } else {
        (
            ctx.pow2_in(&format!("{ukey}.cpf"), &ru.cpf, 2, 256),
            ctx.pow2_in(&format!("{ukey}.kpf"), &ru.kpf, 2, 256),
            match &ru.h {
                Some(s) => ctx.int_in(&format!("{ukey}.h"), s, 1, 16),
                None => Some(1),
            },
        )
    };
    let datatype = super::datatype::resolve(
        ctx,
        &format!("{ukey}.datatype"),
        ru.datatype.as_ref(),
        base.datatype,
    );
    let per_unit_family = !datatype.is_multi()
        && !matches!(datatype.precisions[0], crate::numeric::Precision::Int(_));
    if per_unit_family && datatype != *base.datatype {
        let at = ru.datatype.as_ref().and_then(|rd| {
            [&rd.input, &rd.weight, &rd.output]
                .into_iter()
                .flatten()
                .next()
        });
        if let Some(s) = at {
            let loc = ctx.loc(s);
            ctx.problem(
                &format!("{ukey}.datatype"),
                loc,
                None,
                format!("{ukey}.datatype: MX, floating-point and posit types are chosen for the whole design, in [datatype], not per unit"),
                "move the types to [datatype]",
            );
        }
    }
    let buffers = super::sections::buffers(
        ctx,
        &format!("{ukey}.buffers"),
        ru.buffers.as_ref(),
        base.buffers,
    );
    let mut spans = buffer_locs(ctx, base.raw_buffers);
    for (span, own) in spans.iter_mut().zip(buffer_locs(ctx, ru.buffers.as_ref())) {
        if own.is_some() {
            *span = own;
        }
    }
    let keys = BufferKeys {
        prefix: if ru.buffers.is_some() {
            format!("{ukey}.buffers")
        } else {
            "buffers".to_string()
        },
        spans,
    };
    let bands = ru
        .bands
        .as_ref()
        .and_then(|s| ctx.int_in(&format!("{ukey}.bands"), s, 1, i64::from(MAX_BANDS)))
        .unwrap_or(1);
    let handoff_depth = ru
        .handoff_depth
        .as_ref()
        .and_then(|s| {
            ctx.pow2_in(
                &format!("{ukey}.handoff_depth"),
                s,
                MIN_HANDOFF_DEPTH,
                MAX_HANDOFF_DEPTH,
            )
        })
        .unwrap_or(0);
    let unit = Unit {
        name: ru.name.get_ref().clone(),
        cpf: cpf.unwrap_or(8),
        kpf: kpf.unwrap_or(8),
        h: h.unwrap_or(1),
        bands,
        handoff_depth,
        datatype,
        buffers,
        window: base.window,
        rows: base.rows,
    };
    (unit, keys)
}
