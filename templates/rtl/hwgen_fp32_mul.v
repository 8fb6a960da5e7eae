{{ c.banner }}
// FP32 multiplier under hwgen's FP32 contract (README, "The row unit"): IEEE-754 binary32
// operands, a subnormal operand read as a zero of its sign; the exact product, when its
// magnitude is below 2^-126, is a zero of its sign, otherwise it is rounded once to
// nearest, ties to even (overflow: infinity); infinity times zero and NaN operands give
// the canonical quiet NaN. Combinational: the caller registers around it.
module hwgen_fp32_mul (
  input  wire [31:0] a_i,
  input  wire [31:0] b_i,
  output reg  [31:0] product_o
);

  localparam integer     PROD_W   = 48;               // exact product of two 24-bit significands
  localparam integer     EXP_W    = 10;               // biased exponent with headroom, two's complement
  localparam [7:0]       EXP_ONES = 8'hff;
  localparam [31:0]      QNAN     = 32'h7fc0_0000;
  localparam [EXP_W-1:0] BIAS     = 10'd127;
  localparam [EXP_W-1:0] EXP_INF  = 10'd255;
  localparam [EXP_W-1:0] EXP_ONE  = 10'd1;

  wire       a_sign = a_i[31];
  wire [7:0] a_exp  = a_i[30:23];
  wire       b_sign = b_i[31];
  wire [7:0] b_exp  = b_i[30:23];
  wire       sign   = a_sign ^ b_sign;

  wire a_zero = (a_exp == 8'd0);
  wire b_zero = (b_exp == 8'd0);
  wire a_inf  = (a_exp == EXP_ONES) && (a_i[22:0] == 23'd0);
  wire b_inf  = (b_exp == EXP_ONES) && (b_i[22:0] == 23'd0);
  wire a_nan  = (a_exp == EXP_ONES) && (a_i[22:0] != 23'd0);
  wire b_nan  = (b_exp == EXP_ONES) && (b_i[22:0] != 23'd0);

  // The exact product of the significands is in [1, 4): a top bit set is one more in the
  // exponent.
  wire [PROD_W-1:0] prod     = {24'd0, 1'b1, a_i[22:0]} * {24'd0, 1'b1, b_i[22:0]};
  wire              carry    = prod[PROD_W-1];
  wire [EXP_W-1:0]  exp_sum  = {2'b00, a_exp} + {2'b00, b_exp} - BIAS;
  wire [EXP_W-1:0]  norm_exp = carry ? exp_sum + EXP_ONE : exp_sum;
  // The 24 significand bits, then guard and sticky.
  wire [23:0]       mant     = carry ? prod[47:24] : prod[46:23];
  wire              guard    = carry ? prod[23] : prod[22];
  wire              sticky   = carry ? (|prod[22:0]) : (|prod[21:0]);
  wire              round_up = guard && (sticky || mant[0]);
  wire [24:0]       rounded  = {1'b0, mant} + {24'd0, round_up};
  wire [EXP_W-1:0]  final_exp = rounded[24] ? norm_exp + EXP_ONE : norm_exp;
  wire [22:0]       final_frac = rounded[24] ? rounded[23:1] : rounded[22:0];

  // The exact product's exponent (two's complement) at or below zero: below 2^-126.
  wire underflow = norm_exp[EXP_W-1] || (norm_exp == {EXP_W{1'b0} });
  wire overflow  = !final_exp[EXP_W-1] && (final_exp >= EXP_INF);

  always @* begin
    if (a_nan || b_nan || (a_inf && b_zero) || (b_inf && a_zero)) begin
      product_o = QNAN;
    end else if (a_inf || b_inf) begin
      product_o = {sign, EXP_ONES, 23'd0};
    end else if (a_zero || b_zero || underflow) begin
      product_o = {sign, 31'd0};
    end else if (overflow) begin
      product_o = {sign, EXP_ONES, 23'd0};
    end else begin
      product_o = {sign, final_exp[7:0], final_frac};
    end
  end

endmodule
