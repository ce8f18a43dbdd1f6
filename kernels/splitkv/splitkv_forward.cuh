// Split-KV forward kernel (flash-decoding): a CTA per (query block i, split,
// head, batch) from schedule::SplitKvSchedule. It loads Q_i once, walks the
// split's run of key blocks (SplitKvSchedule::key_blocks, the loop the trace
// walks) and writes the run's normalised partial O and LSE in fp32; the
// combine kernel (splitkv_combine.cu) merges the splits.
//
// Decode has B_r = 16 rows, one MMA row fragment: instead of a warp per 16
// rows (FA2), the 4 warps all own the B_r rows and each a quarter of every
// key block's columns, with its own online-softmax state (FA2's online_softmax,
// gemm_qk, gemm_pv, mask_scores on the warp's columns). K_j, V_j are double-
// buffered: block j+1 loads while j computes. Per key block:
//   issue K_next, V_next | wait K_j, V_j | sync | S = Q K_j^T | (mask) |
//   online softmax | O += P V_j | sync
// After the loop the warps' O, row maxima and sums go through shared memory
// and a thread per 4 columns merges them.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_info.h"
#include "kernels/fa2/fa2_forward.cuh"
#include "kernels/splitkv/splitkv_params.h"
#include "kernels/splitkv/splitkv_traits.cuh"
#include "kernels/standard/launch_util.h"
#include "sim/schedule/kernel_menu.h"

namespace iosim::kernels::splitkv {

namespace epilogue {

// The warps' partials of the CTA's rows, merged: weights 2^((m_w - M) scale
// log2 e) against the rows' largest maximum M, O = sum_w weight O_w / l with
// l = sum_w weight l_w, LSE = M scale + log l (-inf where l = 0: an empty run
// or a row that sees no key). A thread per 4 columns of a row.
template <class Tr, int D, int BM>
__device__ __forceinline__ void merge_warps(const float* sO, const float* sM, const float* sL, float* gO, float* gLse,
                                            int rows, float scale, float scale_log2) {
  constexpr int kChunks = D / 4;
  for (int idx = static_cast<int>(threadIdx.x); idx < BM * kChunks; idx += Tr::kThreads) {
    const int r = idx / kChunks, c = (idx % kChunks) * 4;
    if (r >= rows) continue;
    float m = -INFINITY;
#pragma unroll
    for (int w = 0; w < Tr::kWarps; ++w) m = fmaxf(m, sM[w * BM + r]);
    float l = 0.0f;
    float4 o = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int w = 0; w < Tr::kWarps; ++w) {
      const float mw = sM[w * BM + r];
      const float wt = mw == -INFINITY ? 0.0f : dev::exp2_approx((mw - m) * scale_log2);
      l += wt * sL[w * BM + r];
      const float4 part = *reinterpret_cast<const float4*>(sO + (w * BM + r) * D + c);
      o.x += wt * part.x;
      o.y += wt * part.y;
      o.z += wt * part.z;
      o.w += wt * part.w;
    }
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    *reinterpret_cast<float4*>(gO + static_cast<i64>(r) * D + c) = make_float4(o.x * inv, o.y * inv, o.z * inv, o.w * inv);
    if (c == 0) gLse[r] = l > 0.0f ? m * scale + logf(l) : -INFINITY;
  }
}

}  // namespace epilogue

