{{ c.banner }}
// Window unit: runs the compute queue's `window` instructions (the core hands it the
// queue's head when the opcode is window and the systolic array has drained). It streams
// the input window's pixels in raster order, one input-buffer row per cycle, through
// KERNEL-1 line buffers (the window's previous rows, LINE pixels each) into a KERNEL x
// KERNEL window of registers. At every position the instruction asks for (a kh x kw kernel
// at the bottom-right of the register window, every step-th position of every step-th row)
// each lane takes the sum of its inputs times its weights (the datapath's multiply-add in a
// chain; a tap on padding, rows and columns the instruction names, reads pad_value instead)
// or, with max, the largest of its inputs that are not padding, and writes, adds or (max)
// folds it into the next accumulator row: outputs are written in raster order from
// acc_addr.
//
// Timing: the start cycle, kh * kw cycles that read the weights (not for max), one cycle
// per input pixel, then four pipeline cycles to the last accumulator write (read, window,
// arithmetic, accumulator read); the semaphores are released with that write, and the next
// instruction may start in the same cycle. The first accumulator access (the read of an
// accumulating first output) comes lead_o = kh * kw + (kh - 1) * count0 + kw + 3 cycles
// after the start, so the core may start it while the array's last results drain.
`include "hwgen_isa.vh"
module hwgen_window_unit #(
  parameter integer       INSTR_W       = `HWGEN_INSTR_W,
  parameter integer       NUM_SEM       = 10,
  parameter [NUM_SEM-1:0] CONSUMED      = {NUM_SEM{1'b0}},
  parameter [NUM_SEM-1:0] PRODUCED      = {NUM_SEM{1'b0}},
  parameter integer       LANES         = 8,
  parameter integer       INPUT_W       = 8,
  parameter integer       WEIGHT_W      = 8,
  parameter integer       ACC_W         = 32,
  parameter integer       INPUT_SIGNED  = 1,
  parameter integer       WEIGHT_SIGNED = 1,
  parameter integer       IN_ROW_W      = 64,
  parameter integer       KERNEL        = 3,
  parameter integer       LINE          = 64,
  parameter integer       SPAD_ADDR_W   = 16
) (
  input  wire                     clk_i,
  input  wire                     {{ c.rst }},
  // queue head (only window instructions reach this unit)
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
  input  wire [IN_ROW_W-1:0]      in_data_i,
  // weight buffer (read)
  output wire                     w_re_o,
  output wire [SPAD_ADDR_W-1:0]   w_addr_o,
  input  wire [LANES*WEIGHT_W-1:0] w_data_i,
  // accumulator
  output wire                     acc_rd_valid_o,
  output wire [SPAD_ADDR_W-1:0]   acc_rd_addr_o,
  input  wire [LANES*ACC_W-1:0]   acc_rd_data_i,
  output wire                     acc_wr_valid_o,
  output wire [SPAD_ADDR_W-1:0]   acc_wr_addr_o,
  output wire [LANES*ACC_W-1:0]   acc_wr_data_o,
  // performance
  output wire                     busy_o,
  output wire                     stall_o,
  // cycles from the head instruction's start to its first accumulator access (saturated)
  output wire [15:0]              lead_o
);

  localparam integer KK       = KERNEL * KERNEL;
  localparam integer ROW_W    = LANES * INPUT_W;
  localparam integer WROW_W   = LANES * WEIGHT_W;
  localparam integer LINE_W   = (LINE > 1) ? $clog2(LINE) : 1;
  localparam integer POS_W    = (KK > 1) ? $clog2(KK) : 1;
  localparam integer COUNT0_W = `HWGEN_WINDOW_COUNT0_W;
  localparam integer COUNT1_W = `HWGEN_WINDOW_COUNT1_W;
  localparam integer K_W      = `HWGEN_WINDOW_KH_W;
  localparam integer STEP_W   = `HWGEN_WINDOW_STEP_W;
  localparam integer PAD_W    = `HWGEN_WINDOW_PAD_TOP_W;
  localparam integer PADV_W   = `HWGEN_WINDOW_PAD_VALUE_W;
  localparam integer SKIP_W   = (K_W > STEP_W) ? K_W : STEP_W;
  localparam integer KWIDE_W  = K_W + POS_W + 1;
  localparam [1:0]   PHASE_IDLE    = 2'd0;
  localparam [1:0]   PHASE_WEIGHTS = 2'd1;
  localparam [1:0]   PHASE_STREAM  = 2'd2;
  localparam [1:0]   PHASE_DRAIN   = 2'd3;
  localparam [1:0]   DRAIN_CYCLES  = 2'd3;
  localparam [1:0]   DRAIN_ONE     = 2'd1;
  localparam [COUNT0_W-1:0]    X_ONE    = 1;
  localparam [COUNT1_W-1:0]    Y_ONE    = 1;
  localparam [SKIP_W-1:0]      SKIP_ONE = 1;
  localparam [K_W-1:0]         K_ONE    = 1;
  localparam [KWIDE_W-1:0]     K_WIDE   = KERNEL[KWIDE_W-1:0];
  localparam [POS_W-1:0]       POS_ONE  = 1;
  localparam [SPAD_ADDR_W-1:0] ADDR_ONE = 1;

  // ---------------------------------------------------------------------------------------
  // Decode and issue.
  // ---------------------------------------------------------------------------------------
  wire [NUM_SEM-1:0]                     f_wait;
  wire [NUM_SEM-1:0]                     f_signal;
  wire                                   f_max;
  wire                                   f_accumulate;
  wire [`HWGEN_WINDOW_WEIGHT_ADDR_W-1:0] f_weight_addr;
  wire [`HWGEN_WINDOW_INPUT_ADDR_W-1:0]  f_input_addr;
  wire [`HWGEN_WINDOW_ACC_ADDR_W-1:0]    f_acc_addr;
  wire [COUNT0_W-1:0]                    f_count0;
  wire [`HWGEN_WINDOW_STRIDE0_W-1:0]     f_stride0;
  wire [COUNT1_W-1:0]                    f_count1;
  wire [`HWGEN_WINDOW_STRIDE1_W-1:0]     f_stride1;
  wire [K_W-1:0]                         f_kh;
  wire [K_W-1:0]                         f_kw;
  wire [STEP_W-1:0]                      f_step;
  wire [PAD_W-1:0]                       f_pad_top;
  wire [PAD_W-1:0]                       f_pad_bottom;
  wire [PAD_W-1:0]                       f_pad_left;
  wire [PAD_W-1:0]                       f_pad_right;
  wire [`HWGEN_WINDOW_PREC_W-1:0]        f_prec;
  wire [PADV_W-1:0]                      f_pad_value;

  hwgen_decode_window u_decode (
    .instr_i       (head_instr_i),
    .wait_o        (f_wait),
    .signal_o      (f_signal),
    .max_o         (f_max),
    .accumulate_o  (f_accumulate),
    .weight_addr_o (f_weight_addr),
    .input_addr_o  (f_input_addr),
    .acc_addr_o    (f_acc_addr),
    .count0_o      (f_count0),
    .stride0_o     (f_stride0),
    .count1_o      (f_count1),
    .stride1_o     (f_stride1),
    .kh_o          (f_kh),
    .kw_o          (f_kw),
    .step_o        (f_step),
    .pad_top_o     (f_pad_top),
    .pad_bottom_o  (f_pad_bottom),
    .pad_left_o    (f_pad_left),
    .pad_right_o   (f_pad_right),
    .prec_o        (f_prec),
    .pad_value_o   (f_pad_value)
  );

  // Cycles from start to the first output's accumulator read: weights, the pixels before
  // the first kernel window completes, its own, and the pipeline to the read.
  wire [31:0] kh_wide     = { {(32-K_W){1'b0}}, f_kh};
  wire [31:0] kw_wide     = { {(32-K_W){1'b0}}, f_kw};
  wire [31:0] count0_wide = { {(32-COUNT0_W){1'b0}}, f_count0};
  wire [31:0] lead_full   = (f_max ? 32'd0 : kh_wide * kw_wide)
                          + (kh_wide - 32'd1) * count0_wide + kw_wide + 32'd3;
  assign lead_o = (lead_full[31:16] != 16'd0) ? 16'hffff : lead_full[15:0];

  // The precision selects nothing here: the design runs the window unit in its integer
  // precision only (the compiler and the interpreter check it).
  wire unused_prec;
  assign unused_prec = ^f_prec;

  reg [1:0] phase_q;
  reg [1:0] phase_d;
  reg [1:0] drain_q;
  reg [1:0] drain_d;

  wire finishing = (phase_q == PHASE_DRAIN) && (drain_q == 2'd0);
  wire start;

  hwgen_issue #(
    .NUM_SEM  (NUM_SEM),
    .CONSUMED (CONSUMED)
  ) u_issue (
    .head_valid_i    (head_valid_i),
    .head_wait_i     (f_wait),
    .exec_idle_i     ((phase_q == PHASE_IDLE) || finishing),
    .sem_available_i (sem_available_i),
    .head_pop_o      (head_pop_o),
    .sem_acquire_o   (sem_acquire_o),
    .start_o         (start),
    .stall_o         (stall_o)
  );

  // ---------------------------------------------------------------------------------------
  // The instruction, latched at start, and the loop counters.
  // ---------------------------------------------------------------------------------------
  reg                   max_q;
  reg                   max_d;
  reg                   accumulate_q;
  reg                   accumulate_d;
  reg [SPAD_ADDR_W-1:0] weight_addr_q;
  reg [SPAD_ADDR_W-1:0] weight_addr_d;
  reg [SPAD_ADDR_W-1:0] acc_addr_q;
  reg [SPAD_ADDR_W-1:0] acc_addr_d;
  reg [COUNT0_W-1:0]    count0_q;
  reg [COUNT0_W-1:0]    count0_d;
  reg [SPAD_ADDR_W-1:0] stride0_q;
  reg [SPAD_ADDR_W-1:0] stride0_d;
  reg [COUNT1_W-1:0]    count1_q;
  reg [COUNT1_W-1:0]    count1_d;
  reg [SPAD_ADDR_W-1:0] stride1_q;
  reg [SPAD_ADDR_W-1:0] stride1_d;
  reg [K_W-1:0]         kh_q;
  reg [K_W-1:0]         kh_d;
  reg [K_W-1:0]         kw_q;
  reg [K_W-1:0]         kw_d;
  reg [SKIP_W-1:0]      step_q;          // step - 1
  reg [SKIP_W-1:0]      step_d;
  reg [PAD_W-1:0]       pad_top_q;
  reg [PAD_W-1:0]       pad_top_d;
  reg [PAD_W-1:0]       pad_bottom_q;
  reg [PAD_W-1:0]       pad_bottom_d;
  reg [PAD_W-1:0]       pad_left_q;
  reg [PAD_W-1:0]       pad_left_d;
  reg [PAD_W-1:0]       pad_right_q;
  reg [PAD_W-1:0]       pad_right_d;
  reg [PADV_W-1:0]      pad_value_q;
  reg [PADV_W-1:0]      pad_value_d;
  reg [NUM_SEM-1:0]     release_q;
  reg [NUM_SEM-1:0]     release_d;
  // weight reads: tap (ky, kx), its place in the register window
  reg [K_W-1:0]         ky_q;
  reg [K_W-1:0]         ky_d;
  reg [K_W-1:0]         kx_q;
  reg [K_W-1:0]         kx_d;
  reg [POS_W-1:0]       wrow_q;          // weight rows read so far
  reg [POS_W-1:0]       wrow_d;
  reg                   wl_valid_q;      // a weight row arrives this cycle
  reg [POS_W-1:0]       wl_pos_q;
  // input pixels: (y, x), the next row read, and the pixels to skip to the next output
  reg [COUNT0_W-1:0]    x_q;
  reg [COUNT0_W-1:0]    x_d;
  reg [COUNT1_W-1:0]    y_q;
  reg [COUNT1_W-1:0]    y_d;
  reg [SPAD_ADDR_W-1:0] addr_q;
  reg [SPAD_ADDR_W-1:0] addr_d;
  reg [SPAD_ADDR_W-1:0] row_addr_q;
  reg [SPAD_ADDR_W-1:0] row_addr_d;
  reg [SKIP_W-1:0]      xskip_q;
  reg [SKIP_W-1:0]      xskip_d;
  reg [SKIP_W-1:0]      yskip_q;
  reg [SKIP_W-1:0]      yskip_d;
  reg [SPAD_ADDR_W-1:0] out_idx_q;
  reg [SPAD_ADDR_W-1:0] out_idx_d;

  // pipeline: stage 1 (the pixel's row arrives), stage 2 (the window's arithmetic)
  reg                   s1_valid_q;
  reg [LINE_W-1:0]      s1_x_q;
  reg                   s1_first_q;      // first pixel of its row
  reg                   s1_out_q;
  reg                   s1_ypad_q;
  reg                   s1_xpad_q;
  reg                   s2_valid_q;
  reg [SPAD_ADDR_W-1:0] s2_addr_q;
  wire                  s2_valid_d = s1_valid_q && s1_out_q;
  wire [SPAD_ADDR_W-1:0] s2_addr_d = acc_addr_q + out_idx_q;

  wire [K_W-1:0] pad_k = KERNEL[K_W-1:0];
  // Position in the register window (row-major, KERNEL x KERNEL) of weight tap (ky, kx):
  // the kernel sits at the bottom-right.
  wire [KWIDE_W-1:0] tap_row = { {(KWIDE_W-K_W){1'b0}}, pad_k - kh_q + ky_q};
  wire [KWIDE_W-1:0] tap_col = { {(KWIDE_W-K_W){1'b0}}, pad_k - kw_q + kx_q};
  wire [KWIDE_W-1:0] tap_pos = tap_row * K_WIDE + tap_col;
  wire unused_tap_pos;
  assign unused_tap_pos = ^tap_pos[KWIDE_W-1:POS_W];

  wire w_read   = (phase_q == PHASE_WEIGHTS);
  wire w_last   = (ky_q == kh_q - K_ONE) && (kx_q == kw_q - K_ONE);
  wire px_read  = (phase_q == PHASE_STREAM);
  wire x_last   = (x_q == count0_q - X_ONE);
  wire y_last   = (y_q == count1_q - Y_ONE);
  // This pixel completes a kernel window the instruction computes.
  wire px_out   = (xskip_q == {SKIP_W{1'b0}}) && (yskip_q == {SKIP_W{1'b0}});
  // Padding (max): rows before pad_top or in the last pad_bottom, likewise columns.
  wire [COUNT1_W:0] y_ext = {1'b0, y_q};
  wire [COUNT0_W:0] x_ext = {1'b0, x_q};
  wire px_ypad = (y_ext < { {(COUNT1_W+1-PAD_W){1'b0}}, pad_top_q})
              || (y_ext + { {(COUNT1_W+1-PAD_W){1'b0}}, pad_bottom_q} >= {1'b0, count1_q});
  wire px_xpad = (x_ext < { {(COUNT0_W+1-PAD_W){1'b0}}, pad_left_q})
              || (x_ext + { {(COUNT0_W+1-PAD_W){1'b0}}, pad_right_q} >= {1'b0, count0_q});
  wire [SKIP_W-1:0] kw_skip = { {(SKIP_W-K_W){1'b0}}, kw_q - K_ONE};

  always @* begin
    phase_d       = phase_q;
    drain_d       = drain_q;
    max_d         = max_q;
    accumulate_d  = accumulate_q;
    weight_addr_d = weight_addr_q;
    acc_addr_d    = acc_addr_q;
    count0_d      = count0_q;
    stride0_d     = stride0_q;
    count1_d      = count1_q;
    stride1_d     = stride1_q;
    kh_d          = kh_q;
    kw_d          = kw_q;
    step_d        = step_q;
    pad_top_d     = pad_top_q;
    pad_bottom_d  = pad_bottom_q;
    pad_left_d    = pad_left_q;
    pad_right_d   = pad_right_q;
    pad_value_d   = pad_value_q;
    release_d     = release_q;
    ky_d          = ky_q;
    kx_d          = kx_q;
    wrow_d        = wrow_q;
    x_d           = x_q;
    y_d           = y_q;
    addr_d        = addr_q;
    row_addr_d    = row_addr_q;
    xskip_d       = xskip_q;
    yskip_d       = yskip_q;
    out_idx_d     = out_idx_q;

    case (phase_q)
      PHASE_WEIGHTS: begin
        wrow_d = wrow_q + POS_ONE;
        if (w_last) begin
          phase_d = PHASE_STREAM;
        end else if (kx_q == kw_q - K_ONE) begin
          kx_d = {K_W{1'b0}};
          ky_d = ky_q + K_ONE;
        end else begin
          kx_d = kx_q + K_ONE;
        end
      end
      PHASE_STREAM: begin
        if (x_last) begin
          x_d        = {COUNT0_W{1'b0}};
          y_d        = y_q + Y_ONE;
          row_addr_d = row_addr_q + stride1_q;
          addr_d     = row_addr_q + stride1_q;
          xskip_d    = kw_skip;
          yskip_d    = (yskip_q == {SKIP_W{1'b0}}) ? step_q : yskip_q - SKIP_ONE;
          if (y_last) begin
            phase_d = PHASE_DRAIN;
            drain_d = DRAIN_CYCLES;
          end
        end else begin
          x_d     = x_q + X_ONE;
          addr_d  = addr_q + stride0_q;
          xskip_d = (xskip_q == {SKIP_W{1'b0}}) ? step_q : xskip_q - SKIP_ONE;
        end
      end
      PHASE_DRAIN: begin
        if (drain_q == 2'd0) begin
          phase_d = PHASE_IDLE;
        end else begin
          drain_d = drain_q - DRAIN_ONE;
        end
      end
      default: begin
      end
    endcase

    if (start) begin
      phase_d       = f_max ? PHASE_STREAM : PHASE_WEIGHTS;
      max_d         = f_max;
      accumulate_d  = f_accumulate;
      weight_addr_d = f_weight_addr;
      acc_addr_d    = f_acc_addr;
      count0_d      = f_count0;
      stride0_d     = { {(SPAD_ADDR_W-`HWGEN_WINDOW_STRIDE0_W){1'b0}}, f_stride0};
      count1_d      = f_count1;
      stride1_d     = f_stride1;
      kh_d          = f_kh;
      kw_d          = f_kw;
      step_d        = { {(SKIP_W-STEP_W){1'b0}}, f_step} - SKIP_ONE;
      pad_top_d     = f_pad_top;
      pad_bottom_d  = f_pad_bottom;
      pad_left_d    = f_pad_left;
      pad_right_d   = f_pad_right;
      pad_value_d   = f_pad_value;
      release_d     = f_signal & PRODUCED;
      ky_d          = {K_W{1'b0}};
      kx_d          = {K_W{1'b0}};
      wrow_d        = {POS_W{1'b0}};
      x_d           = {COUNT0_W{1'b0}};
      y_d           = {COUNT1_W{1'b0}};
      addr_d        = f_input_addr;
      row_addr_d    = f_input_addr;
      xskip_d       = { {(SKIP_W-K_W){1'b0}}, f_kw - K_ONE};
      yskip_d       = { {(SKIP_W-K_W){1'b0}}, f_kh - K_ONE};
      out_idx_d     = {SPAD_ADDR_W{1'b0}};
    end
    if (s2_valid_d) begin
      out_idx_d = out_idx_q + ADDR_ONE;
    end
  end

  // ---------------------------------------------------------------------------------------
  // Stage 1: the pixel's row arrives with the line buffers' rows above it. It is written
  // into the line buffers (each one row further up) and shifted into the register window.
  // ---------------------------------------------------------------------------------------

  wire [ROW_W-1:0]        in_row = in_data_i[ROW_W-1:0];
  wire [LINE_W-1:0]       px_line = x_q[LINE_W-1:0];
  // col[r]: window row r of the arriving column (row KERNEL-1 is the pixel's own row).
  wire [KERNEL*ROW_W-1:0] col;
  assign col[(KERNEL-1)*ROW_W +: ROW_W] = in_row;

  generate
    if (IN_ROW_W > ROW_W) begin : gen_in_slot
      // The scale slot of a multi-precision design's rows: integer rows leave it 0.
      wire unused_slot;
      assign unused_slot = ^in_data_i[IN_ROW_W-1:ROW_W];
    end
    if (COUNT0_W > LINE_W) begin : gen_x_hi
      // The compiler keeps rows within LINE pixels.
      wire unused_x_hi;
      assign unused_x_hi = ^x_q[COUNT0_W-1:LINE_W];
    end
  endgenerate

  genvar li;
  generate
    for (li = 0; li < KERNEL - 1; li = li + 1) begin : gen_line
      // Line li holds the row li + 1 above the arriving pixel, at its column. A read of
      // the column being written in the same cycle (rows one pixel wide) takes the write.
      wire [ROW_W-1:0] rdata;
      wire [ROW_W-1:0] row_above;
      wire [ROW_W-1:0] wdata;
      reg              fwd_q;
      reg  [ROW_W-1:0] fwd_data_q;
      wire             fwd_d      = px_read && s1_valid_q && (px_line == s1_x_q);
      wire [ROW_W-1:0] fwd_data_d = wdata;

      // Line 0 takes the arriving row, line li the row line li-1 held.
      assign wdata     = col[(KERNEL-1-li)*ROW_W +: ROW_W];
      assign row_above = fwd_q ? fwd_data_q : rdata;
      assign col[(KERNEL-2-li)*ROW_W +: ROW_W] = row_above;

      hwgen_sram #(
        .WIDTH   (ROW_W),
        .DEPTH   (LINE),
        .ADDR_W  (LINE_W),
        .INDEX_W (LINE_W)
      ) u_line (
        .clk_i   (clk_i),
        .we_i    (s1_valid_q),
        .waddr_i (s1_x_q),
        .wdata_i (wdata),
        .re_i    (px_read),
        .raddr_i (px_line),
        .rdata_o (rdata)
      );

      always @(posedge clk_i{{ c.rst_edge }}) begin
        if ({{ c.rst_on }}) begin
          fwd_q      <= 1'b0;
          fwd_data_q <= {ROW_W{1'b0}};
        end else begin
          fwd_q      <= fwd_d;
          fwd_data_q <= fwd_data_d;
        end
      end
    end
  endgenerate

  // The register window (position r * KERNEL + k, row r, column k; column KERNEL-1 is the
  // newest), its columns' padding flags, and its rows' padding flags (row KERNEL-1 newest).
  reg  [KK*ROW_W-1:0]  win_q;
  wire [KK*ROW_W-1:0]  win_d;
  reg  [KERNEL-1:0]    colpad_q;
  wire [KERNEL-1:0]    colpad_d;
  reg  [KERNEL-1:0]    rowpad_q;
  wire [KERNEL-1:0]    rowpad_d;

  genvar wr;
  genvar wk;
  generate
    for (wr = 0; wr < KERNEL; wr = wr + 1) begin : gen_win_row
      for (wk = 0; wk < KERNEL; wk = wk + 1) begin : gen_win_col
        if (wk == KERNEL - 1) begin : gen_new
          assign win_d[(wr*KERNEL+wk)*ROW_W +: ROW_W] =
            s1_valid_q ? col[wr*ROW_W +: ROW_W] : win_q[(wr*KERNEL+wk)*ROW_W +: ROW_W];
        end else begin : gen_shift
          assign win_d[(wr*KERNEL+wk)*ROW_W +: ROW_W] =
            s1_valid_q ? win_q[(wr*KERNEL+wk+1)*ROW_W +: ROW_W]
                       : win_q[(wr*KERNEL+wk)*ROW_W +: ROW_W];
        end
      end
    end
    if (KERNEL > 1) begin : gen_pad_shift
      assign colpad_d = s1_valid_q ? {s1_xpad_q, colpad_q[KERNEL-1:1]} : colpad_q;
      assign rowpad_d = (s1_valid_q && s1_first_q) ? {s1_ypad_q, rowpad_q[KERNEL-1:1]}
                                                   : rowpad_q;
    end else begin : gen_pad_one
      assign colpad_d = s1_valid_q ? s1_xpad_q : colpad_q;
      assign rowpad_d = (s1_valid_q && s1_first_q) ? s1_ypad_q : rowpad_q;
    end
  endgenerate

  // ---------------------------------------------------------------------------------------
  // Weights: the row of tap (ky, kx) arrives the cycle after it is read and goes to its
  // place in the register window's weights.
  // ---------------------------------------------------------------------------------------
  reg  [KK*WROW_W-1:0] wreg_q;
  wire [KK*WROW_W-1:0] wreg_d;
  wire                 wl_valid_d = w_read;
  wire [POS_W-1:0]     wl_pos_d   = tap_pos[POS_W-1:0];

  genvar wp;
  generate
    for (wp = 0; wp < KK; wp = wp + 1) begin : gen_wreg
      localparam [POS_W-1:0] POS = wp;
      assign wreg_d[wp*WROW_W +: WROW_W] = (wl_valid_q && (wl_pos_q == POS))
                                           ? w_data_i : wreg_q[wp*WROW_W +: WROW_W];
    end
  endgenerate

  // A position of the register window is a tap of the instruction's kernel.
  wire [KK-1:0] in_kernel;
  generate
    for (wp = 0; wp < KK; wp = wp + 1) begin : gen_in_kernel
      localparam integer   ROW_I = wp / KERNEL;
      localparam integer   COL_I = wp % KERNEL;
      localparam [K_W-1:0] ROW   = ROW_I[K_W-1:0];
      localparam [K_W-1:0] COL   = COL_I[K_W-1:0];
      assign in_kernel[wp] = ({1'b0, ROW} + {1'b0, kh_q} >= {1'b0, pad_k})
                          && ({1'b0, COL} + {1'b0, kw_q} >= {1'b0, pad_k});
    end
  endgenerate

  // ---------------------------------------------------------------------------------------
  // Stage 2: the window's arithmetic, lane by lane. Stage 3 reads the accumulator row
  // (accumulate), stage 4 writes it.
  // ---------------------------------------------------------------------------------------
  reg                   s3_valid_q;
  reg [SPAD_ADDR_W-1:0] s3_addr_q;
  reg [LANES*ACC_W-1:0] s3_v_q;
  wire [LANES*ACC_W-1:0] s3_v_d;
  reg                   s4_valid_q;
  reg [SPAD_ADDR_W-1:0] s4_addr_q;
  reg [LANES*ACC_W-1:0] s4_v_q;

  // Taps on padding (a padding pixel's row may hold anything), and the taps a maximum
  // takes: in the kernel and not padding.
  wire [KK-1:0] tap_pad;
  wire [KK-1:0] tap_on;
  generate
    for (wp = 0; wp < KK; wp = wp + 1) begin : gen_tap_on
      assign tap_pad[wp] = rowpad_q[wp / KERNEL] || colpad_q[wp % KERNEL];
      assign tap_on[wp]  = in_kernel[wp] && !tap_pad[wp];
    end
  endgenerate

  // The input a sum reads at a padding tap: pad_value's low INPUT_W bits, or extended in
  // the input's signedness when the inputs are wider.
  wire [INPUT_W-1:0] pad_act;

  hwgen_pad_element #(
    .PADV_W       (PADV_W),
    .INPUT_W      (INPUT_W),
    .INPUT_SIGNED (INPUT_SIGNED)
  ) u_pad_element (
    .pattern_i (pad_value_q),
    .element_o (pad_act)
  );

  genvar ln;
  generate
    for (ln = 0; ln < LANES; ln = ln + 1) begin : gen_lane
      // Sum of products: a chain of multiply-adds over the kernel's taps (a padding tap
      // reads pad_act; a position outside the kernel is multiplied by a zero weight).
      // Maximum: a chain of comparisons of the inputs extended by one bit (sign or zero)
      // over the taps that count.
      for (wp = 0; wp < KK; wp = wp + 1) begin : gen_tap
        wire [ACC_W-1:0]        psum_in;
        wire [ACC_W-1:0]        psum_out;
        wire signed [INPUT_W:0] mx_in;
        wire signed [INPUT_W:0] mx_out;
        wire                    have_in;
        wire                    have_out;
        if (wp == 0) begin : gen_first
          assign psum_in = {ACC_W{1'b0}};
          assign mx_in   = {(INPUT_W+1){1'b0}};
          assign have_in = 1'b0;
        end else begin : gen_chain
          assign psum_in = gen_tap[wp-1].psum_out;
          assign mx_in   = gen_tap[wp-1].mx_out;
          assign have_in = gen_tap[wp-1].have_out;
        end
        wire [INPUT_W-1:0]  act    = tap_pad[wp] ? pad_act
                                                 : win_q[wp*ROW_W + ln*INPUT_W +: INPUT_W];
        wire [WEIGHT_W-1:0] weight = in_kernel[wp] ? wreg_q[wp*WROW_W + ln*WEIGHT_W +: WEIGHT_W]
                                                   : {WEIGHT_W{1'b0}};
        wire                    act_msb = (INPUT_SIGNED != 0) ? act[INPUT_W-1] : 1'b0;
        wire signed [INPUT_W:0] act_ext = {act_msb, act};
        wire                    take    = tap_on[wp] && (!have_in || (act_ext > mx_in));

        {{ c.leaves.mac }} #(
          .INPUT_W       (INPUT_W),
          .WEIGHT_W      (WEIGHT_W),
          .PSUM_W        (ACC_W),
          .INPUT_SIGNED  (INPUT_SIGNED),
          .WEIGHT_SIGNED (WEIGHT_SIGNED)
        ) u_mac (
          .act_i    (act),
          .weight_i (weight),
          .psum_i   (psum_in),
          .psum_o   (psum_out)
        );

        assign mx_out   = take ? act_ext : mx_in;
        assign have_out = have_in || tap_on[wp];
      end
      wire [INPUT_W:0] mx_last = gen_tap[KK-1].mx_out;
      wire             unused_have;
      assign unused_have = gen_tap[KK-1].have_out;
      assign s3_v_d[ln*ACC_W +: ACC_W] =
        max_q ? { {(ACC_W-INPUT_W-1){mx_last[INPUT_W]}}, mx_last}
              : gen_tap[KK-1].psum_out;

      // Stage 4: overwrite, add or take the maximum with the old row (signed).
      wire signed [ACC_W-1:0] v_new = s4_v_q[ln*ACC_W +: ACC_W];
      wire signed [ACC_W-1:0] v_old = acc_rd_data_i[ln*ACC_W +: ACC_W];
      assign acc_wr_data_o[ln*ACC_W +: ACC_W] =
        !accumulate_q ? v_new
                      : (max_q ? ((v_old > v_new) ? v_old : v_new) : v_old + v_new);
    end
  endgenerate

  // ---------------------------------------------------------------------------------------
  // Registers.
  // ---------------------------------------------------------------------------------------
  wire                   s1_valid_d = px_read;
  wire                   s1_first_d = (x_q == {COUNT0_W{1'b0}});
  wire [LINE_W-1:0]      s1_x_d     = px_line;
  wire                   s1_out_d   = px_out;
  wire                   s1_ypad_d  = px_ypad;
  wire                   s1_xpad_d  = px_xpad;
  wire                   s3_valid_d = s2_valid_q;
  wire [SPAD_ADDR_W-1:0] s3_addr_d  = s2_addr_q;
  wire                   s4_valid_d = s3_valid_q;
  wire [SPAD_ADDR_W-1:0] s4_addr_d  = s3_addr_q;
  wire [LANES*ACC_W-1:0] s4_v_d     = s3_v_q;

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      phase_q       <= PHASE_IDLE;
      drain_q       <= 2'd0;
      max_q         <= 1'b0;
      accumulate_q  <= 1'b0;
      weight_addr_q <= {SPAD_ADDR_W{1'b0}};
      acc_addr_q    <= {SPAD_ADDR_W{1'b0}};
      count0_q      <= {COUNT0_W{1'b0}};
      stride0_q     <= {SPAD_ADDR_W{1'b0}};
      count1_q      <= {COUNT1_W{1'b0}};
      stride1_q     <= {SPAD_ADDR_W{1'b0}};
      kh_q          <= {K_W{1'b0}};
      kw_q          <= {K_W{1'b0}};
      step_q        <= {SKIP_W{1'b0}};
      pad_top_q     <= {PAD_W{1'b0}};
      pad_bottom_q  <= {PAD_W{1'b0}};
      pad_left_q    <= {PAD_W{1'b0}};
      pad_right_q   <= {PAD_W{1'b0}};
      pad_value_q   <= {PADV_W{1'b0}};
      release_q     <= {NUM_SEM{1'b0}};
      ky_q          <= {K_W{1'b0}};
      kx_q          <= {K_W{1'b0}};
      wrow_q        <= {POS_W{1'b0}};
      wl_valid_q    <= 1'b0;
      wl_pos_q      <= {POS_W{1'b0}};
      x_q           <= {COUNT0_W{1'b0}};
      y_q           <= {COUNT1_W{1'b0}};
      addr_q        <= {SPAD_ADDR_W{1'b0}};
      row_addr_q    <= {SPAD_ADDR_W{1'b0}};
      xskip_q       <= {SKIP_W{1'b0}};
      yskip_q       <= {SKIP_W{1'b0}};
      out_idx_q     <= {SPAD_ADDR_W{1'b0}};
      s1_valid_q    <= 1'b0;
      s1_x_q        <= {LINE_W{1'b0}};
      s1_first_q    <= 1'b0;
      s1_out_q      <= 1'b0;
      s1_ypad_q     <= 1'b0;
      s1_xpad_q     <= 1'b0;
      win_q         <= {(KK*ROW_W){1'b0}};
      colpad_q      <= {KERNEL{1'b0}};
      rowpad_q      <= {KERNEL{1'b0}};
      wreg_q        <= {(KK*WROW_W){1'b0}};
      s2_valid_q    <= 1'b0;
      s2_addr_q     <= {SPAD_ADDR_W{1'b0}};
      s3_valid_q    <= 1'b0;
      s3_addr_q     <= {SPAD_ADDR_W{1'b0}};
      s3_v_q        <= {(LANES*ACC_W){1'b0}};
      s4_valid_q    <= 1'b0;
      s4_addr_q     <= {SPAD_ADDR_W{1'b0}};
      s4_v_q        <= {(LANES*ACC_W){1'b0}};
    end else begin
      phase_q       <= phase_d;
      drain_q       <= drain_d;
      max_q         <= max_d;
      accumulate_q  <= accumulate_d;
      weight_addr_q <= weight_addr_d;
      acc_addr_q    <= acc_addr_d;
      count0_q      <= count0_d;
      stride0_q     <= stride0_d;
      count1_q      <= count1_d;
      stride1_q     <= stride1_d;
      kh_q          <= kh_d;
      kw_q          <= kw_d;
      step_q        <= step_d;
      pad_top_q     <= pad_top_d;
      pad_bottom_q  <= pad_bottom_d;
      pad_left_q    <= pad_left_d;
      pad_right_q   <= pad_right_d;
      pad_value_q   <= pad_value_d;
      release_q     <= release_d;
      ky_q          <= ky_d;
      kx_q          <= kx_d;
      wrow_q        <= wrow_d;
      wl_valid_q    <= wl_valid_d;
      wl_pos_q      <= wl_pos_d;
      x_q           <= x_d;
      y_q           <= y_d;
      addr_q        <= addr_d;
      row_addr_q    <= row_addr_d;
      xskip_q       <= xskip_d;
      yskip_q       <= yskip_d;
      out_idx_q     <= out_idx_d;
      s1_valid_q    <= s1_valid_d;
      s1_x_q        <= s1_x_d;
      s1_first_q    <= s1_first_d;
      s1_out_q      <= s1_out_d;
      s1_ypad_q     <= s1_ypad_d;
      s1_xpad_q     <= s1_xpad_d;
      win_q         <= win_d;
      colpad_q      <= colpad_d;
      rowpad_q      <= rowpad_d;
      wreg_q        <= wreg_d;
      s2_valid_q    <= s2_valid_d;
      s2_addr_q     <= s2_addr_d;
      s3_valid_q    <= s3_valid_d;
      s3_addr_q     <= s3_addr_d;
      s3_v_q        <= s3_v_d;
      s4_valid_q    <= s4_valid_d;
      s4_addr_q     <= s4_addr_d;
      s4_v_q        <= s4_v_d;
    end
  end

  assign w_re_o         = w_read;
  assign w_addr_o       = weight_addr_q + { {(SPAD_ADDR_W-POS_W){1'b0}}, wrow_q};
  assign in_re_o        = px_read;
  assign in_addr_o      = addr_q;
  assign acc_rd_valid_o = s3_valid_q && accumulate_q;
  assign acc_rd_addr_o  = s3_addr_q;
  assign acc_wr_valid_o = s4_valid_q;
  assign acc_wr_addr_o  = s4_addr_q;
  assign sem_release_o  = finishing ? release_q : {NUM_SEM{1'b0}};
  assign busy_o         = (phase_q != PHASE_IDLE);

endmodule
