// Latencies of one dependent access, by pointer chases of one thread with
// every load timed by clock64 (the method of the 2026-11-22 hardware probe,
// experiments/results/2026-11-22-hw-probe.md): shared memory (also giving the
// timing overhead: instrumented minus plain chase), DRAM (first pass after an
// L2 flush), and near / far L2 hits (lines filled by SM 0, then read twice by
// SM k: a far line is slow on its first read only, a copy then sits near).
#include <algorithm>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/calibrate/analysis.h"
#include "kernels/calibrate/bench_common.cuh"
#include "kernels/calibrate/benchmarks.h"

namespace iosim::calibrate::bench {
namespace {

constexpr int kSmemEntries = 1024;  // a cycle of this many shared-memory words
constexpr int kSmemLoads = 8192;
constexpr int kChaseLines = 8192;   // 1 MiB of 128 B lines: few TLB misses
constexpr int kLineWords = 32;
constexpr std::uint32_t kAnySm = 0xFFFFFFFFu;

// out[0]: plain cycles per load; out[1]: the same with clock64 around each
// load, as in timed_chase; out[2]: the final index (keeps the chase live).
__global__ void smem_chase(std::uint32_t* out) {
  __shared__ std::uint32_t s[kSmemEntries];
  __shared__ std::uint32_t sink[1];
  for (int i = 0; i < kSmemEntries; ++i) s[i] = (i * 97 + 13) % kSmemEntries;  // one cycle: 97 is odd
  __syncthreads();
  std::uint32_t j = 0;
  const std::uint64_t t0 = clock_cycles();
  for (int i = 0; i < kSmemLoads; ++i) j = s[j];
  const std::uint64_t t1 = clock_cycles();
  volatile std::uint32_t* vs = sink;
  std::uint64_t timed = 0;
  for (int i = 0; i < kSmemLoads; ++i) {
    const std::uint64_t a = clock_cycles();
    j = s[j];
    vs[0] = j;
    timed += clock_cycles() - a;
  }
  out[0] = static_cast<std::uint32_t>((t1 - t0) / kSmemLoads);
  out[1] = static_cast<std::uint32_t>(timed / kSmemLoads);
  out[2] = j;
}

// Thread 0 of the first CTA to start on SM `target` (any SM for kAnySm)
// chases `chain` for `passes` passes, timing each load; lat[pass * lines + i].
// info[0] = 1 once a CTA claimed the chase.
__global__ void timed_chase(const std::uint32_t* chain, int lines, int passes, std::uint32_t target,
                            std::uint32_t* lat, std::uint32_t* info) {
  __shared__ std::uint32_t sink[1];
  if (threadIdx.x != 0 || (target != kAnySm && sm_id() != target)) return;
  if (atomicCAS(info, 0u, 1u) != 0u) return;
  volatile std::uint32_t* vs = sink;
  std::uint32_t j = 0;
  for (int pass = 0; pass < passes; ++pass)
    for (int i = 0; i < lines; ++i) {
      const std::uint64_t a = clock_cycles();
      j = ld_cg(chain + j);
      vs[0] = j;
      lat[pass * lines + i] = static_cast<std::uint32_t>(clock_cycles() - a);
    }
  info[1] = j;
}

// A random cycle through kChaseLines lines: each line's first word holds the
// word index of the next line.
std::vector<std::uint32_t> random_cycle() {
  std::vector<std::uint32_t> order(kChaseLines);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937 rng(12345);
  std::shuffle(order.begin() + 1, order.end(), rng);
  std::vector<std::uint32_t> chain(static_cast<std::size_t>(kChaseLines) * kLineWords, 0);
  for (int i = 0; i < kChaseLines; ++i)
    chain[order[i] * kLineWords] = order[(i + 1) % kChaseLines] * kLineWords;
  return chain;
}

std::vector<double> as_doubles(const std::vector<std::uint32_t>& v, std::size_t from, std::size_t count) {
  return {v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(from + count)};
}

// Per-load latencies of `passes` passes on SM `target`; empty when no CTA
// reached that SM.
class Chaser {
 public:
  explicit Chaser(int sm_count)
      : sm_count_(sm_count), chain_(static_cast<std::size_t>(kChaseLines) * kLineWords),
        lat_(static_cast<std::size_t>(2) * kChaseLines), info_(2) {
    chain_.upload(random_cycle());
  }
  std::vector<std::uint32_t> run(std::uint32_t target, int passes) const {
    info_.fill_bytes(0);
    const int grid = target == kAnySm ? 1 : sm_count_ * 4;  // enough CTAs that one lands on every SM
    timed_chase<<<grid, 32>>>(chain_.get(), kChaseLines, passes, target, lat_.get(), info_.get());
    IOSIM_CUDA_CHECK_LAUNCH();
    IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
    if (info_.download()[0] == 0) return {};
    std::vector<std::uint32_t> lat = lat_.download();
    lat.resize(static_cast<std::size_t>(passes) * kChaseLines);
    return lat;
  }

