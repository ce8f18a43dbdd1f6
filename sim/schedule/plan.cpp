#include "sim/schedule/plan.h"

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "sim/common/error.h"
#include "sim/schedule/kernel_registers.h"

namespace iosim::schedule {

using workload::Algorithm;
using workload::Pass;
using workload::Problem;

BlockMaskView mask_view(const workload::BlockMask* mask) {
  if (mask == nullptr || mask->active.empty()) return {};
  return {mask->active.data(), mask->m_blocks, mask->n_blocks};
}

AttentionTiles make_tiles(const Problem& p, i64 block_m, i64 block_n, BlockMaskView mask) {
  return {p.seq_q, p.seq_k, block_m, block_n, p.causal, mask};
}

HeadShape head_shape(const Problem& p) { return {p.batch, p.heads, p.kv_heads}; }

void check_splitkv(const Problem& p, Pass pass, i64 block_n, i64 splits) {
  if (pass != Pass::fwd) throw InputError("splitkv is forward-only (decoding): use --pass fwd");
  if (!p.sparsity.is_dense())
    throw InputError("splitkv takes no block mask (dense or causal problems only): drop --block-density/--block-mask");
  if (block_n <= 0) return;  // make_plan's block-size check reports it
  const i64 blocks = ceil_div(p.seq_k, block_n);
  if (splits < 1 || splits > blocks)
    throw InputError("--splits " + std::to_string(splits) + " is outside 1.." + std::to_string(blocks) +
                     ": N_k = " + std::to_string(p.seq_k) + " at B_c = " + std::to_string(block_n) + " has " +
                     std::to_string(blocks) + " key blocks, and each split takes at least one");
}

void check_fa3(const Problem& p, Pass pass, i64 block_m, i64 block_n) {
  using S = Fa3ForwardSchedule;
  if (pass != Pass::fwd) throw InputError("fa3 is forward-only (its kernel has no backward): use --pass fwd");
  if (p.dtype == workload::DType::fp32) throw InputError("fa3's kernel takes fp16 or bf16, not fp32 (--dtype)");
  if (p.head_dim != 64 && p.head_dim != 128)
    throw InputError("fa3's kernel is compiled for head dims 64 and 128, not " + std::to_string(p.head_dim) +
                     " (--head-dim)");
  if (block_m != S::kBlockM || block_n != S::kBlockN)
    throw InputError("fa3's kernel has one tile, Br=" + std::to_string(S::kBlockM) + " Bc=" +
                     std::to_string(S::kBlockN) + " (got --block-m " + std::to_string(block_m) + " --block-n " +
                     std::to_string(block_n) + "; give " + std::to_string(S::kBlockM) + " and " +
                     std::to_string(S::kBlockN) + ", or neither)");
  if (!p.sparsity.is_dense())
    throw InputError("fa3 takes no block mask (dense or causal problems only): drop --block-density/--block-mask");
}

void check_wgmma_gemm(const Problem& p, workload::Algorithm algorithm, const GemmTiles& g) {
  using W = WgmmaGemmShape;
  if (!workload::is_standard(algorithm))
    throw InputError("--gemm-impl wgmma applies to standard attention's GEMMs (--algo standard or standard-eager)");
  if (g.m != W::kTileM || g.n != W::kTileN || g.k != W::kTileK)
    throw InputError("--gemm-impl wgmma has one tile, " + std::to_string(W::kTileM) + "x" + std::to_string(W::kTileN) +
                     "x" + std::to_string(W::kTileK) + " (got --gemm-m " + std::to_string(g.m) + " --gemm-n " +
                     std::to_string(g.n) + " --gemm-k " + std::to_string(g.k) + "; give those, or none)");
  if (p.dtype == workload::DType::fp32)
    throw InputError("--gemm-impl wgmma takes fp16 or bf16, not fp32 (--dtype)");
}

i64 wgmma_gemm_zero_fill_bytes(const GemmPlan& g) {
  using W = WgmmaGemmShape;
  const GemmSchedule& s = g.s;
  const i64 e = s.bytes.data;
  // Bytes the boxes of one operand cross beyond it, summed over its tiles and
  // chunks: k-contiguous, a box of kTileK x kTileM per tile and chunk; else a
  // 64 x 64 box per 64-wide half that starts inside the operand. A box row
  // cut short along its contiguous dimension has its fill counted in whole
  // 32-byte sectors (the H200 counted 16 bytes more per such row, at every
  // ragged N of experiments/results/2026-12-02-h200-wgmma-gemm-model).
  const auto zero = [&](const GemmOperand& o, i64 outer, i64 tiles) {
    const i64 boxes = o.k_contiguous ? tiles * W::kTileM * W::kTileK : ceil_div(outer, 64) * 64 * 64;
    const i64 width = o.k_contiguous ? s.k : outer;  // along the contiguous dimension
    const i64 cut = (64 - (width - 64 * (ceil_div(width, 64) - 1))) % 64 * e;  // fill bytes of a cut row
    const i64 rows_cut = o.k_contiguous ? outer : s.k;                          // in-bounds rows of the cut boxes
    return (boxes * s.k_chunks() - outer * s.k) * e + rows_cut * (ceil_div(cut, 32) * 32 - cut);
  };
  const i64 per_batch = s.n_tiles() * zero(g.a, s.m, s.m_tiles()) + s.m_tiles() * zero(g.b, s.n, s.n_tiles());
  return per_batch * s.k_groups * s.batches;
}

i64 default_splits(const Problem& p, i64 block_m, i64 block_n, i64 sm_count) {
  const i64 ctas = p.batch * p.heads * ceil_div(p.seq_q, block_m);
  return max_i64(1, min_i64(ceil_div(max_i64(sm_count, 1), ctas), ceil_div(p.seq_k, block_n)));
}

// For tilings no kernel has (the compiled ones: kernel_registers.h), the
// typical count of the kind's compiled kernels (ptxas -v, sm_90, nvcc 13.0):
// FA2's large tiles use all 255; FA1 backward 210 at d = 128 and 128 at
// d = 64; the GEMMs 126-128; the FA2 row kernels 23-38; standard-eager's
// elementwise kernels 40-56.
i64 regs_per_thread(KernelKind kind, i64 head_dim) {
  switch (kind) {
    case KernelKind::fa2_fwd:
    case KernelKind::fa2_bwd_main: return 255;
    case KernelKind::fa1_fwd:
    case KernelKind::fa1_swapped_fwd: return 128;
    case KernelKind::fa1_bwd: return head_dim >= 128 ? 210 : 128;
    case KernelKind::gemm: return 128;
    case KernelKind::gemm_wgmma: return 96;
    case KernelKind::softmax_fwd: return 64;
    case KernelKind::softmax_bwd: return 56;
    case KernelKind::fa2_bwd_preprocess:
    case KernelKind::fa2_bwd_convert_dq: return 40;
    case KernelKind::elementwise: return 56;
    // ptxas -v, sm_90, nvcc 13.0, fp16 16x64: 128 at d = 128, 93 at d = 64; the combine 25.
    case KernelKind::splitkv_fwd: return head_dim >= 128 ? 128 : 96;
    case KernelKind::splitkv_combine: return 32;
    // ptxas -v, sm_90a: 168 at launch (setmaxnreg then gives the producer 24, the consumers 240).
    case KernelKind::fa3_fwd: return 168;
  }
  return 128;
}

namespace {

bool has_forward(Pass pass) { return pass != Pass::bwd; }
bool has_backward(Pass pass) { return pass != Pass::fwd; }

class Planner {
 public:
  Planner(const Problem& p, const PlanTiling& t, BlockMaskView mask)
      : p_(p), t_(t), tiles_(make_tiles(p, t.block_m, t.block_n, mask)), shape_(head_shape(p)), eb_{p.elem_bytes()} {}

