#include "sim/trace/algorithms.h"

#include <functional>
#include <mutex>
#include <sstream>

#include "sim/common/error.h"
#include "sim/schedule/plan.h"

namespace iosim::trace {

using schedule::AttentionTiles;
using schedule::Dim3;
using schedule::HeadShape;
using schedule::head_shape;
using workload::Pass;
using workload::Problem;

namespace {

using schedule::GemmOperand;
using schedule::GemmPlan;
using schedule::KernelKind;
using schedule::KernelPlan;
using schedule::SoftmaxPlan;

TileAccess rd(TensorId t, i64 b, i64 h, i64 row0, i64 rows, i64 col0, i64 cols) {
  return {t, AccessKind::Read, b, h, row0, rows, col0, cols};
}
TileAccess wr(TensorId t, i64 b, i64 h, i64 row0, i64 rows, i64 col0, i64 cols) {
  return {t, AccessKind::Write, b, h, row0, rows, col0, cols};
}
TileAccess red(TensorId t, i64 b, i64 h, i64 row0, i64 rows, i64 col0, i64 cols) {
  return {t, AccessKind::ReduceAdd, b, h, row0, rows, col0, cols};
}

// Non-matmul work of one online-softmax tile: scale, row max, subtract, row
// sum (4 FP32 ops per score), one exponential per score, and masking on tiles
// that cross the causal diagonal.
ComputeWork softmax_tile_work(i64 rows, i64 cols, bool masked) {
  return {0, rows * cols * (4 + (masked ? 1 : 0)), rows * cols};
}

// ---------------------------------------------------------------------------
// Each kernel kind's CTA, as tile accesses: the schedule's loop nest
// (sim/schedule/kernel_schedules.h) walked step by step. The coroutines take
// the schedule by reference: the KernelPlan outlives every cursor.

// One key block of FA2's forward loop (and split-KV's): Q_i with the run's
// first block, K_j and V_j, S = Q K^T, online softmax, O += P V.
// `first_program`: the first block runs a program of its own (FA2's lazy
// rescale runs there: schedule::kFirstStep).
void key_block_step(Step& step, const AttentionTiles& t, i64 i, i64 j, i64 b, i64 h, i64 kvh, i64 d, bool first,
                    bool masked, bool first_program = false) {
  const i64 r0 = t.row_begin(i), rows = t.rows_in(i), c0 = t.col_begin(j), cols = t.cols_in(j);
  step.clear();
  if (first) step.load(rd(TensorId::Q, b, h, r0, rows, 0, d));
  step.load(rd(TensorId::K, b, kvh, c0, cols, 0, d));
  step.load(rd(TensorId::V, b, kvh, c0, cols, 0, d));
  step.compute = softmax_tile_work(rows, cols, t.crosses_diagonal(i, j));
  step.compute.tensor_flops = 4 * rows * cols * d;  // S = Q K^T, O += P V
  step.compute.fp32_ops += rows * d;                // rescale the O accumulator
  step.compute.sfu_ops += rows;                     // exp(m_old - m_new)
  step.compute.program = first && first_program ? (masked ? schedule::kFirstMaskedStep : schedule::kFirstStep)
                         : masked                ? schedule::kMaskedStep
                                                 : schedule::kMainStep;
}

// FlashAttention-2 forward, and FlashAttention-3's (kernels/fa3), which walks
// the same loop in its own CTA order (Fa3ForwardSchedule::cta: causal, the
// last query block first): Q_i with the first key block, one step per active
// key block (an unmasked run, then the masked one), then O and L = m + log l
// written once. FA3's producer requests K_{j+1} before V_j; the trace keeps
// K_j and V_j in one step (the engine prefetches `stages` steps ahead, so
// K_{j+1} is in flight while step j computes either way): the same tiles.
template <class ForwardSchedule>
Generator<Step> flash_forward_cta(const ForwardSchedule& s, i64 x, i64 y, i64 z) {
  const auto cta = s.cta(x, y, z);
  const auto& t = s.tiles;
  const i64 i = cta.m_block, b = cta.batch, h = cta.head, kvh = s.shape.kv_head_of(h);
  const i64 r0 = t.row_begin(i), rows = t.rows_in(i), d = s.head_dim;
  Step step;
  const auto keys = s.key_blocks(cta);
  bool masked_run = false;
  for (i64 j = keys.first; j < keys.end; j = keys.next(j)) {
    masked_run = masked_run || keys.masked(j);
    key_block_step(step, t, i, j, b, h, kvh, d, j == keys.first, keys.masked(j), ForwardSchedule::kLazyRescale);
    co_yield step;
  }
  step.clear();
  step.compute = {0, rows * d, rows};
  step.compute.program = masked_run ? schedule::kMaskedEpilogue : schedule::kEpilogue;
  step.store(wr(TensorId::O, b, h, r0, rows, 0, d));
  step.store(wr(TensorId::L, b, h, r0, rows, 0, 1));
  co_yield step;
}

// Split-KV forward: FA2's loop over the CTA's run of key blocks (Q_i with
// the first), then its partial O and LSE written to row split * N_q + r of
// Oaccum and LSEaccum, fp32; an empty run writes O = 0 and LSE = -inf.
Generator<Step> splitkv_forward_cta(const schedule::SplitKvSchedule& s, i64 x, i64 y, i64 z) {
  const auto cta = s.cta(x, y, z);
  const auto& t = s.tiles;
  const i64 i = cta.m_block, b = cta.batch, h = cta.head, kvh = s.shape.kv_head_of(h);
  const i64 r0 = t.row_begin(i), rows = t.rows_in(i), d = s.head_dim;
  Step step;
  const auto keys = s.key_blocks(cta);
  for (i64 j = keys.first; j < keys.end; j = keys.next(j)) {
    key_block_step(step, t, i, j, b, h, kvh, d, j == keys.first, keys.masked(j));
    co_yield step;
  }
  step.clear();
  // The warps' partials merged (a rescale and a sum per element and warp), O / l.
  step.compute = {0, (2 * schedule::SplitKvSchedule::kWarps + 1) * rows * d, schedule::SplitKvSchedule::kWarps * rows};
  step.compute.program = schedule::kEpilogue;
  const i64 pr = s.partial_row(cta.split, r0);
  step.store(wr(TensorId::Oaccum, b, h, pr, rows, 0, d));
  step.store(wr(TensorId::LSEaccum, b, h, pr, rows, 0, 1));
  co_yield step;
}

// Split-KV combine: one step per split (its LSE and partial O for the CTA's
// rows, merged online), then O and L written.
Generator<Step> splitkv_combine_cta(const schedule::SplitKvCombineSchedule& s, i64 x, i64 y, i64 z) {
  const i64 r0 = s.first_row(x), rows = s.rows_in(x), d = s.head_dim;
  Step step;
  for (i64 sp = 0; sp < s.splits; ++sp) {
    step.clear();
    step.load(rd(TensorId::LSEaccum, z, y, sp * s.seq_q + r0, rows, 0, 1));
    step.load(rd(TensorId::Oaccum, z, y, sp * s.seq_q + r0, rows, 0, d));
    step.compute = {0, 3 * rows * d + 4 * rows, 2 * rows};  // rescale, accumulate; new max, weights
    step.compute.program = schedule::kMainStep;
    co_yield step;
  }
  step.clear();
  step.compute = {0, rows * d, rows};  // O / sum, log(sum)
  step.compute.program = schedule::kEpilogue;
  step.store(wr(TensorId::O, z, y, r0, rows, 0, d));
  step.store(wr(TensorId::L, z, y, r0, rows, 0, 1));
  co_yield step;
}

// FlashAttention-2 backward preprocess: D = rowsum(dO * O), dQaccum = 0.
Generator<Step> fa2_preprocess_cta(const schedule::RowBlockSchedule& s, i64 x, i64 y, i64 z) {
  const i64 d = s.head_dim;
  const i64 r0 = x * s.block_rows, rows = s.rows_in(x);
  Step step;
  step.load(rd(TensorId::O, z, y, r0, rows, 0, d));
  step.load(rd(TensorId::dO, z, y, r0, rows, 0, d));
  step.compute = {0, 2 * rows * d, 0};
  step.compute.program = schedule::kMainStep;
  // D: a warp instruction writes the rows of its 32 lanes (32 / (d/8) rows,
  // 4 bytes each), part of a 32-byte sector that the next warps complete:
  // each piece crosses as a whole sector. Written as the sector's pieces in
  // turn (the rows past the last whole sector, a ragged block's, as one tile).
  const i64 piece = std::max<i64>(1, schedule::RowBlockSchedule::kThreads / 4 / (d / 8));  // rows a warp writes
  const i64 per_sector = 32 / 4;  // D rows (fp32) in a 32-byte sector
  const i64 whole = piece < per_sector ? rows / per_sector * per_sector : 0;
  for (i64 p = 0; whole > 0 && p < per_sector; p += piece) {
    TileAccess a = wr(TensorId::D, z, y, r0 + p, whole / per_sector * piece, 0, 1);
    a.piece_rows = piece;
    a.piece_step = per_sector;
    step.store(a);
  }
  if (rows > whole) step.store(wr(TensorId::D, z, y, r0 + whole, rows - whole, 0, 1));
  step.store(wr(TensorId::dQaccum, z, y, r0, rows, 0, d));
  co_yield step;
}

// FlashAttention-2 backward main kernel: K_j, V_j; one step per work item
// (query head of the group, active query block); dK_j, dV_j written once.
Generator<Step> fa2_backward_cta(const schedule::Fa2BackwardSchedule& s, i64 x, i64 y, i64 z) {
  const auto cta = s.cta(x, y, z);
  const auto& t = s.tiles;
  const i64 j = cta.n_block, b = cta.batch, kvh = cta.kv_head, d = s.head_dim;
  const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
  Step step;
  step.load(rd(TensorId::K, b, kvh, c0, cols, 0, d));
  step.load(rd(TensorId::V, b, kvh, c0, cols, 0, d));
  step.compute.program = schedule::kPrologue;
  co_yield step;
  const auto work = s.work_items(cta);
  for (auto w = work.first(); !work.done(w); w = work.next(t, w)) {
    const i64 h = s.first_head(cta) + w.g, r0 = t.row_begin(w.i), rows = t.rows_in(w.i);
    step.clear();
    step.load(rd(TensorId::Q, b, h, r0, rows, 0, d));
    step.load(rd(TensorId::dO, b, h, r0, rows, 0, d));
    step.load(rd(TensorId::L, b, h, r0, rows, 0, 1));
    step.load(rd(TensorId::D, b, h, r0, rows, 0, 1));
    // S = Q K^T, dV += P^T dO, dP = dO V^T, dQ = dS K, dK += dS^T Q.
    step.compute = {10 * rows * cols * d, rows * cols * (4 + (t.crosses_diagonal(w.i, j) ? 1 : 0)), rows * cols};
    step.compute.program = work.masked(w) ? schedule::kMaskedStep : schedule::kMainStep;
    step.store(red(TensorId::dQaccum, b, h, r0, rows, 0, d));
    co_yield step;
  }
  step.clear();
  step.compute.program = schedule::kEpilogue;
  step.store(wr(TensorId::dK, b, kvh, c0, cols, 0, d));
  step.store(wr(TensorId::dV, b, kvh, c0, cols, 0, d));
  co_yield step;
}

// Converts the fp32 dQ accumulator to dQ in the data type (scaled).
Generator<Step> fa2_convert_dq_cta(const schedule::RowBlockSchedule& s, i64 x, i64 y, i64 z) {
  const i64 d = s.head_dim;
  const i64 r0 = x * s.block_rows, rows = s.rows_in(x);
  Step step;
  step.load(rd(TensorId::dQaccum, z, y, r0, rows, 0, d));
  step.compute = {0, rows * d, 0};
  step.compute.program = schedule::kMainStep;
  step.store(wr(TensorId::dQ, z, y, r0, rows, 0, d));
  co_yield step;
}

// FlashAttention (v1) forward, Algorithm 1: O, l, m initialised in global
// memory; per key block K_j, V_j, then per active query block Q_i, O_i, l_i,
// m_i read and O_i, l_i, m_i written back.
Generator<Step> fa1_forward_cta(const schedule::Fa1ForwardSchedule& s, i64 x, i64 y, i64 z) {
  const auto cta = s.cta(x, y, z);
  const auto& t = s.tiles;
  const i64 b = cta.batch, h = cta.head, kvh = s.shape.kv_head_of(h), d = s.head_dim;
  Step step;
  // Step 2: O = 0, l = 0, m = -inf in global memory.
  step.store(wr(TensorId::O, b, h, 0, t.seq_q, 0, d));
  step.store(wr(TensorId::l, b, h, 0, t.seq_q, 0, 1));
  step.store(wr(TensorId::m, b, h, 0, t.seq_q, 0, 1));
  step.compute.program = schedule::kPrologue;
  co_yield step;
  for (i64 j = s.first_key_block(); j < t.n_blocks(); j = s.next_key_block(j)) {
    const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
    step.clear();
    step.load(rd(TensorId::K, b, kvh, c0, cols, 0, d));
    step.load(rd(TensorId::V, b, kvh, c0, cols, 0, d));
    step.compute.program = schedule::kKeyLoad;
    co_yield step;
    for (i64 i = t.first_m_block(j); i < t.m_blocks(); i = t.next_m_block(j, i)) {
      const i64 r0 = t.row_begin(i), rows = t.rows_in(i);
      step.clear();
      step.load(rd(TensorId::Q, b, h, r0, rows, 0, d));
      step.load(rd(TensorId::O, b, h, r0, rows, 0, d));
      step.load(rd(TensorId::l, b, h, r0, rows, 0, 1));
      step.load(rd(TensorId::m, b, h, r0, rows, 0, 1));
      step.compute = softmax_tile_work(rows, cols, t.crosses_diagonal(i, j));
      step.compute.tensor_flops = 4 * rows * cols * d;
      // Rescale and renormalise O_i every step (diag(l)^-1 (diag(l) e^.. O + e^.. P V)).
      step.compute.fp32_ops += 4 * rows * d + 6 * rows;
      step.compute.sfu_ops += 2 * rows;
      step.compute.program = s.masked(i, j) ? schedule::kMaskedStep : schedule::kMainStep;
      step.store(wr(TensorId::O, b, h, r0, rows, 0, d));
      step.store(wr(TensorId::l, b, h, r0, rows, 0, 1));
      step.store(wr(TensorId::m, b, h, r0, rows, 0, 1));
      co_yield step;
    }
  }
}

// FlashAttention (v1) forward with the loops swapped (teaching variant).
Generator<Step> fa1_swapped_forward_cta(const schedule::Fa1SwappedForwardSchedule& s, i64 x, i64 y, i64 z) {
  const auto cta = s.cta(x, y, z);
  const auto& t = s.tiles;
  const i64 b = cta.batch, h = cta.head, kvh = s.shape.kv_head_of(h), d = s.head_dim;
  Step step;
  for (i64 i = 0; i < t.m_blocks(); ++i) {
    const i64 r0 = t.row_begin(i), rows = t.rows_in(i);
    step.clear();
    step.load(rd(TensorId::Q, b, h, r0, rows, 0, d));
    step.load(rd(TensorId::O, b, h, r0, rows, 0, d));
    co_yield step;
    const auto keys = s.key_blocks(i);
    for (i64 j = keys.first; j < keys.end; j = keys.next(j)) {
      const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
      step.clear();
      step.load(rd(TensorId::K, b, kvh, c0, cols, 0, d));
      step.load(rd(TensorId::V, b, kvh, c0, cols, 0, d));
      step.compute = softmax_tile_work(rows, cols, t.crosses_diagonal(i, j));
      step.compute.tensor_flops = 4 * rows * cols * d;
      step.compute.fp32_ops += 4 * rows * d + 6 * rows;
      step.compute.sfu_ops += 2 * rows;
      step.compute.program = t.needs_element_mask(i, j) ? schedule::kMaskedStep : schedule::kMainStep;
      co_yield step;
    }
    step.clear();
    step.store(wr(TensorId::O, b, h, r0, rows, 0, d));
    step.store(wr(TensorId::l, b, h, r0, rows, 0, 1));
    step.store(wr(TensorId::m, b, h, r0, rows, 0, 1));
    co_yield step;
  }
}

// FlashAttention (v1) backward, Algorithm 4.
Generator<Step> fa1_backward_cta(const schedule::Fa1BackwardSchedule& s, i64 x, i64 y, i64 z) {
  const auto cta = s.cta(x, y, z);
  const auto& t = s.tiles;
  const i64 b = cta.batch, kvh = cta.kv_head, d = s.head_dim, group = s.shape.group();
  const i64 head0 = kvh * group;
  Step step;
  // Step 5: dQ (its fp32 accumulator), dK, dV = 0 in global memory.
  step.store(wr(TensorId::dK, b, kvh, 0, t.seq_k, 0, d));
  step.store(wr(TensorId::dV, b, kvh, 0, t.seq_k, 0, d));
  step.compute.program = schedule::kPrologue;
  co_yield step;
  for (i64 g = 0; g < group; ++g) {
    step.clear();
    step.store(wr(TensorId::dQaccum, b, head0 + g, 0, t.seq_q, 0, d));
    step.compute.program = schedule::kPrologue;
    co_yield step;
  }
  for (i64 j = s.first_key_block(); j < t.n_blocks(); j = s.next_key_block(j)) {
    const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
    step.clear();
    step.load(rd(TensorId::K, b, kvh, c0, cols, 0, d));
    step.load(rd(TensorId::V, b, kvh, c0, cols, 0, d));
    step.compute.program = schedule::kKeyLoad;
    co_yield step;
    for (i64 g = 0; g < group; ++g) {
      const i64 h = head0 + g;
      for (i64 i = t.first_m_block(j); i < t.m_blocks(); i = t.next_m_block(j, i)) {
        const i64 r0 = t.row_begin(i), rows = t.rows_in(i);
        step.clear();
        step.load(rd(TensorId::Q, b, h, r0, rows, 0, d));
        step.load(rd(TensorId::O, b, h, r0, rows, 0, d));
        step.load(rd(TensorId::dO, b, h, r0, rows, 0, d));
        step.load(rd(TensorId::dQaccum, b, h, r0, rows, 0, d));
        step.load(rd(TensorId::l, b, h, r0, rows, 0, 1));
        step.load(rd(TensorId::m, b, h, r0, rows, 0, 1));
        step.compute = {10 * rows * cols * d,
                        rows * cols * (5 + (t.crosses_diagonal(i, j) ? 1 : 0)) + 2 * rows * d, rows * cols};
        step.compute.program = s.masked(i, j) ? schedule::kMaskedStep : schedule::kMainStep;
        step.store(wr(TensorId::dQaccum, b, h, r0, rows, 0, d));
        co_yield step;
      }
    }
    step.clear();
    step.store(wr(TensorId::dK, b, kvh, c0, cols, 0, d));
    step.store(wr(TensorId::dV, b, kvh, c0, cols, 0, d));
    step.compute.program = schedule::kKeyStore;
    co_yield step;
  }
  // Convert the fp32 dQ accumulator to dQ in the data type. The kernel reads
  // each thread's 8 floats as two 16-byte __ldcg, the first halves of 32
  // 32-byte sectors, then their second halves; .cg keeps nothing in the L1,
  // so every sector crosses from the L2 twice (Nsight Compute: FA1 backward's
  // crossbar reads exceed one dQaccum read by exactly 4*Nq*d bytes a head).
  for (i64 g = 0; g < group; ++g) {
    step.clear();
    step.load(rd(TensorId::dQaccum, b, head0 + g, 0, t.seq_q, 0, d));
    step.load(rd(TensorId::dQaccum, b, head0 + g, 0, t.seq_q, 0, d));
    step.compute = {0, t.seq_q * d, 0};
    step.compute.program = schedule::kFinalStep;
    step.store(wr(TensorId::dQ, b, head0 + g, 0, t.seq_q, 0, d));
    co_yield step;
  }
}

// One operand tile of a GEMM CTA: `outer0, outer` along m (A) or n (B), the
// reduction range [k0, k0 + kd), for batch slice z and group member g.
TileAccess gemm_operand_tile(const GemmPlan& gp, const GemmOperand& o, i64 outer0, i64 outer, i64 z, i64 g, i64 k0,
                             i64 kd) {
  const i64 b = z / gp.z_heads, head = o.head(z % gp.z_heads, g);
  return o.k_contiguous ? rd(o.tensor, b, head, outer0, outer, k0, kd) : rd(o.tensor, b, head, k0, kd, outer0, outer);
}

// Standard attention's batched GEMM: per output tile of the CTA (in turn
// along n), k chunks of each group member's operands, then the tile's C.
Generator<Step> gemm_cta(const GemmPlan& gp, i64 x, i64 y, i64 z) {
  const auto& s = gp.s;
  const auto cta = s.cta(x, y, z);
  const i64 m0 = cta.m_tile * s.tile_m, rows = s.rows_in(cta.m_tile);
  Step step;
  for (i64 t = 0; t < cta.tiles; ++t) {
    const i64 nt = cta.n_tile + t, n0 = nt * s.tile_n, cols = s.cols_in(nt);
    for (i64 g = 0; g < s.k_groups; ++g) {
      for (i64 kc = 0; kc < s.k_chunks(); ++kc) {
        const i64 k0 = kc * s.tile_k, kd = s.depth_in(kc);
        step.clear();
        step.load(gemm_operand_tile(gp, gp.a, m0, rows, z, g, k0, kd));
        step.load(gemm_operand_tile(gp, gp.b, n0, cols, z, g, k0, kd));
        step.compute.tensor_flops = 2 * rows * cols * kd;
        step.compute.program = schedule::kMainStep;
        co_yield step;
      }
    }
    // The tile's C; the CTA's one-time work is charged to its last tile's.
    step.clear();
    step.compute.program = t + 1 < cta.tiles ? schedule::kEpilogue : schedule::kFinalStep;
    step.store(wr(gp.c, z / gp.z_heads, z % gp.z_heads, m0, rows, n0, cols));
    co_yield step;
  }
}

// Row softmax, forward: P = softmax(scale * masked S); backward:
// dS = scale * P * (dP - rowsum(dP * P)). Rows that do not fit on chip are
// read twice (statistics pass, then the output pass).
Generator<Step> softmax_cta(const SoftmaxPlan& sp, bool backward, i64 x, i64 y, i64 z) {
  const auto& s = sp.s;
  const i64 r0 = s.first_row(x), rows = s.rows_in(x), n = s.seq_k;
  Step step;
  auto load_inputs = [&] {
    if (backward) {
      step.load(rd(TensorId::P, z, y, r0, rows, 0, n));
      step.load(rd(TensorId::dP, z, y, r0, rows, 0, n));
    } else {
      step.load(rd(TensorId::S, z, y, r0, rows, 0, n));
    }
  };
  const i64 elems = rows * n;
  if (!s.row_fits_on_chip()) {  // statistics pass: row max and sum (or rowsum(dP * P))
    load_inputs();
    step.compute = {0, 3 * elems, backward ? 0 : elems};
    step.compute.program = schedule::kStatsPass;
    co_yield step;
    step.clear();
  }
  load_inputs();
  step.compute = {0, 4 * elems, backward ? 0 : elems};
  step.compute.program = schedule::kMainStep;
  step.store(wr(backward ? TensorId::dS : TensorId::P, z, y, r0, rows, 0, n));
  co_yield step;
}

// standard-eager's elementwise kernel: its inputs' rows, then its outputs'.
// The mask buffer has one copy for all heads.
Generator<Step> elementwise_cta(const schedule::ElementwisePlan& e, i64 x, i64 y, i64 z) {
  const auto& s = e.s;
  const i64 r0 = s.first_row(x), rows = s.rows_in(x), n = s.seq_k;
  Step step;
  for (int t = 0; t < e.inputs; ++t) {
    const TensorId id = e.in[static_cast<size_t>(t)];
    const bool shared = id == TensorId::Mask;
    step.load(rd(id, shared ? 0 : z, shared ? 0 : y, r0, rows, 0, n));
  }
  step.compute = {0, e.fp32_ops_per_element * rows * n, 0};
  step.compute.program = schedule::kMainStep;
  for (int t = 0; t < e.outputs; ++t) step.store(wr(e.out[static_cast<size_t>(t)], z, y, r0, rows, 0, n));
  co_yield step;
}

// One kernel of the plan, traced.
class PlannedKernel final : public KernelTrace {
 public:
  PlannedKernel(KernelPlan k, i64 elem_bytes) : k_(std::move(k)), elem_bytes_(elem_bytes) {}
  // Asynchronous copies overlap the next step's loads with this step's work
  // (FA2, the GEMM's double buffer); FA1 and the row kernels load in the
  // step itself, synchronously.
  int pipeline_stages() const override {
    switch (k_.kind) {
      case KernelKind::fa2_fwd:
      case KernelKind::splitkv_fwd:
      case KernelKind::gemm: return 2;
      // Q_i, dO_i in two stages where they fit (the next pair loads during
      // the whole step), else in one (it loads only once the step is done
      // with the pair: during dQ; the engine overlaps nothing then).
      case KernelKind::fa2_bwd_main: return static_cast<int>(k_.as<schedule::Fa2BackwardSchedule>().q_stages());
      // TMA into the schedule's ring of K/V stages (2 at d = 128, 4 at d = 64).
      case KernelKind::fa3_fwd: return static_cast<int>(k_.as<schedule::Fa3ForwardSchedule>().stages());
      // TMA into three stages of A and B chunks (WgmmaGemmShape).
      case KernelKind::gemm_wgmma: return static_cast<int>(schedule::WgmmaGemmShape::kStages);
      default: return 1;
    }
  }
  std::shared_ptr<const schedule::KernelPrograms> programs() const override {
    std::call_once(programs_once_, [this] {
      programs_ = std::make_shared<const schedule::KernelPrograms>(schedule::warp_programs(k_, elem_bytes_));
    });
    return programs_;
  }
  std::string name() const override { return k_.name; }
  Dim3 grid() const override { return k_.grid; }
  CtaResources resources() const override { return {k_.cta.threads, k_.cta.smem_bytes, k_.cta.regs_per_thread}; }
  i64 zero_fill_read_bytes() const override {
    switch (k_.kind) {
      case KernelKind::fa3_fwd: return k_.as<schedule::Fa3ForwardSchedule>().tma_zero_fill_bytes();
      case KernelKind::gemm_wgmma: return schedule::wgmma_gemm_zero_fill_bytes(k_.as<GemmPlan>());
      default: return 0;
    }
  }
  // Grid dimensions that only pick a head or a batch entry.
  std::array<bool, 3> replica_dims() const override {
    switch (k_.kind) {
      case KernelKind::fa1_fwd:
      case KernelKind::fa1_swapped_fwd:
      case KernelKind::fa1_bwd: return {true, true, true};
      case KernelKind::gemm:
      case KernelKind::gemm_wgmma: return {false, false, true};
      default: return {false, true, true};
    }
  }
  Generator<Step> cta_steps(i64 x, i64 y, i64 z) const override {
    switch (k_.kind) {
      case KernelKind::fa2_fwd: return flash_forward_cta(k_.as<schedule::Fa2ForwardSchedule>(), x, y, z);
      case KernelKind::fa2_bwd_preprocess: return fa2_preprocess_cta(k_.as<schedule::RowBlockSchedule>(), x, y, z);
      case KernelKind::fa2_bwd_main: return fa2_backward_cta(k_.as<schedule::Fa2BackwardSchedule>(), x, y, z);
      case KernelKind::fa2_bwd_convert_dq: return fa2_convert_dq_cta(k_.as<schedule::RowBlockSchedule>(), x, y, z);
      case KernelKind::fa1_fwd: return fa1_forward_cta(k_.as<schedule::Fa1ForwardSchedule>(), x, y, z);
      case KernelKind::fa1_swapped_fwd:
        return fa1_swapped_forward_cta(k_.as<schedule::Fa1SwappedForwardSchedule>(), x, y, z);
      case KernelKind::fa1_bwd: return fa1_backward_cta(k_.as<schedule::Fa1BackwardSchedule>(), x, y, z);
      case KernelKind::gemm:
      case KernelKind::gemm_wgmma: return gemm_cta(k_.as<GemmPlan>(), x, y, z);
      case KernelKind::softmax_fwd: return softmax_cta(k_.as<SoftmaxPlan>(), false, x, y, z);
      case KernelKind::softmax_bwd: return softmax_cta(k_.as<SoftmaxPlan>(), true, x, y, z);
      case KernelKind::elementwise: return elementwise_cta(k_.as<schedule::ElementwisePlan>(), x, y, z);
      case KernelKind::splitkv_fwd: return splitkv_forward_cta(k_.as<schedule::SplitKvSchedule>(), x, y, z);
      case KernelKind::splitkv_combine:
        return splitkv_combine_cta(k_.as<schedule::SplitKvCombineSchedule>(), x, y, z);
      case KernelKind::fa3_fwd: return flash_forward_cta(k_.as<schedule::Fa3ForwardSchedule>(), x, y, z);
    }
    throw std::logic_error("unknown kernel kind");
  }

