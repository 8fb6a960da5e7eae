{{ c.banner }}
// Row post-processing, posits (FP8 and BF16 have hwgen_post_mini): each lane takes an FP32 value
// through ReLU (a negative value, -0 or -infinity becomes +0; NaN stays NaN) and the
// format's encoder ({{ c.leaves.encode }}): stage 1 ReLU, stage 2 conversion, stages 3 and 4
// alignment with the other post-processors.
{% include "rtl/include/post_doc.v" %}
module hwgen_post_float #(
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
  reg  [KPF*OUTPUT_W-1:0] c2_q;
  reg  [KPF*OUTPUT_W-1:0] c3_q;
  reg  [KPF*OUTPUT_W-1:0] c4_q;
  reg  [KPF*32-1:0]       v1_d;
  wire [KPF*OUTPUT_W-1:0] c2_d;
  wire [KPF*OUTPUT_W-1:0] c3_d = c2_q;
  wire [KPF*OUTPUT_W-1:0] c4_d = c3_q;

  // Stage 1: ReLU.
  integer i;
  always @* begin
    v1_d = acc_row_i;
    for (i = 0; i < KPF; i = i + 1) begin
      if (relu_i && acc_row_i[i*32+31]
          && !(acc_row_i[i*32+23 +: 8] == 8'hff && acc_row_i[i*32 +: 23] != 23'd0)) begin
        v1_d[i*32 +: 32] = 32'd0;
      end
    end
  end

  // Stage 2: conversion.
  genvar col;
  generate
    for (col = 0; col < KPF; col = col + 1) begin : gen_col
      {{ c.leaves.encode }} u_encode (
        .value_i (v1_q[col*32 +: 32]),
        .code_o  (c2_d[col*OUTPUT_W +: OUTPUT_W])
      );
    end
  endgenerate

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      v1_q <= {(KPF*32){1'b0}};
      c2_q <= {(KPF*OUTPUT_W){1'b0}};
      c3_q <= {(KPF*OUTPUT_W){1'b0}};
      c4_q <= {(KPF*OUTPUT_W){1'b0}};
    end else begin
      v1_q <= v1_d;
      c2_q <= c2_d;
      c3_q <= c3_d;
      c4_q <= c4_d;
    end
  end

  assign row_o = c4_q;

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
