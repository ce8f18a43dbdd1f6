#include "sim/profile/profile_provenance.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <regex>
#include <string_view>

#include "sim/common/error.h"

namespace iosim::profile {

namespace {

// The calibration section: the SM execution model's measured machine.
constexpr std::array<std::string_view, 1> kCalibrationSections{"sm_pipes"};

void collect_sources(const YAML::Node& node, std::vector<std::string>& out) {
  if (!node.IsMap()) {
    if (node.IsSequence())
      for (const auto& item : node) collect_sources(item, out);
    return;
  }
  for (const auto& kv : node) {
    if (kv.first.Scalar() == "source" && kv.second.IsScalar()) out.push_back(kv.second.Scalar());
    else collect_sources(kv.second, out);
  }
}

std::string first_match(const std::string& text, const std::regex& re) {
  std::smatch m;
  return std::regex_search(text, m, re) ? m.str(0) : std::string();
}

void add_distinct(std::vector<std::string>& list, const std::string& item) {
  if (!item.empty() && std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// "measured on NVIDIA H200, 2026-11-22, ..." -> "NVIDIA H200, 2026-11-22"; the
// device is an "NVIDIA ..." name where the source gives one, else the words
// after "measured on" up to the first comma or parenthesis.
std::string measured_on(const std::string& source) {
  static const std::regex date(R"(\d{4}-\d{2}-\d{2})");
  static const std::regex nvidia(R"(NVIDIA [^,()]+[^,() ])");
  static const std::regex after(R"(measured on ([^,(]+[^,( ]))");
  std::string device = first_match(source, nvidia);
  if (device.empty()) {
    std::smatch m;
    if (std::regex_search(source, m, after)) device = m.str(1);
  }
  const std::string when = first_match(source, date);
  return device + (when.empty() ? "" : ", " + when);
}

std::string fitted_on(const std::string& source) {
  static const std::regex date(R"(\d{4}-\d{2}-\d{2})");
  static const std::regex nvidia(R"(NVIDIA [^,()]+[^,() ])");
  const std::string when = first_match(source, date), device = first_match(source, nvidia);
  return when + (device.empty() ? "" : " on " + device);
}

}  // namespace

Provenance profile_provenance(const HardwareProfile& profile) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(profile.source_file);
  } catch (const YAML::Exception& e) {
    throw InputError(profile.source_file + ": cannot read the profile's sources again (" + e.msg + ")");
  }
  Provenance p;
  std::vector<std::string> sources;
  collect_sources(root, sources);
  p.values = static_cast<int>(sources.size());
  for (const auto& s : sources) {
    if (s.rfind("measured on", 0) == 0) {
      ++p.measured;
      add_distinct(p.measured_on, measured_on(s));
    } else if (s.rfind("assumption", 0) == 0) {
      ++p.assumptions;
    }
  }
  for (const std::string_view section : kCalibrationSections) {
    const YAML::Node node = root[std::string(section)];
    if (!node) continue;
    p.calibrated = true;
    p.calibration_section = std::string(section);
    std::vector<std::string> fitted;
    collect_sources(node, fitted);
    for (const auto& s : fitted) add_distinct(p.calibrated_on, fitted_on(s));
    break;
  }
  return p;
}

}  // namespace iosim::profile
