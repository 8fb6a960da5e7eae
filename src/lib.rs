//! hwgen: a generator of DNN accelerators. A TOML parameter file becomes a validated
//! [`design::Design`], which becomes lint-clean Verilog through askama templates.

pub mod compiler;
pub mod config;
pub mod design;
pub mod filemap;
pub mod golden;
pub mod interp;
pub mod isa;
pub mod model;
pub mod numeric;
pub mod rtl;
pub mod sim;
