{{ c.banner }}
// Fetch and dispatch: from start_i, reads instruction 0, 1, ... from the instruction memory
// (a ring of 2^IMEM_ADDR_W entries the prefetcher fills: instruction pc is at entry pc mod
// 2^IMEM_ADDR_W once written_i > pc) and pushes each into the queue of its opcode, in
// program order, until `end`. An unknown opcode stops fetching and raises illegal_o.
`include "hwgen_isa.vh"
module hwgen_fetch #(
  parameter integer INSTR_W     = `HWGEN_INSTR_W,
  parameter integer IMEM_ADDR_W = 10,
  parameter integer PC_W        = 32
) (
  input  wire                   clk_i,
  input  wire                   {{ c.rst }},
  input  wire                   start_i,
  // instructions the prefetcher has written; fetch has taken pc_o of them
  input  wire [PC_W-1:0]        written_i,
  output wire [PC_W-1:0]        pc_o,
  // instruction memory
  output wire                   imem_re_o,
  output wire [IMEM_ADDR_W-1:0] imem_addr_o,
  input  wire [INSTR_W-1:0]     imem_data_i,
  // queues, indexed `HWGEN_QUEUE_LOAD .. `HWGEN_QUEUE_STORE
  output reg  [3:0]             queue_valid_o,
  input  wire [3:0]             queue_ready_i,
  output wire [INSTR_W-1:0]     queue_data_o,
  // status
  output wire                   fetching_o,
  output wire                   illegal_o
);

  localparam [1:0]             PHASE_IDLE     = 2'd0;
  localparam [1:0]             PHASE_READ     = 2'd1;
  localparam [1:0]             PHASE_DISPATCH = 2'd2;
  localparam [PC_W-1:0]        PC_ONE         = 1;

  reg [1:0]             phase_q;
  reg [1:0]             phase_d;
  reg [PC_W-1:0]        pc_q;
  reg [PC_W-1:0]        pc_d;
  reg                   illegal_q;
  reg                   illegal_d;

  wire [`HWGEN_OPCODE_W-1:0] opcode = imem_data_i[`HWGEN_OPCODE];

  always @* begin
    phase_d       = phase_q;
    pc_d          = pc_q;
    illegal_d     = illegal_q;
    queue_valid_o = 4'b0000;
    case (phase_q)
      PHASE_IDLE: begin
        if (start_i) begin
          phase_d   = PHASE_READ;
          pc_d      = {PC_W{1'b0}};
          illegal_d = 1'b0;
        end
      end
      PHASE_READ: begin
        if (written_i > pc_q) begin
          phase_d = PHASE_DISPATCH;
        end
      end
      default: begin
        case (opcode)
          `HWGEN_OP_END: begin
            phase_d = PHASE_IDLE;
          end
          `HWGEN_OP_LOAD: begin
            queue_valid_o[`HWGEN_QUEUE_LOAD] = 1'b1;
          end
          `HWGEN_OP_MATMUL: begin
            queue_valid_o[`HWGEN_QUEUE_COMPUTE] = 1'b1;
          end
          `HWGEN_OP_VECTOR: begin
            queue_valid_o[`HWGEN_QUEUE_VECTOR] = 1'b1;
          end
          `HWGEN_OP_STORE: begin
            queue_valid_o[`HWGEN_QUEUE_STORE] = 1'b1;
          end
{%- if c.window %}
          `HWGEN_OP_WINDOW: begin
            queue_valid_o[`HWGEN_QUEUE_COMPUTE] = 1'b1;
          end
{%- endif %}
{%- if c.rows %}
          `HWGEN_OP_ROWS: begin
            queue_valid_o[`HWGEN_QUEUE_VECTOR] = 1'b1;
          end
{%- endif %}
          default: begin
            phase_d   = PHASE_IDLE;
            illegal_d = 1'b1;
          end
        endcase
        if ((queue_valid_o & queue_ready_i) != 4'b0000) begin
          phase_d = PHASE_READ;
          pc_d    = pc_q + PC_ONE;
        end
      end
    endcase
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      phase_q   <= PHASE_IDLE;
      pc_q      <= {PC_W{1'b0}};
      illegal_q <= 1'b0;
    end else begin
      phase_q   <= phase_d;
      pc_q      <= pc_d;
      illegal_q <= illegal_d;
    end
  end

  assign imem_re_o    = (phase_q == PHASE_READ) && (written_i > pc_q);
  assign imem_addr_o  = pc_q[IMEM_ADDR_W-1:0];
  assign pc_o         = pc_q;
  assign queue_data_o = imem_data_i;
  assign fetching_o   = (phase_q != PHASE_IDLE);
  assign illegal_o    = illegal_q;

endmodule
