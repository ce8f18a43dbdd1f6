#include "sim/trace/algorithms.h"

#include <functional>
#include <sstream>

#include "sim/common/error.h"
#include "sim/trace/kernel_params.h"

namespace iosim::trace {

using schedule::AttentionTiles;
using schedule::Dim3;
using schedule::HeadShape;
using workload::Pass;
using workload::Problem;

namespace {

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

HeadShape head_shape(const Problem& p) { return {p.batch, p.heads, p.kv_heads}; }

AttentionTiles make_tiles(const Problem& p, const Tiling& t, const workload::BlockMask* mask) {
  AttentionTiles tiles{p.seq_q, p.seq_k, t.block_m, t.block_n, p.causal, {}};
  if (mask != nullptr && !mask->active.empty())
    tiles.mask = {mask->active.data(), mask->m_blocks, mask->n_blocks};
  return tiles;
}

// ---------------------------------------------------------------------------
// FlashAttention-2 forward.
class Fa2Forward final : public KernelTrace {
 public:
  explicit Fa2Forward(schedule::Fa2ForwardSchedule s) : s_(s) {}
  std::string name() const override { return "fa2_fwd"; }
  Dim3 grid() const override { return s_.grid(); }
  CtaResources resources() const override {
    return family_resources(KernelFamily::fa2_fwd, s_.sram_bytes(), s_.warps());
  }
  Generator<Step> cta_steps(i64 x, i64 y, i64 z) const override {
    const auto cta = s_.cta(x, y, z);
    const auto& t = s_.tiles;
    const i64 i = cta.m_block, b = cta.batch, h = cta.head, kvh = s_.shape.kv_head_of(h);
    const i64 r0 = t.row_begin(i), rows = t.rows_in(i), d = s_.head_dim;
    Step step;
    bool q_loaded = false;
    for (i64 j = t.first_n_block(i); j < t.n_block_end(i); j = t.next_n_block(i, j)) {
      step.clear();
      if (!q_loaded) step.load(rd(TensorId::Q, b, h, r0, rows, 0, d));
      q_loaded = true;
      const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
      step.load(rd(TensorId::K, b, kvh, c0, cols, 0, d));
      step.load(rd(TensorId::V, b, kvh, c0, cols, 0, d));
      step.compute = softmax_tile_work(rows, cols, t.crosses_diagonal(i, j));
      step.compute.tensor_flops = 4 * rows * cols * d;   // S = Q K^T, O += P V
      step.compute.fp32_ops += rows * d;                 // rescale the O accumulator
      step.compute.sfu_ops += rows;                      // exp(m_old - m_new)
      co_yield step;
    }
    // Epilogue: O = O / l and L = m + log(l), written once.
    step.clear();
    step.compute = {0, rows * d, rows};
    step.store(wr(TensorId::O, b, h, r0, rows, 0, d));
    step.store(wr(TensorId::L, b, h, r0, rows, 0, 1));
    co_yield step;
  }

 private:
  schedule::Fa2ForwardSchedule s_;
};

// FlashAttention-2 backward: D = rowsum(dO * O) and dQaccum = 0.
class Fa2BackwardPreprocess final : public KernelTrace {
 public:
  Fa2BackwardPreprocess(schedule::RowBlockSchedule s, i64 d) : s_(s), d_(d) {}
  std::string name() const override { return "fa2_bwd_preprocess"; }
  Dim3 grid() const override { return s_.grid(); }
  CtaResources resources() const override { return family_resources(KernelFamily::rowwise, 0); }
  Generator<Step> cta_steps(i64 x, i64 y, i64 z) const override {
    const i64 r0 = x * s_.block_rows, rows = s_.rows_in(x);
    Step step;
    step.load(rd(TensorId::O, z, y, r0, rows, 0, d_));
    step.load(rd(TensorId::dO, z, y, r0, rows, 0, d_));
    step.compute = {0, 2 * rows * d_, 0};
    step.store(wr(TensorId::D, z, y, r0, rows, 0, 1));
    step.store(wr(TensorId::dQaccum, z, y, r0, rows, 0, d_));
    co_yield step;
  }

