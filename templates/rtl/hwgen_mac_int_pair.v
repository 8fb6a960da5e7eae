{{ c.banner }}
// The two products of a pair of processing elements that share one multiplier (`[array]
// pack_macs`): one activation times the weights of two columns, in one multiply of the
// activation by both weights packed into one operand, the second LO_W bits above the first
// (LO_W = INPUT_W + WEIGHT_W + 2, the width of one product), as an FPGA's DSP block (27 x 18
// bits on UltraScale+) computes two 8-bit products. The low product is the packed result's
// low LO_W bits read as signed; the high one the bits above, plus the borrow the low
// product's sign took from them. Both operands gain one bit (sign or zero) so one signed
// multiply serves every mix of signed and unsigned types, as in hwgen_mac_int. Sums wrap
// modulo 2^PSUM_W, so the low product is returned sign-extended or truncated to PSUM_W
// bits, and the high one, which hwgen_pe_row keeps a cycle, in PAIR_W bits: its own width,
// or PSUM_W if that is narrower. Combinational.
module hwgen_mac_int_pair #(
  parameter integer INPUT_W       = 8,
  parameter integer WEIGHT_W      = 8,
  parameter integer PSUM_W        = 32,
  parameter integer INPUT_SIGNED  = 1,
  parameter integer WEIGHT_SIGNED = 1,
  parameter integer PAIR_W        = INPUT_W + WEIGHT_W + 2
) (
  input  wire [INPUT_W-1:0]  act_i,
  input  wire [WEIGHT_W-1:0] weight_lo_i,
  input  wire [WEIGHT_W-1:0] weight_hi_i,
  output wire [PSUM_W-1:0]   product_lo_o,
  output wire [PAIR_W-1:0]   product_hi_o
);

  localparam integer LO_W       = INPUT_W + WEIGHT_W + 2;
  localparam integer PACKED_W   = LO_W + WEIGHT_W + 1;
  localparam integer PRODUCT_W  = INPUT_W + 1 + PACKED_W;
  localparam integer HI_W       = PRODUCT_W - LO_W;

  wire                        act_msb       = (INPUT_SIGNED != 0) ? act_i[INPUT_W-1] : 1'b0;
  wire                        weight_lo_msb = (WEIGHT_SIGNED != 0) ? weight_lo_i[WEIGHT_W-1] : 1'b0;
  wire                        weight_hi_msb = (WEIGHT_SIGNED != 0) ? weight_hi_i[WEIGHT_W-1] : 1'b0;
  wire signed [INPUT_W:0]     act_ext       = {act_msb, act_i};
  // weight_hi x 2^LO_W + weight_lo, both sign- or zero-extended.
  wire signed [PACKED_W-1:0]  packed_weight = {weight_hi_msb, weight_hi_i, {LO_W{1'b0}}}
                                            + { {(PACKED_W-WEIGHT_W){weight_lo_msb}}, weight_lo_i};
  wire signed [PRODUCT_W-1:0] product       = act_ext * packed_weight;
  wire signed [LO_W-1:0]      lo            = product[LO_W-1:0];
  wire signed [HI_W-1:0]      hi            = product[PRODUCT_W-1:LO_W]
                                            + { {(HI_W-1){1'b0}}, product[LO_W-1]};

  generate
    if (LO_W >= PSUM_W) begin : gen_trunc
      assign product_lo_o = lo[PSUM_W-1:0];
      if (LO_W > PSUM_W) begin : gen_lo_hi
        wire unused_lo_hi;
        assign unused_lo_hi = ^lo[LO_W-1:PSUM_W];
      end
    end else begin : gen_ext
      assign product_lo_o = { {(PSUM_W-LO_W){lo[LO_W-1]}}, lo};
    end
    assign product_hi_o = hi[PAIR_W-1:0];
    if (HI_W > PAIR_W) begin : gen_hi_hi
      wire unused_hi_hi;
      assign unused_hi_hi = ^hi[HI_W-1:PAIR_W];
    end
  endgenerate

endmodule
