// Which L2 model reproduces the H200's home-half sweeps (experiments/results/2026-11-28-h200-l2-home-sweep)?
// A plain, slow, line-by-line model of the four sweeps (mixed, own, other, cross) under three
// candidate L2s, printing each one's half-hit working set beside the measured one:
//   effective  iosim's L2 today: one slot per line, the capacity calibrate's sweep measured (44.79 MiB);
//   physical   one slot per line, the whole 60 MiB, no copies;
//   copies     the whole 60 MiB; a line lives in the half of its set (sets alternate halves); a read
//              from the other half also allocates the line in the mirror set of the reader's half
//              (a second slot, its own LRU age), and finds it there next time (a near hit).
// Each set is 16-way LRU; the set of a line is a hash of its index. The sweeps run as the probe's:
// 132 SMs in two halves of 66, 32 warps each, one chain per warp (two warps per chain in `cross`),
// the warps taking turns line by line (a chain's two warps in `cross` together: the second waits for
// the first's data); a cold pass after an empty cache, then 3 warm passes. A load
// costs the profile's near (288.94) or far (463.50) hit latency, or on a miss the probe's measured
// cold latency of that sweep (one of the measured inputs, not fitted); the hit fraction is the
// probe's: (cold - warm) / (cold - hit), hit = the warm latency at the smallest working set.
//
//   g++ -O2 -std=c++20 experiments/probes/l2_copy_model.cpp -o l2_copy_model && ./l2_copy_model
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using u64 = std::uint64_t;
constexpr int kWays = 16;
constexpr u64 kLine = 128;
constexpr double kNear = 288.94, kFar = 463.504;
constexpr int kSms = 132, kWarpsPerSm = 32, kWarmPasses = 3;

u64 mix(u64 x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A 16-way LRU cache of tagged entries; a tag is (line << 1 | copy).
class Cache {
 public:
  explicit Cache(u64 bytes) : sets_(bytes / kLine / kWays), tag_(sets_ * kWays, ~u64{0}), age_(sets_ * kWays, 0) {}
  u64 sets() const { return sets_; }
  // True on a hit; on a miss the entry is allocated (LRU victim). Either way it becomes the newest.
  bool touch(u64 set, u64 tag, bool oldest_if_new = false) {
    const u64 base = set * kWays;
    ++clock_;
    int victim = 0;
    for (int w = 0; w < kWays; ++w) {
      if (tag_[base + w] == tag) {
        age_[base + w] = clock_;
        return true;
      }
      if (age_[base + w] < age_[base + victim]) victim = w;
    }
    tag_[base + victim] = tag;
    age_[base + victim] = oldest_if_new ? 0 : clock_;  // 0: the next victim unless it is hit first
    return false;
  }
  bool has(u64 set, u64 tag) const {
    for (int w = 0; w < kWays; ++w)
      if (tag_[set * kWays + w] == tag) return true;
    return false;
  }

 private:
  u64 sets_;
  std::vector<u64> tag_, age_;
  u64 clock_ = 0;
};

enum class Model { effective, physical, copies, copies_refresh, copies_low };

struct Load {
  int half;  // the reader's half
  u64 line;
};

// The loads of one pass, in the order the warps take turns.
std::vector<Load> pass_order(const std::string& mode, u64 lines, u64 sets) {
  const int warps_per_half = kSms / 2 * kWarpsPerSm;
  std::array<std::vector<u64>, 2> of_half;  // the lines each half's warps chase
  if (mode == "mixed") {
    for (u64 i = 0; i < lines; ++i) of_half[(i % kSms) < kSms / 2 ? 0 : 1].push_back(i);
  } else if (mode == "cross") {
    for (u64 i = 0; i < lines; ++i) of_half[0].push_back(i), of_half[1].push_back(i);
  } else {  // own / other: lines by home (the parity of their set), the working set from both homes
    for (u64 i = 0, taken = 0; taken < lines; ++i) {
      const int home = static_cast<int>(mix(i) % sets & 1);
      of_half[mode == "own" ? home : 1 - home].push_back(i);
      ++taken;
    }
  }
  std::vector<Load> out;
  // Warp r of half h chases lines r, r + W, ... of of_half[h]; warps take turns line by line.
  std::array<size_t, 2> per_warp{(of_half[0].size() + warps_per_half - 1) / warps_per_half,
                                 (of_half[1].size() + warps_per_half - 1) / warps_per_half};
  const size_t steps = std::max(per_warp[0], per_warp[1]);
  for (size_t k = 0; k < steps; ++k)
    for (int r = 0; r < warps_per_half; ++r)
      for (int h = 0; h < 2; ++h) {
        const size_t i = k * warps_per_half + r;
        if (i < of_half[h].size()) out.push_back({h, of_half[h][i]});
      }
  return out;
}

// Mean warm latency per load of a sweep, given the cold (miss) latency.
double warm_latency(Model model, const std::string& mode, u64 ws_bytes, double miss_latency) {
  const u64 bytes = model == Model::effective ? 46964736ull : 62914560ull;
  Cache cache(bytes);
  const u64 sets = cache.sets();
  const std::vector<Load> order = pass_order(mode, ws_bytes / kLine, sets);
  double total = 0;
  u64 n = 0;
  u64 previous_line = ~u64{0};
  double previous_cost = 0;
  for (int pass = 0; pass <= kWarmPasses; ++pass)
    for (const Load& l : order) {
      const u64 set = mix(l.line) % sets;
      const int home = static_cast<int>(set & 1);
      double cost = 0;
      const bool copies = model == Model::copies || model == Model::copies_refresh || model == Model::copies_low;
      if (!copies || l.half == home) {
        cost = cache.touch(set, l.line << 1) ? (l.half == home ? kNear : kFar) : miss_latency;
      } else {
        const u64 mirror = set ^ 1;
        if (cache.touch(mirror, l.line << 1 | 1, model == Model::copies_low)) {
          cost = kNear;
          if (model == Model::copies_refresh) cache.touch(set, l.line << 1);
        } else {
          cost = cache.touch(set, l.line << 1) ? kFar : miss_latency;
        }
      }
      // `cross`: the chain's two warps ask for the line together; the second waits for the first's data.
      if (l.line == previous_line) cost = std::max(cost, previous_cost);
      previous_line = l.line;
      previous_cost = cost;
      if (pass > 0) total += cost, ++n;
    }
  return total / static_cast<double>(n);
}

}  // namespace

