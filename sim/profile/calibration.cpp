#include "sim/profile/calibration.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace iosim::profile {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string num(double v, int significant = 4) { return plain_decimal(v, significant); }
std::string tbps(double bytes_per_s) { return num(bytes_per_s / 1e12) + " TB/s"; }
std::string mib(double bytes) { return num(bytes / kMiB) + " MiB"; }
std::string mhz(double hz) { return num(hz / 1e6, 5) + " MHz"; }

WrittenValue runtime(double v, std::string how) { return {v, "", Origin::runtime, std::move(how)}; }
WrittenValue measured(double v, std::string how) { return {v, "", Origin::measured, std::move(how)}; }
WrittenValue assumed(double v, std::string how) { return {v, "", Origin::assumption, std::move(how)}; }

// The power of two nearest to a counter ratio, which must lie within 2% of it
// (bytes per L2 sector or request of a fully coalesced read).
i64 power_of_two_near(double ratio, const std::string& what) {
  const double p = std::exp2(std::round(std::log2(ratio)));
  if (!(ratio > 0) || std::fabs(ratio / p - 1) > 0.02)
    throw std::runtime_error("calibrate: " + what + " came out at " + num(ratio, 6) +
                             " bytes, not a power of two (Nsight Compute counters misread?)");
  return static_cast<i64>(p);
}

std::string runs(const CalibrationMeasurements& m) { return "median of " + std::to_string(m.repetitions); }

std::string sweep_text(const ResidentSweep& s) {
  return s.setup + ", " + std::to_string(s.points) + " working sets from " + mib(static_cast<double>(s.smallest)) +
         " to " + mib(static_cast<double>(s.largest));
}

// How the SM clock under a load is measured, and what the GPU's timer read.
std::string clock_how(double timer_hz) {
  return "the longest SM's clock64 span over the host's wall time of the launch (a lower bound: the launch "
         "contains every span; clock64 / %globaltimer read " + mhz(timer_hz) + ")";
}

// "<setup>: 1024 FLOP per SM per cycle at 1755 MHz"
std::string pipe_text(const PipeRate& r, const std::string& unit) {
  return r.setup + ": " + num(r.per_cycle, 5) + " " + unit + " per SM per cycle at " + mhz(r.clock_hz);
}

void add_sm(ProfileDraft& d, const CalibrationMeasurements& m) {
  const DeviceFacts& f = m.device;
  const std::string attr = "cudaDeviceGetAttribute(cudaDevAttr";
  d.values["compute_capability"] = {0, std::to_string(f.cc_major) + "." + std::to_string(f.cc_minor),
                                    Origin::runtime, "cudaDeviceProp major.minor"};
  d.values["sm.count"] = runtime(static_cast<double>(f.sm_count), "cudaDeviceProp::multiProcessorCount");
  d.values["sm.clock"] = runtime(f.max_clock_hz, attr + "ClockRate), the peak SM clock");
  d.values["sm.smem_per_sm"] =
      runtime(static_cast<double>(f.smem_per_sm_bytes), attr + "MaxSharedMemoryPerMultiprocessor)");
  d.values["sm.smem_per_block"] =
      runtime(static_cast<double>(f.smem_per_block_optin_bytes), attr + "MaxSharedMemoryPerBlockOptin)");
  const double l1_kib = std::round(m.l1_sweep.resident_bytes / 1024);
  d.values["sm.l1_smem_per_sm"] = measured(
      l1_kib * 1024, "L1 capacity with the shared-memory carve-out at its minimum: " + sweep_text(m.l1_sweep) +
                     "; the most bytes that stayed L1-resident across passes (hit fraction x working set, "
                     "hit fraction from the cold and warm per-access latency) was " +
                     num(m.l1_sweep.resident_bytes / 1024, 5) + " KiB, at a " +
                     num(static_cast<double>(m.l1_sweep.at_working_set) / 1024, 5) +
                     " KiB working set (rounded to whole KiB)");
  d.values["sm.registers"] = runtime(static_cast<double>(f.registers_per_sm), attr + "MaxRegistersPerMultiprocessor)");
  d.values["sm.max_registers_per_thread"] =
      runtime(static_cast<double>(f.max_registers_per_thread),
              "cudaFuncGetAttributes numRegs of a kernel with 320 live values per thread: the compiler's "
              "per-thread cap");
  d.values["sm.max_threads"] =
      runtime(static_cast<double>(f.max_threads_per_sm), attr + "MaxThreadsPerMultiProcessor)");
  d.values["sm.max_warps"] =
      runtime(static_cast<double>(f.max_threads_per_sm / f.warp_size),
              "MaxThreadsPerMultiProcessor " + std::to_string(f.max_threads_per_sm) + " / warpSize " +
                  std::to_string(f.warp_size));
  d.values["sm.max_ctas"] = runtime(static_cast<double>(f.max_ctas_per_sm), attr + "MaxBlocksPerMultiprocessor)");
}

