{{ c.banner }}
// Transposes blocks of N rows of N elements on their way into a scratchpad: it takes rows
// j = 0..N-1 of a block (row j's element k into register row k, column j), then writes
// register rows k = 0..N-1 to the block's first address + k, taking no rows meanwhile. A
// load of a run-time tensor (keys) as a matmul's weight tile (`transpose` loads, designs
// with [rows]). idle_o: no block is held.
module hwgen_transposer #(
  parameter integer N      = 8,
  parameter integer W      = 8,
  parameter integer ADDR_W = 16
) (
  input  wire              clk_i,
  input  wire              {{ c.rst }},
  // rows of a block, in order
  input  wire              in_valid_i,
  output wire              in_ready_o,
  input  wire [ADDR_W-1:0] in_addr_i,
  input  wire [N*W-1:0]    in_data_i,
  // the transposed rows
  output wire              out_valid_o,
  input  wire              out_ready_i,
  output wire [ADDR_W-1:0] out_addr_o,
  output wire [N*W-1:0]    out_data_o,
  output wire              idle_o
);

  localparam integer CNT_W = $clog2(N + 1);
  localparam integer IDX_W = $clog2(N);

  // Rows taken, rows written, the block's first address; emitting once all N are in.
  reg [CNT_W-1:0]  taken_q, taken_d;
  reg [CNT_W-1:0]  sent_q, sent_d;
  reg              emit_q, emit_d;
  reg [ADDR_W-1:0] base_q, base_d;

  wire in_fire  = in_valid_i && !emit_q;
  wire out_fire = emit_q && out_ready_i;

  always @* begin
    taken_d = taken_q;
    sent_d  = sent_q;
    emit_d  = emit_q;
    base_d  = base_q;
    if (in_fire) begin
      if (taken_q == {CNT_W{1'b0} }) begin
        base_d = in_addr_i;
      end
      taken_d = taken_q + 1'b1;
      if (taken_q == N[CNT_W-1:0] - 1'b1) begin
        emit_d = 1'b1;
        sent_d = {CNT_W{1'b0} };
      end
    end
    if (out_fire) begin
      sent_d = sent_q + 1'b1;
      if (sent_q == N[CNT_W-1:0] - 1'b1) begin
        emit_d  = 1'b0;
        taken_d = {CNT_W{1'b0} };
        sent_d  = {CNT_W{1'b0} };
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      taken_q <= {CNT_W{1'b0} };
      sent_q  <= {CNT_W{1'b0} };
      emit_q  <= 1'b0;
      base_q  <= {ADDR_W{1'b0} };
    end else begin
      taken_q <= taken_d;
      sent_q  <= sent_d;
      emit_q  <= emit_d;
      base_q  <= base_d;
    end
  end

  // The block: register row k holds element k of every row taken (row j in column j).
  reg [N*W-1:0] blk [0:N-1];
  integer k;
  always @(posedge clk_i) begin
    if (in_fire) begin
      for (k = 0; k < N; k = k + 1) begin
        blk[k][W*taken_q[IDX_W-1:0] +: W] <= in_data_i[W*k +: W];
      end
    end
  end

  assign in_ready_o  = !emit_q;
  assign out_valid_o = emit_q;
  assign out_addr_o  = base_q + { {(ADDR_W-CNT_W){1'b0} }, sent_q};
  assign out_data_o  = blk[sent_q[IDX_W-1:0]];
  assign idle_o      = (taken_q == {CNT_W{1'b0} }) && !emit_q;

endmodule
