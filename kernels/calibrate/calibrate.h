// `iosim calibrate`: microbenchmarks on the present GPU that fill
// profile::CalibrationMeasurements (sim/profile/calibration.h turns them into
// a profile). The CLI (sim/cli/cmd_calibrate.cpp) calls this through the
// functions below and links the library only in a CUDA build.
#pragma once
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/error.h"
#include "sim/common/hd.h"
#include "sim/profile/calibration.h"

namespace iosim::calibrate {

// Why calibrate cannot run here: no GPU, no ncu, no counter permission. An
// InputError, so the CLI prints the one message and exits 2.
struct Unavailable : InputError {
  using InputError::InputError;
};

struct Options {
  bool quick = false;            // shorter benchmarks (tests)
  std::string self_exe;          // this executable: ncu runs it with `calibrate --probe-copy`
  std::ostream* log = nullptr;   // a line per finished benchmark; nullptr = quiet
};

// Throws Unavailable unless a CUDA device is usable.
void require_gpu();
// The path of `ncu` on PATH; throws Unavailable when there is none.
std::string find_ncu();

// Everything `iosim calibrate` measures: checks the GPU and ncu first, runs
// the Nsight Compute copy probe (which fails early without counter
// permission), then the microbenchmarks; then release_device().
profile::CalibrationMeasurements measure_device(const Options& options);

// Waits for the device, throws kernels::CudaError if a kernel left an error
// behind, and destroys this process's CUDA context (cudaDeviceReset): the
// CLI's calibrate modes return to main with nothing of CUDA left for the exit
// handlers, where the runtime's own teardown runs in an order no object of
// ours controls. Every device buffer must be gone before (they are locals of
// the benchmarks).
void release_device();

// The microbenchmarks alone (no ncu): device facts, DRAM and L2 bandwidth,
// the L1/L2 resident sweeps, latencies and the SM pipes. `copies` and
// copy_setup stay empty.
profile::CalibrationMeasurements run_benchmarks(bool quick, std::ostream* log);

// Sizes of the copies the dirty-limit probe profiles (32 MB to 1 GB; two in
// quick mode).
std::vector<i64> copy_probe_sizes(bool quick);
// "33554432,67108864" -> sizes; each a positive multiple of kCopyChunkBytes,
// else InputError.
std::vector<i64> parse_copy_sizes(const std::string& text);
inline constexpr i64 kCopyChunkBytes = 32768;  // one CTA's share of a copy
// How the copy kernel runs, for the sources.
std::string copy_setup();

// Runs Nsight Compute on `self_exe calibrate --probe-copy SIZES` and returns
// each copy's DRAM and L2 counters. Throws Unavailable on ERR_NVGPUCTRPERM.
std::vector<profile::CopyCounters> profile_copies(const std::string& ncu, const std::string& self_exe,
                                                  const std::vector<i64>& sizes);
// The hidden `calibrate --probe-copy` mode (what ncu profiles): one warm-up
// copy, then one streaming copy per size.
void run_copy_probe(const std::vector<i64>& sizes);

// The fixed time of a kernel, as Nsight Compute's gpu__time_duration of empty
// kernels: 1 CTA (what every kernel pays) and `wave_ctas` CTAs (for the source:
// how the fixed time grows with a full grid).
struct LaunchTimes {
  double one_cta_s = 0;
  double wave_s = 0;
  i64 wave_ctas = 0;
};
inline constexpr int kLaunchProbes = 15;  // launches per grid size; the median is kept
std::string launch_setup();
LaunchTimes profile_launches(const std::string& ncu, const std::string& self_exe, i64 wave_ctas);
// The hidden `calibrate --probe-launch` mode: one warm-up launch, then
// kLaunchProbes launches of an empty kernel per grid size.
void run_launch_probe(const std::vector<i64>& grid_sizes);
// "1,2112" -> grid sizes (each in [1, 2^31)); else InputError.
std::vector<i64> parse_grid_sizes(const std::string& text);

// l2.merge_window (merge_probe.cu): pairs of SMs reading one L2-resident line
// `delta` cycles apart, each delta kMergeRepeats times, under Nsight Compute.
inline constexpr int kMergeRounds = 32;  // lines per pair and launch
inline constexpr int kMergeRepeats = 2;
inline constexpr int kMergeDeltas[] = {0, 8, 16, 32, 64, 128, 256, 512};  // SM cycles
int merge_probe_pairs(int sm_count);
std::string merge_setup(int sm_count);
struct MergeCurve {
  std::vector<std::pair<double, double>> share;  // (delta, share of second reads that cost no lookup), median of repeats
  double window = 0;                              // merge_window(share)
};
MergeCurve profile_merges(const std::string& ncu, const std::string& self_exe, int sm_count);
// The hidden `calibrate --probe-merge` mode: one warm-up launch, then every
// delta of kMergeDeltas, kMergeRepeats times.
void run_merge_probe();

}  // namespace iosim::calibrate
