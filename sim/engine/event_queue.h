// The engine's event queue: a 4-ary min-heap of 16-byte entries ordered by
// (time, push order). Four children per node halve the heap's depth against
// a binary heap and keep a node's children in one host cache line; on
// runs with millions of short CTAs (standard attention's row softmax) the
// queue is a tenth of the engine's time.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/common/hd.h"

namespace iosim::engine {

class EventQueue {
 public:
  static constexpr int kPayloadBits = 20;

  struct Entry {
    double t;
    u64 key;  // push order << kPayloadBits | payload
    std::uint32_t payload() const { return static_cast<std::uint32_t>(key & ((u64{1} << kPayloadBits) - 1)); }
  };

  bool empty() const { return heap_.empty(); }

  void push(double t, std::uint32_t payload) {
    if (payload >> kPayloadBits != 0) throw std::logic_error("event payload exceeds 20 bits");
    heap_.push_back({t, next_++ << kPayloadBits | payload});
    sift_up(heap_.size() - 1);
  }

  // Removes and returns the earliest entry (the first pushed among equal times).
  Entry pop() {
    const Entry top = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return top;
  }

 private:
  static bool before(const Entry& a, const Entry& b) { return a.t < b.t || (a.t == b.t && a.key < b.key); }

  void sift_up(size_t i) {
    const Entry e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  void sift_down(size_t i) {
    const Entry e = heap_[i];
    const size_t n = heap_.size();
    for (;;) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t last = first + 4 < n ? first + 4 : n;
      for (size_t c = first + 1; c < last; ++c)
        if (before(heap_[c], heap_[best])) best = c;
      if (!before(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<Entry> heap_;
  u64 next_ = 0;
};

}  // namespace iosim::engine
