// L2 write probe: what SM stores cost when their lines stay in the L2.
//
// Why: copies of 4-64 MiB take 1.2-1.5x the model's time although their
// writes never reach DRAM (experiments/results/2026-12-02-h200-stream-size),
// and FA2's row kernels, which read a stream and write another, run 2-7 us
// longer than predicted. The model charges a store only its L2 transfer, at
// the L2's read rate (calibrate's resident re-read). This probe times stores
// alone, stores into lines the L2 already holds, re-reads of L2-resident
// lines, and reads with a growing share of writes beside them, so that the
// store side's rate and whether it adds to the reads' time can be read off.
//
// CTAs of 256 threads, 8 float4 per thread: 32 KiB per CTA, as calibrate's
// copy kernel (kernels/calibrate/copy_chunks_kernel.cuh).
//   read:M        CTA c reads chunk c of a fresh region of M MiB
//   write:M       CTA c writes zeros to chunk c of a fresh region of M MiB
//   copy:M        CTA c reads chunk c and writes it to chunk c of another region
//   l2read:S:T    T MiB of reads of an S MiB region (CTA c: chunk c mod S's chunks)
//   l2write:S:T   T MiB of writes into an S MiB region, likewise
//   mix:M:K       CTA c reads chunk c of M MiB; every K-th CTA also writes it to a fresh region
//   l2writev:S:T  as l2write, storing values that differ by CTA and thread, not zeros
//   gswrite:S:T   T MiB of stores over an S MiB region by one wave of 3 CTAs x 512 threads per SM,
//                 grid-stride, each pass its own value (iosim calibrate's "L2 write bandwidth" kernel)
//   gswrite0:S:T  the same storing zeros
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/l2_write_probe.cu -o l2_write_probe
//   experiments/probes/l2_write_run.sh PROBE OUT
// One launch per config after a warm-up launch (ncu skips it); prints, per
// launch, index,kind,read_bytes,write_bytes,region_bytes.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "probe_check.h"

namespace {

constexpr int kThreads = 256;
constexpr long long kChunk = 32768;
constexpr int kPerThread = static_cast<int>(kChunk / 16 / kThreads);

// Reads chunk (c mod chunks); every `write_every`-th CTA (0: none) writes what
// it read to the same chunk of dst; `zero_only`: no reads, zeros written.
__global__ void __launch_bounds__(kThreads) stream(const float4* __restrict__ src, float4* __restrict__ dst,
                                                   long long chunks, int write_every, int zero_only,
                                                   float* __restrict__ sink) {
  const long long chunk = static_cast<long long>(blockIdx.x) % chunks;
  const long long base = chunk * (kChunk / 16);
  const bool writes = write_every > 0 && blockIdx.x % static_cast<unsigned>(write_every) == 0;
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const long long k = base + i * kThreads + threadIdx.x;
    if (zero_only) {
      dst[k] = zero_only == 1 ? make_float4(0.f, 0.f, 0.f, 0.f)
                              : make_float4(__uint_as_float(blockIdx.x * 2654435761u + threadIdx.x), 1.f, 2.f, 3.f);
    } else {
      const float4 v = src[k];
      if (writes) dst[k] = v;
      else acc += v.x + v.y + v.z + v.w;
    }
  }
  if (acc == 1234.5f) sink[threadIdx.x] = acc;  // never true: keeps the loads
}

// calibrate's l2_rewrite (kernels/calibrate/memory.cu), with a zero option.
__global__ void __launch_bounds__(512) rewrite_grid_stride(uint4* __restrict__ buf, long long n, int passes, int zero) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (int p = 0; p < passes; ++p) {
    const unsigned v = zero ? 0u : 0x9E3779B9u * static_cast<unsigned>(p + 1);
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride)
      buf[i] = make_uint4(v, v, v, v);
  }
}

struct Config {
  char kind[16] = {};
  long long a = 0, b = 0;  // MiB (read/write/copy: a; l2*: a = S, b = T; mix: a = M, b = K)
};

bool parse(const char* s, Config& c) {
  const int n = std::sscanf(s, "%15[a-z0-9]:%lld:%lld", c.kind, &c.a, &c.b);
  if (n < 2 || c.a < 1) return false;
  const bool two = !std::strcmp(c.kind, "l2read") || !std::strcmp(c.kind, "l2write") || !std::strcmp(c.kind, "mix") ||
                   !std::strcmp(c.kind, "l2writev") || !std::strcmp(c.kind, "gswrite") || !std::strcmp(c.kind, "gswrite0");
  const bool one = !std::strcmp(c.kind, "read") || !std::strcmp(c.kind, "write") || !std::strcmp(c.kind, "copy");
  return (one && n == 2) || (two && n == 3 && c.b >= 1);
}

}  // namespace

int main(int argc, char** argv) {
  long long largest = 1;
  for (int i = 1; i < argc; ++i) {
    Config c;
    if (!parse(argv[i], c)) {
      std::fprintf(stderr,
                   "l2_write_probe: bad config '%s' (want read:M, write:M, copy:M, l2read:S:T, l2write:S:T or "
                   "mix:M:K, MiB)\n",
                   argv[i]);
      return 2;
    }
    if (c.a > largest) largest = c.a;
  }
  const size_t bytes = static_cast<size_t>(largest) << 20;
  float4 *src = nullptr, *dst = nullptr;
  float* sink = nullptr;
  CK(cudaMalloc(&src, bytes));
  CK(cudaMalloc(&dst, bytes));
  CK(cudaMalloc(&sink, kThreads * sizeof(float)));
  CK(cudaMemset(src, 0, bytes));
  CK(cudaMemset(dst, 0, bytes));
  stream<<<1, kThreads>>>(src, dst, 1, 0, 0, sink);  // module load; ncu skips it
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::printf("index,kind,read_bytes,write_bytes,region_bytes\n");
  for (int i = 1; i < argc; ++i) {
    Config c;
    parse(argv[i], c);
    const long long region = c.a << 20, chunks = region / kChunk;
    long long ctas = chunks, rd = 0, wr = 0;
    int every = 0, zero = 0;
    if (!std::strcmp(c.kind, "read")) rd = region;
    if (!std::strcmp(c.kind, "write")) zero = 1, wr = region;
    if (!std::strcmp(c.kind, "copy")) every = 1, rd = wr = region;
    if (!std::strcmp(c.kind, "l2read")) ctas = (c.b << 20) / kChunk, rd = c.b << 20;
    if (!std::strcmp(c.kind, "l2write")) ctas = (c.b << 20) / kChunk, zero = 1, wr = c.b << 20;
    if (!std::strcmp(c.kind, "mix")) every = static_cast<int>(c.b), rd = region, wr = ((chunks + c.b - 1) / c.b) * kChunk;
    if (!std::strcmp(c.kind, "l2writev")) ctas = (c.b << 20) / kChunk, zero = 2, wr = c.b << 20;
    if (!std::strncmp(c.kind, "gswrite", 7)) {
      int sms = 0;
      CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
      wr = c.b << 20;
      rewrite_grid_stride<<<3 * sms, 512>>>(reinterpret_cast<uint4*>(dst), region / 16, static_cast<int>(c.b / c.a),
                                            c.kind[7] == '0');
    } else {
      stream<<<static_cast<unsigned>(ctas), kThreads>>>(src, dst, chunks, every, zero, sink);
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::printf("%d,%s,%lld,%lld,%lld\n", i - 1, argv[i], rd, wr, region);
  }
  CK(cudaFree(src));
  CK(cudaFree(dst));
  CK(cudaFree(sink));
  return 0;
}
