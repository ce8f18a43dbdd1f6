#include "sim/profile/units.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <limits>

namespace iosim::profile {
namespace {

// A decimal number as written: sign, digits without the point, digits after
// the point. Kept exact so sizes need no floating point.
struct Decimal {
  bool negative = false;
  std::uint64_t digits = 0;  // e.g. "3.35" -> 335
  int scale = 0;             // e.g. "3.35" -> 2
  double as_double() const {
    double v = static_cast<double>(digits);
    for (int i = 0; i < scale; ++i) v /= 10.0;
    return negative ? -v : v;
  }
  bool is_zero() const { return digits == 0; }
};

struct Split {
  std::optional<Decimal> number;  // empty when the text does not start with one
  std::string_view unit;          // the rest, trimmed; may be empty
  bool too_long = false;          // a number of more than 18 digits (out of range)
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "<sign?><digits>[.<digits>] <unit>"; at most 18 significant digits so the
// integer never overflows.
Split split_number(std::string_view text) {
  const std::string_view s = trim(text);
  std::size_t i = 0;
  Decimal d;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    d.negative = s[i] == '-';
    ++i;
  }
  int n_digits = 0;
  bool seen_point = false;
  bool digit_after_point = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (++n_digits > 18) return {std::nullopt, s, true};
      d.digits = d.digits * 10 + static_cast<std::uint64_t>(c - '0');
      if (seen_point) {
        ++d.scale;
        digit_after_point = true;
      }
    } else if (c == '.' && !seen_point && n_digits > 0) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (n_digits == 0 || (seen_point && !digit_after_point)) return {std::nullopt, s};
  return {d, trim(s.substr(i))};
}

struct UnitSpec {
  std::string_view name;
  UnitKind kind;
  std::uint64_t multiplier;  // base units per one of this unit (cycles: 1; ns: special)
};

constexpr std::uint64_t kKi = 1024;
constexpr std::array<UnitSpec, 21> kUnits{{
    {"B", UnitKind::size, 1},
    {"KiB", UnitKind::size, kKi},
    {"MiB", UnitKind::size, kKi * kKi},
    {"GiB", UnitKind::size, kKi * kKi * kKi},
    {"KB", UnitKind::size, 1000},
    {"MB", UnitKind::size, 1000 * 1000},
    {"GB", UnitKind::size, 1000 * 1000 * 1000},
    {"GB/s", UnitKind::bandwidth, 1000ull * 1000 * 1000},
    {"TB/s", UnitKind::bandwidth, 1000ull * 1000 * 1000 * 1000},
    {"MHz", UnitKind::frequency, 1000 * 1000},
    {"GHz", UnitKind::frequency, 1000 * 1000 * 1000},
    {"GFLOP/s", UnitKind::flop_rate, 1000ull * 1000 * 1000},
    {"TFLOP/s", UnitKind::flop_rate, 1000ull * 1000 * 1000 * 1000},
    {"Gop/s", UnitKind::op_rate, 1000ull * 1000 * 1000},
    {"Top/s", UnitKind::op_rate, 1000ull * 1000 * 1000 * 1000},
    {"cycles", UnitKind::latency, 1},
    {"ns", UnitKind::latency, 0},  // converted with the SM clock
    {"FLOP/cycle", UnitKind::flop_per_cycle, 1},
    {"op/cycle", UnitKind::op_per_cycle, 1},
    {"B/cycle", UnitKind::bytes_per_cycle, 1},
    {"inst/cycle", UnitKind::inst_per_cycle, 1},
}};

const UnitSpec* find_unit(std::string_view name) {
  for (const UnitSpec& u : kUnits)
    if (u.name == name) return &u;
  return nullptr;
}

std::string quoted(std::string_view text) {
  std::string out(1, '\'');
  out += trim(text);
  out += '\'';
  return out;
}

// Why the text is not a usable number: too many digits, or not a number at all.
std::string not_a_number(std::string_view text, const Split& split, std::string_view what) {
  return quoted(text) + (split.too_long ? " is out of range (at most 18 digits)" : std::string(" is not ") + std::string(what));
}

// A number with a unit of the expected kind and a value > 0, or the problem.
struct Checked {
  Decimal number;
  const UnitSpec* unit = nullptr;
  std::string problem;  // empty when the text is usable
  std::string valid;
};

Checked check_quantity(std::string_view text, UnitKind kind, bool zero_ok = false) {
  const std::string valid = valid_units(kind);
  const Split split = split_number(text);
  if (!split.number)
    return {{}, nullptr, not_a_number(text, split, "a number followed by a unit"), valid};
  if (split.unit.empty()) return {{}, nullptr, quoted(text) + " has no unit", valid};
  const UnitSpec* unit = find_unit(split.unit);
  if (unit == nullptr)
    return {{}, nullptr, "unknown unit '" + std::string(split.unit) + "' in " + quoted(text),
            valid};
  if (unit->kind != kind)
    return {{}, nullptr,
            quoted(text) + " is " + std::string(unit_kind_name(unit->kind)) + ", not " +
                std::string(unit_kind_name(kind)),
            valid};
  if (split.number->negative || (split.number->is_zero() && !zero_ok))
    return {{}, nullptr, quoted(text) + (zero_ok ? " is negative" : " is not positive"),
            (zero_ok ? "a value >= 0; " : "a value > 0; ") + valid};
  return {*split.number, unit, {}, {}};
}

Parsed<double> parse_scaled(std::string_view text, UnitKind kind) {
  const Checked c = check_quantity(text, kind);
  if (!c.problem.empty()) return Parsed<double>::fail(c.problem, c.valid);
  return Parsed<double>::ok(c.number.as_double() * static_cast<double>(c.unit->multiplier));
}

std::uint64_t pow10(int n) {
  std::uint64_t p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

}  // namespace

std::string_view unit_kind_name(UnitKind kind) {
  switch (kind) {
    case UnitKind::size: return "a size";
    case UnitKind::bandwidth: return "a bandwidth";
    case UnitKind::frequency: return "a frequency";
    case UnitKind::flop_rate: return "a FLOP rate";
    case UnitKind::op_rate: return "an operation rate";
    case UnitKind::latency: return "a latency";
    case UnitKind::flop_per_cycle: return "FLOP per cycle";
    case UnitKind::op_per_cycle: return "operations per cycle";
    case UnitKind::bytes_per_cycle: return "bytes per cycle";
    case UnitKind::inst_per_cycle: return "instructions per cycle";
  }
  return "a quantity";
}

std::string valid_units(UnitKind kind) {
  std::string names;
  for (const UnitSpec& u : kUnits) {
    if (u.kind != kind) continue;
    if (!names.empty()) names += ", ";
    names += u.name;
  }
  std::string_view example;
  switch (kind) {
    case UnitKind::size: example = "40 MiB"; break;
    case UnitKind::bandwidth: example = "1555 GB/s"; break;
    case UnitKind::frequency: example = "1410 MHz"; break;
    case UnitKind::flop_rate: example = "312 TFLOP/s"; break;
    case UnitKind::op_rate: example = "2.44 Top/s"; break;
    case UnitKind::latency: example = "566 cycles"; break;
    case UnitKind::flop_per_cycle: example = "1024 FLOP/cycle"; break;
    case UnitKind::op_per_cycle: example = "128 op/cycle"; break;
    case UnitKind::bytes_per_cycle: example = "128 B/cycle"; break;
    case UnitKind::inst_per_cycle: example = "4 inst/cycle"; break;
  }
  return std::string(unit_kind_name(kind)) + " in " + names + ", e.g. " + std::string(example);
}

Parsed<i64> parse_size_bytes(std::string_view text) {
  const Checked c = check_quantity(text, UnitKind::size);
  if (!c.problem.empty()) return Parsed<i64>::fail(c.problem, c.valid);
  // bytes = digits * multiplier / 10^scale, computed exactly in 128 bits.
  const unsigned __int128 scaled =
      static_cast<unsigned __int128>(c.number.digits) * c.unit->multiplier;
  const std::uint64_t divisor = pow10(c.number.scale);
  if (scaled % divisor != 0)
    return Parsed<i64>::fail(quoted(text) + " is not a whole number of bytes",
                             valid_units(UnitKind::size));
  const unsigned __int128 bytes = scaled / divisor;
  if (bytes > static_cast<unsigned __int128>(std::numeric_limits<i64>::max()))
    return Parsed<i64>::fail(quoted(text) + " does not fit in 64 bits", "a size below 8 EiB");
  return Parsed<i64>::ok(static_cast<i64>(bytes));
}

Parsed<double> parse_bandwidth(std::string_view text) {
  return parse_scaled(text, UnitKind::bandwidth);
}
Parsed<double> parse_frequency(std::string_view text) {
  return parse_scaled(text, UnitKind::frequency);
}
Parsed<double> parse_flop_rate(std::string_view text) {
  return parse_scaled(text, UnitKind::flop_rate);
}
Parsed<double> parse_op_rate(std::string_view text) {
  return parse_scaled(text, UnitKind::op_rate);
}

Parsed<double> parse_per_cycle(std::string_view text, UnitKind kind, bool zero_ok) {
  const Checked c = check_quantity(text, kind, zero_ok);
  if (!c.problem.empty()) return Parsed<double>::fail(c.problem, c.valid);
  return Parsed<double>::ok(c.number.as_double());
}

Parsed<double> parse_cycles(std::string_view text, double clock_hz, bool zero_ok);

Parsed<double> parse_latency_cycles(std::string_view text, double clock_hz) {
  return parse_cycles(text, clock_hz, false);
}

Parsed<double> parse_cycles_or_zero(std::string_view text, double clock_hz) {
  return parse_cycles(text, clock_hz, true);
}

Parsed<double> parse_cycles(std::string_view text, double clock_hz, bool zero_ok) {
  const Checked c = check_quantity(text, UnitKind::latency, zero_ok);
  if (!c.problem.empty()) return Parsed<double>::fail(c.problem, c.valid);
  if (c.unit->name == "ns") {
    if (!(clock_hz > 0))
      return Parsed<double>::fail(quoted(text) + " needs the SM clock to convert ns to cycles",
                                  "a positive sm.clock, or the latency in cycles");
    return Parsed<double>::ok(c.number.as_double() * 1e-9 * clock_hz);
  }
  return Parsed<double>::ok(c.number.as_double());
}

Parsed<i64> parse_count(std::string_view text) {
  constexpr std::string_view kValid = "a whole number > 0 with no unit, e.g. 108";
  const Split split = split_number(text);
  if (!split.number)
    return Parsed<i64>::fail(not_a_number(text, split, "a number"), std::string(kValid));
  if (!split.unit.empty())
    return Parsed<i64>::fail(quoted(text) + " has a unit; a count takes none", std::string(kValid));
  const Decimal& d = *split.number;
  if (d.scale != 0)
    return Parsed<i64>::fail(quoted(text) + " is not a whole number", std::string(kValid));
  if (d.negative || d.is_zero())
    return Parsed<i64>::fail(quoted(text) + " is not positive", std::string(kValid));
  return Parsed<i64>::ok(static_cast<i64>(d.digits));
}

Parsed<double> parse_fraction(std::string_view text) {
  constexpr std::string_view kValid = "a plain number in (0, 1], e.g. 0.9 for 90%";
  const Split split = split_number(text);
  if (!split.number)
    return Parsed<double>::fail(not_a_number(text, split, "a number"), std::string(kValid));
  if (!split.unit.empty())
    return Parsed<double>::fail(quoted(text) + " has a unit; a fraction takes none",
                                std::string(kValid));
  const double v = split.number->as_double();
  if (!(v > 0.0) || v > 1.0)
    return Parsed<double>::fail(quoted(text) + " is outside (0, 1]", std::string(kValid));
  return Parsed<double>::ok(v);
}

}  // namespace iosim::profile
