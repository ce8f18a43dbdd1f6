// The timing engine: runs each kernel's CTAs on the profile's SMs and their
// tile requests through the L2 and DRAM model, in simulated-time order.
//
//   - Occupancy from the profile and the kernel's CTA resources; CTAs are
//     dispatched in launch order (x fastest, then y, then z): first one per SM
//     across all SMs, then a second per SM, ...; afterwards each finishing
//     CTA's slot takes the next CTA, so the grid runs in waves.
//   - A CTA runs its steps: the loads of step k are issued when its pipeline
//     buffer frees (at the end of step k - stages' compute; the first `stages`
//     steps at dispatch), its compute starts when its tiles have arrived (or at
//     once, when its program loads them itself) and the previous step's
//     compute is done, and its stores are issued when its compute ends.
//   - Compute time of a step: its warp program (sim/schedule/warp_programs.h)
//     on the SM model (sm_model.h) with as many CTAs as are on the SM then,
//     at the SM's clock under that kernel's load (the profile's sm_pipes, or
//     values derived from its datasheet rates). A step with no program (trace
//     files that give none) takes its tensor, FP32 and SFU work at the
//     machine's rates, added, on the SM's pipes first come first served.
//   - Every request goes through memory::MemorySystem at the moment it is
//     issued; an event queue over CTAs orders them by simulated time, so the
//     requests of concurrently running CTAs reach the L2 interleaved.
//
// docs/engine.md states what is modelled and what is assumed.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "sim/common/progress.h"
#include "sim/engine/local_traffic.h"
#include "sim/engine/occupancy.h"
#include "sim/memory/memory_system.h"
#include "sim/profile/hardware_profile.h"
#include "sim/trace/algorithms.h"
#include "sim/trace/trace_file.h"

namespace iosim::engine {

struct EngineOptions {
  // L2 replacement policy by name (memory::replacement_policy_names()).
  std::string l2_replacement = "lru";
  // Start every kernel with an empty, clean L2, as `ncu --cache-control all`
  // measures; by default L2 contents carry over from kernel to kernel, as on
  // the hardware (standard attention's P is partly still in L2 for P V).
  bool cold_l2_per_kernel = false;
  // Identical tile reads within this window of a lookup merge into it
  // (Hopper's L2 request coalescing); 0 disables merging. Unset: the
  // profile's l2.merge_window (fitted for the H200 against
  // lts__t_sectors_srcunit_tex_op_read). SimulationResult::options holds the
  // value used.
  std::optional<double> l2_merge_window_cycles;
  // At most this many bytes dirty in L2; past it the lines dirty the longest
  // are written to DRAM early (infinity: only on eviction). Unset: the
  // profile's l2.dirty_limit.
  std::optional<double> l2_dirty_limit_bytes;
  // Exact tile-level fast path in the L2 (false: line by line; for tests).
  bool l2_tile_fast_path = true;
  // Exact: 16-way L2 sets keep an LRU order and a specialised per-line loop
  // (false: the general loop that searches the stamps; for tests).
  bool l2_ordered_sets = true;
  // Copies: a read of a line homed in the other L2 partition also allocates
  // it in the requester's, a second slot, and the L2 holds the profile's
  // whole l2.size instead of l2.effective_size (docs/engine.md, "L2",
  // "Copies"; measured on the H200: experiments/results/2026-11-28-h200-l2-home-sweep).
  // Unset: the profile's l2.far_copies, off when the L2 is set-sampled.
  // SimulationResult::options holds the value used.
  std::optional<bool> l2_copies;
  // Simulate one L2 set group in this many and scale the counts (1 = exact;
  // a power of two up to 256). An approximation for fast sweeps:
  // docs/engine.md gives its measured error.
  int l2_set_sampling = 1;
  // Fast-forward (approximate): in a kernel of many waves, the CTAs of its
  // steady middle are not run; they are charged the time and the memory
  // counters of an equal stretch run just before them, scaled by their
  // request bytes (which, like their FLOPs, steps and instructions, stay
  // exact: their trace is walked). docs/engine.md, "Fast-forward", gives the
  // rule and its measured error. Off with a timeline.
  bool fast_forward = false;
  // Time each kernel's warp programs alone and at occupancy for the report
  // (KernelResult::programs); a program whose loads the engine times runs
  // there in another form, so this is extra SM-model work (about 6% of the
  // default run's time). Off: programs is empty.
  bool program_timings = true;
  // Idle time between consecutive kernels (launch overhead), seconds.
  double kernel_gap_seconds = 0;
  // Chrome Trace Event output (empty: none) and its event cap.
  std::string timeline_path;
  i64 timeline_max_events = 400000;
  // Told the trace steps replayed, every kProgressEverySteps (not owned; null: none).
  ProgressSink* progress = nullptr;
};

// Busy time of each shared resource during a kernel, in cycles (the SM pipes
// summed over SMs).
struct BusyCycles {
  double dram = 0;
  double l2 = 0;
  double sm_pipes = 0;
  double fp32_sfu = 0;
  void add(const BusyCycles& o) {
    dram += o.dram;
    l2 += o.l2;
    sm_pipes += o.sm_pipes;
    fp32_sfu += o.fp32_sfu;
  }
};

// Fraction of a kernel's time each shared resource was busy.
struct Utilisation {
  double dram = 0;        // DRAM channel (reads + write-backs) at achievable bandwidth
  double l2 = 0;          // L2 slices / crossbar at the profile's L2 bandwidth
  double sm_pipes = 0;    // SM compute pipes, averaged over SMs
  double tensor = 0;      // tensor FLOPs / (peak tensor rate x time)
  double fp32_sfu = 0;    // FP32 + SFU pipe time / (SMs x time)
};

struct KernelResult {
  std::string name;
  workload::Pass pass = workload::Pass::fwd;
  schedule::Dim3 grid;
  trace::CtaResources cta;
  int stages = 1;
  Occupancy occupancy;

