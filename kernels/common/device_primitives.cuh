// Device building blocks of the tensor-core kernels: 16-byte cp.async loads
// into swizzled shared-memory tiles, ldmatrix fragment loads, and the
// mma.sync m16n8k16 (fp16/bf16 in, fp32 accumulate) instruction.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), with
// g = lane / 4 and c = lane % 4:
//   A (16x16, row-major): a[0] = (g, 2c..2c+1)   a[1] = (g+8, 2c..)
//                         a[2] = (g, 8+2c..)     a[3] = (g+8, 8+2c..)
//   B (16x8, k x n):      b[0] = (k 2c..2c+1, n g)  b[1] = (k 8+2c.., n g)
//   C (16x8, fp32):       c[0..1] = (g, 2c..2c+1)   c[2..3] = (g+8, 2c..)
// The C layout of two adjacent n8 tiles equals the A layout of one k16 step,
// which is how P goes from the S accumulator straight into P V.
//
// sm_75 fallbacks (T4): no cp.async (synchronous 16-byte copies instead), no
// m16n8k16 (two m16n8k8 for fp16); bf16 tensor cores need sm_80, and the
// launchers refuse bf16 there (see kernels/common/device_info.h).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "sim/schedule/kernel_schedules.h"

namespace iosim::kernels::dev {

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
#define IOSIM_SM80_PLUS 1
#else
#define IOSIM_SM80_PLUS 0
#endif
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define IOSIM_SM90_PLUS 1
#else
#define IOSIM_SM90_PLUS 0
#endif

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---------------------------------------------------------------------------
// Swizzled tile of ROWS x COLS 16-bit elements. A row is COLS/8 chunks of 16
// bytes; chunk c of row r is stored at chunk c ^ swizzle(r). Eight rows read
// at the same logical chunk (one ldmatrix phase) and one row's eight chunks
// (a cp.async or epilogue store burst) each land on distinct bank groups, so
// both are conflict-free without padding.
template <int ROWS, int COLS>
struct SwizzledTile {
  static_assert(COLS % 16 == 0 && ROWS % 8 == 0, "tiles are built from 8x8 blocks of 16-byte rows");
  static constexpr int kRows = ROWS;
  static constexpr int kCols = COLS;
  static constexpr int kChunks = COLS / 8;  // 16-byte chunks per row
  static constexpr int kBytes = ROWS * COLS * 2;

  __device__ __forceinline__ static int swizzle(int r) {
    if constexpr (kChunks >= 8) return r & 7;         // 128-byte-or-longer rows
    else if constexpr (kChunks == 4) return (r >> 1) & 3;  // two rows per 128 bytes
    else return (r >> 2) & 1;                          // four rows per 128 bytes
  }
  // Element offset of (row r, 16-byte chunk `chunk`, element e within the chunk).
  __device__ __forceinline__ static int offset(int r, int chunk, int e = 0) {
    return r * COLS + ((chunk ^ swizzle(r)) << 3) + e;
  }
  __device__ __forceinline__ static int offset_rc(int r, int col) { return offset(r, col >> 3, col & 7); }
};

// ---------------------------------------------------------------------------
// 16-byte global -> shared copy that bypasses L1 (.cg: every tile load reaches
// L2, as the simulator's trace assumes); when !valid the destination is
// zero-filled and nothing is read (src-size 0).
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool valid) {
#if IOSIM_SM80_PLUS
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem),
               "r"(src_bytes));
#else
  uint4 v = make_uint4(0, 0, 0, 0);
  if (valid) v = __ldcg(reinterpret_cast<const uint4*>(gmem));
  *reinterpret_cast<uint4*>(smem) = v;
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if IOSIM_SM80_PLUS
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
// Waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if IOSIM_SM80_PLUS
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

// An opaque copy of a value: the compiler cannot hoist what depends on it out
// of the surrounding loop. Used for global addresses, which it would otherwise
// precompute for every copy of a tile outside the main loop (16 or more 64-bit
// registers), pushing the accumulators into local memory.
__device__ __forceinline__ std::int64_t opaque(std::int64_t x) {
  asm volatile("mov.b64 %0, %0;\n" : "+l"(x));
  return x;
}

