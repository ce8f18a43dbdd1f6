// Standard attention with its GEMMs on the wgmma + TMA kernel
// (kernels/standard/sm90a, --gemm-impl wgmma, tile 128x128x64) against the
// double-precision reference: forward O, backward dQ, dK, dV, fp16 and bf16,
// head dims 64 and 128, on what a TMA/wgmma pipeline gets wrong: ragged
// lengths (TMA zero-fills the chunks' out-of-bounds parts; C is cut at the
// edge), causal with N_q != N_k, GQA (the operands' head index and dK/dV's
// sum over the group: k_groups > 1), both layouts, long reductions that wrap
// the stage ring many times (O = P V at N = 1000: 16 chunks), and CTAs that
// compute 4 output tiles in turn (tiles_per_cta = 4, fewer at the right edge).
// Outputs are poisoned with NaN before each run (harness::check). Bounds:
// standard attention's 1.5x the shared ones (test_gpu_standard_fa1.cpp).
// Without a GPU every case is skipped; on a GPU other than Hopper too.
#define BOOST_TEST_MODULE test_gpu_standard_wgmma
#include <boost/test/unit_test.hpp>

#include <iostream>
#include <string>

#include "gpu_test_support.h"
#include "kernels/common/device_info.h"
#include "kernels/harness/runner.h"
#include "sim/common/error.h"

using iosim::i64;
using iosim::gputest::problem;
using iosim::harness::RunSpec;
using iosim::kernels::GemmImpl;
using iosim::workload::DType;
using iosim::workload::Layout;
using iosim::workload::Pass;

namespace {

constexpr double kBoundFactor = 1.5;
const DType kDtypes[] = {DType::fp16, DType::bf16};


RunSpec wgmma_spec(const iosim::workload::Problem& p, std::uint64_t seed) {
  RunSpec s;
  s.problem = p;
  s.algorithm = "standard";
  s.data_seed = seed;
  s.gemm = {128, 128, 64};
  s.gemm_impl = GemmImpl::wgmma;
  return s;
}

void expect_matches(const RunSpec& s, Pass pass, const std::string& label) {
  const iosim::harness::CheckResult r = iosim::harness::check(s, pass);
  const auto tol = iosim::gputest::tolerance(s.problem.dtype);
  std::string compared;
  for (const auto& e : r.errors) compared += e.tensor + " ";
  BOOST_TEST(compared == iosim::gputest::checked_tensors(s.algorithm, pass));
  for (const auto& e : r.errors) {
    const double bound = kBoundFactor * (e.tensor == "O" ? tol.out : tol.grad);
    const double rel = e.norms.relative();
    std::cout << "RESULT standard-wgmma " << iosim::workload::to_string(pass) << " " << label
              << " d=" << s.problem.head_dim << " " << iosim::workload::to_string(s.problem.dtype) << " " << e.tensor
              << " rel=" << rel << " bound=" << bound << "\n";
    BOOST_TEST(rel <= bound, label << " " << iosim::workload::to_string(pass) << " " << e.tensor << ": relative error "
                                   << rel << " > " << bound << " (max|err| " << e.norms.max_abs_error << ", max|ref| "
                                   << e.norms.max_abs_ref << ")");
  }
}

void expect_both_passes(const iosim::workload::Problem& p, std::uint64_t seed, const std::string& label) {
  const RunSpec s = wgmma_spec(p, seed);
  BOOST_TEST_CONTEXT(label << " d=" << p.head_dim << " " << iosim::workload::to_string(p.dtype) << " Nq=" << p.seq_q
                           << " Nk=" << p.seq_k << (p.causal ? " causal" : "")) {
    expect_matches(s, Pass::fwd, label);
    expect_matches(s, Pass::bwd, label);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(ragged_n1000_both_head_dims, *iosim::gputest::requires_hopper_for_wgmma()) {
  for (const DType t : kDtypes)
    for (const i64 d : {64, 128}) expect_both_passes(problem(2, 4, 4, 1000, 1000, d, t), 11, "n1000");
}

BOOST_AUTO_TEST_CASE(ragged_n333_causal_nq_ne_nk_gqa_both_layouts, *iosim::gputest::requires_hopper_for_wgmma()) {
  for (const DType t : kDtypes) {
    expect_both_passes(problem(2, 4, 2, 333, 1000, 64, t, true, Layout::bshd), 12, "causal-gqa-333x1000-bshd");
    expect_both_passes(problem(1, 4, 1, 1000, 333, 128, t, true, Layout::bhsd), 13, "causal-mqa-1000x333-bhsd");
  }
}

// 32 heads x 8 query tiles x 3 CTA columns = 768 CTAs >= 512: the plan gives
// S = Q K^T and dP = dO V^T 4 tiles per CTA (9 key tiles: the last CTA has 1).
BOOST_AUTO_TEST_CASE(four_tiles_per_cta_ragged_gqa, *iosim::gputest::requires_hopper_for_wgmma()) {
  for (const DType t : kDtypes) expect_both_passes(problem(4, 8, 2, 1000, 1100, 64, t), 14, "tiles4-1000x1100-gqa");
}

BOOST_AUTO_TEST_CASE(wgmma_with_another_tile_is_one_input_error, *iosim::gputest::requires_hopper_for_wgmma()) {
  RunSpec s = wgmma_spec(problem(1, 2, 2, 256, 256, 64, DType::fp16), 1);
  s.gemm = {128, 128, 32};
  BOOST_CHECK_EXCEPTION(iosim::harness::check(s, Pass::fwd), iosim::InputError, [](const iosim::InputError& e) {
    const std::string what = e.what();
    return what.find("--gemm-impl wgmma") != std::string::npos && what.find("128x128x64") != std::string::npos;
  });
}
