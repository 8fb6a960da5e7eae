{{ c.banner }}
// Row post-processing, integer family: one hwgen_vector_lane per column (bias,
// requantization, add, ReLU, ReLU6 clamp, max-pool).
{% include "rtl/include/post_doc.v" %}
module hwgen_post_int #(
  parameter integer KPF           = 8,
  parameter integer ACC_W         = 32,
  parameter integer OUTPUT_W      = 8,
  parameter integer OUTPUT_SIGNED = 1,
  parameter integer OUT_ROW_W     = KPF * OUTPUT_W,
  parameter integer MULT_W        = 16,
  parameter integer SHIFT_W       = 6,
  parameter integer ZP_W          = 16,
  parameter integer SCALE_W       = 8,
  parameter integer PREC_W        = 1,
  parameter integer ENABLE_BIAS   = 1,
  parameter integer ENABLE_RELU   = 1,
  parameter integer ENABLE_POOL   = 1,
  parameter integer ENABLE_ADD    = 1
) (
{% include "rtl/include/post_ports.v" %}

  wire [KPF*OUTPUT_W-1:0] lane_row;

  genvar lane;
  generate
    for (lane = 0; lane < KPF; lane = lane + 1) begin : gen_lane
      hwgen_vector_lane #(
        .ACC_W         (ACC_W),
        .MULT_W        (MULT_W),
        .SHIFT_W       (SHIFT_W),
        .ZP_W          (ZP_W),
        .OUTPUT_W      (OUTPUT_W),
        .OUTPUT_SIGNED (OUTPUT_SIGNED),
        .ENABLE_BIAS   (ENABLE_BIAS),
        .ENABLE_RELU   (ENABLE_RELU),
        .ENABLE_POOL   (ENABLE_POOL),
        .ENABLE_ADD    (ENABLE_ADD)
      ) u_lane (
        .clk_i        (clk_i),
        .{{ c.rst }}  ({{ c.rst }}),
        .bias_i       (bias_i),
        .relu_i       (relu_i),
        .add_i        (add_i),
        .pool_i       (pool_i),
        .multiplier_i (multiplier_i),
        .shift_i      (shift_i),
        .zero_point_i (zero_point_i),
        .clamp_i      (clamp_i),
        .clamp_max_i  (clamp_max_i),
        .bias_value_i (bias_row_i[lane*ACC_W +: ACC_W]),
        .acc_i        (acc_row_i[lane*ACC_W +: ACC_W]),
        .operand_i    (operand_row_i[lane*OUTPUT_W +: OUTPUT_W]),
        .result_o     (lane_row[lane*OUTPUT_W +: OUTPUT_W])
      );
    end
  endgenerate

  assign row_o = lane_row;

  // One precision, and no block scales.
  wire unused_controls;
  assign unused_controls = ^{prec_in_i, prec_out_i, fixed_scale_i};

endmodule
