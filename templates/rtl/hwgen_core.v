{{ c.banner }}
// One engine: instruction prefetch from external memory into the instruction memory (a
// ring), fetch and dispatch, four in-order queues (load, compute, vector, store)
// synchronised by counting semaphores, the scratchpads, the systolic array, the vector unit
// and one external-memory port shared by the prefetcher and the load and store units.
`include "hwgen_isa.vh"
module hwgen_core #(
  // array and datatypes
  parameter integer CPF           = 8,
  parameter integer KPF           = 8,
  parameter integer INPUT_W       = 8,
  parameter integer INPUT_SIGNED  = 1,
  parameter integer WEIGHT_W      = 8,
  parameter integer WEIGHT_SIGNED = 1,
  parameter integer PSUM_W        = 32,
  parameter integer COL_W         = 32,
  parameter integer ACC_W         = 32,
  parameter integer OUTPUT_W      = 8,
  parameter integer OUTPUT_SIGNED = 1,
  // block scales: the scale slot of input and output rows (0 or 8 bits), the scale rows of
  // a weight tile, and which precisions (bit p for precision p) carry them
  parameter integer SCALE_SLOT_W  = 0,
  parameter integer W_SCALE_ROWS  = 0,
  parameter [1:0]   PREC_SCALED   = 2'b00,
  // scratchpads (entries)
  parameter integer INPUT_DEPTH   = 512,
  parameter integer WEIGHT_DEPTH  = 512,
  parameter integer ACC_DEPTH     = 256,
  parameter integer ACC_BANKS     = 2,
  parameter integer OUTPUT_DEPTH  = 256,
  // memory and control
  parameter integer MEM_W         = 64,
  parameter integer MEM_ADDR_W    = 32,
  parameter integer RSP_DEPTH     = 32,
  parameter integer IMEM_DEPTH    = 1024,
  parameter integer IMEM_ADDR_W   = 10,
  parameter integer QUEUE_DEPTH   = 8,
  parameter integer SEM_COUNT_W   = 4,{% if c.handoff %}
  // beats of the hand-off buffer the unit feeding this one writes into (0: none)
  parameter integer HANDOFF_DEPTH = 0,{% endif %}
  // vector operations
  parameter integer ENABLE_BIAS   = 1,
  parameter integer ENABLE_RELU   = 1,
  parameter integer ENABLE_LEAKY  = 1,
  parameter integer ENABLE_POOL   = 1,
  parameter integer ENABLE_ADD    = 1{% if c.window %},
  // window unit: largest kernel, longest input row in pixels
  parameter integer KERNEL        = 3,
  parameter integer LINE          = 64{% endif %}{% if c.rows %},
  // row unit: entries of the statistics register file; the array's zero-point correction;
  // rows written as MX blocks, and their elements' fraction bits
  parameter integer STATS         = 256,
  parameter integer ZERO_POINTS   = 0,
  parameter integer ROW_BLOCKS    = 0,
  parameter integer ROW_FRAC      = 0{% endif %}
) (
  input  wire                               clk_i,
  input  wire                               {{ c.rst }},
  // control
  input  wire                               start_i,
  output wire                               busy_o,
  output wire                               error_o,
  // first beat of the program in external memory
  input  wire [MEM_ADDR_W-1:0]              prog_base_i,
  // external memory
  output wire                               mem_req_valid_o,
  input  wire                               mem_req_ready_i,
  output wire                               mem_req_write_o,
  output wire [MEM_ADDR_W-1:0]              mem_req_addr_o,
  output wire [MEM_W-1:0]                   mem_req_wdata_o,
  input  wire                               mem_rsp_valid_i,
  input  wire [MEM_W-1:0]                   mem_rsp_rdata_i,
  // stream from the previous unit of the branch
  input  wire                               stream_in_valid_i,
  output wire                               stream_in_ready_o,
  input  wire [MEM_W-1:0]                   stream_in_data_i,
  // stream to the next unit of the branch
  output wire                               stream_out_valid_o,
  input  wire                               stream_out_ready_i,
  output wire [MEM_W-1:0]                   stream_out_data_o,
{%- if c.handoff %}
  // writes into this engine's hand-off buffer, from the unit feeding it
  input  wire                               handoff_in_we_i,
  input  wire [MEM_ADDR_W-1:0]              handoff_in_addr_i,
  input  wire [MEM_W-1:0]                   handoff_in_wdata_i,
  // writes into the hand-off buffers of the engines this one feeds
  output wire                               handoff_out_we_o,
  output wire [MEM_ADDR_W-1:0]              handoff_out_addr_o,
  output wire [MEM_W-1:0]                   handoff_out_wdata_o,
{%- endif %}
  // performance counters, `HWGEN_PERF_COUNTERS x 32 bits
  output wire [`HWGEN_PERF_COUNTERS*32-1:0] perf_o
);

  localparam integer INSTR_W      = `HWGEN_INSTR_W;
  localparam integer NUM_SEM      = `HWGEN_NUM_SEM;
  localparam integer SPAD_ADDR_W  = `HWGEN_SPAD_ADDR_W;
  localparam integer QUEUE_PTR_W  = $clog2(QUEUE_DEPTH);
  localparam integer RSP_PTR_W    = $clog2(RSP_DEPTH);
  // beats of one instruction in external memory, and a counter of them
  localparam integer IBEATS       = (INSTR_W + MEM_W - 1) / MEM_W;
  localparam integer IBEAT_W      = (IBEATS > 1) ? $clog2(IBEATS) : 1;
  // A row of the input or output buffer: the elements, then the scale slot; in memory the
  // elements fill whole beats and a scale takes one more.
  localparam integer INPUT_ROW_W  = CPF * INPUT_W + SCALE_SLOT_W;
  localparam integer WEIGHT_ROW_W = KPF * WEIGHT_W;
  localparam integer ACC_ROW_W    = KPF * ACC_W;
  localparam integer OUTPUT_ROW_W = KPF * OUTPUT_W + SCALE_SLOT_W;
  localparam integer OUT_BANKS    = (OUTPUT_DEPTH >= 4) ? 2 : 1;
  localparam integer SCALE_BEATS  = (SCALE_SLOT_W > 0) ? 1 : 0;
  localparam integer BEATS_INPUT  = CPF * INPUT_W / MEM_W + SCALE_BEATS;
  localparam integer BEATS_WEIGHT = WEIGHT_ROW_W / MEM_W;
  localparam integer BEATS_ACC    = ACC_ROW_W / MEM_W;
  localparam integer BEATS_OUTPUT = KPF * OUTPUT_W / MEM_W + SCALE_BEATS;
  localparam integer ROW_MAX_W    = max4(BEATS_INPUT * MEM_W, WEIGHT_ROW_W, ACC_ROW_W,
                                         BEATS_OUTPUT * MEM_W);
  localparam integer BEAT_W       = $clog2(ROW_MAX_W / MEM_W + 1);
  localparam integer STORE_BEAT_W = $clog2(BEATS_OUTPUT + 1);

  function integer max4;
    input integer a;
    input integer b;
    input integer c;
    input integer d;
    integer m;
    begin
      m = a;
      if (b > m) m = b;
      if (c > m) m = c;
      if (d > m) m = d;
      max4 = m;
    end
  endfunction

  // ---------------------------------------------------------------------------------------
  // Run control: busy from start until fetch has stopped and every queue has drained.
  // ---------------------------------------------------------------------------------------
  wire               fetching;
  wire               illegal;
  wire [3:0]         queue_valid;
  wire [3:0]         exec_busy;
  wire [3:0]         exec_stall;
  wire               mac_active;
  wire [NUM_SEM-1:0] sem_overflow;
  reg                running_q;
  reg                running_d;

  wire               prefetching;
  wire idle_now = !start_i && !fetching && !prefetching && (queue_valid == 4'b0000)
                  && (exec_busy == 4'b0000);

  always @* begin
    running_d = running_q;
    if (start_i) begin
      running_d = 1'b1;
    end else if (idle_now) begin
      running_d = 1'b0;
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      running_q <= 1'b0;
    end else begin
      running_q <= running_d;
    end
  end

  assign busy_o  = running_q;
  assign error_o = illegal || (sem_overflow != {NUM_SEM{1'b0}});

  // ---------------------------------------------------------------------------------------
  // Instruction memory, fetch and the four queues.
  // ---------------------------------------------------------------------------------------
  wire                   imem_re;
  wire [IMEM_ADDR_W-1:0] imem_addr;
  wire [INSTR_W-1:0]     imem_data;
  wire [3:0]             push_valid;
  wire [3:0]             push_ready;
  wire [INSTR_W-1:0]     push_data;
  wire [3:0]             head_pop;
  wire [4*INSTR_W-1:0]   head_instr;

  wire                   imem_we;
  wire [IMEM_ADDR_W-1:0] imem_waddr;
  wire [INSTR_W-1:0]     imem_wdata;
  wire [MEM_ADDR_W-1:0]  prog_written;
  wire [MEM_ADDR_W-1:0]  prog_fetched;
  wire                   ld_mem_valid;
  wire                   ld_mem_ready;
  wire [MEM_ADDR_W-1:0]  ld_mem_addr;
  wire                   ld_rsp_valid;
  wire                   st_mem_valid;
  wire                   st_mem_ready;
  wire [MEM_ADDR_W-1:0]  st_mem_addr;
  wire [MEM_W-1:0]       st_mem_wdata;
  wire                   unused_st_rsp_valid;
  wire                   if_mem_valid;
  wire                   if_mem_ready;
  wire [MEM_ADDR_W-1:0]  if_mem_addr;
  wire                   if_rsp_valid;
  wire [MEM_W-1:0]       port_rsp_rdata;

  hwgen_sram #(
    .WIDTH   (INSTR_W),
    .DEPTH   (IMEM_DEPTH),
    .ADDR_W  (IMEM_ADDR_W),
    .INDEX_W (IMEM_ADDR_W)
  ) u_imem (
    .clk_i   (clk_i),
    .we_i    (imem_we),
    .waddr_i (imem_waddr),
    .wdata_i (imem_wdata),
    .re_i    (imem_re),
    .raddr_i (imem_addr),
    .rdata_o (imem_data)
  );

  hwgen_prefetch #(
    .INSTR_W     (INSTR_W),
    .MEM_W       (MEM_W),
    .ADDR_W      (MEM_ADDR_W),
    .IBEATS      (IBEATS),
    .BEAT_W      (IBEAT_W),
    .IMEM_ADDR_W (IMEM_ADDR_W)
  ) u_prefetch (
    .clk_i           (clk_i),
    .{{ c.rst }}     ({{ c.rst }}),
    .start_i         (start_i),
    .base_i          (prog_base_i),
    .fetched_i       (prog_fetched),
    .yield_i         (ld_mem_valid || st_mem_valid),
    .fetching_i      (fetching),
    .written_o       (prog_written),
    .busy_o          (prefetching),
    .mem_req_valid_o (if_mem_valid),
    .mem_req_ready_i (if_mem_ready),
    .mem_req_addr_o  (if_mem_addr),
    .mem_rsp_valid_i (if_rsp_valid),
    .mem_rsp_rdata_i (port_rsp_rdata),
    .imem_we_o       (imem_we),
    .imem_waddr_o    (imem_waddr),
    .imem_wdata_o    (imem_wdata)
  );

  hwgen_fetch #(
    .INSTR_W     (INSTR_W),
    .IMEM_ADDR_W (IMEM_ADDR_W),
    .PC_W        (MEM_ADDR_W)
  ) u_fetch (
    .clk_i         (clk_i),
    .{{ c.rst }}   ({{ c.rst }}),
    .start_i       (start_i),
    .written_i     (prog_written),
    .pc_o          (prog_fetched),
    .imem_re_o     (imem_re),
    .imem_addr_o   (imem_addr),
    .imem_data_i   (imem_data),
    .queue_valid_o (push_valid),
    .queue_ready_i (push_ready),
    .queue_data_o  (push_data),
    .fetching_o    (fetching),
    .illegal_o     (illegal)
  );

  genvar q;
  generate
    for (q = 0; q < 4; q = q + 1) begin : gen_queue
      wire [QUEUE_PTR_W:0] unused_count;
      hwgen_fifo #(
        .WIDTH   (INSTR_W),
        .DEPTH   (QUEUE_DEPTH),
        .PTR_W   (QUEUE_PTR_W),
        .COUNT_W (QUEUE_PTR_W + 1)
      ) u_queue (
        .clk_i       (clk_i),
        .{{ c.rst }} ({{ c.rst }}),
        .in_valid_i  (push_valid[q]),
        .in_ready_o  (push_ready[q]),
        .in_data_i   (push_data),
        .out_valid_o (queue_valid[q]),
        .out_ready_i (head_pop[q]),
        .out_data_o  (head_instr[q*INSTR_W +: INSTR_W]),
        .count_o     (unused_count)
      );
    end
  endgenerate

  // ---------------------------------------------------------------------------------------
  // Semaphores: each is released by its producer queue and acquired by its consumer queue.
  // ---------------------------------------------------------------------------------------
  wire [NUM_SEM-1:0] sem_available;
  wire [NUM_SEM-1:0] load_acquire;
  wire [NUM_SEM-1:0] load_release;
  wire [NUM_SEM-1:0] compute_acquire;
  wire [NUM_SEM-1:0] compute_release;
  wire [NUM_SEM-1:0] vector_acquire;
  wire [NUM_SEM-1:0] vector_release;
  wire [NUM_SEM-1:0] store_acquire;
  wire [NUM_SEM-1:0] store_release;

  wire [NUM_SEM-1:0] sem_release = load_release | compute_release | vector_release | store_release;
  wire [NUM_SEM-1:0] sem_acquire = load_acquire | compute_acquire | vector_acquire | store_acquire;

  genvar s;
  generate
    for (s = 0; s < NUM_SEM; s = s + 1) begin : gen_sem
      hwgen_semaphore #(
        .COUNT_W (SEM_COUNT_W)
      ) u_sem (
        .clk_i       (clk_i),
        .{{ c.rst }} ({{ c.rst }}),
        .clear_i     (start_i),
        .release_i   (sem_release[s]),
        .acquire_i   (sem_acquire[s]),
        .available_o (sem_available[s]),
        .overflow_o  (sem_overflow[s])
      );
    end
  endgenerate

  // ---------------------------------------------------------------------------------------
  // Scratchpads.
  // ---------------------------------------------------------------------------------------
  wire                   ld_wr_valid;
  wire                   ld_wr_ready;
  wire [1:0]             ld_wr_buffer;
  wire [SPAD_ADDR_W-1:0] ld_wr_addr;
  wire [ROW_MAX_W-1:0]   ld_wr_data;

  wire                    in_re;
  wire [SPAD_ADDR_W-1:0]  in_addr;
  wire [INPUT_ROW_W-1:0]  in_data;
  wire                    w_re;
  wire [SPAD_ADDR_W-1:0]  w_addr;
  wire [WEIGHT_ROW_W-1:0] w_data;

  wire                   acc_hi_rd_valid;
  wire [SPAD_ADDR_W-1:0] acc_hi_rd_addr;
  wire [ACC_ROW_W-1:0]   acc_hi_rd_data;
  wire                   acc_lo_rd_valid;
  wire [SPAD_ADDR_W-1:0] acc_lo_rd_addr;
  wire                   acc_lo_rd_grant;
  wire [ACC_ROW_W-1:0]   acc_lo_rd_data;
  wire                   acc_hi_wr_valid;
  wire [SPAD_ADDR_W-1:0] acc_hi_wr_addr;
  wire [ACC_ROW_W-1:0]   acc_hi_wr_data;
  wire                   acc_lo_wr_grant;

  wire                    out_hi_rd_valid;
  wire [SPAD_ADDR_W-1:0]  out_hi_rd_addr;
  wire [OUTPUT_ROW_W-1:0] out_hi_rd_data;
  wire                    out_lo_rd_valid;
  wire [SPAD_ADDR_W-1:0]  out_lo_rd_addr;
  wire                    out_lo_rd_grant;
  wire [OUTPUT_ROW_W-1:0] out_lo_rd_data;
  wire                    out_hi_wr_valid;
  wire [SPAD_ADDR_W-1:0]  out_hi_wr_addr;
  wire [OUTPUT_ROW_W-1:0] out_hi_wr_data;
  wire                    out_lo_wr_grant;

  // The vector unit's rows: to the output buffer, or (to_input) to the input buffer, where
  // they take the write port before the load unit (which waits a cycle).
  wire                    vec_wr_valid;
  wire [SPAD_ADDR_W-1:0]  vec_wr_addr;
  wire [OUTPUT_ROW_W-1:0] vec_wr_data;
  wire                    vec_wr_input;
  wire                    vec_to_input;
  wire [INPUT_ROW_W-1:0]  vec_input_row;

  generate
    if (INPUT_ROW_W == OUTPUT_ROW_W) begin : gen_vec_to_input
      assign vec_to_input  = vec_wr_valid && vec_wr_input;
      assign vec_input_row = vec_wr_data;
    end else begin : gen_no_vec_to_input
      // Rows of different widths cannot be passed on (the compiler never asks).
      wire unused_vec_wr_input;
      assign unused_vec_wr_input = vec_wr_input;
      assign vec_to_input  = 1'b0;
      assign vec_input_row = {INPUT_ROW_W{1'b0}};
    end
  endgenerate

  assign out_hi_wr_valid = vec_wr_valid && !vec_to_input;
  assign out_hi_wr_addr  = vec_wr_addr;
  assign out_hi_wr_data  = vec_wr_data;

  wire ld_to_input  = ld_wr_valid && (ld_wr_buffer == `HWGEN_BUFFER_INPUT) && !vec_to_input;
  wire ld_to_weight = ld_wr_valid && (ld_wr_buffer == `HWGEN_BUFFER_WEIGHT);
  wire ld_to_acc    = ld_wr_valid && (ld_wr_buffer == `HWGEN_BUFFER_ACCUMULATOR);
  wire ld_to_output = ld_wr_valid && (ld_wr_buffer == `HWGEN_BUFFER_OUTPUT);

  assign ld_wr_ready = ld_to_input || ld_to_weight || acc_lo_wr_grant || out_lo_wr_grant;

  hwgen_sram #(
    .WIDTH   (INPUT_ROW_W),
    .DEPTH   (INPUT_DEPTH),
    .ADDR_W  (SPAD_ADDR_W),
    .INDEX_W ($clog2(INPUT_DEPTH))
  ) u_input_buffer (
    .clk_i   (clk_i),
    .we_i    (ld_to_input || vec_to_input),
    .waddr_i (vec_to_input ? vec_wr_addr : ld_wr_addr),
    .wdata_i (vec_to_input ? vec_input_row : ld_wr_data[INPUT_ROW_W-1:0]),
    .re_i    (in_re),
    .raddr_i (in_addr),
    .rdata_o (in_data)
  );

  hwgen_sram #(
    .WIDTH   (WEIGHT_ROW_W),
    .DEPTH   (WEIGHT_DEPTH),
    .ADDR_W  (SPAD_ADDR_W),
    .INDEX_W ($clog2(WEIGHT_DEPTH))
  ) u_weight_buffer (
    .clk_i   (clk_i),
    .we_i    (ld_to_weight),
    .waddr_i (ld_wr_addr),
    .wdata_i (ld_wr_data[WEIGHT_ROW_W-1:0]),
    .re_i    (w_re),
    .raddr_i (w_addr),
    .rdata_o (w_data)
  );

  hwgen_shared_buffer #(
    .WIDTH   (ACC_ROW_W),
    .DEPTH   (ACC_DEPTH),
    .INDEX_W ($clog2(ACC_DEPTH)),
    .BANKS   (ACC_BANKS),
    .ADDR_W  (SPAD_ADDR_W)
  ) u_acc_buffer (
    .clk_i         (clk_i),
    .{{ c.rst }}   ({{ c.rst }}),
    .hi_rd_valid_i (acc_hi_rd_valid),
    .hi_rd_addr_i  (acc_hi_rd_addr),
    .hi_rd_data_o  (acc_hi_rd_data),
    .lo_rd_valid_i (acc_lo_rd_valid),
    .lo_rd_addr_i  (acc_lo_rd_addr),
    .lo_rd_grant_o (acc_lo_rd_grant),
    .lo_rd_data_o  (acc_lo_rd_data),
    .hi_wr_valid_i (acc_hi_wr_valid),
    .hi_wr_addr_i  (acc_hi_wr_addr),
    .hi_wr_data_i  (acc_hi_wr_data),
    .lo_wr_valid_i (ld_to_acc),
    .lo_wr_addr_i  (ld_wr_addr),
    .lo_wr_data_i  (ld_wr_data[ACC_ROW_W-1:0]),
    .lo_wr_grant_o (acc_lo_wr_grant)
  );

  // The output buffer is two banks (its halves), so the store unit reads one while the
  // vector unit reads and writes the other.
  hwgen_shared_buffer #(
    .WIDTH   (OUTPUT_ROW_W),
    .DEPTH   (OUTPUT_DEPTH / OUT_BANKS),
    .INDEX_W ($clog2(OUTPUT_DEPTH / OUT_BANKS)),
    .BANKS   (OUT_BANKS),
    .ADDR_W  (SPAD_ADDR_W)
  ) u_output_buffer (
    .clk_i         (clk_i),
    .{{ c.rst }}   ({{ c.rst }}),
    .hi_rd_valid_i (out_hi_rd_valid),
    .hi_rd_addr_i  (out_hi_rd_addr),
    .hi_rd_data_o  (out_hi_rd_data),
    .lo_rd_valid_i (out_lo_rd_valid),
    .lo_rd_addr_i  (out_lo_rd_addr),
    .lo_rd_grant_o (out_lo_rd_grant),
    .lo_rd_data_o  (out_lo_rd_data),
    .hi_wr_valid_i (out_hi_wr_valid),
    .hi_wr_addr_i  (out_hi_wr_addr),
    .hi_wr_data_i  (out_hi_wr_data),
    .lo_wr_valid_i (ld_to_output),
    .lo_wr_addr_i  (ld_wr_addr),
    .lo_wr_data_i  (ld_wr_data[OUTPUT_ROW_W-1:0]),
    .lo_wr_grant_o (out_lo_wr_grant)
  );

