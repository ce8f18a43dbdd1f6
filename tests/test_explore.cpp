// `iosim explore`: its candidates fit shared memory by the schedules' own
// rule, its kernel marks are the menu's, its ranking is that of independent
// `iosim simulate` runs, its recommendation is the top one, its "closer than
// the model's error" note follows the validation CSV's error exactly, and its
// output does not depend on the threads.
#define BOOST_TEST_MODULE explore
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/schedule/kernel_menu.h"
#include "sim/schedule/kernel_schedules.h"
#include "tests/cli_run.h"

namespace pt = boost::property_tree;
namespace fs = std::filesystem;
using iosim::testing::run_cli;
using iosim::schedule::KernelMenu;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

pt::ptree json_of(const std::string& command) {
  const auto r = run_cli(command, "", false);
  BOOST_TEST_REQUIRE(r.exit_code == 0, command << ": " << r.out);
  std::istringstream in(r.out);
  pt::ptree tree;
  pt::read_json(in, tree);
  return tree;
}

pt::ptree explore_json(const std::string& args) { return json_of("explore --format json --jobs 2 " + args); }

std::vector<pt::ptree> array_of(const pt::ptree& tree, const std::string& key) {
  std::vector<pt::ptree> out;
  for (const auto& [_, v] : tree.get_child(key)) out.push_back(v);
  return out;
}

// Small problems: each explore runs in well under a second.
const std::string kFa2 = "--profile h100 --algo fa2 --heads 4 --seq 512 --head-dim 64";
const std::string kSizes[] = {"16", "32", "64", "128", "256"};

// A validation CSV whose fa2 held-out kernels have mean |pred/meas - 1| = `error`
// (plus rows that must not count: another algorithm, the calibration set, a
// failed measurement).
std::string write_validation_csv(const std::string& name, double error) {
  const fs::path path = fs::temp_directory_path() / ("iosim-test-explore-" + name + ".csv");
  std::ofstream f(path);
  f.precision(17);
  const std::string prof = "hw_profiles/h100-sxm5-80gb.yaml";
  f << "gpu,algo,set,status,profile,sim_time_s,meas_time_s\n";
  f << "h100,fa2,heldout,ok," << prof << "," << 1 + error << ",1\n";
  f << "h100,fa2,heldout,ok," << prof << "," << 2 * (1 - error) << ",2\n";
  f << "h100,fa1,heldout,ok," << prof << ",9,1\n";
  f << "h100,fa2,calibration,ok," << prof << ",9,1\n";
  f << "h100,fa2,heldout,failed," << prof << ",9,1\n";
  return path.string();
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_candidate_fits_shared_memory_by_the_schedules_rule) {
  const long long limit = 64 * 1024;
  for (const std::string pass : {"fwd", "bwd"}) {
    const auto tree = explore_json(kFa2 + " --pass " + pass + " --set sm.smem_per_block=64KiB");
    BOOST_TEST(tree.get<long long>("sram_limit_bytes") == limit);
    std::set<std::string> seen;
    auto rule = [&](long long bm, long long bn) {
      return pass == "fwd" ? iosim::schedule::Fa2ForwardSchedule::sram_bytes_for(64, bm, bn, 2)
                           : iosim::schedule::Fa2BackwardSchedule::sram_bytes_for(64, bm, bn, 2);
    };
    for (const auto& c : array_of(tree, "candidates")) {
      const long long bm = c.get<long long>("block_m"), bn = c.get<long long>("block_n");
      BOOST_TEST(c.get<long long>("sram_bytes") == rule(bm, bn), pass << " " << bm << "x" << bn);
      BOOST_TEST(rule(bm, bn) <= limit, pass << " " << bm << "x" << bn);
      seen.insert(c.get<std::string>("label"));
    }
    // Every other combination was left out for a reason; those over the limit say so.
    for (const auto& c : array_of(tree, "not_feasible")) {
      const long long bm = c.get<long long>("block_m"), bn = c.get<long long>("block_n");
      if (rule(bm, bn) > limit) BOOST_TEST(contains(c.get<std::string>("why"), std::to_string(rule(bm, bn)) + " B"));
      seen.insert(c.get<std::string>("label"));
    }
    BOOST_TEST(seen.size() == 25u);
    BOOST_TEST(!tree.get_child("not_feasible").empty(), "64 KiB must leave some tiles out");
  }
}

