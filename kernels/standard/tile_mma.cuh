// Device helpers shared by the standard-attention and FlashAttention-1 kernels:
// fp16/bf16 conversions, the mma.sync m16n8k16 tensor-core instruction, a warp
// partition of an output tile, fragment loads from shared-memory tiles in
// either orientation, and global <-> shared tile copies.
//
// Fragment layout of mma.m16n8k16 (PTX ISA, "Matrix fragments for mma.m16n8k16"),
// with g = lane / 4 and t = lane % 4:
//   A (16x16): a0 = (g, 2t..2t+1), a1 = (g+8, 2t..), a2 = (g, 2t+8..), a3 = (g+8, 2t+8..)
//   B (16x8):  b0 = (k 2t..2t+1, n g), b1 = (k 2t+8..2t+9, n g)
//   C (16x8):  c0,c1 = (g, 2t..2t+1), c2,c3 = (g+8, 2t..2t+1)
// Each 32-bit register holds two consecutive-k elements, the lower k in the low half.
// The mma instruction itself, cp.async and the quad reductions come from
// kernels/common/device_primitives.cuh (with its sm_75 fallbacks); this file
// adds padded (not swizzled) tiles read in either orientation, which the
// transposed operands of FA1's backward need (the standard GEMM reads swizzled
// tiles with ldmatrix instead: standard_gemm.cu).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/common/device_primitives.cuh"
#include "sim/schedule/warp_split.h"

namespace iosim::kernels::detail {

// ---------------------------------------------------------------------------
// Data types.
template <class T>
struct DTypeOps;

template <>
struct DTypeOps<__half> {
  static __device__ __forceinline__ float to_float(std::uint16_t bits) {
    return __half2float(__ushort_as_half(bits));
  }
  static __device__ __forceinline__ std::uint16_t from_float(float x) {
    return __half_as_ushort(__float2half_rn(x));
  }
  static __device__ __forceinline__ void mma(float (&c)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
    dev::mma_16816<__half>(c, a, b[0], b[1]);
  }
};

template <>
struct DTypeOps<__nv_bfloat16> {
  static __device__ __forceinline__ float to_float(std::uint16_t bits) {
    return __bfloat162float(__ushort_as_bfloat16(bits));
  }
  static __device__ __forceinline__ std::uint16_t from_float(float x) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  }
  static __device__ __forceinline__ void mma(float (&c)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
    dev::mma_16816<__nv_bfloat16>(c, a, b[0], b[1]);
  }
};

// Two values rounded to the data type, packed as one 32-bit register (first in the low half).
using dev::pack2;

// ---------------------------------------------------------------------------
// Warp partition of an M x N output tile among WM x WN warps: warp w owns
// rows [row0, row0 + TM) and columns [col0, col0 + TN), as FM x FN fragments
// of 16 x 8.
template <int M, int N, int WM_, int WN_>
struct WarpGrid {
  static constexpr int WM = WM_, WN = WN_, kWarps = WM * WN;
  static constexpr int TM = M / WM, TN = N / WN;
  static constexpr int FM = TM / 16, FN = TN / 8;
  static_assert(M % (16 * WM) == 0 && N % (8 * WN) == 0, "tile does not split into m16n8 fragments");
  static __device__ __forceinline__ int row0(int warp) { return (warp / WN) * TM; }
  static __device__ __forceinline__ int col0(int warp) { return (warp % WN) * TN; }
  // Tile coordinates of accumulator element acc[fm][fn][e].
  static __device__ __forceinline__ int row(int warp, int lane, int fm, int e) {
    return row0(warp) + fm * 16 + (lane >> 2) + (e >= 2 ? 8 : 0);
  }
  static __device__ __forceinline__ int col(int warp, int lane, int fn, int e) {
    return col0(warp) + fn * 8 + 2 * (lane & 3) + (e & 1);
  }
};

// Rows-first partition of M x N among NW warps: whole rows per warp when M
// has enough 16-row groups, otherwise the columns are split too.
template <int M, int N, int NW>
using RowsFirstGrid = WarpGrid<M, N, schedule::rows_first_warps_m(M, NW), NW / schedule::rows_first_warps_m(M, NW)>;

template <class Grid>
struct Accum {
  float v[Grid::FM][Grid::FN][4];
  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int a = 0; a < Grid::FM; ++a)
#pragma unroll
      for (int b = 0; b < Grid::FN; ++b)
#pragma unroll
        for (int e = 0; e < 4; ++e) v[a][b][e] = 0.f;
  }
};

// ---------------------------------------------------------------------------
// Shared-memory operand views. An operand of a product is indexed by
// (outer, k): outer = m for A, n for B. KC ("k contiguous") says how the
// tile is stored: KC: p[outer * ld + k]; !KC: p[k * ld + outer].
template <bool KC>
__device__ __forceinline__ std::uint32_t load_pair(const std::uint16_t* p, int ld, int outer, int k) {
  if constexpr (KC) {
    return *reinterpret_cast<const std::uint32_t*>(p + outer * ld + k);
  } else {
    return static_cast<std::uint32_t>(p[k * ld + outer]) | (static_cast<std::uint32_t>(p[(k + 1) * ld + outer]) << 16);
  }
}

