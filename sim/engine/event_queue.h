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
    node_.assign(2 * static_cast<size_t>(leaves_), Node{});
    for (std::uint32_t i = leaves_ - 1; i >= 1; --i) node_[i] = better(node_[2 * i], node_[2 * i + 1]);
  }

  // Schedules `slot`'s event (the slot must have none pending, except the one
  // just popped, which this replaces).
  void push(std::uint32_t slot, double t, std::uint32_t kind) {
    if (slot >= slots_ || kind >= (1u << kKindBits)) throw std::logic_error("event slot or kind out of range");
    Node& leaf = node_[leaves_ + slot];
    if (leaf.t != kEmpty && slot != popped_) throw std::logic_error("a slot already has a pending event");
    leaf.t = t;
    leaf.order = (next_++ << kSlotBits | slot) << kKindBits | kind;
    if (slot == popped_) popped_ = kNone;
    replay(slot);
  }

  // Takes the earliest event; false when none is pending.
  bool pop(Entry& out) {
    if (popped_ != kNone) remove(popped_);
    const Node& top = node_[1];
    if (top.t == kEmpty) return false;
    out = {top.t, top.slot(), static_cast<std::uint32_t>(top.order & ((1u << kKindBits) - 1))};
    popped_ = out.slot;  // removed lazily: its handler usually reschedules it
    return true;
  }

 private:
  static constexpr double kEmpty = std::numeric_limits<double>::infinity();
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  struct Node {
    double t = kEmpty;
    u64 order = ~u64{0};  // (push order << kSlotBits | slot) << kKindBits | kind
    std::uint32_t slot() const { return static_cast<std::uint32_t>(order >> kKindBits) & ((1u << kSlotBits) - 1); }
  };

  static Node better(const Node& a, const Node& b) {
    const bool b_first = (b.t < a.t) | ((b.t == a.t) & (b.order < a.order));
    return b_first ? b : a;
  }

  void remove(std::uint32_t slot) {
    Node& leaf = node_[leaves_ + slot];
    leaf = Node{};
    popped_ = kNone;
    replay(slot);
  }

  // The winner travels in registers and only siblings are loaded, so the
  // loads of a path do not wait on its stores.
  void replay(std::uint32_t slot) {
    std::uint32_t i = leaves_ + slot;
    Node winner = node_[i];
    for (; i > 1; i /= 2) {
      winner = better(winner, node_[i ^ 1u]);
      node_[i / 2] = winner;
    }
  }

  std::uint32_t slots_;
  std::uint32_t leaves_ = 1;
  std::vector<Node> node_;  // [1] is the root; leaves at [leaves_, 2 * leaves_)
  std::uint32_t popped_ = kNone;
  u64 next_ = 0;
};

}  // namespace iosim::engine
