{{ c.banner }}
// The exponent's split of t = x log2(e) for e^x (numeric::spline::exp): n = floor(t) as an
// integer and as FP32 (floor(-0) = -0), and the class of t: NaN, at least 128 (e^x is
// infinity), below -150 (e^x is 0). For t in [-150, 128), n is in [-150, 127].
// Combinational.
module hwgen_exp_split (
  input  wire [31:0] t_i,
  output reg  [8:0]  n_o,
  output reg  [31:0] n_fp_o,
  output wire        nan_o,
  output wire        big_o,
  output wire        tiny_o
);

  wire        sign = t_i[31];
  wire [7:0]  exp  = t_i[30:23];
  wire [23:0] mant = {1'b1, t_i[22:0]};
  wire        zero = (exp == 8'd0);
  assign nan_o  = (exp == 8'hff) && (t_i[22:0] != 23'd0);
  // |t| >= 128 is exponent 134 or more; t < -150 is beyond 150.
  assign big_o  = !nan_o && !sign && (exp >= 8'd134);
  assign tiny_o = !nan_o && sign && ((exp > 8'd134) || ((exp == 8'd134) && (t_i[22:0] > 23'h160000)));

  // For 1 <= |t| < 256: the integer part is mant >> (150 - exp), the rest the fraction.
  wire [4:0]  shift = 5'd22 - exp[4:0];              // = 150 - exp for exp in [127, 134]
  wire [23:0] whole = mant >> shift;
  wire [23:0] rest  = mant & ~({24{1'b1} } << shift);
  wire [8:0]  mag   = whole[8:0] + {8'd0, sign && (rest != 24'd0)};

  // n as FP32: its magnitude (at most 151) normalised.
  function [31:0] small_fp;
    input       s;
    input [8:0] m;
    integer i;
    reg [3:0] top;
    reg [7:0] norm;
    begin
      top = 4'd0;
      for (i = 0; i < 9; i = i + 1) begin
        if (m[i]) begin
          top = i[3:0];
        end
      end
      // (The leading one shifts out of the eight bits: m is at most 151.)
      norm = m[7:0] << (4'd8 - top);
      if (m == 9'd0) begin
        small_fp = {s, 31'd0};
      end else begin
        small_fp = {s, 8'd127 + {4'd0, top}, norm, 15'd0};
      end
    end
  endfunction

  always @* begin
    if (zero) begin
      n_o    = 9'd0;
      n_fp_o = {sign, 31'd0};
    end else if (exp < 8'd127) begin
      // |t| < 1: floor is 0 for t > 0, -1 for t < 0.
      n_o    = sign ? 9'h1ff : 9'd0;
      n_fp_o = sign ? 32'hbf80_0000 : 32'd0;
    end else begin
      n_o    = sign ? (~mag + 9'd1) : mag;
      n_fp_o = small_fp(sign, mag);
    end
  end

  wire unused_bits;
  assign unused_bits = ^whole[23:9];

endmodule
