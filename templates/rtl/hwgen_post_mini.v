{{ c.banner }}
// Row post-processing, small floats (FP8, BF16): each lane takes an FP32 value
// plus the bias (bias_i: the bias row's FP32 word; stage 1), with add_i rounded to the
// format and plus the operand (the operand row's code as FP32, hwgen_mini_to_fp32; stage
// 2: the sum of the two tensors as the layers apart compute it), through ReLU (a negative
// value, -0 or -infinity becomes +0; NaN stays NaN; stage 2) and the format's encoder
// ({{ c.leaves.encode }}; stage 3); stage 4 aligns with the other post-processors. Each
// sum is rounded once under the FP32 contract (hwgen_fp32_add).
{% include "rtl/include/post_doc.v" %}
module hwgen_post_mini #(
  parameter integer KPF           = 8,
  parameter integer ACC_W         = 32,
  parameter integer OUTPUT_W      = 8,
  parameter integer OUTPUT_SIGNED = 1,
  parameter integer OUT_ROW_W     = KPF * OUTPUT_W,
  parameter integer MULT_W        = 16,
  parameter integer SHIFT_W       = 6,
  parameter integer ZP_W          = 16,
  parameter integer ADD_WEIGHT_W  = 16,
  parameter integer SCALE_W       = 8,
  parameter integer PREC_W        = 1,
  parameter integer ENABLE_BIAS   = 1,
  parameter integer ENABLE_RELU   = 1,
  parameter integer ENABLE_LEAKY  = 1,
  parameter integer ENABLE_POOL   = 1,
  parameter integer ENABLE_ADD    = 1
) (
{% include "rtl/include/post_ports.v" %}

  reg  [KPF*32-1:0]       v1_q;
  reg  [OUT_ROW_W-1:0]    o1_q;
  reg  [KPF*32-1:0]       v2_q;
  reg  [KPF*OUTPUT_W-1:0] c3_q;
  reg  [KPF*OUTPUT_W-1:0] c4_q;
  wire [KPF*32-1:0]       v1_d;
  wire [OUT_ROW_W-1:0]    o1_d = operand_row_i;
  reg  [KPF*32-1:0]       v2_d;
  wire [KPF*OUTPUT_W-1:0] c3_d;
  wire [KPF*OUTPUT_W-1:0] c4_d = c3_q;
  wire [KPF*32-1:0]       sum2;

  genvar col;
  generate
    for (col = 0; col < KPF; col = col + 1) begin : gen_col
      // Stage 1: plus the bias.
      wire [31:0] biased;
      hwgen_fp32_add u_bias (
        .a_i   (acc_row_i[col*ACC_W +: 32]),
        .b_i   (bias_row_i[col*ACC_W +: 32]),
        .sum_o (biased)
      );
      assign v1_d[col*32 +: 32] = bias_i ? biased : acc_row_i[col*ACC_W +: 32];
      // Stage 2: the value rounded to the format (what the convolution alone would
      // write), plus the operand.
      wire [OUTPUT_W-1:0] own_code;
      wire [31:0]         own, opnd;
      {{ c.leaves.encode }} u_round (
        .value_i (v1_q[col*32 +: 32]),
        .code_o  (own_code)
      );
      hwgen_mini_to_fp32 u_own (
        .code_i (own_code),
        .fp_o   (own)
      );
      hwgen_mini_to_fp32 u_opnd (
        .code_i (o1_q[col*OUTPUT_W +: OUTPUT_W]),
        .fp_o   (opnd)
      );
      hwgen_fp32_add u_add (
        .a_i   (own),
        .b_i   (opnd),
        .sum_o (sum2[col*32 +: 32])
      );
      // Stage 3: conversion.
      {{ c.leaves.encode }} u_encode (
        .value_i (v2_q[col*32 +: 32]),
        .code_o  (c3_d[col*OUTPUT_W +: OUTPUT_W])
      );
    end
  endgenerate

  // Stage 2: ReLU of the sum.
  integer i;
  always @* begin
    v2_d = add_i ? sum2 : v1_q;
    for (i = 0; i < KPF; i = i + 1) begin
      if (relu_i && v2_d[i*32+31]
          && !(v2_d[i*32+23 +: 8] == 8'hff && v2_d[i*32 +: 23] != 23'd0)) begin
        v2_d[i*32 +: 32] = 32'd0;
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      v1_q <= {(KPF*32){1'b0}};
      o1_q <= {OUT_ROW_W{1'b0}};
      v2_q <= {(KPF*32){1'b0}};
      c3_q <= {(KPF*OUTPUT_W){1'b0}};
      c4_q <= {(KPF*OUTPUT_W){1'b0}};
    end else begin
      v1_q <= v1_d;
      o1_q <= o1_d;
      v2_q <= v2_d;
      c3_q <= c3_d;
      c4_q <= c4_d;
    end
  end

  assign row_o = c4_q;

  // Requantization, the weighted add and pool are integer operations; there is one
  // precision.
  wire unused_controls;
  assign unused_controls = ^{pool_i, mul_i, leaky_i, raw_i, half_even_i,
                             add_weight_i, opnd_weight_i, add_shift_i, opnd_zero_i,
                             add_zero_i, multiplier_i, shift_i, neg_multiplier_i,
                             zero_point_i, clamp_i, clamp_max_i,
                             prec_in_i, prec_out_i, fixed_scale_i,
                             OUTPUT_SIGNED[0], ENABLE_BIAS[0], ENABLE_RELU[0],
                             ENABLE_LEAKY[0], ENABLE_POOL[0], ENABLE_ADD[0]};

endmodule
