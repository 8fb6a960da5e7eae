//! Concats of computed tensors, stored in place: each operand a view of the concat's
//! tensor at its first channel tile, operands padded to whole channel tiles when only
//! convolutions read the concat (whose weights then get zero rows at the gaps).

use super::{Concat, Source};
use crate::compiler::CompileError;
use crate::design::Unit;
use crate::model::lower::{Lowered, Stencil, Taps};
use crate::model::{Layer, Model};

/// A concat: of model inputs only, the host joins them as it writes them (a host-written
/// tensor); otherwise every operand is stored in place as a view of the concat's tensor,
/// which needs each operand but the last to fill whole channel tiles.
pub(super) fn concat(
    model: &Model,
    l: &Layer,
    unit: &Unit,
    single: bool,
    (inputs, concats): (&mut Vec<Source>, &mut Vec<Concat>),
) -> Result<(), CompileError> {
    let host = |t: &str| inputs.iter().any(|s| s.name == t && s.joins.is_empty());
    if l.inputs.iter().all(|t| host(t)) {
        inputs.push(Source {
            name: l.name.clone(),
            shape: l.out,
            format: l.out_format,
            joins: l.inputs.clone(),
            im2col: None,
        });
        return Ok(());
    }
    let t = unit.cpf as usize;
    // An operand that does not fill its last channel tile: the next one starts at the next
    // tile, which leaves stored channels that are none of the concat's. Only integer
    // windows (groups 1, not transposed) may read such a concat: their weights get zero
    // rows there.
    let chans: Vec<usize> = l
        .inputs
        .iter()
        .map(|i| model.shape_of(i).expect("input exists")[2])
        .collect();
    let convs_read = || {
        let readers: Vec<&Layer> = model
            .layers
            .iter()
            .filter(|m| m.inputs.contains(&l.name))
            .collect();
        !readers.is_empty()
            && readers.iter().all(|m| {
                m.inputs.len() == 1
                    && matches!(m.prec, crate::numeric::Precision::Int(_))
                    && matches!(
                        m.op.get().lower(m),
                        Lowered::Stencil(Stencil {
                            transposed: false,
                            taps: Taps::Weighted { groups: 1, .. },
                            ..
                        })
                    )
            })
    };
    let padded = chans[..chans.len() - 1]
        .iter()
        .any(|c| !c.is_multiple_of(t));
    for (k, i) in l.inputs.iter().enumerate() {
        let c = chans[k];
        if k + 1 < l.inputs.len() && !c.is_multiple_of(t) && !(single && convs_read()) {
            return Err(CompileError::new(
                Some(&l.name),
                format!("{i} has {c} channels; a concat of computed tensors is stored in place, so every operand but the last must fill whole channel tiles of {t} (cpf), unless only integer convolutions read the concat (on one engine)"),
                format!("give {i} a multiple of {t} channels, or put it last"),
            ));
        }
        let used = concats.iter().any(|c| c.inputs.contains(i))
            || concats.iter().any(|c| c.name == *i)
            || inputs.iter().any(|s| s.name == *i && !s.joins.is_empty());
        if used {
            return Err(CompileError::new(
                Some(&l.name),
                format!("{i} is already part of another concat; an operand is stored in place in one concat only"),
                "concat it once, or copy it first",
            ));
        }
    }
    let mut offsets = Vec::new();
    let mut next = 0;
    for &c in &chans {
        offsets.push(next);
        next += if padded { c.div_ceil(t) * t } else { c };
    }
    let stored = offsets.last().copied().unwrap_or(0) + chans.last().copied().unwrap_or(0);
    concats.push(Concat {
        name: l.name.clone(),
        inputs: l.inputs.clone(),
        shape: [l.out[0], l.out[1], stored],
        format: l.out_format,
        offsets,
    });
    Ok(())
}

/// A weighted window (a convolution) reading a concat whose operands are padded to whole
/// channel tiles of `cpf`: its work with zero weight rows at the stored channels that are
/// none of the concat's, the stored channel count, and the concat's channels in each
/// stored tile; None for any other layer.
pub(super) fn through_padded(
    model: &Model,
    concats: &[Concat],
    l: &Layer,
    work: &Lowered,
    cpf: u32,
) -> Option<(Lowered, usize, Vec<usize>)> {
    let c = concats.iter().find(|c| c.name == l.inputs[0])?;
    let chans: Vec<usize> = c
        .inputs
        .iter()
        .map(|i| model.shape_of(i).expect("input exists")[2])
        .collect();
    let cin: usize = chans.iter().sum();
    let stored = c.shape[2];
    let Some(Stencil {
        kh,
        kw,
        cout,
        taps: Taps::Weighted { weights, .. },
        ..
    }) = work.stencil()
    else {
        return None;
    };
    if stored == cin {
        return None;
    }
    let at = c.stored_channels(&chans);
    let mut w = vec![0; kh * kw * stored * cout];
    for tap in 0..kh * kw {
        for (ci, &s) in at.iter().enumerate() {
            for co in 0..*cout {
                w[(tap * stored + s) * cout + co] = weights[(tap * cin + ci) * cout + co];
            }
        }
    }
    let mut work = work.clone();
    if let Lowered::Stencil(Stencil {
        taps: Taps::Weighted { weights, .. },
        ..
    }) = &mut work
    {
        *weights = w;
    }
    let t = cpf as usize;
    let mut real = vec![0; stored.div_ceil(t)];
    for s in at {
        real[s / t] += 1;
    }
    Some((work, stored, real))
}
