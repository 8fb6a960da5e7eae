{{ c.banner }}
// Row post-processing, integer family: one hwgen_vector_lane per column (bias,
// requantization with leaky ReLU, add, ReLU, ReLU6 clamp, max-pool).
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

  wire [KPF*OUTPUT_W-1:0] lane_row;

{% include "rtl/include/int_lanes.v" %}

  assign row_o = lane_row;

  // One precision, and no block scales.
  wire unused_controls;
  assign unused_controls = ^{prec_in_i, prec_out_i, fixed_scale_i};

endmodule
