{{ c.banner }}
// FP32 to the fixed-scale integer rows of a multi-precision design (combinational):
//   q = x * 2^(127 + FRAC - scale) rounded to nearest, ties to even, saturated to OUTPUT_W bits
// i.e. q read with the E8M0 code scale is the MX element closest to x. A subnormal reads as
// zero, NaN gives 0, an infinity the bound of its sign; with relu_i a negative result is 0.
module hwgen_fp32_to_int #(
  parameter integer OUTPUT_W = 8,
  parameter integer FRAC     = 6
) (
  input  wire [31:0]         value_i,
  input  wire [7:0]          scale_i,
  input  wire                relu_i,
  output reg  [OUTPUT_W-1:0] result_o
);

  // x = M * 2^(exp - 150) with M the 24-bit significand, so q = M >> r with
  // r = scale + 23 - FRAC - exp. r <= 0 always saturates (M >= 2^23 > 2^(OUTPUT_W-1));
  // r in 1..MAX_SHIFT keeps M >> r, a guard and a sticky bit; beyond it x rounds to 0.
  // r is formed with an offset of R_OFFSET so that it stays unsigned.
  localparam integer   SIG_W      = 24;
  localparam integer   MAX_SHIFT  = SIG_W + 1;
  localparam integer   SHIFT_W    = $clog2(MAX_SHIFT + 1);   // bits of a shift 1..MAX_SHIFT
  localparam integer   WIDE_W     = 2 * SIG_W + 1;
  localparam integer   R_W        = 10;
  localparam integer   R_OFFSET   = 256;
  localparam integer   R_BIAS_INT = R_OFFSET + 23 - FRAC;
  localparam integer   R_MAX_INT  = R_OFFSET + MAX_SHIFT;
  localparam [R_W-1:0] R_BIAS     = R_BIAS_INT[R_W-1:0];
  localparam [R_W-1:0] R_ZERO     = R_OFFSET[R_W-1:0];
  localparam [R_W-1:0] R_MAX      = R_MAX_INT[R_W-1:0];
  localparam [7:0]     EXP_ONES   = 8'hff;
  localparam integer   Q_MAX_INT  = (1 << (OUTPUT_W - 1)) - 1;
  localparam [SIG_W:0] Q_MAX      = Q_MAX_INT[SIG_W:0];
  localparam [SIG_W:0] Q_MIN_MAG  = Q_MAX + { {SIG_W{1'b0}}, 1'b1};

  wire              sign     = value_i[31];
  wire [7:0]        exp      = value_i[30:23];
  wire [22:0]       man      = value_i[22:0];
  wire [R_W-1:0]    r_biased = { {(R_W-8){1'b0}}, scale_i} + R_BIAS - { {(R_W-8){1'b0}}, exp};
  wire [R_W-1:0]    r        = r_biased - R_ZERO;
  wire [WIDE_W-1:0] wide     = { {1'b1, man}, {(SIG_W+1){1'b0}} } >> r[SHIFT_W-1:0];
  wire [SIG_W-1:0]  int_part = wide[WIDE_W-1 -: SIG_W];
  wire              guard    = wide[SIG_W];
  wire              sticky   = |wide[SIG_W-1:0];
  wire              round_up = guard && (sticky || int_part[0]);
  wire [SIG_W:0]    rounded  = {1'b0, int_part} + { {SIG_W{1'b0}}, round_up};

  reg [SIG_W:0] mag;
  reg           saturate;
  always @* begin
    mag      = {(SIG_W+1){1'b0}};
    saturate = 1'b0;
    if (exp == EXP_ONES) begin
      saturate = (man == 23'd0);                   // infinity; NaN stays 0
    end else if (exp != 8'd0) begin                // zero and subnormals stay 0
      if (r_biased <= R_ZERO) begin
        saturate = 1'b1;
      end else if (r_biased <= R_MAX) begin
        mag = rounded;
      end
    end
    if (relu_i && sign) begin
      result_o = {OUTPUT_W{1'b0}};
    end else if (!sign) begin
      result_o = (saturate || mag > Q_MAX) ? Q_MAX[OUTPUT_W-1:0] : mag[OUTPUT_W-1:0];
    end else if (saturate || mag > Q_MIN_MAG) begin
      result_o = Q_MIN_MAG[OUTPUT_W-1:0];             // -2^(OUTPUT_W-1)
    end else begin
      result_o = -mag[OUTPUT_W-1:0];
    end
  end

  wire unused_r;
  assign unused_r = ^r[R_W-1:SHIFT_W];

endmodule
