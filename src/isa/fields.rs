//! How typed values go into instruction fields, and the instruction formats themselves.

use super::*;

/// A Rust type an instruction field holds: how it goes into and comes out of its bits.
pub trait FieldValue: Copy {
    /// The field's bits, or `None` when the value does not fit `width` bits.
    fn to_bits(self, width: u32) -> Option<u64>;
    fn from_bits(bits: u64, width: u32) -> Self;
    /// How a listing writes the value.
    fn show(self) -> String;
    fn is_zero(self) -> bool;
}

impl FieldValue for u64 {
    fn to_bits(self, width: u32) -> Option<u64> {
        (self <= mask(width)).then_some(self)
    }
    fn from_bits(bits: u64, _: u32) -> Self {
        bits
    }
    fn show(self) -> String {
        self.to_string()
    }
    fn is_zero(self) -> bool {
        self == 0
    }
}

/// Two's complement.
impl FieldValue for i64 {
    fn to_bits(self, width: u32) -> Option<u64> {
        let half = 1i64 << (width - 1);
        (-half..half)
            .contains(&self)
            .then_some(self as u64 & mask(width))
    }
    fn from_bits(bits: u64, width: u32) -> Self {
        let v = bits as i64;
        if width < 64 && v >> (width - 1) & 1 == 1 {
            v - (1i64 << width)
        } else {
            v
        }
    }
    fn show(self) -> String {
        self.to_string()
    }
    fn is_zero(self) -> bool {
        self == 0
    }
}

impl FieldValue for bool {
    fn to_bits(self, _: u32) -> Option<u64> {
        Some(u64::from(self))
    }
    fn from_bits(bits: u64, _: u32) -> Self {
        bits & 1 == 1
    }
    fn show(self) -> String {
        u8::from(self).to_string()
    }
    fn is_zero(self) -> bool {
        !self
    }
}

impl FieldValue for Buffer {
    fn to_bits(self, _: u32) -> Option<u64> {
        Some(self as u64)
    }
    fn from_bits(bits: u64, _: u32) -> Self {
        Buffer::ALL[(bits & 3) as usize]
    }
    fn show(self) -> String {
        self.name().to_string()
    }
    fn is_zero(self) -> bool {
        false // listings always say which buffer
    }
}

/// The instruction formats, defined once: each becomes a struct with one typed field per
/// ISA field (in bit order after the header), the table `FIELDS` that places them, and the
/// encoding, decoding and listing derived from it.
macro_rules! formats {
    ($(
        $(#[$meta:meta])*
        $name:ident {
            $( $field:ident : $ty:ty = $width:expr, $doc:literal; )*
        }
    )*) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
            pub struct $name {
                $( #[doc = $doc] pub $field: $ty, )*
            }

            impl $name {
                /// The fields after the header, in bit order.
                pub const FIELDS: &'static [FieldSpec] = &[$( (stringify!($field), $width, $doc), )*];

                /// Each field's bits, in `FIELDS` order; an error names a value too wide.
                pub(super) fn bits(&self, op: Opcode) -> Result<Vec<u64>, IsaError> {
                    Ok(vec![$(
                        FieldValue::to_bits(self.$field, $width).ok_or_else(|| IsaError::TooWide {
                            op: op.mnemonic(),
                            field: stringify!($field),
                            value: FieldValue::show(self.$field),
                            width: $width,
                        })?,
                    )*])
                }

                pub(super) fn from_field_bits(bits: &[u64]) -> Self {
                    let mut it = bits.iter();
                    $name { $( $field: FieldValue::from_bits(*it.next().expect("one value per field"), $width), )* }
                }

                /// (name, value) of the fields a listing shows: the non-zero ones, and
                /// `count1` always.
                pub(super) fn listed(&self) -> Vec<(&'static str, String)> {
                    let mut v = Vec::new();
                    $( if !FieldValue::is_zero(self.$field) || stringify!($field) == "count1" {
                        v.push((stringify!($field), FieldValue::show(self.$field)));
                    } )*
                    v
                }
            }
        )*
    };
}

