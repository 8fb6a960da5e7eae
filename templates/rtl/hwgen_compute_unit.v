{{ c.banner }}
// Compute queue executor with the systolic array. A matmul streams input rows (two-level
// strided loop over the input buffer) through the array into contiguous accumulator rows,
// overwriting or accumulating, and may at the same time preload the next weight tile into
// the idle weight bank. The array fills a bank on the activations' wavefront, so a preload
// starts with the instruction: the vectors that used the bank before have all entered the
// array. The preload's rows are read in consecutive cycles, and the instruction finishes
// only after its last row has arrived, so two preloads are at least a cycle apart: both as
// the array requires.
// Semaphores are released when the instruction's last result has been written.
//
// Each matmul names its precision (prec). A weight tile is CPF element rows, followed, for
// a precision whose rows carry block scales (bit prec of PREC_SCALED), by W_SCALE_ROWS rows
// of column scales that the preload shifts into the bank's scale register. Input rows have
// a scale slot of SCALE_SLOT_W bits after their elements (0 without block scales; an
// unscaled row reads scale 0). At each column output the datapath's accumulation leaf
// ({{ c.leaves.acc }}) turns the column result, with the input row's and the column's
// scales, into the accumulator's domain and writes or adds it. Column scales are read at the
// array's output, so a preload shifts them into the bank's staging register and commits
// them COMMIT cycles after its last row: after the bank's earlier vectors have left the
// array and before the first vector of its next tile does. A preload with scale rows waits
// while a commit for its bank is pending: on the square arrays that block scales need, only
// two preloads into one bank with no swap between them can come that close.
//
// With ZERO_POINTS (integer Designs with a row unit), every column sums (a - za) * (w - zw)
// over the array's CPF rows, za and zw the matmul's zero_input and zero_weight: the array's
// sum of a * w less zw * (sum of the input row - CPF * za) less za * (the column's sum of
// weights). A preload adds up its columns' sums as its rows arrive and commits them like
// the column scales (and waits likewise); the row's sum is taken as it enters the array
// and travels in the tag with the zero points; both products are formed, in parallel, as
// the column results leave the array (only adders on the input buffer's read path).
`include "hwgen_isa.vh"
module hwgen_compute_unit #(
  parameter integer       INSTR_W       = `HWGEN_INSTR_W,
  parameter integer       NUM_SEM       = 10,
  parameter [NUM_SEM-1:0] CONSUMED      = {NUM_SEM{1'b0}},
  parameter [NUM_SEM-1:0] PRODUCED      = {NUM_SEM{1'b0}},
  parameter integer       CPF           = 8,
  parameter integer       KPF           = 8,
  parameter integer       INPUT_W       = 8,
  parameter integer       WEIGHT_W      = 8,
  parameter integer       PSUM_W        = 32,
  parameter integer       COL_W         = 32,
  parameter integer       ACC_W         = 32,
  parameter integer       INPUT_SIGNED  = 1,
  parameter integer       WEIGHT_SIGNED = 1,
  parameter integer       SCALE_SLOT_W  = 0,
  parameter integer       W_SCALE_ROWS  = 0,
  parameter [1:0]         PREC_SCALED   = 2'b00,
  parameter integer       ZERO_POINTS   = 0,
  parameter integer       SPAD_ADDR_W   = 16
) (
  input  wire                                clk_i,
  input  wire                                {{ c.rst }},
  // queue head
  input  wire                                head_valid_i,
  input  wire [INSTR_W-1:0]                  head_instr_i,
  output wire                                head_pop_o,
  // semaphores
  input  wire [NUM_SEM-1:0]                  sem_available_i,
  output wire [NUM_SEM-1:0]                  sem_acquire_o,
  output wire [NUM_SEM-1:0]                  sem_release_o,
  // input buffer (read): the elements, then the scale slot
  output wire                                in_re_o,
  output wire [SPAD_ADDR_W-1:0]              in_addr_o,
  input  wire [CPF*INPUT_W+SCALE_SLOT_W-1:0] in_data_i,
  // weight buffer (read)
  output wire                                w_re_o,
  output wire [SPAD_ADDR_W-1:0]              w_addr_o,
  input  wire [KPF*WEIGHT_W-1:0]             w_data_i,
  // accumulator (this unit has priority on both ports)
  output wire                                acc_rd_valid_o,
  output wire [SPAD_ADDR_W-1:0]              acc_rd_addr_o,
  input  wire [KPF*ACC_W-1:0]                acc_rd_data_i,
  output wire                                acc_wr_valid_o,
  output wire [SPAD_ADDR_W-1:0]              acc_wr_addr_o,
  output wire [KPF*ACC_W-1:0]                acc_wr_data_o,
  // performance
  output wire                                busy_o,
  output wire                                stall_o,
  output wire                                mac_active_o
);

  // A preload reads its R rows (CPF, plus the scale rows) in cycles T .. T+R-1. The bank's
  // earlier vectors entered the array by T (the previous instruction's last row, read in
  // the cycle this one started) and leave it by T+LATENCY; its next vector enters at T+R+3
  // at the earliest and leaves LATENCY cycles later. The staged scales commit at the end of
  // cycle T+R-1+COMMIT, in between: LATENCY < R + KPF and KPF < LATENCY + 4.
  localparam integer           COMMIT    = KPF;
  localparam integer           COMMIT_W  = $clog2(COMMIT + 1);
  localparam integer           SCALE_W   = `HWGEN_SCALE_W;
  localparam integer           PREC_W    = `HWGEN_MATMUL_PREC_W;
  localparam integer           WROW_W    = KPF * WEIGHT_W;
  localparam integer           PL_W      = $clog2(CPF + W_SCALE_ROWS + 1);
  localparam integer           INDEX_W   = `HWGEN_MATMUL_COUNT0_W + `HWGEN_MATMUL_COUNT1_W;
  // Zero points: their instruction fields, and the widths of a row's and a column's sums.
  localparam integer           ZERO_W    = `HWGEN_MATMUL_ZERO_INPUT_W;
  // An input row's sum less CPF * za (the difference of two sums of CPF elements, signed)
  // and a weight column's sum (signed).
  localparam integer           ROW_W     = INPUT_W + $clog2(CPF) + 2;
  localparam integer           WSUM_W    = WEIGHT_W + $clog2(CPF) + 1;
  // Tag fields, from bit 0: accumulator row, input scale, weight bank, accumulate,
  // precision, semaphores to release, and with ZERO_POINTS the row's sum less CPF * za,
  // za and zw.
  localparam integer           TAG_BANK  = SPAD_ADDR_W + SCALE_W;
  localparam integer           TAG_ACC   = TAG_BANK + 1;
  localparam integer           TAG_PREC  = TAG_ACC + 1;
  localparam integer           TAG_SEM   = TAG_PREC + PREC_W;
  localparam integer           TAG_ZP    = TAG_SEM + NUM_SEM;
  localparam integer           ZP_TAG_W  = (ZERO_POINTS != 0) ? ROW_W + INPUT_W + WEIGHT_W : 1;
  localparam integer           TAG_W     = TAG_ZP + ZP_TAG_W;
  localparam [COMMIT_W-1:0]    COMMIT_N  = COMMIT[COMMIT_W-1:0];
  localparam [COMMIT_W-1:0]    COMMIT_1  = 1;
  localparam [PL_W-1:0]        PL_ONE    = 1;
  localparam [PL_W-1:0]        PL_CPF    = CPF[PL_W-1:0];
  localparam [PL_W-1:0]        PL_SCALES = W_SCALE_ROWS[PL_W-1:0];
  localparam [SPAD_ADDR_W-1:0] ADDR_ONE  = 1;

  wire [NUM_SEM-1:0]                     f_wait;
  wire [NUM_SEM-1:0]                     f_signal;
  wire                                   f_preload;
  wire                                   f_swap;
  wire                                   f_accumulate;
  wire [`HWGEN_MATMUL_WEIGHT_ADDR_W-1:0] f_weight_addr;
  wire [`HWGEN_MATMUL_INPUT_ADDR_W-1:0]  f_input_addr;
  wire [`HWGEN_MATMUL_ACC_ADDR_W-1:0]    f_acc_addr;
  wire [`HWGEN_MATMUL_COUNT0_W-1:0]      f_count0;
  wire [`HWGEN_MATMUL_STRIDE0_W-1:0]     f_stride0;
  wire [`HWGEN_MATMUL_COUNT1_W-1:0]      f_count1;
  wire [`HWGEN_MATMUL_STRIDE1_W-1:0]     f_stride1;
  wire [PREC_W-1:0]                      f_prec;
  wire [ZERO_W-1:0]                      f_zero_input;
  wire [ZERO_W-1:0]                      f_zero_weight;

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
    .prec_o        (f_prec),
    .zero_input_o  (f_zero_input),
    .zero_weight_o (f_zero_weight)
  );

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
  reg [PREC_W-1:0]      prec_q;
  reg [PREC_W-1:0]      prec_d;
  // weight preload
  reg                   pl_active_q;
  reg                   pl_active_d;
  reg [SPAD_ADDR_W-1:0] pl_base_q;
  reg [SPAD_ADDR_W-1:0] pl_base_d;
  reg [PL_W-1:0]        pl_issued_q;
  reg [PL_W-1:0]        pl_issued_d;
  reg                   pl_scaled_q;     // the tile has scale rows
  reg                   pl_scaled_d;
  reg                   pl_data_q;       // a weight row arrives this cycle
  reg                   pl_scale_q;      // ... and it is one of the tile's scale rows
  reg [KPF*SCALE_W-1:0] wscale0_q;       // column scales of weight bank 0
  reg [KPF*SCALE_W-1:0] wscale0_d;
  reg [KPF*SCALE_W-1:0] wscale1_q;       // column scales of weight bank 1
  reg [KPF*SCALE_W-1:0] wscale1_d;
  reg [KPF*SCALE_W-1:0] wstage0_q;       // scales preloaded for bank 0, not yet committed
  reg [KPF*SCALE_W-1:0] wstage0_d;
  reg [KPF*SCALE_W-1:0] wstage1_q;       // ... for bank 1
  reg [KPF*SCALE_W-1:0] wstage1_d;
  reg [COMMIT_W-1:0]    commit0_q;       // cycles until bank 0's staged scales commit
  reg [COMMIT_W-1:0]    commit0_d;
  reg [COMMIT_W-1:0]    commit1_q;
  reg [COMMIT_W-1:0]    commit1_d;
  // input stream: a row read this cycle enters the array next cycle, with the context of
  // the instruction that read it (the next instruction may have started by then)
  reg                   tok_valid_q;
  reg [SPAD_ADDR_W-1:0] tok_addr_q;
  reg [SPAD_ADDR_W-1:0] tok_addr_d;
  reg                   tok_bank_q;
  reg                   tok_acc_q;
  reg [PREC_W-1:0]      tok_prec_q;
  // the semaphores of an instruction that finished with its last read: they travel with
  // that row, which enters the array the cycle after
  reg [NUM_SEM-1:0]     tail_release_q;

  wire                   start;
  wire                   finished;
  wire                   finish_idle;
  wire                   finish_last;
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
  assign unused_agen = ^agen_index[INDEX_W-1:SPAD_ADDR_W];

  // The preload fills the bank the current tile does not use: CPF element rows and, for a
  // block-scaled precision, its scale rows.
  wire [PL_W-1:0]        pl_rows    = pl_scaled_q ? PL_CPF + PL_SCALES : PL_CPF;
  wire [SPAD_ADDR_W-1:0] pl_last    = { {(SPAD_ADDR_W-PL_W){1'b0}}, pl_rows} - ADDR_ONE;
  wire                   pl_bank    = !bank_q;
  wire                   pl_pending = pl_bank ? (commit1_q != {COMMIT_W{1'b0}})
                                              : (commit0_q != {COMMIT_W{1'b0}});
  // Once it has started, a preload reads a row every cycle until it is done.
  // A preload whose bank has values to commit (scales, or ZERO_POINTS' column sums) waits
  // while that bank's last commit is pending.
  wire pl_commits  = pl_scaled_q || (ZERO_POINTS != 0);
  wire pl_read     = pl_active_q && !(pl_commits && pl_pending) && (pl_issued_q != pl_rows);
  wire pl_last_read = pl_read && (pl_issued_q == pl_rows - PL_ONE);
  wire stream_read = busy_q && agen_valid;
  // Done once the preload has shifted in and the last input row is read in this cycle
  // (finish_last: the row enters the array next cycle and carries the semaphores to
  // release, through tail_release) or was read before (finish_idle: no rows, or the
  // preload took longer; the row entering now, or a bubble, carries them, unless a tail
  // release does already, so two releases never share a tag). The next instruction may
  // start in the same cycle, so the array takes a row every cycle across instructions.
  wire   pl_done      = !pl_active_q && !pl_data_q;
  wire   tail_pending = (tail_release_q != {NUM_SEM{1'b0}});
  assign finish_last  = busy_q && stream_read && agen_last && pl_done;
  assign finish_idle  = busy_q && !agen_valid && pl_done && !tail_pending;
  assign finished     = finish_last || finish_idle;

  // A scale row arriving shifts the earlier ones up: the first row read (the last in
  // memory) ends in the top part of the register.
  wire [KPF*SCALE_W+WROW_W-1:0] wstage0_shift = {wstage0_q, w_data_i};
  wire [KPF*SCALE_W+WROW_W-1:0] wstage1_shift = {wstage1_q, w_data_i};
  wire                          unused_wstage_shift;
  assign unused_wstage_shift = ^{wstage0_shift[KPF*SCALE_W+WROW_W-1:KPF*SCALE_W],
                                 wstage1_shift[KPF*SCALE_W+WROW_W-1:KPF*SCALE_W]};
  // A weight row arrives the cycle after it is read; the scale rows are read first.
  wire pl_data_d = pl_read;
  wire pl_scale_d;
generate
if (W_SCALE_ROWS > 0) begin : gen_scale_rows
assign pl_scale_d = pl_read && pl_scaled_q && (pl_issued_q < PL_SCALES);
    end else begin : gen_no_scale_rows
      assign pl_scale_d = 1'b0;
    end
  endgenerate
  wire                  tok_valid_d    = stream_read;
  wire                  tok_bank_d     = bank_q;
  wire                  tok_acc_d      = accumulate_q;
  wire [PREC_W-1:0]     tok_prec_d     = prec_q;
  wire [NUM_SEM-1:0]    tail_release_d = finish_last ? release_q : {NUM_SEM{1'b0}};

  always @* begin
    busy_d       = busy_q;
    bank_d       = bank_q;
    accumulate_d = accumulate_q;
    acc_base_d   = acc_base_q;
    release_d    = release_q;
    prec_d       = prec_q;
    pl_active_d  = pl_active_q;
    pl_base_d    = pl_base_q;
    pl_issued_d  = pl_issued_q;
    pl_scaled_d  = pl_scaled_q;
    tok_addr_d   = acc_base_q + agen_index[SPAD_ADDR_W-1:0];
    commit0_d    = (commit0_q == {COMMIT_W{1'b0}}) ? commit0_q : commit0_q - COMMIT_1;
    commit1_d    = (commit1_q == {COMMIT_W{1'b0}}) ? commit1_q : commit1_q - COMMIT_1;
    wscale0_d    = (commit0_q == COMMIT_1) ? wstage0_q : wscale0_q;
    wscale1_d    = (commit1_q == COMMIT_1) ? wstage1_q : wscale1_q;
    wstage0_d    = wstage0_q;
    wstage1_d    = wstage1_q;

    if (start) begin
      busy_d       = 1'b1;
      bank_d       = f_swap ? !bank_q : bank_q;
      accumulate_d = f_accumulate;
      acc_base_d   = f_acc_addr;
      release_d    = f_signal & PRODUCED;
      prec_d       = f_prec;
      pl_active_d  = f_preload;
      pl_base_d    = f_weight_addr;
      pl_issued_d  = {PL_W{1'b0}};
      pl_scaled_d  = PREC_SCALED[f_prec];
    end else if (finished) begin
      busy_d = 1'b0;
    end

    if (pl_read) begin
      pl_issued_d = pl_issued_q + PL_ONE;
    end
    if (pl_last_read) begin
      pl_active_d = 1'b0;
      if (pl_commits) begin
        if (pl_bank) begin
          commit1_d = COMMIT_N;
        end else begin
          commit0_d = COMMIT_N;
        end
      end
    end

    if (pl_data_q && pl_scale_q) begin
      if (pl_bank) begin
        wstage1_d = wstage1_shift[KPF*SCALE_W-1:0];
      end else begin
        wstage0_d = wstage0_shift[KPF*SCALE_W-1:0];
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      busy_q         <= 1'b0;
      bank_q         <= 1'b0;
      accumulate_q   <= 1'b0;
      acc_base_q     <= {SPAD_ADDR_W{1'b0}};
      release_q      <= {NUM_SEM{1'b0}};
      prec_q         <= {PREC_W{1'b0}};
      pl_active_q    <= 1'b0;
      pl_base_q      <= {SPAD_ADDR_W{1'b0}};
      pl_issued_q    <= {PL_W{1'b0}};
      pl_scaled_q    <= 1'b0;
      pl_data_q      <= 1'b0;
      pl_scale_q     <= 1'b0;
      wscale0_q      <= {(KPF*SCALE_W){1'b0}};
      wscale1_q      <= {(KPF*SCALE_W){1'b0}};
      wstage0_q      <= {(KPF*SCALE_W){1'b0}};
      wstage1_q      <= {(KPF*SCALE_W){1'b0}};
      commit0_q      <= {COMMIT_W{1'b0}};
      commit1_q      <= {COMMIT_W{1'b0}};
      tok_valid_q    <= 1'b0;
      tok_addr_q     <= {SPAD_ADDR_W{1'b0}};
      tok_bank_q     <= 1'b0;
      tok_acc_q      <= 1'b0;
      tok_prec_q     <= {PREC_W{1'b0}};
      tail_release_q <= {NUM_SEM{1'b0}};
    end else begin
      busy_q         <= busy_d;
      bank_q         <= bank_d;
      accumulate_q   <= accumulate_d;
      acc_base_q     <= acc_base_d;
      release_q      <= release_d;
      prec_q         <= prec_d;
      pl_active_q    <= pl_active_d;
      pl_base_q      <= pl_base_d;
      pl_issued_q    <= pl_issued_d;
      pl_scaled_q    <= pl_scaled_d;
      pl_data_q      <= pl_data_d;
      pl_scale_q     <= pl_scale_d;
      wscale0_q      <= wscale0_d;
      wscale1_q      <= wscale1_d;
      wstage0_q      <= wstage0_d;
      wstage1_q      <= wstage1_d;
      commit0_q      <= commit0_d;
      commit1_q      <= commit1_d;
      tok_valid_q    <= tok_valid_d;
      tok_addr_q     <= tok_addr_d;
      tok_bank_q     <= tok_bank_d;
      tok_acc_q      <= tok_acc_d;
      tok_prec_q     <= tok_prec_d;
      tail_release_q <= tail_release_d;
    end
  end

  // Weight rows are read last row first (the scale rows, from weight_addr + CPF, before the
  // element rows): after CPF shifts, array row r holds weight_addr + r.
  assign w_re_o    = pl_read;
  assign w_addr_o  = pl_base_q + pl_last - { {(SPAD_ADDR_W-PL_W){1'b0}}, pl_issued_q};
  assign in_re_o   = stream_read;
  assign in_addr_o = agen_addr;

  // The input row's block scale (0 for rows without a scale slot).
  wire [SCALE_W-1:0] in_scale;
  generate
    if (SCALE_SLOT_W > 0) begin : gen_row_scale
      assign in_scale = in_data_i[CPF*INPUT_W +: SCALE_W];
    end else begin : gen_no_row_scale
      assign in_scale = {SCALE_W{1'b0}};
    end
  endgenerate

  // The systolic array. The tag carries the accumulator row, the accumulate flag, the weight
  // bank, the input row's scale, the precision and, on an instruction's last row (or a
  // bubble, when it finishes with no row entering), the semaphores to release.
  wire [NUM_SEM-1:0]      idle_release = finish_idle ? release_q : {NUM_SEM{1'b0}};
  wire [NUM_SEM-1:0]      in_release   = tail_release_q | idle_release;
  wire [ZP_TAG_W-1:0]     in_zp;
  wire [TAG_W-1:0]        in_tag       = {in_zp, in_release, tok_prec_q, tok_acc_q, tok_bank_q,
                                          in_scale, tok_addr_q};
  wire                  out_valid;
  wire [TAG_W-1:0]      out_tag;
  wire [KPF*COL_W-1:0]  out_col;
  wire [KPF*PSUM_W-1:0] out_psum;

  // The array's elements add in COL_W bits, in which every column sum of CPF products is
  // exact when it is narrower than PSUM_W (the datapath's column_bits): such a sum is
  // sign-extended to PSUM_W as it leaves.
  hwgen_systolic_array #(
    .CPF           (CPF),
    .KPF           (KPF),
    .INPUT_W       (INPUT_W),
    .WEIGHT_W      (WEIGHT_W),
    .PSUM_W        (COL_W),
    .INPUT_SIGNED  (INPUT_SIGNED),
    .WEIGHT_SIGNED (WEIGHT_SIGNED),
    .TAG_W         (TAG_W)
  ) u_array (
    .clk_i         (clk_i),
    .{{ c.rst }}   ({{ c.rst }}),
    .in_valid_i    (tok_valid_q),
    .in_bank_i     (tok_bank_q),
    .in_tag_i      (in_tag),
    .in_act_i      (in_data_i[CPF*INPUT_W-1:0]),
    .wshift_en_i   (pl_data_q && !pl_scale_q),
    .wshift_bank_i (pl_bank),
    .wshift_row_i  (w_data_i),
    .out_valid_o   (out_valid),
    .out_tag_o     (out_tag),
    .out_psum_o    (out_col)
  );

  genvar oc;
  generate
    for (oc = 0; oc < KPF; oc = oc + 1) begin : gen_col_out
      wire [COL_W-1:0] sum = out_col[oc*COL_W +: COL_W];
      if (COL_W < PSUM_W) begin : gen_extend
        assign out_psum[oc*PSUM_W +: PSUM_W] = { {(PSUM_W-COL_W){sum[COL_W-1]}}, sum};
      end else begin : gen_same
        assign out_psum[oc*PSUM_W +: PSUM_W] = sum;
      end
    end
  endgenerate

  wire [NUM_SEM-1:0]     out_release    = out_tag[TAG_SEM +: NUM_SEM];
  wire [PREC_W-1:0]      out_prec       = out_tag[TAG_PREC +: PREC_W];
  wire                   out_accumulate = out_tag[TAG_ACC];
  wire                   out_bank       = out_tag[TAG_BANK];
  wire [SCALE_W-1:0]     out_scale      = out_tag[SPAD_ADDR_W +: SCALE_W];
  wire [SPAD_ADDR_W-1:0] out_addr       = out_tag[SPAD_ADDR_W-1:0];
  wire [KPF*SCALE_W-1:0] out_wscale     = out_bank ? wscale1_q : wscale0_q;
  wire [ZP_TAG_W-1:0]    out_zp         = out_tag[TAG_ZP +: ZP_TAG_W];
  // The column sums the accumulation takes: the array's, or with ZERO_POINTS corrected.
  wire [KPF*PSUM_W-1:0]  col_psum;

  generate
    if (ZERO_POINTS != 0) begin : gen_zero_points
      // The zero points of the instruction running, of the row entering the array, and
      // as elements.
      reg  [ZERO_W-1:0]     zin_q;
      reg  [ZERO_W-1:0]     zwt_q;
      reg  [ZERO_W-1:0]     tok_zin_q;
      reg  [ZERO_W-1:0]     tok_zwt_q;
      // The preload's row arriving is its first; per bank, the column sums preloaded
      // (staged) and those of the tile in the bank (committed with the scales' timing).
      reg                   pl_first_q;
      reg  [KPF*WSUM_W-1:0] cstage0_q;
      reg  [KPF*WSUM_W-1:0] cstage1_q;
      reg  [KPF*WSUM_W-1:0] csum0_q;
      reg  [KPF*WSUM_W-1:0] csum1_q;
      wire [ZERO_W-1:0]     zin_d      = start ? f_zero_input : zin_q;
      wire [ZERO_W-1:0]     zwt_d      = start ? f_zero_weight : zwt_q;
      wire [ZERO_W-1:0]     tok_zin_d  = zin_q;
      wire [ZERO_W-1:0]     tok_zwt_d  = zwt_q;
      wire                  pl_first_d = pl_read && (pl_issued_q == {PL_W{1'b0}});
      wire [KPF*WSUM_W-1:0] cstage0_d;
      wire [KPF*WSUM_W-1:0] cstage1_d;
      wire [KPF*WSUM_W-1:0] csum0_d    = (commit0_q == COMMIT_1) ? cstage0_q : csum0_q;
      wire [KPF*WSUM_W-1:0] csum1_d    = (commit1_q == COMMIT_1) ? cstage1_q : csum1_q;

      wire [INPUT_W-1:0]  za;
      wire [WEIGHT_W-1:0] zw;
      wire [ROW_W-1:0]    out_diff = out_zp[0 +: ROW_W];
      wire [INPUT_W-1:0]  out_za   = out_zp[ROW_W +: INPUT_W];
      wire [WEIGHT_W-1:0] out_zw   = out_zp[ROW_W+INPUT_W +: WEIGHT_W];
      hwgen_pad_element #(
        .PADV_W       (ZERO_W),
        .INPUT_W      (INPUT_W),
        .INPUT_SIGNED (INPUT_SIGNED)
      ) u_za (
        .pattern_i (tok_zin_q),
        .element_o (za)
      );
      hwgen_pad_element #(
        .PADV_W       (ZERO_W),
        .INPUT_W      (WEIGHT_W),
        .INPUT_SIGNED (WEIGHT_SIGNED)
      ) u_zw (
        .pattern_i (tok_zwt_q),
        .element_o (zw)
      );

      // The entering row's sum less CPF * za, with the zero points, into the tag. The row's
      // elements are summed in a pairwise tree (at each level, value j is the sum of values
      // 2j and 2j + 1 of the level before; the SPAN leaves are the elements, then zeros),
      // log2(CPF) adders deep.
      localparam [ROW_W-1:0] CPF_R  = CPF[ROW_W-1:0];
      localparam integer     LEVELS = $clog2(CPF);
      localparam integer     SPAN   = 1 << LEVELS;
      wire             za_msb = (INPUT_SIGNED != 0) && za[INPUT_W-1];
      wire [ROW_W-1:0] za_ext = { {(ROW_W-INPUT_W){za_msb} }, za};
      genvar level, r;
      for (level = 0; level <= LEVELS; level = level + 1) begin : gen_row_level
        localparam integer N = SPAN >> level;
        wire [N*ROW_W-1:0] sums;
        for (r = 0; r < N; r = r + 1) begin : gen_sum
          if (level == 0 && r < CPF) begin : gen_elem
            wire [INPUT_W-1:0] e = in_data_i[r*INPUT_W +: INPUT_W];
            assign sums[r*ROW_W +: ROW_W] = { {(ROW_W-INPUT_W){(INPUT_SIGNED != 0) && e[INPUT_W-1]} }, e};
          end else if (level == 0) begin : gen_zero
            assign sums[r*ROW_W +: ROW_W] = {ROW_W{1'b0}};
          end else begin : gen_pair
            assign sums[r*ROW_W +: ROW_W] = gen_row_level[level-1].sums[(2*r)*ROW_W +: ROW_W]
                                          + gen_row_level[level-1].sums[(2*r+1)*ROW_W +: ROW_W];
          end
        end
      end
      wire [ROW_W-1:0] row_diff = gen_row_level[LEVELS].sums[0 +: ROW_W] - za_ext * CPF_R;
      assign in_zp = {zw, za, row_diff};

      // Leaving the array: the row's correction zw * (its sum - CPF * za), one for every
      // column.
      wire              out_zw_msb = (WEIGHT_SIGNED != 0) && out_zw[WEIGHT_W-1];
      wire [PSUM_W-1:0] row_term;
      hwgen_signed_mul #(
        .A_W   (WEIGHT_W + 1),
        .B_W   (ROW_W),
        .OUT_W (PSUM_W)
      ) u_row_term (
        .a_i ({out_zw_msb, out_zw}),
        .b_i (out_diff),
        .p_o (row_term)
      );

      // The arriving weight row added to the preload's column sums (restarted by its
      // first row).
      genvar c;
      for (c = 0; c < KPF; c = c + 1) begin : gen_col_sum
        wire [WEIGHT_W-1:0] w_elem = w_data_i[c*WEIGHT_W +: WEIGHT_W];
        wire [WSUM_W-1:0]   w_ext  = { {(WSUM_W-WEIGHT_W){(WEIGHT_SIGNED != 0) && w_elem[WEIGHT_W-1]} },
                                       w_elem};
        wire [WSUM_W-1:0]   base0  = pl_first_q ? {WSUM_W{1'b0}} : cstage0_q[c*WSUM_W +: WSUM_W];
        wire [WSUM_W-1:0]   base1  = pl_first_q ? {WSUM_W{1'b0}} : cstage1_q[c*WSUM_W +: WSUM_W];
        wire                take0  = pl_data_q && !pl_bank;
        wire                take1  = pl_data_q && pl_bank;
        assign cstage0_d[c*WSUM_W +: WSUM_W] = take0 ? base0 + w_ext : cstage0_q[c*WSUM_W +: WSUM_W];
        assign cstage1_d[c*WSUM_W +: WSUM_W] = take1 ? base1 + w_ext : cstage1_q[c*WSUM_W +: WSUM_W];

        // Leaving the array: the column's sum less the row's correction and za times the
        // bank's column sum.
        wire [PSUM_W-1:0] col_term;
        wire              out_za_msb = (INPUT_SIGNED != 0) && out_za[INPUT_W-1];
        hwgen_signed_mul #(
          .A_W   (INPUT_W + 1),
          .B_W   (WSUM_W),
          .OUT_W (PSUM_W)
        ) u_col_term (
          .a_i ({out_za_msb, out_za}),
          .b_i (out_bank ? csum1_q[c*WSUM_W +: WSUM_W] : csum0_q[c*WSUM_W +: WSUM_W]),
          .p_o (col_term)
        );
        assign col_psum[c*PSUM_W +: PSUM_W] = out_psum[c*PSUM_W +: PSUM_W] - row_term - col_term;
      end

      always @(posedge clk_i{{ c.rst_edge }}) begin
        if ({{ c.rst_on }}) begin
          zin_q      <= {ZERO_W{1'b0}};
          zwt_q      <= {ZERO_W{1'b0}};
          tok_zin_q  <= {ZERO_W{1'b0}};
          tok_zwt_q  <= {ZERO_W{1'b0}};
          pl_first_q <= 1'b0;
          cstage0_q  <= {(KPF*WSUM_W){1'b0}};
          cstage1_q  <= {(KPF*WSUM_W){1'b0}};
          csum0_q    <= {(KPF*WSUM_W){1'b0}};
          csum1_q    <= {(KPF*WSUM_W){1'b0}};
        end else begin
          zin_q      <= zin_d;
          zwt_q      <= zwt_d;
          tok_zin_q  <= tok_zin_d;
          tok_zwt_q  <= tok_zwt_d;
          pl_first_q <= pl_first_d;
          cstage0_q  <= cstage0_d;
          cstage1_q  <= cstage1_d;
          csum0_q    <= csum0_d;
          csum1_q    <= csum1_d;
        end
      end
    end else begin : gen_no_zero_points
      assign in_zp    = 1'b0;
      assign col_psum = out_psum;
      wire unused_zero_points;
      assign unused_zero_points = ^{f_zero_input, f_zero_weight, out_zp};
    end
  endgenerate

  // Write-back: read the old row (accumulate) as the result leaves the array, add and write
  // one cycle later. A row written in the previous cycle is forwarded.
  reg                    wb_valid_q;
  reg  [SPAD_ADDR_W-1:0] wb_addr_q;
  reg  [NUM_SEM-1:0]     wb_release_q;
  reg                    last_valid_q;
  reg  [SPAD_ADDR_W-1:0] last_addr_q;
  reg  [KPF*ACC_W-1:0]   last_data_q;
  wire [KPF*ACC_W-1:0]   wb_sum;
  wire                   wb_valid_d   = out_valid;
  wire [SPAD_ADDR_W-1:0] wb_addr_d    = out_addr;
  wire [NUM_SEM-1:0]     wb_release_d = out_release;
  wire                   last_valid_d = wb_valid_q;
  wire [SPAD_ADDR_W-1:0] last_addr_d  = wb_addr_q;
  wire [KPF*ACC_W-1:0]   last_data_d  = wb_sum;

  wire                 forward = last_valid_q && (last_addr_q == wb_addr_q);
  wire [KPF*ACC_W-1:0] wb_old  = forward ? last_data_q : acc_rd_data_i;

  genvar col;
  generate
    for (col = 0; col < KPF; col = col + 1) begin : gen_col
      {{ c.leaves.acc }} #(
        .PSUM_W  (PSUM_W),
        .ACC_W   (ACC_W),
        .SCALE_W (SCALE_W),
        .PREC_W  (PREC_W)
      ) u_acc (
        .clk_i        (clk_i),
        .{{ c.rst }}  ({{ c.rst }}),
        .psum_i       (col_psum[col*PSUM_W +: PSUM_W]),
        .scale_a_i    (out_scale),
        .scale_b_i    (out_wscale[col*SCALE_W +: SCALE_W]),
        .prec_i       (out_prec),
        .accumulate_i (out_accumulate),
        .old_i        (wb_old[col*ACC_W +: ACC_W]),
        .sum_o        (wb_sum[col*ACC_W +: ACC_W])
      );
    end
  endgenerate

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      wb_valid_q   <= 1'b0;
      wb_addr_q    <= {SPAD_ADDR_W{1'b0}};
      wb_release_q <= {NUM_SEM{1'b0}};
      last_valid_q <= 1'b0;
      last_addr_q  <= {SPAD_ADDR_W{1'b0}};
      last_data_q  <= {(KPF*ACC_W){1'b0}};
    end else begin
      wb_valid_q   <= wb_valid_d;
      wb_addr_q    <= wb_addr_d;
      wb_release_q <= wb_release_d;
      last_valid_q <= last_valid_d;
      last_addr_q  <= last_addr_d;
      last_data_q  <= last_data_d;
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
