{{ c.banner }}
// The larger of two FP32 values under the FP32 contract: a subnormal operand reads as a
// zero of its sign, a NaN operand gives the canonical quiet NaN, and of two equal values
// the first unless it is negative (so +0 over -0, and -0 for two -0s). Combinational.
module hwgen_fp32_max (
  input  wire [31:0] a_i,
  input  wire [31:0] b_i,
  output reg  [31:0] max_o
);

  localparam [31:0] QNAN = 32'h7fc0_0000;

  // A subnormal flushed to a zero of its sign.
  function [31:0] flushed;
    input [31:0] v;
    begin
      if (v[30:23] == 8'd0) begin
        flushed = {v[31], 31'd0};
      end else begin
        flushed = v;
      end
    end
  endfunction

  // The order of the values as integers (a non-negative value's bits grow with it, a
  // negative value's shrink), both zeros as +0.
  function [32:0] key;
    input [31:0] v;
    begin
      if (v[30:0] == 31'd0) begin
        key = {1'b1, 32'd0};
      end else if (v[31]) begin
        key = {1'b0, ~v};
      end else begin
        key = {1'b1, v};
      end
    end
  endfunction

  wire [31:0] a     = flushed(a_i);
  wire [31:0] b     = flushed(b_i);
  wire        a_nan = (a[30:23] == 8'hff) && (a[22:0] != 23'd0);
  wire        b_nan = (b[30:23] == 8'hff) && (b[22:0] != 23'd0);

  always @* begin
    if (a_nan || b_nan) begin
      max_o = QNAN;
    end else if ((key(a) > key(b)) || ((key(a) == key(b)) && !a_i[31])) begin
      max_o = a;
    end else begin
      max_o = b;
    end
  end

endmodule
