// Split-KV combine kernel: a CTA per (row block, head, batch) from
// schedule::SplitKvCombineSchedule, a thread per 4 columns of a row. It walks
// the splits in order, one step per split as the trace does, merging each
// split's LSE_s and partial O_s online:
//   M = max(M, LSE_s), sum = sum e^(M_old - M) + e^(LSE_s - M), acc likewise,
// then writes O = acc / sum in the data type and L = M + log(sum) (-inf and
// O = 0 for a row that sees no key in any split).
#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_info.h"
#include "kernels/common/device_primitives.cuh"
#include "kernels/splitkv/splitkv_launch.h"
#include "kernels/standard/launch_util.h"

namespace iosim::kernels::splitkv {

template <class Elem>
__global__ void __launch_bounds__(schedule::SplitKvCombineSchedule::kThreads)
    splitkv_combine_kernel(const CombineParams p) {
  const auto& s = p.sched;
  const int chunks = static_cast<int>(s.head_dim / 4);  // threads per row
  const int r_local = static_cast<int>(threadIdx.x) / chunks, c = (static_cast<int>(threadIdx.x) % chunks) * 4;
  const i64 row = s.first_row(blockIdx.x) + r_local;
  if (r_local >= s.rows_per_cta() || row >= s.seq_q) return;
  const i64 head_rows = (static_cast<i64>(blockIdx.z) * s.shape.heads + blockIdx.y) * s.splits * s.seq_q;
  float m = -INFINITY, sum = 0.0f;
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (i64 sp = 0; sp < s.splits; ++sp) {
    const i64 prow = head_rows + sp * s.seq_q + row;
    const float lse = p.lse_accum[prow];
    const float4 o = *reinterpret_cast<const float4*>(p.o_accum + prow * s.head_dim + c);
    const float m_new = fmaxf(m, lse);
    if (m_new == -INFINITY) continue;  // no split so far sees a key
    const float alpha = expf(m - m_new), w = expf(lse - m_new);
    sum = sum * alpha + w;
    acc.x = acc.x * alpha + w * o.x;
    acc.y = acc.y * alpha + w * o.y;
    acc.z = acc.z * alpha + w * o.z;
    acc.w = acc.w * alpha + w * o.w;
    m = m_new;
  }
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  Elem* out = static_cast<Elem*>(p.o) + static_cast<i64>(blockIdx.z) * p.o_str.batch +
              static_cast<i64>(blockIdx.y) * p.o_str.head + row * p.o_str.row + c;
  *reinterpret_cast<uint2*>(out) = make_uint2(dev::pack2<Elem>(acc.x * inv, acc.y * inv),
                                              dev::pack2<Elem>(acc.z * inv, acc.w * inv));
  if (c == 0)
    p.lse[(static_cast<i64>(blockIdx.z) * s.shape.heads + blockIdx.y) * s.seq_q + row] =
        sum > 0.0f ? m + logf(sum) : -INFINITY;
}

template <class Elem>
void launch_combine(const CombineParams& p, cudaStream_t stream) {
  const std::string name = "splitkv_combine<d=" + std::to_string(p.sched.head_dim) + ">";
  const i64 chunks = p.sched.head_dim / 4;
  // A thread per 4 columns and whole rows per CTA: the schedule's rows.
  if (p.sched.head_dim % 4 != 0 || chunks > schedule::SplitKvCombineSchedule::kThreads ||
      p.sched.rows_per_cta() * chunks > schedule::SplitKvCombineSchedule::kThreads)
    throw std::logic_error(name + ": the head dim does not split into the CTA's threads");
  const schedule::Dim3 grid = p.sched.grid();
  require_grid_fits(grid.x, grid.y, grid.z, name);
  splitkv_combine_kernel<Elem><<<detail::to_dim3(grid), static_cast<unsigned>(schedule::SplitKvCombineSchedule::kThreads),
                                 0, stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

template void launch_combine<__half>(const CombineParams&, cudaStream_t);
template void launch_combine<__nv_bfloat16>(const CombineParams&, cudaStream_t);

}  // namespace iosim::kernels::splitkv
