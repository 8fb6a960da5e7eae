{{ c.banner }}
// Issue stage of one queue: the instruction at the head of the queue starts when its
// executor is idle and every semaphore in its wait mask (restricted to the semaphores this
// queue consumes, CONSUMED) is available; starting pops it and acquires those semaphores.
module hwgen_issue #(
  parameter integer       NUM_SEM  = 10,
  parameter [NUM_SEM-1:0] CONSUMED = {NUM_SEM{1'b0}}
) (
  input  wire               head_valid_i,
  input  wire [NUM_SEM-1:0] head_wait_i,
  input  wire               exec_idle_i,
  input  wire [NUM_SEM-1:0] sem_available_i,
  output wire               head_pop_o,
  output wire [NUM_SEM-1:0] sem_acquire_o,
  output wire               start_o,
  output wire               stall_o
);

  wire [NUM_SEM-1:0] needed = head_wait_i & CONSUMED;
  wire               ready  = ((needed & ~sem_available_i) == {NUM_SEM{1'b0}});

  assign start_o       = head_valid_i && exec_idle_i && ready;
  assign head_pop_o    = start_o;
  assign sem_acquire_o = start_o ? needed : {NUM_SEM{1'b0}};
  assign stall_o       = head_valid_i && exec_idle_i && !ready;

endmodule
