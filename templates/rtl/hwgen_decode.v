{{ c.banner }}
// Field decoder for the `{{ format }}` instruction format ({{ ops }}), generated from the
// ISA definition in hwgen's Rust sources: the slices below cannot disagree with the assembler.
module {{ module }} (
  input  wire [{{ instr_msb }}:0] instr_i,
{%- for f in fields %}
  output wire [{{ f.top }}:0] {{ f.name }}_o{% if !loop.last %},{% else %} {% endif %} // {{ f.doc }}
{%- endfor %}
);
{% for f in fields %}
  assign {{ f.name }}_o = instr_i[{{ f.msb }}:{{ f.lsb }}];
{%- endfor %}

  // The opcode was used by fetch to pick the queue; bits past the last field are reserved.
  wire unused_bits;
  assign unused_bits = ^{ {{ unused }} };

endmodule
