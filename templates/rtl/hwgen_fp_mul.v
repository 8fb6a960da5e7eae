{{ c.banner }}
// Product of two small floating-point numbers (FP8 E4M3 or E5M2, BF16) as FP32, under the
// FP32 contract (README, "Number formats"). The significands are at most 8 bits, so their
// product is exact in FP32's 24 bits; the only rounding is the contract's range handling:
// below the normal range a zero of the product's sign (flush), above it infinity. A NaN
// operand or infinity x zero gives the canonical quiet NaN; zero operands give a signed
// zero. Subnormal operands are exact (the formats' subnormals are decoded, not flushed).
// IEEE = 1: the all-ones exponent holds infinity and NaNs (E5M2, BF16); IEEE = 0: only
// S.1..1.1..1 is NaN and the rest of that exponent is finite (E4M3 "fn"). Combinational.
module hwgen_fp_mul #(
  parameter integer EXP_W = 4,
  parameter integer MAN_W = 3,
  parameter integer BIAS  = 7,
  parameter integer IEEE  = 0
) (
  input  wire [EXP_W+MAN_W:0] a_i,
  input  wire [EXP_W+MAN_W:0] b_i,
  output reg  [31:0]          product_o
);

  localparam integer SIG_W  = MAN_W + 1;          // significand with the hidden bit
  localparam integer PROD_W = 2 * SIG_W;          // exact product of two significands
  localparam integer POS_W  = 5;                  // leading-one position, 0 .. PROD_W-1
  localparam integer SUM_W  = 12;                 // exponent arithmetic, two's complement
  // Biased FP32 exponent = position + exp_a + exp_b + OFFSET, where exp_x is the format's
  // exponent field (1 for subnormals) and OFFSET = 127 - 2*BIAS - 2*MAN_W.
  localparam integer OFFSET_INT = 127 - 2 * BIAS - 2 * MAN_W;
  localparam [SUM_W-1:0] OFFSET = OFFSET_INT[SUM_W-1:0];
  localparam [SUM_W-1:0] EXP_INF = 12'd255;
  localparam [EXP_W-1:0] EXP_ONES = {EXP_W{1'b1}};
  localparam [MAN_W-1:0] MAN_ONES = {MAN_W{1'b1}};
  localparam [31:0]      QNAN     = 32'h7fc0_0000;

  wire             a_sign = a_i[EXP_W+MAN_W];
  wire             b_sign = b_i[EXP_W+MAN_W];
  wire [EXP_W-1:0] a_exp  = a_i[MAN_W +: EXP_W];
  wire [EXP_W-1:0] b_exp  = b_i[MAN_W +: EXP_W];
  wire [MAN_W-1:0] a_man  = a_i[MAN_W-1:0];
  wire [MAN_W-1:0] b_man  = b_i[MAN_W-1:0];

  wire a_nan  = (IEEE != 0) ? (a_exp == EXP_ONES && a_man != {MAN_W{1'b0}})
                            : (a_exp == EXP_ONES && a_man == MAN_ONES);
  wire b_nan  = (IEEE != 0) ? (b_exp == EXP_ONES && b_man != {MAN_W{1'b0}})
                            : (b_exp == EXP_ONES && b_man == MAN_ONES);
  wire a_inf  = (IEEE != 0) && (a_exp == EXP_ONES) && (a_man == {MAN_W{1'b0}});
  wire b_inf  = (IEEE != 0) && (b_exp == EXP_ONES) && (b_man == {MAN_W{1'b0}});
  wire a_zero = (a_exp == {EXP_W{1'b0}}) && (a_man == {MAN_W{1'b0}});
  wire b_zero = (b_exp == {EXP_W{1'b0}}) && (b_man == {MAN_W{1'b0}});
  wire sign   = a_sign ^ b_sign;

  // Subnormals: no hidden bit, exponent field read as 1.
  wire [SIG_W-1:0] a_sig = {a_exp != {EXP_W{1'b0}}, a_man};
  wire [SIG_W-1:0] b_sig = {b_exp != {EXP_W{1'b0}}, b_man};
  wire [EXP_W-1:0] a_e   = (a_exp == {EXP_W{1'b0}}) ? { {(EXP_W-1){1'b0}}, 1'b1} : a_exp;
  wire [EXP_W-1:0] b_e   = (b_exp == {EXP_W{1'b0}}) ? { {(EXP_W-1){1'b0}}, 1'b1} : b_exp;
  wire [PROD_W-1:0] sig  = a_sig * b_sig;

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

  localparam integer       TOP_INT = PROD_W - 1;
  localparam [POS_W-1:0]   TOP     = TOP_INT[POS_W-1:0];
  wire [POS_W-1:0]  position = leading_one(sig);
  wire [PROD_W-1:0] aligned  = sig << (TOP - position);
  wire [SUM_W-1:0]  biased   = { {(SUM_W-POS_W){1'b0}}, position}
                               + { {(SUM_W-EXP_W){1'b0}}, a_e}
                               + { {(SUM_W-EXP_W){1'b0}}, b_e} + OFFSET;
  // The bits below the leading one, left-aligned in the 23-bit fraction.
  wire [22:0]       fraction = {aligned[PROD_W-2:0], {(24-PROD_W){1'b0}}};

  wire unused_bits;
  assign unused_bits = ^{aligned[PROD_W-1], biased[SUM_W-2:8]};

  always @* begin
    if (a_nan || b_nan || (a_inf && b_zero) || (b_inf && a_zero)) begin
      product_o = QNAN;
    end else if (a_inf || b_inf) begin
      product_o = {sign, 8'hff, 23'd0};
    end else if (a_zero || b_zero) begin
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
