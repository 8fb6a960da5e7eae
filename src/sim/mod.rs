//! Simulation support: building Verilator models of generated RTL and testbenches.

pub mod run;
pub mod stall;
pub mod timeline;
pub mod verilator;
