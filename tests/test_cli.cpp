// The iosim command line: the default scenario, --json keys, and one clear
// error with a non-zero exit for every kind of bad input.
#define BOOST_TEST_MODULE cli
#include <pty.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_run.h"

namespace pt = boost::property_tree;

namespace {

using Result = iosim::testing::CliResult;

Result run_with_env(const std::string& env, const std::string& args) { return iosim::testing::run_cli(args, env); }

Result run(const std::string& args) { return run_with_env("", args); }

pt::ptree json_of(const std::string& args) {
  const Result r = run(args + " --json");
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  std::istringstream in(r.out);
  pt::ptree tree;
  pt::read_json(in, tree);
  return tree;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const std::string kSmall = "simulate --profile a100-sxm4-40gb --batch 2 --heads 4 --seq 512 --head-dim 64";

}  // namespace

BOOST_AUTO_TEST_CASE(default_scenario_prints_all_three_algorithms_with_exact_formulas) {
  const Result text = run("--counts-only");
  BOOST_TEST_REQUIRE(text.exit_code == 0, text.out);
  for (const char* algo : {"standard", "fa1", "fa2"}) BOOST_TEST(contains(text.out, algo), algo);
  BOOST_TEST(contains(text.out, "B=64 H=16"));
  // The whole default run, engine included: each algorithm's trace equals its
  // closed form to the byte. Its stderr is no terminal: no progress bar.
  const Result r = run("--json");
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  BOOST_TEST(!contains(r.out, "\r"));
  std::istringstream in(r.out);
  pt::ptree runs;
  pt::read_json(in, runs);
  std::vector<std::string> algorithms;
  for (const auto& [unused, j] : runs) {
    algorithms.push_back(j.get<std::string>("algorithm"));
    BOOST_TEST(j.get<long long>("problem.batch") == 64);
    BOOST_TEST(j.get<long long>("problem.heads") == 16);
    BOOST_TEST(j.get<long long>("formula.bytes") == j.get<long long>("global.total_bytes"), algorithms.back());
    BOOST_TEST(j.get<long long>("formula.read_bytes") == j.get<long long>("global.read_bytes"), algorithms.back());
    BOOST_TEST(j.get<bool>("formula.equals_trace"), algorithms.back());
    BOOST_TEST(j.get<double>("time.seconds") > 0.0, algorithms.back());
  }
  BOOST_TEST((algorithms == std::vector<std::string>{"standard", "fa1", "fa2"}));
}

// The default run is fast (fast-forward and 1 in 16 L2 set groups) and says
// so; --exact runs the engine exactly. Both count the same bytes; time and
// DRAM bytes agree within the 1% the output claims.
BOOST_AUTO_TEST_CASE(default_run_is_fast_says_so_and_exact_on_request) {
  const Result text = run("");
  BOOST_TEST_REQUIRE(text.exit_code == 0, text.out);
  BOOST_TEST(contains(text.out, "APPROXIMATE, for speed"));
  BOOST_TEST(contains(text.out, "--exact runs the engine exactly"));
  const auto fast = json_of(""), exact = json_of("--exact");
  BOOST_REQUIRE(fast.size() == 3u);
  BOOST_REQUIRE(exact.size() == 3u);
  for (auto f = fast.begin(), x = exact.begin(); f != fast.end(); ++f, ++x) {
    const pt::ptree &a = f->second, &b = x->second;
    const std::string algo = a.get<std::string>("algorithm");
    BOOST_TEST(a.get<bool>("engine.fast_forward"), algo);
    BOOST_TEST(a.get<int>("engine.l2_set_sampling") == 16, algo);
    BOOST_TEST(!b.get<bool>("engine.fast_forward"), algo);
    BOOST_TEST(b.get<int>("engine.l2_set_sampling") == 1, algo);
    BOOST_TEST(a.get<long long>("requests.total_bytes") == b.get<long long>("requests.total_bytes"), algo);
    BOOST_TEST(a.get<long long>("fast_forward.skipped_steps") > 0, algo);
    BOOST_TEST(b.get<long long>("fast_forward.skipped_steps") == 0, algo);
    auto close = [&](const char* key) {
      const double u = a.get<double>(key), v = b.get<double>(key);
      BOOST_TEST(std::abs(u - v) <= 0.01 * v, algo << " " << key << ": " << u << " vs exact " << v);
    };
    for (const char* key : {"time.seconds", "dram.read_bytes", "dram.write_bytes"}) close(key);
  }
}

// --fast-forward is one of the engine's flags; it cannot draw a timeline.
BOOST_AUTO_TEST_CASE(fast_forward_is_a_flag_and_refuses_a_timeline) {
  const std::string big = "simulate --profile a100 --algo standard --batch 8 --heads 16 --seq 1024 --head-dim 64";
  const auto j = json_of(big + " --fast-forward");
  BOOST_TEST(j.get<bool>("engine.fast_forward"));
  long long skipped = 0;
  for (const auto& k : j.get_child("kernels")) skipped += k.second.get<long long>("fast_forward.skipped_ctas");
  BOOST_TEST(skipped > 0);
  BOOST_TEST(!json_of(big).get<bool>("engine.fast_forward"));
  const Result r = run(big + " --fast-forward --timeline /tmp/iosim_never_written.json");
  BOOST_TEST(r.exit_code != 0);
  BOOST_TEST(contains(r.out, "--fast-forward cannot be combined with --timeline"), r.out);
  BOOST_TEST(!std::filesystem::exists("/tmp/iosim_never_written.json"));
  const Result text = run(big + " --fast-forward");
  BOOST_TEST(contains(text.out, "APPROXIMATE: fast-forward ran"), text.out);
}

BOOST_AUTO_TEST_CASE(simulate_json_has_documented_keys_and_integer_bytes) {
  const auto j = json_of(kSmall + " --algo fa2 --pass fwdbwd --causal");
  for (const char* key : {"flops", "global.read_bytes", "global.write_bytes", "formula.bytes", "tiling.block_m",
                          "tiling.block_n", "tiling.sram_bytes", "global.by_tensor.Q.read_bytes"})
    BOOST_TEST(j.get_optional<std::string>(key).has_value(), key);
  const long long read = j.get<long long>("global.read_bytes"), write = j.get<long long>("global.write_bytes");
  BOOST_TEST(j.get<long long>("formula.bytes") == read + write);
  BOOST_TEST(j.get_child("kernels").size() == 4u);  // forward + preprocess, main, convert
  long long kernel_reads = 0;
  for (const auto& k : j.get_child("kernels")) kernel_reads += k.second.get<long long>("global.read_bytes");
  BOOST_TEST(kernel_reads == read);
  // The paper's expression evaluated is a byte count too: a whole number.
  const auto fa1 = json_of(kSmall + " --counts-only --algo fa1 --pass fwd");
  const std::string paper = fa1.get<std::string>("formula.paper_bytes");
  BOOST_TEST(paper.find_first_not_of("0123456789") == std::string::npos, paper);
}

BOOST_AUTO_TEST_CASE(simulate_json_has_engine_keys_top_level_and_per_kernel) {
  const auto j = json_of(kSmall + " --algo standard --pass fwd");
  for (const char* key : {"l2.hits", "l2.misses", "l2.hit_rate", "dram.read_bytes", "dram.write_bytes",
                          "dram.dirty_left_bytes", "time.seconds", "time.cycles", "occupancy.ctas_per_sm",
                          "occupancy.waves", "bound"}) {
    BOOST_TEST(j.get_optional<std::string>(key).has_value(), key);
    for (const auto& k : j.get_child("kernels")) BOOST_TEST(k.second.get_optional<std::string>(key).has_value(), key);
  }
  BOOST_TEST(j.get<double>("time.seconds") > 0.0);
  // A cold L2 per kernel can only add DRAM reads (P is no longer partly in L2 for P V).
  const auto cold = json_of(kSmall + " --algo standard --pass fwd --cold-l2");
  BOOST_TEST(cold.get<long long>("dram.read_bytes") >= j.get<long long>("dram.read_bytes"));
}

BOOST_AUTO_TEST_CASE(replaying_a_written_trace_gives_the_simulated_result) {
  const std::string path = "/tmp/iosim_test_trace_" + std::to_string(getpid()) + ".trace";
  const std::string scenario = " --profile a100-sxm4-40gb --algo fa2 --pass fwdbwd --batch 1 --heads 2 --seq 300 "
                               "--head-dim 64 --causal --block-m 64 --block-n 64";
  const Result w = run("trace" + scenario + " --out " + path);
  BOOST_TEST_REQUIRE(w.exit_code == 0, w.out);
  const auto direct = json_of("simulate" + scenario);
  const auto replayed = json_of("replay " + path + " --profile a100-sxm4-40gb");
  for (const char* key : {"dram.read_bytes", "dram.write_bytes", "l2.hits", "l2.misses", "time.cycles"})
    BOOST_TEST(direct.get<std::string>(key) == replayed.get<std::string>(key), key);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(one_million_tokens_count_in_64_bit) {
  const auto j = json_of("simulate --counts-only --profile h100-sxm5-80gb --seq 1048576 --head-dim 64 --block-m 128 --block-n 128");
  const long long n = 1048576;
  BOOST_TEST(j.get<long long>("flops") == 4 * n * n * 64);  // 2^48: far beyond 32 bits
}

BOOST_AUTO_TEST_CASE(help_is_available_on_every_command) {
  for (const char* cmd : {"--help", "simulate --help", "sweep --help", "profiles --help", "trace --help", "replay --help",
                          "numerics --help", "calibrate --help"}) {
    const Result r = run(cmd);
    BOOST_TEST(r.exit_code == 0, cmd);
    BOOST_TEST(contains(r.out, "usage:"), cmd);
  }
}

BOOST_AUTO_TEST_CASE(profiles_lists_every_shipped_profile) {
  const Result r = run("profiles");
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  for (const char* name : {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "t4"})
    BOOST_TEST(contains(r.out, name), name);
}

BOOST_AUTO_TEST_CASE(bad_input_gets_one_clear_error_and_nonzero_exit) {
  struct Case {
    std::string args, expect;
  };
  const Case cases[] = {
      {kSmall + " --bogus", "unknown flag '--bogus'"},
      {"simulate --seq abc --head-dim 64", "expects an integer"},
      {"simulate --seq 128", "--head-dim D is required"},
      {"simulate --head-dim 64", "sequence length is required"},
      {kSmall + " --algo fa4", "unknown algorithm 'fa4'"},
      {kSmall + " --dtype fp8", "unknown dtype 'fp8'"},
      {"simulate --profile nosuchgpu --seq 64 --head-dim 64", "a100-sxm4-40gb"},  // lists the known profiles
      {"simulate --heads 6 --kv-heads 4 --seq 64 --head-dim 64", "divisible"},
      {kSmall + " --heads 8", "given twice"},
      {kSmall + " --block-m 64", "--block-n"},
      {"simulate --profile t4 --seq 512 --head-dim 128 --block-m 256 --block-n 256", "bytes of shared memory"},
      {"simulate --profile t4 --seq 512 --head-dim 64 --dtype bf16", "no bf16"},
      {kSmall + " --block-density 1.5", "density"},
      {kSmall + " --block-mask /nonexistent/mask.txt", "cannot open"},
      {"frobnicate", "unknown command"},
      {kSmall + " --l2-policy mru", "unknown L2 replacement policy"},
      {kSmall + " --l2-sample 3", "power of two from 1 to 256"},
      {kSmall + " --l2-dirty-limit lots", "or none"},
      {"trace --seq 64 --head-dim 64", "--out FILE is required"},
      {"replay /nonexistent/file.trace", "/nonexistent/file.trace"},
      {"replay", "exactly one trace FILE"},
      {"simulate --seq 1000000000 --head-dim 64 --counts-only", "problem too large for 64-bit counts"},
      {kSmall + " --splits 4", "--splits applies to --algo splitkv only"},
      {kSmall + " --algo splitkv --pass bwd", "splitkv is forward-only"},
      {kSmall + " --algo splitkv --splits 9 --block-m 16 --block-n 64", "outside 1..8"},
      {kSmall + " --algo splitkv --splits 0", "--splits must be positive"},
      {kSmall + " --algo splitkv --block-density 0.5", "splitkv takes no block mask"},
      {kSmall + " --algo fa3 --pass bwd", "fa3 is forward-only"},
      {kSmall + " --algo fa3 --pass fwdbwd", "fa3 is forward-only"},
      {"simulate --profile a100-sxm4-40gb --seq 512 --algo fa3 --head-dim 32", "head dims 64 and 128, not 32"},
      {kSmall + " --algo fa3 --dtype fp32", "fa3's kernel takes fp16 or bf16, not fp32"},
      {kSmall + " --algo fa3 --block-m 64 --block-n 128", "one tile, Br=128 Bc=128 (got --block-m 64"},
      {kSmall + " --algo fa3 --block-density 0.5", "fa3 takes no block mask"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args);
    BOOST_TEST(r.exit_code == 2, c.args << " -> " << r.out);
    BOOST_TEST(contains(r.out, c.expect), c.args << " -> " << r.out);
    BOOST_TEST(!contains(r.out, "internal error"), c.args);
  }
}

BOOST_AUTO_TEST_CASE(block_mask_file_of_the_wrong_shape_is_rejected_with_its_shape) {
  const std::string path = "/tmp/iosim_test_mask_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream f(path);
    f << "1 0 1\n0 1 1\n";  // 2 x 3, but 512/64 = 8 query blocks
  }
  const Result r = run(kSmall + " --block-m 64 --block-n 64 --block-mask " + path);
  BOOST_TEST(r.exit_code == 2, r.out);
  BOOST_TEST(contains(r.out, "the mask has 2 x 3 blocks; the tiling's block grid is 8 x 8 (Br=64 x Bc=64"), r.out);
  std::remove(path.c_str());
}

namespace {
std::string write_mask(const std::string& tag, const std::vector<std::string>& rows) {
  const std::string path = "/tmp/iosim_test_mask_" + tag + "_" + std::to_string(getpid()) + ".txt";
  std::ofstream f(path);
  for (const auto& r : rows) f << r << "\n";
  return path;
}
}  // namespace

// A mask at another granularity that divides evenly: coarser blocks cover
// whole tiles; with finer ones a tile is active when any block it holds is.
BOOST_AUTO_TEST_CASE(a_block_mask_at_another_granularity_is_mapped_onto_the_tile_grid) {
  const std::string tiles = kSmall + " --counts-only --algo fa2 --block-m 64 --block-n 64 --block-mask ";
  // 2 x 2 blocks of 256 tokens == the 8 x 8 tile mask they cover.
  const std::string coarse = write_mask("coarse", {"1 0", "1 1"});
  std::vector<std::string> expanded;
  for (int i = 0; i < 8; ++i) expanded.push_back(i < 4 ? "1 1 1 1 0 0 0 0" : "1 1 1 1 1 1 1 1");
  const std::string same = write_mask("expanded", expanded);
  // 16 x 16 blocks of 32 tokens, one active block in tile (0, 0) and in (7, 7): two active tiles.
  std::vector<std::string> fine(16, "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0");
  fine[1] = "0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0";
  fine[14] = "0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0";
  const std::string fine_path = write_mask("fine", fine);
  std::vector<std::string> two(8, "0 0 0 0 0 0 0 0");
  two[0] = "1 0 0 0 0 0 0 0";
  two[7] = "0 0 0 0 0 0 0 1";
  const std::string two_path = write_mask("two", two);
  for (const auto& [given, on_grid] : {std::pair{coarse, same}, std::pair{fine_path, two_path}}) {
    const auto a = json_of(tiles + given), b = json_of(tiles + on_grid);
    BOOST_TEST(a.get<long long>("global.total_bytes") == b.get<long long>("global.total_bytes"), given);
    BOOST_TEST(a.get<double>("problem.block_density") == b.get<double>("problem.block_density"), given);
  }
  for (const auto& p : {coarse, same, fine_path, two_path}) std::remove(p.c_str());
}

BOOST_AUTO_TEST_CASE(block_mask_file_of_the_right_shape_scales_fa2_traffic) {
  const std::string path = "/tmp/iosim_test_mask_ok_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream f(path);
    for (int i = 0; i < 4; ++i) f << (i % 2 ? "1 0 0 0\n" : "1 1 1 1\n");  // 10 of 16 tiles
  }
  const auto sparse = json_of(kSmall + " --block-m 128 --block-n 128 --block-mask " + path);
  const auto dense = json_of(kSmall + " --block-m 128 --block-n 128");
  const long long k_sparse = sparse.get<long long>("global.by_tensor.K.read_bytes");
  const long long k_dense = dense.get<long long>("global.by_tensor.K.read_bytes");
  BOOST_TEST(k_sparse * 16 == k_dense * 10);  // 10 of 16 tiles active
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(numerics_command_reports_rounding_level_errors) {
  const std::string args = "numerics --algo fa1 --pass fwdbwd --batch 1 --heads 2 --seq-q 70 --seq-k 45 --head-dim 16 "
                           "--causal --block-m 16 --block-n 32";
  const Result text = run(args);
  BOOST_TEST_REQUIRE(text.exit_code == 0, text.out);
  for (const char* out : {"O", "dQ", "dK", "dV"}) BOOST_TEST(contains(text.out, out), out);
  // Each output of the pass, with a double-precision-level error (the bound
  // tests/test_numerics.cpp holds the tiled algorithms to).
  const auto j = json_of(args);
  std::vector<std::string> outputs;
  for (const auto& [unused, e] : j.get_child("errors")) {
    outputs.push_back(e.get<std::string>("output"));
    BOOST_TEST(e.get<double>("max_abs_ref") > 0.0, outputs.back());
    BOOST_TEST(e.get<double>("relative") <= 1e-12, outputs.back());
  }
  BOOST_TEST((outputs == std::vector<std::string>{"O", "L", "dQ", "dK", "dV"}));
}

BOOST_AUTO_TEST_CASE(malformed_trace_file_is_rejected_with_its_line) {
  const std::string path = "/tmp/iosim_test_bad_trace_" + std::to_string(getpid()) + ".trace";
  {
    std::ofstream f(path);
    f << "this is not a trace\n";
  }
  const Result r = run("replay " + path);
  BOOST_TEST(r.exit_code == 2, r.out);
  BOOST_TEST(contains(r.out, path + ":1"), r.out);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(top_level_help_lists_the_default_scenarios_flags) {
  const Result r = run("--help");
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  for (const char* flag : {"--profile", "--json", "--counts-only"}) BOOST_TEST(contains(r.out, flag), flag);
}

// Errors of the default scenario name the command as `iosim`, not as an empty string.
BOOST_AUTO_TEST_CASE(a_flag_the_default_scenario_lacks_points_to_simulate) {
  const Result r = run("--seq 4096");
  BOOST_TEST(r.exit_code == 2, r.out);
  BOOST_TEST(contains(r.out, "iosim: error: unknown flag '--seq' (see 'iosim --help'"), r.out);
  BOOST_TEST(contains(r.out, "'iosim simulate'"), r.out);
  BOOST_TEST(!contains(r.out, ": :"), r.out);
  BOOST_TEST(!contains(r.out, "iosim  --help"), r.out);
}

BOOST_AUTO_TEST_CASE(messages_name_the_flag_given_and_say_out_of_range) {
  struct Case {
    std::string args, expect;
  };
  const Case cases[] = {
      {"simulate --seq -5 --head-dim 64", "--seq must be positive (got -5)"},
      {"simulate --seq 64 --head-dim 0", "--head-dim must be positive (got 0)"},
      {"simulate --seq 64 --head-dim 64 --block-m -1 --block-n 16", "--block-m must be positive"},
      {"simulate --seq 99999999999999999999999 --head-dim 64", "--seq 99999999999999999999999 is out of range"},
      {"simulate --seq 64 --head-dim 64 --block-density 1e999", "--block-density 1e999 is out of range"},
      {"simulate --seq 64 --head-dim 64 --l2-dirty-limit 99999999999999999999999MiB", "is out of range"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args);
    BOOST_TEST(r.exit_code == 2, c.args << " -> " << r.out);
    BOOST_TEST(contains(r.out, c.expect), c.args << " -> " << r.out);
    BOOST_TEST(!contains(r.out, "seq-q"), c.args << " -> " << r.out);
    BOOST_TEST(!contains(r.out, "not a number"), c.args << " -> " << r.out);
  }
}

BOOST_AUTO_TEST_CASE(the_halved_rule_reads_without_a_double_space) {
  const auto j = json_of("simulate --counts-only --profile t4 --algo fa1 --seq 256 --head-dim 128 --pass fwd");
  const std::string rule = j.get<std::string>("tiling.rule");
  BOOST_TEST(contains(rule, "halved"), rule);
  BOOST_TEST(!contains(rule, "  "), rule);
}

BOOST_AUTO_TEST_CASE(profile_names_aliases_and_prefixes_resolve_in_any_case) {
  const std::pair<std::string, std::string> cases[] = {
      {"h100", "h100-sxm5-80gb"}, {"a100", "a100-sxm4-40gb"},         {"H200", "h200-sxm-141gb"},
      {"t4", "t4"},               {"A100-80GB", "a100-sxm4-80gb"},   {"h100-sxm", "h100-sxm5-80gb"},
      {"H200-SXM-141GB", "h200-sxm-141gb"},
  };
  for (const auto& [given, name] : cases)
    BOOST_TEST(json_of("simulate --counts-only --seq 128 --head-dim 64 --profile " + given).get<std::string>("profile") ==
                   name,
               given);
  const Result ambiguous = run("simulate --seq 128 --head-dim 64 --profile a100-sxm4");
  BOOST_TEST(ambiguous.exit_code == 2, ambiguous.out);
  BOOST_TEST(contains(ambiguous.out, "ambiguous"), ambiguous.out);
  BOOST_TEST(contains(ambiguous.out, "a100-sxm4-40gb, a100-sxm4-80gb"), ambiguous.out);
  const Result typo = run("simulate --seq 128 --head-dim 64 --profile h1000");
  BOOST_TEST(typo.exit_code == 2, typo.out);
  BOOST_TEST(contains(typo.out, "did you mean h100-sxm5-80gb"), typo.out);
}

// Calibrated = the profile file has the SM model's measured machine (an
// `sm_pipes` section, written by iosim calibrate); the A100 and T4 profiles,
// never measured here, say 0 values measured.
BOOST_AUTO_TEST_CASE(profiles_say_which_are_calibrated_and_where_they_were_measured) {
  const Result r = run("profiles");
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  std::istringstream lines(r.out);
  std::map<std::string, std::string> provenance;
  bool in_section = false;
  for (std::string line; std::getline(lines, line);) {
    if (contains(line, "where the numbers come from")) in_section = true;
    std::istringstream words(line);
    std::string name;
    if (in_section && words >> name) provenance[name] = line;
  }
  int calibrated = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(IOSIM_TEST_DATA_DIR) / ".." / ".." / "hw_profiles")) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string name = entry.path().stem().string();
    std::ifstream f(entry.path());
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const bool has_pipes = text.find("\nsm_pipes:") != std::string::npos;
    calibrated += has_pipes;
    BOOST_TEST(contains(provenance[name], has_pipes ? "timing calibrated (sm_pipes" : "timing not calibrated"),
               name << ": " << provenance[name]);
  }
  BOOST_TEST(contains(provenance["h100-sxm5-80gb"], "NVIDIA H100 80GB HBM3"));
  BOOST_TEST(contains(provenance["h200-sxm-141gb"], "NVIDIA H200"));
  for (const char* name : {"a100-sxm4-40gb", "a100-sxm4-80gb", "t4"}) BOOST_TEST(contains(provenance[name], " 0 of "), name);
}

