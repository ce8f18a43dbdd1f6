// FlashAttention (v1) forward, Algorithm 1, launched from
// schedule::Fa1ForwardSchedule: a CTA per (head, batch). The CTA first sets
// O = 0, l = 0, m = -inf in global memory (step 2), then walks key blocks j
// (outer; K_j, V_j loaded once) and, inside, the active query blocks i
// (inner; Q_i, O_i, l_i, m_i loaded, O_i, l_i, m_i written back every step).
// S_ij and P_ij stay in registers: each warp owns 16 full rows of the tile,
// so row max/sum need only quad shuffles and P_ij feeds the P V product as the
// A operand directly.
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
struct Fa1FwdTraits {
  static constexpr int kWarps = BR / 16 < 8 ? BR / 16 : 8;
  static constexpr int kThreads = 32 * kWarps;
  using GridS = WarpGrid<BR, BC, kWarps, 1>;  // S_ij / P_ij: whole rows per warp
  using GridO = WarpGrid<BR, D, kWarps, 1>;   // P_ij V_j: the same rows
  static_assert(GridS::FM == 1 && GridO::FM == 1, "one 16-row fragment per warp");
  static constexpr int kLd = D + 8;  // padded tile row (elements): 16 bytes against bank conflicts
  // Shared memory in the schedule's order: K_j, V_j, Q_i, O_i (data type), l_i, m_i (fp32).
  static constexpr int kOffK = 0;
  static constexpr int kOffV = kOffK + BC * kLd * 2;
  static constexpr int kOffQ = kOffV + BC * kLd * 2;
  static constexpr int kOffO = kOffQ + BR * kLd * 2;
  static constexpr int kOffL = kOffO + BR * kLd * 2;
  static constexpr int kOffM = kOffL + BR * 4;
  static constexpr int kSmemBytes = kOffM + BR * 4;
  // The plan (sim/schedule) states the CTA this kernel launches.
  static_assert(kSmemBytes == schedule::Fa1ForwardSchedule::launch_smem_bytes_for(D, BR, BC, 2),
                "shared memory differs from the schedule's");
  static_assert(kWarps == schedule::Fa1ForwardSchedule::warps_for(BR), "warps differ from the schedule's");
};

struct Fa1FwdParams {
  schedule::Fa1ForwardSchedule s;
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* l;
  float* m;
  Strides qs, ks;  // query side (Q, O), key side (K, V)
  float scale;
  schedule::StepLog step_log;  // tests: the tile steps each CTA executes
};

