// FlashAttention (v1) backward, Algorithm 4, launched from
// schedule::Fa1BackwardSchedule: a CTA per (KV head, batch). The CTA first
// sets dK, dV and the fp32 dQ accumulator of each query head of its group to 0
// in global memory (step 5); then, for each key block j (outer; K_j, V_j loaded
// once, dK_j, dV_j accumulated in registers), for each query head of the GQA
// group and each active query block i (inner), it loads Q_i, O_i, dO_i,
// dQaccum_i, l_i, m_i, recomputes P_ij = diag(l_i)^-1 exp(scale S_ij - m_i),
// D_i = rowsum(dO_i o O_i), dS_ij = P_ij o (dP_ij - D_i), and writes dQaccum_i
// back. dK_j, dV_j are written after the inner loops; dQaccum is converted to
// dQ in the data type at the end, by the same CTA.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "kernels/common/attention_api.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_primitives.cuh"
#include "kernels/fa1/fa1_common.h"
#include "kernels/standard/launch_util.h"
#include "kernels/standard/tile_mma.cuh"

namespace iosim::kernels {
namespace {

using namespace detail;
using u16 = std::uint16_t;

template <int D, int BR, int BC>
struct Fa1BwdTraits {
  static constexpr int kWarps = 8;
  static constexpr int kThreads = 32 * kWarps;
  using GridS = RowsFirstGrid<BR, BC, kWarps>;   // S_ij, P_ij, dP_ij, dS_ij
  using GridKV = RowsFirstGrid<BC, D, kWarps>;   // dK_j, dV_j accumulators
  using GridQ = RowsFirstGrid<BR, D, kWarps>;    // dS_ij K_j
  static constexpr int kLd = D + 8;    // padded head-dim tile row (elements)
  static constexpr int kLdP = BC + 8;  // padded P / dS row (elements)
  static constexpr int kLdA = D + 4;   // padded fp32 dQ_i row (floats)
  // Shared memory in the schedule's order: K_j, V_j, Q_i, O_i, dO_i, P_ij, dS_ij
  // (data type), dQ_i (fp32), l_i, m_i; then D_i (fp32, recomputed each step).
  static constexpr int kOffK = 0;
  static constexpr int kOffV = kOffK + BC * kLd * 2;
  static constexpr int kOffQ = kOffV + BC * kLd * 2;
  static constexpr int kOffO = kOffQ + BR * kLd * 2;
  static constexpr int kOffdO = kOffO + BR * kLd * 2;
  static constexpr int kOffP = kOffdO + BR * kLd * 2;
  static constexpr int kOffdS = kOffP + BR * kLdP * 2;
  static constexpr int kOffdQ = kOffdS + BR * kLdP * 2;
  static constexpr int kOffL = kOffdQ + BR * kLdA * 4;
  static constexpr int kOffM = kOffL + BR * 4;
  static constexpr int kOffD = kOffM + BR * 4;
  static constexpr int kSmemBytes = kOffD + BR * 4;
  // The plan (sim/schedule) states the CTA this kernel launches.
  static_assert(kSmemBytes == schedule::Fa1BackwardSchedule::launch_smem_bytes_for(D, BR, BC, 2),
                "shared memory differs from the schedule's");
  static_assert(kWarps == schedule::Fa1BackwardSchedule::kWarps, "warps differ from the schedule's");
};

struct Fa1BwdParams {
  schedule::Fa1BackwardSchedule s;
  const void* q;
  const void* k;
  const void* v;
  const void* o;
  const void* d_o;
  const float* l;
  const float* m;
  void* dq;
  void* dk;
  void* dv;
  float* dq_accum;
  Strides qs, ks;  // query side (Q, O, dO, dQ), key side (K, V, dK, dV)
  float scale;
  schedule::StepLog step_log;  // tests: the tile steps each CTA executes
};

// Writes an accumulator tile (times `mul`) into a padded shared tile in the data type.
template <class T, class Grid>
__device__ __forceinline__ void stage_accum(u16* s, int ld, const Accum<Grid>& acc, float mul, int warp, int lane) {
#pragma unroll
  for (int fm = 0; fm < Grid::FM; ++fm)
#pragma unroll
    for (int fn = 0; fn < Grid::FN; ++fn)
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const int row = Grid::row(warp, lane, fm, 2 * hr), col = Grid::col(warp, lane, fn, 0);
        *reinterpret_cast<std::uint32_t*>(s + row * ld + col) =
            pack2<T>(mul * acc.v[fm][fn][2 * hr], mul * acc.v[fm][fn][2 * hr + 1]);
      }
}

template <class T, int D, int BR, int BC>
__global__ void __launch_bounds__(Fa1BwdTraits<D, BR, BC>::kThreads) fa1_backward_kernel(const Fa1BwdParams p) {
  using Tr = Fa1BwdTraits<D, BR, BC>;
  using GridS = typename Tr::GridS;
  using GridKV = typename Tr::GridKV;
  using GridQ = typename Tr::GridQ;
  constexpr int kLd = Tr::kLd, kLdP = Tr::kLdP, kLdA = Tr::kLdA, kThreads = Tr::kThreads;
  extern __shared__ __align__(16) unsigned char smem[];
  u16* sK = reinterpret_cast<u16*>(smem + Tr::kOffK);
  u16* sV = reinterpret_cast<u16*>(smem + Tr::kOffV);
  u16* sQ = reinterpret_cast<u16*>(smem + Tr::kOffQ);
  u16* sO = reinterpret_cast<u16*>(smem + Tr::kOffO);
  u16* sdO = reinterpret_cast<u16*>(smem + Tr::kOffdO);
  u16* sP = reinterpret_cast<u16*>(smem + Tr::kOffP);
  u16* sdS = reinterpret_cast<u16*>(smem + Tr::kOffdS);
  float* sdQ = reinterpret_cast<float*>(smem + Tr::kOffdQ);
  float* sL = reinterpret_cast<float*>(smem + Tr::kOffL);
  float* sM = reinterpret_cast<float*>(smem + Tr::kOffM);
  float* sD = reinterpret_cast<float*>(smem + Tr::kOffD);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  const auto& t = p.s.tiles;
  const auto cta = p.s.cta(blockIdx.x, blockIdx.y, blockIdx.z);
  const i64 b = cta.batch, kvh = cta.kv_head, group = p.s.shape.group(), heads = p.s.shape.heads;
  const i64 head0 = kvh * group, Nq = t.seq_q, Nk = t.seq_k;
  const i64 kv_off = b * p.ks.batch + kvh * p.ks.head;
  const u16* gK = static_cast<const u16*>(p.k) + kv_off;
  const u16* gV = static_cast<const u16*>(p.v) + kv_off;
  u16* gdK = static_cast<u16*>(p.dk) + kv_off;
  u16* gdV = static_cast<u16*>(p.dv) + kv_off;
  auto q_off = [&](i64 h) { return b * p.qs.batch + h * p.qs.head; };
  auto accum_of = [&](i64 h) { return p.dq_accum + (b * heads + h) * Nq * D; };

  // Step 5: dK = dV = 0 and dQaccum = 0 in global memory.
  for (i64 idx = tid; idx < Nk * (D / 8); idx += kThreads) {
    const i64 r = idx / (D / 8), c = (idx % (D / 8)) * 8;
    *reinterpret_cast<uint4*>(gdK + r * p.ks.row + c) = make_uint4(0, 0, 0, 0);
    *reinterpret_cast<uint4*>(gdV + r * p.ks.row + c) = make_uint4(0, 0, 0, 0);
  }
  for (i64 g = 0; g < group; ++g) {
    float* acc = accum_of(head0 + g);
    for (i64 idx = tid; idx < Nq * D / 4; idx += kThreads)
      reinterpret_cast<float4*>(acc)[idx] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  __syncthreads();

  dev::log_begin(p.step_log);  // tests record every tile step (schedule::StepLog)
  for (i64 j = p.s.first_key_block(); j < t.n_blocks(); j = p.s.next_key_block(j)) {
    const i64 c0 = t.col_begin(j);
    const int cols = static_cast<int>(t.cols_in(j));
    load_tile16<BC, D>(sK, kLd, gK + c0 * p.ks.row, p.ks.row, cols, tid, kThreads);
    load_tile16<BC, D>(sV, kLd, gV + c0 * p.ks.row, p.ks.row, cols, tid, kThreads);
    Accum<GridKV> dk, dv;
    dk.zero();
    dv.zero();

    for (i64 g = 0; g < group; ++g) {
      const i64 h = head0 + g;
      const u16* gQ = static_cast<const u16*>(p.q) + q_off(h);
      const u16* gO = static_cast<const u16*>(p.o) + q_off(h);
      const u16* gdO = static_cast<const u16*>(p.d_o) + q_off(h);
      float* gAcc = accum_of(h);
      const float* gl = p.l + (b * heads + h) * Nq;
      const float* gm = p.m + (b * heads + h) * Nq;

      for (i64 i = t.first_m_block(j); i < t.m_blocks(); i = t.next_m_block(j, i)) {
        if (p.step_log.on())
          dev::log_step(p.step_log, static_cast<int>(i), static_cast<int>(j), static_cast<int>(g),
                        p.s.masked(i, j));
        const i64 r0 = t.row_begin(i);
        const int rows = static_cast<int>(t.rows_in(i));
        load_tile16<BR, D>(sQ, kLd, gQ + r0 * p.qs.row, p.qs.row, rows, tid, kThreads);
        load_tile16<BR, D>(sO, kLd, gO + r0 * p.qs.row, p.qs.row, rows, tid, kThreads);
        load_tile16<BR, D>(sdO, kLd, gdO + r0 * p.qs.row, p.qs.row, rows, tid, kThreads);
        load_tile_f32<BR, D>(sdQ, kLdA, gAcc + r0 * D, D, rows, tid, kThreads);
        for (int r = tid; r < BR; r += kThreads) {
          sL[r] = r < rows ? __ldcg(gl + r0 + r) : 0.f;  // l = 0: P row is 0
          sM[r] = r < rows ? __ldcg(gm + r0 + r) : 0.f;
        }
        __syncthreads();

        // D_i = rowsum(dO_i o O_i).
        for (int r = tid; r < BR; r += kThreads) {
          float dot = 0.f;
          for (int c = 0; c < D; ++c)
            dot += DTypeOps<T>::to_float(sdO[r * kLd + c]) * DTypeOps<T>::to_float(sO[r * kLd + c]);
          sD[r] = dot;
        }
        // P_ij = diag(l_i)^-1 exp(scale Q_i K_j^T - m_i), 0 where masked or l_i = 0.
        Accum<GridS> s;
        s.zero();
        warp_mma<T, GridS, D, true, true>(sQ, kLd, sK, kLd, s, warp, lane);
        const bool diag = t.crosses_diagonal(i, j);
#pragma unroll
        for (int fm = 0; fm < GridS::FM; ++fm)
#pragma unroll
          for (int fn = 0; fn < GridS::FN; ++fn)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int row = GridS::row(warp, lane, fm, e), col = GridS::col(warp, lane, fn, e);
              const float lr = sL[row];
              const bool masked = col >= cols || (diag && c0 + col >= t.key_end_for_row(r0 + row)) || lr == 0.f;
              s.v[fm][fn][e] = masked ? 0.f : expf(s.v[fm][fn][e] * p.scale - sM[row]) / lr;
            }
        stage_accum<T>(sP, kLdP, s, 1.f, warp, lane);
        // dP_ij = dO_i V_j^T.
        Accum<GridS> dp;
        dp.zero();
        warp_mma<T, GridS, D, true, true>(sdO, kLd, sV, kLd, dp, warp, lane);
        __syncthreads();  // P_ij and D_i complete
        // dS_ij = P_ij o (dP_ij - D_i).
#pragma unroll
        for (int fm = 0; fm < GridS::FM; ++fm)
#pragma unroll
          for (int fn = 0; fn < GridS::FN; ++fn)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int row = GridS::row(warp, lane, fm, e);
              dp.v[fm][fn][e] = s.v[fm][fn][e] * (dp.v[fm][fn][e] - sD[row]);
            }
        stage_accum<T>(sdS, kLdP, dp, 1.f, warp, lane);
        __syncthreads();
        // dV_j += P_ij^T dO_i, dK_j += dS_ij^T Q_i (scale applied when written).
        warp_mma<T, GridKV, BR, false, false>(sP, kLdP, sdO, kLd, dv, warp, lane);
        warp_mma<T, GridKV, BR, false, false>(sdS, kLdP, sQ, kLd, dk, warp, lane);
        // dQ_i += scale dS_ij K_j.
        Accum<GridQ> dq;
        dq.zero();
        warp_mma<T, GridQ, BC, true, false>(sdS, kLdP, sK, kLd, dq, warp, lane);
#pragma unroll
        for (int fm = 0; fm < GridQ::FM; ++fm)
#pragma unroll
          for (int fn = 0; fn < GridQ::FN; ++fn)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int row = GridQ::row(warp, lane, fm, e), col = GridQ::col(warp, lane, fn, e);
              sdQ[row * kLdA + col] += p.scale * dq.v[fm][fn][e];
            }
        __syncthreads();
        store_tile_f32<BR, D>(gAcc + r0 * D, D, sdQ, kLdA, rows, tid, kThreads);
        __syncthreads();  // before the next step overwrites the tiles
      }
    }
    // Write dK_j, dV_j, staged through the K_j, V_j tiles (no longer needed).
    __syncthreads();
    stage_accum<T>(sK, kLd, dk, p.scale, warp, lane);
    stage_accum<T>(sV, kLd, dv, 1.f, warp, lane);
    __syncthreads();
    store_tile16<BC, D>(gdK + c0 * p.ks.row, p.ks.row, sK, kLd, cols, tid, kThreads);
    store_tile16<BC, D>(gdV + c0 * p.ks.row, p.ks.row, sV, kLd, cols, tid, kThreads);
    __syncthreads();
  }


  // dQ = dQaccum in the data type.
  for (i64 g = 0; g < group; ++g) {
    const float* acc = accum_of(head0 + g);
    u16* gdQ = static_cast<u16*>(p.dq) + q_off(head0 + g);
    for (i64 idx = tid; idx < Nq * (D / 8); idx += kThreads) {
      const i64 r = idx / (D / 8), c = (idx % (D / 8)) * 8;
      const float4 x = __ldcg(reinterpret_cast<const float4*>(acc + r * D + c));
      const float4 y = __ldcg(reinterpret_cast<const float4*>(acc + r * D + c + 4));
      *reinterpret_cast<uint4*>(gdQ + r * p.qs.row + c) =
          make_uint4(pack2<T>(x.x, x.y), pack2<T>(x.z, x.w), pack2<T>(y.x, y.y), pack2<T>(y.z, y.w));
    }
  }
}

