{{ c.banner }}
// The square root in FP32 under the FP32 contract, correctly rounded (to nearest; a square
// root is never a tie), in a pipeline of 26 stages (y_o is the result of x_i 26 cycles
// before), one operand a cycle: a subnormal operand reads as a zero of its sign; sqrt(+-0)
// is +-0, sqrt(+infinity) +infinity; a negative value or NaN gives the canonical quiet
// NaN. The significand's root is the digit-by-digit integer square root of M * 2^23 (an
// even exponent) or M * 2^24 (an odd one), M the 24-bit significand, a result bit a stage
// (the datapath registers carry no reset: valid bits travel beside them).
module hwgen_fp32_sqrt (
  input  wire        clk_i,
  input  wire [31:0] x_i,
  output wire [31:0] y_o
);

  localparam integer STEPS = 24;
  localparam [31:0]  QNAN  = 32'h7fc0_0000;

  wire       sign = x_i[31];
  wire [7:0] exp  = x_i[30:23];
  wire       zero = (exp == 8'd0);
  wire       inf  = (exp == 8'hff) && (x_i[22:0] == 23'd0);
  wire       nan  = (exp == 8'hff) && (x_i[22:0] != 23'd0);
  // The unbiased exponent E = exp - 127 is odd when exp is even: then the root of 2 m with
  // exponent (E - 1) / 2, biased (exp + 126) / 2; else the root of m with exponent E / 2,
  // biased (exp + 127) / 2.
  wire       odd_e  = !exp[0];
  wire [8:0] res_exp = exp[0] ? ({1'b0, exp} + 9'd127) >> 1 : ({1'b0, exp} + 9'd126) >> 1;
  wire [47:0] radicand = odd_e ? {1'b1, x_i[22:0], 24'd0} : {1'b0, 1'b1, x_i[22:0], 23'd0};

  // {special?, the special result, the result's exponent}.
  localparam integer TAG_W = 1 + 32 + 8;
  reg [TAG_W-1:0] tag_in;
  always @* begin
    if (nan || (sign && !zero)) begin
      tag_in = {1'b1, QNAN, res_exp[7:0]};
    end else if (zero) begin
      tag_in = {1'b1, {sign, 31'd0}, res_exp[7:0]};
    end else if (inf) begin
      tag_in = {1'b1, 32'h7f80_0000, res_exp[7:0]};
    end else begin
      tag_in = {1'b0, 32'd0, res_exp[7:0]};
    end
  end

  genvar k;
  generate
    for (k = 0; k <= STEPS; k = k + 1) begin : gen_step
      reg  [47:0]      bits_q;                      // the radicand's bits still to bring down
      reg  [25:0]      rem_q;                       // remainder, at most 2 S
      reg  [23:0]      root_q;                      // the root's bits so far (S)
      reg  [TAG_W-1:0] tag_q;
      wire [47:0]      bits_d;
      wire [25:0]      rem_d;
      wire [23:0]      root_d;
      wire [TAG_W-1:0] tag_d;
      if (k == 0) begin : gen_first
        assign bits_d = radicand;
        assign rem_d  = 26'd0;
        assign root_d = 24'd0;
        assign tag_d  = tag_in;
      end else begin : gen_next
        // Bring down two bits: R = 4 R + next; trial T = 4 S + 1; if R >= T, R -= T and
        // the bit is one.
        wire [47:0] b     = gen_step[k-1].bits_q;
        wire [23:0] s     = gen_step[k-1].root_q;
        wire [27:0] r     = {gen_step[k-1].rem_q, b[47:46]};
        wire [27:0] trial = {2'b00, s, 2'b01};
        wire        take  = (r >= trial);
        wire [27:0] left  = take ? r - trial : r;
        assign bits_d = {b[45:0], 2'b00};
        assign rem_d  = left[25:0];
        assign root_d = {s[22:0], take};
        assign tag_d  = gen_step[k-1].tag_q;
        wire unused_bits;
        assign unused_bits = ^{left[27:26], s[23]};
      end
      always @(posedge clk_i) begin
        bits_q <= bits_d;
        rem_q  <= rem_d;
        root_q <= root_d;
        tag_q  <= tag_d;
      end
    end
  endgenerate

  // Round up when the remainder exceeds the root (the root plus one half, squared, is
  // S^2 + S + 1/4).
  wire [25:0]      rem  = gen_step[STEPS].rem_q;
  wire [23:0]      root = gen_step[STEPS].root_q;
  wire [TAG_W-1:0] tag  = gen_step[STEPS].tag_q;
  wire             up   = (rem > {2'b00, root});
  wire [24:0]      mant = {1'b0, root} + {24'd0, up};
  // (A carry out of the significand cannot happen: the largest root rounds down.)
  wire [7:0]       rexp = tag[7:0];
  reg  [31:0]      y_d;
  reg  [31:0]      y_q;
  always @* begin
    if (tag[TAG_W-1]) begin
      y_d = tag[39:8];
    end else begin
      y_d = {1'b0, rexp, mant[22:0]};
    end
  end
  always @(posedge clk_i) begin
    y_q <= y_d;
  end
  assign y_o = y_q;

  wire unused_bits;
  assign unused_bits = ^{mant[24:23], gen_step[STEPS].bits_q, res_exp[8]};

endmodule
