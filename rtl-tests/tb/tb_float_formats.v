// Testbench of a float-like format's blocks: the decoder of its codes with hwgen_fp_mul
// (the exact product of two codes as FP32) and the encoder of FP32 values. One vector per
// clock cycle from $readmemh files; each result is written as a hex line.
//   +mul=FILE      lines {a[15:0], b[15:0]} (codes, zero-extended)  -> +mul_out lines product
//                  (minifloats: product, then a as FP32 by hwgen_mini_to_fp32)
//   +conv=FILE     lines value[31:0]                                -> +conv_out lines code
//   +n_mul=N +n_conv=M  number of vectors in each file.
// Built with +define+HWGEN_POSIT for posits (N, ES), else for minifloats (EXP_W, MAN_W,
// BIAS, IEEE).
module tb #(
  parameter integer EXP_W  = 4,
  parameter integer MAN_W  = 3,
  parameter integer BIAS   = 7,
  parameter integer IEEE   = 0,
  parameter integer N      = 8,
  parameter integer ES     = 2,
  parameter integer UEXP_W = 10,
  parameter integer MAX_N  = 1 << 19
) (
  input wire clk_i
);
`ifdef HWGEN_POSIT
  localparam integer W      = N;
  localparam integer USIG_W = N - 2 - ES;
`else
  localparam integer W      = 1 + EXP_W + MAN_W;
  localparam integer USIG_W = MAN_W + 1;
`endif
  localparam integer U_W    = UEXP_W + USIG_W + 4;

  reg [31:0]   mul_vectors [0:MAX_N-1];
  reg [31:0]   conv_vectors [0:MAX_N-1];
  reg [1023:0] mul_file;
  reg [1023:0] mul_out_file;
  reg [1023:0] conv_file;
  reg [1023:0] conv_out_file;
  integer n_mul;
  integer n_conv;
  integer mul_fd;
  integer conv_fd;
  integer index;

  reg  [W-1:0]   a;
  reg  [W-1:0]   b;
  wire [U_W-1:0] a_u;
  wire [U_W-1:0] b_u;
  wire [31:0]    product;
  reg  [31:0]    value;
  wire [W-1:0]   code;

`ifdef HWGEN_POSIT
  hwgen_unpack_posit #(.N(N), .ES(ES), .UEXP_W(UEXP_W)) u_decode_a (.code_i(a), .value_o(a_u));
  hwgen_unpack_posit #(.N(N), .ES(ES), .UEXP_W(UEXP_W)) u_decode_b (.code_i(b), .value_o(b_u));
  hwgen_fp32_to_posit #(.N(N), .ES(ES)) u_conv (.value_i(value), .code_o(code));
`else
  hwgen_unpack_mini #(.EXP_W(EXP_W), .MAN_W(MAN_W), .BIAS(BIAS), .IEEE(IEEE), .UEXP_W(UEXP_W))
    u_decode_a (.code_i(a), .value_o(a_u));
  hwgen_unpack_mini #(.EXP_W(EXP_W), .MAN_W(MAN_W), .BIAS(BIAS), .IEEE(IEEE), .UEXP_W(UEXP_W))
    u_decode_b (.code_i(b), .value_o(b_u));
  hwgen_fp32_to_mini #(.EXP_W(EXP_W), .MAN_W(MAN_W), .BIAS(BIAS), .IEEE(IEEE))
    u_conv (.value_i(value), .code_o(code));
  wire [31:0] a_fp;
  hwgen_mini_to_fp32 #(.EXP_W(EXP_W), .MAN_W(MAN_W), .BIAS(BIAS), .IEEE(IEEE))
    u_to_fp32 (.code_i(a), .fp_o(a_fp));
`endif

  hwgen_fp_mul #(
    .USIG_W (USIG_W),
    .UEXP_W (UEXP_W)
  ) u_mul (
    .a_i       (a_u),
    .b_i       (b_u),
    .product_o (product)
  );

  initial begin
    if (!$value$plusargs("mul=%s", mul_file)) $fatal(1, "missing +mul");
    if (!$value$plusargs("mul_out=%s", mul_out_file)) $fatal(1, "missing +mul_out");
    if (!$value$plusargs("conv=%s", conv_file)) $fatal(1, "missing +conv");
    if (!$value$plusargs("conv_out=%s", conv_out_file)) $fatal(1, "missing +conv_out");
    if (!$value$plusargs("n_mul=%d", n_mul)) $fatal(1, "missing +n_mul");
    if (!$value$plusargs("n_conv=%d", n_conv)) $fatal(1, "missing +n_conv");
    if (n_mul > MAX_N || n_conv > MAX_N) $fatal(1, "more than MAX_N vectors");
    if (n_mul > 0) $readmemh(mul_file, mul_vectors, 0, n_mul - 1);
    if (n_conv > 0) $readmemh(conv_file, conv_vectors, 0, n_conv - 1);
    mul_fd = $fopen(mul_out_file, "w");
    conv_fd = $fopen(conv_out_file, "w");
    index = 0;
    a = {W{1'b0}};
    b = {W{1'b0}};
    value = 32'd0;
    apply_vector;
  end

  // Apply vector `index`: before the first rising edge, then on every falling edge; its
  // result is recorded on the rising edge.
  always @(negedge clk_i) begin
    apply_vector;
  end

  task apply_vector;
  begin
    if (index < n_mul) begin
      a = mul_vectors[index][16 +: W];
      b = mul_vectors[index][0 +: W];
    end
    if (index < n_conv) begin
      value = conv_vectors[index];
    end
  end
  endtask

  always @(posedge clk_i) begin
`ifdef HWGEN_POSIT
    if (index < n_mul) $fwrite(mul_fd, "%h\n", product);
`else
    if (index < n_mul) $fwrite(mul_fd, "%h%h\n", product, a_fp);
`endif
    if (index < n_conv) $fwrite(conv_fd, "%h\n", code);
    index = index + 1;
    if (index >= n_mul && index >= n_conv) begin
      $fclose(mul_fd);
      $fclose(conv_fd);
      $finish;
    end
  end
endmodule
