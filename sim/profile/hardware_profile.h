// A GPU described by a YAML profile (hw_profiles/*.yaml). All quantities are
// stored in base units (bytes, hertz, bytes/s, FLOP/s, cycles at sm_clock_hz;
// per-SM rates per cycle) whatever unit the file wrote them in; every value in
// the file names its source. The keys, their kinds and ranges are one table,
// sim/profile/schema.h. The loader is strict: unknown, missing, mistyped,
// out-of-range or contradictory entries are rejected with file, key and line.
#pragma once
#include <array>
#include <limits>
#include <string>
#include <string_view>
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
  // Distinct bytes the L2 holds (0: l2_bytes). Hopper copies a line read
  // from the far half into the near one, so distinct lines fill less than
  // the whole L2; the engine's one-copy L2 is given this capacity.
  i64 l2_effective_bytes = 0;
  // A read of a line homed in the other partition also leaves a copy in the
  // reader's (Hopper): the engine then runs its L2 on the whole l2_bytes,
  // a far line taking two slots (--l2-copies; docs/engine.md, "Copies").
  bool l2_far_copies = false;
  i64 l2_model_bytes() const { return l2_effective_bytes > 0 ? l2_effective_bytes : l2_bytes; }
  double l2_bandwidth_bytes_per_s = 0;
  double l2_write_bandwidth_bytes_per_s = 0;  // 0: absent (writes share `l2_bandwidth` alone)
  // Identical tile reads arriving within this many cycles of a read lookup
  // merge into it (0 = no merging); engine::EngineOptions can override it.
  double l2_merge_window_cycles = 0;
  // At most this many bytes dirty in L2; past it the lines dirty the longest
  // are written to DRAM (and stay resident). Infinity (`none`) = only evictions.
  double l2_dirty_limit_bytes = std::numeric_limits<double>::infinity();

  // Device memory.
  std::string dram_kind;      // "HBM2", "HBM2e", "HBM3", "HBM3e", "GDDR6"; "" when not given
  i64 dram_capacity_bytes = 0;
  double dram_peak_bandwidth_bytes_per_s = 0;
  double dram_achievable_fraction = 0;  // (0, 1]: measured streaming / peak
  double dram_copy_fraction = 0;        // (0, 1]: measured copy (read + write bytes) / peak; 0: not given
  // (0, 1]: read bandwidth of contiguous pieces of 32, 64, 128 and 256 bytes
  // spread far apart, over a stream's; 0: not given (pieces read at the stream's rate).
  double dram_read_fraction_32b = 0, dram_read_fraction_64b = 0, dram_read_fraction_128b = 0,
         dram_read_fraction_256b = 0;
  double dram_achievable_bandwidth_bytes_per_s() const {
    return dram_peak_bandwidth_bytes_per_s * dram_achievable_fraction;
  }

  // Latencies, in SM cycles.
  double smem_latency_cycles = 0;
  double l2_near_latency_cycles = 0;
  double l2_far_latency_cycles = 0;
  double dram_latency_cycles = 0;
  double kernel_launch_cycles = 0;  // fixed time of every kernel (launch, completion); 0: not modelled

  // Arithmetic rates, whole GPU, dense.
  double tensor_fp16_flops_per_s = 0;
  double tensor_bf16_flops_per_s = 0;  // 0 where the GPU has no bf16 tensor cores (T4)
  double fp32_flops_per_s = 0;         // FMA counted as 2
  double sfu_ops_per_s = 0;            // exp2 and friends

  // Per-SM machine parameters of the SM execution model (`sm_pipes:`, an
  // optional section written by `iosim calibrate`). Rates are per SM per cycle
  // of the clock the SM sustains under that load (hertz below), latencies in
  // SM cycles.
  struct SmPipes {
    bool present = false;                      // the profile has the section
    double clock_tensor_load_hz = 0;           // every SM running mma.sync flat out
    double clock_memory_load_hz = 0;           // during a DRAM-bound streaming copy
    double clock_wgmma_load_hz = 0;            // every SM running wgmma flat out; 0 = absent (not sm_90a)
    double mma_f16_flop_per_cycle = 0;         // mma.sync m16n8k16 f16 -> f32, all SMs busy
    double mma_bf16_flop_per_cycle = 0;        // the same with bf16 inputs; 0 = unsupported or absent
    double wgmma_f16_flop_per_cycle = 0;       // wgmma m64n128k16 f16 (SS), all SMs busy; 0 = absent (not sm_90a)
    double fp32_op_per_cycle = 0;              // FFMA lane-ops (one FMA = 1 op)
    double mufu_ex2_op_per_cycle = 0;          // ex2.approx.f32 lane-ops
    double smem_ldmatrix_bytes_per_cycle = 0;  // shared-memory bytes delivered by ldmatrix.x4
    double issue_inst_per_cycle = 0;           // warp instructions issued
    double l2_load_bytes_per_cycle = 0;        // L2 -> SM bytes ONE SM can pull
    double red_bytes_per_cycle = 0;            // red.global bytes per SM per cycle, every SM reducing (0: none)
    double red_queue_cycles = 0;               // cycles of draining an SM's reduction queue holds
    double store_fragment_inst_per_cycle = 0;  // st.global.b32 in the MMA fragment layout, one SM (0: none)
    double store_rows_inst_per_cycle = 0;      // st.global.v4.b32 over 512 contiguous bytes, one SM (0: none)
    double store_queue_cycles = 0;             // cycles of draining an SM's store queue holds
    double mma_latency_cycles = 0;             // dependent mma.sync m16n8k16 chain, one warp
    double wgmma_latency_cycles = 0;           // dependent wgmma m64n128k16 chain, one warpgroup; 0 = absent
    double barrier_latency_cycles = 0;         // __syncthreads with 8 warps, back to back
    double alu_op_per_cycle = 0;               // FMNMX lane-ops (the ALU pipe)
    double shfl_op_per_cycle = 0;              // shfl.sync lane-ops
    double fp32_latency_cycles = 0;            // dependent FFMA chain, one warp
    double alu_latency_cycles = 0;             // dependent FMNMX chain
    double mufu_latency_cycles = 0;            // dependent ex2.approx chain
    double shfl_latency_cycles = 0;            // dependent shuffle chain
    // Branches (one warp alone): cycles from a BRA's issue to the warp's next
    // instruction, taken and not taken, and what a BSSY/BSYNC pair around a
    // branch adds (the divergence-capable form of an `if`); 0 = absent.
    double branch_taken_cycles = 0;
    double branch_not_taken_cycles = 0;
    double branch_reconverge_cycles = 0;
    // Standard deviation of a CTA's step length over its mean step, all SMs
    // running identical CTAs (the step-jitter probe); 0 = absent: lockstep.
    double step_jitter = 0;
    // How much an SM favours its older CTAs: a CTA of start rank r among n
    // takes 1 + cta_priority (1 - 2/n)(r - (n - 1)/2) of the SM's mean step
    // (engine::cta_priority_factor); 0 = absent: all at the mean.
    double cta_priority = 0;
  };
  SmPipes sm_pipes;

};

