#include "sim/engine/fast_forward.h"

#include <algorithm>
#include <cmath>

namespace iosim::engine {

void SkipTally::add(const trace::RangeStep& step, i64 weight) {
  steps += weight;
  for (const auto* list : {&step.loads, &step.stores})
    for (const auto& a : *list) {
      kind_bytes[static_cast<size_t>(a.kind)] += a.bytes() * weight;
      const auto t = static_cast<size_t>(a.tensor);
      if (t >= tensor_bytes.size()) tensor_bytes.resize(t + 1);
      tensor_bytes[t][a.kind == trace::AccessKind::Read ? 0 : 1] += a.bytes() * weight;
    }
}

namespace {

i64 times(double f, i64 v) { return static_cast<i64>(std::llround(f * static_cast<double>(v))); }
double ratio(i64 a, i64 b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

}  // namespace

memory::MemoryCounters charge_memory(const memory::MemoryCounters& window, const SkipTally& skipped,
                                     trace::TensorIndex local_tensor, i64 sector, double& f) {
  const auto local = static_cast<size_t>(local_tensor);
  const auto& wt = window.l2.tensor;
  const i64 local_bytes = local < wt.size() ? wt[local].read_bytes + wt[local].write_bytes : 0;
  f = ratio(skipped.bytes(), window.l2.total().bytes - local_bytes);
  const std::array<i64, 2> spills{skipped.spill_read_bytes, skipped.spill_write_bytes};
  memory::MemoryCounters c;
  // By access kind: the window's outcomes per requested byte of the kind
  // (spills are reads and writes too).
  for (size_t k = 0; k < c.l2.kind.size(); ++k) {
    const auto& a = window.l2.kind[k];
    const i64 mine = skipped.kind_bytes[k] + (k < spills.size() ? spills[k] : 0);
    const double fk = ratio(mine, a.bytes);
    auto& b = c.l2.kind[k];
    b.requests = times(fk, a.requests);
    b.merged_requests = times(fk, a.merged_requests);
    b.sectors = times(fk, a.sectors);
    b.hit_sectors = times(fk, a.hit_sectors);
    b.miss_sectors = b.sectors - b.hit_sectors;
    b.lookup_sectors = times(fk, a.lookup_sectors);
    b.lookup_hit_sectors = times(fk, a.lookup_hit_sectors);
    b.lookup_miss_sectors = b.lookup_sectors - b.lookup_hit_sectors;
    b.bytes = mine;
  }
  // By tensor: its outcomes (fills, write-backs of its dirty lines) per
  // requested byte of that tensor, so that work the skipped steps do not do
  // (a CTA's closing store, when other CTAs close during the window) is not
  // charged to them.
  c.l2.tensor.resize(std::max({wt.size(), skipped.tensor_bytes.size(), local + 1}));
  i64 window_fetch = 0, window_writeback = 0;
  for (size_t t = 0; t < c.l2.tensor.size(); ++t) {
    const memory::L2TensorCounts a = t < wt.size() ? wt[t] : memory::L2TensorCounts{};
    const std::array<i64, 2> mine = t == local                         ? spills
                                    : t < skipped.tensor_bytes.size() ? skipped.tensor_bytes[t]
                                                                      : std::array<i64, 2>{};
    const double ft = ratio(mine[0] + mine[1], a.read_bytes + a.write_bytes);
    auto& b = c.l2.tensor[t];
    b.read_bytes = mine[0];
    b.write_bytes = mine[1];
    b.hit_sectors = times(ft, a.hit_sectors);
    b.miss_sectors = times(ft, a.miss_sectors);
    b.fetch_sectors = times(ft, a.fetch_sectors);
    b.writeback_sectors = times(ft, a.writeback_sectors);
    c.l2.fetch_sectors += b.fetch_sectors;
    c.l2.writeback_sectors += b.writeback_sectors;
    window_fetch += a.fetch_sectors;
    window_writeback += a.writeback_sectors;
  }
  const double f_fetch = ratio(c.l2.fetch_sectors, window_fetch);
  const double f_writeback = ratio(c.l2.writeback_sectors, window_writeback);
  c.l2.early_writeback_sectors = times(f_writeback, window.l2.early_writeback_sectors);
  // DRAM: reads are the fills, writes the write-backs.
  c.dram.read_bytes = times(f_fetch, window.dram.read_bytes / sector) * sector;
  c.dram.write_bytes = times(f_writeback, window.dram.write_bytes / sector) * sector;
  const i64 window_dram = window.dram.read_bytes + window.dram.write_bytes;
  c.dram.busy_cycles = ratio(c.dram.read_bytes + c.dram.write_bytes, window_dram) * window.dram.busy_cycles;
  c.l2_busy_cycles = f * window.l2_busy_cycles;
  return c;
}

namespace {

u64 mix(u64 h, u64 v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

// A step's shape: its accesses' kinds, tensors and sizes, and its program.
u64 step_shape(const trace::RangeStep& s) {
  u64 h = mix(0, static_cast<u64>(s.loads.size()) << 32 | static_cast<u64>(s.stores.size()));
  for (const auto* list : {&s.loads, &s.stores})
    for (const auto& a : *list) {
      h = mix(h, static_cast<u64>(a.kind) << 40 | static_cast<u64>(a.tensor));
      h = mix(h, static_cast<u64>(a.row_bytes));
      h = mix(h, static_cast<u64>(a.rows));
      h = mix(h, static_cast<u64>(a.stride));
    }
  return mix(h, static_cast<u64>(static_cast<std::int64_t>(s.compute.program)));
}

}  // namespace

StepPattern step_pattern(const trace::RangeKernel& kernel, i64 cta) {
  constexpr i64 kShapes = i64{1} << 14;  // the period is sought in the first 16,384 steps
  constexpr i64 kMaxPeriod = 1024;
  constexpr i64 kEdge = 2;  // prologue and closing steps allowed
  const schedule::Dim3 g = kernel.grid();
  auto cursor = kernel.open_cta(cta % g.x, (cta / g.x) % g.y, cta / (g.x * g.y));
  std::vector<u64> shape;
  trace::RangeStep step;
  u64 all = 0;
  StepPattern p;
  while (cursor->next(step)) {
    const u64 h = step_shape(step);
    all = mix(all, h);
    if (p.steps++ < kShapes) shape.push_back(h);
  }
  p.signature = mix(all, static_cast<u64>(p.steps));
  const i64 n = static_cast<i64>(shape.size());
  for (i64 period = 1; period * 4 <= n && period <= kMaxPeriod; ++period)
    for (i64 pro = 0; pro <= kEdge; ++pro) {
      // Steps [pro, end) repeat with this period.
      i64 k = pro;
      while (k + period < n && shape[static_cast<size_t>(k)] == shape[static_cast<size_t>(k + period)]) ++k;
      const i64 end = k + period;
      // What does not repeat at the end: at most a period and kEdge steps
      // (a last, shorter K/V block), or all we did not look at.
      const i64 closing = p.steps - end;
      if (end - pro >= 4 * period && (n < p.steps || closing <= period + kEdge)) {
        p.period = period;
        p.prologue = pro;
        p.closing = closing;
        return p;
      }
    }
  return p;
}

}  // namespace iosim::engine
