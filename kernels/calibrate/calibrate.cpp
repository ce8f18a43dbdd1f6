// `iosim calibrate`'s driver: the readiness checks (GPU, ncu, counter
// permission), the Nsight Compute copy probe, and the microbenchmarks in
// order, logging each result as it lands.
#include "kernels/calibrate/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "kernels/calibrate/analysis.h"
#include "kernels/calibrate/benchmarks.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_info.h"

namespace iosim::calibrate {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kCopyMetrics{"dram__bytes_read.sum", "dram__bytes_write.sum",
                                            "lts__t_sectors_srcunit_tex_op_read.sum",
                                            "lts__t_requests_srcunit_tex_op_read.sum"};

std::string today_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `command` through the shell; its stdout and stderr together, and the exit status.
std::pair<std::string, int> run_command(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("calibrate: cannot run " + command);
  std::string out;
  std::array<char, 4096> buf{};
  while (const std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {out, status};
}

std::string last_lines(const std::string& text, int n) {
  std::size_t at = text.size();
  for (int i = 0; i < n && at > 0; ++i) at = text.rfind('\n', at - 1);
  return at == std::string::npos ? text : text.substr(at + 1);
}

// Times one step and logs its one-line result.
class Steps {
 public:
  explicit Steps(std::ostream* log) : log_(log), start_(std::chrono::steady_clock::now()) {}
  template <class F>
  auto run(const std::string& name, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    auto result = f();
    if (log_ != nullptr) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      *log_ << "calibrate: " << name << " (" << profile::plain_decimal(s, 3) << " s)\n" << std::flush;
    }
    return result;
  }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::ostream* log_;
  std::chrono::steady_clock::time_point start_;
};

std::string num(double v, int significant = 4) { return profile::plain_decimal(v, significant); }

// "1975 MHz (%globaltimer: 2069)": the clock over the host's time, then over the GPU's timer.
std::string clocks(double wall_hz, double timer_hz) {
  return num(wall_hz / 1e6) + " MHz (%globaltimer: " + num(timer_hz / 1e6) + ")";
}

}  // namespace

namespace bench {

Plan make_plan(bool quick, const profile::DeviceFacts& device, std::ostream* log) {
  Plan p;
  p.log = log;
  p.quick = quick;
  p.runs = 5;
  p.sm_count = static_cast<int>(device.sm_count);
  p.cc = device.cc_major * 10 + device.cc_minor;
  p.l2_bytes = device.l2_bytes;
  constexpr std::uint64_t kMs = 1000000;
  p.pipe_ns = (quick ? 5 : 30) * kMs;
  p.tensor_ns = (quick ? 5 : 100) * kMs;
  p.warmup_ns = (quick ? 20 : 500) * kMs;
  p.dram_bytes = quick ? i64{1} << 30 : i64{2} << 30;  // well over the L2 (and its ~25 MB left dirty)
  p.l2_read_bytes = quick ? i64{1} << 30 : i64{8} << 30;
  p.sweep_step_eighths = quick ? 4 : 1;
  return p;
}

}  // namespace bench

void require_gpu() {
  const std::string why = kernels::no_device_reason();
  if (!why.empty()) throw Unavailable("calibrate needs a GPU: " + why);
}

std::string find_ncu() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path == nullptr ? "" : path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / "ncu";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  throw Unavailable(
      "calibrate needs Nsight Compute: no ncu on PATH (it reads the DRAM write counters of streaming copies for "
      "l2.dirty_limit; add the CUDA toolkit's bin or nsight-compute folder to PATH)");
}

std::vector<i64> copy_probe_sizes(bool quick) {
  if (quick) return {i64{32} << 20, i64{128} << 20};
  return {i64{32} << 20, i64{64} << 20, i64{128} << 20, i64{256} << 20, i64{512} << 20, i64{1} << 30};
}

