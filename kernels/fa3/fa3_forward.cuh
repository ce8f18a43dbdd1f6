// FlashAttention-3 forward kernel (Shah et al. 2024) for Hopper, sm_90a:
// a CTA per (query block i, head, batch) from schedule::Fa3ForwardSchedule,
// warp-specialised.
//
// Producer (warpgroup 0, one thread): TMA loads of Q_i once and of K_j, V_j
// into a ring of stages (128-byte swizzled), each completing on its own
// mbarrier (transaction bytes), after waiting for that buffer's "empty"
// barrier; K_{n+1} is requested before V_n, the order the consumers use them.
// Consumers (warpgroups 1 and 2, 64 query rows each), per key block n:
//   wait K_n | [ping-pong: my turn] issue S_n = Q K_n^T, issue O += P_{n-1} V_{n-1}
//   [hand the turn to the other consumer] | wait S_n, release K_n | mask,
//   online softmax of S_n (overlapping the P V wgmma: intra-warpgroup
//   overlap) | wait P V, release V_{n-1} | rescale O, P_n = S_n in the data
//   type (registers: the A operand of the next P V).
// The two consumers take turns issuing their GEMMs (named barriers), so one's
// softmax runs while the other's GEMMs use the tensor cores (ping-pong).
// Epilogue: O / l staged in the consumer's rows of the Q tile and stored in
// whole 16-byte chunks, L = m * scale + log(l); ragged rows masked; a row that
// saw no key gets O = 0, L = -inf.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_info.h"
#include "kernels/common/device_primitives.cuh"
#include "kernels/fa3/fa3_hopper.cuh"
#include "kernels/fa3/fa3_params.h"
#include "kernels/fa3/fa3_wgmma.cuh"

