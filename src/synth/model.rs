//! The resource model: what one engine (one replica of a unit) takes on Xilinx UltraScale+
//! (`hwgen synth --target xilinx`), linear in the unit's parameters, so that a design-space
//! search can price a Design without synthesizing it. The constants are fitted by
//! `scripts/fit_resources.sh`, which synthesizes one-unit int8 and int16 designs of several
//! array sizes, scratchpad depths and memory widths (and multi-engine ones for `top`) and
//! prints these lines with the model's error on
//! configurations it was not fitted on. LUT RAM is fitted on what remains once the part
//! the model derives from the primitives is taken out (`derived_lutram`). The features:
//! the array's MACs (cpf x kpf), the output lanes (kpf: the vector unit's
//! requantization), the scratchpads' Kbit (input, weight, both accumulator banks,
//! output), a constant (control, load/store units and the instruction queue at the
//! default `imem_depth`), and the pairs of MACs that share one multiplier (cpf x kpf / 2
//! under `[array] pack_macs`, else 0). It covers the units F-CAD's decoder needs (integer
//! datatypes, the vector unit's requantization, bias and activations); a window unit
//! (depthwise convolution and pooling) and a row unit (transformers) are not in it, and
//! `engine` refuses units with one.
//!
//! Beyond those, two features for what `scripts/synth_table4.sh` found the int8-only fit
//! missing: the MACs' operand bits beyond 8 + 8 (int16 units had synthesized to 20% more
//! LUTs and 32% more FFs than it said) and the row bits beyond one memory beat (a unit whose
//! rows span two beats took about 5% more LUTs). `top` models the top level (links,
//! arbiters, CSRs) from `top_features`; it is the weakest part, 19-25% under on its
//! held-out designs.
//!
//! Synthesis maps one 8-bit MAC to one DSP48E2 (DSPS: one per MAC, two per output lane for
//! the requantization multiply, one in the load unit); with `pack_macs` two MACs share
//! one (`hwgen_mac_int_pair`), as F-CAD counts two 8-bit MACs per DSP.

use crate::design::{Design, Unit, VectorOps};

// FITTED by scripts/fit_resources.sh (Yosys 0.23, synth_xilinx -family xcup) on 14
// one-unit designs (the 8 int8 ones below, and int16 4x4/8x8/16x16 and int8 units whose
// rows span two beats; held-out now also int16 16x16 and 8x8 and a packed 16x16 on 64-bit
// memory: LUTs 1.5% mean / 4.0% max, LUT RAM 2.6% / 7.2%, FFs 0.7% / 1.4%, BRAM18 4.8% /
// 11.2%, DSPs exact). The top level on 8 multi-engine designs; held out (a decoder-shaped
// 9-engine design, 12 engines on 12 ports) it under-predicts LUTs by 19-25% and LUT RAM by
// 21-25%: its features do not yet capture the arbiters and link FIFOs well. Earlier fit, int8 only:
// 8 one-unit int8 designs (cpf = kpf 4, 8, 16; scratchpads 256/256/128/128 and
// 1024/1024/512/512 rows; three of them with pack_macs); error on 5 held-out designs (4 and
// 1024/1024/512/512, 8 and 512/512/256/256, 16 and 512/1024/256/512; the last two also
// packed): DSPs exact, BRAM18 mean 4.0% max 6.5%, LUTs 1.1% / 2.6%, LUT RAM exact (once
// `derived_lutram` is taken out), FFs 0.7% / 1.2%.
// Features: [cpf x kpf, kpf, scratchpad Kbit, 1, pairs sharing a multiplier, operand bits
// beyond 8 + 8 per 16 (per MAC), row bits beyond a beat].
pub const DSPS: [f64; FEATURES] = [1.0, 2.0, 0.0, 1.0, -1.0, 0.0, 0.0];
pub const BRAM18: [f64; FEATURES] = [-0.0382, 2.7025, 0.0279, 13.6309, -0.0019, 0.0388, -0.0083];
pub const LUTS: [f64; FEATURES] = [
    30.5295, 1361.8566, -0.0984, 1782.6527, 3.6019, 40.0527, -1.6901,
];
pub const LUTRAM: [f64; FEATURES] = [-0.1592, 17.1746, -0.0085, 699.1731, -0.117, 1.1534, -0.5757];
pub const FFS: [f64; FEATURES] = [
    67.5991, 286.057, -0.4838, 2158.6076, 16.5329, 50.6637, 0.0315,
];
// The top level (`top_features`), fitted on its share of multi-engine designs.
pub const TOP_LUTS: [f64; TOP_FEATURES] = [338.015, -1.246, 161.3226, -210.0139, 889.4853];
pub const TOP_LUTRAM: [f64; TOP_FEATURES] = [-13.6464, 0.3497, 97.8381, 23.8416, -17.1177];
pub const TOP_FFS: [f64; TOP_FEATURES] = [42.187, -0.1152, 40.6644, 10.4932, 101.2734];
// END FITTED

