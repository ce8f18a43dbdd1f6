// `iosim calibrate`'s microbenchmarks against physical bounds: the --quick
// benchmarks run once for every case, which all skip without a GPU; the Nsight
// Compute case also skips without ncu or counter permission. The host
// arithmetic behind them is test_gpu_calibrate_analysis.cpp.
#define BOOST_TEST_MODULE test_gpu_calibrate
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "gpu_test_support.h"
#include "kernels/calibrate/analysis.h"
#include "kernels/calibrate/calibrate.h"
#include "sim/profile/calibration.h"
#include "sim/profile/hardware_profile.h"

namespace fs = std::filesystem;
using iosim::i64;
using namespace iosim::calibrate;
namespace profile = iosim::profile;

namespace {

// The iosim CLI whose hidden probe mode ncu runs: $IOSIM_CLI when set (the GPU
// scripts set it), else the one built beside this test (IOSIM_CLI_PATH, a path
// on the build machine), else an `iosim` in this test's own folder (where the
// GPU machine unpacks them together).
fs::path iosim_cli() {
  const char* env = std::getenv("IOSIM_CLI");
  if (env != nullptr && *env != '\0') return env;
  if (fs::exists(IOSIM_CLI_PATH)) return IOSIM_CLI_PATH;
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path() / "iosim";
}

// The quick benchmarks, run once for all GPU cases.
const profile::CalibrationMeasurements& quick_run() {
  static const profile::CalibrationMeasurements m = run_benchmarks(true, &std::cout);
  return m;
}

}  // namespace

// Runs without a GPU too: on the GPU machine the compiled-in path does not exist.
BOOST_AUTO_TEST_CASE(the_iosim_cli_for_the_ncu_probe_is_an_executable_file) {
  const fs::path cli = iosim_cli();
  BOOST_TEST_INFO("iosim CLI: " << cli << " (set IOSIM_CLI to the iosim executable)");
  BOOST_TEST(fs::is_regular_file(cli));
  BOOST_TEST(::access(cli.c_str(), X_OK) == 0);
}

BOOST_AUTO_TEST_SUITE(gpu_bounds, *iosim::gputest::requires_gpu())

BOOST_AUTO_TEST_CASE(dram_bandwidth_is_below_the_bus_peak_and_above_30_percent_of_it) {
  const auto& m = quick_run();
  const double peak = m.device.dram_peak_bytes_per_s();
  for (const double bw : {m.dram_read_bytes_per_s, m.dram_write_bytes_per_s, m.dram_copy_bytes_per_s}) {
    BOOST_TEST(bw <= peak);
    BOOST_TEST(bw > 0.3 * peak);
  }
  BOOST_TEST(m.l2_read_bytes_per_s > m.dram_read_bytes_per_s);  // L2 serves resident data faster than DRAM
}

BOOST_AUTO_TEST_CASE(the_l2_keeps_the_drivers_size_less_the_near_copies_of_far_lines) {
  const auto& m = quick_run();
  const double driver = static_cast<double>(m.device.l2_bytes);
  // Each line of the sweep is read by one SM. Where the L2 has two halves (the
  // latency probe saw far hits), the half of the lines homed in the SM's far
  // half is also copied into its near half: 1.5 slots per line, so two thirds
  // of the L2 hold distinct lines (H100: 31.4 of 50 MiB kept, full run). One
  // uniform L2 holds them all.
  const double distinct = m.far_sms > 0 ? driver / 1.5 : driver;
  // The sweep's working sets are a factor `step` apart: its best point may lie
  // up to that factor below the capacity (the largest set that still fits).
  const auto& s = m.l2_sweep;
  const double step =
      std::pow(static_cast<double>(s.largest) / static_cast<double>(s.smallest), 1.0 / (s.points - 1));
  BOOST_TEST(s.resident_bytes >= distinct / step);
  BOOST_TEST(s.resident_bytes <= driver);  // no cache keeps more than its size
}

