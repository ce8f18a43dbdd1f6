// Shared by the GPU tests (tests/gpu/test_gpu_*.cpp): skipping without a GPU,
// problem builders, the compiled tile menu, and per-dtype error bounds.
//
// Skipping: every GPU test case takes `*iosim::gputest::requires_gpu()`. With
// no usable CUDA device the precondition prints
//   SKIPPED: no CUDA device (cudaGetDeviceCount: <error>) [<test case>]
// and Boost.Test skips the case; tests/gpu/CMakeLists.txt gives ctest that
// line as SKIP_REGULAR_EXPRESSION, so ctest reports the test as Skipped
// rather than as a silent pass.
//
// Error measure: the max-norm relative error |x - ref|_max / |ref|_max of each
// output tensor against the double-precision reference (sim/numerics), on
// inputs rounded to the data type (the reference sees the same rounded
// values). Unwritten outputs stay NaN (the harness poisons them) and give an
// infinite error.
#pragma once
#include <boost/test/unit_test.hpp>

#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "kernels/common/attention_api.h"
#include "kernels/common/device_info.h"
#include "kernels/harness/runner.h"

namespace iosim::gputest {

inline boost::test_tools::assertion_result require_cuda_device(boost::unit_test::test_unit_id id) {
  const std::string why = kernels::no_device_reason();
  if (why.empty()) return true;
  std::cout << "SKIPPED: " << why << " [" << boost::unit_test::framework::get(id, boost::unit_test::TUT_ANY).p_name.get()
            << "]" << std::endl;
  boost::test_tools::assertion_result r(false);
  r.message() << "SKIPPED: " << why;
  return r;
}
// A function pointer, not an empty functor: GCC warns that boost::function
// copies the uninitialised bytes of an empty functor's buffer (-Wuninitialized).
inline boost::unit_test::decorator::precondition requires_gpu() {
  return boost::unit_test::precondition(&require_cuda_device);
}

// The wgmma GEMM (kernels/standard/sm90a) and FA3 (kernels/fa3) run on Hopper
// (sm_90) only: elsewhere their cases print "SKIPPED: the wgmma GEMM needs a
// Hopper GPU ..." or "SKIPPED: fa3 needs a Hopper GPU ..." (the executables'
// SKIP_REGULAR_EXPRESSION in tests/gpu/CMakeLists.txt).
inline boost::test_tools::assertion_result require_hopper(boost::unit_test::test_unit_id id, const char* what) {
  const boost::test_tools::assertion_result has_device = require_cuda_device(id);
  if (!has_device) return has_device;
  const int cc = kernels::launch_limits().compute_capability;
  if (cc == 90) return true;
  std::cout << "SKIPPED: " << what << " needs a Hopper GPU (sm_90), this one is sm_" << cc << std::endl;
  boost::test_tools::assertion_result r(false);
  r.message() << "SKIPPED: not a Hopper GPU";
  return r;
}
inline boost::test_tools::assertion_result require_hopper_for_wgmma(boost::unit_test::test_unit_id id) {
  return require_hopper(id, "the wgmma GEMM");
}
inline boost::test_tools::assertion_result require_hopper_for_fa3(boost::unit_test::test_unit_id id) {
  return require_hopper(id, "fa3");
}
inline boost::unit_test::decorator::precondition requires_hopper_for_wgmma() {
  return boost::unit_test::precondition(&require_hopper_for_wgmma);
}
inline boost::unit_test::decorator::precondition requires_hopper_for_fa3() {
  return boost::unit_test::precondition(&require_hopper_for_fa3);
}

inline workload::Problem problem(i64 batch, i64 heads, i64 kv_heads, i64 seq_q, i64 seq_k, i64 head_dim,
                                 workload::DType dtype, bool causal = false,
                                 workload::Layout layout = workload::Layout::bshd) {
  workload::Problem p;
  p.batch = batch;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.seq_q = seq_q;
  p.seq_k = seq_k;
  p.head_dim = head_dim;
  p.dtype = dtype;
  p.causal = causal;
  p.layout = layout;
  return p;
}

// Error bounds per data type (max-norm relative error, see above). Sources:
// rounding the output to the data type (unit roundoff u = 2^-11 fp16, 2^-8
// bf16), P and dS rounded to the data type before their matrix products, fp32
// accumulation; L is fp32 throughout. Bounds: 4u for O, 6u for the gradients,
// 1e-5 for L. First measured maxima (H200, 2026-11-22, every case of this
// file): O 5.4e-4 fp16 / 4.2e-3 bf16, gradients 6.5e-4 / 5.1e-3, L 1.4e-7.
struct Tolerance {
  double out;   // O
  double lse;   // L (fp32 statistics)
  double grad;  // dQ, dK, dV
};
inline Tolerance tolerance(workload::DType t) {
  if (t == workload::DType::bf16) return {4 * 0x1p-8, 1e-5, 6 * 0x1p-8};
  return {4 * 0x1p-11, 1e-5, 6 * 0x1p-11};
}

// The tensors harness::check compares for a pass, in its order ("Z O L dQ dK
// dV"; standard attention has no L, standard-eager adds its keep mask Z): a
// check that compared nothing must fail.
inline std::string checked_tensors(const std::string& algorithm, workload::Pass pass) {
  const bool standard = algorithm == "standard" || algorithm == "standard-eager";
  std::string names = algorithm == "standard-eager" ? "Z " : "";
  if (pass != workload::Pass::bwd) names += standard ? "O " : "O L ";
  if (pass != workload::Pass::fwd) names += "dQ dK dV ";
  return names;
}

// Runs harness::check and requires every tensor's error under the dtype's
// bound, and that the pass's tensors were all compared.
inline void expect_matches_reference(const harness::RunSpec& s, workload::Pass pass) {
  const harness::CheckResult r = harness::check(s, pass);
  const Tolerance tol = tolerance(s.problem.dtype);
  std::string compared;
  for (const auto& e : r.errors) compared += e.tensor + " ";
  BOOST_TEST_REQUIRE(!r.errors.empty(), s.algorithm << " " << workload::to_string(pass) << ": nothing compared");
  BOOST_TEST(compared == checked_tensors(s.algorithm, pass));
  for (const auto& e : r.errors) {
    const double bound = e.tensor == "O" ? tol.out : e.tensor == "L" ? tol.lse : tol.grad;
    const double rel = e.norms.relative();
    BOOST_TEST_MESSAGE(s.algorithm << " " << workload::to_string(pass) << " " << e.tensor << " rel " << rel
                                   << " (bound " << bound << ")");
    BOOST_TEST(rel <= bound, s.algorithm << " " << workload::to_string(pass) << " Br=" << r.blocks.m
                                         << " Bc=" << r.blocks.n << " " << e.tensor << ": relative error " << rel
                                         << " > " << bound << " (max|err| " << e.norms.max_abs_error
                                         << ", max|ref| " << e.norms.max_abs_ref << ")");
  }
}

// A block mask on the tile grid s runs `pass` on (harness::default_blocks):
// query block 1 empty, key block 2 never used, the rest pseudo-random.
inline workload::BlockMask holey_block_mask(const harness::RunSpec& s, workload::Pass pass) {
  const auto blocks = harness::default_blocks(s, pass);
  const i64 mb = ceil_div(s.problem.seq_q, blocks.m), nb = ceil_div(s.problem.seq_k, blocks.n);
  workload::BlockMask mask{mb, nb, std::vector<std::uint8_t>(static_cast<size_t>(mb * nb))};
  for (i64 i = 0; i < mb; ++i)
    for (i64 j = 0; j < nb; ++j)
      mask.active[static_cast<size_t>(i * nb + j)] = (i == 1 || j == 2) ? 0 : ((i * 7 + j * 3) % 5 != 0);
  return mask;
}

// One compiled instantiation, parsed from kernels::compiled_menu() entries of
// the form "[fwd|bwd ]d=64 Br=128 Bc=128 fp16".
struct MenuTile {
  std::string pass;  // "fwd", "bwd" or "" (both)
  i64 head_dim = 0, block_m = 0, block_n = 0;
  workload::DType dtype = workload::DType::fp16;
};
inline std::vector<MenuTile> compiled_tiles(const std::string& algorithm) {
  static const std::regex re(R"(^(?:(fwd|bwd) )?d=(\d+) Br=(\d+) Bc=(\d+) (fp16|bf16)$)");
  std::vector<MenuTile> out;
  for (const auto& entry : kernels::compiled_menu(algorithm)) {
    std::smatch m;
    if (!std::regex_match(entry, m, re)) continue;
    out.push_back({m[1].str(), std::stoll(m[2].str()), std::stoll(m[3].str()), std::stoll(m[4].str()),
                   workload::parse_dtype(m[5].str())});
  }
  return out;
}

}  // namespace iosim::gputest
