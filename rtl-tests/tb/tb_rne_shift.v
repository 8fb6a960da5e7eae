// Testbench of hwgen_rne_shift: applies one vector per clock cycle from a $readmemh file
// and writes each result as a hex line.
//   +vec=FILE   lines {k[7:0], q[7:0]} (q in its low W bits)  -> +out=FILE lines of q_o
//   +n=N        number of vectors.
module tb #(
  parameter integer W     = 8,
  parameter integer MAX_N = 1 << 17
) (
  input wire clk_i
);
  reg [15:0]      vectors [0:MAX_N-1];
  reg [1023:0]    vec_file;
  reg [1023:0]    out_file;
  integer         n;
  integer         fd;
  integer         index;
  reg [W-1:0]     q;
  reg [7:0]       k;
  wire [W-1:0]    y;

  hwgen_rne_shift #(
    .W   (W),
    .K_W (8)
  ) u_dut (
    .q_i (q),
    .k_i (k),
    .q_o (y)
  );

  initial begin
    if (!$value$plusargs("vec=%s", vec_file)) $fatal(1, "missing +vec");
    if (!$value$plusargs("out=%s", out_file)) $fatal(1, "missing +out");
    if (!$value$plusargs("n=%d", n)) $fatal(1, "missing +n");
    if (n > MAX_N) $fatal(1, "more than MAX_N vectors");
    $readmemh(vec_file, vectors, 0, n - 1);
    fd = $fopen(out_file, "w");
    index = 0;
    q = {W{1'b0}};
    k = 8'd0;
    apply_vector;
  end

  always @(negedge clk_i) begin
    apply_vector;
  end

  task apply_vector;
  begin
    if (index < n) begin
      q = vectors[index][W-1:0];
      k = vectors[index][15:8];
    end
  end
  endtask

  always @(posedge clk_i) begin
    if (index < n) $fwrite(fd, "%h\n", y);
    index = index + 1;
    if (index >= n) begin
      $fclose(fd);
      $finish;
    end
  end
endmodule
