// The probes' L2 flush: read n float4s of a buffer larger than the L2
// (ld.global.cg), so that what a probe reads next misses the L2.
#pragma once
#include <cuda_runtime.h>

__global__ void flush_l2(const float4* __restrict__ src, long long n, float* __restrict__ sink) {
  float acc = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float4 v = __ldcg(src + i);
    acc += v.x + v.w;
  }
  if (acc == 12345.f) sink[0] = acc;  // keeps the loads
}
