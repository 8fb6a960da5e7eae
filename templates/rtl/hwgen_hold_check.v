{{ c.banner }}
// Simulation-only check of one valid/ready channel: data offered (valid_i) and not accepted
// (ready_i low) must stay offered, and unchanged, until the cycle it is accepted. The
// instance name (%m) says which channel broke the rule. Under SYNTHESIS the module is empty.
module hwgen_hold_check #(
  parameter integer WIDTH = 1
) (
  input  wire             clk_i,
  input  wire             {{ c.rst }},
  input  wire             valid_i,
  input  wire             ready_i,
  input  wire [WIDTH-1:0] data_i
);

`ifndef SYNTHESIS
  reg              held_q;
  reg  [WIDTH-1:0] data_q;
  wire             held_d = {{ c.rst_off }} && valid_i && !ready_i;
  wire [WIDTH-1:0] data_d = data_i;

  always @(posedge clk_i) begin
    if (held_q && !(valid_i && (data_i == data_q))) begin
      $display("ERROR: %m: valid was withdrawn or data changed before the transfer was accepted");
      $stop;
    end
    held_q <= held_d;
    data_q <= data_d;
  end
`endif

endmodule
