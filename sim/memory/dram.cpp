#include "sim/memory/dram.h"

#include "sim/common/error.h"

namespace iosim::memory {

DramModel DramModel::from_profile(const profile::HardwareProfile& p) {
  const double bw = p.dram_achievable_bandwidth_bytes_per_s();
  if (!(bw > 0) || !(p.sm_clock_hz > 0) || !(p.dram_latency_cycles >= 0))
    throw InputError("profile '" + p.name +
                     "': DRAM needs a positive achievable bandwidth, a positive SM clock and a latency >= 0");
  return DramModel(bw / p.sm_clock_hz, p.dram_latency_cycles);
}

}  // namespace iosim::memory
