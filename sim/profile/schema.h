// The hardware-profile schema: one typed table of every key a profile may
// hold, with its value kind (unit), whether it is required, its valid range,
// the HardwareProfile field it fills and what it means. The loader validates
// against it, `iosim profiles --schema-markdown` prints hw_profiles/README.md's
// key tables from it, and the calibrate writer emits each key with its
// description.
#pragma once
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/profile/hardware_profile.h"

namespace iosim::profile {

// How a value is written: a bare string (name, display_name) or a
// {value, source} leaf of one unit kind.
enum class ValueKind {
  plain_text,          // bare string
  compute_capability,  // "<major>.<minor>"
  dram_kind,           // one of kDramKinds
  count,               // whole number, no unit
  size,                // bytes
  size_or_none,        // bytes, or `none` (stored as infinity: no limit)
  bandwidth,           // bytes/s
  frequency,           // Hz
  flop_rate,           // FLOP/s
  flop_rate_or_none,   // FLOP/s, or `none` where the GPU lacks the unit (stored as 0)
  op_rate,             // operations/s
  latency,             // SM cycles (ns converted with sm.clock)
  fraction,            // plain number
  flop_per_cycle,      // FLOP per SM per cycle
  op_per_cycle,        // lane operations per SM per cycle
  bytes_per_cycle,     // bytes per SM per cycle
  inst_per_cycle,      // warp instructions per SM per cycle
  boolean,             // true or false
};

inline constexpr std::string_view kDramKinds[] = {"HBM2", "HBM2e", "HBM3", "HBM3e", "GDDR6"};

// The valid values of a numeric key in base units: lo < v (lo <= v when
// lo_inclusive) and v <= hi. `none` (where the kind allows it) is separate.
struct Range {
  bool numeric = false;  // false for text kinds
  double lo = 0;
  bool lo_inclusive = false;
  double hi = std::numeric_limits<double>::infinity();
  bool contains(double v) const { return (lo_inclusive ? v >= lo : v > lo) && v <= hi; }
  std::string text() const;  // "> 0", ">= 0", "(0, 1]"; "" when not numeric
};

// The member a key fills.
using Target = std::variant<std::monostate, i64 HardwareProfile::*, double HardwareProfile::*, bool HardwareProfile::*,
                            std::string HardwareProfile::*, double HardwareProfile::SmPipes::*>;

struct SchemaKey {
  std::string_view key;
  ValueKind kind;
  bool required;  // within its section (a key of an absent optional section is not needed)
  Range range;
  std::string_view field;  // the member's name, for people
  std::string_view description;
  Target target;
};

struct SchemaSection {
  std::string_view key;  // "" for the top-level keys (name, display_name, compute_capability)
  bool required;
  std::string_view description;
  std::vector<SchemaKey> keys;
  // For an optional section: the flag set when the file has it (else nullptr).
  bool HardwareProfile::SmPipes::* present = nullptr;
};

// Every section in load order (sm first: latencies in ns need sm.clock).
const std::vector<SchemaSection>& profile_schema();

// "l2.size"; the key alone at the top level.
std::string key_path(const SchemaSection& section, const SchemaKey& key);
// The key at `path` ("l2.size", "name"), or nullptr.
const SchemaKey* find_key(std::string_view path);

// "size", "FLOP rate or `none`", ... (the README's unit-kind column).
std::string kind_name(ValueKind kind);
// What a value of this kind may be, with an example (for error messages).
std::string kind_valid(ValueKind kind);

// A key's value in `p`, in base units; NaN for text keys.
double numeric_value(const HardwareProfile& p, const SchemaKey& key);
// A text key's value in `p` ("" for numeric keys).
std::string text_value(const HardwareProfile& p, const SchemaKey& key);

// hw_profiles/README.md's key table,
// Markdown, ending in a newline.
std::string schema_markdown();

}  // namespace iosim::profile
