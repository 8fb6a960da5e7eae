{{ c.banner }}
// CPF x KPF weight-stationary systolic array (CPF rows: the reduction over input channels;
// KPF columns: output channels). The input vector (one element per row) enters aligned and
// is skewed here: row r is delayed r cycles. Column c's result leaves the bottom after
// CPF + c cycles and is deskewed, so out_psum_o holds one aligned result vector LATENCY
// cycles after its input vector. A tag of TAG_W bits travels alongside each vector.
//
// Weight rows enter at the top of every column and shift down its chain into the idle bank,
// on the same wavefront as the activations: column c's chain runs c cycles late, and row r
// joins the shift only at the tile's row r (its first r rows pass above it). So element
// (r, c) is first written r + c cycles after the tile's first row arrives, which is after
// every vector that entered the array before that row has passed it: a bank can be refilled
// as soon as the last vector using it has entered, with no wait for the array to drain. The
// rows of one tile must arrive in consecutive cycles (row r joins one cycle after the row
// above has started shifting), and a cycle without a row must separate two tiles (it
// restarts the wavefront).
module hwgen_systolic_array #(
  parameter integer CPF           = 8,
  parameter integer KPF           = 8,
  parameter integer INPUT_W       = 8,
  parameter integer WEIGHT_W      = 8,
  parameter integer PSUM_W        = 32,
  parameter integer INPUT_SIGNED  = 1,
  parameter integer WEIGHT_SIGNED = 1,
  parameter integer TAG_W         = 1
) (
  input  wire                    clk_i,
  input  wire                    {{ c.rst }},
  // input vectors
  input  wire                    in_valid_i,
  input  wire                    in_bank_i,
  input  wire [TAG_W-1:0]        in_tag_i,
  input  wire [CPF*INPUT_W-1:0]  in_act_i,
  // weight rows, shifted in at the top of every column
  input  wire                    wshift_en_i,
  input  wire                    wshift_bank_i,
  input  wire [KPF*WEIGHT_W-1:0] wshift_row_i,
  // result vectors
  output wire                    out_valid_o,
  output wire [TAG_W-1:0]        out_tag_o,
  output wire [KPF*PSUM_W-1:0]   out_psum_o
);

  localparam integer LATENCY = CPF + KPF - 1;

  // The weight chain's input, skewed per column: column c's row, enable and bank, c cycles
  // late.
  wire [KPF*WEIGHT_W-1:0] top_weight;
  wire [KPF-1:0]          col_shift;
  wire [KPF-1:0]          col_bank;

  // Each row drives its own outputs, declared in its generate block; the next row reads
  // them by name (no net spans the whole array).
  genvar row;
  genvar col;

  generate
    for (row = 0; row < CPF; row = row + 1) begin : gen_row
      wire                    skew_valid;
      wire                    skew_bank;
      wire [INPUT_W-1:0]      skew_act;
      wire [KPF*PSUM_W-1:0]   psum;
      wire [KPF*WEIGHT_W-1:0] weight;
      wire [KPF*PSUM_W-1:0]   up_psum;
      wire [KPF*WEIGHT_W-1:0] up_weight;
      // Columns whose chain shifts this row this cycle.
      wire [KPF-1:0]          row_shift;
      // Skew: row r sees the vector r cycles late.
      hwgen_delay #(
        .WIDTH (INPUT_W + 2),
        .DEPTH (row)
      ) u_skew (
        .clk_i  (clk_i),
        .{{ c.rst }} ({{ c.rst }}),
        .data_i ({in_valid_i, in_bank_i, in_act_i[row*INPUT_W +: INPUT_W]}),
        .data_o ({skew_valid, skew_bank, skew_act})
      );

      if (row == 0) begin : gen_top_edge
        // Partial sums start at zero at the top; weights enter at the top.
        assign up_psum   = {(KPF*PSUM_W){1'b0}};
        assign up_weight = top_weight;
        assign row_shift = col_shift;
      end else begin : gen_up
        // The row shifts in a column once the row above has shifted there the cycle before.
        wire [KPF-1:0] up_shifted;
        hwgen_delay #(
          .WIDTH (KPF),
          .DEPTH (1)
        ) u_started (
          .clk_i  (clk_i),
          .{{ c.rst }} ({{ c.rst }}),
          .data_i (gen_row[row-1].row_shift),
          .data_o (up_shifted)
        );
        assign up_psum   = gen_row[row-1].psum;
        assign up_weight = gen_row[row-1].weight;
        assign row_shift = col_shift & up_shifted;
      end

      hwgen_pe_row #(
        .KPF           (KPF),
        .INPUT_W       (INPUT_W),
        .WEIGHT_W      (WEIGHT_W),
        .PSUM_W        (PSUM_W),
        .INPUT_SIGNED  (INPUT_SIGNED),
        .WEIGHT_SIGNED (WEIGHT_SIGNED)
      ) u_row (
        .clk_i         (clk_i),
        .{{ c.rst }}   ({{ c.rst }}),
        .act_valid_i   (skew_valid),
        .act_bank_i    (skew_bank),
        .act_i         (skew_act),
        .psum_i        (up_psum),
        .psum_o        (psum),
        .wshift_en_i   (row_shift),
        .wshift_bank_i (col_bank),
        .weight_i      (up_weight),
        .weight_o      (weight)
      );
    end

    for (col = 0; col < KPF; col = col + 1) begin : gen_weight_skew
      hwgen_delay #(
        .WIDTH (WEIGHT_W + 2),
        .DEPTH (col)
      ) u_skew (
        .clk_i  (clk_i),
        .{{ c.rst }} ({{ c.rst }}),
        .data_i ({wshift_en_i, wshift_bank_i, wshift_row_i[col*WEIGHT_W +: WEIGHT_W]}),
        .data_o ({col_shift[col], col_bank[col], top_weight[col*WEIGHT_W +: WEIGHT_W]})
      );
    end

    for (col = 0; col < KPF; col = col + 1) begin : gen_edge
      // Deskew: column c leaves KPF-1-c cycles before the last one.
      hwgen_delay #(
        .WIDTH (PSUM_W),
        .DEPTH (KPF - 1 - col)
      ) u_deskew (
        .clk_i  (clk_i),
        .{{ c.rst }} ({{ c.rst }}),
        .data_i (gen_row[CPF-1].psum[col*PSUM_W +: PSUM_W]),
        .data_o (out_psum_o[col*PSUM_W +: PSUM_W])
      );
    end
  endgenerate

  // The weights leaving the bottom of the chains are not needed.
  wire unused_weight_bottom;
  assign unused_weight_bottom = ^gen_row[CPF-1].weight;

  hwgen_delay #(
    .WIDTH (TAG_W + 1),
    .DEPTH (LATENCY)
  ) u_valid_tag (
    .clk_i  (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .data_i ({in_valid_i, in_tag_i}),
    .data_o ({out_valid_o, out_tag_o})
  );

endmodule
