// Double-precision reference of attention, forward and backward: the ground
// truth that the tiled CPU executions (sim/numerics/tiled.h) and the GPU
// kernel tests (tests/gpu/) compare against.
//
// This header is plain C++ (no Eigen, no CUDA) so nvcc-compiled test code may
// include it. Eigen is used only inside reference.cpp.
//
// Definition (for a workload::Problem p):
//   scale = 1 / sqrt(p.head_dim)
//   S[r][c] = scale * Q[r] . K[c]            (r: query row, c: key column)
//   visible(r, c) = causal_ok(r, c) && block_ok(r, c), where
//     causal_ok: !p.causal || c <= r + (seq_k - seq_q)   (bottom-right aligned)
//     block_ok:  no block mask, or mask.active[(r / block_m) * n_blocks + c / block_n] != 0
//   P[r] = softmax of S[r] over the visible columns (0 on the others)
//   O = P V,  L[r] = log sum_{visible c} exp(S[r][c])
//   A row with no visible key has O[r] = 0, L[r] = -inf and contributes
//   nothing to any gradient.
//   Backward, given dO:  dV = P^T dO,  dP = dO V^T,
//     dS = P o (dP - rowsum(dP o P)),  dQ = scale dS K,  dK = scale dS^T Q.
//   Grouped-query attention: query head h uses KV head h / (heads / kv_heads);
//   dK and dV of a KV head are summed over the query heads of its group.
//   Dropout (standard-eager, GPT-2's attention dropout; p = 0: none): O = Pd V
//   with Pd = P o Z / (1 - p), Z[r][c] = DropoutRule::keeps(((b * heads + h)
//   * seq_q + r) * seq_k + c) (sim/common/philox.h); backward dV = Pd^T dO,
//   dP = (dO V^T) o Z / (1 - p), and dS as above from P and that dP.
//
// Data layout (layout-independent): a HeadTensor is one HeadMatrix per
// (batch, head), row-major doubles.
//   query side (Q, O, dO, dQ: seq_q x head_dim; L: seq_q x 1): index b * heads + h
//   key side   (K, V, dK, dV: seq_k x head_dim):               index b * kv_heads + kvh
// from_flat()/to_flat() convert to and from the flat float buffers the kernels
// use: BSHD = [batch][seq][heads][dim], BHSD = [batch][heads][seq][dim];
// statistics (L, l, m, D) are [batch][heads][seq], i.e. BHSD with dim 1.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/common/hd.h"
#include "sim/common/philox.h"
#include "sim/workload/problem.h"

namespace iosim::numerics {

// One (batch, head) slice: rows x cols doubles, row-major.
struct HeadMatrix {
  i64 rows = 0;
  i64 cols = 0;
  std::vector<double> values;

  HeadMatrix() = default;
  HeadMatrix(i64 r, i64 c, double fill = 0.0);
  double& operator()(i64 r, i64 c) { return values[static_cast<size_t>(r * cols + c)]; }
  double operator()(i64 r, i64 c) const { return values[static_cast<size_t>(r * cols + c)]; }
};

// All (batch, head) slices of one tensor; see the indexing rule above.
using HeadTensor = std::vector<HeadMatrix>;

// batch * heads matrices of rows x cols, filled with `fill`.
HeadTensor make_head_tensor(i64 batch, i64 heads, i64 rows, i64 cols, double fill = 0.0);

// Flat buffer <-> HeadTensor. `heads` is the tensor's own head count
// (kv_heads for K/V/dK/dV); `seq` its sequence length; `dim` its row width.
// Throws InputError when the buffer size does not match.
HeadTensor from_flat(const std::vector<float>& flat, i64 batch, i64 heads, i64 seq, i64 dim,
                     workload::Layout layout);
HeadTensor from_flat(const std::vector<double>& flat, i64 batch, i64 heads, i64 seq, i64 dim,
                     workload::Layout layout);
std::vector<float> to_flat_float(const HeadTensor& t, i64 batch, i64 heads, workload::Layout layout);
std::vector<double> to_flat_double(const HeadTensor& t, i64 batch, i64 heads, workload::Layout layout);
// Position of element (b, h, s, x) in a flat buffer of that layout.
i64 flat_index(i64 b, i64 h, i64 s, i64 x, i64 heads, i64 seq, i64 dim, workload::Layout layout);

// The block mask as the reference applies it: element (r, c) is kept iff
// blocks.active[(r / block_m) * blocks.n_blocks + c / block_n] != 0.
// An empty blocks.active means dense (block_m/block_n are then ignored).
struct ReferenceMask {
  workload::BlockMask blocks;
  i64 block_m = 0;
  i64 block_n = 0;
  bool dense() const { return blocks.active.empty(); }
};

// The mask a problem has under a tiling: problem.sparsity materialised on the
// (ceil(seq_q/block_m) x ceil(seq_k/block_n)) grid; dense when the problem is.
// Throws InputError for non-positive blocks or a mask file of another shape.
ReferenceMask reference_mask(const workload::Problem& p, i64 block_m, i64 block_n);

struct AttentionInputs {
  HeadTensor q;    // query side
  HeadTensor k;    // key side
  HeadTensor v;    // key side
  HeadTensor d_o;  // query side; needed by the backward pass only
};

struct ForwardResult {
  HeadTensor o;    // query side, seq_q x head_dim
  HeadTensor lse;  // query side, seq_q x 1 (L; -inf for rows with no visible key)
};

struct GradResult {
  HeadTensor dq;  // query side
  HeadTensor dk;  // key side, summed over the GQA group
  HeadTensor dv;  // key side, summed over the GQA group
};

// Throws InputError (naming the tensor and the expected shape) when an input
// disagrees with the problem; d_o is checked only when `backward`.
void check_inputs(const workload::Problem& p, const AttentionInputs& in, bool backward);

// Throws InputError when shapes disagree with the problem, the mask does not
// cover the (ceil(seq_q/block_m) x ceil(seq_k/block_n)) grid, or dropout.p is
// outside [0, 1).
ForwardResult reference_forward(const workload::Problem& p, const AttentionInputs& in,
                                const ReferenceMask& mask = {}, const DropoutRule& dropout = {});
// Needs in.d_o; recomputes P itself (the caller's O is not used).
GradResult reference_backward(const workload::Problem& p, const AttentionInputs& in,
                              const ReferenceMask& mask = {}, const DropoutRule& dropout = {});

// max_{all slices, elements} |x - ref|, and max |ref| over ref's finite
// entries. An entry where ref is -inf must be -inf in x too; any mismatch
// there, or a non-finite x where ref is finite, makes max_abs_error +inf.
struct ErrorNorms {
  double max_abs_error = 0.0;
  double max_abs_ref = 0.0;
  // max_abs_error / max_abs_ref (the max-norm relative error); equals
  // max_abs_error when ref is all zero.
  double relative() const;
};
// Throws InputError when the two tensors' shapes differ.
ErrorNorms compare(const HeadTensor& x, const HeadTensor& ref);

}  // namespace iosim::numerics
