// `iosim sweep`: lists and ranges expand to exact value lists, the grid runs
// in a fixed order whatever the threads, --set changes the profile through
// the profile's own validation, and every row holds what `iosim simulate`
// reports for the same point.
#define BOOST_TEST_MODULE sweep
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cli/sweep_grid.h"
#include "sim/common/error.h"
#include "tests/cli_run.h"
#include "tests/test_files.h"

namespace pt = boost::property_tree;
using iosim::cli::SweepValueKind;
using iosim::testing::run_cli;

namespace {

using Strings = std::vector<std::string>;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Strings lines_of(const std::string& text) {
  Strings lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A sweep's JSON lines, one tree per row (stdout only).
std::vector<pt::ptree> sweep_rows(const std::string& args) {
  const auto r = run_cli("sweep --format jsonl " + args, "", false);
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  std::vector<pt::ptree> rows;
  for (const std::string& line : lines_of(r.out)) {
    std::istringstream in(line);
    rows.emplace_back();
    pt::read_json(in, rows.back());
  }
  return rows;
}

// A row's value by its column name (which holds dots, so not a ptree path).
template <typename T>
T cell(const pt::ptree& row, const std::string& column) {
  return row.get<T>(pt::ptree::path_type(column, '/'));
}

pt::ptree simulate_json(const std::string& args) {
  const auto r = run_cli("simulate --json " + args, "", false);
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  std::istringstream in(r.out);
  pt::ptree tree;
  pt::read_json(in, tree);
  return tree;
}

const std::string kProblem = "--profile a100 --heads 2 --head-dim 64";

}  // namespace

BOOST_AUTO_TEST_CASE(ranges_expand_to_exact_lists_that_include_a_reached_end) {
  const auto expand = [](const std::string& text, SweepValueKind kind = SweepValueKind::integer) {
    return iosim::cli::expand_sweep_values("--seq", text, kind);
  };
  BOOST_TEST(expand("512:4096:x2") == (Strings{"512", "1024", "2048", "4096"}), boost::test_tools::per_element());
  BOOST_TEST(expand("512:4000:x2") == (Strings{"512", "1024", "2048"}), boost::test_tools::per_element());
  BOOST_TEST(expand("64:128:+32") == (Strings{"64", "96", "128"}), boost::test_tools::per_element());
  BOOST_TEST(expand("7:7:x2") == (Strings{"7"}), boost::test_tools::per_element());
  BOOST_TEST(expand("256,512:1024:x2,100") == (Strings{"256", "512", "1024", "100"}), boost::test_tools::per_element());
  BOOST_TEST(expand("32KiB:96KiB:+32KiB", SweepValueKind::size) == (Strings{"32768 B", "65536 B", "98304 B"}),
             boost::test_tools::per_element());
  BOOST_TEST(expand("1KiB:4KiB:x2", SweepValueKind::size) == (Strings{"1024 B", "2048 B", "4096 B"}),
             boost::test_tools::per_element());
  // A list-only flag keeps its colons: a file name, say.
  BOOST_TEST(expand("a:b,c", SweepValueKind::list) == (Strings{"a:b", "c"}), boost::test_tools::per_element());
  // Near the top of 64 bits the next value is not computed past the end.
  const std::string big = std::to_string(INT64_MAX / 2 + 1);
  BOOST_TEST(expand(big + ":" + std::to_string(INT64_MAX) + ":x2").size() == 1u);
}

BOOST_AUTO_TEST_CASE(malformed_ranges_and_lists_are_errors_naming_the_flag) {
  for (const char* bad : {"512:100:x2", "512:1024:x1", "512:1024:x0", "512:1024:+0", "512:1024:-2", "512:1024",
                          "1:2:3:x2", "0:64:x2", "a:64:x2", "8:64:y2", "", "512,", ",512", "512,,1024"}) {
    BOOST_CHECK_EXCEPTION(iosim::cli::expand_sweep_values("--seq", bad, SweepValueKind::integer), iosim::InputError,
                          [&](const iosim::InputError& e) { return contains(e.what(), "--seq"); });
  }
  // On the command line: exit 2, one line on stderr, no rows.
  for (const char* bad : {"--seq 512:100:x2", "--seq 512:1024:x1", "--seq 512:1024:+0", "--seq 512,,1024",
                          "--seq abc", "--algo fa2, --seq 512"}) {
    const auto r = run_cli("sweep --counts-only " + kProblem + " " + bad + " 2>/dev/null", "", false);
    BOOST_TEST(r.exit_code == 2, bad);
    BOOST_TEST(r.out.empty(), bad << ": " << r.out);
    const auto e = run_cli("sweep --counts-only " + kProblem + " " + bad);
    BOOST_TEST(lines_of(e.out).size() == 1u, e.out);
  }
}

BOOST_AUTO_TEST_CASE(the_grid_follows_the_flag_order_with_the_last_flag_fastest) {
  std::vector<std::string> rest;
  iosim::cli::ArgParser simulate("sweep", "");
  simulate.add("algo", iosim::cli::ArgParser::Kind::text, "A", "")
      .add("seq", iosim::cli::ArgParser::Kind::integer, "N", "")
      .add("causal", iosim::cli::ArgParser::Kind::flag, "", "");
  const auto grid = iosim::cli::parse_sweep_grid({"--algo", "fa1,fa2", "--causal", "--seq=512:2048:x2", "--jobs", "3"},
                                                 simulate, rest);
  BOOST_TEST(rest == (Strings{"--jobs", "3"}), boost::test_tools::per_element());
  BOOST_TEST_REQUIRE(grid.points() == 6);
  const std::vector<Strings> expected = {{"fa1", "512"},  {"fa1", "1024"}, {"fa1", "2048"},
                                         {"fa2", "512"},  {"fa2", "1024"}, {"fa2", "2048"}};
  for (long long i = 0; i < 6; ++i) BOOST_TEST(grid.values_of(i) == expected[static_cast<size_t>(i)], boost::test_tools::per_element());
  BOOST_TEST(grid.args_of(4) == (Strings{"--causal", "--algo", "fa2", "--seq", "1024"}), boost::test_tools::per_element());
  // The command's rows come in the same order.
  const auto rows = sweep_rows("--counts-only " + kProblem + " --algo fa1,fa2 --seq 512:2048:x2");
  BOOST_TEST_REQUIRE(rows.size() == 6u);
  for (size_t i = 0; i < 6; ++i) {
    BOOST_TEST(cell<std::string>(rows[i], "arg.algo") == expected[i][0]);
    BOOST_TEST(cell<std::string>(rows[i], "algorithm") == expected[i][0]);
    BOOST_TEST(cell<std::string>(rows[i], "problem.seq_q") == expected[i][1]);
  }
}

// Rows do not say how the engine ran, so an approximate engine is said once,
// on stderr, and the rows stay data.
BOOST_AUTO_TEST_CASE(an_approximate_engine_is_said_once_on_stderr) {
  const std::string args = "sweep --profile a100 --algo fa2 --batch 8 --heads 16 --head-dim 64 --seq 512,1024";
  const auto with = run_cli(args + " --fast-forward");  // stdout and stderr
  BOOST_TEST(with.exit_code == 0, with.out);
  BOOST_TEST(with.out.find("sweep: APPROXIMATE engine: fast-forward") != std::string::npos, with.out);
  const auto rows = run_cli(args + " --fast-forward", "", false);  // stdout alone
  BOOST_TEST(rows.out.find("APPROXIMATE") == std::string::npos, rows.out);
  BOOST_TEST(run_cli(args).out.find("APPROXIMATE") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(rows_are_byte_identical_whatever_the_number_of_jobs) {
  const std::string args = "sweep " + kProblem + " --algo standard,fa1,fa2 --seq 256:1024:x2 --block-m 64,128 --block-n 128";
  const auto one = run_cli(args + " --jobs 1", "", false);
  const auto four = run_cli(args + " --jobs 4", "", false);
  BOOST_TEST_REQUIRE(one.exit_code == 0, one.out);
  BOOST_TEST_REQUIRE(four.exit_code == 0, four.out);
  BOOST_TEST(lines_of(one.out).size() == 1u + 3 * 3 * 2);  // a header and a row per point
  BOOST_TEST(one.out == four.out);
  const auto jsonl = run_cli(args + " --format jsonl --jobs 1", "", false);
  BOOST_TEST(jsonl.out == run_cli(args + " --format jsonl --jobs 3", "", false).out);
}

BOOST_AUTO_TEST_CASE(counts_only_rows_equal_simulate_counts_only_for_the_same_point) {
  // By the closed form (the sweep's --counts-only default), and by the walk.
  for (const std::string count_by : {"", "--count-by trace"}) {
    const auto rows = sweep_rows("--counts-only " + count_by + " " + kProblem + " --algo standard,fa1,fa2 --seq 512,1536 --causal");
    BOOST_TEST_REQUIRE(rows.size() == 6u);
    for (const auto& row : rows) {
      BOOST_TEST(cell<std::string>(row, "status") == "ok");
      BOOST_TEST(cell<std::string>(row, "counted_by") == (count_by.empty() ? "formula" : "trace"));
      BOOST_TEST(!row.get_child_optional(pt::ptree::path_type("dram.read_bytes", '/')));  // counts only
      const auto s = simulate_json("--counts-only " + kProblem + " --causal --algo " + cell<std::string>(row, "arg.algo") +
                                   " --seq " + cell<std::string>(row, "arg.seq"));
      for (const char* key : {"global.read_bytes", "global.write_bytes", "global.total_bytes", "formula.bytes", "flops",
                              "tiling.block_m", "tiling.block_n", "problem.seq_k", "problem.causal"})
        BOOST_TEST(cell<std::string>(row, key) == s.get<std::string>(key), key);
    }
  }
}

BOOST_AUTO_TEST_CASE(engine_rows_equal_simulate_for_the_same_point) {
  const auto rows = sweep_rows(kProblem + " --algo fa2 --seq 1024 --l2-policy lru,fifo");
  BOOST_TEST_REQUIRE(rows.size() == 2u);
  for (const auto& row : rows) {
    const auto s = simulate_json(kProblem + " --algo fa2 --seq 1024 --l2-policy " + cell<std::string>(row, "arg.l2-policy"));
    for (const char* key : {"dram.read_bytes", "dram.write_bytes", "l2.lookups", "l2.lookup_hits", "time.seconds",
                            "occupancy.ctas_per_sm", "bound", "global.total_bytes"})
      BOOST_TEST(cell<std::string>(row, key) == s.get<std::string>(key), key);
  }
}

// FA1 rewrites O once per key block, so a smaller shared memory (smaller Bc)
// moves more bytes; the profile's limit and the derived tile show it.
BOOST_AUTO_TEST_CASE(set_smem_per_block_changes_the_derived_tiling_and_fa1_traffic) {
  const auto rows = sweep_rows("--counts-only " + kProblem + " --algo fa1 --seq 2048 --set sm.smem_per_block=32KiB,160KiB");
  BOOST_TEST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(cell<long long>(rows[0], "tiling.sram_limit_bytes") == 32 * 1024);
  BOOST_TEST(cell<long long>(rows[1], "tiling.sram_limit_bytes") == 160 * 1024);
  BOOST_TEST(cell<long long>(rows[0], "tiling.block_n") < cell<long long>(rows[1], "tiling.block_n"));
  BOOST_TEST(cell<long long>(rows[0], "global.total_bytes") > cell<long long>(rows[1], "global.total_bytes"));
  BOOST_TEST(cell<std::string>(rows[0], "set.sm.smem_per_block") == "32KiB");
  // simulate takes the same --set, one value.
  const auto s = simulate_json("--counts-only " + kProblem + " --algo fa1 --seq 2048 --set sm.smem_per_block=32KiB");
  BOOST_TEST(s.get<long long>("tiling.block_n") == cell<long long>(rows[0], "tiling.block_n"));
  BOOST_TEST(s.get<long long>("global.total_bytes") == cell<long long>(rows[0], "global.total_bytes"));
}

BOOST_AUTO_TEST_CASE(bad_set_keys_and_values_are_one_error_naming_the_key) {
  struct Case {
    const char* set;
    std::vector<const char*> says;
  };
  const std::vector<Case> cases = {
      {"l1.smem_per_block=48KiB", {"unknown profile key 'l1.smem_per_block'", "sm.smem_per_block", "l2.size"}},
      {"sm.smem_per_block=lots", {"--set sm.smem_per_block=lots", "KiB"}},
      {"sm.smem_per_block=48", {"--set sm.smem_per_block=48", "KiB"}},
      {"sm.smem_per_block=400KiB", {"--set sm.smem_per_block=400KiB", "sm.smem_per_sm"}},
      {"dram.achievable_fraction=1.5", {"--set dram.achievable_fraction=1.5", "(0, 1]"}},
      {"sm_pipes.fp32=64 op/cycle", {"no 'sm_pipes' section"}},
      {"sm.smem_per_block", {"KEY=VALUE"}},
  };
  for (const auto& c : cases) {
    for (const std::string cmd : {"sweep", "simulate"}) {
      const auto r = run_cli(cmd + " --counts-only " + kProblem + " --seq 512 --set '" + c.set + "'");
      BOOST_TEST(r.exit_code == 2, cmd << " " << c.set << ": " << r.out);
      BOOST_TEST(lines_of(r.out).size() == 1u, r.out);
      for (const char* part : c.says) BOOST_TEST(contains(r.out, part), cmd << " " << c.set << ": " << r.out);
    }
  }
  // simulate takes one value and says where lists go.
  const auto list = run_cli("simulate --counts-only " + kProblem + " --seq 512 --set sm.smem_per_block=48KiB,96KiB");
  BOOST_TEST(list.exit_code == 2);
  BOOST_TEST(contains(list.out, "a list of values is for 'iosim sweep'"), list.out);
  // In a list, the bad value alone is named.
  const auto r = run_cli("sweep --counts-only " + kProblem + " --seq 512 --set sm.smem_per_block=48KiB,lots");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(contains(r.out, "--set sm.smem_per_block=lots:"), r.out);
}

BOOST_AUTO_TEST_CASE(a_point_that_cannot_run_is_an_error_row_and_the_sweep_goes_on) {
  const auto rows = sweep_rows("--counts-only --profile a100 --head-dim 128 --seq 1024 --block-m 64,256 --block-n 256");
  BOOST_TEST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(cell<std::string>(rows[0], "status") == "ok");
  BOOST_TEST(cell<std::string>(rows[1], "status") == "error");
  BOOST_TEST(contains(cell<std::string>(rows[1], "error"), "shared memory"));
  BOOST_TEST(cell<std::string>(rows[1], "global.total_bytes") == "null");
  // No point ran: the rows, then exit 2 with the first error.
  const auto none = run_cli("sweep --counts-only --profile a100 --head-dim 128 --seq 1024 --block-m 256 --block-n 256,512");
  BOOST_TEST(none.exit_code == 2);
  BOOST_TEST(contains(none.out, "no point ran"), none.out);
}

// RFC 4180 fields of one line (quoted fields may hold commas and "" for a quote).
Strings csv_fields(const std::string& line) {
  Strings fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += line[++i];
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) fields.emplace_back();
    else fields.back() += c;
  }
  return fields;
}

BOOST_AUTO_TEST_CASE(csv_cells_holding_commas_are_quoted_so_every_row_has_the_headers_fields) {
  // The paper's rule text holds commas ("Bc=ceil(M/4d), Br=min(Bc,d)"); the second point is an error row.
  const auto r = run_cli("sweep --counts-only " + kProblem + " --seq 512 --kv-heads 2,4", "", false);
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  const Strings lines = lines_of(r.out);
  BOOST_TEST_REQUIRE(lines.size() == 3u);
  const Strings header = csv_fields(lines[0]);
  const auto column = [&](const std::string& name) {
    const auto at = std::find(header.begin(), header.end(), name);
    BOOST_TEST_REQUIRE((at != header.end()), name);
    return static_cast<size_t>(at - header.begin());
  };
  for (size_t i = 1; i < lines.size(); ++i) BOOST_TEST(csv_fields(lines[i]).size() == header.size(), lines[i]);
  const Strings ok = csv_fields(lines[1]), bad = csv_fields(lines[2]);
  BOOST_TEST(ok[column("status")] == "ok");
  BOOST_TEST(contains(ok[column("tiling.rule")], "), Br=min(Bc,d)"), ok[column("tiling.rule")]);
  BOOST_TEST(bad[column("status")] == "error");
  BOOST_TEST(contains(bad[column("error")], "kv-heads"), bad[column("error")]);
  BOOST_TEST(bad[column("global.total_bytes")].empty());
}

BOOST_AUTO_TEST_CASE(out_writes_the_same_rows_as_standard_output) {
  const iosim::testing::TempDir dir;
  const std::string file = (dir.path() / "rows.csv").string();
  const std::string args = "sweep --counts-only " + kProblem + " --algo fa1,fa2 --seq 512,1024";
  BOOST_TEST_REQUIRE(run_cli(args + " --out " + file, "", false).out.empty());
  BOOST_TEST(iosim::testing::read_text(file) == run_cli(args, "", false).out);
}

// The bar counts the points' walk and engine steps, drawn from half a second on.
BOOST_AUTO_TEST_CASE(a_long_sweep_shows_a_progress_bar_on_a_terminal_and_erases_it) {
  iosim::testing::check_progress_bar("sweep --algo fa1 --seq 4096,8192 --heads 16,24 --head-dim 64 --jobs 1", "sweep");
  // Without a terminal (the other tests' pipes), no bar at all.
  BOOST_TEST(!contains(run_cli("sweep --counts-only " + kProblem + " --seq 512").out, "\r"));
}

BOOST_AUTO_TEST_CASE(help_lists_sweep_and_its_range_syntax) {
  BOOST_TEST(contains(run_cli("--help").out, "sweep"));
  const auto r = run_cli("sweep --help");
  BOOST_TEST(r.exit_code == 0);
  for (const char* part : {"usage: iosim sweep", "A:B:xK", "512:16384:x2", "--set KEY=VALUE", "--jobs", "status 'error'",
                           "--block-m"})
    BOOST_TEST(contains(r.out, part), part);
}
