#include "sim/trace/trace.h"

#include <stdexcept>

#include "sim/schedule/score_layout.h"

namespace iosim::trace {

void Step::load(const TileAccess& a) {
  if (load_count == kMaxLoads) throw std::logic_error("trace step holds more than kMaxLoads loads");
  loads[static_cast<size_t>(load_count++)] = a;
}

void Step::store(const TileAccess& a) {
  if (store_count == kMaxStores) throw std::logic_error("trace step holds more than kMaxStores stores");
  stores[static_cast<size_t>(store_count++)] = a;
}

namespace {
constexpr u64 kAllocAlign = 2ull << 20;
u64 align_up(u64 v) { return (v + kAllocAlign - 1) / kAllocAlign * kAllocAlign; }
}  // namespace

TensorTable::TensorTable(const workload::Problem& p, i64 splits) {
  using workload::Layout;
  const i64 e = p.elem_bytes();
  auto set = [&](TensorId t, i64 heads, i64 rows, i64 cols, i64 elem, Layout layout, i64 pitch = 0) {
    tensors_[static_cast<int>(t)] = TensorInfo{true, p.batch, heads, rows, cols, elem, layout, 0, pitch > 0 ? pitch : cols};
  };
  const i64 score_pitch = schedule::score_row_pitch(p.seq_k);
  // Q/K/V/O and gradients follow the problem's layout.
  set(TensorId::Q, p.heads, p.seq_q, p.head_dim, e, p.layout);
  set(TensorId::O, p.heads, p.seq_q, p.head_dim, e, p.layout);
  set(TensorId::dO, p.heads, p.seq_q, p.head_dim, e, p.layout);
  set(TensorId::dQ, p.heads, p.seq_q, p.head_dim, e, p.layout);
  set(TensorId::K, p.kv_heads, p.seq_k, p.head_dim, e, p.layout);
  set(TensorId::V, p.kv_heads, p.seq_k, p.head_dim, e, p.layout);
  set(TensorId::dK, p.kv_heads, p.seq_k, p.head_dim, e, p.layout);
  set(TensorId::dV, p.kv_heads, p.seq_k, p.head_dim, e, p.layout);
  // Intermediates and statistics are contiguous per head; the N x N rows padded (score_layout.h).
  for (TensorId t : {TensorId::S, TensorId::P, TensorId::dP, TensorId::dS})
    set(t, p.heads, p.seq_q, p.seq_k, e, Layout::bhsd, score_pitch);
  for (TensorId t : {TensorId::l, TensorId::m, TensorId::L, TensorId::D})
    set(t, p.heads, p.seq_q, 1, schedule::ElementBytes::kStat, Layout::bhsd);
  set(TensorId::dQaccum, p.heads, p.seq_q, p.head_dim, schedule::ElementBytes::kAccum, Layout::bhsd);
  // standard-eager: dropout's output and keep mask; the mask buffer, one for all heads.
  set(TensorId::Pd, p.heads, p.seq_q, p.seq_k, e, Layout::bhsd, score_pitch);
  set(TensorId::Z, p.heads, p.seq_q, p.seq_k, 1, Layout::bhsd, score_pitch);
  tensors_[static_cast<int>(TensorId::Mask)] = TensorInfo{true, 1, 1, p.seq_q, p.seq_k, 1, Layout::bhsd, 0, score_pitch};
  if (splits > 0) {
    set(TensorId::Oaccum, p.heads, splits * p.seq_q, p.head_dim, schedule::ElementBytes::kAccum, Layout::bhsd);
    set(TensorId::LSEaccum, p.heads, splits * p.seq_q, 1, schedule::ElementBytes::kStat, Layout::bhsd);
  }

  u64 next = kAllocAlign;  // keep address 0 unused
  for (auto& t : tensors_) {
    t.base = next;
    next = align_up(next + static_cast<u64>(t.bytes()));
  }
  end_ = next;
}

u64 TensorTable::address(TensorId t, i64 batch, i64 head, i64 row, i64 col) const {
  const TensorInfo& ti = info(t);
  const i64 elem_index = ti.layout == workload::Layout::bshd
                             ? ((batch * ti.rows + row) * ti.heads + head) * ti.pitch + col
                             : ((batch * ti.heads + head) * ti.rows + row) * ti.pitch + col;
  return ti.base + static_cast<u64>(elem_index * ti.elem_bytes);
}

void TensorTable::for_each_segment(const TileAccess& a, const std::function<void(u64, i64)>& fn) const {
  const TensorInfo& ti = info(a.tensor);
  const i64 row_bytes = a.cols * ti.elem_bytes;
  const bool rows_adjacent = ti.layout == workload::Layout::bhsd || ti.heads == 1;
  if (a.cols == ti.cols && ti.pitch == ti.cols && rows_adjacent) {
    fn(address(a.tensor, a.batch, a.head, a.row0, a.col0), a.rows * row_bytes);
    return;
  }
  for (i64 r = 0; r < a.rows; ++r) fn(address(a.tensor, a.batch, a.head, a.row0 + r, a.col0), row_bytes);
}

}  // namespace iosim::trace
