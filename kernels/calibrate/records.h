// What the calibrate kernels write back, one record per warp (or per CTA):
// plain structs shared by device code and the host analysis.
#pragma once
#include <cstdint>

namespace iosim::calibrate {

// A timed region of one warp: its SM, clock64 and %globaltimer at both ends,
// and the work it did (FLOP, lane-ops, bytes or instructions).
struct WarpRecord {
  std::uint32_t smid = 0;
  std::uint32_t unused = 0;
  std::uint64_t clk0 = 0, clk1 = 0;  // clock64
  std::uint64_t gt0 = 0, gt1 = 0;    // %globaltimer, ns
  std::uint64_t work = 0;
};

// One warp's dependent-load chain over its share of a working set: cycles of
// the first (cold) pass, of the following warm passes together, and the loads
// per pass.
struct ChaseRecord {
  std::uint64_t cold_cycles = 0;
  std::uint64_t warm_cycles = 0;
  std::uint64_t accesses = 0;  // per pass
  std::uint64_t passes = 0;    // warm passes
};

}  // namespace iosim::calibrate