// One value put in place of the file's (`iosim --set KEY=VALUE`): `key` is a
// schema path ("sm.smem_per_block"), `value` is written as in a file ("48KiB").
struct ProfileOverride {
  std::string key;
  std::string value;
  std::string text() const { return key + "=" + value; }
};

// Loads and validates one profile file, with `overrides` in place of the
// file's values (validated exactly as the file's are, consistency included).
// Throws iosim::InputError "<file>:<line>: <key>: <problem> (<what would be
// valid>)"; "--set KEY=VALUE: <problem> (<valid>)" for an overridden value.
HardwareProfile load_profile(const std::string& path, const std::vector<ProfileOverride>& overrides = {});

// `name_or_path` is a path to a .yaml file or a profile name looked up in the
// profile directory. Throws InputError listing the known names when not found.
HardwareProfile find_profile(const std::string& name_or_path, const std::string& profile_dir,
                             const std::vector<ProfileOverride>& overrides = {});

// Profiles in the directory, sorted by name.
std::vector<HardwareProfile> list_profiles(const std::string& profile_dir);

// The directory holding the shipped profiles: $IOSIM_PROFILE_DIR if set, else
// the source tree's hw_profiles/ (compiled in), else hw_profiles/ beside the
// executable's parent.
std::string default_profile_dir();

}  // namespace iosim::profile
