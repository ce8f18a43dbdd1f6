// The engine's event queue. Every resident CTA slot has at most one pending
// event (its dispatch, its next step's compute start, or its compute end),
// and the handler of a slot's event nearly always schedules that slot's next
// one. So the queue is a tournament (winner) tree over the slots: popping
// reads the root, and rescheduling the popped slot replays one leaf-to-root
// path of branch-free comparisons. On runs with hundreds of thousands of
// short CTAs this costs a fraction of a binary or 4-ary heap's pop and push,
// whose sift loops branch unpredictably.
//
// Order: earliest time first; equal times in push order (a 64-bit sequence
// number), the same total order a heap keyed on (time, push order) gives.
#pragma once
#include <bit>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "sim/common/hd.h"

namespace iosim::engine {

class EventQueue {
 public:
  static constexpr int kKindBits = 2;
  static constexpr int kSlotBits = 18;  // at most 2^18 resident CTAs

  struct Entry {
    double t;
    std::uint32_t slot;
    std::uint32_t kind;
  };

  explicit EventQueue(std::uint32_t slots) : slots_(slots) {
    if (slots > (1u << kSlotBits)) throw std::logic_error("more than 2^18 event slots");
    while (leaves_ < slots) leaves_ *= 2;
    node_.assign(2 * static_cast<size_t>(leaves_), kEmpty);
  }

  // Schedules `slot`'s event (the slot must have none pending, except the one
  // just popped, which this replaces).
  void push(std::uint32_t slot, double t, std::uint32_t kind) {
    if (slot >= slots_ || kind >= (1u << kKindBits)) throw std::logic_error("event slot or kind out of range");
    if (!(t >= 0 && t < kNever)) throw std::logic_error("event time must be finite and >= 0");
    Key& leaf = node_[leaves_ + slot];
    if (leaf != kEmpty && slot != popped_) throw std::logic_error("a slot already has a pending event");
    const u64 order = (next_++ << kSlotBits | slot) << kKindBits | kind;
    leaf = static_cast<Key>(std::bit_cast<u64>(t + 0.0)) << 64 | order;  // + 0.0: no -0.0
    if (slot == popped_) popped_ = kNone;
    replay(slot);
  }

  // Takes the earliest event; false when none is pending.
  bool pop(Entry& out) {
    if (popped_ != kNone) remove(popped_);
    const Key top = node_[1];
    if (top == kEmpty) return false;
    const auto order = static_cast<u64>(top);
    out = {std::bit_cast<double>(static_cast<u64>(top >> 64)),
           static_cast<std::uint32_t>(order >> kKindBits) & ((1u << kSlotBits) - 1),
           static_cast<std::uint32_t>(order & ((1u << kKindBits) - 1))};
    popped_ = out.slot;  // removed lazily: its handler usually reschedules it
    return true;
  }

 private:
  // An event as one 128-bit key: the time's bits (a non-negative double's bits
  // order as the double does) above (push order << kSlotBits | slot) <<
  // kKindBits | kind, so one integer comparison orders by time, then push order.
  using Key = unsigned __int128;
  static constexpr Key kEmpty = ~Key{0};
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  void remove(std::uint32_t slot) {
    node_[leaves_ + slot] = kEmpty;
    popped_ = kNone;
    replay(slot);
  }

  // The winner travels in registers and only siblings are loaded, so the
  // loads of a path do not wait on its stores.
  void replay(std::uint32_t slot) {
    std::uint32_t i = leaves_ + slot;
    Key winner = node_[i];
    for (; i > 1; i /= 2) {
      const Key sibling = node_[i ^ 1u];
      winner = sibling < winner ? sibling : winner;
      node_[i / 2] = winner;
    }
  }

  std::uint32_t slots_;
  std::uint32_t leaves_ = 1;
  std::vector<Key> node_;  // [1] is the root; leaves at [leaves_, 2 * leaves_)
  std::uint32_t popped_ = kNone;
  u64 next_ = 0;
};

}  // namespace iosim::engine
