// Every tensor an attention algorithm's kernels touch in global memory, named
// once for the plan (sim/schedule/plan.h), the trace and the kernels.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace iosim::schedule {

enum class TensorId : std::uint8_t {
  Q, K, V, O, dO, dQ, dK, dV,  // inputs, outputs, gradients (data type)
  S, P, dP, dS,                // standard attention's N x N intermediates (data type)
  l, m, L, D,                  // per-row statistics (fp32)
  dQaccum,                     // fp32 dQ accumulator
  Pd, Z,                       // standard-eager: P after dropout (data type), dropout's keep mask (1 byte)
  Mask,                        // standard-eager: the N_q x N_k boolean mask buffer (1 byte), one for all heads
  Oaccum, LSEaccum,            // splitkv: each split's partial O and log-sum-exp (fp32), [batch][head][split][row]
  kCount
};
inline constexpr int kTensorCount = static_cast<int>(TensorId::kCount);

constexpr std::string_view tensor_name(TensorId t) {
  constexpr std::array<std::string_view, kTensorCount> kNames = {
      "Q", "K", "V", "O", "dO", "dQ", "dK", "dV", "S", "P", "dP", "dS", "l", "m", "L", "D", "dQaccum", "Pd", "Z", "Mask", "Oaccum", "LSEaccum"};
  return kNames[static_cast<int>(t)];
}

}  // namespace iosim::schedule