void add_l2(ProfileDraft& d, const CalibrationMeasurements& m) {
  const DeviceFacts& f = m.device;
  const ResidentSweep& s = m.l2_sweep;
  d.values["l2.size"] = runtime(
      static_cast<double>(f.l2_bytes),
      "cudaDeviceGetAttribute(cudaDevAttrL2CacheSize). iosim calibrate's working-set sweep (" + sweep_text(s) +
          ") kept at most " + mib(s.resident_bytes) +
          " L2-resident across passes (at a " + mib(static_cast<double>(s.at_working_set)) + " working set), " +
          num(100 * s.resident_bytes / static_cast<double>(f.l2_bytes), 3) + "% of it" +
          (m.far_sms > 0 ? " (each line is read by one SM, and the half of them homed in the other L2 half is also "
                           "copied near: 1.5 slots per line, about two thirds of the L2 for distinct lines)"
                         : ""));
  double bytes = 0, sectors = 0, requests = 0;
  for (const CopyCounters& c : m.copies) {
    bytes += static_cast<double>(c.bytes);
    sectors += c.l2_read_sectors;
    requests += c.l2_read_requests;
  }
  const std::string copies = "Nsight Compute on streaming copies (" + m.copy_setup + ", " +
                             std::to_string(m.copies.size()) + " sizes), bytes read / ";
  const double per_request = bytes / requests, per_sector = bytes / sectors;
  d.values["l2.line"] = measured(static_cast<double>(power_of_two_near(per_request, "bytes per L2 request")),
                                 copies + "lts__t_requests_srcunit_tex_op_read.sum = " + num(per_request, 6));
  d.values["l2.sector"] = measured(static_cast<double>(power_of_two_near(per_sector, "bytes per L2 sector")),
                                   copies + "lts__t_sectors_srcunit_tex_op_read.sum = " + num(per_sector, 6));
  const bool split = m.far_sms > 0;
  d.values["l2.partitions"] = measured(
      split ? 2 : 1, "lines filled by SM 0, then read twice by each of " + std::to_string(m.sms_sampled) +
                         " SMs: " + std::to_string(m.far_sms) + " of them saw far hits on their first read " +
                         (split ? "(two halves, a far line is copied near)" : "(one uniform L2)"));
  if (split)  // the far SMs' second reads were near: the first left a copy in their half
    d.values["l2.far_copies"] = measured(
        1, "the same probe: the " + std::to_string(m.far_sms) + " SMs that saw far hits on their first read of the "
               "lines hit near on their second (the first read left a copy in the reader's half)");
  d.values["l2.associativity"] =
      assumed(16, "not measured by iosim calibrate: NVIDIA publishes no L2 associativity and the set hash defeats "
                  "conflict probes; 16 ways as in the other profiles");
  if (s.half_working_set > 0) {
    constexpr i64 kWays = 16;
    const i64 set_bytes = power_of_two_near(per_request, "bytes per L2 request") * kWays * (split ? 2 : 1);
    const i64 sets = static_cast<i64>(s.half_working_set) / set_bytes;
    d.values["l2.effective_size"] = measured(
        static_cast<double>(std::min(sets * set_bytes, f.l2_bytes)),
        "the working set at which the L2 sweep above (" + sweep_text(s) + ") still hit on half its loads: " +
            mib(s.half_working_set) + " (linear between the two working sets around one half), rounded down to "
            "whole sets; the model's L2 gets this capacity where it does not model the copies (--l2-copies off), as "
            "each far line also takes a near slot");
  }
  d.values["l2.bandwidth"] = measured(
      m.l2_read_bytes_per_s, m.l2_read_setup + ", best working set " +
                                 mib(static_cast<double>(m.l2_read_working_set)) + ", " + runs(m) + ": " +
                                 tbps(m.l2_read_bytes_per_s));
  if (m.l2_write_bytes_per_s > 0)
    d.values["l2.write_bandwidth"] =
        measured(m.l2_write_bytes_per_s, m.l2_write_setup + ", " + runs(m) + ": " + tbps(m.l2_write_bytes_per_s));
  d.values["l2.merge_window"] =
      m.merge_window.setup.empty()
          ? assumed(32, "not measured (iosim calibrate's merge probe did not run): the window in which the engine's "
                        "L2 model merges identical tile reads; 32 cycles, the engine's default (as in the "
                        "uncalibrated profiles)")
          : measured(m.merge_window.value, m.merge_window.setup + ": " + num(m.merge_window.value) + " cycles");
  std::vector<double> dirty;
  std::string each;
  for (const CopyCounters& c : m.copies) {
    dirty.push_back(c.dirty_at_end());
    each += (each.empty() ? "" : ", ") + mib(static_cast<double>(c.bytes)) + ": " + num(c.dirty_at_end() / 1e6) + " MB";
  }
  d.values["l2.dirty_limit"] = measured(
      std::round(median(dirty)),
      "bytes still dirty in L2 at the end of a streaming copy = bytes copied - dram__bytes_write.sum (Nsight "
      "Compute, --cache-control all; " + m.copy_setup + "), median over " + std::to_string(dirty.size()) +
          " sizes (" + each + ")");
}

