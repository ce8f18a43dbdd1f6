#include "sim/memory/dram.h"

#include <algorithm>

#include "sim/common/error.h"

namespace iosim::memory {

DramModel DramModel::from_profile(const profile::HardwareProfile& p) {
  const double bw = p.dram_achievable_bandwidth_bytes_per_s();
  if (!(bw > 0) || !(p.sm_clock_hz > 0) || !(p.dram_latency_cycles >= 0))
    throw InputError("profile '" + p.name +
                     "': DRAM needs a positive achievable bandwidth, a positive SM clock and a latency >= 0");
  // With a measured copy rate C (read + write) beside the read rate R, a
  // written byte costs 2/C - 1/R of the channel: a 1:1 mix runs at C.
  double write_cost = 1.0;
  if (p.dram_copy_fraction > 0) {
    const double r = p.dram_achievable_fraction, c = p.dram_copy_fraction;
    write_cost = std::max(0.5, r * (2.0 / c - 1.0 / r));
  }
  return DramModel(bw / p.sm_clock_hz, p.dram_latency_cycles, write_cost);
}

}  // namespace iosim::memory
