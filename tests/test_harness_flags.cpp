// iosim-kernels parses the problem and tiling flags with iosim's own code
// (sim/cli/problem_flags.h): a flag list means the same Problem and tiling to
// `iosim-kernels check|bench` as to `iosim simulate`, and a bad one gets the
// same message. Host code only: runs without a GPU or nvcc.
#define BOOST_TEST_MODULE harness_flags
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/harness/run_flags.h"
#include "sim/cli/scenario.h"
#include "sim/common/error.h"

using iosim::workload::Problem;
using Args = std::vector<std::string>;

namespace {

Args split(const std::string& line) {
  std::istringstream in(line);
  Args out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

iosim::cli::Scenario simulate_parse(const Args& args) {
  iosim::cli::ArgParser p("simulate", "");
  iosim::cli::add_scenario_flags(p);
  p.parse(args);
  return iosim::cli::scenario_from_flags(p);
}

iosim::harness::RunRequest harness_parse(const std::string& command, const Args& args) {
  iosim::cli::ArgParser p = iosim::harness::make_run_parser(command);
  p.parse(args);
  return iosim::harness::run_from_flags(p);
}

void require_same_problem(const Problem& a, const Problem& b) {
  BOOST_TEST(a.batch == b.batch);
  BOOST_TEST(a.heads == b.heads);
  BOOST_TEST(a.kv_heads == b.kv_heads);
  BOOST_TEST(a.seq_q == b.seq_q);
  BOOST_TEST(a.seq_k == b.seq_k);
  BOOST_TEST(a.head_dim == b.head_dim);
  BOOST_TEST((a.dtype == b.dtype));
  BOOST_TEST(a.causal == b.causal);
  BOOST_TEST((a.layout == b.layout));
  BOOST_TEST((a.sparsity.kind == b.sparsity.kind));
  BOOST_TEST(a.sparsity.density == b.sparsity.density);
  BOOST_TEST(a.sparsity.seed == b.sparsity.seed);
  BOOST_TEST(a.sparsity.file == b.sparsity.file);
}

// The harness's RunSpec states the CLI's tiling: algorithm by name, absent
// blocks as 0 (the kernel's default), the GEMM tiles as they are.
void require_same_parse(const std::string& command, const Args& args) {
  BOOST_TEST_CONTEXT(command << " " << [&] {
    std::string s;
    for (const auto& a : args) s += a + " ";
    return s;
  }()) {
    const iosim::cli::Scenario cli = simulate_parse(args);
    const iosim::harness::RunRequest run = harness_parse(command, args);
    require_same_problem(run.spec.problem, cli.problem);
    BOOST_TEST(run.spec.algorithm == std::string(iosim::workload::to_string(cli.options.algorithm)));
    BOOST_TEST((run.pass == cli.options.pass));
    BOOST_TEST(run.spec.block_m == cli.options.block_m.value_or(0));
    BOOST_TEST(run.spec.block_n == cli.options.block_n.value_or(0));
    BOOST_TEST(run.spec.gemm.m == cli.options.gemm.m);
    BOOST_TEST(run.spec.gemm.n == cli.options.gemm.n);
    BOOST_TEST(run.spec.gemm.k == cli.options.gemm.k);
    BOOST_TEST(run.spec.splits == cli.options.splits.value_or(0));
  }
}

// The message of the InputError `parse` throws; fails the test when none is thrown.
template <class Parse>
std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const iosim::InputError& e) {
    return e.what();
  }
  BOOST_ERROR("no InputError");
  return "";
}

// Parse errors name the command and program: "check: ... (see 'iosim-kernels check --help')".
std::string as_simulate(std::string message, const std::string& command) {
  if (message.rfind(command + ":", 0) == 0) message = "simulate" + message.substr(command.size());
  const std::string program = "'iosim-kernels " + command + " ";
  if (const auto at = message.find(program); at != std::string::npos)
    message.replace(at, program.size(), "'iosim simulate ");
  return message;
}

}  // namespace

