{{ c.banner }}
// The input element a padding pattern stands for (`pad_value` of load and window): its low
// INPUT_W bits, or, when the elements are wider than the pattern, the pattern extended in
// the input's signedness (isa::pad_element).
module hwgen_pad_element #(
  parameter integer PADV_W       = 8,
  parameter integer INPUT_W      = 8,
  parameter integer INPUT_SIGNED = 1
) (
  input  wire [PADV_W-1:0]  pattern_i,
  output wire [INPUT_W-1:0] element_o
);

  generate
    if (INPUT_W <= PADV_W) begin : gen_low
      assign element_o = pattern_i[INPUT_W-1:0];
      if (INPUT_W < PADV_W) begin : gen_unused
        wire unused_high;
        assign unused_high = ^pattern_i[PADV_W-1:INPUT_W];
      end
    end else begin : gen_extend
      wire msb = (INPUT_SIGNED != 0) && pattern_i[PADV_W-1];
      assign element_o = { {(INPUT_W-PADV_W){msb}}, pattern_i};
    end
  endgenerate

endmodule
