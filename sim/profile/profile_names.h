// Profile names as users type them. `--profile` accepts, in this order:
//   1. a path to a .yaml file (contains '/' or ends in .yaml);
//   2. a profile name, compared without regard to case ("H200-SXM-141GB");
//   3. an alias from kProfileAliases ("a100", "h100", "h200"), without regard to case;
//   4. a prefix that starts exactly one profile name ("h100-sxm", "T4" is rule 2).
// A prefix that starts several names is an error listing them; no match is an
// error with "did you mean" suggestions and the list of names.
#pragma once
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "sim/profile/hardware_profile.h"

namespace iosim::profile {

struct ProfileAlias {
  std::string_view alias;
  std::string_view profile;
};

// Short names for the shipped profiles. `a100` is the 40 GB part: the GPU of
// the FlashAttention paper's measurements and iosim's default profile; the
// 80 GB part is `a100-80gb`. An alias whose profile is not in the directory
// is ignored.
inline constexpr std::array<ProfileAlias, 5> kProfileAliases{{
    {"a100", "a100-sxm4-40gb"},
    {"a100-40gb", "a100-sxm4-40gb"},
    {"a100-80gb", "a100-sxm4-80gb"},
    {"h100", "h100-sxm5-80gb"},
    {"h200", "h200-sxm-141gb"},
}};

// Stems of the *.yaml files in `dir`, sorted.
std::vector<std::string> profile_names_in(const std::string& dir);

// The profile name `query` stands for among `known` (rules 2-4 above).
// Throws InputError when it is ambiguous or matches nothing.
std::string resolve_profile_name(std::string_view query, const std::vector<std::string>& known,
                                 const std::string& dir_for_messages);

// find_profile with the rules above.
HardwareProfile find_profile_by_any_name(const std::string& query, const std::string& profile_dir,
                                         const std::vector<ProfileOverride>& overrides = {});

// The aliases that resolve to `name` (for `iosim profiles`).
std::vector<std::string> aliases_of(std::string_view name);

}  // namespace iosim::profile
