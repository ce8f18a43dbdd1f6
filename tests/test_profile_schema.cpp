// The profile schema (sim/profile/schema.h) as one table: every key is
// described, hw_profiles/README.md's key tables are the generated ones, the
// optional sm_pipes section loads and is validated, and a profile written by
// the calibrate writer from made-up measurements loads back through the strict
// loader with the values it was written with.
#define BOOST_TEST_MODULE test_profile_schema
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "sim/common/error.h"
#include "sim/profile/calibration.h"
#include "sim/profile/hardware_profile.h"
#include "sim/profile/profile_writer.h"
#include "sim/profile/schema.h"
#include "tests/test_files.h"

namespace fs = std::filesystem;
using iosim::i64;
using namespace iosim::profile;
using iosim::testing::read_text;
using iosim::testing::TempDir;

namespace {

const fs::path kRepo = fs::path(IOSIM_TEST_DATA_DIR) / ".." / "..";


std::string load_error(const fs::path& file) {
  try {
    load_profile(file.string());
  } catch (const iosim::InputError& e) {
    return e.what();
  }
  BOOST_FAIL("loading " << file << " succeeded but should have been rejected");
  return {};
}

// Measurements of a made-up GPU shaped like an H100; every number differs from
// the others so that a value landing on the wrong key is caught.
CalibrationMeasurements made_up_measurements() {
  CalibrationMeasurements m;
  DeviceFacts& f = m.device;
  f.name = "Test GPU X1";
  f.cc_major = 9;
  f.cc_minor = 0;
  f.sm_count = 132;
  f.max_clock_hz = 1980e6;
  f.smem_per_sm_bytes = 233472;
  f.smem_per_block_optin_bytes = 232448;
  f.registers_per_sm = 65536;
  f.max_registers_per_thread = 255;
  f.max_threads_per_sm = 2048;
  f.warp_size = 32;
  f.max_ctas_per_sm = 32;
  f.l2_bytes = 52428800;
  f.global_memory_bytes = 85017493504;
  f.memory_clock_hz = 2619e6;
  f.memory_bus_bits = 5120;
  m.date = "2026-11-25";
  m.repetitions = 5;
  m.dram_setup = "dram setup";
  m.dram_buffer_bytes = i64{2} << 30;
  m.dram_read_bytes_per_s = 3.0345e12;
  m.dram_write_bytes_per_s = 2.9e12;
  m.dram_copy_bytes_per_s = 2.86e12;
  m.clock_memory_load_hz = 1971.5e6;
  m.clock_memory_load_timer_hz = 1972.3e6;
  m.clock_memory_load_setup = "copy clock setup";
  m.dram_piece_bytes_per_s = {0.8e12, 1.6e12, 2.7e12, 2.95e12};
  m.dram_piece_stream_bytes_per_s = 3.1e12;
  m.dram_pieces_setup = "pieces setup";
  m.l2_read_setup = "l2 setup";
  m.l2_read_bytes_per_s = 8.7912e12;
  m.l2_read_working_set = 13107200;
  m.l2_sweep = {49.5 * 1024 * 1024, 52428800, 13107200, 209715200, 33, "l2 sweep", 38.53 * 1024 * 1024};
  m.l1_sweep = {250.3 * 1024, 262144, 65536, 524288, 25, "l1 sweep"};
  m.copy_setup = "copy setup";
  for (const i64 bytes : {i64{32} << 20, i64{64} << 20, i64{128} << 20}) {
    const double dirty = 21.5e6 + static_cast<double>(bytes) * 1e-3;
    m.copies.push_back({bytes, static_cast<double>(bytes) + 4096, static_cast<double>(bytes) - dirty,
                        static_cast<double>(bytes) / 32 * 1.0001, static_cast<double>(bytes) / 128});
  }
  m.chase_setup = "chase setup";
  m.timing_overhead_cycles = 3;
  m.smem_latency = {29, "smem setup"};
  m.l2_near_latency = 288.4;
  m.l2_far_latency = 463.2;
  m.dram_latency = 685.7;
  m.sms_sampled = 44;
  m.far_sms = 23;
  m.far_factor = 1.25;
  m.mma_f16 = {1021.7, 1755.3e6, "mma f16 setup", 1761.9e6};
  m.mma_bf16 = {1019.1, 1748.9e6, "mma bf16 setup"};
  m.fp32 = {127.3, 1975.1e6, "ffma setup"};
  m.mufu_ex2 = {15.9, 1977.2e6, "ex2 setup"};
  m.ldmatrix = {126.8, 1976.4e6, "ldmatrix setup"};
  m.issue = {3.91, 1979.1e6, "issue setup"};
  m.l2_load_per_sm = {61.7, "one sm setup"};
  m.red_per_sm = {24.5, "red setup"};
  m.red_queue = {21.0, "red queue setup"};
  m.step_jitter = {0.0067, "step jitter setup"};
  m.cta_priority = {0.106, "cta priority setup"};
  m.store_fragment = {0.125, "store fragment setup"};
  m.store_rows = {0.25, "store rows setup"};
  m.store_queue = {96.0, "store queue setup"};
  m.mma_latency = {33.2, "mma chain setup"};
  m.barrier_latency = {21.6, "barrier setup"};
  m.alu = {62.0, 1.9e9, "alu setup"};
  m.shfl = {31.0, 1.9e9, "shfl setup"};
  m.fp32_latency = {4.2, "ffma chain"};
  m.alu_latency = {4.1, "fmnmx chain"};
  m.mufu_latency = {17.0, "ex2 chain"};
  m.shfl_latency = {24.0, "shfl chain"};
  m.wgmma_f16 = {3911.4, 1702.5e6, "wgmma setup", 1710.0e6};
  m.wgmma_bf16 = {3907.0, 1701.0e6, "wgmma bf16 setup"};
  m.wgmma_rs_n128 = {3890.0, 1700.0e6, "wgmma rs setup"};
  m.wgmma_rs_n64 = {3500.0, 1700.0e6, "wgmma rs n64 setup"};
  m.wgmma_latency = {120.5, "wgmma chain setup"};
  m.branch_taken = {27.1, "uniform taken setup"};
  m.branch_not_taken = {16.2, "uniform not taken setup"};
  m.branch_reconverge = {11.8, "per-lane taken setup"};
  return m;
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-5 * std::max(std::fabs(a), std::fabs(b)); }

}  // namespace

