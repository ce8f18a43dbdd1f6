// standard-eager's CUDA kernels (GPT-2's eager attention: S = Q K^T, S / sqrt(d),
// the mask kernel, a plain softmax, dropout, O = Pd V, and the backward of
// each) against the double-precision reference with the same dropout mask
// (sim/common/philox.h; the harness seeds it with the run's --seed): forward
// O, backward dQ, dK, dV, and the keep mask Z element by element; fp16 and
// bf16, head dims 64 and 128; the elementwise kernels' vector path (N_k a
// multiple of 8) and element path, 4 rows per CTA and 1, causal with
// N_q < N_k and N_q > N_k (rows that see no key), a block mask, GQA, and
// dropout's keep rate.
//
// Error bounds: 2x the shared per-dtype bounds (gpu_test_support.h). Standard
// attention's 1.5x covers S rounded to the data type before the softmax;
// eager rounds S a second time (S / sqrt(d) is stored) and P a second time
// (Pd = P / (1 - p) is stored before P V and P^T dO), each one more unit
// roundoff of the same size.
#define BOOST_TEST_MODULE test_gpu_standard_eager
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/harness/runner.h"

using iosim::i64;
using iosim::gputest::problem;
using iosim::gputest::requires_gpu;
using iosim::harness::RunSpec;
using iosim::workload::DType;
using iosim::workload::Layout;
using iosim::workload::Pass;

namespace {

const DType kDtypes[] = {DType::fp16, DType::bf16};
const i64 kHeadDims[] = {64, 128};
constexpr double kBoundFactor = 2.0;

RunSpec spec(const iosim::workload::Problem& p, std::uint64_t seed, double dropout = 0.1) {
  RunSpec s;
  s.problem = p;
  s.algorithm = "standard-eager";
  s.data_seed = seed;
  s.dropout = dropout;
  return s;
}

// harness::check: every output within its bound, Z equal to the rule's mask,
// and the pass's tensors all compared; one RESULT line per tensor.
iosim::harness::CheckResult expect_matches_reference(const RunSpec& s, Pass pass, const std::string& label) {
  const iosim::harness::CheckResult r = iosim::harness::check(s, pass);
  const auto tol = iosim::gputest::tolerance(s.problem.dtype);
  std::string compared;
  for (const auto& e : r.errors) compared += e.tensor + " ";
  BOOST_TEST(compared == iosim::gputest::checked_tensors(s.algorithm, pass));
  for (const auto& e : r.errors) {
    const double bound = e.tensor == "Z" ? 0.0 : kBoundFactor * (e.tensor == "O" ? tol.out : tol.grad);
    const double rel = e.norms.relative();
    std::cout << "RESULT standard-eager " << iosim::workload::to_string(pass) << " " << label
              << " d=" << s.problem.head_dim << " " << iosim::workload::to_string(s.problem.dtype) << " p=" << s.dropout
              << " " << e.tensor << " rel=" << rel << " bound=" << bound << "\n";
    BOOST_TEST(rel <= bound, label << " " << iosim::workload::to_string(pass) << " " << e.tensor << ": relative error "
                                   << rel << " > " << bound << " (max|err| " << e.norms.max_abs_error << ", max|ref| "
                                   << e.norms.max_abs_ref << ")");
  }
  return r;
}

void expect_both_passes(const RunSpec& s, const std::string& label) {
  BOOST_TEST_CONTEXT(label << " d=" << s.problem.head_dim << " " << iosim::workload::to_string(s.problem.dtype)
                           << " Nq=" << s.problem.seq_q << " Nk=" << s.problem.seq_k
                           << (s.problem.causal ? " causal" : "")) {
    expect_matches_reference(s, Pass::fwd, label);
    expect_matches_reference(s, Pass::bwd, label);
  }
}

template <class F>
void for_all(F body) {
  for (const DType t : kDtypes)
    for (const i64 d : kHeadDims) body(t, d);
}

}  // namespace

