// Batched tensor-core GEMM for standard attention (S = Q K^T, O = P V, and the
// backward products). A CTA computes GemmSchedule::cta's output tiles in turn
// (tiles_per_cta along n; the plan takes 4 where C fits in one stage buffer
// and 512 CTAs remain); 8 warps; A and B chunks of tile_k double-buffered in
// swizzled shared memory (the FA2 kernels' layout,
// kernels/common/device_primitives.cuh) with 16-byte cp.async.cg (scalar
// zero-filling loads at ragged or unaligned edges); fragments by ldmatrix
// (.trans for operands stored k-major); mma.sync m16n8k16 with fp32
// accumulation; C written once in the data type, staged through shared memory
// (stmatrix on sm_90) so that every 32-byte sector leaves the SM in one
// 16-byte-per-thread store (st.global.cs).
//
// Why several tiles per CTA (issue 11): with one tile per CTA and K = 128
// (two chunks), each CTA's load latency and its epilogue were overlapped with
// nothing but the other resident CTA (two per SM: 128 registers). Nsight
// Compute on S = Q K^T, 4096 x 4096 x 128 x 32 (H100): tensor pipe 32% busy,
// DRAM 51%, L2 50%, issue slots 52%, 0.94 eligible warps per scheduler: no
// unit saturated, latency-bound. The next tile's first chunk now loads
// during this tile's last products and epilogue, and the epilogue's stores
// drain while the next tile computes (experiments/results/2026-11-28-h100-gemm-overlap).
//
// Why swizzled, not padded: with rows padded by 16 bytes, half the rows of a
// chunk started 16 bytes off a 32-byte boundary in shared memory, and the
// hardware then moved each of their 32-byte global sectors over the crossbar
// twice (Nsight Compute on the H100: 24 sectors per 16-sector cp.async
// request, 1.50x the trace's bytes; experiments/results/2026-11-25-h100-gemm-reads).
// The swizzle permutes 16-byte chunks within 32-byte pairs only, so every
// sector lands in one aligned 32-byte unit.
#include "kernels/standard/standard_gemm.h"

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/common/attention_api.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/dispatch.h"
#include "kernels/standard/launch_util.h"
#include "kernels/standard/standard_gemm_wgmma.h"
#include "kernels/standard/tile_mma.cuh"
#include "sim/schedule/gemm_slices.h"
#include "sim/schedule/kernel_menu.h"

