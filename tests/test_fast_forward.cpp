// Fast-forward (sim/engine/fast_forward.h): what skipped work requests and
// computes stays exact, its time and L2/DRAM outcomes stay close to the
// exact engine's, it skips only where the rules allow, and the options and
// reports say it was used.
#define BOOST_TEST_MODULE fast_forward
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <sstream>

#include "sim/common/error.h"
#include "sim/count/io_count.h"
#include "sim/engine/engine.h"
#include "sim/engine/fast_forward.h"
#include "sim/report/engine_report.h"
#include "tests/attention_trace.h"

using namespace iosim;
using engine::EngineOptions;
using engine::SimulationResult;
using workload::Algorithm;
using workload::Pass;

namespace {

// The A100 cut to 16 SMs and a 4 MiB L2: grids of the sizes below then run
// in many waves and turn the L2 over quickly, as GPT-2-sized problems do on
// the whole part, at a fraction of the simulated work.
profile::HardwareProfile small_a100() {
  auto p = profile::find_profile("a100-sxm4-40gb", profile::default_profile_dir());
  p.sm_count = 16;
  p.l2_bytes = i64{4} << 20;
  return p;
}

trace::AlgorithmTrace build(const profile::HardwareProfile& p, Algorithm a, Pass pass, i64 batch, i64 heads, i64 n,
                            i64 d, bool causal = false) {
  return testing::build_attention(p, a, pass, batch, heads, n, d, causal);
}

double rel_diff(double a, double b) { return std::abs(a - b) / std::abs(b); }

EngineOptions fast() {
  EngineOptions o;
  o.fast_forward = true;
  return o;
}

i64 skipped_steps(const SimulationResult& r) {
  i64 n = 0;
  for (const auto& k : r.kernels) n += k.fast_forward.skipped_steps;
  return n;
}

}  // namespace

// Standard attention and FA2 skip whole CTAs (their grids run in many
// waves), FA1 skips steps within its CTAs (one per head, few waves). Every
// requested byte, step, FLOP and instruction is the exact run's; time, DRAM
// bytes and L2 hits are within 2%.
BOOST_AUTO_TEST_CASE(fast_forward_stays_close_to_the_exact_engine_for_every_algorithm) {
  const auto p = small_a100();
  for (const Algorithm a : {Algorithm::standard, Algorithm::fa2, Algorithm::fa1}) {
    BOOST_TEST_CONTEXT(workload::to_string(a)) {
      const auto tr = build(p, a, Pass::fwdbwd, 4, 16, 1024, 64);
      const SimulationResult x = engine::simulate(tr, p, EngineOptions{}), y = engine::simulate(tr, p, fast());
      BOOST_TEST(skipped_steps(x) == 0);
      BOOST_TEST(skipped_steps(y) > y.total.steps / 3);
      BOOST_REQUIRE(x.kernels.size() == y.kernels.size());
      for (size_t i = 0; i < x.kernels.size(); ++i) {
        const auto &kx = x.kernels[i], &ky = y.kernels[i];
        BOOST_TEST_CONTEXT(kx.name) {
          for (size_t k = 0; k < kx.l2.kind.size(); ++k) BOOST_TEST(ky.l2.kind[k].bytes == kx.l2.kind[k].bytes);
          for (size_t t = 0; t < kx.l2.tensor.size(); ++t) {
            BOOST_TEST(ky.l2.tensor[t].read_bytes == kx.l2.tensor[t].read_bytes);
            BOOST_TEST(ky.l2.tensor[t].write_bytes == kx.l2.tensor[t].write_bytes);
          }
          BOOST_TEST(ky.steps == kx.steps);
          BOOST_TEST(ky.compute.tensor_flops == kx.compute.tensor_flops);
          BOOST_TEST(ky.compute.fp32_ops == kx.compute.fp32_ops);
          BOOST_TEST(ky.compute.sfu_ops == kx.compute.sfu_ops);
          BOOST_TEST(ky.instructions == kx.instructions);
          const auto hx = kx.l2.total(), hy = ky.l2.total();
          BOOST_TEST(hy.hit_sectors + hy.miss_sectors == hy.sectors);
          BOOST_TEST(std::abs(static_cast<double>(hy.hit_sectors - hx.hit_sectors)) / static_cast<double>(hx.sectors) < 0.02);
        }
      }
      if (a == Algorithm::fa1) {
        for (const auto& k : y.kernels) BOOST_TEST(k.fast_forward.skipped_ctas == 0);
        BOOST_TEST(y.kernels.front().fast_forward.window_steps > 0);
      } else {
        BOOST_TEST(y.kernels.front().fast_forward.skipped_ctas > 0);
      }
      BOOST_TEST(rel_diff(y.total.seconds, x.total.seconds) < 0.02);
      BOOST_TEST(rel_diff(static_cast<double>(y.total.dram_read_bytes), static_cast<double>(x.total.dram_read_bytes)) < 0.02);
      BOOST_TEST(rel_diff(static_cast<double>(y.total.dram_write_bytes), static_cast<double>(x.total.dram_write_bytes)) < 0.02);
      BOOST_TEST(rel_diff(y.total.busy.sm_pipes, x.total.busy.sm_pipes) < 0.02);
      BOOST_TEST(y.total.l2.line_visits < x.total.l2.line_visits * 3 / 4);  // the point: less work
    }
  }
}

