//! What the hardware runs for one layer: each operator lowers its layer to a [`Lowered`]
//! (`op::Operator::lower`), and the compiler's passes after legalize work on that alone,
//! never on the operator that made it. A new operator that maps onto work the hardware
//! already does (a window over the input through the array or the window unit, then the
//! vector unit's post-processing) needs no compiler change.

use crate::numeric::int::Combine;
use crate::numeric::Requant;

/// The hardware's work for one layer. (One per layer, so the size of the largest variant
/// costs nothing worth a box.)
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum Lowered {
    /// A window over the input ([`Stencil`]), then the vector unit's post-processing of
    /// every output row.
    Stencil(Stencil),
    /// Nearest upsampling: every input pixel written `factor` x `factor` times (its own
    /// schedule: input rows through the vector unit's identity).
    Upsample { factor: usize },
    /// The inputs joined along the channels, stored in place as views of one tensor: no
    /// instructions.
    Concat,
    /// Passes of the row unit over the input's pixels ([`RowWork`]).
    Rows(RowWork),
}

/// A row program: the input tensor's integer elements read as the row unit's operand
/// (dequantized by each pass's constants, the source +0), every pixel through `passes` in
/// order over the channel tiles (`numeric::rows::run`), the statistics carried from pass
/// to pass, the last pass writing the output; each of `groups` equal groups of channels (a
/// softmax's heads) on its own, one after another. Each pass's `lanes` hold one entry per
/// channel (of every group).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowWork {
    pub passes: Vec<crate::numeric::rows::Pass>,
    pub groups: usize,
}

impl RowWork {
    /// Whether every channel is independent of the others (no pass reduces, finishes or
    /// reads a statistic: an element-wise function).
    pub fn elementwise(&self) -> bool {
        use crate::numeric::rows::{Finish, Reduce};
        self.passes.iter().all(|p| {
            let s = &p.stages;
            s.reduce == Reduce::None && s.finish == Finish::None && !(s.centre || s.norm || s.out_b)
        })
    }

    /// How many runs of channel tiles, one after another, the hardware may split `tiles`
    /// channel tiles into: every tile on its own for an element-wise program, else its
    /// groups (a pixel's statistics span a group's tiles).
    pub fn runs(&self, tiles: usize) -> usize {
        match self.elementwise() {
            true => tiles,
            false => self.groups,
        }
    }
}

/// A window over the input: for every output pixel, kernel tap and input-channel tile, one
/// pass of the array (or one window-unit instruction, where the Design's window unit takes
/// the layer) into the output's accumulator row, then `post`. A transposed window adds
/// every input pixel's products to output (iy * stride - pad + ky, ix * stride - pad + kx)
/// (groups 1; the compiler lowers it to one window per stride phase).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stencil {
    pub transposed: bool,
    pub kh: usize,
    pub kw: usize,
    pub stride: usize,
    pub pad: usize,
    /// The input element the padding pixels read (an input zero point; 0 for most layers).
    pub pad_value: i64,
    /// Output channels.
    pub cout: usize,
    pub taps: Taps,
    pub post: Post,
}

/// How a window's taps make an output channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taps {
    /// Output channel co sums, over the taps and the input channels of its group, the input
    /// times weight `weights[((ky * kw + kx) * cin / groups + ci) * cout + co]` (codes of the
    /// layer's weight format; MX: `weight_scales[((ky * kw + kx) * (cin / block) + b) *
    /// cout + co]`, else empty).
    Weighted {
        groups: usize,
        weights: Vec<i64>,
        weight_scales: Vec<u8>,
    },
    /// A 1x1 window whose weights are a run-time tensor `tensor` of the model (a matmul of
    /// two activations): in group g (of `groups`), output channel g * cout_g + o sums, over
    /// the group's input channels g * cin_g + i, the input times `tensor`'s element at
    /// pixel i, channel g * cout_g + o (the weight tile is cin_g of its pixel rows), or
    /// with `transposed` at pixel o, channel g * cin_g + i (its rows transposed: keys).
    /// `zero_points`: the input's and the tensor's (za, zb); every product is
    /// (input - za) * (element - zb), which needs each group's input channels to fill
    /// whole channel tiles when either is not 0 (the array's correction spans its rows).
    Tensor {
        groups: usize,
        tensor: String,
        transposed: bool,
        zero_points: (i64, i64),
    },
    /// Every channel sums its own window (the array streams an identity weight tile per
    /// tap; the window unit weighs every tap by one).
    Sum,
    /// Every channel takes the largest input of its window that is not padding (the array
    /// streams an identity tile per tap and the vector unit keeps the running maximum; the
    /// window unit takes it directly).
    Max,
}

