// The steps of identical CTAs vary in length (sm_pipes.step_jitter, measured
// by experiments/probes/step_jitter_probe.cu): the draws have the measured
// spread, are the same on every run, and are what keeps CTAs that share a
// tile from merging every read of it in the L2 (sim/engine/step_jitter.h).
#define BOOST_TEST_MODULE step_jitter
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "sim/engine/engine.h"
#include "sim/engine/step_jitter.h"
#include "sim/profile/hardware_profile.h"
#include "sim/trace/algorithms.h"

using namespace iosim;

BOOST_AUTO_TEST_CASE(draws_have_mean_one_and_the_profiles_spread) {
  const double cv = 0.0067;
  double sum = 0, sum2 = 0, tails = 0;
  const int ctas = 2000, steps = 100;
  for (int c = 0; c < ctas; ++c)
    for (int k = 0; k < steps; ++k) {
      const double f = engine::step_jitter_factor(cv, c, k);
      sum += f;
      sum2 += f * f;
      if (std::abs(f - 1) > 2.576 * cv) ++tails;  // a normal's 1% two-sided tails
    }
  const double n = double(ctas) * steps, mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
  BOOST_TEST(mean == 1.0, boost::test_tools::tolerance(1e-4));
  BOOST_TEST(sd == cv, boost::test_tools::tolerance(0.02));
  BOOST_TEST(tails / n == 0.01, boost::test_tools::tolerance(0.15));
  // The same CTA and step draw the same factor; neighbours differ.
  BOOST_TEST(engine::step_jitter_factor(cv, 17, 3) == engine::step_jitter_factor(cv, 17, 3));
  BOOST_TEST(engine::step_jitter_factor(cv, 17, 3) != engine::step_jitter_factor(cv, 17, 4));
  BOOST_TEST(engine::step_jitter_factor(cv, 17, 3) != engine::step_jitter_factor(cv, 18, 3));
  BOOST_TEST(engine::step_jitter_factor(0, 17, 3) == 1.0);
}

namespace {

profile::HardwareProfile h200() {
  return profile::load_profile(profile::default_profile_dir() + "/h200-sxm-141gb.yaml");
}

workload::Problem problem(i64 batch, i64 heads, i64 seq, i64 head_dim) {
  workload::Problem prob;
  prob.batch = batch;
  prob.heads = prob.kv_heads = heads;
  prob.seq_q = prob.seq_k = seq;
  prob.head_dim = head_dim;
  return prob;
}

trace::TraceOptions options(workload::Algorithm algorithm, const profile::HardwareProfile& p) {
  trace::TraceOptions o;
  o.algorithm = algorithm;
  o.sram_limit_bytes = p.smem_per_block_bytes;
  return o;
}

engine::KernelResult qk_gemm(double step_jitter) {
  profile::HardwareProfile p = h200();
  p.sm_pipes.step_jitter = step_jitter;
  workload::Problem prob = problem(16, 8, 1000, 128);
  prob.causal = true;
  trace::TraceOptions o = options(workload::Algorithm::standard, p);
  o.gemm.m = o.gemm.n = 64;
  engine::EngineOptions e;
  e.cold_l2_per_kernel = true;
  return engine::simulate(trace::build_trace(prob, o), p, e).kernels.at(0);
}

}  // namespace

// S = Q K^T with 64 x 64 tiles: the CTAs of one row of S read the same Q tile
// at the same step. In lockstep most of those reads merge in the L2; with
// the H200's measured jitter far fewer do (the GPU looks up 89% of the
// requested sectors: experiments/validation/h200/grid.csv,
// std-fwd-d128-n1000-bh128-c-64x64), while the time hardly moves.
BOOST_AUTO_TEST_CASE(jittered_steps_merge_fewer_shared_tile_reads_and_keep_the_time) {
  const engine::KernelResult lockstep = qk_gemm(0), jittered = qk_gemm(0.0067);
  BOOST_TEST_REQUIRE(lockstep.name == "std_fwd_qk");
  const auto& a = lockstep.l2.kind[0];
  const auto& b = jittered.l2.kind[0];
  BOOST_TEST(a.sectors == b.sectors);  // the same requests
  BOOST_TEST(double(b.lookup_sectors) > 1.1 * double(a.lookup_sectors));
  BOOST_TEST(b.lookup_sectors <= b.sectors);
  BOOST_TEST(jittered.cycles == lockstep.cycles, boost::test_tools::tolerance(0.01));
  BOOST_TEST(jittered.dram_read_bytes == lockstep.dram_read_bytes, boost::test_tools::tolerance(0.01));
  // Deterministic: the same run gives the same counts.
  BOOST_TEST(qk_gemm(0.0067).l2.kind[0].lookup_sectors == b.lookup_sectors);
}

