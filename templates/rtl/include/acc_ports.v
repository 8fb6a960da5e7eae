  input  wire               clk_i,
  input  wire               {{ c.rst }},
  input  wire [PSUM_W-1:0]  psum_i,
  input  wire [SCALE_W-1:0] scale_a_i,
  input  wire [SCALE_W-1:0] scale_b_i,
  input  wire [PREC_W-1:0]  prec_i,
  input  wire               accumulate_i,
  input  wire [ACC_W-1:0]   old_i,
  output wire [ACC_W-1:0]   sum_o
);