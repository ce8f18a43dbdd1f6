// FlashAttention-2 backward (Dao 2023, Algorithm 2), three kernels:
//   preprocess  D = rowsum(dO o O), dQaccum = 0     (schedule::RowBlockSchedule; fa2_rows.cuh)
//   main        a CTA per (key block j, KV head, batch) (schedule::Fa2BackwardSchedule):
//               K_j, V_j stay in shared memory; for each query head of the GQA
//               group and each active query block i (Fa2BackwardSchedule::work_items,
//               the loop the trace walks) it recomputes P_ij from L_i, forms
//               dS_ij, accumulates dV_j, dK_j in registers and adds dQ_i into
//               the fp32 dQaccum with reductions at L2; dK_j, dV_j written once.
//   convert     dQ = scale * dQaccum in the data type (schedule::RowBlockSchedule; fa2_rows.cuh)
//
// Main loop, per (head, query block):
//   wait Q_i/dO_i | issue the next Q/dO | S = Q K^T, dP = dO V^T | mask |
//   P = exp(scale S - L), dS = P o (dP - D) -> shared | dV += P^T dO |
//   dK += dS^T Q | dQ_i = dS K -> red.add to dQaccum
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_info.h"
#include "kernels/common/device_primitives.cuh"
#include "kernels/fa2/fa2_params.h"
#include "kernels/fa2/fa2_traits.cuh"

namespace iosim::kernels::fa2 {

namespace bwd_detail {

constexpr float kLog2e = 1.4426950408889634f;

// P = exp2(scale_log2 * S - L_i log2 e) and dS = P o (dP - D_i), in place
// (acc_s becomes P, acc_dp becomes dS). Rows past seq_q and rows with
// L = -inf (no visible key) get P = 0 through an offset of +inf.
template <class Split>
__device__ __forceinline__ void softmax_grad(float (&acc_s)[Split::kMFrags][Split::kNTiles][4],
                                             float (&acc_dp)[Split::kMFrags][Split::kNTiles][4],
                                             const float (&lse_log2)[Split::kMFrags][2],
                                             const float (&dval)[Split::kMFrags][2], float scale_log2) {
#pragma unroll
  for (int mf = 0; mf < Split::kMFrags; ++mf) {
#pragma unroll
    for (int nt = 0; nt < Split::kNTiles; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float pv = dev::exp2_approx(fmaf(acc_s[mf][nt][e], scale_log2, -lse_log2[mf][e >> 1]));
        acc_s[mf][nt][e] = pv;
        acc_dp[mf][nt][e] = pv * (acc_dp[mf][nt][e] - dval[mf][e >> 1]);
      }
    }
  }
}

template <class Split>
__device__ __forceinline__ void mask_scores(float (&acc_s)[Split::kMFrags][Split::kNTiles][4],
                                            const schedule::AttentionTiles& tiles, i64 row_base, int col_base,
                                            int lane) {
#pragma unroll
  for (int mf = 0; mf < Split::kMFrags; ++mf) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const i64 r = row_base + mf * 16 + (lane >> 2) + hh * 8;
      const int key_end = static_cast<int>(tiles.key_end_for_row(r) - col_base);
#pragma unroll
      for (int nt = 0; nt < Split::kNTiles; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (nt * 8 + (lane & 3) * 2 + e >= key_end) acc_s[mf][nt][hh * 2 + e] = -INFINITY;
        }
      }
    }
  }
}

}  // namespace bwd_detail