void add_dram(ProfileDraft& d, const CalibrationMeasurements& m) {
  const DeviceFacts& f = m.device;
  const double peak = f.dram_peak_bytes_per_s();
  d.values["dram.capacity"] =
      runtime(static_cast<double>(f.global_memory_bytes), "cudaDeviceProp::totalGlobalMem (usable device memory)");
  d.values["dram.peak_bandwidth"] =
      runtime(peak, "cudaDevAttrGlobalMemoryBusWidth " + std::to_string(f.memory_bus_bits) +
                        " bit x cudaDevAttrMemoryClockRate " + mhz(f.memory_clock_hz) + " x 2 (DDR) = " + tbps(peak));
  d.values["dram.achievable_fraction"] = measured(
      m.dram_read_bytes_per_s / peak,
      "streaming read of " + mib(static_cast<double>(m.dram_buffer_bytes)) + ", " + m.dram_setup + ", " +
          runs(m) + ": " + tbps(m.dram_read_bytes_per_s) + " / peak " + tbps(peak) + " (write " +
          tbps(m.dram_write_bytes_per_s) + ", copy " + tbps(m.dram_copy_bytes_per_s) + " read + write)");
  d.values["dram.copy_fraction"] =
      measured(m.dram_copy_bytes_per_s / peak, "streaming copy of " + mib(static_cast<double>(m.dram_buffer_bytes)) +
                                                   " to another buffer, " + m.dram_setup + ", " + runs(m) + ": " +
                                                   tbps(m.dram_copy_bytes_per_s) + " (read + write) / peak " + tbps(peak));
  const char* const piece_keys[4] = {"dram.read_fraction_32B", "dram.read_fraction_64B", "dram.read_fraction_128B",
                                     "dram.read_fraction_256B"};
  for (std::size_t k = 0; k < 4; ++k) {
    const double rate = m.dram_piece_bytes_per_s[k];
    if (!(rate > 0) || !(m.dram_piece_stream_bytes_per_s > 0)) continue;
    const double f = rate / m.dram_piece_stream_bytes_per_s;
    d.values[piece_keys[k]] =
        measured(std::min(1.0, f), std::to_string(32 << k) + "-byte pieces: " + m.dram_pieces_setup + ": " +
                                       tbps(rate) + " against " + tbps(m.dram_piece_stream_bytes_per_s) +
                                       (f > 1.0 ? " (above the stream: written as 1)" : ""));
  }
}

