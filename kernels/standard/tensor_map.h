// Where each tensor of a standard-attention plan lives in device memory: its
// pointer and element strides. Host code, shared by the launchers
// (standard_attention.cu) and the cuBLAS peer benchmark (kernels/peer/), so
// the peer multiplies exactly the operands our GEMMs multiply.
//
// Q, O, dO, dQ on the query side and K, V, dK, dV on the key side follow the
// problem's layout; S, P, dP, dS, Pd and the keep mask Z are
// [batch][heads][seq_q][pitch], rows padded to schedule::score_row_pitch
// (sim/schedule/score_layout.h, shared with the trace's TensorTable); the mask
// buffer is one [seq_q][pitch] matrix for every head.
#pragma once
#include <array>

#include "kernels/common/attention_api.h"
#include "kernels/standard/standard_gemm.h"
#include "sim/schedule/plan.h"
#include "sim/schedule/score_layout.h"

namespace iosim::kernels::detail {

inline Strides score_strides(const workload::Problem& p) {
  const i64 head = schedule::score_matrix_elems(p.seq_q, p.seq_k);
  return {p.heads * head, head, schedule::score_row_pitch(p.seq_k)};
}

struct TensorMap {
  std::array<const void*, schedule::kTensorCount> ptr{};
  std::array<Strides, schedule::kTensorCount> strides{};

  const void* at(schedule::TensorId t) const { return ptr[static_cast<size_t>(t)]; }
  void set(schedule::TensorId t, const void* p) { ptr[static_cast<size_t>(t)] = p; }
  GemmOperand operand(const schedule::GemmOperand& o) const {
    const Strides& st = strides[static_cast<size_t>(o.tensor)];
    return {at(o.tensor), st.batch, st.head, st.row, o.head_mul, o.head_div, o.k_contiguous};
  }
  GemmOutput output(schedule::TensorId t) const {
    const Strides& st = strides[static_cast<size_t>(t)];
    return {const_cast<void*>(at(t)), st.batch, st.head, st.row};
  }
};

// Every tensor's strides for problem p; the pointers are the caller's to set.
inline TensorMap tensor_map(const workload::Problem& p) {
  TensorMap m;
  const Strides q = strides_for(p, p.heads, p.seq_q), kv = strides_for(p, p.kv_heads, p.seq_k), sc = score_strides(p);
  using schedule::TensorId;
  for (TensorId t : {TensorId::Q, TensorId::O, TensorId::dO, TensorId::dQ}) m.strides[static_cast<size_t>(t)] = q;
  for (TensorId t : {TensorId::K, TensorId::V, TensorId::dK, TensorId::dV}) m.strides[static_cast<size_t>(t)] = kv;
  for (TensorId t : {TensorId::S, TensorId::P, TensorId::dP, TensorId::dS, TensorId::Pd, TensorId::Z})
    m.strides[static_cast<size_t>(t)] = sc;
  m.strides[static_cast<size_t>(TensorId::Mask)] = {0, 0, schedule::score_row_pitch(p.seq_k)};
  return m;
}

}  // namespace iosim::kernels::detail
