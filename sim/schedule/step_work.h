// What a CTA issues in one step of its loop nest, by the SM pipe that runs it:
// the input of the timing engine's SM execution model (sim/engine/sm_model.h).
//
// Counts are warp instructions (one per 32 lanes) of ONE warp, derived from
// each kernel's code (kernels/...: its unrolled loops over MMA fragments, the
// softmax's per-element operations, its copies) by the functions of
// step_work.cpp, next to the schedule the kernel walks; they are checked
// against the SASS and Nsight Compute's instruction counters
// (experiments/validation), never fitted.
//
// A step is a sequence of phases separated by CTA barriers: within a phase
// each active warp runs on its own, so its pipes overlap as far as the warp's
// dependences and the other warps on its sub-partition allow.
#pragma once
#include <cstdint>

#include "sim/common/hd.h"

namespace iosim::schedule {

// One warp's instructions in one phase, by pipe (Hopper / Ampere SM: four
// sub-partitions, each with a tensor pipe, an FMA pipe, a MUFU unit and one
// issue slot per cycle; shared memory is one unit per SM).
struct WarpInstructions {
  i64 mma = 0;         // HMMA.16816: mma.sync m16n8k16 (4096 FLOP)
  i64 ldsm = 0;        // LDSM .x4: 512 bytes from shared memory
  i64 fp32 = 0;        // FP32 pipe: FFMA, FADD, FMUL, FMNMX, FSEL, FSETP
  i64 mufu = 0;        // MUFU: EX2, LG2, RCP
  i64 other = 0;       // everything else that takes an issue slot: integer and address
                       // arithmetic, conversions and packing, shuffles, votes, branches,
                       // barriers, global loads/stores/reductions, cp.async
  i64 smem_bytes = 0;  // shared-memory bytes moved besides LDSM (STS, LDS)

  IOSIM_HD i64 issued() const { return mma + ldsm + fp32 + mufu + other; }
  IOSIM_HD WarpInstructions& operator+=(const WarpInstructions& o) {
    mma += o.mma;
    ldsm += o.ldsm;
    fp32 += o.fp32;
    mufu += o.mufu;
    other += o.other;
    smem_bytes += o.smem_bytes;
    return *this;
  }
};

// The longest chain of dependent instructions one warp runs through in a
// phase, as a count of each latency: what a warp alone cannot hide.
struct DependentChain {
  i64 mma = 0;   // dependent mma.sync (the reduction dimension / 16 per accumulator)
  i64 fp32 = 0;  // dependent FP32 operations (a running max or sum)
  i64 mufu = 0;  // dependent MUFU results
  i64 shfl = 0;  // dependent warp shuffles (row reductions across lanes)
  i64 smem = 0;  // dependent shared-memory round trips (LDSM/LDS before their use)
};

struct StepPhase {
  WarpInstructions warp;  // each active warp's instructions
  i64 warps = 0;          // warps that run the phase (idle warps skip it)
  DependentChain chain;
};

struct StepWork {
  static constexpr int kMaxPhases = 3;
  StepPhase phase[kMaxPhases] = {};
  int phases = 0;
  i64 barriers = 0;     // CTA-wide barriers in the step
  i64 load_rounds = 0;  // global-load round trips a thread waits for in turn
                        // (synchronous loads; 0 when the loads are asynchronous)

  IOSIM_HD StepPhase& add_phase(i64 warps) {
    StepPhase& p = phase[phases++];
    p.warps = warps;
    return p;
  }
  IOSIM_HD bool empty() const { return phases == 0 && barriers == 0 && load_rounds == 0; }
  // Instructions of all warps of all phases.
  IOSIM_HD WarpInstructions total() const {
    WarpInstructions t;
    for (int i = 0; i < phases; ++i) {
      const StepPhase& p = phase[i];
      t.mma += p.warp.mma * p.warps;
      t.ldsm += p.warp.ldsm * p.warps;
      t.fp32 += p.warp.fp32 * p.warps;
      t.mufu += p.warp.mufu * p.warps;
      t.other += p.warp.other * p.warps;
      t.smem_bytes += p.warp.smem_bytes * p.warps;
    }
    return t;
  }
};

}  // namespace iosim::schedule