  void fa2_forward(std::vector<KernelPlan>& out) const {
    const Fa2ForwardSchedule s{tiles_, shape_, p_.head_dim, eb_};
    add(out, "fa2_fwd", Pass::fwd, KernelKind::fa2_fwd, s, s.grid(), {s.threads(), s.sram_bytes(), 0});
  }
  void fa2_backward(std::vector<KernelPlan>& out) const {
    // The row kernels use the backward tiling's B_r, as the kernels do.
    const RowBlockSchedule rows{p_.seq_q, t_.block_m, shape_, p_.head_dim};
    const CtaShape row_cta{RowBlockSchedule::kThreads, 0, 0};
    add(out, "fa2_bwd_preprocess", Pass::bwd, KernelKind::fa2_bwd_preprocess, rows, rows.grid(), row_cta);
    const Fa2BackwardSchedule s{tiles_, shape_, p_.head_dim, eb_};
    add(out, "fa2_bwd_main", Pass::bwd, KernelKind::fa2_bwd_main, s, s.grid(), {s.threads(), s.sram_bytes(), 0});
    add(out, "fa2_bwd_convert_dq", Pass::bwd, KernelKind::fa2_bwd_convert_dq, rows, rows.grid(), row_cta);
  }
  void fa3_forward(std::vector<KernelPlan>& out) const {
    const Fa3ForwardSchedule s{tiles_, shape_, p_.head_dim, eb_};
    add(out, "fa3_fwd", Pass::fwd, KernelKind::fa3_fwd, s, s.grid(), {Fa3ForwardSchedule::kThreads, s.sram_bytes(), 0});
  }
  void splitkv_forward(std::vector<KernelPlan>& out) const {
    const SplitKvSchedule s{tiles_, shape_, p_.head_dim, eb_, t_.splits};
    add(out, "splitkv_fwd", Pass::fwd, KernelKind::splitkv_fwd, s, s.grid(), {s.threads(), s.sram_bytes(), 0});
    const SplitKvCombineSchedule c{p_.seq_q, shape_, p_.head_dim, t_.splits};
    add(out, "splitkv_combine", Pass::fwd, KernelKind::splitkv_combine, c, c.grid(),
        {SplitKvCombineSchedule::kThreads, 0, 0});
  }
  void fa1_forward(std::vector<KernelPlan>& out) const {
    const Fa1ForwardSchedule s{tiles_, shape_, p_.head_dim, eb_};
    add(out, "fa1_fwd", Pass::fwd, KernelKind::fa1_fwd, s, s.grid(), {s.threads(), s.launch_smem_bytes(), 0});
  }
  void fa1_swapped_forward(std::vector<KernelPlan>& out) const {
    const Fa1SwappedForwardSchedule s{tiles_, shape_, p_.head_dim, eb_};
    add(out, "fa1_swapped_fwd", Pass::fwd, KernelKind::fa1_swapped_fwd, s, s.grid(), {s.threads(), s.sram_bytes(), 0});
  }
  void fa1_backward(std::vector<KernelPlan>& out) const {
    const Fa1BackwardSchedule s{tiles_, shape_, p_.head_dim, eb_};
    add(out, "fa1_bwd", Pass::bwd, KernelKind::fa1_bwd, s, s.grid(), {s.threads(), s.launch_smem_bytes(), 0});
  }

