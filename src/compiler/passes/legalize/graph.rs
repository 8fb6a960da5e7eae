//! The layer graph the passes after legalize work on: the nodes (each layer as the work
//! its operator lowers to), the host-written and concatenated tensors, and the petgraph DAG
//! of which node reads which.

use crate::design::Unit;
use crate::model::lower::{Lowered, Post, Stencil, Taps};
use crate::model::Combine;
use crate::numeric::Format;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;

/// One layer as the later passes see it: the work its operator lowers to, never the
/// operator itself.
#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    /// The operator's name, for reports.
    pub op: &'static str,
    /// What the hardware runs: a window (most nodes) or upsampling.
    pub work: Lowered,
    /// The tensor the matmul streams (the first input).
    pub input: String,
    /// A tensor added element-wise in the vector unit (add layers, fused residuals).
    pub residual: Option<String>,
    /// How the vector unit combines the residual (`add`'s quantized form and `mul`); None
    /// for the plain sum `saturate(q + residual)`.
    pub combine: Option<Combine>,
    /// The residual is one pixel, read at every pixel of the output (the vector
    /// instruction's `bcast`).
    pub broadcast: bool,
    pub out: [usize; 3],
    /// A max-pool (window, stride) fused into a convolution: each pool tap is a pass of the
    /// convolution at the pooled positions, folded into the output rows by the vector unit.
    pub pool: Option<(usize, usize)>,
    /// Multiply-accumulates of the model layers this node implements.
    pub macs: u64,
    /// The node's precision, as an index into the unit's precisions (the instructions'
    /// `prec` fields).
    pub prec: usize,
    /// The format of its output tensor, and the E8M0 code of its integer rows at a boundary
    /// between precisions (0 elsewhere).
    pub out_format: Format,
    pub fixed_scale: u8,
    /// Rows and columns by which the input window starts later than the symmetric padding
    /// says (a phase of a transposed convolution pads less before than after).
    pub shift: (usize, usize),
    /// Where the output goes when the node writes part of another tensor.
    pub place: Option<Place>,
    /// The window unit runs it (`in_window`), not the array.
    pub window: bool,
    /// Its output stays on chip as the input of the next node, a depthwise convolution in
    /// the window unit, which schedules both (`fuse`: expand + depthwise).
    pub fused_into_next: bool,
    /// An integer convolution whose weights leave some (output tile, input tile) pairs all
    /// zero (a 1x1 convolution over a concat that weights each part's channels
    /// separately): the tile size and, per pair `oct * icts + ict`, whether it is all
    /// zero. Such tiles are not run (`allocate::tile_present`).
    pub zero_tiles: Option<(usize, Vec<bool>)>,
    /// An element-wise row program (a GELU) the node's output rows go through in the
    /// output buffer before they are stored (`fuse`: conv+rows); its output is then the
    /// program's layer.
    pub then: Option<crate::model::lower::RowWork>,
    /// A layer that writes its accumulator (`output_type = "accumulator"`): its values are
    /// stored in this many slices of `out_format`'s width (the accumulator's bits over the
    /// output type's), each written by one `raw` vector instruction; 1 for other nodes.
    pub planes: usize,
}

/// A node's output pixel (u, v) is pixel (offset.0 + stride * u, offset.1 + stride * v) of
/// `tensor`, whose shape is `shape` (the phases of a transposed convolution).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub tensor: String,
    pub shape: [usize; 3],
    pub stride: usize,
    pub offset: (usize, usize),
}

impl Node {
    /// The tensor the node's output belongs to.
    pub fn tensor(&self) -> &str {
        self.place.as_ref().map_or(&self.name, |p| &p.tensor)
    }

    /// The node's window (every node but an upsampling, which has its own schedule).
    pub fn stencil(&self) -> &Stencil {
        self.work
            .stencil()
            .unwrap_or_else(|| unreachable!("{} ({}) has no window", self.name, self.op))
    }

    pub fn stencil_mut(&mut self) -> &mut Stencil {
        match &mut self.work {
            Lowered::Stencil(s) => s,
            _ => unreachable!("{} ({}) has no window", self.name, self.op),
        }
    }

    /// Its post-processing.
    pub fn post(&self) -> &Post {
        &self.stencil().post
    }

    /// The node's window weighs its taps (a convolution's weights, not an identity).
    pub fn weighted(&self) -> bool {
        matches!(
            self.work,
            Lowered::Stencil(Stencil {
                taps: Taps::Weighted { .. } | Taps::Tensor { .. },
                ..
            })
        )
    }

