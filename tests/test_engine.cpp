// The timing engine: occupancy and waves, dispatch order and interleaving,
// pipelining, DRAM traffic and time of streaming kernels, write-back
// accounting across kernels, the attention algorithms' L2 behaviour, and the
// outputs (JSON fields, timeline).
#define BOOST_TEST_MODULE engine
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "sim/common/error.h"
#include "sim/count/io_count.h"
#include "sim/engine/compiler_order.h"
#include "sim/engine/engine.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/sm_model.h"
#include "sim/report/engine_report.h"
#include "tests/attention_trace.h"

using namespace iosim;
using engine::EngineOptions;
using engine::SimulationResult;
using trace::AccessKind;
using trace::RangeAccess;
using trace::RangeStep;
using workload::Pass;

namespace {

profile::HardwareProfile a100() { return profile::find_profile("a100-sxm4-40gb", profile::default_profile_dir()); }

// The A100 with a smaller L2: the same reuse regimes as the full part at a
// fraction of the simulated bytes (an L2 10x smaller is like sequences and
// batches 10x larger), which keeps these tests fast.
profile::HardwareProfile a100_with_l2(i64 bytes) {
  auto p = a100();
  p.l2_bytes = bytes;
  return p;
}

// ---------------------------------------------------------------------------
// Synthetic kernels at address level.
using StepsOf = std::function<std::vector<RangeStep>(i64 cta)>;

class SyntheticKernel final : public trace::RangeKernel {
 public:
  SyntheticKernel(std::string name, schedule::Dim3 grid, trace::CtaResources res, int stages, StepsOf steps)
      : name_(std::move(name)), grid_(grid), res_(res), stages_(stages), steps_(std::move(steps)) {}
  std::string name() const override { return name_; }
  Pass pass() const override { return Pass::fwd; }
  schedule::Dim3 grid() const override { return grid_; }
  trace::CtaResources resources() const override { return res_; }
  int pipeline_stages() const override { return stages_; }
  std::unique_ptr<trace::StepCursor> open_cta(i64 x, i64 y, i64 z) const override {
    const i64 id = (z * grid_.y + y) * grid_.x + x;
    if (log) log->push_back({id, -1});
    return std::make_unique<Cursor>(steps_(id), id, log);
  }
  std::shared_ptr<const schedule::KernelPrograms> programs() const override { return programs_; }
  // (cta, step) in the order the engine opened CTAs (step -1) and pulled steps.
  std::vector<std::pair<i64, i64>>* log = nullptr;
  std::shared_ptr<const schedule::KernelPrograms> programs_;  // none unless a test sets them

 private:
  class Cursor final : public trace::StepCursor {
   public:
    Cursor(std::vector<RangeStep> steps, i64 id, std::vector<std::pair<i64, i64>>* log)
        : steps_(std::move(steps)), id_(id), log_(log) {}
    bool next(RangeStep& out) override {
      if (at_ >= steps_.size()) return false;
      if (log_) log_->push_back({id_, static_cast<i64>(at_)});
      out = steps_[at_++];
      return true;
    }

   private:
    std::vector<RangeStep> steps_;
    size_t at_ = 0;
    i64 id_;
    std::vector<std::pair<i64, i64>>* log_;
  };
  std::string name_;
  schedule::Dim3 grid_;
  trace::CtaResources res_;
  int stages_;
  StepsOf steps_;
};

class ListSource final : public trace::KernelSource {
 public:
  void add(std::unique_ptr<trace::RangeKernel> k) { kernels_.push_back(std::move(k)); }
  workload::DType dtype() const override { return workload::DType::fp16; }
  std::vector<std::string> tensor_names() const override { return {"in", "out"}; }
  const trace::RangeKernel* next_kernel() override {
    return next_ < kernels_.size() ? kernels_[next_++].get() : nullptr;
  }

 private:
  std::vector<std::unique_ptr<trace::RangeKernel>> kernels_;
  size_t next_ = 0;
};

constexpr u64 kIn = u64{1} << 30;
constexpr u64 kOut = u64{3} << 30;

RangeAccess tile(AccessKind kind, trace::TensorIndex tensor, u64 addr, i64 bytes) {
  RangeAccess a;
  a.kind = kind;
  a.tensor = tensor;
  a.addr = addr;
  a.row_bytes = bytes;
  return a;
}

// Each CTA reads `tile_bytes` of `src` (and writes them to `dst` when copying).
std::unique_ptr<SyntheticKernel> stream_kernel(const std::string& name, i64 bytes, i64 tile_bytes, bool read,
                                               bool write, u64 src = kIn, u64 dst = kOut) {
  const i64 ctas = bytes / tile_bytes;
  return std::make_unique<SyntheticKernel>(
      name, schedule::Dim3{ctas, 1, 1}, trace::CtaResources{128, tile_bytes, 32}, 1, [=](i64 cta) {
        RangeStep s;
        const u64 off = static_cast<u64>(cta * tile_bytes);
        if (read) s.loads.push_back(tile(AccessKind::Read, 0, src + off, tile_bytes));
        if (write) s.stores.push_back(tile(AccessKind::Write, 1, dst + off, tile_bytes));
        return std::vector<RangeStep>{s};
      });
}

SimulationResult run(ListSource& source, const profile::HardwareProfile& p, EngineOptions o = {}) {
  return engine::simulate(source, p, o);
}

trace::AlgorithmTrace build(const profile::HardwareProfile& p, workload::Algorithm a, Pass pass, i64 batch, i64 heads,
                            i64 n, i64 d, bool causal = false, i64 kv_heads = 0) {
  return testing::build_attention(p, a, pass, batch, heads, n, d, causal, kv_heads);
}

i64 tensor_bytes(const trace::AlgorithmTrace& run, trace::TensorId t) { return run.tensors->info(t).bytes(); }

double rel_diff(double a, double b) { return std::abs(a - b) / std::abs(b); }

// The run's JSON as `iosim simulate --json` writes it (indent 0: one line).
std::string result_json(const SimulationResult& r, int indent = 2) {
  std::ostringstream out;
  report::JsonWriter j(out, indent);
  j.begin_object();
  report::write_result_fields(j, r);
  report::write_kernel_array(j, r);
  j.end_object();
  return out.str();
}

}  // namespace

// ---------------------------------------------------------------------------
BOOST_AUTO_TEST_CASE(streaming_copy_reads_each_byte_from_dram_once_at_dram_bandwidth) {
  const auto p = a100();
  const i64 bytes = i64{256} << 20;  // 6.4x the L2
  ListSource src;
  src.add(stream_kernel("copy", bytes, 32 * 1024, true, true));
  const auto r = run(src, p);
  const auto& k = r.kernels.at(0);
  BOOST_TEST(k.dram_read_bytes == bytes);
  BOOST_TEST(k.dram_write_bytes + k.dirty_left_bytes == bytes);  // every written byte: evicted, or still dirty
  BOOST_TEST(k.dirty_left_bytes > 0);
  BOOST_TEST(k.dirty_left_bytes <= p.l2_bytes);
  const double dram_time = static_cast<double>(k.dram_read_bytes + k.dram_write_bytes) /
                           p.dram_achievable_bandwidth_bytes_per_s();
  BOOST_TEST(rel_diff(k.seconds, dram_time) < 0.05);
  BOOST_TEST(k.bound == "dram");
}

// A profile's kernel launch time delays every kernel's first CTA: with a cold
// memory system the whole kernel shifts, so each kernel is longer by exactly
// that time and its bytes do not change.
BOOST_AUTO_TEST_CASE(the_kernel_launch_time_adds_to_every_kernel_and_moves_no_byte) {
  auto p = a100();
  const i64 bytes = i64{8} << 20;
  auto copy_twice = [&](const profile::HardwareProfile& prof) {
    ListSource src;
    src.add(stream_kernel("copy1", bytes, 32 * 1024, true, true));
    src.add(stream_kernel("copy2", bytes, 32 * 1024, true, true));
    EngineOptions o;
    o.cold_l2_per_kernel = true;
    return run(src, prof, o);
  };
  const auto base = copy_twice(p);
  p.kernel_launch_cycles = 5000;
  const auto launched = copy_twice(p);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto &a = base.kernels.at(i), &b = launched.kernels.at(i);
    BOOST_TEST(b.cycles - a.cycles == 5000.0, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(b.dram_read_bytes == a.dram_read_bytes);
    BOOST_TEST(b.dram_write_bytes == a.dram_write_bytes);
  }
  BOOST_TEST(launched.total.cycles - base.total.cycles == 10000.0, boost::test_tools::tolerance(1e-6));
}

// Dirty limit: a streaming copy ends with the limit still dirty, the
// rest written during the kernel, as the H200 does (a constant 25-27 MB for
// copies of 32 MB to 1 GB); without a limit, what stays dirty is what
// eviction has not reached.
BOOST_AUTO_TEST_CASE(a_dirty_limit_leaves_that_much_dirty_after_a_streaming_copy) {
  const auto p = a100();
  const i64 bytes = i64{256} << 20;
  auto copy = [&](std::optional<double> limit) {
    ListSource src;
    src.add(stream_kernel("copy", bytes, 32 * 1024, true, true));
    EngineOptions o;
    o.l2_dirty_limit_bytes = limit;
    return run(src, p, o).kernels.at(0);
  };
  const auto none = copy(std::nullopt);  // the profile's: none
  const double limit = 8 << 20;
  const auto limited = copy(limit);
  BOOST_TEST(limited.dram_write_bytes + limited.dirty_left_bytes == bytes);
  // Within one request of the limit: it is enforced as each request arrives.
  BOOST_TEST(std::abs(static_cast<double>(limited.dirty_left_bytes) - limit) <= 32 * 1024);
  BOOST_TEST(limited.l2.early_writeback_sectors > 0);
  BOOST_TEST(none.l2.early_writeback_sectors == 0);
  BOOST_TEST(limited.dram_write_bytes > none.dram_write_bytes);
  BOOST_TEST(rel_diff(limited.seconds, none.seconds) < 0.05);  // nearly the same DRAM traffic
}

BOOST_AUTO_TEST_CASE(rereading_a_working_set_smaller_than_l2_hits_in_the_next_kernel) {
  const auto p = a100();
  const i64 bytes = i64{16} << 20;
  for (const bool cold : {false, true}) {
    ListSource src;
    src.add(stream_kernel("first", bytes, 32 * 1024, true, false));
    src.add(stream_kernel("again", bytes, 32 * 1024, true, false));
    EngineOptions o;
    o.cold_l2_per_kernel = cold;
    const auto r = run(src, p, o);
    const auto& again = r.kernels.at(1);
    if (cold) {
      BOOST_TEST(again.dram_read_bytes == bytes);  // ncu --cache-control all: a flushed L2
    } else {
      BOOST_TEST(again.dram_read_bytes == 0);  // L2 contents carry over, as on hardware
      BOOST_TEST(again.l2.total().hit_sectors == bytes / 32);
    }
  }
}

