{{ c.banner }}
// Column accumulation of a multi-precision integer + MX datapath: precision 0 (an integer
// layer) sign-extends the block sum and adds it as an integer; precision 1 (an MX layer)
// dequantizes it (hwgen_mx_dequant) and adds it in FP32.
{% include "rtl/include/acc_doc.v" %}
module hwgen_acc_int_mx #(
  parameter integer PSUM_W  = 21,
  parameter integer ACC_W   = 32,
  parameter integer SCALE_W = 8,
  parameter integer PREC_W  = 1,
  parameter integer MX_FRAC = {{ c.mx_frac }}
) (
{% include "rtl/include/acc_ports.v" %}

{% include "rtl/include/acc_stage.v" %}

  wire [ACC_W-1:0] mx_value;
  // An integer block sum, sign-extended (it is exact in PSUM_W < ACC_W bits).
  wire [ACC_W-1:0] int_value = { {(ACC_W-PSUM_W){psum_i[PSUM_W-1]}}, psum_i};
  wire [ACC_W-1:0] fp_sum;
  wire [ACC_W-1:0] int_sum   = old_i + value_q;

  hwgen_mx_dequant #(
    .PSUM_W (PSUM_W),
    .FRAC   (MX_FRAC)
  ) u_dequant (
    .psum_i    (psum_i),
    .scale_a_i (scale_a_i),
    .scale_b_i (scale_b_i),
    .value_o   (mx_value)
  );

  hwgen_fp32_add u_add (
    .a_i   (old_i),
    .b_i   (value_q),
    .sum_o (fp_sum)
  );

  assign value_d = prec_i[0] ? mx_value : int_value;
  assign sum_o   = !accumulate_q ? value_q : prec_q[0] ? fp_sum : int_sum;

endmodule
