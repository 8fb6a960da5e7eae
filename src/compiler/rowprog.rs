//! A row node's program as the row unit runs it: the accumulator rows its passes read (per
//! pass its constants, its spline table, then tile by tile its parameter rows), which
//! `encode` writes to memory and the schedule loads before the passes, and the flags of
//! each pass's `rows` instruction.

use crate::interp::{const_rows, param_words, table_rows, with_stages};
use crate::isa::Rows;
use crate::model::lower::RowWork;
use crate::numeric::rows::{Func, Lane, Pass};

/// The accumulator rows of a row program (each `lanes` FP32 or int32 words) and, per pass,
/// the first row of its constants and of its tile 0's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub rows: Vec<Vec<u32>>,
    pub passes: Vec<(u64, u64)>,
}

/// The image of `work` on `lanes` lanes over `channels` channels.
pub fn image(work: &RowWork, lanes: usize, channels: usize) -> Image {
    let tiles = channels.div_ceil(lanes);
    let mut rows: Vec<Vec<u32>> = Vec::new();
    let mut passes = Vec::new();
    let push_words = |rows: &mut Vec<Vec<u32>>, words: &[u32], n: u64| {
        for k in 0..n as usize {
            rows.push(
                (0..lanes)
                    .map(|l| words.get(k * lanes + l).copied().unwrap_or(0))
                    .collect(),
            );
        }
    };
    for p in &work.passes {
        let r = flags(p);
        let consts = rows.len() as u64;
        push_words(&mut rows, &p.consts.words(), const_rows(lanes));
        if let Func::Spline(s) = &p.stages.func {
            push_words(&mut rows, &s.words(), table_rows(lanes));
        }
        let params = rows.len() as u64;
        for t in 0..tiles {
            let lane_params: Vec<Lane> = (0..lanes)
                .map(|l| p.lanes.get(t * lanes + l).copied().unwrap_or_default())
                .collect();
            rows.extend(param_words(&r, &lane_params));
        }
        passes.push((consts, params));
    }
    Image { rows, passes }
}

/// The flags of pass `p`'s `rows` instruction (addresses and counts left at zero).
pub fn flags(p: &Pass) -> Rows {
    Rows {
        init: true,
        ..with_stages(Rows::default(), &p.stages)
    }
}
