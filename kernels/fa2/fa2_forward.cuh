// FlashAttention-2 forward kernel (Dao 2023, Algorithm 1): a CTA per
// (query block i, head, batch) from schedule::Fa2ForwardSchedule. It loads
// Q_i once, visits the active key blocks j in the schedule's order
// (AttentionTiles::first_n_block/next_n_block, the loop the trace walks),
// keeps S_ij, P_ij, the O accumulator and the row statistics in registers,
// and writes O_i and L_i = m_i + log(l_i) once.
//
// Per key block (named steps of the main loop, FlashAttention-2's order with
// its two barriers):
//   wait K_j, sync | issue V_j | S = Q K_j^T | (mask) | wait V_j, sync |
//   issue K_next | online softmax | O += P V_j
// Key blocks that need no element mask run a loop body without mask code.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_info.h"
#include "kernels/common/device_primitives.cuh"
#include "kernels/fa2/fa2_params.h"
#include "kernels/fa2/fa2_traits.cuh"
#include "sim/schedule/kernel_menu.h"

namespace iosim::kernels::fa2 {

namespace fwd_detail {

// Copies of a BN x D (or BM x D) tile into its swizzled shared-memory tile
// with the per-thread part computed once: thread t copies 16-byte chunk
// t % kChunks of rows t / kChunks + it * kRowsPerIt. When kRowsPerIt is a
// multiple of 8 every row a thread copies has the same swizzle, so the
// shared-memory offsets are one per-thread value plus compile-time steps and
// the global ones one per-thread value plus multiples of the row stride.
// Other shapes use dev::load_tile_async.
template <class Tile, int THREADS>
struct TileCopy {
  static constexpr int kTotal = Tile::kRows * Tile::kChunks;
  static constexpr bool kFast = kTotal % THREADS == 0 && (THREADS / Tile::kChunks) % 8 == 0;
  static constexpr int kIters = kTotal / THREADS;
  static constexpr int kRowsPerIt = THREADS / Tile::kChunks;
  int row;             // first row this thread copies
  std::uint32_t soff;  // its byte offset in the tile
  i64 goff;            // its element offset in the global matrix, relative to the tile's first row

  __device__ __forceinline__ TileCopy(int tid, i64 ld) {
    row = tid / Tile::kChunks;
    const int chunk = tid % Tile::kChunks;
    soff = static_cast<std::uint32_t>(Tile::offset(row, chunk) * 2);
    goff = static_cast<i64>(row) * ld + chunk * 8;
  }

  // Rows [row0, row0 + kRows) of g (row stride ld); rows at or past
  // row_limit are zero-filled when GUARD (else all rows must exist).
  template <bool GUARD, class Elem>
  __device__ __forceinline__ void load(Elem* s_tile, const Elem* g, i64 ld, int row0, int row_limit) const {
    if constexpr (!kFast) {
      dev::load_tile_async<Tile, THREADS>(s_tile, g, ld, row0, row_limit);
    } else {
      const std::uint32_t s = dev::smem_addr(s_tile) + soff;
      const Elem* src = g + dev::opaque(static_cast<i64>(row0) * ld + goff);
      const i64 step = static_cast<i64>(kRowsPerIt) * ld;
#pragma unroll
      for (int it = 0; it < kIters; ++it) {
        const bool valid = !GUARD || row0 + row + it * kRowsPerIt < row_limit;
        const void* from = valid ? static_cast<const void*>(src + it * step) : static_cast<const void*>(g);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s + it * kRowsPerIt * Tile::kCols * 2),
                     "l"(from), "r"(valid ? 16 : 0));
      }
    }
  }
};

