//! allocate: place every tensor, every weight tile and every bias row in external memory,
//! reusing the memory of dead tensors on a single engine (engines of an elastic Design run
//! layers concurrently, so a dead tensor's space is never safe to reuse there).
//! Activations are stored as channel tiles of cpf channels, one pixel per scratchpad row,
//! without a border: the padding a convolution reads outside a tensor is written as zero
//! rows by its loads. Where units of different array sizes run stages, every tensor is
//! stored pixel by pixel in tiles of the largest unit's cpf, and each stage sees it as rows
//! of its own width ([`Alloc::for_unit`]).

mod handoff;

pub use super::legalize::window;
use super::legalize::{Graph, Node};
use super::map::{Mapped, Mapping};
use crate::compiler::{CompileError, TensorLayout};
use crate::design::{Design, Unit};
use crate::model::lower::{Lowered, Stencil, Taps};
pub use handoff::{decide as handoffs, Handoff, Handoffs, HANDOFF_BASE, HANDOFF_REGION};
use std::collections::HashMap;

/// A cpf x kpf block of weights: row r (an input channel) holds kpf output channels.
pub type WeightTile = Vec<Vec<i64>>;

/// A kernel tap of one input-channel tile: (ict, ky, kx).
pub type Tap = (usize, usize, usize);

#[derive(Debug, Clone)]
pub struct Alloc {
    pub tensors: HashMap<String, TensorLayout>,
    /// (node, oct) → first beat of the node's weight tiles for that output-channel tile, and
    /// the taps (ict, ky, kx) stored there one after another, `weight_tile_rows` rows each.
    pub weights: HashMap<(usize, usize), (u64, Vec<Tap>)>,
    /// The identity tile used by pooling and add layers.
    pub identity: u64,
    /// The identity tile of each unit size (cpf) that runs a node.
    pub identities: std::collections::BTreeMap<usize, u64>,
    /// A table of cpf input rows, row m - 1 holding m ones and then zeros, and its beats per
    /// row: the rows that sum a global average pool's pixels (`schedule::gap`). Allocated
    /// when the graph has an average pool to one pixel and the unit's inputs are integers.
    pub ones: Option<(u64, u64)>,
    /// (node, oct) → first beat of the kh x kw weight rows a node in the window unit reads
    /// for channel tile oct (`window_weight_row`): a depthwise convolution's taps, or an
    /// average pool's rows of ones (one block for every channel tile). A max-pool has none.
    pub window_weights: HashMap<(usize, usize), u64>,
    /// (node, oct) → first beat of the bias row.
    pub bias: HashMap<(usize, usize), u64>,
    /// node → its untied bias, one row of a channel tile per output pixel, loaded into the
    /// accumulator before the first matmul.
    pub untied: HashMap<usize, UntiedBias>,
    /// node → first beat of its row program's accumulator rows (`rowprog::image`).
    pub rows: HashMap<usize, u64>,
    /// Beats per weight row, bias row and activation row.
    pub weight_beats: u64,
    pub acc_beats: u64,
    pub act_beats: u64,
    /// Rows of a weight-buffer slot: cpf, plus (MX) the rows of the kpf column scales.
    pub weight_tile_rows: u64,
    /// External memory holds the host-written tensors from beat 0 to `inputs_end`, then
    /// weights, identity tile and biases, then from `activations` to `end` every other
    /// tensor.
    pub inputs_end: u64,
    pub activations: u64,
    pub end: u64,
    /// The tensors stages hand on chip (at virtual beats from `HANDOFF_BASE`, outside
    /// external memory), and those a unit with a hand-off buffer reads from memory instead.
    pub handoffs: Handoffs,
}

