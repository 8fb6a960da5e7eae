// Testbench of hwgen_vector_lane: each vector is held for the lane's four stages plus one
// cycle (the controls of an instruction are steady while its rows pass), and the result is
// written as a hex line.
//   +vec=FILE  lines of twelve 32-bit fields, first field highest:
//              {acc, bias, {neg_multiplier, multiplier}, shift, zero_point, clamp_max,
//               operand, flags = {mul, raw, half_even, leaky, bias, relu, add, pool, clamp},
//               {add_weight, opnd_weight}, add_shift, opnd_zero, add_zero}
//              -> +out=FILE lines result
//   +n=N       number of vectors.
module tb #(
  parameter integer ACC_W         = 32,
  parameter integer OUTPUT_W      = 8,
  parameter integer OUTPUT_SIGNED = 1,
  parameter integer MAX_N         = 1 << 19
) (
  input wire clk_i
);
  localparam integer HOLD = 5;

  reg [383:0]   vectors [0:MAX_N-1];
  reg [1023:0]  vec_file;
  reg [1023:0]  out_file;
  integer       n;
  integer       fd;
  integer       index;
  integer       phase;
  reg [383:0]   v;
  wire [OUTPUT_W-1:0] result;

  hwgen_vector_lane #(
    .ACC_W         (ACC_W),
    .OUTPUT_W      (OUTPUT_W),
    .OUTPUT_SIGNED (OUTPUT_SIGNED)
  ) u_dut (
    .clk_i        (clk_i),
    .rst_ni       (1'b1),
    .bias_i       (v[132]),
    .relu_i       (v[131]),
    .add_i        (v[130]),
    .pool_i       (v[129]),
    .clamp_i      (v[128]),
    .multiplier_i (v[288 +: 16]),
    .leaky_i      (v[133]),
    .half_even_i  (v[134]),
    .raw_i        (v[135]),
    .neg_multiplier_i (v[304 +: 16]),
    .shift_i      (v[256 +: 6]),
    .zero_point_i (v[224 +: 16]),
    .clamp_max_i  (v[192 +: 16]),
    .bias_value_i (v[320 +: ACC_W]),
    .mul_i        (v[136]),
    .add_weight_i (v[112 +: 16]),
    .opnd_weight_i (v[96 +: 16]),
    .add_shift_i  (v[64 +: 6]),
    .opnd_zero_i  (v[32 +: OUTPUT_W]),
    .add_zero_i   (v[0 +: 16]),
    .acc_i        (v[352 +: ACC_W]),
    .operand_i    (v[160 +: OUTPUT_W]),
    .result_o     (result)
  );

  initial begin
    if (!$value$plusargs("vec=%s", vec_file)) $fatal(1, "missing +vec");
    if (!$value$plusargs("out=%s", out_file)) $fatal(1, "missing +out");
    if (!$value$plusargs("n=%d", n)) $fatal(1, "missing +n");
    if (n > MAX_N) $fatal(1, "more than MAX_N vectors");
    $readmemh(vec_file, vectors, 0, n - 1);
    fd = $fopen(out_file, "w");
    index = 0;
    phase = 0;
    v = vectors[0];
  end

  always @(posedge clk_i) begin
    phase = phase + 1;
    if (phase == HOLD) begin
      $fwrite(fd, "%h\n", result);
      phase = 0;
      index = index + 1;
      if (index >= n) begin
        $fclose(fd);
        $finish;
      end
    end
  end

  always @(negedge clk_i) begin
    if (phase == 0 && index < n) v = vectors[index];
  end
endmodule