  // Standard attention as eager PyTorch runs it: one GEMM launch per product,
  // S, P (and dP, dS) in global memory, a row softmax between. `eager`
  // (standard-eager) adds GPT-2's elementwise kernels, each over the N x N
  // matrix: S / sqrt(d), the mask (causal or block-sparse), and dropout,
  // whose output Pd and 1-byte keep mask Z are written for the backward.
  void standard_forward(std::vector<KernelPlan>& out, bool eager) const {
    const i64 H = p_.heads, d = p_.head_dim, Nq = p_.seq_q, Nk = p_.seq_k, BH = p_.batch * H, G = shape_.group();
    // S = Q K^T
    gemm(out, "std_fwd_qk", Pass::fwd, Nq, Nk, d, BH, 1, H, {TensorId::Q, true}, {TensorId::K, true, 1, G},
         TensorId::S);
    if (eager) {
      elementwise(out, "eager_fwd_scale", Pass::fwd, ElementwiseOp::scale, {TensorId::S}, {TensorId::S}, 1);
      if (masked())
        elementwise(out, "eager_fwd_mask", Pass::fwd, ElementwiseOp::mask_fill, {TensorId::S, TensorId::Mask},
                    {TensorId::S}, 1);
    }
    softmax(out, "std_fwd_softmax", Pass::fwd, KernelKind::softmax_fwd, 1, eager);
    // Philox draws, a compare and a scale per element.
    if (eager)
      elementwise(out, "eager_fwd_dropout", Pass::fwd, ElementwiseOp::dropout, {TensorId::P},
                  {TensorId::Pd, TensorId::Z}, 4);
    // O = P V (standard-eager: the dropped-out Pd)
    gemm(out, "std_fwd_pv", Pass::fwd, Nq, d, Nk, BH, 1, H, {probs(eager), true}, {TensorId::V, false, 1, G},
         TensorId::O);
  }
  void standard_backward(std::vector<KernelPlan>& out, bool eager) const {
    const i64 H = p_.heads, Hkv = p_.kv_heads, d = p_.head_dim, Nq = p_.seq_q, Nk = p_.seq_k;
    const i64 BH = p_.batch * H, BHkv = p_.batch * Hkv, G = shape_.group();
    // dV[kvh] = sum over the group's query heads of P^T dO
    gemm(out, "std_bwd_dv", Pass::bwd, Nk, d, Nq, BHkv, G, Hkv, {probs(eager), false, G, 1},
         {TensorId::dO, false, G, 1}, TensorId::dV);
    // dP = dO V^T
    gemm(out, "std_bwd_dp", Pass::bwd, Nq, Nk, d, BH, 1, H, {TensorId::dO, true}, {TensorId::V, true, 1, G},
         TensorId::dP);
    if (eager)
      elementwise(out, "eager_bwd_dropout", Pass::bwd, ElementwiseOp::dropout_bwd, {TensorId::dP, TensorId::Z},
                  {TensorId::dP}, 1);
    softmax(out, "std_bwd_softmax", Pass::bwd, KernelKind::softmax_bwd, 2, eager);
    if (eager) {
      if (masked())
        elementwise(out, "eager_bwd_mask", Pass::bwd, ElementwiseOp::mask_zero, {TensorId::dS, TensorId::Mask},
                    {TensorId::dS}, 1);
      elementwise(out, "eager_bwd_scale", Pass::bwd, ElementwiseOp::scale, {TensorId::dS}, {TensorId::dS}, 1);
    }
    // dQ = dS K
    gemm(out, "std_bwd_dq", Pass::bwd, Nq, d, Nk, BH, 1, H, {TensorId::dS, true}, {TensorId::K, false, 1, G},
         TensorId::dQ);
    // dK[kvh] = sum over the group's query heads of dS^T Q
    gemm(out, "std_bwd_dk", Pass::bwd, Nk, d, Nq, BHkv, G, Hkv, {TensorId::dS, false, G, 1},
         {TensorId::Q, false, G, 1}, TensorId::dK);
  }

