// The compiled FlashAttention-2 instantiations, as X-macro lists of
// (head_dim, block_m, block_n). Every list is compiled for fp16 and bf16.
//
// CI menu (default): FlashAttention-2's own tile choices for H100/A100 —
// forward d64 128x128 and d128 128x64 (4 warps), backward d64 128x128 and
// d128 64x128 (8 warps) — plus forward d128 256x64 (8 warps; the default
// until v5, now 1-9% slower than 128x64) and forward d128 64x128, so a
// block-sparse backward (whose forward must use the backward's tile grid)
// runs at d128 too. Small, so CI's 2-core nvcc build stays short.
// Full menu (-DIOSIM_KERNEL_MENU=full): Br, Bc in {16, 32, 64, 128} plus 256
// where the tile fits in 227 KB of shared memory, for block-size studies.
#pragma once

#define IOSIM_FA2_GRID_4(X, D, BM) X(D, BM, 16) X(D, BM, 32) X(D, BM, 64) X(D, BM, 128)
#define IOSIM_FA2_GRID_16(X, D) \
  IOSIM_FA2_GRID_4(X, D, 16) IOSIM_FA2_GRID_4(X, D, 32) IOSIM_FA2_GRID_4(X, D, 64) IOSIM_FA2_GRID_4(X, D, 128)

#if defined(IOSIM_KERNEL_MENU_FULL)
// Forward shared memory is (Br + 2 Bc) d 2 B: every 256 combination fits.
#define IOSIM_FA2_FWD_MENU_D64(X) \
  IOSIM_FA2_GRID_16(X, 64) X(64, 256, 64) X(64, 256, 128) X(64, 64, 256) X(64, 128, 256) X(64, 256, 256)
#define IOSIM_FA2_FWD_MENU_D128(X) \
  IOSIM_FA2_GRID_16(X, 128) X(128, 256, 64) X(128, 256, 128) X(128, 128, 256)
// Backward shared memory is (2 Bc d + 2 s Br d + 2 Br Bc) 2 B with s = 2 stages
// of Q/dO when that is <= 160 KB, else s = 1 (Fa2BackwardSchedule::q_stages);
// d128 128x128 (192 KB, one stage) fits H100/H200 only.
#define IOSIM_FA2_BWD_MENU_D64(X) IOSIM_FA2_GRID_16(X, 64) X(64, 64, 256) X(64, 256, 64)
#define IOSIM_FA2_BWD_MENU_D128(X) IOSIM_FA2_GRID_16(X, 128)
#else
#define IOSIM_FA2_FWD_MENU_D64(X) X(64, 128, 128)
#define IOSIM_FA2_FWD_MENU_D128(X) X(128, 256, 64) X(128, 128, 64) X(128, 64, 128)
#define IOSIM_FA2_BWD_MENU_D64(X) X(64, 128, 128)
#define IOSIM_FA2_BWD_MENU_D128(X) X(128, 64, 128)
#endif

#define IOSIM_FA2_FWD_MENU(X) IOSIM_FA2_FWD_MENU_D64(X) IOSIM_FA2_FWD_MENU_D128(X)
#define IOSIM_FA2_BWD_MENU(X) IOSIM_FA2_BWD_MENU_D64(X) IOSIM_FA2_BWD_MENU_D128(X)