BOOST_AUTO_TEST_SUITE(schema_table)

BOOST_AUTO_TEST_CASE(every_key_has_a_description_a_field_and_a_range_that_fits_its_kind) {
  std::set<std::string> paths;
  auto check = [&](const std::string& path, const SchemaKey& k) {
    BOOST_TEST_CONTEXT(path) {
      BOOST_TEST(paths.insert(path).second, "key listed twice");
      BOOST_TEST(k.description.size() > 8u);
      BOOST_TEST(!k.field.empty());
      const bool text = k.kind == ValueKind::plain_text || k.kind == ValueKind::compute_capability ||
                        k.kind == ValueKind::dram_kind || k.kind == ValueKind::boolean;
      BOOST_TEST(k.range.numeric == !text);
      if (!text) BOOST_TEST(!k.range.text().empty());
      BOOST_TEST(!kind_name(k.kind).empty());
    }
  };
  for (const SchemaSection& s : profile_schema()) {
    if (!s.key.empty()) BOOST_TEST(!s.description.empty(), s.key);
    BOOST_TEST((s.required || s.present != nullptr), "an optional section needs its presence flag: " << s.key);
    for (const SchemaKey& k : s.keys) check(key_path(s, k), k);
  }
}

BOOST_AUTO_TEST_CASE(sm_pipes_holds_exactly_the_execution_model_parameters) {
  const std::vector<std::string> expected{"clock_tensor_load", "clock_memory_load", "clock_wgmma_load",
                                          "mma_f16",   "mma_bf16",
                                          "wgmma_f16",
                                          "fp32",              "mufu_ex2",          "smem_ldmatrix",
                                          "issue",             "l2_load_per_sm",    "red_per_sm",        "red_queue",
                                          "store_fragment",    "store_rows",        "store_queue",
                                          "mma_latency",
                                          "wgmma_latency",
                                          "barrier_latency",   "alu",               "shfl",
                                          "fp32_latency",      "alu_latency",       "mufu_latency",
                                          "shfl_latency",
                                          "branch_taken",      "branch_not_taken",  "branch_reconverge",
                                          "step_jitter",       "cta_priority"};
  std::vector<std::string> got;
  for (const SchemaSection& s : profile_schema())
    if (s.key == "sm_pipes") {
      BOOST_TEST(!s.required);
      for (const SchemaKey& k : s.keys) got.push_back(std::string(k.key));
    }
  BOOST_TEST(got == expected, boost::test_tools::per_element());
  BOOST_TEST(kind_name(find_key("sm_pipes.mma_f16")->kind) == "FLOP/cycle");
  BOOST_TEST(kind_name(find_key("sm_pipes.l2_load_per_sm")->kind) == "B/cycle");
  BOOST_TEST(kind_name(find_key("sm_pipes.issue")->kind) == "inst/cycle");
  BOOST_TEST(find_key("sm_pipes.mma_bf16")->range.contains(0.0));
  BOOST_TEST(!find_key("sm_pipes.mma_f16")->range.contains(0.0));
  // wgmma's keys are optional (sm_90a only) but, where given, positive.
  BOOST_TEST(kind_name(find_key("sm_pipes.wgmma_f16")->kind) == "FLOP/cycle");
  BOOST_TEST(kind_name(find_key("sm_pipes.wgmma_latency")->kind) == "latency");
  for (const char* k : {"sm_pipes.wgmma_f16", "sm_pipes.wgmma_latency"}) {
    BOOST_TEST(!find_key(k)->required, k);
    BOOST_TEST(!find_key(k)->range.contains(0.0), k);
  }
  // So are the branch costs (absent: no cost), in cycles.
  for (const char* k : {"sm_pipes.branch_taken", "sm_pipes.branch_not_taken", "sm_pipes.branch_reconverge"}) {
    BOOST_TEST(kind_name(find_key(k)->kind) == "latency", k);
    BOOST_TEST(!find_key(k)->required, k);
    BOOST_TEST(!find_key(k)->range.contains(0.0), k);
  }
}