/// Where a node's untied bias lives and how one pixel of a channel tile is stored: an
/// accumulator row, unless fewer beats hold the layer's channels (when they fill less than
/// a row) in the narrowest of the widened integer widths (`isa::WIDEN_BITS`) or the
/// accumulator's that holds every value of the layer's untied bias. The load reads those
/// beats (`Transfer::row_beats`), sign-extends narrow integers into their lanes
/// (`Transfer::widen`) and writes the lanes above zero: a 3-channel layer's int32 biases on
/// a 16-lane accumulator are one 128-bit beat per pixel, not four; 16 channels of
/// int16-sized values two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UntiedBias {
    /// First beat: [oct][oy][ox], `beats` each.
    pub base: u64,
    /// Bits of an element in memory, and beats per pixel of a channel tile.
    pub bits: u32,
    pub beats: u64,
    /// The load's `row_beats` (0: whole rows) and `widen` (0: accumulator elements).
    pub row_beats: u64,
    pub widen: u64,
}

impl UntiedBias {
    fn of(n: &Node, u: &Unit, mem_w: u64, base: u64) -> UntiedBias {
        let acc = u.datatype.acc_type();
        let whole = u64::from(u.acc_row_bits()).div_ceil(mem_w);
        let integer = matches!(
            u.datatype.precisions.get(n.prec),
            Some(crate::numeric::Precision::Int(_))
        );
        let values: &[i64] = &n.post().untied_bias;
        let fits = |bits: u32| {
            let t = crate::numeric::IntType::new(true, bits);
            values.iter().all(|&v| t.holds(v))
        };
        let mut narrow: Vec<u32> = crate::isa::WIDEN_BITS.to_vec();
        narrow.sort_unstable();
        let bits = narrow
            .into_iter()
            .find(|&b| integer && b < acc.bits && fits(b))
            .unwrap_or(acc.bits);
        let lanes = (n.out[2] as u64).min(u64::from(u.cpf));
        let beats = (lanes * u64::from(bits)).div_ceil(mem_w);
        if beats >= whole {
            return UntiedBias {
                base,
                bits: acc.bits,
                beats: whole,
                row_beats: 0,
                widen: 0,
            };
        }
        UntiedBias {
            base,
            bits,
            beats,
            row_beats: beats,
            widen: match bits < acc.bits {
                true => crate::isa::widen_code(bits).expect("a widened width"),
                false => 0,
            },
        }
    }
}

/// Beats of a row of a tensor in memory: the elements of a channel tile of `tile` channels
/// in the tensor's own format (an integer Design's input and output types may differ),
/// then for a block-scaled format one beat with the scale.
pub fn row_beats(tile: usize, format: crate::numeric::Format, mem_w: u64) -> u64 {
    (tile as u64 * u64::from(format.code_type().bits)).div_ceil(mem_w)
        + u64::from(format.block_scaled())
}

/// Beats of an activation row of unit `u`: its elements, then for a block-scaled design a
/// beat with the scale (rows of the other formats leave it out).
pub fn act_beats(design: &Design, u: &Unit) -> u64 {
    let mem_w = u64::from(design.memory.data_width_bits);
    u64::from(u.input_elem_bits()).div_ceil(mem_w) + u64::from(u.scale_bits() > 0)
}

/// Rows of one of node `n`'s weight tiles (`Unit::layer_tile_rows`).
pub fn tile_rows(u: &crate::design::Unit, n: &Node) -> u64 {
    u64::from(u.layer_tile_rows(n.prec))
}

/// The mapping with every tensor placed: the placement, and per stage the placement as
/// its unit sees it when units of different sizes run stages (empty otherwise: every stage
/// sees `alloc`).
pub struct Placed {
    pub mapped: Mapped,
    pub alloc: Alloc,
    pub allocs: Vec<Alloc>,
}

impl Placed {
    /// The placement stage `k` sees.
    pub fn alloc_of(&self, k: usize) -> &Alloc {
        self.allocs.get(k).unwrap_or(&self.alloc)
    }
}

/// Place the tensors of `mapped`: on a single engine reusing dead tensors' memory (and
/// within the ISA's addresses; an elastic run's frames are checked when they are laid out,
/// `frames`).
pub fn run(design: &Design, mapped: Mapped) -> Result<Placed, CompileError> {
    let (alloc, allocs) = placements(design, &mapped.g, &mapped.map);
    if mapped.map.single {
        addressable(&alloc)?;
    }
    Ok(Placed {
        mapped,
        alloc,
        allocs,
    })
}

