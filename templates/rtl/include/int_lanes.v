  genvar lane;{# The integer lanes: one hwgen_vector_lane per column, into lane_row. #}
  generate
    for (lane = 0; lane < KPF; lane = lane + 1) begin : gen_lane
      hwgen_vector_lane #(
        .ACC_W         (ACC_W),
        .MULT_W        (MULT_W),
        .SHIFT_W       (SHIFT_W),
        .ZP_W          (ZP_W),
        .ADD_WEIGHT_W  (ADD_WEIGHT_W),
        .OUTPUT_W      (OUTPUT_W),
        .OUTPUT_SIGNED (OUTPUT_SIGNED),
        .ENABLE_BIAS   (ENABLE_BIAS),
        .ENABLE_RELU   (ENABLE_RELU),
        .ENABLE_LEAKY  (ENABLE_LEAKY),
        .ENABLE_POOL   (ENABLE_POOL),
        .ENABLE_ADD    (ENABLE_ADD)
      ) u_lane (
        .clk_i        (clk_i),
        .{{ c.rst }}  ({{ c.rst }}),
        .bias_i       (bias_i),
        .relu_i       (relu_i),
        .add_i        (add_i),
        .pool_i       (pool_i),
        .multiplier_i (multiplier_i[lane*MULT_W +: MULT_W]),
        .leaky_i      (leaky_i),
        .half_even_i  (half_even_i),
        .raw_i        (raw_i),
        .neg_multiplier_i (neg_multiplier_i),
        .shift_i      (shift_i[lane*SHIFT_W +: SHIFT_W]),
        .zero_point_i (zero_point_i),
        .clamp_i      (clamp_i),
        .clamp_max_i  (clamp_max_i),
        .bias_value_i (bias_row_i[lane*ACC_W +: ACC_W]),
        .mul_i        (mul_i),
        .add_weight_i (add_weight_i),
        .opnd_weight_i (opnd_weight_i),
        .add_shift_i  (add_shift_i),
        .opnd_zero_i  (opnd_zero_i),
        .add_zero_i   (add_zero_i),
        .acc_i        (acc_row_i[lane*ACC_W +: ACC_W]),
        .operand_i    (operand_row_i[lane*OUTPUT_W +: OUTPUT_W]),
        .result_o     (lane_row[lane*OUTPUT_W +: OUTPUT_W])
      );
    end
  endgenerate