    /// Accumulator rows of its fused row program's constants and table on `lanes` lanes
    /// (0 without one), kept in each group's bank below the bias rows.
    pub fn then_rows(&self, lanes: usize) -> usize {
        self.then.as_ref().map_or(0, |w| {
            crate::compiler::rowprog::image(w, lanes, self.out[2])
                .rows
                .len()
        })
    }

    /// The run-time tensor whose rows are its weights (a matmul of two activations).
    pub fn weights_from(&self) -> Option<&str> {
        self.work.stencil().and_then(|s| s.weights_from())
    }

    /// The tensors it reads: its input, its residual operand, its run-time weights.
    pub fn reads(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.input.as_str())
            .chain(self.residual.as_deref())
            .chain(self.weights_from())
    }

    /// Per-channel requantization: each channel tile's vector instructions read a scale
    /// row after the bias row.
    pub fn per_channel(&self) -> bool {
        self.work
            .stencil()
            .is_some_and(|s| !s.post.channel_requant.is_empty())
    }

    /// Accumulator rows a channel tile's post-processing reads besides its own: the bias
    /// row, and with per-channel requantization the scale row after it.
    pub fn bias_rows(&self) -> usize {
        1 + usize::from(self.per_channel())
    }

    /// The bias of each output channel the vector unit adds before requantizing (empty:
    /// none; `Post::bias`).
    pub fn bias(&self) -> &[i64] {
        &self.post().bias
    }

    /// Output-buffer rows a group member's output may take: half the buffer, or with a
    /// residual, which is loaded into them, a quarter (less the row of a broadcast one).
    pub fn out_rows(&self, quarter: usize) -> usize {
        match &self.residual {
            Some(_) => quarter - usize::from(self.broadcast),
            None => 2 * quarter,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Graph {
    pub unit: Unit,
    pub nodes: Vec<Node>,
    /// Tensor edges producer → consumer, over node indices; the input has no producer node.
    pub dag: DiGraph<usize, String>,
    /// Tensors the host writes before the run: the model inputs, then every concat of model
    /// inputs only (the host joins them as it writes them).
    pub inputs: Vec<Source>,
    /// Concats of computed tensors: each operand is stored as a view of the concat's tensor,
    /// at its channel-tile offset, so joining them costs nothing.
    pub concats: Vec<Concat>,
    /// The output tensors (the model's outputs, in order).
    pub outputs: Vec<String>,
    /// The groups of layers `fuse` joined.
    pub fused: Vec<Fused>,
}

/// A tensor the host writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub name: String,
    pub shape: [usize; 3],
    pub format: Format,
    /// For a concat of model inputs: the inputs it joins.
    pub joins: Vec<String>,
    /// For the kernel taps of a convolution packed into channels (`im2col`): the
    /// host-written tensor it is made from, and the window.
    pub im2col: Option<Im2col>,
}

/// A host-written tensor whose pixel (oy, ox) holds, for every kernel tap (ky, kx) in
/// order and every channel ci of `of`, the input the convolution reads there (zero in the
/// padding): channel (ky * kw + kx) * c + ci. A convolution over few channels becomes a 1x1
/// convolution over kh * kw times as many, filling the array's rows; its weights, flat
/// [kh, kw, cin, cout], are the same numbers in the same order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Im2col {
    pub of: String,
    pub kh: usize,
    pub kw: usize,
    pub stride: usize,
    pub pad: usize,
    /// The element the padding taps read (the convolution's `pad_value`).
    pub pad_value: i64,
}

/// A concat of computed tensors, stored in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concat {
    pub name: String,
    pub inputs: Vec<String>,
    /// Stored channels: the operands' channels, or more when an operand does not fill its
    /// last channel tile and the next one starts at a tile boundary (`offsets`).
    pub shape: [usize; 3],
    pub format: Format,
    /// The stored channel each operand starts at.
    pub offsets: Vec<usize>,
}

impl Concat {
    /// The stored channel of each of the concat's channels, in order (the identity unless
    /// operands are padded to whole channel tiles).
    pub fn stored_channels(&self, channels: &[usize]) -> Vec<usize> {
        self.offsets
            .iter()
            .zip(channels)
            .flat_map(|(&o, &c)| o..o + c)
            .collect()
    }
}

impl Graph {
    /// The first model input.
    pub fn input(&self) -> &str {
        &self.inputs[0].name
    }