BOOST_AUTO_TEST_CASE(readme_key_tables_are_the_ones_generated_from_the_schema) {
  const std::string readme = read_text(kRepo / "hw_profiles" / "README.md");
  const std::string begin = "<!-- BEGIN generated";
  const std::string end = "<!-- END generated -->";
  const std::size_t b = readme.find(begin);
  const std::size_t e = readme.find(end);
  BOOST_TEST_REQUIRE((b != std::string::npos && e != std::string::npos && b < e),
                     "hw_profiles/README.md lacks the generated-table markers");
  const std::size_t first = readme.find('\n', b) + 1;
  BOOST_TEST(readme.substr(first, e - first) == schema_markdown(),
             "hw_profiles/README.md's key tables differ from the schema: run scripts/gen_profile_schema.sh");
  // The key the hand-written table once missed.
  BOOST_TEST(schema_markdown().find("`l2.dirty_limit`") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sm_pipes_section)

const std::string kPipes =
    "sm_pipes:\n"
    "  clock_tensor_load: {value: 1755 MHz, source: \"x\"}\n"
    "  clock_memory_load: {value: 1.97 GHz, source: \"x\"}\n"
    "  mma_f16: {value: 1024 FLOP/cycle, source: \"x\"}\n"
    "  fp32: {value: 128 op/cycle, source: \"x\"}\n"
    "  mufu_ex2: {value: 16 op/cycle, source: \"x\"}\n"
    "  smem_ldmatrix: {value: 128 B/cycle, source: \"x\"}\n"
    "  issue: {value: 3.9 inst/cycle, source: \"x\"}\n"
    "  l2_load_per_sm: {value: 64 B/cycle, source: \"x\"}\n"
    "  mma_latency: {value: 33 cycles, source: \"x\"}\n"
    "  barrier_latency: {value: 20 cycles, source: \"x\"}\n"
    "  alu: {value: 64 op/cycle, source: \"x\"}\n"
    "  shfl: {value: 32 op/cycle, source: \"x\"}\n"
    "  fp32_latency: {value: 4 cycles, source: \"x\"}\n"
    "  alu_latency: {value: 4 cycles, source: \"x\"}\n"
    "  mufu_latency: {value: 17 cycles, source: \"x\"}\n"
    "  shfl_latency: {value: 24 cycles, source: \"x\"}\n";

std::string with_pipes(const std::string& pipes) {
  return read_text(kRepo / "hw_profiles" / "a100-sxm4-40gb.yaml") + pipes;
}

int line_of(const std::string& text, const std::string& marker) {
  std::istringstream in(text);
  int n = 0;
  for (std::string l; std::getline(in, l);) {
    ++n;
    if (l.find(marker) != std::string::npos) return n;
  }
  BOOST_FAIL("no line contains " << marker);
  return 0;
}

void expect_rejected(const std::string& text, const std::string& marker, const std::string& key,
                     const std::string& problem) {
  const TempDir dir;
  const fs::path file = dir.write_yaml("a100-sxm4-40gb", text);
  const std::string msg = load_error(file);
  const std::string prefix = file.string() + ":" + std::to_string(line_of(text, marker)) + ": " + key + ": ";
  BOOST_TEST(msg.rfind(prefix, 0) == 0, msg << " (expected prefix " << prefix << ")");
  BOOST_TEST(msg.find(problem) != std::string::npos, msg);
}

// The section is present exactly in the profiles whose file has it (iosim
// calibrate's H100 profile has; the datasheet profiles have not).
BOOST_AUTO_TEST_CASE(profiles_without_the_section_load_with_it_absent) {
  int with = 0, without = 0;
  for (const auto& entry : fs::directory_iterator(kRepo / "hw_profiles")) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream f(entry.path());
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const bool has = text.find("\nsm_pipes:") != std::string::npos;
    (has ? with : without) += 1;
    BOOST_TEST(load_profile(entry.path().string()).sm_pipes.present == has, entry.path());
  }
  BOOST_TEST(without > 0);
}

BOOST_AUTO_TEST_CASE(the_section_loads_in_base_units_and_bf16_may_be_absent) {
  const TempDir dir;
  const HardwareProfile p = load_profile(dir.write_yaml("a100-sxm4-40gb", with_pipes(kPipes)).string());
  BOOST_TEST(p.sm_pipes.present);
  BOOST_TEST(p.sm_pipes.clock_tensor_load_hz == 1755e6);
  BOOST_TEST(p.sm_pipes.clock_memory_load_hz == 1.97e9);
  BOOST_TEST(p.sm_pipes.mma_f16_flop_per_cycle == 1024.0);
  BOOST_TEST(p.sm_pipes.mma_bf16_flop_per_cycle == 0.0);
  BOOST_TEST(p.sm_pipes.issue_inst_per_cycle == 3.9);
  BOOST_TEST(p.sm_pipes.mma_latency_cycles == 33.0);
  const HardwareProfile q =
      load_profile(dir.write_yaml("a100-sxm4-40gb", with_pipes(kPipes + "  mma_bf16: {value: 0 FLOP/cycle, source: \"x\"}\n"))
                       .string());
  BOOST_TEST(q.sm_pipes.mma_bf16_flop_per_cycle == 0.0);
}

// wgmma's keys: valid with the section, absent (0) without, malformed
// values rejected like any other key's.
const std::string kWgmma =
    "  wgmma_f16: {value: 4096 FLOP/cycle, source: \"x\"}\n"
    "  wgmma_latency: {value: 128 cycles, source: \"x\"}\n";

// Optional sm_pipes keys: with `keys` appended each member holds its value;
// without them (the section still present) each is 0.
using PipeValue = std::pair<double HardwareProfile::SmPipes::*, double>;
void expect_optional_pipe_keys(const std::string& keys, std::initializer_list<PipeValue> want) {
  const TempDir dir;
  const HardwareProfile p = load_profile(dir.write_yaml("a100-sxm4-40gb", with_pipes(kPipes + keys)).string());
  for (const auto& [member, value] : want) {
    const double got = p.sm_pipes.*member;
    BOOST_TEST(got == value);
  }
  const HardwareProfile q = load_profile(dir.write_yaml("a100-sxm4-40gb", with_pipes(kPipes)).string());
  BOOST_TEST(q.sm_pipes.present);
  for (const auto& [member, value] : want) {
    const double got = q.sm_pipes.*member;
    BOOST_TEST(got == 0.0);
  }
}

