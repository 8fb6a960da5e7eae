//! Compiler passes, one per file, registered in the order `compile` runs them.

pub mod allocate;
pub mod encode;
pub mod estimate;
pub mod fuse;
pub mod legalize;
pub mod phases;
pub mod schedule;
pub mod sync;
pub mod tile;

use super::{Compilation, CompileError};

/// A registered pass: its name, what it does, and how it runs on a compilation.
pub struct Pass {
    pub name: &'static str,
    pub doc: &'static str,
    pub run: fn(&mut Compilation) -> Result<(), CompileError>,
}

/// Every pass, in order.
pub const PASSES: &[Pass] = &[
    Pass {
        name: "legalize",
        doc: "check the model against the Design and build the layer graph",
        run: legalize::pass,
    },
    Pass {
        name: "fuse",
        doc: "fuse layers by graph patterns (conv+add, conv+maxpool, expand+depthwise), the cheapest cover by estimated cycles",
        run: fuse::pass,
    },
    Pass {
        name: "allocate",
        doc: "place tensors, weight tiles and biases in external memory, reusing dead tensors' space",
        run: allocate::pass,
    },
    Pass {
        name: "tile",
        doc: "split each layer into output tiles and channel groups that fit the scratchpads",
        run: tile::pass,
    },
    Pass {
        name: "schedule",
        doc: "emit the load, matmul, vector and store instructions with the buffer rows and beats they touch",
        run: schedule::pass,
    },
    Pass {
        name: "sync",
        doc: "turn buffer dependencies between queues into semaphore waits and signals",
        run: sync::pass,
    },
    Pass {
        name: "encode",
        doc: "check every instruction against the ISA and the Design, and build the memory image",
        run: encode::pass,
    },
    Pass {
        name: "estimate",
        doc: "estimate every layer's cycles for the report",
        run: estimate::pass,
    },
];

#[cfg(test)]
pub(crate) mod tests;
