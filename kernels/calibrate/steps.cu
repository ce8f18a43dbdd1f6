// How much identical CTAs' steps vary, and how an SM shares itself among the
// CTAs it holds (sm_pipes.step_jitter, sm_pipes.cta_priority): the
// step-jitter probe of experiments/probes/step_jitter_probe.cu, which set the
// H200's values, run by calibrate.
//
// Every SM runs n identical CTAs of 4 warps, all resident at once; each runs
// kSteps steps of a loop double-buffered like the standard GEMM: wait for this
// step's cp.async tile, barrier, issue the next tile, then `mmas` ldmatrix +
// mma.sync m16n8k16 per warp on this step's tile. Tiles come from an
// L2-resident buffer; kShare CTAs read each tile in the same step, as a row
// of GEMM output tiles does. Thread 0 stamps clock64 and %globaltimer at each
// barrier; analysis.cpp (step_stats, fit_cta_priority) turns the stamps into
// the two values.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/calibrate/analysis.h"
#include "kernels/calibrate/bench_common.cuh"
#include "kernels/calibrate/benchmarks.h"

namespace iosim::calibrate::bench {
namespace {

constexpr int kThreads = 128;
constexpr int kSteps = 160;
constexpr int kShare = 8;

struct StepConfig {
  int ctas_per_sm;
  int tile_kib;
  int mmas;  // ldmatrix + mma.sync pairs per warp and step
};

// %globaltimer without a memory clobber, and the index arithmetic, share and
// steps as runtime values: the probe's code as it is (moving the stamps' code
// by a few instructions moved the 2-CTA jitter from 0.0068 to 0.0053 on the
// H200, experiments/results/2026-12-01-h200-calibrate-steps).
__device__ __forceinline__ std::uint64_t globaltimer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void cp_async16(unsigned smem, const void* g) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem), "l"(g));
}

__global__ void __launch_bounds__(kThreads) steps_kernel(const uint4* __restrict__ buf, int tiles, int tile_vecs,
                                                         int mmas, int share, int steps,
                                                         std::uint64_t* __restrict__ clocks,
                                                         std::uint64_t* __restrict__ timers,
                                                         std::uint32_t* __restrict__ smids, float* __restrict__ sink) {
#if __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int tid = threadIdx.x, lane = tid % 32;
  const unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw));
  const int stage_bytes = tile_vecs * 16;
  const auto issue = [&](int k) {
    const int tile = (blockIdx.x / share + k) % tiles;
    const uint4* src = buf + static_cast<i64>(tile) * tile_vecs;
    const unsigned dst = smem + (k & 1) * stage_bytes;
    for (int v = tid; v < tile_vecs; v += kThreads) cp_async16(dst + v * 16, src + v);
    asm volatile("cp.async.commit_group;");
  };
  float acc[4] = {0, 0, 0, 0};
  if (tid == 0) smids[blockIdx.x] = sm_id();
  issue(0);
  for (int k = 0; k < steps; ++k) {
    asm volatile("cp.async.wait_group 0;");
    __syncthreads();
    if (tid == 0) {
      clocks[static_cast<i64>(blockIdx.x) * steps + k] = clock64();
      timers[static_cast<i64>(blockIdx.x) * steps + k] = globaltimer();
    }
    if (k + 1 < steps) issue(k + 1);
    const unsigned base = smem + (k & 1) * stage_bytes;
    for (int i = 0; i < mmas; ++i) {
      const unsigned a_addr = base + ((i * 512 + lane * 16) % stage_bytes);
      const unsigned b_addr = base + ((i * 512 + 256 + (lane % 16) * 16) % stage_bytes);
      unsigned a0, a1, a2, a3, b0, b1;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                   : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                   : "r"(a_addr));
      asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(b0), "=r"(b1) : "r"(b_addr));
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};"
          : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
  }
  const float s = acc[0] + acc[1] + acc[2] + acc[3];
  if (s == 1.2345f) sink[tid] = s;  // keeps the products; never true for these inputs
#endif
}

// One stamped launch (after a warm-up launch that brings the tiles into L2),
// or nothing when the SM cannot hold the config's CTAs at once.
bool run_config(const Plan& plan, const StepConfig& c, const kernels::DeviceBuffer<uint4>& buf,
                kernels::DeviceBuffer<float>& sink, StepRun& run) {
  const int smem = 2 * c.tile_kib * 1024;
  IOSIM_CUDA_CHECK(cudaFuncSetAttribute(steps_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  IOSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, steps_kernel, kThreads, smem));
  if (per_sm < c.ctas_per_sm) return false;
  const int grid = plan.sm_count * c.ctas_per_sm;
  const int tile_vecs = c.tile_kib * 1024 / 16;
  const int tiles = static_cast<int>(static_cast<i64>(buf.size()) / tile_vecs);
  const std::size_t stamps = static_cast<std::size_t>(grid) * kSteps;
  kernels::DeviceBuffer<std::uint64_t> clocks(stamps), timers(stamps);
  kernels::DeviceBuffer<std::uint32_t> smids(static_cast<std::size_t>(grid));
  for (int rep = 0; rep < 2; ++rep) {
    steps_kernel<<<grid, kThreads, smem>>>(buf.get(), tiles, tile_vecs, c.mmas, kShare, kSteps, clocks.get(), timers.get(),
                                           smids.get(), sink.get());
    IOSIM_CUDA_CHECK_LAUNCH();
    IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  run.ctas_per_sm = c.ctas_per_sm;
  run.steps = kSteps;
  run.clocks = clocks.download();
  run.timers = timers.download();
  run.smid = smids.download();
  return true;
}

std::string config_text(const StepConfig& c) {
  return std::to_string(c.ctas_per_sm) + ":" + std::to_string(c.tile_kib) + ":" + std::to_string(c.mmas);
}

}  // namespace

