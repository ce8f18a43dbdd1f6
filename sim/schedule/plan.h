// The plan of one attention pass: the ordered list of kernels an algorithm
// launches, each with its grid, CTA mapping, CTA shape as launched, and the
// schedule whose loop nest its CTAs walk. It is the one description that
//   - sim/trace walks to emit tile accesses (sim/trace/algorithms.cpp),
//   - sim/numerics walks to execute the algorithm on the CPU,
//   - kernels/ walks to launch (the launch list) and, inside each kernel, to
//     visit tiles (the schedules' HD iterators in kernel_schedules.h),
// so the trace, the numerics and the kernels cannot drift apart.
//
// Where each algorithm's loop nest lives (kernel_schedules.h):
//   fa2 forward   Fa2ForwardSchedule::key_blocks      (AttentionTiles::KeyBlockRange)
//   fa2 backward  Fa2BackwardSchedule::work_items
//   fa3 forward   Fa3ForwardSchedule::key_blocks      (FA2's walk; causal: last query block first)
//   fa1 forward   Fa1ForwardSchedule::first_key_block/next_key_block, tiles.first_m_block/next_m_block
//   fa1 backward  Fa1BackwardSchedule (same outer loop; GQA heads; query blocks)
//   fa1-swapped   Fa1SwappedForwardSchedule::key_blocks
//   standard      GemmSchedule (k_groups x k_chunks), RowSoftmaxSchedule (one or two row passes)
//   standard-eager  the same, and RowElementwiseSchedule (one step per CTA)
//   splitkv       SplitKvSchedule::key_blocks (a split's run of key blocks), SplitKvCombineSchedule
//
// Plain C++17 and no allocation in the schedules: CUDA host code includes it.
#pragma once
#include <array>
#include <string>
#include <variant>
#include <vector>

#include "sim/schedule/fa3_schedule.h"
#include "sim/schedule/kernel_schedules.h"
#include "sim/schedule/tensors.h"
#include "sim/workload/problem.h"

namespace iosim::schedule {

enum class KernelKind : std::uint8_t {
  fa2_fwd,
  fa2_bwd_preprocess,  // D = rowsum(dO o O), dQaccum = 0
  fa2_bwd_main,
  fa2_bwd_convert_dq,  // dQ = scale dQaccum in the data type
  fa1_fwd,
  fa1_swapped_fwd,  // teaching variant: no CUDA kernel
  fa1_bwd,
  gemm,        // standard attention's GEMM: mma.sync + cp.async (kernels/standard/standard_gemm.cu)
  gemm_wgmma,  // the same GEMM on Hopper's TMA + wgmma (kernels/standard/sm90a; GemmImpl::wgmma)
  softmax_fwd,
  softmax_bwd,
  elementwise,  // standard-eager's scale, mask, dropout (fwd and bwd)
  splitkv_fwd,      // a partial O and LSE per (query block, split, head)
  splitkv_combine,  // O, L from the splits' partials
  fa3_fwd,          // FlashAttention-3 forward (Hopper: TMA, wgmma, warp-specialised)
};

// Which kernel runs standard attention's GEMMs: mma.sync + cp.async (every
// GPU, any compiled tile) or Hopper's TMA + wgmma (sm_90, WgmmaGemmShape's one
// tile). Same schedule and bytes; the plan gives them different kernel kinds.
enum class GemmImpl : std::uint8_t { mma, wgmma };
// "mma" or "wgmma": the flag's value (--gemm-impl) and the JSON's.
constexpr const char* gemm_impl_name(GemmImpl impl) { return impl == GemmImpl::wgmma ? "wgmma" : "mma"; }

// Tile sizes of standard attention's GEMMs (tile_m x tile_n output tile,
// tile_k deep chunks along the reduction) and their kernel.
struct GemmTiles {
  i64 m = 128;
  i64 n = 128;
  i64 k = 32;
  GemmImpl impl = GemmImpl::mma;
};

// The tiling a plan is made for.
struct PlanTiling {
  i64 block_m = 0;  // B_r
  i64 block_n = 0;  // B_c
  GemmTiles gemm;
  i64 sram_limit_bytes = 48 * 1024;  // the row softmax keeps a row on chip when it fits
  i64 splits = 1;                    // splitkv: runs of key blocks per query block
};

// One operand of a standard-attention product C = sum_g A_g B_g over batch
// slices z = b * z_heads + hz: the tensor, whether its rows run along the
// reduction (k contiguous: the operand is read [outer][k], else [k][outer]),
// and which head it reads: (hz * head_mul + g) / head_div (GQA: K/V are read
// by query head / group; dK/dV sum the group's query heads hz * group + g).
struct GemmOperand {
  TensorId tensor = TensorId::Q;
  bool k_contiguous = true;
  i64 head_mul = 1, head_div = 1;
  IOSIM_HD i64 head(i64 hz, i64 g) const { return (hz * head_mul + g) / head_div; }
};

struct GemmPlan {
  GemmSchedule s;
  i64 z_heads = 1;  // heads per batch entry along grid z (H or H_kv)
  GemmOperand a, b;
  TensorId c = TensorId::S;  // written [m][n] by head hz
};

constexpr bool is_gemm(KernelKind k) { return k == KernelKind::gemm || k == KernelKind::gemm_wgmma; }

// The wgmma GEMM's TMA boxes (kernels/standard/sm90a): per chunk, a
// k-contiguous operand is one box of 64 k x 128 rows; an m- or n-contiguous
// one two boxes of 64 rows x 64 k, the second not loaded when it starts past
// the operand. The parts of a box past the operand are zero-filled by the TMA
// unit, not read from memory, but Nsight Compute counts them as crossbar reads
// (experiments/results/2026-11-28-h200-wgmma-gemm-bytes): these bytes, in
// closed form (per operand, boxes x k_chunks x box elements - outer x k).
i64 wgmma_gemm_zero_fill_bytes(const GemmPlan& g);

// A row-softmax kernel: forward P = softmax(scale * masked S); backward
// dS = scale * P o (dP - rowsum(dP o P)). standard-eager's has kernels of its
// own for the scale and the mask: there scale = 1 and the tiles are dense.
struct SoftmaxPlan {
  RowSoftmaxSchedule s;
  AttentionTiles tiles;  // the causal rule and the block mask it applies
  bool applies_scale = true;
};

// What one of standard-eager's elementwise kernels computes (in[0], in[1],
// out[0], out[1] are the ElementwisePlan's tensors).
enum class ElementwiseOp : std::uint8_t {
  scale,        // out0 = scale * in0                               (S forward, dS backward)
  mask_fill,    // out0 = in1 (Mask) ? in0 : -inf                   (S)
  mask_zero,    // out0 = in1 (Mask) ? in0 : 0                      (dS)
  dropout,      // out1 = Z (keep, sim/common/philox.h), out0 = Z ? in0 / (1 - p) : 0   (P -> Pd, Z)
  dropout_bwd,  // out0 = in1 (Z) ? in0 / (1 - p) : 0               (dP)
};

// One of standard-eager's elementwise kernels: its outputs from its inputs,
// element by element over N_q x N_k (in place when an output is an input).
// TensorId::Mask has one copy for all heads (batch 0, head 0).
struct ElementwisePlan {
  ElementwiseOp op = ElementwiseOp::scale;
  RowElementwiseSchedule s;
  std::array<TensorId, 2> in{};
  int inputs = 1;
  std::array<TensorId, 2> out{};
  int outputs = 1;
  i64 fp32_ops_per_element = 1;
};

using KernelSchedule = std::variant<Fa2ForwardSchedule, Fa2BackwardSchedule, RowBlockSchedule, Fa1ForwardSchedule,
                                    Fa1BackwardSchedule, Fa1SwappedForwardSchedule, GemmPlan, SoftmaxPlan,
                                    ElementwisePlan, SplitKvSchedule, SplitKvCombineSchedule, Fa3ForwardSchedule>;

// What one CTA holds on an SM, as the kernel is launched.
struct CtaShape {
  i64 threads = 128;
  i64 smem_bytes = 0;       // dynamic shared memory requested at launch
  i64 regs_per_thread = 128;
};

struct KernelPlan {
  std::string name;  // "fa2_fwd", "std_fwd_qk", ...: the name reports and traces use
  workload::Pass pass = workload::Pass::fwd;
  KernelKind kind = KernelKind::fa2_fwd;
  KernelSchedule schedule;
  Dim3 grid;
  CtaShape cta;

