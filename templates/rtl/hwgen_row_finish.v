{{ c.banner }}
// A pixel's statistics finished after a pass's last tile (numeric::rows::finish), in a
// pipeline of LATENCY = 54 stages, one pixel a cycle: mode 1 b = 1 / b; 2 a = a * (1/n);
// 3 b = 1 / sqrt(b * (1/n) + epsilon); 0 unchanged. The stages: the product, the sum, the
// square root (26 stages), the reciprocal (26).
module hwgen_row_finish (
  input  wire        clk_i,
  input  wire [1:0]  mode_i,
  input  wire [31:0] a_i,
  input  wire [31:0] b_i,
  input  wire [31:0] inv_n_i,
  input  wire [31:0] eps_i,
  output wire [31:0] a_o,
  output wire [31:0] b_o
);

  localparam integer ROOT  = 26;                   // hwgen_fp32_sqrt's stages
  localparam integer RECIP = 26;                   // hwgen_fp32_recip's stages
  localparam [1:0]   RECIP_B = 2'd1;
  localparam [1:0]   MEAN_A  = 2'd2;
  localparam [1:0]   RSTD_B  = 2'd3;

  // What travels beside the arithmetic: {mode, a, b, the product}.
  localparam integer CARRY_W = 2 + 32 + 32 + 32;

  wire [31:0] m1;
  hwgen_fp32_mul u_mul (.a_i((mode_i == MEAN_A) ? a_i : b_i), .b_i(inv_n_i), .product_o(m1));
  reg  [CARRY_W-1:0] c1_q;
  reg  [31:0]        eps1_q;
  wire [CARRY_W-1:0] c1_d = {mode_i, a_i, b_i, m1};
  wire [31:0] eps1_d = eps_i;
  always @(posedge clk_i) begin
    c1_q   <= c1_d;
    eps1_q <= eps1_d;
  end
  wire [31:0] s2;
  hwgen_fp32_add u_add (.a_i(c1_q[31:0]), .b_i(eps1_q), .sum_o(s2));
  reg  [CARRY_W-1:0] c2_q;
  reg  [31:0]        s2_q;
  wire [CARRY_W-1:0] c2_d = c1_q;
  wire [31:0] s2_d = s2;
  always @(posedge clk_i) begin
    c2_q <= c2_d;
    s2_q <= s2_d;
  end
  wire [31:0] root;
  hwgen_fp32_sqrt u_sqrt (.clk_i(clk_i), .x_i(s2_q), .y_o(root));

  // The carry through the root's stages, then through the reciprocal's.
  genvar k;
  generate
    for (k = 0; k < ROOT + RECIP; k = k + 1) begin : gen_carry
      reg [CARRY_W-1:0] c_q;
      wire [CARRY_W-1:0] c_d = (k == 0) ? c2_q : gen_carry[(k == 0) ? 0 : k - 1].c_q;
      always @(posedge clk_i) begin
        c_q <= c_d;
      end
    end
  endgenerate
  wire [CARRY_W-1:0] c_root = gen_carry[ROOT-1].c_q;
  wire [CARRY_W-1:0] c_out  = gen_carry[ROOT+RECIP-1].c_q;

  wire [31:0] inv;
  hwgen_fp32_recip u_recip (
    .clk_i (clk_i),
    .x_i   ((c_root[97:96] == RECIP_B) ? c_root[63:32] : root),
    .y_o   (inv)
  );

  wire [1:0] mode = c_out[97:96];
  assign a_o = (mode == MEAN_A) ? c_out[31:0] : c_out[95:64];
  assign b_o = ((mode == RECIP_B) || (mode == RSTD_B)) ? inv : c_out[63:32];

  wire unused_bits;
  assign unused_bits = ^{c_root[95:64], c_root[31:0]};

endmodule
