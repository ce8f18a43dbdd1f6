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

class Bip final : public ReplacementPolicy {
 public:
  std::string_view name() const override { return "bip"; }
  u64 fill_stamp(u64 now, u64 line) const override { return rule_.fill_stamp(now, line); }
  bool hit_refreshes() const override { return true; }

 private:
  ReplacementRule rule_{true, true};
};

}  // namespace

std::vector<std::string> replacement_policy_names() { return {"lru", "fifo", "bip"}; }

std::unique_ptr<ReplacementPolicy> make_replacement_policy(std::string_view name) {
  if (name == "lru") return std::make_unique<Lru>();
  if (name == "fifo") return std::make_unique<Fifo>();
  if (name == "bip") return std::make_unique<Bip>();
  throw InputError("unknown L2 replacement policy '" + std::string(name) + "' (valid: lru, fifo, bip)");
}

ReplacementRule replacement_rule(std::string_view name) {
  const auto policy = make_replacement_policy(name);  // validates the name
  return {policy->hit_refreshes(), name == "bip"};
}

}  // namespace iosim::memory