 private:
  void add(std::vector<KernelPlan>& out, const char* name, Pass pass, KernelKind kind, KernelSchedule s, Dim3 grid,
           CtaShape cta) const {
    cta.regs_per_thread =
        compiled_registers(kind, p_.dtype, register_key(kind, s)).value_or(regs_per_thread(kind, p_.head_dim));
    out.push_back({name, pass, kind, std::move(s), grid, cta});
  }
  // The compiled instantiation's key (kernel_registers.h).
  RegisterKey register_key(KernelKind kind, const KernelSchedule& s) const {
    switch (kind) {
      case KernelKind::fa2_fwd:
      case KernelKind::fa2_bwd_main:
      case KernelKind::fa1_fwd:
      case KernelKind::fa1_bwd:
      case KernelKind::splitkv_fwd:
      case KernelKind::fa3_fwd: return {p_.head_dim, t_.block_m, t_.block_n};
      case KernelKind::gemm:
      case KernelKind::gemm_wgmma: return {t_.gemm.m, t_.gemm.n, t_.gemm.k};
      case KernelKind::elementwise: return {static_cast<i64>(std::get<ElementwisePlan>(s).op), 0, 0};
      default: return {0, 0, 0};
    }
  }

  void gemm(std::vector<KernelPlan>& out, const char* name, Pass pass, i64 m, i64 n, i64 k, i64 batches,
            i64 k_groups, i64 z_heads, GemmOperand a, GemmOperand b, TensorId c) const {
    GemmSchedule s{m, n, k, t_.gemm.m, t_.gemm.n, t_.gemm.k, batches, k_groups, eb_};
    s.tiles_per_cta = gemm_tiles_per_cta(s);
    if (wgmma_reads_rows()) {
      add(out, name, pass, KernelKind::gemm_wgmma, GemmPlan{s, z_heads, a, b, c}, s.grid(),
          {WgmmaGemmShape::kThreads, WgmmaGemmShape::kSmemBytes, 0});
      return;
    }
    const i64 smem = GemmSchedule::launch_smem_bytes_for(s.tile_m, s.tile_n, s.tile_k, eb_.data);
    add(out, name, pass, KernelKind::gemm, GemmPlan{s, z_heads, a, b, c}, s.grid(), {GemmSchedule::kThreads, smem, 0});
  }

