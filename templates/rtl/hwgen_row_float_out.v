{{ c.banner }}
// The row unit's output element, FP8, BF16 or posit: the FP32 value converted by the
// Design's encoder ({{ c.leaves.encode }}: the vector unit's conversion, nearest and
// saturating); the port of hwgen_fp32_quantize, whose zero point these elements have none
// of. Combinational.
module hwgen_row_float_out #(
  parameter integer OUT_W      = 8,
  parameter integer OUT_SIGNED = 1,
  parameter integer ZP_W       = 16
) (
  input  wire [31:0]      value_i,
  input  wire [ZP_W-1:0]  zero_point_i,
  output wire [OUT_W-1:0] code_o
);

  {{ c.leaves.encode }} u_code (.value_i(value_i), .code_o(code_o));

  wire unused;
  assign unused = ^{zero_point_i, OUT_SIGNED[0]};

endmodule
