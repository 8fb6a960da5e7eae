// Testbench of hwgen_semaphore: random releases and acquires (a consumer acquires only when
// available_o says it may) against a reference count; checks available_o every cycle, that
// a release at the maximum sets the sticky overflow flag and keeps the count, and that
// clear_i empties it. Prints "PASS <cycles>" or "ERROR ...".
module tb #(
  parameter integer COUNT_W = 3
) (
  input wire clk_i
);
  localparam integer MAX = (1 << COUNT_W) - 1;

  integer cycles;
  integer seed;
  integer cycle;
  integer count;
  integer overflowed;

  reg  rst_ni;
  reg  clear;
  reg  release_q;
  reg  acquire_q;
  wire available;
  wire overflow;

  hwgen_semaphore #(
    .COUNT_W (COUNT_W)
  ) dut (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .clear_i     (clear),
    .release_i   (release_q),
    .acquire_i   (acquire_q),
    .available_o (available),
    .overflow_o  (overflow)
  );

  initial begin
    if (!$value$plusargs("cycles=%d", cycles)) cycles = 5000;
    if (!$value$plusargs("seed=%d", seed)) seed = 1;
    cycle = 0;
    count = 0;
    overflowed = 0;
    rst_ni = 1'b0;
    clear = 1'b0;
    release_q = 1'b0;
    acquire_q = 1'b0;
  end

  always @(posedge clk_i) begin
    if (rst_ni) begin
      if (available != (count > 0)) begin
        $display("ERROR: cycle %0d: available_o=%0d with count %0d", cycle, available, count);
        $finish;
      end
      if (overflow != (overflowed != 0)) begin
        $display("ERROR: cycle %0d: overflow_o=%0d, reference %0d", cycle, overflow, overflowed);
        $finish;
      end
      if (clear) begin
        count = 0;
        overflowed = 0;
      end else if (release_q && !acquire_q) begin
        if (count == MAX) overflowed = 1;
        else count = count + 1;
      end else if (acquire_q && !release_q) begin
        count = count - 1;
      end
      if (cycle >= cycles) begin
        $display("PASS %0d", cycle);
        $finish;
      end
    end
  end

  always @(negedge clk_i) begin
    cycle = cycle + 1;
    rst_ni <= (cycle > 2);
    // Phases: mostly releases (fill to overflow), then balanced, then mostly acquires.
    release_q <= (($random(seed) % 100 + 100) % 100) < ((cycle % 600 < 200) ? 70 : (cycle % 600 < 400) ? 50 : 20);
    acquire_q <= available && ((($random(seed) % 100 + 100) % 100) < 50);
    clear     <= (($random(seed) % 1000 + 1000) % 1000) == 0;
  end
endmodule
