// Executes each algorithm's loop nest on the CPU in double precision, at a
// given tiling, walking the plan's schedules (sim/schedule/kernel_schedules.h)
// exactly as the traces (sim/trace/algorithms.cpp) and the CUDA kernels do. Comparing
// the result with reference.h shows that online softmax and recomputation are
// exact up to rounding.
//
//   standard     forward: S, row softmax, P V;  backward: dV = P^T dO,
//                dP = dO V^T, dS = P o (dP - rowsum(dP o P)), dQ = scale dS K,
//                dK = scale dS^T Q (using the P its forward saved).
//   fa1          forward: Algorithm 1 (outer key blocks j, inner query blocks i;
//                O_i, l_i, m_i read and written in "HBM" arrays every inner step,
//                O_i <- diag(l_new)^-1 (diag(l_i) e^(m_i - m_new) O_i + e^(m~ - m_new) P~ V_j)).
//                backward: Algorithm 4 (P_ij = diag(l_i)^-1 exp(S_ij - m_i),
//                D_i = rowsum(dO_i o O_i) recomputed every step, dQ_i read and
//                written every step, dK_j/dV_j accumulated on chip).
//   fa1-swapped  forward only: outer query blocks, inner key blocks, the same
//                per-step normalised update, O_i kept on chip.
//   splitkv      forward only: per query block and split, FA2's loop over the
//                split's run of key blocks (SplitKvSchedule::key_blocks) gives a
//                normalised partial O_s and LSE_s; the combine merges the splits
//                in order, L = log sum_s e^LSE_s, O = sum_s e^(LSE_s - L) O_s.
//   fa2          forward: unnormalised O accumulator rescaled by e^(m_old - m_new),
//                O = acc / l and L = m + log l at the end. backward: D = rowsum(dO o O)
//                preprocess; per key block j and query head of its GQA group,
//                P = exp(S - L), dV += P^T dO, dP = dO V^T, dS = P o (dP - D),
//                dQaccum_i += scale dS K_j, dK += scale dS^T Q_i.
//
// Inactive tiles (causal or block mask) are not computed; tiles crossing the
// causal diagonal are masked element-wise with -inf; rows with no visible key
// give O = 0, L = -inf and zero gradients, without NaN. The block mask here is
// over this tiling's own (block_m x block_n) grid.
#pragma once
#include "sim/numerics/reference.h"
#include "sim/trace/algorithms.h"
#include "sim/workload/problem.h"

namespace iosim::numerics {

// Deliberate errors, for tests that show the error bound detects a wrong
// algorithm. Never set outside tests.
enum class InjectedFault {
  none,
  fa1_skip_l_rescale,   // fa1/fa1-swapped: drop diag(l_i) from line 12 of Algorithm 1
  fa2_skip_o_rescale,   // fa2 forward: drop the e^(m_old - m_new) rescale of the O accumulator
  skip_diagonal_mask,   // fa1/fa1-swapped/fa2: do not mask tiles crossing the causal diagonal
};

struct TiledOptions {
  i64 block_m = 64;              // B_r
  i64 block_n = 64;              // B_c
  workload::BlockMask mask;      // over the (block_m x block_n) grid; empty = dense
  InjectedFault fault = InjectedFault::none;  // test-only
  i64 splits = 1;                // splitkv's key-range splits
};

// What an algorithm's forward pass leaves for its backward pass. o and lse are
// always filled (fa1's lse is m + log l); l and m only by fa1/fa1-swapped;
// p (seq_q x seq_k per query head) only by standard.
struct TiledForward {
  HeadTensor o, lse;
  HeadTensor l, m;
  HeadTensor p;
  i64 score_elements = 0;  // elements of S computed, summed over tiles, heads, batch
};

struct TiledBackward {
  GradResult grads;
  i64 score_elements = 0;  // elements of S recomputed
};

// Throws InputError for non-positive blocks, a mask whose shape is not the
// tile grid, inputs whose shapes differ from the problem, fa1-swapped's
// or splitkv's backward (they have none, as in build_trace), splits outside
// splitkv's domain, or a fault that the algorithm does not contain.
TiledForward tiled_forward(workload::Algorithm a, const workload::Problem& p, const AttentionInputs& in,
                           const TiledOptions& opt);
// `fwd` must come from tiled_forward with the same algorithm, problem, inputs and options.
TiledBackward tiled_backward(workload::Algorithm a, const workload::Problem& p, const AttentionInputs& in,
                             const TiledForward& fwd, const TiledOptions& opt);

}  // namespace iosim::numerics
