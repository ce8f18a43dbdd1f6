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

engine::KernelResult qk_gemm(double step_jitter) {
  profile::HardwareProfile p = profile::load_profile(profile::default_profile_dir() + "/h200-sxm-141gb.yaml");
  p.sm_pipes.step_jitter = step_jitter;
  workload::Problem prob;
  prob.batch = 16;
  prob.heads = prob.kv_heads = 8;
  prob.seq_q = prob.seq_k = 1000;
  prob.head_dim = 128;
  prob.causal = true;
  trace::TraceOptions o;
  o.algorithm = workload::Algorithm::standard;
  o.sram_limit_bytes = p.smem_per_block_bytes;
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
