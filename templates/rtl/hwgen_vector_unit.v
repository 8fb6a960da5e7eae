{{ c.banner }}
// Vector queue executor: for each of count rows, reads an accumulator row (and, for add or
// pool, an output-buffer operand row: with bcast the same row opnd_addr for every row), runs
// it through the datapath's row post-processor ({{ c.leaves.post }}: four cycles, bias,
// requantization (leaky ReLU's negative-side multiplier included), add (the weighted sum or
// the product with the operand), ReLU and max-pool on the integer path, the conversion back to
// the element format on the others, and the conversions between precisions) and writes
// the output-buffer row, or with to_input the input-buffer row (out_wr_input_o: a layer's
// output kept on chip as the next one's input). One row per cycle once the accumulator
// read port is granted. With per_channel the instruction also reads the scale row after
// its bias row: lane l then requantizes with that row's multiplier and shift for lane l
// (two more cycles per instruction).
// Output rows have a scale slot of SCALE_SLOT_W bits after their elements (0 without block
// scales).
`include "hwgen_isa.vh"
module hwgen_vector_unit #(
  parameter integer       INSTR_W       = `HWGEN_INSTR_W,
  parameter integer       NUM_SEM       = 10,
  parameter [NUM_SEM-1:0] CONSUMED      = {NUM_SEM{1'b0}},
  parameter [NUM_SEM-1:0] PRODUCED      = {NUM_SEM{1'b0}},
  parameter integer       KPF           = 8,
  parameter integer       ACC_W         = 32,
  parameter integer       OUTPUT_W      = 8,
  parameter integer       OUTPUT_SIGNED = 1,
  parameter integer       SCALE_SLOT_W  = 0,
  parameter integer       SPAD_ADDR_W   = 16,
  parameter integer       ENABLE_BIAS   = 1,
  parameter integer       ENABLE_RELU   = 1,
  parameter integer       ENABLE_LEAKY  = 1,
  parameter integer       ENABLE_POOL   = 1,
  parameter integer       ENABLE_ADD    = 1
) (
  input  wire                                 clk_i,
  input  wire                                 {{ c.rst }},
  // queue head
  input  wire                                 head_valid_i,
  input  wire [INSTR_W-1:0]                   head_instr_i,
  output wire                                 head_pop_o,
  // semaphores
  input  wire [NUM_SEM-1:0]                   sem_available_i,
  output wire [NUM_SEM-1:0]                   sem_acquire_o,
  output wire [NUM_SEM-1:0]                   sem_release_o,
  // accumulator reads (shared; may wait for a grant)
  output wire                                 acc_rd_valid_o,
  output wire [SPAD_ADDR_W-1:0]               acc_rd_addr_o,
  input  wire                                 acc_rd_grant_i,
  input  wire [KPF*ACC_W-1:0]                 acc_rd_data_i,
  // output buffer (this unit has priority on both ports)
  output wire                                 out_rd_valid_o,
  output wire [SPAD_ADDR_W-1:0]               out_rd_addr_o,
  input  wire [KPF*OUTPUT_W+SCALE_SLOT_W-1:0] out_rd_data_i,
  output wire                                 out_wr_valid_o,
  output wire [SPAD_ADDR_W-1:0]               out_wr_addr_o,
  output wire [KPF*OUTPUT_W+SCALE_SLOT_W-1:0] out_wr_data_o,
  output wire                                 out_wr_input_o,
  // performance
  output wire                                 busy_o,
  output wire                                 stall_o
);

  localparam integer           OUT_ROW_W     = KPF * OUTPUT_W + SCALE_SLOT_W;
  localparam integer           LANE_LATENCY  = 5;
  // An instruction reads its bias row (PHASE_BIAS, the data a cycle later in PHASE_BIAS_D),
  // then with per_channel the scale row after it (PHASE_SCALE, PHASE_SCALE_D), then runs.
  localparam [2:0]             PHASE_IDLE    = 3'd0;
  localparam [2:0]             PHASE_BIAS    = 3'd1;
  localparam [2:0]             PHASE_BIAS_D  = 3'd2;
  localparam [2:0]             PHASE_SCALE   = 3'd3;
  localparam [2:0]             PHASE_SCALE_D = 3'd4;
  localparam [2:0]             PHASE_RUN     = 3'd5;
  localparam integer           COUNT_W       = `HWGEN_VECTOR_COUNT_W;
  localparam integer           MULT_W        = `HWGEN_VECTOR_MULTIPLIER_W;
  localparam integer           SHIFT_W       = `HWGEN_VECTOR_SHIFT_W;
  localparam integer           ZP_W          = `HWGEN_VECTOR_ZERO_POINT_W;
  localparam [COUNT_W-1:0]     COUNT_ONE     = 1;
  localparam integer           SCALE_W       = `HWGEN_VECTOR_FIXED_SCALE_W;  // an E8M0 code
  localparam integer           PREC_W        = `HWGEN_VECTOR_PREC_IN_W;
  // A scale-row element (isa::scale_word): the lane's multiplier, its shift above it.
  localparam integer           LANE_SCALE_W  = MULT_W + SHIFT_W;
  // add's combination with the operand: weights, the operand's zero point (a pattern like
  // pad_value's), and the instruction's fields held as one word {mul, add_weight,
  // opnd_weight, add_shift, opnd_zero, add_zero}.
  localparam integer           ADD_WEIGHT_W  = `HWGEN_VECTOR_ADD_WEIGHT_W;
  localparam integer           OPND_ZERO_W   = `HWGEN_VECTOR_OPND_ZERO_W;
  localparam integer           COMBINE_W     = 1 + 2 * ADD_WEIGHT_W + SHIFT_W + OPND_ZERO_W
                                               + ZP_W;
  localparam [SPAD_ADDR_W-1:0] ADDR_ONE      = 1;

  wire [NUM_SEM-1:0]                   f_wait;
  wire [NUM_SEM-1:0]                   f_signal;
  wire                                 f_relu;
  wire                                 f_add;
  wire                                 f_pool;
  wire                                 f_bias;
  wire                                 f_load_bias;
  wire [`HWGEN_VECTOR_ACC_ADDR_W-1:0]  f_acc_addr;
  wire [`HWGEN_VECTOR_OUT_ADDR_W-1:0]  f_out_addr;
  wire [`HWGEN_VECTOR_OPND_ADDR_W-1:0] f_opnd_addr;
  wire [`HWGEN_VECTOR_BIAS_ADDR_W-1:0] f_bias_addr;
  wire [COUNT_W-1:0]                   f_count;
  wire [MULT_W-1:0]                    f_multiplier;
  wire [SHIFT_W-1:0]                   f_shift;
  wire [ZP_W-1:0]                      f_zero_point;
  wire                                 f_clamp;
  wire [ZP_W-1:0]                      f_clamp_max;
  wire [PREC_W-1:0]                    f_prec_in;
  wire [PREC_W-1:0]                    f_prec_out;
  wire [SCALE_W-1:0]                   f_fixed_scale;
  wire                                 f_leaky;
  wire [MULT_W-1:0]                    f_neg_multiplier;
  wire                                 f_to_input;
  wire                                 f_per_channel;
  wire                                 f_half_even;
  wire                                 f_raw;
  wire                                 f_mul;
  wire                                 f_bcast;
  wire [ADD_WEIGHT_W-1:0]              f_add_weight;
  wire [ADD_WEIGHT_W-1:0]              f_opnd_weight;
  wire [SHIFT_W-1:0]                   f_add_shift;
  wire [OPND_ZERO_W-1:0]               f_opnd_zero;
  wire [ZP_W-1:0]                      f_add_zero;

  hwgen_decode_vector u_decode (
    .instr_i      (head_instr_i),
    .wait_o       (f_wait),
    .signal_o     (f_signal),
    .relu_o       (f_relu),
    .add_o        (f_add),
    .pool_o       (f_pool),
    .bias_o       (f_bias),
    .load_bias_o  (f_load_bias),
    .acc_addr_o   (f_acc_addr),
    .out_addr_o   (f_out_addr),
    .opnd_addr_o  (f_opnd_addr),
    .bias_addr_o  (f_bias_addr),
    .count_o      (f_count),
    .multiplier_o (f_multiplier),
    .shift_o      (f_shift),
    .zero_point_o (f_zero_point),
    .clamp_o      (f_clamp),
    .clamp_max_o   (f_clamp_max),
    .prec_in_o     (f_prec_in),
    .prec_out_o    (f_prec_out),
    .fixed_scale_o (f_fixed_scale),
    .leaky_o       (f_leaky),
    .neg_multiplier_o (f_neg_multiplier),
    .to_input_o       (f_to_input),
    .per_channel_o    (f_per_channel),
    .half_even_o      (f_half_even),
    .raw_o            (f_raw),
    .mul_o            (f_mul),
    .bcast_o          (f_bcast),
    .add_weight_o     (f_add_weight),
    .opnd_weight_o    (f_opnd_weight),
    .add_shift_o      (f_add_shift),
    .opnd_zero_o      (f_opnd_zero),
    .add_zero_o       (f_add_zero)
  );

  reg [2:0]             phase_q;
  reg [2:0]             phase_d;
  reg                   relu_q;
  reg                   relu_d;
  reg                   add_q;
  reg                   add_d;
  reg                   pool_q;
  reg                   pool_d;
  reg                   bias_q;
  reg                   bias_d;
  reg [SPAD_ADDR_W-1:0] acc_base_q;
  reg [SPAD_ADDR_W-1:0] acc_base_d;
  reg [SPAD_ADDR_W-1:0] out_base_q;
  reg [SPAD_ADDR_W-1:0] out_base_d;
  reg [SPAD_ADDR_W-1:0] opnd_base_q;
  reg [SPAD_ADDR_W-1:0] opnd_base_d;
  reg [SPAD_ADDR_W-1:0] bias_addr_q;
  reg [SPAD_ADDR_W-1:0] bias_addr_d;
  reg [COUNT_W-1:0]     count_q;
  reg [COUNT_W-1:0]     count_d;
  reg [MULT_W-1:0]      multiplier_q;
  reg [MULT_W-1:0]      multiplier_d;
  reg [SHIFT_W-1:0]     shift_q;
  reg [SHIFT_W-1:0]     shift_d;
  reg [ZP_W-1:0]        zero_point_q;
  reg [ZP_W-1:0]        zero_point_d;
  reg                   clamp_q;
  reg                   clamp_d;
  reg [ZP_W-1:0]        clamp_max_q;
  reg [ZP_W-1:0]        clamp_max_d;
  reg [PREC_W-1:0]      prec_in_q;
  reg [PREC_W-1:0]      prec_in_d;
  reg [PREC_W-1:0]      prec_out_q;
  reg [PREC_W-1:0]      prec_out_d;
  reg [SCALE_W-1:0]     fixed_scale_q;
  reg [SCALE_W-1:0]     fixed_scale_d;
  reg                   leaky_q;
  reg                   leaky_d;
  reg                   half_even_q;
  reg                   half_even_d;
  reg                   raw_q;
  reg                   raw_d;
  reg                   bcast_q;
  reg                   bcast_d;
  reg [COMBINE_W-1:0]   combine_q;
  reg [COMBINE_W-1:0]   combine_d;
  reg [MULT_W-1:0]      neg_multiplier_q;
  reg [MULT_W-1:0]      neg_multiplier_d;
  reg                   to_input_q;
  reg                   to_input_d;
  reg [NUM_SEM-1:0]     release_q;
  reg [NUM_SEM-1:0]     release_d;
  reg [COUNT_W-1:0]     issued_q;
  reg [COUNT_W-1:0]     issued_d;
  reg [COUNT_W-1:0]     written_q;
  reg [COUNT_W-1:0]     written_d;
  reg [KPF*ACC_W-1:0]   bias_value_q;
  reg [KPF*ACC_W-1:0]   bias_value_d;
  reg                   per_channel_q;
  reg                   per_channel_d;
  reg [KPF*LANE_SCALE_W-1:0] scale_value_q;
  reg [KPF*LANE_SCALE_W-1:0] scale_value_d;
  reg                   done;
  // The scale row as read: each lane's low LANE_SCALE_W bits (an accumulator narrower than
  // that holds none: the compiler and the interpreter refuse per_channel there).
  wire [KPF*LANE_SCALE_W-1:0] scale_row;
  // Each lane's multiplier and shift: its scale-row element's, or the instruction's.
  wire [KPF*MULT_W-1:0]       lane_multiplier;
  wire [KPF*SHIFT_W-1:0]      lane_shift;

  genvar lane;
  generate
    for (lane = 0; lane < KPF; lane = lane + 1) begin : gen_lane_scale
      if (ACC_W >= LANE_SCALE_W) begin : gen_row
        assign scale_row[lane*LANE_SCALE_W +: LANE_SCALE_W] =
          acc_rd_data_i[lane*ACC_W +: LANE_SCALE_W];
      end else begin : gen_none
        assign scale_row[lane*LANE_SCALE_W +: LANE_SCALE_W] = {LANE_SCALE_W{1'b0}};
      end
      assign lane_multiplier[lane*MULT_W +: MULT_W] =
        per_channel_q ? scale_value_q[lane*LANE_SCALE_W +: MULT_W] : multiplier_q;
      assign lane_shift[lane*SHIFT_W +: SHIFT_W] =
        per_channel_q ? scale_value_q[lane*LANE_SCALE_W + MULT_W +: SHIFT_W] : shift_q;
    end
  endgenerate

  wire start;

  hwgen_issue #(
    .NUM_SEM  (NUM_SEM),
    .CONSUMED (CONSUMED)
  ) u_issue (
    .head_valid_i    (head_valid_i),
    .head_wait_i     (f_wait),
    .exec_idle_i     (phase_q == PHASE_IDLE),
    .sem_available_i (sem_available_i),
    .head_pop_o      (head_pop_o),
    .sem_acquire_o   (sem_acquire_o),
    .start_o         (start),
    .stall_o         (stall_o)
  );

  wire issue_row = (phase_q == PHASE_RUN) && (issued_q != count_q);
  wire row_fire  = issue_row && acc_rd_grant_i;
  wire bias_fire = (phase_q == PHASE_BIAS) && acc_rd_grant_i;
  wire scale_fire = (phase_q == PHASE_SCALE) && acc_rd_grant_i;
  wire wb_valid;
  // Row index widened to an address (SPAD_ADDR_W > COUNT_W).
  wire [SPAD_ADDR_W-1:0] issued_ext = { {(SPAD_ADDR_W-COUNT_W){1'b0}}, issued_q};
  wire [SPAD_ADDR_W-1:0] wb_addr;

  always @* begin
    phase_d       = phase_q;
    relu_d        = relu_q;
    add_d         = add_q;
    pool_d        = pool_q;
    bias_d        = bias_q;
    acc_base_d    = acc_base_q;
    out_base_d    = out_base_q;
    opnd_base_d   = opnd_base_q;
    bias_addr_d   = bias_addr_q;
    count_d       = count_q;
    multiplier_d  = multiplier_q;
    shift_d       = shift_q;
    zero_point_d  = zero_point_q;
    clamp_d       = clamp_q;
    clamp_max_d   = clamp_max_q;
    prec_in_d     = prec_in_q;
    prec_out_d    = prec_out_q;
    fixed_scale_d = fixed_scale_q;
    leaky_d       = leaky_q;
    half_even_d   = half_even_q;
    raw_d         = raw_q;
    bcast_d       = bcast_q;
    combine_d     = combine_q;
    neg_multiplier_d = neg_multiplier_q;
    to_input_d    = to_input_q;
    release_d     = release_q;
    issued_d      = issued_q;
    written_d     = written_q;
    bias_value_d  = bias_value_q;
    per_channel_d = per_channel_q;
    scale_value_d = scale_value_q;
    done          = 1'b0;
    case (phase_q)
      PHASE_IDLE: begin
        if (start) begin
          phase_d       = f_load_bias ? PHASE_BIAS : PHASE_RUN;
          relu_d        = f_relu;
          add_d         = f_add;
          pool_d        = f_pool;
          bias_d        = f_bias;
          acc_base_d    = f_acc_addr;
          out_base_d    = f_out_addr;
          opnd_base_d   = f_opnd_addr;
          bias_addr_d   = f_bias_addr;
          count_d       = f_count;
          multiplier_d  = f_multiplier;
          shift_d       = f_shift;
          zero_point_d  = f_zero_point;
          clamp_d       = f_clamp;
          clamp_max_d   = f_clamp_max;
          prec_in_d     = f_prec_in;
          prec_out_d    = f_prec_out;
          fixed_scale_d = f_fixed_scale;
          leaky_d       = f_leaky;
          half_even_d   = f_half_even;
          raw_d         = f_raw;
          bcast_d       = f_bcast;
          combine_d     = {f_mul, f_add_weight, f_opnd_weight, f_add_shift, f_opnd_zero,
                           f_add_zero};
          neg_multiplier_d = f_neg_multiplier;
          to_input_d    = f_to_input;
          per_channel_d = f_per_channel;
          release_d     = f_signal & PRODUCED;
          issued_d      = {COUNT_W{1'b0}};
          written_d     = {COUNT_W{1'b0}};
        end
      end
      PHASE_BIAS: begin
        if (bias_fire) begin
          phase_d = PHASE_BIAS_D;
        end
      end
      PHASE_BIAS_D: begin
        bias_value_d = acc_rd_data_i;
        phase_d      = per_channel_q ? PHASE_SCALE : PHASE_RUN;
      end
      PHASE_SCALE: begin
        if (scale_fire) begin
          phase_d = PHASE_SCALE_D;
        end
      end
      PHASE_SCALE_D: begin
        scale_value_d = scale_row;
        phase_d       = PHASE_RUN;
      end
      default: begin
        if (row_fire) begin
          issued_d = issued_q + COUNT_ONE;
        end
        if (wb_valid) begin
          written_d = written_q + COUNT_ONE;
        end
        if (written_q == count_q) begin
          phase_d = PHASE_IDLE;
          done    = 1'b1;
        end
      end
    endcase
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      phase_q       <= PHASE_IDLE;
      relu_q        <= 1'b0;
      add_q         <= 1'b0;
      pool_q        <= 1'b0;
      bias_q        <= 1'b0;
      acc_base_q    <= {SPAD_ADDR_W{1'b0}};
      out_base_q    <= {SPAD_ADDR_W{1'b0}};
      opnd_base_q   <= {SPAD_ADDR_W{1'b0}};
      bias_addr_q   <= {SPAD_ADDR_W{1'b0}};
      count_q       <= {COUNT_W{1'b0}};
      multiplier_q  <= {MULT_W{1'b0}};
      shift_q       <= {SHIFT_W{1'b0}};
      zero_point_q  <= {ZP_W{1'b0}};
      clamp_q       <= 1'b0;
      clamp_max_q   <= {ZP_W{1'b0}};
      prec_in_q     <= {PREC_W{1'b0}};
      prec_out_q    <= {PREC_W{1'b0}};
      fixed_scale_q <= {SCALE_W{1'b0}};
      leaky_q       <= 1'b0;
      half_even_q   <= 1'b0;
      raw_q         <= 1'b0;
      bcast_q       <= 1'b0;
      combine_q     <= {COMBINE_W{1'b0}};
      neg_multiplier_q <= {MULT_W{1'b0}};
      to_input_q    <= 1'b0;
      release_q     <= {NUM_SEM{1'b0}};
      issued_q      <= {COUNT_W{1'b0}};
      written_q     <= {COUNT_W{1'b0}};
      bias_value_q  <= {(KPF*ACC_W){1'b0}};
      per_channel_q <= 1'b0;
      scale_value_q <= {(KPF*LANE_SCALE_W){1'b0}};
    end else begin
      phase_q       <= phase_d;
      relu_q        <= relu_d;
      add_q         <= add_d;
      pool_q        <= pool_d;
      bias_q        <= bias_d;
      acc_base_q    <= acc_base_d;
      out_base_q    <= out_base_d;
      opnd_base_q   <= opnd_base_d;
      bias_addr_q   <= bias_addr_d;
      count_q       <= count_d;
      multiplier_q  <= multiplier_d;
      shift_q       <= shift_d;
      zero_point_q  <= zero_point_d;
      clamp_q       <= clamp_d;
      clamp_max_q   <= clamp_max_d;
      prec_in_q     <= prec_in_d;
      prec_out_q    <= prec_out_d;
      fixed_scale_q <= fixed_scale_d;
      leaky_q       <= leaky_d;
      half_even_q   <= half_even_d;
      raw_q         <= raw_d;
      bcast_q       <= bcast_d;
      combine_q     <= combine_d;
      neg_multiplier_q <= neg_multiplier_d;
      to_input_q    <= to_input_d;
      release_q     <= release_d;
      issued_q      <= issued_d;
      written_q     <= written_d;
      bias_value_q  <= bias_value_d;
      per_channel_q <= per_channel_d;
      scale_value_q <= scale_value_d;
    end
  end

  // The combination's fields, and the operand's zero point as an output element.
  wire                    c_mul;
  wire [ADD_WEIGHT_W-1:0] c_add_weight;
  wire [ADD_WEIGHT_W-1:0] c_opnd_weight;
  wire [SHIFT_W-1:0]      c_add_shift;
  wire [OPND_ZERO_W-1:0]  c_opnd_zero;
  wire [ZP_W-1:0]         c_add_zero;
  wire [OUTPUT_W-1:0]     opnd_zero;
  assign {c_mul, c_add_weight, c_opnd_weight, c_add_shift, c_opnd_zero, c_add_zero} = combine_q;

  hwgen_pad_element #(
    .PADV_W       (OPND_ZERO_W),
    .INPUT_W      (OUTPUT_W),
    .INPUT_SIGNED (OUTPUT_SIGNED)
  ) u_opnd_zero (
    .pattern_i (c_opnd_zero),
    .element_o (opnd_zero)
  );

  // Destination rows travel alongside the lane pipeline.
  hwgen_delay #(
    .WIDTH (1 + SPAD_ADDR_W),
    .DEPTH (LANE_LATENCY)
  ) u_wb_delay (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .data_i      ({row_fire, out_base_q + issued_ext}),
    .data_o      ({wb_valid, wb_addr})
  );

  {{ c.leaves.post }} #(
    .KPF           (KPF),
    .ACC_W         (ACC_W),
    .OUTPUT_W      (OUTPUT_W),
    .OUTPUT_SIGNED (OUTPUT_SIGNED),
    .OUT_ROW_W     (OUT_ROW_W),
    .MULT_W        (MULT_W),
    .SHIFT_W       (SHIFT_W),
    .ZP_W          (ZP_W),
    .ADD_WEIGHT_W  (ADD_WEIGHT_W),
    .SCALE_W       (SCALE_W),
    .PREC_W        (PREC_W),
    .ENABLE_BIAS   (ENABLE_BIAS),
    .ENABLE_RELU   (ENABLE_RELU),
    .ENABLE_LEAKY  (ENABLE_LEAKY),
    .ENABLE_POOL   (ENABLE_POOL),
    .ENABLE_ADD    (ENABLE_ADD)
  ) u_post (
    .clk_i         (clk_i),
    .{{ c.rst }}   ({{ c.rst }}),
    .bias_i        (bias_q),
    .relu_i        (relu_q),
    .add_i         (add_q),
    .pool_i        (pool_q),
    .multiplier_i  (lane_multiplier),
    .leaky_i       (leaky_q),
    .half_even_i   (half_even_q),
    .raw_i         (raw_q),
    .neg_multiplier_i (neg_multiplier_q),
    .shift_i       (lane_shift),
    .zero_point_i  (zero_point_q),
    .clamp_i       (clamp_q),
    .clamp_max_i   (clamp_max_q),
    .prec_in_i     (prec_in_q),
    .prec_out_i    (prec_out_q),
    .fixed_scale_i (fixed_scale_q),
    .bias_row_i    (bias_value_q),
    .mul_i         (c_mul),
    .add_weight_i  (c_add_weight),
    .opnd_weight_i (c_opnd_weight),
    .add_shift_i   (c_add_shift),
    .opnd_zero_i   (opnd_zero),
    .add_zero_i    (c_add_zero),
    .acc_row_i     (acc_rd_data_i),
    .operand_row_i (out_rd_data_i),
    .row_o         (out_wr_data_o)
  );

  assign acc_rd_valid_o = issue_row || (phase_q == PHASE_BIAS) || (phase_q == PHASE_SCALE);
  assign acc_rd_addr_o  = (phase_q == PHASE_BIAS)  ? bias_addr_q :
                          (phase_q == PHASE_SCALE) ? bias_addr_q + ADDR_ONE :
                                                     acc_base_q + issued_ext;
  assign out_rd_valid_o = row_fire && (add_q || pool_q);
  // With bcast every row reads the one operand row.
  assign out_rd_addr_o  = bcast_q ? opnd_base_q : opnd_base_q + issued_ext;
  assign out_wr_valid_o = wb_valid;
  assign out_wr_addr_o  = wb_addr;
  // The instruction's rows all go to one buffer: it ends before the next one starts.
  assign out_wr_input_o = to_input_q;
  assign sem_release_o  = done ? release_q : {NUM_SEM{1'b0}};
  assign busy_o         = (phase_q != PHASE_IDLE);

endmodule
