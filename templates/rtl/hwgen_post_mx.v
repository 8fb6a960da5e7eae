{{ c.banner }}
// Row post-processing, MX family: ReLU and the quantization of the FP32 row to one MX block
// (hwgen_mx_quantize), written as {scale, elements}.
{% include "rtl/include/post_doc.v" %}
module hwgen_post_mx #(
  parameter integer KPF           = 8,
  parameter integer ACC_W         = 32,
  parameter integer OUTPUT_W      = 8,
  parameter integer OUTPUT_SIGNED = 1,
  parameter integer SCALE_W       = 8,
  parameter integer OUT_ROW_W     = KPF * OUTPUT_W + SCALE_W,
  parameter integer MULT_W        = 16,
  parameter integer SHIFT_W       = 6,
  parameter integer ZP_W          = 16,
  parameter integer ADD_WEIGHT_W  = 16,
  parameter integer PREC_W        = 1,
  parameter integer ENABLE_BIAS   = 1,
  parameter integer ENABLE_RELU   = 1,
  parameter integer ENABLE_LEAKY  = 1,
  parameter integer ENABLE_POOL   = 1,
  parameter integer ENABLE_ADD    = 1,
  parameter integer MX_FRAC       = {{ c.mx_frac }}
) (
{% include "rtl/include/post_ports.v" %}

  hwgen_mx_quantize #(
    .KPF      (KPF),
    .OUTPUT_W (OUTPUT_W),
    .FRAC     (MX_FRAC)
  ) u_quantize (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .relu_i      (relu_i),
    .acc_i       (acc_row_i),
    .result_o    (row_o)
  );

  // Bias, requantization, add and pool are integer operations; there is one precision.
  wire unused_controls;
  assign unused_controls = ^{bias_i, add_i, pool_i, mul_i, leaky_i, raw_i, half_even_i,
                             add_weight_i, opnd_weight_i, add_shift_i, opnd_zero_i,
                             add_zero_i, multiplier_i, shift_i, neg_multiplier_i,
                             zero_point_i, clamp_i, clamp_max_i, bias_row_i, operand_row_i,
                             prec_in_i, prec_out_i, fixed_scale_i,
                             OUTPUT_SIGNED[0], ENABLE_BIAS[0], ENABLE_RELU[0],
                             ENABLE_LEAKY[0], ENABLE_POOL[0], ENABLE_ADD[0]};

endmodule
