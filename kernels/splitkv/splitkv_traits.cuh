// Compile-time shape of the split-KV forward kernel, derived from (head_dim,
// block_m, block_n) and checked against the plan (sim/schedule): the 4 warps
// all own the B_r query rows and each a quarter of every key block's columns
// (its own online-softmax statistics), K/V in two stages, and after the loop
// the warps' fp32 partials merged through the same shared memory.
#pragma once
#include "kernels/common/device_primitives.cuh"
#include "sim/schedule/kernel_schedules.h"

namespace iosim::kernels::splitkv {

template <int D, int BM, int BN>
struct ForwardTraits {
  static constexpr int kWarps = static_cast<int>(schedule::SplitKvSchedule::kWarps);
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kMFrags = BM / 16;      // 16-row fragments per warp (every warp: all BM rows)
  static constexpr int kCols = BN / kWarps;    // key columns per warp
  static constexpr int kSTiles = kCols / 8;    // n8 tiles of S per fragment
  static constexpr int kOTiles = D / 8;        // n8 tiles of O per fragment
  using TileQ = dev::SwizzledTile<BM, D>;
  using TileKV = dev::SwizzledTile<BN, D>;
  static constexpr int kStageBytes = 2 * TileKV::kBytes;  // K_j and V_j
  static constexpr int kMergeBytes = kWarps * BM * (D + 2) * 4;  // each warp's O, row max and sum, fp32
  static constexpr int kSmemBytes = TileQ::kBytes + (2 * kStageBytes > kMergeBytes ? 2 * kStageBytes : kMergeBytes);
  static_assert(BM % 16 == 0 && D % 16 == 0 && kCols % 16 == 0, "split-KV tiles are built from 16x16 blocks");
  static_assert(kMFrags <= 2, "a warp holds at most two 16-row fragments of O");
  static_assert(kThreads == 32 * schedule::SplitKvSchedule::kWarps, "threads differ from the schedule's");
  static_assert(kSmemBytes == schedule::SplitKvSchedule::sram_bytes_for(D, BM, BN, 2),
                "shared memory differs from the schedule's");
  static_assert(TileQ::kBytes % 128 == 0 && TileKV::kBytes % 128 == 0, "tiles must stay 128-byte aligned");
};

}  // namespace iosim::kernels::splitkv