BOOST_AUTO_TEST_CASE(the_l1_holds_at_least_the_shared_memory_carve_out) {
  // The profile's rule smem_per_sm <= l1_smem_per_sm (shared memory is carved out of L1).
  const auto& m = quick_run();
  BOOST_TEST(m.l1_sweep.resident_bytes >= static_cast<double>(m.device.smem_per_sm_bytes));
  BOOST_TEST(m.l1_sweep.resident_bytes <= 2.0 * static_cast<double>(m.device.smem_per_sm_bytes));
}

BOOST_AUTO_TEST_CASE(pipe_rates_are_within_what_four_schedulers_can_issue) {
  const auto& m = quick_run();
  // 4 schedulers x 32 lanes per SM per cycle bound every lane-op rate; 32 banks x 4 B bound shared memory
  // (CUDA C++ Programming Guide); 4096 dense FP16 FLOP/cycle/SM is Hopper's datasheet tensor rate.
  BOOST_TEST(m.mma_f16.per_cycle > 0);
  BOOST_TEST(m.mma_f16.per_cycle <= 2 * 4096.0);
  if (m.device.cc_major >= 8) {
    BOOST_TEST(m.mma_bf16.per_cycle > 0);
    BOOST_TEST(m.mma_bf16.per_cycle <= 2 * 4096.0);
  }
  BOOST_TEST(m.fp32.per_cycle > 0);
  BOOST_TEST(m.fp32.per_cycle <= 128.0);
  BOOST_TEST(m.mufu_ex2.per_cycle > 0);
  BOOST_TEST(m.mufu_ex2.per_cycle < m.fp32.per_cycle);
  // The benchmark's rows are conflict-free and every SM's port is kept busy: a 2-way bank conflict, or too
  // few requests in flight, would halve it; more than the port means loads were merged or not counted.
  BOOST_TEST(m.ldmatrix.per_cycle > 64.0);
  BOOST_TEST(m.ldmatrix.per_cycle <= 128.0);
  BOOST_TEST(m.issue.per_cycle > 0);
  BOOST_TEST(m.issue.per_cycle <= 4.5);
}

// The driver's clock attribute is not the ceiling: on the H100 (2026-11-25) FP32, MUFU and ALU
// loads ran at 2.02-2.06 GHz by clock64 over the host's time of the launch AND by %globaltimer,
// against cudaDevAttrClockRate 1980 MHz (experiments/results/2026-11-25-h100-calibrate-run2/);
// tensor loads at 1.86 GHz. So the bound is the attribute plus a boost margin of 10%, and the
// tensor clock may not exceed the others' (a power-limited SM does not speed up under mma).
BOOST_AUTO_TEST_CASE(clocks_under_load_stay_within_the_boost_range) {
  const auto& m = quick_run();
  std::vector<double> clocks{m.mma_f16.clock_hz, m.fp32.clock_hz,  m.mufu_ex2.clock_hz, m.ldmatrix.clock_hz,
                             m.issue.clock_hz,   m.alu.clock_hz,   m.shfl.clock_hz,     m.clock_memory_load_hz};
  if (m.device.cc_major >= 8) clocks.push_back(m.mma_bf16.clock_hz);
  BOOST_TEST(m.mma_f16.clock_hz <= 1.01 * m.fp32.clock_hz);
  for (const double hz : clocks) {
    BOOST_TEST(hz <= m.device.max_clock_hz * 1.10);
    BOOST_TEST(hz > 0.5 * m.device.max_clock_hz);  // under half its clock the GPU is throttled, not measured
  }
}