  i64 sector_bytes = 32;      // L2 sector size of the profile (counters below are in sectors)
  memory::L2Counters l2;      // requests, hits/misses (sector and lookup views), per tensor
  i64 dram_read_bytes = 0;    // L2 fills during the kernel
  i64 dram_write_bytes = 0;   // dirty evictions during the kernel (what ncu counts)
  i64 dirty_left_bytes = 0;   // dirty in L2 when the kernel ends: not this kernel's DRAM writes
  i64 flushed_dirty_bytes = 0;  // cold start: dirty bytes dropped before the kernel
  i64 zero_fill_read_bytes = 0;  // TMA boxes past the tensors' ends: crossbar reads only (trace::KernelTrace)
  trace::ComputeWork compute;   // summed over CTAs
  i64 steps = 0;
  // Warp instructions by SM pipe the SM model ran (summed over warps and
  // steps; all zero for kernels without warp programs), to set against
  // Nsight Compute's instruction counters.
  std::array<i64, schedule::kPipeCount> instructions{};
  bool sm_model = false;  // the kernel's steps were timed by the SM model (else: at the machine's rates)
  bool machine_measured = false;  // the machine's parameters are the profile's sm_pipes (iosim calibrate)
  // Each warp program of the kernel as the SM model times it: one CTA alone on
  // an SM, and as many as the occupancy allows (cycles of the SM clock).
  struct ProgramTiming {
    std::string name;
    std::array<i64, schedule::kPipeCount> instructions{};  // one warp, one step
    double cycles_alone = 0;
    double cycles_at_occupancy = 0;
  };
  std::vector<ProgramTiming> programs;
  double sm_clock_hz = 0;  // the SM clock the kernel's steps were timed at (its load's, sm_model.h)
  // Its warps' local memory (spills; local_traffic.h), summed over warps and
  // steps: also in the L2 counters above, as tensor "local"; not in the trace.
  LocalTraffic local;
  i64 local_l1_bytes = 0;  // L1 beside shared memory on each SM (0: no local accesses)

  // Fast-forward (fast_forward.h): the work skipped and charged at the rates
  // of a window that ran just before it (all 0: the kernel ran whole).
  struct FastForward {
    i64 window_ctas = 0;   // whole CTAs skipped: the window's CTAs (whole waves)
    i64 skipped_ctas = 0;
    i64 window_steps = 0;  // steps skipped within CTAs: each CTA's window of steps
    i64 skipped_steps = 0;  // steps not run, in all (of skipped CTAs too)
    double skipped_cycles = 0;  // time charged for them
  };
  FastForward fast_forward;

  double start_seconds = 0;
  double seconds = 0;
  double cycles = 0;
  double dram_bytes_per_s = 0;     // achieved (read + write) / time
  double tensor_flops_per_s = 0;   // achieved
  BusyCycles busy;
  Utilisation utilisation;
  std::string bound;          // dram | l2 | tensor | sfu_fp32 | latency_occupancy
  std::string bound_reason;

  // The trace's requests (the L2 counters less the spills' traffic).
  i64 request_read_bytes() const { return l2.kind[0].bytes - local.miss_bytes; }
  i64 request_write_bytes() const { return l2.kind[1].bytes + l2.kind[2].bytes - local.store_bytes; }
  i64 request_reduce_bytes() const { return l2.kind[2].bytes; }
};

struct SimulationResult {
  std::string profile;
  EngineOptions options;
  std::vector<std::string> tensor_names;  // by tensor index
  std::vector<KernelResult> kernels;
  // The run: counters summed, time summed (with kernel gaps), utilisation over
  // the whole run, dirty bytes left at the end, occupancy of the longest kernel.
  KernelResult total;
  std::string timeline_note;  // empty, or what the timeline left out
  // The profile's CTA-timing spread the run used (0: absent, lockstep).
  double step_jitter = 0;   // sm_pipes.step_jitter
  double cta_priority = 0;  // sm_pipes.cta_priority
  double host_seconds = 0;    // wall time the simulation took
};

SimulationResult simulate(const trace::AlgorithmTrace& run, const profile::HardwareProfile& profile,
                          const EngineOptions& options);
SimulationResult simulate(trace::KernelSource& kernels, const profile::HardwareProfile& profile,
                          const EngineOptions& options);
// Replays a trace file written by trace::write_trace_file (or by hand).
SimulationResult replay_trace_file(const std::string& path, const profile::HardwareProfile& profile,
                                   const EngineOptions& options);

// Bounding resource from utilisation: the busiest of DRAM, L2 and the SM
// pipes when it is busy at least `kBoundThreshold` of the time (the SM pipes
// split into tensor vs sfu_fp32 by which took more time); otherwise
// latency_occupancy.
inline constexpr double kBoundThreshold = 0.6;
void classify_bound(KernelResult& k, const profile::HardwareProfile& profile);

}  // namespace iosim::engine