namespace iosim::kernels::detail {
namespace {

using u16 = std::uint16_t;

// The compiled tile menu (tile_m, tile_n, tile_k) is IOSIM_GEMM_TILES in
// sim/schedule/kernel_menu.h.

struct GemmParams {
  schedule::GemmSchedule s;
  i64 z_heads;
  GemmOperand a, b;
  GemmOutput c;
  bool vec_a, vec_b, vec_c;  // 16-byte operand / output rows possible
};

template <int TM, int TN, int TK, bool A_KC, bool B_KC>
struct GemmTraits {
  static constexpr int kThreads = static_cast<int>(schedule::GemmSchedule::kThreads);
  static constexpr int kWarpsM = schedule::gemm_warps_m(TM);  // sim/schedule/warp_split.h
  using Grid = WarpGrid<TM, TN, kWarpsM, 8 / kWarpsM>;
  // A chunk stored as global memory orders it: [TM][TK] when k is contiguous,
  // else [TK][TM]; B likewise ([TN][TK] or [TK][TN]).
  using TileA = std::conditional_t<A_KC, dev::SwizzledTile<TM, TK>, dev::SwizzledTile<TK, TM>>;
  using TileB = std::conditional_t<B_KC, dev::SwizzledTile<TN, TK>, dev::SwizzledTile<TK, TN>>;
  static constexpr int kAElems = TM * TK, kBElems = TN * TK;
  static constexpr int kStageElems = kAElems + kBElems;
  // The epilogue stages C, swizzled (16-byte chunks XOR-permuted by row, no
  // padding), in the stage buffer its tile's last chunk used when C fits
  // there: the other stage is then already loading the next tile's first
  // chunk. Otherwise C takes both stages, once the loads have drained.
  using TileC = dev::SwizzledTile<TM, TN>;
  static constexpr int kCElems = TM * TN;
  static constexpr bool kCInStage = kCElems <= kStageElems;
  static_assert(kCInStage == schedule::GemmSchedule::c_in_stage(TM, TN, TK), "C's staging differs from the schedule's");
  static constexpr long long kSmemBytes = 2LL * (2 * kStageElems > kCElems ? 2 * kStageElems : kCElems);
  static_assert(kSmemBytes == schedule::GemmSchedule::launch_smem_bytes_for(TM, TN, TK, 2),
                "shared memory differs from the schedule's");
};

// Loads a chunk tile (Tile::kRows x Tile::kCols, columns contiguous in global
// memory) into its swizzled buffer. Each thread owns one 16-byte column chunk
// and rows r0, r0 + kRowStep, ...; kRowStep is a multiple of the swizzle's
// period, so the shared offset advances by a constant. Interior chunks take
// the unguarded path; at ragged edges a chunk outside
// [0, rows_valid) x [0, cols_valid) is zero-filled without a read, and a chunk
// cut by cols_valid (or any chunk of an unaligned operand) is read element by
// element.
template <class Tile>
__device__ __forceinline__ void load_chunk_tile(u16* s, const u16* g, i64 gstride, i64 rows_valid, i64 cols_valid,
                                                bool vec_ok, int tid) {
  constexpr int kThreads = static_cast<int>(schedule::GemmSchedule::kThreads);
  static_assert(kThreads % Tile::kChunks == 0 && (Tile::kRows * Tile::kChunks) % kThreads == 0,
                "a chunk tile must split evenly over the CTA's threads");
  constexpr int kRowStep = kThreads / Tile::kChunks, kIters = Tile::kRows / kRowStep;
  static_assert(kRowStep % 8 == 0, "the row step must keep each thread's swizzle");
  const int chunk = tid % Tile::kChunks, r0 = tid / Tile::kChunks, c = chunk * 8;
  u16* dst = s + Tile::offset(r0, chunk);
  const u16* src = g + r0 * gstride + c;
  if (vec_ok && rows_valid >= Tile::kRows && cols_valid >= Tile::kCols) {
#pragma unroll
    for (int it = 0; it < kIters; ++it) cp_async_16(dst + it * kRowStep * Tile::kCols, src + it * kRowStep * gstride, true);
    return;
  }
#pragma unroll
  for (int it = 0; it < kIters; ++it) {
    const int r = r0 + it * kRowStep;
    u16* d = dst + it * kRowStep * Tile::kCols;
    const u16* from = src + it * kRowStep * gstride;
    if (vec_ok && r < rows_valid && c + 8 <= cols_valid) {
      cp_async_16(d, from, true);
    } else if (r >= rows_valid || c >= cols_valid) {
      cp_async_16(d, g, false);  // zero-filled, nothing read
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) d[e] = c + e < cols_valid ? __ldcg(from + e) : u16{0};
    }
  }
}

// ldmatrix addressing of one operand for one warp. Lanes 8q..8q+7 give the
// rows of matrix q. A's fragment (16 x 16 at m, k) is read as
// (m0-7, k0-7), (m8-15, k0-7), (m0-7, k8-15), (m8-15, k8-15) = a0..a3;
// B's pair of n8 tiles as b0, b1 of tile n, then b0, b1 of tile n + 8.
// Whatever the orientation, the lane's row within a 16-row block and the
// half (chunk bit) it reads are fixed, and the swizzle's period divides 16.
template <class Tile, bool KC, bool IS_A, int GROUPS>
struct OperandFetch;

template <class Tile, bool IS_A, int GROUPS>
struct OperandFetch<Tile, true, IS_A, GROUPS> {  // tile [outer][k]: ldmatrix
  std::uint32_t row_off;  // byte offset of the lane's row in the warp's first group
  int half, swz;
  __device__ __forceinline__ OperandFetch(int lane, int warp_outer0) {
    const int row = IS_A ? lane & 15 : (lane & 7) + ((lane >> 4) << 3);
    half = IS_A ? lane >> 4 : (lane >> 3) & 1;
    swz = Tile::swizzle(row);
    row_off = static_cast<std::uint32_t>(2 * (warp_outer0 + row) * Tile::kCols);
  }
  __device__ __forceinline__ void load(std::uint32_t (&r)[4], std::uint32_t base, int g, int kk) const {
    const std::uint32_t chunk = static_cast<std::uint32_t>((2 * kk + half) ^ swz);
    dev::ldmatrix_x4(r, base + row_off + static_cast<std::uint32_t>(g * 16 * Tile::kCols * 2) + (chunk << 4));
  }
};

template <class Tile, bool IS_A, int GROUPS>
struct OperandFetch<Tile, false, IS_A, GROUPS> {  // tile [k][outer]: ldmatrix.trans
  // The warp's start is a column here, so the chunk XOR is done once per group.
  std::uint32_t off[GROUPS];
  __device__ __forceinline__ OperandFetch(int lane, int warp_outer0) {
    const int row = IS_A ? (lane & 7) + ((lane >> 4) << 3) : lane & 15;
    const int half = IS_A ? (lane >> 3) & 1 : lane >> 4;
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) {
      const int chunk = ((warp_outer0 + g * 16) >> 3) + half;
      off[g] = static_cast<std::uint32_t>(2 * Tile::offset(row, chunk));
    }
  }
  __device__ __forceinline__ void load(std::uint32_t (&r)[4], std::uint32_t base, int g, int kk) const {
    // Rows kk*16.. keep the lane's swizzle (its period divides 16).
    dev::ldmatrix_x4_trans(r, base + off[g] + static_cast<std::uint32_t>(kk * 16 * Tile::kCols * 2));
  }
};