// LOG: record the steps (schedule::StepLog), for tests; compiled for the CI
// menu's tiles only, like FA2's.
template <class Elem, int D, int BM, int BN, bool LOG>
__global__ void __launch_bounds__(ForwardTraits<D, BM, BN>::kThreads) splitkv_forward_kernel(const ForwardParams p) {
  if constexpr (!dev::arch_supports<Elem>()) {
    __trap();
  } else {
    using Tr = ForwardTraits<D, BM, BN>;
    using namespace fa2::fwd_detail;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    if (dev::smem_addr(smem_raw) % 128 != 0) __trap();  // LaneAddr's XOR addressing needs it
    Elem* sQ = reinterpret_cast<Elem*>(smem_raw);
    Elem* s_stages = sQ + BM * D;  // stage t: K at s_stages + t * 2 BN D, V after it

    const auto cta = p.sched.cta(blockIdx.x, blockIdx.y, blockIdx.z);
    const schedule::AttentionTiles& tiles = p.sched.tiles;
    const i64 kv_head = p.sched.shape.kv_head_of(cta.head);
    const Elem* gQ = static_cast<const Elem*>(p.q) + cta.batch * p.q_str.batch + cta.head * p.q_str.head;
    const Elem* gK = static_cast<const Elem*>(p.k) + cta.batch * p.kv_str.batch + kv_head * p.kv_str.head;
    const Elem* gV = static_cast<const Elem*>(p.v) + cta.batch * p.kv_str.batch + kv_head * p.kv_str.head;
    const int seq_q = static_cast<int>(tiles.seq_q), seq_k = static_cast<int>(tiles.seq_k);
    const int row0 = static_cast<int>(tiles.row_begin(cta.m_block));
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    const int warp_col = warp * Tr::kCols;  // this warp's first key column in a block
    const std::uint32_t q_lane = LaneAddr<D>::a16(dev::smem_addr(sQ), lane);
    const TileCopy<typename Tr::TileKV, Tr::kThreads> kv_copy(static_cast<int>(threadIdx.x), p.kv_str.row);
    auto stage_k = [&](int t) { return s_stages + t * 2 * BN * D; };
    auto stage_v = [&](int t) { return s_stages + t * 2 * BN * D + BN * D; };

    const auto keys = p.sched.key_blocks<int>(cta);
    int j = keys.first;
    const int j_end = keys.end;
    if constexpr (LOG) dev::log_begin(p.step_log);

    // Prologue: Q_i and the first K_j, V_j (nothing when the run is empty).
    if (j < j_end) {
      dev::load_tile_async<typename Tr::TileQ, Tr::kThreads>(sQ, gQ, p.q_str.row, row0, seq_q);
      kv_copy.template load<true>(stage_k(0), gK, p.kv_str.row, j * BN, seq_k);
      kv_copy.template load<true>(stage_v(0), gV, p.kv_str.row, j * BN, seq_k);
    }
    dev::cp_async_commit();

    float acc_o[Tr::kMFrags][Tr::kOTiles][4] = {};
    float row_max[Tr::kMFrags][2], row_sum[Tr::kMFrags][2];
#pragma unroll
    for (int mf = 0; mf < Tr::kMFrags; ++mf) {
      row_max[mf][0] = row_max[mf][1] = -INFINITY;
      row_sum[mf][0] = row_sum[mf][1] = 0.0f;
    }

    int stage = 0;
    auto key_block = [&](auto masked) {
      constexpr bool kMasked = decltype(masked)::value;
      const int j_next = keys.next(j);
      if (j_next < j_end) {  // the other stage was freed by the previous block's closing barrier
        const int next0 = j_next * BN;
        if (next0 + BN > seq_k) {
          kv_copy.template load<true>(stage_k(stage ^ 1), gK, p.kv_str.row, next0, seq_k);
          kv_copy.template load<true>(stage_v(stage ^ 1), gV, p.kv_str.row, next0, seq_k);
        } else {
          kv_copy.template load<false>(stage_k(stage ^ 1), gK, p.kv_str.row, next0, seq_k);
          kv_copy.template load<false>(stage_v(stage ^ 1), gV, p.kv_str.row, next0, seq_k);
        }
      }
      dev::cp_async_commit();
      dev::cp_async_wait<1>();  // K_j, V_j (and Q_i) landed; the next block may still be in flight
      __syncthreads();
      if constexpr (LOG) dev::log_step(p.step_log, static_cast<int>(cta.m_block), j, static_cast<int>(cta.split), kMasked);

      const int col0 = j * BN + warp_col;
      // A warp whose columns all lie past every row's causal end skips its
      // products (they would change nothing); it still joins the barriers.
      bool idle = false;
      if constexpr (kMasked) idle = col0 >= seq_k || (tiles.causal && row0 + BM + (seq_k - seq_q) <= col0);
      if (!idle) {
        const std::uint32_t k_lane = LaneAddr<D>::b8(dev::smem_addr(stage_k(stage) + warp_col * D), lane);
        const std::uint32_t v_lane = LaneAddr<D>::a16(dev::smem_addr(stage_v(stage) + warp_col * D), lane);
        float acc_s[Tr::kMFrags][Tr::kSTiles][4] = {};
        gemm_qk<Elem, Tr, D, Tr::kCols>(acc_s, q_lane, k_lane);
        if constexpr (kMasked) mask_scores<Tr>(acc_s, tiles, row0, col0, lane);
        std::uint32_t r_p[Tr::kMFrags][Tr::kSTiles][2];
        online_softmax<Elem, Tr, kMasked>(acc_s, r_p, acc_o, row_max, row_sum, p.scale_log2);
        gemm_pv<Elem, Tr, D, Tr::kCols>(acc_o, r_p, v_lane);
      }
      __syncthreads();  // every warp is done with this stage before it is refilled
      stage ^= 1;
      j = j_next;
    };
    while (j < j_end && !keys.masked(j)) key_block(std::false_type{});
    while (j < j_end) key_block(std::true_type{});

    // Epilogue: each warp's unnormalised O, row maxima and sums into the
    // stages' shared memory, then the merge writes the split's partial.
    dev::cp_async_wait<0>();
    __syncthreads();
    float* sO = reinterpret_cast<float*>(s_stages);  // [warp][BM][D]
    float* sM = sO + Tr::kWarps * BM * D;            // [warp][BM]
    float* sL = sM + Tr::kWarps * BM;                // [warp][BM]
#pragma unroll
    for (int mf = 0; mf < Tr::kMFrags; ++mf) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = mf * 16 + (lane >> 2) + hh * 8;
        const float l = dev::quad_sum(row_sum[mf][hh]);
        if ((lane & 3) == 0) {
          sM[warp * BM + r] = row_max[mf][hh];
          sL[warp * BM + r] = l;
        }
#pragma unroll
        for (int nd = 0; nd < Tr::kOTiles; ++nd)
          *reinterpret_cast<float2*>(sO + (warp * BM + r) * D + nd * 8 + (lane & 3) * 2) =
              make_float2(acc_o[mf][nd][hh * 2], acc_o[mf][nd][hh * 2 + 1]);
      }
    }
    __syncthreads();
    const i64 part_row = (cta.batch * p.sched.shape.heads + cta.head) * p.sched.splits * tiles.seq_q +
                         p.sched.partial_row(cta.split, row0);
    epilogue::merge_warps<Tr, D, BM>(sO, sM, sL, p.o_accum + part_row * D, p.lse_accum + part_row,
                                   min(BM, seq_q - row0), p.scale, p.scale_log2);
  }
}