BOOST_AUTO_TEST_CASE(the_wgmma_keys_load_where_given_and_are_zero_where_absent) {
  using S = HardwareProfile::SmPipes;
  expect_optional_pipe_keys(kWgmma, {{&S::wgmma_f16_flop_per_cycle, 4096.0}, {&S::wgmma_latency_cycles, 128.0}});
}

// The pipes section with `keys` appended, `from` in them replaced by `to`.
std::string pipes_with_keys(const std::string& keys, const std::string& from, const std::string& to) {
  const size_t at = keys.find(from);
  BOOST_TEST_REQUIRE(at != std::string::npos, from);
  return with_pipes(kPipes + keys.substr(0, at) + to + keys.substr(at + from.size()));
}

BOOST_AUTO_TEST_CASE(malformed_wgmma_values_are_rejected_naming_the_key) {
  auto with = [](const std::string& from, const std::string& to) { return pipes_with_keys(kWgmma, from, to); };
  expect_rejected(with("4096 FLOP/cycle", "0 FLOP/cycle"), "wgmma_f16", "sm_pipes.wgmma_f16", "is not positive");
  expect_rejected(with("4096 FLOP/cycle", "4096 op/cycle"), "wgmma_f16", "sm_pipes.wgmma_f16", "not FLOP per cycle");
  expect_rejected(with("128 cycles", "128 FLOP/cycle"), "wgmma_latency", "sm_pipes.wgmma_latency",
                  "is FLOP per cycle, not a latency");
  expect_rejected(with("128 cycles", "fast"), "wgmma_latency", "sm_pipes.wgmma_latency",
                  "is not a number followed by a unit");
}

// The branch costs: like wgmma's keys, valid with the section, absent (0)
// without, malformed values rejected naming the key.
const std::string kBranch =
    "  branch_taken: {value: 27.1 cycles, source: \"x\"}\n"
    "  branch_not_taken: {value: 16.2 cycles, source: \"x\"}\n"
    "  branch_reconverge: {value: 11.8 cycles, source: \"x\"}\n";

BOOST_AUTO_TEST_CASE(the_branch_keys_load_where_given_and_are_zero_where_absent) {
  using S = HardwareProfile::SmPipes;
  expect_optional_pipe_keys(kBranch, {{&S::branch_taken_cycles, 27.1},
                                      {&S::branch_not_taken_cycles, 16.2},
                                      {&S::branch_reconverge_cycles, 11.8}});
}

BOOST_AUTO_TEST_CASE(malformed_branch_values_are_rejected_naming_the_key) {
  auto with = [](const std::string& from, const std::string& to) { return pipes_with_keys(kBranch, from, to); };
  expect_rejected(with("27.1 cycles", "27.1 op/cycle"), "branch_taken", "sm_pipes.branch_taken",
                  "is operations per cycle, not a latency");
  expect_rejected(with("16.2 cycles", "16.2 B/cycle"), "branch_not_taken", "sm_pipes.branch_not_taken",
                  "is bytes per cycle, not a latency");
  expect_rejected(with("11.8 cycles", "0 cycles"), "branch_reconverge", "sm_pipes.branch_reconverge",
                  "is not positive");
  expect_rejected(with("11.8 cycles", "slow"), "branch_reconverge", "sm_pipes.branch_reconverge",
                  "is not a number followed by a unit");
}

// The stores' keys (sm_pipes.store_*): optional like the branch costs;
// malformed values rejected naming the key.
const std::string kStore =
    "  store_fragment: {value: 0.125 inst/cycle, source: \"x\"}\n"
    "  store_rows: {value: 0.25 inst/cycle, source: \"x\"}\n"
    "  store_queue: {value: 96 cycles, source: \"x\"}\n";

BOOST_AUTO_TEST_CASE(the_store_keys_load_where_given_and_are_zero_where_absent) {
  using S = HardwareProfile::SmPipes;
  expect_optional_pipe_keys(kStore, {{&S::store_fragment_inst_per_cycle, 0.125},
                                     {&S::store_rows_inst_per_cycle, 0.25},
                                     {&S::store_queue_cycles, 96.0}});
  auto with = [](const std::string& from, const std::string& to) { return pipes_with_keys(kStore, from, to); };
  expect_rejected(with("0.125 inst/cycle", "0.125 B/cycle"), "store_fragment", "sm_pipes.store_fragment",
                  "is bytes per cycle, not");
  expect_rejected(with("0.25 inst/cycle", "0 inst/cycle"), "store_rows", "sm_pipes.store_rows", "is not positive");
  expect_rejected(with("96 cycles", "many"), "store_queue", "sm_pipes.store_queue", "is not a number followed by a unit");
}

BOOST_AUTO_TEST_CASE(a_missing_required_key_of_the_section_is_rejected_at_the_section) {
  std::string pipes = kPipes;
  const std::string issue = "  issue: {value: 3.9 inst/cycle, source: \"x\"}\n";
  pipes.erase(pipes.find(issue), issue.size());
  expect_rejected(with_pipes(pipes), "sm_pipes:", "sm_pipes.issue", "missing key");
}

BOOST_AUTO_TEST_CASE(a_zero_rate_is_rejected_where_the_range_excludes_it) {
  std::string pipes = kPipes;
  pipes.replace(pipes.find("1024 FLOP/cycle"), 15, "0 FLOP/cycle");
  expect_rejected(with_pipes(pipes), "mma_f16", "sm_pipes.mma_f16", "is not positive");
}

