{{ c.banner }}
// Column accumulation, integer family: the sum of products, added modulo 2^ACC_W.
{% include "rtl/include/acc_doc.v" %}
module hwgen_acc_int #(
  parameter integer PSUM_W  = 32,
  parameter integer ACC_W   = 32,
  parameter integer SCALE_W = 8,
  parameter integer PREC_W  = 1
) (
{% include "rtl/include/acc_ports.v" %}

{% include "rtl/include/acc_stage.v" %}

  assign value_d = psum_i;
  assign sum_o   = accumulate_q ? old_i + value_q : value_q;

  // Integer sums carry no scales and there is one precision.
  wire unused_controls;
  assign unused_controls = ^{scale_a_i, scale_b_i, prec_q};

endmodule
