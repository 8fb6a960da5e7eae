{{ c.banner }}
// The row unit's output element, posit: the FP32 value converted as the vector unit
// converts (hwgen_fp32_to_posit: nearest on the bit string, saturating to maxpos and
// minpos, NaN and infinities to NaR); the port of hwgen_fp32_quantize, whose zero point a
// posit has none of. Combinational.
module hwgen_row_posit_out #(
  parameter integer OUT_W      = 8,
  parameter integer OUT_SIGNED = 1,
  parameter integer ZP_W       = 16
) (
  input  wire [31:0]      value_i,
  input  wire [ZP_W-1:0]  zero_point_i,
  output wire [OUT_W-1:0] code_o
);

  hwgen_fp32_to_posit u_code (.value_i(value_i), .code_o(code_o));

  wire unused;
  assign unused = ^{zero_point_i, OUT_SIGNED[0]};

endmodule
