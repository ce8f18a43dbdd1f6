// Write-back probe: what makes the L2 write dirty lines to DRAM during a
// kernel. The streaming copy (kernels/calibrate/copy_probe.cu) ends with about
// 25 MB dirty in the H200's L2 whatever its size, but the attention kernels,
// which write their output slowly while DRAM idles, end with 1-14 MB dirty
// (experiments/validation/h200/grid.csv: meas_dram_write_bytes against the
// bytes of O). This kernel writes a known footprint at a known pace, so that
// Nsight Compute's dram__bytes_write.sum tells which of these matters: the
// dirty bytes, the write rate (how idle DRAM is), idle time after the last
// write, and re-writes of the same lines.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/writeback_probe.cu -o writeback_probe
//   ncu --clock-control none --cache-control all -k regex:slow_write --launch-skip 1 \
//       --metrics dram__bytes_write.sum,dram__bytes_read.sum,lts__t_sectors_op_write.sum,gpu__time_duration.sum \
//       --csv --page raw --print-units base ./writeback_probe CONFIG...
//
// A CONFIG is MiB:rounds:gap:tail[:readMiB:readRounds]. One CTA per SM (all
// resident at once); CTA c owns bytes [c R, (c + 1) R), R = MiB / SMs rounded
// down to 4 KiB. It writes its region in 4 KiB chunks (256 threads x 16 B),
// `rounds` times over, spinning `gap` SM cycles after each chunk. Then, where
// readMiB > 0, it reads its share of a second buffer of readMiB (same layout,
// ld.global.cg: L2, not L1) readRounds times over: reads that push the dirty
// lines out of L2, or hit beside them. Then it spins `tail` cycles. The first
// launch (1 MiB) only loads the module; ncu skips it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probe_check.h"

namespace {

constexpr int kThreads = 256;
constexpr long long kChunkBytes = kThreads * 16;

struct Config {
  long long mib = 0;
  int rounds = 1;
  long long gap = 0;
  long long tail = 0;
  long long read_mib = 0;
  int read_rounds = 0;
};

__device__ __forceinline__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void __launch_bounds__(kThreads) slow_write(float4* __restrict__ dst, long long chunks_per_cta, int rounds,
                                                       long long gap, long long tail, const float4* __restrict__ src,
                                                       long long read_chunks_per_cta, int read_rounds,
                                                       float* __restrict__ sink) {
  float4* const mine = dst + static_cast<long long>(blockIdx.x) * chunks_per_cta * kThreads;
  const float4* const theirs = src + static_cast<long long>(blockIdx.x) * read_chunks_per_cta * kThreads;
  for (int r = 0; r < rounds; ++r)
    for (long long c = 0; c < chunks_per_cta; ++c) {
      // Values that differ per round, so no write is ever of unchanged data.
      mine[c * kThreads + threadIdx.x] = make_float4(static_cast<float>(r + 1), static_cast<float>(c),
                                                     static_cast<float>(threadIdx.x), static_cast<float>(blockIdx.x));
      if (gap > 0) spin(gap);
    }
  float acc = 0.f;
  for (int r = 0; r < read_rounds; ++r)
    for (long long c = 0; c < read_chunks_per_cta; ++c) {
      const float4 v = __ldcg(theirs + c * kThreads + threadIdx.x);
      acc += v.x + v.y + v.z + v.w;
    }
  if (acc == 1234.5f) sink[threadIdx.x] = acc;  // never true (the buffer holds 1e-3): keeps the loads
  if (tail > 0) spin(tail);
}

Config parse(const char* text) {
  Config c;
  long long rounds = 0;
  long long read_rounds = 0;
  const int n = std::sscanf(text, "%lld:%lld:%lld:%lld:%lld:%lld", &c.mib, &rounds, &c.gap, &c.tail, &c.read_mib,
                            &read_rounds);
  if ((n != 4 && n != 6) || c.mib <= 0 || rounds <= 0 || c.gap < 0 || c.tail < 0 || c.read_mib < 0 ||
      read_rounds < 0) {
    std::fprintf(stderr,
                 "writeback_probe: bad config '%s' (want MiB:rounds:gap:tail[:readMiB:readRounds], MiB and rounds > 0)\n",
                 text);
    std::exit(2);
  }
  c.rounds = static_cast<int>(rounds);
  c.read_rounds = static_cast<int>(read_rounds);
  return c;
}

long long chunks_per_cta(long long mib, int sms) { return (mib << 20) / sms / kChunkBytes; }

struct Buffers {
  float4* dst = nullptr;
  float4* src = nullptr;
  float* sink = nullptr;
};

void launch(const Buffers& b, const Config& c, int sms) {
  slow_write<<<sms, kThreads>>>(b.dst, chunks_per_cta(c.mib, sms), c.rounds, c.gap, c.tail, b.src,
                                chunks_per_cta(c.read_mib, sms), c.read_rounds, b.sink);
  CK(cudaGetLastError());
}

__global__ void fill(float* p, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    p[i] = 1e-3f;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Config> configs;
  for (int i = 1; i < argc; ++i) configs.push_back(parse(argv[i]));
  if (configs.empty()) {
    std::fprintf(stderr, "usage: writeback_probe MiB:rounds:gap:tail ...\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  long long largest = 1, largest_read = 1;
  for (const Config& c : configs) {
    largest = std::max(largest, c.mib);
    largest_read = std::max(largest_read, c.read_mib);
  }
  Buffers b;
  CK(cudaMalloc(&b.dst, static_cast<std::size_t>(largest) << 20));
  CK(cudaMalloc(&b.src, static_cast<std::size_t>(largest_read) << 20));
  CK(cudaMalloc(&b.sink, kThreads * sizeof(float)));
  CK(cudaMemset(b.dst, 0, static_cast<std::size_t>(largest) << 20));
  fill<<<1024, 256>>>(reinterpret_cast<float*>(b.src), (largest_read << 20) / 4);
  CK(cudaGetLastError());
  launch(b, Config{1, 1, 0, 0, 0, 0}, sms);  // module load
  std::printf("index,mib,rounds,gap,tail,read_mib,read_rounds,ctas,bytes_per_round,read_bytes_per_round\n");
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    launch(b, c, sms);
    std::printf("%zu,%lld,%d,%lld,%lld,%lld,%d,%d,%lld,%lld\n", i, c.mib, c.rounds, c.gap, c.tail, c.read_mib,
                c.read_rounds, sms, chunks_per_cta(c.mib, sms) * kChunkBytes * sms,
                chunks_per_cta(c.read_mib, sms) * kChunkBytes * sms);
  }
  CK(cudaDeviceSynchronize());
  CK(cudaFree(b.dst));
  CK(cudaFree(b.src));
  CK(cudaFree(b.sink));
  return 0;
}
