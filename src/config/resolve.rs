//! Resolution (defaults, inheritance of per-unit overrides) and validation of every rule:
//! one function per section, in the order the file reads, then the rules that relate
//! sections. Every problem is collected, so one run reports them all.

use super::branches::{self, Inherited};
use super::ctx::Ctx;
use super::error::ConfigError;
use super::raw::RawConfig;
use super::rules::{self, Spots};
use super::{datatype, sections};
use crate::design::Design;
use crate::names;

pub(super) fn resolve(
    raw: RawConfig,
    src: &str,
    file: &str,
    stem: &str,
) -> Result<Design, ConfigError> {
    let mut ctx = Ctx {
        src,
        problems: Vec::new(),
    };
    let name = match &raw.name {
        Some(n) => {
            ctx.identifier("name", n);
            n.get_ref().clone()
        }
        None => names::sanitize(stem),
    };
    let reset = sections::reset(&mut ctx, raw.reset.as_ref());
    let dataflow = sections::dataflow(&mut ctx, raw.array.as_ref());
    let datatype = datatype::resolve(
        &mut ctx,
        "datatype",
        raw.datatype.as_ref(),
        &datatype::default_datatypes(),
    );
    let buffers = sections::buffers(
        &mut ctx,
        "buffers",
        raw.buffers.as_ref(),
        sections::DEFAULT_BUFFERS,
    );
    let (memory, mem_width) = sections::memory(&mut ctx, raw.memory.as_ref());
    let vector = sections::vector(&mut ctx, raw.vector.as_ref());
    let control = sections::control(&mut ctx, raw.control.as_ref());
    let window = sections::window(&mut ctx, raw.window.as_ref());
    let rows = sections::rows(&mut ctx, raw.rows.as_ref());
    let base = Inherited {
        datatype: &datatype,
        buffers,
        window,
        rows,
        raw_buffers: raw.buffers.as_ref(),
    };
    let (branches, keys) = branches::resolve(&mut ctx, &raw, &base);
    let pack_macs = raw.array.as_ref().and_then(|a| a.pack_macs.as_ref());
    if ctx.problems.is_empty() {
        if let Some(s) = pack_macs.filter(|s| *s.get_ref()) {
            sections::check_pack_macs(&mut ctx, s, &branches);
        }
        let block_size = raw.datatype.as_ref().and_then(|d| {
            d.block_size
                .as_ref()
                .and_then(|s| ctx.loc(s))
                .or_else(|| d.input.as_ref().and_then(|s| ctx.loc(s)))
        });
        let window = raw
            .window
            .as_ref()
            .and_then(|w| w.enabled.as_ref())
            .and_then(|s| ctx.loc(s));
        let rows = raw
            .rows
            .as_ref()
            .and_then(|r| r.enabled.as_ref())
            .and_then(|s| ctx.loc(s));
        let spots = Spots {
            mem_width,
            block_size,
            window,
            rows,
        };
        rules::check(&mut ctx, &branches, &keys, &memory, &spots);
        let engines: u32 = branches.iter().flat_map(|b| &b.units).map(|u| u.h).sum();
        if memory.ports > engines {
            let at = raw.memory.as_ref().and_then(|m| m.ports.as_ref());
            if let Some(s) = at {
                ctx.bad(
                    "memory.ports",
                    s,
                    format!(
                        "memory.ports = {} but the design has {engines} engine(s); engine e uses port e mod ports, so a port would have none",
                        memory.ports
                    ),
                    format!("use at most {engines} port(s), or add engines"),
                );
            }
        }
    }
    if !ctx.problems.is_empty() {
        return Err(ConfigError::Invalid {
            file: file.to_string(),
            problems: ctx.problems,
        });
    }
    Ok(Design {
        name,
        source: file.to_string(),
        dataflow,
        pack_macs: pack_macs.is_some_and(|s| *s.get_ref()),
        reset,
        memory,
        control,
        vector,
        branches,
    })
}
