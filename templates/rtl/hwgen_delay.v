{{ c.banner }}
// Fixed-latency delay line: data_o is data_i delayed by DEPTH cycles (a wire when DEPTH = 0).
module hwgen_delay #(
  parameter integer WIDTH = 1,
  parameter integer DEPTH = 1
) (
  input  wire             clk_i,
  input  wire             {{ c.rst }},
  input  wire [WIDTH-1:0] data_i,
  output wire [WIDTH-1:0] data_o
);

  generate
    if (DEPTH == 0) begin : gen_wire
      wire unused_clk_rst;
      assign unused_clk_rst = clk_i ^ {{ c.rst }};
      assign data_o = data_i;
    end else begin : gen_stages
      reg  [WIDTH*DEPTH-1:0] stages_q;
      wire [WIDTH*DEPTH-1:0] stages_d;
      if (DEPTH == 1) begin : gen_single
        assign stages_d = data_i;
      end else begin : gen_chain
        assign stages_d = {stages_q[WIDTH*(DEPTH-1)-1:0], data_i};
      end

      always @(posedge clk_i{{ c.rst_edge }}) begin
        if ({{ c.rst_on }}) begin
          stages_q <= {(WIDTH*DEPTH){1'b0}};
        end else begin
          stages_q <= stages_d;
        end
      end

      assign data_o = stages_q[WIDTH*DEPTH-1 -: WIDTH];
    end
  endgenerate

endmodule