// ldmatrix row addresses in a swizzled tile COLS elements wide, without a
// table of per-lane offsets: a warp's 16x16 blocks start at rows that are
// multiples of 16 (the swizzle's period is 8) and at even chunks, so a lane's
// swizzled chunk is (block's chunk) ^ (lane's chunk bit) ^ swizzle(lane's
// row), and the block enters as an XOR on the chunk bits of the lane's
// address plus a compile-time offset (whole rows and 8-chunk groups). This
// needs tiles whose shared address is a multiple of 128 bytes (the kernel
// checks the base of its dynamic shared memory; every tile size is a
// multiple of 128 bytes). One register per tile and lane pattern.
//   a16: rows lane & 15, chunk bit lane >> 4                         (A from Q, B from V^T)
//   b8:  rows (lane & 7) + 8 (lane >> 4), chunk bit (lane >> 3) & 1  (B from K)
template <int COLS>
struct LaneAddr {
  using Tile = dev::SwizzledTile<8, COLS>;
  static constexpr int kMask = (Tile::kChunks >= 8 ? 8 : Tile::kChunks) - 1;
  __device__ __forceinline__ static std::uint32_t a16(std::uint32_t tile, int lane) {
    const int r = lane & 15, c = lane >> 4;
    return tile + static_cast<std::uint32_t>(2 * (r * COLS + ((c ^ Tile::swizzle(r)) & kMask) * 8));
  }
  __device__ __forceinline__ static std::uint32_t b8(std::uint32_t tile, int lane) {
    const int r = (lane & 7) + ((lane >> 4) << 3), c = (lane >> 3) & 1;
    return tile + static_cast<std::uint32_t>(2 * (r * COLS + ((c ^ Tile::swizzle(r)) & kMask) * 8));
  }
  // Address of the lane's row in the 16x16 block at (row0, col0), row0 and
  // col0 multiples of 16, from the lane's address a16/b8 of the tile.
  __device__ __forceinline__ static std::uint32_t at(std::uint32_t lane_addr, int row0, int col0) {
    const int cb = col0 >> 3;
    return (lane_addr ^ static_cast<std::uint32_t>((cb & kMask) << 4)) +
           static_cast<std::uint32_t>(2 * (row0 * COLS + (cb & ~kMask) * 8));
  }
};

// S = Q_i K_j^T for this warp's rows: A fragments from sQ, B from sK.
template <class Elem, class Tr, int D, int BN>
__device__ __forceinline__ void gemm_qk(float (&acc_s)[Tr::kMFrags][Tr::kSTiles][4], std::uint32_t q_lane,
                                        std::uint32_t k_lane) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t a[Tr::kMFrags][4];
#pragma unroll
    for (int mf = 0; mf < Tr::kMFrags; ++mf)
      dev::ldmatrix_x4(a[mf], LaneAddr<D>::at(q_lane, mf * 16, kk * 16));
#pragma unroll
    for (int np = 0; np < BN / 16; ++np) {
      std::uint32_t b[4];
      dev::ldmatrix_x4(b, LaneAddr<D>::at(k_lane, np * 16, kk * 16));
#pragma unroll
      for (int mf = 0; mf < Tr::kMFrags; ++mf) {
        dev::mma_16816<Elem>(acc_s[mf][2 * np], a[mf], b[0], b[1]);
        dev::mma_16816<Elem>(acc_s[mf][2 * np + 1], a[mf], b[2], b[3]);
      }
    }
  }
}

// Element mask of a tile that crosses the causal diagonal or holds columns
// past seq_k: column c of row r is dropped iff c >= key_end_for_row(r), the
// schedule's rule (bottom-right causal, clamped to [0, seq_k]) in 32-bit
// arithmetic relative to the tile's first column.
template <class Tr>
__device__ __forceinline__ void mask_scores(float (&acc_s)[Tr::kMFrags][Tr::kSTiles][4],
                                            const schedule::AttentionTiles& tiles, int row_base, int col0,
                                            int lane) {
  const int seq_q = static_cast<int>(tiles.seq_q), seq_k = static_cast<int>(tiles.seq_k);
  const int cols_left = seq_k - col0;                     // key_end_for_row(r) - col0 <= this
  // key_end_for_row(r) - col0 before clamping, for this lane's first row (mf = 0, hh = 0)
  const int diag = row_base + (lane >> 2) + (seq_k - seq_q) + 1 - col0;
  const int c_lane = (lane & 3) * 2;
#pragma unroll
  for (int mf = 0; mf < Tr::kMFrags; ++mf) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int key_end = tiles.causal ? max(0, min(cols_left, diag + mf * 16 + hh * 8)) : cols_left;
      const int limit = key_end - c_lane;  // column nt * 8 + e of this lane is dropped iff >= limit
#pragma unroll
      for (int nt = 0; nt < Tr::kSTiles; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          if (nt * 8 + e >= limit) acc_s[mf][nt][hh * 2 + e] = -INFINITY;
        }
      }
    }
  }
}

