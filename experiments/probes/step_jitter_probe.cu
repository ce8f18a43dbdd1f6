// Step-jitter probe: how much the steps of identical CTAs vary in length on a
// loaded GPU, and so how far apart identical CTAs drift.
//
// Why: the engine runs identical CTAs in lockstep, so CTAs that read the same
// tile (the standard GEMMs' operand tiles, FA2's K/V) reach the L2 in the same
// simulated cycle and merge into one lookup, where the GPU merges a hit only
// with a read in the same few cycles (experiments/results/
// 2026-11-28-h200-merge-probe). What spreads the GPU's CTAs apart is that no
// two steps take the same time. This probe measures that variation.
//
// Every SM runs `ctas` CTAs of 128 threads (4 warps), all resident at once.
// Each CTA runs `steps` steps of a GEMM-like loop, double-buffered like the
// standard GEMM (kernels/standard/standard_gemm.cu): wait for this step's
// cp.async tile, barrier, issue the next step's tile, then `mmas` ldmatrix +
// mma.sync m16n8k16 pairs per warp on this step's tile. The tiles are read
// from an L2-resident buffer (`tile_kib` KiB each; CTA c at step k reads tile
// (c / share + k) mod tiles, so `share` CTAs read each tile in the same step,
// as the GEMM's CTAs of one row of output tiles do). Thread 0 stamps clock64
// and %globaltimer at each barrier.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/step_jitter_probe.cu -o step_jitter_probe
//   ./step_jitter_probe [ctas:tile_kib:mmas:share:steps ...]
//
// Output, one line per configuration (CSV; header first):
//   - cv: the standard deviation of a step's length over its CTA's mean step
//     length (clock64 of consecutive barriers, steps 4 .. steps - 2, pooled
//     over CTAs), and the quantiles of that ratio (p01 .. p99);
//   - step_cycles: the mean step length;
//   - spread_k: the standard deviation over CTAs of (globaltimer at step k -
//     globaltimer at step 4), in SM cycles (clock64 per ns of CTA 0), at k =
//     8, 16, 32, 64, 128: if steps vary independently, it grows as sqrt(k);
//   - start_spread: max - min of the CTAs' first stamps, SM cycles.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probe_check.h"
// The kernel, shared with iosim calibrate's step-variation step.
#include "../../kernels/calibrate/step_variation_kernel.cuh"