/// The placement of graph `g` mapped as `m`, and per stage the placement as its unit sees
/// it when units of different sizes run stages (empty otherwise).
pub fn placements(design: &Design, g: &Graph, m: &Mapping) -> (Alloc, Vec<Alloc>) {
    let handoffs = handoff::decide(design, g, m);
    if !m.mixed {
        return (
            place(design, g, m.single, &|_| &g.unit, false, handoffs),
            Vec::new(),
        );
    }
    let mut units = vec![g.unit.clone(); g.nodes.len()];
    for (k, st) in m.stages.iter().enumerate() {
        for &i in &st.nodes {
            units[i] = m.unit(design, k).clone();
        }
    }
    let alloc = place(design, g, false, &|i| &units[i], true, handoffs);
    let allocs = (0..m.stages.len())
        .map(|k| alloc.for_unit(design, m.unit(design, k), &m.stages[k].nodes))
        .collect();
    (alloc, allocs)
}

/// The placement of a graph compiled on its unit alone, reusing dead tensors' memory (a
/// single engine's).
pub fn graph(design: &Design, g: &Graph) -> Alloc {
    place(design, g, true, &|_| &g.unit, false, Handoffs::default())
}

/// The placement fits the ISA's external addresses (checked before the memory image is
/// allocated).
fn addressable(alloc: &Alloc) -> Result<(), CompileError> {
    let addressable = 1u64 << crate::isa::EXT_ADDR_BITS;
    if alloc.end > addressable {
        return Err(CompileError::new(
            None,
            format!(
                "the model's tensors, weights and biases need {} beats of external memory; the ISA's {}-bit beat addresses reach {addressable}",
                alloc.end,
                crate::isa::EXT_ADDR_BITS
            ),
            "compile a smaller model (or split it), or use a wider memory.data_width_bits",
        ));
    }
    Ok(())
}

/// The weights of tile (oct, ict, ky, kx) of node `n`, or `None` when the tile connects no
/// input channel to an output channel (across groups, and off the diagonal of the identity
/// tiles that windows of sums or maxima stream).
pub fn weight_tile(
    n: &Node,
    cin: usize,
    t: usize,
    oct: usize,
    ict: usize,
    ky: usize,
    kx: usize,
) -> Option<WeightTile> {
    let mut tile = vec![vec![0i64; t]; t];
    let mut any = false;
    match n.work.stencil() {
        Some(Stencil {
            kw,
            cout,
            taps: Taps::Weighted {
                groups, weights, ..
            },
            ..
        }) => {
            let cin_g = cin / groups;
            let cout_g = cout / groups;
            for (r, row) in tile.iter_mut().enumerate() {
                let ci = ict * t + r;
                if ci >= cin {
                    continue;
                }
                for (c, v) in row.iter_mut().enumerate() {
                    let co = oct * t + c;
                    if co >= *cout || ci / cin_g != co / cout_g {
                        continue;
                    }
                    *v = weights[((ky * kw + kx) * cin_g + ci % cin_g) * cout + co];
                    // Structurally present, even if the trained values happen to be zero:
                    // every output tile must be written by at least one matmul.
                    any = true;
                }
            }
        }
        _ => {
            if oct != ict {
                return None;
            }
            for (r, row) in tile.iter_mut().enumerate() {
                if oct * t + r < cin {
                    row[r] = 1;
                    any = true;
                }
            }
        }
    }
    any.then_some(tile)
}

