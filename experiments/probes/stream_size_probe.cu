// Stream-size probe: how long a streaming kernel of B bytes takes, from a few
// MiB (FA2's row kernels: 8-240 MB) to 512 MiB, reading only or copying.
//
// Why: FA2's row kernels (preprocess, convert_dq) run 2-7 us longer than the
// model predicts on the H200, and PyTorch's flash backward's row kernels too
// (experiments/third_party): short streams reach less of DRAM's rate than the
// model's channel gives them. This probe measures the time of the simplest
// stream at each size, for `iosim replay` of the same schedule to be set
// beside it (stream_size_table.py): a fixed cost shows as a constant gap, a
// slower rate as a gap growing with B.
//
// Kernels: CTA c of 256 threads handles bytes [32 KiB c, 32 KiB (c + 1)),
// 8 float4 per thread (calibrate's copy kernel, experiments/copy_trace.py);
// `read` sums what it loads, `copy` writes it to a second buffer (copy_chunks_kernel.cuh;
// the 2026-12-02 run's copy kernel was this code under the name stream_copy).
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/stream_size_probe.cu -o stream_size_probe
//   experiments/probes/stream_size_run.sh PROBE OUT
// A CONFIG is kind:mib (kind read or copy); one launch per config after a
// warm-up launch (ncu skips it). Prints, per launch, index,kind,bytes.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "probe_check.h"
// The copy kernel, shared with iosim calibrate's dirty-limit probe.
#include "../../kernels/calibrate/copy_chunks_kernel.cuh"

namespace {

using iosim::copy_chunks::kPerThread;
using iosim::copy_chunks::kThreads;
constexpr long long kChunk = iosim::copy_chunks::kChunkBytes;

__global__ void __launch_bounds__(kThreads) stream_read(const float4* __restrict__ src, float* __restrict__ sink) {
  const long long base = static_cast<long long>(blockIdx.x) * (kChunk / 16);
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const float4 v = src[base + i * kThreads + threadIdx.x];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) sink[threadIdx.x] = acc;  // never true: keeps the loads
}

}  // namespace

int main(int argc, char** argv) {
  long long largest = 1;
  for (int i = 1; i < argc; ++i) {
    char kind[16];
    long long mib = 0;
    if (std::sscanf(argv[i], "%15[a-z]:%lld", kind, &mib) != 2 || mib < 1 ||
        (std::strcmp(kind, "read") != 0 && std::strcmp(kind, "copy") != 0)) {
      std::fprintf(stderr, "stream_size_probe: bad config '%s' (want read:MIB or copy:MIB)\n", argv[i]);
      return 2;
    }
    if (mib > largest) largest = mib;
  }
  const size_t bytes = static_cast<size_t>(largest) << 20;
  float4 *src = nullptr, *dst = nullptr;
  float* sink = nullptr;
  CK(cudaMalloc(&src, bytes));
  CK(cudaMalloc(&dst, bytes));
  CK(cudaMalloc(&sink, kThreads * sizeof(float)));
  CK(cudaMemset(src, 0, bytes));
  CK(cudaMemset(dst, 0, bytes));
  stream_read<<<1, kThreads>>>(src, sink);  // module load; ncu skips it
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::printf("index,kind,bytes\n");
  for (int i = 1; i < argc; ++i) {
    char kind[16];
    long long mib = 0;
    std::sscanf(argv[i], "%15[a-z]:%lld", kind, &mib);
    const long long b = mib << 20;
    const unsigned ctas = static_cast<unsigned>(b / kChunk);
    if (std::strcmp(kind, "read") == 0) stream_read<<<ctas, kThreads>>>(src, sink);
    else iosim::copy_chunks::copy_chunks<<<ctas, kThreads>>>(src, dst);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::printf("%d,%s,%lld\n", i - 1, kind, b);
  }
  CK(cudaFree(src));
  CK(cudaFree(dst));
  CK(cudaFree(sink));
  return 0;
}
