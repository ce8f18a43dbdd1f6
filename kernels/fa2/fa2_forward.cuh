// FlashAttention-2 forward kernel (Dao 2023, Algorithm 1): a CTA per
// (query block i, head, batch) from schedule::Fa2ForwardSchedule. It loads
// Q_i once, visits the active key blocks j in the schedule's order
// (AttentionTiles::first_n_block/next_n_block, the loop the trace walks),
// keeps S_ij, P_ij, the O accumulator and the row statistics in registers,
// and writes O_i and L_i = m_i + log(l_i) once.
//
// Per key block (named steps of the main loop):
//   wait K_j | issue V_j | S = Q K_j^T | mask | issue K_next | online softmax |
//   wait V_j | O += P V_j
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

namespace fwd_detail {

// S = Q_i K_j^T for this warp's rows: A fragments from sQ, B from sK.
template <class Elem, class Tr, int D, int BN>
__device__ __forceinline__ void gemm_qk(float (&acc_s)[Tr::kMFrags][Tr::kSTiles][4], std::uint32_t sQ,
                                        std::uint32_t sK, const dev::FragOffsets<D>& frag, int warp_row) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t a[Tr::kMFrags][4];
#pragma unroll
    for (int mf = 0; mf < Tr::kMFrags; ++mf)
      dev::load_a(a[mf], sQ, frag, warp_row + mf * 16, kk * 16);
#pragma unroll
    for (int np = 0; np < BN / 16; ++np) {
      std::uint32_t b[4];
      dev::load_b(b, sK, frag, np * 16, kk * 16);
#pragma unroll
      for (int mf = 0; mf < Tr::kMFrags; ++mf) {
        dev::mma_16816<Elem>(acc_s[mf][2 * np], a[mf], b[0], b[1]);
        dev::mma_16816<Elem>(acc_s[mf][2 * np + 1], a[mf], b[2], b[3]);
      }
    }
  }
}

// Element mask of a tile that crosses the causal diagonal or holds columns
// past seq_k: column c of row r is dropped iff c >= key_end_for_row(r).
template <class Tr>
__device__ __forceinline__ void mask_scores(float (&acc_s)[Tr::kMFrags][Tr::kSTiles][4],
                                            const schedule::AttentionTiles& tiles, i64 row_base, i64 col0,
                                            int lane) {
#pragma unroll
  for (int mf = 0; mf < Tr::kMFrags; ++mf) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const i64 r = row_base + mf * 16 + (lane >> 2) + hh * 8;
      const int key_end = static_cast<int>(tiles.key_end_for_row(r) - col0);
#pragma unroll
      for (int nt = 0; nt < Tr::kSTiles; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (nt * 8 + (lane & 3) * 2 + e >= key_end) acc_s[mf][nt][hh * 2 + e] = -INFINITY;
        }
      }
    }
  }
}

// Online softmax (FlashAttention-2 Algorithm 1, lines 8-10): new row maxima,
// rescale of O and l by exp(m_old - m_new), P = exp(scale*S - scale*m_new)
// with ex2.approx and the scale folded into one FFMA, packed to the data type
// at once (half the registers of the fp32 scores from here on). A row
// whose maximum is still -inf (nothing visible yet) uses 0 as its offset so
// no inf - inf appears. l holds per-thread partial sums until the epilogue.
template <class Elem, class Tr>
__device__ __forceinline__ void online_softmax(const float (&acc_s)[Tr::kMFrags][Tr::kSTiles][4],
                                               std::uint32_t (&r_p)[Tr::kMFrags][Tr::kSTiles][2],
                                               float (&acc_o)[Tr::kMFrags][Tr::kOTiles][4],
                                               float (&row_max)[Tr::kMFrags][2], float (&row_sum)[Tr::kMFrags][2],
                                               float scale_log2) {
#pragma unroll
  for (int mf = 0; mf < Tr::kMFrags; ++mf) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float tile_max = row_max[mf][hh];
#pragma unroll
      for (int nt = 0; nt < Tr::kSTiles; ++nt)
        tile_max = fmaxf(tile_max, fmaxf(acc_s[mf][nt][hh * 2], acc_s[mf][nt][hh * 2 + 1]));
      const float m_new = dev::quad_max(tile_max);
      const float m_scaled = m_new == -INFINITY ? 0.0f : m_new * scale_log2;
      const float alpha = dev::exp2_approx(row_max[mf][hh] * scale_log2 - m_scaled);
      row_max[mf][hh] = m_new;
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < Tr::kSTiles; ++nt) {
        const float p0 = dev::exp2_approx(fmaf(acc_s[mf][nt][hh * 2], scale_log2, -m_scaled));
        const float p1 = dev::exp2_approx(fmaf(acc_s[mf][nt][hh * 2 + 1], scale_log2, -m_scaled));
        r_p[mf][nt][hh] = dev::pack2<Elem>(p0, p1);  // P in the data type: the A operand of P V
        sum += p0 + p1;
      }
      row_sum[mf][hh] = row_sum[mf][hh] * alpha + sum;