namespace {

// A hidden probe mode's comma-separated list of positive integers, each
// accepted by `ok`; anything else is one InputError naming the mode and `what`.
template <class Ok>
std::vector<i64> parse_probe_list(const std::string& text, const std::string& mode, const std::string& what,
                                  const std::string& valid, Ok ok) {
  std::vector<i64> values;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v <= 0 || !ok(v))
      throw InputError("calibrate " + mode + ": '" + item + "' is not a " + what + " (" + valid + ")");
    values.push_back(v);
  }
  if (values.empty()) throw InputError("calibrate " + mode + ": no " + what + "s (" + valid + ")");
  return values;
}

}  // namespace

std::vector<i64> parse_copy_sizes(const std::string& text) {
  return parse_probe_list(text, "--probe-copy", "copy size",
                          "comma-separated byte counts, each a positive multiple of " +
                              std::to_string(kCopyChunkBytes) + ", e.g. 33554432,67108864",
                          [](i64 v) { return v % kCopyChunkBytes == 0; });
}

namespace {

std::string joined(const std::vector<i64>& values) {
  std::string list;
  for (const i64 v : values) list.append(list.empty() ? "" : ",").append(std::to_string(v));
  return list;
}

// Runs Nsight Compute on `self_exe calibrate PROBE_ARGS` for the kernels named
// `kernel` (the first launch, a warm-up, skipped) and returns each profiled
// launch's `metrics`, in launch order; `expected` launches of `what`, else an error.
std::vector<std::vector<double>> ncu_rows(const std::string& ncu, const std::string& self_exe,
                                          const std::string& kernel, const std::vector<std::string>& metrics,
                                          const std::string& probe_args, std::size_t expected,
                                          const std::string& what) {
  std::string list;
  for (const std::string& m : metrics) list.append(list.empty() ? "" : ",").append(m);
  const std::string command = shell_quoted(ncu) + " --clock-control none --cache-control all --kernel-name regex:" +
                              kernel + " --launch-skip 1 --metrics " + list +
                              " --csv --page raw --print-units base " + shell_quoted(self_exe) + " calibrate " +
                              probe_args;
  const auto [out, status] = run_command(command);
  if (out.find("ERR_NVGPUCTRPERM") != std::string::npos)
    throw Unavailable(
        "calibrate needs GPU performance counters, and ncu may not read them here (ERR_NVGPUCTRPERM): run as "
        "root or allow non-admin profiling (NVreg_RestrictProfilingToAdminUsers=0)");
  if (status != 0)
    throw std::runtime_error("calibrate: ncu failed (exit status " + std::to_string(status) + "): " + command +
                             "\n" + last_lines(out, 12));
  std::vector<std::vector<double>> rows = ncu_metric_rows(out, metrics);
  if (rows.size() != expected)
    throw std::runtime_error("calibrate: ncu profiled " + std::to_string(rows.size()) + " " + what + ", expected " +
                             std::to_string(expected) + ":\n" + last_lines(out, 12));
  return rows;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<profile::CopyCounters> profile_copies(const std::string& ncu, const std::string& self_exe,
                                                  const std::vector<i64>& sizes) {
  const auto rows =
      ncu_rows(ncu, self_exe, "copy_chunks", kCopyMetrics, "--probe-copy " + joined(sizes), sizes.size(), "copies");
  std::vector<profile::CopyCounters> copies;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    copies.push_back({sizes[i], rows[i][0], rows[i][1], rows[i][2], rows[i][3]});
  return copies;
}

LaunchTimes profile_launches(const std::string& ncu, const std::string& self_exe, i64 wave_ctas) {
  const std::vector<i64> grids{1, wave_ctas};
  const std::size_t n = kLaunchProbes;
  const auto rows = ncu_rows(ncu, self_exe, "launch_probe", {"gpu__time_duration.sum"},
                             "--probe-launch " + joined(grids), grids.size() * n, "empty kernels");
  std::vector<double> one, wave;
  for (std::size_t i = 0; i < n; ++i) {
    one.push_back(rows[i][0] * 1e-9);  // ns
    wave.push_back(rows[n + i][0] * 1e-9);
  }
  return {median_of(one), median_of(wave), wave_ctas};
}

MergeCurve profile_merges(const std::string& ncu, const std::string& self_exe, int sm_count) {
  const std::size_t deltas = std::size(kMergeDeltas);
  const auto rows = ncu_rows(ncu, self_exe, "pair_reads", {"lts__t_sectors_srcunit_tex_op_read.sum"},
                             "--probe-merge", deltas * kMergeRepeats, "pair launches");
  const i64 lines = static_cast<i64>(merge_probe_pairs(sm_count)) * kMergeRounds;
  MergeCurve out;
  for (std::size_t d = 0; d < deltas; ++d) {
    std::vector<double> shares;
    for (int r = 0; r < kMergeRepeats; ++r) shares.push_back(merged_share(rows[r * deltas + d][0], lines));
    out.share.emplace_back(kMergeDeltas[d], median_of(shares));
  }
  out.window = merge_window(out.share);
  return out;
}

std::vector<i64> parse_grid_sizes(const std::string& text) {
  return parse_probe_list(text, "--probe-launch", "grid size",
                          "comma-separated CTA counts, each in [1, 2147483647], e.g. 1,2112",
                          [](i64 v) { return v <= 2147483647LL; });
}

namespace {

// wgmma exists on sm_90a only (its kernels are compiled for nothing else):
// elsewhere its measurements stay 0 and the profile has no wgmma keys.
void run_wgmma(Steps& steps, const bench::Plan& plan, profile::CalibrationMeasurements& m, std::ostream* log) {
  if (!bench::has_wgmma(plan)) {
    if (log != nullptr)
      *log << "  wgmma: not measured (compute capability " << m.device.cc_major << "." << m.device.cc_minor
           << "; wgmma needs sm_90a): the profile gets no sm_pipes.wgmma_f16 / wgmma_latency\n";
    return;
  }
  using bench::WgmmaForm;
  m.wgmma_f16 = steps.run("wgmma f16", [&] { return bench::wgmma_rate(plan, WgmmaForm::ss_f16); });
  m.wgmma_bf16 = steps.run("wgmma bf16", [&] { return bench::wgmma_rate(plan, WgmmaForm::ss_bf16); });
  m.wgmma_rs_n128 = steps.run("wgmma RS n128", [&] { return bench::wgmma_rate(plan, WgmmaForm::rs_f16_n128); });
  m.wgmma_rs_n64 = steps.run("wgmma RS n64", [&] { return bench::wgmma_rate(plan, WgmmaForm::rs_f16_n64); });
  m.wgmma_latency = steps.run("wgmma latency", [&] { return bench::wgmma_latency(plan); });
  if (log != nullptr)
    *log << "  wgmma per SM per cycle: m64n128k16 SS f16 " << num(m.wgmma_f16.per_cycle) << " FLOP, bf16 "
         << num(m.wgmma_bf16.per_cycle) << ", RS n128 " << num(m.wgmma_rs_n128.per_cycle) << ", RS n64 "
         << num(m.wgmma_rs_n64.per_cycle) << "; clock " << clocks(m.wgmma_f16.clock_hz, m.wgmma_f16.timer_clock_hz)
         << "; latency " << num(m.wgmma_latency.value) << " cycles (" << m.wgmma_latency.setup << ")\n";
}

}  // namespace

profile::CalibrationMeasurements run_benchmarks(bool quick, std::ostream* log) {
  require_gpu();
  Steps steps(log);
  profile::CalibrationMeasurements m;
  m.device = steps.run("device properties", [] { return bench::read_device_facts(); });
  const bench::Plan plan = bench::make_plan(quick, m.device, log);
  m.date = today_utc();
  m.quick = quick;
  m.repetitions = plan.runs;
  if (log != nullptr)
    *log << "calibrate: " << m.device.name << ", " << m.device.sm_count << " SMs, L2 " << m.device.l2_bytes
         << " B, " << (quick ? "quick" : "full") << " run\n";

  const bench::DramRates dram = steps.run("DRAM streaming", [&] { return bench::dram_rates(plan); });
  m.dram_setup = dram.setup;
  m.dram_buffer_bytes = plan.dram_bytes;
  m.dram_read_bytes_per_s = dram.read;
  m.dram_write_bytes_per_s = dram.write;
  m.dram_copy_bytes_per_s = dram.copy;
  m.clock_memory_load_hz = dram.copy_clock_hz;
  m.clock_memory_load_timer_hz = dram.copy_timer_clock_hz;
  m.clock_memory_load_setup = dram.clock_setup;
  if (log != nullptr)
    *log << "  read " << num(dram.read / 1e12) << " TB/s, write " << num(dram.write / 1e12) << " TB/s, copy "
         << num(dram.copy / 1e12) << " TB/s (peak " << num(m.device.dram_peak_bytes_per_s() / 1e12) << "), clock "
         << clocks(dram.copy_clock_hz, dram.copy_timer_clock_hz) << "\n";
  const bench::DramPieces pieces = steps.run("DRAM pieces", [&] { return bench::dram_pieces(plan); });
  m.dram_piece_bytes_per_s = pieces.piece;
  m.dram_piece_stream_bytes_per_s = pieces.stream;
  m.dram_pieces_setup = pieces.setup;
  if (log != nullptr)
    *log << "  pieces of 32/64/128/256 B far apart: " << num(pieces.piece[0] / 1e12) << "/" << num(pieces.piece[1] / 1e12)
         << "/" << num(pieces.piece[2] / 1e12) << "/" << num(pieces.piece[3] / 1e12) << " TB/s, stream "
         << num(pieces.stream / 1e12) << " TB/s\n";

  const bench::L2Read l2 = steps.run("L2 bandwidth", [&] { return bench::l2_read_bandwidth(plan); });
  m.l2_read_setup = l2.setup;
  m.l2_read_bytes_per_s = l2.bytes_per_s;
  m.l2_read_working_set = l2.working_set;
  const bench::L2Read l2w = steps.run("L2 write bandwidth", [&] { return bench::l2_write_bandwidth(plan); });
  m.l2_write_setup = l2w.setup;
  m.l2_write_bytes_per_s = l2w.bytes_per_s;
  m.l2_load_per_sm = steps.run("L2 -> one SM", [&] { return bench::l2_load_one_sm(plan); });
  if (log != nullptr)
    *log << "  L2 " << num(l2.bytes_per_s / 1e12) << " TB/s (stores " << num(l2w.bytes_per_s / 1e12) << " TB/s); one SM "
         << num(m.l2_load_per_sm.value)
         << " B/cycle\n";
  const bench::RedRates red = steps.run("red.global per SM", [&] { return bench::l2_reduce_rates(plan); });
  m.red_per_sm = {red.all_sms, red.setup + ": " + num(red.all_sms) + " B per SM per cycle with every SM reducing (" +
                                   num(red.one_sm) + " with one SM alone)"};
  m.red_queue = {red.queue_bytes / red.one_sm, red.burst_setup + "; queue = (the longest burst's bytes - " +
                                                   num(red.one_sm) + " B/cycle x its cycles) / " + num(red.one_sm) +
                                                   " B/cycle: " + num(red.queue_bytes) + " B"};
  if (log != nullptr)
    *log << "  red.global.add.v2.f32: " << num(red.all_sms) << " B/cycle per SM, all SMs; " << num(red.one_sm)
         << " one SM alone; queue " << num(red.queue_bytes) << " B (" << red.burst_setup << ")\n";

  const bench::StoreRates st = steps.run("st.global one SM", [&] { return bench::sm_store_rates(plan); });
  m.store_fragment = {st.fragment_inst, st.setup + ": st.global.b32 in the MMA fragment layout (8 rows x 16 B per "
                                        "instruction): " + num(st.fragment_inst) + " per cycle (st.global.v4.b32 over 512 "
                                        "contiguous bytes: " + num(st.contiguous_inst) + ")"};
  m.store_rows = {st.contiguous_inst, st.setup + ": st.global.v4.b32 over 512 contiguous bytes per instruction: " +
                                          num(st.contiguous_inst) + " per cycle"};
  m.store_queue = {st.queue_inst / std::max(st.fragment_inst, 1e-9),
                   st.burst_setup + "; queue = (the longest burst's instructions - " + num(st.fragment_inst) +
                       " per cycle x its cycles) / " + num(st.fragment_inst) + " per cycle: " + num(st.queue_inst) +
                       " instructions"};
  if (log != nullptr)
    *log << "  st.global one SM: fragment " << num(st.fragment_inst) << " inst/cycle, 512 B rows "
         << num(st.contiguous_inst) << " inst/cycle; queue " << num(st.queue_inst) << " fragment stores ("
         << st.burst_setup << ")\n";

  const bench::L2Flush flush(m.device.l2_bytes);
  m.l2_sweep = steps.run("L2 resident sweep", [&] { return bench::l2_resident_sweep(plan, flush); });
  m.l1_sweep = steps.run("L1 resident sweep", [&] { return bench::l1_resident_sweep(plan); });
  if (log != nullptr)
    *log << "  L2 kept " << num(m.l2_sweep.resident_bytes / (1 << 20)) << " MiB (driver "
         << num(static_cast<double>(m.device.l2_bytes) / (1 << 20)) << " MiB); L1 kept "
         << num(m.l1_sweep.resident_bytes / 1024) << " KiB\n";

  const bench::Latencies lat = steps.run("latencies", [&] { return bench::latencies(plan, flush); });
  m.chase_setup = lat.chase_setup;
  m.timing_overhead_cycles = lat.timing_overhead;
  m.smem_latency = lat.smem;
  m.dram_latency = lat.dram;
  m.l2_near_latency = lat.near;
  m.l2_far_latency = lat.far;
  m.sms_sampled = lat.sampled;
  m.far_sms = lat.far_sms;
  m.far_factor = kFarFactor;
  if (log != nullptr)
    *log << "  smem " << num(lat.smem.value) << ", L2 near " << num(lat.near) << ", far " << num(lat.far) << " ("
         << lat.far_sms << " of " << lat.sampled << " SMs), DRAM " << num(lat.dram) << " cycles\n";

  m.mma_f16 = steps.run("mma f16", [&] { return bench::mma_rate(plan, false); });
  if (plan.cc >= 80) m.mma_bf16 = steps.run("mma bf16", [&] { return bench::mma_rate(plan, true); });
  m.fp32 = steps.run("FFMA", [&] { return bench::ffma_rate(plan); });
  m.mufu_ex2 = steps.run("ex2", [&] { return bench::ex2_rate(plan); });
  m.ldmatrix = steps.run("ldmatrix", [&] { return bench::ldmatrix_rate(plan); });
  m.issue = steps.run("issue", [&] { return bench::issue_rate(plan); });
  m.mma_latency = steps.run("mma latency", [&] { return bench::mma_latency(plan); });
  m.barrier_latency = steps.run("barrier latency", [&] { return bench::barrier_latency(plan); });
  m.alu = steps.run("FMNMX", [&] { return bench::fmnmx_rate(plan); });
  m.shfl = steps.run("shfl", [&] { return bench::shfl_rate(plan); });
  m.fp32_latency = steps.run("FFMA latency", [&] { return bench::fp32_latency(plan); });
  m.alu_latency = steps.run("FMNMX latency", [&] { return bench::alu_latency(plan); });
  m.mufu_latency = steps.run("ex2 latency", [&] { return bench::mufu_latency(plan); });
  m.shfl_latency = steps.run("shfl latency", [&] { return bench::shfl_latency(plan); });
  run_wgmma(steps, plan, m, log);
  const bench::BranchLatencies branch = steps.run("branch latency", [&] { return bench::branch_latencies(plan); });
  m.branch_taken = branch.taken;
  m.branch_not_taken = branch.not_taken;
  m.branch_reconverge = branch.reconverge;
  if (log != nullptr)
    *log << "  branch (one warp per SM sub-partition): taken " << num(m.branch_taken.value) << ", not taken +"
         << num(m.branch_not_taken.value) << ", per-lane reconvergence +" << num(m.branch_reconverge.value)
         << " cycles\n";
  const bench::StepVariation steps_on_sm = steps.run("step variation", [&] { return bench::step_variation(plan); });
  m.step_jitter = {steps_on_sm.jitter, steps_on_sm.jitter_setup};
  m.cta_priority = {steps_on_sm.cta_priority, steps_on_sm.priority_setup};
  if (log != nullptr) {
    *log << "  identical CTAs: step sd / mean " << num(steps_on_sm.jitter) << " (2 per SM), rank slope "
         << num(steps_on_sm.cta_priority) << " (2-8 per SM)"
         << (steps_on_sm.note.empty() ? "" : "; " + steps_on_sm.note) << "\n";
    if (!steps_on_sm.jitter_setup.empty()) *log << "    jitter: " << steps_on_sm.jitter_setup << "\n";
    if (!steps_on_sm.priority_setup.empty()) *log << "    priority: " << steps_on_sm.priority_setup << "\n";
  }
  if (log != nullptr) {
    *log << "  per SM per cycle: mma f16 " << num(m.mma_f16.per_cycle) << " FLOP, bf16 " << num(m.mma_bf16.per_cycle)
         << ", FFMA " << num(m.fp32.per_cycle) << ", ex2 " << num(m.mufu_ex2.per_cycle) << ", ldmatrix "
         << num(m.ldmatrix.per_cycle) << " B, issue " << num(m.issue.per_cycle) << ", FMNMX " << num(m.alu.per_cycle)
         << ", shfl " << num(m.shfl.per_cycle) << "; mma latency " << num(m.mma_latency.value) << ", barrier "
         << num(m.barrier_latency.value) << " cycles; " << num(steps.elapsed(), 3) << " s in all\n";
    *log << "  SM clock under load: mma f16 " << clocks(m.mma_f16.clock_hz, m.mma_f16.timer_clock_hz)
         << ", FFMA " << clocks(m.fp32.clock_hz, m.fp32.timer_clock_hz) << ", ex2 "
         << clocks(m.mufu_ex2.clock_hz, m.mufu_ex2.timer_clock_hz) << ", ldmatrix "
         << clocks(m.ldmatrix.clock_hz, m.ldmatrix.timer_clock_hz) << "\n";
  }
  return m;
}

profile::CalibrationMeasurements measure_device(const Options& options) {
  require_gpu();
  const std::string ncu = find_ncu();
  Steps steps(options.log);
  const std::vector<profile::CopyCounters> copies = steps.run("Nsight Compute copy probe", [&] {
    return profile_copies(ncu, options.self_exe, copy_probe_sizes(options.quick));
  });
  profile::CalibrationMeasurements m = run_benchmarks(options.quick, options.log);
  m.copies = copies;
  m.copy_setup = copy_setup();
  const i64 wave = 16 * static_cast<i64>(m.device.sm_count);  // a grid of many small CTAs
  const LaunchTimes launch =
      steps.run("Nsight Compute launch probe", [&] { return profile_launches(ncu, options.self_exe, wave); });
  m.kernel_launch_s = launch.one_cta_s;
  m.kernel_launch_wave_s = launch.wave_s;
  m.kernel_launch_wave_ctas = launch.wave_ctas;
  m.launch_setup = launch_setup();
  if (options.log != nullptr)
    *options.log << "  empty kernel: " << num(launch.one_cta_s * 1e6) << " us (1 CTA), "
                 << num(launch.wave_s * 1e6) << " us (" << launch.wave_ctas << " CTAs)\n";
  const MergeCurve merge = steps.run("Nsight Compute merge probe", [&] {
    return profile_merges(ncu, options.self_exe, m.device.sm_count);
  });
  std::string points;
  for (const auto& [delta, share] : merge.share)
    points += (points.empty() ? "" : ", ") + num(delta) + ": " + num(100 * share, 3) + "%";
  m.merge_window = {merge.window, merge_setup(m.device.sm_count) + "; share of the second reads that cost no lookup "
                                  "by delta in SM cycles, median of " + std::to_string(kMergeRepeats) + " (" + points +
                                  "); the window merging the same share of reads at evenly spread gaps: the "
                                  "trapezoid integral of the share over delta, each share clipped at 0, up to the "
                                  "first delta where none merged"};
  if (options.log != nullptr)
    *options.log << "  L2 merge window " << num(merge.window) << " cycles (merged share by delta: " << points << ")\n";
  release_device();
  return m;
}

void release_device() {
  IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
  IOSIM_CUDA_CHECK(cudaGetLastError());
  IOSIM_CUDA_CHECK(cudaDeviceReset());
}

}  // namespace iosim::calibrate
