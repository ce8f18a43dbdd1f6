// fp16/bf16 values as the 16-bit patterns the kernels store, on the host:
// the harness's inputs, the GPU tests' buffers and iosim-peer's results.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "sim/workload/problem.h"

namespace iosim::kernels {

// x rounded to the nearest value of the data type (fp16 or bf16).
inline std::uint16_t to_bits(float x, workload::DType t) {
  if (t == workload::DType::bf16) return static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(x)).x;
  return static_cast<__half_raw>(__float2half_rn(x)).x;
}

inline float from_bits(std::uint16_t bits, workload::DType t) {
  if (t == workload::DType::bf16) {
    __nv_bfloat16_raw raw;
    raw.x = bits;
    return __bfloat162float(__nv_bfloat16(raw));
  }
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

}  // namespace iosim::kernels
