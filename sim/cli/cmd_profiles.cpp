#include <iomanip>
#include <iostream>
#include <sstream>

#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/profile/hardware_profile.h"
#include "sim/profile/schema.h"
#include "sim/profile/profile_names.h"
#include "sim/profile/profile_provenance.h"
#include "sim/report/count_report.h"
#include "sim/report/json.h"

namespace iosim::cli {

namespace {

std::string joined(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// "timing calibrated (sm_pipes, measured 2026-11-25 on NVIDIA H100 80GB HBM3); N of M values measured (...)",
// or "timing not calibrated (SM model on datasheet rates); ...": the SM model's machine is the
// profile's sm_pipes (iosim calibrate) or derived from its datasheet rates (engine::sm_machine).
std::string provenance_line(const profile::Provenance& p) {
  std::string line = p.calibrated ? "timing calibrated (" + p.calibration_section +
                                        (p.calibrated_on.empty() ? "" : ", measured " + joined(p.calibrated_on, "; ")) + ")"
                                  : "timing not calibrated (SM model on datasheet rates)";
  line += "; " + std::to_string(p.measured) + " of " + std::to_string(p.values) + " values measured";
  if (!p.measured_on.empty()) line += " (" + joined(p.measured_on, "; ") + ")";
  line += ", " + std::to_string(p.assumptions) + " assumed";
  return line;
}

// One JSON array: a profile per object, the table's numbers in base units.
void write_profiles_json(std::ostream& out, const std::vector<profile::HardwareProfile>& profiles) {
  report::JsonWriter w(out);
  w.begin_array();
  for (const auto& p : profiles) {
    const profile::Provenance prov = profile::profile_provenance(p);
    w.begin_object()
        .field("name", p.name)
        .field("device", p.display_name)
        .field("file", p.source_file)
        .field("sm_count", p.sm_count)
        .field("smem_per_block_bytes", p.smem_per_block_bytes)
        .field("l2_bytes", p.l2_bytes)
        .field("l2_copies", p.l2_far_copies)  // far reads copy lines near, in the whole L2
        .field("l2_model_bytes", p.l2_far_copies ? p.l2_bytes : p.l2_model_bytes())
        .field("l2_effective_bytes", p.l2_model_bytes())  // held without copies (--l2-copies off)
        .field("dram_bytes_per_s", p.dram_peak_bandwidth_bytes_per_s)
        .field("tensor_fp16_flops_per_s", p.tensor_fp16_flops_per_s);
    w.key("aliases").begin_array();
    for (const auto& a : profile::aliases_of(p.name)) w.value(a);
    w.end_array();
    w.field("timing_calibrated", prov.calibrated).field("provenance", provenance_line(prov));
    w.end_object();
  }
  w.end_array();
  out << "\n";
}

}  // namespace

int cmd_profiles(const Args& args, std::ostream& out) {
  ArgParser parser("profiles",
                   "Lists the hardware profiles in the profile directory ($IOSIM_PROFILE_DIR or hw_profiles/): their\n"
                   "main numbers, the names --profile accepts for them, whether their timing is calibrated, and\n"
                   "when and on what their values were measured (from each value's source).");
  parser.add("schema-markdown", ArgParser::Kind::flag, "",
             "print the profile schema's key tables (hw_profiles/README.md's, generated from sim/profile/schema.cpp)")
      .add("json", ArgParser::Kind::flag, "", "print one JSON array: per profile its numbers (base units), aliases, provenance");
  parser.parse(args);
  if (parser.help_requested()) {
    out << parser.help();
    return 0;
  }
  if (parser.flag("schema-markdown")) {
    out << profile::schema_markdown();
    return 0;
  }
  const std::string dir = profile::default_profile_dir();
  const auto profiles = profile::list_profiles(dir);
  if (parser.flag("json")) {
    write_profiles_json(out, profiles);
    return 0;
  }
  out << "profiles in " << dir << ":\n";
  out << std::left << std::setw(18) << "  name" << std::setw(26) << "device" << std::right << std::setw(5)
            << "SMs" << std::setw(12) << "smem/CTA" << std::setw(10) << "L2" << std::setw(14) << "DRAM"
            << std::setw(14) << "tensor fp16" << "\n";
  for (const auto& p : profiles) {
    out << "  " << std::left << std::setw(16) << p.name << std::setw(26) << p.display_name << std::right
              << std::setw(5) << p.sm_count << std::setw(10) << p.smem_per_block_bytes / 1024 << " KiB"
              << std::setw(6) << p.l2_bytes / (1024 * 1024) << " MiB" << std::setw(9)
              << p.dram_peak_bandwidth_bytes_per_s / 1e9 << " GB/s" << std::setw(8)
              << p.tensor_fp16_flops_per_s / 1e12 << " TFLOP/s\n";
  }
  std::string effective;
  for (const auto& p : profiles)
    if (p.l2_model_bytes() != p.l2_bytes) {
      std::ostringstream one;
      one << (effective.empty() ? "" : ", ") << p.name << " " << std::setprecision(4)
          << static_cast<double>(p.l2_model_bytes()) / (1024 * 1024) << " MiB";
      effective += one.str();
    }
  std::string copies;
  for (const auto& p : profiles)
    if (p.l2_far_copies) copies += (copies.empty() ? "" : ", ") + p.name;
  out << "L2 is the whole cache";
  if (!copies.empty())
    out << ". Where the profile says l2.far_copies (" << copies
        << ") the model holds all of it, a line read from the far half taking a second slot there (--l2-copies)";
  if (!effective.empty())
    out << "; without copies it holds the distinct bytes the profile measured (l2.effective_size): " << effective;
  out << "\n";
  out << "\n--profile takes a name (any case), an alias, a unique prefix, or a path to a .yaml file:\n";
  for (const auto& p : profiles) {
    const auto aliases = profile::aliases_of(p.name);
    out << "  " << std::left << std::setw(16) << p.name << (aliases.empty() ? "-" : joined(aliases, ", "))
              << "\n";
  }
  out << "\nwhere the numbers come from:\n";
  for (const auto& p : profiles)
    out << "  " << std::left << std::setw(16) << p.name << provenance_line(profile::profile_provenance(p))
              << "\n";
  return 0;
}

}  // namespace iosim::cli