// acc += A_chunk B_chunk for this warp's fragments: per 16-deep slice, the
// warp's A fragments, then per pair of n8 tiles one B load feeding 2 x FM MMAs.
template <class T, class Grid, int TK, int UNROLL, class FetchA, class FetchB>
__device__ __forceinline__ void warp_chunk_mma(Accum<Grid>& acc, std::uint32_t sA, const FetchA& fa,
                                               std::uint32_t sB, const FetchB& fb) {
  static_assert(Grid::FN % 2 == 0 && TK % 16 == 0, "warp tiles are built from 16x16 blocks");
  // UNROLL (schedule::gemm_slice_unroll) slices per unrolled body: with all
  // four of a 64-deep chunk the compiler hoisted every fragment load and
  // spilled under the 2-CTA register cap.
#pragma unroll UNROLL
  for (int kk = 0; kk < TK / 16; ++kk) {
    std::uint32_t a[Grid::FM][4];
#pragma unroll
    for (int fm = 0; fm < Grid::FM; ++fm) fa.load(a[fm], sA, fm, kk);
#pragma unroll
    for (int np = 0; np < Grid::FN / 2; ++np) {
      std::uint32_t b[4];
      fb.load(b, sB, np, kk);
#pragma unroll
      for (int fm = 0; fm < Grid::FM; ++fm) {
        dev::mma_16816<T>(acc.v[fm][2 * np], a[fm], b[0], b[1]);
        dev::mma_16816<T>(acc.v[fm][2 * np + 1], a[fm], b[2], b[3]);
      }
    }
  }
}

__device__ __forceinline__ const u16* operand_base(const GemmOperand& o, i64 b, i64 hz, i64 g) {
  const i64 head = (hz * o.head_mul + g) / o.head_div;
  return static_cast<const u16*>(o.ptr) + b * o.batch_stride + head * o.head_stride;
}

// An opaque copy of a 32-bit value (dev::opaque's twin): what depends on it is
// not hoisted out of the CTA's tile loop. The epilogue's shared and global
// offsets derive from the thread's index; hoisted, they held dozens of
// registers across the whole loop and pushed the accumulators to local memory.
__device__ __forceinline__ int opaque32(int x) {
  asm volatile("mov.b32 %0, %0;\n" : "+r"(x));
  return x;
}

