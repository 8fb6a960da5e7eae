{{ c.banner }}
// Compute queue executor with the systolic array. A matmul streams input rows (two-level
// strided loop over the input buffer) through the array into contiguous accumulator rows,
// overwriting or accumulating, and may at the same time preload the next weight tile into
// the idle weight bank. A bank is refilled only after the vectors using it have drained.
// Semaphores are released when the instruction's last result has been written.
{%- if c.mx %}
//
// MX: every input row carries the E8M0 scale of its block after the elements, and a weight
// tile is ROWS element rows followed by the COLS column scales (8 bits each: one row for
// MXINT8, two for MXINT4), preloaded into a scale register of the bank. The array forms
// exact integer block sums; at each column output the sum is dequantized with the two
// scales to FP32 and written, or added in FP32 to the accumulator row (round to nearest
// even, subnormals flushed).
{%- endif %}
{%- if c.multi %}
//
// Multi-precision: a matmul with mx = 0 is an integer layer: its weight tile has no scale
// rows and the block sums, sign-extended, are written or added as int32.
{%- endif %}
{%- if c.fp %}
//
// Floating point: the array's columns produce FP32 sums of exact FP8/BF16 products; they
// are written, or added in FP32 to the accumulator row (round to nearest even, subnormals
// flushed).
{%- endif %}
`include "hwgen_isa.vh"
module hwgen_compute_unit #(
  parameter integer       INSTR_W       = `HWGEN_INSTR_W,
  parameter integer       NUM_SEM       = 10,
  parameter [NUM_SEM-1:0] CONSUMED      = {NUM_SEM{1'b0}},
  parameter [NUM_SEM-1:0] PRODUCED      = {NUM_SEM{1'b0}},
  parameter integer       ROWS          = 8,
  parameter integer       COLS          = 8,
  parameter integer       INPUT_W       = 8,
  parameter integer       WEIGHT_W      = 8,
  parameter integer       ACC_W         = 32,
  parameter integer       INPUT_SIGNED  = 1,
  parameter integer       WEIGHT_SIGNED = 1,
{%- if c.mx %}
  parameter integer       MX_FRAC       = 6,
{%- endif %}
{%- if c.fp %}
  parameter integer       FP_EXP_W      = 4,
  parameter integer       FP_MAN_W      = 3,
  parameter integer       FP_BIAS       = 7,
  parameter integer       FP_IEEE       = 0,
{%- endif %}
  parameter integer       SPAD_ADDR_W   = 16
) (
  input  wire                     clk_i,
  input  wire                     {{ c.rst }},
  // queue head
  input  wire                     head_valid_i,
  input  wire [INSTR_W-1:0]       head_instr_i,
  output wire                     head_pop_o,
  // semaphores
  input  wire [NUM_SEM-1:0]       sem_available_i,
  output wire [NUM_SEM-1:0]       sem_acquire_o,
  output wire [NUM_SEM-1:0]       sem_release_o,
  // input buffer (read)
  output wire                     in_re_o,
  output wire [SPAD_ADDR_W-1:0]   in_addr_o,
{%- if c.mx %}
  input  wire [ROWS*INPUT_W+7:0]  in_data_i,     // elements, then the E8M0 scale
{%- else %}
  input  wire [ROWS*INPUT_W-1:0]  in_data_i,
{%- endif %}
  // weight buffer (read)
  output wire                     w_re_o,
  output wire [SPAD_ADDR_W-1:0]   w_addr_o,
  input  wire [COLS*WEIGHT_W-1:0] w_data_i,
  // accumulator (this unit has priority on both ports)
  output wire                     acc_rd_valid_o,
  output wire [SPAD_ADDR_W-1:0]   acc_rd_addr_o,
  input  wire [COLS*ACC_W-1:0]    acc_rd_data_i,
  output wire                     acc_wr_valid_o,
  output wire [SPAD_ADDR_W-1:0]   acc_wr_addr_o,
  output wire [COLS*ACC_W-1:0]    acc_wr_data_o,
  // performance
  output wire                     busy_o,
  output wire                     stall_o,
  output wire                     mac_active_o
);

  localparam integer LATENCY = ROWS + COLS - 1;
  localparam integer DRAIN   = LATENCY + 2;
  localparam integer DRAIN_W = $clog2(DRAIN + 1);
{%- if c.mx %}
  localparam integer SCALE_W = 8;
  localparam integer PSUM_W  = INPUT_W + WEIGHT_W + $clog2(ROWS);  // exact block sum
  localparam integer SCALE_ROWS  = SCALE_W / WEIGHT_W;              // rows of column scales
  localparam integer PL_ROWS_INT = ROWS + SCALE_ROWS;               // elements + scale rows
  localparam integer PL_W    = $clog2(ROWS + SCALE_ROWS + 1);
  localparam [PL_W-1:0] PL_SCALE_ROWS = SCALE_ROWS[PL_W-1:0];
{%- if c.multi %}
  // Tag fields, from bit 0: accumulator row, input scale, weight bank, accumulate, MX
  // layer, semaphores to release.
  localparam integer TAG_BANK = SPAD_ADDR_W + SCALE_W;
  localparam integer TAG_ACC  = TAG_BANK + 1;
  localparam integer TAG_MX   = TAG_ACC + 1;
  localparam integer TAG_W    = TAG_MX + 1 + NUM_SEM;
  localparam integer INT_LAST_INT = ROWS - 1;
  localparam [PL_W-1:0] PL_INT_ROWS = ROWS[PL_W-1:0];
  localparam [SPAD_ADDR_W-1:0] PL_INT_LAST = INT_LAST_INT[SPAD_ADDR_W-1:0];
{%- else %}
  // Tag fields, from bit 0: accumulator row, input scale, weight bank, accumulate,
  // semaphores to release.
  localparam integer TAG_BANK = SPAD_ADDR_W + SCALE_W;
  localparam integer TAG_ACC  = TAG_BANK + 1;
  localparam integer TAG_W    = TAG_ACC + 1 + NUM_SEM;
{%- endif %}
{%- else %}
  localparam integer PL_ROWS_INT = ROWS;
  localparam integer PL_W    = $clog2(ROWS + 1);
  localparam integer TAG_W   = NUM_SEM + 1 + SPAD_ADDR_W;
{%- endif %}
  localparam integer INDEX_W = `HWGEN_MATMUL_COUNT0_W + `HWGEN_MATMUL_COUNT1_W;
  localparam [DRAIN_W-1:0]     DRAIN_N   = DRAIN[DRAIN_W-1:0];
  localparam [DRAIN_W-1:0]     DRAIN_ONE = 1;
  localparam [PL_W-1:0]        PL_ONE    = 1;
  localparam [PL_W-1:0]        PL_ROWS   = PL_ROWS_INT[PL_W-1:0];
  localparam integer           PL_LAST_INT = PL_ROWS_INT - 1;
  localparam [SPAD_ADDR_W-1:0] PL_LAST   = PL_LAST_INT[SPAD_ADDR_W-1:0];

  wire [NUM_SEM-1:0] f_wait;
  wire [NUM_SEM-1:0] f_signal;
  wire               f_preload;
  wire               f_swap;
  wire               f_accumulate;
  wire [`HWGEN_MATMUL_WEIGHT_ADDR_W-1:0] f_weight_addr;
  wire [`HWGEN_MATMUL_INPUT_ADDR_W-1:0]  f_input_addr;
  wire [`HWGEN_MATMUL_ACC_ADDR_W-1:0]    f_acc_addr;
  wire [`HWGEN_MATMUL_COUNT0_W-1:0]      f_count0;
  wire [`HWGEN_MATMUL_STRIDE0_W-1:0]     f_stride0;
  wire [`HWGEN_MATMUL_COUNT1_W-1:0]      f_count1;
  wire [`HWGEN_MATMUL_STRIDE1_W-1:0]     f_stride1;
  wire                                   f_mx;

  hwgen_decode_matmul u_decode (
    .instr_i       (head_instr_i),
    .wait_o        (f_wait),
    .signal_o      (f_signal),
    .preload_o     (f_preload),
    .swap_o        (f_swap),
    .accumulate_o  (f_accumulate),
    .weight_addr_o (f_weight_addr),
    .input_addr_o  (f_input_addr),
    .acc_addr_o    (f_acc_addr),
    .count0_o      (f_count0),
    .stride0_o     (f_stride0),
    .count1_o      (f_count1),
    .stride1_o     (f_stride1),
    .mx_o          (f_mx)
  );
{%- if !c.multi %}

  // Every matmul takes the design's one datapath.
  wire unused_mx;
  assign unused_mx = f_mx;
{%- endif %}

  reg                   busy_q;
  reg                   busy_d;
  reg                   bank_q;
  reg                   bank_d;
  reg                   accumulate_q;
  reg                   accumulate_d;
  reg [SPAD_ADDR_W-1:0] acc_base_q;
  reg [SPAD_ADDR_W-1:0] acc_base_d;
  reg [NUM_SEM-1:0]     release_q;
  reg [NUM_SEM-1:0]     release_d;
{%- if c.multi %}
  reg                   mx_q;            // this matmul is an MX layer
  reg                   mx_d;
{%- endif %}
  // weight preload
  reg                   pl_active_q;
  reg                   pl_active_d;
  reg [SPAD_ADDR_W-1:0] pl_base_q;
  reg [SPAD_ADDR_W-1:0] pl_base_d;
  reg [PL_W-1:0]        pl_issued_q;
  reg [PL_W-1:0]        pl_issued_d;
{%- if c.multi %}
  reg [PL_W-1:0]        pl_rows_q;       // rows of the tile being preloaded
  reg [PL_W-1:0]        pl_rows_d;
  reg [SPAD_ADDR_W-1:0] pl_last_q;       // its last row, relative to weight_addr
  reg [SPAD_ADDR_W-1:0] pl_last_d;
{%- endif %}
  reg                   pl_data_q;
{%- if c.mx %}
  reg                   pl_scale_q;      // the row arriving is one of the tile's scale rows
  reg [COLS*SCALE_W-1:0] wscale0_q;      // column scales of weight bank 0
  reg [COLS*SCALE_W-1:0] wscale1_q;      // column scales of weight bank 1
{%- endif %}
  reg [DRAIN_W-1:0]     drain0_q;
  reg [DRAIN_W-1:0]     drain0_d;
  reg [DRAIN_W-1:0]     drain1_q;
  reg [DRAIN_W-1:0]     drain1_d;
  // input stream: a row read this cycle enters the array next cycle
  reg                   tok_valid_q;
  reg [SPAD_ADDR_W-1:0] tok_addr_q;
  reg [SPAD_ADDR_W-1:0] tok_addr_d;

  wire                   start;
  wire                   finished;
  wire                   agen_valid;
  wire                   agen_last;
  wire [SPAD_ADDR_W-1:0] agen_addr;
  wire [INDEX_W-1:0]     agen_index;

  hwgen_issue #(
    .NUM_SEM  (NUM_SEM),
    .CONSUMED (CONSUMED)
  ) u_issue (
    .head_valid_i    (head_valid_i),
    .head_wait_i     (f_wait),
    .exec_idle_i     (!busy_q || finished),
    .sem_available_i (sem_available_i),
    .head_pop_o      (head_pop_o),
    .sem_acquire_o   (sem_acquire_o),
    .start_o         (start),
    .stall_o         (stall_o)
  );

  hwgen_addr_gen #(
    .ADDR_W    (SPAD_ADDR_W),
    .COUNT_W   (`HWGEN_MATMUL_COUNT0_W),
    .STRIDE0_W (`HWGEN_MATMUL_STRIDE0_W),
    .STRIDE1_W (`HWGEN_MATMUL_STRIDE1_W),
    .INDEX_W   (INDEX_W)
  ) u_agen (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .start_i     (start),
    .base_i      (f_input_addr),
    .count0_i    (f_count0),
    .stride0_i   (f_stride0),
    .count1_i    (f_count1),
    .stride1_i   (f_stride1),
    .advance_i   (busy_q),
    .valid_o     (agen_valid),
    .last_o      (agen_last),
    .addr_o      (agen_addr),
    .index_o     (agen_index)
  );

  wire unused_agen;
  assign unused_agen = ^{agen_last, agen_index[INDEX_W-1:SPAD_ADDR_W]};

  // The preload fills the bank the current tile does not use.
  wire pl_bank     = !bank_q;
  wire pl_drained  = pl_bank ? (drain1_q == {DRAIN_W{1'b0}}) : (drain0_q == {DRAIN_W{1'b0}});
{%- if c.multi %}
  wire pl_read     = pl_active_q && pl_drained && (pl_issued_q != pl_rows_q);
{%- else %}
  wire pl_read     = pl_active_q && pl_drained && (pl_issued_q != PL_ROWS);
{%- endif %}
  wire stream_read = busy_q && agen_valid;
  // Done once every input row has been read and the preload has shifted in; the last row may
  // still be entering the array: it carries the semaphores to release (or, when no row is
  // entering, a bubble does). The next instruction may start in the same cycle.
  assign finished = busy_q && !agen_valid && !pl_active_q && !pl_data_q;

  always @* begin
    busy_d       = busy_q;
    bank_d       = bank_q;
    accumulate_d = accumulate_q;
    acc_base_d   = acc_base_q;
    release_d    = release_q;
    pl_active_d  = pl_active_q;
    pl_base_d    = pl_base_q;
    pl_issued_d  = pl_issued_q;
{%- if c.multi %}
    mx_d         = mx_q;
    pl_rows_d    = pl_rows_q;
    pl_last_d    = pl_last_q;
{%- endif %}
    tok_addr_d   = acc_base_q + agen_index[SPAD_ADDR_W-1:0];
    drain0_d     = (drain0_q == {DRAIN_W{1'b0}}) ? drain0_q : drain0_q - DRAIN_ONE;
    drain1_d     = (drain1_q == {DRAIN_W{1'b0}}) ? drain1_q : drain1_q - DRAIN_ONE;

    if (start) begin
      busy_d       = 1'b1;
      bank_d       = f_swap ? !bank_q : bank_q;
      accumulate_d = f_accumulate;
      acc_base_d   = f_acc_addr;
      release_d    = f_signal & PRODUCED;
      pl_active_d  = f_preload;
      pl_base_d    = f_weight_addr;
      pl_issued_d  = {PL_W{1'b0}};
{%- if c.multi %}
      mx_d         = f_mx;
      pl_rows_d    = f_mx ? PL_ROWS : PL_INT_ROWS;
      pl_last_d    = f_mx ? PL_LAST : PL_INT_LAST;
{%- endif %}
    end else if (finished) begin
      busy_d = 1'b0;
    end

    if (pl_read) begin
      pl_issued_d = pl_issued_q + PL_ONE;
{%- if c.multi %}
      if (pl_issued_q == pl_rows_q - PL_ONE) begin
{%- else %}
      if (pl_issued_q == PL_ROWS - PL_ONE) begin
{%- endif %}
        pl_active_d = 1'b0;
      end
    end

    if (tok_valid_q) begin
      if (bank_q) begin
        drain1_d = DRAIN_N;
      end else begin
        drain0_d = DRAIN_N;
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      busy_q       <= 1'b0;
      bank_q       <= 1'b0;
      accumulate_q <= 1'b0;
      acc_base_q   <= {SPAD_ADDR_W{1'b0}};
      release_q    <= {NUM_SEM{1'b0}};
      pl_active_q  <= 1'b0;
      pl_base_q    <= {SPAD_ADDR_W{1'b0}};
      pl_issued_q  <= {PL_W{1'b0}};
      pl_data_q    <= 1'b0;
{%- if c.multi %}
      mx_q         <= 1'b0;
      pl_rows_q    <= PL_ROWS;
      pl_last_q    <= PL_LAST;
{%- endif %}
{%- if c.mx %}
      pl_scale_q   <= 1'b0;
      wscale0_q    <= {(COLS*SCALE_W){1'b0}};
      wscale1_q    <= {(COLS*SCALE_W){1'b0}};
{%- endif %}
      drain0_q     <= {DRAIN_W{1'b0}};
      drain1_q     <= {DRAIN_W{1'b0}};
      tok_valid_q  <= 1'b0;
      tok_addr_q   <= {SPAD_ADDR_W{1'b0}};
    end else begin
      busy_q       <= busy_d;
      bank_q       <= bank_d;
      accumulate_q <= accumulate_d;
      acc_base_q   <= acc_base_d;
      release_q    <= release_d;
      pl_active_q  <= pl_active_d;
      pl_base_q    <= pl_base_d;
      pl_issued_q  <= pl_issued_d;
      pl_data_q    <= pl_read;
{%- if c.multi %}
      mx_q         <= mx_d;
      pl_rows_q    <= pl_rows_d;
      pl_last_q    <= pl_last_d;
      pl_scale_q   <= pl_read && (pl_rows_q == PL_ROWS) && (pl_issued_q < PL_SCALE_ROWS);
{%- elif c.mx %}
      pl_scale_q   <= pl_read && (pl_issued_q < PL_SCALE_ROWS);
{%- endif %}
{%- if c.mx %}
      if (pl_data_q && pl_scale_q && pl_bank) begin
        wscale1_q <= wscale1_next;
      end
      if (pl_data_q && pl_scale_q && !pl_bank) begin
        wscale0_q <= wscale0_next;
      end
{%- endif %}
      drain0_q     <= drain0_d;
      drain1_q     <= drain1_d;
      tok_valid_q  <= stream_read;
      tok_addr_q   <= tok_addr_d;
    end
  end
{%- if c.mx %}

  // The scale rows (from weight_addr + ROWS) are read first, last row first, then the weight
  // rows last row first: after ROWS shifts, row r holds weight_addr + r.
{%- else %}

  // Weight rows are read last row first: after ROWS shifts, row r holds weight_addr + r.
{%- endif %}
  assign w_re_o   = pl_read;
{%- if c.multi %}
  assign w_addr_o = pl_base_q + pl_last_q - { {(SPAD_ADDR_W-PL_W){1'b0}}, pl_issued_q};
{%- else %}
  assign w_addr_o = pl_base_q + PL_LAST - { {(SPAD_ADDR_W-PL_W){1'b0}}, pl_issued_q};
{%- endif %}
  assign in_re_o   = stream_read;
  assign in_addr_o = agen_addr;
{%- if c.mx %}

  // The systolic array. The tag carries the accumulator row, the accumulate flag, the weight
  // bank and the input row's scale and, on a bubble injected when the instruction finishes,
  // the semaphores to release.
  wire [SCALE_W-1:0]     in_scale = in_data_i[ROWS*INPUT_W +: SCALE_W];
{%- if c.multi %}
  wire [TAG_W-1:0]       in_tag = {finished ? release_q : {NUM_SEM{1'b0}}, mx_q, accumulate_q,
                                   bank_q, in_scale, tok_addr_q};
{%- else %}
  wire [TAG_W-1:0]       in_tag = {finished ? release_q : {NUM_SEM{1'b0}}, accumulate_q, bank_q,
                                   in_scale, tok_addr_q};
{%- endif %}
  wire                   out_valid;
  wire [TAG_W-1:0]       out_tag;
  wire [COLS*PSUM_W-1:0] out_psum;
{%- else %}

  // The systolic array. The tag carries the accumulator row, the accumulate flag and, on a
  // bubble injected when the instruction finishes, the semaphores to release.
  wire [TAG_W-1:0]       in_tag = {finished ? release_q : {NUM_SEM{1'b0}}, accumulate_q, tok_addr_q};
  wire                   out_valid;
  wire [TAG_W-1:0]       out_tag;
  wire [COLS*ACC_W-1:0]  out_psum;
{%- endif %}

  hwgen_systolic_array #(
    .ROWS          (ROWS),
    .COLS          (COLS),
    .INPUT_W       (INPUT_W),
    .WEIGHT_W      (WEIGHT_W),
{%- if c.mx %}
    .ACC_W         (PSUM_W),
{%- else %}
    .ACC_W         (ACC_W),
{%- endif %}
    .INPUT_SIGNED  (INPUT_SIGNED),
    .WEIGHT_SIGNED (WEIGHT_SIGNED),
{%- if c.fp %}
    .FP_EXP_W      (FP_EXP_W),
    .FP_MAN_W      (FP_MAN_W),
    .FP_BIAS       (FP_BIAS),
    .FP_IEEE       (FP_IEEE),
{%- endif %}
    .TAG_W         (TAG_W)
  ) u_array (
    .clk_i         (clk_i),
    .{{ c.rst }}   ({{ c.rst }}),
    .in_valid_i    (tok_valid_q),
    .in_bank_i     (bank_q),
    .in_tag_i      (in_tag),
{%- if c.mx %}
    .in_act_i      (in_data_i[ROWS*INPUT_W-1:0]),
{%- else %}
    .in_act_i      (in_data_i),
{%- endif %}
{%- if c.mx %}
    .wshift_en_i   (pl_data_q && !pl_scale_q),
{%- else %}
    .wshift_en_i   (pl_data_q),
{%- endif %}
    .wshift_bank_i (pl_bank),
    .wshift_row_i  (w_data_i),
    .out_valid_o   (out_valid),
    .out_tag_o     (out_tag),
    .out_psum_o    (out_psum)
  );

  wire [NUM_SEM-1:0]     out_release    = out_tag[TAG_W-1 -: NUM_SEM];
{%- if c.mx %}
{%- if c.multi %}
  wire                   out_mx         = out_tag[TAG_MX];
{%- endif %}
  wire                   out_accumulate = out_tag[TAG_ACC];
  wire                   out_bank       = out_tag[TAG_BANK];
  wire [SCALE_W-1:0]     out_scale      = out_tag[SPAD_ADDR_W +: SCALE_W];
{%- else %}
  wire                   out_accumulate = out_tag[SPAD_ADDR_W];
{%- endif %}
  wire [SPAD_ADDR_W-1:0] out_addr       = out_tag[SPAD_ADDR_W-1:0];
{%- if c.mx %}

  // A scale row arriving shifts the earlier ones up: the first row read (the last in
  // memory) ends in the top part of the register.
  wire [COLS*SCALE_W-1:0] wscale0_next;
  wire [COLS*SCALE_W-1:0] wscale1_next;
  generate
    if (SCALE_ROWS == 1) begin : gen_scale_row
      assign wscale0_next = w_data_i;
      assign wscale1_next = w_data_i;
    end else begin : gen_scale_rows
      assign wscale0_next = {wscale0_q[COLS*(SCALE_W-WEIGHT_W)-1:0], w_data_i};
      assign wscale1_next = {wscale1_q[COLS*(SCALE_W-WEIGHT_W)-1:0], w_data_i};
    end
  endgenerate

  // Block dequantization at the column outputs: integer block sum x 2^(scales) -> FP32.
  wire [COLS*SCALE_W-1:0] out_wscale = out_bank ? wscale1_q : wscale0_q;
  wire [COLS*ACC_W-1:0]   out_value;
{%- if c.multi %}
  wire [COLS*ACC_W-1:0]   out_int;
{%- endif %}
{%- endif %}

  // Write-back: read the old row (accumulate) as the result leaves the array, add and write
  // one cycle later. A row written in the previous cycle is forwarded.
  reg                   wb_valid_q;
  reg                   wb_accumulate_q;
{%- if c.multi %}
  reg                   wb_mx_q;
{%- endif %}
  reg [SPAD_ADDR_W-1:0] wb_addr_q;
  reg [COLS*ACC_W-1:0]  wb_psum_q;
  reg [NUM_SEM-1:0]     wb_release_q;
  reg                   last_valid_q;
  reg [SPAD_ADDR_W-1:0] last_addr_q;
  reg [COLS*ACC_W-1:0]  last_data_q;
  wire [COLS*ACC_W-1:0] wb_sum;

  wire                  forward = last_valid_q && (last_addr_q == wb_addr_q);
  wire [COLS*ACC_W-1:0] wb_old  = forward ? last_data_q : acc_rd_data_i;

  genvar col;
  generate
    for (col = 0; col < COLS; col = col + 1) begin : gen_col
{%- if c.mx %}
      wire [ACC_W-1:0] fp_sum;
{%- if c.multi %}

      // An integer layer's block sum, sign-extended to the accumulator width.
      assign out_int[col*ACC_W +: ACC_W] = { {(ACC_W-PSUM_W){out_psum[col*PSUM_W+PSUM_W-1]}},
                                             out_psum[col*PSUM_W +: PSUM_W]};
{%- endif %}

      hwgen_mx_dequant #(
        .PSUM_W (PSUM_W),
        .FRAC   (MX_FRAC)
      ) u_dequant (
        .psum_i    (out_psum[col*PSUM_W +: PSUM_W]),
        .scale_a_i (out_scale),
        .scale_b_i (out_wscale[col*SCALE_W +: SCALE_W]),
        .value_o   (out_value[col*ACC_W +: ACC_W])
      );

      hwgen_fp32_add u_add (
        .a_i   (wb_old[col*ACC_W +: ACC_W]),
        .b_i   (wb_psum_q[col*ACC_W +: ACC_W]),
        .sum_o (fp_sum)
      );
{%- if c.multi %}

      wire [ACC_W-1:0] int_sum = wb_old[col*ACC_W +: ACC_W] + wb_psum_q[col*ACC_W +: ACC_W];

      assign wb_sum[col*ACC_W +: ACC_W] = !wb_accumulate_q ? wb_psum_q[col*ACC_W +: ACC_W]
                                        : wb_mx_q ? fp_sum : int_sum;
{%- else %}

      assign wb_sum[col*ACC_W +: ACC_W] = wb_accumulate_q ? fp_sum : wb_psum_q[col*ACC_W +: ACC_W];
{%- endif %}
{%- elif c.fp %}
      wire [ACC_W-1:0] fp_sum;

      hwgen_fp32_add u_add (
        .a_i   (wb_old[col*ACC_W +: ACC_W]),
        .b_i   (wb_psum_q[col*ACC_W +: ACC_W]),
        .sum_o (fp_sum)
      );

      assign wb_sum[col*ACC_W +: ACC_W] = wb_accumulate_q ? fp_sum : wb_psum_q[col*ACC_W +: ACC_W];
{%- else %}
      assign wb_sum[col*ACC_W +: ACC_W] = wb_accumulate_q
          ? wb_old[col*ACC_W +: ACC_W] + wb_psum_q[col*ACC_W +: ACC_W]
          : wb_psum_q[col*ACC_W +: ACC_W];
{%- endif %}
    end
  endgenerate

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      wb_valid_q      <= 1'b0;
      wb_accumulate_q <= 1'b0;
{%- if c.multi %}
      wb_mx_q         <= 1'b0;
{%- endif %}
      wb_addr_q       <= {SPAD_ADDR_W{1'b0}};
      wb_psum_q       <= {(COLS*ACC_W){1'b0}};
      wb_release_q    <= {NUM_SEM{1'b0}};
      last_valid_q    <= 1'b0;
      last_addr_q     <= {SPAD_ADDR_W{1'b0}};
      last_data_q     <= {(COLS*ACC_W){1'b0}};
    end else begin
      wb_valid_q      <= out_valid;
      wb_accumulate_q <= out_accumulate;
      wb_addr_q       <= out_addr;
{%- if c.multi %}
      wb_mx_q         <= out_mx;
      wb_psum_q       <= out_mx ? out_value : out_int;
{%- elif c.mx %}
      wb_psum_q       <= out_value;
{%- else %}
      wb_psum_q       <= out_psum;
{%- endif %}
      wb_release_q    <= out_release;
      last_valid_q    <= wb_valid_q;
      last_addr_q     <= wb_addr_q;
      last_data_q     <= wb_sum;
    end
  end

  assign acc_rd_valid_o = out_valid && out_accumulate;
  assign acc_rd_addr_o  = out_addr;
  assign acc_wr_valid_o = wb_valid_q;
  assign acc_wr_addr_o  = wb_addr_q;
  assign acc_wr_data_o  = wb_sum;
  assign sem_release_o  = wb_release_q;
  assign busy_o         = busy_q;
  assign mac_active_o   = tok_valid_q;

endmodule
