#include <iomanip>
#include <iostream>

#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/profile/hardware_profile.h"
#include "sim/profile/schema.h"
#include "sim/report/count_report.h"

namespace iosim::cli {

int cmd_profiles(const Args& args) {
  ArgParser parser("profiles", "Lists the hardware profiles in the profile directory ($IOSIM_PROFILE_DIR or hw_profiles/).");
  parser.add("schema-markdown", ArgParser::Kind::flag, "",
             "print the profile schema's key tables (hw_profiles/README.md's, generated from sim/profile/schema.cpp)");
  parser.parse(args);
  if (parser.help_requested()) {
    std::cout << parser.help();
    return 0;
  }
  if (parser.flag("schema-markdown")) {
    std::cout << profile::schema_markdown();
    return 0;
  }
  const std::string dir = profile::default_profile_dir();
  std::cout << "profiles in " << dir << ":\n";
  std::cout << std::left << std::setw(18) << "  name" << std::setw(26) << "device" << std::right << std::setw(5)
            << "SMs" << std::setw(12) << "smem/CTA" << std::setw(10) << "L2" << std::setw(14) << "DRAM"
            << std::setw(14) << "tensor fp16" << "\n";
  for (const auto& p : profile::list_profiles(dir)) {
    std::cout << "  " << std::left << std::setw(16) << p.name << std::setw(26) << p.display_name << std::right
              << std::setw(5) << p.sm_count << std::setw(10) << p.smem_per_block_bytes / 1024 << " KiB"
              << std::setw(6) << p.l2_bytes / (1024 * 1024) << " MiB" << std::setw(9)
              << p.dram_peak_bandwidth_bytes_per_s / 1e9 << " GB/s" << std::setw(8)
              << p.tensor_fp16_flops_per_s / 1e12 << " TFLOP/s\n";
  }
  return 0;
}

}  // namespace iosim::cli