    /// The host-written tensor or in-place concat called `t`.
    fn special(&self, t: &str) -> Option<([usize; 3], Format)> {
        self.inputs
            .iter()
            .find(|s| s.name == t)
            .map(|s| (s.shape, s.format))
            .or_else(|| {
                self.concats
                    .iter()
                    .find(|c| c.name == t)
                    .map(|c| (c.shape, c.format))
            })
    }

    /// Whether `t` is one of the model's outputs.
    pub fn is_output(&self, t: &str) -> bool {
        self.outputs.iter().any(|o| o == t)
    }

    /// The in-place concat that tensor `t` is an operand of, and `t`'s first channel tile
    /// in it.
    pub fn view_of(&self, t: &str, tile: usize) -> Option<(&Concat, usize)> {
        self.concats.iter().find_map(|c| {
            let k = c.inputs.iter().position(|i| i == t)?;
            Some((c, c.offsets[k] / tile))
        })
    }

    /// The format of tensor `t`.
    pub fn format_of(&self, t: &str) -> Format {
        if let Some((_, f)) = self.special(t) {
            return f;
        }
        self.nodes
            .iter()
            .find(|n| n.tensor() == t)
            .expect("tensor exists")
            .out_format
    }

    /// The slices tensor `t` is stored in (`Node::planes`; 1 for host-written tensors).
    pub fn planes_of(&self, t: &str) -> usize {
        self.nodes
            .iter()
            .find(|n| n.tensor() == t)
            .map_or(1, |n| n.planes)
    }

    /// The index of the unit's precision whose rows are in `format` (the `prec` of a
    /// transfer of such rows, or of a vector instruction writing them).
    pub fn prec_of(&self, format: Format) -> usize {
        let d = &self.unit.datatype;
        (0..d.precisions.len())
            .find(|&i| d.get(i).output() == format || d.get(i).input() == format)
            .expect("legalize checked every format")
    }

    pub fn shape_of(&self, t: &str) -> [usize; 3] {
        if let Some((s, _)) = self.special(t) {
            return s;
        }
        let n = self
            .nodes
            .iter()
            .find(|n| n.tensor() == t)
            .expect("tensor exists");
        n.place.as_ref().map_or(n.out, |p| p.shape)
    }

    /// Nodes reading tensor `t` (as matmul input or as residual).
    pub fn consumers(&self, t: &str) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].reads().any(|r| r == t))
            .collect()
    }

    /// Rebuild the tensor edges after a pass changed the nodes.
    pub fn rebuild_dag(&mut self) {
        let mut dag = DiGraph::new();
        let idx: Vec<NodeIndex> = (0..self.nodes.len()).map(|i| dag.add_node(i)).collect();
        // A tensor's producers: one node, or the phases of a transposed convolution.
        let mut producers: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            producers.entry(n.tensor()).or_default().push(i);
        }
        for (i, n) in self.nodes.iter().enumerate() {
            for t in n.reads() {
                // A concat in place is written by the producers of its operands.
                let parts: Vec<&str> = match self.concats.iter().find(|c| c.name == t) {
                    Some(c) => c.inputs.iter().map(String::as_str).collect(),
                    None => vec![t],
                };
                for part in parts {
                    for &p in producers.get(part).into_iter().flatten() {
                        dag.add_edge(idx[p], idx[i], t.to_string());
                    }
                }
            }
        }
        self.dag = dag;
    }

    /// Index of the last node that reads tensor `t` (its end of life), from the DAG.
    pub fn last_use(&self, t: &str) -> Option<usize> {
        self.dag
            .edge_indices()
            .filter(|e| self.dag[*e] == t)
            .filter_map(|e| self.dag.edge_endpoints(e))
            .map(|(_, to)| self.dag[to])
            .max()
            .or_else(|| self.consumers(t).into_iter().max())
    }
}

/// A group of layers the fusion strategy fused (`fuse`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fused {
    pub rule: String,
    /// The model layers it joins, in order.
    pub layers: Vec<String>,
    /// Estimated cycles fused, and apart (each layer compiled alone).
    pub estimated_cycles: u64,
    pub estimated_cycles_apart: u64,
}

/// Kernel size, stride and padding of the matmul a node runs (an upsampling's identity
/// passes: one tap).
pub fn window(n: &Node) -> (usize, usize, usize, usize) {
    match n.work.stencil() {
        Some(s) => (s.kh, s.kw, s.stride, s.pad),
        None => (1, 1, 1, 0),
    }
}
