// Testbench of hwgen_fp32_to_int: applies one vector per clock cycle from a $readmemh file
// and writes each result as a hex line.
//   +vec=FILE   lines {relu (4 bits), scale[7:0], value[31:0]}  -> +out=FILE lines q
//   +n=N        number of vectors.
module tb #(
  parameter integer OUTPUT_W = 8,
  parameter integer FRAC     = 6,
  parameter integer MAX_N    = 1 << 19
) (
  input wire clk_i
);
  reg [43:0]      vectors [0:MAX_N-1];
  reg [1023:0]    vec_file;
  reg [1023:0]    out_file;
  integer         n;
  integer         fd;
  integer         index;
  reg [31:0]      value;
  reg [7:0]       scale;
  reg             relu;
  wire [OUTPUT_W-1:0] q;

  hwgen_fp32_to_int #(
    .OUTPUT_W (OUTPUT_W),
    .FRAC  (FRAC)
  ) u_dut (
    .value_i  (value),
    .scale_i  (scale),
    .relu_i   (relu),
    .result_o (q)
  );

  initial begin
    if (!$value$plusargs("vec=%s", vec_file)) $fatal(1, "missing +vec");
    if (!$value$plusargs("out=%s", out_file)) $fatal(1, "missing +out");
    if (!$value$plusargs("n=%d", n)) $fatal(1, "missing +n");
    if (n > MAX_N) $fatal(1, "more than MAX_N vectors");
    $readmemh(vec_file, vectors, 0, n - 1);
    fd = $fopen(out_file, "w");
    index = 0;
    value = 32'd0;
    scale = 8'd0;
    relu  = 1'b0;
    apply_vector;
  end

  // Apply vector `index`: before the first rising edge, then on every falling edge; its
  // result is recorded on the rising edge.
  always @(negedge clk_i) begin
    apply_vector;
  end

  task apply_vector;
  begin
    if (index < n) begin
      value = vectors[index][31:0];
      scale = vectors[index][39:32];
      relu  = vectors[index][40];
    end
  end
  endtask

  always @(posedge clk_i) begin
    if (index < n) $fwrite(fd, "%h\n", q);
    index = index + 1;
    if (index >= n) begin
      $fclose(fd);
      $finish;
    end
  end
endmodule
