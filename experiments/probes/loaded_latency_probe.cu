// Loaded-latency probe: DRAM latency seen by one dependent chain of loads
// while other SMs stream reads from DRAM. iosim's DRAM is one FIFO server at
// the achievable bandwidth plus a fixed latency (calibrate's idle pointer
// chase), so a load waits longer only once the stream saturates the server;
// short memory-bound kernels (FA2's row kernels: 2-7 us short on the H200)
// suggest the GPU's latency rises before that. Here `streamers` SMs each run
// one CTA of 1024 threads reading a large buffer (16 B per thread, 4 loads in
// flight per thread, each CTA its own contiguous region), while one more CTA
// (one thread) chases a random cycle of lines through a second buffer that
// the L2 cannot hold, timing each load with clock64. The streamers stop when
// the chase is done and report their bytes and the wall time
// (%globaltimer), so each row pairs a latency with the DRAM bandwidth that
// was drawn meanwhile.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/loaded_latency_probe.cu -o loaded_latency_probe
//   ./loaded_latency_probe > latency.csv      (STREAMERS="0 8 16 ..." to choose the rows)
//
// Output (CSV): streamers, threads per streamer CTA, stream bytes, stream ns,
// stream TB/s, chase loads, mean and median cycles per chase load, SM clock
// (MHz, clock64 over %globaltimer on the chaser).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#include "probe_check.h"

namespace {

constexpr int kStreamThreads = 1024;
constexpr int kInFlight = 4;
constexpr int kChaseLoads = 4096;
constexpr std::size_t kLine = 128;

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Block 0 chases; blocks 1..streamers stream. One CTA per SM: the grid is
// at most the SM count and each CTA asks for most of the shared memory.
__global__ void __launch_bounds__(kStreamThreads) probe(const std::uint32_t* __restrict__ chain,
                                                        std::uint32_t start, const uint4* __restrict__ stream,
                                                        std::size_t vecs_per_cta, volatile int* done,
                                                        unsigned long long* out, std::uint32_t* lat) {
  extern __shared__ unsigned char reserve[];  // keeps a second CTA off this SM
  if (blockIdx.x == 0) {
    if (threadIdx.x != 0) return;
    reserve[0] = 0;
    std::uint32_t p = start;
    const unsigned long long t0 = globaltimer();
    const long long c0 = clock64();
    for (int i = 0; i < kChaseLoads; ++i) {
      const long long a = clock64();
      p = __ldcg(chain + p);
      asm volatile("" ::"r"(p) : "memory");  // the clock is read once the load is in
      const long long b = clock64();
      lat[i] = static_cast<std::uint32_t>(b - a);
    }
    const long long c1 = clock64();
    const unsigned long long t1 = globaltimer();
    out[0] = t1 - t0;
    out[1] = static_cast<unsigned long long>(c1 - c0);
    out[2] = p;
    __threadfence();
    *done = 1;
    return;
  }
  const uint4* base = stream + (blockIdx.x - 1) * vecs_per_cta;
  unsigned acc = 0;
  unsigned long long bytes = 0;
  const unsigned long long t0 = globaltimer();
  constexpr std::size_t kRound = static_cast<std::size_t>(kInFlight) * kStreamThreads;
  std::size_t i = threadIdx.x;
  while (*done == 0) {
    if (i + kRound > vecs_per_cta) i = threadIdx.x;  // around the CTA's region again
    uint4 x[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) x[u] = __ldcg(base + i + u * kStreamThreads);
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) acc ^= x[u].x;
    i += kRound;
    bytes += kInFlight * sizeof(uint4);
  }
  const unsigned long long t1 = globaltimer();
  atomicAdd(out + 3, bytes);
  atomicMax(out + 4, t1 - t0);
  if (acc == 0x9e3779b9u) out[5] = acc;
}

}  // namespace