// Every algorithm's request bytes and FLOPs with fast-forward equal the
// trace count (count::count_run), kernel by kernel, on problems long enough
// that some of their kernels skip.
BOOST_AUTO_TEST_CASE(request_bytes_equal_the_io_count_with_fast_forward) {
  const auto a100 = small_a100();
  const auto h200 = profile::find_profile("h200-sxm-141gb", profile::default_profile_dir());
  struct Case {
    const profile::HardwareProfile* p;
    Algorithm a;
    Pass pass;
    bool causal;
    i64 batch, heads, n, d, seq_q = 0;
  };
  const Case cases[] = {{&a100, Algorithm::standard_eager, Pass::fwdbwd, true, 4, 16, 512, 64},
                        {&a100, Algorithm::fa1_swapped, Pass::fwd, false, 4, 16, 1024, 64},
                        {&a100, Algorithm::fa2, Pass::fwdbwd, true, 8, 16, 1024, 64},
                        {&a100, Algorithm::fa1, Pass::fwdbwd, true, 4, 16, 1024, 64},
                        {&h200, Algorithm::fa3, Pass::fwd, false, 16, 16, 2048, 128},
                        {&h200, Algorithm::splitkv, Pass::fwd, false, 4, 32, 8192, 128, 1}};
  i64 skipped = 0;
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(workload::to_string(c.a)) {
      const auto tr = testing::build_attention(*c.p, c.a, c.pass, c.batch, c.heads, c.n, c.d, c.causal, 0, c.seq_q);
      const auto counts = count::count_run(tr);
      const auto r = engine::simulate(tr, *c.p, fast());
      skipped += skipped_steps(r);
      BOOST_REQUIRE_EQUAL(r.kernels.size(), counts.kernels.size());
      for (size_t i = 0; i < r.kernels.size(); ++i) {
        BOOST_TEST(r.kernels[i].request_read_bytes() == counts.kernels[i].io.read_bytes);
        BOOST_TEST(r.kernels[i].request_write_bytes() == counts.kernels[i].io.write_bytes);
        BOOST_TEST(r.kernels[i].request_reduce_bytes() == counts.kernels[i].io.reduce_bytes);
        BOOST_TEST(r.kernels[i].compute.tensor_flops == counts.kernels[i].io.tensor_flops);
        BOOST_TEST(r.kernels[i].steps == counts.kernels[i].io.steps);
      }
    }
  }
  BOOST_TEST(skipped > 0);
}

