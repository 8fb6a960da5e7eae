{{ c.banner }}
// Instruction-set constants and field slices, generated from the ISA definition in hwgen's
// Rust sources. See `hwgen isa` for the tables.
`ifndef HWGEN_ISA_VH
`define HWGEN_ISA_VH
{% for d in defines %}
{%- if !d.doc.is_empty() %}
// {{ d.doc }}
{%- endif %}
`define {{ d.name }} {{ d.value }}
{%- endfor %}

`endif