// acc += A[M x K] * B[K x N] over this warp's part of the Grid, with A and B
// in shared memory (A indexed (m, k), B indexed (n, k) as above).
template <class T, class Grid, int K, bool A_KC, bool B_KC>
__device__ __forceinline__ void warp_mma(const std::uint16_t* sA, int lda, const std::uint16_t* sB, int ldb,
                                         Accum<Grid>& acc, int warp, int lane) {
  static_assert(K % 16 == 0, "reduction depth must be a multiple of 16");
  const int g = lane >> 2, t = lane & 3;
  const int m0 = Grid::row0(warp), n0 = Grid::col0(warp);
#pragma unroll 1
  for (int k0 = 0; k0 < K; k0 += 16) {
    std::uint32_t a[Grid::FM][4];
#pragma unroll
    for (int fm = 0; fm < Grid::FM; ++fm) {
      const int r = m0 + fm * 16 + g;
      a[fm][0] = load_pair<A_KC>(sA, lda, r, k0 + 2 * t);
      a[fm][1] = load_pair<A_KC>(sA, lda, r + 8, k0 + 2 * t);
      a[fm][2] = load_pair<A_KC>(sA, lda, r, k0 + 2 * t + 8);
      a[fm][3] = load_pair<A_KC>(sA, lda, r + 8, k0 + 2 * t + 8);
    }
#pragma unroll
    for (int fn = 0; fn < Grid::FN; ++fn) {
      const int n = n0 + fn * 8 + g;
      const std::uint32_t b[2] = {load_pair<B_KC>(sB, ldb, n, k0 + 2 * t), load_pair<B_KC>(sB, ldb, n, k0 + 2 * t + 8)};
#pragma unroll
      for (int fm = 0; fm < Grid::FM; ++fm) DTypeOps<T>::mma(acc.v[fm][fn], a[fm], b);
    }
  }
}

// ---------------------------------------------------------------------------
// Global <-> shared tile copies for row-major tiles whose columns are
// contiguous in both places. Rows at or past rows_valid (and, for the scalar
// path, columns at or past cols_valid) are zero-filled in shared memory so
// ragged edges contribute nothing to products. Loads use ld.global.cg so each
// tile load reaches L2, as the trace assumes.

// 16-byte chunks; needs COLS % 8 == 0, a 16-byte aligned global row start and
// ld % 8 == 0. Columns are all valid (head_dim tiles).
template <int ROWS, int COLS>
__device__ __forceinline__ void load_tile16(std::uint16_t* s, int lds, const std::uint16_t* g, long long gstride,
                                            int rows_valid, int tid, int nthreads) {
  constexpr int kChunks = COLS / 8;
  for (int idx = tid; idx < ROWS * kChunks; idx += nthreads) {
    const int r = idx / kChunks, c = (idx % kChunks) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < rows_valid) v = __ldcg(reinterpret_cast<const uint4*>(g + r * gstride + c));
    *reinterpret_cast<uint4*>(s + r * lds + c) = v;
  }
}

template <int ROWS, int COLS>
__device__ __forceinline__ void store_tile16(std::uint16_t* g, long long gstride, const std::uint16_t* s, int lds,
                                             int rows_valid, int tid, int nthreads) {
  constexpr int kChunks = COLS / 8;
  for (int idx = tid; idx < rows_valid * kChunks; idx += nthreads) {
    const int r = idx / kChunks, c = (idx % kChunks) * 8;
    *reinterpret_cast<uint4*>(g + r * gstride + c) = *reinterpret_cast<const uint4*>(s + r * lds + c);
  }
}

// fp32 tiles (the dQ accumulator), 16-byte chunks of 4 floats.
template <int ROWS, int COLS>
__device__ __forceinline__ void load_tile_f32(float* s, int lds, const float* g, long long gstride, int rows_valid,
                                              int tid, int nthreads) {
  constexpr int kChunks = COLS / 4;
  for (int idx = tid; idx < ROWS * kChunks; idx += nthreads) {
    const int r = idx / kChunks, c = (idx % kChunks) * 4;
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (r < rows_valid) v = __ldcg(reinterpret_cast<const float4*>(g + r * gstride + c));
    *reinterpret_cast<float4*>(s + r * lds + c) = v;
  }
}

template <int ROWS, int COLS>
__device__ __forceinline__ void store_tile_f32(float* g, long long gstride, const float* s, int lds, int rows_valid,
                                               int tid, int nthreads) {
  constexpr int kChunks = COLS / 4;
  for (int idx = tid; idx < rows_valid * kChunks; idx += nthreads) {
    const int r = idx / kChunks, c = (idx % kChunks) * 4;
    *reinterpret_cast<float4*>(g + r * gstride + c) = *reinterpret_cast<const float4*>(s + r * lds + c);
  }
}

// ---------------------------------------------------------------------------
// From kernels/common/device_primitives.cuh.
using dev::cp_async_16;  // 16-byte cp.async.cg (synchronous copy below sm_80)
using dev::cp_async_commit;
using dev::cp_async_wait;
using dev::quad_max;
using dev::quad_sum;

}  // namespace iosim::kernels::detail
