{{ c.banner }}
// The row unit's operand element as FP32, posit codes (the port of hwgen_row_int_in): the
// code unpacked (hwgen_unpack_posit: {1, fraction} * 2^exp) and written as FP32, exactly
// (every posit8 value is a normal FP32 number); zero is +0 and NaR the canonical NaN.
// Combinational.
module hwgen_row_posit_in #(
  parameter integer CODE_W = {{ fmt.n }},
  parameter integer SIGNED = 1
) (
  input  wire [CODE_W-1:0] code_i,
  output wire [31:0]       fp_o
);

  localparam integer ES     = {{ fmt.es }};
  localparam integer USIG_W = CODE_W - 2 - ES;
  localparam integer UEXP_W = {{ fmt.uexp_w }};
  localparam integer FRAC_W = USIG_W - 1;
  // The FP32 exponent field of {1, f} * 2^exp: exp + FRAC_W + 127.
  localparam integer          BIAS_INT = FRAC_W + 127;
  localparam [UEXP_W-1:0]     BIAS     = BIAS_INT[UEXP_W-1:0];
  localparam [31:0]           QNAN     = 32'h7fc0_0000;

  wire [UEXP_W+USIG_W+3:0] u;
  hwgen_unpack_posit u_unpack (.code_i(code_i), .value_o(u));
  wire              nar   = u[UEXP_W+USIG_W+3];
  wire              zero  = u[UEXP_W+USIG_W+1];
  wire              sign  = u[UEXP_W+USIG_W];
  wire [UEXP_W-1:0] exp   = u[USIG_W +: UEXP_W];
  wire [FRAC_W-1:0] frac  = u[FRAC_W-1:0];
  wire [UEXP_W-1:0] field = exp + BIAS;

  assign fp_o = nar  ? QNAN
              : zero ? 32'd0
              : {sign, field[7:0], frac, {(23-FRAC_W){1'b0} }};

  wire unused;
  assign unused = ^{u[UEXP_W+USIG_W+2], u[FRAC_W], field[UEXP_W-1:8], SIGNED[0]};

endmodule
