// Strict loader for hw_profiles/*.yaml, driven by the schema table
// (sim/profile/schema.h): reading, the unknown-key check, the ranges and the
// messages all come from it, so they cannot drift apart.
#include "sim/profile/hardware_profile.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <variant>

#include "sim/common/error.h"
#include "sim/profile/schema.h"
#include "sim/profile/units.h"

namespace iosim::profile {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 2> kLeafKeys{"value", "source"};

std::vector<std::string_view> key_names(const std::vector<SchemaKey>& keys) {
  std::vector<std::string_view> names;
  for (const SchemaKey& k : keys) names.push_back(k.key);
  return names;
}

template <typename Names>
std::string join(const Names& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += std::string(n);
  }
  return out;
}

std::string join_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
}

// yaml-cpp marks are 0-based; messages use 1-based lines like editors do.
int line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 1 : mark.line + 1;
}

std::string bytes_text(i64 bytes) { return std::to_string(bytes) + " B"; }

// Reads one file into a HardwareProfile; every failure names file, line and key.
class ProfileReader {
 public:
  ProfileReader(std::string file, const std::vector<ProfileOverride>& overrides)
      : file_(std::move(file)), overrides_(overrides) {
    profile_.source_file = file_;
  }

  HardwareProfile read(const YAML::Node& root) {
    if (!root.IsMap())
      fail(line_of(root), "(document)", "the file is not a YAML map of profile keys",
           "a map with keys " + join(top_level_keys()));
    check_keys(root, "", top_level_keys());
    for (const SchemaSection& section : profile_schema()) {
      if (section.key.empty())
        read_header(root, section);
      else
        read_section(root, section);
    }
    check_consistency();
    return profile_;
  }

 private:
  // An overridden key is reported as the flag that set it; any other key by
  // file and line, naming the overrides that may have caused it.
  [[noreturn]] void fail(int line, std::string_view key, std::string_view problem,
                         std::string_view valid) const {
    std::ostringstream msg;
    const auto set = std::find_if(overrides_.begin(), overrides_.end(),
                                  [&](const ProfileOverride& o) { return o.key == key; });
    if (set != overrides_.end()) {
      msg << "--set " << set->text() << ": " << problem << " (" << valid << "; profile " << file_ << ')';
      throw InputError(msg.str());
    }
    msg << file_ << ':' << line << ": " << key << ": " << problem << " (" << valid << ')';
    for (size_t i = 0; i < overrides_.size(); ++i) msg << (i == 0 ? " [with --set " : ", ") << overrides_[i].text();
    if (!overrides_.empty()) msg << ']';
    throw InputError(msg.str());
  }

  static std::vector<std::string_view> top_level_keys() {
    std::vector<std::string_view> keys;
    for (const SchemaSection& s : profile_schema()) {
      if (s.key.empty())
        for (const SchemaKey& k : s.keys) keys.push_back(k.key);
      else
        keys.push_back(s.key);
    }
    return keys;
  }

