//! Hand-off tokens as steps: a token sent down the engine's stream links after a band, or
//! taken from the link into it before one.

use crate::compiler::step::{Res, Step};
use crate::isa::{Buffer, Instr, Op as IsaOp, Transfer};

/// The hand-off token of `rows` rows: a store from output rows 0.. down the stream, or a
/// load from the stream into input rows 0.. (overwritten by the frame's loads before
/// anything reads them).
pub(super) fn token(node: usize, store: bool, rows: u64) -> Step {
    let (buffer, region) = if store {
        (Buffer::Output, Res::Spad(Buffer::Output, 0, rows))
    } else {
        (Buffer::Input, Res::Spad(Buffer::Input, 0, rows))
    };
    let t = Transfer {
        buffer,
        spad_addr: 0,
        ext_addr: 0,
        count0: rows,
        stride0: 0,
        count1: 1,
        stride1: 0,
        prec: 0,
        stream: true,
        ..Transfer::default()
    };
    let (op, reads, writes) = if store {
        (IsaOp::Store(t), vec![region], vec![])
    } else {
        (IsaOp::Load(t), vec![], vec![region])
    };
    Step {
        instr: Instr::new(op),
        reads,
        writes,
        node,
    }
}
