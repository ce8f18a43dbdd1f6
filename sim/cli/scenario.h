// The flags that describe one simulated scenario: --profile, then the problem
// and tiling flags (sim/cli/problem_flags.h); shared by `iosim simulate`,
// `iosim trace` and `iosim numerics`.
#pragma once
#include <vector>

#include "sim/cli/args.h"
#include "sim/profile/hardware_profile.h"
#include "sim/trace/algorithms.h"

namespace iosim::cli {

struct Scenario {
  profile::HardwareProfile profile;
  workload::Problem problem;
  trace::TraceOptions options;
};

// --profile NAME|FILE and --set KEY=VALUE (repeatable), as every command takes them.
void add_profile_flag(ArgParser& parser);
// The --set values, split at the first '='; throws InputError for a value
// without one. The keys and values are checked when the profile loads.
std::vector<profile::ProfileOverride> profile_overrides_from_flag(const ArgParser& parser);
// The profile --profile names (profile::find_profile_by_any_name), or the
// default, with the --set values in place of the file's.
profile::HardwareProfile profile_from_flag(const ArgParser& parser);

// --tiles rule|kernel: the paper's rule, or the nearest compiled kernel tile
// to it (sets options.block_m/block_n/gemm and block_rule).
void add_tiles_flag(ArgParser& parser);
void apply_tiles_flag(const ArgParser& parser, const workload::Problem& problem, trace::TraceOptions& options);

void add_scenario_flags(ArgParser& parser);
// Throws InputError for missing or inconsistent flags.
Scenario scenario_from_flags(const ArgParser& parser);
// The same on a profile already loaded (profile_from_flag).
Scenario scenario_from_flags(const ArgParser& parser, profile::HardwareProfile profile);

// GPT-2 medium attention (B=64, H=16, N=1024, d=64, fp16), the default scenario.
workload::Problem gpt2_medium_problem();

}  // namespace iosim::cli