  // Every key of `map` must be one of `allowed`, and appear once.
  template <typename Allowed>
  void check_keys(const YAML::Node& map, std::string_view path, const Allowed& allowed) const {
    std::set<std::string> seen;
    const std::string where = path.empty() ? "at the top level" : "in " + std::string(path);
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar())
        fail(line_of(key), path.empty() ? "(document)" : path, "a key is not a plain name",
             "keys " + where + ": " + join(allowed));
      const std::string name = key.Scalar();
      const std::string key_path = join_path(path, name);
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
        fail(line_of(key), key_path, "unknown key", "valid keys " + where + ": " + join(allowed));
      if (!seen.insert(name).second)
        fail(line_of(key), key_path, "duplicate key", "each key once " + where);
    }
  }

  // The value under `key`, which must exist; a missing key is reported at the
  // line of the map that should hold it.
  YAML::Node require(const YAML::Node& map, std::string_view path, std::string_view key,
                     int parent_line, std::string_view valid) const {
    const YAML::Node node = map[std::string(key)];
    if (!node.IsDefined()) fail(parent_line, join_path(path, key), "missing key", valid);
    return node;
  }

  std::string plain_string(const YAML::Node& node, std::string_view key_path) const {
    if (!node.IsScalar() || node.Scalar().empty())
      fail(line_of(node), key_path, "expected a non-empty string", "e.g. NVIDIA A100-SXM4-40GB");
    return node.Scalar();
  }

  static std::string leaf_shape(ValueKind kind) {
    return "{value: " + kind_valid(kind) + ", source: \"...\"}";
  }

  // name (= the file stem), display_name (bare strings), compute_capability (a leaf).
  void read_header(const YAML::Node& root, const SchemaSection& section) {
    const int root_line = line_of(root);
    const std::string stem = fs::path(file_).stem().string();
    for (const SchemaKey& k : section.keys) {
      const std::string path(k.key);
      if (k.kind != ValueKind::plain_text) {
        store(k, require(root, "", k.key, root_line, leaf_shape(k.kind)), path);
        continue;
      }
      const bool is_name = k.key == "name";
      const YAML::Node node = require(root, "", k.key, root_line,
                                      is_name ? "the file stem, " + stem : "a string, e.g. NVIDIA A100-SXM4-40GB");
      set(k, plain_string(node, path));
      if (is_name && profile_.name != stem)
        fail(line_of(node), path, "'" + profile_.name + "' differs from the file name", "the file stem, " + stem);
    }
  }

  void read_section(const YAML::Node& root, const SchemaSection& section) {
    const std::vector<std::string_view> keys = key_names(section.keys);
    const std::string path(section.key);
    const YAML::Node node = root[path];
    if (!node.IsDefined() && !section.required) return;
    require(root, "", section.key, line_of(root), "a map with keys " + join(keys));
    if (!node.IsMap()) fail(line_of(node), path, "expected a map", "a map with keys " + join(keys));
    check_keys(node, path, keys);
    if (section.present != nullptr) profile_.sm_pipes.*section.present = true;
    const int line = section_line(root, section.key);
    for (const SchemaKey& k : section.keys) {
      if (!k.required && !node[std::string(k.key)].IsDefined()) continue;
      store(k, require(node, path, k.key, line, leaf_shape(k.kind)), key_path(section, k));
    }
  }

  // The line of the section's key (`sm:`), where a missing child is reported.
  static int section_line(const YAML::Node& root, std::string_view key) {
    for (auto it = root.begin(); it != root.end(); ++it)
      if (it->first.Scalar() == key) return line_of(it->first);
    return line_of(root);
  }

  // A leaf is {value: <text>, source: "<where it came from>"}; returns the value node.
  YAML::Node leaf_value(const YAML::Node& leaf, const std::string& key_path, ValueKind kind) const {
    if (!leaf.IsMap()) fail(line_of(leaf), key_path, "expected {value, source}", leaf_shape(kind));
    check_keys(leaf, key_path, kLeafKeys);
    const int line = line_of(leaf);
    const YAML::Node value = require(leaf, key_path, "value", line, kind_valid(kind));
    const YAML::Node source =
        require(leaf, key_path, "source", line, "where the value came from, or assumption: why");
    if (!source.IsScalar() || source.Scalar().empty())
      fail(line_of(source), key_path + ".source", "expected a non-empty string",
           "where the value came from, or assumption: why");
    if (value.IsNull()) fail(line_of(value), key_path, "the value is empty", kind_valid(kind));
    if (!value.IsScalar())
      fail(line_of(value), key_path, "expected a single value, not a list or map", kind_valid(kind));
    return value;
  }

  // Parses a leaf's value text by the key's kind and checks the key's range;
  // NaN stands for a text value (checked by the caller). Zero passes the
  // parsers only where the range allows it.
  double parse_number(const SchemaKey& k, const std::string& text, int line, const std::string& key_path) const {
    auto check = [&](const auto& parsed) {
      if (!parsed.value) fail(line, key_path, parsed.problem, parsed.valid);
      return static_cast<double>(*parsed.value);
    };
    const bool zero_ok = k.range.lo_inclusive;
    switch (k.kind) {
      case ValueKind::count: return check(parse_count(text));
      case ValueKind::size: return check(parse_size_bytes(text));
      case ValueKind::size_or_none: {
        if (text == "none") return std::numeric_limits<double>::infinity();
        const auto parsed = parse_size_bytes(text);
        if (!parsed.value) fail(line, key_path, parsed.problem, kind_valid(k.kind));
        return static_cast<double>(*parsed.value);
      }
      case ValueKind::bandwidth: return check(parse_bandwidth(text));
      case ValueKind::frequency: return check(parse_frequency(text));
      case ValueKind::flop_rate: return check(parse_flop_rate(text));
      case ValueKind::flop_rate_or_none: return text == "none" ? 0.0 : check(parse_flop_rate(text));
      case ValueKind::op_rate: return check(parse_op_rate(text));
      case ValueKind::latency:
        return zero_ok ? check(parse_cycles_or_zero(text, profile_.sm_clock_hz))
                       : check(parse_latency_cycles(text, profile_.sm_clock_hz));
      case ValueKind::fraction: return check(parse_fraction(text));
      case ValueKind::flop_per_cycle: return check(parse_per_cycle(text, UnitKind::flop_per_cycle, zero_ok));
      case ValueKind::op_per_cycle: return check(parse_per_cycle(text, UnitKind::op_per_cycle, zero_ok));
      case ValueKind::bytes_per_cycle: return check(parse_per_cycle(text, UnitKind::bytes_per_cycle, zero_ok));
      case ValueKind::inst_per_cycle: return check(parse_per_cycle(text, UnitKind::inst_per_cycle, zero_ok));
      case ValueKind::boolean:
        if (text != "true" && text != "false") fail(line, key_path, "'" + text + "' is not true or false", kind_valid(k.kind));
        return text == "true" ? 1 : 0;
      case ValueKind::plain_text:
      case ValueKind::compute_capability:
      case ValueKind::dram_kind: return std::numeric_limits<double>::quiet_NaN();
    }
    return std::numeric_limits<double>::quiet_NaN();
  }

  void store(const SchemaKey& k, const YAML::Node& leaf, const std::string& key_path) {
    const YAML::Node value = leaf_value(leaf, key_path, k.kind);
    const int line = line_of(value);
    lines_[key_path] = line;
    const std::string text = value.Scalar();
    switch (k.kind) {
      case ValueKind::dram_kind:
        if (std::find(std::begin(kDramKinds), std::end(kDramKinds), text) == std::end(kDramKinds))
          fail(line, key_path, "unknown DRAM kind '" + text + "'", kind_valid(k.kind));
        return set(k, text);
      case ValueKind::compute_capability:
        if (!is_compute_capability(text))
          fail(line, key_path, "'" + text + "' is not <major>.<minor>", kind_valid(k.kind));
        return set(k, text);
      default: break;
    }
    const double v = parse_number(k, text, line, key_path);
    if (k.kind == ValueKind::boolean) return set(k, v != 0);
    const bool none = text == "none";  // the parser accepted it, so the kind allows it
    if (!none && !k.range.contains(v))
      fail(line, key_path, "'" + text + "' is outside " + k.range.text(), kind_valid(k.kind));
    // Counts and sizes are stored exactly, from the parser's 64-bit integer.
    if (k.kind == ValueKind::count) return set(k, *parse_count(text).value);
    if (k.kind == ValueKind::size) return set(k, *parse_size_bytes(text).value);
    set(k, v);
  }


  static bool is_compute_capability(std::string_view s) {
    const std::size_t dot = s.find('.');
    auto digits = [](std::string_view d) {
      return !d.empty() &&
             std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    return dot != std::string_view::npos && digits(s.substr(0, dot)) && digits(s.substr(dot + 1));
  }

  // Writes a parsed value into the member the schema names; the schema pairs
  // counts and sizes with i64 members, rates with double, text with string.
  template <typename V>
  void set(const SchemaKey& k, V v) {
    std::visit(
        [&](auto member) {
          using M = decltype(member);
          if constexpr (std::is_same_v<M, double HardwareProfile::SmPipes::*> && std::is_same_v<V, double>) {
            profile_.sm_pipes.*member = v;
          } else if constexpr (!std::is_same_v<M, std::monostate> &&
                               !std::is_same_v<M, double HardwareProfile::SmPipes::*>) {
            using Field = std::remove_reference_t<decltype(profile_.*member)>;
            if constexpr (std::is_same_v<V, Field>) {
              profile_.*member = std::move(v);
              return;
            }
            throw std::logic_error("hardware profile schema: wrong member type for " + std::string(k.key));
          } else {
            throw std::logic_error("hardware profile schema: no member for " + std::string(k.key));
          }
        },
        k.target);
  }

  int line(const std::string& key_path) const { return lines_.at(key_path); }

  // Relations between keys that a single value cannot violate on its own.
  void check_consistency() const {
    const HardwareProfile& p = profile_;
    if (p.l2_sector_bytes > p.l2_line_bytes)
      fail(line("l2.sector"), "l2.sector",
           bytes_text(p.l2_sector_bytes) + " is larger than l2.line " + bytes_text(p.l2_line_bytes),
           "l2.sector <= l2.line");
    if (p.l2_line_bytes % p.l2_sector_bytes != 0)
      fail(line("l2.line"), "l2.line",
           bytes_text(p.l2_line_bytes) + " is not a multiple of l2.sector " +
               bytes_text(p.l2_sector_bytes),
           "a line made of whole sectors, e.g. 128 B lines of 32 B sectors");
    const i64 set_bytes = p.l2_line_bytes * p.l2_associativity * p.l2_partitions;
    if (p.l2_bytes % set_bytes != 0)
      fail(line("l2.size"), "l2.size",
           bytes_text(p.l2_bytes) + " is not a whole number of sets: l2.line x l2.associativity x "
               "l2.partitions = " + bytes_text(set_bytes),
           "l2.size divisible by line x associativity x partitions, so each partition has a "
           "whole number of sets");
    if (p.l2_effective_bytes > 0 && p.l2_effective_bytes % set_bytes != 0)
      fail(line("l2.effective_size"), "l2.effective_size",
           bytes_text(p.l2_effective_bytes) + " is not a whole number of sets: l2.line x l2.associativity x "
               "l2.partitions = " + bytes_text(set_bytes),
           "l2.effective_size divisible by line x associativity x partitions");
    if (p.l2_effective_bytes > p.l2_bytes)
      fail(line("l2.effective_size"), "l2.effective_size",
           bytes_text(p.l2_effective_bytes) + " is larger than l2.size " + bytes_text(p.l2_bytes),
           "l2.effective_size <= l2.size");
    if (p.l2_far_copies && p.l2_partitions != 2)
      fail(line("l2.far_copies"), "l2.far_copies",
           "true although l2.partitions is " + std::to_string(p.l2_partitions) + " (a copy goes to the other half)",
           "l2.far_copies: true only with l2.partitions = 2");
    if (p.smem_per_block_bytes > p.smem_per_sm_bytes)
      fail(line("sm.smem_per_block"), "sm.smem_per_block",
           bytes_text(p.smem_per_block_bytes) + " is larger than sm.smem_per_sm " +
               bytes_text(p.smem_per_sm_bytes),
           "sm.smem_per_block <= sm.smem_per_sm");
    if (p.smem_per_sm_bytes > p.l1_per_sm_bytes)
      fail(line("sm.smem_per_sm"), "sm.smem_per_sm",
           bytes_text(p.smem_per_sm_bytes) + " is larger than sm.l1_smem_per_sm " +
               bytes_text(p.l1_per_sm_bytes),
           "sm.smem_per_sm <= sm.l1_smem_per_sm (shared memory is carved out of L1)");
    if (p.max_warps_per_sm * 32 != p.max_threads_per_sm)
      fail(line("sm.max_warps"), "sm.max_warps",
           std::to_string(p.max_warps_per_sm) + " warps x 32 threads != sm.max_threads " +
               std::to_string(p.max_threads_per_sm),
           "sm.max_warps x 32 = sm.max_threads");
    if (p.max_ctas_per_sm > p.max_warps_per_sm)
      fail(line("sm.max_ctas"), "sm.max_ctas",
           std::to_string(p.max_ctas_per_sm) + " CTAs exceed sm.max_warps " +
               std::to_string(p.max_warps_per_sm),
           "sm.max_ctas <= sm.max_warps (every CTA holds at least one warp)");
    if (p.l2_partitions == 1 && p.l2_far_latency_cycles != p.l2_near_latency_cycles)
      fail(line("latency.l2_far"), "latency.l2_far",
           "differs from latency.l2_near although l2.partitions is 1",
           "latency.l2_far = latency.l2_near for a uniform L2");
    if (p.l2_far_latency_cycles < p.l2_near_latency_cycles) {
      std::ostringstream problem;  // "<key>: <value> is below ...", not "<key>: is below ..."
      problem << p.l2_far_latency_cycles << " cycles is below latency.l2_near (" << p.l2_near_latency_cycles
              << " cycles)";
      fail(line("latency.l2_far"), "latency.l2_far", problem.str(), "latency.l2_far >= latency.l2_near");
    }
  }

  std::string file_;
  const std::vector<ProfileOverride>& overrides_;
  HardwareProfile profile_;
  std::map<std::string, int> lines_;  // key path -> line of its value, for consistency errors
};

bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos ||
         (s.size() >= 5 && s.substr(s.size() - 5) == ".yaml");
}

// Stems of the *.yaml files in `dir`, sorted.
std::vector<std::string> profile_names(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError("profile directory '" + dir +
                     "' does not exist (set IOSIM_PROFILE_DIR, or pass a path to a .yaml file)");
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml")
      names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Puts each override into the document as a {value, source} leaf, so the
// reader validates it like any value of the file.
void apply_overrides(YAML::Node& root, const std::vector<ProfileOverride>& overrides) {
  std::set<std::string> seen;
  for (const ProfileOverride& o : overrides) {
    const SchemaKey* key = find_key(o.key);
    if (key == nullptr) {
      std::vector<std::string> keys;
      for (const SchemaSection& s : profile_schema())
        for (const SchemaKey& k : s.keys) keys.push_back(key_path(s, k));
      throw InputError("--set " + o.text() + ": unknown profile key '" + o.key + "' (valid keys: " + join(keys) +
                       "; hw_profiles/README.md describes them)");
    }
    if (!seen.insert(o.key).second) throw InputError("--set " + o.key + " given twice (each key once)");
    if (key->key == "name")
      throw InputError("--set " + o.text() + ": the profile's name is its file name (give --profile instead)");
    const std::size_t dot = o.key.find('.');
    const std::string section = dot == std::string::npos ? "" : o.key.substr(0, dot);
    if (!section.empty() && root.IsMap() && !root[section].IsDefined())
      throw InputError("--set " + o.text() + ": the profile has no '" + section +
                       "' section to change (a key of a section the file has; `iosim calibrate` writes sm_pipes)");
    YAML::Node parent = section.empty() ? root : root[section];
    if (key->kind == ValueKind::plain_text) {
      parent[std::string(key->key)] = o.value;
      continue;
    }
    YAML::Node leaf(YAML::NodeType::Map);
    leaf["value"] = o.value;
    leaf["source"] = "iosim --set";
    parent[std::string(key->key)] = leaf;
  }
}

}  // namespace


