// Testbench of hwgen_fifo under random valid/ready stalls. The producer offers the sequence
// 0, 1, 2, ... and, as the protocol requires, keeps valid and data until accepted. The
// consumer accepts with probability +ready_pct and checks order, that out_valid_o never
// drops before a handshake, that data stays stable while stalled, and that count_o matches
// a reference count. Prints "PASS <n>" after +n items, or "ERROR ...".
module tb #(
  parameter integer DEPTH = 4,
  parameter integer PTR_W = 2,
  parameter integer WIDTH = 16
) (
  input wire clk_i
);
  integer n;
  integer valid_pct;
  integer ready_pct;
  integer seed;
  integer cycle;
  integer next_send;
  integer next_recv;
  integer occupancy;
  integer max_occupancy;

  reg                 rst_ni;
  reg                 in_valid;
  reg  [WIDTH-1:0]    in_data;
  wire                in_ready;
  wire                out_valid;
  reg                 out_ready;
  wire [WIDTH-1:0]    out_data;
  wire [PTR_W:0]      count;
  reg                 stalled_q;
  reg  [WIDTH-1:0]    stalled_data_q;

  hwgen_fifo #(
    .WIDTH   (WIDTH),
    .DEPTH   (DEPTH),
    .PTR_W   (PTR_W),
    .COUNT_W (PTR_W + 1)
  ) dut (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (in_valid),
    .in_ready_o  (in_ready),
    .in_data_i   (in_data),
    .out_valid_o (out_valid),
    .out_ready_i (out_ready),
    .out_data_o  (out_data),
    .count_o     (count)
  );

  initial begin
    if (!$value$plusargs("n=%d", n)) n = 1000;
    if (!$value$plusargs("valid_pct=%d", valid_pct)) valid_pct = 50;
    if (!$value$plusargs("ready_pct=%d", ready_pct)) ready_pct = 50;
    if (!$value$plusargs("seed=%d", seed)) seed = 1;
    cycle = 0;
    next_send = 0;
    next_recv = 0;
    occupancy = 0;
    max_occupancy = 0;
    rst_ni = 1'b0;
    in_valid = 1'b0;
    in_data = {WIDTH{1'b0}};
    out_ready = 1'b0;
    stalled_q = 1'b0;
    stalled_data_q = {WIDTH{1'b0}};
  end

  // Checks and the reference model, at the clock edge where handshakes happen.
  always @(posedge clk_i) begin
    if (rst_ni) begin
      if (count != occupancy[PTR_W:0]) begin
        $display("ERROR: count_o=%0d, reference %0d", count, occupancy);
        $finish;
      end
      if (stalled_q && (!out_valid || out_data != stalled_data_q)) begin
        $display("ERROR: output changed before it was accepted");
        $finish;
      end
      if (out_valid && out_ready) begin
        if (out_data != next_recv[WIDTH-1:0]) begin
          $display("ERROR: received %0d, expected %0d", out_data, next_recv);
          $finish;
        end
        next_recv = next_recv + 1;
      end
      if (in_valid && in_ready) begin
        next_send = next_send + 1;
      end
      occupancy = occupancy + ((in_valid && in_ready) ? 1 : 0) - ((out_valid && out_ready) ? 1 : 0);
      if (occupancy > max_occupancy) max_occupancy = occupancy;
      stalled_q      <= out_valid && !out_ready;
      stalled_data_q <= out_data;
      if (next_recv == n) begin
        $display("PASS %0d max_occupancy %0d", next_recv, max_occupancy);
        $finish;
      end
    end
  end

  // New stimulus on the falling edge: the producer keeps an offer until it is taken.
  always @(negedge clk_i) begin
    cycle = cycle + 1;
    rst_ni <= (cycle > 2);
    if (!in_valid || in_ready_seen) begin
      in_valid <= (next_send < n) && (($random(seed) % 100 + 100) % 100 < valid_pct);
      in_data  <= next_send[WIDTH-1:0];
    end
    out_ready <= (($random(seed) % 100 + 100) % 100 < ready_pct);
    if (cycle > 100 * n + 1000) begin
      $display("ERROR: timeout after %0d items", next_recv);
      $finish;
    end
  end

  // Whether the offer standing at the last rising edge was accepted there.
  reg in_ready_seen;
  always @(posedge clk_i) begin
    in_ready_seen <= in_valid && in_ready;
  end
  initial in_ready_seen = 1'b0;
endmodule
