{{ c.banner }}
// Vector-unit quantization of one FP32 accumulator row to an MX block (OCP MX v1.0 6.3),
// a four-stage pipeline with the latency of the integer lanes:
//   stage 1: optional ReLU (a negative value or -0 becomes +0; NaN stays NaN)
//   stage 2: the largest exponent field of the row; any NaN or infinity marks the block
//   stage 3: each element x * 2^(FRAC - shared) rounded to nearest, ties to even, and
//            saturated to OUTPUT_W bits, where shared = largest exponent - 127
//   stage 4: the row {scale, elements}
// The E8M0 scale code is the largest exponent field itself (floor(log2(amax)) + 127; 0 for an
// all-zero row); a row holding NaN or infinity gets the NaN scale 8'hff and zero elements.
// Subnormal values read as zero, as everywhere in the FP32 path.
module hwgen_mx_quantize #(
  parameter integer KPF      = 8,
  parameter integer OUTPUT_W = 8,
  parameter integer FRAC     = 6
) (
  input  wire                    clk_i,
  input  wire                    {{ c.rst }},
  input  wire                    relu_i,
  input  wire [KPF*32-1:0]       acc_i,
  output wire [KPF*OUTPUT_W+7:0] result_o
);

  localparam integer     BASE      = 23 - FRAC;      // shift of the mantissa for the largest exponent
  localparam integer     ZERO_INT  = 25 - BASE;      // exponent gap from which an element rounds to 0
  localparam [7:0]       ZERO_GAP  = ZERO_INT[7:0];
  localparam integer     INT_W     = FRAC + 2;       // integer part after rounding: OUTPUT_W bits
  localparam [7:0]       EXP_ONES  = 8'hff;
  // The 24-bit significand is shifted right inside 24 + GUARD_W bits; a shift below ZERO_GAP
  // + BASE (at most 25) keeps every bit that decides the rounding.
  localparam integer     GUARD_W   = 32;
  localparam integer     WIDE_W    = 24 + GUARD_W;
  localparam integer     Q_MAX_INT = (1 << (OUTPUT_W - 1)) - 1;
  localparam [INT_W-1:0] Q_MAX     = Q_MAX_INT[INT_W-1:0];
  localparam [INT_W-1:0] Q_MIN_MAG = Q_MAX + { {(INT_W-1){1'b0}}, 1'b1};

  reg [KPF*32-1:0]       v1_q;
  reg [KPF*32-1:0]       v2_q;
  reg [7:0]              max_exp_q;
  reg                    special_q;
  reg [KPF*OUTPUT_W-1:0] q3_q;
  reg [7:0]              scale3_q;
  reg [KPF*OUTPUT_W+7:0] row4_q;
  // Stages 2 and 4 pass the previous stage on; stage 3 also picks the row's scale code.
  wire [KPF*32-1:0]       v2_d     = v1_q;
  wire [7:0]              scale3_d = special_q ? EXP_ONES : max_exp_q;
  wire [KPF*OUTPUT_W+7:0] row4_d   = {scale3_q, q3_q};

  // Stage 1: ReLU.
  reg [KPF*32-1:0] v1_d;
  integer i;
  always @* begin
    v1_d = acc_i;
    for (i = 0; i < KPF; i = i + 1) begin
      if (relu_i && acc_i[i*32+31] && !(acc_i[i*32+23 +: 8] == EXP_ONES && acc_i[i*32 +: 23] != 23'd0)) begin
        v1_d[i*32 +: 32] = 32'd0;
      end
    end
  end

  // Stage 2: largest exponent field, NaN or infinity anywhere.
  reg [7:0] max_exp_d;
  reg       special_d;
  integer j;
  always @* begin
    max_exp_d = 8'd0;
    special_d = 1'b0;
    for (j = 0; j < KPF; j = j + 1) begin
      if (v1_q[j*32+23 +: 8] == EXP_ONES) begin
        special_d = 1'b1;
      end
      if (v1_q[j*32+23 +: 8] > max_exp_d) begin
        max_exp_d = v1_q[j*32+23 +: 8];
      end
    end
  end

  // Stage 3: per element, shift the mantissa right by BASE + (largest - own exponent) and
  // round to nearest even; a gap of ZERO_GAP or more leaves less than one half.
  wire [KPF*OUTPUT_W-1:0] q3_d;
  genvar col;
  generate
    for (col = 0; col < KPF; col = col + 1) begin : gen_col
      wire              sign      = v2_q[col*32+31];
      wire [7:0]        exp       = v2_q[col*32+23 +: 8];
      wire [23:0]       mantissa  = {1'b1, v2_q[col*32 +: 23]};
      wire [7:0]        gap       = max_exp_q - exp;
      wire [WIDE_W-1:0] shifted   = {mantissa, {GUARD_W{1'b0}}} >> (BASE + {24'd0, gap});
      wire [INT_W-1:0]  int_part  = shifted[GUARD_W +: INT_W];
      wire              half      = shifted[GUARD_W-1];
      wire              sticky    = |shifted[GUARD_W-2:0];
      wire              round_up  = half && (sticky || int_part[0]);
      wire [INT_W-1:0]  magnitude = int_part + { {(INT_W-1){1'b0}}, round_up};
      wire [INT_W-1:0]  pos_sat   = (magnitude > Q_MAX) ? Q_MAX : magnitude;
      wire [INT_W-1:0]  neg_sat   = (magnitude > Q_MIN_MAG) ? Q_MIN_MAG : magnitude;
      wire [INT_W-1:0]  value     = sign ? (~neg_sat + { {(INT_W-1){1'b0}}, 1'b1}) : pos_sat;
      wire              zero      = (exp == 8'd0) || (gap >= ZERO_GAP) || special_q;
      wire              unused_bits;
      assign unused_bits = ^shifted[WIDE_W-1:GUARD_W+INT_W];
      assign q3_d[col*OUTPUT_W +: OUTPUT_W] = zero ? {OUTPUT_W{1'b0}} : value;
    end
  endgenerate

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      v1_q      <= {(KPF*32){1'b0}};
      v2_q      <= {(KPF*32){1'b0}};
      max_exp_q <= 8'd0;
      special_q <= 1'b0;
      q3_q      <= {(KPF*OUTPUT_W){1'b0}};
      scale3_q  <= 8'd0;
      row4_q    <= {(KPF*OUTPUT_W+8){1'b0}};
    end else begin
      v1_q      <= v1_d;
      v2_q      <= v2_d;
      max_exp_q <= max_exp_d;
      special_q <= special_d;
      q3_q      <= q3_d;
      scale3_q  <= scale3_d;
      row4_q    <= row4_d;
    end
  end

  assign result_o = row4_q;

endmodule
