{{ c.banner }}
// Round-robin arbiter that merges PORTS request/response memory ports into one. A request
// once offered downstream stays until accepted (the grant is held). Read responses return in
// order; the requester of every accepted read is remembered in a FIFO of ID_DEPTH entries.
module hwgen_mem_arbiter #(
  parameter integer PORTS    = 2,
  parameter integer PORT_W   = 1,
  parameter integer ADDR_W   = 32,
  parameter integer DATA_W   = 64,
  parameter integer ID_DEPTH = 32,
  parameter integer ID_PTR_W = 5
) (
  input  wire                    clk_i,
  input  wire                    {{ c.rst }},
  // requesters
  input  wire [PORTS-1:0]        req_valid_i,
  output wire [PORTS-1:0]        req_ready_o,
  input  wire [PORTS-1:0]        req_write_i,
  input  wire [PORTS*ADDR_W-1:0] req_addr_i,
  input  wire [PORTS*DATA_W-1:0] req_wdata_i,
  output wire [PORTS-1:0]        rsp_valid_o,
  output wire [DATA_W-1:0]       rsp_rdata_o,
  // memory
  output wire                    mem_req_valid_o,
  input  wire                    mem_req_ready_i,
  output wire                    mem_req_write_o,
  output wire [ADDR_W-1:0]       mem_req_addr_o,
  output wire [DATA_W-1:0]       mem_req_wdata_o,
  input  wire                    mem_rsp_valid_i,
  input  wire [DATA_W-1:0]       mem_rsp_rdata_i
);

  localparam [PORT_W-1:0] PORT_ONE  = 1;
  localparam integer      PORTS_M1  = PORTS - 1;
  localparam [PORT_W-1:0] PORT_LAST = PORTS_M1[PORT_W-1:0];

  reg              locked_q;
  reg              locked_d;
  reg [PORT_W-1:0] grant_q;
  reg [PORT_W-1:0] grant_d;
  reg [PORT_W-1:0] next_q;
  reg [PORT_W-1:0] next_d;
  reg [PORT_W-1:0] pick;
  reg              pick_valid;
  reg [PORT_W-1:0] cand;
  integer          i;

  wire              id_in_ready;
  wire [ID_PTR_W:0] unused_id_count;
  wire              id_out_valid;
  wire [PORT_W-1:0] id_out;

  // Round-robin choice starting at next_q.
  always @* begin
    pick       = next_q;
    pick_valid = 1'b0;
    cand       = next_q;
    for (i = 0; i < PORTS; i = i + 1) begin
      if (!pick_valid && req_valid_i[cand]) begin
        pick       = cand;
        pick_valid = 1'b1;
      end
      cand = (cand == PORT_LAST) ? {PORT_W{1'b0}} : cand + PORT_ONE;
    end
  end

  wire [PORT_W-1:0] grant    = locked_q ? grant_q : pick;
  wire              has_req  = locked_q || pick_valid;
  wire              is_write = req_write_i[grant];
  // A read is offered only when the ID FIFO can remember its requester.
  wire can_offer = has_req && (is_write || id_in_ready);
  wire accepted  = can_offer && mem_req_ready_i;

  always @* begin
    locked_d = locked_q;
    grant_d  = grant_q;
    next_d   = next_q;
    if (accepted) begin
      locked_d = 1'b0;
      next_d   = (grant == PORT_LAST) ? {PORT_W{1'b0}} : grant + PORT_ONE;
    end else if (can_offer) begin
      locked_d = 1'b1;
      grant_d  = grant;
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      locked_q <= 1'b0;
      grant_q  <= {PORT_W{1'b0}};
      next_q   <= {PORT_W{1'b0}};
    end else begin
      locked_q <= locked_d;
      grant_q  <= grant_d;
      next_q   <= next_d;
    end
  end

  hwgen_fifo #(
    .WIDTH   (PORT_W),
    .DEPTH   (ID_DEPTH),
    .PTR_W   (ID_PTR_W),
    .COUNT_W (ID_PTR_W + 1)
  ) u_id_fifo (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .in_valid_i  (accepted && !is_write),
    .in_ready_o  (id_in_ready),
    .in_data_i   (grant),
    .out_valid_o (id_out_valid),
    .out_ready_i (mem_rsp_valid_i),
    .out_data_o  (id_out),
    .count_o     (unused_id_count)
  );

  genvar p;
  generate
    for (p = 0; p < PORTS; p = p + 1) begin : gen_port
      localparam [PORT_W-1:0] PORT_ID = p;
      assign req_ready_o[p] = accepted && (grant == PORT_ID);
      assign rsp_valid_o[p] = mem_rsp_valid_i && id_out_valid && (id_out == PORT_ID);
    end
  endgenerate

  assign mem_req_valid_o = can_offer;
  assign mem_req_write_o = is_write;
  assign mem_req_addr_o  = req_addr_i[grant*ADDR_W +: ADDR_W];
  assign mem_req_wdata_o = req_wdata_i[grant*DATA_W +: DATA_W];
  assign rsp_rdata_o     = mem_rsp_rdata_i;

`ifndef SYNTHESIS
  always @(posedge clk_i) begin
    if (mem_rsp_valid_i && !id_out_valid) begin
      $display("ERROR: %m: read response with no outstanding read");
      $stop;
    end
  end
`endif

endmodule