 private:
  schedule::RowBlockSchedule s_;
  i64 d_;
};

class Fa2BackwardMain final : public KernelTrace {
 public:
  explicit Fa2BackwardMain(schedule::Fa2BackwardSchedule s) : s_(s) {}
  std::string name() const override { return "fa2_bwd_main"; }
  Dim3 grid() const override { return s_.grid(); }
  CtaResources resources() const override {
    return family_resources(KernelFamily::fa2_bwd, s_.sram_bytes());
  }
  Generator<Step> cta_steps(i64 x, i64 y, i64 z) const override {
    const auto cta = s_.cta(x, y, z);
    const auto& t = s_.tiles;
    const i64 j = cta.n_block, b = cta.batch, kvh = cta.kv_head, d = s_.head_dim;
    const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
    Step step;
    step.load(rd(TensorId::K, b, kvh, c0, cols, 0, d));
    step.load(rd(TensorId::V, b, kvh, c0, cols, 0, d));
    co_yield step;
    for (i64 g = 0; g < s_.shape.group(); ++g) {
      const i64 h = s_.first_head(cta) + g;
      for (i64 i = t.first_m_block(j); i < t.m_blocks(); i = t.next_m_block(j, i)) {
        const i64 r0 = t.row_begin(i), rows = t.rows_in(i);
        step.clear();
        step.load(rd(TensorId::Q, b, h, r0, rows, 0, d));
        step.load(rd(TensorId::dO, b, h, r0, rows, 0, d));
        step.load(rd(TensorId::L, b, h, r0, rows, 0, 1));
        step.load(rd(TensorId::D, b, h, r0, rows, 0, 1));
        // S = Q K^T, dV += P^T dO, dP = dO V^T, dQ = dS K, dK += dS^T Q.
        step.compute = {10 * rows * cols * d, rows * cols * (4 + (t.crosses_diagonal(i, j) ? 1 : 0)),
                        rows * cols};
        step.store(red(TensorId::dQaccum, b, h, r0, rows, 0, d));
        co_yield step;
      }
    }
    step.clear();
    step.store(wr(TensorId::dK, b, kvh, c0, cols, 0, d));
    step.store(wr(TensorId::dV, b, kvh, c0, cols, 0, d));
    co_yield step;
  }

 private:
  schedule::Fa2BackwardSchedule s_;
};

// Converts the fp32 dQ accumulator to dQ in the data type (scaled).
class ConvertDq final : public KernelTrace {
 public:
  ConvertDq(std::string name, schedule::RowBlockSchedule s, i64 d) : name_(std::move(name)), s_(s), d_(d) {}
  std::string name() const override { return name_; }
  Dim3 grid() const override { return s_.grid(); }
  CtaResources resources() const override { return family_resources(KernelFamily::rowwise, 0); }
  Generator<Step> cta_steps(i64 x, i64 y, i64 z) const override {
    const i64 r0 = x * s_.block_rows, rows = s_.rows_in(x);
    Step step;
    step.load(rd(TensorId::dQaccum, z, y, r0, rows, 0, d_));
    step.compute = {0, rows * d_, 0};
    step.store(wr(TensorId::dQ, z, y, r0, rows, 0, d_));
    co_yield step;
  }