// Profiles whose calibrate run saw far lines copied near (l2.far_copies) model
// the copies in the whole L2; those whose L2 holds fewer distinct bytes than
// its size without copies (l2.effective_size, from iosim calibrate's sweep)
// say so.
BOOST_AUTO_TEST_CASE(profiles_show_the_l2_capacity_the_model_uses) {
  struct L2 {
    long long size, model, effective;
    bool copies;
  };
  std::map<std::string, L2> l2;
  for (const auto& [key, p] : json_of("profiles"))
    l2[p.get<std::string>("name")] = {p.get<long long>("l2_bytes"), p.get<long long>("l2_model_bytes"),
                                      p.get<long long>("l2_effective_bytes"), p.get<bool>("l2_copies")};
  for (const char* name : {"h100-sxm5-80gb", "h200-sxm-141gb"}) {
    BOOST_TEST_REQUIRE(l2.count(name) == 1u, name);
    BOOST_TEST(l2[name].copies, name);
    BOOST_TEST(l2[name].model == l2[name].size, name);      // copies: the whole L2
    BOOST_TEST(l2[name].effective < l2[name].size, name);   // without: the distinct lines measured
  }
  for (const char* name : {"a100-sxm4-40gb", "t4"}) BOOST_TEST(!l2[name].copies, name);  // not measured
  for (const char* name : {"a100-sxm4-40gb", "t4"}) BOOST_TEST(l2[name].model == l2[name].size, name);
  const Result r = run("profiles");
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line) && !contains(line, "l2.effective_size")) {
  }
  BOOST_TEST(contains(line, "h200-sxm-141gb"), r.out);
  BOOST_TEST(contains(line, "h100-sxm5-80gb"), r.out);
  BOOST_TEST(!contains(line, "a100"), r.out);
}

