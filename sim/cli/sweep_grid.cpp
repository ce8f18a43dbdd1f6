#include "sim/cli/sweep_grid.h"

#include <charconv>
#include <optional>

#include "sim/common/error.h"
#include "sim/profile/schema.h"
#include "sim/profile/units.h"

namespace iosim::cli {

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

const char* const kRangeForms = "A:B:xK (A, A*K, A*K^2, ... <= B; K >= 2) or A:B:+K (A, A+K, ... <= B; K >= 1)";

[[noreturn]] void bad_range(const std::string& what, const std::string& text, const std::string& problem) {
  throw InputError(what + " '" + text + "': " + problem + " (a range is " + kRangeForms + ")");
}

// An endpoint or step: an integer, or a byte size with its unit.
i64 range_number(const std::string& what, const std::string& range, const std::string& part, SweepValueKind kind) {
  if (kind == SweepValueKind::size) {
    const auto parsed = profile::parse_size_bytes(part);
    if (!parsed.value) bad_range(what, range, "'" + part + "': " + parsed.problem + " (" + parsed.valid + ")");
    return *parsed.value;
  }
  i64 v = 0;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
  if (ec != std::errc() || end != part.data() + part.size())
    bad_range(what, range, "'" + part + "' is not a 64-bit integer");
  return v;
}

std::string number_text(i64 v, SweepValueKind kind) {
  return kind == SweepValueKind::size ? std::to_string(v) + " B" : std::to_string(v);
}

std::vector<std::string> expand_range(const std::string& what, const std::string& text, SweepValueKind kind) {
  const std::vector<std::string> parts = split(text, ':');
  if (parts.size() != 3) bad_range(what, text, "expected three parts separated by ':'");
  const i64 lo = range_number(what, text, parts[0], kind);
  const i64 hi = range_number(what, text, parts[1], kind);
  const std::string& step = parts[2];
  if (step.empty() || (step[0] != 'x' && step[0] != '+')) bad_range(what, text, "the step '" + step + "' starts with x or +");
  const bool geometric = step[0] == 'x';
  // A geometric factor is a plain integer even for sizes (x2), an arithmetic step a size.
  const i64 k = range_number(what, text, step.substr(1), geometric ? SweepValueKind::integer : kind);
  if (hi < lo) bad_range(what, text, "the end " + parts[1] + " is below the start " + parts[0]);
  if (geometric && k < 2) bad_range(what, text, "the factor must be at least 2 (got " + step.substr(1) + ")");
  if (!geometric && k < 1) bad_range(what, text, "the step must be at least 1 (got " + step.substr(1) + ")");
  if (geometric && lo <= 0) bad_range(what, text, "a geometric range starts above 0");
  std::vector<std::string> values;
  for (i64 v = lo;;) {
    if (static_cast<i64>(values.size()) == kMaxSweepValues)
      bad_range(what, text, "more than " + std::to_string(kMaxSweepValues) + " values");
    values.push_back(number_text(v, kind));
    // The next value, unless it would pass `hi` (checked before it can overflow).
    if (geometric ? v > hi / k : v > hi - k) break;
    v = geometric ? v * k : v + k;
  }
  return values;
}

// The flag's kind for expansion; --set keys take ranges where the schema
// stores a whole count or a size.
SweepValueKind value_kind(std::optional<ArgParser::Kind> flag_kind, const std::string& set_key) {
  if (flag_kind == ArgParser::Kind::integer) return SweepValueKind::integer;
  if (flag_kind != ArgParser::Kind::repeated) return SweepValueKind::list;
  const profile::SchemaKey* key = profile::find_key(set_key);
  if (key && key->kind == profile::ValueKind::count) return SweepValueKind::integer;
  if (key && key->kind == profile::ValueKind::size) return SweepValueKind::size;
  return SweepValueKind::list;
}

}  // namespace