BOOST_AUTO_TEST_CASE(rereading_a_working_set_twice_l2_misses_under_lru) {
  const auto p = a100();
  const i64 bytes = 2 * p.l2_bytes;
  ListSource src;
  src.add(stream_kernel("first", bytes, 64 * 1024, true, false));
  src.add(stream_kernel("again", bytes, 64 * 1024, true, false));
  const auto r = run(src, p);
  BOOST_TEST(r.kernels.at(1).dram_read_bytes == bytes);
  BOOST_TEST(r.kernels.at(1).l2.total().hit_sectors == 0);
}

BOOST_AUTO_TEST_CASE(dirty_lines_at_kernel_end_are_dirty_left_not_dram_writes) {
  const auto p = a100();
  const i64 written = i64{8} << 20;
  ListSource src;
  src.add(stream_kernel("write", written, 32 * 1024, false, true));
  src.add(stream_kernel("stream", 2 * p.l2_bytes, 64 * 1024, true, false, u64{5} << 30));
  const auto r = run(src, p);
  const auto& w = r.kernels.at(0);
  BOOST_TEST(w.dram_write_bytes == 0);
  BOOST_TEST(w.dirty_left_bytes == written);
  // The next kernel evicts them: they are its DRAM writes, as ncu would count them.
  const auto& s = r.kernels.at(1);
  BOOST_TEST(s.dram_write_bytes == written);
  BOOST_TEST(s.dirty_left_bytes == 0);
}

BOOST_AUTO_TEST_CASE(cold_l2_per_kernel_drops_dirty_data_before_each_kernel) {
  const auto p = a100();
  ListSource src;
  src.add(stream_kernel("write", i64{8} << 20, 32 * 1024, false, true));
  src.add(stream_kernel("stream", 2 * p.l2_bytes, 64 * 1024, true, false, u64{5} << 30));
  EngineOptions o;
  o.cold_l2_per_kernel = true;
  const auto r = run(src, p, o);
  BOOST_TEST(r.kernels.at(1).flushed_dirty_bytes == (i64{8} << 20));
  BOOST_TEST(r.kernels.at(1).dram_write_bytes == 0);
}

BOOST_AUTO_TEST_CASE(compute_only_kernel_runs_at_the_per_sm_tensor_rate) {
  const auto p = a100();
  const i64 flops = i64{1} << 30;
  ListSource src;
  src.add(std::make_unique<SyntheticKernel>("mma", schedule::Dim3{p.sm_count, 1, 1}, trace::CtaResources{128, 0, 32},
                                            1, [=](i64) {
                                              RangeStep s;
                                              s.compute.tensor_flops = flops;
                                              return std::vector<RangeStep>{s};
                                            }));
  const auto r = run(src, p);
  const double expected = static_cast<double>(flops) * static_cast<double>(p.sm_count) / p.tensor_fp16_flops_per_s;
  BOOST_TEST(rel_diff(r.kernels.at(0).seconds, expected) < 1e-9);
  BOOST_TEST(r.kernels.at(0).bound == "tensor");
}

BOOST_AUTO_TEST_CASE(ctas_on_one_sm_share_its_pipes) {
  const auto p = a100();
  const i64 flops = i64{1} << 28;
  auto kernel = [&](i64 ctas) {
    ListSource src;
    src.add(std::make_unique<SyntheticKernel>("mma", schedule::Dim3{ctas, 1, 1}, trace::CtaResources{128, 0, 32}, 1,
                                              [=](i64) {
                                                RangeStep s;
                                                s.compute.tensor_flops = flops;
                                                return std::vector<RangeStep>{s};
                                              }));
    return run(src, p).kernels.at(0).seconds;
  };
  // Two CTAs per SM run concurrently (occupancy allows many) but take twice as long.
  BOOST_TEST(rel_diff(kernel(2 * p.sm_count), 2 * kernel(p.sm_count)) < 1e-9);
}

BOOST_AUTO_TEST_CASE(pipelining_overlaps_the_next_steps_loads_with_compute) {
  const auto p = a100();
  auto steps = [](i64 cta) {
    std::vector<RangeStep> v;
    for (int k = 0; k < 16; ++k) {
      RangeStep s;
      s.loads.push_back(tile(AccessKind::Read, 0, kIn + static_cast<u64>((cta * 16 + k) * 16384), 16384));
      s.compute.tensor_flops = i64{1} << 22;
      v.push_back(s);
    }
    return v;
  };
  double t[3] = {};
  for (int stages = 1; stages <= 2; ++stages) {
    ListSource src;
    src.add(std::make_unique<SyntheticKernel>("k", schedule::Dim3{p.sm_count, 1, 1},
                                              trace::CtaResources{128, 2 * 16384, 32}, stages, steps));
    t[stages] = run(src, p).kernels.at(0).seconds;
  }
  const double compute = 16.0 * static_cast<double>(i64{1} << 22) * static_cast<double>(p.sm_count) /
                         p.tensor_fp16_flops_per_s;
  BOOST_TEST(t[2] < t[1]);
  BOOST_TEST(t[2] >= compute);
  BOOST_TEST(t[1] > compute + 15 * p.dram_latency_cycles / p.sm_clock_hz);  // every load's latency exposed
}

BOOST_AUTO_TEST_CASE(ctas_are_dispatched_in_launch_order_and_their_requests_interleave) {
  const auto p = a100();
  std::vector<std::pair<i64, i64>> log;
  auto k = std::make_unique<SyntheticKernel>(
      "k", schedule::Dim3{4, 3, 2}, trace::CtaResources{128, 0, 32}, 1, [](i64 cta) {
        std::vector<RangeStep> v(4);
        for (int s = 0; s < 4; ++s) {
          v[s].loads.push_back(tile(AccessKind::Read, 0, kIn + static_cast<u64>((cta * 4 + s) * 4096), 4096));
          v[s].compute.fp32_ops = 1000;
        }
        return v;
      });
  k->log = &log;
  ListSource src;
  src.add(std::move(k));
  run(src, p);
  std::vector<i64> opened;
  for (const auto& [cta, step] : log)
    if (step < 0) opened.push_back(cta);
  BOOST_TEST(opened.size() == 24u);
  for (size_t i = 0; i < opened.size(); ++i) BOOST_TEST(opened[i] == static_cast<i64>(i));  // x fastest, then y, z
  // All 24 CTAs fit at once: every CTA's step 1 is pulled before any CTA's step 3.
  size_t last_step1 = 0, first_step3 = log.size();
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i].second == 1) last_step1 = i;
    if (log[i].second == 3) first_step3 = std::min(first_step3, i);
  }
  BOOST_TEST(last_step1 < first_step3);
}

BOOST_AUTO_TEST_CASE(occupancy_limits_follow_the_profile) {
  const auto p = a100();
  const auto o = engine::compute_occupancy(p, {128, 80 * 1024, 255}, 1000, "k");
  BOOST_TEST(o.ctas_per_sm == 2);  // 2 x (80 KiB + 1 KiB reserved) <= 164 KiB; 255 regs x 128 threads also allow 2
  BOOST_TEST(o.waves == (1000 + 2 * p.sm_count - 1) / (2 * p.sm_count));
  const auto regs = engine::compute_occupancy(p, {256, 0, 255}, 10, "k");
  BOOST_TEST(regs.ctas_per_sm == 1);
  BOOST_TEST(regs.limiter == "registers");
  const auto threads = engine::compute_occupancy(p, {32, 0, 16}, 10, "k");
  BOOST_TEST(threads.ctas_per_sm == p.max_ctas_per_sm);
  BOOST_TEST(threads.limiter == "max_ctas");
  BOOST_CHECK_THROW(engine::compute_occupancy(p, {128, p.smem_per_block_bytes + 1, 32}, 10, "k"), InputError);
}

namespace {

// The first kernel of `algo` (128 x 128 tiles) on B x H heads of N tokens at
// head dim d, on the H100 profile with one key overridden.
engine::KernelResult h100_kernel(workload::Algorithm algo, i64 batch, i64 heads, i64 seq, i64 d,
                                 const std::string& key, const std::string& value) {
  const std::string path = profile::default_profile_dir() + "/h100-sxm5-80gb.yaml";
  const auto p = profile::load_profile(path, {{key, value}});
  workload::Problem prob;
  prob.batch = batch;
  prob.heads = prob.kv_heads = heads;
  prob.seq_q = prob.seq_k = seq;
  prob.head_dim = d;
  trace::TraceOptions o;
  o.algorithm = algo;
  o.block_m = 128;
  o.block_n = 128;
  o.sram_limit_bytes = p.smem_per_block_bytes;
  return engine::simulate(trace::build_trace(prob, o), p, {}).kernels.at(0);
}

double h100_kernel_seconds(workload::Algorithm algo, i64 batch, i64 heads, i64 seq, i64 d, const std::string& key,
                           const std::string& value) {
  return h100_kernel(algo, batch, heads, seq, d, key, value).seconds;
}

}  // namespace

// A kernel that issues wgmma (FA3) runs at a clock between the profile's
// clock without tensor work (clock_memory_load) and its clock under wgmma
// flat out, by the share of time its wgmmas keep the tensor pipe busy; one
// that issues mma.sync (FA2) at the mma.sync clock, whatever the wgmma
// clock says.
BOOST_AUTO_TEST_CASE(a_kernel_that_issues_wgmma_runs_between_the_idle_and_the_wgmma_clock) {
  auto run = [](workload::Algorithm algo, const char* clock) {
    return h100_kernel(algo, 2, 16, 4096, 128, "sm_pipes.clock_wgmma_load", clock);
  };
  const double idle_hz = 1976.19e6;  // the profile's clock_memory_load
  const auto same = run(workload::Algorithm::fa3, "1976.19 MHz");
  BOOST_TEST(same.sm_clock_hz == idle_hz, boost::test_tools::tolerance(1e-9));
  const auto half = run(workload::Algorithm::fa3, "988.095 MHz");
  BOOST_TEST(half.sm_clock_hz < 0.9 * idle_hz);  // busy most of the time: well below the idle clock
  BOOST_TEST(half.sm_clock_hz > 0.5 * idle_hz);  // but not always: above the flat-out one
  // The time scales with the clock (compute-bound).
  BOOST_TEST(half.seconds / same.seconds == idle_hz / half.sm_clock_hz, boost::test_tools::tolerance(0.02));
  const auto fa2_slow = run(workload::Algorithm::fa2, "900 MHz"), fa2_fast = run(workload::Algorithm::fa2, "1800 MHz");
  BOOST_TEST(fa2_slow.seconds == fa2_fast.seconds);
  BOOST_TEST(fa2_slow.sm_clock_hz == 1874.3e6, boost::test_tools::tolerance(1e-9));  // clock_tensor_load
}

// One SM pulls its loads from L2 no faster than the profile's measured
// sm_pipes.l2_load_per_sm: at a few bytes per cycle the loads, not the
// products, set a kernel's time.
BOOST_AUTO_TEST_CASE(an_sms_loads_arrive_no_faster_than_its_l2_port) {
  auto seconds = [](const char* rate) {
    return h100_kernel_seconds(workload::Algorithm::fa2, 1, 16, 2048, 64, "sm_pipes.l2_load_per_sm", rate);
  };
  const double fast = seconds("1000 B/cycle"), slow = seconds("2 B/cycle");
  BOOST_TEST(slow > 3 * fast);
  BOOST_TEST(seconds("127 B/cycle") >= fast);
}

