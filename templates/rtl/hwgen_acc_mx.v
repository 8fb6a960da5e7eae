{{ c.banner }}
// Column accumulation, MX family: the exact block sum is dequantized with the two E8M0
// scales (hwgen_mx_dequant) and added in FP32.
{% include "rtl/include/acc_doc.v" %}
module hwgen_acc_mx #(
  parameter integer PSUM_W  = 21,
  parameter integer ACC_W   = 32,
  parameter integer SCALE_W = 8,
  parameter integer PREC_W  = 1,
  parameter integer MX_FRAC = {{ c.mx_frac }}
) (
{% include "rtl/include/acc_ports.v" %}

{% include "rtl/include/acc_stage.v" %}

  wire [ACC_W-1:0] fp_sum;

  hwgen_mx_dequant #(
    .PSUM_W (PSUM_W),
    .FRAC   (MX_FRAC)
  ) u_dequant (
    .psum_i    (psum_i),
    .scale_a_i (scale_a_i),
    .scale_b_i (scale_b_i),
    .value_o   (value_d)
  );

  hwgen_fp32_add u_add (
    .a_i   (old_i),
    .b_i   (value_q),
    .sum_o (fp_sum)
  );

  assign sum_o = accumulate_q ? fp_sum : value_q;

  // There is one precision.
  wire unused_prec;
  assign unused_prec = ^prec_q;

endmodule
