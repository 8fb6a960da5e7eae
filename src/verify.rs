//! What a program must leave in external memory, and whether it did: the golden model's
//! output in the program's output layout (computed beside the compiler, from the model),
//! and one bit-exactness comparison keyed on the output's format, used by the ISA
//! interpreter's checks, the Verilator runs and the tests alike.

use crate::compiler::passes::encode::{read_tensor, write_tensor};
use crate::compiler::{Program, TensorLayout};
use crate::design::Design;
use crate::interp::{Engine, InterpError, Memory};
use crate::model::Model;

/// External memory as the golden model says the program must leave its output region.
pub fn expected(design: &Design, model: &Model, program: &Program) -> Memory {
    let rows = design.cores()[0].1.cpf as usize;
    let mut mem = Memory::new(design.memory.data_width_bits, program.dmem.beats());
    for f in 0..program.frames() {
        let golden = crate::golden::run(&crate::compiler::frame_model(model, f), rows);
        for o in program.outputs.iter().filter(|o| o.frame == f) {
            write_tensor(&mut mem, &o.layout, &golden[&o.name]);
        }
    }
    mem
}

/// How two output regions compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparison {
    /// How many of `unit` differ.
    pub differing: usize,
    pub unit: &'static str,
}

impl Comparison {
    pub fn matched(&self) -> bool {
        self.differing == 0
    }
}

/// Compare the output region of `got` with `want`. A block-scaled output fills whole
/// channel tiles, so every beat of the region (elements and block scales) must be equal;
/// otherwise the values of the real channels must (a partial last channel tile holds
/// don't-care values).
pub fn compare(program: &Program, want: &Memory, got: &Memory) -> Comparison {
    let mut total = Comparison {
        differing: 0,
        unit: "values",
    };
    for out in &program.outputs {
        let c = compare_one(&out.layout, want, got);
        total.differing += c.differing;
        total.unit = c.unit;
    }
    total
}

/// Compare one output region (`compare`).
fn compare_one(out: &TensorLayout, want: &Memory, got: &Memory) -> Comparison {
    if out.format.block_scaled() {
        let differing = (out.base..out.base + out.size_beats())
            .filter(|&b| got.beat_hex(b as usize) != want.beat_hex(b as usize))
            .count();
        return Comparison {
            differing,
            unit: "beats (elements and block scales)",
        };
    }
    let (g, w) = (read_tensor(got, out), read_tensor(want, out));
    Comparison {
        differing: g.data.iter().zip(&w.data).filter(|(a, b)| a != b).count(),
        unit: "values",
    }
}

/// Run the program on the ISA interpreter (every engine of the design, with the stream
/// links between them); its memory afterwards.
pub fn interpret(design: &Design, program: &Program) -> Result<Memory, InterpError> {
    let mut mem = program.dmem.clone();
    match &program.elastic {
        Some(e) => {
            crate::interp::run_system(design, &e.programs, &mut mem, None)?;
        }
        None => Engine::new(design, design.cores()[0].1).run(&program.instrs, &mut mem)?,
    }
    Ok(mem)
}