// Online softmax (FlashAttention-2 Algorithm 1, lines 8-10): new row maxima,
// rescale of O and l by exp(m_old - m_new), P = exp(scale*S - scale*m) with
// ex2.approx and the scale folded into one FFMA, packed to the data type at
// once (half the registers of the fp32 scores from here on). A row whose
// maximum is still -inf (nothing visible yet) uses 0 as its offset so no
// inf - inf appears. l holds per-thread partial sums until the epilogue.
// The rescale is lazy (as in FlashAttention-4): m, l and O move to the new
// maxima only when some row of the warp grew by more than 8 in exp2 units;
// otherwise the old m stays the offset and P <= 2^8. Exact all the same
// (O / l and L = m + log l use the same m), and fp16/bf16 P keeps its
// relative precision. After the first key blocks the maxima rarely grow
// that much, which saves the O rescale (D/2 FMULs per row and thread) and
// an exp2 per row in most iterations.
template <class Elem, class Tr, bool CHECK_INF>
__device__ __forceinline__ void online_softmax(const float (&acc_s)[Tr::kMFrags][Tr::kSTiles][4],
                                               std::uint32_t (&r_p)[Tr::kMFrags][Tr::kSTiles][2],
                                               float (&acc_o)[Tr::kMFrags][Tr::kOTiles][4],
                                               float (&row_max)[Tr::kMFrags][2], float (&row_sum)[Tr::kMFrags][2],
                                               float scale_log2) {
  // New row maxima (over the quad's lanes).
  float m_new[Tr::kMFrags][2];
  bool grow = false;  // some row's maximum grew by more than a factor 2^8 (in exp2 units)
#pragma unroll
  for (int mf = 0; mf < Tr::kMFrags; ++mf) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float tile_max = row_max[mf][hh];
#pragma unroll
      for (int nt = 0; nt < Tr::kSTiles; ++nt)
        tile_max = fmaxf(tile_max, fmaxf(acc_s[mf][nt][hh * 2], acc_s[mf][nt][hh * 2 + 1]));
      m_new[mf][hh] = dev::quad_max(tile_max);
      // -inf - -inf is NaN: compares false (a row that still sees nothing).
      grow |= (m_new[mf][hh] - row_max[mf][hh]) * scale_log2 > 8.0f;
    }
  }
  // Rescale O and l to the new maxima only when some row of the warp grew
  // past the threshold (a warp-uniform branch).
  if (__any_sync(0xffffffffu, grow)) {
#pragma unroll
    for (int mf = 0; mf < Tr::kMFrags; ++mf) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const float m_scaled = (CHECK_INF && m_new[mf][hh] == -INFINITY) ? 0.0f : m_new[mf][hh] * scale_log2;
        const float alpha = dev::exp2_approx(fmaf(row_max[mf][hh], scale_log2, -m_scaled));
        row_max[mf][hh] = m_new[mf][hh];
        row_sum[mf][hh] *= alpha;
#pragma unroll
        for (int nd = 0; nd < Tr::kOTiles; ++nd) {
          acc_o[mf][nd][hh * 2] *= alpha;
          acc_o[mf][nd][hh * 2 + 1] *= alpha;
        }
      }
    }
  }
  // P = exp2(scale * S - scale * m), packed to the data type at once.
