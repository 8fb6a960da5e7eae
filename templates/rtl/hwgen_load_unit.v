{{ c.banner }}
// Load queue executor: moves rows from external memory (or the upstream stream) into a
// scratchpad. Rows are fetched by a two-level strided loop; each row is BEATS_<buffer>
// consecutive beats, least significant beat first. Up to RSP_DEPTH reads are in flight.
`include "hwgen_isa.vh"
module hwgen_load_unit #(
  parameter integer       INSTR_W       = 160,
  parameter integer       NUM_SEM       = 10,
  parameter [NUM_SEM-1:0] CONSUMED      = {NUM_SEM{1'b0}},
  parameter [NUM_SEM-1:0] PRODUCED      = {NUM_SEM{1'b0}},
  parameter integer       MEM_W         = 64,
  parameter integer       ADDR_W        = 32,
  parameter integer       SPAD_ADDR_W   = 16,
  parameter integer       BEATS_INPUT   = 1,
  parameter integer       BEATS_WEIGHT  = 1,
  parameter integer       BEATS_ACC     = 4,
  parameter integer       BEATS_OUTPUT  = 1,
  parameter integer       BEAT_W        = 3,
  parameter integer       ROW_MAX_W     = 256,
  parameter integer       RSP_DEPTH     = 32,
  parameter integer       RSP_PTR_W     = 5
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
  // scratchpad writes
  output wire                   wr_valid_o,
  input  wire                   wr_ready_i,
  output wire [1:0]             wr_buffer_o,
  output wire [SPAD_ADDR_W-1:0] wr_addr_o,
  output reg  [ROW_MAX_W-1:0]   wr_data_o,
  // performance
  output wire                   busy_o,
  output wire                   stall_o
);

  localparam integer TOTAL_W = `HWGEN_TRANSFER_COUNT0_W + `HWGEN_TRANSFER_COUNT1_W;
  localparam [BEAT_W-1:0]      BEAT_ONE   = 1;
  localparam [TOTAL_W-1:0]     TOTAL_ONE  = 1;
  localparam [RSP_PTR_W:0]     FLIGHT_ONE = 1;
  localparam [RSP_PTR_W:0]     FLIGHT_MAX = RSP_DEPTH[RSP_PTR_W:0];
  localparam [BEAT_W-1:0]      BEATS_INPUT_N  = BEATS_INPUT[BEAT_W-1:0];
  localparam [BEAT_W-1:0]      BEATS_WEIGHT_N = BEATS_WEIGHT[BEAT_W-1:0];
  localparam [BEAT_W-1:0]      BEATS_ACC_N    = BEATS_ACC[BEAT_W-1:0];
  localparam [BEAT_W-1:0]      BEATS_OUTPUT_N = BEATS_OUTPUT[BEAT_W-1:0];
  localparam [1:0]             BUF_INPUT  = 2'd0;
  localparam [1:0]             BUF_WEIGHT = 2'd1;
  localparam [1:0]             BUF_ACC    = 2'd2;

  // Decoded fields of the head instruction.
  wire [NUM_SEM-1:0] f_wait;
  wire [NUM_SEM-1:0] f_signal;
  wire               f_stream;
  wire [`HWGEN_TRANSFER_BUFFER_W-1:0]    f_buffer;
  wire [`HWGEN_TRANSFER_SPAD_ADDR_W-1:0] f_spad_addr;
  wire [`HWGEN_TRANSFER_EXT_ADDR_W-1:0]  f_ext_addr;
  wire [`HWGEN_TRANSFER_COUNT0_W-1:0]    f_count0;
  wire [`HWGEN_TRANSFER_STRIDE0_W-1:0]   f_stride0;
  wire [`HWGEN_TRANSFER_COUNT1_W-1:0]    f_count1;
  wire [`HWGEN_TRANSFER_STRIDE1_W-1:0]   f_stride1;

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
    .stride1_o   (f_stride1)
  );

  reg                   busy_q;
  reg                   busy_d;
  reg                   stream_q;
  reg                   stream_d;
  reg [1:0]             buffer_q;
  reg [1:0]             buffer_d;
  reg [SPAD_ADDR_W-1:0] spad_base_q;
  reg [SPAD_ADDR_W-1:0] spad_base_d;
  reg [NUM_SEM-1:0]     release_q;
  reg [NUM_SEM-1:0]     release_d;
  reg [BEAT_W-1:0]      beats_q;
  reg [BEAT_W-1:0]      beats_d;
  reg [TOTAL_W-1:0]     total_q;
  reg [TOTAL_W-1:0]     total_d;
  reg [BEAT_W-1:0]      req_beat_q;
  reg [BEAT_W-1:0]      req_beat_d;
  reg [RSP_PTR_W:0]     inflight_q;
  reg [RSP_PTR_W:0]     inflight_d;
  reg [ROW_MAX_W-1:0]   asm_q;
  reg [ROW_MAX_W-1:0]   asm_d;
  reg [BEAT_W-1:0]      asm_beat_q;
  reg [BEAT_W-1:0]      asm_beat_d;
  reg                   wr_pending_q;
  reg                   wr_pending_d;
  reg [TOTAL_W-1:0]     written_q;
  reg [TOTAL_W-1:0]     written_d;
  reg [BEAT_W-1:0]      beats_of_head;

  wire start;
  wire agen_valid;
  wire agen_last;
  wire [ADDR_W-1:0]  agen_addr;
  wire [TOTAL_W-1:0] agen_index;

  hwgen_issue #(
    .NUM_SEM  (NUM_SEM),
    .CONSUMED (CONSUMED)
  ) u_issue (
    .head_valid_i    (head_valid_i),
    .head_wait_i     (f_wait),
    .exec_idle_i     (!busy_q),
    .sem_available_i (sem_available_i),
    .head_pop_o      (head_pop_o),
    .sem_acquire_o   (sem_acquire_o),
    .start_o         (start),
    .stall_o         (stall_o)
  );

  // Beat-request side: walk rows with the address generator, beats within a row here.
  wire credit    = (inflight_q != FLIGHT_MAX);
  wire issuing   = busy_q && agen_valid && credit;
  wire mem_fire  = issuing && !stream_q && mem_req_ready_i;
  wire strm_fire = issuing && stream_q && stream_valid_i;
  wire beat_fire = mem_fire || strm_fire;
  wire row_sent  = beat_fire && (req_beat_q == beats_q - BEAT_ONE);

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
    .advance_i   (row_sent),
    .valid_o     (agen_valid),
    .last_o      (agen_last),
    .addr_o      (agen_addr),
    .index_o     (agen_index)
  );

  // Response side: beats wait in a FIFO, then are assembled into rows.
  wire             rsp_in_valid = stream_q ? strm_fire : mem_rsp_valid_i;
  wire [MEM_W-1:0] rsp_in_data  = stream_q ? stream_data_i : mem_rsp_rdata_i;
  wire             rsp_valid;
  wire [MEM_W-1:0] rsp_data;
  wire             wr_fire   = wr_pending_q && wr_ready_i;
  wire             rsp_pop   = rsp_valid && (!wr_pending_q || wr_fire);
  wire             row_built = rsp_pop && (asm_beat_q == beats_q - BEAT_ONE);
  wire             done      = busy_q && (written_q == total_q) && !wr_pending_q;
  wire             unused_rsp_ready;
  wire [RSP_PTR_W:0] unused_rsp_count;
  wire             unused_agen;

  assign unused_agen = ^{agen_last, agen_index};

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
    case (f_buffer)
      BUF_INPUT:  beats_of_head = BEATS_INPUT_N;
      BUF_WEIGHT: beats_of_head = BEATS_WEIGHT_N;
      BUF_ACC:    beats_of_head = BEATS_ACC_N;
      default:    beats_of_head = BEATS_OUTPUT_N;
    endcase
  end

  always @* begin
    busy_d       = busy_q;
    stream_d     = stream_q;
    buffer_d     = buffer_q;
    spad_base_d  = spad_base_q;
    release_d    = release_q;
    beats_d      = beats_q;
    total_d      = total_q;
    req_beat_d   = req_beat_q;
    inflight_d   = inflight_q;
    asm_d        = asm_q;
    asm_beat_d   = asm_beat_q;
    wr_pending_d = wr_pending_q;
    written_d    = written_q;

    if (start) begin
      busy_d      = 1'b1;
      stream_d    = f_stream;
      buffer_d    = f_buffer;
      spad_base_d = f_spad_addr;
      release_d   = f_signal & PRODUCED;
      beats_d     = beats_of_head;
      total_d     = f_count0 * f_count1;
      req_beat_d  = {BEAT_W{1'b0}};
      asm_beat_d  = {BEAT_W{1'b0}};
      written_d   = {TOTAL_W{1'b0}};
    end else if (done) begin
      busy_d = 1'b0;
    end

    if (beat_fire) begin
      req_beat_d = row_sent ? {BEAT_W{1'b0}} : req_beat_q + BEAT_ONE;
    end
    if (beat_fire && !rsp_pop) begin
      inflight_d = inflight_q + FLIGHT_ONE;
    end else if (rsp_pop && !beat_fire) begin
      inflight_d = inflight_q - FLIGHT_ONE;
    end

    if (rsp_pop) begin
      asm_d      = asm_shifted;
      asm_beat_d = row_built ? {BEAT_W{1'b0}} : asm_beat_q + BEAT_ONE;
    end
    wr_pending_d = (wr_pending_q && !wr_fire) || row_built;
    if (wr_fire) begin
      written_d = written_q + TOTAL_ONE;
    end
  end


  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      busy_q       <= 1'b0;
      stream_q     <= 1'b0;
      buffer_q     <= 2'd0;
      spad_base_q  <= {SPAD_ADDR_W{1'b0}};
      release_q    <= {NUM_SEM{1'b0}};
      beats_q      <= BEAT_ONE;
      total_q      <= {TOTAL_W{1'b0}};
      req_beat_q   <= {BEAT_W{1'b0}};
      inflight_q   <= {(RSP_PTR_W+1){1'b0}};
      asm_q        <= {ROW_MAX_W{1'b0}};
      asm_beat_q   <= {BEAT_W{1'b0}};
      wr_pending_q <= 1'b0;
      written_q    <= {TOTAL_W{1'b0}};
    end else begin
      busy_q       <= busy_d;
      stream_q     <= stream_d;
      buffer_q     <= buffer_d;
      spad_base_q  <= spad_base_d;
      release_q    <= release_d;
      beats_q      <= beats_d;
      total_q      <= total_d;
      req_beat_q   <= req_beat_d;
      inflight_q   <= inflight_d;
      asm_q        <= asm_d;
      asm_beat_q   <= asm_beat_d;
      wr_pending_q <= wr_pending_d;
      written_q    <= written_d;
    end
  end

  // Right-align the assembled row for the target buffer.
  always @* begin
    case (buffer_q)
      BUF_INPUT:  wr_data_o = asm_q >> (ROW_MAX_W - BEATS_INPUT * MEM_W);
      BUF_WEIGHT: wr_data_o = asm_q >> (ROW_MAX_W - BEATS_WEIGHT * MEM_W);
      BUF_ACC:    wr_data_o = asm_q >> (ROW_MAX_W - BEATS_ACC * MEM_W);
      default:    wr_data_o = asm_q >> (ROW_MAX_W - BEATS_OUTPUT * MEM_W);
    endcase
  end

  assign mem_req_valid_o = issuing && !stream_q;
  assign mem_req_addr_o  = agen_addr + { {(ADDR_W-BEAT_W){1'b0}}, req_beat_q};
  assign stream_ready_o  = issuing && stream_q;
  assign wr_valid_o      = wr_pending_q;
  assign wr_buffer_o     = buffer_q;
  assign wr_addr_o       = spad_base_q + written_q[SPAD_ADDR_W-1:0];
  assign sem_release_o   = done ? release_q : {NUM_SEM{1'b0}};
  assign busy_o          = busy_q;

endmodule
