{{ c.banner }}
// The product of two signed values at its exact width, sign-extended (or, when OUT_W is
// narrower, truncated: the low OUT_W bits, exact modulo 2^OUT_W) to OUT_W bits.
module hwgen_signed_mul #(
  parameter integer A_W   = 9,
  parameter integer B_W   = 14,
  parameter integer OUT_W = 32
) (
  input  wire [A_W-1:0]   a_i,
  input  wire [B_W-1:0]   b_i,
  output wire [OUT_W-1:0] p_o
);

  localparam integer P_W = A_W + B_W;

  wire signed [P_W-1:0] a_ext = $signed({ {B_W{a_i[A_W-1]} }, a_i});
  wire signed [P_W-1:0] b_ext = $signed({ {A_W{b_i[B_W-1]} }, b_i});
  wire signed [P_W-1:0] product = a_ext * b_ext;

  generate
    if (OUT_W > P_W) begin : gen_extend
      assign p_o = { {(OUT_W-P_W){product[P_W-1]} }, product};
    end else begin : gen_truncate
      assign p_o = product[OUT_W-1:0];
      if (OUT_W < P_W) begin : gen_unused
        wire unused_high;
        assign unused_high = ^product[P_W-1:OUT_W];
      end
    end
  endgenerate

endmodule