// The port delivers a load's bytes after its first ones arrive: an idle
// port's transfer adds to the memory's latency, it does not hide under it.
// With every latency at 20000 cycles the first loads' transfer at 8 B/cycle
// (kilobytes per SM) would hide entirely under a max(); it adds.
BOOST_AUTO_TEST_CASE(an_idle_ports_transfer_follows_the_first_bytes_latency) {
  auto run = [](const char* rate) {
    const auto p = profile::load_profile(profile::default_profile_dir() + "/h100-sxm5-80gb.yaml",
                                         {{"sm_pipes.l2_load_per_sm", rate},
                                          {"latency.l2_near", "20000 cycles"},
                                          {"latency.l2_far", "20000 cycles"},
                                          {"latency.dram", "20000 cycles"}});
    workload::Problem prob;
    prob.batch = 1;
    prob.heads = prob.kv_heads = 132;  // one CTA per SM, one key block each
    prob.seq_q = prob.seq_k = 128;
    prob.head_dim = 64;
    trace::TraceOptions o;
    o.algorithm = workload::Algorithm::fa2;
    o.block_m = o.block_n = 128;
    o.sram_limit_bytes = p.smem_per_block_bytes;
    return engine::simulate(trace::build_trace(prob, o), p, {}).kernels.at(0).cycles;
  };
  const double extra = run("8 B/cycle") - run("1000000 B/cycle");
  BOOST_TEST(extra > 1000.0);
  BOOST_TEST(extra < 8000.0);  // at most the 48 KiB per SM at 8 B/cycle and a little
}

BOOST_AUTO_TEST_CASE(tiling_with_one_vs_two_ctas_per_sm_halves_the_waves) {
  const auto p = a100();
  workload::Problem prob;
  prob.batch = 1;
  prob.heads = prob.kv_heads = 27;
  prob.seq_q = prob.seq_k = 4096;
  prob.head_dim = 64;
  i64 per_sm[2] = {}, waves[2] = {};
  double seconds[2] = {};
  // Shared memory (64 + 2 Bc) x 64 x 2 B: 88 KiB vs 72 KiB (1 vs 2 CTAs in 164 KiB); 4 warps
  // (Fa2ForwardSchedule::warps() for 64-row tiles) keep registers from limiting first.
  const i64 block_n[2] = {320, 256};
  for (int i = 0; i < 2; ++i) {
    trace::TraceOptions o;
    o.algorithm = workload::Algorithm::fa2;
    o.block_m = 64;
    o.block_n = block_n[i];
    o.sram_limit_bytes = p.smem_per_block_bytes;
    const auto r = engine::simulate(trace::build_trace(prob, o), p, {});
    per_sm[i] = r.kernels.at(0).occupancy.ctas_per_sm;
    waves[i] = r.kernels.at(0).occupancy.waves;
    seconds[i] = r.kernels.at(0).seconds;
  }
  const i64 ctas = 64 * 27;
  BOOST_TEST(per_sm[0] == 1);
  BOOST_TEST(per_sm[1] == 2);
  BOOST_TEST(waves[0] == (ctas + p.sm_count - 1) / p.sm_count);
  BOOST_TEST(waves[1] == (ctas + 2 * p.sm_count - 1) / (2 * p.sm_count));
  BOOST_TEST(waves[0] == 2 * waves[1]);
  BOOST_TEST(seconds[0] > 0);
  BOOST_TEST(seconds[1] > 0);
}

// ---------------------------------------------------------------------------
// Attention algorithms.

BOOST_AUTO_TEST_CASE(sm_to_l2_request_bytes_equal_the_io_count) {
  const auto p = a100();
  using A = workload::Algorithm;
  struct Case {
    A a;
    Pass pass;
    bool causal;
    i64 kv_heads;
  };
  const Case cases[] = {{A::fa2, Pass::fwdbwd, false, 0}, {A::fa2, Pass::fwdbwd, true, 2}, {A::fa1, Pass::fwdbwd, false, 0},
                        {A::fa1, Pass::fwdbwd, true, 0},  {A::fa1_swapped, Pass::fwd, false, 0},
                        {A::standard, Pass::fwdbwd, true, 2}, {A::standard_eager, Pass::fwdbwd, true, 2}};
  for (const Case& c : cases) {
    const auto tr = build(p, c.a, c.pass, 2, 4, 512, 64, c.causal, c.kv_heads);
    const auto counts = count::count_run(tr);
    const auto r = engine::simulate(tr, p, {});
    BOOST_REQUIRE_EQUAL(r.kernels.size(), counts.kernels.size());
    for (size_t i = 0; i < r.kernels.size(); ++i) {
      BOOST_TEST(r.kernels[i].request_read_bytes() == counts.kernels[i].io.read_bytes);
      BOOST_TEST(r.kernels[i].request_write_bytes() == counts.kernels[i].io.write_bytes);
      BOOST_TEST(r.kernels[i].request_reduce_bytes() == counts.kernels[i].io.reduce_bytes);
      BOOST_TEST(r.kernels[i].compute.tensor_flops == counts.kernels[i].io.tensor_flops);
    }
  }
}

BOOST_AUTO_TEST_CASE(tile_fast_path_gives_the_line_by_line_results_for_every_algorithm) {
  const auto p = a100_with_l2(i64{2} << 20);
  using A = workload::Algorithm;
  for (const A a : {A::fa2, A::fa1, A::standard}) {
    const auto tr = build(p, a, Pass::fwdbwd, 2, 4, 1024, 64, a == A::fa2);
    EngineOptions fast, slow;
    slow.l2_tile_fast_path = false;
    const auto x = engine::simulate(tr, p, fast), y = engine::simulate(tr, p, slow);
    for (size_t i = 0; i < x.kernels.size(); ++i) {
      const auto& kx = x.kernels[i];
      const auto& ky = y.kernels[i];
      BOOST_TEST(kx.l2.total().hit_sectors == ky.l2.total().hit_sectors);
      BOOST_TEST(kx.l2.total().lookup_hit_sectors == ky.l2.total().lookup_hit_sectors);
      BOOST_TEST(kx.l2.total().merged_requests == ky.l2.total().merged_requests);
      BOOST_TEST(kx.dram_read_bytes == ky.dram_read_bytes);
      BOOST_TEST(kx.dram_write_bytes == ky.dram_write_bytes);
      BOOST_TEST(kx.dirty_left_bytes == ky.dirty_left_bytes);
      BOOST_TEST(kx.cycles == ky.cycles);
    }
    BOOST_TEST(y.total.l2.fast_path_requests == 0);
  }
}

// The 16-way sets' LRU order and specialised line loop change no result:
// every algorithm, warm and cold L2, LRU and bimodal insertion, with a dirty
// limit, against the general loop (l2_ordered_sets = false), every counter of
// every kernel.
BOOST_AUTO_TEST_CASE(ordered_sets_give_the_reference_loop_results_for_every_algorithm) {
  const auto p = a100_with_l2(i64{2} << 20);
  using A = workload::Algorithm;
  for (const A a : {A::fa2, A::fa1, A::standard}) {
    const auto tr = build(p, a, Pass::fwdbwd, 2, 4, 1024, 64, a == A::fa2, a == A::standard ? 2 : 0);
    for (int variant = 0; variant < 3; ++variant) {
      EngineOptions ordered;
      ordered.cold_l2_per_kernel = variant == 1;
      if (variant == 2) {
        ordered.l2_replacement = "bip";
        ordered.l2_dirty_limit_bytes = 512 * 1024;
      }
      EngineOptions plain = ordered;
      plain.l2_ordered_sets = false;
      const auto x = engine::simulate(tr, p, ordered), y = engine::simulate(tr, p, plain);
      BOOST_REQUIRE_EQUAL(x.kernels.size(), y.kernels.size());
      for (size_t i = 0; i < x.kernels.size(); ++i) {
        const auto& kx = x.kernels[i];
        const auto& ky = y.kernels[i];
        for (size_t k = 0; k < kx.l2.kind.size(); ++k) {
          BOOST_TEST(kx.l2.kind[k].hit_sectors == ky.l2.kind[k].hit_sectors);
          BOOST_TEST(kx.l2.kind[k].lookup_hit_sectors == ky.l2.kind[k].lookup_hit_sectors);
          BOOST_TEST(kx.l2.kind[k].merged_requests == ky.l2.kind[k].merged_requests);
        }
        BOOST_REQUIRE_EQUAL(kx.l2.tensor.size(), ky.l2.tensor.size());
        for (size_t t = 0; t < kx.l2.tensor.size(); ++t) {
          BOOST_TEST(kx.l2.tensor[t].hit_sectors == ky.l2.tensor[t].hit_sectors);
          BOOST_TEST(kx.l2.tensor[t].fetch_sectors == ky.l2.tensor[t].fetch_sectors);
          BOOST_TEST(kx.l2.tensor[t].writeback_sectors == ky.l2.tensor[t].writeback_sectors);
        }
        BOOST_TEST(kx.l2.early_writeback_sectors == ky.l2.early_writeback_sectors);
        BOOST_TEST(kx.dram_read_bytes == ky.dram_read_bytes);
        BOOST_TEST(kx.dram_write_bytes == ky.dram_write_bytes);
        BOOST_TEST(kx.dirty_left_bytes == ky.dirty_left_bytes);
        BOOST_TEST(kx.flushed_dirty_bytes == ky.flushed_dirty_bytes);
        BOOST_TEST(kx.cycles == ky.cycles);
        BOOST_TEST(kx.busy.dram == ky.busy.dram);
      }
      BOOST_TEST(x.total.l2.line_visits == y.total.l2.line_visits);  // the same lines, visited another way
    }
  }
}

// Set sampling 1/16 against the exact model on every algorithm: DRAM bytes,
// hit rate and time within 2%; requested bytes exact.
BOOST_AUTO_TEST_CASE(set_sampling_stays_close_to_the_exact_model_for_every_algorithm) {
  const auto p = a100_with_l2(i64{4} << 20);
  using A = workload::Algorithm;
  for (const A a : {A::fa2, A::fa1, A::standard}) {
    const auto tr = build(p, a, Pass::fwdbwd, 2, 8, 2048, 64, a == A::fa2);
    EngineOptions exact, sampled;
    exact.l2_copies = false;  // the model set sampling runs (one slot per line)
    sampled.l2_set_sampling = 16;
    const auto x = engine::simulate(tr, p, exact), y = engine::simulate(tr, p, sampled);
    BOOST_TEST(!y.options.l2_copies.value());
    const auto tx = x.total.l2.total(), ty = y.total.l2.total();
    BOOST_TEST(ty.bytes == tx.bytes);
    BOOST_TEST(ty.sectors == tx.sectors);
    BOOST_TEST(rel_diff(static_cast<double>(y.total.dram_read_bytes), static_cast<double>(x.total.dram_read_bytes)) < 0.02);
    BOOST_TEST(rel_diff(static_cast<double>(y.total.dram_write_bytes + y.total.dirty_left_bytes),
                        static_cast<double>(x.total.dram_write_bytes + x.total.dirty_left_bytes)) < 0.02);
    BOOST_TEST(std::abs(static_cast<double>(ty.hit_sectors - tx.hit_sectors) / static_cast<double>(tx.sectors)) < 0.02);
    BOOST_TEST(rel_diff(y.total.seconds, x.total.seconds) < 0.02);
    BOOST_TEST(y.total.l2.line_visits < x.total.l2.line_visits / 8);
  }
}