// The L2 copies follow the profile's l2.far_copies unless --l2-copies says;
// the JSON records the value used, and a profile with one partition refuses them.
BOOST_AUTO_TEST_CASE(l2_copies_follow_the_profile_unless_the_flag_says) {
  const std::string problem = "simulate --seq 512 --head-dim 64 --pass fwd --profile ";
  auto used = [&](const std::string& args) { return json_of(problem + args).get<bool>("engine.l2_copies"); };
  BOOST_TEST(used("h200"));
  BOOST_TEST(used("h100"));
  BOOST_TEST(!used("a100"));
  BOOST_TEST(!used("h200 --l2-copies off"));
  BOOST_TEST(used("a100 --l2-copies on"));
  BOOST_TEST(!used("h200 --l2-sample 2"));  // set sampling keeps one slot per line
  const Result bad = run(problem + "h200 --l2-copies maybe");
  BOOST_TEST(bad.exit_code == 2, bad.out);
  BOOST_TEST(contains(bad.out, "must be on or off"), bad.out);
  const Result uniform = run(problem + "t4 --l2-copies on");
  BOOST_TEST(uniform.exit_code != 0, uniform.out);
  BOOST_TEST(contains(uniform.out, "2 L2 partitions"), uniform.out);
}

BOOST_AUTO_TEST_CASE(replay_names_a_directory_and_where_its_timeline_went) {
  const Result dir = run("replay /tmp");
  BOOST_TEST(dir.exit_code == 2, dir.out);
  BOOST_TEST(contains(dir.out, "is a directory"), dir.out);
  const std::string trace = "/tmp/iosim_test_tl_" + std::to_string(getpid()) + ".trace";
  const std::string timeline = "/tmp/iosim_test_tl_" + std::to_string(getpid()) + ".json";
  BOOST_TEST_REQUIRE(run("trace --seq 256 --head-dim 64 --out " + trace).exit_code == 0);
  const Result r = run("replay " + trace + " --timeline " + timeline);
  BOOST_TEST(r.exit_code == 0, r.out);
  BOOST_TEST(contains(r.out, "timeline: " + timeline), r.out);
  std::remove(trace.c_str());
  std::remove(timeline.c_str());
}

