{{ c.banner }}
// Simple dual-port synchronous RAM (one write port, one read port, one cycle read latency),
// written in the form synthesis tools infer as block RAM. Contents are not reset; programs
// and data are loaded by the testbench or by the load unit. Addresses arrive ADDR_W bits wide
// (the width of an instruction's address field); the low INDEX_W bits select the row.
module hwgen_sram #(
  parameter integer WIDTH   = 64,
  parameter integer DEPTH   = 256,
  parameter integer ADDR_W  = 16,
  parameter integer INDEX_W = 8
) (
  input  wire              clk_i,
  input  wire              we_i,
  input  wire [ADDR_W-1:0] waddr_i,
  input  wire [WIDTH-1:0]  wdata_i,
  input  wire              re_i,
  input  wire [ADDR_W-1:0] raddr_i,
  output wire [WIDTH-1:0]  rdata_o
);

  reg [WIDTH-1:0] mem [0:DEPTH-1];
  reg [WIDTH-1:0] rdata_q;

  wire [INDEX_W-1:0] windex = waddr_i[INDEX_W-1:0];
  wire [INDEX_W-1:0] rindex = raddr_i[INDEX_W-1:0];

  generate
    if (ADDR_W > INDEX_W) begin : gen_addr_hi
      // Rows beyond DEPTH wrap; the assembler refuses addresses past the end.
      wire unused_addr_hi;
      assign unused_addr_hi = ^{waddr_i[ADDR_W-1:INDEX_W], raddr_i[ADDR_W-1:INDEX_W]};
    end
  endgenerate

  always @(posedge clk_i) begin
    if (we_i) begin
      mem[windex] <= wdata_i;
    end
    if (re_i) begin
      rdata_q <= mem[rindex];
    end
  end

  assign rdata_o = rdata_q;

endmodule
