// How much identical CTAs' steps vary, and how an SM shares itself among the
// CTAs it holds (sm_pipes.step_jitter, sm_pipes.cta_priority): the
// step-jitter probe's runs (experiments/probes/step_jitter_probe.cu, which set
// the H200's values), with its kernel (step_variation_kernel.cuh).
//
// Every SM runs n identical CTAs of 4 warps, all resident at once, kSteps
// steps each; kShare CTAs read each L2-resident tile in the same step, as a
// row of GEMM output tiles does. analysis.cpp (step_stats, fit_cta_priority)
// turns the stamps into the two values.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/calibrate/analysis.h"
#include "kernels/calibrate/bench_common.cuh"
#include "kernels/calibrate/benchmarks.h"
#include "kernels/calibrate/step_variation_kernel.cuh"

namespace iosim::calibrate::bench {
namespace {

using step_variation::kThreads;
using step_variation::steps_kernel;
constexpr int kSteps = 160;
constexpr int kShare = 8;

struct StepConfig {
  int ctas_per_sm;
  int tile_kib;
  int mmas;  // ldmatrix + mma.sync pairs per warp and step
};

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
  kernels::DeviceBuffer<unsigned long long> clocks(stamps), timers(stamps);
  kernels::DeviceBuffer<unsigned> smids(static_cast<std::size_t>(grid));
  for (int rep = 0; rep < 2; ++rep) {
    steps_kernel<<<grid, kThreads, smem>>>(buf.get(), tiles, tile_vecs, c.mmas, kShare, kSteps, clocks.get(), timers.get(),
                                           smids.get(), sink.get());
    IOSIM_CUDA_CHECK_LAUNCH();
    IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  run.ctas_per_sm = c.ctas_per_sm;
  run.steps = kSteps;
  const std::vector<unsigned long long> clk = clocks.download(), gt = timers.download();
  const std::vector<unsigned> sm = smids.download();
  run.clocks.assign(clk.begin(), clk.end());
  run.timers.assign(gt.begin(), gt.end());
  run.smid.assign(sm.begin(), sm.end());
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
