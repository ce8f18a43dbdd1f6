// Host-side rules of the kernel launchers and the iosim-kernels CLI that need
// no GPU (they run in CI): uncompiled tiles are refused before any device
// call, with the menu in the message; unknown or inconsistent flags are one
// clear error and a non-zero exit code.
#define BOOST_TEST_MODULE test_gpu_launch_checks
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "gpu_test_support.h"
#include "kernels/common/attention_api.h"
#include "sim/common/error.h"

using iosim::gputest::problem;
using iosim::workload::DType;

namespace {

struct RunResult {
  int exit_code;
  std::string output;  // stdout and stderr
};
// The CLI built beside this test; IOSIM_KERNELS_CLI overrides the path when
// the binaries were moved (the GPU machine runs them from an unpacked bundle).
std::string cli_path() {
  const char* env = std::getenv("IOSIM_KERNELS_CLI");
  return env != nullptr && *env != '\0' ? env : IOSIM_KERNELS_CLI_PATH;
}

RunResult run_cli(const std::string& args) {
  const std::string cmd = cli_path() + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  BOOST_REQUIRE(pipe);
  std::string out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), pipe.get()) != nullptr) out += buf.data();
  const int status = pclose(pipe.release());
  return {WEXITSTATUS(status), out};
}

}  // namespace

BOOST_AUTO_TEST_CASE(fa2_uncompiled_tiles_throw_not_compiled_listing_the_menu) {
  iosim::kernels::AttentionConfig c;
  c.problem = problem(1, 1, 1, 128, 128, 64, DType::fp16);
  c.block_m = 48;  // not a menu value
  c.block_n = 128;
  int dummy = 0;
  float fdummy = 0;
  iosim::kernels::ForwardBuffers f{&dummy, &dummy, &dummy, &dummy, &fdummy};
  try {
    iosim::kernels::fa2_forward(c, f, nullptr);
    BOOST_FAIL("fa2_forward accepted Br=48");
  } catch (const iosim::kernels::NotCompiled& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("Br=48") != std::string::npos);
    BOOST_TEST(what.find("compiled: fwd d=64") != std::string::npos);
  }
  iosim::kernels::BackwardBuffers b{&dummy, &dummy, &dummy, &dummy, &dummy, &fdummy};
  b.dq = b.dk = b.dv = &dummy;
  b.dq_accum = b.d = &fdummy;
  BOOST_CHECK_THROW(iosim::kernels::fa2_backward(c, b, nullptr), iosim::kernels::NotCompiled);
}

BOOST_AUTO_TEST_CASE(fa2_menu_holds_flashattention2_default_tiles_in_both_dtypes) {
  const auto tiles = iosim::gputest::compiled_tiles("fa2");
  const auto has = [&](const std::string& pass, long d, long bm, long bn, DType t) {
    for (const auto& x : tiles)
      if (x.pass == pass && x.head_dim == d && x.block_m == bm && x.block_n == bn && x.dtype == t) return true;
    return false;
  };
  for (const DType t : {DType::fp16, DType::bf16}) {
    BOOST_TEST(has("fwd", 64, 128, 128, t));
    BOOST_TEST(has("fwd", 128, 128, 64, t));
    BOOST_TEST(has("bwd", 64, 128, 128, t));
    BOOST_TEST(has("bwd", 128, 64, 128, t));
  }
}

// Moved from test_gpu_standard_fa1 (which ctest skips as a whole without a GPU):
// FA1 and standard attention refuse uncompiled tiles and fp32 before any device call.
BOOST_AUTO_TEST_CASE(fa1_uncompiled_block_sizes_throw_not_compiled_listing_the_menu) {
  iosim::kernels::AttentionConfig c;
  c.problem = problem(1, 1, 1, 128, 128, 64, DType::fp16);
  c.block_m = 48;  // not a menu value
  c.block_n = 64;
  int dummy[4] = {};
  iosim::kernels::ForwardBuffers f;
  f.q = f.k = f.v = f.o = dummy;
  f.l = f.m = reinterpret_cast<float*>(dummy);
  try {
    iosim::kernels::fa1_forward(c, f, nullptr);
    BOOST_FAIL("fa1_forward accepted Br=48");
  } catch (const iosim::kernels::NotCompiled& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("Br=48") != std::string::npos, what);
    BOOST_TEST(what.find("compiled: " + iosim::kernels::compiled_menu("fa1").front()) != std::string::npos, what);
  }
  iosim::kernels::BackwardBuffers b;
  b.q = b.k = b.v = b.o = b.d_o = dummy;
  b.l = b.m = reinterpret_cast<float*>(dummy);
  b.dq = b.dk = b.dv = dummy;
  b.dq_accum = reinterpret_cast<float*>(dummy);
  BOOST_CHECK_THROW(iosim::kernels::fa1_backward(c, b, nullptr), iosim::kernels::NotCompiled);
  c.block_m = 64;
  c.problem.head_dim = 96;  // a multiple of 8, but no compiled head dim
  BOOST_CHECK_THROW(iosim::kernels::fa1_forward(c, f, nullptr), iosim::kernels::NotCompiled);
}

