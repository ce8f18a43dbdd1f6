// FlashAttention-3 forward kernel (kernels/fa3, Hopper only) against the
// double-precision reference: O and L for fp16 and bf16, head dims 64 and
// 128, on the cases where a TMA/wgmma pipeline goes wrong: ragged lengths
// (TMA zero-fills the rows past the end; the kernel masks the columns),
// bottom-right causal masking with N_q != N_k, rows that see no key, large
// logits, grouped-query attention in both layouts, and sequences long enough
// that the K/V stage ring wraps several times (mbarrier phases). Outputs are
// poisoned with NaN before each run (harness::check), so an unwritten row
// fails. Without a GPU every case is skipped; on a GPU other than Hopper
// (sm_90) too, with its own message.
#define BOOST_TEST_MODULE test_gpu_fa3
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/common/attention_api.h"
#include "kernels/common/device_info.h"
#include "kernels/fa3/fa3_launch.h"
#include "kernels/fa3/fa3_patterned_run.h"
#include "sim/common/error.h"

using iosim::i64;
using iosim::gputest::problem;
using iosim::harness::RunSpec;
using iosim::workload::DType;
using iosim::workload::Layout;
using iosim::workload::Pass;

namespace {

const DType kDtypes[] = {DType::fp16, DType::bf16};
const i64 kHeadDims[] = {64, 128};

boost::unit_test::decorator::precondition requires_hopper() { return iosim::gputest::requires_hopper_for_fa3(); }

RunSpec fa3(const iosim::workload::Problem& p, std::uint64_t seed) {
  RunSpec s;
  s.problem = p;
  s.algorithm = "fa3";
  s.data_seed = seed;
  return s;
}

void expect_forward(const RunSpec& s) {
  BOOST_TEST_CONTEXT("d=" << s.problem.head_dim << " " << iosim::workload::to_string(s.problem.dtype)
                          << " B=" << s.problem.batch << " H=" << s.problem.heads << "/" << s.problem.kv_heads
                          << " Nq=" << s.problem.seq_q << " Nk=" << s.problem.seq_k
                          << (s.problem.causal ? " causal" : "")) {
    iosim::gputest::expect_matches_reference(s, Pass::fwd);
  }
}

// Every dtype and head dim of `p`.
template <class Fn>
void for_each_variant(Fn&& fn) {
  for (const DType t : kDtypes)
    for (const i64 d : kHeadDims) fn(t, d);
}

}  // namespace

BOOST_AUTO_TEST_CASE(fa3_matches_reference_on_ragged_lengths, *requires_hopper()) {
  for_each_variant([](DType t, i64 d) { expect_forward(fa3(problem(2, 3, 3, 333, 333, d, t), 11)); });
}

BOOST_AUTO_TEST_CASE(fa3_causal_is_bottom_right_aligned_with_fewer_queries_than_keys, *requires_hopper()) {
  for_each_variant([](DType t, i64 d) { expect_forward(fa3(problem(1, 2, 2, 200, 328, d, t, true), 12)); });
}

// N_q > N_k: the first N_q - N_k rows see no key (O = 0, L = -inf), and whole
// query blocks have no key block at all (the producer loads nothing).
BOOST_AUTO_TEST_CASE(fa3_causal_rows_that_see_no_key_give_zero_output_and_minus_inf_lse, *requires_hopper()) {
  for_each_variant([](DType t, i64 d) { expect_forward(fa3(problem(1, 2, 2, 300, 170, d, t, true), 13)); });
}

// Logits with a standard deviation of 10 before the softmax scale (see
// test_gpu_fa2): the online softmax must rescale without overflow.
BOOST_AUTO_TEST_CASE(fa3_large_logits_keep_accuracy, *requires_hopper()) {
  for_each_variant([](DType t, i64 d) {
    RunSpec s = fa3(problem(1, 2, 2, 256, 256, d, t), 14);
    s.q_scale = 10.0 * 3.0 / std::sqrt(static_cast<double>(d));
    expect_forward(s);
  });
}

// GQA (8 query heads on 2 KV heads, BHSD layout: the TMA maps take the
// strides) and MQA (causal, 1 KV head).
BOOST_AUTO_TEST_CASE(fa3_gqa_and_mqa_read_the_group_kv_head, *requires_hopper()) {
  for_each_variant([](DType t, i64 d) {
    expect_forward(fa3(problem(2, 8, 2, 256, 192, d, t, false, Layout::bhsd), 15));
    expect_forward(fa3(problem(1, 4, 1, 160, 160, d, t, true), 16));
  });
}

// 12 and 9 key blocks: the 2- to 4-stage ring wraps several times, so every
// barrier goes through both phase parities more than once.
BOOST_AUTO_TEST_CASE(fa3_long_sequences_wrap_the_stage_ring, *requires_hopper()) {
  for_each_variant([](DType t, i64 d) {
    expect_forward(fa3(problem(1, 2, 1, 1100, 1500, d, t), 17));
    expect_forward(fa3(problem(1, 2, 2, 1500, 1100, d, t, true), 18));
  });
}

BOOST_AUTO_TEST_CASE(fa3_rejects_the_backward_pass_and_other_tiles, *requires_hopper()) {
  RunSpec s = fa3(problem(1, 1, 1, 64, 64, 64, DType::fp16), 19);
  BOOST_CHECK_THROW(iosim::harness::check(s, Pass::bwd), iosim::InputError);
  s.block_m = 64;
  s.block_n = 64;
  BOOST_CHECK_THROW(iosim::harness::check(s, Pass::fwd), iosim::InputError);
  s.problem.head_dim = 96;
  s.block_m = s.block_n = 0;
  BOOST_CHECK_THROW(iosim::harness::check(s, Pass::fwd), iosim::InputError);
}

namespace {

// Runs fa3 with each scheduling variant on one causal GQA problem whose
// ring wraps several times; returns O (bits) and L per variant.
struct VariantRun {
  std::vector<std::uint16_t> o;
  std::vector<float> lse;
};
std::vector<VariantRun> run_variants(i64 d, const std::vector<iosim::kernels::fa3::ForwardVariant>& variants) {
  iosim::kernels::fa3::PatternedRun run(problem(1, 2, 1, 700, 900, d, DType::bf16, true));
  std::vector<VariantRun> out;
  for (const auto& v : variants) {
    run.poison_outputs();
    iosim::kernels::fa3::forward(run.config, run.buffers(), nullptr, v);
    out.push_back({run.o.download(), run.lse.download()});
  }
  return out;
}

}  // namespace

// Ping-pong and the producer's K/V order change when GEMMs are issued and
// tiles loaded, not the arithmetic: O and L must be bit-identical.
BOOST_AUTO_TEST_CASE(fa3_issue_and_load_order_change_no_bit_of_the_result, *requires_hopper()) {
  for (const i64 d : kHeadDims) {
    const auto r = run_variants(d, {{true, true}, {false, true}, {true, false}, {false, false}});
    for (size_t k = 1; k < r.size(); ++k) {
      BOOST_TEST(r[k].o == r[0].o, "d=" << d << " variant " << k << ": O differs");
      BOOST_TEST(r[k].lse == r[0].lse, "d=" << d << " variant " << k << ": L differs");
    }
  }
}
