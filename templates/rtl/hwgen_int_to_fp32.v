{{ c.banner }}
// A two's-complement integer of IN_W bits (at most 64) as FP32, rounded to nearest, ties to
// even (exact up to 2^24 in magnitude). Combinational.
module hwgen_int_to_fp32 #(
  parameter integer IN_W = 33
) (
  input  wire [IN_W-1:0] value_i,
  output reg  [31:0]     fp_o
);

  localparam integer POS_W = 7;                       // holds 0 .. 63

  wire            sign = value_i[IN_W-1];
  wire [IN_W-1:0] mag  = sign ? (~value_i + { {(IN_W-1){1'b0} }, 1'b1}) : value_i;

  // The leading one's position.
  function [POS_W-1:0] top_one;
    input [IN_W-1:0] v;
    integer i;
    begin
      top_one = {POS_W{1'b0} };
      for (i = 0; i < IN_W; i = i + 1) begin
        if (v[i]) begin
          top_one = i[POS_W-1:0];
        end
      end
    end
  endfunction

  wire [POS_W-1:0] pos = top_one(mag);
  // The magnitude with its leading one at bit 63 (the 64-bit window, zero-padded).
  wire [63:0] wide    = { {(64-IN_W){1'b0} }, mag};
  wire [63:0] aligned = wide << (7'd63 - pos);
  wire [23:0] mant    = aligned[63:40];
  wire        guard   = aligned[39];
  wire        sticky  = |aligned[38:0];
  wire        up      = guard && (sticky || mant[0]);
  wire [24:0] rounded = {1'b0, mant} + {24'd0, up};
  wire [7:0]  exp_raw = 8'd127 + {1'b0, pos};
  wire [7:0]  exp     = rounded[24] ? exp_raw + 8'd1 : exp_raw;
  wire [22:0] frac    = rounded[24] ? rounded[23:1] : rounded[22:0];

  always @* begin
    if (mag == {IN_W{1'b0} }) begin
      fp_o = 32'd0;
    end else begin
      fp_o = {sign, exp, frac};
    end
  end

endmodule
