// What `iosim calibrate` reads and measures on one GPU, and the profile made
// from it. kernels/calibrate fills CalibrationMeasurements on the GPU; the
// mapping to profile keys and every source text live here, in plain C++, so
// that they are tested without a GPU (tests/test_profiles.cpp writes a draft
// from made-up measurements and loads it back).
//
// Units: bytes, Hz, bytes/s, SM cycles; per-SM rates per cycle.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "sim/common/hd.h"
#include "sim/profile/profile_writer.h"

namespace iosim::profile {

// Read from the CUDA runtime (cudaGetDeviceProperties / cudaDeviceGetAttribute;
// cudaFuncGetAttributes for the register cap).
struct DeviceFacts {
  std::string name;  // cudaDeviceProp::name, e.g. "NVIDIA H200"
  int cc_major = 0;
  int cc_minor = 0;
  i64 sm_count = 0;
  double max_clock_hz = 0;             // cudaDevAttrClockRate
  i64 smem_per_sm_bytes = 0;           // cudaDevAttrMaxSharedMemoryPerMultiprocessor
  i64 smem_per_block_optin_bytes = 0;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
  i64 registers_per_sm = 0;            // cudaDevAttrMaxRegistersPerMultiprocessor
  i64 max_registers_per_thread = 0;    // numRegs of a kernel that wants more than any thread may have
  i64 max_threads_per_sm = 0;          // cudaDevAttrMaxThreadsPerMultiProcessor
  i64 warp_size = 0;
  i64 max_ctas_per_sm = 0;             // cudaDevAttrMaxBlocksPerMultiprocessor
  i64 l2_bytes = 0;                    // cudaDevAttrL2CacheSize
  i64 global_memory_bytes = 0;         // cudaDeviceProp::totalGlobalMem
  double memory_clock_hz = 0;          // cudaDevAttrMemoryClockRate
  i64 memory_bus_bits = 0;             // cudaDevAttrGlobalMemoryBusWidth
  // Bus width x memory clock x 2 (double data rate).
  double dram_peak_bytes_per_s() const {
    return static_cast<double>(memory_bus_bits) / 8.0 * memory_clock_hz * 2.0;
  }
};

// One streaming copy profiled by Nsight Compute (--cache-control all: it
// starts with a clean L2).
struct CopyCounters {
  i64 bytes = 0;             // copied (read once, written once)
  double dram_read = 0;      // dram__bytes_read.sum
  double dram_write = 0;     // dram__bytes_write.sum
  double l2_read_sectors = 0;   // lts__t_sectors_srcunit_tex_op_read.sum
  double l2_read_requests = 0;  // lts__t_requests_srcunit_tex_op_read.sum
  double dirty_at_end() const { return static_cast<double>(bytes) - dram_write; }
};

// Each result carries `setup`: how the benchmark that produced it ran, in
// words written where it is launched (kernels/calibrate), for the source.

// A throughput kernel's result: work per SM per SM cycle, and the SM clock
// while it ran: clock64 cycles over the host's wall time of the launch (a
// lower bound), and clock64 over the GPU's %globaltimer (which read above the
// peak clock on an H100: kept for comparison, in the source text).
struct PipeRate {
  double per_cycle = 0;
  double clock_hz = 0;
  std::string setup;
  double timer_clock_hz = 0;
};

// A single measured number (a latency, one SM's bandwidth).
struct Measured {
  double value = 0;
  std::string setup;
};

// A working-set sweep's capacity estimate: the most bytes that stayed
// resident across passes (hit fraction x working set, at its largest).
struct ResidentSweep {
  double resident_bytes = 0;  // the estimate
  i64 at_working_set = 0;     // where the largest value was seen
  i64 smallest = 0, largest = 0;
  int points = 0;
  std::string setup;
  // Where the hit fraction first falls through one half (linear between the
  // two points around it); 0 when it never does within the sweep.
  double half_working_set = 0;
};

struct CalibrationMeasurements {
  DeviceFacts device;
  std::string date;  // YYYY-MM-DD
  bool quick = false;
  int repetitions = 0;  // timed runs behind every median

  // DRAM streaming.
  std::string dram_setup;
  i64 dram_buffer_bytes = 0;
  double dram_read_bytes_per_s = 0;
  double dram_write_bytes_per_s = 0;
  double dram_copy_bytes_per_s = 0;  // bytes read + bytes written
  double clock_memory_load_hz = 0;   // during a copy: SM cycles over the host's wall time
  double clock_memory_load_timer_hz = 0;  // the same cycles over %globaltimer (for comparison)
  std::string clock_memory_load_setup;    // the copy launch that gave them
  // Reads of 32-, 64-, 128- and 256-byte pieces far apart, and a stream by the
  // same kernel, bytes/s (0: not measured): dram.read_fraction_*B.
  std::array<double, 4> dram_piece_bytes_per_s{};
  double dram_piece_stream_bytes_per_s = 0;
  std::string dram_pieces_setup;