/// Whether tile (oct, ict) of node `n` exists (`weight_tile` is `Some`, for every tap),
/// without building it: a weighted window's connects an input channel to an output
/// channel of the same group; an identity tile is on the diagonal, over real channels.
pub fn tile_present(n: &Node, cin: usize, t: usize, oct: usize, ict: usize) -> bool {
    if !n.weighted() {
        return oct == ict && oct * t < cin;
    }
    let (groups, cout) = (n.stencil().groups(), &n.stencil().cout);
    if let Some((tt, zero)) = &n.zero_tiles {
        if *tt == t && zero.get(oct * cin.div_ceil(t) + ict) == Some(&true) {
            return false;
        }
    }
    let (cin_g, cout_g) = (cin / groups, cout / groups);
    let (ci0, ci1) = (ict * t, (ict * t + t).min(cin));
    let (co0, co1) = (oct * t, (oct * t + t).min(*cout));
    ci0 < ci1 && co0 < co1 && ci0 / cin_g <= (co1 - 1) / cout_g && co0 / cout_g <= (ci1 - 1) / cin_g
}

/// Row `ky * kw + kx` of the window weights of channel tile `oct` of a node in the window
/// unit: lane c holds the weight of tap (ky, kx) of channel oct * t + c (zero past the
/// channels); a window of sums' rows are ones.
pub fn window_weight_row(n: &Node, t: usize, oct: usize, ky: usize, kx: usize) -> Vec<i64> {
    match n.work.stencil() {
        Some(Stencil {
            kw,
            cout,
            taps: Taps::Weighted { weights, .. },
            ..
        }) => (0..t)
            .map(|c| {
                let co = oct * t + c;
                if co < *cout {
                    // A depthwise layer's weights are [kh][kw][1][cout].
                    weights[(ky * kw + kx) * cout + co]
                } else {
                    0
                }
            })
            .collect(),
        _ => vec![1; t],
    }
}

/// Where the weight tiles, bias rows and untied biases of every node go, from beat `next`.
struct Params {
    weights: HashMap<(usize, usize), (u64, Vec<Tap>)>,
    window_weights: HashMap<(usize, usize), u64>,
    bias: HashMap<(usize, usize), u64>,
    untied: HashMap<usize, UntiedBias>,
    rows: HashMap<usize, u64>,
    end: u64,
}

fn params<'u>(g: &Graph, mut next: u64, mem_w: u64, unit_of: &dyn Fn(usize) -> &'u Unit) -> Params {
    let mut weights = HashMap::new();
    let mut window_weights = HashMap::new();
    let mut bias = HashMap::new();
    let mut untied = HashMap::new();
    let mut rows = HashMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        let u = unit_of(i);
        if let Some(work) = n.work.rows().or(n.then.as_ref()) {
            let image = crate::compiler::rowprog::image(work, u.kpf as usize, n.out[2]);
            rows.insert(i, next);
            next += image.rows.len() as u64 * u64::from(u.acc_row_bits()) / mem_w;
        }
        if n.work.rows().is_some() {
            continue;
        }
        let t = u.cpf as usize;
        let weight_beats = u64::from(u.weight_row_bits()) / mem_w;
        let acc_beats = u64::from(u.acc_row_bits()) / mem_w;
        let cin = g.shape_of(&n.input)[2];
        let (kh, kw, _, _) = window(n);
        let octs = n.out[2].div_ceil(t);
        let icts = cin.div_ceil(t);
        let Some(stencil) = n.work.stencil() else {
            continue;
        };
        if !stencil.post.untied_bias.is_empty() {
            let ub = UntiedBias::of(n, u, mem_w, next);
            untied.insert(i, ub);
            next += (octs * n.out[0] * n.out[1]) as u64 * ub.beats;
        }
        if n.window {
            // kh x kw rows per channel tile; a window of sums' ones serve every tile.
            let rows = (kh * kw) as u64 * weight_beats;
            match &stencil.taps {
                Taps::Weighted { .. } => {
                    for oct in 0..octs {
                        window_weights.insert((i, oct), next);
                        next += rows;
                    }
                }
                Taps::Sum => {
                    for oct in 0..octs {
                        window_weights.insert((i, oct), next);
                    }
                    next += rows;
                }
                Taps::Max => {}
                Taps::Tensor { .. } => {
                    unreachable!("run-time weights never run in the window unit")
                }
            }
        }
        let b = &stencil.post.bias;
        if n.weighted() {
            for oct in 0..octs {
                if n.window {
                    if b.iter().any(|v| *v != 0) || n.per_channel() {
                        bias.insert((i, oct), next);
                        next += acc_beats * n.bias_rows() as u64;
                    }
                    continue;
                }
                let mut taps = Vec::new();
                for ict in 0..icts {
                    for ky in 0..kh {
                        for kx in 0..kw {
                            if tile_present(n, cin, t, oct, ict) {
                                taps.push((ict, ky, kx));
                            }
                        }
                    }
                }
                // Run-time weights are a tensor's rows: the taps, no memory of their own.
                let base = next;
                if stencil.weights_from().is_none() {
                    next += taps.len() as u64 * tile_rows(u, n) * weight_beats;
                }
                weights.insert((i, oct), (base, taps));
            }
            // The biases after the weights, one row per channel tile in order (each followed
            // by its scale row under per-channel requantization), so that a group's biases
            // arrive in one load.
            if !n.window && (b.iter().any(|v| *v != 0) || n.per_channel()) {
                for oct in 0..octs {
                    bias.insert((i, oct), next);
                    next += acc_beats * n.bias_rows() as u64;
                }
            }
        } else if !b.is_empty() {
            // The bias of a window of sums (an average pool's `-k^2 z`, a quantized add's
            // or mul's `-z`: `Post::bias`).
            for oct in 0..octs {
                bias.insert((i, oct), next);
                next += acc_beats * n.bias_rows() as u64;
            }
        }
    }
    Params {
        weights,
        window_weights,
        bias,
        untied,
        rows,
        end: next,
    }
}

