// Internal to kernels/standard: the Hopper (sm_90a) implementation of the
// standard-attention GEMM (kernels/standard/sm90a/standard_gemm_wgmma.cu):
// TMA loads into 128-byte-swizzled shared memory, a 3-stage mbarrier
// pipeline fed by one producer warp, two consumer warpgroups issuing
// wgmma.mma_async. Same schedule (GemmSchedule's grid, cta() mapping and
// tiles_per_cta), same bytes as the mma.sync kernel (standard_gemm.cu); only
// the 128x128x64 tile. Chosen with GemmImpl::wgmma (iosim-kernels --gemm-impl).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "kernels/standard/standard_gemm.h"

namespace iosim::kernels::detail {

// The one tile the wgmma kernel is compiled for (tile_m, tile_n, tile_k).
inline constexpr i64 kWgmmaTileM = schedule::WgmmaGemmShape::kTileM, kWgmmaTileN = schedule::WgmmaGemmShape::kTileN,
                     kWgmmaTileK = schedule::WgmmaGemmShape::kTileK;

// Empty when g's operands can be read by TMA and C written by the kernel
// (16-byte-aligned rows, nonzero strides where they matter, the compiled
// tile); otherwise why not. The plan (schedule::make_plan) falls back to
// mma.sync where N_k rows are not 16-byte multiples, the one case here.
std::string wgmma_gemm_unsupported(const GemmLaunch& g);
// Launches g on the wgmma kernel; g must be supported (logic_error if not).
void launch_gemm_wgmma(const GemmLaunch& g, cudaStream_t stream);

}  // namespace iosim::kernels::detail