// Copies rows [row0, row0 + ROWS) of a global matrix (row stride `ld`
// elements, 16-byte aligned rows) into a swizzled tile; rows at or past
// `row_limit` are zero-filled. All THREADS threads of the CTA take part.
template <class Tile, int THREADS, class Elem>
__device__ __forceinline__ void load_tile_async(Elem* s_tile, const Elem* g_mat, std::int64_t ld, int row0,
                                                int row_limit) {
  constexpr int kTotal = Tile::kRows * Tile::kChunks;
  constexpr int kIters = (kTotal + THREADS - 1) / THREADS;
  static_assert(kTotal % THREADS == 0 || kTotal < THREADS, "tile chunks must split evenly over threads");
  const std::int64_t ld_here = opaque(ld);
#pragma unroll(kIters <= 8 ? kIters : 4)
  for (int it = 0; it < kIters; ++it) {
    const int idx = it * THREADS + static_cast<int>(threadIdx.x);
    if (kTotal % THREADS != 0 && idx >= kTotal) break;
    const int r = idx / Tile::kChunks;
    const int chunk = idx % Tile::kChunks;
    const bool valid = row0 + r < row_limit;
    // An out-of-range row still needs a legal address: use the tile's first row.
    const Elem* src = g_mat + static_cast<std::int64_t>(valid ? row0 + r : 0) * ld_here + chunk * 8;
    cp_async_16(s_tile + Tile::offset(r, chunk), src, valid);
  }
}

// Stores a swizzled tile to rows [row0, min(row0 + ROWS, row_limit)) of a
// global matrix with 16-byte stores.
template <class Tile, int THREADS, class Elem>
__device__ __forceinline__ void store_tile(Elem* g_mat, std::int64_t ld, const Elem* s_tile, int row0,
                                           int row_limit) {
  constexpr int kTotal = Tile::kRows * Tile::kChunks;
#pragma unroll
  for (int it = 0; it < (kTotal + THREADS - 1) / THREADS; ++it) {
    const int idx = it * THREADS + static_cast<int>(threadIdx.x);
    if (kTotal % THREADS != 0 && idx >= kTotal) break;
    const int r = idx / Tile::kChunks;
    const int chunk = idx % Tile::kChunks;
    if (row0 + r < row_limit) {
      *reinterpret_cast<uint4*>(g_mat + static_cast<std::int64_t>(row0 + r) * ld + chunk * 8) =
          *reinterpret_cast<const uint4*>(s_tile + Tile::offset(r, chunk));
    }
  }
}

// ---------------------------------------------------------------------------
// ldmatrix: four 8x8 b16 matrices; lanes 8q..8q+7 give the row addresses of
// matrix q, and register q receives matrix q's fragment.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// Lane-dependent byte offsets of ldmatrix row addresses in a swizzled tile
// whose rows are COLS elements wide. Every 16x16 block a warp loads starts at
// a row that is a multiple of 16, so the swizzle of a lane's row depends on
// the lane alone, and the chunk a lane reads is (even chunk base) | (0 or 1).
// XOR-ing then touches only the low chunk bits: the address of any block is
// a per-lane table entry (indexed by a compile-time value) plus a
// compile-time offset. Computed once per kernel, this replaces the three or
// four integer instructions per ldmatrix of recomputing the swizzle.
//   p16: rows lane & 15, chunk offset lane >> 4            (load_a, load_b_trans)
//   p8:  rows (lane & 7) + 8 (lane >> 4), chunk (lane >> 3) & 1 (load_b, load_a_trans)
template <int COLS>
struct FragOffsets {
  using Tile = SwizzledTile<8, COLS>;
  static constexpr int kMask = (Tile::kChunks >= 8 ? 8 : Tile::kChunks) - 1;  // chunk bits the swizzle touches
  static constexpr int kEntries = (kMask + 1) / 2;                            // even chunk values in that range
  std::uint32_t p16[kEntries];
  std::uint32_t p8[kEntries];