  template <class S>
  const S& as() const {
    return std::get<S>(schedule);
  }
};

// The kernels of a pass in launch order (fwd, bwd, or fwd then bwd).
struct Plan {
  workload::Algorithm algorithm = workload::Algorithm::fa2;
  workload::Pass pass = workload::Pass::fwd;
  std::vector<KernelPlan> kernels;
};

// `mask` (empty: dense) views a block mask over the (block_m x block_n) tile
// grid, in host memory for the trace and the numerics, in device memory for
// the kernels; it must outlive the plan. Throws InputError for fa1-swapped's
// backward (it has none), non-positive tiles, and splitkv and fa3 outside
// their domains (check_splitkv, check_fa3), and GemmImpl::wgmma outside its
// (check_wgmma_gemm).
Plan make_plan(const workload::Problem& problem, workload::Algorithm algorithm, workload::Pass pass,
               const PlanTiling& tiling, BlockMaskView mask = {});

// The tile grid of a problem under a tiling, with the mask's view.
AttentionTiles make_tiles(const workload::Problem& p, i64 block_m, i64 block_n, BlockMaskView mask = {});
// A host mask's view (empty for null or an empty mask).
BlockMaskView mask_view(const workload::BlockMask* mask);
HeadShape head_shape(const workload::Problem& p);

// splitkv's domain: forward only, no block mask, 1 <= splits <= the key
// blocks of the problem at block_n. Throws InputError naming what is valid.
void check_splitkv(const workload::Problem& p, workload::Pass pass, i64 block_n, i64 splits);
// fa3's domain, what its kernel covers: forward only, fp16/bf16, head dim 64
// or 128, the kernel's one tile (Fa3ForwardSchedule::kBlockM x kBlockN), no
// block mask. Throws InputError naming what is valid.
void check_fa3(const workload::Problem& p, workload::Pass pass, i64 block_m, i64 block_n);
// GemmImpl::wgmma's domain: standard attention (standard, standard-eager),
// the kernel's one tile (WgmmaGemmShape), fp16/bf16. Throws InputError naming
// what is valid.
void check_wgmma_gemm(const workload::Problem& p, workload::Algorithm algorithm, const GemmTiles& g);

// The default number of splits: enough CTAs to fill `sm_count` SMs once,
// ceil(sm_count / (B H ceil(N_q / B_r))), at least 1 and at most the key
// blocks ceil(N_k / B_c).
i64 default_splits(const workload::Problem& p, i64 block_m, i64 block_n, i64 sm_count);

// Registers per thread of a kernel kind for a tiling that no compiled kernel
// has (ptxas -v, sm_90: typical counts of the kind's kernels); the plan takes
// the compiled instantiation's own count where there is one
// (kernel_registers.h). They set occupancy.
i64 regs_per_thread(KernelKind kind, i64 head_dim);

}  // namespace iosim::schedule
