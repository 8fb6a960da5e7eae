{{ c.banner }}
// Column accumulation, float family (FP8, BF16, posits): FP32 column sums, added in FP32.
{% include "rtl/include/acc_doc.v" %}
module hwgen_acc_float #(
  parameter integer PSUM_W  = 32,
  parameter integer ACC_W   = 32,
  parameter integer SCALE_W = 8,
  parameter integer PREC_W  = 1
) (
{% include "rtl/include/acc_ports.v" %}

{% include "rtl/include/acc_stage.v" %}

  wire [ACC_W-1:0] fp_sum;

  hwgen_fp32_add u_add (
    .a_i   (old_i),
    .b_i   (value_q),
    .sum_o (fp_sum)
  );

  assign value_d = psum_i;
  assign sum_o   = accumulate_q ? fp_sum : value_q;

  // FP32 column sums carry no scales and there is one precision.
  wire unused_controls;
  assign unused_controls = ^{scale_a_i, scale_b_i, prec_q};

endmodule
