{{ c.banner }}
// Row post-processing of a multi-precision integer + MX datapath, selected per
// instruction: precision 0 (prec_in = 0) runs the integer lanes, and with prec_out = 1
// their row is tagged with the scale fixed_scale, which makes it an MX row for the next
// layer; precision 1 (prec_in = 1) reads FP32 rows, quantized to MX blocks
// (hwgen_mx_quantize, prec_out = 1) or rounded to integers at the fixed scale
// (hwgen_fp32_to_int, prec_out = 0) for an integer layer.
{% include "rtl/include/post_doc.v" %}
module hwgen_post_int_mx #(
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

  localparam integer FIXED_DELAY = 4;
  wire [KPF*OUTPUT_W-1:0] lane_row;
  wire [OUT_ROW_W-1:0]    mx_row;
  wire [KPF*OUTPUT_W-1:0] fixed_now;
  wire [KPF*OUTPUT_W-1:0] fixed_row;
  wire [SCALE_W-1:0]      tag;
  // The controls as the row leaves (they are held for the whole instruction).
  wire mx_in  = prec_in_i[0];
  wire mx_out = prec_out_i[0];

{% include "rtl/include/int_lanes.v" %}

  hwgen_mx_quantize #(
    .KPF      (KPF),
    .OUTPUT_W (OUTPUT_W),
    .FRAC     (MX_FRAC)
  ) u_quantize (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .relu_i      (relu_i),
    .acc_i       (acc_row_i),
    .result_o    (mx_row)
  );

  genvar col;
  generate
    for (col = 0; col < KPF; col = col + 1) begin : gen_fixed
      hwgen_fp32_to_int #(
        .OUTPUT_W (OUTPUT_W),
        .FRAC     (MX_FRAC)
      ) u_fixed (
        .value_i  (acc_row_i[col*ACC_W +: ACC_W]),
        .scale_i  (fixed_scale_i),
        .relu_i   (relu_i),
        .result_o (fixed_now[col*OUTPUT_W +: OUTPUT_W])
      );
    end
  endgenerate

  hwgen_delay #(
    .WIDTH (KPF * OUTPUT_W),
    .DEPTH (FIXED_DELAY)
  ) u_fixed_delay (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .data_i      (fixed_now),
    .data_o      (fixed_row)
  );

  assign tag   = mx_out ? fixed_scale_i : {SCALE_W{1'b0}};
  assign row_o = mx_in ? (mx_out ? mx_row : { {SCALE_W{1'b0}}, fixed_row})
                       : {tag, lane_row};

  // The scale of an operand row (add, pool) is not read: integer rows are combined.
  wire unused_operand_scale;
  assign unused_operand_scale = ^operand_row_i[OUT_ROW_W-1:KPF*OUTPUT_W];

endmodule
