// The SM execution model: how long a CTA's step takes on an SM, from the warp
// programs of sim/schedule/warp_programs.h, when `ctas` CTAs of the kernel
// share the SM.
//
// A cycle-level model of one SM: four sub-partitions (SMSPs), each issuing at
// most one warp instruction per cycle, in order per warp, from whichever of its
// warps has its next instruction's inputs ready and its pipe free (greedy then
// oldest). Each pipe of an SMSP accepts an instruction every `interval` cycles
// and delivers its result `latency` cycles after issue; shared-memory bytes go
// through one port per SM; a barrier releases a CTA's warps once all have
// arrived. Warps are placed on SMSPs by warp slot, CTA after CTA. So the model
// has, from measured pipe parameters alone, the overlap of tensor and
// FP32/MUFU work between warps and between co-resident CTAs, the latency a warp
// cannot hide alone, and the issue limit.
//
// Steps of the same program are run back to back, the CTAs' starts staggered
// (the hardware's CTAs drift apart within a few steps); the result is the
// steady-state time per step per CTA. Results are cached per (program, ctas).
#pragma once
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/profile/hardware_profile.h"
#include "sim/schedule/warp_program.h"

namespace iosim::engine {

// Sub-partitions (SMSPs) per SM on every architecture the profiles describe.
inline constexpr int kSmsps = 4;

// One pipe of an SMSP: cycles between instructions, cycles to the result.
struct PipeTiming {
  double interval = 1;
  double latency = 4;
};

// The machine parameters the model runs on (per SMSP unless stated), in
// cycles of the SM clock while the kernel runs.
struct SmMachine {
  std::array<PipeTiming, schedule::kPipeCount> pipe{};
  double smem_bytes_per_cycle = 128;  // the SM's shared-memory port
  // Backlog of the shared-memory port (cycles of transfers already queued)
  // at which a warp's next shared-memory instruction stalls.
  double smem_queue_cycles = 64;
  // The SM's reductions into global memory (red.global, schedule::Op::reduce):
  // they drain at red_bytes_per_cycle (sm_pipes.red_per_sm; 0: a reduction
  // costs its issue slot only), so a step is no shorter than its drain, and a
  // warp stalls on one only when the SM's backlog exceeds red_queue_cycles of
  // draining (sm_machine: unbounded; docs/engine.md, "Reductions").
  double red_bytes_per_cycle = 0;
  double red_queue_cycles = 0;
  // The SM's global stores (schedule::Op::store, store_fragment): each holds
  // the SM's store port its cycles (1 / sm_pipes.store_rows or
  // store_fragment; 0: a store costs its issue slot only), a warp stalls on
  // one only when the port's backlog exceeds store_queue_cycles, and a
  // warp's step ends once its stores have drained (Nsight Compute's `drain`
  // at EXIT).
  double store_rows_cycles = 0;
  double store_fragment_cycles = 0;
  double store_queue_cycles = 0;
  // Mean cycles from a warp's instruction to its next one: the stall count
  // the compiler writes into each instruction's control code (sm_90 SASS)
  // holds the warp that long, whether or not the next instruction needs the
  // result; 1 = no such hold. Combined with operand readiness by max.
  double warp_issue_interval = 1;
  // Asynchronous warpgroup MMA (wgmma, schedule::Op::wgmma): the tensor pipe
  // of an SMSP runs a warp's share of one in flop / wgmma_flop_per_cycle
  // cycles, a warp's wgmmas in order behind whatever the pipe holds, and the
  // result is ready wgmma_extra_latency cycles after the pipe finishes it.
  double wgmma_flop_per_cycle = 1024;  // per SMSP
  double wgmma_extra_latency = 0;
  // Cycles a branch holds its warp from issue to the warp's next
  // instruction (taken / falling through), and a BSSY or BSYNC (half the
  // measured cost of the pair); where below warp_issue_interval (or 0: the
  // profile has no sm_pipes.branch_*), the interval holds.
  double branch_taken_cycles = 0;
  double branch_not_taken_cycles = 0;
  double reconverge_cycles = 0;
  double clock_tensor_hz = 0;         // SM clock while tensor work runs (mma.sync kernels)
  double clock_wgmma_hz = 0;          // SM clock while wgmma runs (kernels that issue it)
  double clock_other_hz = 0;          // SM clock otherwise
  bool measured = false;              // every value from the profile's sm_pipes (iosim calibrate)
  std::string source;                 // where the values come from
};

// Cycles an instruction holds its warp before the warp's next may issue: the
// control-code interval, or a branch's measured hold.
double warp_hold_cycles(const SmMachine& m, const schedule::Instr& in);

// Cycles an instruction holds its SMSP's pipe: a wgmma its FLOP at the wgmma
// rate, anything else the pipe's interval.
double pipe_cycles(const SmMachine& m, const schedule::Instr& in);

// The machine of a profile: its measured `sm_pipes`, or, where the profile has
// none, values derived from its datasheet rates and generic latencies (the
// JSON says `timing.calibrated: false`).
SmMachine sm_machine(const profile::HardwareProfile& p);

class SmModel {
 public:
  explicit SmModel(SmMachine m) : m_(std::move(m)) {}
  const SmMachine& machine() const { return m_; }
  // Steady-state cycles (of the SM clock) per step per CTA when `ctas` CTAs of
  // `warps` warps each run `program` on one SM; ctas >= 1, warps >= 1.
  // external_loads: the program's global loads are waited for outside it (the
  // engine's load rounds), so they only take their issue slot here.
  double step_cycles(const schedule::WarpProgram& program, i64 warps, i64 ctas, bool external_loads = false);
  // A program that loads its own tiles synchronously and then meets at a
  // barrier (FA1's steps: the tiles into registers, shared memory, the
  // barrier, then the products): the cycles of its part after that barrier,
  // which cannot start before the loads are in; 0 when it has no such
  // barrier (its work may overlap the loads).
  double after_loads_cycles(const schedule::WarpProgram& program, i64 warps, i64 ctas);
  // The part of `program` after its loads' barrier (as after_loads_cycles
  // times it; empty when it has none), with its regions and the index each
  // instruction has in `program` (WarpProgram::origin).
  const schedule::WarpProgram& after_loads_part(const schedule::WarpProgram& program);

