{{ c.banner }}
// Exact product of two decoded (unpacked) float-like operands as FP32, under the FP32
// contract (README, "Number formats"). An unpacked operand is the bus
//   {nan, inf, zero, sign, exp, sig}
// standing for (-1)^sign * sig * 2^exp, with USIG_W significand bits (not necessarily
// normalized) and a two's-complement exponent of UEXP_W bits; every format has its decoder
// (hwgen_unpack_mini, hwgen_unpack_posit). The significand product has at most 24 bits, so
// it is exact in FP32; the only rounding is the contract's range handling: below the normal
// range a zero of the product's sign (flush), above it infinity. A NaN operand or infinity
// x zero gives the canonical quiet NaN; a zero operand gives a zero of the product's sign.
// Combinational.
module hwgen_fp_mul #(
  parameter integer USIG_W = 4,
  parameter integer UEXP_W = 10
) (
  input  wire [UEXP_W+USIG_W+3:0] a_i,
  input  wire [UEXP_W+USIG_W+3:0] b_i,
  output reg  [31:0]              product_o
);

  localparam integer     PROD_W        = 2 * USIG_W;        // exact product of two significands
  localparam integer     POS_W         = 5;                 // leading-one position, 0 .. PROD_W-1
  localparam integer     SUM_W         = 12;                // exponent arithmetic, two's complement
  localparam integer     FP32_BIAS_INT = 127;
  localparam [SUM_W-1:0] FP32_BIAS     = FP32_BIAS_INT[SUM_W-1:0];
  localparam [SUM_W-1:0] EXP_INF       = 12'd255;
  localparam [31:0]      QNAN          = 32'h7fc0_0000;

  wire [USIG_W-1:0] a_sig  = a_i[USIG_W-1:0];
  wire [USIG_W-1:0] b_sig  = b_i[USIG_W-1:0];
  wire [UEXP_W-1:0] a_exp  = a_i[USIG_W +: UEXP_W];
  wire [UEXP_W-1:0] b_exp  = b_i[USIG_W +: UEXP_W];
  wire              a_sign = a_i[USIG_W+UEXP_W];
  wire              b_sign = b_i[USIG_W+UEXP_W];
  wire              a_zero = a_i[USIG_W+UEXP_W+1];
  wire              b_zero = b_i[USIG_W+UEXP_W+1];
  wire              a_inf  = a_i[USIG_W+UEXP_W+2];
  wire              b_inf  = b_i[USIG_W+UEXP_W+2];
  wire              a_nan  = a_i[USIG_W+UEXP_W+3];
  wire              b_nan  = b_i[USIG_W+UEXP_W+3];
  wire              sign   = a_sign ^ b_sign;
  wire [PROD_W-1:0] sig    = a_sig * b_sig;

  function [POS_W-1:0] leading_one;
    input [PROD_W-1:0] value;
    integer i;
    begin
      leading_one = {POS_W{1'b0}};
      for (i = 0; i < PROD_W; i = i + 1) begin
        if (value[i]) begin
          leading_one = i[POS_W-1:0];
        end
      end
    end
  endfunction

  localparam integer     TOP_INT = PROD_W - 1;
  localparam [POS_W-1:0] TOP     = TOP_INT[POS_W-1:0];
  wire [POS_W-1:0]  position = leading_one(sig);
  wire [PROD_W-1:0] aligned  = sig << (TOP - position);
  // Biased FP32 exponent = position + exp_a + exp_b + 127.
  wire [SUM_W-1:0]  biased   = { {(SUM_W-POS_W){1'b0}}, position}
                               + { {(SUM_W-UEXP_W){a_exp[UEXP_W-1]}}, a_exp}
                               + { {(SUM_W-UEXP_W){b_exp[UEXP_W-1]}}, b_exp} + FP32_BIAS;
  // The bits below the leading one, left-aligned in the 23-bit fraction.
  wire [22:0]       fraction = {aligned[PROD_W-2:0], {(24-PROD_W){1'b0}}};

  wire unused_bits;
  assign unused_bits = ^{aligned[PROD_W-1], biased[SUM_W-2:8]};

  always @* begin
    if (a_nan || b_nan || (a_inf && b_zero) || (b_inf && a_zero)) begin
      product_o = QNAN;
    end else if (a_inf || b_inf) begin
      product_o = {sign, 8'hff, 23'd0};
    end else if (a_zero || b_zero || sig == {PROD_W{1'b0}}) begin
      product_o = {sign, 31'd0};
    end else if (biased[SUM_W-1] || biased == {SUM_W{1'b0}}) begin
      product_o = {sign, 31'd0};                      // below the normal range: flush
    end else if (biased >= EXP_INF) begin
      product_o = {sign, 8'hff, 23'd0};
    end else begin
      product_o = {sign, biased[7:0], fraction};
    end
  end

endmodule
