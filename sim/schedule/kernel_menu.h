// The one list of tile shapes the CUDA kernels are compiled for. The kernels
// instantiate from these X-macros (kernels/fa2/*.cu, kernels/fa1/*.cu,
// kernels/standard/standard_gemm.cu); the simulator reads the same lists,
// without nvcc or a GPU, to say whether a tiling has a compiled kernel and to
// pick the nearest one that has (`iosim simulate --tiles kernel`).
//
// Two menus (CMake IOSIM_KERNEL_MENU):
//   ci   (default) FlashAttention-2's own tile choices for H100/A100 and one
//        FA1 pair, so CI's 2-core nvcc build stays short;
//   full the block-size menu for studies: Br, Bc in {16, 32, 64, 128} plus
//        256 where the tile fits, every FA1 pair below, more GEMM tiles.
// Every list is compiled for fp16 and bf16. The kernels build the menu their
// IOSIM_KERNEL_MENU_FULL selects (IOSIM_FA2_FWD_MENU, ...); the simulator
// knows both (KernelMenu).
#pragma once
#include "sim/common/hd.h"
#include "sim/schedule/kernel_schedules.h"

// --- FlashAttention-2: (head_dim, block_m, block_n) -------------------------
// CI: forward d64 128x128 and d128 128x64 (4 warps), backward d64 128x128 and
// d128 64x128 (8 warps), plus forward d128 256x64 (8 warps; the default until
// v5, now 1-9% slower than 128x64) and forward d128 64x128, so a block-sparse
// backward (whose forward must use the backward's tile grid) runs at d128 too.
#define IOSIM_FA2_FWD_MENU_D64_CI(X) X(64, 128, 128)
#define IOSIM_FA2_FWD_MENU_D128_CI(X) X(128, 256, 64) X(128, 128, 64) X(128, 64, 128)
#define IOSIM_FA2_BWD_MENU_D64_CI(X) X(64, 128, 128)
#define IOSIM_FA2_BWD_MENU_D128_CI(X) X(128, 64, 128)

#define IOSIM_FA2_GRID_4(X, D, BM) X(D, BM, 16) X(D, BM, 32) X(D, BM, 64) X(D, BM, 128)
#define IOSIM_FA2_GRID_16(X, D) \
  IOSIM_FA2_GRID_4(X, D, 16) IOSIM_FA2_GRID_4(X, D, 32) IOSIM_FA2_GRID_4(X, D, 64) IOSIM_FA2_GRID_4(X, D, 128)
// Full. Forward shared memory is (Br + 2 Bc) d 2 B: every 256 combination fits.
#define IOSIM_FA2_FWD_MENU_D64_FULL(X) \
  IOSIM_FA2_GRID_16(X, 64) X(64, 256, 64) X(64, 256, 128) X(64, 64, 256) X(64, 128, 256) X(64, 256, 256)
#define IOSIM_FA2_FWD_MENU_D128_FULL(X) \
  IOSIM_FA2_GRID_16(X, 128) X(128, 256, 64) X(128, 256, 128) X(128, 128, 256)
// Backward shared memory is (2 Bc d + 2 s Br d + 2 Br Bc) 2 B with s = 2 stages
// of Q/dO when that is <= 160 KB, else s = 1 (Fa2BackwardSchedule::q_stages);
// d128 128x128 (192 KB, one stage) fits H100/H200 only.
#define IOSIM_FA2_BWD_MENU_D64_FULL(X) IOSIM_FA2_GRID_16(X, 64) X(64, 64, 256) X(64, 256, 64)
#define IOSIM_FA2_BWD_MENU_D128_FULL(X) IOSIM_FA2_GRID_16(X, 128)

// --- FlashAttention (v1): (block_m, block_n) pairs, each for head dims 64 and
// 128, forward and backward, except where the kernel's shared memory would
// exceed kFa1MaxSmemBytes (full menu: backward d=128 with Br=128, Bc >= 64).
#define IOSIM_FA1_BLOCKS_CI(X) X(64, 64)
#define IOSIM_FA1_BLOCKS_FULL(X) \
  X(32, 32) X(32, 64) X(32, 128) X(64, 32) X(64, 64) X(64, 128) X(128, 32) X(128, 64) X(128, 128)
