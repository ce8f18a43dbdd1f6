// How each kernel splits an output tile among its warps: one definition for
// the CUDA kernels (their warp grids static_assert against these) and for the
// warp programs the timing engine runs (warp_programs.cpp).
#pragma once
#include "sim/common/hd.h"

namespace iosim::schedule {

// FlashAttention-2's backward products (kernels/fa2/fa2_traits.cuh WarpSplit):
// for an M x N output over `warps` warps, the split WM x (warps / WM) whose
// warp tile has the smallest M / WM + N / WN (fewest fragment loads per MMA),
// ties to more warps along M; warp tiles are multiples of 16 both ways.
// Returns WM, or -1 when no split is 16-aligned.
IOSIM_HD constexpr int fa2_warps_m(int m, int n, int warps) {
  int best = -1, best_cost = 1 << 30;
  for (int wm = 1; wm <= warps; wm *= 2) {
    const int wn = warps / wm;
    if (m % (16 * wm) != 0 || n % (16 * wn) != 0) continue;
    const int cost = m / wm + n / wn;
    if (cost <= best_cost) {
      best = wm;
      best_cost = cost;
    }
  }
  return best;
}

// Standard attention's and FA1's rows-first partition (kernels/standard/tile_mma.cuh
// RowsFirstGrid): whole rows per warp while M has enough 16-row groups.
IOSIM_HD constexpr int rows_first_warps_m(int m, int warps) { return warps <= m / 16 ? warps : m / 16; }

// The standard GEMM's 8 warps: at most 4 along M (kernels/standard/standard_gemm.cu).
IOSIM_HD constexpr int gemm_warps_m(int tile_m) { return tile_m / 16 < 4 ? tile_m / 16 : 4; }

}  // namespace iosim::schedule
