// Standard attention's GEMM implementation (AttentionConfig::gemm_impl,
// iosim-kernels --gemm-impl). Host code without CUDA headers: the harness's
// flag parser (kernels/harness/run_flags.cpp) builds without nvcc.
#pragma once
#include "sim/schedule/plan.h"

namespace iosim::kernels {

// The plan's (schedule::GemmImpl: the simulator traces and times the kernel the
// plan names). mma: mma.sync + cp.async (kernels/standard/standard_gemm.cu),
// every device; the kernel the main validation grids measured, so the default.
// wgmma: wgmma + TMA (kernels/standard/sm90a), sm_90 devices and tile
// 128x128x64 only; where TMA cannot read a GEMM's rows (N_k not a multiple
// of 8 elements) the plan gives that GEMM to mma (schedule::make_plan).
using schedule::GemmImpl;

}  // namespace iosim::kernels