impl Alloc {
    /// The placement as unit `u` sees it when it runs `nodes`: every tensor as rows of its
    /// cpf channels, its own rows' widths and identity tile, and the parameters of `nodes`
    /// only.
    pub fn for_unit(&self, design: &Design, u: &Unit, nodes: &[usize]) -> Alloc {
        let mem_w = u64::from(design.memory.data_width_bits);
        let t = u.cpf as usize;
        let mine = |i: &usize| nodes.contains(i);
        Alloc {
            tensors: self
                .tensors
                .iter()
                .map(|(k, l)| (k.clone(), l.view(t, row_beats(t, l.format, mem_w))))
                .collect(),
            weights: self
                .weights
                .clone()
                .into_iter()
                .filter(|((i, _), _)| mine(i))
                .collect(),
            window_weights: self
                .window_weights
                .clone()
                .into_iter()
                .filter(|((i, _), _)| mine(i))
                .collect(),
            bias: self
                .bias
                .clone()
                .into_iter()
                .filter(|((i, _), _)| mine(i))
                .collect(),
            untied: self
                .untied
                .clone()
                .into_iter()
                .filter(|(i, _)| mine(i))
                .collect(),
            rows: self
                .rows
                .clone()
                .into_iter()
                .filter(|(i, _)| mine(i))
                .collect(),
            identity: self.identities[&t],
            identities: self.identities.clone(),
            // Sized for the graph's unit: a unit of another size pools tap by tap.
            ones: None,
            weight_beats: u64::from(u.weight_row_bits()) / mem_w,
            acc_beats: u64::from(u.acc_row_bits()) / mem_w,
            act_beats: u64::from(u.input_elem_bits()).div_ceil(mem_w),
            weight_tile_rows: u64::from(u.weight_tile_rows()),
            handoffs: self.handoffs.clone(),
            ..*self
        }
    }
}

/// Rows of a unit's identity tile: its cpf element rows and, on a Design with MX
/// weights, the rows of the column scales that make each one 1.0 (`encode::write_params`).
pub fn identity_rows(u: &Unit) -> u32 {
    u.cpf + u.datatype.weight_scale_rows()
}

