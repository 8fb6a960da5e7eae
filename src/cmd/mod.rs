//! One file per subcommand.

pub mod check;
pub mod compile;
pub mod emit;
pub mod isa;
pub mod sim;
