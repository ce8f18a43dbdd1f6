// Streaming copy with the CTA schedule of experiments/copy_trace.py: CTA c
// copies bytes [c * 32 KiB, (c + 1) * 32 KiB) of src to dst, 256 threads x
// 8 float4 each. For checking the L2 write-back model against Nsight Compute:
//   nvcc -O2 -arch=sm_90 copy_probe.cu -o copy_probe
//   ncu --clock-control none --cache-control all -k regex:copy_chunks --launch-skip 1 --launch-count 1 \
//       --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum ./copy_probe BYTES
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "probe_check.h"

constexpr int kThreads = 256;
constexpr long long kChunk = 32768;
constexpr int kPerThread = static_cast<int>(kChunk / 16 / kThreads);

__global__ void __launch_bounds__(kThreads) copy_chunks(const float4* __restrict__ src, float4* __restrict__ dst) {
  const long long base = static_cast<long long>(blockIdx.x) * (kChunk / 16);
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const long long k = base + i * kThreads + threadIdx.x;
    dst[k] = src[k];
  }
}

int main(int argc, char** argv) {
  const long long bytes = argc > 1 ? std::atoll(argv[1]) : 268435456LL;
  if (bytes <= 0 || bytes % kChunk != 0) {
    std::fprintf(stderr, "copy_probe: BYTES must be a positive multiple of %lld (got %s)\n", kChunk, argc > 1 ? argv[1] : "");
    return 2;
  }
  float4 *src = nullptr, *dst = nullptr;
  CK(cudaMalloc(&src, bytes));
  CK(cudaMalloc(&dst, bytes));
  CK(cudaMemset(src, 1, bytes));
  CK(cudaMemset(dst, 0, bytes));
  const unsigned ctas = static_cast<unsigned>(bytes / kChunk);
  for (int run = 0; run < 2; ++run) copy_chunks<<<ctas, kThreads>>>(src, dst);  // the second is profiled
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::printf("copied %lld bytes with %u CTAs\n", bytes, ctas);
  CK(cudaFree(src));
  CK(cudaFree(dst));
  return 0;
}