// A 16-byte global store with the evict-first hint (st.global.cs): C is
// written once and not read again by this kernel (issue 11: 3% faster
// std_fwd_qk on the H100, the next kernel's reads unchanged).
__device__ __forceinline__ void store16_streaming(u16* dst, const uint4& v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// stmatrix (sm_90): four 8x8 matrices of 16-bit elements from the lanes'
// accumulator pairs, lanes 8q..8q+7 giving the row addresses of matrix q.
__device__ __forceinline__ void stmatrix_x4(std::uint32_t addr, std::uint32_t r0, std::uint32_t r1, std::uint32_t r2,
                                            std::uint32_t r3) {
#if IOSIM_SM90_PLUS
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
#endif
}

template <class T>
__device__ __forceinline__ std::uint32_t pack_c(float a, float b) {
  return static_cast<std::uint32_t>(DTypeOps<T>::from_float(a)) |
         (static_cast<std::uint32_t>(DTypeOps<T>::from_float(b)) << 16);
}

// C through shared memory (sC: a free stage buffer, or both): fragments in,
// swizzled as the operand tiles are (a warp's 4-byte stores of one fragment
// row half cover eight rows at distinct bank groups), then 16-byte row chunks
// out; a chunk past the last column is written element by element. `rows`
// and `cols` are the tile's valid extent. The caller synchronises before sC
// is written (its last products may still read it) and after it is read.
template <class T, class Tr, class Acc>
__device__ __forceinline__ void store_c_staged(const Acc& acc, u16* sC, u16* gC, i64 ldg, i64 rows, i64 cols,
                                               int warp_in, int lane_in, int tid_in) {
  using Grid = typename Tr::Grid;
  using C = typename Tr::TileC;
  const int warp = opaque32(warp_in), lane = opaque32(lane_in), tid = opaque32(tid_in);
#if IOSIM_SM90_PLUS
  // stmatrix: one instruction per pair of n8 fragments (32 4-byte stores per
  // thread became 8; issue 11: 7% faster std_fwd_qk). Lanes 8q..8q+7 address
  // rows 8 (q % 2) .. of fragment fn + q / 2; the rows' swizzle is the lane's
  // row mod 8, so the eight rows of a matrix land on distinct bank groups.
  {
    const int q = lane >> 3, r = Grid::row0(warp) + (q & 1) * 8 + (lane & 7);
    const std::uint32_t base = dev::smem_addr(sC);
#pragma unroll
    for (int fm = 0; fm < Grid::FM; ++fm)
#pragma unroll
      for (int fn = 0; fn < Grid::FN; fn += 2) {
        const int chunk = (Grid::col0(warp) >> 3) + fn + (q >> 1);
        const std::uint32_t addr = base + 2u * static_cast<std::uint32_t>(C::offset(r + fm * 16, chunk));
        stmatrix_x4(addr, pack_c<T>(acc.v[fm][fn][0], acc.v[fm][fn][1]), pack_c<T>(acc.v[fm][fn][2], acc.v[fm][fn][3]),
                    pack_c<T>(acc.v[fm][fn + 1][0], acc.v[fm][fn + 1][1]),
                    pack_c<T>(acc.v[fm][fn + 1][2], acc.v[fm][fn + 1][3]));
      }
  }
#else
#pragma unroll
  for (int fm = 0; fm < Grid::FM; ++fm)
#pragma unroll
    for (int fn = 0; fn < Grid::FN; ++fn)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = Grid::row(warp, lane, fm, 2 * half), c = Grid::col(warp, lane, fn, 0);
        *reinterpret_cast<std::uint32_t*>(sC + C::offset_rc(r, c)) =
            pack_c<T>(acc.v[fm][fn][2 * half], acc.v[fm][fn][2 * half + 1]);
      }
#endif
  __syncthreads();
  constexpr int kThreads = static_cast<int>(schedule::GemmSchedule::kThreads);
  static_assert((C::kRows * C::kChunks) % kThreads == 0, "the C tile's chunks must split evenly over the CTA");
  constexpr int kIters = C::kRows * C::kChunks / kThreads;
#pragma unroll
  for (int it = 0; it < kIters; ++it) {
    const int idx = tid + it * kThreads, r = idx / C::kChunks, chunk = idx % C::kChunks, c = chunk * 8;
    if (r >= rows || c >= cols) continue;
    const u16* src = sC + C::offset(r, chunk);
    u16* dst = gC + r * ldg + c;
    if (c + 8 <= cols) {
      store16_streaming(dst, *reinterpret_cast<const uint4*>(src));
    } else {
      for (int e = 0; e < cols - c; ++e) dst[e] = src[e];
    }
  }
}

