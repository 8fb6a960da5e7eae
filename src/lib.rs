//! hwgen: a generator of DNN accelerators. A TOML parameter file becomes a validated
//! [`design::Design`], which becomes lint-clean Verilog through askama templates; a model
//! becomes the instruction and data memories of that Design.
//!
//! # Layers
//!
//! Each module uses only the modules of the tiers below it (`tests/structure.rs` checks
//! every `crate::` path against this table):
//!
//! | tier | modules | what |
//! |---|---|---|
//! | 0 | `refusal` | the one shape of every refusal (what and where, rule, fix) |
//! | 1 | `numeric`, `isa`, `names`, `filemap`, `location` | number formats and datapaths; the one ISA definition; Verilog names; atomic output; line and column of errors |
//! | 2 | `design` | the resolved, validated Design |
//! | 3 | `config`, `model`, `rtl`, `interp` | parameter file -> Design; model file -> layers, and each operator once (`model::op`: parsing, golden semantics, lowering); Design -> Verilog; the ISA-level machine |
//! | 4 | `golden`, `onnx`, `synth` | the operators' golden semantics run over a model; quantized ONNX graphs -> model files; emitted RTL -> Yosys' resources |
//! | 5 | `compiler` | model -> program for a Design |
//! | 6 | `verify`, `dse` | expected results (golden model) and the bit-exact comparison; the design-space search |
//! | 7 | `sim` | Verilator runs of emitted RTL against the expected results |
//!
//! The `hwgen` binary (`src/main.rs`, one file per subcommand under `src/cmd/`) sits above
//! all of them.

pub mod compiler;
pub mod config;
pub mod design;
pub mod dse;
pub mod filemap;
pub mod golden;
pub mod interp;
pub mod isa;
pub mod location;
pub mod model;
pub mod names;
pub mod numeric;
pub mod onnx;
pub mod refusal;
pub mod rtl;
pub mod sim;
pub mod synth;
pub mod verify;
