// The microbenchmarks behind `iosim calibrate`, one function per measured
// quantity (host code in the .cu files of this folder). Each returns its
// result with a `setup` text saying how it ran.
#pragma once
#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "sim/common/hd.h"
#include "sim/profile/calibration.h"

namespace iosim::calibrate::bench {

// Sizes and durations, from --quick and the device.
struct Plan {
  bool quick = false;
  int runs = 5;               // timed runs behind every median (after a warm-up run)
  int sm_count = 0;
  int cc = 0;                 // compute capability, e.g. 90
  i64 l2_bytes = 0;
  std::uint64_t pipe_ns = 0;    // one timed run (and the warm-up) of the FP32, ex2, ldmatrix, issue kernels
  std::uint64_t tensor_ns = 0;  // one timed run of the mma kernels
  std::uint64_t warmup_ns = 0;  // the warm-up run before the mma runs: the clock settles under load
  i64 dram_bytes = 0;         // each streaming buffer
  i64 l2_read_bytes = 0;      // bytes one L2 re-read launch reads
  int sweep_step_eighths = 0;  // resident sweeps step by 2^(step/8)
  std::ostream* log = nullptr;  // the raw points of sweeps and chases, for a look after one run
};
Plan make_plan(bool quick, const profile::DeviceFacts& device, std::ostream* log);

// Reads the first `bytes` of the L2 through a larger buffer, in chunks each
// read three times: the flush's lines are re-used like the benchmark's, so a
// scan-resistant replacement policy evicts the benchmark's lines too.
class L2Flush {
 public:
  explicit L2Flush(i64 l2_bytes);
  void run() const;  // queued on the default stream
  i64 bytes() const { return static_cast<i64>(buffer_.bytes()); }

 private:
  kernels::DeviceBuffer<uint4> buffer_;
  kernels::DeviceBuffer<std::uint32_t> sink_;
  int sm_count_ = 0;
  i64 chunk_ = 0;  // 16-byte elements per chunk: half the L2
};

// device.cu
profile::DeviceFacts read_device_facts();

// memory.cu
struct DramRates {
  double read = 0, write = 0, copy = 0;  // bytes/s (copy: read + write)
  double copy_clock_hz = 0;              // SM clock during a copy: clock64 over the host's wall time
  double copy_timer_clock_hz = 0;        // the same over %globaltimer (for comparison)
  std::string clock_setup;               // the launch that gave the clock
  std::string setup;
};
DramRates dram_rates(const Plan& plan);
// Reads of 32-, 64-, 128- and 256-byte pieces far apart, and a stream, by the same kernel: bytes/s.
struct DramPieces {
  double stream = 0;
  std::array<double, 4> piece{};
  std::string setup;
};
DramPieces dram_pieces(const Plan& plan);
struct L2Read {
  double bytes_per_s = 0;
  i64 working_set = 0;
  std::string setup;
};
L2Read l2_read_bandwidth(const Plan& plan);
// Stores into L2-resident lines, all SMs: the L2 slices' intake (l2.write_bandwidth).
L2Read l2_write_bandwidth(const Plan& plan);
profile::Measured l2_load_one_sm(const Plan& plan);

// red.global.add.v2.f32 bytes per SM per cycle, in FA2 backward's dQ pattern:
// one SM alone, and per SM while every SM reduces.
struct RedRates {
  double one_sm = 0, all_sms = 0;
  std::string setup;
  // The SM's queue of reductions: bytes that issue without waiting for the
  // drain, from bursts of reductions (bytes, cycles to issue them).
  double queue_bytes = 0;
  std::vector<std::pair<double, double>> burst_cycles;
  std::string burst_setup;
};
RedRates l2_reduce_rates(const Plan& plan);
// Global stores from one SM alone: warp instructions per cycle of
// st.global.b32 in the MMA fragment layout (8 rows x 16 B each) and of
// st.global.v4.b32 over 512 contiguous bytes, into L2-resident rows; and the
// fragment stores that issue before a warp waits (bursts after a barrier).
struct StoreRates {
  double fragment_inst = 0, contiguous_inst = 0;
  double queue_inst = 0;
  std::string setup, burst_setup;
};
StoreRates sm_store_rates(const Plan& plan);
profile::ResidentSweep l2_resident_sweep(const Plan& plan, const L2Flush& flush);
profile::ResidentSweep l1_resident_sweep(const Plan& plan);

// latency.cu
struct Latencies {
  double timing_overhead = 0;  // cycles clock64 adds around one load
  profile::Measured smem;
  double dram = 0;             // raw minus overhead
  double near = 0, far = 0;    // raw minus overhead
  int sampled = 0, far_sms = 0;
  std::string chase_setup;
};
Latencies latencies(const Plan& plan, const L2Flush& flush);

// pipes.cu
profile::PipeRate mma_rate(const Plan& plan, bool bf16);
profile::PipeRate ffma_rate(const Plan& plan);
profile::PipeRate ex2_rate(const Plan& plan);
profile::PipeRate ldmatrix_rate(const Plan& plan);
profile::PipeRate issue_rate(const Plan& plan);
profile::PipeRate fmnmx_rate(const Plan& plan);
profile::PipeRate shfl_rate(const Plan& plan);
profile::Measured mma_latency(const Plan& plan);
profile::Measured fp32_latency(const Plan& plan);
profile::Measured alu_latency(const Plan& plan);
profile::Measured mufu_latency(const Plan& plan);
profile::Measured shfl_latency(const Plan& plan);
profile::Measured barrier_latency(const Plan& plan);
// Branches, one warp alone, in cycles per block of a chain of 24 dependent
// FFMA blocks (sm_pipes.branch_*).
struct BranchLatencies {
  profile::Measured taken;       // a warp-uniform taken branch's block
  profile::Measured not_taken;   // a warp-uniform not-taken branch's block - the block without a branch
  profile::Measured reconverge;  // a per-lane (BSSY/BSYNC) taken branch's block - the uniform one's
};
BranchLatencies branch_latencies(const Plan& plan);

// steps.cu: how identical CTAs' steps vary (sm_pipes.step_jitter) and how an
// SM favours the CTAs that started on it first (sm_pipes.cta_priority).
// Values 0 with an empty setup: not measured (`note` says why).
struct StepVariation {
  double jitter = 0;
  double cta_priority = 0;
  std::string jitter_setup, priority_setup;
  std::string note;  // runs left out, or why nothing was measured
};
StepVariation step_variation(const Plan& plan);

// sm90a/wgmma.cu (compiled for sm_90a only): call only where has_wgmma.
bool has_wgmma(const Plan& plan);  // compute capability 9.0
enum class WgmmaForm {
  ss_f16,       // m64n128k16 f16, A and B from shared memory: sm_pipes.wgmma_f16
  ss_bf16,      // the same in bf16
  rs_f16_n128,  // m64n128k16 f16, A from registers (FA3's P V at d = 128)
  rs_f16_n64,   // m64n64k16 f16, A from registers (FA3's P V at d = 64)
};
profile::PipeRate wgmma_rate(const Plan& plan, WgmmaForm form);
profile::Measured wgmma_latency(const Plan& plan);

}  // namespace iosim::calibrate::bench