#pragma unroll
      for (int nd = 0; nd < Tr::kOTiles; ++nd) {
        acc_o[mf][nd][hh * 2] *= alpha;
        acc_o[mf][nd][hh * 2 + 1] *= alpha;
      }
    }
  }
}

// O += P V_j: P in registers (the C layout of S equals the A layout of P V),
// V fragments by transposing ldmatrix from sV.
template <class Elem, class Tr, int D, int BN>
__device__ __forceinline__ void gemm_pv(float (&acc_o)[Tr::kMFrags][Tr::kOTiles][4],
                                        const std::uint32_t (&r_p)[Tr::kMFrags][Tr::kSTiles][2], std::uint32_t sV,
                                        const dev::FragOffsets<D>& frag) {
#pragma unroll
  for (int kk = 0; kk < BN / 16; ++kk) {
    std::uint32_t a[Tr::kMFrags][4];
#pragma unroll
    for (int mf = 0; mf < Tr::kMFrags; ++mf) {
      a[mf][0] = r_p[mf][2 * kk][0];
      a[mf][1] = r_p[mf][2 * kk][1];
      a[mf][2] = r_p[mf][2 * kk + 1][0];
      a[mf][3] = r_p[mf][2 * kk + 1][1];
    }
#pragma unroll
    for (int np = 0; np < D / 16; ++np) {
      std::uint32_t b[4];
      dev::load_b_trans(b, sV, frag, np * 16, kk * 16);
#pragma unroll
      for (int mf = 0; mf < Tr::kMFrags; ++mf) {
        dev::mma_16816<Elem>(acc_o[mf][2 * np], a[mf], b[0], b[1]);
        dev::mma_16816<Elem>(acc_o[mf][2 * np + 1], a[mf], b[2], b[3]);
      }
    }
  }
}

}  // namespace fwd_detail