// Launches the kernel with the grid and dynamic shared memory of the schedule.
template <class Elem, int D, int BM, int BN>
void launch_forward(const ForwardParams& p, cudaStream_t stream) {
  using Tr = ForwardTraits<D, BM, BN>;
  const std::string name =
      "splitkv_fwd<d=" + std::to_string(D) + ",Br=" + std::to_string(BM) + ",Bc=" + std::to_string(BN) + ">";
  const i64 smem = p.sched.sram_bytes();
  if (smem != Tr::kSmemBytes)
    throw std::logic_error(name + ": schedule sram_bytes() " + std::to_string(smem) + " != kernel layout " +
                           std::to_string(Tr::kSmemBytes));
  if (p.sched.threads() != Tr::kThreads)
    throw std::logic_error(name + ": schedule threads() differ from the kernel's");
  auto* kernel = &splitkv_forward_kernel<Elem, D, BM, BN, false>;
  if (p.step_log.on()) {
    if constexpr (schedule::splitkv_in_menu(schedule::KernelMenu::ci, D, BM, BN))
      kernel = &splitkv_forward_kernel<Elem, D, BM, BN, true>;
    else
      throw NotCompiled(name + ": the step log (tests) is compiled for the CI menu's tiles only");
  }
  const schedule::Dim3 grid = p.sched.grid();
  constexpr auto dtype = std::is_same_v<Elem, __half> ? workload::DType::fp16 : workload::DType::bf16;
  detail::prepare_launch(kernel, smem, grid, dtype, name);
  kernel<<<detail::to_dim3(grid), Tr::kThreads, static_cast<size_t>(smem), stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace iosim::kernels::splitkv