 private:
  int sm_count_;
  kernels::DeviceBuffer<std::uint32_t> chain_, lat_;
  mutable kernels::DeviceBuffer<std::uint32_t> info_;
};

}  // namespace

Latencies latencies(const Plan& plan, const L2Flush& flush) {
  Latencies out;
  kernels::DeviceBuffer<std::uint32_t> smem_out(3);
  std::vector<double> plain, timed;
  for (int r = -1; r < plan.runs; ++r) {
    smem_chase<<<1, 1>>>(smem_out.get());
    IOSIM_CUDA_CHECK_LAUNCH();
    const std::vector<std::uint32_t> v = smem_out.download();
    if (r < 0) continue;
    plain.push_back(v[0]);
    timed.push_back(v[1]);
  }
  out.smem = {profile::median(plain), "one thread, dependent loads around a " + std::to_string(kSmemEntries) +
                                          "-word shared-memory cycle, " + std::to_string(kSmemLoads) +
                                          " loads, median of " + std::to_string(plan.runs)};
  out.timing_overhead = profile::median(timed) - out.smem.value;

  const Chaser chaser(plan.sm_count);
  std::vector<double> dram;
  for (int r = 0; r < plan.runs; ++r) {
    flush.run();
    dram.push_back(mean(as_doubles(chaser.run(kAnySm, 1), 0, kChaseLines)));
  }
  out.dram = profile::median(dram) - out.timing_overhead;

  const int step = plan.quick ? 11 : 3;
  std::vector<std::vector<double>> first, second;
  for (int sm = 0; sm < plan.sm_count; sm += step) {
    flush.run();
    if (chaser.run(0, 1).empty()) continue;  // SM 0 fills the lines
    const std::vector<std::uint32_t> lat = chaser.run(static_cast<std::uint32_t>(sm), 2);
    if (lat.empty()) continue;
    first.push_back(as_doubles(lat, 0, kChaseLines));
    second.push_back(as_doubles(lat, kChaseLines, kChaseLines));
    if (plan.log != nullptr) {
      const NearFar one = near_far({first.back()}, {second.back()});
      *plan.log << "    SM " << sm << ": first reads " << profile::plain_decimal(mean(first.back()), 4)
                << ", second " << profile::plain_decimal(mean(second.back()), 4) << " raw cycles (mean)"
                << (one.far_sms > 0 ? ", far hits " + profile::plain_decimal(one.far, 4) : std::string()) << "\n";
    }
  }
  const NearFar nf = near_far(first, second);
  out.near = nf.near - out.timing_overhead;
  out.far = nf.far - out.timing_overhead;
  out.sampled = nf.sampled;
  out.far_sms = nf.far_sms;
  out.chase_setup = "one thread chasing a random cycle of " + std::to_string(kChaseLines) +
                    " lines of 128 B with ld.global.cg, each load timed with clock64; the L2 flushed first (" +
                    profile::plain_decimal(static_cast<double>(flush.bytes()) / (1 << 20), 4) +
                    " MiB read in half-L2 chunks, each three times); DRAM: median over " +
                    std::to_string(plan.runs) + " runs of the mean";
  return out;
}

}  // namespace iosim::calibrate::bench