/// The identity tile of every unit size (and its beat for the graph's unit), and the table
/// of ones a global average pool sums with, placed from beat `*next`.
#[allow(clippy::type_complexity)]
fn constants<'u>(
    g: &'u Graph,
    next: &mut u64,
    mem_w: u64,
    unit_of: &dyn Fn(usize) -> &'u Unit,
) -> (
    std::collections::BTreeMap<usize, u64>,
    u64,
    Option<(u64, u64)>,
) {
    let u = &g.unit;
    let t = u.cpf as usize;
    let weight_beats = u64::from(u.weight_row_bits()) / mem_w;
    let mut identities = std::collections::BTreeMap::new();
    for i in 0..g.nodes.len() {
        let v = unit_of(i);
        if let std::collections::btree_map::Entry::Vacant(e) = identities.entry(v.cpf as usize) {
            e.insert(*next);
            *next += u64::from(identity_rows(v) * v.weight_row_bits()) / mem_w;
        }
    }
    let identity = *identities.entry(t).or_insert(*next);
    if identity == *next {
        *next += u64::from(identity_rows(u)) * weight_beats;
    }
    let in_format = u.datatype.primary().input();
    let gap = g.nodes.iter().any(|n| {
        matches!(&n.work, Lowered::Stencil(s) if s.taps == Taps::Sum)
            && n.residual.is_none()
            && n.out[..2] == [1, 1]
    });
    let ones = (gap && matches!(in_format, crate::numeric::Format::Int(_))).then(|| {
        let beats = row_beats(t, in_format, mem_w);
        let base = *next;
        *next += t as u64 * beats;
        (base, beats)
    });
    (identities, identity, ones)
}

/// An operand of a concat in place: its channel tiles inside the concat's tensor `whole`,
/// from tile `tile0` (`own` lays the operand out at a base).
fn view(whole: &TensorLayout, tile0: usize, own: impl Fn(u64) -> TensorLayout) -> TensorLayout {
    TensorLayout {
        pixel_stride: whole.pixel_stride,
        tile_stride: whole.tile_stride,
        ..own(whole.addr(tile0, 0, 0))
    }
}

