// L2 replacement policies, chosen by name. A policy works on recency stamps:
// each line carries a stamp, the victim in a set is the valid line with the
// lowest stamp (an empty way first, ties to the lowest way). Policies differ
// in the stamp a line gets when it is filled and whether a hit refreshes it.
// Keeping the state this small lets the cache refresh a whole tile's lines in
// O(1) (see L2Cache's tile records), and each policy here is exact under it.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/hd.h"

namespace iosim::memory {

class ReplacementPolicy {
 public:
  virtual ~ReplacementPolicy() = default;
  virtual std::string_view name() const = 0;
  // Stamp for a line filled by access number `now` (stamps grow with time).
  virtual u64 fill_stamp(u64 now, u64 line) const = 0;
  // True when a hit sets the line's stamp to `now`.
  virtual bool hit_refreshes() const = 0;
};

// lru:  fill -> now, hit -> now (least recently used is evicted).
// fifo: fill -> now, hits ignored (oldest fill is evicted).
// bip:  bimodal insertion (Qureshi et al., ISCA 2007): a fill goes to the LRU
//       position (stamp 0) except one in 32 (chosen by a hash of line and time)
//       that goes to MRU; hit -> now. Thrash-resistant: a cyclic sweep larger
//       than the cache keeps part of its lines, as the H200's L2 does.
// Throws iosim::InputError listing the valid names.
std::unique_ptr<ReplacementPolicy> make_replacement_policy(std::string_view name);

// The same policies as plain data, for the L2's per-line hot path (no virtual
// call per line). `bip` fills go to MRU when bip_mru(now, line) is true.
struct ReplacementRule {
  bool hit_refreshes = true;
  bool bimodal = false;
  static constexpr u64 kMruOneIn = 32;  // Qureshi et al.'s epsilon = 1/32
  // splitmix64 finaliser: a deterministic stand-in for the hardware's random bit.
  static u64 mix(u64 x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  u64 fill_stamp(u64 now, u64 line) const {
    if (!bimodal) return now;
    return mix(line * 0x100000001b3ull ^ now) % kMruOneIn == 0 ? now : 0;
  }
};
// Throws iosim::InputError listing the valid names.
ReplacementRule replacement_rule(std::string_view name);
std::vector<std::string> replacement_policy_names();

}  // namespace iosim::memory
