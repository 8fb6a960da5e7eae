{{ c.banner }}
// Weight-stationary processing element. Activations flow right, partial sums flow down, and
// weights shift down a per-column chain into whichever of the two banks is idle, so the next
// tile's weights load while the current tile computes. Each activation carries the bank its
// tile uses.
{%- if c.fp %}
//
// Floating point: the product of the two FP8/BF16 codes is formed exactly as FP32
// (hwgen_fp_mul) and added to the partial sum in FP32 (hwgen_fp32_add), so a column sums
// its rows top to bottom, starting from +0.
{%- endif %}
module hwgen_pe #(
  parameter integer INPUT_W       = 8,
  parameter integer WEIGHT_W      = 8,
  parameter integer ACC_W         = 32,
  parameter integer INPUT_SIGNED  = 1,
{%- if c.fp %}
  parameter integer FP_EXP_W      = 4,
  parameter integer FP_MAN_W      = 3,
  parameter integer FP_BIAS       = 7,
  parameter integer FP_IEEE       = 0,
{%- endif %}
  parameter integer WEIGHT_SIGNED = 1
) (
  input  wire                clk_i,
  input  wire                {{ c.rst }},
  // activations, flowing right
  input  wire                act_valid_i,
  input  wire                act_bank_i,
  input  wire [INPUT_W-1:0]  act_i,
  output wire                act_valid_o,
  output wire                act_bank_o,
  output wire [INPUT_W-1:0]  act_o,
  // partial sums, flowing down
  input  wire [ACC_W-1:0]    psum_i,
  output wire [ACC_W-1:0]    psum_o,
  // weight shift chain, flowing down
  input  wire                wshift_en_i,
  input  wire                wshift_bank_i,
  input  wire [WEIGHT_W-1:0] weight_i,
  output wire [WEIGHT_W-1:0] weight_o
);
{%- if !c.fp %}

  localparam integer PRODUCT_W = INPUT_W + WEIGHT_W + 2;
{%- endif %}

  reg                act_valid_q;
  reg                act_bank_q;
  reg [INPUT_W-1:0]  act_q;
  reg [ACC_W-1:0]    psum_q;
  reg [ACC_W-1:0]    psum_d;
  reg [WEIGHT_W-1:0] weight0_q;
  reg [WEIGHT_W-1:0] weight0_d;
  reg [WEIGHT_W-1:0] weight1_q;
  reg [WEIGHT_W-1:0] weight1_d;
{%- if c.fp %}

  wire [WEIGHT_W-1:0] weight_sel = act_bank_i ? weight1_q : weight0_q;
  wire [ACC_W-1:0]    product_acc;
  wire [ACC_W-1:0]    psum_sum;

  hwgen_fp_mul #(
    .EXP_W (FP_EXP_W),
    .MAN_W (FP_MAN_W),
    .BIAS  (FP_BIAS),
    .IEEE  (FP_IEEE)
  ) u_mul (
    .a_i       (act_i),
    .b_i       (weight_sel),
    .product_o (product_acc)
  );

  hwgen_fp32_add u_add (
    .a_i   (psum_i),
    .b_i   (product_acc),
    .sum_o (psum_sum)
  );

  wire unused_signedness;
  assign unused_signedness = ^{INPUT_SIGNED[0], WEIGHT_SIGNED[0]};
{%- else %}

  // Both operands gain one bit (sign or zero) so one signed multiply serves every mix of
  // signed and unsigned types.
  wire                        act_msb    = (INPUT_SIGNED != 0) ? act_i[INPUT_W-1] : 1'b0;
  wire [WEIGHT_W-1:0]         weight_sel = act_bank_i ? weight1_q : weight0_q;
  wire                        weight_msb = (WEIGHT_SIGNED != 0) ? weight_sel[WEIGHT_W-1] : 1'b0;
  wire signed [INPUT_W:0]     act_ext    = {act_msb, act_i};
  wire signed [WEIGHT_W:0]    weight_ext = {weight_msb, weight_sel};
  wire signed [PRODUCT_W-1:0] product    = act_ext * weight_ext;
  wire [ACC_W-1:0]            product_acc;

  // The accumulator wraps modulo 2^ACC_W, so the product is sign-extended or truncated to it.
  generate
    if (PRODUCT_W >= ACC_W) begin : gen_product_trunc
      wire unused_product_hi;
      assign product_acc = product[ACC_W-1:0];
      if (PRODUCT_W > ACC_W) begin : gen_hi
        assign unused_product_hi = ^product[PRODUCT_W-1:ACC_W];
      end else begin : gen_none
        assign unused_product_hi = 1'b0;
      end
    end else begin : gen_product_ext
      assign product_acc = { {(ACC_W-PRODUCT_W){product[PRODUCT_W-1]}}, product};
    end
  endgenerate
{%- endif %}

  always @* begin
{%- if c.fp %}
    psum_d    = act_valid_i ? psum_sum : psum_i;
{%- else %}
    psum_d    = act_valid_i ? psum_i + product_acc : psum_i;
{%- endif %}
    weight0_d = weight0_q;
    weight1_d = weight1_q;
    if (wshift_en_i) begin
      if (wshift_bank_i) begin
        weight1_d = weight_i;
      end else begin
        weight0_d = weight_i;
      end
    end
  end

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      act_valid_q <= 1'b0;
      act_bank_q  <= 1'b0;
      act_q       <= {INPUT_W{1'b0}};
      psum_q      <= {ACC_W{1'b0}};
      weight0_q   <= {WEIGHT_W{1'b0}};
      weight1_q   <= {WEIGHT_W{1'b0}};
    end else begin
      act_valid_q <= act_valid_i;
      act_bank_q  <= act_bank_i;
      act_q       <= act_i;
      psum_q      <= psum_d;
      weight0_q   <= weight0_d;
      weight1_q   <= weight1_d;
    end
  end

  assign act_valid_o = act_valid_q;
  assign act_bank_o  = act_bank_q;
  assign act_o       = act_q;
  assign psum_o      = psum_q;
  assign weight_o    = wshift_bank_i ? weight1_q : weight0_q;

endmodule