void add_latency(ProfileDraft& d, const CalibrationMeasurements& m) {
  const std::string overhead = ", minus " + num(m.timing_overhead_cycles, 3) + " cycles of clock64 timing overhead";
  d.values["latency.smem"] = measured(m.smem_latency.value, m.smem_latency.setup + ", cycles per load");
  d.values["latency.l2_near"] =
      measured(m.l2_near_latency, m.chase_setup + ": the second read of the lines SM 0 filled, mean over " +
                                      std::to_string(m.sms_sampled) + " SMs" + overhead);
  d.values["latency.l2_far"] = measured(
      m.l2_far_latency, m.far_sms > 0 ? m.chase_setup + ": the slow first reads (over " + num(m.far_factor, 3) +
                                                        "x the SM's median re-read) of the lines SM 0 filled, on the " +
                                            std::to_string(m.far_sms) + " SMs that saw them, mean" + overhead
                                      : "no SM saw far hits: equal to latency.l2_near");
  d.values["latency.dram"] =
      measured(m.dram_latency, m.chase_setup + ": the first pass after the flush, mean" + overhead);
  if (m.kernel_launch_s > 0)
    d.values["latency.kernel_launch"] = measured(
        m.kernel_launch_s * m.device.max_clock_hz,
        "Nsight Compute gpu__time_duration (--cache-control all, --clock-control none) of " + m.launch_setup +
            ": median " + num(m.kernel_launch_s * 1e9) + " ns for 1 CTA (" + num(m.kernel_launch_wave_s * 1e9) +
            " ns for " + std::to_string(m.kernel_launch_wave_ctas) + " CTAs), in cycles of sm.clock");
}

void add_compute(ProfileDraft& d, const CalibrationMeasurements& m) {
  const double sms = static_cast<double>(m.device.sm_count);
  const std::string each = " x " + std::to_string(m.device.sm_count) + " SMs x ";
  d.values["compute.tensor_fp16"] =
      measured(m.mma_f16.per_cycle * sms * m.mma_f16.clock_hz,
               "mma.sync m16n8k16 f16 " + num(m.mma_f16.per_cycle, 5) + " FLOP/cycle/SM" + each +
                   mhz(m.mma_f16.clock_hz) + " under that load");
  d.values["compute.tensor_bf16"] =
      m.mma_bf16.per_cycle > 0
          ? measured(m.mma_bf16.per_cycle * sms * m.mma_bf16.clock_hz,
                     "mma.sync m16n8k16 bf16 " + num(m.mma_bf16.per_cycle, 5) + " FLOP/cycle/SM" + each +
                         mhz(m.mma_bf16.clock_hz) + " under that load")
          : runtime(0, "compute capability " + std::to_string(m.device.cc_major) + "." +
                           std::to_string(m.device.cc_minor) + " has no bf16 mma.sync (needs 8.0)");
  d.values["compute.fp32"] = measured(2 * m.fp32.per_cycle * sms * m.fp32.clock_hz,
                                      "2 FLOP per FFMA x " + num(m.fp32.per_cycle, 5) + " FFMA lane-ops/cycle/SM" +
                                          each + mhz(m.fp32.clock_hz) + " under that load");
  d.values["compute.sfu"] = measured(m.mufu_ex2.per_cycle * sms * m.mufu_ex2.clock_hz,
                                     "ex2.approx " + num(m.mufu_ex2.per_cycle, 5) + " lane-ops/cycle/SM" + each +
                                         mhz(m.mufu_ex2.clock_hz) + " under that load");
}

