// The points of `iosim sweep`: every valued flag of `iosim simulate` may hold
// a comma list ("fa1,fa2") or, for integers and profile counts and sizes, a
// range "A:B:xK" (A, A*K, ... up to B) or "A:B:+K" (A, A+K, ... up to B).
// The grid is their Cartesian product in the order the flags were given, the
// last flag varying fastest.
#pragma once
#include <string>
#include <vector>

#include "sim/cli/args.h"

namespace iosim::cli {

// How a flag's values may be written.
enum class SweepValueKind {
  list,     // a comma list only (text, real numbers)
  integer,  // a list or an integer range
  size,     // a list or a range of byte sizes with units ("48KiB:96KiB:+16KiB")
};

// Limits, so that a mistyped range is an error rather than hours of work.
inline constexpr i64 kMaxSweepValues = 100000;   // per flag
inline constexpr i64 kMaxSweepPoints = 1000000;  // in the grid

// The values `text` stands for, in order; throws InputError naming `what`
// (e.g. "--seq") for an empty entry or a malformed or empty range.
std::vector<std::string> expand_sweep_values(const std::string& what, const std::string& text, SweepValueKind kind);

struct SweepDimension {
  std::string flag;              // without dashes: "seq", "set"
  std::string set_key;           // for --set: the profile key ("sm.smem_per_block")
  std::vector<std::string> values;
  // Its column in the output: "arg.seq", "arg.block-m"; "set.sm.smem_per_block".
  std::string column() const { return flag == "set" ? "set." + set_key : "arg." + flag; }
};

struct SweepGrid {
  std::vector<std::string> fixed_args;  // value-less flags (--causal, --counts-only), passed as given
  std::vector<SweepDimension> dims;     // every valued flag, in the order given
  i64 points() const;
  // Point `index`'s value index in each dimension (grid order: the last dimension fastest).
  std::vector<std::size_t> indices_of(i64 index) const;
  // Point `index`'s value of each dimension.
  std::vector<std::string> values_of(i64 index) const;
  // Point `index` as `iosim simulate` arguments.
  std::vector<std::string> args_of(i64 index) const;
};

// Splits the arguments: flags `simulate` declares go into the grid (their
// values expanded), everything else (the sweep's own flags, unknown flags,
// --help) into `rest`, for the sweep's parser to take or reject.
SweepGrid parse_sweep_grid(const std::vector<std::string>& args, const ArgParser& simulate,
                           std::vector<std::string>& rest);

}  // namespace iosim::cli