BOOST_AUTO_TEST_CASE(the_kernel_marks_equal_the_full_and_ci_menus) {
  struct Case {
    std::string args;
    bool fa1, fwd, bwd;
    long long d;
  };
  const Case cases[] = {{kFa2 + " --pass fwd", false, true, false, 64},
                        {"--profile h100 --algo fa2 --heads 2 --seq 256 --head-dim 128 --pass bwd", false, false, true, 128},
                        {"--profile h100 --algo fa1 --heads 2 --seq 256 --head-dim 128 --pass fwdbwd", true, true, true, 128}};
  for (const Case& k : cases) {
    const auto tree = explore_json(k.args);
    auto in = [&](KernelMenu menu, long long bm, long long bn) {
      auto one = [&](bool backward) {
        return k.fa1 ? iosim::schedule::fa1_in_menu(menu, backward, k.d, bm, bn)
                     : iosim::schedule::fa2_in_menu(menu, backward, k.d, bm, bn);
      };
      return (!k.fwd || one(false)) && (!k.bwd || one(true));
    };
    for (const std::string list : {"candidates", "not_feasible"})
      for (const auto& c : array_of(tree, list)) {
        const long long bm = c.get<long long>("block_m"), bn = c.get<long long>("block_n");
        const bool full = in(KernelMenu::full, bm, bn), ci = in(KernelMenu::ci, bm, bn);
        BOOST_TEST(c.get<bool>("compiled") == full, k.args << " " << bm << "x" << bn);
        const std::string menu = c.get<std::string>("menu", "");
        BOOST_TEST((menu == "null" ? "" : menu) == (ci ? "ci" : full ? "full" : ""), k.args << " " << bm << "x" << bn << " menu " << menu);
      }
  }
  // --compiled-only keeps exactly the compiled feasible ones.
  const auto all = explore_json(kFa2), compiled = explore_json(kFa2 + " --compiled-only");
  std::set<std::string> expected, got;
  for (const auto& c : array_of(all, "candidates"))
    if (c.get<bool>("compiled")) expected.insert(c.get<std::string>("label"));
  for (const auto& c : array_of(compiled, "candidates")) got.insert(c.get<std::string>("label"));
  BOOST_TEST(got == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_ranking_is_the_order_of_independent_simulate_runs) {
  const auto tree = explore_json(kFa2 + " --pass fwdbwd");
  const auto c = array_of(tree, "candidates");
  BOOST_TEST_REQUIRE(c.size() >= 3u);
  for (std::size_t i = 1; i < c.size(); ++i) {
    BOOST_TEST(c[i].get<long long>("rank") == static_cast<long long>(i) + 1);
    BOOST_TEST(c[i - 1].get<double>("time_s") <= c[i].get<double>("time_s"));
  }
  // Two candidates run on their own by `iosim simulate` give the same numbers, hence the same order.
  std::vector<double> simulated;
  for (const auto* k : {&c[c.size() - 1], &c[0]}) {
    const auto s = json_of("simulate --json " + kFa2 + " --pass fwdbwd --block-m " + k->get<std::string>("block_m") +
                           " --block-n " + k->get<std::string>("block_n"));
    BOOST_TEST(s.get<double>("time.seconds") == k->get<double>("time_s"));
    BOOST_TEST(s.get<long long>("dram.read_bytes") == k->get<long long>("dram_read_bytes"));
    BOOST_TEST(s.get<long long>("occupancy.ctas_per_sm") == k->get<long long>("ctas_per_sm"));
    simulated.push_back(s.get<double>("time.seconds"));
  }
  BOOST_TEST(simulated[1] < simulated[0]);
}

// The SM<->L2 bytes are what the crossbar carries: the trace's requests and,
// for a tile at the register limit, its spills (FA2 backward d 128 128 x 128
// spills 600 bytes per thread; 64 x 128's local loads all hit the L1 and only
// its prologue stores, 200 bytes a thread once per CTA), as `simulate`'s JSON
// gives them.
BOOST_AUTO_TEST_CASE(the_sm_l2_bytes_count_the_register_spills) {
  const std::string problem = "--profile h200 --algo fa2 --pass bwd --heads 8 --seq 1024 --head-dim 128";
  const auto tree = explore_json(problem + " --compiled-only");
  for (const auto& c : array_of(tree, "candidates")) {
    const std::string tile = c.get<std::string>("block_m") + "x" + c.get<std::string>("block_n");
    if (tile != "128x128" && tile != "64x128") continue;
    const auto s = json_of("simulate --json " + problem + " --block-m " + c.get<std::string>("block_m") +
                           " --block-n " + c.get<std::string>("block_n"));
    long long spills = 0;
    for (const auto& [_, k] : s.get_child("kernels"))
      spills += k.get<long long>("local.store_bytes", 0) + k.get<long long>("local.load_l1_miss_bytes", 0);
    BOOST_TEST(c.get<long long>("l2_bytes") == s.get<long long>("requests.total_bytes") + spills, tile);
    if (tile == "128x128") BOOST_TEST(spills > 0);
    if (tile == "64x128") BOOST_TEST(spills == 200 * 256 * 8 * (1024 / 128));  // bytes x threads x CTAs
  }
}

// Standard attention on an sm_90 profile: the wgmma GEMM's one tile is a
// candidate beside the mma.sync tiles (named "128x128x64 wgmma", impl in the
// CSV and JSON), timed as `simulate --gemm-impl wgmma` times it; the reason
// compares the winner with the same tile on the other kernel. Not on sm_80.
BOOST_AUTO_TEST_CASE(hopper_profiles_rank_the_wgmma_gemm_beside_the_mma_tiles) {
  const std::string problem = "--algo standard --heads 4 --seq 512 --head-dim 64";
  const auto tree = explore_json("--profile h200 " + problem);
  const pt::ptree* wgmma = nullptr;
  const pt::ptree* mma = nullptr;
  const auto all = array_of(tree, "candidates");
  for (const auto& c : all) {
    if (c.get<std::string>("label") == "128x128x64 wgmma") wgmma = &c;
    if (c.get<std::string>("label") == "128x128x64") mma = &c;
  }
  BOOST_TEST_REQUIRE((wgmma && mma));
  BOOST_TEST(wgmma->get<std::string>("gemm.impl") == "wgmma");
  BOOST_TEST(mma->get<std::string>("gemm.impl") == "mma");
  BOOST_TEST(wgmma->get<long long>("sram_bytes") == iosim::schedule::WgmmaGemmShape::kSmemBytes);
  const auto s = json_of("simulate --json --profile h200 " + problem + " --gemm-impl wgmma");
  BOOST_TEST(s.get<double>("time.seconds") == wgmma->get<double>("time_s"));
  // Here the wgmma tile wins by far (the H200's tensor rate with TMA loads), and its reason names the
  // same tile on mma.sync.
  BOOST_TEST_REQUIRE(tree.get<std::string>("recommended") == "128x128x64 wgmma");
  BOOST_TEST(contains(tree.get<std::string>("reason"), "the same tile on the mma.sync kernel"),
             tree.get<std::string>("reason"));
  const auto csv = lines_of(run_cli("explore --format csv --jobs 2 --profile h200 " + problem, "", false).out);
  BOOST_TEST_REQUIRE(!csv.empty());
  BOOST_TEST(contains(csv[0], ",gemm_k,gemm_impl,warps,"), csv[0]);
  std::size_t wgmma_rows = 0;
  for (const auto& line : csv) wgmma_rows += contains(line, ",128,128,64,wgmma,") ? 1 : 0;
  BOOST_TEST(wgmma_rows == 1u);
  for (const auto& c : array_of(explore_json("--profile a100 " + problem), "candidates"))
    BOOST_TEST(c.get<std::string>("gemm.impl") == "mma", c.get<std::string>("label"));
  const auto bad = run_cli("explore --profile h200 " + problem + " --gemm-impl wgmma");
  BOOST_TEST(bad.exit_code != 0);
  BOOST_TEST(contains(bad.out, "explore: --gemm-impl sets the tiling"), bad.out);
}

// An approximate engine (fast-forward, set sampling) is said in the text and
// the JSON; the exact one says nothing.
BOOST_AUTO_TEST_CASE(an_approximate_engine_is_said) {
  BOOST_TEST(explore_json(kFa2).get<std::string>("engine_approximation").empty());
  const std::string approx = explore_json(kFa2 + " --fast-forward").get<std::string>("engine_approximation");
  BOOST_TEST(contains(approx, "fast-forward"), approx);
  const auto text = run_cli("explore --jobs 2 --fast-forward " + kFa2, "", false);
  BOOST_TEST(contains(text.out, "engine: APPROXIMATE, fast-forward"), text.out);
  BOOST_TEST(!contains(run_cli("explore --jobs 2 " + kFa2, "", false).out, "APPROXIMATE"));
}

BOOST_AUTO_TEST_CASE(the_recommendation_is_the_top_ranked_candidate) {
  const auto tree = explore_json(kFa2);
  const auto top = array_of(tree, "candidates").front();
  BOOST_TEST(tree.get<std::string>("recommended") == top.get<std::string>("label"));
  // The reason names the winner's bound.
  BOOST_TEST(!tree.get<std::string>("reason").empty());
  const auto text = run_cli("explore --jobs 2 " + kFa2, "", false);
  BOOST_TEST(contains(text.out, "recommended: " + top.get<std::string>("label") + " ("), text.out);
  const auto csv = lines_of(run_cli("explore --format csv --jobs 2 " + kFa2, "", false).out);
  BOOST_TEST_REQUIRE(csv.size() >= 2u);
  BOOST_TEST(csv[1].rfind("1," + top.get<std::string>("block_m") + "," + top.get<std::string>("block_n") + ",", 0) == 0);
  BOOST_TEST(csv[1].substr(csv[1].size() - 2) == ",1");
  for (std::size_t i = 2; i < csv.size(); ++i) BOOST_TEST(csv[i].substr(csv[i].size() - 2) == ",0");
}

BOOST_AUTO_TEST_CASE(the_closer_than_error_note_appears_exactly_when_the_gap_is_below_the_error) {
  const auto base = explore_json(kFa2);
  const auto c = array_of(base, "candidates");
  const double t1 = c[0].get<double>("time_s"), t2 = c[1].get<double>("time_s"), gap = (t2 - t1) / t1;
  BOOST_TEST_REQUIRE(gap > 0);
  for (const double error : {gap * 1.5, gap * 0.5}) {
    const std::string csv = write_validation_csv(error > gap ? "above" : "below", error);
    const auto tree = explore_json(kFa2 + " --validation-csv " + csv);
    BOOST_TEST(tree.get<double>("model_error.mean_abs") == error, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(tree.get<long long>("model_error.kernels") == 2);
    BOOST_TEST(tree.get<bool>("closer_than_error") == (gap < error), "error " << error << " gap " << gap);
    const auto text = run_cli("explore --jobs 2 " + kFa2 + " --validation-csv " + csv, "", false).out;
    BOOST_TEST(contains(text, "closer than the model's error") == (gap < error), text);
    fs::remove(csv);
  }
  // The shipped H100 validation CSV is found beside the profiles; none was measured with the A100 profile.
  BOOST_TEST(explore_json(kFa2).get<double>("model_error.mean_abs") > 0);
  const auto a100 = run_cli("explore --jobs 2 --profile a100 --algo fa2 --heads 4 --seq 512 --head-dim 64", "", false);
  BOOST_TEST(contains(a100.out, "model error unknown for this profile"), a100.out);
}

BOOST_AUTO_TEST_CASE(the_output_is_the_same_whatever_the_threads) {
  for (const std::string format : {"text", "csv", "json"}) {
    const std::string args = "explore --format " + format + " " + kFa2 + " --pass bwd --jobs ";
    const auto one = run_cli(args + "1", "", false), three = run_cli(args + "3", "", false);
    BOOST_TEST(one.exit_code == 0);
    BOOST_TEST(one.out == three.out, format);
  }
}

BOOST_AUTO_TEST_CASE(a_problem_no_tiling_fits_is_one_error_with_the_need_and_the_limit) {
  const auto r = run_cli("explore --profile h100 --algo fa2 --heads 2 --seq 256 --head-dim 256 --set sm.smem_per_block=16KiB");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(lines_of(r.out).size() == 1u, r.out);
  const long long need = iosim::schedule::Fa2ForwardSchedule::sram_bytes_for(256, 16, 16, 2);
  BOOST_TEST(contains(r.out, "needs " + std::to_string(need) + " B"), r.out);
  BOOST_TEST(contains(r.out, "16384 B"), r.out);
  // The flags that choose one tiling, and unknown flags, are one error too.
  for (const std::string bad : {"--block-m 64 --block-n 64", "--gemm-m 64", "--no-such-flag", "--format xml",
                                "--jobs 0", "--validation-csv /no/such.csv"}) {
    const auto e = run_cli("explore " + kFa2 + " " + bad);
    BOOST_TEST(e.exit_code == 2, bad);
    BOOST_TEST(lines_of(e.out).size() == 1u, bad << ": " << e.out);
  }
}

BOOST_AUTO_TEST_CASE(the_plot_is_a_png_or_one_error_without_matplotlib) {
  const fs::path png = fs::temp_directory_path() / "iosim-test-explore.png";
  fs::remove(png);
  const auto r = run_cli("explore --jobs 2 " + kFa2 + " --plot " + png.string() + " > /dev/null");
  const bool matplotlib = std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") == 0 ||
                          std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
  if (!matplotlib) {
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.out, "matplotlib"), r.out);
    BOOST_TEST(lines_of(r.out).size() == 1u, r.out);
    return;
  }
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  std::ifstream f(png, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  BOOST_TEST((magic[1] == 'P' && magic[2] == 'N' && magic[3] == 'G'));
  fs::remove(png);
}