formats! {
    /// `load` (external memory or stream -> scratchpad) and `store` (output buffer ->
    /// external memory or stream): a two-level strided transfer of whole rows.
    Transfer {
        stream: bool = 1, "1: the elastic stream between units instead of external memory";
        buffer: Buffer = 2, "scratchpad: 0 input, 1 weight, 2 accumulator, 3 output";
        spad_addr: u64 = SPAD_ADDR_BITS, "first scratchpad row; rows are contiguous";
        ext_addr: u64 = EXT_ADDR_BITS, "first external-memory beat";
        count0: u64 = 12, "rows in the inner loop";
        stride0: u64 = 20, "beats between consecutive inner rows";
        count1: u64 = 12, "iterations of the outer loop";
        stride1: u64 = 24, "beats between consecutive outer iterations";
        prec: u64 = PREC_BITS, "precision of input and output rows (an index into the Design's list): rows of a block-scaled precision move their scale beat, the others leave it out";
        pad_top: u64 = 6, "load: the first pad_top outer iterations write padding rows without reading memory (pixels outside a tensor): zero rows, or in the input buffer rows of pad_value; a store takes no padding";
        pad_bottom: u64 = 6, "load: likewise the last pad_bottom outer iterations";
        pad_left: u64 = 6, "load: likewise the first pad_left rows of every outer iteration";
        pad_right: u64 = 6, "load: likewise the last pad_right rows of every outer iteration";
        row_beats: u64 = 8, "load into the accumulator: 0 moves whole rows; n moves the first n beats of each row (its first lanes), fewer than a whole row, and the row's other lanes read zero (an untied bias of few channels)";
        widen: u64 = 2, "load into the accumulator with row_beats: 0 moves accumulator elements; 1 and 2 move 16- and 8-bit integers, each sign-extended into its accumulator lane (an untied bias whose values fit)";
        pad_value: u64 = PAD_VALUE_BITS, "load into the input buffer: the element every lane of a padding row holds, as its bit pattern (the low bits for narrower elements): a convolution's input zero point; the scale slot stays zero";
        transpose: bool = 1, "load into the weight buffer (designs with [rows]): every block of kpf rows is written transposed, its row k holding element k of each of its rows in order (a run-time tensor as a matmul's stationary operand: keys as the columns of the weight tile); rows of a block-scaled precision bring their scales, and the block is followed by its scale rows, column k's scale being row k's (such a load moves one block)";
        reblock: bool = 1, "load of rows of a block-scaled precision into the weight buffer, not transposed (designs with [rows]): every block of kpf rows, each with its scale, is written as one weight tile whose blocks run down its columns, each column quantized as one MX block of its values (OCP MX, computed on the codes: the column's scale is the largest of its rows' scale plus floor(log2 |code|) over its non-zero codes, less the elements' fraction bits, within 0..=254; each code shifted right by that scale less its row's, rounded to nearest with ties to even, or left by the difference), then the scale rows (a run-time tensor such as attention's values as a matmul's stationary operand); it moves one block";
        handoff: bool = 1, "the on-chip hand-off buffers instead of external memory (elastic Designs whose units have a handoff_depth): a store writes its beats into the hand-off buffer of every engine its stream links feed, a load reads the engine's own, each at beat ext_addr (and the beats after it) modulo the buffer's depth; a load may take padding, a store none";
    }
    /// `matmul`: stream input rows through the systolic array into accumulator rows.
    Matmul {
        preload: bool = 1, "shift a weight tile into the idle weight bank while this runs";
        swap: bool = 1, "switch to the last preloaded weight bank before the first input row";
        accumulate: bool = 1, "add to the accumulator rows instead of overwriting them";
        weight_addr: u64 = SPAD_ADDR_BITS, "first row of the weight tile to preload";
        input_addr: u64 = SPAD_ADDR_BITS, "first input row";
        acc_addr: u64 = SPAD_ADDR_BITS, "first accumulator row; rows are contiguous";
        count0: u64 = 12, "input rows in the inner loop";
        stride0: u64 = 12, "input-buffer rows between inner iterations";
        count1: u64 = 12, "iterations of the outer loop";
        stride1: u64 = 16, "input-buffer rows between outer iterations";
        prec: u64 = PREC_BITS, "precision of the layer (an index into the Design's list): the weight tile's scale rows, the column arithmetic and the accumulation";
        zero_input: u64 = PAD_VALUE_BITS, "integer precisions on Designs with the zero-point correction (an integer datatype with [rows]): the input rows' zero point za, as its bit pattern (see pad_value); every column sums (a - za) * (w - zero_weight) over all the array's rows";
        zero_weight: u64 = PAD_VALUE_BITS, "likewise the weight tile's zero point zw (a matmul of two run-time tensors whose second operand has one)";
    }
    /// `window`: a window (stencil) over input rows, one output row per window position,
    /// in the window unit beside the array (designs with `[window] enabled`): every lane
    /// (channel) takes the sum of its window's inputs times its own weights (a depthwise
    /// convolution) or their maximum (max-pooling), into contiguous accumulator rows.
    Window {
        max: bool = 1, "take the maximum of the window's inputs that are not padding (0 when all are) instead of the sum of the products of those inputs with the weights";
        accumulate: bool = 1, "add the result to (max: take the maximum with) the accumulator row instead of overwriting it";
        weight_addr: u64 = SPAD_ADDR_BITS, "first weight row: tap (ky, kx) is row weight_addr + ky * kw + kx, lane c channel c's weight";
        input_addr: u64 = SPAD_ADDR_BITS, "input row of window pixel (0, 0)";
        acc_addr: u64 = SPAD_ADDR_BITS, "accumulator row of output (0, 0); output (oy, ox) is row acc_addr + oy * ow + ox";
        count0: u64 = 12, "input pixels per input row (the window's width)";
        stride0: u64 = 12, "input-buffer rows between consecutive pixels of a row";
        count1: u64 = 12, "input rows (the window's height)";
        stride1: u64 = 16, "input-buffer rows between consecutive input rows";
        kh: u64 = 4, "kernel height";
        kw: u64 = 4, "kernel width";
        step: u64 = 2, "kernel stride (both directions): oh = (count1 - kh) / step + 1, ow = (count0 - kw) / step + 1";
        pad_top: u64 = 4, "input rows at the top that are padding (whatever the rows hold): a maximum never takes them, a sum takes them as pad_value";
        pad_bottom: u64 = 4, "input rows at the bottom that are padding";
        pad_left: u64 = 4, "input pixels at the start of every row that are padding";
        pad_right: u64 = 4, "input pixels at the end of every row that are padding";
        prec: u64 = PREC_BITS, "precision of the layer (an index into the Design's list; an integer precision)";
        pad_value: u64 = PAD_VALUE_BITS, "sum: the input every lane reads at a padding tap, as its bit pattern (the low bits for narrower inputs; 0: padding adds nothing)";
    }
    /// `rows`: accumulator rows through the row unit's FP32 element pipeline (designs with
    /// `[rows] enabled`), tile by tile: for each of count1 channel tiles, count0 pixels' rows.
    /// Each lane's element x goes, in order and as the flags ask, through: + the tile's bias
    /// (integer elements), to FP32 (`src_float`: x is FP32 already; `src_zero`: +0); * scale + shift (the
    /// tile's rows); + (b - operand zero point) * operand scale (b the operand row's
    /// element); - the pixel's statistic a; * its statistic b; * gamma + beta (the tile's
    /// rows); e^x or the spline; then the lanes (the last tile's first `valid`) are reduced
    /// into the pixel's statistics, and the row is written (* output scale, or with `out_b` *
    /// the pixel's statistic b, rounded). Every
    /// FP32 operation is rounded once under the FP32 contract (README, "The row unit").
    Rows {
        acc_addr: u64 = SPAD_ADDR_BITS, "accumulator row of tile 0's first pixel";
        acc_stride: u64 = SPAD_ADDR_BITS, "accumulator rows from one tile's first pixel to the next's";
        count0: u64 = 12, "pixels (rows) of every tile";
        count1: u64 = 8, "channel tiles";
        out_addr: u64 = SPAD_ADDR_BITS, "output-buffer row of tile 0's first pixel (write)";
        out_stride: u64 = SPAD_ADDR_BITS, "output-buffer rows from one tile's first pixel to the next's (written rows and operand rows)";
        opnd_addr: u64 = SPAD_ADDR_BITS, "output-buffer row of tile 0's first pixel's operand (opnd)";
        param_addr: u64 = SPAD_ADDR_BITS, "accumulator row of tile 0's parameter rows: bias (bias), then scale and shift (scale), then gamma and beta (affine); each tile's rows follow the previous tile's";
        const_addr: u64 = SPAD_ADDR_BITS, "first accumulator row of the constants (five FP32 words over as many rows as they take: operand scale, operand zero point, 1/n, epsilon, output scale), then with func = 2 the rows of the spline table (32 words)";
        stat_addr: u64 = 12, "statistics entry of the first pixel (pixel i uses stat_addr + i)";
        valid: u64 = 8, "lanes of the last tile that hold channels (0: all): the others are left out of reductions and written 0";
        bias: bool = 1, "add the tile's bias row to the integer accumulator elements before the conversion to FP32";
        src_float: bool = 1, "the accumulator elements are FP32 (else two's-complement integers, converted rounding to nearest even)";
        src_zero: bool = 1, "the source value is +0 whatever the accumulator row holds (it is read and ignored): the operand alone, dequantized (an integer tensor read from the output buffer)";
        scale: bool = 1, "multiply by the tile's scale row, then add its shift row";
        opnd: bool = 1, "add (b - operand zero point) * operand scale, b the integer element of the operand row";
        centre: bool = 1, "subtract the pixel's statistic a";
        norm: bool = 1, "multiply by the pixel's statistic b";
        affine: bool = 1, "multiply by the tile's gamma row, then add its beta row";
        func: u64 = 2, "0 none, 1 e^x (the exp2 table built into the unit), 2 the spline whose table follows the constants";
        square: bool = 1, "reduce the squares of the values";
        reduce: u64 = 2, "0 none; 1 the maximum into statistic a; 2 the sum into a; 3 the sum into b (lanes summed in a pairwise tree, then added to the statistic)";
        init: bool = 1, "tile 0's reduction replaces the statistic instead of combining with it";
        finish: u64 = 2, "after the last tile, per pixel: 0 nothing; 1 b = 1 / b; 2 a = a * (1/n); 3 b = 1 / sqrt(b * (1/n) + epsilon)";
        write: bool = 1, "write output rows: the value times the output scale, rounded half to even, plus zero_point, saturated to the output type";
        out_b: bool = 1, "the written value is multiplied by the pixel's statistic b instead of the output scale (softmax's 1 / sum)";
        zero_point: i64 = 16, "output zero point (two's complement)";
        to_input: bool = 1, "write the rows into the input buffer (from out_addr) instead of the output buffer";
        prec_out: u64 = PREC_BITS, "precision of the output rows (an index into the Design's list)";
    }
    /// `vector`: accumulator rows -> post-processing -> output-buffer rows.
    Vector {
        relu: bool = 1, "clamp below at the output zero point";
        add: bool = 1, "add the operand row element-wise (saturating)";
        pool: bool = 1, "take the element-wise maximum with the operand row";
        bias: bool = 1, "add the bias register before requantizing";
        load_bias: bool = 1, "first read the bias register from accumulator row bias_addr";
        acc_addr: u64 = SPAD_ADDR_BITS, "first accumulator row";
        out_addr: u64 = SPAD_ADDR_BITS, "first output-buffer row written";
        opnd_addr: u64 = SPAD_ADDR_BITS, "first output-buffer row read as the add or pool operand";
        bias_addr: u64 = SPAD_ADDR_BITS, "accumulator row holding the bias";
        count: u64 = 12, "rows to process";
        multiplier: u64 = 16, "requantization multiplier (unsigned)";
        shift: u64 = SHIFT_BITS, "requantization right shift, rounding half up";
        zero_point: i64 = 16, "output zero point (two's complement)";
        clamp: bool = 1, "clamp above at clamp_max after ReLU (ReLU6)";
        clamp_max: i64 = 16, "upper clamp (two's complement)";
        prec_in: u64 = PREC_BITS, "precision of the accumulator rows (an index into the Design's list)";
        prec_out: u64 = PREC_BITS, "precision of the output rows: at a boundary between an integer and an MX layer, the conversion";
        fixed_scale: u64 = 8, "E8M0 code of an integer row crossing to or from MX: element q means 2^(code-127) q / 2^frac";
        leaky: bool = 1, "leaky ReLU: requantize a negative value (after the bias) with neg_multiplier instead of multiplier";
        neg_multiplier: u64 = 16, "requantization multiplier of negative values under leaky (unsigned)";
        to_input: bool = 1, "write the rows into the input buffer (from out_addr) instead of the output buffer: a layer's output kept on chip as the next one's input (rows of the same width)";
        per_channel: bool = 1, "requantize lane l with its own multiplier and shift, read (with load_bias) from accumulator row bias_addr + 1: lane l's element holds the multiplier in its low bits (as many as the multiplier field) and the shift above them (as many as the shift field); the fields multiplier and shift are then unused";
        half_even: bool = 1, "requantization rounds an exact tie to the even neighbour instead of up (ONNX's rounding)";
        raw: bool = 1, "integer lanes: instead of requantizing, write bits shift .. shift + output bits of (acc + bias) x multiplier saturated to the accumulator type (no rounding, zero point or saturation to the output type): one slice of a layer that writes its accumulator";
        mul: bool = 1, "with add, integer lanes: combine with the operand by product instead of weighted sum (see add_weight)";
        bcast: bool = 1, "every row reads operand row opnd_addr (an operand of one pixel, broadcast over the map)";
        add_weight: i64 = 16, "with add, integer lanes: t = add_weight (q - zero_point) + opnd_weight (b - opnd_zero), or with mul t = add_weight (q - zero_point)(b - opnd_zero), where q is the requantized value and b the operand; the lane writes round(t / 2^add_shift) + add_zero saturated to the output type (two's complement)";
        opnd_weight: i64 = 16, "with add, integer lanes: the operand's weight (two's complement; unused with mul)";
        add_shift: u64 = SHIFT_BITS, "with add, integer lanes: right shift of t, rounding like the requantization (half up, or to even with half_even)";
        opnd_zero: u64 = PAD_VALUE_BITS, "with add, integer lanes: the operand's zero point, as a bit pattern like pad_value's (the low bits of the output element, read in its signedness)";
        add_zero: i64 = 16, "with add, integer lanes: the zero point added after the shift, where ReLU clamps (two's complement)";
    }
}

impl Transfer {
    /// Rows the transfer moves through memory or a stream: every row but its padding.
    pub fn moved_rows(&self) -> u64 {
        let rows = |count: u64, a: u64, b: u64| count.saturating_sub(a + b);
        rows(self.count0, self.pad_left, self.pad_right)
            * rows(self.count1, self.pad_top, self.pad_bottom)
    }

    /// Whether row (i0, i1) of the transfer is in its padding (a load writes it without
    /// reading memory).
    pub fn is_pad(&self, i0: u64, i1: u64) -> bool {
        i1 < self.pad_top
            || i1 + self.pad_bottom >= self.count1
            || i0 < self.pad_left
            || i0 + self.pad_right >= self.count0
    }

    /// The same rows laid out one after another from beat 0, `per_row` beats each, in
    /// plain memory (neither stream nor hand-off): how a stream or a hand-off transfer
    /// stages its rows.
    pub fn as_consecutive_rows(&self, per_row: u64) -> Transfer {
        Transfer {
            stream: false,
            handoff: false,
            ext_addr: 0,
            stride0: per_row,
            stride1: per_row * self.count0,
            ..*self
        }
    }
}