  // L2: bandwidth of an L2-resident re-read, and capacities.
  std::string l2_read_setup;
  double l2_read_bytes_per_s = 0;
  i64 l2_read_working_set = 0;
  std::string l2_write_setup;       // stores into L2-resident lines (0: not measured)
  double l2_write_bytes_per_s = 0;
  ResidentSweep l2_sweep;  // all SMs, ld.global.cg
  ResidentSweep l1_sweep;  // one SM, ld.global.ca, smallest shared-memory carve-out

  // Nsight Compute on streaming copies of several sizes.
  std::string copy_setup;
  std::vector<CopyCounters> copies;
  // Nsight Compute's gpu__time_duration of empty kernels (medians, seconds):
  // the fixed time of a kernel, 1 CTA and a grid of kernel_launch_wave_ctas.
  std::string launch_setup;
  double kernel_launch_s = 0;
  double kernel_launch_wave_s = 0;
  i64 kernel_launch_wave_ctas = 0;

  // Latencies in cycles, the clock64 timing overhead already subtracted.
  std::string chase_setup;  // the L2/DRAM pointer chase and its L2 flush
  double timing_overhead_cycles = 0;
  Measured smem_latency;
  double l2_near_latency = 0;
  double l2_far_latency = 0;  // = near when no SM saw far hits
  double dram_latency = 0;
  int sms_sampled = 0;  // SMs that read the lines SM 0 filled
  int far_sms = 0;      // of them, those that saw far hits (0: one uniform L2)
  double far_factor = 0;  // a first read slower than this x the SM's median re-read was a far hit

  // SM pipes, all SMs busy unless said otherwise.
  PipeRate mma_f16;
  PipeRate mma_bf16;  // per_cycle 0: bf16 tensor cores unsupported
  PipeRate fp32;      // FFMA lane-ops
  PipeRate mufu_ex2;  // lane-ops
  PipeRate ldmatrix;  // bytes
  PipeRate issue;     // warp instructions
  PipeRate alu;       // FMNMX lane-ops
  PipeRate shfl;      // shuffle lane-ops
  Measured l2_load_per_sm;  // bytes per cycle, one SM alone
  Measured red_per_sm;      // red.global bytes per SM per cycle, every SM reducing (0: not measured)
  Measured red_queue;       // cycles of draining an SM's reduction queue holds (one SM's rate)
  Measured store_fragment;  // st.global.b32 in the MMA fragment layout: warp instructions per cycle, one SM (0: not measured)
  Measured store_rows;      // st.global.v4.b32 over 512 contiguous bytes: warp instructions per cycle, one SM
  Measured store_queue;     // cycles of draining (fragment stores) an SM's store queue holds
  Measured mma_latency;
  Measured barrier_latency;
  Measured fp32_latency;
  Measured alu_latency;
  Measured mufu_latency;
  Measured shfl_latency;
  // wgmma (sm_90a only; all 0 elsewhere, and the draft leaves the keys out).
  // f16 is the key's value (m64n128k16, A and B from shared memory); the
  // others are kept in its source text for comparison: bf16 at the same
  // shape, and the register-A (RS) form at FA3's P V shapes.
  PipeRate wgmma_f16;
  PipeRate wgmma_bf16;
  PipeRate wgmma_rs_n128;  // m64n128k16 f16, A from registers
  PipeRate wgmma_rs_n64;   // m64n64k16 f16, A from registers
  Measured wgmma_latency;  // one warpgroup, dependent m64n128k16 (SS), cycles per wgmma
  // Branches, one warp alone, cycles per branch (a value <= 0, which a noisy
  // difference may give, leaves its key out of the draft).
  Measured branch_taken;       // a taken branch on a warp-uniform predicate
  Measured branch_not_taken;   // the same not taken, beyond the code it falls into
  Measured branch_reconverge;  // a per-lane (BSSY/BSYNC) taken branch beyond a uniform one
  // The L2's request merging (kernels/calibrate/merge_probe.cu, cycles; an
  // empty setup: not measured, and the draft keeps the engine's default).
  Measured merge_window;
  // Identical CTAs sharing an SM (kernels/calibrate/steps.cu; an empty setup:
  // not measured, and the draft leaves the key out).
  Measured step_jitter;   // a step's standard deviation over its CTA's mean step, 2 CTAs per SM
  Measured cta_priority;  // the rank slope a of engine::cta_priority_factor, 2-8 CTAs per SM
};

// The draft profile (every schema key, sources included), named `name`.
// Throws std::runtime_error when a counter-derived granularity is not a power
// of two (the counters were misread).
ProfileDraft draft_from_measurements(const CalibrationMeasurements& m, const std::string& name);

// The profile name for a device name: lower case, runs of other characters as
// one '-' ("NVIDIA H200" -> "nvidia-h200").
std::string profile_name_for(const std::string& device_name);

// The value of an even-length list's median: the mean of the two middle values.
double median(std::vector<double> v);

}  // namespace iosim::profile
