{{ c.banner }}
// Counting semaphore between one producer queue and one consumer queue. The producer
// releases (increments) when an instruction with this semaphore in its signal mask is done;
// the consumer acquires (decrements) before starting an instruction that waits on it. A
// release that would overflow sets the sticky overflow_o flag (a program error).
module hwgen_semaphore #(
  parameter integer COUNT_W = 4
) (
  input  wire clk_i,
  input  wire {{ c.rst }},
  input  wire clear_i,
  input  wire release_i,
  input  wire acquire_i,
  output wire available_o,
  output wire overflow_o
);

  localparam [COUNT_W-1:0] COUNT_ONE = 1;
  localparam [COUNT_W-1:0] COUNT_MAX = {COUNT_W{1'b1}};

  reg [COUNT_W-1:0] count_q;
  reg [COUNT_W-1:0] count_d;
  reg               overflow_q;
  reg               overflow_d;

  always @* begin
    count_d    = count_q;
    overflow_d = overflow_q;
    if (clear_i) begin
      count_d    = {COUNT_W{1'b0}};
      overflow_d = 1'b0;
    end else if (release_i && !acquire_i) begin
      if (count_q == COUNT_MAX) begin
        overflow_d = 1'b1;
      end else begin
        count_d = count_q + COUNT_ONE;
      end
    end else if (acquire_i && !release_i) begin
      count_d = count_q - COUNT_ONE;
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      count_q    <= {COUNT_W{1'b0}};
      overflow_q <= 1'b0;
    end else begin
      count_q    <= count_d;
      overflow_q <= overflow_d;
    end
  end

  assign available_o = (count_q != {COUNT_W{1'b0}});
  assign overflow_o  = overflow_q;

`ifndef SYNTHESIS
  always @(posedge clk_i) begin
    if (acquire_i && !available_o) begin
      $display("ERROR: %m: acquired while the count is zero");
      $stop;
    end
  end
`endif

endmodule
