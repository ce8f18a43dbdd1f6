// Device memory shared by all SMs: the achievable bandwidth of the profile
// (peak x measured fraction) as one FIFO server, plus a fixed latency. Reads
// are L2 sector fills; writes are write-backs of dirty L2 sectors evicted
// during the kernel (as Nsight Compute counts them).
#pragma once
#include "sim/memory/bandwidth.h"
#include "sim/profile/hardware_profile.h"

namespace iosim::memory {

struct DramCounters {
  i64 read_bytes = 0;
  i64 write_bytes = 0;
  double busy_cycles = 0;
  DramCounters minus(const DramCounters& o) const {
    return {read_bytes - o.read_bytes, write_bytes - o.write_bytes, busy_cycles - o.busy_cycles};
  }
};

class DramModel {
 public:
  // bytes_per_cycle and latency in SM cycles.
  DramModel(double bytes_per_cycle, double latency_cycles) : channel_(bytes_per_cycle), latency_(latency_cycles) {}
  static DramModel from_profile(const profile::HardwareProfile& p);

  // A fill of `bytes` requested at `now`: returns when the data reaches the
  // requesting SM (transfer end + load-to-use latency of a miss).
  double read(i64 bytes, double now) {
    counters_.read_bytes += bytes;
    return channel_.reserve(bytes, now) + latency_;
  }
  // A write-back of `bytes` at `now`: occupies the channel; nobody waits on it.
  void write_back(i64 bytes, double now) {
    counters_.write_bytes += bytes;
    channel_.reserve(bytes, now);
  }
  DramCounters counters() const { return {counters_.read_bytes, counters_.write_bytes, channel_.busy_cycles()}; }
  double bytes_per_cycle() const { return channel_.bytes_per_cycle(); }
  double latency_cycles() const { return latency_; }

 private:
  BandwidthServer channel_;
  double latency_;
  DramCounters counters_;
};

}  // namespace iosim::memory
