//! One file per subcommand.

pub mod check;
pub mod emit;
pub mod isa;
