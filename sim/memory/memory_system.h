// The memory hierarchy below the SMs: the shared L2 (state, and its slice
// bandwidth as one FIFO server) and DRAM. The engine sends it whole tile
// requests in simulated-time order and gets back when each one completes.
//
// Timing of one request issued at `now` (cycles):
//   L2 transfer  ends at  max(now, L2 free) + requested sectors x 32 B / L2 bandwidth
//   load ready   =  max(L2 transfer end + hit latency (near or far),
//                       DRAM transfer end of its missing sectors + DRAM latency,
//                       the fill of lines an earlier miss is still bringing in)
//   merged read  =  max(L2 transfer end + hit latency, the merged-into request's ready time)
//   store done   =  L2 transfer end + hit latency (reductions also wait for a fetch)
// With the L2's intake (l2.write_bandwidth) a store's transfer end and a
// fill's data are no earlier than the intake has taken their sectors. A
// reduction's sectors hold the slices' server l2.bandwidth / (red_per_sm x
// SMs) times as long as a read's.
// Write-backs of dirty evictions occupy the DRAM channel; nobody waits on them.
#pragma once
#include <optional>

#include "sim/memory/bandwidth.h"
#include "sim/memory/dram.h"
#include "sim/memory/l2_cache.h"
#include "sim/profile/hardware_profile.h"

namespace iosim::memory {

struct MemoryCounters {
  L2Counters l2;
  DramCounters dram;
  double l2_busy_cycles = 0;
  MemoryCounters minus(const MemoryCounters& o) const {
    return {l2.minus(o.l2), dram.minus(o.dram), l2_busy_cycles - o.l2_busy_cycles};
  }
  void add(const MemoryCounters& o) {
    l2.add(o.l2);
    dram.read_bytes += o.dram.read_bytes;
    dram.write_bytes += o.dram.write_bytes;
    dram.busy_cycles += o.dram.busy_cycles;
    l2_busy_cycles += o.l2_busy_cycles;
  }
};

class MemorySystem {
 public:
  MemorySystem(const profile::HardwareProfile& p, const L2Options& options);

  // A tile load from an SM in `partition`; returns when its data is in shared memory.
  double load(const trace::RangeAccess& a, double now, int partition) { return request(a, now, partition, true); }
  // A tile store or reduction; returns when the L2 has taken it.
  double store(const trace::RangeAccess& a, double now, int partition) { return request(a, now, partition, false); }
  // A hint for a request about to be made (see L2Cache::prefetch).
  void prefetch(const trace::RangeAccess& a) const { l2_.prefetch(a); }

  // Called at each kernel start.
  void begin_kernel(double now) {
    l2_.begin_kernel(now);
    writeback_end_ = now;
  }
  // When the last DRAM write-back issued since begin_kernel leaves the
  // channel: Nsight Compute counts a kernel's write-backs as its DRAM writes,
  // so they happened before the kernel ended.
  double writeback_end() const { return writeback_end_; }

  MemoryCounters counters() const { return {l2_.counters(), dram_.counters(), l2_bandwidth_.busy_cycles()}; }
  L2Cache& l2() { return l2_; }
  const L2Cache& l2() const { return l2_; }
  const DramModel& dram() const { return dram_; }
  double l2_bytes_per_cycle() const { return l2_bandwidth_.bytes_per_cycle(); }

 private:
  double request(const trace::RangeAccess& a, double now, int partition, bool is_load);

  L2Cache l2_;
  DramModel dram_;
  BandwidthServer l2_bandwidth_;
  // The slices' intake (l2.write_bandwidth): stores and DRAM fills; none
  // where the profile has no such rate.
  std::optional<BandwidthServer> l2_intake_;
  // What a reduced byte costs the slices in read bytes: the L2's read rate
  // over every SM's reductions together (sm_pipes.red_per_sm x SMs); 1
  // where the profile has no reduction rate.
  double reduce_cost_ = 1;
  double near_latency_, far_latency_;
  double writeback_end_ = 0;
  i64 sector_bytes_;
};

}  // namespace iosim::memory
