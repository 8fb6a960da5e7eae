{{ c.banner }}
// FP32 adder under hwgen's FP32 contract (README, "FP32 arithmetic"): IEEE-754 binary32,
// round to nearest, ties to even; a subnormal operand reads as a zero of its sign and a
// subnormal result is flushed to a zero of its sign; overflow gives infinity; every NaN
// result is the canonical quiet NaN. Combinational: the caller registers around it.
//
// The operand of larger magnitude is "big". The small mantissa is aligned to it with three
// extra bits (guard, round, sticky), added or subtracted, normalised and rounded once.
module hwgen_fp32_add (
  input  wire [31:0] a_i,
  input  wire [31:0] b_i,
  output reg  [31:0] sum_o
);

  localparam integer     MANT_W   = 24;               // hidden one + 23 fraction bits
  localparam integer     EXT_W    = MANT_W + 3;       // + guard, round, sticky
  localparam integer     SHIFT_W  = 5;                // holds 0 .. EXT_W
  localparam integer     EXP_W    = 10;               // exponent with headroom, two's complement
  localparam [7:0]       EXP_ONES = 8'hff;
  localparam [31:0]      QNAN     = 32'h7fc0_0000;
  localparam [7:0]       EXT_W_8  = EXT_W[7:0];
  localparam [EXP_W-1:0] EXP_INF  = 10'd255;

  wire       a_sign = a_i[31];
  wire [7:0] a_exp  = a_i[30:23];
  wire       b_sign = b_i[31];
  wire [7:0] b_exp  = b_i[30:23];

  wire a_zero = (a_exp == 8'd0);
  wire b_zero = (b_exp == 8'd0);
  wire a_inf  = (a_exp == EXP_ONES) && (a_i[22:0] == 23'd0);
  wire b_inf  = (b_exp == EXP_ONES) && (b_i[22:0] == 23'd0);
  wire a_nan  = (a_exp == EXP_ONES) && (a_i[22:0] != 23'd0);
  wire b_nan  = (b_exp == EXP_ONES) && (b_i[22:0] != 23'd0);

  // Order by magnitude (exponent, then fraction): exact for normal operands.
  wire        swap       = (b_i[30:0] > a_i[30:0]);
  wire        big_sign   = swap ? b_sign : a_sign;
  wire [7:0]  big_exp    = swap ? b_exp : a_exp;
  wire [22:0] big_frac   = swap ? b_i[22:0] : a_i[22:0];
  wire [7:0]  small_exp  = swap ? a_exp : b_exp;
  wire [22:0] small_frac = swap ? a_i[22:0] : b_i[22:0];
  wire        subtract   = a_sign ^ b_sign;

  wire [7:0]       exp_diff   = big_exp - small_exp;
  wire [EXT_W-1:0] big_mant   = {1'b1, big_frac, 3'b000};
  wire [EXT_W-1:0] small_mant = {1'b1, small_frac, 3'b000};

  // Alignment: bits shifted out of the small mantissa set the sticky bit.
  wire               far           = (exp_diff >= EXT_W_8);
  wire [SHIFT_W-1:0] shift         = exp_diff[SHIFT_W-1:0];
  wire [EXT_W-1:0]   lost_mask     = ~({EXT_W{1'b1}} << shift);
  wire               lost          = |(small_mant & lost_mask);
  wire [EXT_W-1:0]   small_shifted = small_mant >> shift;
  wire [EXT_W-1:0]   small_aligned = far ? { {(EXT_W-1){1'b0}}, 1'b1}
                                         : {small_shifted[EXT_W-1:1], small_shifted[0] | lost};

  // |big| >= |small|, so the difference is never negative.
  wire [EXT_W:0] raw = subtract ? {1'b0, big_mant} - {1'b0, small_aligned}
                                : {1'b0, big_mant} + {1'b0, small_aligned};

  function [SHIFT_W-1:0] leading_zeros;
    input [EXT_W-1:0] value;
    integer i;
    reg     found;
    begin
      leading_zeros = {SHIFT_W{1'b0}};
      found         = 1'b0;
      for (i = EXT_W - 1; i >= 0; i = i - 1) begin
        if (!found) begin
          if (value[i]) begin
            found = 1'b1;
          end else begin
            leading_zeros = leading_zeros + { {(SHIFT_W-1){1'b0}}, 1'b1};
          end
        end
      end
    end
  endfunction

  // Normalise: a carry shifts right by one (keeping the sticky bit), otherwise shift left
  // until the hidden one is at the top. A left shift of more than one only happens when the
  // exponents differ by at most one, where no bit was lost in alignment.
  wire [SHIFT_W-1:0] lz       = leading_zeros(raw[EXT_W-1:0]);
  wire [EXT_W-1:0]   left     = raw[EXT_W-1:0] << lz;
  wire [EXT_W-1:0]   norm     = raw[EXT_W] ? {raw[EXT_W:2], raw[1] | raw[0]} : left;
  wire [EXP_W-1:0]   norm_exp = raw[EXT_W] ? {2'b00, big_exp} + 10'd1
                                           : {2'b00, big_exp} - { {(EXP_W-SHIFT_W){1'b0}}, lz};

  // Round to nearest, ties to even, on guard/round/sticky.
  wire             guard_bit  = norm[2];
  wire             rest_bits  = norm[1] | norm[0];
  wire             round_up   = guard_bit && (rest_bits || norm[3]);
  wire [MANT_W:0]  rounded    = {1'b0, norm[EXT_W-1:3]} + { {MANT_W{1'b0}}, round_up};
  wire [EXP_W-1:0] final_exp  = rounded[MANT_W] ? norm_exp + 10'd1 : norm_exp;
  wire [22:0]      final_frac = rounded[MANT_W] ? rounded[23:1] : rounded[22:0];

  // norm_exp is two's complement: bit EXP_W-1 set means below zero.
  wire underflow = norm_exp[EXP_W-1] || (norm_exp == {EXP_W{1'b0}});
  wire overflow  = !final_exp[EXP_W-1] && (final_exp >= EXP_INF);

  wire unused_bits;
  assign unused_bits = ^{exp_diff[7:SHIFT_W], rounded[0]};

  always @* begin
    if (a_nan || b_nan || (a_inf && b_inf && subtract)) begin
      sum_o = QNAN;
    end else if (a_inf) begin
      sum_o = {a_sign, EXP_ONES, 23'd0};
    end else if (b_inf) begin
      sum_o = {b_sign, EXP_ONES, 23'd0};
    end else if (a_zero && b_zero) begin
      sum_o = {a_sign & b_sign, 31'd0};
    end else if (a_zero) begin
      sum_o = b_i;
    end else if (b_zero) begin
      sum_o = a_i;
    end else if (raw == {(EXT_W+1){1'b0}}) begin
      sum_o = 32'd0;                                  // x + (-x) is +0
    end else if (underflow) begin
      sum_o = {big_sign, 31'd0};                      // flush to zero
    end else if (overflow) begin
      sum_o = {big_sign, EXP_ONES, 23'd0};
    end else begin
      sum_o = {big_sign, final_exp[7:0], final_frac};
    end
  end

endmodule