  __device__ __forceinline__ explicit FragOffsets(int lane) {
    const int r16 = lane & 15, c16 = lane >> 4;
    const int r8 = (lane & 7) + ((lane >> 4) << 3), c8 = (lane >> 3) & 1;
#pragma unroll
    for (int v = 0; v < kEntries; ++v) {
      p16[v] = static_cast<std::uint32_t>(2 * (r16 * COLS + (((2 * v) | c16) ^ Tile::swizzle(r16)) * 8));
      p8[v] = static_cast<std::uint32_t>(2 * (r8 * COLS + (((2 * v) | c8) ^ Tile::swizzle(r8)) * 8));
    }
  }
  // Byte offset of the 16x16 block at (row0, col0); both multiples of 16.
  __device__ __forceinline__ std::uint32_t at16(int row0, int col0) const {
    const int cb = col0 >> 3;
    return p16[(cb & kMask) >> 1] + static_cast<std::uint32_t>(2 * (row0 * COLS + (cb & ~kMask) * 8));
  }
  __device__ __forceinline__ std::uint32_t at8(int row0, int col0) const {
    const int cb = col0 >> 3;
    return p8[(cb & kMask) >> 1] + static_cast<std::uint32_t>(2 * (row0 * COLS + (cb & ~kMask) * 8));
  }
};

// Fragment loads from a swizzled tile at `base` (shared address); each covers
// a 16x16 block.
// A operand, tile holds A row-major [m][k]: the block at (m0, k0).
template <int COLS>
__device__ __forceinline__ void load_a(std::uint32_t (&a)[4], std::uint32_t base, const FragOffsets<COLS>& f,
                                       int m0, int k0) {
  ldmatrix_x4(a, base + f.at16(m0, k0));
}
// A operand, tile holds A transposed [k][m] (e.g. P^T from P): block (m0, k0).
template <int COLS>
__device__ __forceinline__ void load_a_trans(std::uint32_t (&a)[4], std::uint32_t base, const FragOffsets<COLS>& f,
                                             int m0, int k0) {
  ldmatrix_x4_trans(a, base + f.at8(k0, m0));
}
// B operand for two n8 tiles (n0, n0+8), tile holds B^T [n][k] (K for Q K^T):
// b[0], b[1] -> tile n0; b[2], b[3] -> tile n0 + 8.
template <int COLS>
__device__ __forceinline__ void load_b(std::uint32_t (&b)[4], std::uint32_t base, const FragOffsets<COLS>& f,
                                       int n0, int k0) {
  ldmatrix_x4(b, base + f.at8(n0, k0));
}
// B operand for two n8 tiles, tile holds B [k][n] (V for P V).
template <int COLS>
__device__ __forceinline__ void load_b_trans(std::uint32_t (&b)[4], std::uint32_t base, const FragOffsets<COLS>& f,
                                             int n0, int k0) {
  ldmatrix_x4_trans(b, base + f.at16(k0, n0));
}

// ---------------------------------------------------------------------------
// Element types: packing two fp32 values into one 32-bit register of the data
// type, and the matching mma.
template <class Elem>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi);
template <>
__device__ __forceinline__ std::uint32_t pack2<__half>(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<std::uint32_t*>(&h);
}
template <>
__device__ __forceinline__ std::uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<std::uint32_t*>(&h);
}

// D = A B + D, m16n8k16, fp32 accumulators.
template <class Elem>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                          std::uint32_t b1);
template <>
__device__ __forceinline__ void mma_16816<__half>(float (&d)[4], const std::uint32_t (&a)[4],
                                                  std::uint32_t b0, std::uint32_t b1) {
#if IOSIM_SM80_PLUS
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  // sm_75: k16 = two k8 steps (a[0..1] with b0, then a[2..3] with b1).
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(b0));
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[2]), "r"(a[3]), "r"(b1));
#endif
}
template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&d)[4], const std::uint32_t (&a)[4],
                                                         std::uint32_t b0, std::uint32_t b1) {
#if IOSIM_SM80_PLUS
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  __trap();  // unreachable: launchers refuse bf16 below sm_80
#endif
}

// Whether the bf16 path is compiled for the architecture being built; kernels
// use it to compile an empty body (and save compile time) where it is not.
template <class Elem>
__device__ constexpr bool arch_supports() {
#if IOSIM_SM80_PLUS || !defined(__CUDA_ARCH__)
  return true;
#else
  return !std::is_same_v<Elem, __nv_bfloat16>;
#endif
}

// fp32 reduction into global memory performed at L2 (FlashAttention-2's dQ
// accumulation); sm_90 has a two-wide vector form, older GPUs use two adds.
__device__ __forceinline__ void red_add_f32x2(float* addr, float a, float b) {
#if IOSIM_SM90_PLUS
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(addr), "f"(a), "f"(b) : "memory");
#else
  atomicAdd(addr, a);
  atomicAdd(addr + 1, b);
#endif
}