// With a dirty limit, set sampling keeps the limit on the whole cache (each
// sampled set holds 1 / S of the dirty data): DRAM writes and the dirty bytes
// left stay within 2% of the exact model's.
BOOST_AUTO_TEST_CASE(set_sampling_keeps_the_dirty_limit) {
  const auto p = a100_with_l2(i64{4} << 20);
  const auto tr = build(p, workload::Algorithm::standard, Pass::fwd, 2, 8, 2048, 64);
  EngineOptions exact, sampled;
  exact.l2_copies = false;
  exact.l2_dirty_limit_bytes = sampled.l2_dirty_limit_bytes = 1 << 20;
  sampled.l2_set_sampling = 16;
  const auto x = engine::simulate(tr, p, exact), y = engine::simulate(tr, p, sampled);
  BOOST_TEST(x.total.l2.early_writeback_sectors > 0);
  BOOST_TEST(rel_diff(static_cast<double>(y.total.dram_write_bytes), static_cast<double>(x.total.dram_write_bytes)) < 0.02);
  BOOST_TEST(rel_diff(static_cast<double>(y.total.dirty_left_bytes), static_cast<double>(x.total.dirty_left_bytes)) < 0.02);
  BOOST_TEST(static_cast<double>(x.total.dirty_left_bytes) <= (1 << 20) + 64 * 1024);
}

// Standard attention with S and P 32x the L2: DRAM traffic is the analytic
// count (S and P written and read once; Q, K, V read and O written once).
BOOST_AUTO_TEST_CASE(standard_attention_dram_bytes_match_the_analytic_count_when_s_exceeds_l2) {
  const auto p = a100_with_l2(i64{2} << 20);
  const auto tr = build(p, workload::Algorithm::standard, Pass::fwd, 1, 8, 2048, 64);
  using T = trace::TensorId;
  const double reads = static_cast<double>(tensor_bytes(tr, T::Q) + tensor_bytes(tr, T::K) + tensor_bytes(tr, T::V) +
                                           tensor_bytes(tr, T::S) + tensor_bytes(tr, T::P));
  const double writes = static_cast<double>(tensor_bytes(tr, T::S) + tensor_bytes(tr, T::P) + tensor_bytes(tr, T::O));
  BOOST_TEST(tensor_bytes(tr, T::S) >= 32 * p.l2_bytes);
  for (const bool cold : {false, true}) {
    EngineOptions o;
    o.cold_l2_per_kernel = cold;
    const auto r = engine::simulate(tr, p, o);
    // Dirty bytes left in L2 are written back later (after the run, or flushed
    // before the next kernel when cold): each written byte reaches DRAM once.
    i64 eventually_written = r.total.dram_write_bytes + r.total.dirty_left_bytes;
    if (cold) {
      eventually_written = r.total.dram_write_bytes;
      for (const auto& k : r.kernels) eventually_written += k.dirty_left_bytes;
    }
    BOOST_TEST(rel_diff(static_cast<double>(r.total.dram_read_bytes), reads) < 0.02);
    BOOST_TEST(rel_diff(static_cast<double>(eventually_written), writes) < 0.02);
  }
}

// B*H = 16, N = 4096 on the A100: all Q-block CTAs of a head run together, so
// each K/V tile comes from DRAM once and from L2 for the other CTAs.
BOOST_AUTO_TEST_CASE(fa2_forward_with_few_heads_reads_q_k_v_from_dram_about_once) {
  const auto p = a100();
  const auto tr = build(p, workload::Algorithm::fa2, Pass::fwd, 1, 16, 4096, 64);
  using T = trace::TensorId;
  const i64 qkv = tensor_bytes(tr, T::Q) + tensor_bytes(tr, T::K) + tensor_bytes(tr, T::V);
  const auto r = engine::simulate(tr, p, {});
  const auto& k = r.kernels.at(0);
  BOOST_TEST(rel_diff(static_cast<double>(k.dram_read_bytes), static_cast<double>(qkv)) < 0.02);
  // SRAM <-> L2 requests follow Theta(N^2 d^2 / M): Q once, K and V once per query block.
  const i64 m_blocks = (4096 + tr.tiling.block_m - 1) / tr.tiling.block_m;
  BOOST_TEST(k.request_read_bytes() ==
             tensor_bytes(tr, T::Q) + m_blocks * (tensor_bytes(tr, T::K) + tensor_bytes(tr, T::V)));
  BOOST_TEST(k.request_read_bytes() > 20 * k.dram_read_bytes);
}

// Long sequences: a head's K and V (16384 x 64 x 2 x 2 B = 4 MiB) no longer fit
// in the L2 beside everything else, and the head's CTAs span several waves, so
// later CTAs re-read K/V from DRAM. (A 4 MiB L2 stands in for the 40 MB part
// at 10x the sequence length.)
BOOST_AUTO_TEST_CASE(fa2_forward_with_many_heads_and_long_sequences_rereads_k_v_from_dram) {
  const auto p = a100_with_l2(i64{4} << 20);
  const auto tr = build(p, workload::Algorithm::fa2, Pass::fwd, 2, 16, 16384, 64);
  using T = trace::TensorId;
  const i64 qkv = tensor_bytes(tr, T::Q) + tensor_bytes(tr, T::K) + tensor_bytes(tr, T::V);
  const auto r = engine::simulate(tr, p, {});
  BOOST_TEST(r.kernels.at(0).dram_read_bytes > 3 * qkv / 2);
  BOOST_TEST(r.kernels.at(0).l2.tensor.at(static_cast<size_t>(T::K)).fetch_sectors * 32 > tensor_bytes(tr, T::K));
}

// FA2's dQ conversion writes each trip's dQ right after that trip's loads
// (kernels/fa2/fa2_rows.cuh), so the L2 sees its writes between its reads.
// With every CTA resident at once and a cold L2 much smaller than the
// kernel's traffic, the lines left at the end are then a mix of the last
// rounds' reads and writes (3 MiB of 4 here, the rounds of the CTAs running
// nearly in step); with the stores after all of a step's loads instead, every
// CTA's reads came first and the L2 ended holding nothing but dirty dQ.
BOOST_AUTO_TEST_CASE(fa2_convert_dq_writes_between_its_reads) {
  auto p = a100_with_l2(i64{4} << 20);
  p.l2_dirty_limit_bytes = std::numeric_limits<double>::infinity();
  const auto tr = build(p, workload::Algorithm::fa2, Pass::bwd, 1, 16, 4096, 64);
  EngineOptions o;
  o.cold_l2_per_kernel = true;
  const auto r = engine::simulate(tr, p, o);
  const auto k = std::find_if(r.kernels.begin(), r.kernels.end(),
                              [](const auto& x) { return x.name == "fa2_bwd_convert_dq"; });
  BOOST_REQUIRE(k != r.kernels.end());
  const i64 dq = tensor_bytes(tr, trace::TensorId::dQ);
  BOOST_REQUIRE(dq >= 2 * p.l2_bytes);
  BOOST_TEST(k->dirty_left_bytes > p.l2_bytes / 5);
  BOOST_TEST(k->dirty_left_bytes < p.l2_bytes * 9 / 10);
  BOOST_TEST(k->dram_write_bytes + k->dirty_left_bytes == dq);
}

// FA1's inner loop reads and writes O_i, l_i, m_i of its head in global memory
// every step; with 16 heads at once each head's O (2048 x 64 x 2 B = 256 KiB)
// stays in L2, so none of that traffic reaches DRAM.
BOOST_AUTO_TEST_CASE(fa1_inner_loop_o_l_m_traffic_hits_in_l2_when_a_heads_o_fits) {
  const auto p = a100();
  const auto tr = build(p, workload::Algorithm::fa1, Pass::fwd, 1, 16, 2048, 64);
  const auto r = engine::simulate(tr, p, {});
  const auto& k = r.kernels.at(0);
  using T = trace::TensorId;
  for (const T t : {T::O, T::l, T::m}) {
    const auto& c = k.l2.tensor.at(static_cast<size_t>(t));
    BOOST_TEST(c.read_bytes > 5 * tensor_bytes(tr, t));  // re-read every outer step
    BOOST_TEST(c.fetch_sectors == 0);                   // written first, then always in L2
    const double hit_rate = static_cast<double>(c.hit_sectors) / static_cast<double>(c.hit_sectors + c.miss_sectors);
    BOOST_TEST(hit_rate > 0.9);
  }
}

// A kernel whose program is nothing but independent MMAs, with many warps on
// every SM, is bound by the tensor pipes; a lone small CTA by latency.
BOOST_AUTO_TEST_CASE(independent_mmas_are_tensor_bound_and_a_lone_small_cta_latency_bound) {
  const auto p = a100();
  auto progs = std::make_shared<schedule::KernelPrograms>();
  schedule::ProgramBuilder b("independent mma");
  for (int i = 0; i < 256; ++i) b.mma(schedule::ProgramBuilder::kNone, schedule::ProgramBuilder::kNone, schedule::ProgramBuilder::kNone);
  progs->programs.push_back(b.take());
  progs->warps = 8;
  progs->tensor = true;
  auto mma = std::make_unique<SyntheticKernel>("mma", schedule::Dim3{4 * p.sm_count, 1, 1},
                                               trace::CtaResources{256, 0, 64}, 1, [](i64) {
                                                 RangeStep s;
                                                 s.compute.program = 0;
                                                 return std::vector<RangeStep>(4, s);
                                               });
  mma->programs_ = progs;
  ListSource src;
  src.add(std::move(mma));
  const auto r = run(src, p).kernels.at(0);
  BOOST_TEST(r.sm_model);
  BOOST_TEST(r.bound == "tensor", r.bound_reason);
  ListSource lone;
  lone.add(stream_kernel("one", 64 * 1024, 4096, true, false));
  BOOST_TEST(run(lone, p).kernels.at(0).bound == "latency_occupancy");
}

// ---------------------------------------------------------------------------
// Outputs.

