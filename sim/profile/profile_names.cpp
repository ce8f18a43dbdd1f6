#include "sim/profile/profile_names.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "sim/common/error.h"

namespace iosim::profile {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || (s.size() >= 5 && s.substr(s.size() - 5) == ".yaml");
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Edit distance (insertions, deletions, substitutions), for "did you mean".
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// Names and aliases within a few edits of the query, closest first.
std::vector<std::string> suggestions(const std::string& query, const std::vector<std::string>& known) {
  std::vector<std::pair<size_t, std::string>> scored;
  auto consider = [&](const std::string& candidate, const std::string& shown) {
    // From 3 characters on, also compare with the candidate's start as long as
    // the query, so "h1000" is near "h100-sxm5-80gb".
    size_t d = edit_distance(query, candidate);
    if (query.size() >= 3) d = std::min(d, edit_distance(query, candidate.substr(0, query.size())));
    if (d < query.size() && d <= std::max<size_t>(1, query.size() / 3)) scored.emplace_back(d, shown);
  };
  for (const auto& name : known) consider(lower(name), name);
  for (const auto& a : kProfileAliases)
    if (std::find(known.begin(), known.end(), a.profile) != known.end())
      consider(std::string(a.alias), std::string(a.alias) + " (" + std::string(a.profile) + ")");
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, shown] : scored)
    if (std::find(out.begin(), out.end(), shown) == out.end()) out.push_back(shown);
  return out;
}

}  // namespace

std::vector<std::string> profile_names_in(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError("profile directory '" + dir +
                     "' does not exist (set IOSIM_PROFILE_DIR, or pass a path to a .yaml file)");
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolve_profile_name(std::string_view query, const std::vector<std::string>& known,
                                 const std::string& dir_for_messages) {
  const std::string q = lower(query);
  for (const auto& name : known)
    if (lower(name) == q) return name;
  for (const auto& a : kProfileAliases)
    if (a.alias == q && std::find(known.begin(), known.end(), a.profile) != known.end()) return std::string(a.profile);
  std::vector<std::string> starts;
  for (const auto& name : known)
    if (!q.empty() && lower(name).rfind(q, 0) == 0) starts.push_back(name);
  if (starts.size() == 1) return starts.front();
  if (starts.size() > 1)
    throw InputError("hardware profile '" + std::string(query) + "' is ambiguous: it starts " + joined(starts) +
                     " (give more of the name)");
  const auto near = suggestions(q, known);
  throw InputError("unknown hardware profile '" + std::string(query) + "'" +
                   (near.empty() ? "" : "; did you mean " + joined(near) + "?") + " (known in " + dir_for_messages +
                   ": " + joined(known) + "; or give a path to a .yaml file)");
}

HardwareProfile find_profile_by_any_name(const std::string& query, const std::string& profile_dir,
                                         const std::vector<ProfileOverride>& overrides) {
  if (looks_like_path(query)) return load_profile(query, overrides);
  return find_profile(resolve_profile_name(query, profile_names_in(profile_dir), profile_dir), profile_dir, overrides);
}

std::vector<std::string> aliases_of(std::string_view name) {
  std::vector<std::string> out;
  for (const auto& a : kProfileAliases)
    if (a.profile == name && a.alias != name) out.emplace_back(a.alias);
  return out;
}

}  // namespace iosim::profile
