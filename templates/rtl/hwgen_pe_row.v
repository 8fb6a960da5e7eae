{{ c.banner }}
// One row of the weight-stationary array: KPF processing elements side by side. Activations
// enter at the left and move one element right per cycle; partial sums enter from the row
// above and leave to the row below; weights shift down a per-column chain into whichever of
// the two banks is idle, so the next tile's weights load while the current tile computes.
// Each column's chain has its own shift enable and bank (the array skews them).
// Each activation carries the bank its tile uses.
{%- if c.gate_acts %}
//
// A product with a zero activation adds nothing to a partial sum ({{ c.leaves.mac }}'s
// integer products), so an invalid activation enters as zero and every element adds its
// product unconditionally: one gate per row instead of a partial-sum multiplexer per
// element.
{%- endif %}
{%- if c.pack_macs %}
//
// Packed multipliers (`[array] pack_macs`): columns 2p and 2p+1 share one multiplier,
// hwgen_mac_int_pair, which multiplies the activation column 2p holds by both columns'
// weights at once, as an FPGA's DSP block computes two 8-bit products. Column 2p+1 sees
// that activation a cycle later, so its product is made now, with its weight in the bank
// the activation carries, and kept a cycle. That weight is read a cycle before the column
// uses it, so a tile's first vector must enter the array at least two cycles after the
// tile's last weight row (one suffices without packing); hwgen_compute_unit sends it three
// cycles after.
{%- else %} The multiply-add of each element is the
// datapath's leaf, {{ c.leaves.mac }}.
{%- endif %}
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

  reg  [KPF-1:0]          act_bank_q;
{%- if !c.gate_acts %}
  reg  [KPF-1:0]          act_valid_q;
{%- endif %}
  reg  [KPF*INPUT_W-1:0]  act_q;
  reg  [KPF*PSUM_W-1:0]   psum_q;
  reg  [KPF*WEIGHT_W-1:0] weight0_q;
  reg  [KPF*WEIGHT_W-1:0] weight1_q;
  wire [KPF*PSUM_W-1:0]   psum_d;
  wire [KPF*PSUM_W-1:0]   mac_psum;
{%- if c.pack_macs %}
  // Width of the product a pair keeps a cycle: INPUT_W + WEIGHT_W + 2, or PSUM_W if narrower.
  localparam integer PAIR_W = (INPUT_W + WEIGHT_W + 2 < PSUM_W) ? INPUT_W + WEIGHT_W + 2 : PSUM_W;
{%- endif %}

  // Slot c of a chain is what element c sees from its left; slot KPF leaves the right edge.
{%- if c.gate_acts %}
  wire [INPUT_W-1:0]         act_in      = act_valid_i ? act_i : {INPUT_W{1'b0}};
  wire [KPF:0]               bank_chain  = {act_bank_q, act_bank_i};
  wire [(KPF+1)*INPUT_W-1:0] act_chain   = {act_q, act_in};
{%- else %}
  wire [KPF:0]               valid_chain = {act_valid_q, act_valid_i};
  wire [KPF:0]               bank_chain  = {act_bank_q, act_bank_i};
  wire [(KPF+1)*INPUT_W-1:0] act_chain   = {act_q, act_i};
  wire [KPF-1:0]             act_valid_d = valid_chain[KPF-1:0];
{%- endif %}
  wire [KPF-1:0]             act_bank_d  = bank_chain[KPF-1:0];
  wire [KPF*INPUT_W-1:0]     act_d       = act_chain[KPF*INPUT_W-1:0];
  wire [KPF*WEIGHT_W-1:0]    weight0_d;
  wire [KPF*WEIGHT_W-1:0]    weight1_d;

  // The activation leaving the right edge is not needed.
  wire unused_act_right;
{%- if c.gate_acts %}
  assign unused_act_right = ^{bank_chain[KPF], act_chain[KPF*INPUT_W +: INPUT_W]};
{%- else %}
  assign unused_act_right = ^{valid_chain[KPF], bank_chain[KPF],
                              act_chain[KPF*INPUT_W +: INPUT_W]};
{%- endif %}

  genvar col;

  generate
    for (col = 0; col < KPF; col = col + 1) begin : gen_pe
      wire [PSUM_W-1:0]   up    = psum_i[col*PSUM_W +: PSUM_W];
{%- if c.pack_macs %}

      if (col % 2 == 0) begin : gen_pair
        // The weights of this column and the next in the bank of the activation here now.
        wire [WEIGHT_W-1:0] weight_lo = bank_chain[col] ? weight1_q[col*WEIGHT_W +: WEIGHT_W]
                                                        : weight0_q[col*WEIGHT_W +: WEIGHT_W];
        wire [WEIGHT_W-1:0] weight_hi = bank_chain[col] ? weight1_q[(col+1)*WEIGHT_W +: WEIGHT_W]
                                                        : weight0_q[(col+1)*WEIGHT_W +: WEIGHT_W];
        wire [PSUM_W-1:0]   product_lo;
        wire [PAIR_W-1:0]   product_hi_d;
        // The next column's product, for the activation it sees next cycle.
        reg  [PAIR_W-1:0]   product_hi_q;

        hwgen_mac_int_pair #(
          .INPUT_W       (INPUT_W),
          .WEIGHT_W      (WEIGHT_W),
          .PSUM_W        (PSUM_W),
          .INPUT_SIGNED  (INPUT_SIGNED),
          .WEIGHT_SIGNED (WEIGHT_SIGNED),
          .PAIR_W        (PAIR_W)
        ) u_pair (
          .act_i        (act_chain[col*INPUT_W +: INPUT_W]),
          .weight_lo_i  (weight_lo),
          .weight_hi_i  (weight_hi),
          .product_lo_o (product_lo),
          .product_hi_o (product_hi_d)
        );

        always @(posedge clk_i{{ c.rst_edge }}) begin
          if ({{ c.rst_on }}) begin
            product_hi_q <= {PAIR_W{1'b0}};
          end else begin
            product_hi_q <= product_hi_d;
          end
        end

        assign mac_psum[col*PSUM_W +: PSUM_W] = up + product_lo;
      end else begin : gen_pair_hi
        wire [PAIR_W-1:0] kept = gen_pe[col-1].gen_pair.product_hi_q;
        wire [PSUM_W-1:0] product;
        if (PAIR_W < PSUM_W) begin : gen_ext
          assign product = { {(PSUM_W-PAIR_W){kept[PAIR_W-1]}}, kept};
        end else begin : gen_same
          assign product = kept;
        end
        assign mac_psum[col*PSUM_W +: PSUM_W] = up + product;
      end
{%- else %}
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
{%- endif %}

{%- if c.gate_acts %}

      assign psum_d[col*PSUM_W +: PSUM_W] = mac_psum[col*PSUM_W +: PSUM_W];
{%- else %}

      assign psum_d[col*PSUM_W +: PSUM_W] = valid_chain[col] ? mac_psum[col*PSUM_W +: PSUM_W]
                                                             : up;
{%- endif %}

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
{%- if !c.gate_acts %}
      act_valid_q <= {KPF{1'b0}};
{%- endif %}
      act_bank_q  <= {KPF{1'b0}};
      act_q       <= {(KPF*INPUT_W){1'b0}};
      psum_q      <= {(KPF*PSUM_W){1'b0}};
      weight0_q   <= {(KPF*WEIGHT_W){1'b0}};
      weight1_q   <= {(KPF*WEIGHT_W){1'b0}};
    end else begin
{%- if !c.gate_acts %}
      act_valid_q <= act_valid_d;
{%- endif %}
      act_bank_q  <= act_bank_d;
      act_q       <= act_d;
      psum_q      <= psum_d;
      weight0_q   <= weight0_d;
      weight1_q   <= weight1_d;
    end
  end

  assign psum_o = psum_q;

endmodule
