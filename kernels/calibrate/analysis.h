// Host-side arithmetic of `iosim calibrate`: from the kernels' raw records to
// rates, capacities and latencies, and Nsight Compute's CSV to counters. Plain
// C++ with no CUDA calls, so the GPU tests check it without a GPU.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/calibrate/records.h"
#include "sim/common/hd.h"
#include "sim/profile/calibration.h"

namespace iosim::calibrate {

// Per SM: the work of its warps over its busy span (first clk0 to last clk1),
// median over SMs. clock_hz: the longest SM span over `wall_ns`, the host's
// time of the whole launch (every span lies inside it, so each SM gives a
// lower bound and the longest the closest); timer_clock_hz: median over warps
// of clock64 / %globaltimer, for comparison. Throws std::runtime_error when no
// record has a positive span or wall_ns is not positive.
profile::PipeRate pipe_rate(const std::vector<WarpRecord>& records, double wall_ns);

// The median per_cycle and the median clocks of several runs.
profile::PipeRate median_rate(const std::vector<profile::PipeRate>& runs);

// One working set of a resident sweep: per-access cycles of the cold pass and
// of the warm passes (medians over warps).
struct SweepPoint {
  i64 working_set = 0;
  double cold = 0;
  double warm = 0;
};
SweepPoint sweep_point(i64 working_set, const std::vector<ChaseRecord>& warps);

// The most bytes that stayed resident: max over points of hit fraction x
// working set, the hit fraction (cold - warm) / (cold - hit), clamped to
// [0, 1], with `hit` the warm latency of the smallest working set (where
// everything fits). It does not depend on the replacement policy the way a
// knee in a bandwidth curve does: under LRU the hits vanish past the
// capacity, under a scan-resistant policy the retained part stays near it;
// either way the largest resident amount is about the capacity.
profile::ResidentSweep resident_capacity(std::vector<SweepPoint> points);

// Near and far L2 hits from lines one SM filled and another read twice: per
// sampled SM, its first and second read latencies (raw cycles). A first read
// slower than kFarFactor x that SM's median second read is a far hit; an SM
// where at least kFarShare of first reads are far is in the other half.
inline constexpr double kFarFactor = 1.25;  // far hits measured ~1.6x near on H100/H200, near spread < 10%
inline constexpr double kFarShare = 0.25;   // such SMs saw ~50% far lines (each line has one home half)
struct NearFar {
  double near = 0;  // mean over SMs of their mean second read
  double far = 0;   // mean over far SMs of their mean far first read; = near without far SMs
  int sampled = 0;
  int far_sms = 0;
};
NearFar near_far(const std::vector<std::vector<double>>& first, const std::vector<std::vector<double>>& second);

double mean(const std::vector<double>& v);

// The merge probe (merge_probe.cu): the share of the second reads of a pair
// that cost no lookup, from one launch's L2 read sectors: every line is read
// three times (the first CTA's warm-up read and timed read, the second CTA's
// timed read), 4 sectors each, so share = (3 x lines x 4 - sectors) / (lines x 4).
double merged_share(double lookup_sectors, i64 lines);
// l2.merge_window: the window that merges the same share of reads arriving at
// gaps spread evenly over the curve's reach, the integral of the share over
// delta (trapezoid over the points sorted by delta, each share clipped at 0,
// up to the first point with nothing merged). Throws std::runtime_error
// without two points.
double merge_window(std::vector<std::pair<double, double>> delta_share);

// One launch of the step-variation benchmark (steps.cu): every SM runs
// `ctas_per_sm` identical CTAs of `steps` steps; per CTA its SM, and clock64
// and %globaltimer at each step's barrier (CTA-major).
struct StepRun {
  int ctas_per_sm = 0;
  int steps = 0;
  std::vector<std::uint32_t> smid;
  std::vector<std::uint64_t> clocks;
  std::vector<std::uint64_t> timers;
};
// What a run shows (steps 4 .. steps - 2 of each CTA; the first ones fill
// the pipeline, the last has no successor to time it):
//  - cv: the standard deviation of a step's length over its own CTA's mean
//    step, pooled over the CTAs (sm_pipes.step_jitter);
//  - rank_step: per start rank on the SM (0 = the first stamp), the mean over
//    SMs holding exactly ctas_per_sm CTAs of the rank's mean step over the
//    SM's mean step (sm_pipes.cta_priority);
//  - step_cycles: the mean step; sms: the SMs that held ctas_per_sm CTAs.
struct StepStats {
  int ctas_per_sm = 0;
  double cv = 0;
  double step_cycles = 0;
  std::vector<double> rank_step;
  int sms = 0;
};
inline constexpr int kStepFirst = 4;  // the first timed step
// Throws std::runtime_error when the run has fewer than kStepFirst + 3 steps
// or its arrays disagree with its CTA count.
StepStats step_stats(const StepRun& run);
// sm_pipes.cta_priority: the a of 1 + a (1 - 2/n)(r - (n - 1)/2) that fits
// every rank's mean step best (least squares) over the runs of 2-8 CTAs per SM
// (engine::cta_priority_factor's form). `worst` (when given): the largest
// distance of a rank's step from the fitted line. Throws std::runtime_error
// when no run has 3 or more CTAs per SM (n = 2 carries no information).
double fit_cta_priority(const std::vector<StepStats>& runs, double* worst = nullptr);

// Nsight Compute `--csv --page raw --print-units base` output (the program's
// own lines mixed in): the value of `metrics` for each profiled kernel, in
// launch order. Numbers may carry thousands separators. Throws
// std::runtime_error naming what is missing.
std::vector<std::vector<double>> ncu_metric_rows(const std::string& output, const std::vector<std::string>& metrics);

}  // namespace iosim::calibrate
