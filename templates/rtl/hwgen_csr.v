{{ c.banner }}
// Control and status registers (32-bit words, one-cycle read latency).
{%- for r in regs %}
//   {{ r.addr }}  {{ r.name }}: {{ r.doc }}
{%- endfor %}
module hwgen_csr #(
  parameter integer CSR_ADDR_W    = 12,
  parameter integer NUM_CORES     = 1,
  parameter integer PERF_COUNTERS = 9
) (
  input  wire                                  clk_i,
  input  wire                                  {{ c.rst }},
  input  wire                                  csr_we_i,
  input  wire [CSR_ADDR_W-1:0]                 csr_addr_i,
  input  wire [31:0]                           csr_wdata_i,
  output wire [31:0]                           csr_rdata_o,
  output wire                                  start_o,
  // engine e's program starts at external-memory beat prog_base_o[e*32 +: 32]
  output wire [NUM_CORES*32-1:0]               prog_base_o,
  input  wire [NUM_CORES-1:0]                  core_busy_i,
  input  wire [NUM_CORES-1:0]                  core_error_i,
  input  wire [NUM_CORES*PERF_COUNTERS*32-1:0] perf_i
);

  // The design hash (the manifest's): fixed, so that no instantiation can change what the
  // driver and the testbenches check.
  localparam [63:0] DESIGN_ID = 64'h{{ design_id }};

  localparam [CSR_ADDR_W-1:0] ADDR_ID_LO     = {{ addr_id_lo }};
  localparam [CSR_ADDR_W-1:0] ADDR_ID_HI     = {{ addr_id_hi }};
  localparam [CSR_ADDR_W-1:0] ADDR_CONTROL   = {{ addr_control }};
  localparam [CSR_ADDR_W-1:0] ADDR_STATUS    = {{ addr_status }};
  localparam [CSR_ADDR_W-1:0] ADDR_CYCLES_LO = {{ addr_cycles_lo }};
  localparam [CSR_ADDR_W-1:0] ADDR_CYCLES_HI = {{ addr_cycles_hi }};
  localparam [CSR_ADDR_W-1:0] ADDR_NUM_CORES = {{ addr_num_cores }};
  localparam integer          PERF_BASE      = {{ perf_base }};
  localparam integer          PERF_STRIDE    = {{ perf_stride }};
  localparam integer          PROG_BASE_SLOT = {{ prog_base_slot }};
  localparam [31:0]           NUM_CORES_WORD = NUM_CORES;

  reg        started_q;
  reg        started_d;
  reg        was_busy_q;
  reg        was_busy_d;
  reg [63:0] cycles_q;
  reg [63:0] cycles_d;
  reg [31:0] rdata_q;
  reg [31:0] rdata_d;
  reg [31:0] perf_word;
  integer    core;
  integer    counter;
  reg [NUM_CORES*32-1:0] prog_base_q;
  reg [NUM_CORES*32-1:0] prog_base_d;

  wire [31:0] addr_word = { {(32-CSR_ADDR_W){1'b0}}, csr_addr_i};
  wire start        = csr_we_i && (csr_addr_i == ADDR_CONTROL) && csr_wdata_i[0];
  wire busy         = (core_busy_i != {NUM_CORES{1'b0}});
  wire error        = (core_error_i != {NUM_CORES{1'b0}});
  // done: started, and no core busy (the cycle after start every started core is busy).
  wire done = started_q && was_busy_q && !busy;

  always @* begin
    started_d  = started_q;
    was_busy_d = was_busy_q;
    cycles_d   = cycles_q;
    if (start) begin
      started_d  = 1'b1;
      was_busy_d = 1'b0;
      cycles_d   = 64'd0;
    end else if (started_q && (busy || !was_busy_q)) begin
      was_busy_d = was_busy_q || busy;
      cycles_d   = cycles_q + 64'd1;
    end

    rdata_d = 32'd0;
    case (csr_addr_i)
      ADDR_ID_LO:     rdata_d = DESIGN_ID[31:0];
      ADDR_ID_HI:     rdata_d = DESIGN_ID[63:32];
      ADDR_CONTROL:   rdata_d = 32'd0;
      ADDR_STATUS:    rdata_d = {29'd0, error, done, busy};
      ADDR_CYCLES_LO: rdata_d = cycles_q[31:0];
      ADDR_CYCLES_HI: rdata_d = cycles_q[63:32];
      ADDR_NUM_CORES: rdata_d = NUM_CORES_WORD;
      default:        rdata_d = perf_word;
    endcase
  end

  // Performance counter k of engine e sits at PERF_BASE + e*PERF_STRIDE + k, and engine
  // e's program base (read and write) at PERF_BASE + e*PERF_STRIDE + PROG_BASE_SLOT.
  always @* begin
    perf_word   = 32'd0;
    prog_base_d = prog_base_q;
    for (core = 0; core < NUM_CORES; core = core + 1) begin
      for (counter = 0; counter < PERF_COUNTERS; counter = counter + 1) begin
        if (addr_word == PERF_BASE + core * PERF_STRIDE + counter) begin
          perf_word = perf_i[(core*PERF_COUNTERS + counter)*32 +: 32];
        end
      end
      if (addr_word == PERF_BASE + core * PERF_STRIDE + PROG_BASE_SLOT) begin
        perf_word = prog_base_q[core*32 +: 32];
        if (csr_we_i) begin
          prog_base_d[core*32 +: 32] = csr_wdata_i;
        end
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      started_q  <= 1'b0;
      was_busy_q <= 1'b0;
      cycles_q   <= 64'd0;
      rdata_q    <= 32'd0;
      prog_base_q <= {NUM_CORES*32{1'b0}};
    end else begin
      started_q  <= started_d;
      was_busy_q <= was_busy_d;
      cycles_q   <= cycles_d;
      rdata_q    <= rdata_d;
      prog_base_q <= prog_base_d;
    end
  end

  assign csr_rdata_o = rdata_q;
  assign start_o     = start;
  assign prog_base_o = prog_base_q;

endmodule
