{{ c.banner }}
// FP32 to an N-bit posit with ES exponent bits (README, "Number formats"): FP32 subnormals
// read as zero (the FP32 contract) and give 0; NaN and infinities give NaR; |x| >= maxpos
// gives maxpos and 0 < |x| <= minpos gives minpos; otherwise the regime, exponent and
// mantissa bits of |x| are written as one bit string after the sign and rounded to N - 1
// bits, to nearest, ties to the string with a zero last bit; a negative x is negated.
// Combinational.
module hwgen_fp32_to_posit #(
  parameter integer N  = {{ fmt.n }},
  parameter integer ES = {{ fmt.es }}
) (
  input  wire [31:0]  value_i,
  output reg  [N-1:0] code_o
);

  localparam integer      BODY_W        = N - 1;
  localparam integer      MAX_K         = N - 2;  // maxpos = 2^(MAX_K * 2^ES)
  localparam integer      E_W           = 10;     // FP32 exponent, two's complement
  localparam integer      MAX_SCALE     = MAX_K << ES;
  localparam integer      MIN_SCALE     = -MAX_SCALE;
  localparam [E_W-1:0]    SCALE_HI      = MAX_SCALE[E_W-1:0];
  localparam [E_W-1:0]    SCALE_LO      = MIN_SCALE[E_W-1:0];
  localparam integer      FP32_BIAS_INT = 127;
  localparam [E_W-1:0]    FP32_BIAS     = FP32_BIAS_INT[E_W-1:0];
  // The string: a two-bit regime seed, the exponent, the 23 mantissa bits, shifted right by
  // the regime's extra length (at most MAX_K - 1) inside STR_W bits, so no bit is lost.
  localparam integer      SEED_W        = 2 + ES + 23;
  localparam integer      STR_W         = SEED_W + MAX_K;
  localparam integer      SHIFT_W       = 4;
  localparam [N-1:0]      NAR           = {1'b1, {(N-1){1'b0}}};
  localparam [BODY_W-1:0] MAXPOS        = {BODY_W{1'b1}};
  localparam [BODY_W-1:0] MINPOS        = { {(BODY_W-1){1'b0}}, 1'b1};

  wire           sign  = value_i[31];
  wire [7:0]     exp32 = value_i[30:23];
  wire [22:0]    man   = value_i[22:0];
  wire [E_W-1:0] scale = {2'b00, exp32} - FP32_BIAS;
  // k = floor(scale / 2^ES) and e = scale mod 2^ES.
  wire [E_W-1:0] k     = $signed(scale) >>> ES;
  wire [E_W-1:0] e     = scale - (k << ES);
  wire           k_neg = k[E_W-1];
  // k >= 0: "10" shifted right by k with ones in front; k < 0: "01" by -k - 1 with zeros.
  wire [SHIFT_W-1:0] amount = k_neg ? (~k[SHIFT_W-1:0]) : k[SHIFT_W-1:0];
  wire [SEED_W-1:0]  seed   = ({ {(SEED_W-2){1'b0}}, ~k_neg, k_neg} << (ES + 23))
                            | ({ {(SEED_W-E_W){1'b0}}, e} << 23)
                            | { {(SEED_W-23){1'b0}}, man};

  localparam integer PAD_W = STR_W - SEED_W;
  wire [STR_W-1:0] placed = {seed, {PAD_W{1'b0}}};
  wire [STR_W-1:0] filled = k_neg ? (placed >> amount)
                                  : ~((~placed) >> amount);
  wire [BODY_W-1:0] kept   = filled[STR_W-1 -: BODY_W];
  wire              guard  = filled[STR_W-1-BODY_W];
  wire              sticky = |filled[STR_W-2-BODY_W:0];
  wire [BODY_W-1:0] body   = kept + { {(BODY_W-1){1'b0}}, guard && (sticky || kept[0])};

  wire unused_k;
  assign unused_k = ^k[E_W-2:SHIFT_W];

  wire              too_big   = !scale[E_W-1] && (scale >= SCALE_HI);
  wire              too_small = scale[E_W-1] && ((scale < SCALE_LO) || (scale == SCALE_LO && man == 23'd0));
  wire [BODY_W-1:0] mag       = too_big ? MAXPOS : too_small ? MINPOS : body;

  always @* begin
    if (exp32 == 8'hff) begin
      code_o = NAR;
    end else if (exp32 == 8'd0) begin
      code_o = {N{1'b0}};
    end else if (sign) begin
      code_o = ~{1'b0, mag} + { {(N-1){1'b0}}, 1'b1};
    end else begin
      code_o = {1'b0, mag};
    end
  end

endmodule