// A kernel whose warps spill (FA2 backward on the T4: its prologue's
// stores) keeps its spills' traffic exact too: the local stores and L1
// misses of the skipped steps are the tally's, in the L2's "local" tensor and
// its kind counters, which the engine checks against the trace.
BOOST_AUTO_TEST_CASE(spills_of_skipped_work_are_exact) {
  const auto p = profile::find_profile("t4", profile::default_profile_dir());
  const auto tr = build(p, Algorithm::fa2, Pass::bwd, 4, 16, 1024, 64);
  const SimulationResult x = engine::simulate(tr, p, EngineOptions{}), y = engine::simulate(tr, p, fast());
  const auto& kx = x.kernels.at(1);
  const auto& ky = y.kernels.at(1);
  BOOST_REQUIRE(kx.name == "fa2_bwd_main");
  BOOST_TEST(ky.fast_forward.skipped_ctas > 0);
  BOOST_TEST(kx.local.store_bytes > 0);
  BOOST_TEST(ky.local.store_bytes == kx.local.store_bytes);
  BOOST_TEST(ky.local.miss_bytes == kx.local.miss_bytes);
  const size_t local = y.tensor_names.size() - 1;
  BOOST_REQUIRE(y.tensor_names[local] == "local");
  BOOST_TEST(ky.l2.tensor.at(local).write_bytes == kx.l2.tensor.at(local).write_bytes);
  BOOST_TEST(ky.l2.tensor.at(local).read_bytes == kx.l2.tensor.at(local).read_bytes);
  BOOST_TEST(ky.request_read_bytes() == kx.request_read_bytes());
  BOOST_TEST(ky.request_write_bytes() == kx.request_write_bytes());
}

// Off by default; and a grid of few waves whose CTAs differ (causal: CTA i
// has i + 1 key blocks) has no common step pattern to skip: it runs whole,
// bit for bit as without the option.
BOOST_AUTO_TEST_CASE(fast_forward_leaves_unequal_ctas_of_few_waves_alone) {
  BOOST_TEST(!EngineOptions{}.fast_forward);
  auto p = small_a100();
  p.sm_count = 108;
  const auto tr = build(p, Algorithm::fa2, Pass::fwd, 1, 4, 2048, 64, true);
  const SimulationResult x = engine::simulate(tr, p, EngineOptions{}), y = engine::simulate(tr, p, fast());
  BOOST_TEST(skipped_steps(y) == 0);
  BOOST_TEST(y.total.cycles == x.total.cycles);
  BOOST_TEST(y.total.dram_read_bytes == x.total.dram_read_bytes);
  BOOST_TEST(y.total.l2.total().lookup_hit_sectors == x.total.l2.total().lookup_hit_sectors);
}

// FA1's CTA walks the K/V blocks in turn, each over every query block: a
// period of Tr + 1 steps after one opening step; where Bc does not divide N
// the last K/V block is shorter, so its period does not repeat (closing).
BOOST_AUTO_TEST_CASE(step_pattern_finds_fa1s_period_and_its_shorter_last_block) {
  const auto p = small_a100();
  workload::Problem prob;
  prob.batch = prob.heads = prob.kv_heads = 1;
  prob.seq_q = prob.seq_k = 1024;
  prob.head_dim = 64;
  for (const i64 bc : {i64{128}, i64{160}}) {
    BOOST_TEST_CONTEXT("Bc " << bc) {
      trace::TraceOptions o;
      o.algorithm = Algorithm::fa1;
      o.pass = Pass::fwd;
      o.sram_limit_bytes = p.smem_per_block_bytes;
      o.block_m = 64;
      o.block_n = bc;
      const auto tr = build_trace(prob, o);
      trace::AlgorithmKernelSource source(tr);
      const trace::RangeKernel* k = source.next_kernel();
      const engine::StepPattern s = engine::step_pattern(*k, 0);
      const i64 tr_blocks = 1024 / 64, tc_blocks = (1024 + bc - 1) / bc;
      BOOST_TEST(s.steps == 1 + tc_blocks * (tr_blocks + 1));
      BOOST_TEST(s.period == tr_blocks + 1);
      BOOST_TEST(s.prologue == 1);
      BOOST_TEST(s.closing == (1024 % bc == 0 ? 0 : tr_blocks + 1));
    }
  }
}

