{{ c.banner }}
// A scratchpad shared by two readers and two writers, in BANKS banks (1, or 2 when double-
// buffered; the bank is the address bit above the per-bank index). The high-priority reader
// and writer are always served; the low-priority ones are granted when they address a bank
// the high-priority one does not use in that cycle. Each reader has its own data output.
module hwgen_shared_buffer #(
  parameter integer WIDTH   = 256,
  parameter integer DEPTH   = 256,
  parameter integer INDEX_W = 8,
  parameter integer BANKS   = 1,
  parameter integer ADDR_W  = 16
) (
  input  wire              clk_i,
  input  wire              {{ c.rst }},
  // high-priority reader
  input  wire              hi_rd_valid_i,
  input  wire [ADDR_W-1:0] hi_rd_addr_i,
  output wire [WIDTH-1:0]  hi_rd_data_o,
  // low-priority reader
  input  wire              lo_rd_valid_i,
  input  wire [ADDR_W-1:0] lo_rd_addr_i,
  output wire              lo_rd_grant_o,
  output wire [WIDTH-1:0]  lo_rd_data_o,
  // high-priority writer
  input  wire              hi_wr_valid_i,
  input  wire [ADDR_W-1:0] hi_wr_addr_i,
  input  wire [WIDTH-1:0]  hi_wr_data_i,
  // low-priority writer
  input  wire              lo_wr_valid_i,
  input  wire [ADDR_W-1:0] lo_wr_addr_i,
  input  wire [WIDTH-1:0]  lo_wr_data_i,
  output wire              lo_wr_grant_o
);

  wire [BANKS*WIDTH-1:0] bank_rdata;
  wire                   hi_rd_bank;
  wire                   lo_rd_bank;
  wire                   hi_wr_bank;
  wire                   lo_wr_bank;

  generate
    if (BANKS == 2) begin : gen_two_banks
      assign hi_rd_bank = hi_rd_addr_i[INDEX_W];
      assign lo_rd_bank = lo_rd_addr_i[INDEX_W];
      assign hi_wr_bank = hi_wr_addr_i[INDEX_W];
      assign lo_wr_bank = lo_wr_addr_i[INDEX_W];
    end else begin : gen_one_bank
      assign hi_rd_bank = 1'b0;
      assign lo_rd_bank = 1'b0;
      assign hi_wr_bank = 1'b0;
      assign lo_wr_bank = 1'b0;
    end
  endgenerate

  assign lo_rd_grant_o = lo_rd_valid_i && !(hi_rd_valid_i && (hi_rd_bank == lo_rd_bank));
  assign lo_wr_grant_o = lo_wr_valid_i && !(hi_wr_valid_i && (hi_wr_bank == lo_wr_bank));

  // Which bank each reader read last cycle, to steer the read data back.
  reg  hi_rd_bank_q;
  reg  lo_rd_bank_q;
  wire hi_rd_bank_d = hi_rd_bank;
  wire lo_rd_bank_d = lo_rd_bank;

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      hi_rd_bank_q <= 1'b0;
      lo_rd_bank_q <= 1'b0;
    end else begin
      hi_rd_bank_q <= hi_rd_bank_d;
      lo_rd_bank_q <= lo_rd_bank_d;
    end
  end

  genvar bank;
  generate
    for (bank = 0; bank < BANKS; bank = bank + 1) begin : gen_bank
      localparam [0:0] BANK_ID = bank;
      wire hi_rd_here = hi_rd_valid_i && (hi_rd_bank == BANK_ID);
      wire hi_wr_here = hi_wr_valid_i && (hi_wr_bank == BANK_ID);
      wire lo_rd_here = lo_rd_grant_o && (lo_rd_bank == BANK_ID);
      wire lo_wr_here = lo_wr_grant_o && (lo_wr_bank == BANK_ID);

      hwgen_sram #(
        .WIDTH   (WIDTH),
        .DEPTH   (DEPTH),
        .ADDR_W  (ADDR_W),
        .INDEX_W (INDEX_W)
      ) u_sram (
        .clk_i   (clk_i),
        .we_i    (hi_wr_here || lo_wr_here),
        .waddr_i (hi_wr_here ? hi_wr_addr_i : lo_wr_addr_i),
        .wdata_i (hi_wr_here ? hi_wr_data_i : lo_wr_data_i),
        .re_i    (hi_rd_here || lo_rd_here),
        .raddr_i (hi_rd_here ? hi_rd_addr_i : lo_rd_addr_i),
        .rdata_o (bank_rdata[bank*WIDTH +: WIDTH])
      );
    end
  endgenerate

  generate
    if (BANKS == 2) begin : gen_two_outputs
      assign hi_rd_data_o = hi_rd_bank_q ? bank_rdata[WIDTH +: WIDTH] : bank_rdata[0 +: WIDTH];
      assign lo_rd_data_o = lo_rd_bank_q ? bank_rdata[WIDTH +: WIDTH] : bank_rdata[0 +: WIDTH];
    end else begin : gen_one_output
      assign hi_rd_data_o = bank_rdata;
      assign lo_rd_data_o = bank_rdata;
      wire unused_bank_q;
      assign unused_bank_q = hi_rd_bank_q ^ lo_rd_bank_q;
    end
  endgenerate

endmodule