StepVariation step_variation(const Plan& plan) {
  StepVariation out;
  if (plan.cc < 80) {
    out.note = "not measured: the benchmark's mma.sync m16n8k16 needs compute capability 8.0";
    return out;
  }
  // CTAs per SM : tile KiB : mma per warp and step. The jitter runs hold 2
  // CTAs per SM (the probe found 1 CTA per SM steady and 4 bimodal); the rank
  // runs 2-8, as the probe's runs behind the H200's cta_priority.
  const std::vector<StepConfig> jitter_configs =
      plan.quick ? std::vector<StepConfig>{{2, 16, 64}}
                 : std::vector<StepConfig>{{2, 16, 32}, {2, 16, 64}, {2, 16, 128}, {2, 32, 64}};
  const std::vector<StepConfig> rank_configs =
      plan.quick ? std::vector<StepConfig>{{3, 16, 64}, {5, 16, 64}, {8, 8, 64}}
                 : std::vector<StepConfig>{{3, 16, 64}, {4, 16, 64}, {5, 16, 64}, {6, 8, 64}, {7, 8, 64},
                                           {8, 8, 64}, {3, 8, 32}, {4, 8, 32}, {5, 8, 32}, {6, 8, 32},
                                           {8, 4, 32}, {5, 16, 16}};
  const i64 buf_bytes = std::min<i64>(i64{8} << 20, plan.l2_bytes / 4 / (32 * 1024) * (32 * 1024));
  kernels::DeviceBuffer<uint4> buf(static_cast<std::size_t>(buf_bytes / 16));
  buf.fill_bytes(0x3c);  // fp16 1.06 everywhere: finite products
  kernels::DeviceBuffer<float> sink(kThreads);

  std::vector<double> cvs;
  std::vector<StepStats> ranks;
  std::string jitter_points, rank_points, skipped;
  for (const bool jitter : {true, false})
    for (const StepConfig& c : jitter ? jitter_configs : rank_configs) {
      StepRun run;
      if (!run_config(plan, c, buf, sink, run)) {
        skipped += (skipped.empty() ? "" : ", ") + config_text(c);
        continue;
      }
      const StepStats s = step_stats(run);
      if (jitter) {
        cvs.push_back(s.cv);
        jitter_points += (jitter_points.empty() ? "" : ", ") + config_text(c) + " " + profile::plain_decimal(s.cv, 4) +
                         " (" + std::to_string(static_cast<long long>(s.step_cycles)) + " cycles a step)";
      } else {
        ranks.push_back(s);
        std::string by_rank;
        for (const double x : s.rank_step) by_rank += (by_rank.empty() ? "" : "/") + profile::plain_decimal(x, 3);
        rank_points += (rank_points.empty() ? "" : ", ") + config_text(c) + " " + by_rank;
      }
    }
  const std::string how = "every SM running n identical CTAs of " + std::to_string(kThreads) + " threads, all resident, " +
                          std::to_string(kSteps) + " steps each of a GEMM-like loop (wait for the step's cp.async "
                          "tile, barrier, issue the next tile, then k ldmatrix + mma.sync m16n8k16 per warp; " +
                          std::to_string(kShare) + " CTAs read each L2-resident tile in the same step; thread 0 "
                          "stamps clock64 at each barrier; steps " + std::to_string(kStepFirst + 1) + "-" +
                          std::to_string(kSteps - 2) + " timed), runs n:tile KiB:k";
  if (!cvs.empty()) {
    out.jitter = profile::median(cvs);
    out.jitter_setup = how + ": a step's length over its CTA's mean step, standard deviation pooled over the CTAs, "
                             "median over the 2-CTA runs (" + jitter_points + ")";
  }
  if (!ranks.empty()) {
    double worst = 0;
    out.cta_priority = fit_cta_priority(ranks, &worst);
    out.priority_setup = how + ": on each SM holding n CTAs, the CTAs ranked by their first %globaltimer stamp; "
                               "each rank's mean step over its SM's mean, averaged over the SMs (" + rank_points +
                               "); the least squares a of 1 + a (1 - 2/n)(r - (n - 1)/2) over these ranks (worst "
                               "rank off by " + profile::plain_decimal(worst, 3) + ")";
  }
  if (!skipped.empty()) out.note = "runs that do not fit an SM at once, left out: " + skipped;
  return out;
}

}  // namespace iosim::calibrate::bench