 private:
  KernelPlan k_;
  i64 elem_bytes_;
  mutable std::once_flag programs_once_;
  mutable std::shared_ptr<const schedule::KernelPrograms> programs_;
};

bool has_forward(Pass pass) { return pass != Pass::bwd; }
bool has_backward(Pass pass) { return pass != Pass::fwd; }

i64 footprint_one(const Problem& p, Algorithm a, Pass pass, i64 bm, i64 bn, const GemmTiles& gemm,
                  i64 sram_limit) {
  const AttentionTiles t{p.seq_q, p.seq_k, bm, bn, p.causal, {}};
  const HeadShape hs = head_shape(p);
  const schedule::ElementBytes e{p.elem_bytes()};
  const bool fwd = pass == Pass::fwd;
  switch (a) {
    case Algorithm::fa2:
      return fwd ? schedule::Fa2ForwardSchedule{t, hs, p.head_dim, e}.sram_bytes()
                 : schedule::Fa2BackwardSchedule{t, hs, p.head_dim, e}.sram_bytes();
    case Algorithm::splitkv: return schedule::SplitKvSchedule::sram_bytes_for(p.head_dim, bm, bn, e.data);
    case Algorithm::fa3: return schedule::Fa3ForwardSchedule::sram_bytes_for(p.head_dim, e.data);  // its one tile
    case Algorithm::fa1:
      return fwd ? schedule::Fa1ForwardSchedule{t, hs, p.head_dim, e}.sram_bytes()
                 : schedule::Fa1BackwardSchedule{t, hs, p.head_dim, e}.sram_bytes();
    case Algorithm::fa1_swapped:
      return fwd ? schedule::Fa1SwappedForwardSchedule{t, hs, p.head_dim, e}.sram_bytes()
                 : schedule::Fa1BackwardSchedule{t, hs, p.head_dim, e}.sram_bytes();
    case Algorithm::standard:
    case Algorithm::standard_eager: {
      const schedule::GemmSchedule g{1, 1, 1, gemm.m, gemm.n, gemm.k, 1, 1, e};
      const schedule::RowSoftmaxSchedule sm{p.seq_q, p.seq_k, hs, e, sram_limit, fwd ? 1 : 2};
      // The wgmma GEMM's three TMA stages and their barriers (what it launches with).
      const i64 gemm_bytes =
          gemm.impl == schedule::GemmImpl::wgmma ? schedule::WgmmaGemmShape::kSmemBytes : g.sram_bytes();
      return max_i64(gemm_bytes, sm.sram_bytes());
    }
  }
  return 0;
}

}  // namespace

namespace {

// splitkv's tile: B_r = 16 (one MMA row fragment: a decode step of N_q <= 16
// rows is one query block), B_c = 64 (a quarter per warp is one 16-wide MMA
// tile), halved while the footprint exceeds the limit.
Tiling splitkv_default_tiling(const Problem& p, Pass pass, const GemmTiles& gemm, i64 sram_limit) {
  constexpr i64 kBr = 16;
  for (i64 bc = 64; bc >= 16; bc /= 2) {
    const i64 bytes = sram_footprint(p, Algorithm::splitkv, pass, kBr, bc, gemm, sram_limit);
    if (bytes <= sram_limit)
      return {kBr, bc, bytes,
              "splitkv: Br=16 (one MMA row fragment), Bc=" + std::to_string(bc) +
                  (bc < 64 ? " (64 halved until the working set fits)" : " (16 key columns per warp)"),
              0, 1, {}};
  }
  throw InputError("no splitkv tiling (Br=16, Bc=64..16) fits " + std::to_string(sram_limit) +
                   " bytes of shared memory for head dim " + std::to_string(p.head_dim));
}

// fa3's tile is its kernel's only one; the profile must hold its shared memory.
Tiling fa3_tiling(const Problem& p, Pass pass, const GemmTiles& gemm, i64 sram_limit) {
  using S = schedule::Fa3ForwardSchedule;
  const i64 bytes = sram_footprint(p, Algorithm::fa3, pass, S::kBlockM, S::kBlockN, gemm, sram_limit);
  if (bytes > sram_limit)
    throw InputError("fa3's kernel needs " + std::to_string(bytes) + " bytes of shared memory per CTA at head dim " +
                     std::to_string(p.head_dim) + " (Q and " + std::to_string(S::stages_for(p.head_dim, p.elem_bytes())) +
                     " K/V stages); the profile allows " + std::to_string(sram_limit) + " bytes per block");
  return {S::kBlockM, S::kBlockN, bytes,
          "fa3: the kernel's one tile, Br=" + std::to_string(S::kBlockM) + " Bc=" + std::to_string(S::kBlockN), 0, 1,
          {}};
}

}  // namespace

i64 sram_footprint(const Problem& p, Algorithm a, Pass pass, i64 bm, i64 bn, const GemmTiles& gemm,
                   i64 sram_limit) {
  i64 bytes = 0;
  if (has_forward(pass)) bytes = max_i64(bytes, footprint_one(p, a, Pass::fwd, bm, bn, gemm, sram_limit));
  if (has_backward(pass)) bytes = max_i64(bytes, footprint_one(p, a, Pass::bwd, bm, bn, gemm, sram_limit));
  return bytes;
}

Tiling default_tiling(const Problem& p, Algorithm a, Pass pass, const GemmTiles& gemm, i64 sram_limit) {
  if (workload::is_standard(a)) {
    // Block sizes only set the granularity of a block-sparse mask here.
    return {gemm.m, gemm.n, sram_footprint(p, a, pass, gemm.m, gemm.n, gemm, sram_limit),
            std::string(workload::to_string(a)) + ": mask blocks = GEMM tile " + std::to_string(gemm.m) + "x" + std::to_string(gemm.n), 0, 1, {}};
  }
  if (a == Algorithm::splitkv) return splitkv_default_tiling(p, pass, gemm, sram_limit);
  if (a == Algorithm::fa3) return fa3_tiling(p, pass, gemm, sram_limit);
  const i64 d = p.head_dim;
  const i64 m_full = sram_limit / p.elem_bytes();
  for (i64 m = m_full, halvings = 0; m >= 4 * d; m /= 2, ++halvings) {
    const i64 bc = ceil_div(m, 4 * d);
    const i64 br = min_i64(bc, d);
    const i64 bytes = sram_footprint(p, a, pass, br, bc, gemm, sram_limit);
    if (bytes <= sram_limit) {
      std::ostringstream rule;
      rule << "paper: Bc=ceil(M/4d), Br=min(Bc,d), M=" << m << " elements";
      if (halvings > 0)
        rule << " (M halved " << halvings << "x from " << m_full << " so the "
             << (has_backward(pass) ? "backward pass's " : "") << "working set fits)";
      return {br, bc, bytes, rule.str(), m, 1, {}};
    }
  }
  throw InputError("no tiling from the paper's rule fits " + std::to_string(sram_limit) +
                   " bytes of shared memory for head dim " + std::to_string(d));
}

namespace {

// splitkv's splits: --splits, or the rule for the profile's SMs; checked
// against the problem (schedule::check_splitkv). Others take none.
void choose_splits(const Problem& p, const TraceOptions& o, Tiling& t) {
  if (o.algorithm != Algorithm::splitkv) {
    if (o.splits)
      throw InputError("--splits applies to --algo splitkv only (got --algo " +
                       std::string(workload::to_string(o.algorithm)) + ")");
    return;
  }
  if (o.splits) {
    t.splits = *o.splits;
    t.splits_rule = "flags";
  } else {
    t.splits = schedule::default_splits(p, t.block_m, t.block_n, o.sm_count);
    const i64 ctas = p.batch * p.heads * ceil_div(p.seq_q, t.block_m);
    t.splits_rule = "fill " + std::to_string(o.sm_count) + " SMs: ceil(SMs / (B*H*ceil(Nq/Br) = " +
                    std::to_string(ctas) + ")), at most the " + std::to_string(ceil_div(p.seq_k, t.block_n)) +
                    " key blocks";
  }
  schedule::check_splitkv(p, o.pass, t.block_n, t.splits);
}

}  // namespace

AlgorithmTrace build_trace(const Problem& problem, const TraceOptions& options) {
  problem.validate();
  AlgorithmTrace out;
  out.problem = problem;
  out.algorithm = options.algorithm;
  out.pass = options.pass;
  out.gemm = options.gemm;
  out.sram_limit_bytes = options.sram_limit_bytes;
  const Algorithm a = options.algorithm;
  if (a == Algorithm::fa1_swapped && has_backward(options.pass))
    throw InputError("fa1-swapped is a forward-only teaching variant (use --pass fwd)");
  for (i64 v : {options.gemm.m, options.gemm.n, options.gemm.k})
    if (v <= 0) throw InputError("GEMM tile sizes must be positive");

  if (options.block_m.has_value() != options.block_n.has_value())
    throw InputError("give both --block-m and --block-n, or neither (to use the paper's rule)");
  if (a == Algorithm::fa3)  // before any footprint: one error naming what the kernel covers
    schedule::check_fa3(problem, options.pass, options.block_m.value_or(schedule::Fa3ForwardSchedule::kBlockM),
                        options.block_n.value_or(schedule::Fa3ForwardSchedule::kBlockN));
  if (options.block_m) {
    const i64 bm = *options.block_m, bn = *options.block_n;
    if (bm <= 0 || bn <= 0)
      throw InputError("block sizes must be positive (got block-m " + std::to_string(bm) + ", block-n " +
                       std::to_string(bn) + ")");
    const i64 bytes = sram_footprint(problem, a, options.pass, bm, bn, options.gemm, options.sram_limit_bytes);
    if (bytes > options.sram_limit_bytes)
      throw InputError("tiling " + std::to_string(bm) + "x" + std::to_string(bn) + " for " +
                       std::string(to_string(a)) + " needs " + std::to_string(bytes) +
                       " bytes of shared memory per CTA; the profile allows " +
                       std::to_string(options.sram_limit_bytes) + " bytes per block");
    out.tiling = {bm, bn, bytes, options.block_rule, 0, 1, {}};
  } else {
    out.tiling = default_tiling(problem, a, options.pass, options.gemm, options.sram_limit_bytes);
  }

  choose_splits(problem, options, out.tiling);

  if (!problem.sparsity.is_dense())
    out.mask = std::make_unique<workload::BlockMask>(
        problem.sparsity.materialise(problem.seq_q, problem.seq_k, out.tiling.block_m, out.tiling.block_n));
  out.tensors = std::make_unique<TensorTable>(problem, a == Algorithm::splitkv ? out.tiling.splits : 0);

  const schedule::PlanTiling plan_tiling{out.tiling.block_m, out.tiling.block_n, options.gemm,
                                         options.sram_limit_bytes, out.tiling.splits};
  schedule::Plan plan = schedule::make_plan(problem, a, options.pass, plan_tiling, schedule::mask_view(out.mask.get()));
  for (KernelPlan& k : plan.kernels) {
    const Pass pass = k.pass;
    out.kernels.push_back({pass, std::make_unique<PlannedKernel>(std::move(k), problem.elem_bytes())});
  }
  return out;
}

}  // namespace iosim::trace
