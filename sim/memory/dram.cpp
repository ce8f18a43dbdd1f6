#include "sim/memory/dram.h"

#include <algorithm>
#include <cmath>

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
  auto given = [](double f) { return f > 0 ? f : 1.0; };
  return DramModel(bw / p.sm_clock_hz, p.dram_latency_cycles, write_cost,
                   {given(p.dram_read_fraction_32b), given(p.dram_read_fraction_64b),
                    given(p.dram_read_fraction_128b), given(p.dram_read_fraction_256b)});
}

double DramModel::read_fraction(i64 piece_bytes) const {
  if (piece_bytes <= 32) return read_pieces_[0];
  if (piece_bytes >= 512) return 1.0;
  // Kernels repeat a few piece sizes: the last one's answer is kept.
  if (piece_bytes == last_piece_bytes_) return last_fraction_;
  const double x = std::log2(static_cast<double>(piece_bytes)) - 5;  // 0 at 32 B, 4 at 512 B
  const int k = std::min(3, static_cast<int>(x));
  const double lo = read_pieces_[static_cast<size_t>(k)], hi = k == 3 ? 1.0 : read_pieces_[static_cast<size_t>(k) + 1];
  last_piece_bytes_ = piece_bytes;
  last_fraction_ = lo + (x - k) * (hi - lo);
  return last_fraction_;
}

}  // namespace iosim::memory
