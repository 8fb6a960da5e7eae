{{ c.banner }}
// Row post-processing, MX family: each lane's FP32 sum plus one addend (one rounding,
// hwgen_fp32_add, one adder a lane): with add_i the operand element's value (its code as
// FP32 times the operand row's block scale, read from its slot: hwgen_mx_scale), else with
// bias_i the bias row's FP32 word; then ReLU and the quantization of the row to one MX
// block (hwgen_mx_quantize), written as {scale, elements}. (An instruction takes a bias or
// an operand, not both: the interpreter refuses both.) The addition sits before the
// quantizer's first register (none without ENABLE_BIAS and ENABLE_ADD).
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

  wire [SCALE_W-1:0] opnd_scale = operand_row_i[KPF*OUTPUT_W +: SCALE_W];
  wire [KPF*32-1:0]  summed;
  wire               adds   = (ENABLE_ADD != 0) && add_i;
  wire               biased = (ENABLE_BIAS != 0) && bias_i;

  genvar col;
  generate
    for (col = 0; col < KPF; col = col + 1) begin : gen_col
      wire [31:0] acc = acc_row_i[col*ACC_W +: 32];
      wire [31:0] code_fp, opnd, sum;
      hwgen_int_to_fp32 #(.IN_W(OUTPUT_W)) u_code (
        .value_i (operand_row_i[col*OUTPUT_W +: OUTPUT_W]),
        .fp_o    (code_fp)
      );
      hwgen_mx_scale #(.FRAC(MX_FRAC), .SCALE_W(SCALE_W)) u_value (
        .p_i     (code_fp),
        .scale_i (opnd_scale),
        .y_o     (opnd)
      );
      wire [31:0] addend = adds ? opnd : bias_row_i[col*ACC_W +: 32];
      hwgen_fp32_add u_add (
        .a_i   (acc),
        .b_i   (addend),
        .sum_o (sum)
      );
      assign summed[col*32 +: 32] = (adds || biased) ? sum : acc;
    end
  endgenerate

  hwgen_mx_quantize #(
    .KPF      (KPF),
    .OUTPUT_W (OUTPUT_W),
    .FRAC     (MX_FRAC)
  ) u_quantize (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .relu_i      (relu_i),
    .acc_i       (summed),
    .result_o    (row_o)
  );

  // Requantization and pool are integer operations; there is one precision.
  wire unused_controls;
  assign unused_controls = ^{pool_i, mul_i, leaky_i, raw_i, half_even_i,
                             add_weight_i, opnd_weight_i, add_shift_i, opnd_zero_i,
                             add_zero_i, multiplier_i, shift_i, neg_multiplier_i,
                             zero_point_i, clamp_i, clamp_max_i,
                             prec_in_i, prec_out_i, fixed_scale_i,
                             OUTPUT_SIGNED[0], ENABLE_RELU[0], ENABLE_LEAKY[0],
                             ENABLE_POOL[0]};

endmodule