/// The resources the model predicts.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Predicted {
    pub dsps: f64,
    pub bram18: f64,
    /// Logic LUTs.
    pub luts: f64,
    /// LUTs used as memory: the engine's FIFOs, an output buffer of at most
    /// `LUTRAM_OUTPUT_DEPTH` rows, a hand-off buffer of at most 64 beats. A part's LUTs
    /// hold both (budgets add them).
    pub lutram: f64,
    pub ffs: f64,
}

/// How many features an engine has (`features`).
pub const FEATURES: usize = 7;

/// The model's features of one engine of unit `u` of design `d`: the array's MACs, the
/// output lanes, the scratchpads' Kbit, a constant, the pairs of MACs sharing one
/// multiplier (`pack_macs`), the MACs' operand bits beyond two 8-bit operands (in 8-bit
/// MACs: 1 per MAC for int16 x int16), and the bits of input, weight and output rows
/// beyond one memory beat (rows the load and store units move in several beats).
pub fn features(d: &Design, u: &Unit) -> [f64; FEATURES] {
    let b = &u.buffers;
    let rows = |depth: u32, bits: u32| u64::from(depth) * u64::from(bits);
    let bits = rows(b.input_depth, u.input_row_bits())
        + rows(b.weight_depth, u.weight_row_bits())
        + u64::from(u.acc_banks()) * rows(b.accumulator_depth, u.acc_row_bits())
        + rows(b.output_depth, u.output_row_bits());
    let macs = f64::from(u.cpf * u.kpf);
    let operand_bits = f64::from(u.datatype.input_type().bits + u.datatype.weight_type().bits);
    let beat = d.memory.data_width_bits;
    let beyond = [u.input_row_bits(), u.weight_row_bits(), u.output_row_bits()]
        .iter()
        .map(|&w| w.saturating_sub(beat))
        .sum::<u32>();
    [
        macs,
        f64::from(u.kpf),
        bits as f64 / 1024.0,
        1.0,
        match d.pack_macs {
            true => f64::from(u.cpf * u.kpf / 2),
            false => 0.0,
        },
        macs * (operand_bits - 16.0).max(0.0) / 16.0,
        f64::from(beyond),
    ]
}

/// How many features the top level has (`top_features`).
pub const TOP_FEATURES: usize = 5;

/// The address width of every memory request (`MEM_ADDR_W` in `hwgen_top`).
const MEM_ADDR_BITS: u32 = 32;

/// The model's features of design `d`'s top level (what is outside its engines: the
/// stream links' FIFOs, the memory arbiters, the CSRs): the engines (each one's CSRs,
/// counters and stream ends), the request bits the arbiters multiplex (engine e uses port
/// e mod ports, so the ports merge engines - ports requests of an address and a beat
/// each beyond their first), the links' FIFO Kbit, the ports, and a constant.
pub fn top_features(d: &Design) -> [f64; TOP_FEATURES] {
    let engines = d.cores().len() as u32;
    let ports = d.memory.ports.min(engines.max(1));
    let w = d.memory.data_width_bits;
    let fifo_bits: u64 = d
        .links()
        .iter()
        .map(|l| u64::from(l.depth) * u64::from(w))
        .sum();
    [
        f64::from(engines),
        f64::from((engines - ports) * (w + MEM_ADDR_BITS + 1)),
        fifo_bits as f64 / 1024.0,
        f64::from(ports),
        1.0,
    ]
}

fn dot<const N: usize>(w: &[f64; N], x: &[f64; N]) -> f64 {
    w.iter().zip(x).map(|(a, b)| a * b).sum::<f64>().max(0.0)
}

/// The vector unit the fit was made on (the decoder's: requantization, bias, ReLU and
/// leaky ReLU; no pooling, no elementwise add).
pub const FITTED_VECTOR: VectorOps = VectorOps {
    bias: true,
    relu: true,
    leaky_relu: true,
    maxpool: false,
    add: false,
};

/// One engine of unit `u` of design `d`; an error says why the unit is outside what the
/// model was fitted on.
pub fn engine(d: &Design, u: &Unit) -> Result<Predicted, String> {
    let ops = &d.vector;
    if *ops != FITTED_VECTOR {
        return Err(format!(
            "the model is fitted on the vector ops {} only; this design's are {}",
            FITTED_VECTOR.names().join(", "),
            ops.names().join(", ")
        ));
    }
    if u.window.is_some() {
        return Err("the model is fitted on units without a window unit".to_string());
    }
    if u.rows.is_some() {
        return Err("the model is fitted on units without a row unit (its FP32 lanes, statistics and transposer, and the array's zero-point correction, are not in it)".to_string());
    }
    if !u
        .datatype
        .precisions
        .iter()
        .all(|p| matches!(p, crate::numeric::Precision::Int(_)))
    {
        return Err("the model is fitted on integer datatypes".to_string());
    }
    let x = features(d, u);
    Ok(Predicted {
        dsps: dot(&DSPS, &x),
        bram18: dot(&BRAM18, &x),
        luts: dot(&LUTS, &x),
        lutram: dot(&LUTRAM, &x) + derived_lutram(u),
        ffs: dot(&FFS, &x),
    })
}

