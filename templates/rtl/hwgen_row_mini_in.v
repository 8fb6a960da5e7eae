{{ c.banner }}
// The row unit's operand element as FP32, FP8 or BF16 codes: hwgen_mini_to_fp32 (the
// port of hwgen_row_int_in; a code has no signedness of its own). Combinational.
module hwgen_row_mini_in #(
  parameter integer CODE_W = 8,
  parameter integer SIGNED = 1
) (
  input  wire [CODE_W-1:0] code_i,
  output wire [31:0]       fp_o
);

  hwgen_mini_to_fp32 u_fp (.code_i(code_i), .fp_o(fp_o));

  wire unused_signed;
  assign unused_signed = SIGNED[0];

endmodule
