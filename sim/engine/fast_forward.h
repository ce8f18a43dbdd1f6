// Fast-forward (EngineOptions::fast_forward): the parts of a kernel's
// steady state that the engine does not run, and what they are charged.
//
// Two forms, both approximate (docs/engine.md, "Fast-forward", measures them):
//   - whole CTAs: in a grid of 20+ waves, the CTAs of its middle, in whole
//     periods of the grid (a batch element's or a head's CTAs);
//   - steps within CTAs: in a grid of under 10 waves of long CTAs whose steps
//     repeat (FA1: one CTA per head, its K/V blocks in turn), the middle
//     periods of every CTA's steps.
// Grids between run whole (engine.cpp, KernelRunner::plan_fast_forward).
// What skipped work requests, computes and executes is exact: its trace is
// walked (SkipTally). Its time and its L2/DRAM outcomes are a window's that
// ran just before it, per request byte (charge_memory).
#pragma once
#include <array>
#include <vector>

#include "sim/memory/memory_system.h"
#include "sim/trace/range_trace.h"

namespace iosim::engine {

// The request bytes of skipped steps, by access kind and by tensor (the
// trace's), and their warps' spills to and from the L2.
struct SkipTally {
  i64 steps = 0;
  std::array<i64, memory::kAccessKinds> kind_bytes{};
  std::vector<std::array<i64, 2>> tensor_bytes;  // by tensor: read, written (writes and reductions)
  i64 spill_read_bytes = 0, spill_write_bytes = 0;  // local loads the L1 missed, local stores
  void add(const trace::RangeStep& step, i64 weight = 1);  // `weight` such steps
  i64 bytes() const { return kind_bytes[0] + kind_bytes[1] + kind_bytes[2]; }  // the trace's
};

// The memory counters charged for `skipped`, from `window` (the counters of
// a stretch that ran): each access kind's and each tensor's outcomes times
// the ratio of skipped's requested bytes of that kind or tensor to the
// window's (the spills: tensor `local`); DRAM reads and writes follow the
// fills and write-backs. The requested bytes are the tally's, exactly. Sets
// f, the ratio of the trace's request bytes.
memory::MemoryCounters charge_memory(const memory::MemoryCounters& window, const SkipTally& skipped,
                                     trace::TensorIndex local, i64 sector_bytes, double& f);


// The shape of a CTA's steps: how many, and the shortest period after a
// prologue of at most 2 steps with which every step's accesses (kind, tensor,
// row bytes, rows, stride) and program repeat, at least 4 times, up to
// closing steps that do not (at most a period and 2 more: FA1's last K/V
// block is shorter where Bc does not divide N). Period 0: none.
struct StepPattern {
  i64 steps = 0;
  i64 period = 0;
  i64 prologue = 0;
  i64 closing = 0;
  u64 signature = 0;  // of the whole sequence: CTAs with equal signatures have the same steps' shapes
};
StepPattern step_pattern(const trace::RangeKernel& kernel, i64 cta);

}  // namespace iosim::engine