// C straight from the fragments (outputs whose rows are not 16-byte
// aligned); gC is the tile's first element, `rows` and `cols` its valid extent.
template <class T, class Grid, class Acc>
__device__ __forceinline__ void store_c_direct(const Acc& acc, u16* gC, i64 ldg, i64 rows, i64 cols, int warp,
                                               int lane) {
#pragma unroll
  for (int fm = 0; fm < Grid::FM; ++fm)
#pragma unroll
    for (int fn = 0; fn < Grid::FN; ++fn)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = Grid::row(warp, lane, fm, 2 * half), c = Grid::col(warp, lane, fn, 0);
        if (r >= rows || c >= cols) continue;
        const u16 v0 = DTypeOps<T>::from_float(acc.v[fm][fn][2 * half]);
        const u16 v1 = DTypeOps<T>::from_float(acc.v[fm][fn][2 * half + 1]);
        u16* dst = gC + r * ldg + c;
        dst[0] = v0;
        if (c + 1 < cols) dst[1] = v1;
      }
}

// MULTI: the CTA may compute several output tiles (tiles_per_cta > 1); the
// single-tile instantiation is the same code with one trip of the tile loop
// (the loop around the epilogue costs registers: 128x128x32 spills under it).
template <class T, int TM, int TN, int TK, bool A_KC, bool B_KC, bool MULTI>
__global__ void __launch_bounds__(GemmTraits<TM, TN, TK, A_KC, B_KC>::kThreads, 2) gemm_kernel(const GemmParams p) {
  using Tr = GemmTraits<TM, TN, TK, A_KC, B_KC>;
  using Grid = typename Tr::Grid;
  // One barrier per k step (wait, barrier, issue the next step, products)
  // instead of two (issue, wait, barrier, products, barrier): measured on
  // the k-contiguous products with several tiles per CTA (S = Q K^T,
  // dP = dO V^T; issue 11: 3% faster); the other orientations keep two.
  constexpr bool kOneBarrier = MULTI && Tr::kCInStage && A_KC && B_KC;
  constexpr int kSliceUnroll = schedule::gemm_slice_unroll(TM, TN, TK, B_KC);
  extern __shared__ __align__(16) unsigned char smem_raw[];
  u16* smem = reinterpret_cast<u16*>(smem_raw);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  // The CTA's output tiles: cta.tiles of them along n from cta.n_tile, in
  // turn. Counters and tile coordinates are 32-bit (grid dimensions, tiles
  // and chunks fit): with 64-bit ones live across the products the kernel
  // spilled under the 2-CTA register cap.
  const auto cta = p.s.cta(blockIdx.x, blockIdx.y, blockIdx.z);
  const int bz = static_cast<int>(cta.batch / p.z_heads), hz = static_cast<int>(cta.batch % p.z_heads);
  const int m_tile = static_cast<int>(cta.m_tile), n_tile = static_cast<int>(cta.n_tile);
  const int rows_m = static_cast<int>(p.s.rows_in(m_tile));
  const int chunks = static_cast<int>(p.s.k_chunks()), groups = static_cast<int>(p.s.k_groups);
  const int tiles = MULTI ? static_cast<int>(cta.tiles) : 1;
  const int per_tile = groups * chunks, total = tiles * per_tile;

  // The loop nest, flattened: per tile, per group g, per k chunk kc, one
  // step; the counters of the next issue advance without divisions (a 64-bit
  // division per chunk cost three inline divisions in the SASS). The
  // operands' bases change once per group.
  int base_group = -1;
  const u16* gA = nullptr;
  const u16* gB = nullptr;
  int next_t = 0, next_g = 0, next_kc = 0;  // the step whose loads are issued next
  int issued = 0;                           // steps issued so far
  // Issue the loads of step `next` into stage buffer issued % 2.
  auto issue = [&] {
    const int stage = issued & 1, nt = n_tile + next_t, n0 = nt * TN, k0 = next_kc * TK;
    const i64 cols_n = p.s.cols_in(nt), kd = p.s.depth_in(next_kc);
    u16* sA = smem + stage * Tr::kStageElems;
    u16* sB = sA + Tr::kAElems;
    if (next_g != base_group) {
      gA = operand_base(p.a, bz, hz, next_g);
      gB = operand_base(p.b, bz, hz, next_g);
      base_group = next_g;
    }
    const i64 sa = p.a.outer_stride, sb = p.b.outer_stride;
    const int t = opaque32(tid);  // the per-thread copy offsets are not hoisted out of the loops
    if constexpr (A_KC)
      load_chunk_tile<typename Tr::TileA>(sA, gA + m_tile * TM * sa + k0, sa, rows_m, kd, p.vec_a, t);
    else
      load_chunk_tile<typename Tr::TileA>(sA, gA + k0 * sa + m_tile * TM, sa, kd, rows_m, p.vec_a, t);
    if constexpr (B_KC)
      load_chunk_tile<typename Tr::TileB>(sB, gB + n0 * sb + k0, sb, cols_n, kd, p.vec_b, t);
    else
      load_chunk_tile<typename Tr::TileB>(sB, gB + k0 * sb + n0, sb, kd, cols_n, p.vec_b, t);
    cp_async_commit();
    if (++next_kc == chunks) {
      next_kc = 0;
      if (++next_g == groups) {
        next_g = 0;
        ++next_t;
      }
    }
    ++issued;
  };

  Accum<Grid> acc;
  const std::uint32_t smem_base = dev::smem_addr(smem);
  const OperandFetch<typename Tr::TileA, A_KC, true, Grid::FM> fetch_a(lane, Grid::row0(warp));
  const OperandFetch<typename Tr::TileB, B_KC, false, Grid::FN / 2> fetch_b(lane, Grid::col0(warp));
  issue();
  int it = 0;  // the step computed now (its chunk is in stage it % 2)
  for (int tile = 0; tile < tiles; ++tile) {
    acc.zero();
    for (int step = 0; step < per_tile; ++step, ++it) {
      // The next step's loads overlap this step's products (and, at the
      // tile's end, its epilogue), unless C takes both stages.
      const bool ahead = issued < total && (step + 1 < per_tile || Tr::kCInStage);
      if constexpr (kOneBarrier) {
        cp_async_wait<0>();  // step it landed (the one group in flight)
        // ... for every thread; and every thread is done with the other
        // stage (step it - 1's products, or the previous tile's C).
        __syncthreads();
        if (ahead) issue();
      } else {
        if (ahead) {
          issue();
          cp_async_wait<1>();
        } else {
          cp_async_wait<0>();
        }
        __syncthreads();
      }
      const std::uint32_t sA = smem_base + static_cast<std::uint32_t>((it & 1) * Tr::kStageElems * 2);
      warp_chunk_mma<T, Grid, TK, kSliceUnroll>(acc, sA, fetch_a, sA + Tr::kAElems * 2, fetch_b);
      if constexpr (!kOneBarrier) __syncthreads();  // the next issue (or C) overwrites this stage
    }
    // C tile written once in the data type: staged in the stage the tile's
    // last chunk used (the other holds the next tile's first chunk), or in
    // both when it does not fit in one.
    const int nt = n_tile + tile;
    u16* gC = static_cast<u16*>(p.c.ptr) + bz * p.c.batch_stride + hz * p.c.head_stride +
              m_tile * TM * p.c.row_stride + nt * TN;
    const i64 cols = p.s.cols_in(nt);
    if (p.vec_c) {
      u16* sC = Tr::kCInStage ? smem + ((it - 1) & 1) * Tr::kStageElems : smem;
      if constexpr (kOneBarrier) __syncthreads();  // every warp's products are done with sC
      store_c_staged<T, Tr>(acc, sC, gC, p.c.row_stride, rows_m, cols, warp, lane, tid);
      // sC read out before the next issue overwrites it (with one barrier per
      // step, the next step's barrier comes first).
      if (!kOneBarrier && tile + 1 < tiles) __syncthreads();
    } else {
      store_c_direct<T, Grid>(acc, gC, p.c.row_stride, rows_m, cols, warp, lane);
    }
    if (issued == it && issued < total) issue();  // C took both stages: the next tile's first chunk now
  }
}