#pragma unroll
  for (int mf = 0; mf < Tr::kMFrags; ++mf) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const float m_scaled = (CHECK_INF && row_max[mf][hh] == -INFINITY) ? 0.0f : row_max[mf][hh] * scale_log2;
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < Tr::kSTiles; ++nt) {
        const float p0 = dev::exp2_approx(fmaf(acc_s[mf][nt][hh * 2], scale_log2, -m_scaled));
        const float p1 = dev::exp2_approx(fmaf(acc_s[mf][nt][hh * 2 + 1], scale_log2, -m_scaled));
        r_p[mf][nt][hh] = dev::pack2<Elem>(p0, p1);  // P in the data type: the A operand of P V
        sum += p0 + p1;
      }
      row_sum[mf][hh] += sum;
    }
  }
}

// O += P V_j: P in registers (the C layout of S equals the A layout of P V),
// V fragments by transposing ldmatrix from sV.
template <class Elem, class Tr, int D, int BN>
__device__ __forceinline__ void gemm_pv(float (&acc_o)[Tr::kMFrags][Tr::kOTiles][4],
                                        const std::uint32_t (&r_p)[Tr::kMFrags][Tr::kSTiles][2],
                                        std::uint32_t v_lane) {
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
      dev::ldmatrix_x4_trans(b, LaneAddr<D>::at(v_lane, kk * 16, np * 16));
#pragma unroll
      for (int mf = 0; mf < Tr::kMFrags; ++mf) {
        dev::mma_16816<Elem>(acc_o[mf][2 * np], a[mf], b[0], b[1]);
        dev::mma_16816<Elem>(acc_o[mf][2 * np + 1], a[mf], b[2], b[3]);
      }
    }
  }
}

}  // namespace fwd_detail