template <class Elem, int D, int BM, int BN>
__global__ void __launch_bounds__(BwdTraits<D, BM, BN>::kThreads) fa2_backward_kernel(const BackwardParams p) {
  if constexpr (!dev::arch_supports<Elem>()) {
    __trap();
  } else {
    using Tr = BwdTraits<D, BM, BN>;
    using SplitS = typename Tr::SplitS;
    using SplitKV = typename Tr::SplitKV;
    using SplitQ = typename Tr::SplitQ;
    using TileQ = typename Tr::TileQ;
    using TileKV = typename Tr::TileKV;
    using TileP = typename Tr::TileP;
    using namespace bwd_detail;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    Elem* sK = reinterpret_cast<Elem*>(smem_raw);
    Elem* sV = sK + BN * D;
    Elem* sQ = sV + BN * D;               // [stage][BM][D]
    Elem* sdO = sQ + Tr::kStages * BM * D;  // [stage][BM][D]
    Elem* sP = sdO + Tr::kStages * BM * D;
    Elem* sdS = sP + BM * BN;

    const auto cta = p.sched.cta(blockIdx.x, blockIdx.y, blockIdx.z);
    const schedule::AttentionTiles& tiles = p.sched.tiles;
    const i64 j = cta.n_block;
    const i64 heads = p.sched.shape.heads;
    const i64 head0 = p.sched.first_head(cta);
    const int seq_q = static_cast<int>(tiles.seq_q), seq_k = static_cast<int>(tiles.seq_k);
    const int col0 = static_cast<int>(tiles.col_begin(j));
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    const i64 kv_off = cta.batch * p.kv_str.batch + cta.kv_head * p.kv_str.head;
    const auto q_off = [&](i64 h) { return cta.batch * p.q_str.batch + h * p.q_str.head; };
    // The work items in the schedule's order (Fa2BackwardSchedule::work_items).
    const auto work = p.sched.work_items<int>(cta);
    using Work = decltype(work.first());
    const auto load_q_do = [&](const Work& w, int stage) {
      const int r0 = w.i * BM;
      const i64 off = q_off(head0 + w.g);
      dev::load_tile_async<TileQ, Tr::kThreads>(sQ + stage * BM * D, static_cast<const Elem*>(p.q) + off,
                                                p.q_str.row, r0, seq_q);
      dev::load_tile_async<TileQ, Tr::kThreads>(sdO + stage * BM * D, static_cast<const Elem*>(p.d_o) + off,
                                                p.q_str.row, r0, seq_q);
    };

    // Prologue: K_j, V_j, and the first (Q_i, dO_i).
    dev::load_tile_async<TileKV, Tr::kThreads>(sK, static_cast<const Elem*>(p.k) + kv_off, p.kv_str.row, col0, seq_k);
    dev::load_tile_async<TileKV, Tr::kThreads>(sV, static_cast<const Elem*>(p.v) + kv_off, p.kv_str.row, col0, seq_k);
    Work w = work.first();
    if (!work.done(w)) load_q_do(w, 0);
    dev::cp_async_commit();

    float acc_dk[SplitKV::kMFrags][SplitKV::kNTiles][4] = {};
    float acc_dv[SplitKV::kMFrags][SplitKV::kNTiles][4] = {};
    const std::uint32_t sK_addr = dev::smem_addr(sK), sV_addr = dev::smem_addr(sV);
    const std::uint32_t sP_addr = dev::smem_addr(sP), sdS_addr = dev::smem_addr(sdS);
    const int s_row = SplitS::row0(warp), s_col = SplitS::col0(warp);
    const int kv_row = SplitKV::row0(warp), kv_col = SplitKV::col0(warp);
    const int q_row = SplitQ::row0(warp), q_col = SplitQ::col0(warp);
    const dev::FragOffsets<D> frag_d(lane);    // Q, dO, K, V tiles
    const dev::FragOffsets<BN> frag_bn(lane);  // P, dS tiles
    int stage = 0;
    // Tests record every step (schedule::StepLog). Unlike the forward kernel's,
    // this log stays in the production kernel: without it the compiler spills
    // more here (ptxas: 176 B spilled stores against 140), the variant that
    // ran 9-13% slower (experiments/results/2026-11-25-h100-plan-ab.md).
    dev::log_begin(p.step_log);

    while (!work.done(w)) {
      const i64 h = head0 + w.g;
      const int row0 = w.i * BM;
      const Work w_next = work.next(tiles, w);
      const bool has_next = !work.done(w_next);
      dev::log_step(p.step_log, static_cast<int>(w.i), static_cast<int>(j), static_cast<int>(w.g), work.masked(w));
      const std::uint32_t sQ_addr = dev::smem_addr(sQ + stage * BM * D);
      const std::uint32_t sdO_addr = dev::smem_addr(sdO + stage * BM * D);

      dev::cp_async_wait<0>();  // Q_i, dO_i (and K_j, V_j) landed
      __syncthreads();          // ... for all warps; all warps are done with the previous sP/sdS/stage
      if constexpr (Tr::kStages == 2) {
        if (has_next) load_q_do(w_next, stage ^ 1);
        dev::cp_async_commit();
      }

      // Row statistics of this warp's S rows: L_i (as a log2 offset) and D_i.
      const i64 stat_off = (cta.batch * heads + h) * tiles.seq_q;
      float lse_log2[SplitS::kMFrags][2], dval[SplitS::kMFrags][2];
#pragma unroll
      for (int mf = 0; mf < SplitS::kMFrags; ++mf) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = row0 + s_row + mf * 16 + (lane >> 2) + hh * 8;
          const float lse = r < seq_q ? p.lse[stat_off + r] : -INFINITY;
          lse_log2[mf][hh] = lse == -INFINITY ? INFINITY : lse * kLog2e;
          dval[mf][hh] = r < seq_q ? p.dvec[stat_off + r] : 0.0f;
        }
      }

      // S = Q_i K_j^T and dP = dO_i V_j^T with the same warp split.
      float acc_s[SplitS::kMFrags][SplitS::kNTiles][4] = {};
      float acc_dp[SplitS::kMFrags][SplitS::kNTiles][4] = {};
      dev::warp_gemm<Elem, SplitS::kMFrags, SplitS::kNTiles, D, false, D, false, D>(acc_s, sQ_addr, frag_d, s_row,
                                                                                  sK_addr, frag_d, s_col);
      dev::warp_gemm<Elem, SplitS::kMFrags, SplitS::kNTiles, D, false, D, false, D>(acc_dp, sdO_addr, frag_d, s_row,
                                                                                  sV_addr, frag_d, s_col);
      if (work.masked(w))
        mask_scores<SplitS>(acc_s, tiles, row0 + s_row, col0 + s_col, lane);
      softmax_grad<SplitS>(acc_s, acc_dp, lse_log2, dval, p.scale_log2);
      dev::store_acc<Elem, TileP>(sP, acc_s, s_row, s_col, lane);
      dev::store_acc<Elem, TileP>(sdS, acc_dp, s_row, s_col, lane);
      __syncthreads();

      // dV_j += P^T dO_i and dK_j += dS^T Q_i (the scale is applied once, at the end).
      dev::warp_gemm<Elem, SplitKV::kMFrags, SplitKV::kNTiles, BM, true, BN, true, D>(acc_dv, sP_addr, frag_bn, kv_row,
                                                                                    sdO_addr, frag_d, kv_col);
      dev::warp_gemm<Elem, SplitKV::kMFrags, SplitKV::kNTiles, BM, true, BN, true, D>(acc_dk, sdS_addr, frag_bn, kv_row,
                                                                                    sQ_addr, frag_d, kv_col);
      if constexpr (Tr::kStages == 1) {
        __syncthreads();  // every warp is done with Q_i, dO_i: the next pair may load during dQ
        if (has_next) load_q_do(w_next, 0);
        dev::cp_async_commit();
      }

      // dQ_i += dS K_j, reduced into dQaccum at L2 (scale applied by the convert kernel).
      float acc_dq[SplitQ::kMFrags][SplitQ::kNTiles][4] = {};
      dev::warp_gemm<Elem, SplitQ::kMFrags, SplitQ::kNTiles, BN, false, BN, true, D>(acc_dq, sdS_addr, frag_bn, q_row,
                                                                                   sK_addr, frag_d, q_col);
      float* g_dq = p.dq_accum + ((cta.batch * heads + h) * tiles.seq_q) * D;
#pragma unroll
      for (int mf = 0; mf < SplitQ::kMFrags; ++mf) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = row0 + q_row + mf * 16 + (lane >> 2) + hh * 8;
          if (r < seq_q) {
#pragma unroll
            for (int nt = 0; nt < SplitQ::kNTiles; ++nt) {
              dev::red_add_f32x2(g_dq + static_cast<i64>(r) * D + q_col + nt * 8 + (lane & 3) * 2,
                                 acc_dq[mf][nt][hh * 2], acc_dq[mf][nt][hh * 2 + 1]);
            }
          }
        }
      }
      w = w_next;
      if constexpr (Tr::kStages == 2) stage ^= 1;
    }

    // Epilogue: dK_j = scale * dS^T Q summed over the group, dV_j; both through
    // the K/V tiles (free now) and 16-byte stores.
    dev::cp_async_wait<0>();
    __syncthreads();
    dev::store_acc<Elem, TileKV>(sK, acc_dk, kv_row, kv_col, lane, p.scale);
    dev::store_acc<Elem, TileKV>(sV, acc_dv, kv_row, kv_col, lane);
    __syncthreads();
    dev::store_tile<TileKV, Tr::kThreads>(static_cast<Elem*>(p.dk) + kv_off, p.kv_str.row, sK, col0, seq_k);
    dev::store_tile<TileKV, Tr::kThreads>(static_cast<Elem*>(p.dv) + kv_off, p.kv_str.row, sV, col0, seq_k);
  }
}

