// Generic Verilator harness for hwgen's testbenches: the testbench module (built with
// --prefix Vtb) has a single clock input clk_i and ends the run with $finish. Plusargs
// are passed through to $value$plusargs.
#include <cstdio>
#include <memory>

#include "Vtb.h"
#include "verilated.h"

int main(int argc, char** argv) {
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  auto top = std::make_unique<Vtb>(ctx.get());
  const uint64_t max_half_cycles = 200000000ULL;
  top->clk_i = 0;
  top->eval();
  while (!ctx->gotFinish() && ctx->time() < max_half_cycles) {
    ctx->timeInc(1);
    top->clk_i = !top->clk_i;
    top->eval();
  }
  top->final();
  if (!ctx->gotFinish()) {
    std::fprintf(stderr, "sim_main: no $finish after %llu half cycles\n",
                 static_cast<unsigned long long>(max_half_cycles));
    return 2;
  }
  return 0;
}
