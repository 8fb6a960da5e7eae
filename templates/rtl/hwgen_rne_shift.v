{{ c.banner }}
// A two's-complement code q of W bits shifted right by k, rounded to nearest with ties to
// even (numeric::mx::shift_rne): q / 2^k as an integer; from k = W on, 0 (|q / 2^k| is at
// most 1/2 there and the tie goes to 0). The transposer's re-blocking lanes. Combinational.
module hwgen_rne_shift #(
  parameter integer W   = 8,
  parameter integer K_W = 8
) (
  input  wire [W-1:0]   q_i,
  input  wire [K_W-1:0] k_i,
  output wire [W-1:0]   q_o
);

  localparam [K_W-1:0] W_K   = W[K_W-1:0];
  localparam [K_W-1:0] K_ONE = 1;
  localparam [W-1:0]   ONE   = 1;

  // floor(q / 2^k), the bits shifted out, and the weight of the first of them.
  wire signed [W-1:0] q      = q_i;
  wire signed [W-1:0] floor_q = q >>> k_i;
  wire [W-1:0]        rest   = q_i & ~({W{1'b1}} << k_i);
  wire [W-1:0]        half   = ONE << (k_i - K_ONE);
  wire                up     = (k_i != {K_W{1'b0}}) &&
                               ((rest > half) || ((rest == half) && floor_q[0]));

  assign q_o = (k_i >= W_K) ? {W{1'b0}} : floor_q + { {(W-1){1'b0}}, up};

endmodule
