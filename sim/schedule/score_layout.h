// How standard attention's N_q x N_k intermediates (S, P, dP, dS, and
// standard-eager's Pd, keep mask Z and mask buffer) lie in global memory:
// [batch][heads][seq_q][pitch], rows padded to a multiple of 32 elements.
//
// Why: with rows of exactly seq_k elements, an fp16 row starts 16 bytes into
// a 32-byte L2 sector whenever seq_k is 8 mod 16, and every 128-byte chunk a
// GEMM reads of such a row spans 5 sectors instead of 4 (Nsight Compute on
// the H100, N = 1000/3000/5000: P V, dV, dQ and dK read 1.25-1.33x the bytes
// they use, Q K^T and dP write 1.06-1.13x). 32 elements keep the 1-byte
// tensors' rows on sectors too, so every N x N tensor shares one pitch and
// one element index. The padding is never read or written: the trace
// (sim/trace/trace.cpp, TensorTable) and the kernels (kernels/standard/
// tensor_map.h, the softmax and elementwise kernels) take the pitch from here.
#pragma once
#include "sim/common/hd.h"

namespace iosim::schedule {

inline constexpr i64 kScoreRowAlignElems = 32;

IOSIM_HD constexpr i64 score_row_pitch(i64 seq_k) {
  return ceil_div(seq_k, kScoreRowAlignElems) * kScoreRowAlignElems;
}

// Elements of one head's N_q x N_k matrix, padding included.
IOSIM_HD constexpr i64 score_matrix_elems(i64 seq_q, i64 seq_k) { return seq_q * score_row_pitch(seq_k); }

}  // namespace iosim::schedule
