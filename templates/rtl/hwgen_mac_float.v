{{ c.banner }}
// Multiply-add of a processing element, float family (FP8, BF16, posits): both codes are
// decoded by the format's decoder ({{ c.leaves.decode }}), their exact product is formed as
// FP32 (hwgen_fp_mul) and added to the partial sum in FP32 (hwgen_fp32_add), so a column
// sums its rows top to bottom, starting from +0. Combinational.
module hwgen_mac_float #(
  parameter integer INPUT_W       = 8,
  parameter integer WEIGHT_W      = 8,
  parameter integer PSUM_W        = 32,
  parameter integer INPUT_SIGNED  = 0,
  parameter integer WEIGHT_SIGNED = 0,
  parameter integer USIG_W        = {{ c.usig_w }},
  parameter integer UEXP_W        = {{ c.uexp_w }}
) (
  input  wire [INPUT_W-1:0]  act_i,
  input  wire [WEIGHT_W-1:0] weight_i,
  input  wire [PSUM_W-1:0]   psum_i,
  output wire [PSUM_W-1:0]   psum_o
);

  localparam integer U_W = UEXP_W + USIG_W + 4;

  wire [U_W-1:0] act_u;
  wire [U_W-1:0] weight_u;
  wire [31:0]    product;

  {{ c.leaves.decode }} u_decode_act (
    .code_i  (act_i),
    .value_o (act_u)
  );

  {{ c.leaves.decode }} u_decode_weight (
    .code_i  (weight_i),
    .value_o (weight_u)
  );

  hwgen_fp_mul #(
    .USIG_W (USIG_W),
    .UEXP_W (UEXP_W)
  ) u_mul (
    .a_i       (act_u),
    .b_i       (weight_u),
    .product_o (product)
  );

  hwgen_fp32_add u_add (
    .a_i   (psum_i),
    .b_i   (product),
    .sum_o (psum_o)
  );

  // Codes are bit patterns; the element signedness applies to integers only.
  wire unused_signedness;
  assign unused_signedness = ^{INPUT_SIGNED[0], WEIGHT_SIGNED[0]};

endmodule