 private:
  std::string name_;
  schedule::RowBlockSchedule s_;
  i64 d_;
};

// ---------------------------------------------------------------------------
// FlashAttention (v1) forward, Algorithm 1.
class Fa1Forward final : public KernelTrace {
 public:
  explicit Fa1Forward(schedule::Fa1ForwardSchedule s) : s_(s) {}
  std::string name() const override { return "fa1_fwd"; }
  Dim3 grid() const override { return s_.grid(); }
  CtaResources resources() const override {
    return family_resources(KernelFamily::fa1_fwd, s_.sram_bytes());
  }
  std::array<bool, 3> replica_dims() const override { return {true, true, true}; }
  Generator<Step> cta_steps(i64 x, i64 y, i64 z) const override {
    const auto cta = s_.cta(x, y, z);
    const auto& t = s_.tiles;
    const i64 b = cta.batch, h = cta.head, kvh = s_.shape.kv_head_of(h), d = s_.head_dim;
    Step step;
    // Step 2: O = 0, l = 0, m = -inf in global memory.
    step.store(wr(TensorId::O, b, h, 0, t.seq_q, 0, d));
    step.store(wr(TensorId::l, b, h, 0, t.seq_q, 0, 1));
    step.store(wr(TensorId::m, b, h, 0, t.seq_q, 0, 1));
    co_yield step;
    for (i64 j = 0; j < t.n_blocks(); ++j) {
      if (!t.column_has_active(j)) continue;
      const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
      step.clear();
      step.load(rd(TensorId::K, b, kvh, c0, cols, 0, d));
      step.load(rd(TensorId::V, b, kvh, c0, cols, 0, d));
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
        step.store(wr(TensorId::O, b, h, r0, rows, 0, d));
        step.store(wr(TensorId::l, b, h, r0, rows, 0, 1));
        step.store(wr(TensorId::m, b, h, r0, rows, 0, 1));
        co_yield step;
      }
    }
  }

 private:
  schedule::Fa1ForwardSchedule s_;
};

// FlashAttention (v1) forward with the loops swapped (teaching variant).
class Fa1SwappedForward final : public KernelTrace {
 public:
  explicit Fa1SwappedForward(schedule::Fa1SwappedForwardSchedule s) : s_(s) {}
  std::string name() const override { return "fa1_swapped_fwd"; }
  Dim3 grid() const override { return s_.grid(); }
  CtaResources resources() const override {
    return family_resources(KernelFamily::fa1_fwd, s_.sram_bytes());
  }
  std::array<bool, 3> replica_dims() const override { return {true, true, true}; }
  Generator<Step> cta_steps(i64 x, i64 y, i64 z) const override {
    const auto cta = s_.cta(x, y, z);
    const auto& t = s_.tiles;
    const i64 b = cta.batch, h = cta.head, kvh = s_.shape.kv_head_of(h), d = s_.head_dim;
    Step step;
    for (i64 i = 0; i < t.m_blocks(); ++i) {
      const i64 r0 = t.row_begin(i), rows = t.rows_in(i);
      step.clear();
      step.load(rd(TensorId::Q, b, h, r0, rows, 0, d));
      step.load(rd(TensorId::O, b, h, r0, rows, 0, d));
      co_yield step;
      for (i64 j = t.first_n_block(i); j < t.n_block_end(i); j = t.next_n_block(i, j)) {
        const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
        step.clear();
        step.load(rd(TensorId::K, b, kvh, c0, cols, 0, d));
        step.load(rd(TensorId::V, b, kvh, c0, cols, 0, d));
        step.compute = softmax_tile_work(rows, cols, t.crosses_diagonal(i, j));
        step.compute.tensor_flops = 4 * rows * cols * d;
        step.compute.fp32_ops += 4 * rows * d + 6 * rows;
        step.compute.sfu_ops += 2 * rows;
        co_yield step;
      }
      step.clear();
      step.store(wr(TensorId::O, b, h, r0, rows, 0, d));
      step.store(wr(TensorId::l, b, h, r0, rows, 0, 1));
      step.store(wr(TensorId::m, b, h, r0, rows, 0, 1));
      co_yield step;
    }
  }