template <class T, int TM, int TN, int TK, bool A_KC, bool B_KC, bool MULTI>
void run_gemm_as(const GemmParams& p, cudaStream_t stream) {
  using Tr = GemmTraits<TM, TN, TK, A_KC, B_KC>;
  const long long smem = Tr::kSmemBytes;  // the plan's CTA shape (static_assert in GemmTraits)
  auto kernel = gemm_kernel<T, TM, TN, TK, A_KC, B_KC, MULTI>;
  constexpr auto dtype = std::is_same_v<T, __half> ? workload::DType::fp16 : workload::DType::bf16;
  prepare_launch(kernel, smem, p.s.grid(), dtype,
                 "standard GEMM " + std::to_string(TM) + "x" + std::to_string(TN) + "x" + std::to_string(TK));
  kernel<<<to_dim3(p.s.grid()), Tr::kThreads, smem, stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

template <class T, int TM, int TN, int TK, bool A_KC, bool B_KC>
void run_gemm(const GemmParams& p, cudaStream_t stream) {
  if (p.s.tiles_per_cta > 1)
    run_gemm_as<T, TM, TN, TK, A_KC, B_KC, true>(p, stream);
  else
    run_gemm_as<T, TM, TN, TK, A_KC, B_KC, false>(p, stream);
}

// The compiled tiles (IOSIM_GEMM_TILES) and operand orientations, as dispatch
// lists (kernels/common/dispatch.h).
template <int TM, int TN, int TK>
struct GemmTile {
  static constexpr int m = TM, n = TN, k = TK;
  static constexpr std::array<i64, 3> key{TM, TN, TK};
};
#define IOSIM_GEMM_TILE_TYPE(M, N, K) ::with<GemmTile<M, N, K>>
using GemmTiles = dispatch::List<> IOSIM_GEMM_TILES(IOSIM_GEMM_TILE_TYPE);
#undef IOSIM_GEMM_TILE_TYPE

// Whether A's and B's rows run along the reduction (k contiguous).
template <bool A_KC, bool B_KC>
struct Orientation {
  static constexpr bool a_kc = A_KC, b_kc = B_KC;
  static constexpr std::array<i64, 2> key{A_KC, B_KC};
};
using Orientations = dispatch::List<Orientation<true, true>,    // Q K^T, dO V^T
                                    Orientation<true, false>,   // P V, dS K
                                    Orientation<false, false>>;  // P^T dO, dS^T Q

// Launches tile T's GEMM for the operands' orientation and the element type.
template <class T>
void run_tile(const GemmParams& p, workload::DType dtype, cudaStream_t stream) {
  const std::array<i64, 2> orientation{p.a.k_contiguous, p.b.k_contiguous};
  const bool compiled = dispatch::find(orientation, Orientations{}, [&](auto o) {
    using O = decltype(o);
    dispatch::element_type(dtype, [&](auto elem) {
      run_gemm<decltype(elem), T::m, T::n, T::k, O::a_kc, O::b_kc>(p, stream);
    });
  });
  if (!compiled) throw InputError("standard GEMM: operand orientation (A by columns, B by rows) is not compiled");
}

}  // namespace

