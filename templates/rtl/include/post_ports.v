  input  wire                 clk_i,
  input  wire                 {{ c.rst }},
  // per instruction
  input  wire                 bias_i,
  input  wire                 relu_i,
  input  wire                 add_i,
  input  wire                 pool_i,
  input  wire [KPF*MULT_W-1:0]  multiplier_i,  // lane l's in [l*MULT_W +: MULT_W]
  input  wire                 leaky_i,
  input  wire                 half_even_i,   // round exact ties to even
  input  wire                 raw_i,         // a slice of the saturated accumulator
  input  wire [MULT_W-1:0]    neg_multiplier_i,
  input  wire [KPF*SHIFT_W-1:0] shift_i,       // lane l's in [l*SHIFT_W +: SHIFT_W]
  input  wire [ZP_W-1:0]      zero_point_i,
  input  wire                 clamp_i,
  input  wire [ZP_W-1:0]      clamp_max_i,
  input  wire [PREC_W-1:0]    prec_in_i,
  input  wire [PREC_W-1:0]    prec_out_i,
  input  wire [SCALE_W-1:0]   fixed_scale_i,
  input  wire [KPF*ACC_W-1:0] bias_row_i,
  // add's combination with the operand (integer lanes; see hwgen_vector_lane)
  input  wire                 mul_i,
  input  wire [ADD_WEIGHT_W-1:0] add_weight_i,
  input  wire [ADD_WEIGHT_W-1:0] opnd_weight_i,
  input  wire [SHIFT_W-1:0]   add_shift_i,
  input  wire [OUTPUT_W-1:0]  opnd_zero_i,   // the operand's zero point, an output element
  input  wire [ZP_W-1:0]      add_zero_i,
  // per row
  input  wire [KPF*ACC_W-1:0] acc_row_i,
  input  wire [OUT_ROW_W-1:0] operand_row_i,
  output wire [OUT_ROW_W-1:0] row_o
);