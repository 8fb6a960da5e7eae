{{ c.banner }}
// A small floating-point code (FP8 E4M3 or E5M2, BF16) to FP32 under the FP32 contract
// (numeric::rows::Elem::value): every finite value of these formats is exact in FP32
// except those below FP32's normal range (BF16's subnormals), which become a zero of their
// sign; infinities stay infinities (IEEE = 1); every NaN becomes the canonical NaN
// 0x7FC0_0000. A subnormal code is normalized by the position of its leading one.
// Combinational.
module hwgen_mini_to_fp32 #(
  parameter integer EXP_W = {{ fmt.exp_w }},
  parameter integer MAN_W = {{ fmt.man_w }},
  parameter integer BIAS  = {{ fmt.bias }},
  parameter integer IEEE  = {{ fmt.ieee }}
) (
  input  wire [EXP_W+MAN_W:0] code_i,
  output reg  [31:0]          fp_o
);

  localparam [EXP_W-1:0] EXP_ONES = {EXP_W{1'b1}};
  localparam [MAN_W-1:0] MAN_ONES = {MAN_W{1'b1}};
  // FP32: 8 exponent bits, 23 fraction bits; the contract's canonical NaN.
  localparam integer     FP32_MAN_W    = 23;
  localparam [7:0]       FP32_EXP_ONES = 8'hff;
  localparam [31:0]      FP32_QNAN     = 32'h7fc0_0000;
  localparam integer     FP32_BIAS     = 127;
  localparam integer     E_W      = 10;                    // FP32 exponent, two's complement
  localparam integer     POS_W    = 5;                     // a bit position of the mantissa
  // The FP32 exponent field of a normal code is field + REBIAS; of a subnormal one, whose
  // leading one is mantissa bit p, p + 1 - MAN_W + REBIAS.
  localparam integer     REBIAS_INT = FP32_BIAS - BIAS;
  localparam [E_W-1:0]   REBIAS     = REBIAS_INT[E_W-1:0];
  localparam [E_W-1:0]   SUB_BASE   = REBIAS + { {(E_W-1){1'b0}}, 1'b1} - MAN_W[E_W-1:0];

  wire             sign  = code_i[EXP_W+MAN_W];
  wire [EXP_W-1:0] field = code_i[MAN_W +: EXP_W];
  wire [MAN_W-1:0] man   = code_i[MAN_W-1:0];
  wire             nan   = (IEEE != 0) ? (field == EXP_ONES && man != {MAN_W{1'b0}})
                                       : (field == EXP_ONES && man == MAN_ONES);
  wire             inf   = (IEEE != 0) && (field == EXP_ONES) && (man == {MAN_W{1'b0}});
  wire             sub   = (field == {EXP_W{1'b0}});

  // The leading one of a subnormal code's mantissa, and the mantissa shifted so that it
  // leaves the top (the hidden bit).
  reg [POS_W-1:0] lead;
  integer i;
  always @* begin
    lead = {POS_W{1'b0}};
    for (i = 0; i < MAN_W; i = i + 1) begin
      if (man[i]) begin
        lead = i[POS_W-1:0];
      end
    end
  end
  wire [MAN_W-1:0] sub_man = man << (MAN_W[POS_W-1:0] - lead);

  wire [E_W-1:0]  exp_normal = { {(E_W-EXP_W){1'b0}}, field} + REBIAS;
  wire [E_W-1:0]  exp_sub    = SUB_BASE + { {(E_W-POS_W){1'b0}}, lead};
  wire [E_W-1:0]  exp32      = sub ? exp_sub : exp_normal;
  wire [MAN_W-1:0] frac      = sub ? sub_man : man;
  // Below FP32's normal range: a zero of the sign (also the zero codes).
  wire            tiny       = (sub && (man == {MAN_W{1'b0}})) || exp32[E_W-1]
                               || (exp32 == {E_W{1'b0}});

  // exp32 is at most 2 * 127 + 1 here: bit 8 only ever matters through the sign bit.
  wire unused_exp;
  assign unused_exp = exp32[8];

  always @* begin
    if (nan) begin
      fp_o = FP32_QNAN;
    end else if (inf) begin
      fp_o = {sign, FP32_EXP_ONES, {FP32_MAN_W{1'b0}}};
    end else if (tiny) begin
      fp_o = {sign, {(31){1'b0}}};
    end else begin
      fp_o = {sign, exp32[7:0], frac, {(FP32_MAN_W-MAN_W){1'b0}}};
    end
  end

endmodule
