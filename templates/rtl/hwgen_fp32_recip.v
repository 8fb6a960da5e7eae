{{ c.banner }}
// 1 / x in FP32 under the FP32 contract, correctly rounded (to nearest, ties to even), in a
// pipeline of 26 stages (y_o is the result of x_i 26 cycles before), one operand a cycle: a subnormal operand reads as a zero of
// its sign; 1 / +-0 is +-infinity, 1 / +-infinity +-0, NaN the canonical quiet NaN; a
// result whose exact magnitude is below 2^-126 is a zero of its sign. The significand's
// reciprocal is a restoring division of 2^47 by the 24-bit significand M, one quotient bit
// per stage (the datapath registers carry no reset: valid bits travel beside them).
module hwgen_fp32_recip (
  input  wire        clk_i,
  input  wire [31:0] x_i,
  output wire [31:0] y_o
);

  localparam integer STEPS = 24;
  localparam [31:0]  QNAN  = 32'h7fc0_0000;

  // Stage 0: the operand's class, sign, exponent of the result, and the divisor.
  wire       sign  = x_i[31];
  wire [7:0] exp   = x_i[30:23];
  wire       zero  = (exp == 8'd0);
  wire       inf   = (exp == 8'hff) && (x_i[22:0] == 23'd0);
  wire       nan   = (exp == 8'hff) && (x_i[22:0] != 23'd0);
  wire       pow2  = (x_i[22:0] == 23'd0);
  // Biased exponent of the result: 254 - exp for a power of two (significand 1), else
  // 253 - exp (the quotient 2 / m is in (1, 2)); zero or below is a flush.
  wire [9:0] res_exp = pow2 ? (10'd254 - {2'b00, exp}) : (10'd253 - {2'b00, exp});

  // What travels with the division: {special?, power of two, sign, the special result,
  // the result's exponent}.
  localparam integer TAG_W = 1 + 1 + 1 + 32 + 10;
  reg [TAG_W-1:0] tag_in;
  always @* begin
    if (nan) begin
      tag_in = {1'b1, pow2, sign, QNAN, res_exp};
    end else if (zero) begin
      tag_in = {1'b1, pow2, sign, {sign, 8'hff, 23'd0}, res_exp};
    end else if (inf) begin
      tag_in = {1'b1, pow2, sign, {sign, 31'd0}, res_exp};
    end else begin
      tag_in = {1'b0, pow2, sign, 32'd0, res_exp};
    end
  end

  genvar k;
  generate
    for (k = 0; k <= STEPS; k = k + 1) begin : gen_step
      reg  [24:0]      rem_q;                       // partial remainder, below 2 M
      reg  [23:0]      div_q;                       // M
      reg  [23:0]      quo_q;                       // quotient bits so far
      reg  [TAG_W-1:0] tag_q;
      wire [24:0]      rem_d;
      wire [23:0]      div_d;
      wire [23:0]      quo_d;
      wire [TAG_W-1:0] tag_d;
      if (k == 0) begin : gen_first
        // The dividend 2^47 over 2^23: the first partial remainder is 2^24.
        assign rem_d = {1'b1, 24'd0};
        assign div_d = {1'b1, x_i[22:0]};
        assign quo_d = 24'd0;
        assign tag_d = tag_in;
      end else begin : gen_next
        wire [24:0] prev = gen_step[k-1].rem_q;
        wire [24:0] d    = {1'b0, gen_step[k-1].div_q};
        wire        take = (prev >= d);
        wire [24:0] left = take ? prev - d : prev;
        // The next partial remainder is twice this one (the dividend's lower bits are 0),
        // except after the last bit, which keeps the remainder for the rounding.
        if (k < STEPS) begin : gen_shift
          assign rem_d = {left[23:0], 1'b0};
          wire unused_top;
          assign unused_top = left[24];
        end else begin : gen_keep
          assign rem_d = left;
        end
        assign div_d = gen_step[k-1].div_q;
        assign quo_d = {gen_step[k-1].quo_q[22:0], take};
        wire unused_quo;
        assign unused_quo = gen_step[k-1].quo_q[23];
        assign tag_d = gen_step[k-1].tag_q;
      end
      always @(posedge clk_i) begin
        rem_q <= rem_d;
        div_q <= div_d;
        quo_q <= quo_d;
        tag_q <= tag_d;
      end
    end
  endgenerate

  // The last stage: round on twice the remainder against M, pack (a power of two's
  // reciprocal is one: its quotient, 2^24, does not fit and is not used).
  wire [24:0]      rem  = gen_step[STEPS].rem_q;
  wire [23:0]      div  = gen_step[STEPS].div_q;
  wire [23:0]      quo  = gen_step[STEPS].quo_q;
  wire [TAG_W-1:0] tag  = gen_step[STEPS].tag_q;
  wire [25:0]      twice = {rem, 1'b0};
  wire             up   = (twice > {2'b00, div}) || ((twice == {2'b00, div}) && quo[0]);
  wire [23:0]      mant = quo + {23'd0, up};
  wire [9:0]       rexp = tag[9:0];
  wire             flush = rexp[9] || (rexp == 10'd0);
  reg  [31:0]      y_q;
  wire             rsign = tag[42];
  wire [22:0]      frac  = tag[43] ? 23'd0 : mant[22:0];
  reg  [31:0]      y_d;
  always @* begin
    if (tag[TAG_W-1]) begin
      y_d = tag[41:10];
    end else if (flush) begin
      y_d = {rsign, 31'd0};
    end else begin
      y_d = {rsign, rexp[7:0], frac};
    end
  end
  always @(posedge clk_i) begin
    y_q <= y_d;
  end
  assign y_o = y_q;

  wire unused_bits;
  assign unused_bits = ^{mant[23], rexp[8]};

endmodule
