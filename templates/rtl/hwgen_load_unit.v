{{ c.banner }}
// Load queue executor: moves rows from external memory (or the upstream stream) into a
// scratchpad. Rows are fetched by a two-level strided loop; each row is BEATS_<buffer>
// consecutive beats, least significant beat first. Up to RSP_DEPTH reads are in flight, and
// the next instruction's requests start while the previous one's responses still arrive:
// the memory latency is paid once per burst of loads, not once per instruction.
//
// Input and output rows of a design with block scales end with SCALE_BEATS beats holding
// the scale; a load of rows of a precision without scales (bit prec of PREC_SCALED clear)
// moves the elements only and leaves the scale slot zero.
//
// A load into the accumulator with row_beats = n moves the first n beats of each row (its
// first lanes); the row's other lanes are written zero. With widen, those beats hold 16- or
// 8-bit integers, each sign-extended into its accumulator lane.
//
{%- if c.handoff %}
// A load with handoff reads the engine's hand-off buffer (one cycle read latency, no
// back-pressure) at its beat addresses modulo the buffer's depth, instead of external
// memory.
//
{%- endif %}
// Rows in a load's padding (its first pad_top and last pad_bottom outer iterations, and the
// first pad_left and last pad_right rows of every outer iteration: pixels outside a tensor)
// read no memory: the request side skips them and the response side writes them, in order
// with the rows that arrive, as zero rows, or in the input buffer as rows whose IN_LANES
// elements all hold pad_value (a convolution's input zero point; the scale slot zero).
`include "hwgen_isa.vh"
module hwgen_load_unit #(
  parameter integer       INSTR_W      = `HWGEN_INSTR_W,
  parameter integer       NUM_SEM      = 10,
  parameter [NUM_SEM-1:0] CONSUMED     = {NUM_SEM{1'b0}},
  parameter [NUM_SEM-1:0] PRODUCED     = {NUM_SEM{1'b0}},
  parameter integer       MEM_W        = 64,
  parameter integer       ADDR_W       = 32,
  parameter integer       SPAD_ADDR_W  = 16,
  parameter integer       BEATS_INPUT  = 1,
  parameter integer       IN_LANES     = 8,
  parameter integer       INPUT_W      = 8,
  parameter integer       INPUT_SIGNED = 1,
  parameter integer       BEATS_WEIGHT = 1,
  parameter integer       BEATS_ACC    = 4,
  parameter integer       ACC_LANES    = 8,
  parameter integer       ACC_W        = 32,
  parameter integer       BEATS_OUTPUT = 1,
  parameter integer       SCALE_BEATS  = 0,
  parameter [1:0]         PREC_SCALED  = 2'b00,
  parameter integer       BEAT_W       = 3,
  parameter integer       ROW_MAX_W    = 256,
  parameter integer       RSP_DEPTH    = 32,
  parameter integer       RSP_PTR_W    = 5{% if c.rows %},
  // transposing and re-blocking loads: elements of a weight row, their width, the rows
  // of a weight tile's column scales (0: no block scales), a scale's width and the
  // elements' fraction bits
  parameter integer       WT_LANES     = 8,
  parameter integer       WT_W         = 8,
  parameter integer       WT_SCALE_ROWS = 0,
  parameter integer       WT_SCALE_W   = 8,
  parameter integer       WT_FRAC      = 6{% endif %}
) (
  input  wire                   clk_i,
  input  wire                   {{ c.rst }},
  // queue head
  input  wire                   head_valid_i,
  input  wire [INSTR_W-1:0]     head_instr_i,
  output wire                   head_pop_o,
  // semaphores
  input  wire [NUM_SEM-1:0]     sem_available_i,
  output wire [NUM_SEM-1:0]     sem_acquire_o,
  output wire [NUM_SEM-1:0]     sem_release_o,
  // external memory (reads only)
  output wire                   mem_req_valid_o,
  input  wire                   mem_req_ready_i,
  output wire [ADDR_W-1:0]      mem_req_addr_o,
  input  wire                   mem_rsp_valid_i,
  input  wire [MEM_W-1:0]       mem_rsp_rdata_i,
  // upstream stream
  input  wire                   stream_valid_i,
  output wire                   stream_ready_o,
  input  wire [MEM_W-1:0]       stream_data_i,
{%- if c.handoff %}
  // the engine's hand-off buffer (reads; data one cycle after the request)
  output wire                   handoff_re_o,
  output wire [ADDR_W-1:0]      handoff_addr_o,
  input  wire [MEM_W-1:0]       handoff_rdata_i,
{%- endif %}
  // scratchpad writes
  output wire                   wr_valid_o,
  input  wire                   wr_ready_i,
  output wire [`HWGEN_TRANSFER_BUFFER_W-1:0] wr_buffer_o,
  output wire [SPAD_ADDR_W-1:0] wr_addr_o,
  output wire [ROW_MAX_W-1:0]   wr_data_o,
  // performance
  output wire                   busy_o,
  output wire                   stall_o
);

  localparam integer       C0_W           = `HWGEN_TRANSFER_COUNT0_W;
  localparam integer       C1_W           = `HWGEN_TRANSFER_COUNT1_W;
  localparam integer       PAD_W          = `HWGEN_TRANSFER_PAD_TOP_W;
  localparam integer       GEOM_W         = C0_W + C1_W + 4 * PAD_W;
  localparam integer       TOTAL_W        = C0_W + C1_W;
  localparam [C0_W-1:0]    C0_ONE         = 1;
  localparam [C1_W-1:0]    C1_ONE         = 1;
  localparam [BEAT_W-1:0]  BEAT_ONE       = 1;
  localparam [TOTAL_W-1:0] TOTAL_ONE      = 1;
  localparam [RSP_PTR_W:0] FLIGHT_ONE     = 1;
  localparam [RSP_PTR_W:0] FLIGHT_MAX     = RSP_DEPTH[RSP_PTR_W:0];
  localparam [BEAT_W-1:0]  BEATS_INPUT_N  = BEATS_INPUT[BEAT_W-1:0];
  localparam [BEAT_W-1:0]  BEATS_WEIGHT_N = BEATS_WEIGHT[BEAT_W-1:0];
  localparam [BEAT_W-1:0]  BEATS_ACC_N    = BEATS_ACC[BEAT_W-1:0];
  localparam [BEAT_W-1:0]  BEATS_OUTPUT_N = BEATS_OUTPUT[BEAT_W-1:0];
  localparam [BEAT_W-1:0]  SCALE_BEATS_N  = SCALE_BEATS[BEAT_W-1:0];
  localparam [1:0]         BUF_INPUT      = 2'd0;
  localparam [1:0]         BUF_WEIGHT     = 2'd1;
  localparam [1:0]         BUF_ACC        = 2'd2;
  localparam [1:0]         BUF_OUTPUT     = 2'd3;

  // Decoded fields of the head instruction.
  wire [NUM_SEM-1:0]                     f_wait;
  wire [NUM_SEM-1:0]                     f_signal;
  wire                                   f_stream;
  wire [`HWGEN_TRANSFER_BUFFER_W-1:0]    f_buffer;
  wire [`HWGEN_TRANSFER_SPAD_ADDR_W-1:0] f_spad_addr;
  wire [`HWGEN_TRANSFER_EXT_ADDR_W-1:0]  f_ext_addr;
  wire [`HWGEN_TRANSFER_COUNT0_W-1:0]    f_count0;
  wire [`HWGEN_TRANSFER_STRIDE0_W-1:0]   f_stride0;
  wire [`HWGEN_TRANSFER_COUNT1_W-1:0]    f_count1;
  wire [`HWGEN_TRANSFER_STRIDE1_W-1:0]   f_stride1;
  wire [`HWGEN_TRANSFER_PREC_W-1:0]      f_prec;
  wire [PAD_W-1:0]                       f_pad_top;
  wire [PAD_W-1:0]                       f_pad_bottom;
  wire [PAD_W-1:0]                       f_pad_left;
  wire [PAD_W-1:0]                       f_pad_right;
  wire [`HWGEN_TRANSFER_ROW_BEATS_W-1:0]  f_row_beats;
  wire [`HWGEN_TRANSFER_WIDEN_W-1:0]      f_widen;
  wire [`HWGEN_TRANSFER_PAD_VALUE_W-1:0]  f_pad_value;
  wire                                    f_transpose;
  wire                                    f_reblock;
  wire                                    f_handoff;

  hwgen_decode_transfer u_decode (
    .instr_i     (head_instr_i),
    .wait_o      (f_wait),
    .signal_o    (f_signal),
    .stream_o    (f_stream),
    .buffer_o    (f_buffer),
    .spad_addr_o (f_spad_addr),
    .ext_addr_o  (f_ext_addr),
    .count0_o    (f_count0),
    .stride0_o   (f_stride0),
    .count1_o    (f_count1),
    .stride1_o   (f_stride1),
    .prec_o      (f_prec),
    .pad_top_o    (f_pad_top),
    .pad_bottom_o (f_pad_bottom),
    .pad_left_o   (f_pad_left),
    .pad_right_o  (f_pad_right),
    .row_beats_o  (f_row_beats),
    .widen_o      (f_widen),
    .pad_value_o  (f_pad_value),
    .transpose_o  (f_transpose),
    .reblock_o    (f_reblock),
    .handoff_o    (f_handoff)
  );

  // ---------------------------------------------------------------------------------------
  // Request side: runs one instruction at a time, issuing its beats; it hands the
  // instruction's context to the response side through a small FIFO and may start the next
  // instruction while earlier responses are still arriving.
  // ---------------------------------------------------------------------------------------
  localparam integer WIDEN_W = `HWGEN_TRANSFER_WIDEN_W;
  localparam integer PADV_W  = `HWGEN_TRANSFER_PAD_VALUE_W;
  localparam integer BUF_W   = `HWGEN_TRANSFER_BUFFER_W;
  // An instruction's context: the semaphores to release from bit 0, then each field at
  // the first bit after the one before (so a new field cannot shift another's slice
  // unnoticed): rows of the transfer, beats per row, first scratchpad row, target buffer,
  // stream flag, counts and pads, widen code, pad value, transpose and reblock flags, and
  // whether a block load's rows bring their scales.
  localparam integer CTX_TOTAL  = NUM_SEM;
  localparam integer CTX_BEATS  = CTX_TOTAL + TOTAL_W;
  localparam integer CTX_SPAD   = CTX_BEATS + BEAT_W;
  localparam integer CTX_BUFFER = CTX_SPAD + SPAD_ADDR_W;
  localparam integer CTX_STREAM = CTX_BUFFER + BUF_W;
  localparam integer CTX_GEOM   = CTX_STREAM + 1;
  localparam integer CTX_WIDEN  = CTX_GEOM + GEOM_W;
  localparam integer CTX_PADV   = CTX_WIDEN + WIDEN_W;
  localparam integer CTX_TRANS  = CTX_PADV + PADV_W;
  localparam integer CTX_REBLK  = CTX_TRANS + 1;
  localparam integer CTX_SCALED = CTX_REBLK + 1;
  localparam integer CTX_W      = CTX_SCALED + 1;

  // Whether row (i0, i1) of a transfer of geometry g (count0, count1, pads) is padding.
  function automatic is_pad;
    input [GEOM_W-1:0] g;
    input [C0_W-1:0]   i0;
    input [C1_W-1:0]   i1;
    reg   [C0_W-1:0]   count0;
    reg   [C1_W-1:0]   count1;
    reg   [PAD_W-1:0]  top;
    reg   [PAD_W-1:0]  bottom;
    reg   [PAD_W-1:0]  left;
    reg   [PAD_W-1:0]  right;
    begin
      {count0, count1, top, bottom, left, right} = g;
      is_pad = ({1'b0, i1} < { {(C1_W+1-PAD_W){1'b0}}, top})
            || ({1'b0, i1} + { {(C1_W+1-PAD_W){1'b0}}, bottom} >= {1'b0, count1})
            || ({1'b0, i0} < { {(C0_W+1-PAD_W){1'b0}}, left})
            || ({1'b0, i0} + { {(C0_W+1-PAD_W){1'b0}}, right} >= {1'b0, count0});
    end
  endfunction

  wire [GEOM_W-1:0] head_geom = {f_count0, f_count1, f_pad_top, f_pad_bottom, f_pad_left,
                                 f_pad_right};
{%- if c.handoff %}
  wire              f_handoff_on = f_handoff;
{%- else %}
  // (No hand-off buffer: the interpreter refuses a load with handoff.)
  wire              f_handoff_on = 1'b0;
  wire              unused_handoff;
  assign unused_handoff = f_handoff;
{%- endif %}

  reg               req_busy_q;
  reg               req_busy_d;
  reg               req_stream_q;
  reg               req_stream_d;
  reg               req_handoff_q;
  reg               req_handoff_d;
  reg               ho_rsp_q;        // a hand-off read was issued last cycle
  wire              ho_rsp_d;
  reg [BEAT_W-1:0]  req_beats_q;
  reg [BEAT_W-1:0]  req_beats_d;
  reg [BEAT_W-1:0]  req_beat_q;
  reg [BEAT_W-1:0]  req_beat_d;
  reg [GEOM_W-1:0]  req_geom_q;
  reg [GEOM_W-1:0]  req_geom_d;
  reg [C0_W-1:0]    req_i0_q;        // the row the request side is at
  reg [C0_W-1:0]    req_i0_d;
  reg [C1_W-1:0]    req_i1_q;
  reg [C1_W-1:0]    req_i1_d;
  reg [RSP_PTR_W:0] inflight_q;
  reg [RSP_PTR_W:0] inflight_d;
  reg [RSP_PTR_W:0] mem_pending_q;
  reg [RSP_PTR_W:0] mem_pending_d;
  reg [BEAT_W-1:0]  beats_of_head;

  wire               start;
  wire               ctx_in_ready;
  wire               agen_valid;
  wire               agen_last;
  wire [ADDR_W-1:0]  agen_addr;
  wire [TOTAL_W-1:0] agen_index;

  hwgen_issue #(
    .NUM_SEM  (NUM_SEM),
    .CONSUMED (CONSUMED)
  ) u_issue (
    .head_valid_i    (head_valid_i),
    .head_wait_i     (f_wait),
    .exec_idle_i     (!req_busy_q && ctx_in_ready),
    .sem_available_i (sem_available_i),
    .head_pop_o      (head_pop_o),
    .sem_acquire_o   (sem_acquire_o),
    .start_o         (start),
    .stall_o         (stall_o)
  );

  // A stream or hand-off transfer starts its beats only when no memory read is still in
  // flight, and a stream or memory transfer only when no hand-off read is, so the response
  // FIFO never receives from two sources in one cycle.
  wire credit   = (inflight_q != FLIGHT_MAX);
  wire req_pad  = is_pad(req_geom_q, req_i0_q, req_i1_q);
  // A padding row is skipped in one cycle, without a request.
  wire req_skip = req_busy_q && agen_valid && req_pad;
  wire mem_quiet = (mem_pending_q == {(RSP_PTR_W+1){1'b0}});
  wire issuing  = req_busy_q && agen_valid && !req_pad && credit &&
                  (!(req_stream_q || req_handoff_q) || mem_quiet) &&
                  (req_handoff_q || !ho_rsp_q);
  wire mem_fire  = issuing && !req_stream_q && !req_handoff_q && mem_req_ready_i;
  wire strm_fire = issuing && req_stream_q && stream_valid_i;
  wire ho_fire   = issuing && req_handoff_q;
  wire beat_fire = mem_fire || strm_fire || ho_fire;
  assign ho_rsp_d = ho_fire;
  wire row_sent  = beat_fire && (req_beat_q == req_beats_q - BEAT_ONE);

  hwgen_addr_gen #(
    .ADDR_W    (ADDR_W),
    .COUNT_W   (`HWGEN_TRANSFER_COUNT0_W),
    .STRIDE0_W (`HWGEN_TRANSFER_STRIDE0_W),
    .STRIDE1_W (`HWGEN_TRANSFER_STRIDE1_W),
    .INDEX_W   (TOTAL_W)
  ) u_agen (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .start_i     (start),
    .base_i      (f_ext_addr),
    .count0_i    (f_count0),
    .stride0_i   (f_stride0),
    .count1_i    (f_count1),
    .stride1_i   (f_stride1),
    .advance_i   (row_sent || req_skip),
    .valid_o     (agen_valid),
    .last_o      (agen_last),
    .addr_o      (agen_addr),
    .index_o     (agen_index)
  );

  wire unused_agen;
  assign unused_agen = ^{agen_last, agen_index};

  // Rows of a precision without block scales leave out the scale beat of an input or
  // output row.
  wire [BEAT_W-1:0] scale_beats = PREC_SCALED[f_prec] ? {BEAT_W{1'b0}} : SCALE_BEATS_N;

  // An accumulator load may move only the first row_beats beats of each row (the compiler
  // keeps it below BEATS_ACC, so it fits BEAT_W bits; the interpreter refuses more).
  wire [BEAT_W-1:0] acc_beats = (f_row_beats == {`HWGEN_TRANSFER_ROW_BEATS_W{1'b0}})
                                ? BEATS_ACC_N : f_row_beats[BEAT_W-1:0];

  // A block load (transposed or re-blocked) of rows of a block-scaled precision reads
  // input rows: the elements, then the scale beat.
  wire head_block  = f_transpose || f_reblock;
  wire head_scaled = head_block && PREC_SCALED[f_prec];

  always @* begin
    case (f_buffer)
      BUF_INPUT:  beats_of_head = BEATS_INPUT_N - scale_beats;
      BUF_WEIGHT: beats_of_head = head_scaled ? BEATS_INPUT_N : BEATS_WEIGHT_N;
      BUF_ACC:    beats_of_head = acc_beats;
      default:    beats_of_head = BEATS_OUTPUT_N - scale_beats;
    endcase
  end

  // ---------------------------------------------------------------------------------------
  // Instruction contexts, oldest first.
  // ---------------------------------------------------------------------------------------
  wire [TOTAL_W-1:0] head_total = f_count0 * f_count1;
  wire [CTX_W-1:0]   ctx_in     = {head_scaled, f_reblock, f_transpose, f_pad_value, f_widen,
                                   head_geom, f_stream, f_buffer,
                                   f_spad_addr[SPAD_ADDR_W-1:0], beats_of_head, head_total,
                                   f_signal & PRODUCED};
  wire             ctx_valid;
  wire             ctx_pop;
  wire [CTX_W-1:0] ctx;
  wire [2:0]       unused_ctx_count;

  hwgen_fifo #(
    .WIDTH   (CTX_W),
    .DEPTH   (4),
    .PTR_W   (2),
    .COUNT_W (3)
  ) u_ctx_fifo (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .in_valid_i  (start),
    .in_ready_o  (ctx_in_ready),
    .in_data_i   (ctx_in),
    .out_valid_o (ctx_valid),
    .out_ready_i (ctx_pop),
    .out_data_o  (ctx),
    .count_o     (unused_ctx_count)
  );

  wire [NUM_SEM-1:0]     ctx_release   = ctx[0 +: NUM_SEM];
  wire [TOTAL_W-1:0]     ctx_total     = ctx[CTX_TOTAL +: TOTAL_W];
  wire [BEAT_W-1:0]      ctx_beats     = ctx[CTX_BEATS +: BEAT_W];
  wire [SPAD_ADDR_W-1:0] ctx_spad_base = ctx[CTX_SPAD +: SPAD_ADDR_W];
  wire [BUF_W-1:0]       ctx_buffer    = ctx[CTX_BUFFER +: BUF_W];
  wire                   ctx_stream    = ctx[CTX_STREAM];
  wire [GEOM_W-1:0]      ctx_geom      = ctx[CTX_GEOM +: GEOM_W];
  wire [WIDEN_W-1:0]     ctx_widen     = ctx[CTX_WIDEN +: WIDEN_W];
  wire [PADV_W-1:0]      ctx_pad_value = ctx[CTX_PADV +: PADV_W];
  wire                   ctx_transpose = ctx[CTX_TRANS];
  wire                   ctx_reblock   = ctx[CTX_REBLK];
  wire                   ctx_scaled    = ctx[CTX_SCALED];
  // Rows of a block load go to the transposer.
  wire                   ctx_block     = ctx_transpose || ctx_reblock;
  wire                   unused_ctx_stream;
  assign unused_ctx_stream = ctx_stream;

  // ---------------------------------------------------------------------------------------
  // Response side: beats wait in a FIFO, are assembled into rows and written, for the
  // oldest context; when its last row is written its semaphores are released.
  // ---------------------------------------------------------------------------------------
  reg [ROW_MAX_W-1:0] asm_q;
  reg [ROW_MAX_W-1:0] asm_d;
  reg [BEAT_W-1:0]    asm_beat_q;
  reg [BEAT_W-1:0]    asm_beat_d;
  reg                 wr_pending_q;
  reg                 wr_pending_d;
  reg [TOTAL_W-1:0]   written_q;
  reg [TOTAL_W-1:0]   written_d;
  reg [TOTAL_W-1:0]   built_q;
  reg [TOTAL_W-1:0]   built_d;
  reg [C0_W-1:0]      rsp_i0_q;       // the next row to build
  reg [C0_W-1:0]      rsp_i0_d;
  reg [C1_W-1:0]      rsp_i1_q;
  reg [C1_W-1:0]      rsp_i1_d;
  reg                 wr_pad_q;       // the row waiting to be written is padding
  reg                 wr_pad_d;

{%- if c.handoff %}
  wire             rsp_in_valid = strm_fire || mem_rsp_valid_i || ho_rsp_q;
  wire [MEM_W-1:0] rsp_in_data  = strm_fire ? stream_data_i
                                : ho_rsp_q  ? handoff_rdata_i : mem_rsp_rdata_i;
{%- else %}
  wire             rsp_in_valid = strm_fire || mem_rsp_valid_i;
  wire [MEM_W-1:0] rsp_in_data  = strm_fire ? stream_data_i : mem_rsp_rdata_i;
{%- endif %}
  wire             rsp_valid;
  wire [MEM_W-1:0] rsp_data;
  // A row is taken by the scratchpad, or (transposing loads) by the transposer; the
  // transposer's rows go out first.
  wire             tr_in_ready;
  wire             tr_out_valid;
  wire             tr_idle;
  wire             wr_fire      = wr_pending_q && (ctx_block ? tr_in_ready
                                                                 : (wr_ready_i && !tr_out_valid));
  // Beats past the oldest context's last row belong to the next one: leave them queued.
  wire             rsp_pad   = is_pad(ctx_geom, rsp_i0_q, rsp_i1_q);
  wire             building  = ctx_valid && (built_q != ctx_total) && (!wr_pending_q || wr_fire);
  wire             rsp_pop   = building && rsp_valid && !rsp_pad;
  // A padding row is built at once.
  wire             pad_row   = building && rsp_pad;
  wire               row_built = (rsp_pop && (asm_beat_q == ctx_beats - BEAT_ONE)) || pad_row;
  wire [C0_W-1:0]    ctx_count0 = ctx_geom[GEOM_W-1 -: C0_W];
  wire               done      = ctx_valid && (written_q == ctx_total) && !wr_pending_q && tr_idle;
  wire               unused_rsp_ready;
  wire [RSP_PTR_W:0] unused_rsp_count;

  assign ctx_pop = done;

  hwgen_fifo #(
    .WIDTH   (MEM_W),
    .DEPTH   (RSP_DEPTH),
    .PTR_W   (RSP_PTR_W),
    .COUNT_W (RSP_PTR_W + 1)
  ) u_rsp_fifo (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .in_valid_i  (rsp_in_valid),
    .in_ready_o  (unused_rsp_ready),
    .in_data_i   (rsp_in_data),
    .out_valid_o (rsp_valid),
    .out_ready_i (rsp_pop),
    .out_data_o  (rsp_data),
    .count_o     (unused_rsp_count)
  );

  // A new beat enters at the top; after n beats the row sits in the top n*MEM_W bits with
  // its first beat lowest.
  wire [ROW_MAX_W-1:0] asm_shifted;
  generate
    if (ROW_MAX_W > MEM_W) begin : gen_multi_beat
      assign asm_shifted = {rsp_data, asm_q[ROW_MAX_W-1:MEM_W]};
    end else begin : gen_single_beat
      assign asm_shifted = rsp_data;
    end
  endgenerate

  always @* begin
    req_busy_d    = req_busy_q;
    req_stream_d  = req_stream_q;
    req_handoff_d = req_handoff_q;
    req_beats_d   = req_beats_q;
    req_beat_d    = req_beat_q;
    inflight_d    = inflight_q;
    mem_pending_d = mem_pending_q;
    asm_d         = asm_q;
    asm_beat_d    = asm_beat_q;
    wr_pending_d  = wr_pending_q;
    written_d     = written_q;
    built_d       = built_q;
    req_geom_d    = req_geom_q;
    req_i0_d      = req_i0_q;
    req_i1_d      = req_i1_q;
    rsp_i0_d      = rsp_i0_q;
    rsp_i1_d      = rsp_i1_q;
    wr_pad_d      = wr_pad_q;

    if (start) begin
      req_busy_d   = 1'b1;
      req_stream_d = f_stream;
      req_handoff_d = f_handoff_on;
      req_beats_d  = beats_of_head;
      req_beat_d   = {BEAT_W{1'b0}};
      req_geom_d   = head_geom;
      req_i0_d     = {C0_W{1'b0}};
      req_i1_d     = {C1_W{1'b0}};
    end else if (req_busy_q && !agen_valid) begin
      req_busy_d = 1'b0;
    end
    if (row_sent || req_skip) begin
      if (req_i0_q == req_geom_q[GEOM_W-1 -: C0_W] - C0_ONE) begin
        req_i0_d = {C0_W{1'b0}};
        req_i1_d = req_i1_q + C1_ONE;
      end else begin
        req_i0_d = req_i0_q + C0_ONE;
      end
    end

    if (beat_fire) begin
      req_beat_d = row_sent ? {BEAT_W{1'b0}} : req_beat_q + BEAT_ONE;
    end
    if (beat_fire && !rsp_pop) begin
      inflight_d = inflight_q + FLIGHT_ONE;
    end else if (rsp_pop && !beat_fire) begin
      inflight_d = inflight_q - FLIGHT_ONE;
    end
    if (mem_fire && !mem_rsp_valid_i) begin
      mem_pending_d = mem_pending_q + FLIGHT_ONE;
    end else if (mem_rsp_valid_i && !mem_fire) begin
      mem_pending_d = mem_pending_q - FLIGHT_ONE;
    end

    if (pad_row) begin
      asm_d = {ROW_MAX_W{1'b0}};
    end else if (rsp_pop) begin
      asm_d      = asm_shifted;
      asm_beat_d = row_built ? {BEAT_W{1'b0}} : asm_beat_q + BEAT_ONE;
    end
    if (row_built) begin
      if (rsp_i0_q == ctx_count0 - C0_ONE) begin
        rsp_i0_d = {C0_W{1'b0}};
        rsp_i1_d = rsp_i1_q + C1_ONE;
      end else begin
        rsp_i0_d = rsp_i0_q + C0_ONE;
      end
    end
    wr_pending_d = (wr_pending_q && !wr_fire) || row_built;
    wr_pad_d     = row_built ? pad_row : wr_pad_q;
    if (done) begin
      written_d = {TOTAL_W{1'b0}};
      built_d   = {TOTAL_W{1'b0}};
      rsp_i0_d  = {C0_W{1'b0}};
      rsp_i1_d  = {C1_W{1'b0}};
    end else begin
      if (wr_fire) begin
        written_d = written_q + TOTAL_ONE;
      end
      if (row_built) begin
        built_d = built_q + TOTAL_ONE;
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      req_busy_q    <= 1'b0;
      req_stream_q  <= 1'b0;
      req_handoff_q <= 1'b0;
      ho_rsp_q      <= 1'b0;
      req_beats_q   <= BEAT_ONE;
      req_beat_q    <= {BEAT_W{1'b0}};
      inflight_q    <= {(RSP_PTR_W+1){1'b0}};
      mem_pending_q <= {(RSP_PTR_W+1){1'b0}};
      asm_q         <= {ROW_MAX_W{1'b0}};
      asm_beat_q    <= {BEAT_W{1'b0}};
      wr_pending_q  <= 1'b0;
      written_q     <= {TOTAL_W{1'b0}};
      built_q       <= {TOTAL_W{1'b0}};
      req_geom_q    <= {GEOM_W{1'b0}};
      req_i0_q      <= {C0_W{1'b0}};
      req_i1_q      <= {C1_W{1'b0}};
      rsp_i0_q      <= {C0_W{1'b0}};
      rsp_i1_q      <= {C1_W{1'b0}};
      wr_pad_q      <= 1'b0;
    end else begin
      req_busy_q    <= req_busy_d;
      req_stream_q  <= req_stream_d;
      req_handoff_q <= req_handoff_d;
      ho_rsp_q      <= ho_rsp_d;
      req_beats_q   <= req_beats_d;
      req_beat_q    <= req_beat_d;
      inflight_q    <= inflight_d;
      mem_pending_q <= mem_pending_d;
      asm_q         <= asm_d;
      asm_beat_q    <= asm_beat_d;
      wr_pending_q  <= wr_pending_d;
      written_q     <= written_d;
      built_q       <= built_d;
      req_geom_q    <= req_geom_d;
      req_i0_q      <= req_i0_d;
      req_i1_q      <= req_i1_d;
      rsp_i0_q      <= rsp_i0_d;
      rsp_i1_q      <= rsp_i1_d;
      wr_pad_q      <= wr_pad_d;
    end
  end

  // An accumulator row: its beats, right-aligned (a short row's beats sit at the top of
  // asm_q; the shift brings zeros into the lanes above them), then with widen each lane's
  // narrow integer sign-extended into its ACC_W bits.
  localparam integer ACC_ROW_W = ACC_LANES * ACC_W;
  localparam integer INT16_W   = 16;  // the integers of widen code `HWGEN_WIDEN_16
  localparam integer INT8_W    = 8;   // the integers of widen code `HWGEN_WIDEN_8
  wire [ROW_MAX_W-1:0] acc_packed = asm_q >> (ROW_MAX_W - ctx_beats * MEM_W);
  wire [ACC_ROW_W-1:0] acc_row;
  wire [ROW_MAX_W-1:0] acc_wr;
  genvar gl;
  generate
    if (ROW_MAX_W > ACC_ROW_W) begin : gen_acc_narrow
      wire unused_acc_packed;
      assign unused_acc_packed = ^acc_packed[ROW_MAX_W-1:ACC_ROW_W];
      assign acc_wr = { {(ROW_MAX_W-ACC_ROW_W){1'b0}}, acc_row};
    end else begin : gen_acc_widest
      assign acc_wr = acc_row;
    end
    for (gl = 0; gl < ACC_LANES; gl = gl + 1) begin : gen_widen
      wire [ACC_W-1:0] own = acc_packed[gl*ACC_W +: ACC_W];
      wire [ACC_W-1:0] from16;
      wire [ACC_W-1:0] from8;
      if (ACC_W > INT16_W) begin : gen_16
        wire [INT16_W-1:0] v = acc_packed[gl*INT16_W +: INT16_W];
        assign from16 = { {(ACC_W-INT16_W){v[INT16_W-1]}}, v};
      end else begin : gen_16_own
        assign from16 = own;
      end
      if (ACC_W > INT8_W) begin : gen_8
        wire [INT8_W-1:0] v = acc_packed[gl*INT8_W +: INT8_W];
        assign from8 = { {(ACC_W-INT8_W){v[INT8_W-1]}}, v};
      end else begin : gen_8_own
        assign from8 = own;
      end
      assign acc_row[gl*ACC_W +: ACC_W] = (ctx_widen == `HWGEN_WIDEN_16) ? from16 :
                                          (ctx_widen == `HWGEN_WIDEN_8)  ? from8  : own;
    end
  endgenerate

  // An input padding row: pad_value in every element (its low INPUT_W bits, or extended in
  // the input's signedness when the elements are wider), the scale slot zero.
  localparam integer   IN_ELEMS_W = IN_LANES * INPUT_W;
  wire [INPUT_W-1:0]   pad_elem;
  wire [ROW_MAX_W-1:0] pad_input_row;

  hwgen_pad_element #(
    .PADV_W       (PADV_W),
    .INPUT_W      (INPUT_W),
    .INPUT_SIGNED (INPUT_SIGNED)
  ) u_pad_element (
    .pattern_i (ctx_pad_value),
    .element_o (pad_elem)
  );

  generate
    if (ROW_MAX_W > IN_ELEMS_W) begin : gen_pad_row_slot
      assign pad_input_row = { {(ROW_MAX_W-IN_ELEMS_W){1'b0}}, {IN_LANES{pad_elem}} };
    end else begin : gen_pad_row_full
      assign pad_input_row = {IN_LANES{pad_elem}};
    end
  endgenerate

  // Right-align the assembled row for the target buffer. A row without its scale beat is
  // shorter: its elements end below the scale slot, which reads zero.
  wire ctx_short = (ctx_buffer == BUF_INPUT && ctx_beats != BEATS_INPUT_N) ||
                   (ctx_buffer == BUF_OUTPUT && ctx_beats != BEATS_OUTPUT_N);

  reg [ROW_MAX_W-1:0] row_data;
  always @* begin
    case (ctx_buffer)
      BUF_INPUT:  row_data = wr_pad_q  ? pad_input_row
                           : ctx_short ? asm_q >> (ROW_MAX_W - (BEATS_INPUT - SCALE_BEATS) * MEM_W)
                                       : asm_q >> (ROW_MAX_W - BEATS_INPUT * MEM_W);
      BUF_WEIGHT: row_data = ctx_scaled ? asm_q >> (ROW_MAX_W - BEATS_INPUT * MEM_W)
                                        : asm_q >> (ROW_MAX_W - BEATS_WEIGHT * MEM_W);
      BUF_ACC:    row_data = acc_wr;
      default:    row_data = ctx_short ? asm_q >> (ROW_MAX_W - (BEATS_OUTPUT - SCALE_BEATS) * MEM_W)
                                       : asm_q >> (ROW_MAX_W - BEATS_OUTPUT * MEM_W);
    endcase
  end
  wire [SPAD_ADDR_W-1:0] row_addr = ctx_spad_base + written_q[SPAD_ADDR_W-1:0];
{%- if c.rows %}

  // Transposing and re-blocking loads (weight rows of WT_LANES elements of WT_W bits):
  // blocks of WT_LANES rows through the transposer; a row of a block-scaled precision is
  // an input row, its scale in the slot after its elements.
  localparam integer       WT_ROW_W = WT_LANES * WT_W;
  localparam integer       SCALE_W  = WT_SCALE_W;
  wire [SPAD_ADDR_W-1:0]   tr_out_addr;
  wire [WT_ROW_W-1:0]      tr_out_data;
  wire [SCALE_W-1:0]       tr_in_scale;
  generate
    if (WT_SCALE_ROWS > 0) begin : gen_tr_scale
      assign tr_in_scale = row_data[(BEATS_INPUT - SCALE_BEATS) * MEM_W +: SCALE_W];
    end else begin : gen_tr_no_scale
      assign tr_in_scale = {SCALE_W{1'b0}};
    end
  endgenerate
  hwgen_transposer #(
    .N          (WT_LANES),
    .W          (WT_W),
    .ADDR_W     (SPAD_ADDR_W),
    .SCALE_ROWS (WT_SCALE_ROWS),
    .SCALE_W    (SCALE_W),
    .FRAC       (WT_FRAC)
  ) u_transposer (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .reblock_i   (ctx_reblock),
    .scaled_i    (ctx_scaled),
    .in_valid_i  (wr_pending_q && ctx_block),
    .in_ready_o  (tr_in_ready),
    .in_addr_i   (row_addr),
    .in_data_i   (row_data[WT_ROW_W-1:0]),
    .in_scale_i  (tr_in_scale),
    .out_valid_o (tr_out_valid),
    .out_ready_i (wr_ready_i),
    .out_addr_o  (tr_out_addr),
    .out_data_o  (tr_out_data),
    .idle_o      (tr_idle)
  );
  assign wr_valid_o = tr_out_valid || (wr_pending_q && !ctx_block);
  assign wr_addr_o  = tr_out_valid ? tr_out_addr : row_addr;
  assign wr_data_o  = tr_out_valid ? { {(ROW_MAX_W-WT_ROW_W){1'b0} }, tr_out_data} : row_data;
{%- else %}

  // (No transposing loads without [rows]: the interpreter refuses them.)
  assign tr_in_ready  = 1'b0;
  assign tr_out_valid = 1'b0;
  assign tr_idle      = 1'b1;
  wire unused_transpose;
  assign unused_transpose = ^{ctx_block, ctx_scaled};
  assign wr_valid_o = wr_pending_q;
  assign wr_addr_o  = row_addr;
  assign wr_data_o  = row_data;
{%- endif %}

  assign mem_req_valid_o = issuing && !req_stream_q && !req_handoff_q;
  assign mem_req_addr_o  = agen_addr + { {(ADDR_W-BEAT_W){1'b0}}, req_beat_q};
{%- if c.handoff %}
  assign handoff_re_o    = ho_fire;
  assign handoff_addr_o  = mem_req_addr_o;
{%- endif %}
  assign stream_ready_o  = issuing && req_stream_q;
  assign wr_buffer_o     = ctx_buffer;
  assign sem_release_o   = done ? ctx_release : {NUM_SEM{1'b0}};
  assign busy_o          = req_busy_q || ctx_valid;

  // Simulation only: a read request, once offered, stays unchanged until accepted.
  hwgen_hold_check #(
    .WIDTH (ADDR_W)
  ) u_hold_mem_req (
    .clk_i   (clk_i),
    .{{ c.rst }}  ({{ c.rst }}),
    .valid_i (mem_req_valid_o),
    .ready_i (mem_req_ready_i),
    .data_i  (mem_req_addr_o)
  );

endmodule