// wgmma (sm_90a only). On compute capability 9.0: no more than the tensor
// cores' datasheet rate (H100/H200 SXM: 989.4 dense FP16 TFLOP/s = 4096 FLOP
// per SM per cycle at 1830 MHz on 132 SMs), at least mma.sync's (the faster
// path is the point of wgmma: a slower result means the benchmark is broken),
// bf16 at the f16 rate, and a dependent chain no faster than one wgmma's pipe
// time and well under a DRAM access. Elsewhere nothing is measured.
BOOST_AUTO_TEST_CASE(wgmma_rates_and_latency_are_plausible_on_hopper_and_absent_elsewhere) {
  const auto& m = quick_run();
  const bool hopper = m.device.cc_major == 9 && m.device.cc_minor == 0;
  if (!hopper) {
    std::cout << "wgmma: not measured on compute capability " << m.device.cc_major << "." << m.device.cc_minor
              << " (sm_90a only); checking that its values are absent\n";
    for (const auto* r : {&m.wgmma_f16, &m.wgmma_bf16, &m.wgmma_rs_n128, &m.wgmma_rs_n64})
      BOOST_TEST(r->per_cycle == 0.0);
    BOOST_TEST(m.wgmma_latency.value == 0.0);
    return;
  }
  constexpr double kDatasheet = 4096.0;
  for (const auto* r : {&m.wgmma_f16, &m.wgmma_bf16, &m.wgmma_rs_n128, &m.wgmma_rs_n64}) {
    BOOST_TEST_CONTEXT(r->setup) {
      BOOST_TEST(r->per_cycle > 0.5 * kDatasheet);
      BOOST_TEST(r->per_cycle <= 1.01 * kDatasheet);
      BOOST_TEST(r->clock_hz <= m.device.max_clock_hz * 1.10);
      BOOST_TEST(r->clock_hz > 0.5 * m.device.max_clock_hz);
    }
  }
  BOOST_TEST(m.wgmma_f16.per_cycle >= m.mma_f16.per_cycle);
  BOOST_TEST(m.wgmma_bf16.per_cycle == m.wgmma_f16.per_cycle, boost::test_tools::tolerance(0.05));
  const double pipe_time = 2.0 * 16 * 128 * 16 / (m.wgmma_f16.per_cycle / 4);  // one warp's m64n128k16
  BOOST_TEST(m.wgmma_latency.value >= pipe_time);
  BOOST_TEST(m.wgmma_latency.value < m.dram_latency);
}

BOOST_AUTO_TEST_CASE(one_sm_pulls_at_least_its_share_of_the_l2_and_at_most_all_of_it) {
  const auto& m = quick_run();
  const double whole = m.l2_read_bytes_per_s / m.device.max_clock_hz;  // bytes per cycle, all SMs
  BOOST_TEST(m.l2_load_per_sm.value >= whole / static_cast<double>(m.device.sm_count));
  BOOST_TEST(m.l2_load_per_sm.value <= whole);
}

// Stores into lines the L2 holds: measured, and no faster than re-reads of the
// same lines (the H200: 4.6 against 7.5-8 TB/s; the rate the L2 takes in
// lines, which its fills share, so at least a fifth of the re-read rate).
BOOST_AUTO_TEST_CASE(the_l2_takes_in_stores_no_faster_than_it_serves_reads) {
  const auto& m = quick_run();
  BOOST_TEST(m.l2_write_bytes_per_s > m.l2_read_bytes_per_s / 5);
  BOOST_TEST(m.l2_write_bytes_per_s <= m.l2_read_bytes_per_s);
  BOOST_TEST(!m.l2_write_setup.empty());
}

// Reductions into L2 go no faster per SM than one SM's loads come back, and
// every SM together no faster than the L2's read bandwidth.
BOOST_AUTO_TEST_CASE(an_sms_reductions_are_bounded_by_its_l2_port_and_the_l2) {
  const auto& m = quick_run();
  const double whole = m.l2_read_bytes_per_s / m.device.max_clock_hz;
  BOOST_TEST(m.red_per_sm.value > 0);
  BOOST_TEST(m.red_per_sm.value <= m.l2_load_per_sm.value);
  BOOST_TEST(m.red_per_sm.value * static_cast<double>(m.device.sm_count) <= whole);
}