BOOST_AUTO_TEST_CASE(the_timeline_event_cap_is_a_flag) {
  const std::string path = "/tmp/iosim_test_cap_" + std::to_string(getpid()) + ".json";
  const Result r = run("simulate --seq 1024 --head-dim 64 --timeline " + path + " --timeline-max-events 37");
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  BOOST_TEST(contains(r.out, "--timeline-max-events"), r.out);  // the note says how to keep more
  pt::ptree tree;
  pt::read_json(path, tree);
  int slices = 0;
  for (const auto& e : tree.get_child("traceEvents")) slices += e.second.get<std::string>("ph") == "X";
  BOOST_TEST(slices == 37);
  BOOST_TEST(tree.get<long long>("otherData.dropped_events") > 0);
  std::remove(path.c_str());
  const Result alone = run("simulate --seq 64 --head-dim 64 --timeline-max-events 10");
  BOOST_TEST(alone.exit_code == 2, alone.out);
  BOOST_TEST(contains(alone.out, "only with --timeline"), alone.out);
}

namespace {
// Runs iosim with `args` (split at spaces) and returns its peak resident memory in KiB.
long peak_rss_kib(const std::string& args, int& exit_code) {
  std::vector<std::string> words{IOSIM_CLI_PATH};
  std::istringstream in(args);
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return usage.ru_maxrss;
}
}  // namespace

