#include "kernels/peer/peer_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

#include "kernels/common/cuda_check.h"

namespace iosim::peer {
namespace {

template <class T>
__global__ void fill_kernel(std::uint16_t* p, i64 n, std::uint64_t seed) {
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const float v = static_cast<float>(input_value(seed, i));
    if constexpr (std::is_same_v<T, __half>)
      p[i] = __half_as_ushort(__float2half_rn(v));
    else
      p[i] = __bfloat16_as_ushort(__float2bfloat16_rn(v));
  }
}

__global__ void copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, i64 n) {
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<i64>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

}  // namespace

void fill(std::uint16_t* p, i64 n, std::uint64_t seed, workload::DType t) {
  const int blocks = static_cast<int>(std::min<i64>(4096, ceil_div(n, 256)));
  if (t == workload::DType::bf16)
    fill_kernel<__nv_bfloat16><<<blocks, 256>>>(p, n, seed);
  else
    fill_kernel<__half><<<blocks, 256>>>(p, n, seed);
  IOSIM_CUDA_CHECK_LAUNCH();
}

void copy16(const void* in, void* out, i64 n, int blocks) {
  copy_kernel<<<blocks, 256>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out), n);
  IOSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace iosim::peer