#define IOSIM_FA1_HEAD_DIMS(X) X(64) X(128)

// --- Standard attention's GEMM tiles: (tile_m, tile_n, tile_k). Its row
// softmax has no tile; its block size only sets a block mask's granularity.
#define IOSIM_GEMM_TILES_CI(X) X(128, 128, 32) X(64, 64, 32)
#define IOSIM_GEMM_TILES_FULL(X) X(128, 128, 32) X(64, 64, 32) X(128, 64, 32) X(64, 128, 32) X(128, 128, 64)

// --- Split-KV forward (decode): (head_dim, block_m, block_n). Its 4 warps
// share the B_r rows and take B_c / 4 key columns each (a multiple of 16);
// B_r is one or two MMA row fragments. The combine kernel has no tile.
#define IOSIM_SPLITKV_MENU_CI(X) X(64, 16, 64) X(128, 16, 64)
#define IOSIM_SPLITKV_MENU_FULL(X) \
  X(64, 16, 64) X(64, 16, 128) X(64, 32, 64) X(64, 32, 128) X(128, 16, 64) X(128, 16, 128) X(128, 32, 64) X(128, 32, 128)

// --- The menu the kernels compile.
#if defined(IOSIM_KERNEL_MENU_FULL)
#define IOSIM_FA2_FWD_MENU_D64(X) IOSIM_FA2_FWD_MENU_D64_FULL(X)
#define IOSIM_FA2_FWD_MENU_D128(X) IOSIM_FA2_FWD_MENU_D128_FULL(X)
#define IOSIM_FA2_BWD_MENU_D64(X) IOSIM_FA2_BWD_MENU_D64_FULL(X)
#define IOSIM_FA2_BWD_MENU_D128(X) IOSIM_FA2_BWD_MENU_D128_FULL(X)
#define IOSIM_FA1_BLOCKS(X) IOSIM_FA1_BLOCKS_FULL(X)
#define IOSIM_GEMM_TILES(X) IOSIM_GEMM_TILES_FULL(X)
#define IOSIM_SPLITKV_MENU(X) IOSIM_SPLITKV_MENU_FULL(X)
#else
#define IOSIM_FA2_FWD_MENU_D64(X) IOSIM_FA2_FWD_MENU_D64_CI(X)
#define IOSIM_FA2_FWD_MENU_D128(X) IOSIM_FA2_FWD_MENU_D128_CI(X)
#define IOSIM_FA2_BWD_MENU_D64(X) IOSIM_FA2_BWD_MENU_D64_CI(X)
#define IOSIM_FA2_BWD_MENU_D128(X) IOSIM_FA2_BWD_MENU_D128_CI(X)
#define IOSIM_FA1_BLOCKS(X) IOSIM_FA1_BLOCKS_CI(X)
#define IOSIM_GEMM_TILES(X) IOSIM_GEMM_TILES_CI(X)
#define IOSIM_SPLITKV_MENU(X) IOSIM_SPLITKV_MENU_CI(X)
#endif
#define IOSIM_FA2_FWD_MENU(X) IOSIM_FA2_FWD_MENU_D64(X) IOSIM_FA2_FWD_MENU_D128(X)
#define IOSIM_FA2_BWD_MENU(X) IOSIM_FA2_BWD_MENU_D64(X) IOSIM_FA2_BWD_MENU_D128(X)

