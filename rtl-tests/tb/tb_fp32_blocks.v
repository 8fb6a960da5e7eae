// Testbench of the FP32 arithmetic blocks: applies one vector per clock cycle from
// $readmemh files and writes each result as a hex line.
//   +add=FILE      lines {a[31:0], b[31:0]}              -> +add_out lines sum
//   +dequant=FILE  lines {psum (32-bit, sign-extended), scale_a, scale_b}
//                                                         -> +dequant_out lines value
//   +n_add=N +n_dequant=M  number of vectors in each file.
module tb #(
  parameter integer PSUM_W = 21,
  parameter integer FRAC   = 6,
  parameter integer MAX_N  = 1 << 20
) (
  input wire clk_i
);
  reg [63:0] add_vectors [0:MAX_N-1];
  reg [47:0] dequant_vectors [0:MAX_N-1];
  reg [1023:0] add_file;
  reg [1023:0] add_out_file;
  reg [1023:0] dequant_file;
  reg [1023:0] dequant_out_file;
  integer n_add;
  integer n_dequant;
  integer add_fd;
  integer dequant_fd;
  integer index;

  reg  [31:0]       a;
  reg  [31:0]       b;
  wire [31:0]       sum;
  reg  [PSUM_W-1:0] psum;
  reg  [7:0]        scale_a;
  reg  [7:0]        scale_b;
  wire [31:0]       value;

  hwgen_fp32_add u_add (
    .a_i   (a),
    .b_i   (b),
    .sum_o (sum)
  );

  hwgen_mx_dequant #(
    .PSUM_W (PSUM_W),
    .FRAC   (FRAC)
  ) u_dequant (
    .psum_i    (psum),
    .scale_a_i (scale_a),
    .scale_b_i (scale_b),
    .value_o   (value)
  );

  initial begin
    if (!$value$plusargs("add=%s", add_file)) $fatal(1, "missing +add");
    if (!$value$plusargs("add_out=%s", add_out_file)) $fatal(1, "missing +add_out");
    if (!$value$plusargs("dequant=%s", dequant_file)) $fatal(1, "missing +dequant");
    if (!$value$plusargs("dequant_out=%s", dequant_out_file)) $fatal(1, "missing +dequant_out");
    if (!$value$plusargs("n_add=%d", n_add)) $fatal(1, "missing +n_add");
    if (!$value$plusargs("n_dequant=%d", n_dequant)) $fatal(1, "missing +n_dequant");
    if (n_add > MAX_N || n_dequant > MAX_N) $fatal(1, "more than MAX_N vectors");
    if (n_add > 0) $readmemh(add_file, add_vectors, 0, n_add - 1);
    if (n_dequant > 0) $readmemh(dequant_file, dequant_vectors, 0, n_dequant - 1);
    add_fd = $fopen(add_out_file, "w");
    dequant_fd = $fopen(dequant_out_file, "w");
    index = 0;
    a = 32'd0;
    b = 32'd0;
    psum = {PSUM_W{1'b0}};
    scale_a = 8'd0;
    scale_b = 8'd0;
    apply_vector;
  end

  // Apply vector `index`: before the first rising edge, then on every falling edge; its
  // result is recorded on the rising edge.
  always @(negedge clk_i) begin
    apply_vector;
  end

  task apply_vector;
  begin
    if (index < n_add) begin
      a = add_vectors[index][63:32];
      b = add_vectors[index][31:0];
    end
    if (index < n_dequant) begin
      psum = dequant_vectors[index][16 +: PSUM_W];
      scale_a = dequant_vectors[index][15:8];
      scale_b = dequant_vectors[index][7:0];
    end
  end
  endtask

  always @(posedge clk_i) begin
    if (index < n_add) $fwrite(add_fd, "%h\n", sum);
    if (index < n_dequant) $fwrite(dequant_fd, "%h\n", value);
    index = index + 1;
    if (index >= n_add && index >= n_dequant) begin
      $fclose(add_fd);
      $fclose(dequant_fd);
      $finish;
    end
  end
endmodule