fn place<'u>(
    design: &Design,
    g: &'u Graph,
    reuse: bool,
    unit_of: &dyn Fn(usize) -> &'u Unit,
    interleave: bool,
    handoffs: Handoffs,
) -> Alloc {
    let u = &g.unit;
    let t = u.cpf as usize;
    let mem_w = u64::from(design.memory.data_width_bits);
    let act_beats = act_beats(design, u);
    let beats_of = |name: &str| row_beats(t, g.format_of(name), mem_w);
    // An MX weight tile ends with the kpf column scales, 8 bits each, in whole rows.
    let weight_tile_rows = u64::from(u.weight_tile_rows());
    let weight_beats = u64::from(u.weight_row_bits()) / mem_w;
    let acc_beats = u64::from(u.acc_row_bits()) / mem_w;
    let mut next = 0u64;
    let mut tensors: HashMap<String, TensorLayout> = HashMap::new();
    let layout = |name: &str, shape: [usize; 3], pad: usize, base: u64| {
        let l = TensorLayout::tiled(name, shape, g.format_of(name), pad, t, beats_of(name), base);
        let l = l.sliced(g.planes_of(name));
        match interleave {
            true => l.interleaved(),
            false => l,
        }
    };
    // Tensors are stored without a zero border: loads write the padding a window reads
    // outside a tensor as zero rows (`schedule::padded`), so every tensor's memory can be
    // reused once it is dead.
    let pad_of = |_: &str| 0;
    // The tensors the host writes, one after another from beat 0. A model input that is an
    // operand of a concat in place is written inside the concat's tensor (placed here, for
    // the whole program), as a view like the concat's computed operands.
    for s in &g.inputs {
        if let Some((c, tile0)) = g.view_of(&s.name, t) {
            if !tensors.contains_key(&c.name) {
                let l = layout(&c.name, c.shape, pad_of(&c.name), next);
                next += l.size_beats();
                tensors.insert(c.name.clone(), l);
            }
            let whole = &tensors[&c.name];
            let v = view(whole, tile0, |b| {
                layout(&s.name, s.shape, pad_of(&s.name), b)
            });
            tensors.insert(s.name.clone(), v);
            continue;
        }
        let l = layout(&s.name, s.shape, pad_of(&s.name), next);
        next += l.size_beats();
        tensors.insert(s.name.clone(), l);
    }
    let inputs_end = next;

    // Weights, the identity tile of every unit size and biases.
    let (identities, identity, ones) = constants(g, &mut next, mem_w, unit_of);
    let params = params(g, next, mem_w, unit_of);
    next = params.end;
    // Activations: a tensor whose last reader has run frees its region for a later one.
    let activations = next;
    // Concats in place first, whole, for the life of the program: their operands are views.
    for c in &g.concats {
        if tensors.contains_key(&c.name) {
            continue;
        }
        let l = layout(&c.name, c.shape, pad_of(&c.name), next);
        next += l.size_beats();
        tensors.insert(c.name.clone(), l);
    }
    let mut regions = Regions {
        free: Vec::new(),
        next,
        reuse,
    };
    // Views live as long as their concat: only inputs of their own are freed.
    let mut live: Vec<String> = g
        .inputs
        .iter()
        .filter(|s| g.view_of(&s.name, t).is_none())
        .map(|s| s.name.clone())
        .collect();
    for (i, n) in g.nodes.iter().enumerate() {
        // A node whose output stays on chip reads its input while the next node runs.
        let last_use = |name: &str| {
            g.last_use(name)
                .map(|u| u + usize::from(g.nodes[u].fused_into_next))
        };
        live.retain(|name| {
            let dead = !g.is_output(name) && last_use(name).is_some_and(|u| u < i);
            if dead {
                let l = &tensors[name];
                regions.free.push((l.base, l.size_beats()));
            }
            !dead
        });
        // The phases of a transposed convolution share one tensor, placed at the first.
        let name = n.tensor();
        if tensors.contains_key(name) {
            continue;
        }
        let shape = n.place.as_ref().map_or(n.out, |p| p.shape);
        let pad = pad_of(name);
        if let Some((c, tile0)) = g.view_of(name, t) {
            // An operand of a concat in place: its channel tiles inside the concat's tensor.
            let v = view(&tensors[&c.name], tile0, |b| layout(name, shape, pad, b));
            tensors.insert(name.to_string(), v);
            continue;
        }
        // A tensor handed on chip: pixel by pixel (a band of rows is then one span of
        // beats, the ring's), at its virtual beats.
        if let Some(h) = handoffs.of(name) {
            let l =
                TensorLayout::tiled(name, shape, g.format_of(name), 0, t, beats_of(name), h.base);
            tensors.insert(name.to_string(), l.interleaved());
            continue;
        }
        let base = regions.take(layout(name, shape, pad, 0).size_beats());
        tensors.insert(name.to_string(), layout(name, shape, pad, base));
        live.push(name.to_string());
    }
    Alloc {
        tensors,
        weights: params.weights,
        window_weights: params.window_weights,
        identity,
        identities,
        ones,
        bias: params.bias,
        untied: params.untied,
        rows: params.rows,
        weight_beats,
        weight_tile_rows,
        acc_beats,
        act_beats,
        inputs_end,
        activations,
        end: regions.next,
        handoffs,
    }
}

/// External memory for activations: regions freed by dead tensors (base, beats), reused
/// first fit when `reuse`, and the first beat never used.
struct Regions {
    free: Vec<(u64, u64)>,
    next: u64,
    reuse: bool,
}

impl Regions {
    /// The base of `size` beats.
    fn take(&mut self, size: u64) -> u64 {
        let fit = match self.reuse {
            true => self.free.iter().position(|(_, beats)| *beats >= size),
            false => None,
        };
        match fit {
            Some(k) => {
                let (base, beats) = self.free.remove(k);
                if beats > size {
                    self.free.push((base + size, beats - size));
                }
                base
            }
            None => {
                self.next += size;
                self.next - size
            }
        }
    }
}
