// A kernel's local memory (register spills) on the machine it runs on: which
// of its warps' local loads the L1 serves, what the others wait for, and the
// bytes its spills move to and from the L2 (docs/engine.md, "Local memory").
#pragma once
#include <memory>
#include <vector>

#include "sim/profile/hardware_profile.h"
#include "sim/schedule/warp_programs.h"

namespace iosim::engine {

// One warp's local-memory traffic per run of a program.
struct LocalTraffic {
  i64 store_bytes = 0;  // STL: written through the L1 to the L2
  i64 load_bytes = 0;   // LDL
  i64 miss_bytes = 0;   // LDL lines the L1 no longer held: read from the L2
  i64 frame_bytes = 0;  // the warp's local lines the program touches, 128 B each
};

// `program` with its local accesses (WarpProgram::locals) resolved for
// `resident_warps` warps on the SM and `l1_bytes` of L1 beside shared memory:
// the loads schedule::local_hits finds absent become Op::local_miss (they wait
// for the L2), and the instruction `use_distance` after each load waits for it
// (the kernel's first reader of the loaded registers, counted in the SASS).
schedule::WarpProgram resolve_local_memory(const schedule::WarpProgram& program, i64 resident_warps, i64 l1_bytes,
                                           LocalTraffic& traffic);

// A kernel's programs resolved as above, with each program's traffic (by
// program id); programs without local accesses are copied unchanged.
struct LocalMemory {
  std::shared_ptr<const schedule::KernelPrograms> programs;
  std::vector<LocalTraffic> traffic;  // by program id
  i64 l1_bytes = 0;                   // L1 beside shared memory on each SM
  i64 frame_bytes = 0;                // one CTA's local lines touched (all warps)
  bool any() const { return frame_bytes > 0; }
};
LocalMemory local_memory(const std::shared_ptr<const schedule::KernelPrograms>& programs,
                         const profile::HardwareProfile& p, i64 ctas_per_sm, i64 smem_per_cta);

}  // namespace iosim::engine
