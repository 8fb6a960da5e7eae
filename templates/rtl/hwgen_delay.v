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

  genvar stage;

  generate
    if (DEPTH == 0) begin : gen_wire
      wire unused_clk_rst;
      assign unused_clk_rst = clk_i ^ {{ c.rst }};
      assign data_o = data_i;
    end else begin : gen_stages
      // One register per stage, each reset on its own (no reset constant as wide as the
      // whole line, which grows with the array for the skew and valid delays).
      for (stage = 0; stage < DEPTH; stage = stage + 1) begin : gen_stage
        reg  [WIDTH-1:0] stage_q;
        wire [WIDTH-1:0] stage_d;
        if (stage == 0) begin : gen_first
          assign stage_d = data_i;
        end else begin : gen_next
          assign stage_d = gen_stage[stage-1].stage_q;
        end

        always @(posedge clk_i{{ c.rst_edge }}) begin
          if ({{ c.rst_on }}) begin
            stage_q <= {WIDTH{1'b0}};
          end else begin
            stage_q <= stage_d;
          end
        end
      end

      assign data_o = gen_stage[DEPTH-1].stage_q;
    end
  endgenerate

endmodule
