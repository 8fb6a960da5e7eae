{{ c.banner }}
// p * 2^n exactly for a normal p (numeric::spline::ldexp): below the normal range a zero
// of p's sign, above it infinity; a zero, subnormal, infinite or NaN p is flushed as it
// is. Combinational.
module hwgen_ldexp (
  input  wire [31:0] p_i,
  input  wire [8:0]  n_i,
  output reg  [31:0] y_o
);

  wire [7:0]  exp  = p_i[30:23];
  wire [10:0] sum  = {3'b000, exp} + { {2{n_i[8]} }, n_i};

  always @* begin
    if (exp == 8'd0) begin
      y_o = {p_i[31], 31'd0};
    end else if (exp == 8'hff) begin
      y_o = (p_i[22:0] != 23'd0) ? 32'h7fc0_0000 : p_i;
    end else if (sum[10] || (sum == 11'd0)) begin
      y_o = {p_i[31], 31'd0};
    end else if (sum >= 11'd255) begin
      y_o = {p_i[31], 8'hff, 23'd0};
    end else begin
      y_o = {p_i[31], sum[7:0], p_i[22:0]};
    end
  end

endmodule