namespace iosim::kernels::fa3 {

// Compile-time shape, checked against the schedule.
template <class Elem, int D>
struct FwdTraits {
  using Sched = schedule::Fa3ForwardSchedule;
  static constexpr int kBM = static_cast<int>(Sched::kBlockM);
  static constexpr int kBN = static_cast<int>(Sched::kBlockN);
  static constexpr int kRows = static_cast<int>(Sched::kRowsPerConsumer);  // per consumer warpgroup
  static constexpr int kThreads = static_cast<int>(Sched::kThreads);
  static constexpr int kConsumerWarps = 4 * static_cast<int>(Sched::kConsumers);
  static constexpr int kStages = static_cast<int>(Sched::stages_for(D, 2));
  static constexpr int kHalves = D / 64;            // 64-column swizzle atoms across d
  static constexpr int kAtomRow = 128;              // bytes per swizzled row
  static constexpr int kSRegs = kBN / 2;            // S accumulator floats per thread
  static constexpr int kORegs = D / 2;              // O accumulator floats per thread
  static constexpr int kPFrags = kBN / 16;          // k16 steps of P V
  static constexpr std::uint32_t kQBytes = kBM * D * 2;
  static constexpr std::uint32_t kKVBytes = kBN * D * 2;
  static constexpr bool kBf16 = std::is_same_v<Elem, __nv_bfloat16>;
  static_assert(D == 64 || D == 128, "fa3: head_dim 64 or 128");
  static_assert(kRows == 64, "wgmma's M is 64 rows per warpgroup");
  static_assert(kBN == 128, "S = Q K^T is one m64n128 wgmma per k-step");
  static_assert(Sched::kSwizzleBytes == kAtomRow, "the descriptors assume the 128-byte swizzle");
  static_assert(Sched::q_offset_for(D, 2) % 1024 == 0 && Sched::k_offset_for(D, 2, 1) % 1024 == 0 &&
                    Sched::v_offset_for(D, 2, 0) % 1024 == 0,
                "swizzled tiles must be 1024-byte aligned");
  static_assert(Sched::barrier_bytes_for(kStages) >= 8 * (1 + 4 * kStages), "barrier area too small");
};

namespace fwd_detail {

// The shared-memory barriers: Q full, and per stage K and V full and empty.
// K and V are released separately: K_n as soon as S_n is computed, V_n after
// P_n V_n, so the producer can refill a K buffer about one key block earlier.
template <int STAGES>
struct Barriers {
  std::uint64_t q_full;
  std::uint64_t k_full[STAGES];
  std::uint64_t v_full[STAGES];
  std::uint64_t k_empty[STAGES];
  std::uint64_t v_empty[STAGES];
};

// Ring position of the n-th key block a CTA visits (Fa3ForwardSchedule::stage_of
// and phase_of, stepped without division).
template <int STAGES>
struct RingPos {
  int stage = 0;
  std::uint32_t phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == STAGES) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

template <class Tr>
__device__ __forceinline__ void producer(const ForwardParams& p, std::uint8_t* smem,
                                         Barriers<Tr::kStages>* bars) {
  const auto cta = p.sched.cta(blockIdx.x, blockIdx.y, blockIdx.z);
  const auto keys = p.sched.key_blocks<int>(cta);
  if (keys.first >= keys.end) return;
  const int head = static_cast<int>(cta.head), batch = static_cast<int>(cta.batch);
  const int kv_head = static_cast<int>(p.sched.kv_head(cta));
  const int row0 = static_cast<int>(p.sched.tiles.row_begin(cta.m_block));
  hopper::tma_prefetch_descriptor(&p.tma_q);
  hopper::tma_prefetch_descriptor(&p.tma_k);
  hopper::tma_prefetch_descriptor(&p.tma_v);
  using Sched = schedule::Fa3ForwardSchedule;
  constexpr int D = Tr::kHalves * 64;
  std::uint8_t* sQ = smem + Sched::q_offset_for(D, 2);
  hopper::mbar_arrive_expect_tx(&bars->q_full, Tr::kQBytes);
#pragma unroll
  for (int h = 0; h < Tr::kHalves; ++h)
    hopper::tma_load_4d(sQ + h * Tr::kBM * Tr::kAtomRow, &p.tma_q, &bars->q_full, 64 * h, row0, head, batch);
  // v_after_next_k: K_n is loaded before V_{n-1} (the consumers need them in
  // that order: S_n is issued before P_{n-1} V_{n-1}); else K_n, V_n together.
  auto load_k = [&](int j, const RingPos<Tr::kStages>& at) {
    hopper::mbar_wait(&bars->k_empty[at.stage], at.phase ^ 1u);
    std::uint8_t* sK = smem + Sched::k_offset_for(D, 2, at.stage);
    hopper::mbar_arrive_expect_tx(&bars->k_full[at.stage], Tr::kKVBytes);
#pragma unroll
    for (int h = 0; h < Tr::kHalves; ++h)
      hopper::tma_load_4d(sK + h * Tr::kBN * Tr::kAtomRow, &p.tma_k, &bars->k_full[at.stage], 64 * h, j * Tr::kBN,
                          kv_head, batch);
  };
  auto load_v = [&](int j, const RingPos<Tr::kStages>& at) {
    hopper::mbar_wait(&bars->v_empty[at.stage], at.phase ^ 1u);
    std::uint8_t* sV = smem + Sched::v_offset_for(D, 2, at.stage);
    hopper::mbar_arrive_expect_tx(&bars->v_full[at.stage], Tr::kKVBytes);
#pragma unroll
    for (int h = 0; h < Tr::kHalves; ++h)
      hopper::tma_load_4d(sV + h * Tr::kBN * Tr::kAtomRow, &p.tma_v, &bars->v_full[at.stage], 64 * h, j * Tr::kBN,
                          kv_head, batch);
  };
  RingPos<Tr::kStages> pos, prev;
  if (!p.v_after_next_k) {  // K_n, V_n together
    for (int j = keys.first; j < keys.end; j = keys.next(j)) {
      load_k(j, pos);
      load_v(j, pos);
      pos.advance();
    }
    return;
  }
  int j_prev = keys.first;
  load_k(keys.first, pos);
  for (int j = keys.next(keys.first); j < keys.end; j = keys.next(j)) {
    prev = pos;
    pos.advance();
    load_k(j, pos);
    load_v(j_prev, prev);
    j_prev = j;
  }
  load_v(j_prev, pos);
}

// S = Q K^T for this warpgroup's 64 rows: d/16 wgmmas, one group.
template <class Tr>
__device__ __forceinline__ void issue_qk(float (&s)[Tr::kSRegs], std::uint32_t q_addr, std::uint32_t k_addr) {
  hopper::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < Tr::kHalves * 4; ++kk) {
    const std::uint32_t off = (kk % 4) * 32;  // 16 elements further along the swizzled row
    const std::uint64_t da = hopper::desc_sw128(q_addr + (kk / 4) * Tr::kBM * Tr::kAtomRow + off, 0);
    const std::uint64_t db = hopper::desc_sw128(k_addr + (kk / 4) * Tr::kBN * Tr::kAtomRow + off, 0);
    hopper::wgmma_ss_m64n128k16<Tr::kBf16>(s, da, db, kk > 0 ? 1 : 0);
  }
  hopper::wgmma_commit();
}

// O += P V: B_c/16 wgmmas with P from registers, V N-major, one group.
template <class Tr>
__device__ __forceinline__ void issue_pv(float (&o)[Tr::kORegs], const std::uint32_t (&pf)[Tr::kPFrags][4],
                                         std::uint32_t v_addr) {
  hopper::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < Tr::kPFrags; ++kk) {
    const std::uint64_t db = hopper::desc_sw128(v_addr + kk * 16 * Tr::kAtomRow, Tr::kBN * Tr::kAtomRow);
    if constexpr (Tr::kORegs == 64)
      hopper::wgmma_rs_m64n128k16<Tr::kBf16>(o, pf[kk], db, 1);
    else
      hopper::wgmma_rs_m64n64k16<Tr::kBf16>(o, pf[kk], db, 1);
  }
  hopper::wgmma_commit();
}

