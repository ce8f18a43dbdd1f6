// Hardware profiles: the shipped files load with sane values, units parse
// exactly and by kind, and every class of bad file is rejected with one
// message "<file>:<line>: <key>: <problem> (<valid>)" naming the right line.
// Bad profiles are made by editing one line of a shipped profile (the expected
// line is found in the edited text, not taken from the loader) or read from
// tests/data/profiles_bad/.
#define BOOST_TEST_MODULE test_profiles
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/common/error.h"
#include "sim/profile/hardware_profile.h"
#include "sim/profile/units.h"
#include "tests/test_files.h"

namespace fs = std::filesystem;
using iosim::InputError;
using iosim::profile::HardwareProfile;
using iosim::testing::read_text;
using iosim::testing::TempDir;

namespace {

const fs::path kShippedDir = fs::path(IOSIM_TEST_DATA_DIR) / ".." / ".." / "hw_profiles";
const fs::path kBadDir = fs::path(IOSIM_TEST_DATA_DIR) / "profiles_bad";
constexpr double kMiB = 1024.0 * 1024.0;


std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// 1-based number of the first line starting with `prefix` (after `after`).
int find_line(const std::string& text, const std::string& prefix, int after = 0) {
  const std::vector<std::string> lines = lines_of(text);
  for (int i = after; i < static_cast<int>(lines.size()); ++i)
    if (lines[i].rfind(prefix, 0) == 0) return i + 1;
  BOOST_FAIL("no line starts with '" << prefix << "'");
  return -1;
}

// 1-based number of the first line containing `marker`.
int marked_line(const std::string& text, const std::string& marker) {
  const std::vector<std::string> lines = lines_of(text);
  for (int i = 0; i < static_cast<int>(lines.size()); ++i)
    if (lines[i].find(marker) != std::string::npos) return i + 1;
  BOOST_FAIL("no line contains '" << marker << "'");
  return -1;
}

// The A100 40GB profile with one edit, written under its own stem.
struct EditedProfile {
  TempDir dir;
  fs::path file;
  std::string text;
  int line = 0;  // 1-based line the edit produced (or the line the error belongs to)

