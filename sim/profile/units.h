// Quantities written with explicit units, as hardware profiles state them
// ("40 MiB", "1555 GB/s", "1410 MHz", "566 cycles"). Each parser accepts one
// kind of unit only: a bandwidth where a size is expected is an error, never a
// conversion. Unit names are case-sensitive (MB is bytes, Mb would be bits).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "sim/common/hd.h"

namespace iosim::profile {

enum class UnitKind {
  size,
  bandwidth,
  frequency,
  flop_rate,
  op_rate,
  latency,
  // Per SM per SM-clock cycle (the sm_pipes section): one unit name each.
  flop_per_cycle,   // FLOP/cycle
  op_per_cycle,     // op/cycle (lane operations)
  bytes_per_cycle,  // B/cycle
  inst_per_cycle,   // inst/cycle (warp instructions)
};

// A parsed value, or why the text was rejected and what would be valid. The
// caller adds file, line and key.
template <typename T>
struct Parsed {
  std::optional<T> value;
  std::string problem;  // empty when value is set
  std::string valid;

  static Parsed ok(T v) { return Parsed{v, {}, {}}; }
  static Parsed fail(std::string problem, std::string valid) {
    return Parsed{std::nullopt, std::move(problem), std::move(valid)};
  }
};

// "a size", "a bandwidth", ...
std::string_view unit_kind_name(UnitKind kind);
// The accepted spellings of a kind, with an example: "B, KiB, MiB, ... e.g. 40 MiB".
std::string valid_units(UnitKind kind);

// Sizes: B, KiB, MiB, GiB (powers of 1024), KB, MB, GB (powers of 1000).
// Exact: the result must be a whole, positive number of bytes.
Parsed<i64> parse_size_bytes(std::string_view text);
// Bandwidths: GB/s, TB/s (decimal) -> bytes per second.
Parsed<double> parse_bandwidth(std::string_view text);
// Frequencies: MHz, GHz -> hertz.
Parsed<double> parse_frequency(std::string_view text);
// Floating-point rates: GFLOP/s, TFLOP/s -> FLOP per second.
Parsed<double> parse_flop_rate(std::string_view text);
// Other operation rates (special-function results): Gop/s, Top/s -> per second.
Parsed<double> parse_op_rate(std::string_view text);
// Latencies: "N cycles" (SM cycles), or "N ns" converted at `clock_hz`.
Parsed<double> parse_latency_cycles(std::string_view text, double clock_hz);
// The same for durations that may be zero (a window or an overhead that can be
// off): "0 cycles" is accepted, a negative value is not.
Parsed<double> parse_cycles_or_zero(std::string_view text, double clock_hz);

// Per-cycle rates (FLOP/cycle, op/cycle, B/cycle, inst/cycle), each of its own
// kind, > 0 (>= 0 with zero_ok: a pipe the GPU lacks).
Parsed<double> parse_per_cycle(std::string_view text, UnitKind kind, bool zero_ok);

// A unitless count: a whole number > 0, e.g. "108".
Parsed<i64> parse_count(std::string_view text);
// A unitless fraction in (0, 1], e.g. "0.9".
Parsed<double> parse_fraction(std::string_view text);

}  // namespace iosim::profile