 private:
  schedule::Fa1SwappedForwardSchedule s_;
};

// FlashAttention (v1) backward, Algorithm 4.
class Fa1Backward final : public KernelTrace {
 public:
  explicit Fa1Backward(schedule::Fa1BackwardSchedule s) : s_(s) {}
  std::string name() const override { return "fa1_bwd"; }
  Dim3 grid() const override { return s_.grid(); }
  CtaResources resources() const override {
    return family_resources(KernelFamily::fa1_bwd, s_.sram_bytes());
  }
  std::array<bool, 3> replica_dims() const override { return {true, true, true}; }
  Generator<Step> cta_steps(i64 x, i64 y, i64 z) const override {
    const auto cta = s_.cta(x, y, z);
    const auto& t = s_.tiles;
    const i64 b = cta.batch, kvh = cta.kv_head, d = s_.head_dim, group = s_.shape.group();
    const i64 head0 = kvh * group;
    Step step;
    // Step 5: dQ (its fp32 accumulator), dK, dV = 0 in global memory.
    step.store(wr(TensorId::dK, b, kvh, 0, t.seq_k, 0, d));
    step.store(wr(TensorId::dV, b, kvh, 0, t.seq_k, 0, d));
    co_yield step;
    for (i64 g = 0; g < group; ++g) {
      step.clear();
      step.store(wr(TensorId::dQaccum, b, head0 + g, 0, t.seq_q, 0, d));
      co_yield step;
    }
    for (i64 j = 0; j < t.n_blocks(); ++j) {
      if (!t.column_has_active(j)) continue;
      const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
      step.clear();
      step.load(rd(TensorId::K, b, kvh, c0, cols, 0, d));
      step.load(rd(TensorId::V, b, kvh, c0, cols, 0, d));
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
          step.store(wr(TensorId::dQaccum, b, h, r0, rows, 0, d));
          co_yield step;
        }
      }
      step.clear();
      step.store(wr(TensorId::dK, b, kvh, c0, cols, 0, d));
      step.store(wr(TensorId::dV, b, kvh, c0, cols, 0, d));
      co_yield step;
    }
    // Convert the fp32 dQ accumulator to dQ in the data type.
    for (i64 g = 0; g < group; ++g) {
      step.clear();
      step.load(rd(TensorId::dQaccum, b, head0 + g, 0, t.seq_q, 0, d));
      step.compute = {0, t.seq_q * d, 0};
      step.store(wr(TensorId::dQ, b, head0 + g, 0, t.seq_q, 0, d));
      co_yield step;
    }
  }

 private:
  schedule::Fa1BackwardSchedule s_;
};

// ---------------------------------------------------------------------------
// Standard attention: batched GEMMs and row softmax kernels.

// An operand tile for the GEMM CTA at (m_tile or n_tile), batch slice z,
// group member g, reduction range [k0, k0 + kd).
using OperandFn = std::function<TileAccess(i64 tile, i64 z, i64 g, i64 k0, i64 kd)>;
using OutputFn = std::function<TileAccess(i64 m_tile, i64 n_tile, i64 z)>;

class GemmTrace final : public KernelTrace {
 public:
  GemmTrace(std::string name, schedule::GemmSchedule s, OperandFn a, OperandFn b, OutputFn c)
      : name_(std::move(name)), s_(s), a_(std::move(a)), b_(std::move(b)), c_(std::move(c)) {}
  std::string name() const override { return name_; }
  Dim3 grid() const override { return s_.grid(); }
  CtaResources resources() const override { return family_resources(KernelFamily::gemm, s_.sram_bytes()); }
  std::array<bool, 3> replica_dims() const override { return {false, false, true}; }
  Generator<Step> cta_steps(i64 x, i64 y, i64 z) const override {
    const auto cta = s_.cta(x, y, z);
    const i64 rows = s_.rows_in(cta.m_tile), cols = s_.cols_in(cta.n_tile);
    Step step;
    for (i64 g = 0; g < s_.k_groups; ++g) {
      for (i64 kc = 0; kc < s_.k_chunks(); ++kc) {
        const i64 k0 = kc * s_.tile_k, kd = s_.depth_in(kc);
        step.clear();
        step.load(a_(cta.m_tile, z, g, k0, kd));
        step.load(b_(cta.n_tile, z, g, k0, kd));
        step.compute.tensor_flops = 2 * rows * cols * kd;
        co_yield step;
      }
    }
    step.clear();
    step.store(c_(cta.m_tile, cta.n_tile, z));
    co_yield step;
  }