// Every configuration of the validation grid, whose flags run_grid.sh gives to
// both `iosim simulate` and `iosim-kernels bench`.
BOOST_AUTO_TEST_CASE(validation_grid_flags_give_the_same_problem_and_tiling_to_both_programs) {
  std::ifstream grid(IOSIM_VALIDATION_GRID);
  BOOST_TEST_REQUIRE(grid.good(), IOSIM_VALIDATION_GRID);
  int configurations = 0;
  for (std::string line; std::getline(grid, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto flags = line.rfind(';');
    BOOST_TEST_REQUIRE(flags != std::string::npos, line);
    require_same_parse("bench", split(line.substr(flags + 1)));
    ++configurations;
  }
  BOOST_TEST(configurations > 0);
}

// The flags the grid does not use, and both commands.
BOOST_AUTO_TEST_CASE(every_problem_flag_gives_the_same_problem_and_tiling_to_both_programs) {
  for (const std::string command : {"check", "bench"}) {
    require_same_parse(command, split("--head-dim 64 --seq 128"));
    require_same_parse(command, split("--algo fa1 --pass bwd --batch 3 --heads 8 --kv-heads 2 --seq-q 200 "
                                      "--seq-k 263 --head-dim 128 --dtype bf16 --causal --layout bhsd"));
    require_same_parse(command, split("--algo standard --head-dim 64 --seq 300 --gemm-m 64 --gemm-n 64 --gemm-k 32 "
                                      "--block-density 0.25 --mask-seed 7"));
    require_same_parse(command, split("--algo fa2 --head-dim=64 --seq=256 --block-m=64 --block-n=128 "
                                      "--block-mask mask.txt"));
  }
  require_same_parse("check", split("--pass fwdbwd --head-dim 64 --seq 128 --block-m 64"));
  for (const std::string command : {"check", "bench"}) {
    require_same_parse(command, split("--algo splitkv --batch 2 --heads 8 --kv-heads 2 --seq-q 1 --seq-k 4097 "
                                      "--head-dim 128 --causal --splits 7"));
    require_same_parse(command, split("--algo splitkv --seq-q 3 --seq-k 1000 --head-dim 64 --block-m 16 --block-n 64"));
  }
}

// splitkv's domain in the harness, with the simulator's words.
BOOST_AUTO_TEST_CASE(splitkv_flags_outside_its_domain_are_refused) {
  BOOST_TEST(error_of([] { harness_parse("check", split("--algo fa2 --head-dim 64 --seq 128 --splits 2")); })
                 .find("--splits applies to --algo splitkv only") != std::string::npos);
  BOOST_TEST(error_of([] { harness_parse("check", split("--algo splitkv --pass bwd --head-dim 64 --seq 128")); })
                 .find("splitkv is forward-only") != std::string::npos);
}

// fa3's domain (forward, d 64/128, fp16/bf16, its 128 x 128 tile) in the
// harness, with the simulator's words; inside it both parse the same.
BOOST_AUTO_TEST_CASE(fa3_flags_outside_its_kernel_are_refused) {
  for (const std::string command : {"check", "bench"}) {
    require_same_parse(command, split("--algo fa3 --pass fwd --head-dim 128 --batch 1 --heads 2 --kv-heads 1 "
                                      "--seq-q 200 --seq-k 263 --causal"));
    require_same_parse(command, split("--algo fa3 --head-dim 64 --dtype bf16 --seq 300 --block-m 128 --block-n 128"));
  }
  const std::pair<const char*, const char*> bad[] = {
      {"--algo fa3 --pass bwd --head-dim 64 --seq 128", "fa3 is forward-only"},
      {"--algo fa3 --head-dim 96 --seq 128", "head dims 64 and 128, not 96"},
      {"--algo fa3 --head-dim 64 --seq 128 --block-m 64 --block-n 128", "one tile, Br=128 Bc=128"},
  };
  for (const auto& [args, expect] : bad)
    BOOST_TEST(error_of([&] { harness_parse("check", split(args)); }).find(expect) != std::string::npos, args);
}

BOOST_AUTO_TEST_CASE(bad_problem_flags_give_the_clis_message) {
  const std::vector<std::string> bad = {
      "--head-dim 64 --seq 128 --bogus 1",         // unknown flag
      "--head-dim 6x4 --seq 128",                  // malformed integer
      "--head-dim 64 --seq 128 --block-density x", // malformed number
      "--head-dim 64 --seq",                       // missing value
      "--head-dim 64 --seq 128 --heads 2 --heads 2",
      "--head-dim 64 --seq 128 --causal=1",
      "--head-dim 64 --seq 128 stray",
      "--seq 128",
      "--head-dim 64",
      "--head-dim 64 --seq 128 --seq-q 64 --seq-k 64",
      "--head-dim 64 --seq-q 64",
      "--head-dim 64 --seq 128 --dtype fp8",
      "--head-dim 64 --seq 128 --layout sbhd",
      "--head-dim 64 --seq 128 --algo fa4",
      "--head-dim 64 --seq 128 --pass both",
      "--head-dim 64 --seq 128 --block-density 0.5 --block-mask m.txt",
      "--head-dim 64 --seq 128 --mask-seed 1",
      "--head-dim 64 --seq 128 --block-density 1.5",
      "--head-dim 64 --seq 128 --heads 3 --kv-heads 2",
      "--head-dim 64 --seq 0",
  };
  for (const std::string command : {"check", "bench"}) {
    for (const auto& flags : bad) {
      const Args args = split(flags);
      const std::string cli = error_of([&] { simulate_parse(args); });
      const std::string harness = error_of([&] { harness_parse(command, args); });
      BOOST_TEST(!cli.empty(), flags);
      BOOST_TEST(as_simulate(harness, command) == cli, command << " " << flags);
    }
  }
}

BOOST_AUTO_TEST_CASE(simulator_only_algorithm_is_refused_by_the_harness_naming_the_kernels) {
  const std::string e = error_of([] { harness_parse("check", split("--algo fa1-swapped --head-dim 64 --seq 128")); });
  BOOST_TEST(e.find("fa1-swapped") != std::string::npos, e);
  BOOST_TEST(e.find("standard, standard-eager, fa1, fa2") != std::string::npos, e);
}

BOOST_AUTO_TEST_CASE(gemm_impl_is_mma_by_default_and_wgmma_only_for_standard_attention) {
  using iosim::kernels::GemmImpl;
  BOOST_TEST((harness_parse("check", split("--algo standard --head-dim 64 --seq 128")).spec.gemm_impl == GemmImpl::mma));
  BOOST_TEST((harness_parse("bench", split("--algo standard-eager --head-dim 64 --seq 128 --gemm-impl wgmma"))
                  .spec.gemm_impl == GemmImpl::wgmma));
  const std::string bad_name =
      error_of([] { harness_parse("check", split("--algo standard --head-dim 64 --seq 128 --gemm-impl tma")); });
  BOOST_TEST(bad_name.find("--gemm-impl 'tma'") != std::string::npos);
  BOOST_TEST(bad_name.find("valid: mma, wgmma") != std::string::npos);
  BOOST_TEST(error_of([] { harness_parse("check", split("--algo fa2 --head-dim 64 --seq 128 --gemm-impl wgmma")); })
                 .find("--gemm-impl wgmma applies to standard attention's GEMMs") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(dropout_is_standard_eagers_and_a_probability_below_one) {
  const auto run = harness_parse("check", split("--algo standard-eager --head-dim 64 --seq 128 --dropout 0.25"));
  BOOST_TEST(run.spec.dropout == 0.25);
  BOOST_TEST(harness_parse("check", split("--algo standard-eager --head-dim 64 --seq 128")).spec.dropout == 0.1);
  for (const char* bad : {"--algo standard-eager --head-dim 64 --seq 128 --dropout 1",
                          "--algo standard-eager --head-dim 64 --seq 128 --dropout -0.1",
                          "--algo standard --head-dim 64 --seq 128 --dropout 0.1"})
    BOOST_TEST(error_of([&] { harness_parse("check", split(bad)); }).find("--dropout") != std::string::npos, bad);
}

BOOST_AUTO_TEST_CASE(harness_flags_are_the_commands_own) {
  BOOST_TEST(error_of([] { harness_parse("check", split("--head-dim 64 --seq 128 --iters 3")); }).find("--iters") !=
             std::string::npos);
  BOOST_CHECK_NO_THROW(harness_parse("bench", split("--head-dim 64 --seq 128 --iters 3 --warmup 1 --l2-multiple 2")));
  BOOST_CHECK_NO_THROW(harness_parse("check", split("--head-dim 64 --seq 128 --tol 0.01 --seed 3 --q-scale 4 --json")));
  BOOST_TEST(error_of([] { simulate_parse(split("--head-dim 64 --seq 128 --q-scale 4")); }).find("--q-scale") !=
             std::string::npos);
}
