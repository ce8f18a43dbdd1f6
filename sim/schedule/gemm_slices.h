// How many 16-deep k slices of a chunk the standard GEMM's products unroll
// (kernels/standard/standard_gemm.cu, warp_chunk_mma), shared with its warp
// program (warp_programs.cpp, gemm_chunk): two, except 128 x 128 x 64 with B
// n-contiguous, which spilled 8 bytes per thread under the 2-CTA register
// cap with two (ptxas) and whose stack then reached the L2 (+2 KiB of writes
// per CTA, H100 grid); it keeps one slice in flight.
#pragma once
#include "sim/common/hd.h"

namespace iosim::schedule {

IOSIM_HD constexpr int gemm_slice_unroll(i64 tile_m, i64 tile_n, i64 tile_k, bool b_k_contiguous) {
  return tile_m == 128 && tile_n == 128 && tile_k == 64 && !b_k_contiguous ? 1 : 2;
}

}  // namespace iosim::schedule
