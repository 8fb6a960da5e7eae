{{ c.banner }}
// The reduction of a row's LANES values (numeric::rows::reduce_row): the lanes not in
// lane_mask_i read -infinity for a maximum and +0 for a sum, then a pairwise tree, lane 2j
// with lane 2j + 1, level by level, one level a register stage: the result leaves
// $clog2(LANES) cycles after its row arrives (a wire for one lane).
module hwgen_row_reduce #(
  parameter integer LANES = 8
) (
  input  wire              clk_i,
  input  wire              max_i,
  input  wire [LANES-1:0]  lane_mask_i,
  input  wire [32*LANES-1:0] values_i,
  output wire [31:0]       result_o
);

  localparam integer LEVELS = $clog2(LANES);
  localparam [31:0]  NEG_INF = 32'hff80_0000;

  genvar level, j;
  generate
    for (level = 0; level <= LEVELS; level = level + 1) begin : gen_level
      localparam integer N = LANES >> level;
      wire [32*N-1:0] value;
      // The mode travels with the row through the levels.
      wire            mode;
      if (level == 0) begin : gen_inputs
        assign mode = max_i;
        for (j = 0; j < N; j = j + 1) begin : gen_in
          assign value[32*j +: 32] = lane_mask_i[j] ? values_i[32*j +: 32]
                                   : (max_i ? NEG_INF : 32'd0);
        end
      end else begin : gen_pairs
        reg max_q;
        wire max_d = gen_level[level-1].mode;
        always @(posedge clk_i) begin
          max_q <= max_d;
        end
        assign mode = max_q;
        for (j = 0; j < N; j = j + 1) begin : gen_pair
          wire [31:0] x = gen_level[level-1].value[32*(2*j) +: 32];
          wire [31:0] y = gen_level[level-1].value[32*(2*j+1) +: 32];
          wire [31:0] s, m;
          hwgen_fp32_add u_add (.a_i(x), .b_i(y), .sum_o(s));
          hwgen_fp32_max u_max (.a_i(x), .b_i(y), .max_o(m));
          reg [31:0] r_q;
          wire [31:0] r_d = gen_level[level-1].mode ? m : s;
          always @(posedge clk_i) begin
            r_q <= r_d;
          end
          assign value[32*j +: 32] = r_q;
        end
      end
    end
  endgenerate

  assign result_o = gen_level[LEVELS].value[31:0];

  wire unused_mode;
  assign unused_mode = gen_level[LEVELS].mode;

endmodule