{%- if c.handoff %}

  // The hand-off buffer: written by the unit feeding this one, read by the load unit, both
  // at beat addresses modulo HANDOFF_DEPTH (a ring the compiler sizes the hand-offs for).
  wire                  ho_re;
  wire [MEM_ADDR_W-1:0] ho_raddr;
  wire [MEM_W-1:0]      ho_rdata;
  generate
    if (HANDOFF_DEPTH > 0) begin : gen_handoff
      hwgen_sram #(
        .WIDTH   (MEM_W),
        .DEPTH   (HANDOFF_DEPTH),
        .ADDR_W  (MEM_ADDR_W),
        .INDEX_W ($clog2(HANDOFF_DEPTH))
      ) u_handoff_buffer (
        .clk_i   (clk_i),
        .we_i    (handoff_in_we_i),
        .waddr_i (handoff_in_addr_i),
        .wdata_i (handoff_in_wdata_i),
        .re_i    (ho_re),
        .raddr_i (ho_raddr),
        .rdata_o (ho_rdata)
      );
    end else begin : gen_no_handoff
      // (No buffer: the compiler hands nothing to this engine on chip.)
      assign ho_rdata = {MEM_W{1'b0}};
      wire unused_handoff_in;
      assign unused_handoff_in = ^{handoff_in_we_i, handoff_in_addr_i, handoff_in_wdata_i,
                                   ho_re, ho_raddr};
    end
  endgenerate
{%- endif %}

  // ---------------------------------------------------------------------------------------
  // Executors.
  // ---------------------------------------------------------------------------------------

  hwgen_load_unit #(
    .INSTR_W      (INSTR_W),
    .NUM_SEM      (NUM_SEM),
    .CONSUMED     (`HWGEN_SEM_CONSUMED_BY_LOAD),
    .PRODUCED     (`HWGEN_SEM_PRODUCED_BY_LOAD),
    .MEM_W        (MEM_W),
    .ADDR_W       (MEM_ADDR_W),
    .SPAD_ADDR_W  (SPAD_ADDR_W),
    .BEATS_INPUT  (BEATS_INPUT),
    .IN_LANES     (CPF),
    .INPUT_W      (INPUT_W),
    .INPUT_SIGNED (INPUT_SIGNED),
    .BEATS_WEIGHT (BEATS_WEIGHT),
    .BEATS_ACC    (BEATS_ACC),
    .ACC_LANES    (KPF),
    .ACC_W        (ACC_W),
    .BEATS_OUTPUT (BEATS_OUTPUT),
    .SCALE_BEATS  (SCALE_BEATS),
    .PREC_SCALED  (PREC_SCALED),
    .BEAT_W       (BEAT_W),
    .ROW_MAX_W    (ROW_MAX_W),
    .RSP_DEPTH    (RSP_DEPTH),
    .RSP_PTR_W    (RSP_PTR_W){% if c.rows %},
    .WT_LANES     (KPF),
    .WT_W         (WEIGHT_W),
    .WT_SCALE_ROWS (ROW_BLOCKS > 0 ? W_SCALE_ROWS : 0),
    .WT_SCALE_W    (SCALE_SLOT_W > 0 ? SCALE_SLOT_W : 1),  // (1: no scales, an unused port)
    .WT_FRAC       (ROW_FRAC){% endif %}
  ) u_load (
    .clk_i           (clk_i),
    .{{ c.rst }}     ({{ c.rst }}),
    .head_valid_i    (queue_valid[`HWGEN_QUEUE_LOAD]),
    .head_instr_i    (head_instr[`HWGEN_QUEUE_LOAD*INSTR_W +: INSTR_W]),
    .head_pop_o      (head_pop[`HWGEN_QUEUE_LOAD]),
    .sem_available_i (sem_available),
    .sem_acquire_o   (load_acquire),
    .sem_release_o   (load_release),
    .mem_req_valid_o (ld_mem_valid),
    .mem_req_ready_i (ld_mem_ready),
    .mem_req_addr_o  (ld_mem_addr),
    .mem_rsp_valid_i (ld_rsp_valid),
    .mem_rsp_rdata_i (port_rsp_rdata),
    .stream_valid_i  (stream_in_valid_i),
    .stream_ready_o  (stream_in_ready_o),
    .stream_data_i   (stream_in_data_i),
{%- if c.handoff %}
    .handoff_re_o    (ho_re),
    .handoff_addr_o  (ho_raddr),
    .handoff_rdata_i (ho_rdata),
{%- endif %}
    .wr_valid_o      (ld_wr_valid),
    .wr_ready_i      (ld_wr_ready),
    .wr_buffer_o     (ld_wr_buffer),
    .wr_addr_o       (ld_wr_addr),
    .wr_data_o       (ld_wr_data),
    .busy_o          (exec_busy[`HWGEN_QUEUE_LOAD]),
    .stall_o         (exec_stall[`HWGEN_QUEUE_LOAD])
  );
{%- if c.window %}

  // The compute queue's two executors: the systolic array (mm_) and the window unit (wu_).
  wire                    mm_head_valid;
  wire                    mm_head_pop;
  wire [NUM_SEM-1:0]      mm_acquire;
  wire [NUM_SEM-1:0]      mm_release;
  wire                    mm_in_re;
  wire [SPAD_ADDR_W-1:0]  mm_in_addr;
  wire                    mm_w_re;
  wire [SPAD_ADDR_W-1:0]  mm_w_addr;
  wire                    mm_acc_rd_valid;
  wire [SPAD_ADDR_W-1:0]  mm_acc_rd_addr;
  wire                    mm_acc_wr_valid;
  wire [SPAD_ADDR_W-1:0]  mm_acc_wr_addr;
  wire [ACC_ROW_W-1:0]    mm_acc_wr_data;
  wire                    mm_busy;
  wire                    mm_stall;
  wire                    wu_head_valid;
  wire                    wu_head_pop;
  wire [NUM_SEM-1:0]      wu_acquire;
  wire [NUM_SEM-1:0]      wu_release;
  wire                    wu_in_re;
  wire [SPAD_ADDR_W-1:0]  wu_in_addr;
  wire                    wu_w_re;
  wire [SPAD_ADDR_W-1:0]  wu_w_addr;
  wire                    wu_acc_rd_valid;
  wire [SPAD_ADDR_W-1:0]  wu_acc_rd_addr;
  wire                    wu_acc_wr_valid;
  wire [SPAD_ADDR_W-1:0]  wu_acc_wr_addr;
  wire [ACC_ROW_W-1:0]    wu_acc_wr_data;
  wire                    wu_busy;
  wire                    wu_stall;
{%- endif %}

  hwgen_compute_unit #(
    .INSTR_W       (INSTR_W),
    .NUM_SEM       (NUM_SEM),
    .CONSUMED      (`HWGEN_SEM_CONSUMED_BY_COMPUTE),
    .PRODUCED      (`HWGEN_SEM_PRODUCED_BY_COMPUTE),
    .CPF           (CPF),
    .KPF           (KPF),
    .INPUT_W       (INPUT_W),
    .WEIGHT_W      (WEIGHT_W),
    .PSUM_W        (PSUM_W),
    .COL_W         (COL_W),
    .ACC_W         (ACC_W),
    .INPUT_SIGNED  (INPUT_SIGNED),
    .WEIGHT_SIGNED (WEIGHT_SIGNED),
    .SCALE_SLOT_W  (SCALE_SLOT_W),
    .W_SCALE_ROWS  (W_SCALE_ROWS),
    .PREC_SCALED   (PREC_SCALED),{% if c.rows %}
    .ZERO_POINTS   (ZERO_POINTS),{% endif %}
    .SPAD_ADDR_W   (SPAD_ADDR_W)
  ) u_compute (
    .clk_i           (clk_i),
    .{{ c.rst }}     ({{ c.rst }}),
    .head_valid_i    ({% if c.window %}mm_head_valid{% else %}queue_valid[`HWGEN_QUEUE_COMPUTE]{% endif %}),
    .head_instr_i    (head_instr[`HWGEN_QUEUE_COMPUTE*INSTR_W +: INSTR_W]),
    .head_pop_o      ({% if c.window %}mm_head_pop{% else %}head_pop[`HWGEN_QUEUE_COMPUTE]{% endif %}),
    .sem_available_i (sem_available),
    .sem_acquire_o   ({% if c.window %}mm_acquire{% else %}compute_acquire{% endif %}),
    .sem_release_o   ({% if c.window %}mm_release{% else %}compute_release{% endif %}),
    .in_re_o         ({% if c.window %}mm_in_re{% else %}in_re{% endif %}),
    .in_addr_o       ({% if c.window %}mm_in_addr{% else %}in_addr{% endif %}),
    .in_data_i       (in_data),
    .w_re_o          ({% if c.window %}mm_w_re{% else %}w_re{% endif %}),
    .w_addr_o        ({% if c.window %}mm_w_addr{% else %}w_addr{% endif %}),
    .w_data_i        (w_data),
    .acc_rd_valid_o  ({% if c.window %}mm_acc_rd_valid{% else %}acc_hi_rd_valid{% endif %}),
    .acc_rd_addr_o   ({% if c.window %}mm_acc_rd_addr{% else %}acc_hi_rd_addr{% endif %}),
    .acc_rd_data_i   (acc_hi_rd_data),
    .acc_wr_valid_o  ({% if c.window %}mm_acc_wr_valid{% else %}acc_hi_wr_valid{% endif %}),
    .acc_wr_addr_o   ({% if c.window %}mm_acc_wr_addr{% else %}acc_hi_wr_addr{% endif %}),
    .acc_wr_data_o   ({% if c.window %}mm_acc_wr_data{% else %}acc_hi_wr_data{% endif %}),
    .busy_o          ({% if c.window %}mm_busy{% else %}exec_busy[`HWGEN_QUEUE_COMPUTE]{% endif %}),
    .stall_o         ({% if c.window %}mm_stall{% else %}exec_stall[`HWGEN_QUEUE_COMPUTE]{% endif %}),
    .mac_active_o    (mac_active)
  );
{%- if c.window %}

  // ---------------------------------------------------------------------------------------
  // The window unit shares the compute queue with the array: the queue's head goes to the
  // executor of its opcode. A matmul starts once the window unit is idle. A window
  // instruction starts once the array has stopped reading inputs and will have made its
  // last accumulator access before the window's first one (wu_lead cycles after the window
  // starts), so the two never use a port at once. The array's last access, the write of
  // the last row's result, comes at most CPF + KPF + 1 cycles after its last busy cycle
  // (the last row is read in that cycle at the latest, enters the array the cycle after,
  // leaves it CPF + KPF - 1 cycles later and is written the cycle after). The counter
  // reads ARRAY_DRAIN in the cycle after the last busy one and counts down, so a window
  // starting at S with array_drain_q < wu_lead makes its first access at least
  // ARRAY_DRAIN + 2 = CPF + KPF + 4 cycles after the last busy cycle: after the array's
  // last write, with two cycles to spare.
  // ---------------------------------------------------------------------------------------
  localparam integer           ARRAY_DRAIN = CPF + KPF + 2;
  localparam integer           DRAIN_W     = $clog2(ARRAY_DRAIN + 1);
  localparam [DRAIN_W-1:0]     DRAIN_N     = ARRAY_DRAIN[DRAIN_W-1:0];
  localparam [DRAIN_W-1:0]     DRAIN_ONE   = 1;

  // Cycles until the array's last accumulator access.
  reg  [DRAIN_W-1:0] array_drain_q;
  reg  [DRAIN_W-1:0] array_drain_d;
  always @* begin
    array_drain_d = array_drain_q;
    if (mm_busy) begin
      array_drain_d = DRAIN_N;
    end else if (array_drain_q != {DRAIN_W{1'b0}}) begin
      array_drain_d = array_drain_q - DRAIN_ONE;
    end
  end
  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      array_drain_q <= {DRAIN_W{1'b0}};
    end else begin
      array_drain_q <= array_drain_d;
    end
  end

  wire [INSTR_W-1:0] compute_head  = head_instr[`HWGEN_QUEUE_COMPUTE*INSTR_W +: INSTR_W];
  wire               is_window     = (compute_head[`HWGEN_OPCODE] == `HWGEN_OP_WINDOW);
  wire [15:0]        wu_lead;
  wire               array_clear   = !mm_busy && ({ {(16-DRAIN_W){1'b0}}, array_drain_q} < wu_lead);
  assign mm_head_valid = queue_valid[`HWGEN_QUEUE_COMPUTE] && !is_window && !wu_busy;
  assign wu_head_valid = queue_valid[`HWGEN_QUEUE_COMPUTE] && is_window && array_clear;

  hwgen_window_unit #(
    .INSTR_W       (INSTR_W),
    .NUM_SEM       (NUM_SEM),
    .CONSUMED      (`HWGEN_SEM_CONSUMED_BY_COMPUTE),
    .PRODUCED      (`HWGEN_SEM_PRODUCED_BY_COMPUTE),
    .LANES         (KPF),
    .INPUT_W       (INPUT_W),
    .WEIGHT_W      (WEIGHT_W),
    .ACC_W         (ACC_W),
    .INPUT_SIGNED  (INPUT_SIGNED),
    .WEIGHT_SIGNED (WEIGHT_SIGNED),
    .IN_ROW_W      (INPUT_ROW_W),
    .KERNEL        (KERNEL),
    .LINE          (LINE),
    .SPAD_ADDR_W   (SPAD_ADDR_W)
  ) u_window (
    .clk_i           (clk_i),
    .{{ c.rst }}     ({{ c.rst }}),
    .head_valid_i    (wu_head_valid),
    .head_instr_i    (compute_head),
    .head_pop_o      (wu_head_pop),
    .sem_available_i (sem_available),
    .sem_acquire_o   (wu_acquire),
    .sem_release_o   (wu_release),
    .in_re_o         (wu_in_re),
    .in_addr_o       (wu_in_addr),
    .in_data_i       (in_data),
    .w_re_o          (wu_w_re),
    .w_addr_o        (wu_w_addr),
    .w_data_i        (w_data),
    .acc_rd_valid_o  (wu_acc_rd_valid),
    .acc_rd_addr_o   (wu_acc_rd_addr),
    .acc_rd_data_i   (acc_hi_rd_data),
    .acc_wr_valid_o  (wu_acc_wr_valid),
    .acc_wr_addr_o   (wu_acc_wr_addr),
    .acc_wr_data_o   (wu_acc_wr_data),
    .busy_o          (wu_busy),
    .stall_o         (wu_stall),
    .lead_o          (wu_lead)
  );

  assign head_pop[`HWGEN_QUEUE_COMPUTE]   = mm_head_pop || wu_head_pop;
  assign compute_acquire                  = mm_acquire | wu_acquire;
  assign compute_release                  = mm_release | wu_release;
  assign in_re                            = mm_in_re || wu_in_re;
  assign in_addr                          = wu_in_re ? wu_in_addr : mm_in_addr;
  assign w_re                             = mm_w_re || wu_w_re;
  assign w_addr                           = wu_w_re ? wu_w_addr : mm_w_addr;
  assign acc_hi_rd_valid                  = mm_acc_rd_valid || wu_acc_rd_valid;
  assign acc_hi_rd_addr                   = wu_acc_rd_valid ? wu_acc_rd_addr : mm_acc_rd_addr;
  assign acc_hi_wr_valid                  = mm_acc_wr_valid || wu_acc_wr_valid;
  assign acc_hi_wr_addr                   = wu_acc_wr_valid ? wu_acc_wr_addr : mm_acc_wr_addr;
  assign acc_hi_wr_data                   = wu_acc_wr_valid ? wu_acc_wr_data : mm_acc_wr_data;
  assign exec_busy[`HWGEN_QUEUE_COMPUTE]  = mm_busy || wu_busy;
  assign exec_stall[`HWGEN_QUEUE_COMPUTE] = mm_stall || wu_stall;
{%- endif %}

{%- if c.rows %}

  // ---------------------------------------------------------------------------------------
  // The row unit shares the vector queue with the vector unit: the queue's head goes to the
  // executor of its opcode, once the other one is idle (so the two never use a port at
  // once, and each sees the rows the other wrote).
  // ---------------------------------------------------------------------------------------
  wire [INSTR_W-1:0]      vector_head = head_instr[`HWGEN_QUEUE_VECTOR*INSTR_W +: INSTR_W];
  wire                    is_rows     = (vector_head[`HWGEN_OPCODE] == `HWGEN_OP_ROWS);
  wire                    vu_busy, vu_stall, vu_pop, ru_busy, ru_stall, ru_pop;
  wire [NUM_SEM-1:0]      vu_acquire, vu_release, ru_acquire, ru_release;
  wire                    vu_acc_rd_valid, ru_acc_rd_valid;
  wire [SPAD_ADDR_W-1:0]  vu_acc_rd_addr, ru_acc_rd_addr;
  wire                    vu_out_rd_valid, ru_out_rd_valid;
  wire [SPAD_ADDR_W-1:0]  vu_out_rd_addr, ru_out_rd_addr;
  wire                    vu_wr_valid, ru_wr_valid, vu_wr_input, ru_wr_input;
  wire [SPAD_ADDR_W-1:0]  vu_wr_addr, ru_wr_addr;
  wire [OUTPUT_ROW_W-1:0] vu_wr_data, ru_wr_data;
{%- endif %}

  hwgen_vector_unit #(
    .INSTR_W     (INSTR_W),
    .NUM_SEM     (NUM_SEM),
    .CONSUMED    (`HWGEN_SEM_CONSUMED_BY_VECTOR),
    .PRODUCED    (`HWGEN_SEM_PRODUCED_BY_VECTOR),
    .KPF           (KPF),
    .ACC_W         (ACC_W),
    .OUTPUT_W      (OUTPUT_W),
    .OUTPUT_SIGNED (OUTPUT_SIGNED),
    .SCALE_SLOT_W  (SCALE_SLOT_W),
    .SPAD_ADDR_W   (SPAD_ADDR_W),
    .ENABLE_BIAS (ENABLE_BIAS),
    .ENABLE_RELU (ENABLE_RELU),
    .ENABLE_LEAKY (ENABLE_LEAKY),
    .ENABLE_POOL (ENABLE_POOL),
    .ENABLE_ADD  (ENABLE_ADD)
  ) u_vector (
    .clk_i           (clk_i),
    .{{ c.rst }}     ({{ c.rst }}),
{%- if c.rows %}
    .head_valid_i    (queue_valid[`HWGEN_QUEUE_VECTOR] && !is_rows && !ru_busy),
    .head_instr_i    (vector_head),
    .head_pop_o      (vu_pop),
    .sem_available_i (sem_available),
    .sem_acquire_o   (vu_acquire),
    .sem_release_o   (vu_release),
    .acc_rd_valid_o  (vu_acc_rd_valid),
    .acc_rd_addr_o   (vu_acc_rd_addr),
    .acc_rd_grant_i  (acc_lo_rd_grant),
    .acc_rd_data_i   (acc_lo_rd_data),
    .out_rd_valid_o  (vu_out_rd_valid),
    .out_rd_addr_o   (vu_out_rd_addr),
    .out_rd_data_i   (out_hi_rd_data),
    .out_wr_valid_o  (vu_wr_valid),
    .out_wr_addr_o   (vu_wr_addr),
    .out_wr_data_o   (vu_wr_data),
    .out_wr_input_o  (vu_wr_input),
    .busy_o          (vu_busy),
    .stall_o         (vu_stall)
{%- else %}
    .head_valid_i    (queue_valid[`HWGEN_QUEUE_VECTOR]),
    .head_instr_i    (head_instr[`HWGEN_QUEUE_VECTOR*INSTR_W +: INSTR_W]),
    .head_pop_o      (head_pop[`HWGEN_QUEUE_VECTOR]),
    .sem_available_i (sem_available),
    .sem_acquire_o   (vector_acquire),
    .sem_release_o   (vector_release),
    .acc_rd_valid_o  (acc_lo_rd_valid),
    .acc_rd_addr_o   (acc_lo_rd_addr),
    .acc_rd_grant_i  (acc_lo_rd_grant),
    .acc_rd_data_i   (acc_lo_rd_data),
    .out_rd_valid_o  (out_hi_rd_valid),
    .out_rd_addr_o   (out_hi_rd_addr),
    .out_rd_data_i   (out_hi_rd_data),
    .out_wr_valid_o  (vec_wr_valid),
    .out_wr_addr_o   (vec_wr_addr),
    .out_wr_data_o   (vec_wr_data),
    .out_wr_input_o  (vec_wr_input),
    .busy_o          (exec_busy[`HWGEN_QUEUE_VECTOR]),
    .stall_o         (exec_stall[`HWGEN_QUEUE_VECTOR])
{%- endif %}
  );

{%- if c.rows %}

  hwgen_row_unit #(
    .INSTR_W       (INSTR_W),
    .NUM_SEM       (NUM_SEM),
    .CONSUMED      (`HWGEN_SEM_CONSUMED_BY_VECTOR),
    .PRODUCED      (`HWGEN_SEM_PRODUCED_BY_VECTOR),
    .KPF           (KPF),
    .ACC_W         (ACC_W),
    .OUTPUT_W      (OUTPUT_W),
    .OUTPUT_SIGNED (OUTPUT_SIGNED),
    .SCALE_SLOT_W  (SCALE_SLOT_W),
    .SPAD_ADDR_W   (SPAD_ADDR_W),
    .STATS         (STATS),
    .BLOCKS        (ROW_BLOCKS),
    .FRAC          (ROW_FRAC)
  ) u_rows (
    .clk_i           (clk_i),
    .{{ c.rst }}     ({{ c.rst }}),
    .head_valid_i    (queue_valid[`HWGEN_QUEUE_VECTOR] && is_rows && !vu_busy),
    .head_instr_i    (vector_head),
    .head_pop_o      (ru_pop),
    .sem_available_i (sem_available),
    .sem_acquire_o   (ru_acquire),
    .sem_release_o   (ru_release),
    .acc_rd_valid_o  (ru_acc_rd_valid),
    .acc_rd_addr_o   (ru_acc_rd_addr),
    .acc_rd_grant_i  (acc_lo_rd_grant),
    .acc_rd_data_i   (acc_lo_rd_data),
    .out_rd_valid_o  (ru_out_rd_valid),
    .out_rd_addr_o   (ru_out_rd_addr),
    .out_rd_data_i   (out_hi_rd_data),
    .out_wr_valid_o  (ru_wr_valid),
    .out_wr_addr_o   (ru_wr_addr),
    .out_wr_data_o   (ru_wr_data),
    .out_wr_input_o  (ru_wr_input),
    .busy_o          (ru_busy),
    .stall_o         (ru_stall)
  );

  assign head_pop[`HWGEN_QUEUE_VECTOR]   = vu_pop || ru_pop;
  assign vector_acquire                  = vu_acquire | ru_acquire;
  assign vector_release                  = vu_release | ru_release;
  assign acc_lo_rd_valid                 = vu_acc_rd_valid || ru_acc_rd_valid;
  assign acc_lo_rd_addr                  = ru_acc_rd_valid ? ru_acc_rd_addr : vu_acc_rd_addr;
  assign out_hi_rd_valid                 = vu_out_rd_valid || ru_out_rd_valid;
  assign out_hi_rd_addr                  = ru_out_rd_valid ? ru_out_rd_addr : vu_out_rd_addr;
  assign vec_wr_valid                    = vu_wr_valid || ru_wr_valid;
  assign vec_wr_addr                     = ru_wr_valid ? ru_wr_addr : vu_wr_addr;
  assign vec_wr_data                     = ru_wr_valid ? ru_wr_data : vu_wr_data;
  assign vec_wr_input                    = ru_wr_valid ? ru_wr_input : vu_wr_input;
  assign exec_busy[`HWGEN_QUEUE_VECTOR]  = vu_busy || ru_busy;
  assign exec_stall[`HWGEN_QUEUE_VECTOR] = vu_stall || ru_stall;
{%- endif %}

  hwgen_store_unit #(
    .INSTR_W     (INSTR_W),
    .NUM_SEM     (NUM_SEM),
    .CONSUMED    (`HWGEN_SEM_CONSUMED_BY_STORE),
    .PRODUCED    (`HWGEN_SEM_PRODUCED_BY_STORE),
    .MEM_W       (MEM_W),
    .ADDR_W      (MEM_ADDR_W),
    .SPAD_ADDR_W (SPAD_ADDR_W),
    .BEATS       (BEATS_OUTPUT),
    .SCALE_BEATS (SCALE_BEATS),
    .PREC_SCALED (PREC_SCALED),
    .BEAT_W      (STORE_BEAT_W),
    .ROW_W       (OUTPUT_ROW_W)
  ) u_store (
    .clk_i           (clk_i),
    .{{ c.rst }}     ({{ c.rst }}),
    .head_valid_i    (queue_valid[`HWGEN_QUEUE_STORE]),
    .head_instr_i    (head_instr[`HWGEN_QUEUE_STORE*INSTR_W +: INSTR_W]),
    .head_pop_o      (head_pop[`HWGEN_QUEUE_STORE]),
    .sem_available_i (sem_available),
    .sem_acquire_o   (store_acquire),
    .sem_release_o   (store_release),
    .rd_valid_o      (out_lo_rd_valid),
    .rd_addr_o       (out_lo_rd_addr),
    .rd_grant_i      (out_lo_rd_grant),
    .rd_data_i       (out_lo_rd_data),
    .mem_req_valid_o (st_mem_valid),
    .mem_req_ready_i (st_mem_ready),
    .mem_req_addr_o  (st_mem_addr),
    .mem_req_wdata_o (st_mem_wdata),
    .stream_valid_o  (stream_out_valid_o),
    .stream_ready_i  (stream_out_ready_i),
    .stream_data_o   (stream_out_data_o),
{%- if c.handoff %}
    .handoff_we_o    (handoff_out_we_o),
    .handoff_addr_o  (handoff_out_addr_o),
    .handoff_wdata_o (handoff_out_wdata_o),
{%- endif %}
    .busy_o          (exec_busy[`HWGEN_QUEUE_STORE]),
    .stall_o         (exec_stall[`HWGEN_QUEUE_STORE])
  );

  // Load (port 0), store (port 1) and the instruction prefetch (port 2) share the unit's
  // memory port.
  hwgen_mem_arbiter #(
    .PORTS    (3),
    .PORT_W   (2),
    .ADDR_W   (MEM_ADDR_W),
    .DATA_W   (MEM_W),
    .ID_DEPTH (RSP_DEPTH),
    .ID_PTR_W (RSP_PTR_W)
  ) u_port (
    .clk_i           (clk_i),
    .{{ c.rst }}     ({{ c.rst }}),
    .req_valid_i     ({if_mem_valid, st_mem_valid, ld_mem_valid}),
    .req_ready_o     ({if_mem_ready, st_mem_ready, ld_mem_ready}),
    .req_write_i     (3'b010),
    .req_addr_i      ({if_mem_addr, st_mem_addr, ld_mem_addr}),
    .req_wdata_i     ({ {MEM_W{1'b0}}, st_mem_wdata, {MEM_W{1'b0}} }),
    .rsp_valid_o     ({if_rsp_valid, unused_st_rsp_valid, ld_rsp_valid}),
    .rsp_rdata_o     (port_rsp_rdata),
    .mem_req_valid_o (mem_req_valid_o),
    .mem_req_ready_i (mem_req_ready_i),
    .mem_req_write_o (mem_req_write_o),
    .mem_req_addr_o  (mem_req_addr_o),
    .mem_req_wdata_o (mem_req_wdata_o),
    .mem_rsp_valid_i (mem_rsp_valid_i),
    .mem_rsp_rdata_i (mem_rsp_rdata_i)
  );

  // ---------------------------------------------------------------------------------------
  // Performance counters, cleared by start: busy and stall cycles of each queue (load,
  // compute, vector, store) and cycles in which a vector entered the systolic array.
  // ---------------------------------------------------------------------------------------
  wire [`HWGEN_PERF_COUNTERS-1:0] perf_event = {mac_active,
                                                exec_stall[3], exec_busy[3],
                                                exec_stall[2], exec_busy[2],
                                                exec_stall[1], exec_busy[1],
                                                exec_stall[0], exec_busy[0]};

  genvar k;
  generate
    for (k = 0; k < `HWGEN_PERF_COUNTERS; k = k + 1) begin : gen_perf
      reg [31:0] count_q;
      reg [31:0] count_d;
      always @* begin
        count_d = count_q;
        if (start_i) begin
          count_d = 32'd0;
        end else if (running_q && perf_event[k]) begin
          count_d = count_q + 32'd1;
        end
      end
      always @(posedge clk_i{{ c.rst_edge }}) begin
        if ({{ c.rst_on }}) begin
          count_q <= 32'd0;
        end else begin
          count_q <= count_d;
        end
      end
      assign perf_o[k*32 +: 32] = count_q;
    end
  endgenerate

  // Simulation-only checks (empty under SYNTHESIS): the engine's memory requests and the
  // beats it streams, once offered, stay valid and unchanged until accepted.
  hwgen_hold_check #(
    .WIDTH (1 + MEM_ADDR_W + MEM_W)
  ) u_hold_mem_req (
    .clk_i   (clk_i),
    .{{ c.rst }}  ({{ c.rst }}),
    .valid_i (mem_req_valid_o),
    .ready_i (mem_req_ready_i),
    .data_i  ({mem_req_write_o, mem_req_addr_o, mem_req_wdata_o})
  );
  hwgen_hold_check #(
    .WIDTH (MEM_W)
  ) u_hold_stream_out (
    .clk_i   (clk_i),
    .{{ c.rst }}  ({{ c.rst }}),
    .valid_i (stream_out_valid_o),
    .ready_i (stream_out_ready_i),
    .data_i  (stream_out_data_o)
  );
  hwgen_hold_check #(
    .WIDTH (MEM_W)
  ) u_hold_stream_in (
    .clk_i   (clk_i),
    .{{ c.rst }}  ({{ c.rst }}),
    .valid_i (stream_in_valid_i),
    .ready_i (stream_in_ready_o),
    .data_i  (stream_in_data_i)
  );

endmodule
