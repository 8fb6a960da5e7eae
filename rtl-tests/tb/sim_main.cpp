// Generic Verilator harness for hwgen's testbenches: the testbench module (built with
// --prefix Vtb) has a single clock input clk_i and ends the run with $finish. Plusargs
// are passed through to $value$plusargs. A model built with --trace-fst writes an FST
// waveform to the file named by +trace=FILE.
#include <cstdio>
#include <memory>
#include <string>

#include "Vtb.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_fst_c.h"
#endif

int main(int argc, char** argv) {
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  auto top = std::make_unique<Vtb>(ctx.get());
  const uint64_t max_half_cycles = 200000000ULL;
#if VM_TRACE
  std::unique_ptr<VerilatedFstC> trace;
  const char* arg = ctx->commandArgsPlusMatch("trace=");
  if (arg && arg[0]) {
    std::string file = std::string(arg).substr(std::string("+trace=").size());
    ctx->traceEverOn(true);
    trace = std::make_unique<VerilatedFstC>();
    top->trace(trace.get(), 99);
    trace->open(file.c_str());
  }
#endif
  top->clk_i = 0;
  top->eval();
  while (!ctx->gotFinish() && ctx->time() < max_half_cycles) {
    ctx->timeInc(1);
    top->clk_i = !top->clk_i;
    top->eval();
#if VM_TRACE
    if (trace) trace->dump(ctx->time());
#endif
  }
  top->final();
#if VM_TRACE
  if (trace) trace->close();
#endif
  if (!ctx->gotFinish()) {
    std::fprintf(stderr, "sim_main: no $finish after %llu half cycles\n",
                 static_cast<unsigned long long>(max_half_cycles));
    return 2;
  }
  return 0;
}