 private:
  std::string name_;
  schedule::GemmSchedule s_;
  OperandFn a_, b_;
  OutputFn c_;
};

// Forward: P = softmax(scale * masked S). Backward: dS = scale * P * (dP - rowsum(dP * P)).
class RowSoftmaxTrace final : public KernelTrace {
 public:
  RowSoftmaxTrace(schedule::RowSoftmaxSchedule s, bool backward) : s_(s), backward_(backward) {}
  std::string name() const override { return backward_ ? "std_bwd_softmax" : "std_fwd_softmax"; }
  Dim3 grid() const override { return s_.grid(); }
  CtaResources resources() const override { return family_resources(KernelFamily::softmax, s_.sram_bytes()); }
  Generator<Step> cta_steps(i64 x, i64 y, i64 z) const override {
    const i64 r0 = s_.first_row(x), rows = s_.rows_in(x), n = s_.seq_k;
    Step step;
    auto load_inputs = [&] {
      if (backward_) {
        step.load(rd(TensorId::P, z, y, r0, rows, 0, n));
        step.load(rd(TensorId::dP, z, y, r0, rows, 0, n));
      } else {
        step.load(rd(TensorId::S, z, y, r0, rows, 0, n));
      }
    };
    const i64 elems = rows * n;
    if (!s_.row_fits_on_chip()) {  // statistics pass: row max and sum (or rowsum(dP * P))
      load_inputs();
      step.compute = {0, 3 * elems, backward_ ? 0 : elems};
      co_yield step;
      step.clear();
    }
    load_inputs();
    step.compute = {0, 4 * elems, backward_ ? 0 : elems};
    step.store(wr(backward_ ? TensorId::dS : TensorId::P, z, y, r0, rows, 0, n));
    co_yield step;
  }

 private:
  schedule::RowSoftmaxSchedule s_;
  bool backward_;
};

// ---------------------------------------------------------------------------
// Assembling the kernels of each algorithm.

// Batch slice z of a GEMM over heads: z = b * heads + h.
i64 b_of(i64 z, i64 heads) { return z / heads; }
i64 h_of(i64 z, i64 heads) { return z % heads; }

struct Builder {
  const Problem& p;
  const Tiling& tiling;
  const GemmTiles& gemm;
  const workload::BlockMask* mask;
  i64 sram_limit;

  AttentionTiles tiles() const { return make_tiles(p, tiling, mask); }
  schedule::ElementBytes eb() const { return {p.elem_bytes()}; }
  schedule::RowBlockSchedule rows(i64 block_rows) const {
    return {p.seq_q, block_rows, head_shape(p)};
  }

  schedule::GemmSchedule gemm_schedule(i64 m, i64 n, i64 k, i64 batches, i64 k_groups) const {
    return {m, n, k, gemm.m, gemm.n, gemm.k, batches, k_groups, eb()};
  }

