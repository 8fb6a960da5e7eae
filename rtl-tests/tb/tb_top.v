// Whole-accelerator testbench for hwgen_top: models external memory (MEM_PORTS ports onto
// one memory, each with a fixed read latency, one request per cycle and optional random
// back-pressure), writes every engine's program base
// to the CSRs, starts the run, waits for done with a watchdog, then dumps a memory region
// and the cycle and performance counters. The engines fetch their programs from memory.
//   +prog=FILE       every engine's program base, engine 0 first ($readmemh, one hex beat
//                    address per line; the instructions are in the +dmem image)
//   +dmem=FILE       initial memory image ($readmemh, one MEM_W-bit beat per line)
//   +dump=FILE       where to write the dumped beats, one per line
//   +design_id=HEX   the Design hash the program was compiled for; a mismatch with the
//                    ID register stops the run before it starts
//   +dump_base=N +dump_count=N +stall_pct=N +seed=N +max_cycles=N
//   +stall_limit=N   with HWGEN_CORE0 defined (the hierarchical path of engine 0): stop
//                    once engine 0 (with HWGEN_PROGRESS_ALL, an expression over every
//                    engine: every engine) has made no progress (no instruction fetched
//                    or started, no memory handshake or response, no scratchpad write) for
//                    N cycles, and print engine 0's state: per queue "QUEUE q head_valid
//                    started busy", per semaphore "SEM s count", "FETCH pc fetching" and
//                    "MEMPORT valid ready write addr reads_in_flight" (memory port 0; the
//                    reads in flight on every port)
// Each port's bandwidth is limited to BYTES_PER_CYCLE by a token bucket. A write is in the
// memory once accepted, so a read accepted later on any port sees it.
// Built with +define+HWGEN_TIMELINE (and the generated tb_timeline.v), +timeline=FILE logs
// every engine's queue starts ("P cycle engine head_pop") and executor busy changes ("B
// cycle engine busy"), four bits each, queue 0 least significant.
// Built with +define+HWGEN_LOCKSTEP and HWGEN_CORE0 (the hierarchical path of engine 0),
// +writes=FILE logs every scratchpad row engine 0 writes, for lock-step comparison with the
// ISA interpreter: "L buffer row data" (load unit), "C row data" (matmul results),
// "V row data" (vector unit).
`include "hwgen_isa.vh"
module tb #(
  parameter integer MEM_W           = 64,
  parameter integer MEM_PORTS       = 1,
  parameter integer NUM_CORES       = 1,
  parameter integer LATENCY         = 20,
  parameter integer MEM_WORDS       = 65536,
  parameter integer PERF_WORDS      = 9,
  parameter integer PERF_BASE       = 16,
  parameter integer PERF_STRIDE     = 16,
  parameter integer PROG_BASE_SLOT  = 15,
  parameter integer BYTES_PER_CYCLE = MEM_W / 8,
  parameter integer PATH_CHARS      = 1024,
  parameter integer SEM_COUNT_W     = 32
) (
  input wire clk_i
);
  reg [MEM_W-1:0]   mem  [0:MEM_WORDS-1];
  reg [31:0]        prog [0:NUM_CORES-1];
  // File names of up to PATH_CHARS characters (hwgen sets it and checks the length).
  reg [8*PATH_CHARS-1:0] prog_file;
  reg [8*PATH_CHARS-1:0] dmem_file;
  reg [8*PATH_CHARS-1:0] dump_file;
  reg [63:0]        design_id;
  reg               check_id;
  integer           credit [0:MEM_PORTS-1];
  integer           p;
  integer           dump_base;
  integer           dump_count;
  integer           stall_pct;
  integer           seed;
  integer           max_cycles;
  integer           cycle;
  integer           i;
  integer           fd;

  reg                    rst_ni;
  reg                    csr_we;
  reg  [11:0]            csr_addr;
  reg  [31:0]            csr_wdata;
  wire [31:0]            csr_rdata;
  wire [MEM_PORTS-1:0]       mem_req_valid;
  reg  [MEM_PORTS-1:0]       mem_req_ready;
  wire [MEM_PORTS-1:0]       mem_req_write;
  wire [MEM_PORTS*32-1:0]    mem_req_addr;
  wire [MEM_PORTS*MEM_W-1:0] mem_req_wdata;
  reg  [MEM_PORTS-1:0]       mem_rsp_valid;
  reg  [MEM_PORTS*MEM_W-1:0] mem_rsp_rdata;

  hwgen_top dut (
    .clk_i           (clk_i),
`ifdef HWGEN_RST_HIGH
    .rst_i           (!rst_ni),
