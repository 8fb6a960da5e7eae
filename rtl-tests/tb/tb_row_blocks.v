// Testbench of the row unit's blocks: applies one vector a cycle to each block from its
// $readmemh file and writes each result as a hex line (a pipelined block's result of vector
// k LAT cycles after it). Files are named by plusargs +NAME=FILE, +NAME_out=FILE, +n_NAME=N
// for NAME in:
//   mul      {a, b}                      -> a * b              (hwgen_fp32_mul)
//   int      {33-bit integer}            -> FP32               (hwgen_int_to_fp32)
//   max      {a, b}                      -> max(a, b)          (hwgen_fp32_max)
//   quant    {value, zero point (16)}    -> {signed code, unsigned code} (hwgen_fp32_quantize)
//   recip    {x}                         -> 1 / x              (hwgen_fp32_recip, 26 cycles)
//   sqrt     {x}                         -> sqrt(x)            (hwgen_fp32_sqrt, 26 cycles)
//   finish   {mode (4), a, b, 1/n, eps}  -> {a, b}             (hwgen_row_finish, 54 cycles)
//   reduce   {max (4), mask (8), 8 values} -> result            (hwgen_row_reduce, 3 cycles)
//   lane     {acc, operand (8), bias, scale, shift, stat a, stat b, gamma, beta}
//                                        -> {reduction value, code} (hwgen_row_lane, 17/18)
// The lane's instruction fields come from +lane_flags=HEX (bit 0 src_float, 1 bias, 2
// scale, 3 opnd, 4 centre, 5 norm, 6 affine, 7 exp, 8 spline, 9 square, 10 src_zero, 11
// out_b), +opnd_scale,
// +opnd_zero, +out_scale (FP32 hex), +zero_point (16-bit hex) and +table=FILE (the words a
// spline table uses, `HWGEN_SPLINE_USED).
`include "hwgen_isa.vh"
module tb #(
  parameter integer MAX_N = 1 << 18
) (
  input wire clk_i
);
  // ---- vectors and files ------------------------------------------------------------------
  reg [63:0]  mul_v    [0:MAX_N-1];
  reg [63:0]  int_v    [0:MAX_N-1];
  reg [63:0]  max_v    [0:MAX_N-1];
  reg [47:0]  quant_v  [0:MAX_N-1];
  reg [31:0]  recip_v  [0:MAX_N-1];
  reg [31:0]  sqrt_v   [0:MAX_N-1];
  reg [131:0] finish_v [0:MAX_N-1];
  reg [271:0] reduce_v [0:MAX_N-1];
  reg [295:0] lane_v   [0:MAX_N-1];
  reg [31:0]  table_v  [0:`HWGEN_SPLINE_USED-1];
  integer n_mul, n_int, n_max, n_quant, n_recip, n_sqrt, n_finish, n_reduce, n_lane;
  integer fd_mul, fd_int, fd_max, fd_quant, fd_recip, fd_sqrt, fd_finish, fd_reduce, fd_lane;
  reg [1023:0] file;
  integer cycle;
  integer total;

  // The lane's instruction.
  reg [31:0] lane_flags;
  reg [31:0] opnd_scale;
  reg [31:0] opnd_zero;
  reg [31:0] out_scale;
  reg [15:0] zero_point;
  reg [32*`HWGEN_SPLINE_USED-1:0] table_bits;

  integer k;
  initial begin
    n_mul = 0; n_int = 0; n_max = 0; n_quant = 0; n_recip = 0; n_sqrt = 0; n_finish = 0;
    n_reduce = 0; n_lane = 0;
    if ($value$plusargs("n_mul=%d", n_mul) && n_mul > 0) begin
      if (!$value$plusargs("mul=%s", file)) $fatal(1, "missing +mul");
      $readmemh(file, mul_v, 0, n_mul - 1);
      if (!$value$plusargs("mul_out=%s", file)) $fatal(1, "missing +mul_out");
      fd_mul = $fopen(file, "w");
    end
    if ($value$plusargs("n_int=%d", n_int) && n_int > 0) begin
      if (!$value$plusargs("int=%s", file)) $fatal(1, "missing +int");
      $readmemh(file, int_v, 0, n_int - 1);
      if (!$value$plusargs("int_out=%s", file)) $fatal(1, "missing +int_out");
      fd_int = $fopen(file, "w");
    end
    if ($value$plusargs("n_max=%d", n_max) && n_max > 0) begin
      if (!$value$plusargs("max=%s", file)) $fatal(1, "missing +max");
      $readmemh(file, max_v, 0, n_max - 1);
      if (!$value$plusargs("max_out=%s", file)) $fatal(1, "missing +max_out");
      fd_max = $fopen(file, "w");
    end
    if ($value$plusargs("n_quant=%d", n_quant) && n_quant > 0) begin
      if (!$value$plusargs("quant=%s", file)) $fatal(1, "missing +quant");
      $readmemh(file, quant_v, 0, n_quant - 1);
      if (!$value$plusargs("quant_out=%s", file)) $fatal(1, "missing +quant_out");
      fd_quant = $fopen(file, "w");
    end
    if ($value$plusargs("n_recip=%d", n_recip) && n_recip > 0) begin
      if (!$value$plusargs("recip=%s", file)) $fatal(1, "missing +recip");
      $readmemh(file, recip_v, 0, n_recip - 1);
      if (!$value$plusargs("recip_out=%s", file)) $fatal(1, "missing +recip_out");
      fd_recip = $fopen(file, "w");
    end
    if ($value$plusargs("n_sqrt=%d", n_sqrt) && n_sqrt > 0) begin
      if (!$value$plusargs("sqrt=%s", file)) $fatal(1, "missing +sqrt");
      $readmemh(file, sqrt_v, 0, n_sqrt - 1);
      if (!$value$plusargs("sqrt_out=%s", file)) $fatal(1, "missing +sqrt_out");
      fd_sqrt = $fopen(file, "w");
    end
    if ($value$plusargs("n_finish=%d", n_finish) && n_finish > 0) begin
      if (!$value$plusargs("finish=%s", file)) $fatal(1, "missing +finish");
      $readmemh(file, finish_v, 0, n_finish - 1);
      if (!$value$plusargs("finish_out=%s", file)) $fatal(1, "missing +finish_out");
      fd_finish = $fopen(file, "w");
    end
    if ($value$plusargs("n_reduce=%d", n_reduce) && n_reduce > 0) begin
      if (!$value$plusargs("reduce=%s", file)) $fatal(1, "missing +reduce");
      $readmemh(file, reduce_v, 0, n_reduce - 1);
      if (!$value$plusargs("reduce_out=%s", file)) $fatal(1, "missing +reduce_out");
      fd_reduce = $fopen(file, "w");
    end
    if ($value$plusargs("n_lane=%d", n_lane) && n_lane > 0) begin
      if (!$value$plusargs("lane=%s", file)) $fatal(1, "missing +lane");
      $readmemh(file, lane_v, 0, n_lane - 1);
      if (!$value$plusargs("lane_out=%s", file)) $fatal(1, "missing +lane_out");
      fd_lane = $fopen(file, "w");
      if (!$value$plusargs("table=%s", file)) $fatal(1, "missing +table");
      $readmemh(file, table_v, 0, `HWGEN_SPLINE_USED - 1);
      for (k = 0; k < `HWGEN_SPLINE_USED; k = k + 1) begin
        table_bits[32*k +: 32] = table_v[k];
      end
      if (!$value$plusargs("lane_flags=%h", lane_flags)) $fatal(1, "missing +lane_flags");
      if (!$value$plusargs("opnd_scale=%h", opnd_scale)) $fatal(1, "missing +opnd_scale");
      if (!$value$plusargs("opnd_zero=%h", opnd_zero)) $fatal(1, "missing +opnd_zero");
      if (!$value$plusargs("out_scale=%h", out_scale)) $fatal(1, "missing +out_scale");
      if (!$value$plusargs("zero_point=%h", zero_point)) $fatal(1, "missing +zero_point");
    end
    total = n_mul;
    if (n_int > total) total = n_int;
    if (n_max > total) total = n_max;
    if (n_quant > total) total = n_quant;
    if (n_recip + 26 > total) total = n_recip + 26;
    if (n_sqrt + 26 > total) total = n_sqrt + 26;
    if (n_finish + 54 > total) total = n_finish + 54;
    if (n_reduce + 3 > total) total = n_reduce + 3;
    if (n_lane + 18 > total) total = n_lane + 18;
    cycle = 0;
  end

  // Vector k of a file (zero past its end or before its start).
  function [295:0] pick_lane;
    input integer i;
    begin
      pick_lane = (i >= 0 && i < n_lane) ? lane_v[i] : 296'd0;
    end
  endfunction

  // ---- blocks -----------------------------------------------------------------------------
  wire [31:0] mul_out, int_out, max_out, recip_out, sqrt_out, reduce_out;
  wire [7:0]  quant_s, quant_u;
  wire [31:0] fin_a, fin_b;
  wire [63:0]  mv = (cycle < n_mul) ? mul_v[cycle] : 64'd0;
  wire [63:0]  iv = (cycle < n_int) ? int_v[cycle] : 64'd0;
  wire [63:0]  xv = (cycle < n_max) ? max_v[cycle] : 64'd0;
  wire [47:0]  qv = (cycle < n_quant) ? quant_v[cycle] : 48'd0;
  wire [31:0]  rv = (cycle < n_recip) ? recip_v[cycle] : 32'd0;
  wire [31:0]  sv = (cycle < n_sqrt) ? sqrt_v[cycle] : 32'd0;
  wire [131:0] fv = (cycle < n_finish) ? finish_v[cycle] : 132'd0;
  wire [271:0] dv = (cycle < n_reduce) ? reduce_v[cycle] : 272'd0;

  hwgen_fp32_mul u_mul (.a_i(mv[63:32]), .b_i(mv[31:0]), .product_o(mul_out));
  hwgen_int_to_fp32 #(.IN_W(33)) u_int (.value_i(iv[32:0]), .fp_o(int_out));
  hwgen_fp32_max u_max (.a_i(xv[63:32]), .b_i(xv[31:0]), .max_o(max_out));
  hwgen_fp32_quantize #(.OUT_W(8), .OUT_SIGNED(1), .ZP_W(16)) u_quant_s (
    .value_i(qv[47:16]), .zero_point_i(qv[15:0]), .code_o(quant_s));
  hwgen_fp32_quantize #(.OUT_W(8), .OUT_SIGNED(0), .ZP_W(16)) u_quant_u (
    .value_i(qv[47:16]), .zero_point_i(qv[15:0]), .code_o(quant_u));
  hwgen_fp32_recip u_recip (.clk_i(clk_i), .x_i(rv), .y_o(recip_out));
  hwgen_fp32_sqrt u_sqrt (.clk_i(clk_i), .x_i(sv), .y_o(sqrt_out));
  hwgen_row_finish u_finish (
    .clk_i   (clk_i),
    .mode_i  (fv[129:128]),
    .a_i     (fv[127:96]),
    .b_i     (fv[95:64]),
    .inv_n_i (fv[63:32]),
    .eps_i   (fv[31:0]),
    .a_o     (fin_a),
    .b_o     (fin_b)
  );
  hwgen_row_reduce #(.LANES(8)) u_reduce (
    .clk_i       (clk_i),
    .max_i       (dv[264]),
    .lane_mask_i (dv[263:256]),
    .values_i    (dv[255:0]),
    .result_o    (reduce_out)
  );

  // The lane: vector k's element at cycle k, its parameters in the cycles of their stages.
  wire [295:0] l0 = pick_lane(cycle);
  wire [295:0] l1 = pick_lane(cycle - 1);
  wire [295:0] l2 = pick_lane(cycle - 2);
  wire [295:0] l4 = pick_lane(cycle - 4);
  wire [295:0] l5 = pick_lane(cycle - 5);
  wire [295:0] l6 = pick_lane(cycle - 6);
  wire [295:0] l7 = pick_lane(cycle - 7);
  wire [295:0] l16 = pick_lane(cycle - 16);
  wire [31:0] lane_red;
  wire [7:0]  lane_code;
  hwgen_row_lane #(.ACC_W(32), .OUTPUT_W(8), .OUT_SIGNED(1), .ZP_W(16)) u_lane (
    .clk_i         (clk_i),
    .src_float_i   (lane_flags[0]),
    .bias_i        (lane_flags[1]),
    .scale_i       (lane_flags[2]),
    .opnd_i        (lane_flags[3]),
    .centre_i      (lane_flags[4]),
    .norm_i        (lane_flags[5]),
    .affine_i      (lane_flags[6]),
    .exp_i         (lane_flags[7]),
    .spline_i      (lane_flags[8]),
    .square_i      (lane_flags[9]),
    .src_zero_i    (lane_flags[10]),
    .out_b_i       (lane_flags[11]),
    .opnd_scale_i  (opnd_scale),
    .opnd_zero_i   (opnd_zero),
    .out_scale_i   (out_scale),
    .zero_point_i  (zero_point),
    .table_i       (table_bits),
    .acc_i         (l0[295:264]),
    .operand_i     (l0[263:256]),
    .bias_value_i  (l0[255:224]),
    .scale_value_i (l1[223:192]),
    .shift_value_i (l2[191:160]),
    .stat_a_i      (l4[159:128]),
    .stat_b_i      (l5[127:96]),
    .stat_b_out_i  (l16[127:96]),
    .gamma_value_i (l6[95:64]),
    .beta_value_i  (l7[63:32]),
    .red_o         (lane_red),
    .code_o        (lane_code)
  );

  // ---- results ----------------------------------------------------------------------------
  // The lane's reduction value one cycle later, beside its code.
  reg [31:0] red_q17;
  always @(posedge clk_i) begin
    red_q17 <= lane_red;
  end

  always @(posedge clk_i) begin
    if (cycle < n_mul) $fwrite(fd_mul, "%h\n", mul_out);
    if (cycle < n_int) $fwrite(fd_int, "%h\n", int_out);
    if (cycle < n_max) $fwrite(fd_max, "%h\n", max_out);
    if (cycle < n_quant) $fwrite(fd_quant, "%h%h\n", quant_s, quant_u);
    if (cycle >= 26 && cycle - 26 < n_recip) $fwrite(fd_recip, "%h\n", recip_out);
    if (cycle >= 26 && cycle - 26 < n_sqrt) $fwrite(fd_sqrt, "%h\n", sqrt_out);
    if (cycle >= 54 && cycle - 54 < n_finish) $fwrite(fd_finish, "%h%h\n", fin_a, fin_b);
    if (cycle >= 3 && cycle - 3 < n_reduce) $fwrite(fd_reduce, "%h\n", reduce_out);
    // The reduction value leaves stage 17 (the register of cycle k + 17), the code stage 18.
    if (cycle >= 18 && cycle - 18 < n_lane) $fwrite(fd_lane, "%h%h\n", red_q17, lane_code);
    cycle = cycle + 1;
    if (cycle > total) begin
      if (n_mul > 0) $fclose(fd_mul);
      if (n_int > 0) $fclose(fd_int);
      if (n_max > 0) $fclose(fd_max);
      if (n_quant > 0) $fclose(fd_quant);
      if (n_recip > 0) $fclose(fd_recip);
      if (n_sqrt > 0) $fclose(fd_sqrt);
      if (n_finish > 0) $fclose(fd_finish);
      if (n_reduce > 0) $fclose(fd_reduce);
      if (n_lane > 0) $fclose(fd_lane);
      $finish;
    end
  end
endmodule
