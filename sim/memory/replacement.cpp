#include "sim/memory/replacement.h"

#include "sim/common/error.h"

namespace iosim::memory {

namespace {

class Lru final : public ReplacementPolicy {
 public:
  std::string_view name() const override { return "lru"; }
  u64 fill_stamp(u64 now, u64) const override { return now; }
  bool hit_refreshes() const override { return true; }
};

class Fifo final : public ReplacementPolicy {
 public:
  std::string_view name() const override { return "fifo"; }
  u64 fill_stamp(u64 now, u64) const override { return now; }
  bool hit_refreshes() const override { return false; }
};

// splitmix64 finaliser: a deterministic stand-in for the hardware's random bit.
u64 mix(u64 x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class Bip final : public ReplacementPolicy {
 public:
  static constexpr u64 kMruOneIn = 32;  // Qureshi et al.'s epsilon = 1/32
  std::string_view name() const override { return "bip"; }
  u64 fill_stamp(u64 now, u64 line) const override { return mix(line * 0x100000001b3ull ^ now) % kMruOneIn == 0 ? now : 0; }
  bool hit_refreshes() const override { return true; }
};

}  // namespace

std::vector<std::string> replacement_policy_names() { return {"lru", "fifo", "bip"}; }

std::unique_ptr<ReplacementPolicy> make_replacement_policy(std::string_view name) {
  if (name == "lru") return std::make_unique<Lru>();
  if (name == "fifo") return std::make_unique<Fifo>();
  if (name == "bip") return std::make_unique<Bip>();
  throw InputError("unknown L2 replacement policy '" + std::string(name) + "' (valid: lru, fifo, bip)");
}

}  // namespace iosim::memory
