{{ c.banner }}
// Weight-stationary processing element. Activations flow right, partial sums flow down, and
// weights shift down a per-column chain into whichever of the two banks is idle, so the next
// tile's weights load while the current tile computes. Each activation carries the bank its
// tile uses. The multiply-add is the datapath's leaf, {{ c.leaves.mac }}.
module hwgen_pe #(
  parameter integer INPUT_W       = 8,
  parameter integer WEIGHT_W      = 8,
  parameter integer PSUM_W        = 32,
  parameter integer INPUT_SIGNED  = 1,
  parameter integer WEIGHT_SIGNED = 1
) (
  input  wire                clk_i,
  input  wire                {{ c.rst }},
  // activations, flowing right
  input  wire                act_valid_i,
  input  wire                act_bank_i,
  input  wire [INPUT_W-1:0]  act_i,
  output wire                act_valid_o,
  output wire                act_bank_o,
  output wire [INPUT_W-1:0]  act_o,
  // partial sums, flowing down
  input  wire [PSUM_W-1:0]   psum_i,
  output wire [PSUM_W-1:0]   psum_o,
  // weight shift chain, flowing down
  input  wire                wshift_en_i,
  input  wire                wshift_bank_i,
  input  wire [WEIGHT_W-1:0] weight_i,
  output wire [WEIGHT_W-1:0] weight_o
);

  reg                 act_valid_q;
  reg                 act_bank_q;
  reg  [INPUT_W-1:0]  act_q;
  reg  [PSUM_W-1:0]   psum_q;
  reg  [PSUM_W-1:0]   psum_d;
  reg  [WEIGHT_W-1:0] weight0_q;
  reg  [WEIGHT_W-1:0] weight0_d;
  reg  [WEIGHT_W-1:0] weight1_q;
  reg  [WEIGHT_W-1:0] weight1_d;
  wire                act_valid_d = act_valid_i;
  wire                act_bank_d  = act_bank_i;
  wire [INPUT_W-1:0]  act_d       = act_i;
  wire [PSUM_W-1:0]   mac_psum;

  {{ c.leaves.mac }} #(
    .INPUT_W       (INPUT_W),
    .WEIGHT_W      (WEIGHT_W),
    .PSUM_W        (PSUM_W),
    .INPUT_SIGNED  (INPUT_SIGNED),
    .WEIGHT_SIGNED (WEIGHT_SIGNED)
  ) u_mac (
    .act_i    (act_i),
    .weight_i (act_bank_i ? weight1_q : weight0_q),
    .psum_i   (psum_i),
    .psum_o   (mac_psum)
  );

  always @* begin
    psum_d    = act_valid_i ? mac_psum : psum_i;
    weight0_d = weight0_q;
    weight1_d = weight1_q;
    if (wshift_en_i) begin
      if (wshift_bank_i) begin
        weight1_d = weight_i;
      end else begin
        weight0_d = weight_i;
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      act_valid_q <= 1'b0;
      act_bank_q  <= 1'b0;
      act_q       <= {INPUT_W{1'b0}};
      psum_q      <= {PSUM_W{1'b0}};
      weight0_q   <= {WEIGHT_W{1'b0}};
      weight1_q   <= {WEIGHT_W{1'b0}};
    end else begin
      act_valid_q <= act_valid_d;
      act_bank_q  <= act_bank_d;
      act_q       <= act_d;
      psum_q      <= psum_d;
      weight0_q   <= weight0_d;
      weight1_q   <= weight1_d;
    end
  end

  assign act_valid_o = act_valid_q;
  assign act_bank_o  = act_bank_q;
  assign act_o       = act_q;
  assign psum_o      = psum_q;
  assign weight_o    = wshift_bank_i ? weight1_q : weight0_q;

endmodule
