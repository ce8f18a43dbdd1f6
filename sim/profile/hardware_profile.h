// A GPU described by a YAML profile (hw_profiles/*.yaml). All quantities are
// stored in base units (bytes, hertz, bytes/s, FLOP/s, cycles at sm_clock_hz)
// whatever unit the file wrote them in; every value in the file names its
// source. The loader is strict: unknown, missing, mistyped, non-positive or
// contradictory entries are rejected with file, key and line.
#pragma once
#include <string>
#include <vector>

#include "sim/common/hd.h"

namespace iosim::profile {

struct HardwareProfile {
  std::string name;          // profile id, e.g. "a100-sxm4-40gb" (the file stem)
  std::string display_name;  // e.g. "NVIDIA A100-SXM4-40GB"
  std::string source_file;   // path it was loaded from
  std::string compute_capability;  // e.g. "8.0"

  // Streaming multiprocessors.
  i64 sm_count = 0;
  double sm_clock_hz = 0;            // clock the rates and cycle latencies refer to
  i64 smem_per_sm_bytes = 0;         // shared memory per SM (max carve-out)
  i64 smem_per_block_bytes = 0;      // max shared memory one CTA may opt in to
  i64 l1_per_sm_bytes = 0;           // unified L1 + shared memory per SM
  i64 registers_per_sm = 0;          // 32-bit registers
  i64 max_registers_per_thread = 0;
  i64 max_threads_per_sm = 0;
  i64 max_warps_per_sm = 0;
  i64 max_ctas_per_sm = 0;

  // L2 cache.
  i64 l2_bytes = 0;
  i64 l2_line_bytes = 0;
  i64 l2_sector_bytes = 0;
  i64 l2_partitions = 0;      // halves with near/far latency (1 = uniform)
  i64 l2_associativity = 0;   // ways (an assumption where unpublished; the file says so)
  double l2_bandwidth_bytes_per_s = 0;

  // Device memory.
  std::string dram_kind;      // "HBM2", "HBM2e", "HBM3", "HBM3e", "GDDR6"
  i64 dram_capacity_bytes = 0;
  double dram_peak_bandwidth_bytes_per_s = 0;
  double dram_achievable_fraction = 0;  // (0, 1]: measured streaming / peak
  double dram_achievable_bandwidth_bytes_per_s() const {
    return dram_peak_bandwidth_bytes_per_s * dram_achievable_fraction;
  }

  // Latencies, in SM cycles.
  double smem_latency_cycles = 0;
  double l2_near_latency_cycles = 0;
  double l2_far_latency_cycles = 0;
  double dram_latency_cycles = 0;

  // Arithmetic rates, whole GPU, dense.
  double tensor_fp16_flops_per_s = 0;
  double tensor_bf16_flops_per_s = 0;  // 0 where the GPU has no bf16 tensor cores (T4)
  double fp32_flops_per_s = 0;         // FMA counted as 2
  double sfu_ops_per_s = 0;            // exp2 and friends
};

// Loads and validates one profile file. Throws iosim::InputError
// "<file>:<line>: <key>: <problem> (<what would be valid>)".
HardwareProfile load_profile(const std::string& path);

// `name_or_path` is a path to a .yaml file or a profile name looked up in the
// profile directory. Throws InputError listing the known names when not found.
HardwareProfile find_profile(const std::string& name_or_path, const std::string& profile_dir);

// Profiles in the directory, sorted by name.
std::vector<HardwareProfile> list_profiles(const std::string& profile_dir);

// The directory holding the shipped profiles: $IOSIM_PROFILE_DIR if set, else
// the source tree's hw_profiles/ (compiled in), else hw_profiles/ beside the
// executable's parent.
std::string default_profile_dir();

}  // namespace iosim::profile
