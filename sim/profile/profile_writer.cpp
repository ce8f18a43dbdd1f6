#include "sim/profile/profile_writer.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

namespace iosim::profile {
namespace {

constexpr int kSignificant = 6;
constexpr std::size_t kCommentWidth = 100;

std::string with_unit(double v, const char* unit) { return plain_decimal(v, kSignificant) + " " + unit; }

std::string size_text(double bytes) {
  const auto b = static_cast<i64>(std::llround(bytes));
  if (static_cast<double>(b) != bytes) throw std::logic_error("profile writer: a size that is not whole bytes");
  constexpr i64 kKi = 1024;
  if (b % (kKi * kKi * kKi) == 0) return std::to_string(b / (kKi * kKi * kKi)) + " GiB";
  if (b % (kKi * kKi) == 0) return std::to_string(b / (kKi * kKi)) + " MiB";
  if (b % kKi == 0) return std::to_string(b / kKi) + " KiB";
  return std::to_string(b) + " B";
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string source_text(const ProfileDraft& d, const WrittenValue& v) {
  switch (v.origin) {
    case Origin::measured: return "measured on " + d.gpu + ", " + d.date + ", by iosim calibrate: " + v.how;
    case Origin::runtime: return "read from the CUDA runtime on " + d.gpu + ", " + d.date + ": " + v.how;
    case Origin::assumption: return "assumption: " + v.how;
  }
  return v.how;
}

bool is_text(ValueKind k) {
  return k == ValueKind::plain_text || k == ValueKind::compute_capability || k == ValueKind::dram_kind;
}

// `text` as comment lines of at most kCommentWidth columns after `indent`.
void write_comment(std::ostringstream& out, const std::string& indent, std::string_view text) {
  std::string line;
  std::istringstream words{std::string(text)};
  for (std::string w; words >> w;) {
    if (!line.empty() && indent.size() + 2 + line.size() + 1 + w.size() > kCommentWidth) {
      out << indent << "# " << line << "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) out << indent << "# " << line << "\n";
}

const WrittenValue* value_at(const ProfileDraft& d, const std::string& path) {
  const auto it = d.values.find(path);
  return it == d.values.end() ? nullptr : &it->second;
}

void write_leaf(std::ostringstream& out, const ProfileDraft& d, const std::string& indent, const SchemaKey& k,
                const WrittenValue& v) {
  write_comment(out, indent, std::string(k.key) + ": " + std::string(k.description));
  std::string value;
  if (k.kind == ValueKind::compute_capability)
    value = quoted(v.text);
  else if (k.kind == ValueKind::dram_kind)
    value = v.text;
  else
    value = format_value(k.kind, v.number);
  out << indent << k.key << ": {value: " << value << ", source: " << quoted(source_text(d, v)) << "}\n";
}

// Every path of the draft must be a schema key (a typo would silently drop a value).
void check_paths(const ProfileDraft& d) {
  std::set<std::string> known;
  for (const SchemaSection& s : profile_schema())
    for (const SchemaKey& k : s.keys) known.insert(key_path(s, k));
  for (const auto& [path, value] : d.values)
    if (known.count(path) == 0 || path == "name" || path == "display_name")
      throw std::logic_error("profile writer: '" + path + "' is not a {value, source} key of the schema");
}

}  // namespace

std::string plain_decimal(double v, int significant) {
  if (!std::isfinite(v)) throw std::logic_error("profile writer: a value that is not finite");
  if (v == 0) return "0";
  const int before = static_cast<int>(std::floor(std::log10(std::fabs(v)))) + 1;
  const int decimals = std::max(0, significant - before);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string format_value(ValueKind kind, double v) {
  switch (kind) {
    case ValueKind::count: return std::to_string(std::llround(v));
    case ValueKind::size: return size_text(v);
    case ValueKind::size_or_none: return std::isinf(v) ? "none" : size_text(v);
    case ValueKind::bandwidth: return with_unit(v / 1e9, "GB/s");
    case ValueKind::frequency: return with_unit(v / 1e6, "MHz");
    case ValueKind::flop_rate: return with_unit(v / 1e12, "TFLOP/s");
    case ValueKind::flop_rate_or_none: return v == 0 ? "none" : with_unit(v / 1e12, "TFLOP/s");
    case ValueKind::op_rate: return with_unit(v / 1e9, "Gop/s");
    case ValueKind::latency: return with_unit(v, "cycles");
    case ValueKind::fraction: return plain_decimal(v, kSignificant);
    case ValueKind::flop_per_cycle: return with_unit(v, "FLOP/cycle");
    case ValueKind::op_per_cycle: return with_unit(v, "op/cycle");
    case ValueKind::bytes_per_cycle: return with_unit(v, "B/cycle");
    case ValueKind::inst_per_cycle: return with_unit(v, "inst/cycle");
    case ValueKind::boolean: return v != 0 ? "true" : "false";
    case ValueKind::plain_text:
    case ValueKind::compute_capability:
    case ValueKind::dram_kind: break;
  }
  throw std::logic_error("profile writer: format_value of a text kind");
}

std::string write_profile_yaml(const ProfileDraft& d) {
  check_paths(d);
  std::ostringstream out;
  for (const std::string& c : d.comments) write_comment(out, "", c);
  for (const SchemaSection& s : profile_schema()) {
    const std::string indent = s.key.empty() ? "" : "  ";
    bool any = false;
    for (const SchemaKey& k : s.keys) any = any || value_at(d, key_path(s, k)) != nullptr;
    if (!s.required && !any) continue;
    if (!s.key.empty()) {
      write_comment(out, "", std::string(s.key) + ": " + std::string(s.description));
      out << s.key << ":\n";
    }
    for (const SchemaKey& k : s.keys) {
      const std::string path = key_path(s, k);
      if (k.kind == ValueKind::plain_text) {
        const std::string& text = k.key == "name" ? d.name : d.display_name;
        out << k.key << ": " << quoted(text) << "\n";
        continue;
      }
      const WrittenValue* v = value_at(d, path);
      if (v == nullptr) {
        if (k.required) throw std::logic_error("profile writer: the draft has no value for " + path);
        continue;
      }
      if (is_text(k.kind) && v->text.empty())
        throw std::logic_error("profile writer: " + path + " needs a text value");
      write_leaf(out, d, indent, k, *v);
    }
  }
  return out.str();
}

}  // namespace iosim::profile