// Scores of keys this thread's rows may not see become -inf: columns at or
// past seq_k (ragged last block) and, when causal, past the row's diagonal
// (bottom-right aligned: key c is visible to row r iff c <= r + seq_k - seq_q).
template <class Tr>
__device__ __forceinline__ void mask_scores(float (&s)[Tr::kSRegs], const schedule::AttentionTiles& tiles, int row,
                                            int col0, int lane) {
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int limit = static_cast<int>(tiles.key_end_for_row(row + hh * 8)) - col0;
#pragma unroll
    for (int t = 0; t < Tr::kSRegs / 4; ++t)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        if (t * 8 + (lane & 3) * 2 + e >= limit) s[4 * t + 2 * hh + e] = -INFINITY;
  }
}

// Online softmax of one block in place: s becomes exp2(s * scale_log2 - m),
// the row maxima and (per-thread partial) sums are updated, and corr holds
// the factor the O accumulator must be multiplied by.
template <class Tr>
__device__ __forceinline__ void online_softmax(float (&s)[Tr::kSRegs], float (&row_max)[2], float (&row_sum)[2],
                                               float (&corr)[2], float scale_log2) {
  constexpr int kChunks = Tr::kSRegs / 4;  // 8-column chunks; each row has 2 scores per chunk
  constexpr int kPartials = 4;             // independent max / sum chains (the reductions are latency-bound)
  static_assert(kChunks % kPartials == 0, "chunks split evenly over the partial reductions");
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    float part[kPartials];
#pragma unroll
    for (int q = 0; q < kPartials; ++q) part[q] = row_max[hh];
#pragma unroll
    for (int t = 0; t < kChunks; ++t)
      part[t % kPartials] = fmaxf(part[t % kPartials], fmaxf(s[4 * t + 2 * hh], s[4 * t + 2 * hh + 1]));
    float mx = part[0];
#pragma unroll
    for (int q = 1; q < kPartials; ++q) mx = fmaxf(mx, part[q]);
    mx = dev::quad_max(mx);
    // A row that has seen no key yet keeps m = -inf: subtract 0 instead (-inf - -inf is NaN).
    const float m_scaled = mx == -INFINITY ? 0.0f : mx * scale_log2;
    corr[hh] = dev::exp2_approx(row_max[hh] * scale_log2 - m_scaled);
    row_max[hh] = mx;
#pragma unroll
    for (int q = 0; q < kPartials; ++q) part[q] = 0.0f;
#pragma unroll
    for (int t = 0; t < kChunks; ++t) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& v = s[4 * t + 2 * hh + e];
        v = dev::exp2_approx(fmaf(v, scale_log2, -m_scaled));
        part[t % kPartials] += v;
      }
    }
    float sum = part[0];
#pragma unroll
    for (int q = 1; q < kPartials; ++q) sum += part[q];
    row_sum[hh] = row_sum[hh] * corr[hh] + sum;
  }
}