  EditedProfile(std::string edited_text, int edited_line)
      : file(dir.path() / "a100-sxm4-40gb.yaml"), text(std::move(edited_text)), line(edited_line) {
    std::ofstream(file) << text;
  }
};

std::string base_text() { return read_text(kShippedDir / "a100-sxm4-40gb.yaml"); }

// Replaces the first line starting with `prefix` by `replacement`.
EditedProfile replace_line(const std::string& prefix, const std::string& replacement) {
  const std::string text = base_text();
  std::vector<std::string> lines = lines_of(text);
  const int line = find_line(text, prefix);
  lines[line - 1] = replacement;
  return EditedProfile(join_lines(lines), line);
}

// Inserts `new_line` after the first line starting with `prefix`.
EditedProfile insert_after(const std::string& prefix, const std::string& new_line) {
  const std::string text = base_text();
  std::vector<std::string> lines = lines_of(text);
  const int line = find_line(text, prefix);
  lines.insert(lines.begin() + line, new_line);
  return EditedProfile(join_lines(lines), line + 1);
}

// The InputError message of loading `file`; fails the test when it loads.
std::string load_error(const fs::path& file) {
  try {
    iosim::profile::load_profile(file.string());
  } catch (const InputError& e) {
    return e.what();
  }
  BOOST_FAIL("loading " << file << " succeeded but should have been rejected");
  return {};
}

// The message must be "<file>:<line>: <key>: <problem> (<valid>)" with the
// problem containing `problem`.
void check_message(const std::string& msg, const fs::path& file, int line, const std::string& key,
                   const std::string& problem) {
  const std::string prefix = file.string() + ":" + std::to_string(line) + ": " + key + ": ";
  BOOST_TEST_CONTEXT("message: " << msg) {
    BOOST_TEST(msg.rfind(prefix, 0) == 0, "expected prefix '" << prefix << "'");
    BOOST_TEST(msg.find(problem) != std::string::npos, "expected problem '" << problem << "'");
    BOOST_TEST(msg.find(" (") != std::string::npos);
    BOOST_TEST(!msg.empty());
    if (!msg.empty()) BOOST_TEST(msg.back() == ')');
  }
}

void expect_rejected(const EditedProfile& p, const std::string& key, const std::string& problem) {
  check_message(load_error(p.file), p.file, p.line, key, problem);
}

HardwareProfile shipped(const std::string& name) {
  return iosim::profile::find_profile(name, kShippedDir.string());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shipped_profiles)

BOOST_AUTO_TEST_CASE(all_five_profiles_load_and_are_named_after_their_files) {
  const std::vector<HardwareProfile> all = iosim::profile::list_profiles(kShippedDir.string());
  std::vector<std::string> names;
  for (const HardwareProfile& p : all) {
    names.push_back(p.name);
    BOOST_TEST(fs::path(p.source_file).stem().string() == p.name);
    BOOST_TEST(!p.display_name.empty());
  }
  const std::vector<std::string> expected{"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb",
                                          "h200-sxm-141gb", "t4"};
  BOOST_TEST(names == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a100_40gb_l2_is_40_mib_in_128_byte_lines_of_32_byte_sectors) {
  const HardwareProfile p = shipped("a100-sxm4-40gb");
  BOOST_TEST(p.l2_bytes == 40LL * 1024 * 1024);
  BOOST_TEST(p.l2_line_bytes == 128);
  BOOST_TEST(p.l2_sector_bytes == 32);
  BOOST_TEST(p.sm_count == 108);
  BOOST_TEST(p.smem_per_sm_bytes == 164 * 1024);
  BOOST_TEST(p.dram_peak_bandwidth_bytes_per_s == 1555e9);
  BOOST_TEST(p.sm_clock_hz == 1410e6);
}

BOOST_AUTO_TEST_CASE(h100_has_132_sms_and_the_l2_and_shared_memory_read_off_the_device) {
  const HardwareProfile p = shipped("h100-sxm5-80gb");
  BOOST_TEST(p.sm_count == 132);
  BOOST_TEST(p.l2_bytes == 52428800);             // cudaGetDeviceProperties, 2026-11-22
  BOOST_TEST(p.smem_per_sm_bytes == 233472);
  BOOST_TEST(p.smem_per_block_bytes == 232448);
  BOOST_TEST(p.compute_capability == "9.0");
}

BOOST_AUTO_TEST_CASE(h200_matches_the_measured_section_of_the_reference) {
  const HardwareProfile p = shipped("h200-sxm-141gb");
  BOOST_TEST(p.sm_count == 132);
  BOOST_TEST(p.l2_bytes == 62914560);
  BOOST_TEST(p.smem_per_sm_bytes == 233472);
  BOOST_TEST(p.smem_per_block_bytes == 232448);
  BOOST_TEST(p.registers_per_sm == 65536);
  BOOST_TEST(p.sm_clock_hz == 1980e6);
  // Peak from the measured bus: 6016 bit x 3201 MHz x 2 (DDR) = 4.814 TB/s.
  const double bus_peak = 6016.0 / 8 * 3201e6 * 2;
  BOOST_TEST(std::abs(p.dram_peak_bandwidth_bytes_per_s - bus_peak) / bus_peak < 0.01);
}

BOOST_AUTO_TEST_CASE(achievable_dram_bandwidth_is_below_peak_everywhere) {
  for (const HardwareProfile& p : iosim::profile::list_profiles(kShippedDir.string())) {
    BOOST_TEST_CONTEXT(p.name) {
      BOOST_TEST(p.dram_achievable_bandwidth_bytes_per_s() > 0.0);
      BOOST_TEST(p.dram_achievable_bandwidth_bytes_per_s() < p.dram_peak_bandwidth_bytes_per_s);
      // L2 serves data faster than DRAM can on every part.
      BOOST_TEST(p.l2_bandwidth_bytes_per_s > p.dram_peak_bandwidth_bytes_per_s);
    }
  }
}

BOOST_AUTO_TEST_CASE(t4_has_no_bf16_tensor_rate_but_an_fp16_one) {
  const HardwareProfile p = shipped("t4");
  BOOST_TEST(p.tensor_bf16_flops_per_s == 0.0);
  BOOST_TEST(p.tensor_fp16_flops_per_s == 65e12);
  for (const std::string name : {"a100-sxm4-40gb", "h100-sxm5-80gb", "h200-sxm-141gb"})
    BOOST_TEST(shipped(name).tensor_bf16_flops_per_s > 0.0, name);
}

BOOST_AUTO_TEST_CASE(fp32_rate_equals_lanes_times_sms_times_two_times_clock) {
  // FP32 lanes per SM from the CUDA C++ Programming Guide's throughput table:
  // 64 for compute capability 7.5 and 8.0, 128 for 9.0. An FMA counts as 2 FLOPs.
  // A measured profile (iosim calibrate) reads its own lanes (sm_pipes.fp32,
  // at most the table's: the benchmark's clock reads share the issue slots)
  // and its clock under that load, within 6% of the attribute's clock (the
  // H100 ran FFMA at 2.07 GHz, 4.5% over its 1.98 GHz; the H200 at 1.98 GHz).
  for (const HardwareProfile& p : iosim::profile::list_profiles(kShippedDir.string())) {
    const double table = p.compute_capability == "9.0" ? 128 : 64;
    const double lanes = p.sm_pipes.present ? p.sm_pipes.fp32_op_per_cycle : table;
    const double expected = lanes * 2 * static_cast<double>(p.sm_count) * p.sm_clock_hz;
    BOOST_TEST_CONTEXT(p.name) {
      BOOST_TEST(lanes <= table);
      BOOST_TEST(lanes > 0.9 * table);
      BOOST_TEST(std::abs(p.fp32_flops_per_s - expected) / expected < (p.sm_pipes.present ? 0.06 : 0.01));
    }
  }
}

BOOST_AUTO_TEST_CASE(split_l2_far_hits_cost_more_than_near_hits_and_dram_more_than_both) {
  for (const HardwareProfile& p : iosim::profile::list_profiles(kShippedDir.string())) {
    BOOST_TEST_CONTEXT(p.name) {
      if (p.l2_partitions > 1) BOOST_TEST(p.l2_far_latency_cycles > p.l2_near_latency_cycles);
      BOOST_TEST(p.dram_latency_cycles > p.l2_far_latency_cycles);
      BOOST_TEST(p.smem_latency_cycles < p.l2_near_latency_cycles);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_measured_value_says_when_and_no_source_is_a_placeholder) {
  // The loader requires a non-empty source; here: a measurement carries its
  // date (YYYY-MM-DD) and no placeholder text slipped in.
  const std::regex date(R"(\d{4}-\d{2}-\d{2})");
  for (const auto& entry : fs::directory_iterator(kShippedDir)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string text = read_text(entry.path());
    BOOST_TEST_CONTEXT(entry.path().filename().string()) {
      for (const std::string& line : lines_of(text)) {
        if (line.find("source:") == std::string::npos) continue;
        if (line.find("measured on NVIDIA") != std::string::npos)
          BOOST_TEST(std::regex_search(line, date), line);
        BOOST_TEST(line.find("TODO") == std::string::npos, line);
        BOOST_TEST(line.find("source: \"...\"") == std::string::npos, line);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(units)

using namespace iosim::profile;

BOOST_AUTO_TEST_CASE(binary_and_decimal_sizes_are_exact) {
  BOOST_TEST(*parse_size_bytes("40 MiB").value == 41943040);
  BOOST_TEST(*parse_size_bytes("40 MB").value == 40000000);
  BOOST_TEST(*parse_size_bytes("1.5 KiB").value == 1536);
  BOOST_TEST(*parse_size_bytes("163 KiB").value == 166912);
  BOOST_TEST(*parse_size_bytes("141 GiB").value == 141LL * 1024 * 1024 * 1024);
  BOOST_TEST(*parse_size_bytes("128 B").value == 128);
  BOOST_TEST(*parse_size_bytes("128B").value == 128);
}

BOOST_AUTO_TEST_CASE(a_size_that_is_not_a_whole_number_of_bytes_is_rejected) {
  const Parsed<iosim::i64> r = parse_size_bytes("0.3 KiB");  // 307.2 B
  BOOST_TEST(!r.value.has_value());
  BOOST_TEST(r.problem.find("whole number of bytes") != std::string::npos);
  BOOST_TEST(!parse_size_bytes("1.5 B").value.has_value());
}

BOOST_AUTO_TEST_CASE(a_unit_of_another_kind_names_both_kinds) {
  const Parsed<iosim::i64> r = parse_size_bytes("40 GB/s");
  BOOST_TEST(!r.value.has_value());
  BOOST_TEST(r.problem.find("a bandwidth, not a size") != std::string::npos, r.problem);
  BOOST_TEST(r.valid.find("MiB") != std::string::npos);
  BOOST_TEST(!parse_bandwidth("40 MiB").value.has_value());
  BOOST_TEST(!parse_flop_rate("2 Top/s").value.has_value());
  BOOST_TEST(!parse_frequency("566 cycles").value.has_value());
}

BOOST_AUTO_TEST_CASE(unit_names_are_case_sensitive_and_required) {
  BOOST_TEST(parse_size_bytes("40 mib").problem.find("unknown unit") != std::string::npos);
  BOOST_TEST(parse_size_bytes("40 Mb").problem.find("unknown unit") != std::string::npos);
  BOOST_TEST(parse_size_bytes("40").problem.find("no unit") != std::string::npos);
  BOOST_TEST(parse_size_bytes("MiB").problem.find("not a number") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(rates_frequencies_and_bandwidths_convert_to_base_units) {
  BOOST_TEST(*parse_bandwidth("3.35 TB/s").value == 3.35e12);
  BOOST_TEST(*parse_bandwidth("1555 GB/s").value == 1555e9);
  BOOST_TEST(*parse_frequency("1410 MHz").value == 1410e6);
  BOOST_TEST(*parse_frequency("1.98 GHz").value == 1.98e9);
  BOOST_TEST(*parse_flop_rate("312 TFLOP/s").value == 312e12);
  BOOST_TEST(*parse_flop_rate("19500 GFLOP/s").value == 19.5e12);
  BOOST_TEST(*parse_op_rate("2.436 Top/s").value == 2.436e12);
}

BOOST_AUTO_TEST_CASE(latency_in_ns_is_converted_with_the_sm_clock) {
  BOOST_TEST(*parse_latency_cycles("566 cycles", 1410e6).value == 566.0);
  BOOST_TEST(std::abs(*parse_latency_cycles("100 ns", 1.5e9).value - 150.0) < 1e-9);
  BOOST_TEST(!parse_latency_cycles("100 ns", 0.0).value.has_value());
}

BOOST_AUTO_TEST_CASE(non_positive_values_are_rejected) {
  BOOST_TEST(parse_size_bytes("0 MiB").problem.find("not positive") != std::string::npos);
  BOOST_TEST(parse_size_bytes("-40 MiB").problem.find("not positive") != std::string::npos);
  BOOST_TEST(parse_bandwidth("0 GB/s").problem.find("not positive") != std::string::npos);
  BOOST_TEST(parse_count("0").problem.find("not positive") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(counts_are_whole_and_fractions_lie_in_zero_one) {
  BOOST_TEST(*parse_count("108").value == 108);
  BOOST_TEST(!parse_count("108.5").value.has_value());
  BOOST_TEST(!parse_count("108 SMs").value.has_value());
  BOOST_TEST(*parse_fraction("0.9").value == 0.9);
  BOOST_TEST(*parse_fraction("1").value == 1.0);
  BOOST_TEST(!parse_fraction("0").value.has_value());
  BOOST_TEST(!parse_fraction("1.2").value.has_value());
  BOOST_TEST(!parse_fraction("90%").value.has_value());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(bad_profiles)

BOOST_AUTO_TEST_CASE(unknown_key_in_a_section_is_rejected_with_the_valid_keys) {
  const EditedProfile p = insert_after("  count:", "  colour: {value: 1, source: \"x\"}");
  const std::string msg = load_error(p.file);
  check_message(msg, p.file, p.line, "sm.colour", "unknown key");
  BOOST_TEST(msg.find("smem_per_block") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(unknown_key_at_the_top_level_is_rejected) {
  expect_rejected(insert_after("display_name:", "vendor: NVIDIA"), "vendor", "unknown key");
}

BOOST_AUTO_TEST_CASE(unknown_key_inside_a_value_is_rejected) {
  expect_rejected(replace_line("  count:", "  count: {value: 108, unit: SMs, source: \"x\"}"),
                  "sm.count.unit", "unknown key");
}

BOOST_AUTO_TEST_CASE(duplicate_key_is_rejected_at_its_second_occurrence) {
  expect_rejected(insert_after("  count:", "  count: {value: 100, source: \"x\"}"), "sm.count",
                  "duplicate key");
}

BOOST_AUTO_TEST_CASE(missing_key_is_rejected_at_the_line_of_its_section) {
  const std::string text = base_text();
  std::vector<std::string> lines = lines_of(text);
  const int clock_line = find_line(text, "  clock:");
  lines.erase(lines.begin() + (clock_line - 1));
  const EditedProfile p(join_lines(lines), find_line(text, "sm:"));
  expect_rejected(p, "sm.clock", "missing key");
}

BOOST_AUTO_TEST_CASE(missing_section_is_rejected) {
  const std::string text = base_text();
  std::vector<std::string> lines = lines_of(text);
  const int compute = find_line(text, "compute:");
  lines.resize(compute - 1);  // drop the compute section, the last one
  const EditedProfile p(join_lines(lines), find_line(text, "name:"));
  expect_rejected(p, "compute", "missing key");
}

BOOST_AUTO_TEST_CASE(value_without_a_source_is_rejected) {
  expect_rejected(replace_line("  count:", "  count: {value: 108}"), "sm.count.source",
                  "missing key");
}

BOOST_AUTO_TEST_CASE(bare_value_without_value_source_map_is_rejected) {
  expect_rejected(replace_line("  count:", "  count: 108"), "sm.count", "expected {value, source}");
}

BOOST_AUTO_TEST_CASE(string_where_a_size_is_needed_is_rejected) {
  expect_rejected(replace_line("  size:", "  size: {value: big, source: \"x\"}"), "l2.size",
                  "not a number");
}

BOOST_AUTO_TEST_CASE(list_where_a_single_value_is_needed_is_rejected) {
  expect_rejected(replace_line("  clock:", "  clock: {value: [1410, MHz], source: \"x\"}"),
                  "sm.clock", "expected a single value");
}

BOOST_AUTO_TEST_CASE(size_written_in_a_bandwidth_unit_is_rejected) {
  expect_rejected(replace_line("  size:", "  size: {value: 40 GB/s, source: \"x\"}"), "l2.size",
                  "is a bandwidth, not a size");
}

BOOST_AUTO_TEST_CASE(unparseable_unit_is_rejected) {
  expect_rejected(replace_line("  size:", "  size: {value: 40 MiBs, source: \"x\"}"), "l2.size",
                  "unknown unit 'MiBs'");
}

BOOST_AUTO_TEST_CASE(zero_count_and_negative_size_are_rejected) {
  expect_rejected(replace_line("  count:", "  count: {value: 0, source: \"x\"}"), "sm.count",
                  "not positive");
  expect_rejected(replace_line("  size:", "  size: {value: -40 MiB, source: \"x\"}"), "l2.size",
                  "not positive");
}

BOOST_AUTO_TEST_CASE(fraction_outside_zero_one_is_rejected) {
  expect_rejected(replace_line("  achievable_fraction:",
                               "  achievable_fraction: {value: 1.2, source: \"x\"}"),
                  "dram.achievable_fraction", "outside (0, 1]");
}

BOOST_AUTO_TEST_CASE(none_is_accepted_only_for_the_bf16_rate) {
  expect_rejected(replace_line("  tensor_fp16:", "  tensor_fp16: {value: none, source: \"x\"}"),
                  "compute.tensor_fp16", "not a number");
}

BOOST_AUTO_TEST_CASE(unknown_dram_kind_is_rejected) {
  expect_rejected(replace_line("  kind:", "  kind: {value: HBM9, source: \"x\"}"), "dram.kind",
                  "unknown DRAM kind");
}

BOOST_AUTO_TEST_CASE(l2_sector_larger_than_line_is_rejected) {
  expect_rejected(replace_line("  sector:", "  sector: {value: 256 B, source: \"x\"}"),
                  "l2.sector", "larger than l2.line");
}

BOOST_AUTO_TEST_CASE(l2_line_not_a_multiple_of_sector_is_rejected) {
  const std::string text = base_text();
  std::vector<std::string> lines = lines_of(text);
  lines[find_line(text, "  sector:") - 1] = "  sector: {value: 48 B, source: \"x\"}";
  const EditedProfile p(join_lines(lines), find_line(text, "  line:"));
  expect_rejected(p, "l2.line", "not a multiple of l2.sector");
}

BOOST_AUTO_TEST_CASE(l2_size_not_a_whole_number_of_sets_is_rejected) {
  // 40 MB (decimal) / (128 B x 16 ways x 2 partitions) = 9765.6 sets.
  expect_rejected(replace_line("  size:", "  size: {value: 40 MB, source: \"x\"}"), "l2.size",
                  "not a whole number of sets");
}

BOOST_AUTO_TEST_CASE(l2_effective_size_above_the_l2_or_not_whole_sets_is_rejected) {
  expect_rejected(insert_after("  associativity:", "  effective_size: {value: 41 MiB, source: \"x\"}"),
                  "l2.effective_size", "larger than l2.size");
  expect_rejected(insert_after("  associativity:", "  effective_size: {value: 30 MB, source: \"x\"}"),
                  "l2.effective_size", "not a whole number of sets");
}

BOOST_AUTO_TEST_CASE(smem_per_block_above_smem_per_sm_is_rejected) {
  expect_rejected(
      replace_line("  smem_per_block:", "  smem_per_block: {value: 165 KiB, source: \"x\"}"),
      "sm.smem_per_block", "larger than sm.smem_per_sm");
}

BOOST_AUTO_TEST_CASE(smem_per_sm_above_l1_plus_smem_is_rejected) {
  expect_rejected(
      replace_line("  smem_per_sm:", "  smem_per_sm: {value: 200 KiB, source: \"x\"}"),
      "sm.smem_per_sm", "larger than sm.l1_smem_per_sm");
}

BOOST_AUTO_TEST_CASE(max_warps_times_32_must_equal_max_threads) {
  expect_rejected(replace_line("  max_warps:", "  max_warps: {value: 48, source: \"x\"}"),
                  "sm.max_warps", "x 32 threads != sm.max_threads");
}

BOOST_AUTO_TEST_CASE(uniform_l2_needs_equal_near_and_far_latency) {
  const std::string text = base_text();
  std::vector<std::string> lines = lines_of(text);
  lines[find_line(text, "  partitions:") - 1] = "  partitions: {value: 1, source: \"x\"}";
  const EditedProfile p(join_lines(lines), find_line(text, "  l2_far:"));
  expect_rejected(p, "latency.l2_far", "l2.partitions is 1");
}

BOOST_AUTO_TEST_CASE(name_that_differs_from_the_file_stem_is_rejected) {
  const EditedProfile p = replace_line("name:", "name: a100");
  const std::string msg = load_error(p.file);
  check_message(msg, p.file, p.line, "name", "differs from the file name");
  BOOST_TEST(msg.find("a100-sxm4-40gb") != std::string::npos);  // says what would be valid
}

BOOST_AUTO_TEST_CASE(shipped_bad_file_with_a_foreign_name_is_rejected) {
  const fs::path file = kBadDir / "name_mismatch.yaml";
  check_message(load_error(file), file, marked_line(read_text(file), "NAME-LINE"), "name",
                "differs from the file name");
}

BOOST_AUTO_TEST_CASE(malformed_yaml_is_rejected_at_the_parser_line) {
  const fs::path file = kBadDir / "malformed_yaml.yaml";
  check_message(load_error(file), file, marked_line(read_text(file), "PARSE-ERROR"), "(document)",
                "YAML parse error");
}

BOOST_AUTO_TEST_CASE(a_yaml_list_is_not_a_profile) {
  const fs::path file = kBadDir / "not_a_map.yaml";
  check_message(load_error(file), file, marked_line(read_text(file), "DOCUMENT-START"),
                "(document)", "not a YAML map");
}

BOOST_AUTO_TEST_CASE(an_empty_document_is_not_a_profile) {
  const fs::path file = kBadDir / "empty.yaml";
  check_message(load_error(file), file, 1, "(document)", "not a YAML map");
}

BOOST_AUTO_TEST_CASE(a_missing_file_is_reported_by_path) {
  const std::string path = (kBadDir / "does_not_exist.yaml").string();
  try {
    iosim::profile::load_profile(path);
    BOOST_FAIL("loading a missing file succeeded");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).rfind(path + ": cannot open", 0) == 0, e.what());
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(lookup)

BOOST_AUTO_TEST_CASE(find_profile_takes_a_name_or_a_path) {
  const HardwareProfile by_name = shipped("t4");
  const HardwareProfile by_path =
      iosim::profile::find_profile((kShippedDir / "t4.yaml").string(), "/nonexistent");
  BOOST_TEST(by_name.name == "t4");
  BOOST_TEST(by_path.name == "t4");
  BOOST_TEST(by_name.sm_count == by_path.sm_count);
}

BOOST_AUTO_TEST_CASE(unknown_profile_name_lists_the_known_names) {
  try {
    shipped("a100");
    BOOST_FAIL("an unknown name was accepted");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    BOOST_TEST(msg.find("'a100'") != std::string::npos, msg);
    for (const char* known : {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb",
                              "h200-sxm-141gb", "t4"})
      BOOST_TEST(msg.find(known) != std::string::npos, known);
  }
}

BOOST_AUTO_TEST_CASE(default_profile_dir_honours_the_environment_then_the_source_tree) {
  const char* old = std::getenv("IOSIM_PROFILE_DIR");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv("IOSIM_PROFILE_DIR", "/some/where", 1);
  BOOST_TEST(iosim::profile::default_profile_dir() == "/some/where");
  ::unsetenv("IOSIM_PROFILE_DIR");
  const fs::path dir = iosim::profile::default_profile_dir();
  BOOST_TEST(fs::exists(dir / "a100-sxm4-40gb.yaml"), dir);
  if (saved) ::setenv("IOSIM_PROFILE_DIR", saved->c_str(), 1);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// The L2 merge window and dirty limit; the retired kernel_families section.

namespace {

// The A100 40GB profile with `extra` appended at the end (a new top-level section).
EditedProfile appended(const std::string& extra) { return EditedProfile(base_text() + extra, 0); }

// 1-based line of the first line containing `marker` in p's text.
int line_in(const EditedProfile& p, const std::string& marker) { return marked_line(p.text, marker); }

}  // namespace

BOOST_AUTO_TEST_SUITE(calibration_keys)

BOOST_AUTO_TEST_CASE(a_zero_merge_window_is_off_not_an_error) {
  const EditedProfile e = replace_line("  merge_window:", "  merge_window: {value: 0 cycles, source: \"x\"}");
  BOOST_TEST(iosim::profile::load_profile(e.file.string()).l2_merge_window_cycles == 0.0);
}

// The per-family efficiencies gave way to the SM model's measured machine
// (sm_pipes): a profile that still lists them is refused, not half-used.
BOOST_AUTO_TEST_CASE(the_retired_kernel_families_section_is_an_unknown_key) {
  EditedProfile e = appended("kernel_families:\n  gemm:\n    compute_efficiency: {value: 0.5, source: \"x\"}\n");
  e.line = line_in(e, "kernel_families:");
  expect_rejected(e, "kernel_families", "unknown key");
}

// The kernel launch time is optional (0: not modelled), a latency like the
// others: cycles, or ns converted with sm.clock; negative is an error.
BOOST_AUTO_TEST_CASE(kernel_launch_is_an_optional_latency_in_cycles_or_ns) {
  BOOST_TEST(shipped("a100-sxm4-40gb").kernel_launch_cycles == 0.0);
  const auto with = [](const std::string& v) {
    return insert_after("  dram:    {value", "  kernel_launch: {value: " + v + ", source: \"x\"}");
  };
  BOOST_TEST(iosim::profile::load_profile(with("3000 cycles").file.string()).kernel_launch_cycles == 3000.0);
  const auto p = iosim::profile::load_profile(with("2000 ns").file.string());
  BOOST_TEST(p.kernel_launch_cycles == 2000e-9 * p.sm_clock_hz, boost::test_tools::tolerance(1e-9));
  expect_rejected(with("-1 cycles"), "latency.kernel_launch", "");
}

BOOST_AUTO_TEST_CASE(dirty_limit_is_a_size_or_none) {
  BOOST_TEST(std::isinf(shipped("a100-sxm4-40gb").l2_dirty_limit_bytes));
  const EditedProfile e = replace_line("  dirty_limit:", "  dirty_limit: {value: 24 MiB, source: \"x\"}");
  BOOST_TEST(iosim::profile::load_profile(e.file.string()).l2_dirty_limit_bytes == 24.0 * 1024 * 1024);
  expect_rejected(replace_line("  dirty_limit:", "  dirty_limit: {value: 24, source: \"x\"}"), "l2.dirty_limit",
                  "no unit");
  expect_rejected(replace_line("  dirty_limit:", "  dirty_limit: {value: lots, source: \"x\"}"), "l2.dirty_limit",
                  "none");
}

BOOST_AUTO_TEST_CASE(a_negative_or_unitless_merge_window_is_rejected) {
  expect_rejected(replace_line("  merge_window:", "  merge_window: {value: -4 cycles, source: \"x\"}"),
                  "l2.merge_window", "is negative");
  expect_rejected(replace_line("  merge_window:", "  merge_window: {value: 32, source: \"x\"}"),
                  "l2.merge_window", "has no unit");
}

BOOST_AUTO_TEST_CASE(a_missing_merge_window_is_rejected_at_the_l2_section) {
  const std::string text = base_text();
  std::vector<std::string> lines = lines_of(text);
  lines.erase(lines.begin() + (find_line(text, "  merge_window:") - 1));
  const EditedProfile p(join_lines(lines), find_line(text, "l2:"));
  expect_rejected(p, "l2.merge_window", "missing key");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(message_wording)

// "latency.l2_far: is below ..." read as a broken sentence: the problem starts with the value.
BOOST_AUTO_TEST_CASE(far_latency_below_near_states_both_values) {
  const EditedProfile p = replace_line("  l2_far:", "  l2_far:  {value: 100 cycles, source: \"x\"}");
  const std::string msg = load_error(p.file);
  check_message(msg, p.file, p.line, "latency.l2_far", "100 cycles is below latency.l2_near (204 cycles)");
  BOOST_TEST(msg.find("l2_far: is") == std::string::npos, msg);
}

BOOST_AUTO_TEST_CASE(a_number_longer_than_18_digits_is_out_of_range_not_a_non_number) {
  using namespace iosim::profile;
  for (const auto& problem : {parse_count("99999999999999999999999").problem,
                              parse_size_bytes("99999999999999999999999 MiB").problem,
                              parse_fraction("0.99999999999999999999999").problem}) {
    BOOST_TEST(problem.find("out of range") != std::string::npos, problem);
    BOOST_TEST(problem.find("not a number") == std::string::npos, problem);
  }
}

BOOST_AUTO_TEST_SUITE_END()
