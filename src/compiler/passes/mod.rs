//! The compiler's passes, one per file (or folder), each a typed function from one IR to
//! the next; `pipeline` runs them in this order:
//!
//! - `legalize`: check the model against the Design and build the layer graph;
//! - `fuse`: fuse layers by graph patterns (conv+add, conv+maxpool, expand+depthwise), the
//!   cheapest cover by estimated cycles (the pipeline gives it the costs);
//! - `map`: outputs to branches, layers to stages (one per unit), rows to replicas and row
//!   bands (F-CAD's construction step; one stage of one replica on a single engine);
//! - `allocate`: place tensors, weight tiles and biases in external memory (reusing dead
//!   tensors' space on a single engine);
//! - `tile`: split each layer of a stage into output tiles and channel groups that fit its
//!   unit's scratchpads;
//! - `schedule`: a replica's load, matmul, vector and store instructions, band by band,
//!   with the buffer rows and beats they touch;
//! - `frames`: every engine's program for a run of frames, with the hand-off tokens between
//!   engines;
//! - `sync`: turn buffer dependencies between queues into semaphore waits and signals;
//! - `encode`: check every instruction against the ISA and the Design, and build the
//!   memory image.

pub mod allocate;
pub mod encode;
pub mod frames;
pub mod fuse;
pub mod legalize;
pub mod map;
pub mod schedule;
pub mod sync;
pub mod tile;

#[cfg(test)]
pub(crate) mod tests;