template <class Tr>
__device__ __forceinline__ void rescale_o(float (&o)[Tr::kORegs], const float (&corr)[2]) {
#pragma unroll
  for (int t = 0; t < Tr::kORegs / 4; ++t) {
    o[4 * t] *= corr[0];
    o[4 * t + 1] *= corr[0];
    o[4 * t + 2] *= corr[1];
    o[4 * t + 3] *= corr[1];
  }
}

// The S accumulator (C layout) is the A fragment of P V: fragment kk packs
// the scores of keys 16 kk .. 16 kk + 15 in the order a0..a3 wants.
template <class Elem, class Tr>
__device__ __forceinline__ void scores_to_p(const float (&s)[Tr::kSRegs], std::uint32_t (&pf)[Tr::kPFrags][4]) {
#pragma unroll
  for (int kk = 0; kk < Tr::kPFrags; ++kk)
#pragma unroll
    for (int q = 0; q < 4; ++q) pf[kk][q] = dev::pack2<Elem>(s[8 * kk + 2 * q], s[8 * kk + 2 * q + 1]);
}

// Byte offset of element (row, col) in a [rows][D] tile stored as the TMA
// writes it: D/64 column halves of rows x 128 bytes, the 16-byte chunk index
// XOR-ed with row % 8 (the 128-byte swizzle).
template <class Tr>
__device__ __forceinline__ std::uint32_t swizzled_offset(int rows, int r, int col) {
  return static_cast<std::uint32_t>((col / 64) * rows * Tr::kAtomRow + r * Tr::kAtomRow +
                                    ((((col % 64) / 8) ^ (r % 8)) * 16) + (col % 8) * 2);
}

// Named barriers 3 and 4: consumer c's 128 threads, between its O fragments
// landing in shared memory and its row stores.
__device__ __forceinline__ int o_tile_barrier(int consumer) { return 3 + consumer; }

// O / l goes through the consumer's own 64 rows of the Q tile (free: its last
// S = Q K^T has completed, and the other consumer reads only its own rows),
// in Q's swizzle, so a fragment store's 8 rows x 16 bytes hit 32 distinct
// banks; then each thread stores whole 16-byte chunks of rows. Every 32-byte
// sector of O crosses to the L2 once, in one request (stored straight from
// the fragments, each sector went as two 16-byte halves: 1.7x O's bytes on
// the crossbar). L = m * scale + log(l) is stored by each row's first lane.
template <class Elem, class Tr>
__device__ __forceinline__ void epilogue(const ForwardParams& p, std::uint8_t* smem, const float (&o)[Tr::kORegs],
                                         const float (&row_max)[2], const float (&row_sum)[2], int row, int c, int t) {
  using Sched = schedule::Fa3ForwardSchedule;
  constexpr int D = Tr::kHalves * 64, kChunks = D / 8;  // 16-byte chunks per row
  const int lane = t % 32;
  const auto cta = p.sched.cta(blockIdx.x, blockIdx.y, blockIdx.z);
  const i64 seq_q = p.sched.tiles.seq_q;
  const int row0 = static_cast<int>(p.sched.tiles.row_begin(cta.m_block));
  std::uint8_t* sO = smem + Sched::q_offset_for(D, 2);
  float* gL = p.lse + (cta.batch * p.sched.shape.heads + cta.head) * seq_q;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int r = row + hh * 8;
    const float l = dev::quad_sum(row_sum[hh]);
    const float inv_l = l > 0.0f ? 1.0f / l : 0.0f;
    const int r_cta = r - row0;
#pragma unroll
    for (int k = 0; k < kChunks; ++k)
      *reinterpret_cast<std::uint32_t*>(sO + swizzled_offset<Tr>(Tr::kBM, r_cta, 8 * k + (lane & 3) * 2)) =
          dev::pack2<Elem>(o[4 * k + 2 * hh] * inv_l, o[4 * k + 2 * hh + 1] * inv_l);
    if ((lane & 3) == 0 && r < seq_q) gL[r] = l > 0.0f ? row_max[hh] * p.scale + logf(l) : -INFINITY;
  }
  hopper::named_bar_sync(o_tile_barrier(c), 128);
  Elem* gO = static_cast<Elem*>(p.o) + cta.batch * p.o_str.batch + cta.head * p.o_str.head;