template <class T, int D, int BR, int BC>
__global__ void __launch_bounds__(Fa1FwdTraits<D, BR, BC>::kThreads) fa1_forward_kernel(const Fa1FwdParams p) {
  using Tr = Fa1FwdTraits<D, BR, BC>;
  using GridS = typename Tr::GridS;
  using GridO = typename Tr::GridO;
  constexpr int kLd = Tr::kLd, kThreads = Tr::kThreads;
  const float kNegInf = -INFINITY;
  extern __shared__ __align__(16) unsigned char smem[];
  u16* sK = reinterpret_cast<u16*>(smem + Tr::kOffK);
  u16* sV = reinterpret_cast<u16*>(smem + Tr::kOffV);
  u16* sQ = reinterpret_cast<u16*>(smem + Tr::kOffQ);
  u16* sO = reinterpret_cast<u16*>(smem + Tr::kOffO);
  float* sL = reinterpret_cast<float*>(smem + Tr::kOffL);
  float* sM = reinterpret_cast<float*>(smem + Tr::kOffM);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  const auto& t = p.s.tiles;
  const auto cta = p.s.cta(blockIdx.x, blockIdx.y, blockIdx.z);
  const i64 b = cta.batch, h = cta.head, kvh = p.s.shape.kv_head_of(h);
  const u16* gQ = static_cast<const u16*>(p.q) + b * p.qs.batch + h * p.qs.head;
  const u16* gK = static_cast<const u16*>(p.k) + b * p.ks.batch + kvh * p.ks.head;
  const u16* gV = static_cast<const u16*>(p.v) + b * p.ks.batch + kvh * p.ks.head;
  u16* gO = static_cast<u16*>(p.o) + b * p.qs.batch + h * p.qs.head;
  float* gl = p.l + (b * p.s.shape.heads + h) * t.seq_q;
  float* gm = p.m + (b * p.s.shape.heads + h) * t.seq_q;

  // Step 2: O = 0, l = 0, m = -inf in global memory.
  for (i64 idx = tid; idx < t.seq_q * (D / 8); idx += kThreads) {
    const i64 r = idx / (D / 8), c = (idx % (D / 8)) * 8;
    *reinterpret_cast<uint4*>(gO + r * p.qs.row + c) = make_uint4(0, 0, 0, 0);
  }
  for (i64 r = tid; r < t.seq_q; r += kThreads) {
    gl[r] = 0.f;
    gm[r] = kNegInf;
  }
  __syncthreads();

  const int quad_row = lane >> 2, quad_col = lane & 3;
  dev::log_begin(p.step_log);  // tests record every tile step (schedule::StepLog)
  for (i64 j = p.s.first_key_block(); j < t.n_blocks(); j = p.s.next_key_block(j)) {
    const i64 c0 = t.col_begin(j);
    const int cols = static_cast<int>(t.cols_in(j));
    load_tile16<BC, D>(sK, kLd, gK + c0 * p.ks.row, p.ks.row, cols, tid, kThreads);
    load_tile16<BC, D>(sV, kLd, gV + c0 * p.ks.row, p.ks.row, cols, tid, kThreads);

    for (i64 i = t.first_m_block(j); i < t.m_blocks(); i = t.next_m_block(j, i)) {
      if (p.step_log.on())
        dev::log_step(p.step_log, static_cast<int>(i), static_cast<int>(j), 0, p.s.masked(i, j));
      const i64 r0 = t.row_begin(i);
      const int rows = static_cast<int>(t.rows_in(i));
      load_tile16<BR, D>(sQ, kLd, gQ + r0 * p.qs.row, p.qs.row, rows, tid, kThreads);
      load_tile16<BR, D>(sO, kLd, gO + r0 * p.qs.row, p.qs.row, rows, tid, kThreads);
      for (int r = tid; r < BR; r += kThreads) {
        sL[r] = r < rows ? __ldcg(gl + r0 + r) : 0.f;
        sM[r] = r < rows ? __ldcg(gm + r0 + r) : kNegInf;
      }
      __syncthreads();

      // S_ij = scale * Q_i K_j^T, masked (ragged key block, causal diagonal).
      Accum<GridS> s;
      s.zero();
      warp_mma<T, GridS, D, true, true>(sQ, kLd, sK, kLd, s, warp, lane);
      const bool diag = t.crosses_diagonal(i, j);
      float m_tile[2] = {kNegInf, kNegInf};
#pragma unroll
      for (int fn = 0; fn < GridS::FN; ++fn)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = GridS::row(warp, lane, 0, e), col = GridS::col(warp, lane, fn, e);
          float x = s.v[0][fn][e] * p.scale;
          if (col >= cols || (diag && c0 + col >= t.key_end_for_row(r0 + row))) x = kNegInf;
          s.v[0][fn][e] = x;
          m_tile[e >> 1] = fmaxf(m_tile[e >> 1], x);
        }
      // m~_ij = rowmax(S_ij), P~_ij = exp(S_ij - m~_ij), l~_ij = rowsum(P~_ij).
      float l_tile[2] = {0.f, 0.f};
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) m_tile[hr] = quad_max(m_tile[hr]);
#pragma unroll
      for (int fn = 0; fn < GridS::FN; ++fn)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float x = s.v[0][fn][e];
          const float pe = x == kNegInf ? 0.f : expf(x - m_tile[e >> 1]);
          s.v[0][fn][e] = pe;
          l_tile[e >> 1] += pe;
        }
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) l_tile[hr] = quad_sum(l_tile[hr]);

      // m_new = max(m_i, m~), l_new = e^(m_i - m_new) l_i + e^(m~ - m_new) l~; a row that
      // has seen nothing keeps m = -inf, l = 0 (no exp(-inf - -inf)).
      float scale_o[2], scale_p[2], l_new[2], m_new[2];
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const int row = GridS::row(warp, lane, 0, 2 * hr);
        const float mo = sM[row], lo = sL[row];
        m_new[hr] = fmaxf(mo, m_tile[hr]);
        scale_o[hr] = scale_p[hr] = l_new[hr] = 0.f;
        if (m_new[hr] != kNegInf) {
          const float ea = mo == kNegInf ? 0.f : expf(mo - m_new[hr]);
          const float eb = m_tile[hr] == kNegInf ? 0.f : expf(m_tile[hr] - m_new[hr]);
          l_new[hr] = ea * lo + eb * l_tile[hr];
          scale_o[hr] = ea * lo / l_new[hr];
          scale_p[hr] = eb / l_new[hr];
        }
      }
      __syncwarp();  // the quad has read l_i, m_i before its first lane overwrites them
      if (quad_col == 0) {
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int row = GridS::row(warp, lane, 0, 2 * hr);
          sL[row] = l_new[hr];
          sM[row] = m_new[hr];
        }
      }

      // P~_ij V_j with P~ from registers (C fragments of S become A fragments).
      Accum<GridO> o;
      o.zero();