HardwareProfile load_profile(const std::string& path, const std::vector<ProfileOverride>& overrides) {
  std::ifstream in(path);
  if (!in)
    throw InputError(path + ": cannot open the file (a readable hardware profile, e.g. "
                            "hw_profiles/a100-sxm4-40gb.yaml)");
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    throw InputError(path + ":" + std::to_string(line) + ": (document): YAML parse error: " +
                     e.msg + " (well-formed YAML; see hw_profiles/README.md)");
  }
  apply_overrides(root, overrides);
  return ProfileReader(path, overrides).read(root);
}

HardwareProfile find_profile(const std::string& name_or_path, const std::string& profile_dir,
                             const std::vector<ProfileOverride>& overrides) {
  if (looks_like_path(name_or_path)) return load_profile(name_or_path, overrides);
  const std::vector<std::string> known = profile_names(profile_dir);
  if (std::find(known.begin(), known.end(), name_or_path) == known.end())
    throw InputError("unknown hardware profile '" + name_or_path + "' (known in " + profile_dir +
                     ": " + join(known) + "; or give a path to a .yaml file)");
  return load_profile((fs::path(profile_dir) / (name_or_path + ".yaml")).string(), overrides);
}

std::vector<HardwareProfile> list_profiles(const std::string& profile_dir) {
  std::vector<HardwareProfile> profiles;
  for (const std::string& name : profile_names(profile_dir))
    profiles.push_back(load_profile((fs::path(profile_dir) / (name + ".yaml")).string()));
  return profiles;
}

std::string default_profile_dir() {
  if (const char* env = std::getenv("IOSIM_PROFILE_DIR"); env != nullptr && *env != '\0')
    return env;
#ifdef IOSIM_SOURCE_PROFILE_DIR
  {
    std::error_code ec;
    if (fs::is_directory(IOSIM_SOURCE_PROFILE_DIR, ec)) return IOSIM_SOURCE_PROFILE_DIR;
  }
#endif
  // An installed or copied binary: <prefix>/bin/iosim next to <prefix>/hw_profiles.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "hw_profiles";
  return (exe.parent_path() / ".." / "hw_profiles").lexically_normal().string();
}

}  // namespace iosim::profile
