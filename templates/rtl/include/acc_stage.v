  reg  [ACC_W-1:0]  value_q;
  reg               accumulate_q;
  reg  [PREC_W-1:0] prec_q;
  wire [ACC_W-1:0]  value_d;
  wire              accumulate_d = accumulate_i;
  wire [PREC_W-1:0] prec_d       = prec_i;

  always @(posedge clk_i{{ c.rst_edge }}) begin
    if ({{ c.rst_on }}) begin
      value_q      <= {ACC_W{1'b0}};
      accumulate_q <= 1'b0;
      prec_q       <= {PREC_W{1'b0}};
    end else begin
      value_q      <= value_d;
      accumulate_q <= accumulate_d;
      prec_q       <= prec_d;
    end
  end