namespace iosim::schedule {

enum class KernelMenu { ci, full };

// Whether a FlashAttention-2 forward tile is in the CI menu, at compile time:
// the forward kernel compiles its test-only step log for these alone.
#define IOSIM_MENU_MATCH_(D, BM, BN) || (d == D && bm == BM && bn == BN)
IOSIM_HD constexpr bool fa2_forward_in_ci_menu(int d, int bm, int bn) {
  return false IOSIM_FA2_FWD_MENU_D64_CI(IOSIM_MENU_MATCH_) IOSIM_FA2_FWD_MENU_D128_CI(IOSIM_MENU_MATCH_);
}
#undef IOSIM_MENU_MATCH_

// Every menu entry is made of these sizes (tests/test_kernel_menu.cpp checks
// it), so a search over them finds every compiled tile.
inline constexpr i64 kMenuBlockSizes[] = {16, 32, 64, 128, 256};  // FA1/FA2 Br, Bc
inline constexpr i64 kMenuGemmSizes[] = {32, 64, 128};            // GEMM m, n, k

// The largest opt-in shared memory per block of the GPUs built for (sm_90);
// FA1 combinations above it are not compiled at all.
inline constexpr i64 kFa1MaxSmemBytes = 232448;
// Shared memory as launched is the schedule's.
IOSIM_HD constexpr bool fa1_fits(bool backward, i64 d, i64 br, i64 bc) {
  return (backward ? Fa1BackwardSchedule::launch_smem_bytes_for(d, br, bc, 2)
                   : Fa1ForwardSchedule::launch_smem_bytes_for(d, br, bc, 2)) <= kFa1MaxSmemBytes;
}

// Whether a menu compiles the tile (the data type aside: every entry is
// compiled for fp16 and bf16).
constexpr bool fa2_in_menu(KernelMenu menu, bool backward, i64 d, i64 bm, i64 bn) {
#define IOSIM_MENU_MATCH(D, BM, BN) || (d == D && bm == BM && bn == BN)
  if (menu == KernelMenu::full)
    return backward ? (false IOSIM_FA2_BWD_MENU_D64_FULL(IOSIM_MENU_MATCH) IOSIM_FA2_BWD_MENU_D128_FULL(IOSIM_MENU_MATCH))
                    : (false IOSIM_FA2_FWD_MENU_D64_FULL(IOSIM_MENU_MATCH) IOSIM_FA2_FWD_MENU_D128_FULL(IOSIM_MENU_MATCH));
  return backward ? (false IOSIM_FA2_BWD_MENU_D64_CI(IOSIM_MENU_MATCH) IOSIM_FA2_BWD_MENU_D128_CI(IOSIM_MENU_MATCH))
                  : (false IOSIM_FA2_FWD_MENU_D64_CI(IOSIM_MENU_MATCH) IOSIM_FA2_FWD_MENU_D128_CI(IOSIM_MENU_MATCH));
#undef IOSIM_MENU_MATCH
}

constexpr bool fa1_in_menu(KernelMenu menu, bool backward, i64 d, i64 bm, i64 bn) {
#define IOSIM_MENU_MATCH(BR, BC) || (bm == BR && bn == BC)
#define IOSIM_MENU_DIM(D) || d == D
  const bool pair = menu == KernelMenu::full ? (false IOSIM_FA1_BLOCKS_FULL(IOSIM_MENU_MATCH))
                                             : (false IOSIM_FA1_BLOCKS_CI(IOSIM_MENU_MATCH));
  return pair && (false IOSIM_FA1_HEAD_DIMS(IOSIM_MENU_DIM)) && fa1_fits(backward, d, bm, bn);
#undef IOSIM_MENU_DIM
#undef IOSIM_MENU_MATCH
}

constexpr bool splitkv_in_menu(KernelMenu menu, i64 d, i64 bm, i64 bn) {
#define IOSIM_MENU_MATCH(D, BM, BN) || (d == D && bm == BM && bn == BN)
  return menu == KernelMenu::full ? (false IOSIM_SPLITKV_MENU_FULL(IOSIM_MENU_MATCH))
                                  : (false IOSIM_SPLITKV_MENU_CI(IOSIM_MENU_MATCH));
#undef IOSIM_MENU_MATCH
}

constexpr bool gemm_in_menu(KernelMenu menu, i64 m, i64 n, i64 k) {
#define IOSIM_MENU_MATCH(M, N, K) || (m == M && n == N && k == K)
  return menu == KernelMenu::full ? (false IOSIM_GEMM_TILES_FULL(IOSIM_MENU_MATCH))
                                  : (false IOSIM_GEMM_TILES_CI(IOSIM_MENU_MATCH));
#undef IOSIM_MENU_MATCH
}

}  // namespace iosim::schedule
