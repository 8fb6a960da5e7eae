{{ c.banner }}
// Instruction prefetch: from start_i, reads the program from external memory, instruction
// after instruction from beat base_i (IBEATS beats each, the low bits first), into the
// instruction memory used as a ring of 2^IMEM_ADDR_W entries: instruction k goes to entry
// k mod 2^IMEM_ADDR_W, and is requested only once fetch has taken instruction
// k - 2^IMEM_ADDR_W (fetched_i counts the instructions fetch has taken). It stops
// requesting once the instruction holding `end` has arrived; responses to requests already
// made are still taken (their entries lie past `end`, where fetch never reads). It yields
// the memory port to the load and store units (yield_i) unless fewer than LOW instructions
// are requested ahead of fetch, so a compute-bound program pays almost nothing for it; a
// request once offered stays until accepted. It requests only while fetch runs
// (fetching_i: not after an illegal opcode stopped it), and busy_o holds until every
// response it asked for has arrived, so the engine is not done (and cannot be started
// again) while reads past `end` are in flight.
`include "hwgen_isa.vh"
module hwgen_prefetch #(
  parameter integer INSTR_W     = `HWGEN_INSTR_W,
  parameter integer MEM_W       = 64,
  parameter integer ADDR_W      = 32,
  parameter integer IBEATS      = (INSTR_W + MEM_W - 1) / MEM_W,
  parameter integer BEAT_W      = (IBEATS > 1) ? $clog2(IBEATS) : 1,
  parameter integer IMEM_ADDR_W = 10,
  parameter integer LOW         = {{ c.prefetch_low }}
) (
  input  wire                   clk_i,
  input  wire                   {{ c.rst }},
  input  wire                   start_i,
  input  wire [ADDR_W-1:0]      base_i,
  input  wire [ADDR_W-1:0]      fetched_i,
  input  wire                   yield_i,
  input  wire                   fetching_i,
  output wire [ADDR_W-1:0]      written_o,
  output wire                   busy_o,
  // external memory (reads only)
  output wire                   mem_req_valid_o,
  input  wire                   mem_req_ready_i,
  output wire [ADDR_W-1:0]      mem_req_addr_o,
  input  wire                   mem_rsp_valid_i,
  input  wire [MEM_W-1:0]       mem_rsp_rdata_i,
  // instruction memory write port
  output wire                   imem_we_o,
  output wire [IMEM_ADDR_W-1:0] imem_waddr_o,
  output wire [INSTR_W-1:0]     imem_wdata_o
);

  localparam integer          WORD_W   = IBEATS * MEM_W;
  localparam integer          IBEATS_1 = IBEATS - 1;
  localparam [BEAT_W-1:0]     LAST     = IBEATS_1[BEAT_W-1:0];
  localparam [BEAT_W-1:0]     BEAT_ONE = 1;
  localparam [ADDR_W-1:0]     ONE      = 1;
  localparam integer          RING     = 1 << IMEM_ADDR_W;
  localparam [ADDR_W-1:0]     RING_W   = RING;
  localparam [ADDR_W-1:0]     LOW_W    = LOW;

  reg              active_q;
  reg              active_d;
  reg              offered_q;
  reg              offered_d;
  reg [ADDR_W-1:0] req_addr_q;
  reg [ADDR_W-1:0] req_addr_d;
  reg [ADDR_W-1:0] req_instr_q;
  reg [ADDR_W-1:0] req_instr_d;
  reg [BEAT_W-1:0] req_beat_q;
  reg [BEAT_W-1:0] req_beat_d;
  reg [ADDR_W-1:0] rsp_instr_q;
  reg [ADDR_W-1:0] rsp_instr_d;
  reg [BEAT_W-1:0] rsp_beat_q;
  reg [BEAT_W-1:0] rsp_beat_d;
  reg [WORD_W-1:0] word_q;
  reg [WORD_W-1:0] word_d;

  // The beats so far with this one shifted in on top: after the last beat of an
  // instruction, its beats from the low one up.
  wire [WORD_W-1:0]          word_now;
  generate
    if (IBEATS == 1) begin : gen_one_beat
      assign word_now = mem_rsp_rdata_i;
      wire unused_word = ^word_q;
    end else begin : gen_beats
      assign word_now = {mem_rsp_rdata_i, word_q[WORD_W-1:MEM_W]};
      wire unused_word = ^word_q[MEM_W-1:0];
    end
    if (WORD_W > INSTR_W) begin : gen_pad
      wire unused_pad = ^word_now[WORD_W-1:INSTR_W];
    end
  endgenerate
  wire                       complete = mem_rsp_valid_i && (rsp_beat_q == LAST);
  wire [`HWGEN_OPCODE_W-1:0] opcode   = word_now[`HWGEN_OPCODE];
  // Ring space: instruction req_instr_q may overwrite entry req_instr_q - RING only once
  // fetch has taken it.
  wire                       room     = (req_instr_q - fetched_i) < RING_W;
  wire                       low      = (req_instr_q - fetched_i) < LOW_W;
  wire                       request  = offered_q
                                      || (active_q && fetching_i && room && (low || !yield_i));
  wire                       accepted = request && mem_req_ready_i;

  always @* begin
    active_d    = active_q;
    offered_d   = request && !mem_req_ready_i;
    req_addr_d  = req_addr_q;
    req_instr_d = req_instr_q;
    req_beat_d  = req_beat_q;
    rsp_instr_d = rsp_instr_q;
    rsp_beat_d  = rsp_beat_q;
    word_d      = word_q;
    if (start_i) begin
      active_d    = 1'b1;
      offered_d   = 1'b0;
      req_addr_d  = base_i;
      req_instr_d = {ADDR_W{1'b0}};
      req_beat_d  = {BEAT_W{1'b0}};
      rsp_instr_d = {ADDR_W{1'b0}};
      rsp_beat_d  = {BEAT_W{1'b0}};
    end else begin
      if (accepted) begin
        req_addr_d = req_addr_q + ONE;
        if (req_beat_q == LAST) begin
          req_beat_d  = {BEAT_W{1'b0}};
          req_instr_d = req_instr_q + ONE;
        end else begin
          req_beat_d = req_beat_q + BEAT_ONE;
        end
      end
      if (mem_rsp_valid_i) begin
        // Beats arrive low first: each shifts in from the top.
        word_d = word_now;
        if (complete) begin
          rsp_beat_d  = {BEAT_W{1'b0}};
          rsp_instr_d = rsp_instr_q + ONE;
          if (opcode == `HWGEN_OP_END) begin
            active_d = 1'b0;
          end
        end else begin
          rsp_beat_d = rsp_beat_q + BEAT_ONE;
        end
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      active_q    <= 1'b0;
      offered_q   <= 1'b0;
      req_addr_q  <= {ADDR_W{1'b0}};
      req_instr_q <= {ADDR_W{1'b0}};
      req_beat_q  <= {BEAT_W{1'b0}};
      rsp_instr_q <= {ADDR_W{1'b0}};
      rsp_beat_q  <= {BEAT_W{1'b0}};
      word_q      <= {WORD_W{1'b0}};
    end else begin
      active_q    <= active_d;
      offered_q   <= offered_d;
      req_addr_q  <= req_addr_d;
      req_instr_q <= req_instr_d;
      req_beat_q  <= req_beat_d;
      rsp_instr_q <= rsp_instr_d;
      rsp_beat_q  <= rsp_beat_d;
      word_q      <= word_d;
    end
  end

  assign mem_req_valid_o = request;
  assign mem_req_addr_o  = req_addr_q;
  assign written_o       = rsp_instr_q;
  assign busy_o          = offered_q || (req_instr_q != rsp_instr_q) || (req_beat_q != rsp_beat_q);
  assign imem_we_o       = complete;
  assign imem_waddr_o    = rsp_instr_q[IMEM_ADDR_W-1:0];
  assign imem_wdata_o    = word_now[INSTR_W-1:0];

endmodule
