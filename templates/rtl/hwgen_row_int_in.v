{{ c.banner }}
// The row unit's operand element as FP32, integer elements: the code extended by its
// signedness and converted exactly (to nearest even past 2^24; hwgen_int_to_fp32).
// Combinational. (hwgen_row_mini_in is the same port for FP8 and BF16 codes.)
module hwgen_row_int_in #(
  parameter integer CODE_W = 8,
  parameter integer SIGNED = 1
) (
  input  wire [CODE_W-1:0] code_i,
  output wire [31:0]       fp_o
);

  wire [CODE_W:0] ext = {(SIGNED != 0) && code_i[CODE_W-1], code_i};
  hwgen_int_to_fp32 #(.IN_W(CODE_W + 1)) u_fp (.value_i(ext), .fp_o(fp_o));

endmodule
