//! Compiler passes, in the order `compile` runs them.

pub mod allocate;
pub mod encode;
pub mod fuse;
pub mod legalize;
pub mod schedule;
pub mod sync;
pub mod tile;