// wgmma exists on sm_90a only: a GPU without it has no measurement (0), and
// its profile no key (the SM model then falls back to the mma.sync rate).
void add_wgmma(ProfileDraft& d, const CalibrationMeasurements& m, const std::string& all, const std::string& clock) {
  if (m.wgmma_f16.per_cycle > 0) {
    std::string also;
    auto beside = [&](const PipeRate& r, const std::string& what) {
      if (r.per_cycle > 0) also += "; " + what + " " + num(r.per_cycle, 5) + " FLOP per SM per cycle";
    };
    beside(m.wgmma_bf16, "the same in bf16");
    beside(m.wgmma_rs_n128, "m64n128k16 with A from registers (RS)");
    beside(m.wgmma_rs_n64, "m64n64k16 RS");
    d.values["sm_pipes.wgmma_f16"] = measured(m.wgmma_f16.per_cycle, all + pipe_text(m.wgmma_f16, "FLOP") + clock + also);
    d.values["sm_pipes.clock_wgmma_load"] =
        measured(m.wgmma_f16.clock_hz, clock_how(m.wgmma_f16.timer_clock_hz) +
                                           ", while every SM ran the wgmma_f16 benchmark (" + m.wgmma_f16.setup + ")");
  }
  if (m.wgmma_latency.value > 0)
    d.values["sm_pipes.wgmma_latency"] = measured(m.wgmma_latency.value, m.wgmma_latency.setup);
}

// Branch costs are optional keys: a difference of two timings that came out
// at 0 or below (no cost, or noise) leaves its key out, which the SM model
// reads as no cost.
void add_branches(ProfileDraft& d, const CalibrationMeasurements& m) {
  const std::pair<const char*, const Measured*> keys[] = {{"sm_pipes.branch_taken", &m.branch_taken},
                                                          {"sm_pipes.branch_not_taken", &m.branch_not_taken},
                                                          {"sm_pipes.branch_reconverge", &m.branch_reconverge}};
  for (const auto& [key, value] : keys)
    if (value->value > 0) d.values[key] = measured(value->value, value->setup);
}