BOOST_AUTO_TEST_CASE(standard_uncompiled_gemm_tiles_throw_not_compiled_listing_the_menu) {
  iosim::kernels::AttentionConfig c;
  c.problem = problem(1, 1, 1, 128, 128, 64, DType::bf16);
  c.gemm_tiles.tile_m = 96;
  c.gemm_tiles.tile_n = 96;
  c.gemm_tiles.tile_k = 32;
  int dummy[4] = {};
  iosim::kernels::ForwardBuffers f;
  f.q = f.k = f.v = f.o = f.s = f.p = dummy;
  try {
    iosim::kernels::standard_forward(c, f, nullptr);
    BOOST_FAIL("standard_forward accepted a 96x96x32 GEMM tile");
  } catch (const iosim::kernels::NotCompiled& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("96x96x32") != std::string::npos, what);
    BOOST_TEST(what.find("compiled: " + iosim::kernels::compiled_menu("standard").front()) != std::string::npos, what);
  }
}

BOOST_AUTO_TEST_CASE(fp32_inputs_are_rejected_with_an_input_error) {
  iosim::kernels::AttentionConfig c;
  c.problem = problem(1, 1, 1, 128, 128, 64, DType::fp32);
  c.block_m = c.block_n = 64;
  int dummy[4] = {};
  iosim::kernels::ForwardBuffers f;
  f.q = f.k = f.v = f.o = f.s = f.p = dummy;
  f.l = f.m = reinterpret_cast<float*>(dummy);
  BOOST_CHECK_THROW(iosim::kernels::fa1_forward(c, f, nullptr), iosim::InputError);
  BOOST_CHECK_THROW(iosim::kernels::standard_forward(c, f, nullptr), iosim::InputError);
}

// standard-eager needs its dropout output, keep mask and (causal or
// block-sparse) mask buffer, and a dropout probability in [0, 1); each is
// refused by name before any device call.
BOOST_AUTO_TEST_CASE(standard_eager_refuses_missing_buffers_and_bad_dropout_by_name) {
  iosim::kernels::AttentionConfig c;
  c.problem = problem(1, 1, 1, 128, 128, 64, DType::fp16);
  c.problem.causal = true;
  int dummy[4] = {};
  const std::uint8_t bytes[4] = {};
  iosim::kernels::ForwardBuffers f;
  f.q = f.k = f.v = f.o = f.s = f.p = dummy;
  const auto error = [&] {
    try {
      iosim::kernels::standard_eager_forward(c, f, nullptr);
    } catch (const iosim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  BOOST_TEST(error().find("'Pd'") != std::string::npos, error());
  f.pd = dummy;
  f.z = const_cast<std::uint8_t*>(bytes);
  BOOST_TEST(error().find("'Mask'") != std::string::npos, error());
  f.mask = bytes;
  c.dropout_p = 1.0;
  BOOST_TEST(error().find("dropout probability") != std::string::npos, error());
}

BOOST_AUTO_TEST_CASE(cli_unknown_flag_is_one_error_and_exit_code_2) {
  const RunResult r = run_cli("check --head-dim 64 --seq 128 --bogus 1");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.output.find("unknown flag '--bogus'") != std::string::npos, r.output);
}

BOOST_AUTO_TEST_CASE(cli_requires_head_dim_and_sequence_length) {
  BOOST_TEST(run_cli("bench --seq 128").exit_code == 2);
  BOOST_TEST(run_cli("check --head-dim 64").exit_code == 2);
  const RunResult both = run_cli("check --head-dim 64 --seq 128 --seq-q 64 --seq-k 64");
  BOOST_TEST(both.exit_code == 2);
  BOOST_TEST(both.output.find("--seq") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(cli_malformed_numbers_and_unknown_commands_are_errors) {
  BOOST_TEST(run_cli("check --head-dim 6x4 --seq 128").exit_code == 2);
  BOOST_TEST(run_cli("check --head-dim 64 --seq 128 --dtype fp8").exit_code == 2);
  BOOST_TEST(run_cli("frobnicate").exit_code == 2);
}

BOOST_AUTO_TEST_CASE(cli_menu_lists_every_algorithm) {
  const RunResult r = run_cli("menu");
  BOOST_TEST(r.exit_code == 0);
  for (const char* algo : {"standard:", "standard-eager:", "fa1:", "fa2:"})
    BOOST_TEST(r.output.find(algo) != std::string::npos);
  BOOST_TEST(r.output.find("fwd d=64 Br=128 Bc=128 fp16") != std::string::npos);
}
