{{ c.banner }}
// CPF x KPF weight-stationary systolic array (CPF rows: the reduction over input channels;
// KPF columns: output channels). The input vector (one element per row) enters aligned and
// is skewed here: row r is delayed r cycles. Column c's result leaves the bottom after
// CPF + c cycles and is deskewed, so out_psum_o holds one aligned result vector LATENCY
// cycles after its input vector. A tag of TAG_W bits travels alongside each vector.
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

  // Nets between processing elements, indexed [row][col] in flattened vectors.
  wire [CPF*(KPF+1)-1:0]          act_valid;
  wire [CPF*(KPF+1)-1:0]          act_bank;
  wire [CPF*(KPF+1)*INPUT_W-1:0]  act;
  wire [(CPF+1)*KPF*PSUM_W-1:0]   psum;
  wire [(CPF+1)*KPF*WEIGHT_W-1:0] weight;

  genvar row;
  genvar col;

  generate
    for (row = 0; row < CPF; row = row + 1) begin : gen_row
      // Skew: row r sees the vector r cycles late.
      hwgen_delay #(
        .WIDTH (INPUT_W + 2),
        .DEPTH (row)
      ) u_skew (
        .clk_i  (clk_i),
        .{{ c.rst }} ({{ c.rst }}),
        .data_i ({in_valid_i, in_bank_i, in_act_i[row*INPUT_W +: INPUT_W]}),
        .data_o ({act_valid[row*(KPF+1)], act_bank[row*(KPF+1)],
                  act[row*(KPF+1)*INPUT_W +: INPUT_W]})
      );

      for (col = 0; col < KPF; col = col + 1) begin : gen_col
        hwgen_pe #(
          .INPUT_W       (INPUT_W),
          .WEIGHT_W      (WEIGHT_W),
          .PSUM_W         (PSUM_W),
          .INPUT_SIGNED  (INPUT_SIGNED),
          .WEIGHT_SIGNED (WEIGHT_SIGNED)
        ) u_pe (
          .clk_i         (clk_i),
          .{{ c.rst }}   ({{ c.rst }}),
          .act_valid_i   (act_valid[row*(KPF+1) + col]),
          .act_bank_i    (act_bank[row*(KPF+1) + col]),
          .act_i         (act[(row*(KPF+1) + col)*INPUT_W +: INPUT_W]),
          .act_valid_o   (act_valid[row*(KPF+1) + col + 1]),
          .act_bank_o    (act_bank[row*(KPF+1) + col + 1]),
          .act_o         (act[(row*(KPF+1) + col + 1)*INPUT_W +: INPUT_W]),
          .psum_i        (psum[(row*KPF + col)*PSUM_W +: PSUM_W]),
          .psum_o        (psum[((row+1)*KPF + col)*PSUM_W +: PSUM_W]),
          .wshift_en_i   (wshift_en_i),
          .wshift_bank_i (wshift_bank_i),
          .weight_i      (weight[(row*KPF + col)*WEIGHT_W +: WEIGHT_W]),
          .weight_o      (weight[((row+1)*KPF + col)*WEIGHT_W +: WEIGHT_W])
        );
      end

      // The activation leaving the right edge is not needed.
      wire unused_act_right;
      assign unused_act_right = ^{act_valid[row*(KPF+1) + KPF], act_bank[row*(KPF+1) + KPF],
                                  act[(row*(KPF+1) + KPF)*INPUT_W +: INPUT_W]};
    end

    for (col = 0; col < KPF; col = col + 1) begin : gen_edge
      // Partial sums start at zero at the top; weights enter at the top.
      assign psum[col*PSUM_W +: PSUM_W] = {PSUM_W{1'b0}};
      assign weight[col*WEIGHT_W +: WEIGHT_W] = wshift_row_i[col*WEIGHT_W +: WEIGHT_W];

      // Deskew: column c leaves KPF-1-c cycles before the last one.
      hwgen_delay #(
        .WIDTH (PSUM_W),
        .DEPTH (KPF - 1 - col)
      ) u_deskew (
        .clk_i  (clk_i),
        .{{ c.rst }} ({{ c.rst }}),
        .data_i (psum[(CPF*KPF + col)*PSUM_W +: PSUM_W]),
        .data_o (out_psum_o[col*PSUM_W +: PSUM_W])
      );

      // The weight leaving the bottom of the chain is not needed.
      wire unused_weight_bottom;
      assign unused_weight_bottom = ^weight[(CPF*KPF + col)*WEIGHT_W +: WEIGHT_W];
    end
  endgenerate

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