// Two identical CTAs per SM vary their steps by well under a tenth (the H200:
// 0.67%), and an SM never favours a later CTA by more than its mean step.
BOOST_AUTO_TEST_CASE(identical_ctas_steps_vary_a_little_and_the_first_started_go_first) {
  const auto& m = quick_run();
  if (m.device.cc_major < 8) {
    BOOST_TEST(m.step_jitter.setup.empty());
    return;
  }
  BOOST_TEST(m.step_jitter.value > 0);
  BOOST_TEST(m.step_jitter.value < 0.1);
  BOOST_TEST(m.cta_priority.value > -0.05);
  BOOST_TEST(m.cta_priority.value < 1.0);
}

BOOST_AUTO_TEST_CASE(latencies_grow_from_shared_memory_to_l2_to_dram) {
  const auto& m = quick_run();
  BOOST_TEST(m.timing_overhead_cycles >= 0);
  BOOST_TEST(m.smem_latency.value > 0);
  BOOST_TEST(m.smem_latency.value < m.l2_near_latency);
  BOOST_TEST(m.l2_near_latency <= m.l2_far_latency);
  BOOST_TEST(m.l2_far_latency < m.dram_latency);
  // A dependent mma cannot finish faster than one scheduler's share of the tensor rate allows.
  BOOST_TEST(m.mma_latency.value >= 2.0 * 16 * 8 * 16 / (m.mma_f16.per_cycle / 4));
  BOOST_TEST(m.barrier_latency.value > 0);
  BOOST_TEST(m.barrier_latency.value < m.dram_latency);
  // The ALU pipe is no wider than the FMA pipes, a shuffle moves at most a
  // warp per scheduler per cycle, and every dependent chain takes at least a
  // cycle and less than a memory access per step.
  BOOST_TEST(m.alu.per_cycle > 0);
  BOOST_TEST(m.alu.per_cycle <= 1.05 * m.fp32.per_cycle);
  BOOST_TEST(m.shfl.per_cycle > 0);
  BOOST_TEST(m.shfl.per_cycle <= 4 * 32 * 1.05);
  for (const auto* lat : {&m.fp32_latency, &m.alu_latency, &m.mufu_latency, &m.shfl_latency}) {
    BOOST_TEST(lat->value >= 1.0);
    BOOST_TEST(lat->value < m.l2_near_latency);
  }
  BOOST_TEST(m.device.max_registers_per_thread > 0);
  BOOST_TEST(m.device.max_registers_per_thread <= 255);  // the ISA's register numbers
}

// Branches, one warp alone (cycles per block of 24 dependent FFMA, loop
// included). A taken branch redirects the instruction fetch: more than a
// dependent ALU operation's few cycles (27 on an H200 in
// experiments/probes/branch_probe.cu), yet well under a DRAM access. Not taken,
// the branch still issues before the chain behind it, and the per-lane form
// issues a BSSY and a BSYNC beside the branch: neither can be free or make a
// block cheaper, and neither costs a memory access.
BOOST_AUTO_TEST_CASE(branch_costs_are_positive_and_well_under_a_memory_access) {
  const auto& m = quick_run();
  BOOST_TEST_CONTEXT(m.branch_taken.setup) {
    BOOST_TEST(m.branch_taken.value > 4.0);
    BOOST_TEST(m.branch_taken.value < m.dram_latency);
  }
  BOOST_TEST_CONTEXT(m.branch_not_taken.setup) {
    BOOST_TEST(m.branch_not_taken.value > 0.0);
    BOOST_TEST(m.branch_not_taken.value < m.dram_latency);
  }
  BOOST_TEST_CONTEXT(m.branch_reconverge.setup) {
    BOOST_TEST(m.branch_reconverge.value >= 0.0);
    BOOST_TEST(m.branch_reconverge.value < m.dram_latency);
  }
}

