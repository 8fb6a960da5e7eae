{{ c.banner }}
// MX block dequantization at a column output of the array: the integer partial sum of one
// block pair becomes FP32 psum * 2^(scale_a + scale_b - 254 - 2*FRAC), where scale_a and
// scale_b are E8M0 codes and FRAC is the element's fraction bits (6 for MXINT8, 2 for
// MXINT4). A partial sum of at most 23 bits is exact in FP32, so the only rounding is the
// FP32 contract's range handling: below the normal range a zero of the sum's sign (flush),
// above it infinity; a NaN scale (8'hff) gives the canonical quiet NaN. Combinational.
module hwgen_mx_dequant #(
  parameter integer PSUM_W = 21,  // two's complement partial sum, at most 23 bits
  parameter integer FRAC   = 6
) (
  input  wire [PSUM_W-1:0] psum_i,
  input  wire [7:0]        scale_a_i,
  input  wire [7:0]        scale_b_i,
  output reg  [31:0]       value_o
);

  localparam integer     POS_W     = 5;     // bit position of the leading one, 0 .. PSUM_W-1
  localparam integer     SUM_W     = 10;    // position + two scale codes, at most 530
  localparam [7:0]       SCALE_NAN = 8'hff;
  localparam [31:0]      QNAN      = 32'h7fc0_0000;
  // Biased FP32 exponent = position + scale_a + scale_b - 254 - 2*FRAC + 127.
  localparam integer     BIAS_INT  = 127 + 2 * FRAC;
  localparam [SUM_W-1:0] BIAS      = BIAS_INT[SUM_W-1:0];
  localparam integer     INF_INT   = BIAS_INT + 255;
  localparam [SUM_W-1:0] INF_SUM   = INF_INT[SUM_W-1:0];
  localparam integer     TOP_INT   = PSUM_W - 1;
  localparam [POS_W-1:0] TOP       = TOP_INT[POS_W-1:0];

  wire              sign      = psum_i[PSUM_W-1];
  // The magnitude of the most negative sum fits PSUM_W bits unsigned.
  wire [PSUM_W-1:0] magnitude = sign ? (~psum_i + { {(PSUM_W-1){1'b0}}, 1'b1}) : psum_i;

  function [POS_W-1:0] leading_one;
    input [PSUM_W-1:0] value;
    integer i;
    begin
      leading_one = {POS_W{1'b0}};
      for (i = 0; i < PSUM_W; i = i + 1) begin
        if (value[i]) begin
          leading_one = i[POS_W-1:0];
        end
      end
    end
  endfunction

  wire [POS_W-1:0]  position = leading_one(magnitude);
  wire [PSUM_W-1:0] aligned  = magnitude << (TOP - position);
  wire [SUM_W-1:0]  exp_sum  = { {(SUM_W-POS_W){1'b0}}, position}
                               + {2'b00, scale_a_i} + {2'b00, scale_b_i};
  wire [SUM_W-1:0]  biased   = exp_sum - BIAS;
  // The bits below the leading one, left-aligned in the 23-bit fraction.
  wire [22:0]       fraction = {aligned[PSUM_W-2:0], {(24-PSUM_W){1'b0}}};

  wire unused_bits;
  assign unused_bits = ^{aligned[PSUM_W-1], biased[SUM_W-1:8]};

  always @* begin
    if (scale_a_i == SCALE_NAN || scale_b_i == SCALE_NAN) begin
      value_o = QNAN;
    end else if (magnitude == {PSUM_W{1'b0}}) begin
      value_o = 32'd0;
    end else if (exp_sum <= BIAS) begin
      value_o = {sign, 31'd0};                        // below the normal range: flush
    end else if (exp_sum >= INF_SUM) begin
      value_o = {sign, 8'hff, 23'd0};
    end else begin
      value_o = {sign, biased[7:0], fraction};
    end
  end

endmodule
