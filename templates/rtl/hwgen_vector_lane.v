{{ c.banner }}
// One lane of the vector unit: a four-stage pipeline that turns an accumulator value into an
// output element.
//   stage 1: x = acc + bias (when bias_i)
//   stage 2: p = x * multiplier (multiplier unsigned; neg_multiplier when leaky_i and x < 0)
//   stage 3: q = saturate((p + 2^(shift-1)) >>> shift + zero_point)   [round half up; with
//            half_even_i an exact tie, p's low shift bits 2^(shift-1), goes to the even one];
//            with raw_i instead q = bits [shift, shift + OUTPUT_W) of p saturated to the
//            accumulator type: one slice of a layer that writes its accumulator
//   stage 4: r = q; if add_i r = saturate(round(t / 2^add_shift) + add_zero) with
//            t = add_weight (q - zero_point) + opnd_weight (b - opnd_zero), or with mul_i
//            t = add_weight (q - zero_point) (b - opnd_zero), b the operand (its difference
//            and weighted difference are taken in stages 2 and 3), rounding like stage 3;
//            if relu_i r = max(r, z) with z = add_zero under add_i, else zero_point;
//            if clamp_i r = min(r, clamp_max) (ReLU6); if pool_i r = max(r, operand)
// The pipeline never stalls; control holds the flags steady for a whole instruction.
module hwgen_vector_lane #(
  parameter integer ACC_W         = 32,
  parameter integer MULT_W        = 16,
  parameter integer SHIFT_W       = 6,
  parameter integer ZP_W          = 16,
  parameter integer ADD_WEIGHT_W  = 16,
  parameter integer OUTPUT_W      = 8,
  parameter integer OUTPUT_SIGNED = 1,
  parameter integer ENABLE_BIAS   = 1,
  parameter integer ENABLE_RELU   = 1,
  parameter integer ENABLE_LEAKY  = 1,
  parameter integer ENABLE_POOL   = 1,
  parameter integer ENABLE_ADD    = 1
) (
  input  wire                clk_i,
  input  wire                {{ c.rst }},
  // per instruction
  input  wire                bias_i,
  input  wire                relu_i,
  input  wire                add_i,
  input  wire                pool_i,
  input  wire [MULT_W-1:0]   multiplier_i,
  input  wire                leaky_i,
  input  wire                half_even_i,
  input  wire                raw_i,
  input  wire [MULT_W-1:0]   neg_multiplier_i,
  input  wire [SHIFT_W-1:0]  shift_i,
  input  wire [ZP_W-1:0]     zero_point_i,
  input  wire                clamp_i,
  input  wire [ZP_W-1:0]     clamp_max_i,
  input  wire [ACC_W-1:0]    bias_value_i,
  input  wire                mul_i,
  input  wire [ADD_WEIGHT_W-1:0] add_weight_i,
  input  wire [ADD_WEIGHT_W-1:0] opnd_weight_i,
  input  wire [SHIFT_W-1:0]  add_shift_i,
  input  wire [OUTPUT_W-1:0] opnd_zero_i,   // the operand's zero point, an output element
  input  wire [ZP_W-1:0]     add_zero_i,
  // per element (stage 1 inputs)
  input  wire [ACC_W-1:0]    acc_i,
  input  wire [OUTPUT_W-1:0] operand_i,
  // result (after stage 4)
  output wire [OUTPUT_W-1:0] result_o
);

  localparam integer              X_W        = ACC_W + 1;
  localparam integer              P_W        = X_W + MULT_W + 1;
  // The combination: differences of output elements or zero points (D_W), one weighted
  // (M_W), and t (T_W).
  localparam integer              D_W        = ((OUTPUT_W > ZP_W) ? OUTPUT_W : ZP_W) + 2;
  localparam integer              M_W        = ADD_WEIGHT_W + D_W;
  localparam integer              T_W        = D_W + M_W + 1;
  localparam integer              WIDE_W     = ((P_W > T_W) ? P_W : T_W) + 3;
  // |v| < 2^(WIDE_W-3) for v = p or t, so from a shift of WIDE_W - 1 on, v + 2^(shift-1)
  // lies in [0, 2^shift) and rounds to 0; below it the rounding constant fits WIDE_W bits.
  localparam integer              SHIFT_ZERO = WIDE_W - 1;
  localparam [SHIFT_W-1:0]        SHIFT_ONE  = 1;
  localparam signed [WIDE_W-1:0]  WIDE_ONE   = 1;
  localparam signed [WIDE_W-1:0]  OUT_MAX    = (OUTPUT_SIGNED != 0)
                                               ? (WIDE_ONE <<< (OUTPUT_W - 1)) - WIDE_ONE
                                               : (WIDE_ONE <<< OUTPUT_W) - WIDE_ONE;
  localparam signed [WIDE_W-1:0]  OUT_MIN    = (OUTPUT_SIGNED != 0)
                                               ? -(WIDE_ONE <<< (OUTPUT_W - 1))
                                               : {WIDE_W{1'b0}};
  localparam signed [WIDE_W-1:0]  ACC_MAX    = (WIDE_ONE <<< (ACC_W - 1)) - WIDE_ONE;
  localparam signed [WIDE_W-1:0]  ACC_MIN    = -(WIDE_ONE <<< (ACC_W - 1));

  reg signed [X_W-1:0]      x_q;
  reg signed [X_W-1:0]      x_d;
  reg        [OUTPUT_W-1:0] opnd1_q;
  reg signed [P_W-1:0]      p_q;
  reg signed [P_W-1:0]      p_d;
  reg        [OUTPUT_W-1:0] opnd2_q;
  reg        [OUTPUT_W-1:0] q_q;
  reg        [OUTPUT_W-1:0] q_d;
  reg        [OUTPUT_W-1:0] opnd3_q;
  reg signed [D_W-1:0]      db_q;
  reg signed [D_W-1:0]      db_d;
  reg signed [M_W-1:0]      m_q;
  reg signed [M_W-1:0]      m_d;
  reg signed [T_W-1:0]      t;
  reg signed [WIDE_W-1:0]   combined;
  reg        [OUTPUT_W-1:0] r_q;
  reg        [OUTPUT_W-1:0] r_d;
  reg signed [WIDE_W-1:0]   rounded;
  reg signed [WIDE_W-1:0]   slice;
  reg signed [WIDE_W-1:0]   floored;
  reg signed [WIDE_W-1:0]   t_wide;
  // A slice is the low OUTPUT_W bits.
  wire                      unused_slice = ^slice[WIDE_W-1:OUTPUT_W];
  // The operand row travels beside the lane's stages.
  wire [OUTPUT_W-1:0] opnd1_d = operand_i;
  wire [OUTPUT_W-1:0] opnd2_d = opnd1_q;
  wire [OUTPUT_W-1:0] opnd3_d = opnd2_q;

  wire signed [X_W-1:0]      acc_ext  = {acc_i[ACC_W-1], acc_i};
  wire signed [X_W-1:0]      bias_ext = {bias_value_i[ACC_W-1], bias_value_i};
  // Leaky ReLU: a negative value is requantized with its own multiplier.
  wire                       leaky    = (ENABLE_LEAKY != 0) && leaky_i && x_q[X_W-1];
  wire signed [MULT_W:0]     mult_ext = {1'b0, leaky ? neg_multiplier_i : multiplier_i};
  wire signed [WIDE_W-1:0]   zp_wide  = { {(WIDE_W-ZP_W){zero_point_i[ZP_W-1]}}, zero_point_i};
  wire signed [WIDE_W-1:0]   p_wide   = { {(WIDE_W-P_W){p_q[P_W-1]}}, p_q};
  wire        [OUTPUT_W-1:0] zp_out   = clamp(zp_wide);
  wire signed [WIDE_W-1:0]   hi_wide  = { {(WIDE_W-ZP_W){clamp_max_i[ZP_W-1]}}, clamp_max_i};
  wire        [OUTPUT_W-1:0] hi_out   = clamp(hi_wide);
  wire signed [WIDE_W-1:0]   az_wide  = { {(WIDE_W-ZP_W){add_zero_i[ZP_W-1]}}, add_zero_i};
  wire        [OUTPUT_W-1:0] az_out   = clamp(az_wide);
  // The combination's weights, and q's difference from its zero point.
  wire signed [ADD_WEIGHT_W-1:0] add_weight  = add_weight_i;
  wire signed [ADD_WEIGHT_W-1:0] opnd_weight = opnd_weight_i;
  // Stage 3 weights the operand's difference: by add_weight for a product (t = dq m), by
  // opnd_weight for a sum (t = add_weight dq + m).
  wire signed [ADD_WEIGHT_W-1:0] m_weight = mul_i ? add_weight : opnd_weight;
  wire signed [T_W-1:0]      m_wide   = { {(T_W-M_W){m_q[M_W-1]}}, m_q};
  wire signed [WIDE_W-1:0]   dq_wide  = widen(q_q) - zp_wide;
  wire signed [D_W-1:0]      dq       = dq_wide[D_W-1:0];
  // ReLU clamps at the output's zero point.
  wire        [OUTPUT_W-1:0] relu_zero = ((ENABLE_ADD != 0) && add_i) ? az_out : zp_out;
  wire signed [WIDE_W-1:0]   db_wide  = widen(opnd1_q) - widen(opnd_zero_i);
  // Only the differences' low D_W bits carry their values.
  wire                       unused_d = ^{dq_wide[WIDE_W-1:D_W], db_wide[WIDE_W-1:D_W]};

  // Saturate a wide value to the output type.
  function [OUTPUT_W-1:0] clamp;
    input signed [WIDE_W-1:0] v;
    begin
      if (v > OUT_MAX) begin
        clamp = OUT_MAX[OUTPUT_W-1:0];
      end else if (v < OUT_MIN) begin
        clamp = OUT_MIN[OUTPUT_W-1:0];
      end else begin
        clamp = v[OUTPUT_W-1:0];
      end
    end
  endfunction

  // value / 2^amount rounded half up (floor(value + 2^(amount-1)) >>> amount), or with
  // even an exact tie (value's low amount bits 2^(amount-1)) to the even neighbour; value
  // for amount = 0, 0 from SHIFT_ZERO on. It rounds from down = value >>> amount, which
  // the caller shares with the raw slice: adding 2^(amount-1) carries into bit amount
  // exactly when bit amount-1 (the guard) is set, so the half-up result is down + guard,
  // and a tie (guard set, the bits below it clear) stays at an even down.
  function signed [WIDE_W-1:0] round_shift;
    input signed [WIDE_W-1:0] value;
    input signed [WIDE_W-1:0] down;
    input        [SHIFT_W-1:0] amount;
    input                      even;
    reg   signed [WIDE_W-1:0] half;
    reg                       guard;
    reg                       tie;
    begin
      half  = WIDE_ONE <<< (amount - SHIFT_ONE);
      guard = |(value & half);
      tie   = guard && ((value & (half - WIDE_ONE)) == {WIDE_W{1'b0}});
      if (amount == {SHIFT_W{1'b0}}) begin
        round_shift = value;
      end else if ({1'b0, amount} >= SHIFT_ZERO[SHIFT_W:0]) begin
        round_shift = {WIDE_W{1'b0}};
      end else if (even && tie && !down[0]) begin
        round_shift = down;
      end else begin
        round_shift = down + { {(WIDE_W-1){1'b0}}, guard};
      end
    end
  endfunction

  // Extend an output element (signed or unsigned) to the wide signed type.
  function signed [WIDE_W-1:0] widen;
    input [OUTPUT_W-1:0] e;
    begin
      widen = { {(WIDE_W-OUTPUT_W){(OUTPUT_SIGNED != 0) && e[OUTPUT_W-1]}}, e};
    end
  endfunction

  always @* begin
    // stage 1
    x_d = acc_ext;
    if ((ENABLE_BIAS != 0) && bias_i) begin
      x_d = acc_ext + bias_ext;
    end
    // stage 2
    p_d = x_q * mult_ext;
    db_d = db_wide[D_W-1:0];
    // stage 3
    floored = p_wide >>> shift_i;
    rounded = round_shift(p_wide, floored, shift_i, half_even_i);
    m_d = m_weight * db_q;
    // raw: p saturated to the accumulator type, shifted down (floor); its low bits.
    if (p_wide > ACC_MAX) begin
      slice = ACC_MAX >>> shift_i;
    end else if (p_wide < ACC_MIN) begin
      slice = ACC_MIN >>> shift_i;
    end else begin
      slice = floored;
    end
    q_d = raw_i ? slice[OUTPUT_W-1:0] : clamp(rounded + zp_wide);
    // stage 4
    r_d = q_q;
    t = mul_i ? dq * m_q : add_weight * dq + m_wide;
    t_wide   = { {(WIDE_W-T_W){t[T_W-1]}}, t};
    combined = round_shift(t_wide, t_wide >>> add_shift_i, add_shift_i, half_even_i) + az_wide;
    if ((ENABLE_ADD != 0) && add_i) begin
      r_d = clamp(combined);
    end
    if ((ENABLE_RELU != 0) && relu_i && (widen(r_d) < widen(relu_zero))) begin
      r_d = relu_zero;
    end
    if ((ENABLE_RELU != 0) && clamp_i && (widen(r_d) > widen(hi_out))) begin
      r_d = hi_out;
    end
    if ((ENABLE_POOL != 0) && pool_i && (widen(r_d) < widen(opnd3_q))) begin
      r_d = opnd3_q;
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      x_q     <= {X_W{1'b0}};
      opnd1_q <= {OUTPUT_W{1'b0}};
      p_q     <= {P_W{1'b0}};
      opnd2_q <= {OUTPUT_W{1'b0}};
      q_q     <= {OUTPUT_W{1'b0}};
      opnd3_q <= {OUTPUT_W{1'b0}};
      db_q    <= {D_W{1'b0}};
      m_q     <= {M_W{1'b0}};
      r_q     <= {OUTPUT_W{1'b0}};
    end else begin
      x_q     <= x_d;
      opnd1_q <= opnd1_d;
      p_q     <= p_d;
      opnd2_q <= opnd2_d;
      q_q     <= q_d;
      opnd3_q <= opnd3_d;
      db_q    <= db_d;
      m_q     <= m_d;
      r_q     <= r_d;
    end
  end

  assign result_o = r_q;

endmodule