  void standard_forward(std::vector<KernelEntry>& out) const {
    const i64 H = p.heads, d = p.head_dim, Nq = p.seq_q, Nk = p.seq_k;
    const auto shape = head_shape(p);
    const auto sg = gemm_schedule(Nq, Nk, d, p.batch * H, 1);
    auto kv = [shape](i64 h) { return shape.kv_head_of(h); };
    // S = Q K^T
    out.push_back({Pass::fwd, std::make_unique<GemmTrace>(
        "std_fwd_qk", sg,
        [=](i64 mt, i64 z, i64, i64 k0, i64 kd) {
          return rd(TensorId::Q, b_of(z, H), h_of(z, H), mt * sg.tile_m, sg.rows_in(mt), k0, kd);
        },
        [=](i64 nt, i64 z, i64, i64 k0, i64 kd) {
          return rd(TensorId::K, b_of(z, H), kv(h_of(z, H)), nt * sg.tile_n, sg.cols_in(nt), k0, kd);
        },
        [=](i64 mt, i64 nt, i64 z) {
          return wr(TensorId::S, b_of(z, H), h_of(z, H), mt * sg.tile_m, sg.rows_in(mt), nt * sg.tile_n,
                    sg.cols_in(nt));
        })});
    out.push_back({Pass::fwd, std::make_unique<RowSoftmaxTrace>(
                                  schedule::RowSoftmaxSchedule{Nq, Nk, shape, eb(), sram_limit, 1}, false)});
    // O = P V
    const auto so = gemm_schedule(Nq, d, Nk, p.batch * H, 1);
    out.push_back({Pass::fwd, std::make_unique<GemmTrace>(
        "std_fwd_pv", so,
        [=](i64 mt, i64 z, i64, i64 k0, i64 kd) {
          return rd(TensorId::P, b_of(z, H), h_of(z, H), mt * so.tile_m, so.rows_in(mt), k0, kd);
        },
        [=](i64 nt, i64 z, i64, i64 k0, i64 kd) {
          return rd(TensorId::V, b_of(z, H), kv(h_of(z, H)), k0, kd, nt * so.tile_n, so.cols_in(nt));
        },
        [=](i64 mt, i64 nt, i64 z) {
          return wr(TensorId::O, b_of(z, H), h_of(z, H), mt * so.tile_m, so.rows_in(mt), nt * so.tile_n,
                    so.cols_in(nt));
        })});
  }

