// A shared bandwidth resource (the DRAM interface, the L2 slices) as one FIFO
// server: requests are reserved in the order they are issued, which the
// engine guarantees is simulated-time order.
#pragma once
#include <algorithm>

#include "sim/common/hd.h"

namespace iosim::memory {

class BandwidthServer {
 public:
  explicit BandwidthServer(double bytes_per_cycle) : bytes_per_cycle_(bytes_per_cycle) {}
  // Reserves the transfer of `bytes` issued at `now`; returns when it ends.
  double reserve(double bytes, double now) {
    const double start = std::max(now, free_at_);
    const double cycles = bytes / bytes_per_cycle_;
    free_at_ = start + cycles;
    busy_cycles_ += cycles;
    return free_at_;
  }
  double bytes_per_cycle() const { return bytes_per_cycle_; }
  double busy_cycles() const { return busy_cycles_; }  // cumulative
  double free_at() const { return free_at_; }

 private:
  double bytes_per_cycle_;
  double free_at_ = 0;
  double busy_cycles_ = 0;
};

}  // namespace iosim::memory