  // GemmImpl::wgmma runs a GEMM on the wgmma kernel when TMA can read its
  // operands: rows of 16-byte multiples. Q, K, V, O and their gradients have
  // rows of d elements (a multiple of 8: the kernels' own rule), S, P, dP and
  // dS rows of N_k; with N_k not a multiple of 8 the kernel falls back to
  // mma.sync (kernels/standard/standard_gemm.cu), and so does the plan.
  bool wgmma_reads_rows() const {
    return t_.gemm.impl == GemmImpl::wgmma && (p_.seq_k * eb_.data) % 16 == 0 && (p_.head_dim * eb_.data) % 16 == 0;
  }

  // Output tiles per GEMM CTA (GemmSchedule::tiles_per_cta): 4 when C fits in
  // one stage buffer (the next tile's first chunk then loads during this
  // tile's epilogue) and the grid keeps at least 512 CTAs (about two waves of
  // two CTAs on 132 SMs); else 1. Measured on the H100 with 128 x 128 x 64
  // tiles (experiments/results/2026-11-28-h100-gemm-overlap, round 2): S = Q K^T
  // at K = 64 took 0.235 ms with 4 tiles per CTA, 0.261 with 2, 0.230 with 8
  // (the kernel before, one tile per CTA: 0.309); at K = 128 0.605, 0.642 and
  // 0.615 ms (before: 0.660).
  static i64 gemm_tiles_per_cta(const GemmSchedule& s) {
    constexpr i64 kTiles = 4, kMinCtas = 512;
    if (!GemmSchedule::c_in_stage(s.tile_m, s.tile_n, s.tile_k)) return 1;
    const i64 ctas = s.m_tiles() * ceil_div(s.n_tiles(), kTiles) * s.batches;
    return ctas >= kMinCtas ? kTiles : 1;
  }

  static TensorId probs(bool eager) { return eager ? TensorId::Pd : TensorId::P; }
  bool masked() const { return tiles_.causal || tiles_.mask.active != nullptr; }

  void elementwise(std::vector<KernelPlan>& out, const char* name, Pass pass, ElementwiseOp op,
                   std::initializer_list<TensorId> in, std::initializer_list<TensorId> outs,
                   i64 fp32_ops_per_element) const {
    if (in.size() > 2 || outs.size() > 2) throw std::logic_error("an elementwise kernel has at most 2 inputs and 2 outputs");
    ElementwisePlan e{op, RowElementwiseSchedule{p_.seq_q, p_.seq_k, shape_}, {}, static_cast<int>(in.size()), {},
                      static_cast<int>(outs.size()), fp32_ops_per_element};
    std::copy(in.begin(), in.end(), e.in.begin());
    std::copy(outs.begin(), outs.end(), e.out.begin());
    add(out, name, pass, KernelKind::elementwise, e, e.s.grid(), {RowElementwiseSchedule::kThreads, 0, 0});
  }