void add_sm_pipes(ProfileDraft& d, const CalibrationMeasurements& m) {
  const std::string all = std::to_string(m.device.sm_count) + " SMs busy, " + runs(m) + ", ";
  const std::string clock = " (cycles: clock64 per warp over its timed loop; clock: the longest SM's clock64 span "
                            "over the host's wall time of the launch)";
  d.values["sm_pipes.clock_tensor_load"] =
      measured(m.mma_f16.clock_hz, clock_how(m.mma_f16.timer_clock_hz) +
                                       ", while every SM ran the mma_f16 benchmark (" + m.mma_f16.setup + "), " +
                                       runs(m));
  d.values["sm_pipes.clock_memory_load"] =
      measured(m.clock_memory_load_hz, clock_how(m.clock_memory_load_timer_hz) + ", during the DRAM streaming copy (" +
                                           m.clock_memory_load_setup + ", " + m.dram_setup + ")");
  d.values["sm_pipes.mma_f16"] = measured(m.mma_f16.per_cycle, all + pipe_text(m.mma_f16, "FLOP") + clock);
  if (m.mma_bf16.per_cycle > 0)
    d.values["sm_pipes.mma_bf16"] = measured(m.mma_bf16.per_cycle, all + pipe_text(m.mma_bf16, "FLOP") + clock);
  d.values["sm_pipes.fp32"] = measured(m.fp32.per_cycle, all + pipe_text(m.fp32, "op") + clock);
  d.values["sm_pipes.mufu_ex2"] = measured(m.mufu_ex2.per_cycle, all + pipe_text(m.mufu_ex2, "op") + clock);
  d.values["sm_pipes.smem_ldmatrix"] = measured(m.ldmatrix.per_cycle, all + pipe_text(m.ldmatrix, "B") + clock);
  d.values["sm_pipes.issue"] = measured(m.issue.per_cycle, all + pipe_text(m.issue, "warp instructions") + clock);
  d.values["sm_pipes.l2_load_per_sm"] = measured(m.l2_load_per_sm.value, m.l2_load_per_sm.setup);
  if (m.red_per_sm.value > 0) {
    d.values["sm_pipes.red_per_sm"] = measured(m.red_per_sm.value, m.red_per_sm.setup);
    d.values["sm_pipes.red_queue"] = measured(m.red_queue.value, m.red_queue.setup);
  }
  if (m.store_fragment.value > 0) {
    d.values["sm_pipes.store_fragment"] = measured(m.store_fragment.value, m.store_fragment.setup);
    d.values["sm_pipes.store_rows"] = measured(m.store_rows.value, m.store_rows.setup);
    d.values["sm_pipes.store_queue"] = measured(m.store_queue.value, m.store_queue.setup);
  }
  d.values["sm_pipes.mma_latency"] = measured(m.mma_latency.value, m.mma_latency.setup);
  d.values["sm_pipes.barrier_latency"] = measured(m.barrier_latency.value, m.barrier_latency.setup);
  d.values["sm_pipes.alu"] = measured(m.alu.per_cycle, all + pipe_text(m.alu, "op") + clock);
  d.values["sm_pipes.shfl"] = measured(m.shfl.per_cycle, all + pipe_text(m.shfl, "op") + clock);
  d.values["sm_pipes.fp32_latency"] = measured(m.fp32_latency.value, m.fp32_latency.setup);
  d.values["sm_pipes.alu_latency"] = measured(m.alu_latency.value, m.alu_latency.setup);
  d.values["sm_pipes.mufu_latency"] = measured(m.mufu_latency.value, m.mufu_latency.setup);
  d.values["sm_pipes.shfl_latency"] = measured(m.shfl_latency.value, m.shfl_latency.setup);
  add_wgmma(d, m, all, clock);
  add_branches(d, m);
  // A rank slope at 0 or below (no preference, or a later CTA favoured) is
  // outside the key's range (0, 1]: left out, and the run's log says what
  // was measured.
  if (!m.step_jitter.setup.empty() && m.step_jitter.value > 0)
    d.values["sm_pipes.step_jitter"] = measured(m.step_jitter.value, m.step_jitter.setup);
  if (!m.cta_priority.setup.empty() && m.cta_priority.value > 0)
    d.values["sm_pipes.cta_priority"] = measured(m.cta_priority.value, m.cta_priority.setup);
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) throw std::logic_error("median of an empty list");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string profile_name_for(const std::string& device_name) {
  std::string out;
  for (const char c : device_name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpu" : out;
}

ProfileDraft draft_from_measurements(const CalibrationMeasurements& m, const std::string& name) {
  ProfileDraft d;
  d.name = name;
  d.display_name = m.device.name;
  d.gpu = m.device.name;
  d.date = m.date;
  d.comments = {"Written by iosim calibrate on " + m.device.name + ", " + m.date +
                    (m.quick ? " (--quick: shortened benchmarks, for tests)" : "") +
                    ". Keys and units: hw_profiles/README.md. Every value was read from the CUDA runtime or "
                    "measured on this GPU, except where the source says assumption."};
  add_sm(d, m);
  add_l2(d, m);
  add_dram(d, m);
  add_latency(d, m);
  add_compute(d, m);
  add_sm_pipes(d, m);
  return d;
}

}  // namespace iosim::profile