/// The vector unit's post-processing of an accumulator row into an output row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    /// One bias per output channel, added before requantizing (empty: none).
    pub bias: Vec<i64>,
    /// One bias per output pixel and channel, `[oh][ow][cout]`, the accumulator's starting
    /// value (empty: none).
    pub untied_bias: Vec<i64>,
    pub requant: Requant,
    /// Per-channel requantization: output channel o's (multiplier, shift), replacing
    /// requant's (whose zero point all share); empty when it is per tensor.
    pub channel_requant: Vec<(u64, u32)>,
    /// Leaky ReLU: the requantization multiplier of negative values.
    pub negative_multiplier: Option<u64>,
    /// ReLU at the output zero point, and ReLU6's upper clamp (an output value).
    pub relu: bool,
    pub clamp: Option<i64>,
    /// Write `acc + bias` saturated to the accumulator type instead of requantizing (a
    /// layer with `output_type = "accumulator"`).
    pub raw: bool,
    /// How the layer's second input (a residual, read in the output's format) combines
    /// with the requantized value; `None` with a second input is the plain saturating sum.
    pub combine: Option<Combine>,
}

impl Post {
    /// Requantization only (no bias, activation or residual).
    pub fn requant(requant: Requant) -> Post {
        Post {
            bias: Vec::new(),
            untied_bias: Vec::new(),
            requant,
            channel_requant: Vec::new(),
            negative_multiplier: None,
            relu: false,
            clamp: None,
            raw: false,
            combine: None,
        }
    }
}

impl Stencil {
    /// Multiply-accumulates of the array over an output of `out` from `cin` input
    /// channels: a weighted window's products (none for sums and maxima, which stream
    /// identity tiles).
    pub fn macs(&self, out: [usize; 3], cin: usize) -> u64 {
        match &self.taps {
            Taps::Weighted { groups, .. } | Taps::Tensor { groups, .. } => {
                window_macs(out, self.kh, self.kw, cin / groups)
            }
            Taps::Sum | Taps::Max => 0,
        }
    }

    /// The weighted window's groups (1 for the others).
    pub fn groups(&self) -> usize {
        match &self.taps {
            Taps::Weighted { groups, .. } | Taps::Tensor { groups, .. } => *groups,
            Taps::Sum | Taps::Max => 1,
        }
    }

    /// The operands' zero points (za, zb) the array takes out of its sums ((0, 0) but
    /// for `Taps::Tensor`).
    pub fn zero_points(&self) -> (i64, i64) {
        match &self.taps {
            Taps::Tensor { zero_points, .. } => *zero_points,
            _ => (0, 0),
        }
    }

    /// The run-time tensor whose elements are the weights (`Taps::Tensor`).
    pub fn weights_from(&self) -> Option<&str> {
        match &self.taps {
            Taps::Tensor { tensor, .. } => Some(tensor),
            _ => None,
        }
    }

    /// A depthwise window: each output channel weighs its own input channel (more than
    /// one), not transposed.
    pub fn depthwise(&self, cin: usize) -> bool {
        matches!(self.taps, Taps::Weighted { groups, .. } if groups == cin)
            && self.cout == cin
            && cin > 1
            && !self.transposed
    }
}

/// The products of a kh x kw window over `cin_g` input channels for every element of an
/// output of shape `out`.
pub fn window_macs(out: [usize; 3], kh: usize, kw: usize, cin_g: usize) -> u64 {
    (out[0] * out[1] * out[2] * kh * kw * cin_g) as u64
}

impl Lowered {
    /// The row program, when the work is one.
    pub fn rows(&self) -> Option<&RowWork> {
        match self {
            Lowered::Rows(r) => Some(r),
            _ => None,
        }
    }

    /// The window, when the work is one.
    pub fn stencil(&self) -> Option<&Stencil> {
        match self {
            Lowered::Stencil(s) => Some(s),
            _ => None,
        }
    }
}