  // `eager`: the scale and the mask are kernels of their own (a plain softmax, as GPT-2's).
  void softmax(std::vector<KernelPlan>& out, const char* name, Pass pass, KernelKind kind, i64 operands,
               bool eager) const {
    const RowSoftmaxSchedule s{p_.seq_q, p_.seq_k, shape_, eb_, t_.sram_limit_bytes, operands};
    AttentionTiles tiles = tiles_;
    if (eager) {
      tiles.causal = false;
      tiles.mask = {};
    }
    add(out, name, pass, kind, SoftmaxPlan{s, tiles, !eager}, s.grid(), {RowSoftmaxSchedule::kThreads, s.sram_bytes(), 0});
  }

  const Problem& p_;
  const PlanTiling& t_;
  AttentionTiles tiles_;
  HeadShape shape_;
  ElementBytes eb_;
};

}  // namespace

Plan make_plan(const Problem& problem, Algorithm algorithm, Pass pass, const PlanTiling& tiling,
               BlockMaskView mask) {
  if (algorithm == Algorithm::fa1_swapped && has_backward(pass))
    throw InputError("fa1-swapped is a forward-only teaching variant (use --pass fwd)");
  if (tiling.block_m <= 0 || tiling.block_n <= 0)
    throw InputError("block sizes must be positive (got block-m " + std::to_string(tiling.block_m) + ", block-n " +
                     std::to_string(tiling.block_n) + ")");
  for (i64 v : {tiling.gemm.m, tiling.gemm.n, tiling.gemm.k})
    if (v <= 0) throw InputError("GEMM tile sizes must be positive");
  if (tiling.gemm.impl == GemmImpl::wgmma) check_wgmma_gemm(problem, algorithm, tiling.gemm);
  if (algorithm == Algorithm::splitkv) {
    check_splitkv(problem, pass, tiling.block_n, tiling.splits);
    if (mask.active != nullptr) throw InputError("splitkv takes no block mask (dense or causal problems only)");
  }
  if (algorithm == Algorithm::fa3) {
    check_fa3(problem, pass, tiling.block_m, tiling.block_n);
    if (mask.active != nullptr) throw InputError("fa3 takes no block mask (dense or causal problems only)");
  }
  Plan plan;
  plan.algorithm = algorithm;
  plan.pass = pass;
  const Planner build(problem, tiling, mask);
  if (has_forward(pass)) {
    switch (algorithm) {
      case Algorithm::standard:
      case Algorithm::standard_eager: build.standard_forward(plan.kernels, algorithm == Algorithm::standard_eager); break;
      case Algorithm::fa1: build.fa1_forward(plan.kernels); break;
      case Algorithm::fa1_swapped: build.fa1_swapped_forward(plan.kernels); break;
      case Algorithm::fa2: build.fa2_forward(plan.kernels); break;
      case Algorithm::splitkv: build.splitkv_forward(plan.kernels); break;
      case Algorithm::fa3: build.fa3_forward(plan.kernels); break;
    }
  }
  if (has_backward(pass)) {
    switch (algorithm) {
      case Algorithm::standard:
      case Algorithm::standard_eager: build.standard_backward(plan.kernels, algorithm == Algorithm::standard_eager); break;
      case Algorithm::fa1: build.fa1_backward(plan.kernels); break;
      case Algorithm::fa2: build.fa2_backward(plan.kernels); break;
      case Algorithm::fa1_swapped:
      case Algorithm::splitkv:
      case Algorithm::fa3: break;
    }
  }
  return plan;
}

}  // namespace iosim::schedule
