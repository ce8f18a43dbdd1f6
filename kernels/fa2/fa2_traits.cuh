// Compile-time shape of each FlashAttention-2 kernel: warps, the part of each
// tile a warp owns, and the shared-memory layout, all derived from
// (head_dim, block_m, block_n) and checked by static_asserts (the
// kernel_traits.h pattern of FlashAttention-2). Shared-memory sizes must equal
// the schedules' sram_bytes(); the launchers check that at run time.
#pragma once
#include "kernels/common/device_primitives.cuh"
#include "sim/schedule/kernel_schedules.h"
#include "sim/schedule/warp_split.h"

namespace iosim::kernels::fa2 {

// Forward. A warp owns 16 * kMFrags query rows and all BN key columns of S,
// all D columns of O. Two 16-row fragments per warp (FlashAttention-2's
// 128-row tile with 4 warps) halve the K/V fragment loads per MMA; one
// fragment when S + O accumulators would exceed ~96 registers each.
template <int D, int BM, int BN>
struct FwdTraits {
  static constexpr int kMFrags = static_cast<int>(schedule::Fa2ForwardSchedule::rows_per_warp(D, BM, BN) / 16);
  static constexpr int kRowsPerWarp = 16 * kMFrags;
  static constexpr int kWarps = BM / kRowsPerWarp;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kSTiles = BN / 8;  // n8 tiles of S per 16-row fragment
  static constexpr int kOTiles = D / 8;   // n8 tiles of O per 16-row fragment
  using TileQ = dev::SwizzledTile<BM, D>;
  using TileKV = dev::SwizzledTile<BN, D>;
  // Q_i, K_j, V_j: one buffer each. K_{j+1} loads during softmax and P V_j,
  // V_j during Q K_j^T (FlashAttention-2's pipeline).
  static constexpr int kSmemBytes = TileQ::kBytes + 2 * TileKV::kBytes;
  static_assert(BM % kRowsPerWarp == 0 && kWarps >= 1 && kWarps <= 8, "forward warp layout");
  // The plan (sim/schedule) states the CTA this kernel launches.
  static_assert(kWarps == schedule::Fa2ForwardSchedule::warps_for(D, BM, BN), "warps differ from the schedule's");
  static_assert(kSmemBytes == schedule::Fa2ForwardSchedule::sram_bytes_for(D, BM, BN, 2),
                "shared memory differs from the schedule's");
  static_assert(BN % 16 == 0 && D % 16 == 0, "forward tiles are built from 16x16 blocks");
};

// A warp's share of an M x N product split WM x WN ways.
template <int M, int N, int WARPS>
struct WarpSplit {
  static constexpr int kWarpsM = schedule::fa2_warps_m(M, N, WARPS);  // sim/schedule/warp_split.h
  static_assert(kWarpsM > 0, "no 16-aligned warp split for this tile");
  static constexpr int kWarpsN = WARPS / kWarpsM;
  static constexpr int kRows = M / kWarpsM;  // rows per warp
  static constexpr int kCols = N / kWarpsN;  // columns per warp
  static constexpr int kMFrags = kRows / 16;
  static constexpr int kNTiles = kCols / 8;
  __device__ __forceinline__ static int row0(int warp) { return (warp / kWarpsN) * kRows; }
  __device__ __forceinline__ static int col0(int warp) { return (warp % kWarpsN) * kCols; }
};

// Backward main kernel: the schedule's warps (up to 8, FlashAttention-2's
// choice; fewer when the tiles cannot be split 16-aligned). Three warp splits:
// S and dP (BM x BN, the same split so dS is computed in registers), dK and dV
// (BN x D), dQ (BM x D).
template <int D, int BM, int BN>
struct BwdTraits {
  static constexpr int kWarps = static_cast<int>(schedule::Fa2BackwardSchedule::warps_for(D, BM, BN));
  static constexpr int kThreads = 32 * kWarps;
  using SplitS = WarpSplit<BM, BN, kWarps>;
  using SplitKV = WarpSplit<BN, D, kWarps>;
  using SplitQ = WarpSplit<BM, D, kWarps>;
  using TileQ = dev::SwizzledTile<BM, D>;   // Q_i and dO_i
  using TileKV = dev::SwizzledTile<BN, D>;  // K_j and V_j (then dK_j, dV_j for the epilogue)
  using TileP = dev::SwizzledTile<BM, BN>;  // P_ij and dS_ij in the data type
  // Q_i/dO_i double-buffered when that fits in 160 KB (the schedule's rule).
  static constexpr int kStages = static_cast<int>(schedule::Fa2BackwardSchedule::q_stages_for(D, BM, BN, 2));
  static constexpr int kSmemBytes = 2 * TileKV::kBytes + 2 * kStages * TileQ::kBytes + 2 * TileP::kBytes;
  static_assert(BM % 16 == 0 && BN % 16 == 0 && D % 16 == 0, "backward tiles are built from 16x16 blocks");
  static_assert(kSmemBytes == schedule::Fa2BackwardSchedule::sram_bytes_for(D, BM, BN, 2),
                "shared memory differs from the schedule's");
};

}  // namespace iosim::kernels::fa2