// ---------------------------------------------------------------------------
// Launches, each with the grid and shared memory of its schedule; the order of
// the three kernels is the plan's (fa2_api.cu walks it).
template <class Elem, int D, int BM, int BN>
void launch_backward(const BackwardParams& p, cudaStream_t stream) {
  using Tr = BwdTraits<D, BM, BN>;
  const std::string name = "fa2_bwd<d=" + std::to_string(D) + ",Br=" + std::to_string(BM) +
                           ",Bc=" + std::to_string(BN) + ">";
  const i64 smem = p.sched.sram_bytes();
  if (smem != Tr::kSmemBytes || p.sched.threads() != Tr::kThreads) {
    throw std::logic_error(name + ": schedule CTA (" + std::to_string(p.sched.threads()) + " threads, " +
                           std::to_string(smem) + " B) != kernel layout");
  }
  const schedule::Dim3 grid = p.sched.grid();
  require_grid_fits(grid.x, grid.y, grid.z, name);
  require_smem_fits(launch_limits(), smem, name);
  auto* kernel = &fa2_backward_kernel<Elem, D, BM, BN>;
  IOSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<dim3(static_cast<unsigned>(grid.x), static_cast<unsigned>(grid.y), static_cast<unsigned>(grid.z)),
           Tr::kThreads, static_cast<size_t>(smem), stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace iosim::kernels::fa2