BOOST_AUTO_TEST_CASE(priority_factors_follow_the_measured_form_and_average_to_one) {
  const double a = 0.106;
  // The probe's 5-CTA ranks: 0.89, 0.93, 0.98, 1.06, 1.14 of the SM's mean.
  const double measured[] = {0.8905, 0.9310, 0.9832, 1.0600, 1.1354};
  for (int r = 0; r < 5; ++r)
    BOOST_TEST(engine::cta_priority_factor(a, 5, r) == measured[r], boost::test_tools::tolerance(0.035));
  for (int n = 2; n <= 8; ++n) {
    double sum = 0;
    for (int r = 0; r < n; ++r) {
      sum += engine::cta_priority_factor(a, n, r);
      if (r > 0 && n > 2) BOOST_TEST(engine::cta_priority_factor(a, n, r) > engine::cta_priority_factor(a, n, r - 1));
    }
    BOOST_TEST(sum / n == 1.0, boost::test_tools::tolerance(1e-12));
  }
  // Past 8 CTAs: the first 8 ranks as at 8, the later ones at the mean.
  BOOST_TEST(engine::cta_priority_factor(a, 12, 3) == engine::cta_priority_factor(a, 8, 3));
  BOOST_TEST(engine::cta_priority_factor(a, 12, 9) == 1.0);
  BOOST_TEST(engine::cta_priority_factor(a, 1, 0) == 1.0);
  BOOST_TEST(engine::cta_priority_factor(0, 5, 4) == 1.0);
}

namespace {

// FA1 forward at 5 CTAs per SM on an 8-SM H200: 62 CTAs, 1.55 waves.
double fa1_tail_cycles(double step_jitter, double cta_priority) {
  profile::HardwareProfile p = h200();
  p.sm_count = 8;
  p.sm_pipes.step_jitter = step_jitter;
  p.sm_pipes.cta_priority = cta_priority;
  trace::TraceOptions o = options(workload::Algorithm::fa1, p);
  o.block_m = o.block_n = 64;
  const engine::KernelResult k = engine::simulate(trace::build_trace(problem(2, 31, 1024, 64), o), p, {}).kernels.at(0);
  BOOST_TEST_REQUIRE(k.occupancy.ctas_per_sm == 5);
  return k.cycles;
}

}  // namespace

// The second wave's 22 CTAs: in lockstep the first wave ends all at once and
// the queue's tie order spreads them 2-3 per SM; with the jitter alone the
// first wave ends in random order and some SMs take 4-5 of them, which then
// run slower; with the SM's priority for its older CTAs the first wave ends
// rank by rank, as on the GPU, and the tail is spread again.
BOOST_AUTO_TEST_CASE(older_ctas_first_keeps_a_partial_waves_tail_spread_over_the_sms) {
  const double lockstep = fa1_tail_cycles(0, 0);
  const double jitter_only = fa1_tail_cycles(0.0067, 0);
  const double with_priority = fa1_tail_cycles(0.0067, 0.106);
  BOOST_TEST(jitter_only > 1.03 * lockstep);
  BOOST_TEST(with_priority == lockstep, boost::test_tools::tolerance(0.01));
}

// The run says which spread it used, so a reader of the JSON can tell a
// jittered run from a lockstep one.
BOOST_AUTO_TEST_CASE(the_result_reports_the_spread_it_used) {
  profile::HardwareProfile p = h200();
  const workload::Problem prob = problem(1, 1, 256, 64);
  const trace::TraceOptions o = options(workload::Algorithm::fa2, p);
  const auto r = engine::simulate(trace::build_trace(prob, o), p, {});
  BOOST_TEST(r.step_jitter == p.sm_pipes.step_jitter);
  BOOST_TEST(r.cta_priority == p.sm_pipes.cta_priority);
  BOOST_TEST(r.step_jitter > 0);
  p.sm_pipes.present = false;  // datasheet timing: no measured spread
  const auto bare = engine::simulate(trace::build_trace(prob, o), p, {});
  BOOST_TEST(bare.step_jitter == 0);
  BOOST_TEST(bare.cta_priority == 0);
}