template <class Elem, int D, int BM, int BN>
__global__ void __launch_bounds__(FwdTraits<D, BM, BN>::kThreads) fa2_forward_kernel(const ForwardParams p) {
  if constexpr (!dev::arch_supports<Elem>()) {
    __trap();
  } else {
    using Tr = FwdTraits<D, BM, BN>;
    using namespace fwd_detail;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    Elem* sQ = reinterpret_cast<Elem*>(smem_raw);
    Elem* sK = sQ + BM * D;
    Elem* sV = sK + BN * D;

    const auto cta = p.sched.cta(blockIdx.x, blockIdx.y, blockIdx.z);
    const schedule::AttentionTiles& tiles = p.sched.tiles;
    const i64 i = cta.m_block;
    const i64 kv_head = p.sched.shape.kv_head_of(cta.head);
    const Elem* gQ = static_cast<const Elem*>(p.q) + cta.batch * p.q_str.batch + cta.head * p.q_str.head;
    const Elem* gK = static_cast<const Elem*>(p.k) + cta.batch * p.kv_str.batch + kv_head * p.kv_str.head;
    const Elem* gV = static_cast<const Elem*>(p.v) + cta.batch * p.kv_str.batch + kv_head * p.kv_str.head;
    const int seq_q = static_cast<int>(tiles.seq_q), seq_k = static_cast<int>(tiles.seq_k);
    const int row0 = static_cast<int>(tiles.row_begin(i));
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    const int warp_row = warp * Tr::kRowsPerWarp;
    const std::uint32_t sQ_addr = dev::smem_addr(sQ), sK_addr = dev::smem_addr(sK), sV_addr = dev::smem_addr(sV);
    const dev::FragOffsets<D> frag(lane);

    // Prologue: Q_i and the first K_j (nothing at all when no tile is active).
    i64 j = tiles.first_n_block(i);
    const i64 j_end = tiles.n_block_end(i);
    if (j < j_end) {
      dev::load_tile_async<typename Tr::TileQ, Tr::kThreads>(sQ, gQ, p.q_str.row, row0, seq_q);
      dev::load_tile_async<typename Tr::TileKV, Tr::kThreads>(sK, gK, p.kv_str.row,
                                                              static_cast<int>(tiles.col_begin(j)), seq_k);
    }
    dev::cp_async_commit();

    float acc_o[Tr::kMFrags][Tr::kOTiles][4] = {};
    float row_max[Tr::kMFrags][2], row_sum[Tr::kMFrags][2];
#pragma unroll
    for (int mf = 0; mf < Tr::kMFrags; ++mf) {
      row_max[mf][0] = row_max[mf][1] = -INFINITY;
      row_sum[mf][0] = row_sum[mf][1] = 0.0f;
    }

    while (j < j_end) {
      const int col0 = static_cast<int>(tiles.col_begin(j));
      dev::cp_async_wait<0>();  // K_j (and Q_i) landed
      __syncthreads();          // ... for every warp; and every warp is done with V_{j-1}
      dev::load_tile_async<typename Tr::TileKV, Tr::kThreads>(sV, gV, p.kv_str.row, col0, seq_k);
      dev::cp_async_commit();

      float acc_s[Tr::kMFrags][Tr::kSTiles][4] = {};
      gemm_qk<Elem, Tr, D, BN>(acc_s, sQ_addr, sK_addr, frag, warp_row);
      if (tiles.crosses_diagonal(i, j) || tiles.cols_in(j) < BN)
        mask_scores<Tr>(acc_s, tiles, row0 + warp_row, col0, lane);

      const i64 j_next = tiles.next_n_block(i, j);
      __syncthreads();  // every warp is done with K_j
      if (j_next < j_end)
        dev::load_tile_async<typename Tr::TileKV, Tr::kThreads>(sK, gK, p.kv_str.row,
                                                                static_cast<int>(tiles.col_begin(j_next)), seq_k);
      dev::cp_async_commit();

      std::uint32_t r_p[Tr::kMFrags][Tr::kSTiles][2];
      online_softmax<Elem, Tr>(acc_s, r_p, acc_o, row_max, row_sum, p.scale_log2);

      dev::cp_async_wait<1>();  // V_j landed (K_next may still be in flight)
      __syncthreads();
      gemm_pv<Elem, Tr, D, BN>(acc_o, r_p, sV_addr, frag);
      j = j_next;
    }

    // Epilogue: O = O / l through this warp's own rows of sQ (no other warp
    // reads them), then 16-byte stores; L = m * scale + log(l), -inf for a
    // row that saw no key (its O is 0).
    dev::cp_async_wait<0>();
    float* gL = p.lse + (cta.batch * p.sched.shape.heads + cta.head) * tiles.seq_q;
#pragma unroll
    for (int mf = 0; mf < Tr::kMFrags; ++mf) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const float l = dev::quad_sum(row_sum[mf][hh]);
        const float inv_l = l > 0.0f ? 1.0f / l : 0.0f;
        const int r = warp_row + mf * 16 + (lane >> 2) + hh * 8;
#pragma unroll
        for (int nd = 0; nd < Tr::kOTiles; ++nd) {
          *reinterpret_cast<std::uint32_t*>(sQ + Tr::TileQ::offset_rc(r, nd * 8 + (lane & 3) * 2)) =
              dev::pack2<Elem>(acc_o[mf][nd][hh * 2] * inv_l, acc_o[mf][nd][hh * 2 + 1] * inv_l);
        }
        if ((lane & 3) == 0 && row0 + r < seq_q)
          gL[row0 + r] = l > 0.0f ? row_max[mf][hh] * p.scale + logf(l) : -INFINITY;
      }
    }
    __syncthreads();
    Elem* gO = static_cast<Elem*>(p.o) + cta.batch * p.o_str.batch + cta.head * p.o_str.head;
    dev::store_tile<typename Tr::TileQ, Tr::kThreads>(gO, p.o_str.row, sQ, row0, seq_q);
  }
}

// Launches the kernel with the grid and dynamic shared memory of the schedule.
template <class Elem, int D, int BM, int BN>
void launch_forward(const ForwardParams& p, cudaStream_t stream) {
  using Tr = FwdTraits<D, BM, BN>;
  const std::string name = "fa2_fwd<d=" + std::to_string(D) + ",Br=" + std::to_string(BM) +
                           ",Bc=" + std::to_string(BN) + ">";
  const i64 smem = p.sched.sram_bytes();
  if (smem != Tr::kSmemBytes) {
    throw std::logic_error(name + ": schedule sram_bytes() " + std::to_string(smem) + " != kernel layout " +
                           std::to_string(Tr::kSmemBytes));
  }
  const schedule::Dim3 grid = p.sched.grid();
  require_grid_fits(grid.x, grid.y, grid.z, name);
  require_smem_fits(launch_limits(), smem, name);
  auto* kernel = &fa2_forward_kernel<Elem, D, BM, BN>;
  IOSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<dim3(static_cast<unsigned>(grid.x), static_cast<unsigned>(grid.y), static_cast<unsigned>(grid.z)),
           Tr::kThreads, static_cast<size_t>(smem), stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace iosim::kernels::fa2
