// Per-kernel-family CTA shape (warps, registers per thread) used for
// occupancy. Values follow our CUDA kernels' compiler reports where a kernel
// exists (kernels/README.md records them) and FlashAttention-2's published
// choices otherwise; they belong to the kernel family, not to a config.
//
// A family also names the timing calibration a hardware profile may give
// (`kernel_families:` in hw_profiles/*.yaml; the names are
// profile::kKernelFamilyNames, in this enum's order).
#pragma once
#include <optional>
#include <string_view>

#include "sim/profile/hardware_profile.h"
#include "sim/trace/trace.h"

namespace iosim::trace {

enum class KernelFamily { fa2_fwd, fa2_bwd, fa1_fwd, fa1_bwd, gemm, softmax, rowwise };
inline constexpr int kKernelFamilyCount = 7;
static_assert(profile::kKernelFamilyNames.size() == kKernelFamilyCount,
              "profile::kKernelFamilyNames lists the KernelFamily values in order");

constexpr std::string_view to_string(KernelFamily f) {
  return profile::kKernelFamilyNames[static_cast<size_t>(f)];
}

// The family of one of our algorithms' kernels, by the name the trace gives it
// (sim/trace/algorithms.cpp); nullopt for any other kernel (a user's trace
// file), whose timing then stays uncalibrated.
constexpr std::optional<KernelFamily> kernel_family_of(std::string_view kernel_name) {
  using F = KernelFamily;
  if (kernel_name == "fa2_fwd") return F::fa2_fwd;
  if (kernel_name == "fa2_bwd_main") return F::fa2_bwd;
  if (kernel_name == "fa2_bwd_preprocess" || kernel_name == "fa2_bwd_convert_dq") return F::rowwise;
  if (kernel_name == "fa1_fwd" || kernel_name == "fa1_swapped_fwd") return F::fa1_fwd;
  if (kernel_name == "fa1_bwd") return F::fa1_bwd;
  if (kernel_name == "std_fwd_softmax" || kernel_name == "std_bwd_softmax") return F::softmax;
  for (std::string_view g : {"std_fwd_qk", "std_fwd_pv", "std_bwd_dv", "std_bwd_dp", "std_bwd_dq", "std_bwd_dk"})
    if (kernel_name == g) return F::gemm;
  return std::nullopt;
}

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
