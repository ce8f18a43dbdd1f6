// Writes a hardware profile as YAML from values keyed by schema path: every
// key in schema order, each after a comment with its description, each
// {value, source} in the unit its kind is written in. The output loads with
// load_profile() (the caller of `iosim calibrate` checks that it does).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "sim/profile/schema.h"

namespace iosim::profile {

// Where a value came from; it sets the opening words of its source.
enum class Origin {
  measured,    // "measured on <gpu>, <date>, by iosim calibrate: <how>"
  runtime,     // "read from the CUDA runtime on <gpu>, <date>: <how>"
  assumption,  // "assumption: <how>"
};

struct WrittenValue {
  double number = 0;  // base units of the key's kind (bytes, Hz, bytes/s, ...); unused for text kinds
  std::string text;   // the value of a text kind (compute_capability, dram_kind)
  Origin origin = Origin::measured;
  std::string how;    // what was measured or read, with the numbers behind the value
};

struct ProfileDraft {
  std::string name;                   // = the file stem
  std::string display_name;
  std::string gpu;                    // device name for the sources, e.g. "NVIDIA H200"
  std::string date;                   // YYYY-MM-DD
  std::vector<std::string> comments;  // lines written at the top, each after "# "
  std::map<std::string, WrittenValue> values;  // key path ("l2.size") -> value
};

// The YAML text. An optional section is written when the draft has any of its
// keys. Throws std::logic_error when a required key is missing or a path is not
// a schema key (a bug of the caller, not of its input).
std::string write_profile_yaml(const ProfileDraft& draft);

// One value in the unit its kind is written in, exactly enough to reload
// within 1e-5: sizes exact ("60 MiB", "62914561 B"), rates with 6 significant
// digits in GB/s, MHz, TFLOP/s, Gop/s, cycles or per cycle; `none` for the
// kinds that have it (infinite size, zero FLOP rate).
std::string format_value(ValueKind kind, double base_value);

// A plain decimal (no exponent, which the unit parser rejects) with `significant`
// significant digits and no trailing zeros: 4410.2, 0.918734, 132.
std::string plain_decimal(double v, int significant);

}  // namespace iosim::profile
