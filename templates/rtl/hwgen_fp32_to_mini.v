{{ c.banner }}
// FP32 to a small floating-point format (FP8 E4M3 or E5M2, BF16), rounding to nearest, ties
// to even (README, "Number formats"): finite values beyond the largest finite code saturate
// to it; infinity saturates too in E4M3 (IEEE = 0, no infinity code) and stays infinity in
// E5M2 and BF16; every NaN becomes the format's positive NaN (the FP32 contract's canonical
// NaN, converted). Values below the format's normal range round into its subnormals. FP32
// subnormal inputs read as zero (the FP32 contract). Combinational.
module hwgen_fp32_to_mini #(
  parameter integer EXP_W = {{ fmt.exp_w }},
  parameter integer MAN_W = {{ fmt.man_w }},
  parameter integer BIAS  = {{ fmt.bias }},
  parameter integer IEEE  = {{ fmt.ieee }}
) (
  input  wire [31:0]          value_i,
  output reg  [EXP_W+MAN_W:0] code_o
);

  localparam integer     W        = 1 + EXP_W + MAN_W;
  localparam integer     DROP     = 23 - MAN_W;            // fraction bits below the target's
  localparam integer     E_W      = 11;                    // target exponent, two's complement
  localparam [EXP_W-1:0] EXP_ONES = {EXP_W{1'b1}};
  localparam [MAN_W-1:0] MAN_ONES = {MAN_W{1'b1}};
  // Largest finite magnitude code; NaN and infinity codes (without sign).
  localparam [W-2:0]     MAX_CODE = (IEEE != 0) ? {EXP_ONES - { {(EXP_W-1){1'b0}}, 1'b1}, MAN_ONES}
                                            : {EXP_ONES, MAN_ONES - { {(MAN_W-1){1'b0}}, 1'b1}};
  localparam [W-2:0]       NAN_CODE    = {EXP_ONES, MAN_ONES};
  localparam [W-2:0]       INF_CODE    = {EXP_ONES, {MAN_W{1'b0}}};
  localparam integer       REBIAS_INT  = BIAS - 127;
  localparam [E_W-1:0]     REBIAS      = REBIAS_INT[E_W-1:0];
  localparam integer       EXP_MAX_INT = (1 << EXP_W) - 1;
  localparam [E_W-1:0]     EXP_LIMIT   = EXP_MAX_INT[E_W-1:0];
  // The significand is shifted right inside SIG_W + GUARD_W bits; a shift of GUARD_W or more
  // leaves less than half the smallest step, so the result rounds to zero (SHIFT_ZERO).
  localparam integer       SIG_W       = 24;
  localparam integer       GUARD_W     = 26;
  localparam integer       WIDE_W      = SIG_W + GUARD_W;
  localparam integer       SHIFT_W     = 6;
  localparam [E_W-1:0]     EXTRA_MAX   = GUARD_W[E_W-1:0];
  localparam [SHIFT_W-1:0] SHIFT_ZERO  = WIDE_W[SHIFT_W-1:0];
  localparam [SHIFT_W-1:0] SHIFT_NORM  = DROP[SHIFT_W-1:0];

  wire             sign     = value_i[31];
  wire [7:0]       exp32    = value_i[30:23];
  wire [SIG_W-1:0] mantissa = {1'b1, value_i[22:0]};
  wire             is_zero  = (exp32 == 8'd0);
  wire             is_inf   = (exp32 == 8'hff) && (value_i[22:0] == 23'd0);
  wire             is_nan   = (exp32 == 8'hff) && (value_i[22:0] != 23'd0);

  // Target biased exponent (two's complement): exp32 - 127 + BIAS.
  wire [E_W-1:0] target_exp = {3'b000, exp32} + REBIAS;
  wire           subnormal  = target_exp[E_W-1] || (target_exp == {E_W{1'b0}});
  // Right shift of the significand: DROP for a normal result, plus 1 - target_exp for a
  // subnormal one.
  wire [E_W-1:0]     sub_extra = { {(E_W-1){1'b0}}, 1'b1} - target_exp;
  wire [SHIFT_W-1:0] shift     = !subnormal ? SHIFT_NORM
                               : (sub_extra > EXTRA_MAX) ? SHIFT_ZERO
                               : SHIFT_NORM + sub_extra[SHIFT_W-1:0];

  // Keep the significand's bits above the shift and round on the bits below it.
  wire [WIDE_W-1:0] wide     = {mantissa, {GUARD_W{1'b0}}} >> shift;
  wire [SIG_W-1:0]  kept     = wide[WIDE_W-1:GUARD_W];
  wire              half     = wide[GUARD_W-1];
  wire              sticky   = |wide[GUARD_W-2:0];
  wire              round_up = half && (sticky || kept[0]);
  // A normal result: exponent field above the fraction bits (the hidden one is replaced by
  // the exponent); a subnormal result: the shifted significand is the code. A carry out of
  // the fraction moves into the exponent field, as the encoding intends.
  wire [E_W+MAN_W-1:0] unrounded = !subnormal ? {target_exp, kept[MAN_W-1:0]}
                                              : { {E_W{1'b0}}, kept[MAN_W-1:0]};
  wire [E_W+MAN_W-1:0] rounded = unrounded + { {(E_W+MAN_W-1){1'b0}}, round_up};
  wire                 too_big = (!subnormal && (target_exp > EXP_LIMIT))
                               || (rounded > { {(E_W-EXP_W){1'b0}}, MAX_CODE});

  wire unused_bits;
  assign unused_bits = ^{kept[SIG_W-1:MAN_W], sub_extra[E_W-1:SHIFT_W]};

  always @* begin
    if (is_nan) begin
      code_o = {1'b0, NAN_CODE};
    end else if (is_inf) begin
      code_o = {sign, (IEEE != 0) ? INF_CODE : MAX_CODE};
    end else if (is_zero) begin
      code_o = {sign, {(W-1){1'b0}}};
    end else if (too_big) begin
      code_o = {sign, MAX_CODE};
    end else begin
      code_o = {sign, rounded[W-2:0]};
    end
  end

endmodule
