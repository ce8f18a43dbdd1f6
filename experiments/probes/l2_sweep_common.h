// What the L2 working-set probes share (l2_shared_sweep.cu, l2_home_sweep.cu): the loads and clock
// they time, the flush they run before each pass (as iosim calibrate's: 512 MiB read three times
// over in half-L2 chunks), and a median.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "probe_check.h"

namespace l2probe {

constexpr long long kLine = 128;
constexpr int kWarmPasses = 3;
constexpr long long kFlushBytes = 512ll << 20;

__device__ __forceinline__ std::uint32_t ld_cg(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ unsigned long long clock_cycles() {
  unsigned long long c;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
  return c;
}

__global__ void flush_kernel(const uint4* buf, long long n, long long chunk, std::uint32_t* sink) {
  std::uint32_t acc = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long base = 0; base < n; base += chunk)
    for (int r = 0; r < 3; ++r)
      for (long long i = base + blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < base + chunk && i < n;
           i += stride) {
        uint4 v;
        asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(buf + i));
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
      }
  if (acc == 0x7FC01234u) *sink = acc;
}

// Reads kFlushBytes of `fbuf` (allocated and zeroed by the caller) on every SM.
inline void flush(const uint4* fbuf, long long l2_bytes, int sms, std::uint32_t* sink) {
  flush_kernel<<<sms * 4, 512>>>(fbuf, kFlushBytes / 16, l2_bytes / 2 / 16, sink);
  CK(cudaGetLastError());
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One chasing warp's pass timings: a cold pass, then kWarmPasses warm ones, over `accesses` loads each.
struct ChaseRecord {
  unsigned long long cold = 0, warm = 0, accesses = 0;
};

// The medians over the warps that chased anything of cycles per load: {cold, warm}.
inline std::pair<double, double> per_load_medians(const std::vector<ChaseRecord>& records) {
  std::vector<double> c, w;
  for (const ChaseRecord& x : records)
    if (x.accesses > 0) {
      c.push_back(static_cast<double>(x.cold) / static_cast<double>(x.accesses));
      w.push_back(static_cast<double>(x.warm) / static_cast<double>(x.accesses * kWarmPasses));
    }
  return {median(c), median(w)};
}

// The hit fraction of each point as iosim calibrate computes it: (cold - warm) / (cold - hit), hit
// = the warm latency at the smallest working set; printed as CSV lines "PREFIX,mib,cold,warm,fraction".
inline void print_points(const char* prefix, const std::vector<std::pair<double, std::pair<double, double>>>& points) {
  if (points.empty()) return;
  const double hit = points.front().second.second;
  for (const auto& [mib, cw] : points) {
    const double span = cw.first - hit;
    const double fraction = span > 0 ? std::clamp((cw.first - cw.second) / span, 0.0, 1.0) : 0.0;
    std::printf("%s,%.3f,%.2f,%.2f,%.4f\n", prefix, mib, cw.first, cw.second, fraction);
  }
  std::fflush(stdout);
}

}  // namespace l2probe
