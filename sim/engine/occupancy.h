// How many CTAs of a kernel fit on one SM at once, and what limits it, from
// the profile's per-SM resources and the kernel's per-CTA resources, with the
// allocation rules of the CUDA occupancy calculator: registers are allocated
// per warp in units of 256, and on compute capability >= 8.0 the runtime
// reserves 1 KiB of shared memory per CTA.
#pragma once
#include <string>

#include "sim/profile/hardware_profile.h"
#include "sim/trace/trace.h"

namespace iosim::engine {

struct Occupancy {
  i64 ctas_per_sm = 0;
  std::string limiter;  // "shared_memory", "registers", "threads", "warps" or "max_ctas"
  i64 by_smem = 0, by_registers = 0, by_threads = 0, by_warps = 0, by_max_ctas = 0;
  i64 smem_per_cta = 0;  // including the runtime's reservation
  i64 regs_per_cta = 0;  // after allocation rounding
  i64 total_ctas = 0;
  i64 slots = 0;         // ctas_per_sm x SMs
  i64 waves = 0;         // ceil(total_ctas / slots)
  double waves_exact = 0;
};

// Throws iosim::InputError when a CTA cannot run at all (too much shared
// memory per block, too many threads or registers), saying which limit.
Occupancy compute_occupancy(const profile::HardwareProfile& p, const trace::CtaResources& cta, i64 total_ctas,
                            const std::string& kernel_name);

}  // namespace iosim::engine