template <class T, int D, int BR, int BC>
void run_backward(const AttentionConfig& c, const schedule::Fa1BackwardSchedule& sched, const BackwardBuffers& b,
                  cudaStream_t stream) {
  using Tr = Fa1BwdTraits<D, BR, BC>;
  const workload::Problem& pr = c.problem;
  const Fa1BwdParams p{sched,
                       b.q,
                       b.k,
                       b.v,
                       b.o,
                       b.d_o,
                       b.l,
                       b.m,
                       b.dq,
                       b.dk,
                       b.dv,
                       b.dq_accum,
                       strides_for(pr, pr.heads, pr.seq_q),
                       strides_for(pr, pr.kv_heads, pr.seq_k),
                       c.scale(),
                       c.step_log};
  const long long smem = p.s.launch_smem_bytes();
  for (auto [ptr, st, name] :
       {std::tuple{b.q, p.qs, "q"}, {b.k, p.ks, "k"}, {b.v, p.ks, "v"}, {b.o, p.qs, "o"}, {b.d_o, p.qs, "d_o"},
        {static_cast<const void*>(b.dq), p.qs, "dq"}, {b.dk, p.ks, "dk"}, {b.dv, p.ks, "dv"}})
    require_rows_aligned16(ptr, st, "fa1 backward", name);
  if (!aligned16(b.dq_accum)) throw InputError("fa1 backward: dq_accum must start on a 16-byte boundary");
  auto kernel = fa1_backward_kernel<T, D, BR, BC>;
  prepare_launch(kernel, smem, p.s.grid(), pr.dtype, "fa1 backward Br=" + std::to_string(BR) + " Bc=" + std::to_string(BC));
  kernel<<<to_dim3(p.s.grid()), Tr::kThreads, smem, stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace

void fa1_backward(const AttentionConfig& c, const BackwardBuffers& b, cudaStream_t stream) {
  const std::string algo = "fa1 backward";
  validate_config(c, algo);
  for (auto [ptr, name] :
       {std::pair{b.q, "q"}, {b.k, "k"}, {b.v, "v"}, {b.o, "o"}, {b.d_o, "d_o"},
        {static_cast<const void*>(b.l), "l"}, {static_cast<const void*>(b.m), "m"},
        {static_cast<const void*>(b.dq), "dq"}, {static_cast<const void*>(b.dk), "dk"},
        {static_cast<const void*>(b.dv), "dv"}, {static_cast<const void*>(b.dq_accum), "dq_accum"}})
    require_pointer(ptr, algo, name);
  const schedule::Plan plan = c.plan(workload::Algorithm::fa1, workload::Pass::bwd);
  const auto& sched = plan.kernels.at(0).as<schedule::Fa1BackwardSchedule>();
  const bool launched = dispatch::find_tile(c, Fa1BackwardTiles{}, [&](auto tile, auto elem) {
    using T = decltype(tile);
    run_backward<decltype(elem), T::d, T::bm, T::bn>(c, sched, b, stream);
  });
  if (!launched) throw_fa1_not_compiled(c, algo);
}

}  // namespace iosim::kernels