`else
    .rst_ni          (rst_ni),
`endif
    .csr_we_i        (csr_we),
    .csr_addr_i      (csr_addr),
    .csr_wdata_i     (csr_wdata),
    .csr_rdata_o     (csr_rdata),
    .mem_req_valid_o (mem_req_valid),
    .mem_req_ready_i (mem_req_ready),
    .mem_req_write_o (mem_req_write),
    .mem_req_addr_o  (mem_req_addr),
    .mem_req_wdata_o (mem_req_wdata),
    .mem_rsp_valid_i (mem_rsp_valid),
    .mem_rsp_rdata_i (mem_rsp_rdata)
  );

  // Read responses come back LATENCY cycles after the request was accepted, through a
  // shift register per port (vectors, not arrays: no loop that Verilator must unroll,
  // whatever the ports and latency).
  reg [MEM_PORTS*LATENCY-1:0]       pipe_valid;
  reg [MEM_PORTS*LATENCY*MEM_W-1:0] pipe_data;

  initial begin
    if (!$value$plusargs("prog=%s", prog_file)) $fatal(1, "missing +prog");
    if (!$value$plusargs("dmem=%s", dmem_file)) $fatal(1, "missing +dmem");
    if (!$value$plusargs("dump=%s", dump_file)) $fatal(1, "missing +dump");
    if (!$value$plusargs("dump_base=%d", dump_base)) dump_base = 0;
    if (!$value$plusargs("dump_count=%d", dump_count)) dump_count = 0;
    if (!$value$plusargs("stall_pct=%d", stall_pct)) stall_pct = 0;
    if (!$value$plusargs("seed=%d", seed)) seed = 1;
    if (!$value$plusargs("max_cycles=%d", max_cycles)) max_cycles = 1000000;
    check_id = $value$plusargs("design_id=%h", design_id);
    for (p = 0; p < MEM_PORTS; p = p + 1) credit[p] = 0;
    for (i = 0; i < NUM_CORES; i = i + 1) prog[i] = 32'd0;
    for (i = 0; i < MEM_WORDS; i = i + 1) mem[i] = {MEM_W{1'b0}};
    // $readmemh does not fail on a file it cannot open; check first.
    fd = $fopen(prog_file, "r");
    if (fd == 0) $fatal(1, "cannot read +prog file %0s", prog_file);
    $fclose(fd);
    fd = $fopen(dmem_file, "r");
    if (fd == 0) $fatal(1, "cannot read +dmem file %0s", dmem_file);
    $fclose(fd);
    $readmemh(prog_file, prog);
    $readmemh(dmem_file, mem);
    pipe_valid = {(MEM_PORTS*LATENCY){1'b0}};
    pipe_data  = {(MEM_PORTS*LATENCY*MEM_W){1'b0}};
    cycle = 0;
    rst_ni = 1'b0;
    csr_we = 1'b0;
    csr_addr = 12'd0;
    csr_wdata = 32'd0;
    mem_req_ready = {MEM_PORTS{1'b0}};
    mem_rsp_valid = {MEM_PORTS{1'b0}};
    mem_rsp_rdata = {(MEM_PORTS*MEM_W){1'b0}};
  end

  // Memory model, port by port: port p's pipeline is bits p*LATENCY .. p*LATENCY+LATENCY-1
  // of pipe_valid (and the beats at the same positions of pipe_data), entering at the
  // lowest and leaving at the highest.
  reg [31:0]              port_addr;
  reg [LATENCY-1:0]       shift_valid;
  reg [LATENCY*MEM_W-1:0] shift_data;
  reg                     read_now;
  always @(posedge clk_i) begin
    for (p = 0; p < MEM_PORTS; p = p + 1) begin
      shift_valid = pipe_valid[p*LATENCY +: LATENCY];
      shift_data = pipe_data[p*LATENCY*MEM_W +: LATENCY*MEM_W];
      mem_rsp_valid[p] <= shift_valid[LATENCY-1];
      mem_rsp_rdata[p*MEM_W +: MEM_W] <= shift_data[(LATENCY-1)*MEM_W +: MEM_W];
      port_addr = mem_req_addr[p*32 +: 32];
      read_now = mem_req_valid[p] && mem_req_ready[p] && !mem_req_write[p];
      if (mem_req_valid[p] && mem_req_ready[p]) begin
        if (port_addr >= MEM_WORDS) begin
          $display("ERROR: memory access at beat %0d is outside the model", port_addr);
          $finish;
        end
        if (mem_req_write[p]) begin
          mem[port_addr] <= mem_req_wdata[p*MEM_W +: MEM_W];
        end
      end
      shift_valid = shift_valid << 1;
      shift_data = shift_data << MEM_W;
      if (read_now) begin
        shift_valid[0] = 1'b1;
        shift_data[MEM_W-1:0] = mem[port_addr];
      end
      pipe_valid[p*LATENCY +: LATENCY] <= shift_valid;
      pipe_data[p*LATENCY*MEM_W +: LATENCY*MEM_W] <= shift_data;
    end
  end

  // One beat needs MEM_W/8 bytes of credit; BYTES_PER_CYCLE arrive every cycle, per port.
  always @(negedge clk_i) begin
    for (p = 0; p < MEM_PORTS; p = p + 1) begin
      if (mem_req_valid[p] && mem_req_ready[p]) credit[p] = credit[p] - MEM_W / 8;
      if (credit[p] < MEM_W / 8) credit[p] = credit[p] + BYTES_PER_CYCLE;
      mem_req_ready[p] <= (credit[p] >= MEM_W / 8) &&
                          ((($random(seed) % 100 + 100) % 100) >= stall_pct);
    end
  end

`ifdef HWGEN_CORE0
  // Hang diagnosis (see +stall_limit).
  localparam integer NUM_SEM = `HWGEN_NUM_SEM;
  integer            stall_limit;
  integer            idle;
  integer            started [0:3];
  integer            in_flight;
  integer            q;
  // Semaphore counts, each widened to SEM_COUNT_W bits for printing.
  wire [NUM_SEM*SEM_COUNT_W-1:0] sem_counts;
  genvar gs;
  generate
    for (gs = 0; gs < NUM_SEM; gs = gs + 1) begin : gen_sem_count
      wire [SEM_COUNT_W-1:0] count = `HWGEN_CORE0.gen_sem[gs].u_sem.count_q;
      assign sem_counts[gs*SEM_COUNT_W +: SEM_COUNT_W] = count;
    end
  endgenerate
`ifdef HWGEN_PROGRESS_ALL
  // Several engines: progress is any engine's (one may wait on another's stream).
  wire engines_progress = `HWGEN_PROGRESS_ALL;
`else
  wire engines_progress = (`HWGEN_CORE0.head_pop != 4'b0000)
               || ((`HWGEN_CORE0.push_valid & `HWGEN_CORE0.push_ready) != 4'b0000)
               || `HWGEN_CORE0.ld_wr_valid || `HWGEN_CORE0.acc_hi_wr_valid
               || `HWGEN_CORE0.out_hi_wr_valid;
`endif
  wire progress = |(mem_req_valid & mem_req_ready) || |mem_rsp_valid || engines_progress;
  initial begin
    if (!$value$plusargs("stall_limit=%d", stall_limit)) stall_limit = 0;
    idle = 0;
    for (q = 0; q < 4; q = q + 1) started[q] = 0;
  end
  always @(posedge clk_i) begin
    for (q = 0; q < 4; q = q + 1) if (`HWGEN_CORE0.head_pop[q]) started[q] = started[q] + 1;
  end
`endif

`ifdef HWGEN_TIMELINE
  // Every engine's instruction starts and executor busy changes, for `hwgen sim --timeline`
  // (the module is generated per Design: tb_timeline.v).
  tb_timeline #(.PATH_CHARS(PATH_CHARS)) u_timeline (.clk_i(clk_i));
`endif

`ifdef HWGEN_LOCKSTEP
  integer      wfd;
  reg [8*PATH_CHARS-1:0] writes_file;
  initial begin
    wfd = 0;
    if ($value$plusargs("writes=%s", writes_file)) wfd = $fopen(writes_file, "w");
  end
  always @(posedge clk_i) begin
    if (wfd != 0 && rst_ni) begin
      if (`HWGEN_CORE0.ld_wr_valid && `HWGEN_CORE0.ld_wr_ready)
        $fwrite(wfd, "L %0d %0d %h\n", `HWGEN_CORE0.ld_wr_buffer, `HWGEN_CORE0.ld_wr_addr,
                `HWGEN_CORE0.ld_wr_data);
      if (`HWGEN_CORE0.acc_hi_wr_valid)
        $fwrite(wfd, "C %0d %h\n", `HWGEN_CORE0.acc_hi_wr_addr, `HWGEN_CORE0.acc_hi_wr_data);
      // The vector unit's rows: to the output buffer, or (to_input) to the input buffer.
      if (`HWGEN_CORE0.vec_wr_valid)
        $fwrite(wfd, "V %0d %0d %h\n", `HWGEN_CORE0.vec_wr_input ? 0 : 3,
                `HWGEN_CORE0.vec_wr_addr, `HWGEN_CORE0.vec_wr_data);
    end
  end
`endif

  // Control sequence: reset, program bases, start, poll for done, report.
  localparam integer S_RESET = 0, S_PROG = 1, S_START = 2, S_POLL = 3, S_READ = 4, S_REPORT = 5,
                     S_ID = 6;
  integer state;
  integer counter;
  reg [31:0] words [0:6+PERF_WORDS*NUM_CORES];
  integer perf_addr;
  initial begin
    state = S_RESET;
    counter = 0;
  end

  always @(negedge clk_i) begin
    cycle = cycle + 1;
    csr_we  <= 1'b0;
    if (cycle > max_cycles) begin
      $display("ERROR: watchdog: no done after %0d cycles (hwgen sim --max-cycles raises the limit)", max_cycles);
      $finish;
    end
    case (state)
      S_RESET: begin
        rst_ni <= (cycle > 3);
        if (cycle > 5) begin
          state = S_PROG;
          counter = 0;
        end
      end
      S_PROG: begin
        // Engine e's program base into its CSR (after the counters of its block).
        perf_addr = PERF_BASE + counter * PERF_STRIDE + PROG_BASE_SLOT;
        csr_we    <= 1'b1;
        csr_addr  <= perf_addr[11:0];
        csr_wdata <= prog[counter];
        counter = counter + 1;
        if (counter == NUM_CORES) begin
          state = S_ID;
          counter = 0;
        end
      end
      S_ID: begin
        // Read the ID register (two words) and refuse a program built for another Design.
        // csr_rdata answers the address set one cycle earlier.
        csr_addr <= counter[11:0];
        if (counter == 1) words[0] = csr_rdata;
        if (counter == 2) begin
          words[1] = csr_rdata;
          if (check_id && {words[1], words[0]} != design_id) begin
            $display("ERROR: program compiled for design %h, but this RTL is design %h", design_id, {words[1], words[0]});
            $finish;
          end
          state = S_START;
        end
        counter = counter + 1;
      end
      S_START: begin
        csr_we    <= 1'b1;
        csr_addr  <= 12'h002;
        csr_wdata <= 32'd1;
        state = S_POLL;
        counter = 0;
      end
      S_POLL: begin
        csr_addr <= 12'h003;
`ifdef HWGEN_CORE0
        idle = progress ? 0 : idle + 1;
        if (stall_limit > 0 && idle > stall_limit) begin
          in_flight = 0;
          in_flight = $countones(pipe_valid);
          $display("STALL %0d %0d", cycle, idle);
          for (q = 0; q < 4; q = q + 1)
            $display("QUEUE %0d %0d %0d %0d", q, `HWGEN_CORE0.queue_valid[q], started[q],
                     `HWGEN_CORE0.exec_busy[q]);
          for (i = 0; i < NUM_SEM; i = i + 1) $display("SEM %0d %0d", i, sem_counts[i*SEM_COUNT_W +: SEM_COUNT_W]);
          $display("FETCH %0d %0d", `HWGEN_CORE0.u_fetch.pc_q, `HWGEN_CORE0.fetching);
          $display("MEMPORT %0d %0d %0d %0d %0d", mem_req_valid[0], mem_req_ready[0],
                   mem_req_write[0], mem_req_addr[31:0], in_flight);
          $display("ERROR: stall: no progress for %0d cycles", idle);
          $finish;
        end
`endif
        // csr_rdata answers the address of the previous cycle.
        counter = counter + 1;
        if (counter > 3 && csr_rdata[2]) begin
          $display("ERROR: the accelerator raised its error flag");
          $finish;
        end
        if (counter > 3 && csr_rdata[1]) begin
          // Done means every engine is idle: no read it asked for may still be on its way
          // (an instruction prefetch past `end` included), or a new start would take it.
          if (|pipe_valid || |mem_rsp_valid) begin
            $display("ERROR: done with a memory read in flight");
            $finish;
          end
          state = S_READ;
          counter = 0;
        end
      end
      S_READ: begin
        // Read ID, cycles and every engine's counters: issue address k, capture k-1.
        if (counter < 7) csr_addr <= counter[11:0];
        else begin
          perf_addr = PERF_BASE + ((counter - 7) / PERF_WORDS) * PERF_STRIDE
                      + (counter - 7) % PERF_WORDS;
          csr_addr <= perf_addr[11:0];
        end
        if (counter > 0) words[counter-1] = csr_rdata;
        counter = counter + 1;
        if (counter == 8 + PERF_WORDS * NUM_CORES) state = S_REPORT;
      end
      default: begin
        fd = $fopen(dump_file, "w");
        if (fd == 0) begin
          $display("ERROR: cannot write the dump file %0s", dump_file);
          $finish;
        end
        for (i = 0; i < dump_count; i = i + 1) $fwrite(fd, "%h\n", mem[dump_base + i]);
        $fclose(fd);
        $display("ID %h%h", words[1], words[0]);
        $display("CYCLES %0d", {words[5], words[4]});
        for (i = 0; i < PERF_WORDS * NUM_CORES; i = i + 1)
          $display("PERF %0d %0d %0d", i / PERF_WORDS, i % PERF_WORDS, words[7+i]);
`ifdef HWGEN_LOCKSTEP
        if (wfd != 0) $fclose(wfd);
`endif
        $finish;
      end
    endcase
  end
endmodule