#pragma unroll
  for (int i = t; i < Tr::kRows * kChunks; i += 128) {
    const int r_cta = c * Tr::kRows + i / kChunks, k = i % kChunks;
    if (row0 + r_cta >= seq_q) continue;
    const uint4 chunk = *reinterpret_cast<const uint4*>(sO + swizzled_offset<Tr>(Tr::kBM, r_cta, 8 * k));
    *reinterpret_cast<uint4*>(gO + static_cast<i64>(row0 + r_cta) * p.o_str.row + 8 * k) = chunk;
  }
}

// Named barriers 1 and 2: consumer c waits on 1 + c for its turn to issue
// GEMMs and hands the turn over on the other's.
__device__ __forceinline__ int turn_barrier(int consumer) { return 1 + consumer; }
constexpr int kPingPongThreads = 256;

template <class Elem, class Tr>
__device__ __forceinline__ void consumer(const ForwardParams& p, std::uint8_t* smem, Barriers<Tr::kStages>* bars,
                                         int c) {
  using Sched = schedule::Fa3ForwardSchedule;
  constexpr int D = Tr::kHalves * 64;
  const auto cta = p.sched.cta(blockIdx.x, blockIdx.y, blockIdx.z);
  const auto keys = p.sched.key_blocks<int>(cta);
  const int t = static_cast<int>(threadIdx.x) - 128 * (1 + c);
  const int warp = t / 32, lane = t % 32;
  const int row = static_cast<int>(p.sched.tiles.row_begin(cta.m_block)) + c * Tr::kRows + warp * 16 + lane / 4;

  float o[Tr::kORegs];
#pragma unroll
  for (int k = 0; k < Tr::kORegs; ++k) o[k] = 0.0f;
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f};

  if (keys.first < keys.end) {
    const bool pingpong = p.pingpong;
    const std::uint32_t base = dev::smem_addr(smem);
    const std::uint32_t q_addr = base + Sched::q_offset_for(D, 2) + c * Tr::kRows * Tr::kAtomRow;
    auto k_addr = [&](int st) { return base + static_cast<std::uint32_t>(Sched::k_offset_for(D, 2, st)); };
    auto v_addr = [&](int st) { return base + static_cast<std::uint32_t>(Sched::v_offset_for(D, 2, st)); };
    auto release = [&](std::uint64_t* empty) {  // one arrival per consumer warp
      __syncwarp();
      if (lane == 0) hopper::mbar_arrive(empty);
    };
    // Turn taking: consumer 1 lets consumer 0 go first, and skips its last
    // hand-over, so every bar.sync meets exactly one bar.arrive.
    if (pingpong && c == 1) hopper::named_bar_arrive(turn_barrier(0), kPingPongThreads);
    auto my_turn = [&]() {
      if (pingpong) hopper::named_bar_sync(turn_barrier(c), kPingPongThreads);
    };
    auto hand_over = [&](bool last) {
      if (pingpong && !(c == 1 && last)) hopper::named_bar_arrive(turn_barrier(1 - c), kPingPongThreads);
    };
    auto softmax_block = [&](float(&s)[Tr::kSRegs], int j, float(&corr)[2]) {
      if (keys.masked(j)) mask_scores<Tr>(s, p.sched.tiles, row, j * Tr::kBN, lane);
      online_softmax<Tr>(s, row_max, row_sum, corr, p.scale_log2);
    };

    hopper::mbar_wait(&bars->q_full, 0);
    float s[Tr::kSRegs];
    std::uint32_t pf[Tr::kPFrags][4];
    float corr[2];
    fwd_detail::RingPos<Tr::kStages> pos, prev;
    int j = keys.first;
    int j_next = keys.next(j);

    // First block: S only.
    hopper::mbar_wait(&bars->k_full[pos.stage], pos.phase);
    my_turn();
    issue_qk<Tr>(s, q_addr, k_addr(pos.stage));
    hand_over(j_next >= keys.end);
    hopper::wgmma_wait<0>();
    hopper::fence_operands(s);
    release(&bars->k_empty[pos.stage]);
    softmax_block(s, j, corr);
    scores_to_p<Elem, Tr>(s, pf);
    prev = pos;
    pos.advance();
    j = j_next;

    while (j < keys.end) {
      j_next = keys.next(j);
      hopper::mbar_wait(&bars->k_full[pos.stage], pos.phase);
      my_turn();
      issue_qk<Tr>(s, q_addr, k_addr(pos.stage));
      hopper::mbar_wait(&bars->v_full[prev.stage], prev.phase);
      issue_pv<Tr>(o, pf, v_addr(prev.stage));
      hand_over(j_next >= keys.end);
      hopper::wgmma_wait<1>();  // S_n done; P_{n-1} V_{n-1} may still run
      hopper::fence_operands(s);
      release(&bars->k_empty[pos.stage]);
      softmax_block(s, j, corr);
      hopper::wgmma_wait<0>();
      hopper::fence_operands(o);
#pragma unroll
      for (int kk = 0; kk < Tr::kPFrags; ++kk) hopper::fence_operands(pf[kk]);  // P V read them
      release(&bars->v_empty[prev.stage]);
      rescale_o<Tr>(o, corr);
      scores_to_p<Elem, Tr>(s, pf);
      prev = pos;
      pos.advance();
      j = j_next;
    }
    hopper::mbar_wait(&bars->v_full[prev.stage], prev.phase);
    issue_pv<Tr>(o, pf, v_addr(prev.stage));
    hopper::wgmma_wait<0>();
    hopper::fence_operands(o);
    release(&bars->v_empty[prev.stage]);
  }
  epilogue<Elem, Tr>(p, smem, o, row_max, row_sum, row, c, t);
}

}  // namespace fwd_detail

