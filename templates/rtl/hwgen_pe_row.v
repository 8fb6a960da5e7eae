{{ c.banner }}
// One row of the weight-stationary array: KPF processing elements side by side. Activations
// enter at the left and move one element right per cycle; partial sums enter from the row
// above and leave to the row below; weights shift down a per-column chain into whichever of
// the two banks is idle, so the next tile's weights load while the current tile computes.
// Each column's chain has its own shift enable and bank (the array skews them).
// Each activation carries the bank its tile uses. The multiply-add of each element is the
// datapath's leaf, {{ c.leaves.mac }}.
//
// The row keeps each register kind of its KPF elements in one vector (element c in slice c)
// rather than one module instance per element: the behaviour is the same, and Verilator
// handles one variable per register kind and row instead of one per element, which keeps
// the lint and build time of large arrays linear in their size.
module hwgen_pe_row #(
  parameter integer KPF           = 8,
  parameter integer INPUT_W       = 8,
  parameter integer WEIGHT_W      = 8,
  parameter integer PSUM_W        = 32,
  parameter integer INPUT_SIGNED  = 1,
  parameter integer WEIGHT_SIGNED = 1
) (
  input  wire                    clk_i,
  input  wire                    {{ c.rst }},
  // activations, entering at the left
  input  wire                    act_valid_i,
  input  wire                    act_bank_i,
  input  wire [INPUT_W-1:0]      act_i,
  // partial sums, from the row above and to the row below
  input  wire [KPF*PSUM_W-1:0]   psum_i,
  output wire [KPF*PSUM_W-1:0]   psum_o,
  // weight shift chains, from the row above and to the row below
  input  wire [KPF-1:0]          wshift_en_i,
  input  wire [KPF-1:0]          wshift_bank_i,
  input  wire [KPF*WEIGHT_W-1:0] weight_i,
  output wire [KPF*WEIGHT_W-1:0] weight_o
);

  reg  [KPF-1:0]          act_valid_q;
  reg  [KPF-1:0]          act_bank_q;
  reg  [KPF*INPUT_W-1:0]  act_q;
  reg  [KPF*PSUM_W-1:0]   psum_q;
  reg  [KPF*WEIGHT_W-1:0] weight0_q;
  reg  [KPF*WEIGHT_W-1:0] weight1_q;
  wire [KPF*PSUM_W-1:0]   psum_d;
  wire [KPF*PSUM_W-1:0]   mac_psum;

  // Slot c of a chain is what element c sees from its left; slot KPF leaves the right edge.
  wire [KPF:0]               valid_chain = {act_valid_q, act_valid_i};
  wire [KPF:0]               bank_chain  = {act_bank_q, act_bank_i};
  wire [(KPF+1)*INPUT_W-1:0] act_chain   = {act_q, act_i};
  wire [KPF-1:0]             act_valid_d = valid_chain[KPF-1:0];
  wire [KPF-1:0]             act_bank_d  = bank_chain[KPF-1:0];
  wire [KPF*INPUT_W-1:0]     act_d       = act_chain[KPF*INPUT_W-1:0];
  wire [KPF*WEIGHT_W-1:0]    weight0_d;
  wire [KPF*WEIGHT_W-1:0]    weight1_d;

  // The activation leaving the right edge is not needed.
  wire unused_act_right;
  assign unused_act_right = ^{valid_chain[KPF], bank_chain[KPF],
                              act_chain[KPF*INPUT_W +: INPUT_W]};

  genvar col;

  generate
    for (col = 0; col < KPF; col = col + 1) begin : gen_pe
      wire                valid = valid_chain[col];
      wire [PSUM_W-1:0]   up    = psum_i[col*PSUM_W +: PSUM_W];
      wire [WEIGHT_W-1:0] weight = bank_chain[col] ? weight1_q[col*WEIGHT_W +: WEIGHT_W]
                                                   : weight0_q[col*WEIGHT_W +: WEIGHT_W];

      {{ c.leaves.mac }} #(
        .INPUT_W       (INPUT_W),
        .WEIGHT_W      (WEIGHT_W),
        .PSUM_W        (PSUM_W),
        .INPUT_SIGNED  (INPUT_SIGNED),
        .WEIGHT_SIGNED (WEIGHT_SIGNED)
      ) u_mac (
        .act_i    (act_chain[col*INPUT_W +: INPUT_W]),
        .weight_i (weight),
        .psum_i   (up),
        .psum_o   (mac_psum[col*PSUM_W +: PSUM_W])
      );

      assign psum_d[col*PSUM_W +: PSUM_W] = valid ? mac_psum[col*PSUM_W +: PSUM_W] : up;

      // The column's weight chain: shift into the bank being filled, pass that bank down.
      wire [WEIGHT_W-1:0] w_in  = weight_i[col*WEIGHT_W +: WEIGHT_W];
      wire [WEIGHT_W-1:0] w0    = weight0_q[col*WEIGHT_W +: WEIGHT_W];
      wire [WEIGHT_W-1:0] w1    = weight1_q[col*WEIGHT_W +: WEIGHT_W];
      wire                load0 = wshift_en_i[col] && !wshift_bank_i[col];
      wire                load1 = wshift_en_i[col] && wshift_bank_i[col];
      assign weight0_d[col*WEIGHT_W +: WEIGHT_W] = load0 ? w_in : w0;
      assign weight1_d[col*WEIGHT_W +: WEIGHT_W] = load1 ? w_in : w1;
      assign weight_o[col*WEIGHT_W +: WEIGHT_W]  = wshift_bank_i[col] ? w1 : w0;
    end
  endgenerate

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      act_valid_q <= {KPF{1'b0}};
      act_bank_q  <= {KPF{1'b0}};
      act_q       <= {(KPF*INPUT_W){1'b0}};
      psum_q      <= {(KPF*PSUM_W){1'b0}};
      weight0_q   <= {(KPF*WEIGHT_W){1'b0}};
      weight1_q   <= {(KPF*WEIGHT_W){1'b0}};
    end else begin
      act_valid_q <= act_valid_d;
      act_bank_q  <= act_bank_d;
      act_q       <= act_d;
      psum_q      <= psum_d;
      weight0_q   <= weight0_d;
      weight1_q   <= weight1_d;
    end
  end

  assign psum_o = psum_q;

endmodule
