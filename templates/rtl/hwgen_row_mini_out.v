{{ c.banner }}
// The row unit's output element, FP8 or BF16: the FP32 value rounded to the format
// (hwgen_fp32_to_mini: nearest even, saturating); the port of hwgen_fp32_quantize, whose
// zero point a float element has none of. Combinational.
module hwgen_row_mini_out #(
  parameter integer OUT_W      = 8,
  parameter integer OUT_SIGNED = 1,
  parameter integer ZP_W       = 16
) (
  input  wire [31:0]      value_i,
  input  wire [ZP_W-1:0]  zero_point_i,
  output wire [OUT_W-1:0] code_o
);

  hwgen_fp32_to_mini u_code (.value_i(value_i), .code_o(code_o));

  wire unused;
  assign unused = ^{zero_point_i, OUT_SIGNED[0]};

endmodule
