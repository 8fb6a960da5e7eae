{{ c.banner }}
// Decoder of an N-bit posit with ES exponent bits into the unpacked operand bus of
// hwgen_fp_mul, {nan, inf, zero, sign, exp, sig} (README, "Number formats"): 0 is zero and
// 100..0 is NaR (decoded as NaN); otherwise a negative code is negated, the regime is the
// run of equal bits after the sign (m ones: k = m - 1; m zeros: k = -m), then up to ES
// exponent bits e (bits cut off by the end of the code are 0) and the fraction f. The value
// is (-1)^sign * {1, f} * 2^(k * 2^ES + e - FRAC_W), with the fraction left-aligned in
// FRAC_W = N - 3 - ES bits (the most a code can have). A posit's zero is unsigned: it
// decodes as +0. Combinational.
module hwgen_unpack_posit #(
  parameter integer N      = {{ fmt.n }},
  parameter integer ES     = {{ fmt.es }},
  parameter integer USIG_W = N - 2 - ES,
  parameter integer UEXP_W = {{ fmt.uexp_w }}
) (
  input  wire [N-1:0]             code_i,
  output wire [UEXP_W+USIG_W+3:0] value_o
);

  localparam integer FRAC_W = N - 3 - ES;
  localparam integer BODY_W = N - 1;               // the bits after the sign
  localparam integer RUN_W  = $clog2(BODY_W + 1);
  localparam [N-1:0] NAR    = {1'b1, {(N-1){1'b0}}};

  wire              sign = code_i[N-1];
  wire [N-1:0]      mag  = sign ? (~code_i + { {(N-1){1'b0}}, 1'b1}) : code_i;
  wire [BODY_W-1:0] body = mag[BODY_W-1:0];
  wire              r    = body[BODY_W-1];

  // Length of the regime: the run of bits equal to the first after the sign.
  function [RUN_W-1:0] run_length;
    input [BODY_W-1:0] b;
    input              bit_value;
    integer i;
    reg     going;
    begin
      run_length = {RUN_W{1'b0}};
      going      = 1'b1;
      for (i = BODY_W - 1; i >= 0; i = i - 1) begin
        if (going && b[i] == bit_value) begin
          run_length = run_length + { {(RUN_W-1){1'b0}}, 1'b1};
        end else begin
          going = 1'b0;
        end
      end
    end
  endfunction

  wire [RUN_W-1:0]  m    = run_length(body, r);
  // The exponent and fraction bits, left-aligned: the regime and its terminator shifted out
  // (a run over the whole body leaves nothing).
  wire [RUN_W:0]    cut  = {1'b0, m} + { {RUN_W{1'b0}}, 1'b1};
  wire [BODY_W-1:0] rest = body << cut;
  wire [BODY_W-1:0] e    = rest >> (BODY_W - ES);
  wire [BODY_W-1:0] frac = rest << ES;
  // scale = k * 2^ES + e, k = m - 1 or -m; exp = scale - FRAC_W.
  wire [UEXP_W-1:0] m_ext = { {(UEXP_W-RUN_W){1'b0}}, m};
  wire [UEXP_W-1:0] k     = r ? m_ext - { {(UEXP_W-1){1'b0}}, 1'b1} : {UEXP_W{1'b0}} - m_ext;
  localparam integer      FRAC_INT = FRAC_W;
  localparam [UEXP_W-1:0] FRAC_N   = FRAC_INT[UEXP_W-1:0];
  wire [UEXP_W-1:0] exp = (k << ES) + { {(UEXP_W-BODY_W){1'b0}}, e} - FRAC_N;

  // The magnitude's top bit is set only for NaR.
  wire unused_bits;
  assign unused_bits = ^{mag[N-1], frac[BODY_W-FRAC_W-1:0]};

  assign value_o = {code_i == NAR, 1'b0, code_i == {N{1'b0}}, sign && (code_i != NAR), exp, 1'b1,
                    frac[BODY_W-1 -: FRAC_W]};

endmodule