/// LUTs of LUT RAM for a memory of `depth` rows of `width` bits: RAM64M8s, 64 x 7 bits
/// in 8 LUTs.
fn lutram_luts(depth: u32, width: u32) -> f64 {
    8.0 * f64::from(width.div_ceil(7) * depth.div_ceil(64))
}

/// The deepest output buffer synth_xilinx puts in LUT RAM (measured: 128 rows went to
/// LUT RAM at 32, 64 and 128 bits, 256 rows to block RAM).
pub const LUTRAM_OUTPUT_DEPTH: u32 = 128;

/// The part of an engine's LUT RAM derived rather than fitted: its output buffer when
/// it is at most `LUTRAM_OUTPUT_DEPTH` rows (8 x ceil(W/7) x ceil(D/64); 160 LUTs for
/// 128 rows of 64 bits, as synthesized). `scripts/fit_resources.sh` fits the rest (the
/// FIFOs of the queues and of the load and store units: 696 + 14 per output lane, exact
/// on all 13 samples once this part is taken out).
pub fn derived_lutram(u: &Unit) -> f64 {
    let depth = u.buffers.output_depth;
    match depth <= LUTRAM_OUTPUT_DEPTH {
        true => lutram_luts(depth, u.output_row_bits()),
        false => 0.0,
    }
}

/// A hand-off buffer of `depth` beats of `width` bits (`handoff_depth`), as synth_xilinx
/// maps it (an `hwgen_sram`), derived from the primitives rather than fitted: up to 64
/// beats in LUT RAM (RAM64M8, 64 x 7 bits in 8 LUTs), deeper in RAMB18s of 512 x 36 bits.
/// Measured on an 8x8 unit at 64 bits: 64 beats 80 LUTs of LUT RAM, 512 beats 2 BRAM18,
/// 4096 beats 16, no other logic that changes.
pub fn handoff_buffer(depth: u32, width: u32) -> Predicted {
    match depth {
        0 => Predicted::default(),
        d if d <= LUTRAM_DEPTH => Predicted {
            lutram: lutram_luts(depth, width),
            ..Predicted::default()
        },
        _ => Predicted {
            bram18: f64::from(width.div_ceil(36) * depth.div_ceil(512)),
            ..Predicted::default()
        },
    }
}

/// The deepest hand-off buffer Yosys maps to LUT RAM.
const LUTRAM_DEPTH: u32 = 64;

/// One replica of unit `u` of `design`: its engine and its hand-off buffer.
pub fn replica(design: &Design, u: &Unit) -> Result<Predicted, String> {
    let e = engine(design, u)?;
    let b = handoff_buffer(u.handoff_depth, design.memory.data_width_bits);
    Ok(Predicted {
        bram18: e.bram18 + b.bram18,
        lutram: e.lutram + b.lutram,
        ..e
    })
}

/// The top level of `design` (stream links' FIFOs, memory arbiters, CSRs): no DSP or
/// block RAM; logic LUTs, LUT RAM and flip-flops linear in `top_features`.
pub fn top(design: &Design) -> Predicted {
    let x = top_features(design);
    Predicted {
        luts: dot(&TOP_LUTS, &x),
        lutram: dot(&TOP_LUTRAM, &x),
        ffs: dot(&TOP_FFS, &x),
        ..Predicted::default()
    }
}