// A hand-written 1 GiB tile once made the L2 model gather 8 M lines in
// memory (about a quarter of the tile's size); the replay now hands it over
// in pieces, so its memory does not grow with the tile.
BOOST_AUTO_TEST_CASE(replaying_a_huge_tile_takes_memory_independent_of_its_size) {
  const std::string path = "/tmp/iosim_test_huge_" + std::to_string(getpid()) + ".trace";
  {
    std::ofstream f(path);
    f << "iosim-trace 2\ntensor 0 X 0 1073741824\n"
         "kernel k pass=fwd grid=1,1,1 threads=128 smem=0 regs=32 stages=1\ncta 0 0 0\ns 0 0 0\n"
         "r 0 0 134217728 8 134217728\nend\n";
  }
  int code = 0;
  const long kib = peak_rss_kib("replay " + path, code);
  BOOST_TEST(code == 0);
  BOOST_TEST(kib < 160 * 1024, kib << " KiB");  // a 1 GiB tile gathered whole needs > 256 MiB
  std::remove(path.c_str());
}

// The paper's rule gives 64 x 326 on the A100 at d=64: no kernel has it; the
// output says so and --tiles kernel runs the nearest compiled tile instead.
BOOST_AUTO_TEST_CASE(a_tiling_without_a_kernel_is_flagged_and_tiles_kernel_picks_a_compiled_one) {
  const auto rule = json_of("simulate --counts-only --seq 1024 --head-dim 64");
  BOOST_TEST(rule.get<bool>("kernel.compiled") == false);
  BOOST_TEST(contains(rule.get<std::string>("kernel.reason"), "multiples of 16"));
  const long long near_m = rule.get<long long>("kernel.nearest.block_m"), near_n = rule.get<long long>("kernel.nearest.block_n");
  const auto kernel = json_of("simulate --counts-only --seq 1024 --head-dim 64 --tiles kernel");
  BOOST_TEST(kernel.get<bool>("kernel.compiled") == true);
  BOOST_TEST(kernel.get<long long>("tiling.block_m") == near_m);
  BOOST_TEST(kernel.get<long long>("tiling.block_n") == near_n);
  BOOST_TEST(near_m % 16 == 0);
  BOOST_TEST(near_n % 16 == 0);
  const Result text = run("simulate --counts-only --seq 1024 --head-dim 7");
  BOOST_TEST(text.exit_code == 0, text.out);  // the simulator runs any head dim ...
  BOOST_TEST(contains(text.out, "kernel:  none compiled: fa2's kernels are compiled for head dims 64 and 128"), text.out);
  const Result refused = run("simulate --seq 1024 --head-dim 7 --tiles kernel");  // ... the kernels do not
  BOOST_TEST(refused.exit_code == 2, refused.out);
  BOOST_TEST(contains(refused.out, "no compiled kernel for this problem"), refused.out);
  // The default scenario takes --tiles too: all three algorithms then have kernels.
  const Result all = run("--counts-only --json --tiles kernel");
  BOOST_TEST_REQUIRE(all.exit_code == 0, all.out);
  std::istringstream in(all.out);
  pt::ptree runs;
  pt::read_json(in, runs);
  BOOST_TEST(runs.size() == 3u);
  for (const auto& [unused, j] : runs) BOOST_TEST(j.get<bool>("kernel.compiled"), j.get<std::string>("algorithm"));
  const Result both = run("simulate --seq 1024 --head-dim 64 --tiles kernel --block-m 64 --block-n 64");
  BOOST_TEST(both.exit_code == 2, both.out);
  BOOST_TEST(contains(both.out, "not both"), both.out);
}

