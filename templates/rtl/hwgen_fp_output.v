{{ c.banner }}
// Vector-unit output path of a floating-point design: each lane takes an FP32 accumulator
// value through ReLU (when relu_i: a negative value or -0 becomes +0, NaN stays NaN) and
// converts it to the output format (hwgen_fp32_to_mini: round to nearest even,
// saturating). A four-stage pipeline, the latency of the integer lanes:
//   stage 1: ReLU; stage 2: conversion; stages 3 and 4: alignment with the write-back.
module hwgen_fp_output #(
  parameter integer COLS  = 8,
  parameter integer EXP_W = 4,
  parameter integer MAN_W = 3,
  parameter integer BIAS  = 7,
  parameter integer IEEE  = 0
) (
  input  wire                           clk_i,
  input  wire                           {{ c.rst }},
  input  wire                           relu_i,
  input  wire [COLS*32-1:0]             acc_i,
  output wire [COLS*(1+EXP_W+MAN_W)-1:0] result_o
);

  localparam integer W = 1 + EXP_W + MAN_W;

  reg  [COLS*32-1:0] v1_q;
  reg  [COLS*W-1:0]  c2_q;
  reg  [COLS*W-1:0]  c3_q;
  reg  [COLS*W-1:0]  c4_q;
  reg  [COLS*32-1:0] v1_d;
  wire [COLS*W-1:0]  c2_d;

  // Stage 1: ReLU.
  integer i;
  always @* begin
    v1_d = acc_i;
    for (i = 0; i < COLS; i = i + 1) begin
      if (relu_i && acc_i[i*32+31] && !(acc_i[i*32+23 +: 8] == 8'hff && acc_i[i*32 +: 23] != 23'd0)) begin
        v1_d[i*32 +: 32] = 32'd0;
      end
    end
  end

  // Stage 2: conversion.
  genvar col;
  generate
    for (col = 0; col < COLS; col = col + 1) begin : gen_col
      hwgen_fp32_to_mini #(
        .EXP_W (EXP_W),
        .MAN_W (MAN_W),
        .BIAS  (BIAS),
        .IEEE  (IEEE)
      ) u_convert (
        .value_i (v1_q[col*32 +: 32]),
        .code_o  (c2_d[col*W +: W])
      );
    end
  endgenerate

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      v1_q <= {(COLS*32){1'b0}};
      c2_q <= {(COLS*W){1'b0}};
      c3_q <= {(COLS*W){1'b0}};
      c4_q <= {(COLS*W){1'b0}};
    end else begin
      v1_q <= v1_d;
      c2_q <= c2_d;
      c3_q <= c2_q;
      c4_q <= c3_q;
    end
  end

  assign result_o = c4_q;

endmodule
