{{ c.banner }}
// Two-level strided address generator: for i1 < count1, for i0 < count0,
// addr = base + i1*stride1 + i0*stride0. index_o counts the iterations (i1*count0 + i0).
// Load the loop with start_i; step with advance_i while valid_o.
module hwgen_addr_gen #(
  parameter integer ADDR_W    = 32,
  parameter integer COUNT_W   = 12,
  parameter integer STRIDE0_W = 20,
  parameter integer STRIDE1_W = 24,
  parameter integer INDEX_W   = 24
) (
  input  wire                 clk_i,
  input  wire                 {{ c.rst }},
  input  wire                 start_i,
  input  wire [ADDR_W-1:0]    base_i,
  input  wire [COUNT_W-1:0]   count0_i,
  input  wire [STRIDE0_W-1:0] stride0_i,
  input  wire [COUNT_W-1:0]   count1_i,
  input  wire [STRIDE1_W-1:0] stride1_i,
  input  wire                 advance_i,
  output wire                 valid_o,
  output wire                 last_o,
  output wire [ADDR_W-1:0]    addr_o,
  output wire [INDEX_W-1:0]   index_o
);

  localparam [COUNT_W-1:0] COUNT_ONE = 1;
  localparam [INDEX_W-1:0] INDEX_ONE = 1;

  reg                 valid_q;
  reg                 valid_d;
  reg [ADDR_W-1:0]    addr_q;
  reg [ADDR_W-1:0]    addr_d;
  reg [ADDR_W-1:0]    outer_q;
  reg [ADDR_W-1:0]    outer_d;
  reg [COUNT_W-1:0]   i0_q;
  reg [COUNT_W-1:0]   i0_d;
  reg [COUNT_W-1:0]   i1_q;
  reg [COUNT_W-1:0]   i1_d;
  reg [COUNT_W-1:0]   count0_q;
  reg [COUNT_W-1:0]   count0_d;
  reg [COUNT_W-1:0]   count1_q;
  reg [COUNT_W-1:0]   count1_d;
  reg [STRIDE0_W-1:0] stride0_q;
  reg [STRIDE0_W-1:0] stride0_d;
  reg [STRIDE1_W-1:0] stride1_q;
  reg [STRIDE1_W-1:0] stride1_d;
  reg [INDEX_W-1:0]   index_q;
  reg [INDEX_W-1:0]   index_d;

  // Strides zero-extended to the address width (ADDR_W must be at least STRIDE0_W and STRIDE1_W).
  wire [ADDR_W-1:0] stride0_ext;
  wire [ADDR_W-1:0] stride1_ext;

  generate
    if (ADDR_W > STRIDE0_W) begin : gen_stride0_ext
      assign stride0_ext = { {(ADDR_W-STRIDE0_W){1'b0}}, stride0_q};
    end else begin : gen_stride0_same
      assign stride0_ext = stride0_q;
    end
    if (ADDR_W > STRIDE1_W) begin : gen_stride1_ext
      assign stride1_ext = { {(ADDR_W-STRIDE1_W){1'b0}}, stride1_q};
    end else begin : gen_stride1_same
      assign stride1_ext = stride1_q;
    end
  endgenerate

  wire inner_last = (i0_q == count0_q - COUNT_ONE);
  wire outer_last = (i1_q == count1_q - COUNT_ONE);

  always @* begin
    valid_d   = valid_q;
    addr_d    = addr_q;
    outer_d   = outer_q;
    i0_d      = i0_q;
    i1_d      = i1_q;
    count0_d  = count0_q;
    count1_d  = count1_q;
    stride0_d = stride0_q;
    stride1_d = stride1_q;
    index_d   = index_q;
    if (start_i) begin
      valid_d   = (count0_i != {COUNT_W{1'b0}}) && (count1_i != {COUNT_W{1'b0}});
      addr_d    = base_i;
      outer_d   = base_i;
      i0_d      = {COUNT_W{1'b0}};
      i1_d      = {COUNT_W{1'b0}};
      count0_d  = count0_i;
      count1_d  = count1_i;
      stride0_d = stride0_i;
      stride1_d = stride1_i;
      index_d   = {INDEX_W{1'b0}};
    end else if (advance_i && valid_q) begin
      index_d = index_q + INDEX_ONE;
      if (inner_last) begin
        i0_d    = {COUNT_W{1'b0}};
        i1_d    = i1_q + COUNT_ONE;
        outer_d = outer_q + stride1_ext;
        addr_d  = outer_q + stride1_ext;
        if (outer_last) begin
          valid_d = 1'b0;
        end
      end else begin
        i0_d   = i0_q + COUNT_ONE;
        addr_d = addr_q + stride0_ext;
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      valid_q   <= 1'b0;
      addr_q    <= {ADDR_W{1'b0}};
      outer_q   <= {ADDR_W{1'b0}};
      i0_q      <= {COUNT_W{1'b0}};
      i1_q      <= {COUNT_W{1'b0}};
      count0_q  <= {COUNT_W{1'b0}};
      count1_q  <= {COUNT_W{1'b0}};
      stride0_q <= {STRIDE0_W{1'b0}};
      stride1_q <= {STRIDE1_W{1'b0}};
      index_q   <= {INDEX_W{1'b0}};
    end else begin
      valid_q   <= valid_d;
      addr_q    <= addr_d;
      outer_q   <= outer_d;
      i0_q      <= i0_d;
      i1_q      <= i1_d;
      count0_q  <= count0_d;
      count1_q  <= count1_d;
      stride0_q <= stride0_d;
      stride1_q <= stride1_d;
      index_q   <= index_d;
    end
  end

  assign valid_o = valid_q;
  assign last_o  = valid_q && inner_last && outer_last;
  assign addr_o  = addr_q;
  assign index_o = index_q;

endmodule