  // Where one warp's cycles go: the cycle at which warp 0 of CTA 0 issued
  // each instruction of `program` (its source order) in the last simulated
  // step, from that step's start, and the cycles it waited before each
  // (from its previous issue in issue order: what Nsight Compute's warp
  // samples charge to that instruction's address).
  struct Walk {
    std::vector<double> issue;   // by instruction of `program`
    std::vector<double> waited;  // by instruction of `program`
    double step = 0;             // the step's cycles for warp 0 (first issue to the next step's first issue)
  };
  Walk walk(const schedule::WarpProgram& program, i64 warps, i64 ctas, bool external_loads = false);

 private:
  // warp0_issue: when given, the issue cycle of each instruction (issue
  // order) of warp 0 in its steps (all steps, one after another).
  double simulate(const schedule::WarpProgram& program, i64 warps, i64 ctas, int steps, double stagger,
                  bool external_loads, std::vector<double>* warp0_issue = nullptr) const;
  SmMachine m_;
  // How far apart the CTAs start when `ctas` share the SM: a step of one
  // alone over their number (0 for one CTA).
  double stagger(const schedule::WarpProgram& program, i64 warps, i64 ctas, bool external_loads);
  // The program in the order the compiler issues it (compiler_order.h), per program.
  const schedule::WarpProgram& issue_order(const schedule::WarpProgram& program);
  std::map<std::tuple<const schedule::WarpProgram*, i64, i64, bool>, double> cache_;
  std::map<const schedule::WarpProgram*, schedule::WarpProgram> ordered_;
  std::map<const schedule::WarpProgram*, schedule::WarpProgram> after_loads_;
};

}  // namespace iosim::engine
