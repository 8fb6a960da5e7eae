{{ c.banner }}
// An FP32 value as an output integer: rounded to the nearest integer (ties to even), plus
// the zero point, saturated to the OUT_W-bit output type (signed or not); a NaN gives the
// zero point (saturated). Magnitudes of 2^20 and more saturate whatever the zero point.
// Combinational.
module hwgen_fp32_quantize #(
  parameter integer OUT_W      = 8,
  parameter integer OUT_SIGNED = 1,
  parameter integer ZP_W       = 16
) (
  input  wire [31:0]      value_i,
  input  wire [ZP_W-1:0]  zero_point_i,
  output reg  [OUT_W-1:0] code_o
);

  localparam integer SUM_W = 24;                      // holds +-2^20 plus a ZP_W-bit zero point
  localparam integer BIG_I = 1 << 20;
  localparam [SUM_W-1:0] BIG = BIG_I[SUM_W-1:0];

  wire        sign  = value_i[31];
  wire [7:0]  exp   = value_i[30:23];
  wire [23:0] mant  = {1'b1, value_i[22:0]};
  wire        nan   = (exp == 8'hff) && (value_i[22:0] != 23'd0);
  // The value is at least 2^20 (or infinite): saturated.
  wire        big   = (exp >= 8'd147);
  // Below one half: zero.
  wire        below_half = (exp < 8'd126);
  // For 2^-1 <= |value| < 2^20 the value is mant * 2^(exp - 150): the integer part is
  // mant shifted right by 150 - exp (from 4 to 24), the guard bit the one below it.
  wire [4:0]  shift  = 5'd21 - exp[4:0];              // = 149 - exp, modulo 32
  wire [23:0] int_part = mant >> (shift + 5'd1);
  wire        guard    = mant[shift];
  wire [23:0] below    = mant & ~({24{1'b1} } << shift);
  wire        sticky   = |below;
  wire        up       = guard && (sticky || int_part[0]);
  wire [SUM_W-1:0] magnitude = { {(SUM_W-24){1'b0} }, int_part} + { {(SUM_W-1){1'b0} }, up};

  reg  [SUM_W-1:0] rounded;
  always @* begin
    if (nan || below_half) begin
      rounded = {SUM_W{1'b0} };
    end else if (big) begin
      rounded = sign ? (~BIG + { {(SUM_W-1){1'b0} }, 1'b1}) : BIG;
    end else begin
      rounded = sign ? (~magnitude + { {(SUM_W-1){1'b0} }, 1'b1}) : magnitude;
    end
  end

  wire [SUM_W-1:0] zp  = { {(SUM_W-ZP_W){zero_point_i[ZP_W-1]} }, zero_point_i};
  wire [SUM_W-1:0] sum = rounded + zp;

  // The output type's range, as SUM_W-bit two's complement.
  localparam integer MAX_I = OUT_SIGNED != 0 ? (1 << (OUT_W - 1)) - 1 : (1 << OUT_W) - 1;
  localparam integer MIN_I = OUT_SIGNED != 0 ? -(1 << (OUT_W - 1)) : 0;
  localparam [SUM_W-1:0] MAX_V = MAX_I[SUM_W-1:0];
  localparam [SUM_W-1:0] MIN_V = MIN_I[SUM_W-1:0];

  always @* begin
    if ($signed(sum) > $signed(MAX_V)) begin
      code_o = MAX_V[OUT_W-1:0];
    end else if ($signed(sum) < $signed(MIN_V)) begin
      code_o = MIN_V[OUT_W-1:0];
    end else begin
      code_o = sum[OUT_W-1:0];
    end
  end

endmodule
