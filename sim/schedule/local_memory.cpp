#include "sim/schedule/local_memory.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace iosim::schedule {

namespace {

struct Row {
  bool backward;
  int d, bm, bn;
  LocalRegion region;
  const char* tokens;
};

constexpr bool fwd = false, bwd = true;
constexpr LocalRegion prologue = LocalRegion::prologue, masked_prologue = LocalRegion::masked_prologue,
                      masked_entry = LocalRegion::masked_entry, step = LocalRegion::step, masked = LocalRegion::masked,
                      epilogue = LocalRegion::epilogue, first = LocalRegion::first,
                      masked_first = LocalRegion::masked_first;
constexpr Row kRows[] = {
#define X(pass, d, bm, bn, region, tokens) {pass, d, bm, bn, region, tokens},
#include "sim/schedule/fa2_local_memory.inc"
#undef X
};

// Indexed tables' lines: words past any stack frame (the largest is 1376 B).
constexpr std::int32_t kTableWord = 1 << 20;

bool number(std::string_view s, int& v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

LocalAccess parse(std::string_view t, const char* row) {
  const std::optional<LocalAccess> a = parse_local_token(t);
  if (!a)
    throw std::logic_error(std::string("fa2_local_memory.inc: bad token '") + std::string(t) + "' in \"" + row + "\"");
  return *a;
}

std::vector<LocalAccess> parse_row(const char* tokens) {
  std::vector<LocalAccess> out;
  std::string_view s(tokens);
  while (!s.empty()) {
    const size_t sp = s.find(' ');
    const std::string_view t = s.substr(0, sp);
    if (!t.empty()) out.push_back(parse(t, tokens));
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
  }
  return out;
}

using Key = std::tuple<bool, int, int, int, LocalRegion>;

const std::map<Key, std::vector<LocalAccess>>& table() {
  static const std::map<Key, std::vector<LocalAccess>> t = [] {
    std::map<Key, std::vector<LocalAccess>> m;
    for (const Row& r : kRows) m[{r.backward, r.d, r.bm, r.bn, r.region}] = parse_row(r.tokens);
    return m;
  }();
  return t;
}

}  // namespace

// "L4+52@20" -> {load, 4, word 13, 20}; "U8t1" -> {last_load, 8, table 1, -1}.
std::optional<LocalAccess> parse_local_token(std::string_view t) {
  LocalAccess a;
  if (t.empty()) return std::nullopt;
  switch (t.front()) {
    case 'L': a.kind = LocalAccess::Kind::load; break;
    case 'U': a.kind = LocalAccess::Kind::last_load; break;
    case 'S': a.kind = LocalAccess::Kind::store; break;
    default: return std::nullopt;
  }
  t.remove_prefix(1);
  const size_t at = t.find('@');
  if (at != std::string_view::npos) {
    if (!number(t.substr(at + 1), a.use_distance) || a.use_distance < 0) return std::nullopt;
    t = t.substr(0, at);
  }
  const size_t where = t.find_first_of("+t");
  int n = 0;
  if (where == std::string_view::npos || !number(t.substr(0, where), a.lane_bytes) || !number(t.substr(where + 1), n) ||
      (a.lane_bytes != 4 && a.lane_bytes != 8 && a.lane_bytes != 16) || n < 0 || (t[where] == '+' && n % 4 != 0) ||
      n >= kTableWord)
    return std::nullopt;
  a.word = t[where] == '+' ? n / 4 : kTableWord + n;
  return a;
}

std::string local_token(const LocalAccess& a) {
  std::string s(1, a.kind == LocalAccess::Kind::load ? 'L' : a.kind == LocalAccess::Kind::last_load ? 'U' : 'S');
  s.append(std::to_string(a.lane_bytes));
  s.push_back(a.word >= kTableWord ? 't' : '+');
  s.append(std::to_string(a.word >= kTableWord ? a.word - kTableWord : 4 * a.word));
  if (a.use_distance >= 0) {
    s.push_back('@');
    s.append(std::to_string(a.use_distance));
  }
  return s;
}

const std::vector<LocalAccess>& fa2_local_accesses(bool backward, int d, int bm, int bn, LocalRegion region) {
  static const std::vector<LocalAccess> none;
  const auto& t = table();
  const auto it = t.find({backward, d, bm, bn, region});
  if (it != t.end()) return it->second;
  if (region == LocalRegion::first) return fa2_local_accesses(backward, d, bm, bn, LocalRegion::step);
  if (region == LocalRegion::masked_first) return fa2_local_accesses(backward, d, bm, bn, LocalRegion::masked);
  return none;
}

std::vector<bool> local_hits(const std::vector<LocalAccess>& seq, i64 resident_warps, i64 l1_bytes, bool repeating) {
  // The (access, line) touches of one pass, in order.
  std::vector<std::pair<size_t, std::int32_t>> touches;
  for (size_t i = 0; i < seq.size(); ++i)
    for (std::int32_t k = 0; k < seq[i].lines(); ++k) touches.emplace_back(i, seq[i].word + k);
  const size_t n = touches.size();
  const i64 capacity = l1_bytes / 128;
  // A word the sequence loads but never stores was spilled before it (the
  // prologue): its line stays while all the warps' lines fit.
  std::unordered_set<std::int32_t> distinct;
  for (const auto& [i, line] : touches) distinct.insert(line);
  const bool frame_fits = resident_warps * static_cast<i64>(distinct.size()) < capacity;
  std::vector<bool> hit(seq.size(), true);
  std::unordered_map<std::int32_t, bool> dead;  // lines seen going back, and whether a last-use load dropped them
  for (size_t j = 0; j < n; ++j) {
    const auto [i, line] = touches[j];
    if (!seq[i].is_load()) continue;
    dead.clear();
    bool found = false, dropped = false;
    for (size_t k = 1; k <= (repeating ? n : j); ++k) {  // back through the previous pass
      const auto [other_i, other] = touches[(j + n - k) % n];
      if (other == line) {
        found = true;
        dropped = seq[other_i].kind == LocalAccess::Kind::last_load;
        break;
      }
      dead.try_emplace(other, seq[other_i].kind == LocalAccess::Kind::last_load);  // the latest touch decides
    }
    i64 live = 0;
    for (const auto& [l, is_dead] : dead) live += is_dead ? 0 : 1;
    if (!found ? !frame_fits : dropped || resident_warps * live >= capacity) hit[i] = false;
  }
  return hit;
}

i64 l1_bytes_beside_smem(i64 l1_smem_bytes, i64 smem_bytes, int cc_major, int cc_minor) {
  // The carve-outs each architecture offers, KiB (CUDA C++ Programming Guide,
  // the compute capabilities' shared-memory sections); others: exactly what
  // the CTAs take.
  static const std::vector<i64> cc70 = {0, 8, 16, 32, 64, 96}, cc75 = {32, 64},
                                 cc80 = {0, 8, 16, 32, 64, 100, 132, 164}, cc86 = {0, 8, 16, 32, 64, 100},
                                 cc90 = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  const std::vector<i64>* options = cc_major == 9                         ? &cc90
                                    : cc_major == 8 && cc_minor == 0      ? &cc80
                                    : cc_major == 8                       ? &cc86
                                    : cc_major == 7 && cc_minor == 5      ? &cc75
                                    : cc_major == 7                       ? &cc70
                                                                          : nullptr;
  i64 carveout = smem_bytes;
  if (options) {
    const auto it = std::find_if(options->begin(), options->end(), [&](i64 kib) { return kib * 1024 >= smem_bytes; });
    carveout = it == options->end() ? options->back() * 1024 : *it * 1024;
  }
  return std::max<i64>(0, l1_smem_bytes - carveout);
}

}  // namespace iosim::schedule