// N_k = 333: the elementwise kernels' element-by-element path; not causal, so
// no mask kernel runs.
BOOST_AUTO_TEST_CASE(eager_matches_reference_on_ragged_lengths, *requires_gpu()) {
  for_all([](DType t, i64 d) { expect_both_passes(spec(problem(2, 3, 3, 333, 333, d, t), 41), "ragged"); });
}

// Causal, N_k = 256 and 1536 (multiples of 8: 16-byte vectors), 4 rows per CTA
// and one (N_k > 1024); the mask kernel writes -inf, the softmax does not mask.
BOOST_AUTO_TEST_CASE(eager_causal_vector_path_matches_reference, *requires_gpu()) {
  for_all([](DType t, i64 d) {
    expect_both_passes(spec(problem(1, 2, 2, 200, 256, d, t, true), 42), "causal_4_rows");
    expect_both_passes(spec(problem(1, 2, 2, 100, 1536, d, t, true, Layout::bhsd), 43), "causal_1_row");
  });
}

// N_q > N_k: the first rows see no key, their mask rows are all 0, the
// softmax of an all -inf row is 0, and no gradient flows from them.
BOOST_AUTO_TEST_CASE(eager_rows_that_see_no_key_give_zero_output, *requires_gpu()) {
  for_all([](DType t, i64 d) {
    expect_both_passes(spec(problem(1, 2, 2, 300, 168, d, t, true, Layout::bhsd), 44), "causal_nq>nk");
  });
}

// A block mask on the GEMM tile grid with an empty query block and an unused
// key block, with and without causal: the mask buffer holds both rules.
BOOST_AUTO_TEST_CASE(eager_block_mask_is_applied_by_the_mask_kernel, *requires_gpu()) {
  for_all([](DType t, i64 d) {
    for (const bool causal : {false, true}) {
      RunSpec s = spec(problem(1, 2, 2, 430, 472, d, t, causal), 45);
      s.mask = iosim::gputest::holey_block_mask(s, Pass::bwd);
      expect_both_passes(s, causal ? "block_sparse_causal" : "block_sparse");
    }
  });
}

// GQA (8 query heads on 2 KV heads) and MQA, with dropout: dK and dV sum the
// group's heads, each head with its own dropout mask.
BOOST_AUTO_TEST_CASE(eager_gqa_sums_dk_dv_over_the_group, *requires_gpu()) {
  for_all([](DType t, i64 d) {
    expect_both_passes(spec(problem(2, 8, 2, 256, 192, d, t, false, Layout::bhsd), 46), "gqa");
    expect_both_passes(spec(problem(1, 4, 1, 160, 160, d, t, true), 47), "mqa_causal");
  });
}

// Dropout 0 is standard attention with the scale and mask as kernels of
// their own; 0.5 drops half; each within the bound, Z exactly the rule's.
BOOST_AUTO_TEST_CASE(eager_matches_reference_at_other_dropout_rates, *requires_gpu()) {
  for (const double p : {0.0, 0.5})
    expect_both_passes(spec(problem(1, 2, 2, 256, 256, 64, DType::fp16, true), 48, p), "dropout");
}

// The kernel's keep mask keeps 1 - p of the elements within 5 standard
// deviations (2^21 elements), for two seeds; Z itself equals the rule's mask
// (checked with every run above).
BOOST_AUTO_TEST_CASE(eager_dropout_keep_rate_is_one_minus_p, *requires_gpu()) {
  for (const std::uint64_t seed : {51u, 52u})
    for (const double p : {0.1, 0.5}) {
      const RunSpec s = spec(problem(2, 4, 4, 512, 512, 64, DType::fp16), seed, p);
      const auto r = expect_matches_reference(s, Pass::fwd, "keep_rate");
      BOOST_TEST_REQUIRE(r.keep_fraction.has_value());
      const double n = 2.0 * 4 * 512 * 512, sigma = std::sqrt(p * (1 - p) / n);
      std::cout << "RESULT standard-eager keep_rate seed=" << seed << " p=" << p << " kept=" << *r.keep_fraction
                << "\n";
      BOOST_TEST(std::abs(*r.keep_fraction - (1 - p)) < 5 * sigma,
                 "seed " << seed << " p " << p << ": kept " << *r.keep_fraction);
    }
}
