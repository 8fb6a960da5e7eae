{{ c.banner }}
// Multiply-add of a processing element, integer family (integer and MX elements):
// psum_o = psum_i + act_i * weight_i, modulo 2^PSUM_W. Both operands gain one bit (sign or
// zero) so one signed multiply serves every mix of signed and unsigned types.
// Combinational.
module hwgen_mac_int #(
  parameter integer INPUT_W       = 8,
  parameter integer WEIGHT_W      = 8,
  parameter integer PSUM_W        = 32,
  parameter integer INPUT_SIGNED  = 1,
  parameter integer WEIGHT_SIGNED = 1
) (
  input  wire [INPUT_W-1:0]  act_i,
  input  wire [WEIGHT_W-1:0] weight_i,
  input  wire [PSUM_W-1:0]   psum_i,
  output wire [PSUM_W-1:0]   psum_o
);

  localparam integer PRODUCT_W = INPUT_W + WEIGHT_W + 2;

  wire                        act_msb    = (INPUT_SIGNED != 0) ? act_i[INPUT_W-1] : 1'b0;
  wire                        weight_msb = (WEIGHT_SIGNED != 0) ? weight_i[WEIGHT_W-1] : 1'b0;
  wire signed [INPUT_W:0]     act_ext    = {act_msb, act_i};
  wire signed [WEIGHT_W:0]    weight_ext = {weight_msb, weight_i};
  wire signed [PRODUCT_W-1:0] product    = act_ext * weight_ext;
  wire        [PSUM_W-1:0]    product_psum;

  // The sum wraps modulo 2^PSUM_W, so the product is sign-extended or truncated to it.
  generate
    if (PRODUCT_W >= PSUM_W) begin : gen_product_trunc
      assign product_psum = product[PSUM_W-1:0];
      if (PRODUCT_W > PSUM_W) begin : gen_hi
        wire unused_product_hi;
        assign unused_product_hi = ^product[PRODUCT_W-1:PSUM_W];
      end
    end else begin : gen_product_ext
      assign product_psum = { {(PSUM_W-PRODUCT_W){product[PRODUCT_W-1]}}, product};
    end
  endgenerate

  assign psum_o = psum_i + product_psum;

endmodule