// The example ran 64 s (FA2) and over 300 s (standard) with no output.
BOOST_AUTO_TEST_CASE(counts_of_a_ten_million_token_problem_come_from_the_closed_form_at_once) {
  for (const char* algo : {"fa2", "standard"}) {
    const auto start = std::chrono::steady_clock::now();
    const auto j = json_of(std::string("simulate --seq 10000000 --head-dim 64 --counts-only --algo ") + algo);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    BOOST_TEST(seconds < 5.0, algo);
    BOOST_TEST(j.get<std::string>("counted_by") == "formula", algo);
    BOOST_TEST(j.get<long long>("global.total_bytes") == j.get<long long>("formula.bytes"), algo);
    BOOST_TEST(j.get<long long>("flops") > 0, algo);
    long long steps = 0;
    for (const auto& [unused, k] : j.get_child("kernels")) steps += k.get<long long>("steps");
    BOOST_TEST(steps > 1'000'000'000LL, algo);  // what a walk would have visited
  }
}

// The closed form and the walk give the same totals and FLOPs (and say which counted).
BOOST_AUTO_TEST_CASE(count_by_formula_and_count_by_trace_agree) {
  const std::string args = kSmall + " --counts-only --algo fa1 --pass fwdbwd --causal --kv-heads 2";
  const auto walk = json_of(args + " --count-by trace");
  const auto closed = json_of(args + " --count-by formula");
  BOOST_TEST(walk.get<std::string>("counted_by") == "trace");
  BOOST_TEST(closed.get<std::string>("counted_by") == "formula");
  for (const char* key : {"global.read_bytes", "global.write_bytes", "global.total_bytes", "flops"})
    BOOST_TEST(walk.get<long long>(key) == closed.get<long long>(key), key);
  std::vector<long long> walked, planned;
  for (const auto& [unused, k] : walk.get_child("kernels")) walked.push_back(k.get<long long>("steps"));
  for (const auto& [unused, k] : closed.get_child("kernels")) planned.push_back(k.get<long long>("steps"));
  BOOST_TEST(walked == planned, boost::test_tools::per_element());
  BOOST_TEST(!closed.get_child_optional("global.by_tensor"));  // only a walk gives per-tensor counts
  const Result bad = run(kSmall + " --count-by guess");
  BOOST_TEST(bad.exit_code == 2, bad.out);
}

// FA1's walk is one CTA on one thread: about a second here, at 25 ns a step.
BOOST_AUTO_TEST_CASE(a_long_run_shows_a_progress_bar_on_a_terminal_and_erases_it) {
  iosim::testing::check_progress_bar(
      "simulate --counts-only --count-by trace --algo fa1 --seq 720896 --head-dim 64", "counting");
}

// The whole file is checked before anything is simulated: a bad line after an
// 8 GiB kernel (seconds of replay) is reported at once.
BOOST_AUTO_TEST_CASE(a_bad_line_late_in_a_trace_is_reported_before_replaying) {
  const std::string path = "/tmp/iosim_test_late_" + std::to_string(getpid()) + ".trace";
  {
    std::ofstream f(path);
    f << "iosim-trace 2\ntensor 0 X 0 8589934592\n"
         "kernel a pass=fwd grid=1,1,1 threads=128 smem=0 regs=32 stages=1\ncta 0 0 0\ns 0 0 0\nr 0 0 8589934592\nend\n"
         "kernel b pass=fwd grid=1,1,1 threads=128 smem=0 regs=32 stages=1\ncta 0 0 0\ns 0 0 0\nr 1 0 64\nend\n";
  }
  const auto start = std::chrono::steady_clock::now();
  const Result r = run("replay " + path);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(r.exit_code == 2, r.out);
  BOOST_TEST(contains(r.out, path + ":11: tensor 1 was never declared"), r.out);
  BOOST_TEST(seconds < 1.0, seconds << " s");
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(calibrate_without_a_gpu_exits_2_with_one_line_saying_why) {
  // CUDA_VISIBLE_DEVICES= hides every GPU, so this holds on a GPU machine too.
  const std::string out = "/tmp/iosim_test_calibrate_" + std::to_string(getpid()) + ".yaml";
  const Result r = run_with_env("CUDA_VISIBLE_DEVICES=", "calibrate --quick --out " + out);
  BOOST_TEST(r.exit_code == 2, r.out);
  const std::string why = IOSIM_CLI_WITH_CUDA ? "calibrate needs a GPU: no CUDA device"
                                              : "iosim was built without CUDA (no nvcc at configure time); "
                                                "calibrate needs a CUDA build and a GPU";
  BOOST_TEST(contains(r.out, "iosim: error: calibrate"), r.out);
  BOOST_TEST(contains(r.out, why), r.out);
  BOOST_TEST(std::count(r.out.begin(), r.out.end(), '\n') == 1, r.out);
  BOOST_TEST(!std::ifstream(out).good(), "no profile may be written");
}

BOOST_AUTO_TEST_CASE(calibrate_flags_are_checked_before_any_measurement) {
  struct Case {
    std::string args, expect;
  };
  const Case cases[] = {
      {"calibrate --out profile.txt", "must end in .yaml"},
      {"calibrate --out /nonexistent/dir/h200.yaml", "does not exist"},
      {"calibrate --out /tmp/h200.yaml --name h100", "differs from the stem"},
      {"calibrate --name 'H200 SXM'", "is not a profile name"},
      {"calibrate --bogus", "unknown flag"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args);
    BOOST_TEST(r.exit_code == 2, c.args << " -> " << r.out);
    BOOST_TEST(contains(r.out, c.expect), c.args << " -> " << r.out);
  }
}

// splitkv's splits: the default fills the profile's SMs once (the A100 has
// 108: 2 x 4 query heads of one query block get ceil(108 / 8) = 14 splits),
// or --splits; the JSON says which, and its trace equals its closed form.
BOOST_AUTO_TEST_CASE(splitkv_reports_its_splits_and_their_rule) {
  const std::string decode =
      "simulate --profile a100-sxm4-40gb --algo splitkv --batch 2 --heads 4 --seq-q 1 --seq-k 4097 --head-dim 128";
  const pt::ptree rule = json_of(decode + " --counts-only");
  BOOST_TEST(rule.get<long>("tiling.splits") == 14);
  BOOST_TEST(contains(rule.get<std::string>("tiling.splits_rule"), "108 SMs"));
  BOOST_TEST(rule.get<bool>("formula.equals_trace"));
  const pt::ptree given = json_of(decode + " --splits 3 --counts-only");
  BOOST_TEST(given.get<long>("tiling.splits") == 3);
  BOOST_TEST(given.get<std::string>("tiling.splits_rule") == "flags");
  const Result text = run(decode + " --splits 3");
  BOOST_TEST_REQUIRE(text.exit_code == 0, text.out);
  BOOST_TEST(contains(text.out, "splits:  3 (flags)"), text.out);
  BOOST_TEST(contains(text.out, "splitkv_combine"), text.out);
}

// fa3: the kernel's one tile, its trace equal to its closed form, a kernel of
// 384 threads timed by the engine; the JSON names the algorithm "fa3".
BOOST_AUTO_TEST_CASE(fa3_simulates_its_kernels_tile_with_exact_bytes) {
  const std::string args = "simulate --profile h100-sxm5-80gb --algo fa3 --batch 2 --heads 4 --kv-heads 2 --seq-q 300 "
                           "--seq-k 500 --head-dim 128 --causal";
  const pt::ptree j = json_of(args);
  BOOST_TEST(j.get<std::string>("algorithm") == "fa3");
  BOOST_TEST(j.get<long>("tiling.block_m") == 128);
  BOOST_TEST(j.get<long>("tiling.block_n") == 128);
  BOOST_TEST(j.get<bool>("formula.equals_trace"));
  const Result text = run(args);
  BOOST_TEST_REQUIRE(text.exit_code == 0, text.out);
  BOOST_TEST(contains(text.out, "fa3_fwd"), text.out);
  BOOST_TEST(contains(run("simulate --help").out, "fa3"));
}

// --gemm-impl wgmma: standard attention's GEMMs on the Hopper kernel (its one
// tile 128x128x64 by default), named in the JSON's tiling, with the TMA boxes'
// zero fill at ragged N reported beside the trace's exact bytes; one clear
// error for what it does not cover.
BOOST_AUTO_TEST_CASE(gemm_impl_wgmma_simulates_the_hopper_gemm) {
  const std::string args = "simulate --profile h200 --algo standard --pass fwd --batch 2 --heads 4 --seq 1000 "
                           "--head-dim 64 --gemm-impl wgmma";
  const pt::ptree j = json_of(args);
  BOOST_TEST(j.get<std::string>("tiling.gemm.impl") == "wgmma");
  BOOST_TEST(j.get<long>("tiling.gemm.k") == 64);
  BOOST_TEST(j.get<bool>("formula.equals_trace"));
  std::vector<long> fill;
  for (const auto& [_, k] : j.get_child("kernels")) fill.push_back(k.get<long>("requests.zero_fill_read_bytes"));
  // S = Q K^T, the softmax (no TMA), O = P V (batch 2 x 4 heads)
  // O = P V: P's cut rows (1000 of them per head) carry 16 bytes more, their fill in whole sectors
  BOOST_TEST(fill == (std::vector<long>{393216, 0, 973824 + 8 * 1000 * 16}), boost::test_tools::per_element());
  BOOST_TEST(json_of("simulate --profile h200 --algo standard --pass fwd --seq 1000 --head-dim 64")
                 .get<std::string>("tiling.gemm.impl") == "mma");
  for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
           {"--algo standard --gemm-impl tma", "--gemm-impl 'tma' is not a GEMM kernel (valid: mma, wgmma)"},
           {"--algo standard --gemm-impl wgmma --gemm-k 32", "--gemm-impl wgmma has one tile, 128x128x64"},
           {"--algo fa2 --gemm-impl wgmma", "--gemm-impl wgmma applies to standard attention's GEMMs"}}) {
    const Result bad = run("simulate --seq 1000 --head-dim 64 " + flags);
    BOOST_TEST(bad.exit_code != 0, flags);
    BOOST_TEST(contains(bad.out, says), bad.out);
  }
}

// `iosim walk`: per kernel and program, the SM model's cycles of one step,
// region by region (the FA1 forward program names its regions), the
// instruction listing of a region on request, and one clear error for a bad
// --ctas.
BOOST_AUTO_TEST_CASE(walk_prints_each_programs_cycles_by_region) {
  const Result r = run("walk --profile h100 --algo fa1 --seq 1024 --head-dim 64 --block-m 64 --block-n 64 "
                       "--kernel fa1_fwd --list \"P V\"");
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  for (const char* part : {"## fa1_fwd", "### fa1_fwd d64 64x64:", "| S = Q K^T |", "| P V |", "| all |",
                           "P V, instruction by instruction", "| tensor |"})
    BOOST_TEST(contains(r.out, part), part);
  BOOST_TEST(!contains(r.out, "fa1_bwd"));
  const Result bad = run("walk --algo fa2 --seq 1024 --head-dim 64 --ctas 0");
  BOOST_TEST(bad.exit_code != 0);
  BOOST_TEST(contains(bad.out, "--ctas must be at least 1"), bad.out);
}

