// The host arithmetic of `iosim calibrate` (kernels/calibrate/analysis.h and
// the copy-probe sizes): rates from warp records, capacities from sweeps,
// near/far L2 hits, Nsight Compute's CSV. No GPU needed: it runs in CI.
#define BOOST_TEST_MODULE test_gpu_calibrate_analysis
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/calibrate/analysis.h"
#include "kernels/calibrate/calibrate.h"

namespace fs = std::filesystem;
using iosim::i64;
using namespace iosim::calibrate;
namespace profile = iosim::profile;

namespace {

// The source tree: where it was configured, else the working directory (the
// GPU machine runs the tests from a copy of the repository root).
fs::path repo_root() {
  const fs::path configured = IOSIM_SOURCE_DIR;
  return fs::exists(configured / "experiments") ? configured : fs::current_path();
}

WarpRecord record(std::uint32_t sm, std::uint64_t clk0, std::uint64_t clk1, std::uint64_t ns, std::uint64_t work) {
  WarpRecord r;
  r.smid = sm;
  r.clk0 = clk0;
  r.clk1 = clk1;
  r.gt0 = 1000;
  r.gt1 = 1000 + ns;
  r.work = work;
  return r;
}

// A sweep whose cold pass costs 600 cycles per access and a hit 300; `hits(W)`
// is the fraction of accesses that hit.
template <class Hits>
std::vector<SweepPoint> sweep(const std::vector<i64>& sizes, Hits hits) {
  std::vector<SweepPoint> out;
  for (const i64 w : sizes) out.push_back({w, 600, 600 - 300 * hits(static_cast<double>(w))});
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(host_arithmetic)

BOOST_AUTO_TEST_CASE(pipe_rate_is_work_over_each_sms_busy_span_median_over_sms) {
  // SM 3: two warps over cycles [0, 1100], 2200 units -> 2 per cycle; SM 5: 1 per cycle; SM 7: 4 per cycle.
  const std::vector<WarpRecord> records{record(3, 0, 1000, 500, 1000), record(3, 100, 1100, 500, 1200),
                                        record(5, 0, 2000, 1000, 2000), record(7, 0, 500, 250, 2000),
                                        record(9, 10, 10, 0, 0)};  // a warp that never ran its loop
  const profile::PipeRate r = pipe_rate(records, 1250);
  BOOST_TEST(r.per_cycle == 2.0);
  BOOST_CHECK_THROW(pipe_rate({record(1, 5, 5, 0, 1)}, 1000), std::runtime_error);
  BOOST_CHECK_THROW(pipe_rate(records, 0), std::logic_error);
}

BOOST_AUTO_TEST_CASE(the_clock_is_the_longest_sm_span_over_the_hosts_time_not_the_gpu_timer) {
  // The GPU timer counted 1000 ns where the host saw the launch take 1100 ns: clock64 over %globaltimer
  // (2 GHz) exceeds what the host's time allows (SM 5's 2000 cycles in 1100 ns: 1.82 GHz).
  const std::vector<WarpRecord> records{record(3, 0, 1000, 500, 1000), record(3, 100, 1100, 500, 1200),
                                        record(5, 0, 2000, 1000, 2000), record(7, 0, 500, 250, 2000)};
  const profile::PipeRate r = pipe_rate(records, 1100);
  BOOST_TEST(r.clock_hz == 2000.0 / 1100 * 1e9);
  BOOST_TEST(r.timer_clock_hz == 2e9);  // every warp: cycles / its %globaltimer span
  // Each SM's span lies inside the launch: none gives more than the longest.
  BOOST_TEST(r.clock_hz >= 1100.0 / 1100 * 1e9);
}

BOOST_AUTO_TEST_CASE(median_rate_takes_each_quantity_s_median_over_runs) {
  std::vector<profile::PipeRate> runs(3);
  runs[0] = {2.0, 1.9e9, "", 2.1e9};
  runs[1] = {1.0, 1.8e9, "", 2.0e9};
  runs[2] = {3.0, 1.7e9, "", 1.9e9};
  const profile::PipeRate m = median_rate(runs);
  BOOST_TEST(m.per_cycle == 2.0);
  BOOST_TEST(m.clock_hz == 1.8e9);
  BOOST_TEST(m.timer_clock_hz == 2.0e9);
}

BOOST_AUTO_TEST_CASE(resident_capacity_finds_the_capacity_under_lru_and_under_a_scan_resistant_policy) {
  const double c = 64.0 * 1024 * 1024;
  std::vector<i64> sizes;
  for (int k = -16; k <= 16; ++k) sizes.push_back(static_cast<i64>(c * std::exp2(k / 8.0)));
  // LRU on a cyclic sweep: everything hits up to the capacity, nothing past it.
  const auto lru = resident_capacity(sweep(sizes, [&](double w) { return w <= c ? 1.0 : 0.0; }));
  BOOST_TEST(lru.resident_bytes == c);
  BOOST_TEST(lru.at_working_set == static_cast<i64>(c));
  // A policy that keeps a capacity's worth of any larger set: hits C / W.
  const auto kept = resident_capacity(sweep(sizes, [&](double w) { return std::min(1.0, c / w); }));
  BOOST_TEST(std::fabs(kept.resident_bytes - c) < 1.0);
  // Where the bandwidth knee would sit (half the accesses hitting) is 2C here: not the capacity.
  BOOST_TEST(kept.points == 33);
  BOOST_TEST(kept.smallest == sizes.front());
}

BOOST_AUTO_TEST_CASE(resident_capacity_finds_where_half_the_sweep_still_hits) {
  const double c = 45.0 * 1024 * 1024;
  std::vector<i64> sizes;
  for (int k = -16; k <= 16; ++k) sizes.push_back(static_cast<i64>(c * std::exp2(k / 8.0)));
  // A cliff smeared over [0.75 C, 1.25 C] (hash imbalance, near copies): one half hits at C exactly,
  // and the linear interpolation between the two points around it finds it.
  const auto smeared =
      resident_capacity(sweep(sizes, [&](double w) { return std::clamp((1.25 * c - w) / (0.5 * c), 0.0, 1.0); }));
  BOOST_TEST(std::fabs(smeared.half_working_set - c) < 1e-6 * c);
  // LRU's sharp cliff: between the last point that hits and the first that does not.
  const auto lru = resident_capacity(sweep(sizes, [&](double w) { return w <= c ? 1.0 : 0.0; }));
  BOOST_TEST(lru.half_working_set > c);
  BOOST_TEST(lru.half_working_set < c * std::exp2(1 / 8.0));
  // A sweep that never falls to one half has no such point.
  const auto flat = resident_capacity(sweep(sizes, [&](double) { return 0.9; }));
  BOOST_TEST(flat.half_working_set == 0.0);
}

BOOST_AUTO_TEST_CASE(near_far_counts_sms_that_see_slow_first_reads_and_averages_them) {
  const std::vector<double> near(100, 290.0);
  std::vector<double> half_far(100, 290.0);
  for (int i = 0; i < 50; ++i) half_far[i] = 460.0;
  const NearFar split = near_far({near, half_far, half_far}, {near, near, near});
  BOOST_TEST(split.sampled == 3);
  BOOST_TEST(split.far_sms == 2);
  BOOST_TEST(split.near == 290.0);
  BOOST_TEST(split.far == 460.0);
  const NearFar uniform = near_far({near, near}, {near, near});
  BOOST_TEST(uniform.far_sms == 0);
  BOOST_TEST(uniform.far == uniform.near);
}

BOOST_AUTO_TEST_CASE(ncu_csv_rows_match_the_committed_copy_probe_table) {
  // The raw ncu CSV of the 2026-11-23 H200 probe, and the table made from it then.
  const fs::path dir = repo_root() / "experiments" / "results" / "2026-11-23-h200-copy-writeback";
  std::ifstream csv(dir / "ncu-268435456.csv");
  BOOST_TEST_REQUIRE(static_cast<bool>(csv));
  std::stringstream text;
  text << csv.rdbuf();
  const auto rows = ncu_metric_rows(text.str(), {"dram__bytes_read.sum", "dram__bytes_write.sum"});
  BOOST_TEST_REQUIRE(rows.size() == 1u);
  std::ifstream table(dir / "copy.csv");
  bool found = false;
  for (std::string line; std::getline(table, line);) {
    if (line.rfind("268435456,", 0) != 0) continue;
    std::istringstream f(line);
    std::string bytes, read, write;
    std::getline(f, bytes, ',');
    std::getline(f, read, ',');
    std::getline(f, write, ',');
    BOOST_TEST(rows[0][0] == std::stod(read));
    BOOST_TEST(rows[0][1] == std::stod(write));
    found = true;
  }
  BOOST_TEST(found);
  BOOST_CHECK_THROW(ncu_metric_rows(text.str(), {"no__such_metric.sum"}), std::runtime_error);
  BOOST_CHECK_THROW(ncu_metric_rows("==ERROR== ERR_NVGPUCTRPERM\n", {"dram__bytes_read.sum"}), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(copy_probe_sizes_are_whole_chunks) {
  const std::vector<i64> sizes = parse_copy_sizes("33554432,65536");
  BOOST_TEST(sizes.size() == 2u);
  for (const char* bad : {"", "33554433", "-32768", "32768,abc", "32768,,65536"})
    BOOST_CHECK_THROW(parse_copy_sizes(bad), iosim::InputError);
  for (const i64 s : copy_probe_sizes(false)) BOOST_TEST(s % kCopyChunkBytes == 0);
}

// The H200's merge probe (experiments/results/2026-11-28-h200-merge-probe,
// merge.csv, 66 pairs x 32 lines): 17,196 sectors at delta 0 is 96% of the
// second reads merged; the window integrates the curve up to its first zero,
// with the baseline's -1% clipped, as experiments/probes/merge_table.py does
// (13.4 cycles from these medians).
BOOST_AUTO_TEST_CASE(merge_window_integrates_the_merged_share_up_to_its_first_zero) {
  BOOST_TEST(std::abs(merged_share(17196, 66 * 32) - 0.9645) < 1e-4);
  BOOST_TEST(std::abs(merged_share(3 * 4 * 66 * 32, 66 * 32)) < 1e-12);  // every read looked up: nothing merged
  const std::vector<std::pair<double, double>> h200 = {
      {64, -0.01}, {0, 0.9644}, {8, 0.2201}, {16, 0.2147}, {32, 0.2194}, {128, -0.01}, {256, 0.3}};
  // 8 x (0.9644 + 0.2201) / 2 + 8 x (0.2201 + 0.2147) / 2 + 16 x (0.2147 + 0.2194) / 2 + 32 x 0.2194 / 2; the
  // 0.3 past the first zero is not counted.
  const double expected = 4 * (0.9644 + 0.2201) + 4 * (0.2201 + 0.2147) + 8 * (0.2147 + 0.2194) + 16 * 0.2194;
  BOOST_TEST(std::abs(merge_window(h200) - expected) < 1e-9);
  BOOST_TEST(std::abs(merge_window(h200) - 13.4) < 0.2);
  BOOST_CHECK_THROW(merge_window({{0, 1.0}}), std::runtime_error);
}

// Three CTAs on each of two SMs (started in a scrambled order) whose steps
// alternate 1 +- 3% of a base that grows by 10% per start rank, and an SM with
// two CTAs: the jitter is the 3% exactly, the ranks 0.9 / 1.0 / 1.1, and the
// 2-CTA SM counts for the jitter only.
BOOST_AUTO_TEST_CASE(step_stats_pools_each_ctas_steps_over_its_mean_and_ranks_ctas_by_their_start) {
  StepRun run;
  run.ctas_per_sm = 3;
  run.steps = 10;
  const struct {
    std::uint32_t sm;
    int rank;
  } ctas[] = {{7, 2}, {7, 0}, {3, 1}, {7, 1}, {3, 2}, {3, 0}, {5, 0}, {5, 1}};
  for (const auto& c : ctas) {
    run.smid.push_back(c.sm);
    const double base = 1000 * (1 + 0.1 * (c.rank - 1));
    std::uint64_t clk = 50000 + 17 * c.sm, ns = 1000 + 10 * c.rank;
    for (int k = 0; k < run.steps; ++k) {
      run.clocks.push_back(clk);
      run.timers.push_back(ns);
      clk += static_cast<std::uint64_t>(std::llround(base * (k % 2 == 0 ? 1.03 : 0.97)));
      ns += 500;
    }
  }
  const StepStats s = step_stats(run);
  BOOST_TEST(std::abs(s.cv - 0.03) < 1e-9);
  BOOST_TEST(s.sms == 2);
  BOOST_REQUIRE(s.rank_step.size() == 3u);
  BOOST_TEST(std::abs(s.rank_step[0] - 0.9) < 1e-9);
  BOOST_TEST(std::abs(s.rank_step[1] - 1.0) < 1e-9);
  BOOST_TEST(std::abs(s.rank_step[2] - 1.1) < 1e-9);
  run.steps = 6;
  BOOST_CHECK_THROW(step_stats(run), std::runtime_error);  // too few steps, and arrays of the wrong length
}

BOOST_AUTO_TEST_CASE(cta_priority_is_the_least_squares_rank_slope_of_the_runs_of_2_to_8_ctas) {
  const double a = 0.106;
  std::vector<StepStats> runs;
  for (const int n : {2, 3, 5, 8, 12}) {
    StepStats s;
    s.ctas_per_sm = n;
    for (int r = 0; r < n; ++r)
      s.rank_step.push_back(n > 8 ? 2.0 : 1 + a * (1 - 2.0 / n) * (r - (n - 1) / 2.0));  // 12 per SM: ignored
    runs.push_back(s);
  }
  double worst = -1;
  BOOST_TEST(std::abs(fit_cta_priority(runs, &worst) - a) < 1e-12);
  BOOST_TEST(worst < 1e-12);
  runs[2].rank_step[0] += 0.02;  // one rank off the line: the fit moves, the worst rank says so
  BOOST_TEST(std::abs(fit_cta_priority(runs, &worst) - a) > 1e-4);
  BOOST_TEST(worst > 0.015);
  BOOST_CHECK_THROW(fit_cta_priority({runs[0]}), std::runtime_error);  // 2 per SM carries no slope
}

BOOST_AUTO_TEST_SUITE_END()

