// FlashAttention-2 backward's row kernels (schedule::RowBlockSchedule), the
// first and last of its three (fa2_backward.cuh has the main one):
//   preprocess  D = rowsum(dO o O), dQaccum = 0
//   convert     dQ = scale * dQaccum in the data type
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_info.h"
#include "kernels/common/device_primitives.cuh"
#include "kernels/fa2/fa2_params.h"

namespace iosim::kernels::fa2 {

// Row-wise kernels: a CTA of 128 threads per (row block, head, batch); a row
// is d/8 16-byte chunks handled by d/8 adjacent lanes (d/8 a power of two <= 32).
constexpr int kRowThreads = static_cast<int>(schedule::RowBlockSchedule::kThreads);

template <class Elem>
__device__ __forceinline__ float dot8(const uint4& a, const uint4& b) {
  const Elem* x = reinterpret_cast<const Elem*>(&a);
  const Elem* y = reinterpret_cast<const Elem*>(&b);
  float s = 0.0f;
#pragma unroll
  for (int e = 0; e < 8; ++e) s = fmaf(static_cast<float>(x[e]), static_cast<float>(y[e]), s);
  return s;
}

// D = rowsum(dO o O) in fp32; dQaccum rows zeroed.
template <class Elem>
__global__ void __launch_bounds__(kRowThreads) fa2_bwd_preprocess_kernel(const RowParams p) {
  const schedule::RowBlockSchedule& rs = p.rows;
  const i64 rb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int r0 = static_cast<int>(rb * rs.block_rows), rows = static_cast<int>(rs.rows_in(rb));
  const int d = static_cast<int>(p.head_dim), cpr = d / 8;
  const i64 off = b * p.q_str.batch + h * p.q_str.head;
  const Elem* gO = static_cast<const Elem*>(p.o) + off;
  const Elem* gdO = static_cast<const Elem*>(p.d_o) + off;
  const i64 stat_off = (b * rs.shape.heads + h) * rs.rows;
  for (int base = 0; base < rows * cpr; base += kRowThreads) {  // uniform trip count: shuffles need whole warps
    const int idx = base + static_cast<int>(threadIdx.x);
    const int r = idx / cpr, c = idx % cpr;
    const bool valid = idx < rows * cpr;
    float s = 0.0f;
    if (valid) {
      const i64 e = static_cast<i64>(r0 + r) * p.q_str.row + c * 8;
      s = dot8<Elem>(__ldg(reinterpret_cast<const uint4*>(gO + e)), __ldg(reinterpret_cast<const uint4*>(gdO + e)));
    }
    for (int o = cpr / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (valid && c == 0) p.dvec[stat_off + r0 + r] = s;
  }
  float4* g_acc = reinterpret_cast<float4*>(p.dq_accum + (stat_off + r0) * d);
  for (int k = static_cast<int>(threadIdx.x); k < rows * d / 4; k += kRowThreads) g_acc[k] = make_float4(0, 0, 0, 0);
}

// dQ = scale * dQaccum, converted to the data type. The CTA's dQaccum rows
// are contiguous, so consecutive threads take consecutive float4 (a row is
// d/4 of them, a power of two: the row and column come by shift and mask):
// each warp load covers its sectors once, and each thread stores its four
// values as 8 bytes beside its neighbours'. (Two float4 halves of a 32-byte
// piece per thread, as before, left every other 16 bytes of a sector to a
// second load, which fetched 2-9% of the sectors again over the crossbar.)
template <class Elem>
__global__ void __launch_bounds__(kRowThreads) fa2_bwd_convert_dq_kernel(const RowParams p) {
  const schedule::RowBlockSchedule& rs = p.rows;
  const i64 rb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int r0 = static_cast<int>(rb * rs.block_rows), rows = static_cast<int>(rs.rows_in(rb));
  const int d = static_cast<int>(p.head_dim), per_row = d / 4, row_shift = __ffs(per_row) - 1;
  const float4* g_acc = reinterpret_cast<const float4*>(p.dq_accum + ((b * rs.shape.heads + h) * rs.rows + r0) * d);
  Elem* gdQ = static_cast<Elem*>(p.dq) + b * p.q_str.batch + h * p.q_str.head + static_cast<i64>(r0) * p.q_str.row;
  for (int idx = static_cast<int>(threadIdx.x); idx < rows * per_row; idx += kRowThreads) {
    const int r = idx >> row_shift, c = idx & (per_row - 1);
    const float4 v = __ldg(g_acc + idx);
    uint2 out;
    out.x = dev::pack2<Elem>(v.x * p.scale, v.y * p.scale);
    out.y = dev::pack2<Elem>(v.z * p.scale, v.w * p.scale);
    *reinterpret_cast<uint2*>(gdQ + static_cast<i64>(r) * p.q_str.row + c * 4) = out;
  }
}

// ---------------------------------------------------------------------------
// The preprocess (D = rowsum(dO o O), dQaccum = 0) or the dQ conversion.
template <class Elem>
void launch_row_kernel(schedule::KernelKind kind, const RowParams& rows, cudaStream_t stream) {
  const schedule::Dim3 grid = rows.rows.grid();
  const bool preprocess = kind == schedule::KernelKind::fa2_bwd_preprocess;
  require_grid_fits(grid.x, grid.y, grid.z, preprocess ? "fa2_bwd_preprocess" : "fa2_bwd_convert_dq");
  const dim3 g(static_cast<unsigned>(grid.x), static_cast<unsigned>(grid.y), static_cast<unsigned>(grid.z));
  if (preprocess)
    fa2_bwd_preprocess_kernel<Elem><<<g, kRowThreads, 0, stream>>>(rows);
  else
    fa2_bwd_convert_dq_kernel<Elem><<<g, kRowThreads, 0, stream>>>(rows);
  IOSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace iosim::kernels::fa2