int main() {
  int sms = 0, smem = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  const std::size_t chain_bytes = std::size_t{1} << 30;  // 1 GiB: far beyond the L2
  const std::size_t lines = chain_bytes / kLine;
  // Random chains through random lines, one 4-byte word per line: a fresh one
  // for every launch (the L2 would hold one it had seen: 4096 lines are 512
  // KiB), from a pool of lines drawn without repeats.
  constexpr int kChains = 32;
  std::vector<std::uint32_t> pool(lines);
  std::iota(pool.begin(), pool.end(), 0u);
  std::mt19937_64 rng(7);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::vector<std::uint32_t> chain(chain_bytes / sizeof(std::uint32_t), 0);
  auto line_of = [&](int c, int i) { return pool[static_cast<std::size_t>(c) * (kChaseLoads + 1) + i]; };
  for (int c = 0; c < kChains; ++c)
    for (int i = 0; i < kChaseLoads; ++i)
      chain[line_of(c, i) * (kLine / 4)] = line_of(c, i + 1) * static_cast<std::uint32_t>(kLine / 4);
  int next_chain = 0;
  std::uint32_t *d_chain = nullptr, *d_lat = nullptr;
  uint4* d_stream = nullptr;
  int* d_done = nullptr;
  unsigned long long* d_out = nullptr;
  const std::size_t stream_bytes = std::size_t{4} << 30;  // 4 GiB, split among the streamers
  CK(cudaMalloc(&d_chain, chain_bytes));
  CK(cudaMemcpy(d_chain, chain.data(), chain_bytes, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&d_stream, stream_bytes));
  CK(cudaMemset(d_stream, 1, stream_bytes));
  CK(cudaMalloc(&d_lat, kChaseLoads * sizeof(std::uint32_t)));
  CK(cudaMalloc(&d_done, sizeof(int)));
  CK(cudaMalloc(&d_out, 8 * sizeof(unsigned long long)));
  const int reserve = smem / 2 + 1024;  // one CTA per SM
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, reserve));
  std::vector<int> rows;
  if (const char* env = std::getenv("STREAMERS")) {
    std::istringstream in(env);
    for (int k; in >> k;) rows.push_back(k);
  } else {
    rows = {0, 4, 8, 16, 24, 33, 44, 66, 88, 110, sms - 1};
  }
  std::printf("streamers,threads,stream_bytes,stream_ns,stream_tbps,chase_loads,mean_cycles,median_cycles,clock_mhz\n");
  for (const int k : rows) {
    if (k < 0 || k > sms - 1) continue;
    for (int rep = 0; rep < 2; ++rep) {  // the first run warms up; the second is printed
      CK(cudaMemset(d_done, 0, sizeof(int)));
      CK(cudaMemset(d_out, 0, 8 * sizeof(unsigned long long)));
      const std::size_t per_cta = k > 0 ? stream_bytes / sizeof(uint4) / static_cast<std::size_t>(k) : 1;
      const std::uint32_t start = line_of(next_chain++ % kChains, 0) * static_cast<std::uint32_t>(kLine / 4);
      probe<<<k + 1, kStreamThreads, reserve>>>(d_chain, start, d_stream,
                                                per_cta, d_done, d_out, d_lat);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      if (rep == 0) continue;
      unsigned long long out[8];
      CK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
      std::vector<std::uint32_t> lat(kChaseLoads);
      CK(cudaMemcpy(lat.data(), d_lat, kChaseLoads * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
      const double mean = std::accumulate(lat.begin(), lat.end(), 0.0) / kChaseLoads;
      std::nth_element(lat.begin(), lat.begin() + kChaseLoads / 2, lat.end());
      const double tbps = out[4] > 0 ? static_cast<double>(out[3]) / static_cast<double>(out[4]) / 1e3 : 0.0;
      std::printf("%d,%d,%llu,%llu,%.4f,%d,%.1f,%u,%.1f\n", k, kStreamThreads, out[3], out[4], tbps, kChaseLoads,
                  mean, lat[kChaseLoads / 2], static_cast<double>(out[1]) / static_cast<double>(out[0]) * 1e3);
    }
  }
  CK(cudaFree(d_chain));
  CK(cudaFree(d_stream));
  CK(cudaFree(d_lat));
  CK(cudaFree(d_done));
  CK(cudaFree(d_out));
  return 0;
}
