{{ c.banner }}
// One lane of the row unit's element pipeline (numeric::rows::element, then the square for
// a reduction and the rounding to an output element), one element a cycle, a stage a
// register: the accumulator element arrives with its cycle (stage 0) and
//   1  + bias (integer elements), to FP32          (or the FP32 element, flushed; or +0)
//   2  * scale                                      | operand: (b as FP32) - zero point
//   3  + shift                                      | * operand scale
//   4  + operand
//   5  - statistic a
//   6  * statistic b
//   7  * gamma
//   8  + beta
//   9  t = value * log2(e)                          (e^x)
//   10 n = floor(t)
//   11 x = t - n (e^x), or the value (the spline)
//   12 the segment's a; a * x
//   13 + b
//   14 * x
//   15 + c
//   16 e^x: the spline's 2^(t - n) times 2^n (or infinity, 0, NaN); the spline's value;
//      or the value
//   17 the square (a reduction of squares) | * output scale (or statistic b)
//   18 rounded to the output element, plus the zero point, saturated (the datatype's
//      leaves read the operand and write the element: integers, or FP8/BF16 codes)
// A stage whose flag is off passes the value on unchanged. red_o is stage 17's value for
// the reduction, value_o stage 17's value times the output multiplier (a unit writing MX
// blocks quantizes the row's values together), code_o stage 18's element; every parameter
// input is the one of the row in the stage that uses it (the unit aligns them).
module hwgen_row_lane #(
  parameter integer ACC_W      = 32,
  parameter integer OUTPUT_W   = 8,
  parameter integer OUT_SIGNED = 1,
  parameter integer ZP_W       = 16
) (
  input  wire                clk_i,
  // what the instruction says (constant while its rows flow)
  input  wire                src_float_i,
  input  wire                src_zero_i,
  input  wire                bias_i,
  input  wire                scale_i,
  input  wire                opnd_i,
  input  wire                centre_i,
  input  wire                norm_i,
  input  wire                affine_i,
  input  wire                exp_i,
  input  wire                spline_i,
  input  wire                square_i,
  input  wire                out_b_i,
  input  wire [31:0]         opnd_scale_i,
  input  wire [31:0]         opnd_zero_i,
  input  wire [31:0]         out_scale_i,
  input  wire [ZP_W-1:0]     zero_point_i,
  input  wire [32*`HWGEN_SPLINE_USED-1:0] table_i,
  // stage 0: the element, its operand, its tile's bias
  input  wire [ACC_W-1:0]    acc_i,
  input  wire [OUTPUT_W-1:0] operand_i,
  input  wire [ACC_W-1:0]    bias_value_i,
  // the row's parameters, each in the stage that reads it
  input  wire [31:0]         scale_value_i,         // stage 1 -> 2
  input  wire [31:0]         shift_value_i,         // stage 2 -> 3
  input  wire [31:0]         stat_a_i,              // stage 4 -> 5
  input  wire [31:0]         stat_b_i,              // stage 5 -> 6
  input  wire [31:0]         stat_b_out_i,          // stage 16 -> 17 (out_b)
  input  wire [31:0]         gamma_value_i,         // stage 6 -> 7
  input  wire [31:0]         beta_value_i,          // stage 7 -> 8
  output wire [31:0]         red_o,
  output wire [31:0]         value_o,
  output wire [OUTPUT_W-1:0] code_o
);

  localparam [31:0] LOG2_E = 32'h3fb8_aa3b;
  localparam [31:0] QNAN   = 32'h7fc0_0000;

  // ---- stage 1: to FP32 --------------------------------------------------------------
  wire [ACC_W:0] int_sum = {acc_i[ACC_W-1], acc_i}
                           + (bias_i ? {bias_value_i[ACC_W-1], bias_value_i} : {(ACC_W+1){1'b0} });
  wire [31:0] from_int;
  hwgen_int_to_fp32 #(.IN_W(ACC_W + 1)) u_from_int (.value_i(int_sum), .fp_o(from_int));
  // An FP32 element flushed: a subnormal is a zero of its sign, a NaN the canonical NaN.
  wire [31:0] acc_fp = (acc_i[30:23] == 8'd0) ? {acc_i[31], 31'd0}
                     : ((acc_i[30:23] == 8'hff) && (acc_i[22:0] != 23'd0)) ? QNAN
                     : acc_i[31:0];
  // The operand's element as FP32 (the datatype's leaf).
  wire [31:0] opnd_fp;
  {{ c.leaves.row_in }} #(.CODE_W(OUTPUT_W), .SIGNED(OUT_SIGNED)) u_opnd_fp (.code_i(operand_i), .fp_o(opnd_fp));
  reg [31:0] v1_q, o1_q;
  wire [31:0] v1_d = src_zero_i ? 32'd0 : src_float_i ? acc_fp : from_int;
  wire [31:0] o1_d = opnd_fp;
  always @(posedge clk_i) begin
    v1_q <= v1_d;
    o1_q <= o1_d;
  end

  // ---- stages 2, 3: scale and shift; the operand's difference and scale ---------------
  wire [31:0] v2_m, o2_s, v3_a, o3_m;
  hwgen_fp32_mul u_scale (.a_i(v1_q), .b_i(scale_value_i), .product_o(v2_m));
  hwgen_fp32_add u_opnd_zero (.a_i(o1_q), .b_i({~opnd_zero_i[31], opnd_zero_i[30:0]}), .sum_o(o2_s));
  reg [31:0] v2_q, o2_q;
  wire [31:0] v2_d = scale_i ? v2_m : v1_q;
  wire [31:0] o2_d = o2_s;
  always @(posedge clk_i) begin
    v2_q <= v2_d;
    o2_q <= o2_d;
  end
  hwgen_fp32_add u_shift (.a_i(v2_q), .b_i(shift_value_i), .sum_o(v3_a));
  hwgen_fp32_mul u_opnd_scale (.a_i(o2_q), .b_i(opnd_scale_i), .product_o(o3_m));
  reg [31:0] v3_q, o3_q;
  wire [31:0] v3_d = scale_i ? v3_a : v2_q;
  wire [31:0] o3_d = o3_m;
  always @(posedge clk_i) begin
    v3_q <= v3_d;
    o3_q <= o3_d;
  end

  // ---- stages 4 to 8: operand, centre, norm, affine ----------------------------------
  wire [31:0] v4_a, v5_a, v6_m, v7_m, v8_a;
  hwgen_fp32_add u_opnd (.a_i(v3_q), .b_i(o3_q), .sum_o(v4_a));
  reg [31:0] v4_q;
  wire [31:0] v4_d = opnd_i ? v4_a : v3_q;
  always @(posedge clk_i) begin
    v4_q <= v4_d;
  end
  hwgen_fp32_add u_centre (.a_i(v4_q), .b_i({~stat_a_i[31], stat_a_i[30:0]}), .sum_o(v5_a));
  reg [31:0] v5_q;
  wire [31:0] v5_d = centre_i ? v5_a : v4_q;
  always @(posedge clk_i) begin
    v5_q <= v5_d;
  end
  hwgen_fp32_mul u_norm (.a_i(v5_q), .b_i(stat_b_i), .product_o(v6_m));
  reg [31:0] v6_q;
  wire [31:0] v6_d = norm_i ? v6_m : v5_q;
  always @(posedge clk_i) begin
    v6_q <= v6_d;
  end
  hwgen_fp32_mul u_gamma (.a_i(v6_q), .b_i(gamma_value_i), .product_o(v7_m));
  reg [31:0] v7_q;
  wire [31:0] v7_d = affine_i ? v7_m : v6_q;
  always @(posedge clk_i) begin
    v7_q <= v7_d;
  end
  hwgen_fp32_add u_beta (.a_i(v7_q), .b_i(beta_value_i), .sum_o(v8_a));
  reg [31:0] v8_q;
  wire [31:0] v8_d = affine_i ? v8_a : v7_q;
  always @(posedge clk_i) begin
    v8_q <= v8_d;
  end

  // ---- stages 9 to 11: e^x's split; the spline's x ------------------------------------
  wire [31:0] t9_m;
  hwgen_fp32_mul u_log2e (.a_i(v8_q), .b_i(LOG2_E), .product_o(t9_m));
  reg [31:0] t9_q, v9_q;
  wire [31:0] t9_d = t9_m;
  wire [31:0] v9_d = v8_q;
  always @(posedge clk_i) begin
    t9_q <= t9_d;
    v9_q <= v9_d;
  end
  wire [8:0]  n10;
  wire [31:0] n10_fp;
  wire        nan10, big10, tiny10;
  hwgen_exp_split u_split (
    .t_i    (t9_q),
    .n_o    (n10),
    .n_fp_o (n10_fp),
    .nan_o  (nan10),
    .big_o  (big10),
    .tiny_o (tiny10)
  );
  reg [31:0] t10_q, nfp10_q, v10_q;
  reg [8:0]  n10_q;
  reg [2:0]  cls10_q;
  wire [31:0] t10_d = t9_q;
  wire [31:0] nfp10_d = n10_fp;
  wire [31:0] v10_d = v9_q;
  wire [8:0] n10_d = n10;
  wire [2:0] cls10_d = {nan10, big10, tiny10};
  always @(posedge clk_i) begin
    t10_q   <= t10_d;
    nfp10_q <= nfp10_d;
    v10_q   <= v10_d;
    n10_q   <= n10_d;
    cls10_q <= cls10_d;
  end
  wire [31:0] frac11;
  hwgen_fp32_add u_frac (.a_i(t10_q), .b_i({~nfp10_q[31], nfp10_q[30:0]}), .sum_o(frac11));
  reg [31:0] x11_q, v11_q;
  reg [8:0]  n11_q;
  reg [2:0]  cls11_q;
  wire [31:0] x11_d = exp_i ? frac11 : v10_q;
  wire [31:0] v11_d = v10_q;
  wire [8:0] n11_d = n10_q;
  wire [2:0] cls11_d = cls10_q;
  always @(posedge clk_i) begin
    x11_q   <= x11_d;
    v11_q   <= v11_d;
    n11_q   <= n11_d;
    cls11_q <= cls11_d;
  end

  // ---- stages 12 to 15: (a x + b) x + c ------------------------------------------------
  wire [31:0] coef_a, coef_b, coef_c, p12_m;
  hwgen_spline_select u_select (
    .x_i     (x11_q),
    .table_i (table_i),
    .a_o     (coef_a),
    .b_o     (coef_b),
    .c_o     (coef_c)
  );
  hwgen_fp32_mul u_ax (.a_i(coef_a), .b_i(x11_q), .product_o(p12_m));
  reg [31:0] p12_q, x12_q, b12_q, c12_q, v12_q;
  reg [8:0]  n12_q;
  reg [2:0]  cls12_q;
  wire [31:0] p12_d = p12_m;
  wire [31:0] x12_d = x11_q;
  wire [31:0] b12_d = coef_b;
  wire [31:0] c12_d = coef_c;
  wire [31:0] v12_d = v11_q;
  wire [8:0] n12_d = n11_q;
  wire [2:0] cls12_d = cls11_q;
  always @(posedge clk_i) begin
    p12_q   <= p12_d;
    x12_q   <= x12_d;
    b12_q   <= b12_d;
    c12_q   <= c12_d;
    v12_q   <= v12_d;
    n12_q   <= n12_d;
    cls12_q <= cls12_d;
  end
  wire [31:0] p13_a;
  hwgen_fp32_add u_plus_b (.a_i(p12_q), .b_i(b12_q), .sum_o(p13_a));
  reg [31:0] p13_q, x13_q, c13_q, v13_q;
  reg [8:0]  n13_q;
  reg [2:0]  cls13_q;
  wire [31:0] p13_d = p13_a;
  wire [31:0] x13_d = x12_q;
  wire [31:0] c13_d = c12_q;
  wire [31:0] v13_d = v12_q;
  wire [8:0] n13_d = n12_q;
  wire [2:0] cls13_d = cls12_q;
  always @(posedge clk_i) begin
    p13_q   <= p13_d;
    x13_q   <= x13_d;
    c13_q   <= c13_d;
    v13_q   <= v13_d;
    n13_q   <= n13_d;
    cls13_q <= cls13_d;
  end
  wire [31:0] p14_m;
  hwgen_fp32_mul u_times_x (.a_i(p13_q), .b_i(x13_q), .product_o(p14_m));
  reg [31:0] p14_q, c14_q, v14_q;
  reg [8:0]  n14_q;
  reg [2:0]  cls14_q;
  wire [31:0] p14_d = p14_m;
  wire [31:0] c14_d = c13_q;
  wire [31:0] v14_d = v13_q;
  wire [8:0] n14_d = n13_q;
  wire [2:0] cls14_d = cls13_q;
  always @(posedge clk_i) begin
    p14_q   <= p14_d;
    c14_q   <= c14_d;
    v14_q   <= v14_d;
    n14_q   <= n14_d;
    cls14_q <= cls14_d;
  end
  wire [31:0] y15_a;
  hwgen_fp32_add u_plus_c (.a_i(p14_q), .b_i(c14_q), .sum_o(y15_a));
  reg [31:0] y15_q, v15_q;
  reg [8:0]  n15_q;
  reg [2:0]  cls15_q;
  wire [31:0] y15_d = y15_a;
  wire [31:0] v15_d = v14_q;
  wire [8:0] n15_d = n14_q;
  wire [2:0] cls15_d = cls14_q;
  always @(posedge clk_i) begin
    y15_q   <= y15_d;
    v15_q   <= v15_d;
    n15_q   <= n15_d;
    cls15_q <= cls15_d;
  end

  // ---- stage 16: the function's value ---------------------------------------------------
  wire [31:0] e16;
  hwgen_ldexp u_ldexp (.p_i(y15_q), .n_i(n15_q), .y_o(e16));
  reg [31:0] f16_d, f16_q;
  always @* begin
    if (exp_i) begin
      if (cls15_q[2]) begin
        f16_d = QNAN;
      end else if (cls15_q[1]) begin
        f16_d = 32'h7f80_0000;
      end else if (cls15_q[0]) begin
        f16_d = 32'd0;
      end else begin
        f16_d = e16;
      end
    end else if (spline_i) begin
      f16_d = y15_q;
    end else begin
      f16_d = v15_q;
    end
  end
  always @(posedge clk_i) begin
    f16_q <= f16_d;
  end

  // ---- stages 17, 18: the reduction's value; the output element ------------------------
  wire [31:0] sq17_m, o17_m;
  hwgen_fp32_mul u_square (.a_i(f16_q), .b_i(f16_q), .product_o(sq17_m));
  wire [31:0] out_mult = out_b_i ? stat_b_out_i : out_scale_i;
  hwgen_fp32_mul u_out_scale (.a_i(f16_q), .b_i(out_mult), .product_o(o17_m));
  reg [31:0] r17_q, o17_q;
  wire [31:0] r17_d = square_i ? sq17_m : f16_q;
  wire [31:0] o17_d = o17_m;
  always @(posedge clk_i) begin
    r17_q <= r17_d;
    o17_q <= o17_d;
  end
  assign red_o   = r17_q;
  assign value_o = o17_q;
  wire [OUTPUT_W-1:0] code18;
  {{ c.leaves.row_out }} #(
    .OUT_W      (OUTPUT_W),
    .OUT_SIGNED (OUT_SIGNED),
    .ZP_W       (ZP_W)
  ) u_quantize (
    .value_i      (o17_q),
    .zero_point_i (zero_point_i),
    .code_o       (code18)
  );
  reg [OUTPUT_W-1:0] code18_q;
  wire [OUTPUT_W-1:0] code18_d = code18;
  always @(posedge clk_i) begin
    code18_q <= code18_d;
  end
  assign code_o = code18_q;

endmodule