BOOST_AUTO_TEST_CASE(a_per_cycle_unit_of_another_kind_is_rejected) {
  std::string pipes = kPipes;
  pipes.replace(pipes.find("1024 FLOP/cycle"), 15, "1024 B/cycle");
  expect_rejected(with_pipes(pipes), "mma_f16", "sm_pipes.mma_f16", "is bytes per cycle, not FLOP per cycle");
  std::string unknown = kPipes;
  unknown += "  tensor_ops: {value: 4 inst/cycle, source: \"x\"}\n";
  expect_rejected(with_pipes(unknown), "tensor_ops", "sm_pipes.tensor_ops", "unknown key");
}

BOOST_AUTO_TEST_CASE(dram_kind_may_be_left_out_but_not_misspelt) {
  const std::string text = read_text(kRepo / "hw_profiles" / "a100-sxm4-40gb.yaml");
  std::istringstream in(text);
  std::string without, bad;
  for (std::string l; std::getline(in, l);) {
    const bool kind = l.rfind("  kind:", 0) == 0;
    if (!kind) without += l + "\n";
    bad += (kind ? "  kind: {value: HBM4, source: \"x\"}" : l) + "\n";
  }
  const TempDir dir;
  BOOST_TEST(load_profile(dir.write_yaml("a100-sxm4-40gb", without).string()).dram_kind.empty());
  expect_rejected(bad, "HBM4", "dram.kind", "unknown DRAM kind");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(calibrate_writer)

BOOST_AUTO_TEST_CASE(a_written_profile_reloads_with_every_value_it_was_written_with) {
  const CalibrationMeasurements m = made_up_measurements();
  const ProfileDraft draft = draft_from_measurements(m, "test-gpu-x1");
  const TempDir dir;
  const HardwareProfile p = load_profile(dir.write_yaml("test-gpu-x1", write_profile_yaml(draft)).string());
  for (const SchemaSection& s : profile_schema())
    for (const SchemaKey& k : s.keys) {
      const std::string path = key_path(s, k);
      const auto it = draft.values.find(path);
      BOOST_TEST_CONTEXT(path) {
        if (k.kind == ValueKind::plain_text) continue;
        if (it == draft.values.end()) {
          BOOST_TEST(!k.required, "a required key was not written");
          continue;
        }
        if (k.kind == ValueKind::compute_capability || k.kind == ValueKind::dram_kind)
          BOOST_TEST(text_value(p, k) == it->second.text);
        else
          BOOST_TEST(close(numeric_value(p, k), it->second.number), numeric_value(p, k) << " vs " << it->second.number);
      }
    }
  BOOST_TEST(p.name == "test-gpu-x1");
  BOOST_TEST(p.display_name == "Test GPU X1");
  BOOST_TEST(p.sm_pipes.present);
}

BOOST_AUTO_TEST_CASE(values_are_the_measurements_mapped_to_their_keys) {
  const CalibrationMeasurements m = made_up_measurements();
  const TempDir dir;
  const HardwareProfile p =
      load_profile(dir.write_yaml("x", write_profile_yaml(draft_from_measurements(m, "x"))).string());
  const double peak = 5120.0 / 8 * 2619e6 * 2;
  BOOST_TEST(close(p.dram_peak_bandwidth_bytes_per_s, peak));
  BOOST_TEST(close(p.dram_achievable_fraction, 3.0345e12 / peak));
  BOOST_TEST(p.l2_bytes == 52428800);  // the driver's, not the sweep's estimate
  BOOST_TEST(p.l2_line_bytes == 128);  // counter ratios, to the power of two
  BOOST_TEST(p.l2_sector_bytes == 32);
  BOOST_TEST(p.l2_partitions == 2);
  // The sweep's half-hit working set, rounded down to whole sets of 128 B x 16 ways x 2 halves.
  BOOST_TEST(p.l2_effective_bytes == static_cast<i64>(38.53 * 1024 * 1024) / 4096 * 4096);
  BOOST_TEST(p.l2_model_bytes() == p.l2_effective_bytes);
  BOOST_TEST(p.max_warps_per_sm == 64);
  BOOST_TEST(p.l1_per_sm_bytes == 250 * 1024);  // whole KiB
  // Median of the dirty bytes of the three copies (the middle one).
  BOOST_TEST(p.l2_dirty_limit_bytes == std::round(21.5e6 + static_cast<double>(i64{64} << 20) * 1e-3));
  BOOST_TEST(close(p.tensor_fp16_flops_per_s, 1021.7 * 132 * 1755.3e6));
  BOOST_TEST(close(p.fp32_flops_per_s, 2 * 127.3 * 132 * 1975.1e6));
  BOOST_TEST(close(p.sfu_ops_per_s, 15.9 * 132 * 1977.2e6));
  BOOST_TEST(close(p.sm_pipes.clock_tensor_load_hz, 1755.3e6));
  BOOST_TEST(close(p.sm_pipes.l2_load_bytes_per_cycle, 61.7));
  BOOST_TEST(close(p.sm_pipes.red_bytes_per_cycle, 24.5));
  BOOST_TEST(close(p.sm_pipes.red_queue_cycles, 21.0));
  BOOST_TEST(close(p.sm_pipes.store_fragment_inst_per_cycle, 0.125));
  BOOST_TEST(close(p.sm_pipes.store_rows_inst_per_cycle, 0.25));
  BOOST_TEST(close(p.sm_pipes.store_queue_cycles, 96.0));
  BOOST_TEST(close(p.sm_pipes.step_jitter, 0.0067));
  BOOST_TEST(close(p.sm_pipes.cta_priority, 0.106));
  BOOST_TEST(p.l2_far_latency_cycles > p.l2_near_latency_cycles);
}

BOOST_AUTO_TEST_CASE(every_value_says_where_it_came_from_and_follows_its_description) {
  const CalibrationMeasurements m = made_up_measurements();
  const std::string yaml = write_profile_yaml(draft_from_measurements(m, "x"));
  const std::regex leaf(R"re(^\s*(\w+): \{value: .*, source: "(.*)"\}$)re");
  std::istringstream in(yaml);
  std::string previous;
  int leaves = 0;
  for (std::string line; std::getline(in, line); previous = line) {
    std::smatch match;
    if (!std::regex_match(line, match, leaf)) continue;
    ++leaves;
    const std::string source = match[2];
    BOOST_TEST_CONTEXT(line) {
      BOOST_TEST((source.rfind("measured on Test GPU X1, 2026-11-25, by iosim calibrate: ", 0) == 0 ||
                  source.rfind("read from the CUDA runtime on Test GPU X1, 2026-11-25: ", 0) == 0 ||
                  source.rfind("assumption: ", 0) == 0));
      BOOST_TEST(previous.find("# ") != std::string::npos, "no description comment above the key");
    }
  }
  BOOST_TEST(leaves >= 40);
  BOOST_TEST(yaml.find("kernel_families") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(every_file_a_written_profile_names_exists_in_the_repository) {
  const std::string yaml = write_profile_yaml(draft_from_measurements(made_up_measurements(), "x"));
  const std::regex path(R"re((?:[\w-]+/)+[\w.-]+\.(?:py|sh|cu|cpp|h|md|txt|json|yaml))re");
  int named = 0;
  for (auto it = std::sregex_iterator(yaml.begin(), yaml.end(), path); it != std::sregex_iterator(); ++it, ++named)
    BOOST_TEST(fs::exists(kRepo / it->str()), it->str() << " is named in a source but is not in the repository");
  BOOST_TEST(named >= 1);  // the header names hw_profiles/README.md
}

BOOST_AUTO_TEST_CASE(sm_clocks_are_said_to_be_over_the_hosts_time_with_the_gpu_timers_reading_beside) {
  const CalibrationMeasurements m = made_up_measurements();
  const ProfileDraft d = draft_from_measurements(m, "x");
  const std::string tensor = d.values.at("sm_pipes.clock_tensor_load").how;
  const std::string memory = d.values.at("sm_pipes.clock_memory_load").how;
  const std::string wgmma = d.values.at("sm_pipes.clock_wgmma_load").how;
  for (const std::string& how : {tensor, memory, wgmma}) BOOST_TEST(how.find("host's wall time") != std::string::npos);
  BOOST_TEST(d.values.at("sm_pipes.clock_wgmma_load").number == m.wgmma_f16.clock_hz);
  BOOST_TEST(tensor.find("%globaltimer read " + plain_decimal(m.mma_f16.timer_clock_hz / 1e6, 5) + " MHz") !=
             std::string::npos);
  BOOST_TEST(memory.find("%globaltimer read " + plain_decimal(m.clock_memory_load_timer_hz / 1e6, 5) + " MHz") !=
             std::string::npos);
  BOOST_TEST(memory.find(m.clock_memory_load_setup) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_l2_size_source_names_the_near_copies_only_where_the_l2_has_two_halves) {
  CalibrationMeasurements m = made_up_measurements();
  const auto how = [&] { return draft_from_measurements(m, "x").values.at("l2.size").how; };
  BOOST_TEST(how().find("copied near") != std::string::npos);
  m.far_sms = 0;
  BOOST_TEST(how().find("copied near") == std::string::npos);
}

// The partition probe's far SMs hit near on their second read: calibrate says
// the L2 copies far lines (l2.far_copies: true, loaded as such); one uniform L2
// leaves the key out (absent: false, as the next case loads).
BOOST_AUTO_TEST_CASE(far_copies_are_written_where_the_far_sms_second_reads_hit_near) {
  CalibrationMeasurements m = made_up_measurements();
  BOOST_TEST_REQUIRE(m.far_sms > 0);
  const TempDir dir;
  const ProfileDraft split = draft_from_measurements(m, "x");
  BOOST_TEST(split.values.at("l2.far_copies").how.find("hit near on their second") != std::string::npos);
  BOOST_TEST(load_profile(dir.write_yaml("x", write_profile_yaml(split)).string()).l2_far_copies);
  m.far_sms = 0;
  const ProfileDraft uniform = draft_from_measurements(m, "x");
  BOOST_TEST(uniform.values.count("l2.far_copies") == 0u);
}

BOOST_AUTO_TEST_CASE(far_copies_must_be_true_or_false_and_need_two_partitions) {
  const std::string a100 = read_text(kRepo / "hw_profiles" / "a100-sxm4-40gb.yaml");
  const std::string marker = "far_copies:    {value: false";
  const size_t at = a100.find(marker);
  BOOST_TEST_REQUIRE(at != std::string::npos);
  auto with = [&](const std::string& value) {
    return a100.substr(0, at) + "far_copies:    {value: " + value + a100.substr(at + marker.size());
  };
  sm_pipes_section::expect_rejected(with("yes"), "far_copies", "l2.far_copies", "'yes' is not true or false");
  const TempDir dir;
  BOOST_TEST(!load_profile(dir.write_yaml("a100-sxm4-40gb", a100).string()).l2_far_copies);
  BOOST_TEST(load_profile(dir.write_yaml("a100-sxm4-40gb", with("true")).string()).l2_far_copies);
  std::string uniform = with("true");
  const size_t partitions = uniform.find("partitions:    {value: 2");
  BOOST_TEST_REQUIRE(partitions != std::string::npos);
  uniform.replace(partitions, 24, "partitions:    {value: 1");
  sm_pipes_section::expect_rejected(uniform, "far_copies", "l2.far_copies", "true although l2.partitions is 1");
}

BOOST_AUTO_TEST_CASE(a_sweep_that_never_falls_to_half_gives_no_effective_size_and_the_model_keeps_the_l2_size) {
  CalibrationMeasurements m = made_up_measurements();
  m.l2_sweep.half_working_set = 0;
  const TempDir dir;
  const HardwareProfile p =
      load_profile(dir.write_yaml("x", write_profile_yaml(draft_from_measurements(m, "x"))).string());
  BOOST_TEST(p.l2_effective_bytes == 0);
  BOOST_TEST(p.l2_model_bytes() == p.l2_bytes);
}

BOOST_AUTO_TEST_CASE(a_gpu_without_bf16_gets_none_and_no_bf16_pipe) {
  CalibrationMeasurements m = made_up_measurements();
  m.mma_bf16 = {};
  const TempDir dir;
  const HardwareProfile p =
      load_profile(dir.write_yaml("x", write_profile_yaml(draft_from_measurements(m, "x"))).string());
  BOOST_TEST(p.tensor_bf16_flops_per_s == 0.0);
  BOOST_TEST(p.sm_pipes.mma_bf16_flop_per_cycle == 0.0);
}

BOOST_AUTO_TEST_CASE(a_gpu_without_wgmma_gets_no_wgmma_keys_and_one_with_it_gets_both) {
  CalibrationMeasurements m = made_up_measurements();
  const ProfileDraft with = draft_from_measurements(m, "x");
  BOOST_TEST(close(with.values.at("sm_pipes.wgmma_f16").number, 3911.4));
  BOOST_TEST(close(with.values.at("sm_pipes.wgmma_latency").number, 120.5));
  // The other shapes and bf16 are reported beside the key's value.
  const std::string how = with.values.at("sm_pipes.wgmma_f16").how;
  BOOST_TEST(how.find("wgmma setup") != std::string::npos, how);
  BOOST_TEST(how.find("m64n64k16 RS 3500 FLOP") != std::string::npos, how);
  BOOST_TEST(how.find("bf16 3907 FLOP") != std::string::npos, how);
  m.wgmma_f16 = {};
  m.wgmma_bf16 = {};
  m.wgmma_rs_n128 = {};
  m.wgmma_rs_n64 = {};
  m.wgmma_latency = {};
  const ProfileDraft without = draft_from_measurements(m, "x");
  BOOST_TEST(without.values.count("sm_pipes.wgmma_f16") == 0u);
  BOOST_TEST(without.values.count("sm_pipes.wgmma_latency") == 0u);
  const TempDir dir;
  const HardwareProfile p = load_profile(dir.write_yaml("x", write_profile_yaml(without)).string());
  BOOST_TEST(p.sm_pipes.present);
  BOOST_TEST(p.sm_pipes.wgmma_f16_flop_per_cycle == 0.0);
}

BOOST_AUTO_TEST_CASE(branch_costs_are_written_where_positive_and_left_out_otherwise) {
  CalibrationMeasurements m = made_up_measurements();
  const ProfileDraft with = draft_from_measurements(m, "x");
  BOOST_TEST(close(with.values.at("sm_pipes.branch_taken").number, 27.1));
  BOOST_TEST(close(with.values.at("sm_pipes.branch_not_taken").number, 16.2));
  BOOST_TEST(close(with.values.at("sm_pipes.branch_reconverge").number, 11.8));
  BOOST_TEST(with.values.at("sm_pipes.branch_reconverge").how == "per-lane taken setup");
  const TempDir dir;
  const HardwareProfile p = load_profile(dir.write_yaml("x", write_profile_yaml(with)).string());
  BOOST_TEST(close(p.sm_pipes.branch_taken_cycles, 27.1));
  BOOST_TEST(close(p.sm_pipes.branch_not_taken_cycles, 16.2));
  BOOST_TEST(close(p.sm_pipes.branch_reconverge_cycles, 11.8));
  // A difference at 0 or below (no cost, or noise), or a benchmark that did
  // not run, leaves the key out: the profile still loads, with no cost.
  m.branch_not_taken = {0.0, "not taken setup"};
  m.branch_reconverge = {-0.4, "per-lane taken setup"};
  const ProfileDraft without = draft_from_measurements(m, "y");
  BOOST_TEST(without.values.count("sm_pipes.branch_taken") == 1u);
  BOOST_TEST(without.values.count("sm_pipes.branch_not_taken") == 0u);
  BOOST_TEST(without.values.count("sm_pipes.branch_reconverge") == 0u);
  const HardwareProfile q = load_profile(dir.write_yaml("y", write_profile_yaml(without)).string());
  BOOST_TEST(close(q.sm_pipes.branch_taken_cycles, 27.1));
  BOOST_TEST(q.sm_pipes.branch_not_taken_cycles == 0.0);
  BOOST_TEST(q.sm_pipes.branch_reconverge_cycles == 0.0);
}

// The merge probe's window is measured where it ran, the engine's default
// (an assumption, said so) where it did not.
BOOST_AUTO_TEST_CASE(the_merge_window_is_measured_where_the_merge_probe_ran) {
  CalibrationMeasurements m = made_up_measurements();
  BOOST_TEST(draft_from_measurements(m, "x").values.at("l2.merge_window").number == 32.0);
  BOOST_TEST(draft_from_measurements(m, "x").values.at("l2.merge_window").how.find("not measured") == 0u);
  m.merge_window = {13.4, "merge probe setup"};
  const ProfileDraft d = draft_from_measurements(m, "x");
  BOOST_TEST(d.values.at("l2.merge_window").number == 13.4);
  BOOST_TEST(d.values.at("l2.merge_window").how.find("merge probe setup") == 0u);
  const TempDir dir;
  const HardwareProfile p = load_profile(dir.write_yaml("x", write_profile_yaml(d)).string());
  BOOST_TEST(close(p.l2_merge_window_cycles, 13.4));
}

// The step-variation values go to their keys with their setups; a benchmark
// that did not run (empty setup) or a negative rank slope leaves the key out,
// which the engine reads as lockstep CTAs at the SM's mean.
BOOST_AUTO_TEST_CASE(step_jitter_and_cta_priority_are_written_where_measured) {
  CalibrationMeasurements m = made_up_measurements();
  const ProfileDraft with = draft_from_measurements(m, "x");
  BOOST_TEST(with.values.at("sm_pipes.step_jitter").how == "step jitter setup");
  BOOST_TEST(with.values.at("sm_pipes.cta_priority").how == "cta priority setup");
  m.step_jitter = {0.0, ""};
  m.cta_priority = {-0.02, "cta priority setup"};
  const ProfileDraft without = draft_from_measurements(m, "y");
  BOOST_TEST(without.values.count("sm_pipes.step_jitter") == 0u);
  BOOST_TEST(without.values.count("sm_pipes.cta_priority") == 0u);
  const TempDir dir;
  const HardwareProfile q = load_profile(dir.write_yaml("y", write_profile_yaml(without)).string());
  BOOST_TEST(q.sm_pipes.step_jitter == 0.0);
  BOOST_TEST(q.sm_pipes.cta_priority == 0.0);
}

// The pieces benchmark's rates over its stream's become dram.read_fraction_*B
// (written as 1 above the stream), and the profile loads them; without the
// benchmark the keys are left out and reads of any piece stream.
BOOST_AUTO_TEST_CASE(dram_piece_fractions_are_the_pieces_rates_over_the_stream) {
  CalibrationMeasurements m = made_up_measurements();
  m.dram_piece_bytes_per_s[3] = 3.2e12;  // above the stream: noise
  const ProfileDraft with = draft_from_measurements(m, "x");
  BOOST_TEST(close(with.values.at("dram.read_fraction_32B").number, 0.8 / 3.1));
  BOOST_TEST(close(with.values.at("dram.read_fraction_128B").number, 2.7 / 3.1));
  BOOST_TEST(with.values.at("dram.read_fraction_256B").number == 1.0);
  BOOST_TEST(with.values.at("dram.read_fraction_256B").how.find("written as 1") != std::string::npos);
  BOOST_TEST(with.values.at("dram.read_fraction_64B").how.find("pieces setup") != std::string::npos);
  const TempDir dir;
  const HardwareProfile p = load_profile(dir.write_yaml("x", write_profile_yaml(with)).string());
  BOOST_TEST(close(p.dram_read_fraction_64b, 1.6 / 3.1));
  m.dram_piece_stream_bytes_per_s = 0;
  const ProfileDraft without = draft_from_measurements(m, "y");
  BOOST_TEST(without.values.count("dram.read_fraction_32B") == 0u);
  const HardwareProfile q = load_profile(dir.write_yaml("y", write_profile_yaml(without)).string());
  BOOST_TEST(q.dram_read_fraction_32b == 0.0);
}

BOOST_AUTO_TEST_CASE(counter_ratios_that_are_not_powers_of_two_are_refused) {
  CalibrationMeasurements m = made_up_measurements();
  for (CopyCounters& c : m.copies) c.l2_read_sectors = static_cast<double>(c.bytes) / 24;
  BOOST_CHECK_THROW(draft_from_measurements(m, "x"), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(the_writer_refuses_a_draft_missing_a_required_key_or_with_an_unknown_one) {
  ProfileDraft d = draft_from_measurements(made_up_measurements(), "x");
  ProfileDraft missing = d;
  missing.values.erase("l2.size");
  BOOST_CHECK_THROW(write_profile_yaml(missing), std::logic_error);
  ProfileDraft unknown = d;
  unknown.values["l2.sise"] = unknown.values["l2.line"];
  BOOST_CHECK_THROW(write_profile_yaml(unknown), std::logic_error);
}

BOOST_AUTO_TEST_CASE(values_are_written_as_plain_decimals_in_the_kind_s_unit) {
  BOOST_TEST(format_value(ValueKind::size, 62914560) == "60 MiB");
  BOOST_TEST(format_value(ValueKind::size, 150109880320.0) == "146591680 KiB");
  BOOST_TEST(format_value(ValueKind::size, 25900123) == "25900123 B");
  BOOST_TEST(format_value(ValueKind::size_or_none, INFINITY) == "none");
  BOOST_TEST(format_value(ValueKind::bandwidth, 4.41e12) == "4410 GB/s");
  BOOST_TEST(format_value(ValueKind::frequency, 1755.3e6) == "1755.3 MHz");
  BOOST_TEST(format_value(ValueKind::flop_rate_or_none, 0) == "none");
  BOOST_TEST(format_value(ValueKind::fraction, 0.91873456) == "0.918735");
  BOOST_TEST(plain_decimal(1.5e-7, 3) == "0.00000015");  // no exponent, which the unit parser rejects
  BOOST_TEST(plain_decimal(123456789.0, 3) == "123456789");
}

BOOST_AUTO_TEST_CASE(profile_names_are_made_from_device_names) {
  BOOST_TEST(profile_name_for("NVIDIA H200") == "nvidia-h200");
  BOOST_TEST(profile_name_for("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3");
  BOOST_TEST(profile_name_for("  ") == "gpu");
}

BOOST_AUTO_TEST_SUITE_END()