std::vector<std::string> expand_sweep_values(const std::string& what, const std::string& text, SweepValueKind kind) {
  std::vector<std::string> values;
  for (const std::string& item : split(text, ',')) {
    if (item.empty())
      throw InputError(what + " '" + text + "': an empty value (a comma list has a value between every two commas)");
    if (kind != SweepValueKind::list && item.find(':') != std::string::npos) {
      for (std::string& v : expand_range(what, item, kind)) values.push_back(std::move(v));
    } else {
      values.push_back(item);
    }
    if (static_cast<i64>(values.size()) > kMaxSweepValues)
      throw InputError(what + " '" + text + "': more than " + std::to_string(kMaxSweepValues) + " values");
  }
  return values;
}

i64 SweepGrid::points() const {
  i64 n = 1;
  for (const auto& d : dims) n *= static_cast<i64>(d.values.size());  // bounded by parse_sweep_grid
  return n;
}

std::vector<std::size_t> SweepGrid::indices_of(i64 index) const {
  std::vector<std::size_t> chosen(dims.size());
  for (std::size_t d = dims.size(); d-- > 0;) {
    const i64 n = static_cast<i64>(dims[d].values.size());
    chosen[d] = static_cast<std::size_t>(index % n);
    index /= n;
  }
  return chosen;
}

std::vector<std::string> SweepGrid::values_of(i64 index) const {
  const std::vector<std::size_t> at = indices_of(index);
  std::vector<std::string> chosen;
  for (std::size_t d = 0; d < dims.size(); ++d) chosen.push_back(dims[d].values[at[d]]);
  return chosen;
}

std::vector<std::string> SweepGrid::args_of(i64 index) const {
  std::vector<std::string> args = fixed_args;
  const std::vector<std::string> chosen = values_of(index);
  for (std::size_t d = 0; d < dims.size(); ++d) {
    args.push_back("--" + dims[d].flag);
    args.push_back(dims[d].flag == "set" ? dims[d].set_key + "=" + chosen[d] : chosen[d]);
  }
  return args;
}

SweepGrid parse_sweep_grid(const std::vector<std::string>& args, const ArgParser& simulate,
                           std::vector<std::string>& rest) {
  SweepGrid grid;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::size_t eq = a.find('=');
    const std::string name = a.rfind("--", 0) == 0 ? a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2) : "";
    const auto kind = name.empty() ? std::nullopt : simulate.kind_of(name);
    if (!kind) {
      rest.push_back(a);
      continue;
    }
    if (*kind == ArgParser::Kind::flag) {
      grid.fixed_args.push_back(a);  // simulate's parser rejects a value given to it
      continue;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = a.substr(eq + 1);
    } else {
      if (i + 1 >= args.size()) throw InputError("sweep: flag '--" + name + "' needs a value");
      value = args[++i];
    }
    SweepDimension dim{name, "", {}};
    std::string what = "--" + name;
    if (*kind == ArgParser::Kind::repeated) {  // --set KEY=V1,V2
      const std::size_t at = value.find('=');
      if (at == std::string::npos || at == 0 || at + 1 == value.size())
        throw InputError("--set '" + value + "': expected KEY=VALUE[,VALUE...], e.g. --set sm.smem_per_block=48KiB,100KiB");
      dim.set_key = value.substr(0, at);
      value = value.substr(at + 1);
      what = "--set " + dim.set_key;
    }
    for (const SweepDimension& d : grid.dims)
      if (d.flag == dim.flag && d.set_key == dim.set_key) throw InputError("sweep: " + what + " given twice (list its values in one flag)");
    dim.values = expand_sweep_values(what, value, value_kind(kind, dim.set_key));
    grid.dims.push_back(std::move(dim));
    if (grid.points() > kMaxSweepPoints)
      throw InputError("sweep: the grid has more than " + std::to_string(kMaxSweepPoints) + " points (fewer values, please)");
  }
  return grid;
}

}  // namespace iosim::cli