bool gemm_tiles_compiled(i64 tile_m, i64 tile_n, i64 tile_k) {
  return dispatch::contains(std::array<i64, 3>{tile_m, tile_n, tile_k}, GemmTiles{});
}

std::vector<std::string> gemm_tile_menu() {
  std::vector<std::string> out;
  dispatch::for_each(GemmTiles{}, [&](auto tile) {
    using T = decltype(tile);
    out.push_back(std::to_string(T::m) + "x" + std::to_string(T::n) + "x" + std::to_string(T::k));
  });
  return out;
}

void launch_gemm(const GemmLaunch& g, cudaStream_t stream) {
  const auto& s = g.s;
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batches <= 0) return;  // nothing to compute
  if (g.impl == GemmImpl::wgmma) {  // the plan chose it (logic_error if TMA cannot read what the plan said it can)
    launch_gemm_wgmma(g, stream);
    return;
  }
  GemmParams p{s, g.z_heads, g.a, g.b, g.c, false, false, false};
  auto vec_rows = [](const GemmOperand& o) {
    return aligned16(o.ptr) && o.batch_stride % 8 == 0 && o.head_stride % 8 == 0 && o.outer_stride % 8 == 0;
  };
  p.vec_a = vec_rows(g.a);
  p.vec_b = vec_rows(g.b);
  p.vec_c = aligned16(g.c.ptr) && g.c.batch_stride % 8 == 0 && g.c.head_stride % 8 == 0 && g.c.row_stride % 8 == 0;
  const bool launched = dispatch::find(std::array<i64, 3>{s.tile_m, s.tile_n, s.tile_k}, GemmTiles{},
                                       [&](auto tile) { run_tile<decltype(tile)>(p, g.dtype, stream); });
  if (!launched)
    throw NotCompiled("standard GEMM tile " + std::to_string(s.tile_m) + "x" + std::to_string(s.tile_n) + "x" +
                      std::to_string(s.tile_k) + " is not compiled; compiled tiles (m x n x k): " +
                      join(gemm_tile_menu()));
}

}  // namespace iosim::kernels::detail