#pragma unroll
      for (int kk = 0; kk < BC / 16; ++kk) {
        const std::uint32_t a[4] = {pack2<T>(s.v[0][2 * kk][0], s.v[0][2 * kk][1]),
                                    pack2<T>(s.v[0][2 * kk][2], s.v[0][2 * kk][3]),
                                    pack2<T>(s.v[0][2 * kk + 1][0], s.v[0][2 * kk + 1][1]),
                                    pack2<T>(s.v[0][2 * kk + 1][2], s.v[0][2 * kk + 1][3])};
#pragma unroll
        for (int fn = 0; fn < GridO::FN; ++fn) {
          const int n = fn * 8 + quad_row, k = kk * 16 + 2 * quad_col;
          const std::uint32_t bf[2] = {load_pair<false>(sV, kLd, n, k), load_pair<false>(sV, kLd, n, k + 8)};
          DTypeOps<T>::mma(o.v[0][fn], a, bf);
        }
      }
      // O_i <- diag(l_new)^-1 (diag(l_i) e^(m_i - m_new) O_i + e^(m~ - m_new) P~ V_j); each
      // element of the tile belongs to one thread.
#pragma unroll
      for (int fn = 0; fn < GridO::FN; ++fn)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = GridO::row(warp, lane, 0, e), col = GridO::col(warp, lane, fn, e);
          u16& ref = sO[row * kLd + col];
          ref = DTypeOps<T>::from_float(scale_o[e >> 1] * DTypeOps<T>::to_float(ref) + scale_p[e >> 1] * o.v[0][fn][e]);
        }
      __syncthreads();
      // Write O_i, l_i, m_i back to global memory.
      store_tile16<BR, D>(gO + r0 * p.qs.row, p.qs.row, sO, kLd, rows, tid, kThreads);
      for (int r = tid; r < rows; r += kThreads) {
        gl[r0 + r] = sL[r];
        gm[r0 + r] = sM[r];
      }
      __syncthreads();  // before the next step overwrites the tiles
    }
  }
}

template <class T, int D, int BR, int BC>
void run_forward(const AttentionConfig& c, const schedule::Fa1ForwardSchedule& sched, const ForwardBuffers& b,
                 cudaStream_t stream) {
  using Tr = Fa1FwdTraits<D, BR, BC>;
  const workload::Problem& pr = c.problem;
  const Fa1FwdParams p{sched,
                       b.q,
                       b.k,
                       b.v,
                       b.o,
                       b.l,
                       b.m,
                       strides_for(pr, pr.heads, pr.seq_q),
                       strides_for(pr, pr.kv_heads, pr.seq_k),
                       c.scale(),
                       c.step_log};
  const long long smem = p.s.launch_smem_bytes();
  for (auto [ptr, st, name] : {std::tuple{b.q, p.qs, "q"}, {b.k, p.ks, "k"}, {b.v, p.ks, "v"},
                               {static_cast<const void*>(b.o), p.qs, "o"}})
    require_rows_aligned16(ptr, st, "fa1 forward", name);
  auto kernel = fa1_forward_kernel<T, D, BR, BC>;
  prepare_launch(kernel, smem, p.s.grid(), pr.dtype, "fa1 forward Br=" + std::to_string(BR) + " Bc=" + std::to_string(BC));
  kernel<<<to_dim3(p.s.grid()), Tr::kThreads, smem, stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::vector<std::string> fa1_compiled_menu() { return detail::fa1_menu(); }

void fa1_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream) {
  const std::string algo = "fa1 forward";
  validate_config(c, algo);
  for (auto [ptr, name] : {std::pair{b.q, "q"}, {b.k, "k"}, {b.v, "v"}, {static_cast<const void*>(b.o), "o"},
                           {static_cast<const void*>(b.l), "l"}, {static_cast<const void*>(b.m), "m"}})
    require_pointer(ptr, algo, name);
  const schedule::Plan plan = c.plan(workload::Algorithm::fa1, workload::Pass::fwd);
  const auto& sched = plan.kernels.at(0).as<schedule::Fa1ForwardSchedule>();
  const bool launched = dispatch::find_tile(c, Fa1ForwardTiles{}, [&](auto tile, auto elem) {
    using T = decltype(tile);
    run_forward<decltype(elem), T::d, T::bm, T::bn>(c, sched, b, stream);
  });
  if (!launched) throw_fa1_not_compiled(c, algo);
}

}  // namespace iosim::kernels