BOOST_AUTO_TEST_CASE(the_ncu_copy_probe_gives_a_loadable_profile) {
  std::string ncu;
  try {
    ncu = find_ncu();
  } catch (const Unavailable& e) {
    std::cout << "SKIPPED: " << e.what() << "\n";
    return;
  }
  // ncu runs the iosim CLI's hidden probe mode.
  std::vector<profile::CopyCounters> copies;
  try {
    copies = profile_copies(ncu, iosim_cli().string(), copy_probe_sizes(true));
  } catch (const Unavailable& e) {
    std::cout << "SKIPPED: " << e.what() << "\n";
    return;
  }
  profile::CalibrationMeasurements m = quick_run();
  m.copies = copies;
  m.copy_setup = copy_setup();
  // An empty kernel takes at least a microsecond's fraction and far less than
  // a millisecond; a grid of many CTAs takes no less than one CTA.
  const LaunchTimes launch = profile_launches(ncu, iosim_cli().string(), 16 * m.device.sm_count);
  BOOST_TEST(launch.one_cta_s > 1e-7);
  BOOST_TEST(launch.one_cta_s < 1e-4);
  BOOST_TEST(launch.wave_s >= 0.9 * launch.one_cta_s);
  m.kernel_launch_s = launch.one_cta_s;
  m.kernel_launch_wave_s = launch.wave_s;
  m.kernel_launch_wave_ctas = launch.wave_ctas;
  m.launch_setup = launch_setup();
  // Reads of one line at the same instant merge at least as often as reads
  // 128 cycles apart, and the window lies within the probe's deltas.
  const MergeCurve merge = profile_merges(ncu, iosim_cli().string(), m.device.sm_count);
  BOOST_REQUIRE(merge.share.size() >= 6u);
  BOOST_TEST(merge.share.front().second >= merge.share[5].second);  // delta 0 against 128
  BOOST_TEST(merge.window >= 0.0);
  BOOST_TEST(merge.window <= 512.0);
  m.merge_window = {merge.window, merge_setup(m.device.sm_count)};
  for (const profile::CopyCounters& c : copies) {
    BOOST_TEST(c.dram_read >= static_cast<double>(c.bytes));  // a flushed L2: every byte comes from DRAM
    BOOST_TEST(c.dram_read <= 1.05 * static_cast<double>(c.bytes));
    BOOST_TEST(c.dirty_at_end() >= 0);
    BOOST_TEST(c.dirty_at_end() <= static_cast<double>(m.device.l2_bytes));
  }
  const fs::path dir = fs::temp_directory_path() / ("iosim-test-calibrate-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "quick.yaml";
  std::ofstream(file) << profile::write_profile_yaml(profile::draft_from_measurements(m, "quick"));
  const profile::HardwareProfile p = profile::load_profile(file.string());
  BOOST_TEST(p.sm_pipes.present);
  // wgmma's keys exactly where it was measured (sm_90a).
  BOOST_TEST(p.sm_pipes.wgmma_f16_flop_per_cycle == m.wgmma_f16.per_cycle, boost::test_tools::tolerance(1e-4));
  BOOST_TEST(p.sm_pipes.wgmma_latency_cycles == m.wgmma_latency.value, boost::test_tools::tolerance(1e-4));
  // The branch costs where positive; a key left out loads as 0 (no cost).
  BOOST_TEST(p.sm_pipes.branch_taken_cycles == std::max(m.branch_taken.value, 0.0),
             boost::test_tools::tolerance(1e-4));
  BOOST_TEST(p.sm_pipes.branch_not_taken_cycles == std::max(m.branch_not_taken.value, 0.0),
             boost::test_tools::tolerance(1e-4));
  BOOST_TEST(p.sm_pipes.branch_reconverge_cycles == std::max(m.branch_reconverge.value, 0.0),
             boost::test_tools::tolerance(1e-4));
  BOOST_TEST(p.l2_sector_bytes == 32);
  BOOST_TEST(p.l2_merge_window_cycles == merge.window, boost::test_tools::tolerance(1e-3));
  BOOST_TEST(p.l2_line_bytes == 128);
  BOOST_TEST(p.kernel_launch_cycles == launch.one_cta_s * m.device.max_clock_hz, boost::test_tools::tolerance(1e-3));
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
