{{ c.banner }}
// Decoder of a small floating-point code (FP8 E4M3 or E5M2, BF16) into the unpacked operand
// bus of hwgen_fp_mul, {nan, inf, zero, sign, exp, sig}: the value (-1)^sign * sig * 2^exp
// with sig = {hidden bit, mantissa} and exp = (exponent field, 1 for subnormals) - BIAS -
// MAN_W, so subnormal codes are exact. IEEE = 1: the all-ones exponent holds infinity and
// NaNs (E5M2, BF16); IEEE = 0: only S.1..1.1..1 is NaN and the rest of that exponent is
// finite (E4M3 "fn"). Combinational.
module hwgen_unpack_mini #(
  parameter integer EXP_W  = {{ fmt.exp_w }},
  parameter integer MAN_W  = {{ fmt.man_w }},
  parameter integer BIAS   = {{ fmt.bias }},
  parameter integer IEEE   = {{ fmt.ieee }},
  parameter integer USIG_W = MAN_W + 1,
  parameter integer UEXP_W = {{ fmt.uexp_w }}
) (
  input  wire [EXP_W+MAN_W:0]     code_i,
  output wire [UEXP_W+USIG_W+3:0] value_o
);

  localparam [EXP_W-1:0]  EXP_ONES   = {EXP_W{1'b1}};
  localparam [MAN_W-1:0]  MAN_ONES   = {MAN_W{1'b1}};
  // exp = field - BIAS - MAN_W, in UEXP_W bits.
  localparam integer      OFFSET_INT = BIAS + MAN_W;
  localparam [UEXP_W-1:0] OFFSET     = OFFSET_INT[UEXP_W-1:0];

  wire              sign  = code_i[EXP_W+MAN_W];
  wire [EXP_W-1:0]  field = code_i[MAN_W +: EXP_W];
  wire [MAN_W-1:0]  man   = code_i[MAN_W-1:0];
  wire              sub   = (field == {EXP_W{1'b0}});
  wire              nan   = (IEEE != 0) ? (field == EXP_ONES && man != {MAN_W{1'b0}})
                                        : (field == EXP_ONES && man == MAN_ONES);
  wire              inf   = (IEEE != 0) && (field == EXP_ONES) && (man == {MAN_W{1'b0}});
  wire              zero  = sub && (man == {MAN_W{1'b0}});
  wire [EXP_W-1:0]  e     = sub ? { {(EXP_W-1){1'b0}}, 1'b1} : field;
  wire [UEXP_W-1:0] exp   = { {(UEXP_W-EXP_W){1'b0}}, e} - OFFSET;

  assign value_o = {nan, inf, zero, sign, exp, !sub, man};

endmodule
