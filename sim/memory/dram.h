// Device memory shared by all SMs: the achievable bandwidth of the profile
// (peak x measured fraction) as one FIFO server, plus a fixed latency. Reads
// are L2 sector fills; writes are write-backs of dirty L2 sectors evicted
// during the kernel (as Nsight Compute counts them).
#pragma once
#include <array>

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
  // write_cost: channel time of a written byte in read bytes' time (a mix of
  // reads and writes turns the bus around: a copy runs slower than either).
  // Read bandwidth of contiguous pieces of 32, 64, 128, 256 bytes over a
  // stream's (1: the stream's rate); 512 bytes and more read at the stream's.
  using PieceFractions = std::array<double, 4>;
  DramModel(double bytes_per_cycle, double latency_cycles, double write_cost = 1.0,
            PieceFractions read_pieces = {1, 1, 1, 1})
      : channel_(bytes_per_cycle), latency_(latency_cycles), write_cost_(write_cost), read_pieces_(read_pieces) {}
  static DramModel from_profile(const profile::HardwareProfile& p);

  // A fill of `bytes` requested at `now`, read in contiguous pieces of
  // `piece_bytes` spread apart (a strided tile's rows): returns when the data
  // reaches the requesting SM (transfer end + load-to-use latency of a miss).
  // Short pieces hold the channel longer per byte (their measured rate).
  double read(i64 bytes, double now, i64 piece_bytes = i64{1} << 62) {
    counters_.read_bytes += bytes;
    const double f = read_fraction(piece_bytes);
    return channel_.reserve(static_cast<i64>(static_cast<double>(bytes) / f + 0.5), now) + latency_;
  }
  // The read rate of pieces of `piece_bytes` over a stream's: the measured
  // fractions, linear in log2(size) between 32, 64, 128, 256 and 512 bytes (1).
  double read_fraction(i64 piece_bytes) const;
  // A write-back of `bytes` at `now`: occupies the channel; nobody waits on it.
  // Returns when the write-back has left the channel.
  double write_back(i64 bytes, double now) {
    counters_.write_bytes += bytes;
    return channel_.reserve(static_cast<i64>(static_cast<double>(bytes) * write_cost_ + 0.5), now);
  }
  DramCounters counters() const { return {counters_.read_bytes, counters_.write_bytes, channel_.busy_cycles()}; }
  double bytes_per_cycle() const { return channel_.bytes_per_cycle(); }
  double latency_cycles() const { return latency_; }

 private:
  BandwidthServer channel_;
  double latency_;
  double write_cost_;
  PieceFractions read_pieces_;
  mutable i64 last_piece_bytes_ = 0;  // read_fraction's last question, and its answer
  mutable double last_fraction_ = 1.0;
  DramCounters counters_;
};

}  // namespace iosim::memory
