// The streaming copy of calibrate's dirty-limit probe (kernels/calibrate/
// copy_probe.cu, the schedule experiments/copy_trace.py writes as a trace),
// one source for it and for experiments/probes/stream_size_probe.cu, which
// includes this file by its relative path: CTA c of kThreads threads copies
// bytes [kChunkBytes c, kChunkBytes (c + 1)) of src to dst, one float4 per
// thread at a time.
#pragma once
#include <cuda_runtime.h>

namespace iosim::copy_chunks {

constexpr int kThreads = 256;
constexpr long long kChunkBytes = 32768;
constexpr int kPerThread = static_cast<int>(kChunkBytes / 16 / kThreads);

__global__ void __launch_bounds__(kThreads) copy_chunks(const float4* __restrict__ src, float4* __restrict__ dst) {
  const long long base = static_cast<long long>(blockIdx.x) * (kChunkBytes / 16);
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const long long k = base + i * kThreads + threadIdx.x;
    dst[k] = src[k];
  }
}

}  // namespace iosim::copy_chunks
