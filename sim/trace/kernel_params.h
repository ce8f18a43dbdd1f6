// Kernel families: the timing calibration a hardware profile may give
// (`kernel_families:` in hw_profiles/*.yaml; the names are
// profile::kKernelFamilyNames, in this enum's order). A kernel's CTA shape
// comes from its plan (sim/schedule/plan.h), not from its family.
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

}  // namespace iosim::trace