/// The whole of `design`: every engine and the top level.
pub fn design(design: &Design) -> Result<Predicted, String> {
    let mut p = top(design);
    for (_, u, _) in design.cores() {
        let e = replica(design, u)?;
        p.dsps += e.dsps;
        p.bram18 += e.bram18;
        p.luts += e.luts;
        p.lutram += e.lutram;
        p.ffs += e.ffs;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-off buffers at 64 bits against `hwgen synth --target xilinx` of an 8x8 unit
    /// with one (Yosys 0.23): 64 beats took 80 LUTs of LUT RAM and no block RAM; 128 and
    /// 512 beats 2 BRAM18 more than the unit without; 4096 beats 16 more; the unit's other
    /// counts did not change.
    #[test]
    fn hand_off_buffers_as_synthesized() {
        let b = |d| handoff_buffer(d, 64);
        assert_eq!((b(64).lutram, b(64).bram18), (80.0, 0.0));
        assert_eq!((b(128).lutram, b(128).bram18), (0.0, 2.0));
        assert_eq!(b(512).bram18, 2.0);
        assert_eq!(b(4096).bram18, 16.0);
        assert_eq!(b(0), Predicted::default());
    }

    /// An 8x8 int8 unit with scratchpads of 256/256/128/128 rows: the features by hand
    /// (64-bit input, weight and output rows, 256-bit accumulator rows in two banks:
    /// 16384 + 16384 + 65536 + 8192 bits = 104 Kbit), and the counts `hwgen synth --target
    /// xilinx` gave for it (81 DSPs: 64 in the array, 2 per lane, 1 in the load unit); with
    /// packed multipliers 49.
    #[test]
    fn an_8x8_unit() {
        let src = "name = \"m\"\n[datatype]\ninput = \"int8\"\nweight = \"int8\"\naccumulator = \"int32\"\noutput = \"int8\"\n[buffers]\ninput_depth = 256\nweight_depth = 256\naccumulator_depth = 128\noutput_depth = 128\n[memory]\ndata_width_bits = 64\n[[branch]]\nname = \"b\"\n[[branch.unit]]\nname = \"u\"\ncpf = 8\nkpf = 8\n";
        let d = crate::config::parse_str(src, "m.toml", "m").unwrap();
        let u = &d.branches[0].units[0];
        let fitted = Design {
            vector: FITTED_VECTOR,
            ..d.clone()
        };
        let packed = Design {
            pack_macs: true,
            ..fitted.clone()
        };
        assert_eq!(features(&d, u), [64.0, 8.0, 104.0, 1.0, 0.0, 0.0, 0.0]);
        assert_eq!(
            features(&packed, u),
            [64.0, 8.0, 104.0, 1.0, 32.0, 0.0, 0.0]
        );
        assert!(engine(&d, u).unwrap_err().contains("vector ops"));
        let p = engine(&fitted, u).unwrap();
        assert_eq!(p.dsps.round(), 81.0);
        // Synthesis: 35 BRAM18, 14371 LUTs, 968 LUTs of LUT RAM (the 128-row output
        // buffer's 160, derived, and 808 for the FIFOs), 8695 FFs; the fit leaves a
        // residual.
        assert!((p.bram18 - 35.0).abs() <= 0.07 * 35.0, "{p:?}");
        assert!((p.luts - 14371.0).abs() <= 0.03 * 14371.0, "{p:?}");
        assert_eq!(derived_lutram(u), 160.0);
        assert!((p.lutram - 968.0).abs() <= 0.05 * 968.0, "{p:?}");
        assert!((p.ffs - 8695.0).abs() <= 0.02 * 8695.0, "{p:?}");
        // One engine on one port: no request to multiplex, no link.
        assert_eq!(top_features(&fitted), [1.0, 0.0, 0.0, 1.0, 1.0]);
        assert_eq!(design(&fitted).unwrap().dsps.round(), 81.0);
        // Packed: the array's 64 MACs on 32 DSPs, 16 + 1 besides them (hand count; the
        // packed held-out 8x8 unit of the fit synthesizes to 49).
        assert_eq!(engine(&packed, u).unwrap().dsps.round(), 49.0);
        assert_eq!(design(&packed).unwrap().dsps.round(), 49.0);
        // A row unit (and the zero-point correction that comes with it) is outside the fit.
        let rows =
            crate::config::parse_str(&format!("{src}\n[rows]\nenabled = true\n"), "m.toml", "m")
                .unwrap();
        let with_rows = &rows.branches[0].units[0].clone();
        let rows = Design {
            vector: FITTED_VECTOR,
            ..rows
        };
        assert!(engine(&rows, with_rows).unwrap_err().contains("row unit"));
    }

    /// The top level's features of two units of two replicas each on two 64-bit ports, by
    /// hand: 4 engines; ports merge 4 - 2 requests beyond their first, each of 64 + 32 + 1
    /// bits (beat, address, write flag) = 194; replica r of u1 feeds replica r of u2, two
    /// links of 4 beats of 64 bits = 0.5 Kbit.
    #[test]
    fn top_features_by_hand() {
        let src = "name = \"m\"\n[datatype]\ninput = \"int8\"\nweight = \"int8\"\naccumulator = \"int32\"\noutput = \"int8\"\n[memory]\ndata_width_bits = 64\nports = 2\n[[branch]]\nname = \"b\"\nfifo_depth = 4\n[[branch.unit]]\nname = \"u1\"\ncpf = 8\nkpf = 8\nh = 2\n[[branch.unit]]\nname = \"u2\"\ncpf = 8\nkpf = 8\nh = 2\n";
        let d = crate::config::parse_str(src, "m.toml", "m").unwrap();
        assert_eq!(top_features(&d), [4.0, 194.0, 0.5, 2.0, 1.0]);
    }
}