// LOG: record the steps (schedule::StepLog), for tests; a separate
// instantiation, because the log's code in the main loop costs this
// 255-register kernel spills (experiments/results/2026-11-25-h100-plan-ab.md).
template <class Elem, int D, int BM, int BN, bool LOG>
__global__ void __launch_bounds__(FwdTraits<D, BM, BN>::kThreads) fa2_forward_kernel(const ForwardParams p) {
  if constexpr (!dev::arch_supports<Elem>()) {
    __trap();
  } else {
    using Tr = FwdTraits<D, BM, BN>;
    using namespace fwd_detail;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    if (dev::smem_addr(smem_raw) % 128 != 0) __trap();  // LaneAddr's XOR addressing needs it
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
    // Per-lane ldmatrix addresses: this warp's rows of Q_i, and K_j, V_j.
    const std::uint32_t q_lane = LaneAddr<D>::a16(dev::smem_addr(sQ + warp_row * D), lane);
    const std::uint32_t k_lane = LaneAddr<D>::b8(dev::smem_addr(sK), lane);
    const std::uint32_t v_lane = LaneAddr<D>::a16(dev::smem_addr(sV), lane);
    const TileCopy<typename Tr::TileKV, Tr::kThreads> kv_copy(static_cast<int>(threadIdx.x), p.kv_str.row);

    // Key blocks in the schedule's order and split (Fa2ForwardSchedule::key_blocks:
    // n_block_end(i) and the first masked block computed once, int indices,
    // the block size a compile-time constant, so no 64-bit division in the
    // loop): an unmasked run (no causal-diagonal crossing, not the ragged last
    // block) whose loop body carries no mask code, then a masked run
    // (FlashAttention-2's separation of masking and non-masking iterations).
    const auto keys = p.sched.key_blocks<int>(cta);
    int j = keys.first;
    const int j_end = keys.end;
    if constexpr (LOG) dev::log_begin(p.step_log);  // tests record every step (schedule::StepLog)

    // Prologue: Q_i and the first K_j (nothing at all when no tile is active).
    if (j < j_end) {
      dev::load_tile_async<typename Tr::TileQ, Tr::kThreads>(sQ, gQ, p.q_str.row, row0, seq_q);
      dev::load_tile_async<typename Tr::TileKV, Tr::kThreads>(sK, gK, p.kv_str.row,
                                                              j * BN, seq_k);
    }
    dev::cp_async_commit();

    float acc_o[Tr::kMFrags][Tr::kOTiles][4] = {};
    float row_max[Tr::kMFrags][2], row_sum[Tr::kMFrags][2];
#pragma unroll
    for (int mf = 0; mf < Tr::kMFrags; ++mf) {
      row_max[mf][0] = row_max[mf][1] = -INFINITY;
      row_sum[mf][0] = row_sum[mf][1] = 0.0f;
    }

    // One key block, FlashAttention-2's pipeline with two barriers:
    //   wait K_j | sync | issue V_j | S = Q K_j^T | (mask) | wait V_j | sync |
    //   issue K_next | online softmax | O += P V_j
    // The first barrier makes K_j visible and ends every warp's P V_{j-1}
    // (V_j overwrites V_{j-1}); the second makes V_j visible and ends every
    // warp's Q K_j^T (K_next overwrites K_j). Between the second barrier and
    // the next iteration's first, each warp runs softmax and P V on its own.
    auto key_block = [&](auto masked) {
      constexpr bool kMasked = decltype(masked)::value;
      const int col0 = j * BN;
      if constexpr (LOG) dev::log_step(p.step_log, static_cast<int>(i), j, 0, kMasked);
      dev::cp_async_wait<0>();  // K_j (and Q_i) landed
      __syncthreads();
      kv_copy.template load<kMasked>(sV, gV, p.kv_str.row, col0, seq_k);
      dev::cp_async_commit();

      // A warp whose rows all end before this block's first key (causal:
      // key_end_for_row(last row) <= col0) skips its GEMMs and softmax, which
      // would change nothing; it still takes part in the copies and barriers.
      bool idle = false;
      if constexpr (kMasked)
        idle = tiles.causal && row0 + warp_row + Tr::kRowsPerWarp + (seq_k - seq_q) <= col0;
      float acc_s[Tr::kMFrags][Tr::kSTiles][4] = {};
      if (!idle) {
        gemm_qk<Elem, Tr, D, BN>(acc_s, q_lane, k_lane);
        if constexpr (kMasked) mask_scores<Tr>(acc_s, tiles, row0 + warp_row, col0, lane);
      }

      const int j_next = keys.next(j);
      dev::cp_async_wait<0>();  // V_j landed
      __syncthreads();
      if (j_next < j_end) {  // K_next may be the ragged last block even when K_j is not
        if (kMasked || j_next * BN + BN > seq_k)
          kv_copy.template load<true>(sK, gK, p.kv_str.row, j_next * BN, seq_k);
        else
          kv_copy.template load<false>(sK, gK, p.kv_str.row, j_next * BN, seq_k);
      }
      dev::cp_async_commit();

      if (!idle) {
        std::uint32_t r_p[Tr::kMFrags][Tr::kSTiles][2];
        online_softmax<Elem, Tr, kMasked>(acc_s, r_p, acc_o, row_max, row_sum, p.scale_log2);
        gemm_pv<Elem, Tr, D, BN>(acc_o, r_p, v_lane);
      }
      j = j_next;
    };
    while (j < j_end && !keys.masked(j)) key_block(std::false_type{});
    while (j < j_end) key_block(std::true_type{});

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
  auto* kernel = &fa2_forward_kernel<Elem, D, BM, BN, false>;
  if (p.step_log.on()) {
    if constexpr (schedule::fa2_forward_in_ci_menu(D, BM, BN))
      kernel = &fa2_forward_kernel<Elem, D, BM, BN, true>;
    else
      throw NotCompiled(name + ": the step log (tests) is compiled for the CI menu's tiles only");
  }
  IOSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<dim3(static_cast<unsigned>(grid.x), static_cast<unsigned>(grid.y), static_cast<unsigned>(grid.z)),
           Tr::kThreads, static_cast<size_t>(smem), stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace iosim::kernels::fa2
