// L2 working-set sweep with lines shared between SMs (issue 9, item 3: what the L2 keeps of a
// working set that SMs of both halves read).
//
// iosim calibrate's sweep (kernels/calibrate/memory.cu, resident_chase) has each 128-byte line read
// by one warp on one SM; the working set it still half-hits at is the profile's l2.effective_size
// (H200: 44.79 MiB of 60). The H200's L2 is two halves; a line read by an SM of the far half is
// copied into the near one (the partitions probe). If a copy takes a slot of its own, a line that SMs
// of both halves read takes two slots, and such a working set is half-kept at a smaller size: FA2's
// K and V, read by CTAs all over the GPU, would then hold twice their bytes.
//
// Here `share` warps on different SMs chase each chain: warp w of W takes chain w mod (W / share),
// so the warps of a chain are W / share warps apart, i.e. on CTAs gridDim / share apart (one CTA of
// 32 warps per SM). share = 1 is calibrate's sweep. Per (share, working set), median of 5 runs of:
// a flush (a 512 MiB read, three times over in half-L2 chunks), a cold pass, 3 warm passes, each
// timed with clock64 per warp; the run's value is the median over warps of cycles per load. The hit
// fraction is (cold - warm) / (cold - hit), hit = the warm latency at the smallest working set of
// the same share (calibrate's formula).
//
// Build: nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 l2_shared_sweep.cu -o l2_shared_sweep
// Run:   l2_shared_sweep > sweep.csv   (columns: share,working_set_mib,cold,warm,hit_fraction)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "l2_sweep_common.h"

namespace {

using l2probe::clock_cycles;
using l2probe::kLine;
using l2probe::kWarmPasses;
using l2probe::ld_cg;
using l2probe::median;

constexpr int kThreads = 1024;  // 32 warps, lane 0 of each chases
constexpr int kRuns = 5;

using Rec = l2probe::ChaseRecord;



__global__ void __launch_bounds__(kThreads) shared_chase(const std::uint32_t* buf, long long lines, int share,
                                                         Rec* out, std::uint32_t* sink) {
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / 32);
  const long long w = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const long long chains = warps / share;
  const long long chain = w % chains;
  if ((threadIdx.x & 31) != 0) return;
  std::uint32_t guard = 0;
  auto pass = [&]() {
    unsigned long long n = 0;
    for (long long k = chain; k < lines; k += chains, ++n) {
      const std::uint32_t v = ld_cg(buf + k * (kLine / 4) + guard);
      guard = v == 0x7FC01234u ? 1u : 0u;
    }
    *sink = guard;
    return n;
  };
  const unsigned long long c0 = clock_cycles();
  const unsigned long long n = pass();
  const unsigned long long c1 = clock_cycles();
  for (int p = 0; p < kWarmPasses; ++p) pass();
  const unsigned long long c2 = clock_cycles();
  out[w].cold = c1 - c0;
  out[w].warm = c2 - c1;
  out[w].accesses = n;
}



}  // namespace

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const long long l2 = prop.l2CacheSize;
  std::fprintf(stderr, "%s: %d SMs, L2 %lld B\n", prop.name, sms, l2);
  const long long max_ws = 2 * l2;
  std::uint32_t* buf = nullptr;
  CK(cudaMalloc(&buf, max_ws));
  CK(cudaMemset(buf, 0, max_ws));
  uint4* fbuf = nullptr;
  CK(cudaMalloc(&fbuf, l2probe::kFlushBytes));
  CK(cudaMemset(fbuf, 0, l2probe::kFlushBytes));
  std::uint32_t* sink = nullptr;
  CK(cudaMalloc(&sink, 4));
  Rec* rec = nullptr;
  const int grid = sms;  // one CTA of 32 warps per SM (1024 threads: one fits per SM)
  CK(cudaMalloc(&rec, sizeof(Rec) * grid * 32));
  std::vector<Rec> host(static_cast<size_t>(grid) * 32);
  std::printf("gpu,share,working_set_mib,cold,warm,hit_fraction\n");
  for (const int share : {1, 2, 4, 8}) {
    std::vector<std::pair<double, std::pair<double, double>>> points;
    for (int k = -24; k <= 8; ++k) {  // l2 x 2^(k/8): 0.125 to 2 x the L2
      const long long ws = static_cast<long long>(std::llround(static_cast<double>(l2) * std::pow(2.0, k / 8.0) / kLine)) * kLine;
      if (ws > max_ws) continue;
      std::vector<double> cold, warm;
      for (int r = 0; r < kRuns; ++r) {
        l2probe::flush(fbuf, l2, sms, sink);
        shared_chase<<<grid, kThreads>>>(buf, ws / kLine, share, rec, sink);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(host.data(), rec, sizeof(Rec) * host.size(), cudaMemcpyDeviceToHost));
        const auto [c, w] = l2probe::per_load_medians(host);
        cold.push_back(c);
        warm.push_back(w);
      }
      points.push_back({static_cast<double>(ws) / (1 << 20), {median(cold), median(warm)}});
    }
    const std::string prefix = std::string(prop.name) + "," + std::to_string(share);
    l2probe::print_points(prefix.c_str(), points);
  }
  CK(cudaFree(buf));
  CK(cudaFree(fbuf));
  CK(cudaFree(sink));
  CK(cudaFree(rec));
  return 0;
}
