{{ c.banner }}
// Elastic valid/ready FIFO of DEPTH entries (a power of two). out_valid_o depends only on
// state, never combinationally on out_ready_i; data stays stable until it is accepted.
module hwgen_fifo #(
  parameter integer WIDTH   = 8,
  parameter integer DEPTH   = 4,
  parameter integer PTR_W   = 2,
  parameter integer COUNT_W = 3
) (
  input  wire               clk_i,
  input  wire               {{ c.rst }},
  input  wire               in_valid_i,
  output wire               in_ready_o,
  input  wire [WIDTH-1:0]   in_data_i,
  output wire               out_valid_o,
  input  wire               out_ready_i,
  output wire [WIDTH-1:0]   out_data_o,
  output wire [COUNT_W-1:0] count_o
);

  localparam [PTR_W-1:0]   PTR_ONE   = 1;
  localparam [COUNT_W-1:0] COUNT_ONE = 1;

  reg [WIDTH-1:0]   storage_q [0:DEPTH-1];
  reg [PTR_W-1:0]   wr_ptr_q;
  reg [PTR_W-1:0]   wr_ptr_d;
  reg [PTR_W-1:0]   rd_ptr_q;
  reg [PTR_W-1:0]   rd_ptr_d;
  reg [COUNT_W-1:0] count_q;
  reg [COUNT_W-1:0] count_d;

  wire push = in_valid_i && in_ready_o;
  wire pop  = out_valid_o && out_ready_i;

  always @* begin
    wr_ptr_d = wr_ptr_q;
    rd_ptr_d = rd_ptr_q;
    count_d  = count_q;
    if (push) begin
      wr_ptr_d = wr_ptr_q + PTR_ONE;
    end
    if (pop) begin
      rd_ptr_d = rd_ptr_q + PTR_ONE;
    end
    if (push && !pop) begin
      count_d = count_q + COUNT_ONE;
    end else if (pop && !push) begin
      count_d = count_q - COUNT_ONE;
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      wr_ptr_q <= {PTR_W{1'b0}};
      rd_ptr_q <= {PTR_W{1'b0}};
      count_q  <= {COUNT_W{1'b0}};
    end else begin
      wr_ptr_q <= wr_ptr_d;
      rd_ptr_q <= rd_ptr_d;
      count_q  <= count_d;
    end
  end

  always @(posedge clk_i) begin
    if (push) begin
      storage_q[wr_ptr_q] <= in_data_i;
    end
  end

  assign in_ready_o  = (count_q != DEPTH[COUNT_W-1:0]);
  assign out_valid_o = (count_q != {COUNT_W{1'b0}});
  assign out_data_o  = storage_q[rd_ptr_q];
  assign count_o     = count_q;

  // Simulation only: the producer keeps data it offers until the FIFO accepts it.
  hwgen_hold_check #(
    .WIDTH (WIDTH)
  ) u_hold_in (
    .clk_i   (clk_i),
    .{{ c.rst }}  ({{ c.rst }}),
    .valid_i (in_valid_i),
    .ready_i (in_ready_o),
    .data_i  (in_data_i)
  );

endmodule
