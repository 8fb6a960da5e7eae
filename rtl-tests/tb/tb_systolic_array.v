// Testbench of hwgen_systolic_array: two weight tiles, the second shifted into the idle bank
// while the first tile's vectors stream, then the second tile's vectors back to back, with
// pseudo-random bubbles. Every result row is written to +out=FILE as hex, one per line,
// preceded by its tag (the vector's sequence number).
//   +weights=FILE  2*CPF lines of KPF*WEIGHT_W bits: tile 0 rows 0..CPF-1, then tile 1
//   +acts=FILE     N0+N1 lines of CPF*INPUT_W bits
//   +n0=N0 +n1=N1 +seed=S
//   +gap=G  (optional) shift tile 1 in only once tile 0's vectors are all in, and send its
//           first vector G cycles after its last weight row (without +gap: as soon as
//           tile 0's vectors are done and tile 1 is in, at least a cycle after its last row)
module tb #(
  parameter integer CPF           = 4,
  parameter integer KPF           = 4,
  parameter integer INPUT_W       = 8,
  parameter integer WEIGHT_W      = 8,
  parameter integer PSUM_W        = 32,
  parameter integer INPUT_SIGNED  = 1,
  parameter integer WEIGHT_SIGNED = 1
) (
  input wire clk_i
);
  localparam integer MAX_VEC = 4096;
  localparam integer TAG_W   = 16;

  reg [KPF*WEIGHT_W-1:0] weights [0:2*CPF-1];
  reg [CPF*INPUT_W-1:0]  acts    [0:MAX_VEC-1];
  reg [1023:0]            weights_file;
  reg [1023:0]            acts_file;
  reg [1023:0]            out_file;
  integer                 n0;
  integer                 n1;
  integer                 seed;
  integer                 fd;
  integer                 cycle;
  integer                 sent;
  integer                 shifted0;
  integer                 shifted1;
  integer                 received;
  integer                 gap;
  integer                 last_row;
  reg                     tile1_ready;

  reg                     rst_ni;
  reg                     in_valid;
  reg                     in_bank;
  reg [TAG_W-1:0]         in_tag;
  reg [CPF*INPUT_W-1:0]   in_act;
  reg                     wshift_en;
  reg                     wshift_bank;
  reg [KPF*WEIGHT_W-1:0]  wshift_row;
  wire                    out_valid;
  wire [TAG_W-1:0]        out_tag;
  wire [KPF*PSUM_W-1:0]   out_psum;

  hwgen_systolic_array #(
    .CPF           (CPF),
    .KPF           (KPF),
    .INPUT_W       (INPUT_W),
    .WEIGHT_W      (WEIGHT_W),
    .PSUM_W        (PSUM_W),
    .INPUT_SIGNED  (INPUT_SIGNED),
    .WEIGHT_SIGNED (WEIGHT_SIGNED),
    .TAG_W         (TAG_W)
  ) dut (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .in_valid_i    (in_valid),
    .in_bank_i     (in_bank),
    .in_tag_i      (in_tag),
    .in_act_i      (in_act),
    .wshift_en_i   (wshift_en),
    .wshift_bank_i (wshift_bank),
    .wshift_row_i  (wshift_row),
    .out_valid_o   (out_valid),
    .out_tag_o     (out_tag),
    .out_psum_o    (out_psum)
  );

  initial begin
    if (!$value$plusargs("weights=%s", weights_file)) $fatal(1, "missing +weights");
    if (!$value$plusargs("acts=%s", acts_file)) $fatal(1, "missing +acts");
    if (!$value$plusargs("out=%s", out_file)) $fatal(1, "missing +out");
    if (!$value$plusargs("n0=%d", n0)) $fatal(1, "missing +n0");
    if (!$value$plusargs("n1=%d", n1)) $fatal(1, "missing +n1");
    if (!$value$plusargs("seed=%d", seed)) seed = 1;
    if (!$value$plusargs("gap=%d", gap)) gap = 0;
    last_row = 0;
    $readmemh(weights_file, weights);
    $readmemh(acts_file, acts);
    fd = $fopen(out_file, "w");
    cycle = 0;
    sent = 0;
    shifted0 = 0;
    shifted1 = 0;
    received = 0;
  end

  // Drive inputs on the falling edge so the DUT samples stable values.
  always @(negedge clk_i) begin
    rst_ni      <= (cycle >= 2);
    in_valid    <= 1'b0;
    wshift_en   <= 1'b0;
    wshift_bank <= 1'b0;
    wshift_row  <= {(KPF*WEIGHT_W){1'b0}};
    if (cycle >= 3) begin
      if (shifted0 < CPF) begin
        // Tile 0 into bank 0, last row first so row r ends in PE row r.
        wshift_en   <= 1'b1;
        wshift_bank <= 1'b0;
        wshift_row  <= weights[CPF - 1 - shifted0];
        shifted0    = shifted0 + 1;
      end else begin
        tile1_ready = (shifted1 == CPF) && (cycle - last_row >= gap);
        if (shifted1 < CPF && (gap == 0 || sent >= n0)) begin
          // Tile 1 into bank 1 while tile 0 computes (with +gap, after its vectors).
          wshift_en   <= 1'b1;
          wshift_bank <= 1'b1;
          wshift_row  <= weights[2*CPF - 1 - shifted1];
          shifted1    = shifted1 + 1;
          last_row    = cycle;
        end
        // Tile 1 vectors may start only once its bank is full; with +gap the first one
        // goes exactly gap cycles after the last weight row.
        if ((sent < n0 || tile1_ready) && sent < n0 + n1
            && (($random(seed) % 4) != 0 || (gap != 0 && sent == n0))) begin
          in_valid <= 1'b1;
          in_bank  <= (sent >= n0);
          in_tag   <= sent[TAG_W-1:0];
          in_act   <= acts[sent];
          sent     = sent + 1;
        end
      end
    end
    cycle = cycle + 1;
    if (cycle > 100000) $fatal(1, "timeout");
  end

  always @(posedge clk_i) begin
    if (rst_ni && out_valid) begin
      $fwrite(fd, "%0d %h\n", out_tag, out_psum);
      received = received + 1;
      if (received == n0 + n1) begin
        $fclose(fd);
        $finish;
      end
    end
  end
endmodule
