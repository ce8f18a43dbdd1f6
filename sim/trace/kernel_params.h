// Per-kernel-family CTA shape (warps, registers per thread) used for
// occupancy. Values follow our CUDA kernels' compiler reports where a kernel
// exists (kernels/README.md records them) and FlashAttention-2's published
// choices otherwise; they belong to the kernel family, not to a config.
#pragma once
#include "sim/trace/trace.h"

namespace iosim::trace {

enum class KernelFamily { fa2_fwd, fa2_bwd, fa1_fwd, fa1_bwd, gemm, softmax, rowwise };

struct FamilyShape {
  i64 warps;
  i64 regs_per_thread;
};

constexpr FamilyShape family_shape(KernelFamily f) {
  switch (f) {
    case KernelFamily::fa2_fwd: return {4, 255};  // warps from Fa2ForwardSchedule::warps(); 255 regs (ptxas)
    case KernelFamily::fa2_bwd: return {8, 255};  // 8 warps, 255 regs (ptxas, kernels/README.md)
    case KernelFamily::fa1_fwd: return {4, 255};
    case KernelFamily::fa1_bwd: return {8, 255};
    case KernelFamily::gemm: return {4, 128};
    case KernelFamily::softmax: return {4, 32};
    case KernelFamily::rowwise: return {4, 32};
  }
  return {4, 128};
}

inline CtaResources family_resources(KernelFamily f, i64 smem_bytes, i64 warps = 0) {
  const FamilyShape s = family_shape(f);
  return {(warps > 0 ? warps : s.warps) * 32, smem_bytes, s.regs_per_thread};
}

}  // namespace iosim::trace