BOOST_AUTO_TEST_CASE(json_fields_hold_the_required_keys) {
  const auto p = a100();
  const auto r = engine::simulate(build(p, workload::Algorithm::fa2, Pass::fwdbwd, 1, 2, 256, 64), p, {});
  const std::string s = result_json(r);
  for (const char* key : {"\"l2\"", "\"hits\"", "\"misses\"", "\"hit_rate\"", "\"dram\"", "\"read_bytes\"",
                          "\"write_bytes\"", "\"dirty_left_bytes\"", "\"time\"", "\"seconds\"", "\"cycles\"",
                          "\"occupancy\"", "\"ctas_per_sm\"", "\"waves\"", "\"bound\"", "\"lookups\""})
    BOOST_TEST(s.find(key) != std::string::npos, key);
  // Every kernel object has them too: count one key per object.
  size_t n = 0;
  for (size_t at = s.find("\"ctas_per_sm\""); at != std::string::npos; at = s.find("\"ctas_per_sm\"", at + 1)) ++n;
  BOOST_TEST(n == r.kernels.size() + 1);
}

BOOST_AUTO_TEST_CASE(text_table_lists_every_kernel_the_total_and_the_bound_reasons) {
  const auto p = a100();
  const auto r = engine::simulate(build(p, workload::Algorithm::fa2, Pass::fwdbwd, 1, 2, 256, 64), p, {});
  std::ostringstream out;
  report::print_result_table(out, r);
  const std::string s = out.str();
  for (const auto& k : r.kernels) {
    BOOST_TEST(s.find(k.name + " ") != std::string::npos, k.name);
    BOOST_TEST(s.find(k.bound_reason) != std::string::npos);
  }
  BOOST_TEST(s.find("total ") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(timeline_is_a_chrome_trace_with_a_track_per_sm_and_caps_its_events) {
  const auto p = a100();
  const auto tr = build(p, workload::Algorithm::fa2, Pass::fwd, 1, 2, 1024, 64);
  const std::string path = "test_engine_timeline.json";
  for (const i64 cap : {i64{1000000}, i64{50}}) {
    EngineOptions o;
    o.timeline_path = path;
    o.timeline_max_events = cap;
    const auto r = engine::simulate(tr, p, o);
    std::ifstream f(path);
    const std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    BOOST_TEST(s.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0) == 0u);
    BOOST_TEST(s.find("\"name\":\"SM 0\"") != std::string::npos);
    BOOST_TEST(s.find("\"name\":\"load\"") != std::string::npos);
    BOOST_TEST(s.substr(s.size() - 3) == "}}\n");
    if (cap == 50) {
      BOOST_TEST(!r.timeline_note.empty());
      BOOST_TEST(s.find("\"note\":\"timeline truncated") != std::string::npos);
    } else {
      BOOST_TEST(r.timeline_note.empty());
      BOOST_TEST(s.find("\"name\":\"compute\"") != std::string::npos);
      BOOST_TEST(s.find("\"name\":\"fa2_fwd (0,0,0)\"") != std::string::npos);
      BOOST_TEST(s.find("\"name\":\"kernels\"") != std::string::npos);
    }
  }
  std::remove(path.c_str());
}

// ---------------------------------------------------------------------------
// How compute is timed: warp programs on the SM model for our kernels, the
// machine's rates for steps without a program.

namespace {

// `ctas` CTAs of `steps` compute-only steps (no loads or stores), no programs.
std::unique_ptr<SyntheticKernel> compute_kernel(const std::string& name, i64 ctas, i64 steps, i64 flops, i64 fp32 = 0,
                                                i64 sfu = 0) {
  return std::make_unique<SyntheticKernel>(name, schedule::Dim3{ctas, 1, 1}, trace::CtaResources{128, 0, 32}, 1,
                                           [=](i64) {
                                             RangeStep s;
                                             s.compute = {flops, fp32, sfu};
                                             return std::vector<RangeStep>(static_cast<size_t>(steps), s);
                                           });
}

engine::KernelResult run_one(std::unique_ptr<SyntheticKernel> k, const profile::HardwareProfile& p) {
  ListSource src;
  src.add(std::move(k));
  return run(src, p).kernels.at(0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_kernel_of_every_algorithm_runs_on_the_sm_model) {
  const auto p = a100();
  for (auto a : {workload::Algorithm::standard, workload::Algorithm::standard_eager, workload::Algorithm::fa1,
                 workload::Algorithm::fa2, workload::Algorithm::fa1_swapped}) {
    const Pass pass = a == workload::Algorithm::fa1_swapped ? Pass::fwd : Pass::fwdbwd;
    const auto r = engine::simulate(build(p, a, pass, 1, 2, 256, 64), p, {});
    for (const auto& k : r.kernels) {
      BOOST_TEST(k.sm_model, k.name << " was not timed by the SM model");
      i64 n = 0;
      for (const i64 c : k.instructions) n += c;
      BOOST_TEST(n > 0, k.name << " ran no instruction");
      BOOST_TEST(!k.programs.empty(), k.name);
    }
  }
  // A kernel from a trace file without programs is timed at the machine's rates.
  BOOST_TEST(!run_one(compute_kernel("mine", p.sm_count, 2, i64{1} << 20), p).sm_model);
}

// The SM model's time of a step grows with the program's work: twice the key
// block means twice the MMAs and exponentials, and FA2's forward time follows.
BOOST_AUTO_TEST_CASE(fa2_forward_time_grows_with_its_programs_work) {
  const auto p = a100();
  auto fwd = [&](i64 bn) {
    trace::TraceOptions o;
    o.algorithm = workload::Algorithm::fa2;
    o.pass = Pass::fwd;
    o.block_m = 64;
    o.block_n = bn;
    o.sram_limit_bytes = p.smem_per_block_bytes;
    workload::Problem pr;
    pr.batch = 1;
    pr.heads = 8;
    pr.seq_q = pr.seq_k = 4096;
    pr.head_dim = 64;
    return engine::simulate(trace::build_trace(pr, o), p, {}).kernels.at(0);
  };
  const auto a = fwd(64), b = fwd(128);
  const auto& pa = a.programs.at(0);
  const auto& pb = b.programs.at(0);
  const auto tensor = static_cast<size_t>(schedule::Pipe::tensor), mufu = static_cast<size_t>(schedule::Pipe::mufu);
  BOOST_TEST(pb.instructions[tensor] == 2 * pa.instructions[tensor]);
  BOOST_TEST(pb.instructions[mufu] == 2 * pa.instructions[mufu]);
  BOOST_TEST(pb.cycles_alone > 1.5 * pa.cycles_alone);
  BOOST_TEST(pb.cycles_alone < 2.5 * pa.cycles_alone);
  // The same work in half the steps: within 25% of the same total.
  BOOST_TEST(b.seconds / a.seconds > 0.75);
  BOOST_TEST(b.seconds / a.seconds < 1.25);
}

BOOST_AUTO_TEST_CASE(json_says_how_each_kernel_was_timed) {
  const auto p = a100();  // no sm_pipes: the SM model runs on datasheet-derived values
  const auto r = engine::simulate(build(p, workload::Algorithm::fa2, Pass::fwdbwd, 1, 2, 256, 64), p, {});
  const std::string s = result_json(r, 0);  // compact: one line, no spaces
  BOOST_TEST(s.find("\"timing_calibrated\":false") != std::string::npos, s.substr(0, 400));
  BOOST_TEST(s.find("\"timing\":{\"model\":\"sm_model\",\"calibrated\":false}") != std::string::npos);
  BOOST_TEST(s.find("\"instructions\":{\"tensor\":") != std::string::npos);
  BOOST_TEST(s.find("\"cycles_alone\":") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_merge_window_comes_from_the_profile_unless_the_options_set_one) {
  auto p = a100();
  const auto lookups = [&](const profile::HardwareProfile& q, EngineOptions o) {
    const auto r = engine::simulate(build(q, workload::Algorithm::fa2, Pass::fwd, 1, 8, 2048, 64), q, o);
    return std::make_pair(r.total.l2.kind[0].lookup_sectors, *r.options.l2_merge_window_cycles);
  };
  p.l2_merge_window_cycles = 0;
  const auto off = lookups(p, {});
  p.l2_merge_window_cycles = 1e6;
  const auto wide = lookups(p, {});
  BOOST_TEST(off.second == 0);
  BOOST_TEST(wide.second == 1e6);
  BOOST_TEST(wide.first < off.first);  // concurrent CTAs of a head share K/V tile reads
  EngineOptions o;
  o.l2_merge_window_cycles = 0;
  const auto overridden = lookups(p, o);
  BOOST_TEST(overridden.first == off.first);
  BOOST_TEST(overridden.second == 0);
}


// The tournament-tree queue pops in (time, push order), as an ordered map
// keyed that way does, with one pending event per slot and many equal times.
BOOST_AUTO_TEST_CASE(event_queue_pops_in_time_then_push_order) {
  for (const std::uint32_t slots : {1u, 3u, 64u, 1000u}) {
    engine::EventQueue q(slots);
    std::map<std::pair<double, u64>, std::pair<std::uint32_t, std::uint32_t>> reference;  // -> slot, kind
    std::vector<bool> pending(slots, false);
    std::mt19937_64 rng(slots);
    u64 order = 0;
    double now = 0;
    auto push = [&](std::uint32_t slot) {
      const double t = now + static_cast<double>(rng() % 4);  // frequent ties
      const auto kind = static_cast<std::uint32_t>(rng() % 3);
      q.push(slot, t, kind);
      reference[{t, order++}] = {slot, kind};
      pending[slot] = true;
    };
    for (std::uint32_t s = 0; s < slots; ++s) push(s);
    engine::EventQueue::Entry e{};
    for (int i = 0; i < 20000 && !reference.empty(); ++i) {
      BOOST_REQUIRE(q.pop(e));
      const auto first = reference.begin();
      BOOST_TEST(e.t == first->first.first);
      BOOST_TEST(e.slot == first->second.first);
      BOOST_TEST(e.kind == first->second.second);
      reference.erase(first);
      pending[e.slot] = false;
      now = e.t;
      if (rng() % 8 != 0) push(e.slot);  // usually the popped slot's next event
      const auto other = static_cast<std::uint32_t>(rng() % slots);
      if (!pending[other] && rng() % 2 == 0) push(other);  // sometimes an idle slot's
    }
    while (!reference.empty()) {
      BOOST_REQUIRE(q.pop(e));
      BOOST_TEST(e.slot == reference.begin()->second.first);
      reference.erase(reference.begin());
    }
    BOOST_TEST(!q.pop(e));
    BOOST_CHECK_THROW(q.push(slots, 0, 0), std::logic_error);
  }
}

// The warp issue interval (the compiler's stall count) holds a warp between
// its instructions: a lone warp's independent instructions take it each; a
// dependent chain waits the longer of it and the producer's latency, not
// their sum.
BOOST_AUTO_TEST_CASE(warp_issue_interval_spaces_a_warps_instructions_and_combines_with_latency_by_max) {
  auto cycles = [](double interval, bool chain) {
    engine::SmMachine m;  // every pipe: one instruction per cycle, results after 4
    m.warp_issue_interval = interval;
    schedule::ProgramBuilder b("alu");
    schedule::ProgramBuilder::Value v = schedule::ProgramBuilder::kNone;
    for (int k = 0; k < 400; ++k) v = chain ? b.alu(v) : b.alu();
    const schedule::WarpProgram prog = b.take();
    return engine::SmModel(m).step_cycles(prog, 1, 1);
  };
  BOOST_TEST(cycles(1, false) == 400, boost::test_tools::tolerance(0.02));
  BOOST_TEST(cycles(2.75, false) == 1100, boost::test_tools::tolerance(0.02));
  BOOST_TEST(cycles(2.75, true) == 1600, boost::test_tools::tolerance(0.02));  // max(2.75, 4) per link
  BOOST_TEST(cycles(1, true) == 1600, boost::test_tools::tolerance(0.02));
}

// Several CTAs on one SM: the step period is the SM's rate while all are
// resident, not a CTA's own period. With greedy-then-oldest issue the first
// CTA runs ahead and the last finishes alone, so each CTA's own period comes
// out near the lone CTA's; the SM still issues at most one instruction per
// sub-partition per cycle. An issue-bound program therefore takes, per step,
// every resident warp's instructions over the four sub-partitions; a
// latency-bound one overlaps its CTAs (each waits on its own chain).
BOOST_AUTO_TEST_CASE(several_ctas_share_the_issue_slots_a_step_period_is_the_sm_rate) {
  engine::SmMachine m;  // every pipe: one instruction per cycle, results after 4
  m.warp_issue_interval = 1;
  schedule::ProgramBuilder b("independent alu x400");
  for (int k = 0; k < 400; ++k) b.alu();
  const schedule::WarpProgram independent = b.take();
  engine::SmModel model(m);
  // 4 warps (one per SMSP): 400 cycles alone; 8 CTAs: 8 warps per SMSP, 3200 per step.
  BOOST_TEST(model.step_cycles(independent, 4, 1) == 400, boost::test_tools::tolerance(0.02));
  for (const i64 ctas : {2, 4, 8})
    BOOST_TEST(model.step_cycles(independent, 4, ctas) == 400.0 * static_cast<double>(ctas),
               boost::test_tools::tolerance(0.03));
  // A dependent chain (4 cycles a link) leaves 3 of 4 issue slots free: up
  // to 4 CTAs overlap at the lone period, 8 take twice as long.
  schedule::ProgramBuilder c("alu chain x400");
  schedule::ProgramBuilder::Value v = schedule::ProgramBuilder::kNone;
  for (int k = 0; k < 400; ++k) v = c.alu(v);
  const schedule::WarpProgram chain = c.take();
  BOOST_TEST(model.step_cycles(chain, 4, 1) == 1600, boost::test_tools::tolerance(0.02));
  BOOST_TEST(model.step_cycles(chain, 4, 4) == 1600, boost::test_tools::tolerance(0.03));
  BOOST_TEST(model.step_cycles(chain, 4, 8) == 3200, boost::test_tools::tolerance(0.03));
}

// Branches (schedule::Op::branch_*, reconverge) hold their warp their
// measured cycles instead of the control-code interval: a lone warp pays
// them in full; warps sharing a sub-partition issue in each other's holds.
BOOST_AUTO_TEST_CASE(a_branch_holds_its_warp_its_measured_cycles) {
  engine::SmMachine m;  // every pipe: one instruction per cycle, results after 4
  m.warp_issue_interval = 2;
  m.branch_taken_cycles = 27;
  m.branch_not_taken_cycles = 15;
  m.reconverge_cycles = 6;
  auto program = [](int kind) {
    schedule::ProgramBuilder b("branches");
    for (int k = 0; k < 100; ++k) {
      b.alu();
      if (kind == 1) b.branch(true);
      if (kind == 2) b.guarded_branch(false);
      if (kind == 3) b.alu();  // the same count as kind 1, no branch
    }
    return b.take();
  };
  // The model caches by program address: each program must outlive its uses.
  const schedule::WarpProgram taken = program(1), guarded = program(2), none = program(3);
  engine::SmModel model(m);
  BOOST_TEST(model.step_cycles(none, 1, 1) == 200 * 2, boost::test_tools::tolerance(0.03));
  BOOST_TEST(model.step_cycles(taken, 1, 1) == 100 * (2 + 27), boost::test_tools::tolerance(0.03));
  BOOST_TEST(model.step_cycles(guarded, 1, 1) == 100 * (2 + 6 + 15 + 6), boost::test_tools::tolerance(0.03));
  // 8 CTAs of 4 warps (8 per SMSP): the holds overlap, the issue slots bound it.
  BOOST_TEST(model.step_cycles(taken, 4, 8) < 8 * model.step_cycles(taken, 4, 1) / 4);
  BOOST_TEST(model.step_cycles(taken, 4, 8) >= 8 * 200.0 * 0.97);
  // Without measured branch costs a branch is an ordinary instruction.
  engine::SmMachine plain = m;
  plain.branch_taken_cycles = plain.branch_not_taken_cycles = plain.reconverge_cycles = 0;
  BOOST_TEST(engine::SmModel(plain).step_cycles(taken, 1, 1) == 200 * 2, boost::test_tools::tolerance(0.03));
}

// Reductions (schedule::Op::reduce) drain from the SM at its measured rate:
// a warp waits on one only once the SM's backlog exceeds the queue, and the
// steady state is no faster than the drain.
BOOST_AUTO_TEST_CASE(reductions_stall_their_warps_only_beyond_the_sms_queue) {
  engine::SmMachine m;  // every pipe: one instruction per cycle, results after 4
  m.warp_issue_interval = 1;
  schedule::ProgramBuilder b("64 reductions, then work");
  for (int k = 0; k < 64; ++k) b.red(b.fma());  // 256 B each
  for (int k = 0; k < 4000; ++k) b.alu();
  schedule::WarpProgram prog = b.take();
  prog.issue_order_fixed = true;  // the reductions first, as written
  auto cycles = [&](double rate, double queue_bytes) {
    engine::SmMachine x = m;
    x.red_bytes_per_cycle = rate;
    x.red_queue_cycles = rate > 0 ? queue_bytes / rate : 0;  // the profile gives cycles of draining
    return engine::SmModel(x).step_cycles(prog, 4, 1);
  };
  const double free = cycles(0, 0);  // no port: issue slots only
  BOOST_TEST(cycles(1e6, 0) == free, boost::test_tools::tolerance(0.02));
  // 64 x 256 B = 16 KiB per warp a step, 64 KiB for the 4 warps: at 16 B/cycle
  // 1024 cycles of draining per warp, 4096 for the SM. With a queue of 1 KiB
  // each warp waits for part of its own drain before its work (in the steady
  // state the other warps' drains overlap its work).
  const double small = cycles(16, 1024);
  BOOST_TEST(small > free + 400);
  BOOST_TEST(small < free + 1024 + 100);
  // A queue that takes a step's reductions: the drain overlaps the work.
  BOOST_TEST(cycles(16, 64 * 1024) == free, boost::test_tools::tolerance(0.03));
  // Slower than the work: the SM's drain (64 KiB at 4 B/cycle) bounds the step.
  BOOST_TEST(cycles(4, 1u << 30) == 16384, boost::test_tools::tolerance(0.03));
}

// A profile's measured reduction rate (sm_pipes.red_per_sm) becomes the SM
// model's drain, without the warp-side queue: a step of many reductions lasts
// its drain at that rate, and reductions that drain faster than the work cost
// the warps nothing (docs/engine.md, "Reductions").
BOOST_AUTO_TEST_CASE(a_profiles_reduction_rate_bounds_the_step_without_stalling_its_warps) {
  const std::string path = profile::default_profile_dir() + "/h200-sxm-141gb.yaml";
  const profile::HardwareProfile p = profile::load_profile(path);
  BOOST_TEST_REQUIRE(p.sm_pipes.red_bytes_per_cycle > 0);
  const engine::SmMachine m = engine::sm_machine(p);
  BOOST_TEST(m.red_bytes_per_cycle == p.sm_pipes.red_bytes_per_cycle);
  BOOST_TEST(std::isinf(m.red_queue_cycles));
  auto program = [](int reductions, int work) {
    schedule::ProgramBuilder b("reductions, then work");
    for (int k = 0; k < reductions; ++k) b.red(b.fma());  // 256 B each
    for (int k = 0; k < work; ++k) b.alu();
    schedule::WarpProgram prog = b.take();
    prog.issue_order_fixed = true;
    return prog;
  };
  engine::SmMachine none = m;
  none.red_bytes_per_cycle = 0;
  // 8 warps x 64 x 256 B = 128 KiB a step: the drain bounds it.
  const schedule::WarpProgram heavy = program(64, 200);
  BOOST_TEST(engine::SmModel(m).step_cycles(heavy, 8, 1) ==
                 8.0 * 64 * 256 / p.sm_pipes.red_bytes_per_cycle, boost::test_tools::tolerance(0.03));
  // 8 warps x 2 x 256 B drain in about 440 cycles, well inside the work.
  const schedule::WarpProgram light = program(2, 4000);
  BOOST_TEST(engine::SmModel(m).step_cycles(light, 8, 1) == engine::SmModel(none).step_cycles(light, 8, 1),
             boost::test_tools::tolerance(0.01));
  // A profile without the key: reductions cost their issue slot only.
  profile::HardwareProfile bare = p;
  bare.sm_pipes.red_bytes_per_cycle = 0;
  BOOST_TEST(engine::sm_machine(bare).red_bytes_per_cycle == 0);
  BOOST_TEST(engine::sm_machine(bare).red_queue_cycles == 0);
}

// Global stores (schedule::Op::store, store_fragment) hold the SM's store
// port for their measured cycles (a fragment store longer than a row store):
// a warp waits on one only once the port's backlog exceeds the queue, and a
// warp's step (a CTA's epilogue) ends only once its stores have drained.
BOOST_AUTO_TEST_CASE(stores_hold_the_sms_store_port_and_a_step_ends_once_they_drain) {
  engine::SmMachine m;  // every pipe: one instruction per cycle, results after 4
  m.warp_issue_interval = 1;
  auto program = [](bool fragment) {
    schedule::ProgramBuilder b("32 stores");
    for (int k = 0; k < 32; ++k) fragment ? b.stg_fragment(schedule::ProgramBuilder::kNone) : b.stg(schedule::ProgramBuilder::kNone);
    schedule::WarpProgram p = b.take();
    p.issue_order_fixed = true;
    return p;
  };
  const schedule::WarpProgram frag = program(true), rows = program(false);
  auto cycles = [&](const schedule::WarpProgram& p, double fragment_cycles, double rows_cycles, double queue) {
    engine::SmMachine x = m;
    x.store_fragment_cycles = fragment_cycles;
    x.store_rows_cycles = rows_cycles;
    x.store_queue_cycles = queue;
    return engine::SmModel(x).step_cycles(p, 8, 1);
  };
  const double free = cycles(frag, 0, 0, 0);  // no port: issue slots only
  BOOST_TEST(free < 100);
  // 8 warps x 32 fragment stores at 8 cycles each: 2048 cycles of draining,
  // whatever the queue (the step ends once the stores are out).
  BOOST_TEST(cycles(frag, 8, 4, 1e9) >= 2048.0);
  BOOST_TEST(cycles(frag, 8, 4, 1e9) < 2048.0 + 100);
  BOOST_TEST(cycles(frag, 8, 4, 64) >= 2048.0);
  // Row stores at their own (shorter) cycles.
  BOOST_TEST(cycles(rows, 8, 4, 1e9) >= 1024.0);
  BOOST_TEST(cycles(rows, 8, 4, 1e9) < 1024.0 + 100);
  // The queue decides when a warp may go on: one warp's 32 fragment stores
  // (256 cycles of draining) before 1000 independent instructions. With room
  // for them all the work overlaps the drain; with none the work waits
  // behind it.
  schedule::ProgramBuilder b("stores, then work");
  for (int k = 0; k < 32; ++k) b.stg_fragment(schedule::ProgramBuilder::kNone);
  for (int k = 0; k < 1000; ++k) b.alu();
  schedule::WarpProgram then_work = b.take();
  then_work.issue_order_fixed = true;
  engine::SmMachine x = m;
  x.store_fragment_cycles = 8;
  x.store_rows_cycles = 4;
  x.store_queue_cycles = 1e9;
  const double deep = engine::SmModel(x).step_cycles(then_work, 1, 1);
  x.store_queue_cycles = 0;
  const double none = engine::SmModel(x).step_cycles(then_work, 1, 1);
  BOOST_TEST(deep == 1032.0, boost::test_tools::tolerance(0.03));
  BOOST_TEST(none == 1000.0 + 256, boost::test_tools::tolerance(0.03));
}

// A program that loads its own tiles and meets at a barrier (FA1's steps):
// the part after that barrier is what must wait for the loads; a program
// without such a barrier has none.
BOOST_AUTO_TEST_CASE(the_part_after_a_programs_loads_barrier_is_timed_on_its_own) {
  engine::SmMachine m;  // every pipe: one instruction per cycle, results after 4
  m.warp_issue_interval = 1;
  schedule::ProgramBuilder b("load, barrier, work");
  const schedule::ProgramBuilder::Value loaded = b.ldg(512, b.alu());
  b.sts(512, loaded);
  b.barrier();
  schedule::ProgramBuilder::Value v = b.lds(128);
  for (int k = 0; k < 100; ++k) v = b.alu(v);  // a chain: 4 cycles a link
  const schedule::WarpProgram with_barrier = b.take();
  schedule::ProgramBuilder c("load, work");
  c.sts(512, c.ldg(512, c.alu()));
  for (int k = 0; k < 100; ++k) c.alu();
  const schedule::WarpProgram without = c.take();
  engine::SmModel model(m);
  const double after = model.after_loads_cycles(with_barrier, 4, 1);
  BOOST_TEST(after >= 400);  // the chain
  BOOST_TEST(after < model.step_cycles(with_barrier, 4, 1, true));
  BOOST_TEST(model.after_loads_cycles(without, 4, 1) == 0.0);
}

// SmModel::walk: per instruction of the program (its source order, whatever
// order the compiler model issues it in), the cycle warp 0 issued it in a
// steady step and the cycles it waited before it. A chain of dependent
// instructions waits each one's latency; the waits add up to the step; the
// regions and the reordering's origin survive compiler_order.
BOOST_AUTO_TEST_CASE(a_walk_charges_each_instruction_the_cycles_its_warp_waited_for_it) {
  engine::SmMachine m;  // every pipe: one instruction per cycle, results after 4
  m.warp_issue_interval = 1;
  schedule::ProgramBuilder b("two regions");
  b.region("independent");
  for (int k = 0; k < 8; ++k) b.alu();
  b.region("chain");
  schedule::ProgramBuilder::Value v = b.alu();
  for (int k = 0; k < 8; ++k) v = b.alu(v);
  const schedule::WarpProgram program = b.take();
  engine::SmModel model(m);
  const engine::SmModel::Walk w = model.walk(program, 1, 1);
  BOOST_TEST_REQUIRE(w.issue.size() == program.code.size());
  double total = 0;
  for (const double c : w.waited) total += c;
  BOOST_TEST(total == w.step, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(w.step == model.step_cycles(program, 1, 1), boost::test_tools::tolerance(0.02));
  // The chain's links wait out the alu latency in turn.
  for (size_t k = 10; k < program.code.size(); ++k) {
    BOOST_TEST(w.issue[k] - w.issue[k - 1] == 4.0, "link " << k);
    BOOST_TEST(w.waited[k] >= 1.0);
  }
  const schedule::WarpProgram ordered = engine::compiler_order(program, m);
  BOOST_TEST(ordered.regions == program.regions);
  std::vector<std::int32_t> origin = ordered.origin;
  std::sort(origin.begin(), origin.end());
  for (size_t k = 0; k < origin.size(); ++k) BOOST_TEST(origin[k] == static_cast<std::int32_t>(k));
}

// wgmma (schedule::Op::wgmma): an asynchronous instruction that queues in its
// sub-partition's tensor pipe for its FLOP at the wgmma rate. A warp issuing
// k independent wgmmas is bound by k pipe times, not by one; a dependent
// chain (each waiting for the last through wait_group) pays the latency per
// link; FP32 work issued behind an outstanding wgmma overlaps it.
namespace {

engine::SmMachine wgmma_machine(double extra_latency) {
  engine::SmMachine m;  // every other pipe: one instruction per cycle, results after 4
  m.wgmma_flop_per_cycle = 1024;  // per SMSP: a warp's m64n128k16 (65536 FLOP) holds the pipe 64 cycles
  m.wgmma_extra_latency = extra_latency;
  return m;
}

// `count` independent wgmma m64nNk16, then the wait for the last one.
schedule::WarpProgram wgmma_run(const std::string& name, int n, int count) {
  schedule::ProgramBuilder b(name);
  schedule::ProgramBuilder::Value last = schedule::ProgramBuilder::kNone;
  for (int k = 0; k < count; ++k) last = b.wgmma(n);
  b.wgmma_wait(last);
  return b.take();
}

double lone_warp_cycles(const engine::SmMachine& m, const schedule::WarpProgram& prog) {
  return engine::SmModel(m).step_cycles(prog, 1, 1);
}

}  // namespace

BOOST_AUTO_TEST_CASE(independent_wgmmas_are_bound_by_the_tensor_pipe_time_of_each) {
  const engine::SmMachine m = wgmma_machine(30);
  const schedule::WarpProgram prog = wgmma_run("wgmma x20", 128, 20);
  BOOST_TEST(prog.count(schedule::Pipe::tensor) == 20);
  // 20 x 64 cycles in the pipe, then the last one's extra latency.
  BOOST_TEST(lone_warp_cycles(m, prog) == 20 * 64 + 30, boost::test_tools::tolerance(0.01));
  BOOST_TEST(engine::pipe_cycles(m, prog.code[0]) == 64.0);
  // N = 64 takes half the pipe time.
  BOOST_TEST(lone_warp_cycles(m, wgmma_run("wgmma n64 x20", 64, 20)) == 20 * 32 + 30, boost::test_tools::tolerance(0.01));
}

BOOST_AUTO_TEST_CASE(a_dependent_wgmma_chain_pays_the_latency_per_link) {
  const engine::SmMachine m = wgmma_machine(100);
  schedule::ProgramBuilder b("wgmma chain");
  schedule::ProgramBuilder::Value wait = schedule::ProgramBuilder::kNone;
  for (int k = 0; k < 20; ++k) wait = b.wgmma_wait(b.wgmma(128, wait));
  // Per link: 64 in the pipe + 100 to the result, and the wait's cycle.
  BOOST_TEST(lone_warp_cycles(m, b.take()) == 20 * (64 + 100 + 1), boost::test_tools::tolerance(0.02));
}

BOOST_AUTO_TEST_CASE(fp32_work_behind_an_outstanding_wgmma_overlaps_it) {
  const engine::SmMachine m = wgmma_machine(0);
  auto program = [](int wgmmas, int ffmas) {
    schedule::ProgramBuilder b("overlap");
    schedule::ProgramBuilder::Value last = schedule::ProgramBuilder::kNone;
    for (int k = 0; k < wgmmas; ++k) last = b.wgmma(128);
    for (int k = 0; k < ffmas; ++k) b.fma();
    if (wgmmas > 0) b.wgmma_wait(last);
    return b.take();
  };
  const double tensor = lone_warp_cycles(m, program(10, 0));  // 640
  const double fp32 = lone_warp_cycles(m, program(0, 600));   // 600
  const double both = lone_warp_cycles(m, program(10, 600));
  BOOST_TEST(tensor == 640, boost::test_tools::tolerance(0.01));
  BOOST_TEST(fp32 == 600, boost::test_tools::tolerance(0.02));
  BOOST_TEST(both < 0.6 * (tensor + fp32));  // not one after the other
  BOOST_TEST(both == std::max(tensor, fp32 + 10), boost::test_tools::tolerance(0.02));  // + the 10 wgmma issues
}

// Two warps of one sub-partition share its tensor pipe: their wgmmas queue
// behind each other (the FA3 consumers' ping-pong), while warps on different
// sub-partitions run theirs side by side.
BOOST_AUTO_TEST_CASE(wgmmas_of_warps_on_one_sub_partition_share_its_tensor_pipe) {
  const engine::SmMachine m = wgmma_machine(0);
  const schedule::WarpProgram prog = wgmma_run("wgmma x10", 128, 10);
  engine::SmModel model(m);
  // Steady state per step (5 steps back to back): 4 warps, one per SMSP: 640; 8 warps, two per SMSP: 1280.
  BOOST_TEST(model.step_cycles(prog, 4, 1) == 640, boost::test_tools::tolerance(0.02));
  BOOST_TEST(model.step_cycles(prog, 8, 1) == 1280, boost::test_tools::tolerance(0.02));
}

// The machine of a profile: a calibrated profile without wgmma's keys times
// wgmma at the mma.sync rate and says so; with them, at the measured rate,
// the measured m64n128k16 latency less its pipe time after the pipe.
BOOST_AUTO_TEST_CASE(the_wgmma_machine_comes_from_sm_pipes_or_falls_back_to_mma_sync) {
  const std::string dir = profile::default_profile_dir();
  profile::HardwareProfile h100 = profile::find_profile("h100-sxm5-80gb", dir);
  BOOST_TEST_REQUIRE(h100.sm_pipes.present);
  h100.sm_pipes.wgmma_f16_flop_per_cycle = 0;  // as a calibrated profile without the keys reads
  h100.sm_pipes.wgmma_latency_cycles = 0;
  h100.sm_pipes.clock_wgmma_load_hz = 0;
  const engine::SmMachine fallback = engine::sm_machine(h100);
  BOOST_TEST(fallback.clock_wgmma_hz == h100.sm_pipes.clock_tensor_load_hz);  // no wgmma clock: mma.sync's
  BOOST_TEST(fallback.wgmma_flop_per_cycle == h100.sm_pipes.mma_f16_flop_per_cycle / 4, boost::test_tools::tolerance(1e-12));
  const auto& mma = fallback.pipe[static_cast<size_t>(schedule::Pipe::tensor)];
  BOOST_TEST(fallback.wgmma_extra_latency == mma.latency - mma.interval, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(fallback.source.find("wgmma at the mma.sync rate") != std::string::npos, fallback.source);
  BOOST_TEST(fallback.source.find("no sm_pipes.wgmma_latency") != std::string::npos, fallback.source);

  const std::string path = dir + "/h100-sxm5-80gb.yaml";
  const profile::HardwareProfile measured = profile::load_profile(
      path, {{"sm_pipes.wgmma_f16", "4000 FLOP/cycle"},
             {"sm_pipes.wgmma_latency", "150 cycles"},
             {"sm_pipes.clock_wgmma_load", "1600 MHz"}});
  const engine::SmMachine w = engine::sm_machine(measured);
  BOOST_TEST(w.clock_wgmma_hz == 1600e6);
  BOOST_TEST(w.wgmma_flop_per_cycle == 1000.0);
  BOOST_TEST(w.wgmma_extra_latency == 150 - 65536.0 / 1000, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(w.source.find("wgmma") == std::string::npos, w.source);
  // The mma.sync pipe is the same with or without the keys.
  BOOST_TEST(w.pipe[static_cast<size_t>(schedule::Pipe::tensor)].interval == mma.interval);

  // A datasheet profile: the tensor rate of its datasheet.
  const profile::HardwareProfile a = a100();
  const engine::SmMachine d = engine::sm_machine(a);
  BOOST_TEST(d.wgmma_flop_per_cycle * 4 ==
                 a.tensor_fp16_flops_per_s / (static_cast<double>(a.sm_count) * a.sm_clock_hz),
             boost::test_tools::tolerance(1e-9));
}

// compiler_order (sim/engine/compiler_order.h): the source order of a warp
// program rescheduled as nvcc's list scheduler would. The same instructions
// with the same dependences; nothing crosses a barrier or a wgmma fence;
// shared and global accesses keep their order; independent exponentials
// written one chain after another are interleaved, so the warp is bound by
// the MUFU pipe rather than by each chain's latency.
namespace {

// Per score: scaled, exponentiated, packed; with `memory`, loaded from and
// stored to shared memory (which keeps the chains in order: accesses are not
// reordered), else from and into registers.
schedule::WarpProgram exp_chains(int chains, bool barrier_between, bool memory = true) {
  schedule::ProgramBuilder b("exp chains");
  for (int k = 0; k < chains; ++k) {
    if (barrier_between && k == chains / 2) b.barrier();
    const auto x = b.fma(memory ? b.lds(128) : b.alu());  // the score, scaled
    const auto e = b.mufu(b.fma(x));                       // exp2(x - m)
    const auto p = b.fma(e, b.alu(e));                     // packed
    if (memory) b.sts(128, p);
  }
  return b.take();
}

// Instructions keyed by what they are and what they wait for (by the same key).
std::multiset<std::string> signature(const schedule::WarpProgram& p) {
  std::vector<std::string> key(p.code.size());
  std::multiset<std::string> out;
  for (size_t i = 0; i < p.code.size(); ++i) {
    const auto& in = p.code[i];
    std::string k = std::to_string(static_cast<int>(in.pipe)) + ":" + std::to_string(in.bytes) + "(";
    std::vector<std::string> srcs;
    for (int s = 0; s < in.sources; ++s) {
      BOOST_TEST_REQUIRE(in.source[s] < static_cast<int>(i));  // sources come first
      srcs.push_back(key[static_cast<size_t>(in.source[s])]);
    }
    std::sort(srcs.begin(), srcs.end());
    for (const auto& x : srcs) k += x + ",";
    key[i] = k + ")";
    out.insert(key[i]);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(compiler_order_keeps_the_instructions_and_their_dependences) {
  engine::SmMachine m;
  m.pipe[static_cast<size_t>(schedule::Pipe::mufu)] = {8, 17};
  for (const bool barrier : {false, true}) {
    const schedule::WarpProgram src = exp_chains(16, barrier);
    const schedule::WarpProgram out = engine::compiler_order(src, m);
    BOOST_TEST(out.code.size() == src.code.size());
    BOOST_TEST((signature(out) == signature(src)));
    BOOST_TEST((out.count_by_pipe() == src.count_by_pipe()));
    auto memory_order = [](const schedule::WarpProgram& p) {
      std::vector<std::pair<int, int>> v;  // (pipe, bytes) of every shared/global access, and barriers
      for (const auto& in : p.code)
        if (in.pipe == schedule::Pipe::smem || in.pipe == schedule::Pipe::global || in.pipe == schedule::Pipe::barrier)
          v.emplace_back(static_cast<int>(in.pipe), in.bytes);
      return v;
    };
    BOOST_TEST((memory_order(out) == memory_order(src)));
    if (barrier) {  // the barrier has the same instructions on each side
      auto before_barrier = [](const schedule::WarpProgram& p) {
        std::multiset<int> v;
        for (const auto& in : p.code) {
          if (in.pipe == schedule::Pipe::barrier) break;
          v.insert(static_cast<int>(in.pipe));
        }
        return v;
      };
      BOOST_TEST((before_barrier(out) == before_barrier(src)));
    }
  }
}

BOOST_AUTO_TEST_CASE(compiler_order_interleaves_independent_exponentials_up_to_the_mufu_pipe) {
  engine::SmMachine m;  // other pipes: one per cycle, results after 4
  m.pipe[static_cast<size_t>(schedule::Pipe::mufu)] = {8, 17};
  m.smem_queue_cycles = 1e9;  // no port backlog in this test
  const schedule::WarpProgram src = exp_chains(32, false, false);
  const schedule::WarpProgram out = engine::compiler_order(src, m);
  // Source order: each chain waits out its loads' and MUFU's latency in turn.
  schedule::WarpProgram fixed = src;
  fixed.issue_order_fixed = true;  // the SM model issues it as written
  const double in_order = engine::SmModel(m).step_cycles(fixed, 1, 1);
  const double scheduled = engine::SmModel(m).step_cycles(src, 1, 1);  // the model reorders it
  const double reordered = [&] {
    schedule::WarpProgram o = out;
    o.issue_order_fixed = true;
    return engine::SmModel(m).step_cycles(o, 1, 1);
  }();
  BOOST_TEST(scheduled == reordered);  // the SM model runs the compiler's order
  BOOST_TEST(in_order > 32 * 17);      // at least one exponential latency per chain
  BOOST_TEST(scheduled < 0.6 * in_order);
  // The MUFU pipe: 32 exponentials, one per 8 cycles, bound the reordered warp from below.
  BOOST_TEST(scheduled >= 32 * 8);
  // The MUFUs issue back to back, not one per chain's turn.
  std::vector<size_t> mufu_at;
  for (size_t i = 0; i < out.code.size(); ++i)
    if (out.code[i].pipe == schedule::Pipe::mufu) mufu_at.push_back(i);
  BOOST_TEST(mufu_at.back() - mufu_at.front() < out.code.size() / 2);
}

// Turn taking between warpgroups (FA3's ping-pong: Op::turn_wait before a
// warpgroup's section, Op::turn_pass after it): the sections of the two
// warpgroups of a CTA run one after the other, warpgroup 0 first, where
// without the turns they overlap; one warpgroup alone never waits.
BOOST_AUTO_TEST_CASE(warpgroups_take_turns_at_turn_wait_and_turn_pass) {
  engine::SmMachine m;  // every pipe: one instruction per cycle, results after 4
  auto program = [](bool turns) {
    schedule::ProgramBuilder b(turns ? "turns" : "no turns");
    if (turns) b.turn_wait();
    schedule::ProgramBuilder::Value v = schedule::ProgramBuilder::kNone;
    for (int k = 0; k < 200; ++k) v = b.fma(v);  // the section: a dependent chain, 800 cycles
    if (turns) b.turn_pass();
    return b.take();
  };
  const schedule::WarpProgram with = program(true), without = program(false);
  engine::SmModel model(m);
  const double overlapped = model.step_cycles(without, 8, 1);
  const double taking_turns = model.step_cycles(with, 8, 1);
  BOOST_TEST(overlapped == 800, boost::test_tools::tolerance(0.02));
  BOOST_TEST(taking_turns == 2 * 800, boost::test_tools::tolerance(0.03));  // one section, then the other's
  BOOST_TEST(model.step_cycles(with, 4, 1) == 800, boost::test_tools::tolerance(0.02));  // alone: no one to wait for
  // The turns are fences for the compiler's order: the section stays between them.
  const schedule::WarpProgram ordered = engine::compiler_order(with, m);
  BOOST_TEST((ordered.code.front().op == schedule::Op::turn_wait));
  BOOST_TEST((ordered.code.back().op == schedule::Op::turn_pass));
}

// FA2 backward's preprocess writes D = rowsum(dO * O) four bytes a row, a warp
// instruction's rows at a time (4 rows at d 64, 2 at d 128): each piece crosses
// as a whole 32-byte sector, so D's sectors on the crossbar are 2x (d 64) and
// 4x (d 128) its bytes (the H200 and H100 grids: 3.9 and 11.7 bytes a row over
// the trace). The trace's bytes stay D's; the rows of a ragged block past its
// last whole sector go as one tile.
BOOST_AUTO_TEST_CASE(fa2_preprocess_writes_d_in_partial_sectors) {
  for (const int d : {64, 128}) {
    for (const int n : {1024, 1000 + 4}) {  // whole sectors; a ragged block with half a sector left
      workload::Problem prob;
      prob.batch = 1;
      prob.heads = prob.kv_heads = 2;
      prob.seq_q = prob.seq_k = n;
      prob.head_dim = d;
      trace::TraceOptions o;
      o.algorithm = workload::Algorithm::fa2;
      o.pass = workload::Pass::bwd;
      o.block_m = o.block_n = 64;
      o.sram_limit_bytes = a100().smem_per_block_bytes;
      const auto r = engine::simulate(trace::build_trace(prob, o), a100(), {});
      const auto k = std::find_if(r.kernels.begin(), r.kernels.end(),
                                  [](const auto& x) { return x.name == "fa2_bwd_preprocess"; });
      BOOST_TEST_REQUIRE((k != r.kernels.end()));
      const i64 d_bytes = i64{2} * n * 4, acc_bytes = i64{2} * n * d * 4;
      BOOST_TEST(k->request_write_bytes() == d_bytes + acc_bytes);
      const i64 pieces = 32 / (4 * (256 / d));  // a sector's pieces: 2 at d 64, 4 at d 128
      const i64 crossbar = k->l2.kind[1].sectors * 32;
      // dQaccum's rows are whole sectors; in each 64-row block, D's whole-sector rows cross `pieces`
      // times, the rest once.
      i64 expected_d = 0;
      for (i64 r0 = 0; r0 < n; r0 += 64) {
        const i64 rows = std::min<i64>(64, n - r0), whole = rows / 8 * 8;
        expected_d += 2 * (whole * 4 * pieces + ((rows - whole) * 4 + 31) / 32 * 32);
      }
      BOOST_TEST(crossbar == acc_bytes + expected_d, "d " << d << " n " << n);
    }
  }
}
