{{ c.banner }}
// The row unit, on the vector queue beside the vector unit (designs with [rows]): runs a
// `rows` instruction (numeric::rows): it reads the constants (and the spline's table) from
// accumulator rows, then tile by tile the tile's parameter rows and its count0 pixels'
// accumulator rows, one a cycle once the accumulator's read port grants it, each with its
// operand row (output buffer) and its pixel's statistics; the rows go through KPF lanes
// (hwgen_row_lane, 18 stages), their values are reduced across the lanes (hwgen_row_reduce)
// into the pixels' statistics, and their elements written to the output (or input) buffer.
// With BLOCKS (an MX output datatype, one block a row of lanes) each operand row is read
// with its block scale (the row's operand scale is the constant times the scale,
// hwgen_mx_scale) and each written row is quantized as one block (hwgen_mx_quantize,
// BLOCK_EXTRA more stages) with its scale in the row's slot.
// After the last row has left the pipeline, each pixel's statistics are finished
// (hwgen_row_finish, 54 stages). The instruction ends, releasing its semaphores, when all
// of that is done; the next one starts on an empty pipeline.
//
// Each tile's parameters (bias, scale, shift, gamma, beta rows) go into one of two banks,
// tiles alternating, so that a tile's parameter reads overlap the previous tile's rows; a
// bank is loaded only once no row of the tile two before is in a stage that reads it.
`include "hwgen_isa.vh"
module hwgen_row_unit #(
  parameter integer       INSTR_W       = `HWGEN_INSTR_W,
  parameter integer       NUM_SEM       = 10,
  parameter [NUM_SEM-1:0] CONSUMED      = {NUM_SEM{1'b0} },
  parameter [NUM_SEM-1:0] PRODUCED      = {NUM_SEM{1'b0} },
  parameter integer       KPF           = 8,
  parameter integer       ACC_W         = 32,
  parameter integer       OUTPUT_W      = 8,
  parameter integer       OUTPUT_SIGNED = 1,
  parameter integer       SCALE_SLOT_W  = 0,
  parameter integer       SPAD_ADDR_W   = 16,
  parameter integer       STATS         = 256,
  parameter integer       BLOCKS        = 0,
  parameter integer       FRAC          = 6,
  // 2^f on [0, 1): numeric::spline::exp2_table()'s words, word 0 lowest
  parameter [32*`HWGEN_SPLINE_USED-1:0] EXP2_TABLE = {{ exp2_table }}
) (
  input  wire                                 clk_i,
  input  wire                                 {{ c.rst }},
  // queue head
  input  wire                                 head_valid_i,
  input  wire [INSTR_W-1:0]                   head_instr_i,
  output wire                                 head_pop_o,
  // semaphores
  input  wire [NUM_SEM-1:0]                   sem_available_i,
  output wire [NUM_SEM-1:0]                   sem_acquire_o,
  output wire [NUM_SEM-1:0]                   sem_release_o,
  // accumulator reads (shared; may wait for a grant)
  output wire                                 acc_rd_valid_o,
  output wire [SPAD_ADDR_W-1:0]               acc_rd_addr_o,
  input  wire                                 acc_rd_grant_i,
  input  wire [KPF*ACC_W-1:0]                 acc_rd_data_i,
  // output buffer (this unit has priority on both ports)
  output wire                                 out_rd_valid_o,
  output wire [SPAD_ADDR_W-1:0]               out_rd_addr_o,
  input  wire [KPF*OUTPUT_W+SCALE_SLOT_W-1:0] out_rd_data_i,
  output wire                                 out_wr_valid_o,
  output wire [SPAD_ADDR_W-1:0]               out_wr_addr_o,
  output wire [KPF*OUTPUT_W+SCALE_SLOT_W-1:0] out_wr_data_o,
  output wire                                 out_wr_input_o,
  // performance
  output wire                                 busy_o,
  output wire                                 stall_o
);

  // ---- sizes and timing -------------------------------------------------------------------
  localparam integer LEVELS     = $clog2(KPF);
  localparam integer CONST_ROWS = (5 + KPF - 1) / KPF;       // five constant words
  localparam integer TABLE_ROWS = (`HWGEN_SPLINE_WORDS + KPF - 1) / KPF;  // the spline table
  localparam integer WORD_SLOTS = (CONST_ROWS + TABLE_ROWS) * KPF;
  // Cycles from a row's read grant: its elements written (lane stage 18 + 1, or with
  // BLOCKS the block quantizer's four stages after lane stage 17, BLOCK_EXTRA more), its
  // reduction combined with the statistics (stage 17 + the tree's levels + 1 + 1).
  localparam integer BLOCK_EXTRA = 3;
  localparam integer WRITE_AT   = 19 + ((BLOCKS != 0) ? BLOCK_EXTRA : 0);
  localparam integer COMBINE_AT = 19 + LEVELS;
  localparam integer PIPE       = ((COMBINE_AT > WRITE_AT) ? COMBINE_AT : WRITE_AT) + 1;
  localparam integer FINISH_LAT = 54;
  localparam integer STAT_W     = $clog2(STATS);
  localparam integer COUNT0_W   = `HWGEN_ROWS_COUNT0_W;
  localparam integer COUNT1_W   = `HWGEN_ROWS_COUNT1_W;
  localparam integer ZP_W       = `HWGEN_ROWS_ZERO_POINT_W;
  localparam integer VALID_W    = `HWGEN_ROWS_VALID_W;
  localparam integer FUNC_W     = `HWGEN_ROWS_FUNC_W;
  localparam integer RED_W      = `HWGEN_ROWS_REDUCE_W;
  localparam integer FIN_W      = `HWGEN_ROWS_FINISH_W;
  localparam integer PARAMS_MAX = 5;

  // ---- decode -----------------------------------------------------------------------------
  wire [NUM_SEM-1:0]                   f_wait;
  wire [NUM_SEM-1:0]                   f_signal;
  wire [`HWGEN_ROWS_ACC_ADDR_W-1:0]    f_acc_addr;
  wire [`HWGEN_ROWS_ACC_STRIDE_W-1:0]  f_acc_stride;
  wire [COUNT0_W-1:0]                  f_count0;
  wire [COUNT1_W-1:0]                  f_count1;
  wire [`HWGEN_ROWS_OUT_ADDR_W-1:0]    f_out_addr;
  wire [`HWGEN_ROWS_OUT_STRIDE_W-1:0]  f_out_stride;
  wire [`HWGEN_ROWS_OPND_ADDR_W-1:0]   f_opnd_addr;
  wire [`HWGEN_ROWS_PARAM_ADDR_W-1:0]  f_param_addr;
  wire [`HWGEN_ROWS_CONST_ADDR_W-1:0]  f_const_addr;
  wire [`HWGEN_ROWS_STAT_ADDR_W-1:0]   f_stat_addr;
  wire [VALID_W-1:0]                   f_valid;
  wire                                 f_bias;
  wire                                 f_src_float;
  wire                                 f_src_zero;
  wire                                 f_scale;
  wire                                 f_opnd;
  wire                                 f_centre;
  wire                                 f_norm;
  wire                                 f_affine;
  wire [FUNC_W-1:0]                    f_func;
  wire                                 f_square;
  wire [RED_W-1:0]                     f_reduce;
  wire                                 f_init;
  wire [FIN_W-1:0]                     f_finish;
  wire                                 f_write;
  wire                                 f_out_b;
  wire [ZP_W-1:0]                      f_zero_point;
  wire                                 f_to_input;
  wire [`HWGEN_ROWS_PREC_OUT_W-1:0]    f_prec_out;

  hwgen_decode_rows u_decode (
    .instr_i      (head_instr_i),
    .wait_o       (f_wait),
    .signal_o     (f_signal),
    .acc_addr_o   (f_acc_addr),
    .acc_stride_o (f_acc_stride),
    .count0_o     (f_count0),
    .count1_o     (f_count1),
    .out_addr_o   (f_out_addr),
    .out_stride_o (f_out_stride),
    .opnd_addr_o  (f_opnd_addr),
    .param_addr_o (f_param_addr),
    .const_addr_o (f_const_addr),
    .stat_addr_o  (f_stat_addr),
    .valid_o      (f_valid),
    .bias_o       (f_bias),
    .src_float_o  (f_src_float),
    .src_zero_o   (f_src_zero),
    .scale_o      (f_scale),
    .opnd_o       (f_opnd),
    .centre_o     (f_centre),
    .norm_o       (f_norm),
    .affine_o     (f_affine),
    .func_o       (f_func),
    .square_o     (f_square),
    .reduce_o     (f_reduce),
    .init_o       (f_init),
    .finish_o     (f_finish),
    .write_o      (f_write),
    .out_b_o      (f_out_b),
    .zero_point_o (f_zero_point),
    .to_input_o   (f_to_input),
    .prec_out_o   (f_prec_out)
  );

  // ---- the instruction's fields, held while it runs -----------------------------------
  localparam integer FLAGS_W = 13;                           // see `flags` below
  reg [FLAGS_W-1:0]      flags_q;
  reg [FUNC_W-1:0]       func_q;
  reg [RED_W-1:0]        reduce_q;
  reg [FIN_W-1:0]        finish_q;
  reg [ZP_W-1:0]         zero_point_q;
  reg [VALID_W-1:0]      valid_q;
  reg [COUNT0_W-1:0]     count0_q;
  reg [COUNT1_W-1:0]     count1_q;
  reg [SPAD_ADDR_W-1:0]  acc_stride_q;
  reg [SPAD_ADDR_W-1:0]  out_stride_q;
  reg [SPAD_ADDR_W-1:0]  const_addr_q;
  reg [STAT_W-1:0]       stat_addr_q;
  reg [NUM_SEM-1:0]      release_q;
  wire                   q_bias      = flags_q[0];
  wire                   q_src_float = flags_q[1];
  wire                   q_scale     = flags_q[2];
  wire                   q_opnd      = flags_q[3];
  wire                   q_centre    = flags_q[4];
  wire                   q_norm      = flags_q[5];
  wire                   q_affine    = flags_q[6];
  wire                   q_square    = flags_q[7];
  wire                   q_init      = flags_q[8];
  wire                   q_write     = flags_q[9];
  wire                   q_to_input  = flags_q[10];
  wire                   q_src_zero  = flags_q[11];
  wire                   q_out_b     = flags_q[12];
  wire [2:0]             params      = {2'b00, q_bias} + {1'b0, q_scale, 1'b0} + {1'b0, q_affine, 1'b0};

  // ---- phases -------------------------------------------------------------------------
  localparam [2:0] PH_IDLE   = 3'd0;
  localparam [2:0] PH_CONST  = 3'd1;
  localparam [2:0] PH_PARAMS = 3'd2;
  localparam [2:0] PH_ROWS   = 3'd3;
  localparam [2:0] PH_DRAIN  = 3'd4;
  localparam [2:0] PH_FINISH = 3'd5;
  localparam [2:0] PH_FDRAIN = 3'd6;
  reg [2:0] phase_q, phase_d;

  wire start;
  hwgen_issue #(
    .NUM_SEM  (NUM_SEM),
    .CONSUMED (CONSUMED)
  ) u_issue (
    .head_valid_i    (head_valid_i),
    .head_wait_i     (f_wait),
    .exec_idle_i     (phase_q == PH_IDLE),
    .sem_available_i (sem_available_i),
    .head_pop_o      (head_pop_o),
    .sem_acquire_o   (sem_acquire_o),
    .start_o         (start),
    .stall_o         (stall_o)
  );

  // ---- counters -----------------------------------------------------------------------
  // Constant and table rows read; the tile; its parameter rows read; its pixels issued;
  // the running bases of the tile's rows; finish issues.
  reg [7:0]             word_rd_q, word_rd_d;
  reg [COUNT1_W-1:0]    tile_q, tile_d;
  reg [2:0]             prm_rd_q, prm_rd_d;
  reg [COUNT0_W-1:0]    pix_q, pix_d;
  reg [SPAD_ADDR_W-1:0] acc_base_q, acc_base_d;
  reg [SPAD_ADDR_W-1:0] out_base_q, out_base_d;
  reg [SPAD_ADDR_W-1:0] opnd_base_q, opnd_base_d;
  reg [SPAD_ADDR_W-1:0] prm_base_q, prm_base_d;
  reg [COUNT0_W-1:0]    fin_q, fin_d;
  reg                   done;

  wire [7:0] words_needed = CONST_ROWS[7:0] + ((func_q == 2'd2) ? TABLE_ROWS[7:0] : 8'd0);
  wire       last_tile    = (tile_q + 1'b1 == count1_q);
  wire       bank         = tile_q[0];

  // Rows in flight whose stage reads a parameter bank (grant to the beta stage, 8), per
  // bank; rows anywhere in the pipeline; finishes in flight.
  wire       bank_busy;
  wire       pipe_busy;
  wire       fin_busy;

  // The accumulator reads of each phase.
  wire       want_word = (phase_q == PH_CONST) && (word_rd_q != words_needed);
  wire       want_prm  = (phase_q == PH_PARAMS) && (prm_rd_q != params) && !bank_busy;
  wire       want_row  = (phase_q == PH_ROWS) && (pix_q != count0_q);
  wire       word_fire = want_word && acc_rd_grant_i;
  wire       prm_fire  = want_prm && acc_rd_grant_i;
  wire       row_fire  = want_row && acc_rd_grant_i;

  always @* begin
    phase_d     = phase_q;
    word_rd_d   = word_rd_q;
    tile_d      = tile_q;
    prm_rd_d    = prm_rd_q;
    pix_d       = pix_q;
    acc_base_d  = acc_base_q;
    out_base_d  = out_base_q;
    opnd_base_d = opnd_base_q;
    prm_base_d  = prm_base_q;
    fin_d       = fin_q;
    done        = 1'b0;
    case (phase_q)
      PH_IDLE: begin
        if (start) begin
          phase_d     = PH_CONST;
          word_rd_d   = 8'd0;
          tile_d      = {COUNT1_W{1'b0} };
          prm_rd_d    = 3'd0;
          pix_d       = {COUNT0_W{1'b0} };
          acc_base_d  = f_acc_addr;
          out_base_d  = f_out_addr;
          opnd_base_d = f_opnd_addr;
          prm_base_d  = f_param_addr;
          fin_d       = {COUNT0_W{1'b0} };
        end
      end
      PH_CONST: begin
        if (word_fire) begin
          word_rd_d = word_rd_q + 8'd1;
        end
        // The last word's data arrives the cycle after its read: it is captured there,
        // and the next phase's first read may go out in that cycle already.
        if (word_rd_q == words_needed) begin
          phase_d = (count1_q == {COUNT1_W{1'b0} }) ? PH_DRAIN : PH_PARAMS;
        end
      end
      PH_PARAMS: begin
        if (prm_fire) begin
          prm_rd_d = prm_rd_q + 3'd1;
        end
        if (prm_rd_q == params) begin
          phase_d = PH_ROWS;
          pix_d   = {COUNT0_W{1'b0} };
        end
      end
      PH_ROWS: begin
        if (row_fire) begin
          pix_d = pix_q + 1'b1;
        end
        if (pix_q == count0_q) begin
          tile_d      = tile_q + 1'b1;
          acc_base_d  = acc_base_q + acc_stride_q;
          out_base_d  = out_base_q + out_stride_q;
          opnd_base_d = opnd_base_q + out_stride_q;
          prm_base_d  = prm_base_q + { {(SPAD_ADDR_W-3){1'b0} }, params};
          prm_rd_d    = 3'd0;
          phase_d     = last_tile ? PH_DRAIN : PH_PARAMS;
        end
      end
      PH_DRAIN: begin
        if (!pipe_busy) begin
          phase_d = (finish_q != 2'd0) ? PH_FINISH : PH_IDLE;
          done    = (finish_q == 2'd0);
        end
      end
      PH_FINISH: begin
        if (fin_q != count0_q) begin
          fin_d = fin_q + 1'b1;
        end else begin
          phase_d = PH_FDRAIN;
        end
      end
      default: begin
        if (!fin_busy) begin
          phase_d = PH_IDLE;
          done    = 1'b1;
        end
      end
    endcase
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      phase_q     <= PH_IDLE;
      word_rd_q   <= 8'd0;
      tile_q      <= {COUNT1_W{1'b0} };
      prm_rd_q    <= 3'd0;
      pix_q       <= {COUNT0_W{1'b0} };
      acc_base_q  <= {SPAD_ADDR_W{1'b0} };
      out_base_q  <= {SPAD_ADDR_W{1'b0} };
      opnd_base_q <= {SPAD_ADDR_W{1'b0} };
      prm_base_q  <= {SPAD_ADDR_W{1'b0} };
      fin_q       <= {COUNT0_W{1'b0} };
    end else begin
      phase_q     <= phase_d;
      word_rd_q   <= word_rd_d;
      tile_q      <= tile_d;
      prm_rd_q    <= prm_rd_d;
      pix_q       <= pix_d;
      acc_base_q  <= acc_base_d;
      out_base_q  <= out_base_d;
      opnd_base_q <= opnd_base_d;
      prm_base_q  <= prm_base_d;
      fin_q       <= fin_d;
    end
  end

  // The instruction's fields, latched at its start (a control register: it decides what
  // the pipeline does, so it is reset).
  wire [FLAGS_W-1:0] flags_d = {f_out_b, f_src_zero, f_to_input, f_write, f_init, f_square,
                                f_affine, f_norm, f_centre, f_opnd, f_scale, f_src_float,
                                f_bias};
  wire [FUNC_W-1:0] func_d = f_func;
  wire [RED_W-1:0] reduce_d = f_reduce;
  wire [FIN_W-1:0] finish_d = f_finish;
  wire [ZP_W-1:0] zero_point_d = f_zero_point;
  wire [VALID_W-1:0] valid_d = f_valid;
  wire [COUNT0_W-1:0] count0_d = f_count0;
  wire [COUNT1_W-1:0] count1_d = f_count1;
  wire [SPAD_ADDR_W-1:0] acc_stride_d = f_acc_stride;
  wire [SPAD_ADDR_W-1:0] out_stride_d = f_out_stride;
  wire [SPAD_ADDR_W-1:0] const_addr_d = f_const_addr;
  wire [STAT_W-1:0] stat_addr_d = f_stat_addr[STAT_W-1:0];
  wire [NUM_SEM-1:0] release_d = f_signal & PRODUCED;
  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      flags_q      <= {FLAGS_W{1'b0} };
      func_q       <= {FUNC_W{1'b0} };
      reduce_q     <= {RED_W{1'b0} };
      finish_q     <= {FIN_W{1'b0} };
      zero_point_q <= {ZP_W{1'b0} };
      valid_q      <= {VALID_W{1'b0} };
      count0_q     <= {COUNT0_W{1'b0} };
      count1_q     <= {COUNT1_W{1'b0} };
      acc_stride_q <= {SPAD_ADDR_W{1'b0} };
      out_stride_q <= {SPAD_ADDR_W{1'b0} };
      const_addr_q <= {SPAD_ADDR_W{1'b0} };
      stat_addr_q  <= {STAT_W{1'b0} };
      release_q    <= {NUM_SEM{1'b0} };
    end else if (start) begin
      flags_q      <= flags_d;
      func_q       <= func_d;
      reduce_q     <= reduce_d;
      finish_q     <= finish_d;
      zero_point_q <= zero_point_d;
      valid_q      <= valid_d;
      count0_q     <= count0_d;
      count1_q     <= count1_d;
      acc_stride_q <= acc_stride_d;
      out_stride_q <= out_stride_d;
      const_addr_q <= const_addr_d;
      stat_addr_q  <= stat_addr_d;
      release_q    <= release_d;
    end
  end

  // ---- the constants, the table and the parameter banks -------------------------------
  // What the read of the previous cycle was: {word?, param?, its index, its bank}.
  reg                   word_d1_q;
  reg [7:0]             word_idx_q;
  reg                   prm_d1_q;
  reg [2:0]             prm_idx_q;
  reg                   prm_bank_q;
  wire word_d1_d = word_fire;
  wire [7:0] word_idx_d = word_rd_q;
  wire prm_d1_d = prm_fire;
  wire [2:0] prm_idx_d = prm_rd_q;
  wire prm_bank_d = bank;
  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      word_d1_q  <= 1'b0;
      word_idx_q <= 8'd0;
      prm_d1_q   <= 1'b0;
      prm_idx_q  <= 3'd0;
      prm_bank_q <= 1'b0;
    end else begin
      word_d1_q  <= word_d1_d;
      word_idx_q <= word_idx_d;
      prm_d1_q   <= prm_d1_d;
      prm_idx_q  <= prm_idx_d;
      prm_bank_q <= prm_bank_d;
    end
  end

  // The words as read: constants, then the table (32-bit lanes of the rows).
  reg [32*WORD_SLOTS-1:0] words_q;
  integer w;
  always @(posedge clk_i) begin
    if (word_d1_q) begin
      for (w = 0; w < KPF; w = w + 1) begin
        words_q[32*(word_idx_q*KPF + w) +: 32] <= acc_rd_data_i[ACC_W*w +: 32];
      end
    end
  end
  wire [31:0] opnd_scale_word = words_q[32*0 +: 32];
  wire [31:0] opnd_zero  = words_q[32*1 +: 32];
  wire [31:0] inv_n      = words_q[32*2 +: 32];
  wire [31:0] eps        = words_q[32*3 +: 32];
  wire [31:0] out_scale  = words_q[32*4 +: 32];
  localparam integer TABLE_W = 32 * `HWGEN_SPLINE_USED;
  wire [TABLE_W-1:0] loaded_table = words_q[32*CONST_ROWS*KPF +: TABLE_W];
  wire [TABLE_W-1:0] table_now    = (func_q == 2'd1) ? EXP2_TABLE : loaded_table;

  // The parameter banks: which parameter the k-th row of a tile is (bias, then scale and
  // shift, then gamma and beta, as the flags ask).
  reg [2:0] prm_kind;
  always @* begin
    case (prm_idx_q - {2'b00, q_bias})
      3'd0:    prm_kind = q_scale ? 3'd1 : 3'd3;
      3'd1:    prm_kind = q_scale ? 3'd2 : 3'd4;
      3'd2:    prm_kind = 3'd3;
      default: prm_kind = 3'd4;
    endcase
    if (q_bias && prm_idx_q == 3'd0) begin
      prm_kind = 3'd0;
    end
  end
  reg [KPF*ACC_W-1:0] bank_q [0:1][0:PARAMS_MAX-1];
  always @(posedge clk_i) begin
    if (prm_d1_q) begin
      bank_q[prm_bank_q][prm_kind] <= acc_rd_data_i;
    end
  end

  // ---- the row tokens: what travels beside the lanes ----------------------------------
  // Stage g holds the row granted g cycles ago: {valid, bank, first tile, last tile,
  // statistics entry, destination row, statistic a, statistic b}.
  localparam integer TOK_W = 1 + 1 + 1 + 1 + STAT_W + SPAD_ADDR_W + 64;
  reg  [31:0]       stat_a_mem [0:STATS-1];
  reg  [31:0]       stat_b_mem [0:STATS-1];
  wire [STAT_W-1:0] entry_now = stat_addr_q + pix_q[STAT_W-1:0];
  wire [TOK_W-1:0]  tok_in = {row_fire, bank, (tile_q == {COUNT1_W{1'b0} }), last_tile, entry_now,
                              out_base_q + { {(SPAD_ADDR_W-COUNT0_W){1'b0} }, pix_q},
                              stat_a_mem[entry_now], stat_b_mem[entry_now]};
  genvar g;
  generate
    for (g = 1; g <= PIPE; g = g + 1) begin : gen_tok
      reg [TOK_W-1:0] tok_q;
      wire [TOK_W-1:0] prev;
      if (g == 1) begin : gen_first
        assign prev = tok_in;
      end else begin : gen_next
        assign prev = gen_tok[g-1].tok_q;
      end
      wire [TOK_W-1:0] tok_d = prev;
      always @(posedge clk_i{{ c.rst_edge }}) begin
        if ({{ c.rst_on }}) begin
          tok_q <= {TOK_W{1'b0} };
        end else begin
          tok_q <= tok_d;
        end
      end
    end
  endgenerate

  // Token fields.
  localparam integer T_VALID = TOK_W - 1;
  localparam integer T_BANK  = TOK_W - 2;
  localparam integer T_FIRST = TOK_W - 3;
  localparam integer T_LAST  = TOK_W - 4;
  localparam integer T_ENTRY = 64 + SPAD_ADDR_W;
  localparam integer T_DEST  = 64;

  // Token bits by stage, as flat vectors.
  wire [PIPE:1] tok_valid_v;
  wire [PIPE:1] tok_bank_v;
  generate
    for (g = 1; g <= PIPE; g = g + 1) begin : gen_tok_bits
      assign tok_valid_v[g] = gen_tok[g].tok_q[T_VALID];
      assign tok_bank_v[g]  = gen_tok[g].tok_q[T_BANK];
    end
  endgenerate

  // The current tile's bank is busy while a row of the tile two before is in a stage that
  // reads its parameters (tokens 1 to 8); the pipeline while any row is in it.
  reg busy_bank;
  reg busy_pipe;
  integer s;
  always @* begin
    busy_bank = 1'b0;
    busy_pipe = row_fire;
    for (s = 1; s <= PIPE; s = s + 1) begin
      if (tok_valid_v[s]) begin
        busy_pipe = 1'b1;
      end
    end
    for (s = 1; s <= 8; s = s + 1) begin
      if (tok_valid_v[s] && (tok_bank_v[s] == tile_q[0])) begin
        busy_bank = 1'b1;
      end
    end
  end
  assign bank_busy = busy_bank;
  assign pipe_busy = busy_pipe;

  // ---- the lanes ----------------------------------------------------------------------
  // A row's parameters in the stage that reads them, from the bank its token names: bias
  // at the data (stage 0 = token 1), scale at 2, shift at 3, gamma at 7, beta at 8; the
  // statistics a at 5 and b at 6.
  wire         b1 = gen_tok[1].tok_q[T_BANK];
  wire         b2 = gen_tok[2].tok_q[T_BANK];
  wire         b3 = gen_tok[3].tok_q[T_BANK];
  wire         b7 = gen_tok[7].tok_q[T_BANK];
  wire         b8 = gen_tok[8].tok_q[T_BANK];
  wire [31:0]  stat_a5 = gen_tok[5].tok_q[63:32];
  wire [31:0]  stat_b6 = gen_tok[6].tok_q[31:0];
  wire [31:0]  stat_b17 = gen_tok[17].tok_q[31:0];
  wire [32*KPF-1:0] red_values;
  wire [32*KPF-1:0] out_values;
  wire [KPF*OUTPUT_W-1:0] codes;

  // The operand scale of the row in lane stage 2 (token 3), which multiplies by it: the
  // constant, or with BLOCKS the constant times the row's block scale (read from the slot
  // with the operand, two stages before).
  wire [31:0] opnd_scale;
  generate
    if (BLOCKS != 0) begin : gen_opnd_block
      reg  [SCALE_SLOT_W-1:0] slot1_q, slot2_q;
      wire [SCALE_SLOT_W-1:0] slot1_d = out_rd_data_i[KPF*OUTPUT_W +: SCALE_SLOT_W];
      wire [SCALE_SLOT_W-1:0] slot2_d = slot1_q;
      always @(posedge clk_i) begin
        slot1_q <= slot1_d;
        slot2_q <= slot2_d;
      end
      hwgen_mx_scale #(.FRAC(FRAC), .SCALE_W(SCALE_SLOT_W)) u_block_scale (
        .p_i     (opnd_scale_word),
        .scale_i (slot2_q),
        .y_o     (opnd_scale)
      );
    end else begin : gen_opnd_plain
      assign opnd_scale = opnd_scale_word;
      wire unused_frac;
      assign unused_frac = FRAC[0];  // the block elements' fraction bits (BLOCKS only)
    end
  endgenerate

  genvar lane;
  generate
    for (lane = 0; lane < KPF; lane = lane + 1) begin : gen_lane
      hwgen_row_lane #(
        .ACC_W      (ACC_W),
        .OUTPUT_W   (OUTPUT_W),
        .OUT_SIGNED (OUTPUT_SIGNED),
        .ZP_W       (ZP_W)
      ) u_lane (
        .clk_i         (clk_i),
        .src_float_i   (q_src_float),
        .src_zero_i    (q_src_zero),
        .bias_i        (q_bias),
        .scale_i       (q_scale),
        .opnd_i        (q_opnd),
        .centre_i      (q_centre),
        .norm_i        (q_norm),
        .affine_i      (q_affine),
        .exp_i         (func_q == 2'd1),
        .spline_i      (func_q == 2'd2),
        .square_i      (q_square),
        .out_b_i       (q_out_b),
        .opnd_scale_i  (opnd_scale),
        .opnd_zero_i   (opnd_zero),
        .out_scale_i   (out_scale),
        .zero_point_i  (zero_point_q),
        .table_i       (table_now),
        .acc_i         (acc_rd_data_i[ACC_W*lane +: ACC_W]),
        .operand_i     (out_rd_data_i[OUTPUT_W*lane +: OUTPUT_W]),
        .bias_value_i  (bank_q[b1][0][ACC_W*lane +: ACC_W]),
        .scale_value_i (bank_q[b2][1][ACC_W*lane +: 32]),
        .shift_value_i (bank_q[b3][2][ACC_W*lane +: 32]),
        .stat_a_i      (stat_a5),
        .stat_b_i      (stat_b6),
        .stat_b_out_i  (stat_b17),
        .gamma_value_i (bank_q[b7][3][ACC_W*lane +: 32]),
        .beta_value_i  (bank_q[b8][4][ACC_W*lane +: 32]),
        .red_o         (red_values[32*lane +: 32]),
        .value_o       (out_values[32*lane +: 32]),
        .code_o        (codes[OUTPUT_W*lane +: OUTPUT_W])
      );
    end
  endgenerate

  // Lanes of a row that hold channels: all, or on the last tile the first `valid`.
  function [KPF-1:0] lane_mask;
    input              last;
    input [VALID_W-1:0] n;
    integer l;
    begin
      for (l = 0; l < KPF; l = l + 1) begin
        lane_mask[l] = !(last && (n != {VALID_W{1'b0} }) && (l >= n));
      end
    end
  endfunction

  // ---- the reduction and the statistics ------------------------------------------------
  wire [31:0] reduced;
  hwgen_row_reduce #(.LANES(KPF)) u_reduce (
    .clk_i       (clk_i),
    .max_i       (reduce_q == 2'd1),
    .lane_mask_i (lane_mask(gen_tok[18].tok_q[T_LAST], valid_q)),
    .values_i    (red_values),
    .result_o    (reduced)
  );

  // The combination, at stage COMBINE_AT - 1 (the tree's result), written at COMBINE_AT.
  wire [TOK_W-1:0]  tc     = gen_tok[COMBINE_AT-1].tok_q;
  wire [STAT_W-1:0] tc_ent = tc[T_ENTRY +: STAT_W];
  wire              tc_new = tc[T_FIRST] && q_init;
  wire [31:0]       old_a  = stat_a_mem[tc_ent];
  wire [31:0]       old_b  = stat_b_mem[tc_ent];
  wire [31:0]       sum_a, sum_b, max_a;
  hwgen_fp32_add u_sum_a (.a_i(old_a), .b_i(reduced), .sum_o(sum_a));
  hwgen_fp32_add u_sum_b (.a_i(old_b), .b_i(reduced), .sum_o(sum_b));
  hwgen_fp32_max u_max_a (.a_i(old_a), .b_i(reduced), .max_o(max_a));
  reg               cw_q;
  reg  [STAT_W-1:0] cw_ent_q;
  reg  [31:0]       cw_a_q, cw_b_q;
  wire cw_d = tc[T_VALID] && (reduce_q != 2'd0);
  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      cw_q <= 1'b0;
    end else begin
      cw_q <= cw_d;
    end
  end
  wire [STAT_W-1:0] cw_ent_d = tc_ent;
  wire [31:0] cw_a_d = (reduce_q == 2'd1) ? (tc_new ? reduced : max_a)
                     : (reduce_q == 2'd2) ? (tc_new ? reduced : sum_a)
                     : old_a;
  wire [31:0] cw_b_d = (reduce_q == 2'd3) ? (tc_new ? reduced : sum_b) : old_b;
  always @(posedge clk_i) begin
    cw_ent_q <= cw_ent_d;
    cw_a_q   <= cw_a_d;
    cw_b_q   <= cw_b_d;
  end

  // The finish: a pixel a cycle into hwgen_row_finish, written back FINISH_LAT later.
  wire [STAT_W-1:0] fin_ent = stat_addr_q + fin_q[STAT_W-1:0];
  wire              fin_go  = (phase_q == PH_FINISH) && (fin_q != count0_q);
  wire [31:0]       fin_a, fin_b;
  hwgen_row_finish u_finish (
    .clk_i   (clk_i),
    .mode_i  (finish_q),
    .a_i     (stat_a_mem[fin_ent]),
    .b_i     (stat_b_mem[fin_ent]),
    .inv_n_i (inv_n),
    .eps_i   (eps),
    .a_o     (fin_a),
    .b_o     (fin_b)
  );
  // Finishes in flight: {valid, entry} per stage.
  reg [FINISH_LAT-1:0] fin_valid_q;
  reg [STAT_W-1:0]     fin_ent_q [0:FINISH_LAT-1];
  integer f;
  wire [FINISH_LAT-1:0] fin_valid_d = {fin_valid_q[FINISH_LAT-2:0], fin_go};
  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      fin_valid_q <= {FINISH_LAT{1'b0} };
    end else begin
      fin_valid_q <= fin_valid_d;
    end
  end
  always @(posedge clk_i) begin
    fin_ent_q[0] <= fin_ent;
    for (f = 1; f < FINISH_LAT; f = f + 1) begin
      fin_ent_q[f] <= fin_ent_q[f-1];
    end
  end
  assign fin_busy = (fin_valid_q != {FINISH_LAT{1'b0} });

  // The statistics register file: one write a cycle, the combination's or the finish's
  // (never both: the finish starts after the last combination).
  wire fin_w = fin_valid_q[FINISH_LAT-1];
  always @(posedge clk_i) begin
    if (cw_q) begin
      stat_a_mem[cw_ent_q] <= cw_a_q;
      stat_b_mem[cw_ent_q] <= cw_b_q;
    end else if (fin_w) begin
      stat_a_mem[fin_ent_q[FINISH_LAT-1]] <= fin_a;
      stat_b_mem[fin_ent_q[FINISH_LAT-1]] <= fin_b;
    end
  end

  // ---- ports --------------------------------------------------------------------------
  wire [SPAD_ADDR_W-1:0] pix_ext = { {(SPAD_ADDR_W-COUNT0_W){1'b0} }, pix_q};
  assign acc_rd_valid_o = want_word || want_prm || want_row;
  assign acc_rd_addr_o  = want_word ? const_addr_q + { {(SPAD_ADDR_W-8){1'b0} }, word_rd_q}
                        : want_prm  ? prm_base_q + { {(SPAD_ADDR_W-3){1'b0} }, prm_rd_q}
                        : acc_base_q + pix_ext;
  assign out_rd_valid_o = row_fire && q_opnd;
  assign out_rd_addr_o  = opnd_base_q + pix_ext;

  wire [TOK_W-1:0] tw = gen_tok[WRITE_AT].tok_q;
  wire [KPF-1:0]   wmask = lane_mask(tw[T_LAST], valid_q);
  assign out_wr_valid_o = tw[T_VALID] && q_write;
  assign out_wr_addr_o  = tw[T_DEST +: SPAD_ADDR_W];
  integer m;
  generate
    if (BLOCKS != 0) begin : gen_blocks
      // The row's values (lane stage 17, token 18) with the lanes past the channels +0,
      // quantized as one block: {scale, elements} at token WRITE_AT.
      wire [KPF-1:0]   vmask = lane_mask(gen_tok[18].tok_q[T_LAST], valid_q);
      reg  [32*KPF-1:0] live;
      always @* begin
        for (m = 0; m < KPF; m = m + 1) begin
          live[32*m +: 32] = vmask[m] ? out_values[32*m +: 32] : 32'd0;
        end
      end
      wire [KPF*OUTPUT_W+SCALE_SLOT_W-1:0] block;
      hwgen_mx_quantize #(.KPF(KPF), .OUTPUT_W(OUTPUT_W), .FRAC(FRAC)) u_block (
        .clk_i    (clk_i),
        .{{ c.rst }} ({{ c.rst }}),
        .relu_i   (1'b0),
        .acc_i    (live),
        .result_o (block)
      );
      assign out_wr_data_o = block;
      wire unused_block;
      assign unused_block = ^{codes, wmask};
    end else begin : gen_elements
      reg [KPF*OUTPUT_W-1:0] masked;
      always @* begin
        for (m = 0; m < KPF; m = m + 1) begin
          masked[OUTPUT_W*m +: OUTPUT_W] = wmask[m] ? codes[OUTPUT_W*m +: OUTPUT_W] : {OUTPUT_W{1'b0} };
        end
      end
      if (SCALE_SLOT_W > 0) begin : gen_slot
        assign out_wr_data_o = { {SCALE_SLOT_W{1'b0} }, masked};
      end else begin : gen_no_slot
        assign out_wr_data_o = masked;
      end
      wire unused_values;
      assign unused_values = ^out_values;
    end
  endgenerate
  assign out_wr_input_o = q_to_input;
  assign sem_release_o  = done ? release_q : {NUM_SEM{1'b0} };
  assign busy_o         = (phase_q != PH_IDLE);

  // The statistics entry's bits past the register file, the output precision (the output
  // elements are the design's integers) and the words no lane reads.
  wire unused_bits;
  assign unused_bits = ^{f_stat_addr, f_prec_out, words_q};

endmodule
