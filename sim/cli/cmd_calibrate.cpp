// `iosim calibrate`: microbenchmarks on the present GPU write a complete
// hardware profile. The benchmarks live in kernels/calibrate (a CUDA library
// linked into this executable only in a CUDA build, IOSIM_HAVE_CALIBRATE); the
// profile's keys, values and sources come from sim/profile/calibration.h.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/common/error.h"
#include "sim/profile/calibration.h"
#include "sim/profile/hardware_profile.h"
#include "sim/profile/profile_writer.h"

#ifdef IOSIM_HAVE_CALIBRATE
#include "kernels/calibrate/calibrate.h"
#endif

namespace iosim::cli {
namespace {

namespace fs = std::filesystem;

// Where to write and under which name; the loader requires name = file stem.
struct Target {
  std::string name;  // empty: the device's name, known after measuring
  std::string out;   // empty: stdout
};

Target target_from_flags(const ArgParser& parser) {
  Target t;
  if (const auto out = parser.text("out")) {
    const fs::path p(*out);
    if (p.extension() != ".yaml")
      throw InputError("calibrate: --out '" + *out + "' must end in .yaml (a profile file, e.g. h200.yaml)");
    const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      throw InputError("calibrate: --out '" + *out + "': the folder '" + dir.string() + "' does not exist");
    t.out = *out;
    t.name = p.stem().string();
  }
  if (const auto name = parser.text("name")) {
    static const std::regex valid("[a-z0-9][a-z0-9._-]*");
    if (!std::regex_match(*name, valid))
      throw InputError("calibrate: --name '" + *name +
                       "' is not a profile name (lower-case letters, digits, '.', '_', '-', e.g. h200-sxm-141gb)");
    if (!t.out.empty() && *name != t.name)
      throw InputError("calibrate: --name '" + *name + "' differs from the stem of --out '" + t.out +
                       "' (a profile's name must equal its file stem; drop --name or rename the file)");
    t.name = *name;
  }
  return t;
}

#ifdef IOSIM_HAVE_CALIBRATE
std::string self_executable() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("calibrate: cannot find this executable (/proc/self/exe) for ncu to run");
  return exe.string();
}

// Writes the profile and loads it back with the strict loader; 0 when it
// loads, 1 (after saying why) when a measured value breaks a rule.
int write_and_check(const profile::ProfileDraft& draft, const std::string& out) {
  const std::string yaml = profile::write_profile_yaml(draft);
  fs::path file = out;
  if (out.empty()) {
    std::cout << yaml;
    file = fs::temp_directory_path() / ("iosim-calibrate-" + std::to_string(::getpid())) / (draft.name + ".yaml");
    fs::create_directories(file.parent_path());
  }
  std::ofstream(file) << yaml;
  int status = 0;
  try {
    profile::load_profile(file.string());
  } catch (const InputError& e) {
    std::cerr << "calibrate: the profile written does not load: " << e.what()
              << "\n(a measured value above breaks one of the loader's rules; see its source)\n";
    status = 1;
  }
  if (out.empty()) fs::remove_all(file.parent_path());
  else std::cerr << "calibrate: wrote " << out << "\n";
  return status;
}
#endif

}  // namespace

int cmd_calibrate(const Args& args) {
#ifdef IOSIM_HAVE_CALIBRATE
  // Hidden: the streaming copies ncu profiles for the dirty limit (run by calibrate itself).
  if (!args.empty() && args.front() == "--probe-copy") {
    if (args.size() != 2) throw InputError("calibrate --probe-copy: expects one list of sizes, e.g. 33554432,67108864");
    calibrate::run_copy_probe(calibrate::parse_copy_sizes(args[1]));
    return 0;
  }
  // Hidden: the empty kernels ncu times for latency.kernel_launch.
  if (!args.empty() && args.front() == "--probe-launch") {
    if (args.size() != 2) throw InputError("calibrate --probe-launch: expects one list of grid sizes, e.g. 1,2112");
    calibrate::run_launch_probe(calibrate::parse_grid_sizes(args[1]));
    return 0;
  }
  // Hidden: the pairs of reads ncu counts for l2.merge_window.
  if (!args.empty() && args.front() == "--probe-merge") {
    if (args.size() != 1) throw InputError("calibrate --probe-merge: takes no arguments");
    calibrate::run_merge_probe();
    return 0;
  }
#endif
  ArgParser parser("calibrate",
                   "Runs microbenchmarks on the present GPU (DRAM and L2 bandwidth, L1/L2 capacity, latencies, the\n"
                   "SM pipes, and under Nsight Compute the L2 dirty limit) and writes a complete hardware profile,\n"
                   "every value's source saying how it was measured or read. Needs a CUDA build of iosim, a GPU,\n"
                   "and ncu on PATH with permission to read GPU performance counters; progress goes to stderr.");
  parser.add("out", ArgParser::Kind::text, "FILE.yaml", "where to write the profile (default: stdout); its stem is the name");
  parser.add("name", ArgParser::Kind::text, "NAME", "the profile's name (default: the stem of --out, else from the GPU's name)");
  parser.add("quick", ArgParser::Kind::flag, "", "shorter benchmarks (for tests; less stable numbers)");
  parser.parse(args);
  if (parser.help_requested()) {
    std::cout << parser.help();
    return 0;
  }
  const Target target = target_from_flags(parser);
#ifndef IOSIM_HAVE_CALIBRATE
  (void)target;
  throw InputError(
      "calibrate: iosim was built without CUDA (no nvcc at configure time); calibrate needs a CUDA build and a GPU");
#else
  calibrate::Options options;
  options.quick = parser.flag("quick");
  options.self_exe = self_executable();
  options.log = &std::cerr;
  const profile::CalibrationMeasurements m = calibrate::measure_device(options);
  const std::string name = target.name.empty() ? profile::profile_name_for(m.device.name) : target.name;
  return write_and_check(profile::draft_from_measurements(m, name), target.out);
#endif
}

}  // namespace iosim::cli