namespace {

using iosim::step_variation::kThreads;
using iosim::step_variation::steps_kernel;

struct Config {
  int ctas = 2;
  int tile_kib = 16;
  int mmas = 64;
  int share = 8;
  int steps = 160;
};

Config parse(const std::string& s) {
  Config c;
  if (std::sscanf(s.c_str(), "%d:%d:%d:%d:%d", &c.ctas, &c.tile_kib, &c.mmas, &c.share, &c.steps) != 5 || c.ctas < 1 ||
      c.tile_kib < 1 || c.mmas < 0 || c.share < 1 || c.steps < 140) {
    std::fprintf(stderr, "bad config '%s' (ctas:tile_kib:mmas:share:steps, steps >= 140)\n", s.c_str());
    std::exit(2);
  }
  return c;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  const double f = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

void run(const Config& c, int sms, const uint4* buf, long long buf_bytes, float* sink) {
  const int grid = sms * c.ctas;
  const int tile_vecs = c.tile_kib * 1024 / 16;
  const int tiles = static_cast<int>(buf_bytes / (c.tile_kib * 1024LL));
  const size_t stamps = static_cast<size_t>(grid) * c.steps;
  unsigned long long *d_clocks = nullptr, *d_timers = nullptr;
  unsigned* d_smids = nullptr;
  CK(cudaMalloc(&d_clocks, stamps * 8));
  CK(cudaMalloc(&d_timers, stamps * 8));
  CK(cudaMalloc(&d_smids, static_cast<size_t>(grid) * 4));
  const int smem = 2 * c.tile_kib * 1024;
  CK(cudaFuncSetAttribute(steps_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  for (int rep = 0; rep < 2; ++rep) {  // the first run warms the L2 with the buffer
    steps_kernel<<<grid, kThreads, smem>>>(buf, tiles, tile_vecs, c.mmas, c.share, c.steps, d_clocks, d_timers, d_smids, sink);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
  std::vector<unsigned long long> clocks(stamps), timers(stamps);
  CK(cudaMemcpy(clocks.data(), d_clocks, stamps * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(timers.data(), d_timers, stamps * 8, cudaMemcpyDeviceToHost));
  std::vector<unsigned> smids(static_cast<size_t>(grid));
  CK(cudaMemcpy(smids.data(), d_smids, static_cast<size_t>(grid) * 4, cudaMemcpyDeviceToHost));
  CK(cudaFree(d_clocks));
  CK(cudaFree(d_timers));
  CK(cudaFree(d_smids));

  const int first = 4, last = c.steps - 2;
  std::vector<double> ratio;
  double sum_len = 0;
  long long n_len = 0;
  for (int b = 0; b < grid; ++b) {
    const unsigned long long* ck = &clocks[static_cast<size_t>(b) * c.steps];
    const double mean = static_cast<double>(ck[last] - ck[first]) / (last - first);
    for (int k = first + 1; k <= last; ++k) ratio.push_back(static_cast<double>(ck[k] - ck[k - 1]) / mean);
    sum_len += static_cast<double>(ck[last] - ck[first]);
    n_len += last - first;
  }
  double var = 0;
  for (double r : ratio) var += (r - 1) * (r - 1);
  const double cv = std::sqrt(var / static_cast<double>(ratio.size()));
  // SM cycles per ns, from CTA 0's own stamps.
  const double cyc_per_ns = static_cast<double>(clocks[last] - clocks[first]) /
                            static_cast<double>(timers[last] - timers[first]);
  auto spread_at = [&](int k) {
    if (first + k > last) return -1.0;
    double s = 0, s2 = 0;
    for (int b = 0; b < grid; ++b) {
      const unsigned long long* t = &timers[static_cast<size_t>(b) * c.steps];
      const double d = static_cast<double>(t[first + k] - t[first]) * cyc_per_ns;
      s += d;
      s2 += d * d;
    }
    const double m = s / grid;
    return std::sqrt(std::max(0.0, s2 / grid - m * m));
  };
  unsigned long long t0_min = ~0ull, t0_max = 0, tick = ~0ull;
  for (int b = 0; b < grid; ++b) {
    const unsigned long long t0 = timers[static_cast<size_t>(b) * c.steps];
    t0_min = std::min(t0_min, t0);
    t0_max = std::max(t0_max, t0);
    for (int k = 1; k < c.steps; ++k) {
      const unsigned long long d = timers[static_cast<size_t>(b) * c.steps + k] - timers[static_cast<size_t>(b) * c.steps + k - 1];
      if (d > 0) tick = std::min(tick, d);
    }
  }
  std::printf("%d,%d,%d,%d,%d,%d,%.1f,%.4f", c.ctas, c.tile_kib, c.mmas, c.share, c.steps, grid, sum_len / n_len, cv);
  for (double q : {0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99}) std::printf(",%.4f", quantile(ratio, q));
  for (int k : {8, 16, 32, 64, 128}) std::printf(",%.1f", spread_at(k));
  std::printf(",%.1f,%.4f,%llu,", static_cast<double>(t0_max - t0_min) * cyc_per_ns, cyc_per_ns, tick);
  // Per rank on the SM (the CTAs of one SM ordered by their first stamp): the
  // mean over SMs of the rank's mean step over the SM's mean step.
  std::vector<std::vector<int>> by_sm(1024);
  for (int b = 0; b < grid; ++b) by_sm[smids[static_cast<size_t>(b)] % 1024].push_back(b);
  std::vector<double> rank_sum(static_cast<size_t>(c.ctas), 0.0);
  std::vector<int> rank_n(static_cast<size_t>(c.ctas), 0);
  for (auto& ctas_on_sm : by_sm) {
    if (static_cast<int>(ctas_on_sm.size()) != c.ctas) continue;
    std::sort(ctas_on_sm.begin(), ctas_on_sm.end(), [&](int a, int b) {
      return timers[static_cast<size_t>(a) * c.steps] < timers[static_cast<size_t>(b) * c.steps];
    });
    std::vector<double> mean(static_cast<size_t>(c.ctas));
    double sm_mean = 0;
    for (int r = 0; r < c.ctas; ++r) {
      const unsigned long long* ck = &clocks[static_cast<size_t>(ctas_on_sm[static_cast<size_t>(r)]) * c.steps];
      mean[static_cast<size_t>(r)] = static_cast<double>(ck[last] - ck[first]) / (last - first);
      sm_mean += mean[static_cast<size_t>(r)] / c.ctas;
    }
    for (int r = 0; r < c.ctas; ++r) {
      rank_sum[static_cast<size_t>(r)] += mean[static_cast<size_t>(r)] / sm_mean;
      ++rank_n[static_cast<size_t>(r)];
    }
  }
  for (int r = 0; r < c.ctas; ++r)
    std::printf("%s%.4f", r ? ";" : "", rank_n[static_cast<size_t>(r)] ? rank_sum[static_cast<size_t>(r)] / rank_n[static_cast<size_t>(r)] : 0.0);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Config> configs;
  for (int i = 1; i < argc; ++i) configs.push_back(parse(argv[i]));
  if (configs.empty())
    for (const char* s : {"2:16:32:8:160", "2:16:64:8:160", "2:16:128:8:160", "1:16:64:8:160", "4:8:32:8:160",
                          "2:32:64:8:160", "2:16:64:1:160", "2:16:64:32:160", "2:16:0:8:160", "4:16:64:8:160"})
      configs.push_back(parse(s));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(stderr, "device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const long long buf_bytes = 8LL << 20;  // 8 MiB: L2-resident
  uint4* buf = nullptr;
  float* sink = nullptr;
  CK(cudaMalloc(&buf, buf_bytes));
  CK(cudaMemset(buf, 0x3c, buf_bytes));  // fp16 1.0 everywhere: finite products
  CK(cudaMalloc(&sink, kThreads * sizeof(float)));
  std::printf(
      "ctas_per_sm,tile_kib,mmas,share,steps,grid,step_cycles,cv,p01,p05,p10,p25,p50,p75,p90,p95,p99,"
      "spread8,spread16,spread32,spread64,spread128,start_spread,cycles_per_ns,timer_tick_ns,rank_step_over_sm_mean\n");
  for (const Config& c : configs) run(c, prop.multiProcessorCount, buf, buf_bytes, sink);
  CK(cudaFree(buf));
  CK(cudaFree(sink));
  return 0;
}
