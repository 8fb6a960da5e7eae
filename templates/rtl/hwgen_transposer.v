{{ c.banner }}
// Turns blocks of N rows of N elements into weight tiles on their way into the weight
// buffer (`transpose` and `reblock` loads, designs with [rows]). It takes rows j = 0..N-1 of
// a block, then writes the tile's rows to the block's first address + k, taking no rows
// meanwhile:
// - transposed (reblock_i low): row k holds element k of every row taken, row j's in
//   column j (a run-time tensor such as keys as the columns of a matmul's weight tile);
// - re-blocked (reblock_i high): row j as taken, each column quantized as one MX block of
//   its N elements' values (below; values as a matmul's weight tile, blocked down its
//   rows).
// With scaled_i (rows of a block-scaled precision, each with its scale in_scale_i), the
// tile's N rows are followed by SCALE_ROWS rows holding one SCALE_W-bit scale per column,
// column c's in bits c*SCALE_W of their concatenation (row 0 lowest): row c's own scale
// when transposed, the column's block scale when re-blocked. A block load moves one block.
// idle_o: no block held.
module hwgen_transposer #(
  parameter integer N          = 8,
  parameter integer W          = 8,
  parameter integer ADDR_W     = 16,
  parameter integer SCALE_ROWS = 0,
  parameter integer SCALE_W    = 8,
  // fraction bits of the block-scaled elements (re-blocking)
  parameter integer FRAC       = 6
) (
  input  wire              clk_i,
  input  wire              {{ c.rst }},
  // how the block is written (held for the whole load)
  input  wire              reblock_i,
  input  wire              scaled_i,
  // rows of a block, in order
  input  wire              in_valid_i,
  output wire              in_ready_o,
  input  wire [ADDR_W-1:0] in_addr_i,
  input  wire [N*W-1:0]    in_data_i,
  input  wire [SCALE_W-1:0] in_scale_i,
  // the tile's rows
  output wire              out_valid_o,
  input  wire              out_ready_i,
  output wire [ADDR_W-1:0] out_addr_o,
  output wire [N*W-1:0]    out_data_o,
  output wire              idle_o
);

  localparam integer TILE_ROWS = N + SCALE_ROWS;
  localparam integer CNT_W     = $clog2(TILE_ROWS + 1);
  localparam integer IDX_W     = $clog2(N);

  // Rows of this block's tile: N, and the scale rows of a scaled block.
  wire [CNT_W-1:0] tile_rows = scaled_i ? TILE_ROWS[CNT_W-1:0] : N[CNT_W-1:0];

  // Rows taken, rows written, the block's first address; emitting once all N are in.
  reg [CNT_W-1:0]  taken_q, taken_d;
  reg [CNT_W-1:0]  sent_q, sent_d;
  reg              emit_q, emit_d;
  reg [ADDR_W-1:0] base_q, base_d;

  wire in_fire  = in_valid_i && !emit_q;
  wire out_fire = emit_q && out_ready_i;

  always @* begin
    taken_d = taken_q;
    sent_d  = sent_q;
    emit_d  = emit_q;
    base_d  = base_q;
    if (in_fire) begin
      if (taken_q == {CNT_W{1'b0} }) begin
        base_d = in_addr_i;
      end
      taken_d = taken_q + 1'b1;
      if (taken_q == N[CNT_W-1:0] - 1'b1) begin
        emit_d = 1'b1;
        sent_d = {CNT_W{1'b0} };
      end
    end
    if (out_fire) begin
      sent_d = sent_q + 1'b1;
      if (sent_q == tile_rows - 1'b1) begin
        emit_d  = 1'b0;
        taken_d = {CNT_W{1'b0} };
        sent_d  = {CNT_W{1'b0} };
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      taken_q <= {CNT_W{1'b0} };
      sent_q  <= {CNT_W{1'b0} };
      emit_q  <= 1'b0;
      base_q  <= {ADDR_W{1'b0} };
    end else begin
      taken_q <= taken_d;
      sent_q  <= sent_d;
      emit_q  <= emit_d;
      base_q  <= base_d;
    end
  end

  // The block: transposed, register row k holds element k of every row taken (row j in
  // column j); re-blocked, register row j is row j.
  wire [IDX_W-1:0] at = taken_q[IDX_W-1:0];
  reg [N*W-1:0] blk [0:N-1];
  integer k;
  always @(posedge clk_i) begin
    if (in_fire) begin
      if (reblock_i) begin
        blk[at] <= in_data_i;
      end else begin
        for (k = 0; k < N; k = k + 1) begin
          blk[k][W*at +: W] <= in_data_i[W*k +: W];
        end
      end
    end
  end

  wire [IDX_W-1:0] row_at   = sent_q[IDX_W-1:0];

  // floor(log2 |q|) of a non-zero W-bit two's-complement code (|q| read as W unsigned
  // bits: the most negative code is 2^(W-1)).
  localparam integer MSB_W  = $clog2(W);
  localparam [SCALE_W+1:0] FRAC_K = FRAC[SCALE_W+1:0];
  function automatic [MSB_W-1:0] msb_of;
    input [W-1:0] q;
    reg   [W-1:0] a;
    integer       b;
    begin
      a      = q[W-1] ? (~q + 1'b1) : q;
      msb_of = {MSB_W{1'b0} };
      for (b = 0; b < W; b = b + 1) begin
        if (a[b]) begin
          msb_of = b[MSB_W-1:0];
        end
      end
    end
  endfunction
  wire             in_tile  = (sent_q < N[CNT_W-1:0]);
  wire [N*W-1:0]   tile_row;

  generate
    if (SCALE_ROWS > 0) begin : gen_scaled
      // Each row's scale, and whether any is the NaN code (all ones).
      localparam integer EXP_W  = SCALE_W + 1;
      localparam integer K_W    = SCALE_W + 2;
      localparam [SCALE_W-1:0] SCALE_NAN = {SCALE_W{1'b1}};
      localparam [SCALE_W-1:0] SCALE_TOP = SCALE_NAN - 1'b1;
      wire                 first = (taken_q == {CNT_W{1'b0} });
      reg [SCALE_W-1:0]    sc [0:N-1];
      reg                  nan_q;
      wire                 nan_d = in_fire ? (!first && nan_q) || (in_scale_i == SCALE_NAN)
                                           : nan_q;
      always @(posedge clk_i) begin
        if (in_fire) begin
          sc[at] <= in_scale_i;
        end
      end
      always @(posedge clk_i) begin
        nan_q <= nan_d;
      end
      // Re-blocked (numeric::mx::reblock): column c's scale S_c is the largest s_j +
      // floor(log2 |q_jc|) over its non-zero codes, less FRAC, within 0..=SCALE_TOP (0 for
      // a column of zeros, the NaN code if any row's scale is); element (j, c) becomes
      // q_jc * 2^(s_j - S_c): shifted right by S_c - s_j, rounded to nearest with ties to
      // even (hwgen_rne_shift), or left by s_j - S_c (exact).
      wire [N*SCALE_W-1:0] col_scale;
      wire [N*W-1:0]       shifted;
      genvar e;
      for (e = 0; e < N; e = e + 1) begin : gen_col
        wire [W-1:0]     q_in   = in_data_i[W*e +: W];
        wire             nz     = (q_in != {W{1'b0} });
        wire [EXP_W-1:0] e_in   = {1'b0, in_scale_i} + { {(EXP_W-MSB_W){1'b0} }, msb_of(q_in)};
        reg  [EXP_W-1:0] emax_q;
        reg              any_q;
        wire             larger = nz && (first || !any_q || e_in > emax_q);
        wire [EXP_W-1:0] emax_d = (in_fire && larger) ? e_in : emax_q;
        wire             any_d  = in_fire ? (!first && any_q) || nz : any_q;
        always @(posedge clk_i) begin
          emax_q <= emax_d;
          any_q  <= any_d;
        end
        wire signed [K_W-1:0] ex = $signed({1'b0, emax_q}) - $signed(FRAC_K);
        wire                  top = (ex > $signed({ {(K_W-SCALE_W){1'b0} }, SCALE_TOP}));
        wire [SCALE_W-1:0]    s_c = nan_q      ? SCALE_NAN
                                  : !any_q     ? {SCALE_W{1'b0} }
                                  : ex[K_W-1]  ? {SCALE_W{1'b0} }
                                  : top        ? SCALE_TOP
                                               : ex[SCALE_W-1:0];
        assign col_scale[SCALE_W*e +: SCALE_W] = s_c;
        // Element (row_at, e) of the tile.
        wire [W-1:0]          q_out = blk[row_at][W*e +: W];
        wire signed [K_W-1:0] shift = $signed({ {(K_W-SCALE_W){1'b0} }, s_c})
                                    - $signed({ {(K_W-SCALE_W){1'b0} }, sc[row_at]});
        wire [K_W-1:0]        left  = -shift;
        wire [W-1:0]          right;
        hwgen_rne_shift #(
          .W   (W),
          .K_W (SCALE_W)
        ) u_shift (
          .q_i (q_out),
          .k_i (shift[SCALE_W-1:0]),
          .q_o (right)
        );
        assign shifted[W*e +: W] = nan_q          ? {W{1'b0} }
                                 : shift[K_W-1] ? q_out << left
                                                : right;
      end
      // The scale rows: column c's scale in bits c*SCALE_W of their concatenation.
      wire [N*SCALE_W-1:0] scales;
      for (e = 0; e < N; e = e + 1) begin : gen_scale
        assign scales[SCALE_W*e +: SCALE_W] = reblock_i ? col_scale[SCALE_W*e +: SCALE_W] : sc[e];
      end
      wire [CNT_W-1:0] srow = sent_q - N[CNT_W-1:0];
      wire [N*W-1:0]   scale_row = scales[N*W*srow +: N*W];
      wire             use_shift = reblock_i && scaled_i;
      assign tile_row = !in_tile ? scale_row : use_shift ? shifted : blk[row_at];
    end else begin : gen_plain
      wire unused_scale;
      assign unused_scale = ^{in_scale_i, in_tile};
      assign tile_row = blk[row_at];
    end
  endgenerate

  assign in_ready_o  = !emit_q;
  assign out_valid_o = emit_q;
  assign out_addr_o  = base_q + { {(ADDR_W-CNT_W){1'b0} }, sent_q};
  assign out_data_o  = tile_row;
  assign idle_o      = (taken_q == {CNT_W{1'b0} }) && !emit_q;

endmodule