template <class Elem, int D>
__global__ void __launch_bounds__(schedule::Fa3ForwardSchedule::kThreads, 1)
    fa3_forward_kernel(const __grid_constant__ ForwardParams p) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Tr = FwdTraits<Elem, D>;
  using Sched = schedule::Fa3ForwardSchedule;
  extern __shared__ __align__(1024) std::uint8_t fa3_smem_raw[];
  // The tiles need 1024-byte alignment (the swizzle's period); the schedule
  // reserves 1 KB of slack for this.
  std::uint8_t* smem = fa3_smem_raw + ((1024 - (dev::smem_addr(fa3_smem_raw) & 1023)) & 1023);
  auto* bars = reinterpret_cast<fwd_detail::Barriers<Tr::kStages>*>(smem);
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (threadIdx.x == 0) {
    hopper::mbar_init(&bars->q_full, 1);
    for (int s = 0; s < Tr::kStages; ++s) {
      hopper::mbar_init(&bars->k_full[s], 1);
      hopper::mbar_init(&bars->v_full[s], 1);
      hopper::mbar_init(&bars->k_empty[s], Tr::kConsumerWarps);
      hopper::mbar_init(&bars->v_empty[s], Tr::kConsumerWarps);
    }
    hopper::mbar_init_fence();
  }
  __syncthreads();
  if (warpgroup == 0) {
    hopper::setmaxnreg_dec<static_cast<int>(Sched::kProducerRegs)>();
    if (threadIdx.x == 0) fwd_detail::producer<Tr>(p, smem, bars);
  } else {
    hopper::setmaxnreg_inc<static_cast<int>(Sched::kConsumerRegs)>();
    fwd_detail::consumer<Elem, Tr>(p, smem, bars, warpgroup - 1);
  }
#endif
}

// Launches the kernel with the schedule's grid and dynamic shared memory.
template <class Elem, int D>
void launch_forward(const ForwardParams& p, cudaStream_t stream) {
  using Tr = FwdTraits<Elem, D>;
  const std::string name = "fa3_fwd<d=" + std::to_string(D) + ">";
  if (p.sched.stages() != Tr::kStages || p.sched.head_dim != D)
    throw std::logic_error(name + ": schedule (d=" + std::to_string(p.sched.head_dim) + ", " +
                           std::to_string(p.sched.stages()) + " stages) differs from the kernel's");
  const i64 smem = p.sched.sram_bytes();
  const schedule::Dim3 grid = p.sched.grid();
  require_grid_fits(grid.x, grid.y, grid.z, name);
  require_smem_fits(launch_limits(), smem, name);
  auto* kernel = &fa3_forward_kernel<Elem, D>;
  IOSIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<dim3(static_cast<unsigned>(grid.x), static_cast<unsigned>(grid.y), static_cast<unsigned>(grid.z)),
           static_cast<unsigned>(Tr::kThreads), static_cast<size_t>(smem), stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace iosim::kernels::fa3