// 2^x with the MUFU instruction alone (ex2.approx.ftz: relative error ~2^-22,
// denormal results flushed to 0, 2^-inf = 0). exp2f without --use_fast_math
// adds a range check and two multiplies around it: 4 extra instructions per
// score, a quarter of the forward main loop.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Max / sum over the four lanes of a quad (the lanes sharing a C-fragment row).
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// ---------------------------------------------------------------------------
// One warp's share of a tensor-core GEMM over shared-memory tiles:
//   acc[MF][NT] (MF 16-row fragments x NT n8 tiles) += A[m0.., 0..K) B[0..K, n0..)
// A comes from a swizzled tile A_COLS wide ([m][k], or [k][m] when A_TRANS),
// B from one B_COLS wide ([n][k], or [k][n] when B_TRANS). All of A's fragments for a k-step are loaded first
// so each B fragment feeds MF MMAs.
template <class Elem, int MF, int NT, int K, bool A_TRANS, int A_COLS, bool B_TRANS, int B_COLS>
__device__ __forceinline__ void warp_gemm(float (&acc)[MF][NT][4], std::uint32_t sA, const FragOffsets<A_COLS>& fa,
                                          int a_m0, std::uint32_t sB, const FragOffsets<B_COLS>& fb, int b_n0) {
  static_assert(NT % 2 == 0 && K % 16 == 0, "warp tiles are built from 16x16 blocks");
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    std::uint32_t a[MF][4];
#pragma unroll
    for (int mf = 0; mf < MF; ++mf) {
      if constexpr (A_TRANS) load_a_trans(a[mf], sA, fa, a_m0 + mf * 16, kk * 16);
      else load_a(a[mf], sA, fa, a_m0 + mf * 16, kk * 16);
    }
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      std::uint32_t b[4];
      if constexpr (B_TRANS) load_b_trans(b, sB, fb, b_n0 + np * 16, kk * 16);
      else load_b(b, sB, fb, b_n0 + np * 16, kk * 16);
#pragma unroll
      for (int mf = 0; mf < MF; ++mf) {
        mma_16816<Elem>(acc[mf][2 * np], a[mf], b[0], b[1]);
        mma_16816<Elem>(acc[mf][2 * np + 1], a[mf], b[2], b[3]);
      }
    }
  }
}

// Writes a warp's fp32 accumulator tile (rows m0.., columns n0..) into a
// swizzled tile in the data type, optionally scaled.
template <class Elem, class Tile, int MF, int NT>
__device__ __forceinline__ void store_acc(Elem* s_tile, const float (&acc)[MF][NT][4], int m0, int n0, int lane,
                                          float scale = 1.0f) {
#pragma unroll
  for (int mf = 0; mf < MF; ++mf) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = m0 + mf * 16 + (lane >> 2) + hh * 8;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        *reinterpret_cast<std::uint32_t*>(s_tile + Tile::offset_rc(r, n0 + nt * 8 + (lane & 3) * 2)) =
            pack2<Elem>(acc[mf][nt][hh * 2] * scale, acc[mf][nt][hh * 2 + 1] * scale);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Step recording for tests (schedule::StepLog): thread 0 of each CTA counts
// its steps in counts[cta] (global memory) and writes its k-th step to the
// entries. Steps past max_steps are counted but not stored, so the test sees
// any excess. No register is kept for it in the main loop: a register counter
// pushed the FA2 kernels (255 registers) into more spills and cost them 3-13%
// (experiments/results/2026-11-25-h100-plan-ab.md).
__device__ __forceinline__ i64 cta_linear() {
  return blockIdx.x + static_cast<i64>(gridDim.x) * (blockIdx.y + static_cast<i64>(gridDim.y) * blockIdx.z);
}
__device__ __forceinline__ void log_begin(const schedule::StepLog& log) {
  if (log.on() && threadIdx.x == 0) log.counts[cta_linear()] = 0;
}
__device__ __forceinline__ void log_step(const schedule::StepLog& log, int i, int j, int g, bool masked) {
  if (!log.on() || threadIdx.x != 0) return;
  const i64 cta = cta_linear();
  const int k = log.counts[cta]++;
  if (k < log.max_steps) {
    std::int32_t* e = log.entries + 4 * (cta * log.max_steps + k);
    e[0] = i;
    e[1] = j;
    e[2] = g;
    e[3] = masked ? 1 : 0;
  }
}

}  // namespace iosim::kernels::dev
