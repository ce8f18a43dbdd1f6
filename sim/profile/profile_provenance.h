// Where a profile's numbers come from, summarised from the `source` strings
// of its file (hw_profiles/README.md: "measured on <GPU>, <date>", "fitted on
// <configurations>, <date>, <GPU>", "assumption: ...", documents), for
// `iosim profiles`.
#pragma once
#include <string>
#include <vector>

#include "sim/profile/hardware_profile.h"

namespace iosim::profile {

struct Provenance {
  // Timing calibrated for our kernels: the file has a calibration section
  // (`sm_pipes`, written by `iosim calibrate`).
  bool calibrated = false;
  std::string calibration_section;         // the section found
  std::vector<std::string> calibrated_on;  // "2026-11-25 on NVIDIA H100 80GB HBM3", from its sources
  int values = 0;                          // sources in the file
  int measured = 0;                        // of them "measured on ..."
  int assumptions = 0;                     // of them "assumption: ..."
  std::vector<std::string> measured_on;    // "NVIDIA H200, 2026-11-22", distinct, in file order
};

// Reads profile.source_file again (the loader keeps values, not sources).
Provenance profile_provenance(const HardwareProfile& profile);

}  // namespace iosim::profile
