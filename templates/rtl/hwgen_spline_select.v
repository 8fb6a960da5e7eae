{{ c.banner }}
// The coefficients of x's segment of a piecewise quadratic: the table's KNOTS knots
// (increasing, FP32) split the line into KNOTS + 1 segments, segment j holding the x with
// exactly j knots at or below x (FP32 order, -0 equal to +0; NaN: segment 0), and the
// table's (a, b, c) of segment j follow the knots (numeric::spline::Spline::words).
// Combinational.
`include "hwgen_isa.vh"
module hwgen_spline_select (
  input  wire [31:0]                    x_i,
  input  wire [32*`HWGEN_SPLINE_USED-1:0] table_i,
  output reg  [31:0]     a_o,
  output reg  [31:0]     b_o,
  output reg  [31:0]     c_o
);

  localparam integer KNOTS = `HWGEN_SPLINE_KNOTS;
  localparam integer SEG_W = $clog2(KNOTS + 1);

  // A flushed value's order as an integer (both zeros equal), for value >= knot.
  function [32:0] key;
    input [31:0] v;
    begin
      if (v[30:23] == 8'd0) begin
        key = {1'b1, 32'd0};
      end else if (v[31]) begin
        key = {1'b0, ~v};
      end else begin
        key = {1'b1, v};
      end
    end
  endfunction

  wire nan = (x_i[30:23] == 8'hff) && (x_i[22:0] != 23'd0);

  integer k;
  reg [SEG_W-1:0] seg;
  always @* begin
    seg = {SEG_W{1'b0} };
    for (k = 0; k < KNOTS; k = k + 1) begin
      if (!nan && key(x_i) >= key(table_i[32*k +: 32])) begin
        seg = seg + 1'b1;
      end
    end
    a_o = table_i[32*(KNOTS + 3*seg)     +: 32];
    b_o = table_i[32*(KNOTS + 3*seg + 1) +: 32];
    c_o = table_i[32*(KNOTS + 3*seg + 2) +: 32];
  end

endmodule