int main() {
  struct Sweep {
    const char* mode;
    double cold;           // the probe's measured cold latency (cycles per load)
    double measured_half;  // the probe's half-hit working set (MiB)
  };
  const Sweep sweeps[] = {{"mixed", 690, 45.5}, {"own", 600, 63.4}, {"other", 784, 34.2}, {"cross", 633, 31.5}};
  std::printf("| sweep | measured (MiB) | effective 44.79 MiB | physical 60 MiB | copies | copies, a near hit refreshes the home | copies inserted oldest |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (const Sweep& s : sweeps) {
    std::printf("| %s | %.1f", s.mode, s.measured_half);
    for (const Model m : {Model::effective, Model::physical, Model::copies, Model::copies_refresh, Model::copies_low}) {
      std::vector<std::pair<double, double>> pts;  // (MiB, fraction)
      double hit = 0;
      for (int k = -16; k <= 8; ++k) {
        if (k > -16 && k < -12) continue;  // 15 MiB gives the hit latency; the knees lie above 25 MiB
        const double mib = 60.0 * std::pow(2.0, k / 8.0);
        const double warm = warm_latency(m, s.mode, static_cast<u64>(mib * 1048576.0 / kLine) * kLine, s.cold);
        if (k == -16) {
          hit = warm;
          continue;
        }
        pts.push_back({mib, std::clamp((s.cold - warm) / (s.cold - hit), 0.0, 1.0)});
      }
      double half = 0;
      for (size_t i = 1; i < pts.size() && half == 0; ++i)
        if (pts[i - 1].second >= 0.5 && pts[i].second < 0.5)
          half = pts[i - 1].first +
                 (pts[i - 1].second - 0.5) / (pts[i - 1].second - pts[i].second) * (pts[i].first - pts[i - 1].first);
      std::printf(" | %.1f", half);
    }
    std::printf(" |\n");
    std::fflush(stdout);
  }
  return 0;
}