// The tally of skipped steps weights each step's bytes; charge_memory gives
// the skipped work the window's outcomes per requested byte of each kind and
// tensor, and exactly the tally's request bytes.
BOOST_AUTO_TEST_CASE(charged_counters_follow_each_tensors_requests) {
  trace::RangeStep step;
  step.loads.push_back({trace::AccessKind::Read, 0, 0, 256, 4, 256});   // 1 KiB of tensor 0
  step.stores.push_back({trace::AccessKind::Write, 1, 0, 128, 2, 128});  // 256 B of tensor 1
  engine::SkipTally tally;
  tally.add(step, 10);
  BOOST_TEST(tally.steps == 10);
  BOOST_TEST(tally.kind_bytes[0] == 10240);
  BOOST_TEST(tally.kind_bytes[1] == 2560);
  BOOST_TEST(tally.bytes() == 12800);

  memory::MemoryCounters w;  // a window: tensor 0 read 2 KiB, tensor 1 wrote 256 B, tensor 2 (none skipped) wrote 1 KiB
  w.l2.kind[0].bytes = 2048;
  w.l2.kind[0].sectors = 64;
  w.l2.kind[0].hit_sectors = 16;
  w.l2.kind[1].bytes = 256 + 1024;
  w.l2.kind[1].sectors = 40;
  w.l2.tensor.resize(4);
  w.l2.tensor[0] = {2048, 0, 16, 48, 48, 0};
  w.l2.tensor[1] = {0, 256, 0, 8, 0, 4};
  w.l2.tensor[2] = {0, 1024, 0, 32, 0, 32};  // e.g. other CTAs' closing stores: not charged
  w.l2.fetch_sectors = 48;
  w.l2.writeback_sectors = 36;
  w.dram.read_bytes = 48 * 32;
  w.dram.write_bytes = 36 * 32;
  w.dram.busy_cycles = 84;
  double f = 0;
  const memory::MemoryCounters c = engine::charge_memory(w, tally, /*local tensor*/ 3, 32, f);
  BOOST_TEST(f == 12800.0 / (2048 + 1280));
  BOOST_TEST(c.l2.kind[0].bytes == 10240);
  BOOST_TEST(c.l2.kind[1].bytes == 2560);
  BOOST_TEST(c.l2.kind[0].sectors == 320);  // 64 x 10240 / 2048
  BOOST_TEST(c.l2.kind[0].hit_sectors == 80);
  BOOST_TEST(c.l2.kind[0].miss_sectors == 240);
  BOOST_TEST(c.l2.tensor[0].read_bytes == 10240);
  BOOST_TEST(c.l2.tensor[0].fetch_sectors == 240);   // 48 x 5
  BOOST_TEST(c.l2.tensor[1].writeback_sectors == 40);  // 4 x 10
  BOOST_TEST(c.l2.tensor[2].writeback_sectors == 0);
  BOOST_TEST(c.l2.fetch_sectors == 240);
  BOOST_TEST(c.l2.writeback_sectors == 40);
  BOOST_TEST(c.dram.read_bytes == 240 * 32);
  BOOST_TEST(c.dram.write_bytes == 40 * 32);
}

// The run says it was approximate, in its JSON and its table.
BOOST_AUTO_TEST_CASE(reports_say_what_fast_forward_skipped) {
  const auto p = small_a100();
  const auto tr = build(p, Algorithm::fa2, Pass::fwd, 4, 16, 1024, 64);
  const SimulationResult y = engine::simulate(tr, p, fast());
  std::ostringstream json, table;
  {
    report::JsonWriter j(json, 0);
    j.begin_object();
    report::write_result_fields(j, y);
    report::write_kernel_array(j, y);
    j.end_object();
  }
  BOOST_TEST(json.str().find("\"fast_forward\":true") != std::string::npos);
  BOOST_TEST(json.str().find("\"skipped_ctas\":" + std::to_string(y.kernels.front().fast_forward.skipped_ctas)) !=
             std::string::npos);
  report::print_result_table(table, y);
  BOOST_TEST(table.str().find("APPROXIMATE: fast-forward ran") != std::string::npos);
}
