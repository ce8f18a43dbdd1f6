#include "sim/memory/memory_system.h"

#include <algorithm>

#include "sim/common/error.h"

namespace iosim::memory {

namespace {
double l2_rate(const profile::HardwareProfile& p) {
  if (!(p.l2_bandwidth_bytes_per_s > 0) || !(p.sm_clock_hz > 0))
    throw InputError("profile '" + p.name + "': the L2 model needs a positive L2 bandwidth and SM clock");
  return p.l2_bandwidth_bytes_per_s / p.sm_clock_hz;
}
// With copies the L2 holds them itself: its whole capacity, not the distinct
// lines calibrate's sweep keeps.
L2Geometry l2_geometry(const profile::HardwareProfile& p, const L2Options& options) {
  L2Geometry g = L2Geometry::from_profile(p);
  if (options.copies) {
    g.capacity_bytes = p.l2_bytes;
    g.validate();
  }
  return g;
}
}  // namespace

MemorySystem::MemorySystem(const profile::HardwareProfile& p, const L2Options& options)
    : l2_(l2_geometry(p, options), options),
      dram_(DramModel::from_profile(p)),
      l2_bandwidth_(l2_rate(p)),
      l2_intake_(p.l2_write_bandwidth_bytes_per_s > 0
                     ? std::optional<BandwidthServer>(p.l2_write_bandwidth_bytes_per_s / p.sm_clock_hz)
                     : std::nullopt),
      near_latency_(p.l2_near_latency_cycles),
      far_latency_(p.l2_partitions > 1 ? p.l2_far_latency_cycles : p.l2_near_latency_cycles),
      sector_bytes_(p.l2_sector_bytes) {
  if (near_latency_ < 0 || far_latency_ < 0) throw InputError("profile '" + p.name + "': L2 latencies must be >= 0");
  const double reductions = p.sm_pipes.red_bytes_per_cycle * static_cast<double>(p.sm_count);
  if (reductions > 0) reduce_cost_ = std::max(1.0, l2_bandwidth_.bytes_per_cycle() / reductions);
}

double MemorySystem::request(const trace::RangeAccess& a, double now, int partition, bool is_load) {
  const L2Access r = l2_.access(a, now, partition);
  const double hit_latency = r.far ? far_latency_ : near_latency_;
  // Every requested sector crosses the L2 slices and the crossbar, merged or not.
  // A reduction holds the slices as long as every SM's reductions together
  // take per byte (calibrate's red_per_sm), not a read's time: its reads
  // and writes of the line and the add happen there.
  const double sector_cost = a.kind == trace::AccessKind::ReduceAdd ? reduce_cost_ : 1.0;
  double transfer_end = l2_bandwidth_.reserve(static_cast<double>(r.sectors * sector_bytes_) * sector_cost, now);
  // A store's sectors enter the slices' data arrays through their intake,
  // which the fills of read misses share.
  if (l2_intake_ && !is_load)
    transfer_end = std::max(transfer_end, l2_intake_->reserve(r.sectors * sector_bytes_, now));
  double ready = transfer_end + hit_latency;
  if (r.merged) {
    if (r.writeback_sectors > 0)  // early ones (dirty limit)
      writeback_end_ = std::max(writeback_end_, dram_.write_back(r.writeback_sectors * sector_bytes_, now));
    ready = std::max(ready, r.merged_ready);
    l2_.complete(0, ready);
    return ready;
  }
  double fill_ready = 0;
  // A strided tile's rows are its DRAM pieces; a contiguous one streams.
  const i64 piece = a.rows > 1 && a.stride > a.row_bytes ? a.row_bytes : a.bytes();
  if (r.fetch_sectors > 0) {
    fill_ready = dram_.read(r.fetch_sectors * sector_bytes_, now, piece);
    if (l2_intake_) fill_ready = std::max(fill_ready, l2_intake_->reserve(r.fetch_sectors * sector_bytes_, now));
  }
  if (r.writeback_sectors > 0)
    writeback_end_ = std::max(writeback_end_, dram_.write_back(r.writeback_sectors * sector_bytes_, now));
  ready = std::max(ready, fill_ready);
  if (is_load) ready = std::max(ready, r.pending_ready);
  l2_.complete(fill_ready, ready);
  return ready;
}

}  // namespace iosim::memory