  void standard_backward(std::vector<KernelEntry>& out) const {
    const i64 H = p.heads, Hkv = p.kv_heads, d = p.head_dim, Nq = p.seq_q, Nk = p.seq_k;
    const auto shape = head_shape(p);
    const i64 group = shape.group();
    auto kv = [shape](i64 h) { return shape.kv_head_of(h); };
    // dV[kvh] = sum over the group's query heads of P^T dO
    const auto sdv = gemm_schedule(Nk, d, Nq, p.batch * Hkv, group);
    out.push_back({Pass::bwd, std::make_unique<GemmTrace>(
        "std_bwd_dv", sdv,
        [=](i64 mt, i64 z, i64 g, i64 k0, i64 kd) {
          return rd(TensorId::P, b_of(z, Hkv), h_of(z, Hkv) * group + g, k0, kd, mt * sdv.tile_m,
                    sdv.rows_in(mt));
        },
        [=](i64 nt, i64 z, i64 g, i64 k0, i64 kd) {
          return rd(TensorId::dO, b_of(z, Hkv), h_of(z, Hkv) * group + g, k0, kd, nt * sdv.tile_n,
                    sdv.cols_in(nt));
        },
        [=](i64 mt, i64 nt, i64 z) {
          return wr(TensorId::dV, b_of(z, Hkv), h_of(z, Hkv), mt * sdv.tile_m, sdv.rows_in(mt),
                    nt * sdv.tile_n, sdv.cols_in(nt));
        })});
    // dP = dO V^T
    const auto sdp = gemm_schedule(Nq, Nk, d, p.batch * H, 1);
    out.push_back({Pass::bwd, std::make_unique<GemmTrace>(
        "std_bwd_dp", sdp,
        [=](i64 mt, i64 z, i64, i64 k0, i64 kd) {
          return rd(TensorId::dO, b_of(z, H), h_of(z, H), mt * sdp.tile_m, sdp.rows_in(mt), k0, kd);
        },
        [=](i64 nt, i64 z, i64, i64 k0, i64 kd) {
          return rd(TensorId::V, b_of(z, H), kv(h_of(z, H)), nt * sdp.tile_n, sdp.cols_in(nt), k0, kd);
        },
        [=](i64 mt, i64 nt, i64 z) {
          return wr(TensorId::dP, b_of(z, H), h_of(z, H), mt * sdp.tile_m, sdp.rows_in(mt),
                    nt * sdp.tile_n, sdp.cols_in(nt));
        })});
    out.push_back({Pass::bwd, std::make_unique<RowSoftmaxTrace>(
                                  schedule::RowSoftmaxSchedule{Nq, Nk, shape, eb(), sram_limit, 2}, true)});
    // dQ = dS K
    const auto sdq = gemm_schedule(Nq, d, Nk, p.batch * H, 1);
    out.push_back({Pass::bwd, std::make_unique<GemmTrace>(
        "std_bwd_dq", sdq,
        [=](i64 mt, i64 z, i64, i64 k0, i64 kd) {
          return rd(TensorId::dS, b_of(z, H), h_of(z, H), mt * sdq.tile_m, sdq.rows_in(mt), k0, kd);
        },
        [=](i64 nt, i64 z, i64, i64 k0, i64 kd) {
          return rd(TensorId::K, b_of(z, H), kv(h_of(z, H)), k0, kd, nt * sdq.tile_n, sdq.cols_in(nt));
        },
        [=](i64 mt, i64 nt, i64 z) {
          return wr(TensorId::dQ, b_of(z, H), h_of(z, H), mt * sdq.tile_m, sdq.rows_in(mt),
                    nt * sdq.tile_n, sdq.cols_in(nt));
        })});
    // dK[kvh] = sum over the group's query heads of dS^T Q
    const auto sdk = gemm_schedule(Nk, d, Nq, p.batch * Hkv, group);
    out.push_back({Pass::bwd, std::make_unique<GemmTrace>(
        "std_bwd_dk", sdk,
        [=](i64 mt, i64 z, i64 g, i64 k0, i64 kd) {
          return rd(TensorId::dS, b_of(z, Hkv), h_of(z, Hkv) * group + g, k0, kd, mt * sdk.tile_m,
                    sdk.rows_in(mt));
        },
        [=](i64 nt, i64 z, i64 g, i64 k0, i64 kd) {
          return rd(TensorId::Q, b_of(z, Hkv), h_of(z, Hkv) * group + g, k0, kd, nt * sdk.tile_n,
                    sdk.cols_in(nt));
        },
        [=](i64 mt, i64 nt, i64 z) {
          return wr(TensorId::dK, b_of(z, Hkv), h_of(z, Hkv), mt * sdk.tile_m, sdk.rows_in(mt),
                    nt * sdk.tile_n, sdk.cols_in(nt));
        })});
  }

