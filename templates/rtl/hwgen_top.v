{{ c.banner }}
// Top level of design "{{ design_name }}": {{ cores.len() }} engine(s) in {{ branch_count }} branch(es).
// Consecutive units of a branch are linked by elastic FIFOs (replica r to replica r), and a
{%- if mem_ports.is_empty() %}
// branch's `from` unit feeds its first unit the same way (a fork); all engines share one
// external-memory port through a round-robin arbiter.
{%- else %}
// branch's `from` unit feeds its first unit the same way (a fork); the engines reach
// external memory through {{ mem_ports.len() }} ports, engine e through port e mod {{ mem_ports.len() }}, each port
// with its own round-robin arbiter.
{%- endif %}
{%- if !joins.is_empty() %}
// Between units of different h, every replica of one feeds every replica of the other.
{%- endif %}
//
// Engines (index: branch.unit[replica]; CSR blocks and program bases in this order):
{%- for k in cores %}
//   {{ k.index }}: {{ k.label }}  cpf={{ k.cpf }} kpf={{ k.kpf }}
{%- endfor %}
`include "hwgen_isa.vh"
module hwgen_top #(
  parameter integer MEM_W       = {{ mem_w }},
  parameter integer MEM_ADDR_W  = 32,
{%- if !mem_ports.is_empty() %}
  parameter integer MEM_PORTS   = {{ mem_ports.len() }},
{%- endif %}
  parameter integer CSR_ADDR_W  = 12
) (
  input  wire                      clk_i,
  input  wire                      {{ c.rst }},
  // control and status registers
  input  wire                      csr_we_i,
  input  wire [CSR_ADDR_W-1:0]     csr_addr_i,
  input  wire [31:0]               csr_wdata_i,
  output wire [31:0]               csr_rdata_o,
{%- if mem_ports.is_empty() %}
  // external memory (addresses count MEM_W-bit beats)
  output wire                      mem_req_valid_o,
  input  wire                      mem_req_ready_i,
  output wire                      mem_req_write_o,
  output wire [MEM_ADDR_W-1:0]     mem_req_addr_o,
  output wire [MEM_W-1:0]          mem_req_wdata_o,
  input  wire                      mem_rsp_valid_i,
  input  wire [MEM_W-1:0]          mem_rsp_rdata_i
{%- else %}
  // external memory: MEM_PORTS ports, port p in bit p or slice p of each signal (addresses
  // count MEM_W-bit beats); engine e uses port e mod MEM_PORTS
  output wire [MEM_PORTS-1:0]            mem_req_valid_o,
  input  wire [MEM_PORTS-1:0]            mem_req_ready_i,
  output wire [MEM_PORTS-1:0]            mem_req_write_o,
  output wire [MEM_PORTS*MEM_ADDR_W-1:0] mem_req_addr_o,
  output wire [MEM_PORTS*MEM_W-1:0]      mem_req_wdata_o,
  input  wire [MEM_PORTS-1:0]            mem_rsp_valid_i,
  input  wire [MEM_PORTS*MEM_W-1:0]      mem_rsp_rdata_i
{%- endif %}
);

  localparam integer NUM_CORES = {{ cores.len() }};
  localparam integer PERF_W    = `HWGEN_PERF_COUNTERS * 32;

  wire                            start;
  wire [NUM_CORES-1:0]            core_busy;
  wire [NUM_CORES-1:0]            core_error;
  wire [NUM_CORES*32-1:0]         prog_base;
  wire [NUM_CORES*PERF_W-1:0]     perf;
  wire [NUM_CORES-1:0]            port_valid;
  wire [NUM_CORES-1:0]            port_ready;
  wire [NUM_CORES-1:0]            port_write;
  wire [NUM_CORES*MEM_ADDR_W-1:0] port_addr;
  wire [NUM_CORES*MEM_W-1:0]      port_wdata;
  wire [NUM_CORES-1:0]            port_rsp_valid;
{%- if mem_ports.is_empty() %}
  wire [MEM_W-1:0]                port_rsp_rdata;
{%- endif %}
{%- for m in mem_ports %}
  // {{ m.doc }}
  wire [{{ m.engines.len() - 1 }}:0] mem{{ m.index }}_ready;
  wire [{{ m.engines.len() - 1 }}:0] mem{{ m.index }}_rsp_valid;
  wire [MEM_W-1:0] mem{{ m.index }}_rsp_rdata;
  wire [{{ m.engines.len() - 1 }}:0] mem{{ m.index }}_req_valid;
  wire [{{ m.engines.len() - 1 }}:0] mem{{ m.index }}_req_write;
  wire [{{ m.engines.len() }}*MEM_ADDR_W-1:0] mem{{ m.index }}_req_addr;
  wire [{{ m.engines.len() }}*MEM_W-1:0] mem{{ m.index }}_req_wdata;
{%- endfor %}
{% for l in links %}
  // {{ l.doc }}
  wire             {{ l.name }}_in_valid;
  wire             {{ l.name }}_in_ready;
  wire [MEM_W-1:0] {{ l.name }}_in_data;
  wire             {{ l.name }}_out_valid;
  wire             {{ l.name }}_out_ready;
  wire [MEM_W-1:0] {{ l.name }}_out_data;
  wire [{{ l.ptr_w }}:0]       unused_{{ l.name }}_count;

  hwgen_fifo #(
    .WIDTH   (MEM_W),
    .DEPTH   ({{ l.depth }}),
    .PTR_W   ({{ l.ptr_w }}),
    .COUNT_W ({{ l.ptr_w }} + 1)
  ) {{ l.inst }} (
    .clk_i       (clk_i),
    .{{ c.rst }} ({{ c.rst }}),
    .in_valid_i  ({{ l.name }}_in_valid),
    .in_ready_o  ({{ l.name }}_in_ready),
    .in_data_i   ({{ l.name }}_in_data),
    .out_valid_o ({{ l.name }}_out_valid),
    .out_ready_i ({{ l.name }}_out_ready),
    .out_data_o  ({{ l.name }}_out_data),
    .count_o     (unused_{{ l.name }}_count)
  );
{% endfor %}
{%- for f in fanouts %}
  // {{ f.doc }}: a beat leaves when all of them take it.
  wire             {{ f.name }}_in_valid;
  wire             {{ f.name }}_in_ready;
  wire [MEM_W-1:0] {{ f.name }}_in_data;
  assign {{ f.name }}_in_ready =
      {{ f.ready }};
  wire             {{ f.name }}_take;
  assign {{ f.name }}_take =
      {{ f.name }}_in_valid && {{ f.name }}_in_ready;
{%- for l in f.links %}
  assign {{ l }}_in_valid = {{ f.name }}_take;
  assign {{ l }}_in_data  = {{ f.name }}_in_data;
{%- endfor %}
{% endfor %}
{%- for j in joins %}
  // {{ j.doc }}: a beat is taken when all of them offer one.
  // The beats are frame tokens, whose contents nothing reads; the engine sees their OR.
  wire             {{ j.name }}_out_valid;
  wire             {{ j.name }}_out_ready;
  wire [MEM_W-1:0] {{ j.name }}_out_data;
  assign {{ j.name }}_out_valid =
      {{ j.valid }};
  assign {{ j.name }}_out_data  =
      {{ j.data }};
  wire             {{ j.name }}_take;
  assign {{ j.name }}_take =
      {{ j.name }}_out_valid && {{ j.name }}_out_ready;
{%- for l in j.links %}
  assign {{ l }}_out_ready = {{ j.name }}_take;
{%- endfor %}
{% endfor %}
{%- for k in cores %}
  // Engine {{ k.index }}: {{ k.label }}
{%- if !k.has_stream_in %}
  wire             unused_{{ k.name }}_stream_in_ready;
{%- endif %}
{%- if !k.has_stream_out %}
  wire             unused_{{ k.name }}_stream_out_valid;
  wire [MEM_W-1:0] unused_{{ k.name }}_stream_out_data;
{%- endif %}
{%- if c.handoff %}
  // its writes into the hand-off buffers of the engines it feeds
  wire                  {{ k.name }}_ho_we;
  wire [MEM_ADDR_W-1:0] {{ k.name }}_ho_addr;
  wire [MEM_W-1:0]      {{ k.name }}_ho_wdata;
{%- if !k.handoff_feeds %}
  // (No engine's hand-off buffer is fed by this one.)
  wire                  unused_{{ k.name }}_ho;
  assign unused_{{ k.name }}_ho = ^{ {{- k.name }}_ho_we, {{ k.name }}_ho_addr, {{ k.name }}_ho_wdata};
{%- endif %}
{%- endif %}

  hwgen_core #(
{%- for p in k.params %}
    .{{ p.name }} ({{ p.value }}){% if !loop.last %},{% endif %}
{%- endfor %}
  ) {{ k.inst }} (
    .clk_i              (clk_i),
    .{{ c.rst }}        ({{ c.rst }}),
    .start_i            (start),
    .busy_o             (core_busy[{{ k.index }}]),
    .error_o            (core_error[{{ k.index }}]),
    .prog_base_i        (prog_base[{{ k.index }}*32 +: MEM_ADDR_W]),
    .mem_req_valid_o    (port_valid[{{ k.index }}]),
    .mem_req_ready_i    (port_ready[{{ k.index }}]),
    .mem_req_write_o    (port_write[{{ k.index }}]),
    .mem_req_addr_o     (port_addr[{{ k.index }}*MEM_ADDR_W +: MEM_ADDR_W]),
    .mem_req_wdata_o    (port_wdata[{{ k.index }}*MEM_W +: MEM_W]),
    .mem_rsp_valid_i    (port_rsp_valid[{{ k.index }}]),
    .mem_rsp_rdata_i    ({{ k.rsp_rdata }}),
{%- if let Some(l) = k.stream_in %}
    .stream_in_valid_i  ({{ l }}_out_valid),
    .stream_in_ready_o  ({{ l }}_out_ready),
    .stream_in_data_i   ({{ l }}_out_data),
{%- else %}
    .stream_in_valid_i  (1'b0),
    .stream_in_ready_o  (unused_{{ k.name }}_stream_in_ready),
    .stream_in_data_i   ({MEM_W{1'b0}}),
{%- endif %}
{%- if let Some(l) = k.stream_out %}
    .stream_out_valid_o ({{ l }}_in_valid),
    .stream_out_ready_i ({{ l }}_in_ready),
    .stream_out_data_o  ({{ l }}_in_data),
{%- else %}
    .stream_out_valid_o (unused_{{ k.name }}_stream_out_valid),
    .stream_out_ready_i (1'b0),
    .stream_out_data_o  (unused_{{ k.name }}_stream_out_data),
{%- endif %}
{%- if c.handoff %}
{%- if let Some(f) = k.handoff_from %}
    .handoff_in_we_i     ({{ f }}_ho_we),
    .handoff_in_addr_i   ({{ f }}_ho_addr),
    .handoff_in_wdata_i  ({{ f }}_ho_wdata),
{%- else %}
    .handoff_in_we_i     (1'b0),
    .handoff_in_addr_i   ({MEM_ADDR_W{1'b0}}),
    .handoff_in_wdata_i  ({MEM_W{1'b0}}),
{%- endif %}
    .handoff_out_we_o    ({{ k.name }}_ho_we),
    .handoff_out_addr_o  ({{ k.name }}_ho_addr),
    .handoff_out_wdata_o ({{ k.name }}_ho_wdata),
{%- endif %}
    .perf_o             (perf[{{ k.index }}*PERF_W +: PERF_W])
  );
{% endfor %}
{%- if mem_ports.is_empty() %}
  hwgen_mem_arbiter #(
    .PORTS    (NUM_CORES),
    .PORT_W   ({{ port_w }}),
    .ADDR_W   (MEM_ADDR_W),
    .DATA_W   (MEM_W),
    .ID_DEPTH ({{ id_depth }}),
    .ID_PTR_W ({{ id_ptr_w }})
  ) u_mem_arbiter (
    .clk_i           (clk_i),
    .{{ c.rst }}     ({{ c.rst }}),
    .req_valid_i     (port_valid),
    .req_ready_o     (port_ready),
    .req_write_i     (port_write),
    .req_addr_i      (port_addr),
    .req_wdata_i     (port_wdata),
    .rsp_valid_o     (port_rsp_valid),
    .rsp_rdata_o     (port_rsp_rdata),
    .mem_req_valid_o (mem_req_valid_o),
    .mem_req_ready_i (mem_req_ready_i),
    .mem_req_write_o (mem_req_write_o),
    .mem_req_addr_o  (mem_req_addr_o),
    .mem_req_wdata_o (mem_req_wdata_o),
    .mem_rsp_valid_i (mem_rsp_valid_i),
    .mem_rsp_rdata_i (mem_rsp_rdata_i)
  );
{%- else %}
{%- for m in mem_ports %}
  // {{ m.doc }}
  assign mem{{ m.index }}_req_valid = {{ m.valid }};
  assign mem{{ m.index }}_req_write = {{ m.write }};
  assign mem{{ m.index }}_req_addr  = {{ m.addr }};
  assign mem{{ m.index }}_req_wdata = {{ m.wdata }};
{%- for e in m.engines %}
  assign port_ready[{{ e }}] = mem{{ m.index }}_ready[{{ loop.index0 }}];
  assign port_rsp_valid[{{ e }}] = mem{{ m.index }}_rsp_valid[{{ loop.index0 }}];
{%- endfor %}

  hwgen_mem_arbiter #(
    .PORTS    ({{ m.engines.len() }}),
    .PORT_W   ({{ m.port_w }}),
    .ADDR_W   (MEM_ADDR_W),
    .DATA_W   (MEM_W),
    .ID_DEPTH ({{ m.id_depth }}),
    .ID_PTR_W ({{ m.id_ptr_w }})
  ) u_mem_arbiter_{{ m.index }} (
    .clk_i           (clk_i),
    .{{ c.rst }}     ({{ c.rst }}),
    .req_valid_i     (mem{{ m.index }}_req_valid),
    .req_ready_o     (mem{{ m.index }}_ready),
    .req_write_i     (mem{{ m.index }}_req_write),
    .req_addr_i      (mem{{ m.index }}_req_addr),
    .req_wdata_i     (mem{{ m.index }}_req_wdata),
    .rsp_valid_o     (mem{{ m.index }}_rsp_valid),
    .rsp_rdata_o     (mem{{ m.index }}_rsp_rdata),
    .mem_req_valid_o (mem_req_valid_o[{{ m.index }}]),
    .mem_req_ready_i (mem_req_ready_i[{{ m.index }}]),
    .mem_req_write_o (mem_req_write_o[{{ m.index }}]),
    .mem_req_addr_o  (mem_req_addr_o[{{ m.index }}*MEM_ADDR_W +: MEM_ADDR_W]),
    .mem_req_wdata_o (mem_req_wdata_o[{{ m.index }}*MEM_W +: MEM_W]),
    .mem_rsp_valid_i (mem_rsp_valid_i[{{ m.index }}]),
    .mem_rsp_rdata_i (mem_rsp_rdata_i[{{ m.index }}*MEM_W +: MEM_W])
  );
{% endfor %}
{%- endif %}

  hwgen_csr #(
    .CSR_ADDR_W    (CSR_ADDR_W),
    .NUM_CORES     (NUM_CORES),
    .PERF_COUNTERS (`HWGEN_PERF_COUNTERS)
  ) u_csr (
    .clk_i        (clk_i),
    .{{ c.rst }}  ({{ c.rst }}),
    .csr_we_i     (csr_we_i),
    .csr_addr_i   (csr_addr_i),
    .csr_wdata_i  (csr_wdata_i),
    .csr_rdata_o  (csr_rdata_o),
    .start_o      (start),
    .prog_base_o  (prog_base),
    .core_busy_i  (core_busy),
    .core_error_i (core_error),
    .perf_i       (perf)
  );

endmodule
