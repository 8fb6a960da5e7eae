{{ c.banner }}
// An FP32 value times an MX block's scale (numeric::mx::scale_fp32): p * 2^(scale - 127 -
// FRAC), the E8M0 code's power of two with the element's FRAC fraction bits folded in,
// exact (hwgen_ldexp: below FP32's normal range a zero of p's sign, above it infinity);
// the NaN scale gives the canonical NaN. An MX element's value is its code (as FP32) times
// its block's scale. Combinational.
module hwgen_mx_scale #(
  parameter integer FRAC    = 6,
  parameter integer SCALE_W = 8
) (
  input  wire [31:0]        p_i,
  input  wire [SCALE_W-1:0] scale_i,
  output wire [31:0]        y_o
);

  localparam integer       EXP_W     = 9;           // hwgen_ldexp's two's-complement shift
  localparam integer       BIAS_INT  = 127 + FRAC;  // the E8M0 bias plus the fraction bits
  localparam [EXP_W-1:0]   BIAS      = BIAS_INT[EXP_W-1:0];
  localparam [SCALE_W-1:0] SCALE_NAN = {SCALE_W{1'b1}};
  localparam [31:0]        QNAN      = 32'h7fc0_0000;

  wire [31:0] y;
  hwgen_ldexp u_ldexp (
    .p_i (p_i),
    .n_i ({ {(EXP_W-SCALE_W){1'b0} }, scale_i} - BIAS),
    .y_o (y)
  );
  assign y_o = (scale_i == SCALE_NAN) ? QNAN : y;

endmodule
