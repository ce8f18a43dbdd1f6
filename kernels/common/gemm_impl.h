// Standard attention's GEMM implementation (AttentionConfig::gemm_impl,
// iosim-kernels --gemm-impl). Host code without CUDA headers: the harness's
// flag parser (kernels/harness/run_flags.cpp) builds without nvcc.
#pragma once
#include <optional>
#include <string_view>

#include "sim/schedule/plan.h"

namespace iosim::kernels {

// The plan's (schedule::GemmImpl: the simulator traces and times the kernel the
// plan names). mma: mma.sync + cp.async (kernels/standard/standard_gemm.cu),
// every device; the kernel the main validation grids measured, so the default.
// wgmma: wgmma + TMA (kernels/standard/sm90a), sm_90 devices and tile
// 128x128x64 only; a GEMM whose operands TMA cannot read (rows not 16-byte
// aligned) falls back to mma, GEMM by GEMM.
using schedule::GemmImpl;

inline const char* to_string(GemmImpl impl) { return impl == GemmImpl::wgmma ? "wgmma" : "mma"; }
inline std::optional<GemmImpl> parse_gemm_impl(std::string_view s) {
  if (s == "mma") return GemmImpl::mma;
  if (s == "wgmma") return GemmImpl::wgmma;
  return std::nullopt;
}

}  // namespace iosim::kernels