  void fa1_forward(std::vector<KernelEntry>& out) const {
    out.push_back({Pass::fwd, std::make_unique<Fa1Forward>(
                                  schedule::Fa1ForwardSchedule{tiles(), head_shape(p), p.head_dim, eb()})});
  }
  void fa1_swapped_forward(std::vector<KernelEntry>& out) const {
    out.push_back({Pass::fwd, std::make_unique<Fa1SwappedForward>(
                                  schedule::Fa1SwappedForwardSchedule{tiles(), head_shape(p), p.head_dim, eb()})});
  }
  void fa1_backward(std::vector<KernelEntry>& out) const {
    out.push_back({Pass::bwd, std::make_unique<Fa1Backward>(
                                  schedule::Fa1BackwardSchedule{tiles(), head_shape(p), p.head_dim, eb()})});
  }
  void fa2_forward(std::vector<KernelEntry>& out) const {
    out.push_back({Pass::fwd, std::make_unique<Fa2Forward>(
                                  schedule::Fa2ForwardSchedule{tiles(), head_shape(p), p.head_dim, eb()})});
  }
  void fa2_backward(std::vector<KernelEntry>& out) const {
    out.push_back({Pass::bwd, std::make_unique<Fa2BackwardPreprocess>(rows(tiling.block_m), p.head_dim)});
    out.push_back({Pass::bwd, std::make_unique<Fa2BackwardMain>(
                                  schedule::Fa2BackwardSchedule{tiles(), head_shape(p), p.head_dim, eb()})});
    out.push_back({Pass::bwd, std::make_unique<ConvertDq>("fa2_bwd_convert_dq", rows(tiling.block_m), p.head_dim)});
  }
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
    case Algorithm::fa1:
      return fwd ? schedule::Fa1ForwardSchedule{t, hs, p.head_dim, e}.sram_bytes()
                 : schedule::Fa1BackwardSchedule{t, hs, p.head_dim, e}.sram_bytes();
    case Algorithm::fa1_swapped:
      return fwd ? schedule::Fa1SwappedForwardSchedule{t, hs, p.head_dim, e}.sram_bytes()
                 : schedule::Fa1BackwardSchedule{t, hs, p.head_dim, e}.sram_bytes();
    case Algorithm::standard: {
      const schedule::GemmSchedule g{1, 1, 1, gemm.m, gemm.n, gemm.k, 1, 1, e};
      const schedule::RowSoftmaxSchedule sm{p.seq_q, p.seq_k, hs, e, sram_limit, fwd ? 1 : 2};
      return max_i64(g.sram_bytes(), sm.sram_bytes());
    }
  }
  return 0;
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
  if (a == Algorithm::standard) {
    // Block sizes only set the granularity of a block-sparse mask here.
    return {gemm.m, gemm.n, sram_footprint(p, a, pass, gemm.m, gemm.n, gemm, sram_limit),
            "standard: mask blocks = GEMM tile " + std::to_string(gemm.m) + "x" + std::to_string(gemm.n), 0};
  }
  const i64 d = p.head_dim;
  const i64 m_full = sram_limit / p.elem_bytes();
  for (i64 m = m_full, halvings = 0; m >= 4 * d; m /= 2, ++halvings) {
    const i64 bc = ceil_div(m, 4 * d);
    const i64 br = min_i64(bc, d);
    const i64 bytes = sram_footprint(p, a, pass, br, bc, gemm, sram_limit);
    if (bytes <= sram_limit) {
      std::ostringstream rule;
      rule << "paper: Bc=ceil(M/4d), Br=min(Bc,d), M=" << m << " elements";
      if (halvings > 0) rule << " (M halved " << halvings << "x from " << m_full << " so the "
                             << (has_backward(pass) ? "backward" : "") << " working set fits)";
      return {br, bc, bytes, rule.str(), m};
    }
  }
  throw InputError("no tiling from the paper's rule fits " + std::to_string(sram_limit) +
                   " bytes of shared memory for head dim " + std::to_string(d));
}

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
    out.tiling = {bm, bn, bytes, "flags", 0};
  } else {
    out.tiling = default_tiling(problem, a, options.pass, options.gemm, options.sram_limit_bytes);
  }

  const AttentionTiles grid{problem.seq_q, problem.seq_k, out.tiling.block_m, out.tiling.block_n, false, {}};
  if (!problem.sparsity.is_dense())
    out.mask = std::make_unique<workload::BlockMask>(problem.sparsity.materialise(grid.m_blocks(), grid.n_blocks()));
  out.tensors = std::make_unique<TensorTable>(problem);

  const Builder build{problem, out.tiling, options.gemm, out.mask.get(), options.sram_limit_bytes};
  if (has_forward(options.pass)) {
    switch (a) {
      case Algorithm::standard: build.standard_forward(out.kernels); break;
      case Algorithm::fa1: build.fa1_forward(out.kernels); break;
      case Algorithm::fa1_swapped: build.fa1_swapped_forward(out.kernels); break;
      case Algorithm::fa2: build.fa2_forward(out.kernels); break;
    }
  }
  if (has_backward(options.pass)) {
    switch (a) {
      case Algorithm::standard: build.standard_backward(out.kernels); break;
      case Algorithm::fa1: build.fa1_backward(out.kernels); break;
      case Algorithm::fa2: build.fa2_backward(out.kernels); break;
      case Algorithm::fa1_swapped: break;
    }
  }
  return out;
}

}  // namespace iosim::trace
