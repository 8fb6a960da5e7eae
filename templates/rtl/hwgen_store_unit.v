{{ c.banner }}
// Store queue executor: reads output-buffer rows and writes them, BEATS beats per row
// (least significant first), to external memory or to the downstream stream, addressed by a
// two-level strided loop. Reading runs ahead of sending, so rows leave back to back (one
// row of one beat per cycle) while the memory port accepts them. Output rows of a design
// with block scales end with SCALE_BEATS beats holding the scale; a store of rows of a
// precision without scales (bit prec of PREC_SCALED clear) leaves them out.
{%- if c.handoff %}
// A store with handoff writes its beats into the hand-off buffers of the engines its stream
// links feed (a write a cycle, never refused) at their addresses modulo each buffer's
// depth, instead of external memory.
{%- endif %}
`include "hwgen_isa.vh"
module hwgen_store_unit #(
  parameter integer       INSTR_W     = `HWGEN_INSTR_W,
  parameter integer       NUM_SEM     = 10,
  parameter [NUM_SEM-1:0] CONSUMED    = {NUM_SEM{1'b0}},
  parameter [NUM_SEM-1:0] PRODUCED    = {NUM_SEM{1'b0}},
  parameter integer       MEM_W       = 64,
  parameter integer       ADDR_W      = 32,
  parameter integer       SPAD_ADDR_W = 16,
  parameter integer       BEATS       = 1,
  parameter integer       SCALE_BEATS = 0,
  parameter [1:0]         PREC_SCALED = 2'b00,
  parameter integer       BEAT_W      = 1,
  parameter integer       ROW_W       = 64
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
  // output-buffer reads
  output wire                   rd_valid_o,
  output wire [SPAD_ADDR_W-1:0] rd_addr_o,
  input  wire                   rd_grant_i,
  input  wire [ROW_W-1:0]       rd_data_i,
  // external memory (writes only)
  output wire                   mem_req_valid_o,
  input  wire                   mem_req_ready_i,
  output wire [ADDR_W-1:0]      mem_req_addr_o,
  output wire [MEM_W-1:0]       mem_req_wdata_o,
  // downstream stream
  output wire                   stream_valid_o,
  input  wire                   stream_ready_i,
  output wire [MEM_W-1:0]       stream_data_o,
{%- if c.handoff %}
  // the hand-off buffers downstream (writes)
  output wire                   handoff_we_o,
  output wire [ADDR_W-1:0]      handoff_addr_o,
  output wire [MEM_W-1:0]       handoff_wdata_o,
{%- endif %}
  // performance
  output wire                   busy_o,
  output wire                   stall_o
);

  // Rows read from the output buffer and not yet sent: the row being sent and the one
  // behind it.
  localparam integer      ROWS_AHEAD    = 2;
  localparam integer      AHEAD_PTR_W   = 1;
  localparam integer      AHEAD_CNT_W   = 2;
  localparam [AHEAD_CNT_W:0] ROWS_AHEAD_N = ROWS_AHEAD[AHEAD_CNT_W:0];
  localparam integer      INDEX_W       = `HWGEN_TRANSFER_COUNT0_W + `HWGEN_TRANSFER_COUNT1_W;
  localparam [BEAT_W-1:0] BEAT_ONE      = 1;
  localparam integer      BEATS_M1      = BEATS - 1;
  localparam [BEAT_W-1:0] BEAT_LAST     = BEATS_M1[BEAT_W-1:0];
  localparam [BEAT_W-1:0] SCALE_BEATS_N = SCALE_BEATS[BEAT_W-1:0];

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

  localparam integer PAD_W = `HWGEN_TRANSFER_PAD_TOP_W;
  wire [4*PAD_W-1:0] f_pads;
  wire [`HWGEN_TRANSFER_ROW_BEATS_W-1:0] f_row_beats;
  wire [`HWGEN_TRANSFER_WIDEN_W-1:0]     f_widen;
  wire [`HWGEN_TRANSFER_PAD_VALUE_W-1:0] f_pad_value;
  wire                                   f_transpose;
  wire                                   f_reblock;
  wire                                   f_handoff;

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
    .pad_top_o    (f_pads[4*PAD_W-1 -: PAD_W]),
    .pad_bottom_o (f_pads[3*PAD_W-1 -: PAD_W]),
    .pad_left_o   (f_pads[2*PAD_W-1 -: PAD_W]),
    .pad_right_o  (f_pads[PAD_W-1:0]),
    .row_beats_o  (f_row_beats),
    .widen_o      (f_widen),
    .pad_value_o  (f_pad_value),
    .transpose_o  (f_transpose),
    .reblock_o    (f_reblock),
    .handoff_o    (f_handoff)
  );

  // A store always reads the output buffer, whole rows, and takes no padding and no
  // transposition or re-blocking; the assembler and the interpreter check these fields.
  wire unused_buffer;
  assign unused_buffer = ^{f_buffer, f_pads, f_row_beats, f_widen, f_pad_value, f_transpose,
                           f_reblock};
{%- if c.handoff %}
  wire f_handoff_on = f_handoff;
{%- else %}
  // (No hand-off buffers downstream: the interpreter refuses a store with handoff.)
  wire f_handoff_on = 1'b0;
  wire unused_handoff;
  assign unused_handoff = f_handoff;
{%- endif %}

  reg                   active_q;
  reg                   active_d;
  reg                   stream_q;
  reg                   stream_d;
  reg                   handoff_q;
  reg                   handoff_d;
  reg [SPAD_ADDR_W-1:0] spad_base_q;
  reg [SPAD_ADDR_W-1:0] spad_base_d;
  reg [NUM_SEM-1:0]     release_q;
  reg [NUM_SEM-1:0]     release_d;
  reg [BEAT_W-1:0]      beat_q;
  reg [BEAT_W-1:0]      beat_d;
  reg [BEAT_W-1:0]      last_beat_q;     // BEAT_LAST, less the scale beats of an unscaled row
  reg [BEAT_W-1:0]      last_beat_d;
  reg                   inflight_q;      // a row read was granted last cycle
  wire                  inflight_d;
  reg                   done;

  wire               start;
  // The send side walks the external addresses, one row per sent row.
  wire               agen_valid;
  wire               agen_last;
  wire [ADDR_W-1:0]  agen_addr;
  wire [INDEX_W-1:0] agen_index;
  // The read side walks the output-buffer rows ahead of it.
  wire               rd_agen_valid;
  wire               rd_agen_last;
  wire [ADDR_W-1:0]  rd_agen_addr;
  wire [INDEX_W-1:0] rd_index;

  wire unused_index;
  assign unused_index = ^{agen_index, rd_agen_last, rd_agen_addr, rd_index[INDEX_W-1:SPAD_ADDR_W]};

  // Rows read wait in a FIFO of ROWS_AHEAD rows; the row at its head is sent.
  wire                   head_valid;
  wire [ROW_W-1:0]       head_row;
  wire [AHEAD_CNT_W-1:0] ahead_count;
  wire                   unused_ahead_ready;

  wire sending   = active_q && head_valid;
  wire beat_fire = sending && (handoff_q || (stream_q ? stream_ready_i : mem_req_ready_i));
  wire row_done  = beat_fire && (beat_q == last_beat_q);

  // A row is read when the FIFO will have room for it the cycle its data arrives: the rows
  // it holds, plus the one in flight, less the one leaving this cycle, stay below
  // ROWS_AHEAD. So a row of one beat is read, buffered and sent every cycle.
  wire [AHEAD_CNT_W:0] held    = {1'b0, ahead_count} + { {AHEAD_CNT_W{1'b0}}, inflight_q};
  wire                 room    = held < (ROWS_AHEAD_N + { {AHEAD_CNT_W{1'b0}}, row_done});
  wire                 rd_fire = rd_valid_o && rd_grant_i;
  assign inflight_d = rd_fire;

  hwgen_issue #(
    .NUM_SEM  (NUM_SEM),
    .CONSUMED (CONSUMED)
  ) u_issue (
    .head_valid_i    (head_valid_i),
    .head_wait_i     (f_wait),
    .exec_idle_i     (!active_q),
    .sem_available_i (sem_available_i),
    .head_pop_o      (head_pop_o),
    .sem_acquire_o   (sem_acquire_o),
    .start_o         (start),
    .stall_o         (stall_o)
  );

  hwgen_addr_gen #(
    .ADDR_W    (ADDR_W),
    .COUNT_W   (`HWGEN_TRANSFER_COUNT0_W),
    .STRIDE0_W (`HWGEN_TRANSFER_STRIDE0_W),
    .STRIDE1_W (`HWGEN_TRANSFER_STRIDE1_W),
    .INDEX_W   (INDEX_W)
  ) u_agen (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .start_i     (start),
    .base_i      (f_ext_addr),
    .count0_i    (f_count0),
    .stride0_i   (f_stride0),
    .count1_i    (f_count1),
    .stride1_i   (f_stride1),
    .advance_i   (row_done),
    .valid_o     (agen_valid),
    .last_o      (agen_last),
    .addr_o      (agen_addr),
    .index_o     (agen_index)
  );

  // Same loop, counting output-buffer rows only (its addresses are not used).
  hwgen_addr_gen #(
    .ADDR_W    (ADDR_W),
    .COUNT_W   (`HWGEN_TRANSFER_COUNT0_W),
    .STRIDE0_W (`HWGEN_TRANSFER_STRIDE0_W),
    .STRIDE1_W (`HWGEN_TRANSFER_STRIDE1_W),
    .INDEX_W   (INDEX_W)
  ) u_rd_agen (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .start_i     (start),
    .base_i      (f_ext_addr),
    .count0_i    (f_count0),
    .stride0_i   (f_stride0),
    .count1_i    (f_count1),
    .stride1_i   (f_stride1),
    .advance_i   (rd_fire),
    .valid_o     (rd_agen_valid),
    .last_o      (rd_agen_last),
    .addr_o      (rd_agen_addr),
    .index_o     (rd_index)
  );

  hwgen_fifo #(
    .WIDTH   (ROW_W),
    .DEPTH   (ROWS_AHEAD),
    .PTR_W   (AHEAD_PTR_W),
    .COUNT_W (AHEAD_CNT_W)
  ) u_ahead (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .in_valid_i  (inflight_q),
    .in_ready_o  (unused_ahead_ready),
    .in_data_i   (rd_data_i),
    .out_valid_o (head_valid),
    .out_ready_i (row_done),
    .out_data_o  (head_row),
    .count_o     (ahead_count)
  );

  // The beat being sent: beat beat_q of the head row (zero above the row's last bit).
  wire [BEATS*MEM_W-1:0] head_beats;
  generate
    if (BEATS * MEM_W > ROW_W) begin : gen_pad
      assign head_beats = { {(BEATS*MEM_W-ROW_W){1'b0}}, head_row};
    end else begin : gen_exact
      assign head_beats = head_row;
    end
  endgenerate
  wire [MEM_W-1:0] beat_data = head_beats[beat_q*MEM_W +: MEM_W];

  always @* begin
    active_d    = active_q;
    stream_d    = stream_q;
    handoff_d   = handoff_q;
    spad_base_d = spad_base_q;
    release_d   = release_q;
    beat_d      = beat_q;
    last_beat_d = last_beat_q;
    done        = 1'b0;
    if (start) begin
      active_d    = 1'b1;
      stream_d    = f_stream;
      handoff_d   = f_handoff_on;
      spad_base_d = f_spad_addr;
      release_d   = f_signal & PRODUCED;
      last_beat_d = PREC_SCALED[f_prec] ? BEAT_LAST : BEAT_LAST - SCALE_BEATS_N;
      beat_d      = {BEAT_W{1'b0}};
    end else if (active_q) begin
      if (!agen_valid) begin
        // Nothing (left) to send: an empty transfer.
        active_d = 1'b0;
        done     = 1'b1;
      end else if (row_done) begin
        beat_d = {BEAT_W{1'b0}};
        if (agen_last) begin
          active_d = 1'b0;
          done     = 1'b1;
        end
      end else if (beat_fire) begin
        beat_d = beat_q + BEAT_ONE;
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      active_q    <= 1'b0;
      stream_q    <= 1'b0;
      handoff_q   <= 1'b0;
      spad_base_q <= {SPAD_ADDR_W{1'b0}};
      release_q   <= {NUM_SEM{1'b0}};
      beat_q      <= {BEAT_W{1'b0}};
      last_beat_q <= BEAT_LAST;
      inflight_q  <= 1'b0;
    end else begin
      active_q    <= active_d;
      stream_q    <= stream_d;
      handoff_q   <= handoff_d;
      spad_base_q <= spad_base_d;
      release_q   <= release_d;
      beat_q      <= beat_d;
      last_beat_q <= last_beat_d;
      inflight_q  <= inflight_d;
    end
  end

  assign rd_valid_o      = active_q && rd_agen_valid && room;
  assign rd_addr_o       = spad_base_q + rd_index[SPAD_ADDR_W-1:0];
  assign mem_req_valid_o = sending && !stream_q && !handoff_q;
  assign mem_req_addr_o  = agen_addr + { {(ADDR_W-BEAT_W){1'b0}}, beat_q};
  assign mem_req_wdata_o = beat_data;
  assign stream_valid_o  = sending && stream_q;
  assign stream_data_o   = beat_data;
{%- if c.handoff %}
  assign handoff_we_o    = sending && handoff_q;
  assign handoff_addr_o  = mem_req_addr_o;
  assign handoff_wdata_o = beat_data;
{%- endif %}
  assign sem_release_o   = done ? release_q : {NUM_SEM{1'b0}};
  assign busy_o          = active_q;

  // Simulation only: a write request and a beat offered downstream, once offered, stay
  // unchanged until accepted.
  hwgen_hold_check #(
    .WIDTH (ADDR_W + MEM_W)
  ) u_hold_mem_req (
    .clk_i   (clk_i),
    .{{ c.rst }}  ({{ c.rst }}),
    .valid_i (mem_req_valid_o),
    .ready_i (mem_req_ready_i),
    .data_i  ({mem_req_addr_o, mem_req_wdata_o})
  );
  hwgen_hold_check #(
    .WIDTH (MEM_W)
  ) u_hold_stream (
    .clk_i   (clk_i),
    .{{ c.rst }}  ({{ c.rst }}),
    .valid_i (stream_valid_o),
    .ready_i (stream_ready_i),
    .data_i  (stream_data_o)
  );

endmodule
