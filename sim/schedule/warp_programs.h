// The warp programs of each kernel of a plan (warp_program.h): what one warp
// issues in each kind of step its CTA takes, written from the kernel's code.
// The trace tags every step with the program it runs (trace::ComputeWork::
// program); the timing engine runs the programs on its SM model.
#pragma once
#include <algorithm>
#include <vector>

#include "sim/schedule/plan.h"
#include "sim/schedule/warp_program.h"

namespace iosim::schedule {

// The kinds of step a CTA takes; a kernel has the programs of the kinds it uses
// (an index into KernelPrograms::programs, or kNoProgram: nothing to compute).
enum StepProgram : int {
  kNoProgram = -1,
  kMainStep = 0,    // the main loop's step (FA2: a key or query block; GEMM: a k chunk; row kernels: their rows)
  kMaskedStep = 1,  // the same with the element mask (causal diagonal, ragged last block)
  kEpilogue = 2,    // after the loop: normalise and write the outputs (GEMM: a tile's C, all but the CTA's last)
  kKeyLoad = 3,     // FA1: the outer loop's K_j, V_j loads
  kPrologue = 4,    // FA1: O, l, m (forward) or dK, dV, dQaccum (backward) initialised in global memory;
                    // FA2 backward: the spills of its set-up, with the K_j, V_j loads
  kFinalStep = 5,   // FA1 backward: dQaccum -> dQ; GEMM: the CTA's last tile's C, with its one-time work
  kKeyStore = 6,    // FA1 backward: dK_j, dV_j written
  kStatsPass = 7,   // row softmax of a row longer than shared memory: the statistics pass
  kMaskedEpilogue = 8,  // FA2 / FA3 forward: the epilogue of a CTA that had a masked run (FA2: its set-up's
                        // spills differ; FA3: the same program)
  kFirstStep = 9,         // FA2 forward: a CTA's first key block, unmasked / masked: every row's maximum grows
  kFirstMaskedStep = 10,  // from -inf, so the lazy rescale runs (and spills where its block holds spills)
  kStepPrograms = 11
};

struct KernelPrograms {
  std::vector<WarpProgram> programs;  // by StepProgram; empty where a kernel has no such step
  i64 warps = 0;                      // warps per CTA (every warp runs the step's program)
  bool tensor = false;                // issues mma.sync (the SM runs at its clock under tensor load)
  // The programs wait for the step's global loads themselves (synchronous
  // ld.global: FA1, the row softmax, FA2's row kernels): the step's compute
  // starts when its loads are issued, not when they have arrived.
  bool loads_in_program = false;
  // For such kernels: how many rounds a step's loads arrive in (a thread
  // waits for one batch of loads before it issues the next), by program.
  std::vector<int> load_rounds;
  // For such kernels: each round's share of the step's stores is written as
  // soon as that round's loads are in (the kernel stores inside its load
  // loop: FA2's dQ conversion), not once the whole step is done. The L2 then
  // sees the writes between the reads, as the hardware does: with them all
  // after the reads, the 12 CTAs per SM of convert_dq streamed every read
  // through the L2 first and left 27 MB dirty where the H200 leaves 16
  // (experiments/results/2026-11-28-h200-inflight-probe/README.md).
  bool stores_per_round = false;
  int rounds_of(int id) const {
    return id >= 0 && id < static_cast<int>(load_rounds.size()) ? std::max(1, load_rounds[static_cast<size_t>(id)]) : 1;
  }
  const WarpProgram* find(int id) const {
    return id >= 0 && id < static_cast<int>(programs.size()) && !programs[static_cast<size_t>(id)].code.empty()
               ? &programs[static_cast<size_t>(id)]
               : nullptr;
  }
};

// The programs of one kernel of a plan, for the data type's element size.
KernelPrograms warp_programs(const KernelPlan& k, i64 elem_bytes);

}  // namespace iosim::schedule
